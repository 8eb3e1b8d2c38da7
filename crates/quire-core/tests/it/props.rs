//! Property tests of ops and history: for random sequences of valid and
//! invalid ops, undoing everything returns the initial scene, redoing
//! everything returns the same final scene, and an invalid op (or a batch
//! with a failing member) changes nothing and leaves the epoch alone.

use proptest::prelude::*;

use quire_model::apply::apply;
use quire_model::hash::BlobHash;
use quire_model::ids::{NodeId, PageId};
use quire_model::op::{KindPatch, NodePatch, Op};
use quire_model::scene::{ImageRole, Scene};

use crate::support::{Action, Intent, Replica, TestCore, add_page, intent, settings};

/// One step of a sequence, as data proptest shrinks; resolved against the
/// scene when it runs.
#[derive(Debug, Clone)]
enum Step {
    /// A valid op, undo or redo.
    Valid(Intent),
    /// An op that cannot apply, of one of several kinds, on a picked page.
    Invalid(u8, usize),
    /// A batch whose last member fails.
    FailingBatch(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => intent().prop_map(Step::Valid),
        2 => (0u8..5, any::<usize>()).prop_map(|(k, p)| Step::Invalid(k, p)),
        1 => any::<usize>().prop_map(Step::FailingBatch),
    ]
}

/// An op that must be rejected against `scene`.
fn invalid(kind: u8, pick: usize, scene: &Scene) -> Op {
    let page = if scene.pages.is_empty() {
        None
    } else {
        Some(&scene.pages[pick % scene.pages.len()])
    };
    match (kind, page) {
        (1, Some(p)) => {
            let mut order: Vec<PageId> = scene.pages.iter().map(|p| p.id).collect();
            order.push(p.id);
            Op::ReorderPages { order }
        }
        (2, Some(p)) => Op::AddNode {
            page: p.id,
            node: crate::support::text_node("far"),
            at: Some(p.nodes.len() + 1 + pick % 5),
        },
        (3, Some(p)) if !p.nodes.is_empty() => Op::UpdateNode {
            page: p.id,
            id: p.nodes[0].id,
            patch: NodePatch {
                kind: Some(KindPatch::Image {
                    blob: None,
                    role: Some(ImageRole::Custom),
                    opacity: None,
                    name: None,
                }),
                ..Default::default()
            },
            based_on: None,
        },
        (4, Some(p)) => Op::RemoveNode {
            page: p.id,
            id: NodeId::new(),
        },
        _ => Op::RemovePage { id: PageId::new() },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn undo_all_restores_and_redo_all_replays(steps in proptest::collection::vec(step(), 1..30)) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let t = TestCore::with(settings(quire_store::Durability::Fsync, 7, 1000));
            let core = &t.core;
            let id = t.session("Props");
            let initial = core.scene(id).await.unwrap();
            let mut replica = Replica::new(initial.scene.clone(), 1000);
            for step in &steps {
                let before = core.scene(id).await.unwrap();
                let rejected = match step {
                    Step::Valid(intent) => {
                        let Some(action) = intent.resolve(&replica.scene, &replica.history) else {
                            continue;
                        };
                        let epoch = match &action {
                            Action::Op(op) => core.apply(id, op.clone()).await.unwrap().epoch,
                            Action::Undo => core.undo(id).await.unwrap().unwrap().epoch,
                            Action::Redo => core.redo(id).await.unwrap().unwrap().epoch,
                        };
                        replica.perform(&action);
                        prop_assert_eq!(epoch, before.epoch + 1);
                        None
                    }
                    Step::Invalid(kind, pick) => {
                        Some(core.apply(id, invalid(*kind, *pick, &before.scene)).await)
                    }
                    Step::FailingBatch(pick) => {
                        let ops = vec![
                            add_page("batched"),
                            add_page("batched too"),
                            invalid(0, *pick, &before.scene),
                        ];
                        Some(core.apply(id, Op::Batch { ops, label: None }).await)
                    }
                };
                if let Some(result) = rejected {
                    prop_assert_eq!(result.unwrap_err().code(), "invalid_op");
                    let after = core.scene(id).await.unwrap();
                    prop_assert_eq!(after.epoch, before.epoch);
                    prop_assert_eq!(&after.scene, &before.scene);
                }
            }
            let end = core.scene(id).await.unwrap();
            prop_assert!(end.scene.same_content(&replica.scene));

            let mut undone = 0;
            while core.undo(id).await.unwrap().is_some() {
                undone += 1;
            }
            let bottom = core.scene(id).await.unwrap();
            prop_assert!(bottom.scene.same_content(&initial.scene), "undo all did not return the initial scene");
            prop_assert_eq!(bottom.epoch, end.epoch + undone);

            for _ in 0..undone {
                prop_assert!(core.redo(id).await.unwrap().is_some());
            }
            let top = core.scene(id).await.unwrap();
            prop_assert!(top.scene.same_content(&end.scene), "redo all did not return the final scene");
            // What was undone by the sequence itself is still redoable after.
            let left = replica.history.redo_len();
            prop_assert_eq!(core.session(id).unwrap().epoch, top.epoch);
            for _ in 0..left {
                prop_assert!(core.redo(id).await.unwrap().is_some());
            }
            prop_assert_eq!(core.redo(id).await.unwrap(), None);
            for _ in 0..left {
                prop_assert!(core.undo(id).await.unwrap().is_some());
            }
            let top = core.scene(id).await.unwrap();
            prop_assert!(top.scene.same_content(&end.scene));

            // And the same survives a reopen.
            let path = t.project_path(id);
            core.blocking().close_session(id).unwrap();
            let again = core.blocking().open_project(&path).unwrap();
            let reopened = core.scene(again.id).await.unwrap();
            prop_assert_eq!(reopened.scene, top.scene);
            Ok(())
        })?;
    }

    #[test]
    fn every_applied_op_is_undone_by_its_inverse(intents in proptest::collection::vec(intent(), 1..60)) {
        let no_blobs = |_: &BlobHash| false;
        let mut replica = Replica::new(Scene::new("pure", "2026-01-01T00:00:00Z"), 1000);
        for intent in intents {
            if let Some(Action::Op(op)) = intent.resolve(&replica.scene, &replica.history) {
                let before = replica.scene.clone();
                let mut scene = before.clone();
                let applied = apply(&mut scene, op, &no_blobs).unwrap();
                let mut back = scene.clone();
                let restored = apply(&mut back, applied.inverse.clone(), &no_blobs).unwrap();
                prop_assert_eq!(&back, &before);
                // The inverse of the inverse is the resolved op itself.
                prop_assert_eq!(restored.inverse, applied.op.clone());
                // Replaying the resolved op gives the same scene.
                let mut replay = before.clone();
                apply(&mut replay, applied.op, &no_blobs).unwrap();
                prop_assert_eq!(&replay, &scene);
                replica.scene = scene;
            }
        }
    }
}
