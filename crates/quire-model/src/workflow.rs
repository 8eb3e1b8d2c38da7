//! Who writes a translation, and what they may overwrite.
//!
//! Every op a session accepts passes [`stamp`] under the session's lock,
//! against the scene it is about to change: a person's translation edits
//! get a human origin, an engine's get the engine's origin and are held to
//! the job's [`Overwrite`] policy (a forbidden edit is dropped and
//! reported, never applied), and a `final` translation is locked — against
//! engines always, against a person unless the same patch sets a state
//! (the API's "force"). A person's or an agent's change to the source
//! of a translated node is recorded on it (`source_edit`: who, when)
//! until the translation is written or reviewed again. The stamped op is
//! what `apply` resolves and the log records, so replay needs none of
//! this.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, CoreResult, Stale};
use crate::ids::{NodeId, PageId};
use crate::op::{Basis, KindPatch, NewNode, NodePatch, Op};
use crate::scene::{Author, Node, NodeKind, Origin, Scene, TextState};

/// Which existing translations a translation engine may replace.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum Overwrite {
    // Only nodes without a translation. (Plain comments: a doc comment per
    // variant would make the schema a long `anyOf`.)
    #[default]
    Untranslated,
    // Also an engine's translations that nobody has reviewed.
    Machine,
    // Everything but `final`.
    All,
}

impl Overwrite {
    pub fn as_str(self) -> &'static str {
        match self {
            Overwrite::Untranslated => "untranslated",
            Overwrite::Machine => "machine",
            Overwrite::All => "all",
        }
    }

    pub fn parse(s: &str) -> Option<Overwrite> {
        [Overwrite::Untranslated, Overwrite::Machine, Overwrite::All]
            .into_iter()
            .find(|o| o.as_str() == s)
    }

    /// Whether the policy lets an engine replace `node`'s translation.
    pub fn allows(self, node: &Node) -> bool {
        self.forbids(node).is_none()
    }

    /// Why this policy forbids replacing `node`'s translation, if it does.
    fn forbids(self, node: &Node) -> Option<&'static str> {
        let NodeKind::Text { translation, .. } = &node.kind else {
            return None;
        };
        let state = node.kind.state().unwrap_or(TextState::Initial);
        let has = translation.as_deref().is_some_and(|t| !t.is_empty());
        let machine = node.kind.is_machine_work();
        match self {
            _ if state == TextState::Final => Some("it is final"),
            Overwrite::Untranslated if has => Some("it is translated (overwrite: untranslated)"),
            Overwrite::Machine if has && !machine => Some(match state {
                TextState::Reviewed => "it is reviewed (overwrite: machine)",
                _ => "a person wrote it (overwrite: machine)",
            }),
            _ => None,
        }
    }
}

/// Who is submitting an op.
#[derive(Debug, Clone, PartialEq)]
pub enum Writer {
    /// A person, through the HTTP API, the web workbench or the TUI.
    Person {
        user: Option<String>,
        /// Their role, when it is below `review` (spec 10, "Review
        /// states"): marking a segment reviewed or final, or changing a
        /// final one, is refused naming it; a node they add is at most
        /// `translated`. `None`: they may.
        below_review: Option<String>,
    },
    /// An agent through MCP, named by its client (`name version`): held
    /// to the same locks as a person, but its translations are machine
    /// work until a person edits or reviews them.
    Agent {
        client: String,
        user: Option<String>,
        /// As a person's: the role of the user it acts for, when below
        /// `review`.
        below_review: Option<String>,
    },
    /// A translation or other engine, run by a job.
    Engine {
        id: String,
        overwrite: Overwrite,
        user: Option<String>,
    },
}

impl Writer {
    /// A person the server has no name for (one with no users configured).
    pub const PERSON: Writer = Writer::Person {
        user: None,
        below_review: None,
    };

    /// The server's user behind it (`[[server.users]]`): the person, the
    /// agent's person, or who started the job.
    pub fn user(&self) -> Option<&str> {
        match self {
            Writer::Person { user, .. }
            | Writer::Agent { user, .. }
            | Writer::Engine { user, .. } => user.as_deref(),
        }
    }

    /// The agent's client, for an agent's edit.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Writer::Agent { client, .. } => Some(client),
            _ => None,
        }
    }

    /// The role that keeps it from review, when one does.
    fn below_review(&self) -> Option<&str> {
        match self {
            Writer::Person { below_review, .. } | Writer::Agent { below_review, .. } => {
                below_review.as_deref()
            }
            Writer::Engine { .. } => None,
        }
    }
}

/// A translation edit an engine made that its policy forbade.
#[derive(Debug, Clone, PartialEq)]
pub struct Dropped {
    pub page: PageId,
    pub node: NodeId,
    pub why: String,
}

/// The op to apply (`None` when every edit in it was dropped) and the
/// dropped edits.
#[derive(Debug)]
pub struct Stamped {
    pub op: Option<Op>,
    pub dropped: Vec<Dropped>,
}

/// Stamps origins on `op`'s translation edits and enforces the locks; see
/// the module doc. `at` is the time recorded in origins.
pub fn stamp(scene: &Scene, op: Op, writer: &Writer, at: &str) -> CoreResult<Stamped> {
    let mut dropped = Vec::new();
    let op = Stamper {
        scene,
        writer,
        at,
        dropped: &mut dropped,
    }
    .op(op)?;
    Ok(Stamped { op, dropped })
}

struct Stamper<'a, 'b> {
    scene: &'a Scene,
    writer: &'a Writer,
    at: &'a str,
    dropped: &'b mut Vec<Dropped>,
}

impl Stamper<'_, '_> {
    fn op(&mut self, op: Op) -> CoreResult<Option<Op>> {
        Ok(match op {
            Op::Batch { ops, label } => {
                let given = ops.len();
                let mut kept = Vec::with_capacity(given);
                for op in ops {
                    kept.extend(self.op(op)?);
                }
                // Gone only when edits were dropped from it (an empty batch
                // given as such is `apply`'s to refuse).
                (kept.len() == given || !kept.is_empty()).then_some(Op::Batch { ops: kept, label })
            }
            Op::AddPage { mut page, at } => {
                for node in page.nodes.iter_mut().flatten() {
                    self.new_node(node);
                }
                Some(Op::AddPage { page, at })
            }
            Op::AddNode { page, mut node, at } => {
                self.new_node(&mut node);
                Some(Op::AddNode { page, node, at })
            }
            Op::UpdateNode {
                page,
                id,
                mut patch,
                based_on,
            } => {
                if let Some(basis) = &based_on {
                    self.check_basis(page, id, basis)?;
                }
                self.check_review(page, id, &patch)?;
                self.unmark(page, id, &mut patch);
                self.source_edit(page, id, &mut patch);
                if let Some(KindPatch::Text {
                    translation: Some(translation),
                    state,
                    origin,
                    ..
                }) = &mut patch.kind
                {
                    let current = self
                        .scene
                        .page(page)
                        .and_then(|p| p.node_index(id).map(|i| &p.nodes[i]));
                    if let Some(node) = current
                        && let Some(why) = self.refuse(node, state.is_some())?
                    {
                        self.dropped.push(Dropped {
                            page,
                            node: id,
                            why: why.to_owned(),
                        });
                        return Ok(None);
                    }
                    let written = translation.as_deref().is_some_and(|t| !t.is_empty());
                    if let Writer::Engine { .. } = self.writer {
                        // An engine's translation is never more than
                        // `translated`: review is a person's.
                        *state = Some(TextState::inferred(translation.as_deref()));
                    }
                    match self.writer {
                        // An engine's translation is always recorded as
                        // its own; only the score it gives is kept.
                        Writer::Engine { .. } => {
                            let score = origin.as_ref().and_then(|o| o.as_ref()?.score);
                            *origin = Some(written.then(|| {
                                let mut o = self.origin();
                                o.score = score;
                                o
                            }));
                        }
                        // Nor can an agent name another author.
                        Writer::Agent { .. } => *origin = Some(written.then(|| self.origin())),
                        Writer::Person { .. } if origin.is_none() => {
                            *origin = Some(written.then(|| self.origin()));
                        }
                        // A person may say whose a translation is (a file's
                        // note), but the server's user they are is theirs.
                        Writer::Person {
                            user: Some(user), ..
                        } => {
                            if let Some(Some(named)) = origin {
                                named.user = Some(user.clone());
                            }
                        }
                        Writer::Person { user: None, .. } => {}
                    }
                }
                // The basis held; the log keeps the edit without it.
                Some(Op::UpdateNode {
                    page,
                    id,
                    patch,
                    based_on: None,
                })
            }
            other => Some(other),
        })
    }

    /// Refuses, for a writer below the `review` role, a patch that marks
    /// a segment reviewed or final or changes a final one (spec 10,
    /// "Review states"), naming the role that would allow it.
    fn check_review(&self, page: PageId, id: NodeId, patch: &NodePatch) -> CoreResult<()> {
        let Some(role) = self.writer.below_review() else {
            return Ok(());
        };
        let Some(node) = self
            .scene
            .page(page)
            .and_then(|p| p.node_index(id).map(|i| &p.nodes[i]))
        else {
            return Ok(());
        };
        let current = node.kind.state();
        let sets = match &patch.kind {
            Some(KindPatch::Text { state, .. }) => *state,
            _ => None,
        };
        let touches = matches!(
            &patch.kind,
            Some(KindPatch::Text { text, translation, state, .. })
                if text.is_some() || translation.is_some() || state.is_some()
        );
        let what = if current == Some(TextState::Final) && touches {
            "changing a final segment"
        } else {
            match sets {
                Some(TextState::Reviewed) if current != sets => "marking a segment reviewed",
                Some(TextState::Final) if current != sets => "marking a segment final",
                _ => return Ok(()),
            }
        };
        let who = self.writer.user().unwrap_or("this caller");
        Err(CoreError::Forbidden(format!(
            "{what} needs the review role; {who} has {role}"
        )))
    }

    /// Refuses an edit whose basis is not what the node says now. An
    /// unknown node is `apply`'s to refuse.
    fn check_basis(&self, page: PageId, id: NodeId, basis: &Basis) -> CoreResult<()> {
        let Some(node) = self
            .scene
            .page(page)
            .and_then(|p| p.node_index(id).map(|i| &p.nodes[i]))
        else {
            return Ok(());
        };
        let (text, translation) = match &node.kind {
            NodeKind::Text {
                text, translation, ..
            } => (text, translation),
            _ => (&None, &None),
        };
        // An empty value and none are the same to a person.
        let value = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
        for (field, based_on, current) in [
            ("text", &basis.text, text),
            ("translation", &basis.translation, translation),
        ] {
            let Some(based_on) = based_on else { continue };
            if value(based_on) != value(current) {
                return Err(CoreError::Stale(Box::new(Stale {
                    page_id: page,
                    node_id: id,
                    field,
                    based_on: value(based_on),
                    current: value(current),
                })));
            }
        }
        Ok(())
    }

    /// `Ok(Some(why))` when an engine's edit of `node` is to be dropped;
    /// an error when a person edits a final translation without a state.
    fn refuse(&self, node: &Node, sets_state: bool) -> CoreResult<Option<&'static str>> {
        match self.writer {
            Writer::Engine { overwrite, .. } => Ok(overwrite.forbids(node)),
            Writer::Person { .. } | Writer::Agent { .. }
                if node.kind.state() == Some(TextState::Final) && !sets_state =>
            {
                Err(CoreError::InvalidOp(format!(
                    "node {} is final: its translation is locked; set `state` in the same \
                     patch (e.g. \"translated\") to change it anyway",
                    node.id
                )))
            }
            Writer::Person { .. } | Writer::Agent { .. } => Ok(None),
        }
    }

    /// A person's or agent's edit of a node an engine placed makes it
    /// theirs: the patch clears `found_by` (which only engines set).
    fn unmark(&self, page: PageId, id: NodeId, patch: &mut NodePatch) {
        if let Writer::Engine { .. } = self.writer {
            return;
        }
        if let Some(KindPatch::Text { found_by, .. }) = &mut patch.kind {
            *found_by = None;
        }
        let marked = self
            .scene
            .page(page)
            .and_then(|p| p.node_index(id).map(|i| &p.nodes[i]))
            .is_some_and(|n| {
                matches!(
                    &n.kind,
                    NodeKind::Text {
                        found_by: Some(_),
                        ..
                    }
                )
            });
        if !marked {
            return;
        }
        match &mut patch.kind {
            Some(KindPatch::Text { found_by, .. }) => *found_by = Some(None),
            Some(_) => {}
            kind @ None => {
                let mut text = KindPatch::text();
                if let KindPatch::Text { found_by, .. } = &mut text {
                    *found_by = Some(None);
                }
                *kind = Some(text);
            }
        }
    }

    /// Records who changed a translated node's source (`source_edit`, a
    /// person's or an agent's edit: an engine's reading is not a fix),
    /// and clears that mark when a translation or a state is written: the
    /// translation has then been looked at again. No client sets it.
    fn source_edit(&self, page: PageId, id: NodeId, patch: &mut NodePatch) {
        let Some(KindPatch::Text {
            text,
            translation,
            state,
            source_edit,
            ..
        }) = &mut patch.kind
        else {
            return;
        };
        *source_edit = None;
        let Some(NodeKind::Text {
            text: was,
            translation: translated,
            source_edit: marked,
            ..
        }) = self
            .scene
            .page(page)
            .and_then(|p| p.node_index(id).map(|i| &p.nodes[i].kind))
        else {
            return;
        };
        if translation.is_some() || state.is_some() {
            if marked.is_some() {
                *source_edit = Some(None);
            }
            return;
        }
        let value = |v: Option<&str>| v.filter(|v| !v.is_empty()).map(str::to_owned);
        let changed = text
            .as_ref()
            .is_some_and(|new| value(new.as_deref()) != value(was.as_deref()));
        let has_translation = translated.as_deref().is_some_and(|t| !t.is_empty());
        if changed && has_translation && !matches!(self.writer, Writer::Engine { .. }) {
            *source_edit = Some(Some(self.origin()));
        }
    }

    fn new_node(&self, node: &mut NewNode) {
        if let (Writer::Person { .. } | Writer::Agent { .. }, NodeKind::Text { found_by, .. }) =
            (self.writer, &mut node.kind)
        {
            *found_by = None;
        }
        if let NodeKind::Text {
            translation: Some(t),
            origin: origin @ None,
            state,
            ..
        } = &mut node.kind
            && !t.is_empty()
        {
            *origin = Some(self.origin());
            if let Writer::Engine { .. } = self.writer {
                *state = Some(TextState::Translated);
            }
        }
        // What someone below review brings in (a file's reviewed units)
        // is at most `translated`.
        if let NodeKind::Text { state, .. } = &mut node.kind
            && self.writer.below_review().is_some()
            && state.is_some_and(|s| s > TextState::Translated)
        {
            *state = Some(TextState::Translated);
        }
    }

    fn origin(&self) -> Box<Origin> {
        let user = self.writer.user().map(str::to_owned);
        Box::new(match self.writer {
            Writer::Person { .. } => Origin {
                by: Author::Human,
                engine: None,
                client: None,
                user,
                at: self.at.to_owned(),
                score: None,
            },
            Writer::Agent { client, .. } => Origin {
                by: Author::Agent,
                engine: None,
                client: Some(client.clone()),
                user,
                at: self.at.to_owned(),
                score: None,
            },
            Writer::Engine { id, .. } => Origin {
                by: Author::Engine,
                engine: Some(id.clone()),
                client: None,
                user,
                at: self.at.to_owned(),
                score: None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
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
}
