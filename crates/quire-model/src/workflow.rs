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
use crate::suggestion;

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
        /// The MCP session it came through, when there is one: its undo
        /// is that session's.
        session: Option<String>,
        /// As a person's: the role of the user it acts for, when below
        /// `review`.
        below_review: Option<String>,
    },
    /// A translation or other engine, run by a job.
    Engine {
        id: String,
        overwrite: Overwrite,
        user: Option<String>,
        /// The agent's client, when an agent started the job.
        client: Option<String>,
        /// And the MCP session it started it through.
        session: Option<String>,
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

    /// The agent's client, for an agent's edit or a job an agent started.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Writer::Agent { client, .. } => Some(client),
            Writer::Engine { client, .. } => client.as_deref(),
            Writer::Person { .. } => None,
        }
    }

    /// The agent's MCP session, for an agent's edit or a job an agent
    /// started through one.
    pub fn session(&self) -> Option<&str> {
        match self {
            Writer::Agent { session, .. } | Writer::Engine { session, .. } => session.as_deref(),
            Writer::Person { .. } => None,
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
    /// The node `id` of page `page` as the scene has it before the op.
    fn node(&self, page: PageId, id: NodeId) -> Option<&Node> {
        self.scene
            .page(page)
            .and_then(|p| p.node_index(id).map(|i| &p.nodes[i]))
    }

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
                let suggested_by = self.suggestion(page, id, &mut patch)?;
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
                    let current = self.node(page, id);
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
                    if let Some(Some(origin)) = origin {
                        origin.suggested_by = suggested_by;
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
        let Some(node) = self.node(page, id) else {
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

    /// Resolves a suggestion act against the node's open suggestions
    /// into its new list (and, for an accept, its translation, signed by
    /// the writer); drops any list a client sent. Returns who proposed
    /// an accepted suggestion.
    fn suggestion(
        &self,
        page: PageId,
        id: NodeId,
        patch: &mut NodePatch,
    ) -> CoreResult<Option<String>> {
        let Some(KindPatch::Text {
            suggestions,
            suggest,
            translation,
            state,
            origin,
            ..
        }) = &mut patch.kind
        else {
            return Ok(None);
        };
        *suggestions = None;
        let Some(act) = suggest.take() else {
            return Ok(None);
        };
        if let Writer::Engine { .. } = self.writer {
            return Err(CoreError::InvalidOp(
                "an engine does not suggest; it translates".into(),
            ));
        }
        let node = self
            .node(page, id)
            .ok_or_else(|| CoreError::not_found("node", id))?;
        let NodeKind::Text {
            suggestions: open, ..
        } = &node.kind
        else {
            return Err(CoreError::InvalidInput(format!(
                "node {id} is a {} node; only text nodes take suggestions",
                node.kind.type_name()
            )));
        };
        let who = suggestion::Actor {
            user: self.writer.user(),
            client: self.writer.agent(),
            at: self.at,
        };
        let resolved = suggestion::resolve(open, &act, &who)?;
        *suggestions = Some(Box::new(resolved.list));
        let Some(accepted) = resolved.accepted else {
            return Ok(None);
        };
        *translation = Some(Some(accepted.text.clone()));
        *state = Some(TextState::Translated);
        let by = accepted.author().map(str::to_owned);
        *origin = Some(Some(self.origin()));
        Ok(by)
    }

    /// Refuses an edit whose basis is not what the node says now. An
    /// unknown node is `apply`'s to refuse.
    fn check_basis(&self, page: PageId, id: NodeId, basis: &Basis) -> CoreResult<()> {
        let Some(node) = self.node(page, id) else {
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
        let marked = self.node(page, id).is_some_and(|n| {
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
        }) = self.node(page, id).map(|n| &n.kind)
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
                suggested_by: None,
            },
            Writer::Agent { client, .. } => Origin {
                by: Author::Agent,
                engine: None,
                client: Some(client.clone()),
                user,
                at: self.at.to_owned(),
                score: None,
                suggested_by: None,
            },
            Writer::Engine { id, client, .. } => Origin {
                by: Author::Engine,
                engine: Some(id.clone()),
                client: client.clone(),
                user,
                at: self.at.to_owned(),
                score: None,
                suggested_by: None,
            },
        })
    }
}

#[cfg(test)]
mod tests;
