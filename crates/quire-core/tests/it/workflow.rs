//! The translation workflow: states and origins, engines that respect
//! human work (every overwrite mode, `final` always locked), a job step as
//! one history entry, history that survives a restart.

use std::collections::BTreeMap;

use quire_core::events::JobStatus;
use quire_core::jobs::{Approval, PipelineSpec};
use quire_core::settings::{EngineInput, EngineOutput};
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{KindPatch, NodePatch, Op};
use quire_model::scene::{Author, NodeKind, Scene, TextState};
use quire_model::workflow::Overwrite;

use crate::support::{
    TestCore, command_engine, engines, finished, follow, spec, text_pages, translate, warnings,
    with_engines,
};

fn mark(page: PageId, id: NodeId, state: TextState) -> Op {
    Op::UpdateNode {
        page,
        id,
        patch: NodePatch::text(None, Some(state)),
        based_on: None,
    }
}

/// Starts a pipeline and follows it to its end: its events.
async fn run(t: &TestCore, id: SessionId, spec: PipelineSpec) -> Vec<quire_core::events::Event> {
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec, Approval::Unattended)
        .await
        .unwrap();
    follow(&mut sub, job).await
}

fn text_of(
    scene: &Scene,
    page: PageId,
    node: NodeId,
) -> (Option<String>, TextState, Option<Author>) {
    let page = scene.page(page).unwrap();
    let node = &page.nodes[page.node_index(node).unwrap()];
    let NodeKind::Text {
        translation,
        state,
        origin,
        ..
    } = &node.kind
    else {
        panic!("not a text node")
    };
    (
        translation.clone(),
        state.unwrap(),
        origin.as_ref().map(|o| o.by),
    )
}

/// One page with five text nodes: untranslated, a machine translation, a
/// person's, a reviewed one and a final one.
async fn five_kinds(t: &TestCore, id: SessionId) -> (PageId, Vec<NodeId>) {
    let r = t
        .core
        .import_text(id, "p", "one\n\ntwo\n\nthree\n\nfour\n\nfive", Some("en"))
        .await
        .unwrap();
    let page = PageId(r.created[0]);
    let nodes: Vec<NodeId> = r.created[1..].iter().map(|u| NodeId(*u)).collect();
    // The machine translation comes from an engine run over node 1 alone.
    t.core
        .apply(id, translate(page, nodes[2], "three (person)"))
        .await
        .unwrap();
    t.core
        .apply(id, translate(page, nodes[3], "four (person)"))
        .await
        .unwrap();
    t.core
        .apply(id, translate(page, nodes[4], "five (person)"))
        .await
        .unwrap();
    t.core
        .apply(id, mark(page, nodes[3], TextState::Reviewed))
        .await
        .unwrap();
    t.core
        .apply(id, mark(page, nodes[4], TextState::Final))
        .await
        .unwrap();
    run(t, id, spec(&["pseudo-translate"])).await;
    // That run filled nodes 0 and 1 (untranslated); a person then clears 0.
    let clear = Op::UpdateNode {
        page,
        id: nodes[0],
        patch: NodePatch::text(Some(None), None),
        based_on: None,
    };
    t.core.apply(id, clear).await.unwrap();
    (page, nodes)
}

#[tokio::test]
async fn a_person_s_edits_are_human_an_engine_s_are_machine_and_states_follow() {
    let t = TestCore::new();
    let id = t.session("States");
    let (page, nodes) = five_kinds(&t, id).await;
    let scene = t.core.scene(id).await.unwrap().scene;
    let got: Vec<_> = nodes.iter().map(|n| text_of(&scene, page, *n)).collect();
    assert_eq!(got[0], (None, TextState::Initial, None));
    assert_eq!(got[1].1, TextState::Translated);
    assert_eq!(got[1].2, Some(Author::Engine));
    let page_json = serde_json::to_value(scene.page(page).unwrap()).unwrap();
    let origin = &page_json["nodes"][1]["kind"]["origin"];
    assert_eq!(origin["engine"], "pseudo-translate", "{page_json}");
    assert!(humantime::parse_rfc3339(origin["at"].as_str().unwrap()).is_ok());
    assert_eq!(got[2].1, TextState::Translated);
    assert_eq!(got[2].2, Some(Author::Human));
    assert_eq!(got[3].1, TextState::Reviewed);
    assert_eq!(got[4].1, TextState::Final);
    // Marking is a change like any other: undo says what it undoes.
    t.core
        .apply(id, mark(page, nodes[2], TextState::Reviewed))
        .await
        .unwrap();
    let undone = t.core.undo(id).await.unwrap().unwrap();
    assert_eq!(undone.label, "mark reviewed · page 1");
    assert_eq!(undone.ops, 1);
    let scene = t.core.scene(id).await.unwrap().scene;
    assert_eq!(text_of(&scene, page, nodes[2]).1, TextState::Translated);
}

#[tokio::test]
async fn each_overwrite_mode_replaces_only_what_it_may_and_final_never() {
    // (mode, which of the five nodes the engine rewrote)
    let cases = [
        (None, [true, false, false, false, false]),
        (
            Some(Overwrite::Untranslated),
            [true, false, false, false, false],
        ),
        (Some(Overwrite::Machine), [true, true, false, false, false]),
        (Some(Overwrite::All), [true, true, true, true, false]),
    ];
    for (mode, expected) in cases {
        let t = TestCore::new();
        let id = t.session("Modes");
        let (page, nodes) = five_kinds(&t, id).await;
        let before = t.core.scene(id).await.unwrap().scene;
        let events = run(
            &t,
            id,
            PipelineSpec {
                overwrite: mode,
                ..spec(&["pseudo-translate"])
            },
        )
        .await;

        assert_eq!(finished(&events).0, JobStatus::Completed, "{mode:?}");
        let after = t.core.scene(id).await.unwrap().scene;
        let kind = |scene: &Scene, node: NodeId| {
            let page = scene.page(page).unwrap();
            page.nodes[page.node_index(node).unwrap()].kind.clone()
        };
        for (i, node) in nodes.iter().enumerate() {
            if expected[i] {
                let new = text_of(&after, page, *node);
                assert_eq!(new.1, TextState::Translated, "{mode:?}: node {i}");
                assert_eq!(new.2, Some(Author::Engine), "{mode:?}: node {i}");
            } else {
                assert_eq!(
                    kind(&after, *node),
                    kind(&before, *node),
                    "{mode:?}: node {i}"
                );
            }
        }
        // The step wrote exactly the nodes it may (pseudo-translate gives
        // the same text again, so count its edits in history).
        let step = t.core.undo(id).await.unwrap().unwrap();
        let written = expected.iter().filter(|w| **w).count();
        assert_eq!(step.ops, written, "{mode:?}: {step:?}");
    }
}

fn findings(events: &[quire_core::events::Event]) -> Vec<quire_model::finding::Finding> {
    events
        .iter()
        .filter_map(|e| match e {
            quire_core::events::Event::JobWarning { finding, .. } => Some(finding.clone()),
            _ => None,
        })
        .collect()
}

/// A command engine that translates every text node of the page it gets,
/// whatever the policy: the core must drop what the policy forbids.
fn eager_translator() -> quire_core::settings::CommandEngine {
    let script = r#"
import json, sys
page = json.load(sys.stdin)
for node in page["nodes"]:
    if node["kind"]["type"] == "text":
        print(json.dumps({"type": "UpdateNode", "page": page["id"], "id": node["id"],
            "patch": {"kind": {"type": "text", "translation": "eager"}}}))
"#;
    command_engine(
        &["python3", "-c", script],
        EngineInput::PageJson,
        EngineOutput::Ops,
        30,
    )
}

#[tokio::test]
async fn an_engine_edit_the_policy_forbids_is_dropped_with_a_warning() {
    let t = with_engines(engines(&[("eager", eager_translator())]), BTreeMap::new());
    let id = t.session("Eager");
    let (page, nodes) = five_kinds(&t, id).await;
    let before = t.core.scene(id).await.unwrap().scene;
    for mode in [Overwrite::Untranslated, Overwrite::Machine, Overwrite::All] {
        let events = run(
            &t,
            id,
            PipelineSpec {
                overwrite: Some(mode),
                ..spec(&["eager"])
            },
        )
        .await;

        // The final node is named in a warning in every mode.
        let kept = findings(&events);
        assert!(
            kept.iter().any(|f| f.rule == "kept-translation"
                && f.page_id == Some(page)
                && f.node_id == Some(nodes[4])
                && f.message.contains("final")),
            "{mode:?}: {kept:?}"
        );
        assert_eq!(finished(&events).0, JobStatus::CompletedWithErrors);
        let after = t.core.scene(id).await.unwrap().scene;
        assert_eq!(
            text_of(&after, page, nodes[4]),
            text_of(&before, page, nodes[4]),
            "{mode:?}: the final node changed"
        );
        t.core.undo(id).await.unwrap();
    }
    // Under `untranslated`, the person's and the reviewed work were kept
    // too, each with its own warning.
    let events = run(&t, id, spec(&["eager"])).await;
    let w = warnings(&events);
    assert_eq!(w.len(), 4, "{w:?}");
    let after = t.core.scene(id).await.unwrap().scene;
    assert_eq!(text_of(&after, page, nodes[0]).0.as_deref(), Some("eager"));
    for node in &nodes[1..] {
        assert_eq!(text_of(&after, page, *node), text_of(&before, page, *node));
    }
}

#[tokio::test]
async fn a_person_changes_a_final_translation_only_by_saying_its_state() {
    let t = TestCore::new();
    let id = t.session("Final");
    let (page, nodes) = five_kinds(&t, id).await;
    let before = t.core.scene(id).await.unwrap();
    let err = t
        .core
        .apply(id, translate(page, nodes[4], "changed"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_op");
    assert!(err.to_string().contains("is final"), "{err}");
    let after = t.core.scene(id).await.unwrap();
    assert_eq!(after.epoch, before.epoch);
    assert_eq!(after.scene, before.scene);
    let Op::UpdateNode {
        page,
        id: node,
        mut patch,
        ..
    } = translate(page, nodes[4], "changed")
    else {
        unreachable!()
    };
    if let Some(KindPatch::Text { state, .. }) = &mut patch.kind {
        *state = Some(TextState::Translated);
    }
    t.core
        .apply(
            id,
            Op::UpdateNode {
                page,
                id: node,
                patch,
                based_on: None,
            },
        )
        .await
        .unwrap();
    let scene = t.core.scene(id).await.unwrap().scene;
    assert_eq!(
        text_of(&scene, page, node),
        (
            Some("changed".into()),
            TextState::Translated,
            Some(Author::Human)
        )
    );
}

#[tokio::test]
async fn a_600_page_step_is_one_undo_and_one_redo() {
    let t = TestCore::new();
    let id = t.session("Long run");
    let pages = text_pages(&t, id, 600).await;
    let untouched = t.core.scene(id).await.unwrap().scene;
    let events = run(&t, id, spec(&["pseudo-translate", "qa"])).await;
    assert_eq!(finished(&events).0, JobStatus::Completed);
    let translated = t.core.scene(id).await.unwrap().scene;
    assert_eq!(pages.len(), 600);
    let undone = t.core.undo(id).await.unwrap().unwrap();
    assert_eq!(undone.label, "pseudo-translate · 600 pages");
    assert_eq!(undone.ops, 1200);
    assert!(
        t.core
            .scene(id)
            .await
            .unwrap()
            .scene
            .same_content(&untouched)
    );
    // The entry before it is the last import, not page 599 of the job.
    let redone = t.core.redo(id).await.unwrap().unwrap();
    assert_eq!(redone.label, "pseudo-translate · 600 pages");
    assert!(
        t.core
            .scene(id)
            .await
            .unwrap()
            .scene
            .same_content(&translated)
    );
}

#[tokio::test]
async fn history_survives_a_restart_with_its_labels_and_redo() {
    let t = TestCore::new();
    let id = t.session("Restart");
    let pages = text_pages(&t, id, 3).await;
    run(&t, id, spec(&["pseudo-translate"])).await;
    let scene = t.core.scene(id).await.unwrap().scene;
    let node = scene.page(pages[1]).unwrap().nodes[0].id;
    t.core
        .apply(id, translate(pages[1], node, "by hand"))
        .await
        .unwrap();
    // Undone before the restart: redoable after it.
    assert_eq!(
        t.core.undo(id).await.unwrap().unwrap().label,
        "edit translation · page 2"
    );
    let path = t.project_path(id);
    t.core.close_session(id).await.unwrap();
    assert!(path.join("history.json").exists());
    let id = t.core.open_project(&path).await.unwrap().id;
    assert_eq!(
        t.core.redo(id).await.unwrap().unwrap().label,
        "edit translation · page 2"
    );
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(t.core.undo(id).await.unwrap().unwrap().label);
    }
    assert_eq!(
        got,
        [
            "edit translation · page 2",
            "pseudo-translate · 3 pages",
            "import text page 2"
        ]
    );
}

#[tokio::test]
async fn an_unedited_xliff_export_imports_as_unchanged_whatever_the_text() {
    use quire_core::export::{ExportFormat, ExportSpec};
    use quire_core::translations::TranslationImport;
    use quire_formats::units::TranslationFormat;
    let t = TestCore::new();
    let id = t.session("Exact");
    let r = t
        .core
        .import_text(
            id,
            "p",
            "a\r\nb <c> & \"d\"\n\n\u{1}ctrl\u{FFFE}\n\nplain",
            None,
        )
        .await
        .unwrap();
    let page = PageId(r.created[0]);
    for (i, node) in r.created[1..].iter().enumerate() {
        let text = ["x\r\ny <z> &", "\u{1}\u{1F600}", "  spaced  "][i];
        t.core
            .apply(id, translate(page, NodeId(*node), text))
            .await
            .unwrap();
    }
    let before = t.core.scene(id).await.unwrap();
    let export = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Xliff))
        .await
        .unwrap();
    let import = TranslationImport {
        format: TranslationFormat::Xliff,
        content: String::from_utf8(export.bytes).unwrap(),
        force: false,
        take: Vec::new(),
    };
    let report = t.core.import_translations(id, import).await.unwrap();
    assert_eq!((report.updated, report.unchanged), (0, 3), "{report:?}");
    assert!(report.conflicts.is_empty() && report.unmatched.is_empty());
    let after = t.core.scene(id).await.unwrap();
    assert_eq!(after.epoch, before.epoch);
}
