//! Ops the core refuses, and how: unknown ids, indexes out of range, orders
//! that are no permutations, patches for another kind, bad values, a batch
//! that fails part-way, malformed ops, an unknown session. Each changes
//! nothing.

use super::*;

#[tokio::test]
async fn unknown_ids_are_rejected_precisely() {
    let t = TestCore::new();
    let (id, p1, _p2, n1, _) = fixture(&t).await;
    let core = &t.core;
    let ghost_page = PageId::new();
    let ghost_node = NodeId::new();
    let page_msg = format!("unknown page id {ghost_page}");
    rejects(
        core,
        id,
        Op::RemovePage { id: ghost_page },
        &["RemovePage", &page_msg],
    )
    .await;
    rejects(
        core,
        id,
        Op::UpdatePage {
            id: ghost_page,
            patch: PagePatch {
                name: Some("x".into()),
                ..Default::default()
            },
        },
        &["UpdatePage", &page_msg],
    )
    .await;
    rejects(
        core,
        id,
        Op::AddNode {
            page: ghost_page,
            node: text_node("x"),
            at: None,
        },
        &[&page_msg],
    )
    .await;
    rejects(
        core,
        id,
        Op::RemoveNode {
            page: ghost_page,
            id: n1,
        },
        &[&page_msg],
    )
    .await;
    rejects(core, id, translate(ghost_page, n1, "x"), &[&page_msg]).await;
    rejects(
        core,
        id,
        Op::ReorderNodes {
            page: ghost_page,
            order: vec![],
        },
        &[&page_msg],
    )
    .await;
    let node_msg = format!("page {p1} has no node with id {ghost_node}");
    rejects(
        core,
        id,
        Op::RemoveNode {
            page: p1,
            id: ghost_node,
        },
        &["RemoveNode", &node_msg],
    )
    .await;
    rejects(
        core,
        id,
        translate(p1, ghost_node, "x"),
        &["UpdateNode", &node_msg],
    )
    .await;
}

#[tokio::test]
async fn indexes_out_of_range_are_rejected() {
    let t = TestCore::new();
    let (id, p1, _, _, _) = fixture(&t).await;
    let core = &t.core;
    let mut op = add_page("far");
    if let Op::AddPage { at, .. } = &mut op {
        *at = Some(3);
    }
    rejects(
        core,
        id,
        op,
        &["AddPage", "index `at` 3 is out of range (0..=2)"],
    )
    .await;
    rejects(
        core,
        id,
        Op::AddNode {
            page: p1,
            node: text_node("x"),
            at: Some(9),
        },
        &["AddNode", "index `at` 9 is out of range (0..=2)"],
    )
    .await;
}

#[tokio::test]
async fn orders_that_are_not_permutations_are_rejected() {
    let t = TestCore::new();
    let (id, p1, p2, n1, n2) = fixture(&t).await;
    let core = &t.core;
    rejects(
        core,
        id,
        Op::ReorderPages { order: vec![p1] },
        &[
            "ReorderPages",
            "not a permutation of the 2 pages",
            "is missing",
        ],
    )
    .await;
    rejects(
        core,
        id,
        Op::ReorderPages {
            order: vec![p1, p1],
        },
        &["names page", "twice"],
    )
    .await;
    let ghost = PageId::new();
    rejects(
        core,
        id,
        Op::ReorderPages {
            order: vec![p1, p2, ghost],
        },
        &[&format!("unknown page id {ghost}")],
    )
    .await;
    rejects(
        core,
        id,
        Op::ReorderNodes {
            page: p1,
            order: vec![n2],
        },
        &["ReorderNodes", "not a permutation of the 2 nodes"],
    )
    .await;
    rejects(
        core,
        id,
        Op::ReorderNodes {
            page: p1,
            order: vec![n1, n2, n2],
        },
        &["names node", "twice"],
    )
    .await;
}

#[tokio::test]
async fn a_patch_for_another_kind_is_rejected() {
    let t = TestCore::new();
    let (id, p1, _, n1, _) = fixture(&t).await;
    let op = Op::UpdateNode {
        page: p1,
        id: n1,
        patch: NodePatch {
            kind: Some(KindPatch::Image {
                blob: None,
                role: Some(ImageRole::Rendered),
                opacity: None,
                name: None,
            }),
            ..Default::default()
        },
        based_on: None,
    };
    rejects(
        &t.core,
        id,
        op,
        &[
            "UpdateNode",
            "the patch is for a image node",
            "is a text node",
        ],
    )
    .await;
}

#[tokio::test]
async fn bad_values_are_rejected() {
    let t = TestCore::new();
    let (id, p1, _, n1, _) = fixture(&t).await;
    let core = &t.core;
    let dup = core.scene(id).await.unwrap().scene.pages[0].id;
    let mut op = add_page("dup");
    if let Op::AddPage { page, .. } = &mut op {
        page.id = Some(dup);
    }
    rejects(core, id, op, &["already exists"]).await;
    let missing = BlobHash::of(b"never stored");
    let image = NewNode {
        id: None,
        transform: Default::default(),
        visible: true,
        kind: NodeKind::Image {
            blob: missing,
            role: ImageRole::Source,
            opacity: 1.0,
            name: None,
            rendered_from: None,
        },
    };
    rejects(
        core,
        id,
        Op::AddNode {
            page: p1,
            node: image.clone(),
            at: None,
        },
        &["is not in the project's blob store"],
    )
    .await;
    let stored = core.blocking().put_blob(id, b"png bytes").unwrap();
    let mut bad_opacity = image.clone();
    bad_opacity.kind = NodeKind::Image {
        blob: stored,
        role: ImageRole::Source,
        opacity: 1.5,
        name: None,
        rendered_from: None,
    };
    rejects(
        core,
        id,
        Op::AddNode {
            page: p1,
            node: bad_opacity,
            at: None,
        },
        &["opacity 1.5 is outside 0..=1"],
    )
    .await;
    let negative = Op::UpdateNode {
        page: p1,
        id: n1,
        patch: NodePatch {
            transform: Some(TransformPatch {
                width: Some(-1.0),
                ..Default::default()
            }),
            ..Default::default()
        },
        based_on: None,
    };
    rejects(core, id, negative, &["must not be negative"]).await;
    rejects(
        core,
        id,
        Op::UpdateNode {
            page: p1,
            id: n1,
            patch: NodePatch::default(),
            based_on: None,
        },
        &["the patch changes nothing"],
    )
    .await;
    rejects(
        core,
        id,
        Op::UpdateProject {
            patch: ProjectPatch {
                name: Some("  ".into()),
                ..Default::default()
            },
        },
        &["must not be empty"],
    )
    .await;
    rejects(
        core,
        id,
        Op::Batch {
            ops: vec![],
            label: None,
        },
        &["Batch: has no ops"],
    )
    .await;
    // A stored blob is accepted.
    let mut good = image;
    good.kind = NodeKind::Image {
        blob: stored,
        role: ImageRole::Source,
        opacity: 0.5,
        name: None,
        rendered_from: None,
    };
    core.apply(
        id,
        Op::AddNode {
            page: p1,
            node: good,
            at: None,
        },
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_batch_whose_third_op_fails_changes_nothing() {
    let t = TestCore::new();
    let (id, p1, _, n1, _) = fixture(&t).await;
    let ghost = NodeId::new();
    let op = Op::Batch {
        ops: vec![
            add_page("new"),
            translate(p1, n1, "changed"),
            Op::RemoveNode {
                page: p1,
                id: ghost,
            },
            add_page("never"),
        ],
        label: Some("doomed".into()),
    };
    rejects(
        &t.core,
        id,
        op,
        &["ops[2] RemoveNode", &format!("no node with id {ghost}")],
    )
    .await;
    // Nested batches name the path to the failing member.
    let nested = Op::Batch {
        ops: vec![
            add_page("x"),
            Op::Batch {
                ops: vec![Op::RemovePage { id: PageId::new() }],
                label: None,
            },
        ],
        label: None,
    };
    rejects(&t.core, id, nested, &["ops[1] ops[0] RemovePage"]).await;
}

#[test]
fn malformed_ops_fail_to_parse_with_a_reason() {
    let cases = [
        (r#"{"type":"AddPage"}"#, "missing field `page`"),
        (r#"{"type":"Teleport"}"#, "unknown variant `Teleport`"),
        (r#"{"type":"RemovePage","id":"not-a-uuid"}"#, "UUID"),
        (
            r#"{"type":"RemovePage","id":"0190d2a0-0000-7000-8000-000000000001","extra":1}"#,
            "unknown field `extra`",
        ),
        (r#"{"type":"ReorderPages","order":"abc"}"#, "invalid type"),
        (
            r#"{"type":"AddPage","page":{"name":"x"},"at":-1}"#,
            "invalid value",
        ),
        (r#"{"type":"UpdateNode"#, "EOF"),
    ];
    for (json, expected) in cases {
        let err = serde_json::from_str::<Op>(json).unwrap_err().to_string();
        assert!(err.contains(expected), "{json}: {err}");
    }
}

#[tokio::test]
async fn unknown_session_is_not_found() {
    let t = TestCore::new();
    let ghost = SessionId::new();
    let err = t.core.apply(ghost, add_page("x")).await.unwrap_err();
    assert_eq!(err, CoreError::not_found("session", ghost));
    assert_eq!(t.core.resolve(None).unwrap_err(), CoreError::NoSession);
}
