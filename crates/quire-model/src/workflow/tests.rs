//! The stamper's rules: origins, the overwrite policy, `final`, the review
//! role and the marks engines leave.

use super::*;
use crate::apply::apply;
use crate::op::{NewPage, NodePatch};

const AT: &str = "2026-12-01T00:00:00Z";

fn text(translation: Option<&str>) -> NodeKind {
    with(translation, None, None)
}

fn with(
    translation: Option<&str>,
    state: Option<TextState>,
    origin: Option<Box<Origin>>,
) -> NodeKind {
    NodeKind::Text {
        text: Some("source".into()),
        translation: translation.map(str::to_owned),
        source_lang: None,
        style: None,
        state,
        origin,
        timing: None,
        region: None,
        found_by: None,
        source_edit: None,
        entry: None,
        suggestions: Vec::new(),
    }
}

fn scene_with(kinds: Vec<NodeKind>) -> (Scene, PageId, Vec<NodeId>) {
    let mut scene = Scene::new("p", AT);
    let ids: Vec<NodeId> = kinds.iter().map(|_| NodeId::new()).collect();
    let page = PageId::new();
    let nodes = kinds
        .into_iter()
        .zip(&ids)
        .map(|(kind, id)| NewNode {
            id: Some(*id),
            transform: Default::default(),
            visible: true,
            kind,
        })
        .collect();
    let op = Op::AddPage {
        page: NewPage {
            id: Some(page),
            name: "1".into(),
            width: None,
            height: None,
            nodes: Some(nodes),
            document: None,
        },
        at: None,
    };
    apply(&mut scene, op, &|_| true).unwrap();
    (scene, page, ids)
}

fn set(page: PageId, id: NodeId, translation: &str, state: Option<TextState>) -> Op {
    Op::UpdateNode {
        page,
        id,
        patch: NodePatch::text(Some(Some(translation.into())), state),
        based_on: None,
    }
}

fn node_kind(scene: &Scene, id: NodeId) -> &NodeKind {
    let page = &scene.pages[0];
    &page.nodes[page.node_index(id).unwrap()].kind
}

#[test]
fn a_person_s_edit_is_translated_by_a_human() {
    let (mut scene, page, ids) = scene_with(vec![text(None)]);
    assert_eq!(node_kind(&scene, ids[0]).state(), Some(TextState::Initial));
    let stamped = stamp(&scene, set(page, ids[0], "hi", None), &Writer::PERSON, AT).unwrap();
    apply(&mut scene, stamped.op.unwrap(), &|_| true).unwrap();
    let NodeKind::Text { state, origin, .. } = node_kind(&scene, ids[0]) else {
        panic!()
    };
    assert_eq!(*state, Some(TextState::Translated));
    assert_eq!(origin.as_ref().unwrap().by, Author::Human);
}

/// A user's edit is signed with their name, even where the op names
/// someone else's origin.
#[test]
fn a_users_edits_carry_their_name_and_cannot_claim_another() {
    let (scene, page, ids) = scene_with(vec![text(None), text(None)]);
    let ana = Writer::Person {
        user: Some("ana".into()),
        below_review: None,
    };
    let claimed = Origin {
        by: Author::Human,
        engine: None,
        client: None,
        user: Some("rui".into()),
        at: AT.into(),
        score: None,
        suggested_by: None,
    };
    let mut patch = NodePatch::text(Some(Some("oi".into())), None);
    if let Some(KindPatch::Text { origin, .. }) = &mut patch.kind {
        *origin = Some(Some(Box::new(claimed)));
    }
    let ops = vec![
        set(page, ids[0], "olá", None),
        Op::UpdateNode {
            page,
            id: ids[1],
            patch,
            based_on: None,
        },
    ];
    let batch = Op::Batch { ops, label: None };
    let stamped = stamp(&scene, batch, &ana, AT).unwrap().op.unwrap();
    let Op::Batch { ops, .. } = stamped else {
        panic!()
    };
    for op in ops {
        let Op::UpdateNode { patch, .. } = op else {
            panic!()
        };
        let Some(KindPatch::Text {
            origin: Some(Some(origin)),
            ..
        }) = patch.kind
        else {
            panic!("no origin")
        };
        assert_eq!(origin.user.as_deref(), Some("ana"));
    }
}

fn source(page: PageId, id: NodeId, text: &str) -> Op {
    Op::UpdateNode {
        page,
        id,
        patch: NodePatch::source(Some(Some(text.into()))),
        based_on: None,
    }
}

fn run(scene: &mut Scene, op: Op, writer: &Writer) {
    let stamped = stamp(scene, op, writer, AT).unwrap();
    apply(scene, stamped.op.unwrap(), &|_| true).unwrap();
}

/// A fix of a translated node's source names who made it and marks the
/// translation for review, until the translation is written or
/// reviewed again; an engine's reading, an untranslated node and an
/// unchanged source mark nothing; no client can set the mark itself.
#[test]
fn a_source_fix_is_signed_and_marks_the_translation_for_review() {
    let reviewed = with(Some("bonjour"), Some(TextState::Reviewed), None);
    let (mut scene, page, ids) = scene_with(vec![reviewed.clone(), text(None), reviewed]);
    let agent = Writer::Agent {
        client: "claude-code 2.1.0".into(),
        user: Some("ana".into()),
        below_review: None,
        session: None,
    };
    let mark = |scene: &Scene, id| match node_kind(scene, id) {
        NodeKind::Text { source_edit, .. } => source_edit.clone(),
        _ => None,
    };
    run(&mut scene, source(page, ids[0], "source"), &agent);
    assert_eq!(mark(&scene, ids[0]), None, "the same text is no change");
    run(&mut scene, source(page, ids[0], "Hello!"), &agent);
    let edit = mark(&scene, ids[0]).expect("marked");
    assert_eq!(
        (
            edit.by,
            edit.client.as_deref(),
            edit.user.as_deref(),
            edit.at.as_str()
        ),
        (Author::Agent, Some("claude-code 2.1.0"), Some("ana"), AT)
    );
    assert!(node_kind(&scene, ids[0]).source_changed());
    assert_eq!(
        node_kind(&scene, ids[0]).state(),
        Some(TextState::Reviewed),
        "the state is the reviewer's to change"
    );
    // Reviewing it again (a state written) clears the mark.
    run(
        &mut scene,
        Op::UpdateNode {
            page,
            id: ids[0],
            patch: NodePatch::text(None, Some(TextState::Reviewed)),
            based_on: None,
        },
        &Writer::PERSON,
    );
    assert_eq!(mark(&scene, ids[0]), None);
    // Untranslated: nothing to review.
    run(&mut scene, source(page, ids[1], "Hi"), &Writer::PERSON);
    assert_eq!(mark(&scene, ids[1]), None);
    // An engine's reading is not a person's fix.
    let ocr = Writer::Engine {
        id: "ocr".into(),
        overwrite: Overwrite::Untranslated,
        user: None,
        client: None,
        session: None,
    };
    run(&mut scene, source(page, ids[2], "Hullo"), &ocr);
    assert_eq!(mark(&scene, ids[2]), None);
    // A client naming a mark of its own is ignored.
    let mut patch = NodePatch::source(Some(Some("Hullo".into())));
    if let Some(KindPatch::Text { source_edit, .. }) = &mut patch.kind {
        *source_edit = Some(Some(Box::new(edit.as_ref().clone())));
    }
    let op = Op::UpdateNode {
        page,
        id: ids[1],
        patch,
        based_on: None,
    };
    run(&mut scene, op, &Writer::PERSON);
    assert_eq!(mark(&scene, ids[1]), None);
    // A person's fix, then the translation written again: cleared.
    run(&mut scene, source(page, ids[2], "Hello"), &Writer::PERSON);
    assert_eq!(mark(&scene, ids[2]).map(|o| o.by), Some(Author::Human));
    run(
        &mut scene,
        set(page, ids[2], "salut", None),
        &Writer::PERSON,
    );
    assert_eq!(mark(&scene, ids[2]), None);
}

#[test]
fn each_policy_drops_what_it_forbids_and_final_is_always_locked() {
    let engine = Origin {
        by: Author::Engine,
        engine: Some("pseudo-translate".into()),
        client: None,
        user: None,
        at: AT.into(),
        score: None,
        suggested_by: None,
    };
    let machine = with(
        Some("machine"),
        Some(TextState::Translated),
        Some(Box::new(engine)),
    );
    let human = text(Some("human"));
    let reviewed = with(Some("reviewed"), Some(TextState::Reviewed), None);
    let fin = with(Some("final"), Some(TextState::Final), None);
    let kinds = vec![text(None), machine, human, reviewed, fin];
    let (scene, page, ids) = scene_with(kinds);
    let kept = |overwrite| {
        let ops = ids.iter().map(|id| set(page, *id, "new", None)).collect();
        let writer = Writer::Engine {
            id: "e".into(),
            overwrite,
            user: None,
            client: None,
            session: None,
        };
        let batch = Op::Batch { ops, label: None };
        let stamped = stamp(&scene, batch, &writer, AT).unwrap();
        let dropped: Vec<NodeId> = stamped.dropped.iter().map(|d| d.node).collect();
        ids.iter()
            .map(|id| !dropped.contains(id))
            .collect::<Vec<bool>>()
    };
    assert_eq!(
        kept(Overwrite::Untranslated),
        [true, false, false, false, false]
    );
    assert_eq!(kept(Overwrite::Machine), [true, true, false, false, false]);
    assert_eq!(kept(Overwrite::All), [true, true, true, true, false]);
}

#[test]
fn a_person_unlocks_final_only_by_setting_a_state() {
    let fin = with(Some("final"), Some(TextState::Final), None);
    let (scene, page, ids) = scene_with(vec![fin]);
    let err = stamp(&scene, set(page, ids[0], "x", None), &Writer::PERSON, AT).unwrap_err();
    assert!(err.to_string().contains("is final"), "{err}");
    let op = set(page, ids[0], "x", Some(TextState::Translated));
    assert!(stamp(&scene, op, &Writer::PERSON, AT).unwrap().op.is_some());
}

fn suggest(page: PageId, id: NodeId, act: crate::suggestion::Suggest) -> Op {
    Op::UpdateNode {
        page,
        id,
        patch: NodePatch::suggest(act),
        based_on: None,
    }
}

fn open_suggestions(scene: &Scene, id: NodeId) -> Vec<crate::suggestion::Suggestion> {
    let NodeKind::Text { suggestions, .. } = node_kind(scene, id) else {
        panic!()
    };
    suggestions.clone()
}

/// A suggestion leaves the translation alone until an editor accepts it;
/// the accepted translation is signed by the acceptor and names who
/// proposed it (also an agent's accept); undo brings the suggestion back;
/// a list a client sends is dropped.
#[test]
fn suggestions_change_the_translation_only_when_accepted() {
    use crate::suggestion::Suggest;
    let (mut scene, page, ids) = scene_with(vec![text(Some("Bonjour"))]);
    let person = |name: &str, role: Option<&str>| Writer::Person {
        user: Some(name.into()),
        below_review: role.map(str::to_owned),
    };
    let add = Suggest::Add {
        id: "s1".into(),
        text: "Salut".into(),
    };
    run(
        &mut scene,
        suggest(page, ids[0], add),
        &person("sam", Some("suggest")),
    );
    let open = open_suggestions(&scene, ids[0]);
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].user.as_deref(), Some("sam"));
    let NodeKind::Text { translation, .. } = node_kind(&scene, ids[0]) else {
        panic!()
    };
    assert_eq!(translation.as_deref(), Some("Bonjour"));

    // A list sent by a client is dropped.
    let mut forged = NodePatch::text(Some(Some("Hé".into())), None);
    if let Some(KindPatch::Text { suggestions, .. }) = &mut forged.kind {
        *suggestions = Some(Box::default());
    }
    let op = Op::UpdateNode {
        page,
        id: ids[0],
        patch: forged,
        based_on: None,
    };
    let before = scene.clone();
    run(&mut scene, op, &person("ed", None));
    assert_eq!(open_suggestions(&scene, ids[0]).len(), 1);
    scene = before;

    // An agent accepts: its origin, naming the suggester.
    let agent = Writer::Agent {
        client: "claude-code 2.1".into(),
        user: Some("ed".into()),
        below_review: Some("edit".into()),
        session: None,
    };
    let accept = suggest(page, ids[0], Suggest::Accept { id: "s1".into() });
    let stamped = stamp(&scene, accept, &agent, AT).unwrap().op.unwrap();
    let applied = apply(&mut scene, stamped, &|_| true).unwrap();
    let NodeKind::Text {
        translation,
        state,
        origin: Some(origin),
        suggestions,
        ..
    } = node_kind(&scene, ids[0])
    else {
        panic!()
    };
    assert_eq!(translation.as_deref(), Some("Salut"));
    assert_eq!(*state, Some(TextState::Translated));
    assert_eq!(origin.by, Author::Agent);
    assert_eq!(origin.user.as_deref(), Some("ed"));
    assert_eq!(origin.suggested_by.as_deref(), Some("sam"));
    assert!(suggestions.is_empty());
    apply(&mut scene, applied.inverse, &|_| true).unwrap();
    assert_eq!(open_suggestions(&scene, ids[0]).len(), 1);

    // An act that reaches apply unresolved is refused.
    let raw = suggest(page, ids[0], Suggest::Reject { id: "s1".into() });
    assert!(apply(&mut scene.clone(), raw, &|_| true).is_err());
}

/// Accepting into a final segment needs the review role; an unknown
/// suggestion is named; an engine never suggests.
#[test]
fn accepting_into_a_final_segment_needs_review() {
    use crate::suggestion::Suggest;
    let final_ = with(Some("Fin"), Some(TextState::Final), None);
    let (mut scene, page, ids) = scene_with(vec![final_]);
    let add = Suggest::Add {
        id: "s1".into(),
        text: "Fini".into(),
    };
    run(&mut scene, suggest(page, ids[0], add), &Writer::PERSON);
    let editor = Writer::Person {
        user: Some("ed".into()),
        below_review: Some("edit".into()),
    };
    let accept = || suggest(page, ids[0], Suggest::Accept { id: "s1".into() });
    let err = stamp(&scene, accept(), &editor, AT).unwrap_err();
    assert!(matches!(err, CoreError::Forbidden(_)), "{err}");
    assert!(err.to_string().contains("ed has edit"), "{err}");
    let reviewer = Writer::Person {
        user: Some("rita".into()),
        below_review: None,
    };
    run(&mut scene, accept(), &reviewer);
    assert_eq!(
        node_kind(&scene, ids[0]).state(),
        Some(TextState::Translated)
    );
    let unknown = suggest(page, ids[0], Suggest::Reject { id: "nope".into() });
    let err = stamp(&scene, unknown, &reviewer, AT).unwrap_err();
    assert_eq!(err.to_string(), "unknown suggestion nope");
    let engine = Writer::Engine {
        id: "llm".into(),
        overwrite: Overwrite::All,
        user: None,
        client: None,
        session: None,
    };
    let add = Suggest::Add {
        id: "s2".into(),
        text: "x".into(),
    };
    assert!(stamp(&scene, suggest(page, ids[0], add), &engine, AT).is_err());
}
