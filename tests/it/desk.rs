//! The translator's desk (spec 15): the `spelling` rule with Debian's
//! Hunspell dictionaries, and the subtitle rules against pysubs2's count
//! (`tests/subtitles/checks.py`).

use std::process::Command;

use quire::core::events::{Event, Severity};
use quire::core::glossary::Term;
use quire::core::ids::SessionId;
use quire::core::op::{Op, ProjectPatch};
use quire::core::scene::NodeKind;
use quire::core::settings::SpellSettings;
use quire::core::spelling::{self, Speller};

use crate::core_jobs::{follow, spec};
use crate::core_support::{TestCore, translate};
use crate::harness::{Sandbox, run_checker};
use crate::http_support::Binary;

/// Debian's dictionary for `language`, or a failure naming the package
/// (`scripts/test` installs it).
fn dictionary(test: &str, language: &str, package: &str) -> Option<std::path::PathBuf> {
    let found = spelling::find(language, &SpellSettings::default());
    let missing = found
        .is_none()
        .then(|| format!("no Hunspell dictionary for {language} (Debian: {package})"));
    crate::harness::tool_available(package, test, missing).then_some(found)?
}

fn flagged(speller: &Speller, text: &str) -> Vec<String> {
    speller.check(text).into_iter().map(|m| m.word).collect()
}

#[test]
fn only_real_misspellings_are_flagged_in_brazilian_portuguese_and_english() {
    let test = "only_real_misspellings_are_flagged_in_brazilian_portuguese_and_english";
    let (Some(pt), Some(en)) = (
        dictionary(test, "pt-BR", "hunspell-pt-br"),
        dictionary(test, "en-US", "hunspell-en-us"),
    ) else {
        return;
    };
    let glossary = [Term {
        source: "Soul Reaper".into(),
        target: "Ceifador de Almas".into(),
        note: None,
        case_sensitive: false,
    }];
    let pt = Speller::new(
        spelling::load(&pt).unwrap(),
        &glossary,
        &["Konoha".to_owned()],
    );
    // Placeholders, tags, numbers, URLs, e-mail, the glossary's terms and
    // the project's words: none of them is a misspelling.
    for clean in [
        "Você não pode entrar aqui depois da meia-noite, {name}.",
        "<i>Até amanhã</i>, %s! São 10h30 e faltam 3 episódios.",
        "Veja https://exemplo.com.br/ajuda ou escreva para suporte@exemplo.com.br.",
        "O Ceifador de Almas voltou para Konoha.",
        "KONOHA É A VILA DA FOLHA!",
        "Disse-me que {{count}} pessoas já chegaram\\n",
    ] {
        assert_eq!(flagged(&pt, clean), Vec::<String>::new(), "{clean}");
    }
    assert_eq!(
        flagged(&pt, "Eu nao sei o que voce quer dizer com isso, exemplu."),
        ["nao", "voce", "exemplu"]
    );
    let wrong = pt.check("Amanhan eu volto.");
    assert_eq!(wrong.len(), 1);
    assert!(
        wrong[0].suggestions.iter().any(|s| s == "Amanhã"),
        "{wrong:?}"
    );

    let en = Speller::new(spelling::load(&en).unwrap(), &[], &[]);
    for clean in [
        "Don't go there, {0}: it's 5 o'clock.",
        "The well-known <b>Doctor</b> isn't home (see www.example.org).",
        "HELLO THERE!",
    ] {
        assert_eq!(flagged(&en, clean), Vec::<String>::new(), "{clean}");
    }
    assert_eq!(
        flagged(&en, "Recieve the pakage tomorow."),
        ["Recieve", "pakage", "tomorow"]
    );
}

async fn run_qa(t: &TestCore, id: SessionId) -> Vec<quire::core::events::Finding> {
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["qa"]), quire::core::jobs::Approval::Unattended)
        .await
        .unwrap();
    follow(&mut sub, job)
        .await
        .into_iter()
        .filter_map(|e| match e {
            Event::JobWarning { finding, .. } => Some(finding),
            _ => None,
        })
        .collect()
}

/// `qa` checks the project's target language with its dictionary,
/// accepts the project's word list, and says when it has no dictionary.
#[tokio::test]
async fn qa_checks_spelling_in_the_projects_target_language() {
    let test = "qa_checks_spelling_in_the_projects_target_language";
    if dictionary(test, "pt-BR", "hunspell-pt-br").is_none() {
        return;
    }
    let t = TestCore::new();
    let id = t.session("Episódio");
    let patch = ProjectPatch {
        source_language: Some(Some("en".into())),
        target_language: Some(Some("pt-BR".into())),
        add_words: vec!["Konoha".into()],
        ..ProjectPatch::default()
    };
    t.core.apply(id, Op::UpdateProject { patch }).await.unwrap();
    t.core
        .import_text(id, "p1", "Back to Konoha.\n\nSee you.", Some("en"))
        .await
        .unwrap();
    let scene = t.core.scene(id).await.unwrap().scene;
    let page = &scene.pages[0];
    let nodes: Vec<_> = page
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Text { .. }))
        .map(|n| n.id)
        .collect();
    for (node, text) in nodes.iter().zip(["De volta a Konoha.", "Até logo, amigu."]) {
        t.core
            .apply(id, translate(page.id, *node, text))
            .await
            .unwrap();
    }
    let found: Vec<_> = run_qa(&t, id)
        .await
        .into_iter()
        .filter(|f| f.rule == "spelling")
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].node_id, Some(nodes[1]));
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(
        found[0].message.starts_with("spelling: \"amigu\" (maybe "),
        "{}",
        found[0].message
    );

    // Removing the word from the list makes it a misspelling again; a
    // word the list does not have cannot be removed.
    let remove = |word: &str| Op::UpdateProject {
        patch: ProjectPatch {
            remove_words: vec![word.into()],
            ..ProjectPatch::default()
        },
    };
    t.core.apply(id, remove("Konoha")).await.unwrap();
    let before = t.core.scene(id).await.unwrap().epoch;
    let refused = t.core.apply(id, remove("Konoha")).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("the word list has no `Konoha`"),
        "{refused}"
    );
    assert_eq!(t.core.scene(id).await.unwrap().epoch, before);
    let words: Vec<String> = run_qa(&t, id)
        .await
        .into_iter()
        .filter(|f| f.rule == "spelling")
        .map(|f| f.message)
        .collect();
    assert_eq!(words.len(), 2, "{words:?}");
    assert!(words[0].contains("\"Konoha\""), "{words:?}");

    // A language with no dictionary: said once, as the step's summary
    // (the job's status is not a failure).
    t.core
        .apply(
            id,
            Op::UpdateProject {
                patch: ProjectPatch {
                    target_language: Some(Some("tlh".into())),
                    ..ProjectPatch::default()
                },
            },
        )
        .await
        .unwrap();
    let said: Vec<_> = run_qa(&t, id)
        .await
        .into_iter()
        .filter(|f| f.rule == "spelling" || f.rule == "summary")
        .collect();
    assert_eq!(said.len(), 1, "{said:#?}");
    assert_eq!(said[0].rule, "summary");
    assert_eq!(said[0].severity, Severity::Info);
    assert!(
        said[0]
            .message
            .starts_with("spelling not checked: no Hunspell dictionary for tlh"),
        "{}",
        said[0].message
    );
}

/// `tests/subtitles/checks.py`: pysubs2 counts an episode's cues the
/// Netflix way and quire's `qa` must flag exactly what that count says.
#[test]
fn subtitle_rules_flag_what_pysubs2_counts_and_nothing_else() {
    let test = "subtitle_rules_flag_what_pysubs2_counts_and_nothing_else";
    let Some(python) = crate::mcp::python_with(test, "httpx, pysubs2") else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let mut cmd = Command::new(&python);
    cmd.arg(format!(
        "{}/tests/subtitles/checks.py",
        env!("CARGO_MANIFEST_DIR")
    ))
    .arg(&server.url);
    let out = run_checker(&s, &mut cmd, "ok");
    assert!(out.contains("subtitle checks: ok"), "{out}");
    assert!(server.terminate().success());
}
