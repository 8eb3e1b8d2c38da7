//! Every accepted op stays replayable: the limits of `03-core.md` are
//! checked before an op is logged, and what is acknowledged survives a
//! crash and decodes again.
//!
//! The property test draws arbitrary ops (names and texts at and past
//! their limits, batches nested past the depth limit, members that do not
//! apply), predicts from the pure `apply` and `limits::check_op` whether
//! each is accepted, checks the core agrees and that a refusal changed
//! nothing, then drops the core without closing (a crash) and checks that
//! the reopened project equals the in-memory replay.

use proptest::prelude::*;

use quire_model::apply::apply;
use quire_model::hash::BlobHash;
use quire_model::history::History;
use quire_model::ids::PageId;
use quire_model::limits::{self, MAX_BATCH_DEPTH, MAX_BATCH_OPS, MAX_NAME_CHARS, MAX_TEXT_BYTES};
use quire_model::op::{KindPatch, NodePatch, Op, PagePatch, ProjectPatch};
use quire_model::scene::{NodeKind, Scene};
use quire_model::workflow::{Writer, stamp};
use quire_store::Durability;

use crate::support::{Action, Intent, TestCore, add_page, core_at, intent, settings, text_node};

#[derive(Debug, Clone, Copy)]
enum Name {
    Plain,
    Longest,
    TooLong,
    Control,
    Blank,
}

#[derive(Debug, Clone, Copy)]
enum Text {
    Plain,
    Largest,
    TooLarge,
    Control,
}

/// The shape of an op; resolved against the scene when it is built.
#[derive(Debug, Clone)]
enum Shape {
    Leaf {
        intent: Intent,
        name: Name,
        text: Text,
    },
    Batch {
        members: Vec<Shape>,
        label: Name,
    },
}

fn name() -> impl Strategy<Value = Name> {
    prop_oneof![
        6 => Just(Name::Plain),
        1 => Just(Name::Longest),
        1 => Just(Name::TooLong),
        1 => Just(Name::Control),
        1 => Just(Name::Blank),
    ]
}

fn text() -> impl Strategy<Value = Text> {
    prop_oneof![
        12 => Just(Text::Plain),
        1 => Just(Text::Largest),
        1 => Just(Text::TooLarge),
        2 => Just(Text::Control),
    ]
}

fn label() -> impl Strategy<Value = Name> {
    prop_oneof![9 => Just(Name::Plain), 1 => name()]
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = (intent(), name(), text()).prop_map(|(intent, name, text)| Shape::Leaf {
        intent,
        name,
        text,
    });
    let tree = leaf.prop_recursive(4, 24, 3, |inner| {
        (proptest::collection::vec(inner, 1..4), label())
            .prop_map(|(members, label)| Shape::Batch { members, label })
    });
    // Some ops wrapped in up to 10 more batches: past the depth limit of 8.
    let wraps = prop_oneof![3 => Just(0usize), 2 => 1..=10usize];
    (tree, wraps).prop_map(|(mut shape, wraps)| {
        for _ in 0..wraps {
            shape = Shape::Batch {
                members: vec![shape],
                label: Name::Plain,
            };
        }
        shape
    })
}

fn name_of(choice: Name, plain: &str) -> String {
    match choice {
        Name::Plain => plain.to_owned(),
        Name::Longest => "é".repeat(MAX_NAME_CHARS),
        Name::TooLong => "é".repeat(MAX_NAME_CHARS + 1),
        Name::Control => format!("{plain}\u{1b}[31m"),
        Name::Blank => " \t ".to_owned(),
    }
}

fn text_of(choice: Text, plain: &str) -> String {
    match choice {
        Text::Plain => plain.to_owned(),
        Text::Largest => "x".repeat(MAX_TEXT_BYTES),
        Text::TooLarge => "x".repeat(MAX_TEXT_BYTES + 1),
        // Control characters are fine in texts; the log must carry them.
        Text::Control => format!("{plain}\u{0}\u{7}\r\n\u{1b}"),
    }
}

/// A concrete op for `shape`; members of a batch are built against the
/// scene as the members before them leave it.
fn build(shape: &Shape, scratch: &mut Scene) -> Op {
    let no_blobs = |_: &BlobHash| false;
    match shape {
        Shape::Leaf { intent, name, text } => {
            let history = History::new(1, u64::MAX);
            // Nothing to act on yet (or an undo, with no history): a page.
            let fallback = Intent::AddPage { nodes: 1, at: 0 };
            let Some(Action::Op(mut op)) = intent
                .resolve(scratch, &history)
                .or_else(|| fallback.resolve(scratch, &history))
            else {
                unreachable!("adding a page always resolves to an op")
            };
            dress(&mut op, *name, *text);
            // A failing op changes nothing, so the scratch scene stays right.
            let _ = apply(scratch, op.clone(), &no_blobs);
            op
        }
        Shape::Batch { members, label } => Op::Batch {
            ops: members.iter().map(|m| build(m, scratch)).collect(),
            label: Some(name_of(*label, "a batch")),
        },
    }
}

/// Puts the chosen name or text where the op has one.
fn dress(op: &mut Op, name: Name, text: Text) {
    match op {
        Op::AddPage { page, .. } => {
            page.name = name_of(name, &page.name);
            for node in page.nodes.iter_mut().flatten() {
                if let NodeKind::Text { text: t, .. } = &mut node.kind {
                    *t = t.as_deref().map(|s| text_of(text, s));
                }
            }
        }
        Op::AddNode { node, .. } => {
            if let NodeKind::Text { text: t, .. } = &mut node.kind {
                *t = t.as_deref().map(|s| text_of(text, s));
            }
        }
        Op::UpdateNode {
            patch:
                NodePatch {
                    kind:
                        Some(KindPatch::Text {
                            translation: Some(Some(t)),
                            ..
                        }),
                    ..
                },
            ..
        } => *t = text_of(text, t),
        Op::RemovePage { .. } => {
            *op = Op::UpdateProject {
                patch: ProjectPatch {
                    name: Some(name_of(name, "renamed")),
                    ..Default::default()
                },
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn accepted_ops_survive_a_crash_and_refused_ones_change_nothing(
        shapes in proptest::collection::vec(shape(), 1..12)
    ) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let t = TestCore::with(settings(Durability::Batch, 5, 1000));
            let id = t.session("Limits");
            let mut replica = t.core.scene(id).await.unwrap().scene;
            let mut acknowledged = 0u64;
            let no_blobs = |_: &BlobHash| false;
            for shape in &shapes {
                let op = build(shape, &mut replica.clone());
                let mut expected = replica.clone();
                // As the session does: a person's edit is stamped first.
                let stamped = stamp(&expected, op.clone(), &Writer::PERSON, "2026-01-01T00:00:00Z");
                let accepted = limits::check_op(&op).is_ok()
                    && stamped.is_ok_and(|s| apply(&mut expected, s.op.unwrap(), &no_blobs).is_ok());
                let before = t.core.scene(id).await.unwrap();
                match t.core.apply(id, op).await {
                    Ok(result) => {
                        prop_assert!(accepted, "the core accepted an op over the limits");
                        acknowledged += 1;
                        prop_assert_eq!(result.epoch, acknowledged);
                        replica = expected;
                    }
                    Err(e) => {
                        prop_assert!(!accepted, "the core refused a good op: {}", e);
                        prop_assert_eq!(e.code(), "invalid_op");
                        let after = t.core.scene(id).await.unwrap();
                        prop_assert_eq!(after.epoch, before.epoch);
                        prop_assert_eq!(&after.scene, &before.scene);
                    }
                }
            }
            // A crash: the core goes away without a final snapshot, so the
            // log (and the periodic snapshots) must carry everything.
            let path = t.project_path(id);
            let TestCore { dir, core } = t;
            drop(core);
            let core = core_at(&dir.path().join("projects"), settings(Durability::Fsync, 1000, 1000));
            let s = core.blocking().open_project(&path).unwrap();
            prop_assert_eq!(s.epoch, acknowledged);
            let reopened = core.scene(s.id).await.unwrap().scene;
            prop_assert!(reopened.same_content(&replica), "the reopened project differs from the replay");
            Ok(())
        })?;
    }
}

fn nested(depth: usize) -> Op {
    let mut op = add_page("deep");
    for _ in 0..depth {
        op = Op::Batch {
            ops: vec![op],
            label: None,
        };
    }
    op
}

#[tokio::test]
async fn a_batch_nested_past_the_limit_is_refused_before_it_is_logged() {
    let t = TestCore::new();
    let id = t.session("Nesting");
    let log = t.project_path(id).join("ops.log");
    // 0.1.0 acknowledged 62 levels and then could not reopen the project.
    for depth in [MAX_BATCH_DEPTH + 1, 62] {
        let err = t.core.apply(id, nested(depth)).await.unwrap_err();
        assert_eq!(err.code(), "invalid_op");
        assert!(err.to_string().contains("nest at most 8 deep"), "{err}");
        assert_eq!(std::fs::read(&log).unwrap(), b"", "nothing logged");
    }
    assert_eq!(
        t.core
            .apply(id, nested(MAX_BATCH_DEPTH))
            .await
            .unwrap()
            .epoch,
        1
    );
    let path = t.project_path(id);
    let TestCore { dir, core } = t;
    drop(core);
    let core = core_at(
        &dir.path().join("projects"),
        settings(Durability::Fsync, 1000, 500),
    );
    assert_eq!(core.blocking().open_project(&path).unwrap().epoch, 1);
}

#[tokio::test]
async fn one_op_holds_at_most_100000_ops() {
    let t = TestCore::new();
    let id = t.session("Count");
    let page = PageId(t.core.apply(id, add_page("p")).await.unwrap().created[0]);
    let node = |i: usize| Op::AddNode {
        page,
        node: text_node(&format!("n{i}")),
        at: None,
    };
    // Counted across nesting: two halves of 50,001 are over.
    let half = |from: usize| Op::Batch {
        ops: (from..from + MAX_BATCH_OPS / 2 + 1).map(node).collect(),
        label: None,
    };
    let over = Op::Batch {
        ops: vec![half(0), half(MAX_BATCH_OPS)],
        label: None,
    };
    let err = t.core.apply(id, over).await.unwrap_err();
    assert!(err.to_string().contains("at most 100000 ops"), "{err}");
    assert_eq!(t.core.scene(id).await.unwrap().epoch, 1);
}

#[tokio::test]
async fn names_follow_one_rule_on_create_and_rename() {
    let t = TestCore::new();
    let id = t.session("Names");
    let long = "n".repeat(MAX_NAME_CHARS + 1);
    let err = t.core.blocking().create_managed_project(&long).unwrap_err();
    assert!(err.to_string().contains("at most 200"), "{err}");
    let renames = [long.clone(), "tab\tin name".to_owned(), "   ".to_owned()];
    for name in renames {
        let op = Op::UpdateProject {
            patch: ProjectPatch {
                name: Some(name.clone()),
                ..Default::default()
            },
        };
        let err = t.core.apply(id, op).await.unwrap_err();
        assert_eq!(err.code(), "invalid_op", "{name:?}");
        let page = Op::AddPage {
            page: quire_model::op::NewPage {
                id: None,
                name,
                width: None,
                height: None,
                nodes: None,
                document: None,
            },
            at: None,
        };
        assert!(t.core.apply(id, page).await.is_err());
    }
    let scene = t.core.scene(id).await.unwrap();
    assert_eq!(scene.epoch, 0);
    assert_eq!(scene.scene.project.name, "Names");
    let page = PageId(t.core.apply(id, add_page("ok")).await.unwrap().created[0]);
    let rename = Op::UpdatePage {
        id: page,
        patch: PagePatch {
            name: Some("bell\u{7}".into()),
            ..PagePatch::default()
        },
    };
    assert!(t.core.apply(id, rename).await.is_err());
}

#[tokio::test]
async fn an_op_larger_than_max_body_bytes_is_refused() {
    let mut s = settings(Durability::Fsync, 1000, 500);
    s.max_op_bytes = 4096;
    let t = TestCore::with(s);
    let id = t.session("Size");
    let page = PageId(t.core.apply(id, add_page("p")).await.unwrap().created[0]);
    let big = Op::AddNode {
        page,
        node: text_node(&"y".repeat(5000)),
        at: None,
    };
    let err = t.core.apply(id, big).await.unwrap_err();
    assert_eq!(err.code(), "invalid_op");
    assert!(err.to_string().contains("at most 4096"), "{err}");
    let scene = t.core.scene(id).await.unwrap();
    assert_eq!(scene.epoch, 1);
    assert!(scene.scene.pages[0].nodes.is_empty());
}

/// A heavy apply leaves the runtime free: on a runtime with one worker
/// thread, a small op in another session finishes while a 100,000-op
/// batch is still applying (0.1.0 ran it on the worker and held it up).
#[test]
fn a_heavy_apply_does_not_hold_up_other_sessions() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let t = TestCore::new();
        let busy = t.session("Busy");
        let other = t.session("Other");
        let page = PageId(t.core.apply(busy, add_page("p")).await.unwrap().created[0]);
        let batch = Op::Batch {
            ops: (0..MAX_BATCH_OPS)
                .map(|i| Op::AddNode {
                    page,
                    node: text_node(&format!("n{i}")),
                    at: None,
                })
                .collect(),
            label: None,
        };
        let heavy = {
            let core = t.core.clone();
            tokio::spawn(async move { core.apply(busy, batch).await })
        };
        // Let the heavy apply start first.
        tokio::task::yield_now().await;
        for i in 0..5 {
            t.core
                .apply(other, add_page(&format!("q{i}")))
                .await
                .unwrap();
        }
        assert!(
            !heavy.is_finished(),
            "the small ops waited for the batch to finish"
        );
        assert_eq!(heavy.await.unwrap().unwrap().epoch, 2);
    });
}

/// The undo history is bounded by what its ops hold, not only by their
/// count: big batches push the oldest entries out (0.2 grew by 1.4 MiB an
/// entry up to 500 entries), the newest stays undoable, and a reopened
/// project restores no more than the bound.
#[tokio::test]
async fn the_undo_history_is_bounded_by_bytes_as_well_as_entries() {
    let mut settings = crate::support::settings(quire_store::Durability::Fsync, 1000, 500);
    settings.history_max_bytes = 256 << 10;
    let t = TestCore::with(settings);
    let id = t.session("Renames");
    let mut pages = Vec::new();
    for n in 0..100 {
        pages.push(PageId(
            t.core
                .apply(id, add_page(&format!("p{n}")))
                .await
                .unwrap()
                .created[0],
        ));
    }
    for round in 0..30 {
        let ops = pages
            .iter()
            .map(|p| Op::UpdatePage {
                id: *p,
                patch: quire_model::op::PagePatch {
                    name: Some(format!("round {round} {}", "x".repeat(100))),
                    ..Default::default()
                },
            })
            .collect();
        t.core
            .apply(
                id,
                Op::Batch {
                    ops,
                    label: Some(format!("round {round}")),
                },
            )
            .await
            .unwrap();
    }
    let undo_all = async |t: &TestCore, id| {
        let mut labels = Vec::new();
        while let Some(step) = t.core.undo(id).await.unwrap() {
            labels.push(step.label);
        }
        labels
    };
    let labels = undo_all(&t, id).await;
    assert!(
        (1..30).contains(&labels.len()),
        "{} entries kept of 130",
        labels.len()
    );
    assert_eq!(labels[0], "round 29", "the newest change stays undoable");
    // Redo it all, close, reopen: the restored history is bounded too.
    while t.core.redo(id).await.unwrap().is_some() {}
    let path = t.project_path(id);
    t.core.close_session(id).await.unwrap();
    let again = t.core.open_project(&path).await.unwrap().id;
    let reopened = undo_all(&t, again).await;
    assert!(
        reopened.len() <= labels.len(),
        "{} > {}",
        reopened.len(),
        labels.len()
    );
}
