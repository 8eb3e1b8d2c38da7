//! The translator's desk (spec 15): the `spelling` rule with Debian's
//! Hunspell dictionaries, the subtitle rules against pysubs2's count
//! (`tests/subtitles/checks.py`), partial exports, find and replace, and
//! the memory's matches and concordance.

use std::process::Command;

use quire_core::engines::qa::SpellSettings;
use quire_core::events::Event;
use quire_core::export::{ExportFormat, ExportSpec, Untranslated};
use quire_core::find::{self, FindOptions};
use quire_core::spelling::{self, Speller};
use quire_model::finding::Severity;
use quire_model::glossary::Term;
use quire_model::ids::SessionId;
use quire_model::op::{Op, ProjectPatch};
use quire_model::scene::NodeKind;

use crate::core_base::{TestCore, translate};
use crate::core_base::{follow, spec};
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
    // Word splits only where both parts are words, after the whole
    // words and once: "De repente" for "Derepente", but never Hunspell's
    // "Ta mbemm" or "Conce rteza" (for "Com certeza"), nor
    // "Comum " with a stray space.
    let offered = |speller: &Speller, word: &str| {
        let wrong = speller.check(word);
        assert_eq!(wrong.len(), 1, "{word}: {wrong:?}");
        wrong[0].suggestions.clone()
    };
    assert_eq!(offered(&pt, "Derepente"), ["De repente"]);
    assert_eq!(offered(&pt, "Davez"), ["Da vez"]);
    assert_eq!(offered(&pt, "Concerteza"), ["Com certeza"]);
    for word in ["Tambemm", "Comun"] {
        let got = offered(&pt, word);
        assert!(
            got.iter().all(|s| s.trim() == s && !s.contains(' ')),
            "{word}: {got:?}"
        );
    }
    assert_eq!(offered(&pt, "Comun")[0], "Comum");
    // A split of words stays, after the whole words.
    let got = offered(&en, "Ihave");
    assert_eq!(got.last().map(String::as_str), Some("I have"), "{got:?}");
}

async fn run_qa(t: &TestCore, id: SessionId) -> Vec<quire_model::finding::Finding> {
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["qa"]), quire_core::jobs::Approval::Unattended)
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

const EPISODE: &str = "1\n00:00:01,000 --> 00:00:03,000\nWhere are you going?\n\n\
2\n00:00:03,500 --> 00:00:05,000\nHome. It's late.\n\n\
3\n00:00:05,500 --> 00:00:07,000\nWhere are you going tonight?\n";

/// A subtitle project (en → pt-BR) of [`EPISODE`], its cue nodes.
async fn episode(
    t: &TestCore,
) -> (
    SessionId,
    quire_model::ids::PageId,
    Vec<quire_model::ids::NodeId>,
) {
    let id = t.session("Episode");
    let patch = ProjectPatch {
        source_language: Some(Some("en".into())),
        target_language: Some(Some("pt-BR".into())),
        ..ProjectPatch::default()
    };
    t.core.apply(id, Op::UpdateProject { patch }).await.unwrap();
    t.core
        .import_files(
            id,
            vec![quire_core::import::ImageFile {
                name: "episode.srt".into(),
                bytes: EPISODE.as_bytes().to_vec(),
            }],
        )
        .await
        .unwrap();
    let scene = t.core.scene(id).await.unwrap().scene;
    let page = &scene.pages[0];
    (id, page.id, page.nodes.iter().map(|n| n.id).collect())
}

fn export_spec(format: ExportFormat, untranslated: Option<Untranslated>) -> ExportSpec {
    ExportSpec {
        untranslated,
        ..ExportSpec::of(format)
    }
}

/// A half-translated episode says how many cues had no translation and
/// how they were written; `refuse` names them and writes nothing.
#[tokio::test]
async fn a_partial_export_says_what_it_wrote_for_untranslated_cues() {
    let t = TestCore::new();
    let (id, page, nodes) = episode(&t).await;
    t.core
        .apply(id, translate(page, nodes[0], "Aonde você vai?"))
        .await
        .unwrap();
    let srt = t
        .core
        .export(id, export_spec(ExportFormat::Srt, None))
        .await
        .unwrap();
    let said = srt.untranslated.expect("a report");
    assert_eq!(
        (said.count, said.total, said.written),
        (2, 3, Untranslated::Source)
    );
    assert_eq!(
        said.said(),
        "2 of 3 segments have no translation: written with their source text"
    );
    let text = String::from_utf8(srt.bytes).unwrap();
    assert!(
        text.contains("Aonde você vai?\n") && text.contains("Home. It's late.\n"),
        "{text}"
    );
    let empty = t
        .core
        .export(
            id,
            export_spec(ExportFormat::Vtt, Some(Untranslated::Empty)),
        )
        .await
        .unwrap();
    let text = String::from_utf8(empty.bytes).unwrap();
    assert!(!text.contains("Home. It's late."), "{text}");
    assert!(text.contains("00:00:03.500 --> 00:00:05.000\n\n"), "{text}");
    let epoch = t.core.scene(id).await.unwrap().epoch;
    let refused = t
        .core
        .export(
            id,
            export_spec(ExportFormat::Srt, Some(Untranslated::Refuse)),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.starts_with("2 of 3 segments have no translation (cue 2, cue 3)"),
        "{refused}"
    );
    assert_eq!(t.core.scene(id).await.unwrap().epoch, epoch);
    // PO: untranslated entries are empty unless asked otherwise.
    let po = t
        .core
        .export(id, export_spec(ExportFormat::Po, None))
        .await
        .unwrap();
    assert_eq!(
        po.untranslated.map(|u| u.written),
        Some(Untranslated::Empty)
    );
    let markdown = t
        .core
        .export(
            id,
            export_spec(ExportFormat::Markdown, Some(Untranslated::Empty)),
        )
        .await
        .unwrap_err();
    assert!(
        markdown
            .to_string()
            .contains("srt, vtt and po exports only"),
        "{markdown}"
    );
}

/// An XLIFF export names each cue's unit by its number, so a reviewer
/// in a CAT tool and one in quire both say "cue 2".
#[tokio::test]
async fn an_xliff_export_names_each_cue_by_its_number() {
    let t = TestCore::new();
    let (id, _, nodes) = episode(&t).await;
    let xliff = t
        .core
        .export(id, export_spec(ExportFormat::Xliff, None))
        .await
        .unwrap();
    let text = String::from_utf8(xliff.bytes).unwrap();
    for (number, node) in (1..).zip(&nodes) {
        let unit = format!("<unit id=\"n{node}\" name=\"{number}\">");
        assert!(text.contains(&unit), "{unit} in {text}");
    }
}

/// Find counts every match; a replacement in the translations is one op,
/// undone in one step, and leaves final translations alone.
#[tokio::test]
async fn find_and_replace_is_one_undoable_op() {
    let t = TestCore::new();
    let (id, page, nodes) = episode(&t).await;
    for (node, text) in nodes.iter().zip([
        "Aonde você vai?",
        "Pra casa. Tá tarde.",
        "Aonde você vai hoje?",
    ]) {
        t.core
            .apply(id, translate(page, *node, text))
            .await
            .unwrap();
    }
    let mut locked = translate(page, nodes[2], "Aonde você vai hoje?");
    if let Op::UpdateNode { patch, .. } = &mut locked {
        *patch = quire_model::op::NodePatch::text(None, Some(quire_model::scene::TextState::Final));
    }
    t.core.apply(id, locked).await.unwrap();
    let scene = t.core.scene(id).await.unwrap().scene;
    let words = find::Pattern::new(
        "você",
        FindOptions {
            whole_words: true,
            ..FindOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        find::count(&scene, &words),
        find::Found {
            matches: 2,
            segments: 2
        }
    );
    let regex = find::Pattern::new(
        r"(\w+) vai",
        FindOptions {
            regex: true,
            ..FindOptions::default()
        },
    )
    .unwrap();
    let (changes, left) = find::replacements(&scene, &regex, "$1 foi");
    assert_eq!(left, 1, "the final translation is left alone");
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].after, "Aonde você foi?");
    let before = t.core.scene(id).await.unwrap().epoch;
    t.core
        .apply(id, find::op(&changes, "replace".into()))
        .await
        .unwrap();
    assert_eq!(t.core.scene(id).await.unwrap().epoch, before + 1);
    let undone = t.core.undo(id).await.unwrap().unwrap();
    assert_eq!(undone.label, "replace");
    let back = t.core.scene(id).await.unwrap().scene;
    assert!(back.same_content(&scene));
}

/// The memory's matches for a cue: the TMX's exact and fuzzy units, best
/// first, with the words that differ; concordance finds a word.
#[tokio::test]
async fn matches_and_concordance_come_from_the_memory() {
    let t = TestCore::new();
    let tmx = r#"<tmx version="1.4"><header srclang="en"/><body>
<tu changedate="20261102T101500Z"><tuv xml:lang="en"><seg>Where are you going?</seg></tuv><tuv xml:lang="pt-BR"><seg>Aonde você vai?</seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>Where are you going now?</seg></tuv><tuv xml:lang="pt-BR"><seg>Aonde você vai agora?</seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>It is late.</seg></tuv><tuv xml:lang="pt-BR"><seg>É tarde.</seg></tuv></tu>
</body></tmx>"#;
    t.core
        .import_tmx("episode1.tmx", tmx.as_bytes().to_vec())
        .await
        .unwrap();
    let (id, _, nodes) = episode(&t).await;
    let found = t.core.matches(id, nodes[2]).await.unwrap();
    let said: Vec<(&str, Option<f64>, &str)> = found
        .iter()
        .map(|m| (m.target.as_str(), m.score, m.origin.as_str()))
        .collect();
    assert_eq!(said.len(), 2, "{found:#?}");
    assert_eq!(said[0].0, "Aonde você vai agora?");
    assert_eq!(said[1].0, "Aonde você vai?");
    assert!(said[0].1 > said[1].1 && said[1].1 >= Some(0.5), "{said:?}");
    assert_eq!(said[0].2, "tmx episode1");
    use quire_core::matches::Change;
    let changed: Vec<(&str, Change)> = found[0]
        .diff
        .iter()
        .filter(|p| p.change != Change::Same)
        .map(|p| (p.text.as_str(), p.change))
        .collect();
    assert_eq!(
        changed,
        [("tonight?", Change::Added), ("now?", Change::Removed)]
    );
    assert_eq!(found[1].changed.as_deref(), Some("2026-11-02T10:15:00Z"));
    let exact = t.core.matches(id, nodes[0]).await.unwrap();
    assert_eq!(exact[0].score, Some(1.0));
    let late = t.core.concordance(id, "LATE", 10).await.unwrap();
    assert_eq!(
        late.iter().map(|m| m.target.as_str()).collect::<Vec<_>>(),
        ["É tarde."]
    );
    assert!(t.core.concordance(id, "  ", 10).await.is_err());
    let flood = "late ".repeat(21);
    let refused = t.core.concordance(id, &flood, 10).await.unwrap_err();
    assert!(
        refused.to_string().contains("at most 20 words"),
        "{refused}"
    );
}
