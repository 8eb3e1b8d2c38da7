//! The translation memory: a segment reviewed in project A fills the
//! identical and a near-identical segment of project B (with its score in
//! the origin), not a dissimilar one; a project into another language adds
//! nothing; and the memory follows what is reviewed, without reopening.

use quire_core::jobs::{Approval, PipelineSpec};
use quire_model::ids::SessionId;
use quire_model::op::{NodePatch, Op, ProjectPatch};
use quire_model::scene::{Author, NodeKind, TextState};

use crate::core_base::TestCore;
use crate::core_base::{finished, follow};

/// A project named `name` into `target` with one page of `texts`; returns
/// it and its page's node ids.
async fn project(
    t: &TestCore,
    name: &str,
    target: &str,
    texts: &[&str],
) -> (SessionId, Vec<uuid::Uuid>) {
    let id = t.session(name);
    let op = Op::UpdateProject {
        patch: ProjectPatch {
            target_language: Some(Some(target.into())),
            ..ProjectPatch::default()
        },
    };
    t.core.apply(id, op).await.unwrap();
    let r = t
        .core
        .import_text(id, "p1", &texts.join("\n\n"), Some("en"))
        .await
        .unwrap();
    (id, r.created)
}

/// Translates node `node` of the page `created[0]` and marks it reviewed.
async fn review(t: &TestCore, id: SessionId, created: &[uuid::Uuid], i: usize, translation: &str) {
    let op = Op::UpdateNode {
        page: quire_model::ids::PageId(created[0]),
        id: quire_model::ids::NodeId(created[1 + i]),
        patch: NodePatch::text(Some(Some(translation.into())), Some(TextState::Reviewed)),
        based_on: None,
    };
    t.core.apply(id, op).await.unwrap();
}

/// Runs `tm` on session `id` to its end; the job's events.
async fn run_tm(t: &TestCore, id: SessionId) -> Vec<quire_core::events::Event> {
    let mut sub = t.core.subscribe(None);
    let spec = PipelineSpec {
        steps: vec!["tm".into()],
        ..PipelineSpec::default()
    };
    let job = t
        .core
        .start_pipeline(id, spec, Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    assert_eq!(
        finished(&events).0,
        quire_core::events::JobStatus::Completed
    );
    events
}

/// Each text node's translation and origin score, in order.
async fn filled(t: &TestCore, id: SessionId) -> Vec<(Option<String>, Option<f64>)> {
    let scene = t.core.scene(id).await.unwrap().scene;
    scene
        .pages
        .iter()
        .flat_map(|p| p.nodes.iter())
        .map(|n| match &n.kind {
            NodeKind::Text {
                translation,
                origin,
                ..
            } => {
                // What the memory filled is the engine's, with its score.
                if let Some(o) = origin.as_deref().filter(|o| o.score.is_some()) {
                    assert_eq!(o.by, Author::Engine);
                    assert_eq!(o.engine.as_deref(), Some("tm"));
                }
                (translation.clone(), origin.as_ref().and_then(|o| o.score))
            }
            _ => (None, None),
        })
        .collect()
}

#[tokio::test]
async fn a_reviewed_segment_fills_identical_and_near_ones_in_another_project() {
    let t = TestCore::new();
    let (a, a_nodes) = project(
        &t,
        "A",
        "fr",
        &[
            "Where are you going?",
            "The cat sleeps on the red sofa.",
            "Not reviewed",
        ],
    )
    .await;
    review(&t, a, &a_nodes, 0, "Où vas-tu ?").await;
    review(&t, a, &a_nodes, 1, "Le chat dort sur le canapé rouge.").await;
    // Translated but not reviewed: not remembered.
    let op = Op::UpdateNode {
        page: quire_model::ids::PageId(a_nodes[0]),
        id: quire_model::ids::NodeId(a_nodes[3]),
        patch: NodePatch::text(Some(Some("Pas relu".into())), None),
        based_on: None,
    };
    t.core.apply(a, op).await.unwrap();
    t.core.close_session(a).await.unwrap();
    // The same sources into German: not remembered for French.
    let (de, de_nodes) = project(&t, "De", "de", &["Where are you going?"]).await;
    review(&t, de, &de_nodes, 0, "Wohin gehst du?").await;

    let (b, b_nodes) = project(
        &t,
        "B",
        "fr",
        &[
            "Where are you going?",
            "The cat sleeps on the red sofas.",
            "The dog runs in the green park.",
            "Not reviewed",
        ],
    )
    .await;
    run_tm(&t, b).await;
    let got = filled(&t, b).await;
    assert_eq!(got[0], (Some("Où vas-tu ?".into()), Some(1.0)));
    assert_eq!(
        got[1].0.as_deref(),
        Some("Le chat dort sur le canapé rouge.")
    );
    let score = got[1].1.expect("a score");
    assert!((0.85..1.0).contains(&score), "{score}");
    assert_eq!(got[2], (None, None), "dissimilar: left alone");
    assert_eq!(
        got[3],
        (None, None),
        "an unreviewed translation is not remembered"
    );

    // Reviewed in B just now, and used at once by B's next run.
    review(&t, b, &b_nodes, 2, "Le chien court dans le parc vert.").await;
    t.core
        .import_text(b, "p2", "The dog runs in the green park!", Some("en"))
        .await
        .unwrap();
    run_tm(&t, b).await;
    let got = filled(&t, b).await;
    assert_eq!(
        got[4].0.as_deref(),
        Some("Le chien court dans le parc vert."),
        "{got:?}"
    );
}

/// Of two remembered translations of one source, a `final` one beats a
/// `reviewed` one, then the newer beats the older, whichever project is
/// open (0.2 took a closed project's older translation over an open
/// one's newer); the step says what it filled and at which scores.
#[tokio::test]
async fn final_then_the_newer_translation_wins_and_the_step_says_what_it_did() {
    let t = TestCore::new();
    let (old, old_nodes) = project(&t, "Old", "fr", &["Hello", "Goodbye"]).await;
    review(&t, old, &old_nodes, 0, "Bonjour (ancien)").await;
    // Final in the older project.
    let op = Op::UpdateNode {
        page: quire_model::ids::PageId(old_nodes[0]),
        id: quire_model::ids::NodeId(old_nodes[2]),
        patch: NodePatch::text(
            Some(Some("Au revoir (final)".into())),
            Some(TextState::Final),
        ),
        based_on: None,
    };
    let stamped = t.core.apply(old, op).await.unwrap();
    assert!(stamped.epoch > 0);
    t.core.close_session(old).await.unwrap();
    // Origins are dated to the millisecond: wait until the clock says a
    // later one, so that the next edits are newer.
    let then = quire_store::storage::now_rfc3339();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while quire_store::storage::now_rfc3339() <= then {
        assert!(
            std::time::Instant::now() < deadline,
            "the clock stands still"
        );
        tokio::task::yield_now().await;
    }
    let (new, new_nodes) = project(&t, "New", "fr", &["Hello", "Goodbye"]).await;
    review(&t, new, &new_nodes, 0, "Bonjour (récent)").await;
    review(&t, new, &new_nodes, 1, "Au revoir (relu)").await;

    let (ask, _) = project(
        &t,
        "Ask",
        "fr",
        &["Hello", "Goodbye", "Something else entirely"],
    )
    .await;
    let events = run_tm(&t, ask).await;
    let got: Vec<_> = filled(&t, ask).await.into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        got,
        [
            Some("Bonjour (récent)".into()),
            Some("Au revoir (final)".into()),
            None,
        ]
    );
    let said: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            quire_core::events::Event::JobWarning { finding, .. } if finding.rule == "summary" => {
                Some(finding.message.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        said,
        ["filled 2 of 3 segments from the memory (2 at 100 %); 1 had no match of at least 85 %"]
    );
}

/// TMX files other tools wrote (the LISA TMX compliance kit, Okapi,
/// OmegaT; read from `../shared/testdata/cat`) each come into the memory
/// or are refused by name and change nothing; a project fills from them;
/// and the project's segments go out as TMX that quire reads back.
#[tokio::test(flavor = "multi_thread")]
async fn tmx_files_from_other_tools_come_into_the_memory() {
    let test = "tmx_files_from_other_tools_come_into_the_memory";
    let Some(dir) = crate::harness::testdata(test, "cat") else {
        return;
    };
    let t = TestCore::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.join("lisa_tmx_compliance_kit")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tmx"))
        .collect();
    files.sort();
    let mut table = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let before = stored(t.core.memory_dir());
        let result = t.core.import_tmx(&name, std::fs::read(path).unwrap()).await;
        match &result {
            Ok(r) => table.push(format!(
                "{name}: {} units, {}",
                r.units,
                r.languages.join(" ")
            )),
            Err(e) => {
                assert_eq!(
                    stored(t.core.memory_dir()),
                    before,
                    "{name}: a refusal changed the memory"
                );
                table.push(format!("{name}: refused: {e}"));
            }
        }
    }
    eprintln!("{}", table.join("\n"));
    let read = |name: &str| {
        table
            .iter()
            .any(|l| l.starts_with(&format!("{name}: ")) && !l.contains("refused"))
    };
    for name in [
        "ImportTest1A.tmx",
        "ImportTest1I.tmx",
        "okapi_pensieve_mytm.tmx",
        "omegat_test-SMP.tmx",
    ] {
        assert!(read(name), "{name} was not read:\n{}", table.join("\n"));
    }
    let refused = table.iter().filter(|l| l.contains("refused")).count();
    assert!(
        refused * 4 <= table.len(),
        "most files are refused:\n{}",
        table.join("\n")
    );

    // A project from English into French fills from Okapi's memory.
    let (p, _) = project(
        &t,
        "Elephants",
        "fr",
        &["Elephants cannot fly.", "Small elephants can't fly!"],
    )
    .await;
    run_tm(&t, p).await;
    let got = filled(&t, p).await;
    assert_eq!(
        got[0],
        (
            Some("Les éléphants ne peuvent pas voler.".into()),
            Some(1.0)
        ),
        "{got:?}"
    );
    assert_eq!(
        got[1].0.as_deref(),
        Some("Les petits éléphants ne peuvent pas voler.")
    );

    // Out as TMX, and in again as a memory of its own.
    let op = Op::UpdateProject {
        patch: ProjectPatch {
            source_language: Some(Some("en".into())),
            ..ProjectPatch::default()
        },
    };
    t.core.apply(p, op).await.unwrap();
    let scene = t.core.scene(p).await.unwrap().scene;
    let page = scene.pages[0].id;
    let node = scene.pages[0].nodes[0].id;
    let op = Op::UpdateNode {
        page,
        id: node,
        patch: NodePatch::text(None, Some(TextState::Reviewed)),
        based_on: None,
    };
    t.core.apply(p, op).await.unwrap();
    let tmx = t.core.export_tmx(p).await.unwrap();
    let text = String::from_utf8(tmx.clone()).unwrap();
    assert!(
        text.contains("<tuv xml:lang=\"fr\"><seg>Les éléphants ne peuvent pas voler.</seg></tuv>"),
        "{text}"
    );
    assert!(text.contains(&format!("tuid=\"n{node}\"")), "{text}");
    let back = t.core.import_tmx("elephants.tmx", tmx).await.unwrap();
    assert_eq!(
        (back.units, back.languages.clone()),
        (1, vec!["en".to_owned(), "fr".to_owned()])
    );
}

/// Bad TMX files: each refused with what is wrong, the memory unchanged.
#[tokio::test]
async fn a_bad_tmx_file_is_named_and_changes_nothing() {
    let t = TestCore::new();
    t.core
        .import_tmx("good.tmx", GOOD.as_bytes().to_vec())
        .await
        .unwrap();
    let before = stored(t.core.memory_dir());
    let cases: [(&str, Vec<u8>, &str); 7] = [
        ("a.tmx", b"not xml at all".to_vec(), "not well-formed"),
        ("b.tmx", b"<xliff version='2.0'/>".to_vec(), "not <tmx>"),
        (
            "c.tmx",
            b"<!DOCTYPE tmx [<!ENTITY x 'y'>]><tmx/>".to_vec(),
            "it declares a DTD",
        ),
        (
            "d.tmx",
            GOOD.replace("<seg>Bonjour</seg>", "<seg></seg>")
                .into_bytes(),
            "no translation unit",
        ),
        (
            "e.tmx",
            b"<?xml version='1.0' encoding='x-klingon'?><tmx/>".to_vec(),
            "klingon",
        ),
        (
            "f.tmx",
            [0xFF, 0xFE, 0x3C, 0xD8].to_vec(),
            "not valid UTF-16",
        ),
        ("x?.tmx", GOOD.as_bytes().to_vec(), "named after its file"),
    ];
    for (name, bytes, expected) in cases {
        let e = t
            .core
            .import_tmx(name, bytes)
            .await
            .expect_err(name)
            .to_string();
        assert!(e.contains(expected), "{name}: {e}");
        assert_eq!(
            stored(t.core.memory_dir()),
            before,
            "{name} changed the memory"
        );
    }
}

const GOOD: &str = "<tmx version=\"1.4\"><header srclang=\"en\"/><body><tu>\
    <tuv xml:lang=\"en\"><seg>Hello</seg></tuv><tuv xml:lang=\"fr\"><seg>Bonjour</seg></tuv>\
    </tu></body></tmx>";

/// The memory directory's files and their bytes.
fn stored(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

/// Runs `steps` on session `id` to its end: its status and warnings.
async fn run(
    t: &TestCore,
    id: SessionId,
    steps: &[&str],
) -> (
    quire_core::events::JobStatus,
    Vec<quire_model::finding::Finding>,
) {
    let mut sub = t.core.subscribe(None);
    let spec = PipelineSpec {
        steps: steps.iter().map(|s| (*s).to_owned()).collect(),
        ..PipelineSpec::default()
    };
    let job = t
        .core
        .start_pipeline(id, spec, Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    let warnings = events
        .iter()
        .filter_map(|e| match e {
            quire_core::events::Event::JobWarning { finding, .. } => Some(finding.clone()),
            _ => None,
        })
        .collect();
    (finished(&events).0, warnings)
}

/// A PO project takes its source language from Poedit's
/// `X-Source-Language` header or the import's field; nothing is guessed.
/// Without one, `tm` fills nothing and says why once, and `qa` says so
/// once; with one, the same memory fills the segment.
#[tokio::test]
async fn a_po_project_without_a_source_language_says_so_once() {
    let t = TestCore::new();
    // A reviewed segment en → pt-BR in another project.
    let (a, created) = project(&t, "a", "pt-BR", &["Save the file", "Open"]).await;
    review(&t, a, &created, 0, "Salve o arquivo").await;
    let po = |source_header: &str| {
        format!(
            "msgid \"\"\nmsgstr \"\"\n\"Language: pt_BR.UTF-8\\n\"\n{source_header}\
             \"Content-Type: text/plain; charset=UTF-8\\n\"\n\n\
             msgid \"Save the file\"\nmsgstr \"\"\n\nmsgid \"Quit\"\nmsgstr \"\"\n"
        )
    };
    let new = |name: &str, text: String, languages: quire_model::lang::Languages| {
        let file = quire_core::import::ImageFile {
            name: name.to_owned(),
            bytes: text.into_bytes(),
        };
        let core = t.core.clone();
        async move {
            let (summary, _) = core
                .create_project_from_files(None, languages, vec![file])
                .await
                .unwrap();
            summary.id
        }
    };
    let languages = |id: SessionId| {
        let core = t.core.clone();
        async move {
            let p = core.scene(id).await.unwrap().scene.project;
            (p.source_language, p.target_language)
        }
    };

    // No header, no field: no source language; the locale is read as a tag.
    let bare = new("bare.po", po(""), Default::default()).await;
    assert_eq!(languages(bare).await, (None, Some("pt-BR".into())));
    let (status, warnings) = run(&t, bare, &["tm"]).await;
    let said: Vec<_> = warnings
        .iter()
        .filter(|w| w.rule == "no-source-language")
        .collect();
    assert_eq!(said.len(), 1, "{warnings:?}");
    assert_eq!(
        said[0].message,
        "no source language: set the project's sourceLanguage to use the memory"
    );
    assert_eq!(status, quire_core::events::JobStatus::CompletedWithErrors);
    assert!(filled(&t, bare).await.iter().all(|(t, _)| t.is_none()));
    let (_, warnings) = run(&t, bare, &["qa"]).await;
    let said = warnings
        .iter()
        .filter(|w| w.rule == "no-source-language")
        .count();
    assert_eq!(said, 1, "{warnings:?}");

    // Poedit's header names it.
    let headed = new(
        "headed.po",
        po("\"X-Source-Language: en\\n\"\n"),
        Default::default(),
    )
    .await;
    assert_eq!(
        languages(headed).await,
        (Some("en".into()), Some("pt-BR".into()))
    );
    let (status, warnings) = run(&t, headed, &["tm"]).await;
    assert_eq!(status, quire_core::events::JobStatus::Completed);
    assert!(warnings.iter().all(|w| w.rule != "no-source-language"));
    let got = filled(&t, headed).await;
    assert_eq!(got[0].0.as_deref(), Some("Salve o arquivo"), "{got:?}");

    // The import's field names it.
    let given = quire_model::lang::Languages {
        source_language: Some("en".into()),
        target_language: None,
    };
    let fielded = new("fielded.po", po(""), given).await;
    assert_eq!(
        languages(fielded).await,
        (Some("en".into()), Some("pt-BR".into()))
    );
    // And the export says both, as gettext writes them.
    let out = t
        .core
        .export(
            fielded,
            quire_core::export::ExportSpec::of(quire_core::export::ExportFormat::Po),
        )
        .await
        .unwrap();
    let out = String::from_utf8(out.bytes).unwrap();
    assert!(
        out.contains("\"Language: pt_BR.UTF-8\\n\"")
            && out.contains("\"X-Source-Language: en\\n\""),
        "{out}"
    );
}
