//! Ops through the core: effects, inverses, history, and every bad input
//! with its precise error and proof that nothing changed.

use quire_core::Core;
use quire_model::error::CoreError;
use quire_model::hash::BlobHash;
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{KindPatch, NewNode, NodePatch, Op, PagePatch, ProjectPatch, TransformPatch};
use quire_model::scene::{ImageRole, NodeKind, Scene};

use crate::support::{TestCore, add_page, text_node, translate};

mod refused;

async fn scene(core: &Core, id: SessionId) -> (u64, Scene) {
    let s = core.scene(id).await.unwrap();
    (s.epoch, s.scene)
}

/// A session with two pages; the first has two text nodes.
async fn fixture(t: &TestCore) -> (SessionId, PageId, PageId, NodeId, NodeId) {
    let id = t.session("Fixture");
    let core = &t.core;
    let p1 = core.apply(id, add_page("one")).await.unwrap().created[0];
    let p2 = core.apply(id, add_page("two")).await.unwrap().created[0];
    let (p1, p2) = (PageId(p1), PageId(p2));
    let n1 = core
        .apply(
            id,
            Op::AddNode {
                page: p1,
                node: text_node("hello"),
                at: None,
            },
        )
        .await
        .unwrap()
        .created[0];
    let n2 = core
        .apply(
            id,
            Op::AddNode {
                page: p1,
                node: text_node("world"),
                at: None,
            },
        )
        .await
        .unwrap()
        .created[0];
    (id, p1, p2, NodeId(n1), NodeId(n2))
}

/// Applies `op`, expects `invalid_op` with every part in the message, and
/// checks that the scene and epoch did not move.
async fn rejects(core: &Core, id: SessionId, op: Op, parts: &[&str]) {
    let before = scene(core, id).await;
    let err = core.apply(id, op).await.unwrap_err();
    assert_eq!(err.code(), "invalid_op", "{err}");
    let text = err.to_string();
    for part in parts {
        assert!(text.contains(part), "missing {part:?} in {text:?}");
    }
    let after = scene(core, id).await;
    assert_eq!(before.0, after.0, "epoch moved");
    assert_eq!(before.1, after.1, "scene changed");
}

#[tokio::test]
async fn apply_returns_epoch_and_created_ids_in_op_order() {
    let t = TestCore::new();
    let id = t.session("Created");
    let given = PageId::new();
    let r = t
        .core
        .apply(
            id,
            Op::Batch {
                ops: vec![
                    add_page("a"),
                    Op::AddPage {
                        page: quire_model::op::NewPage {
                            id: Some(given),
                            name: "b".into(),
                            width: None,
                            height: None,
                            nodes: Some(vec![text_node("x")]),
                            document: None,
                        },
                        at: Some(0),
                    },
                ],
                label: Some("two pages".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(r.epoch, 1);
    assert_eq!(r.created.len(), 3);
    assert_eq!(r.created[1], given.0);
    let (_, s) = scene(&t.core, id).await;
    assert_eq!(s.pages[0].id, given);
    assert_eq!(s.pages[0].nodes[0].id.0, r.created[2]);
    assert_eq!(s.pages[1].id.0, r.created[0]);
    // Core-assigned ids are v7.
    assert_eq!(r.created[0].get_version_num(), 7);
}

#[tokio::test]
async fn every_op_changes_what_it_says() {
    let t = TestCore::new();
    let (id, p1, p2, n1, n2) = fixture(&t).await;
    let core = &t.core;
    core.apply(id, translate(p1, n1, "bonjour")).await.unwrap();
    core.apply(
        id,
        Op::UpdateNode {
            page: p1,
            id: n2,
            patch: NodePatch {
                transform: Some(TransformPatch {
                    x: Some(5.0),
                    ..Default::default()
                }),
                visible: Some(false),
                kind: None,
            },
            based_on: None,
        },
    )
    .await
    .unwrap();
    core.apply(
        id,
        Op::ReorderNodes {
            page: p1,
            order: vec![n2, n1],
        },
    )
    .await
    .unwrap();
    core.apply(
        id,
        Op::ReorderPages {
            order: vec![p2, p1],
        },
    )
    .await
    .unwrap();
    core.apply(
        id,
        Op::UpdatePage {
            id: p2,
            patch: PagePatch {
                name: Some("deux".into()),
                width: Some(None),
                height: None,
            },
        },
    )
    .await
    .unwrap();
    core.apply(
        id,
        Op::UpdateProject {
            patch: ProjectPatch {
                name: Some("Renamed".into()),
                ..Default::default()
            },
        },
    )
    .await
    .unwrap();
    let (epoch, s) = scene(core, id).await;
    assert_eq!(epoch, 10);
    assert_eq!(s.project.name, "Renamed");
    assert_eq!(s.pages[0].name, "deux");
    assert_eq!(s.pages[0].width, None);
    let page = &s.pages[1];
    assert_eq!(page.nodes[0].id, n2);
    assert!(!page.nodes[0].visible);
    assert_eq!(page.nodes[0].transform.x, 5.0);
    let NodeKind::Text { translation, .. } = &page.nodes[1].kind else {
        panic!()
    };
    assert_eq!(translation.as_deref(), Some("bonjour"));
    assert_eq!(core.session(id).unwrap().name, "Renamed");

    // `null` clears a clearable field.
    let clear = Op::UpdateNode {
        page: p1,
        id: n1,
        patch: NodePatch {
            kind: Some(KindPatch::Text {
                text: None,
                translation: Some(None),
                source_lang: None,
                style: None,
                state: None,
                origin: None,
                timing: None,
                region: None,
                found_by: None,
                source_edit: None,
                suggestions: None,
                suggest: None,
            }),
            ..Default::default()
        },
        based_on: None,
    };
    core.apply(id, clear).await.unwrap();
    let (_, s) = scene(core, id).await;
    let NodeKind::Text { translation, .. } = &s.pages[1].nodes[1].kind else {
        panic!()
    };
    assert_eq!(*translation, None);

    core.apply(id, Op::RemoveNode { page: p1, id: n1 })
        .await
        .unwrap();
    core.apply(id, Op::RemovePage { id: p2 }).await.unwrap();
    let (_, s) = scene(core, id).await;
    assert_eq!(s.pages.len(), 1);
    assert_eq!(s.pages[0].nodes.len(), 1);
}

#[tokio::test]
async fn undo_redo_boundaries_and_epochs() {
    let t = TestCore::new();
    let id = t.session("History");
    let core = &t.core;
    assert_eq!(core.undo(id).await.unwrap(), None);
    assert_eq!(core.redo(id).await.unwrap(), None);
    let empty = scene(core, id).await.1;
    core.apply(id, add_page("a")).await.unwrap();
    core.apply(id, add_page("b")).await.unwrap();
    let two = scene(core, id).await.1;
    assert_eq!(core.undo(id).await.unwrap().map(|s| s.epoch), Some(3));
    assert_eq!(core.undo(id).await.unwrap().map(|s| s.epoch), Some(4));
    assert_eq!(core.undo(id).await.unwrap(), None);
    assert!(scene(core, id).await.1.same_content(&empty));
    assert_eq!(core.redo(id).await.unwrap().map(|s| s.epoch), Some(5));
    assert_eq!(core.redo(id).await.unwrap().map(|s| s.epoch), Some(6));
    assert_eq!(core.redo(id).await.unwrap(), None);
    assert!(scene(core, id).await.1.same_content(&two));
    // A new op after an undo clears redo.
    core.undo(id).await.unwrap();
    core.apply(id, add_page("c")).await.unwrap();
    assert_eq!(core.redo(id).await.unwrap(), None);
    let names: Vec<String> = scene(core, id)
        .await
        .1
        .pages
        .iter()
        .map(|p| p.name.clone())
        .collect();
    assert_eq!(names, vec!["a", "c"]);
}

#[tokio::test]
async fn a_batch_is_one_history_entry() {
    let t = TestCore::new();
    let id = t.session("Batch");
    let core = &t.core;
    core.apply(
        id,
        Op::Batch {
            ops: vec![add_page("a"), add_page("b"), add_page("c")],
            label: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(scene(core, id).await.1.pages.len(), 3);
    core.undo(id).await.unwrap();
    assert_eq!(scene(core, id).await.1.pages.len(), 0);
    assert_eq!(core.undo(id).await.unwrap(), None);
}

#[tokio::test]
async fn undo_limit_bounds_history() {
    let t = TestCore::with(crate::support::settings(
        quire_store::Durability::Fsync,
        1000,
        3,
    ));
    let id = t.session("Limited");
    for i in 0..5 {
        t.core.apply(id, add_page(&format!("p{i}"))).await.unwrap();
    }
    let mut undone = 0;
    while t.core.undo(id).await.unwrap().is_some() {
        undone += 1;
    }
    assert_eq!(undone, 3);
    assert_eq!(scene(&t.core, id).await.1.pages.len(), 2);
}

fn languages(source: Option<Option<&str>>, target: Option<Option<&str>>) -> Op {
    Op::UpdateProject {
        patch: ProjectPatch {
            source_language: source.map(|s| s.map(str::to_owned)),
            target_language: target.map(|t| t.map(str::to_owned)),
            ..Default::default()
        },
    }
}

#[tokio::test]
async fn project_languages_are_set_checked_undone_replayed_and_used() {
    let t = TestCore::new();
    let id = t.session("Languages");
    let core = &t.core;
    core.apply(id, languages(Some(Some("ja")), Some(Some("pt-BR"))))
        .await
        .unwrap();
    let (_, s) = scene(core, id).await;
    assert_eq!(s.project.source_language.as_deref(), Some("ja"));
    assert_eq!(s.project.target_language.as_deref(), Some("pt-BR"));

    // A tag that is not BCP 47 is refused, naming the field; nothing changes.
    for bad in ["not a tag", "-fr", "fr_FR!"] {
        let (before, _) = scene(core, id).await;
        let e = core
            .apply(id, languages(None, Some(Some(bad))))
            .await
            .unwrap_err();
        let CoreError::InvalidOp(message) = &e else {
            panic!("{e:?}")
        };
        assert!(message.contains("targetLanguage"), "{message}");
        let (after, s) = scene(core, id).await;
        assert_eq!(
            (before, s.project.target_language.as_deref()),
            (after, Some("pt-BR"))
        );
    }

    // `null` clears; undo brings it back.
    core.apply(id, languages(None, Some(None))).await.unwrap();
    assert_eq!(scene(core, id).await.1.project.target_language, None);
    core.undo(id).await.unwrap();
    assert_eq!(
        scene(core, id).await.1.project.target_language.as_deref(),
        Some("pt-BR")
    );

    // XLIFF takes the project's languages; a pipeline their target.
    let page = core.apply(id, add_page("p")).await.unwrap().created[0];
    core.apply(
        id,
        Op::AddNode {
            page: PageId(page),
            node: text_node("こんにちは"),
            at: None,
        },
    )
    .await
    .unwrap();
    let spec = quire_core::export::ExportSpec::of(quire_core::export::ExportFormat::Xliff);
    let xliff = String::from_utf8(core.export(id, spec).await.unwrap().bytes).unwrap();
    assert!(
        xliff.contains(r#"srcLang="ja""#) && xliff.contains(r#"trgLang="pt-BR""#),
        "{xliff}"
    );

    // Reopened, the log replays the same languages.
    let path = t.project_path(id);
    core.close_session(id).await.unwrap();
    let reopened = core.open_project(&path).await.unwrap().id;
    let (_, s) = scene(core, reopened).await;
    assert_eq!(s.project.source_language.as_deref(), Some("ja"));
    assert_eq!(s.project.target_language.as_deref(), Some("pt-BR"));
}

/// A text node's region and the project's reading direction: set, undone,
/// replayed from the log after a crash; a region of too few or too many
/// points is refused and changes nothing.
#[tokio::test]
async fn regions_and_the_reading_direction_are_set_undone_replayed_and_bounded() {
    use quire_model::scene::ReadingDirection;
    let t = TestCore::new();
    let (id, p1, _, n1, _) = fixture(&t).await;
    let core = &t.core;
    let region_op = |points: serde_json::Value| -> Op {
        serde_json::from_value(serde_json::json!({
            "type": "UpdateNode", "page": p1, "id": n1,
            "patch": {"kind": {"type": "text", "region": points}},
        }))
        .unwrap()
    };
    let region_of = |scene: &Scene| match &scene.pages[0].nodes[0].kind {
        NodeKind::Text { region, .. } => region.clone(),
        _ => unreachable!(),
    };
    let balloon = serde_json::json!([[10.0, 10.0], [90.0, 12.0], [80.0, 60.5], [12.0, 58.0]]);
    core.apply(id, region_op(balloon.clone())).await.unwrap();
    let (_, with) = scene(core, id).await;
    assert_eq!(
        serde_json::to_value(region_of(&with)).unwrap(),
        balloon,
        "the region as given"
    );
    // Japanese reads right to left unless the project says otherwise.
    let japanese = Op::UpdateProject {
        patch: ProjectPatch {
            source_language: Some(Some("ja".into())),
            ..ProjectPatch::default()
        },
    };
    core.apply(id, japanese).await.unwrap();
    assert_eq!(
        scene(core, id).await.1.project.reading(),
        ReadingDirection::Rtl
    );
    let ltr = Op::UpdateProject {
        patch: ProjectPatch {
            reading_direction: Some(Some(ReadingDirection::Ltr)),
            ..ProjectPatch::default()
        },
    };
    core.apply(id, ltr).await.unwrap();
    assert_eq!(
        scene(core, id).await.1.project.reading(),
        ReadingDirection::Ltr
    );

    for (points, why) in [
        (
            serde_json::json!([[0, 0], [1, 1]]),
            "2 points; it needs 3 to 256",
        ),
        (
            serde_json::Value::Array(vec![serde_json::json!([1, 2]); 257]),
            "257 points; it needs 3 to 256",
        ),
    ] {
        rejects(core, id, region_op(points), &[why]).await;
    }

    // What was accepted comes back from the log after a crash.
    let path = t.project_path(id);
    let after = scene(core, id).await;
    let reopened = crate::support::core_at(
        &t.dir.path().join("elsewhere"),
        crate::support::settings(quire_store::Durability::Fsync, 1000, 500),
    );
    let copy = t.dir.path().join("crashed");
    crate::support::copy_dir(&path, &copy);
    let s = reopened.blocking().open_project(&copy).unwrap();
    let replayed = reopened.scene(s.id).await.unwrap();
    assert_eq!((replayed.epoch, replayed.scene), after);

    // Undo takes the direction back, then the language, then the region.
    for _ in 0..3 {
        core.undo(id).await.unwrap();
    }
    let (_, undone) = scene(core, id).await;
    assert_eq!(undone.project.reading_direction, None);
    assert_eq!(region_of(&undone), None);
}
