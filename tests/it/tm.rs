//! The translation memory: a segment reviewed in project A fills the
//! identical and a near-identical segment of project B (with its score in
//! the origin), not a dissimilar one; a project into another language adds
//! nothing; and the memory follows what is reviewed, without reopening.

use quire::core::ids::SessionId;
use quire::core::jobs::{Approval, PipelineSpec};
use quire::core::op::{NodePatch, Op, ProjectPatch};
use quire::core::scene::{Author, NodeKind, TextState};

use crate::core_jobs::{finished, follow};
use crate::core_support::TestCore;

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
        page: quire::core::ids::PageId(created[0]),
        id: quire::core::ids::NodeId(created[1 + i]),
        patch: NodePatch::text(Some(Some(translation.into())), Some(TextState::Reviewed)),
        based_on: None,
    };
    t.core.apply(id, op).await.unwrap();
}

async fn run_tm(t: &TestCore, id: SessionId) {
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
        quire::core::events::JobStatus::Completed
    );
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
        page: quire::core::ids::PageId(a_nodes[0]),
        id: quire::core::ids::NodeId(a_nodes[3]),
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
