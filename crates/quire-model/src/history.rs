//! Undo and redo, per person. Each entry holds a resolved op and its
//! inverse, so undo and redo cost the same whatever the history's length.
//! An entry names who made it (the user, and the agent for one) and the
//! epoch of its frame. An undo takes back its caller's newest entry still
//! in effect ([`Actor::owns`]: a person's own and their agents', an
//! agent's only its own), not necessarily the newest of all; the session
//! checks first that nobody has changed since what it changed, and the
//! undo's frame names the entry by its epoch, so replay takes back the
//! same one. A new change clears only its own user's redo.
//!
//! A job's step is one entry however many pages it edits: each page's
//! edits are applied (and logged) as they are made, tagged with the step's
//! [`Group`], and an entry of the same group on top of the stack absorbs
//! them. A person's edit between two pages ends the entry (the next page
//! starts another), so undo never skips over someone's work.
//!
//! The stacks are saved beside each snapshot (`history.json`) and the log
//! replays on top of them, so history survives a restart.
//!
//! The stacks are bounded twice: by entries (`history.undo_limit`) and by
//! the memory their ops hold (`history.max_bytes`, as [`footprint`]
//! counts it): 300 renames of 2,000 pages each held 700 MiB before there
//! was a byte bound. The oldest undo entries go first; a redo stack over
//! the bound loses its oldest (deepest) entries. What was dropped is said
//! once, as a warning in the log, and `dropped()` counts it.

use std::collections::VecDeque;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::ids::PageId;
use crate::op::{KindPatch, Op};
use crate::scene::Scene;

/// The history entry a job step's edits belong to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Group {
    /// Unique to one step of one job.
    pub key: String,
    /// What the step is, e.g. the engine id.
    pub what: String,
    /// Pages the entry holds.
    pub pages: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    pub forward: Op,
    pub inverse: Op,
    /// What undo and redo say they did.
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<Group>,
    /// The user who made it (`[[server.users]]`), when the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The agent that made it for that user (its MCP client), if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The MCP session the agent made it through, when it had one: only
    /// that session's undo takes it back.
    #[serde(
        default,
        rename = "mcpSession",
        skip_serializing_if = "Option::is_none"
    )]
    pub session: Option<String>,
    /// The epoch of the frame that made it: what an undo or redo frame
    /// names it by (0 in stacks saved before entries had one).
    #[serde(default)]
    pub epoch: u64,
}

/// Whose undo or redo it is (spec 10, "Undo is per person"): a person
/// takes back their own steps and their agents', an agent only its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Actor<'a> {
    pub user: Option<&'a str>,
    /// The agent's client, for an agent's undo; `None` for a person's.
    pub agent: Option<&'a str>,
    /// The agent's MCP session, when it has one: it takes back only what
    /// it made through that session (two conversations of one client are
    /// two agents).
    pub session: Option<&'a str>,
}

impl Actor<'_> {
    /// Whether `entry` is this actor's to undo or redo.
    pub fn owns(&self, entry: &Entry) -> bool {
        entry.by.as_deref() == self.user
            && self
                .agent
                .is_none_or(|agent| entry.agent.as_deref() == Some(agent))
            && self
                .session
                .is_none_or(|session| entry.session.as_deref() == Some(session))
    }
}

impl Entry {
    /// Takes `next` (of the same group) into this entry: forward runs this
    /// then `next`; the inverse undoes `next` first.
    fn absorb(&mut self, next: Entry) {
        let (Some(group), Some(more)) = (&mut self.group, next.group) else {
            return;
        };
        let wrapped = group.pages > 1;
        group.pages += more.pages;
        self.label = format!("{} · {} pages", group.what, group.pages);
        let label = Some(self.label.clone());
        if wrapped
            && let (Op::Batch { ops: f, label: fl }, Op::Batch { ops: i, label: il }) =
                (&mut self.forward, &mut self.inverse)
        {
            f.push(next.forward);
            i.insert(0, next.inverse);
            fl.clone_from(&label);
            *il = label;
            return;
        }
        let forward = std::mem::replace(&mut self.forward, Op::ReorderPages { order: Vec::new() });
        let inverse = std::mem::replace(&mut self.inverse, Op::ReorderPages { order: Vec::new() });
        self.forward = Op::Batch {
            ops: vec![forward, next.forward],
            label: label.clone(),
        };
        self.inverse = Op::Batch {
            ops: vec![next.inverse, inverse],
            label,
        };
    }
}

#[derive(Debug, Clone)]
pub struct History {
    undo: VecDeque<Arc<Entry>>,
    redo: Vec<Arc<Entry>>,
    limit: usize,
    /// What the stacks may hold, in [`footprint`] bytes.
    max_bytes: u64,
    /// What they hold now.
    bytes: u64,
    /// Entries dropped for the byte bound since the session opened.
    dropped: u64,
}

/// The stacks as `history.json` holds them, oldest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Stacks {
    pub undo: Vec<Arc<Entry>>,
    pub redo: Vec<Arc<Entry>>,
}

impl History {
    pub fn new(limit: usize, max_bytes: u64) -> Self {
        History {
            undo: VecDeque::new(),
            redo: Vec::new(),
            limit: limit.max(1),
            max_bytes,
            bytes: 0,
            dropped: 0,
        }
    }

    /// Saved stacks, cut to the limits.
    pub fn restore(limit: usize, max_bytes: u64, stacks: Stacks) -> Self {
        let mut history = History::new(limit, max_bytes);
        let skip = stacks.redo.len().saturating_sub(history.limit);
        for entry in stacks.redo.into_iter().skip(skip) {
            history.bytes += weight(&entry);
            history.redo.push(entry);
        }
        for entry in stacks.undo {
            history.push_undo(entry);
        }
        history
    }

    /// What the stacks hold, in [`footprint`] bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Entries dropped to stay within `history.max_bytes`.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The stacks to save (cheap: entries are shared).
    pub fn stacks(&self) -> Stacks {
        Stacks {
            undo: self.undo.iter().cloned().collect(),
            redo: self.redo.clone(),
        }
    }

    /// A new change: clears its user's redo (a change made since is
    /// never overwritten by a redo of theirs; others keep theirs, checked
    /// when they redo), joins the top entry when both belong to one group,
    /// and forgets the oldest entry past the limit.
    pub fn push(&mut self, entry: Entry) {
        let mut kept = Vec::with_capacity(self.redo.len());
        for redo in self.redo.drain(..) {
            if redo.by == entry.by {
                self.bytes = self.bytes.saturating_sub(weight(&redo));
            } else {
                kept.push(redo);
            }
        }
        self.redo = kept;
        if let (Some(top), Some(group)) = (self.undo.back_mut(), &entry.group)
            && top.group.as_ref().is_some_and(|g| g.key == group.key)
        {
            let added = weight(&entry);
            Arc::make_mut(top).absorb(entry);
            self.bytes += added;
            self.trim();
            return;
        }
        self.push_undo(Arc::new(entry));
    }

    fn push_undo(&mut self, entry: Arc<Entry>) {
        self.bytes += weight(&entry);
        self.undo.push_back(entry);
        if self.undo.len() > self.limit
            && let Some(gone) = self.undo.pop_front()
        {
            self.bytes = self.bytes.saturating_sub(weight(&gone));
        }
        self.trim();
    }

    /// Drops the oldest entries (undo's, then redo's deepest) until the
    /// stacks are within `max_bytes`. The newest undo entry always stays:
    /// the change just made can be undone, however big.
    fn trim(&mut self) {
        let before = self.dropped;
        while self.bytes > self.max_bytes {
            let gone = if self.undo.len() > 1 {
                self.undo.pop_front()
            } else if !self.redo.is_empty() {
                Some(self.redo.remove(0))
            } else {
                None
            };
            let Some(gone) = gone else { break };
            self.bytes = self.bytes.saturating_sub(weight(&gone));
            self.dropped += 1;
        }
        // Said once a session (the first time), then only at debug level:
        // every change past the bound drops the oldest entry.
        if self.dropped > before {
            let left = self.undo.len() + self.redo.len();
            if before == 0 {
                tracing::warn!(
                    "undo history over history.max_bytes ({} bytes): the oldest entries are \
                     forgotten from now on; {left} left",
                    self.max_bytes
                );
            } else {
                tracing::debug!(
                    "undo history: forgot {} more; {left} left",
                    self.dropped - before
                );
            }
        }
    }

    pub fn next_undo(&self) -> Option<&Entry> {
        self.undo.back().map(|e| &**e)
    }

    /// `actor`'s newest entry still in effect.
    pub fn next_undo_for(&self, actor: Actor<'_>) -> Option<&Entry> {
        self.undo.iter().rev().find(|e| actor.owns(e)).map(|e| &**e)
    }

    /// `actor`'s newest undone entry.
    pub fn next_redo_for(&self, actor: Actor<'_>) -> Option<&Entry> {
        self.redo.iter().rev().find(|e| actor.owns(e)).map(|e| &**e)
    }

    /// The entries in effect made after the one of `epoch`, newest first
    /// (whose changes an undo of it must not overwrite).
    pub fn after(&self, epoch: u64) -> impl Iterator<Item = &Entry> {
        self.undo
            .iter()
            .rev()
            .take_while(move |e| e.epoch != epoch)
            .map(|e| &**e)
    }

    /// After `actor`'s entry of `epoch` was undone: it moves to redo.
    /// `false` when there is no such entry (it predates the stacks).
    pub fn undone_at(&mut self, epoch: u64, actor: Actor<'_>) -> bool {
        let Some(i) = self
            .undo
            .iter()
            .rposition(|e| e.epoch == epoch && actor.owns(e))
        else {
            return false;
        };
        if let Some(entry) = self.undo.remove(i) {
            self.redo.push(entry);
        }
        true
    }

    /// After `actor`'s undone entry of `epoch` was redone.
    pub fn redone_at(&mut self, epoch: u64, actor: Actor<'_>) -> bool {
        let Some(i) = self
            .redo
            .iter()
            .rposition(|e| e.epoch == epoch && actor.owns(e))
        else {
            return false;
        };
        let entry = self.redo.remove(i);
        self.bytes = self.bytes.saturating_sub(weight(&entry));
        self.push_undo(entry);
        true
    }

    pub fn next_redo(&self) -> Option<&Entry> {
        self.redo.last().map(|e| &**e)
    }

    /// After the latest entry was undone.
    pub fn undone(&mut self) {
        if let Some(entry) = self.undo.pop_back() {
            self.redo.push(entry);
        }
    }

    /// After the latest undone entry was redone.
    pub fn redone(&mut self) {
        if let Some(entry) = self.redo.pop() {
            self.bytes = self.bytes.saturating_sub(weight(&entry));
            self.push_undo(entry);
        }
    }

    /// Replay of an undo whose entry predates the log (it was covered by a
    /// snapshot): keep it redoable.
    pub fn undone_unknown(&mut self, entry: Entry) {
        self.bytes += weight(&entry);
        self.redo.push(Arc::new(entry));
        self.trim();
    }

    /// Replay of a redo whose entry predates the log.
    pub fn redone_unknown(&mut self, entry: Entry) {
        self.push_undo(Arc::new(entry));
    }

    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    pub fn redo_len(&self) -> usize {
        self.redo.len()
    }
}

/// What an entry holds: both its ops.
fn weight(entry: &Entry) -> u64 {
    footprint(&entry.forward) + footprint(&entry.inverse)
}

/// About how many bytes `op` holds in memory: every op's own size (most of
/// a big batch of small edits) and the text and lists it points to.
pub fn footprint(op: &Op) -> u64 {
    use crate::op::{NewNode, NodePatch};
    use crate::scene::NodeKind;
    use std::mem::size_of;
    fn text(s: &str) -> u64 {
        s.len() as u64
    }
    fn maybe(s: Option<&String>) -> u64 {
        s.map_or(0, |s| text(s))
    }
    fn cleared(s: &Option<Option<String>>) -> u64 {
        maybe(s.as_ref().and_then(Option::as_ref))
    }
    fn kind(k: &NodeKind) -> u64 {
        match k {
            NodeKind::Text {
                text: t,
                translation,
                source_lang,
                style,
                origin,
                source_edit,
                ..
            } => {
                let origin_size = |o: &crate::scene::Origin| {
                    size_of::<crate::scene::Origin>() as u64
                        + maybe(o.engine.as_ref())
                        + maybe(o.client.as_ref())
                        + text(&o.at)
                };
                maybe(t.as_ref())
                    + maybe(translation.as_ref())
                    + maybe(source_lang.as_ref())
                    + style.as_ref().map_or(0, |s| {
                        maybe(s.font_family.as_ref())
                            + maybe(s.color.as_ref())
                            + maybe(s.stroke.as_ref())
                    })
                    + origin.as_deref().map_or(0, origin_size)
                    + source_edit.as_deref().map_or(0, origin_size)
            }
            NodeKind::Image {
                name,
                rendered_from,
                ..
            } => maybe(name.as_ref()) + maybe(rendered_from.as_ref()),
            NodeKind::Mask { .. } => 0,
        }
    }
    fn node(n: &NewNode) -> u64 {
        size_of::<NewNode>() as u64 + kind(&n.kind)
    }
    fn patch(p: &NodePatch) -> u64 {
        match &p.kind {
            Some(KindPatch::Text {
                text: t,
                translation,
                source_lang,
                style,
                origin,
                ..
            }) => {
                cleared(t)
                    + cleared(translation)
                    + cleared(source_lang)
                    + style.as_ref().map_or(0, |s| {
                        cleared(&s.font_family) + cleared(&s.color) + cleared(&s.stroke)
                    })
                    + origin.as_ref().and_then(Option::as_ref).map_or(0, |o| {
                        size_of::<crate::scene::Origin>() as u64
                            + maybe(o.engine.as_ref())
                            + text(&o.at)
                    })
            }
            Some(KindPatch::Image { name, .. }) => cleared(name),
            _ => 0,
        }
    }
    let own = size_of::<Op>() as u64;
    own + match op {
        Op::Batch { ops, label } => maybe(label.as_ref()) + ops.iter().map(footprint).sum::<u64>(),
        Op::AddPage { page, .. } => {
            text(&page.name) + page.nodes.iter().flatten().map(node).sum::<u64>()
        }
        Op::AddNode { node: n, .. } => node(n),
        Op::UpdatePage { patch: p, .. } => maybe(p.name.as_ref()),
        Op::UpdateNode { patch: p, .. } => patch(p),
        Op::UpdateProject { patch: p } => {
            maybe(p.name.as_ref())
                + [
                    &p.source_language,
                    &p.target_language,
                    &p.series,
                    &p.number,
                    &p.translator,
                ]
                .into_iter()
                .map(cleared)
                .sum::<u64>()
        }
        Op::UpdateGlossary { set, remove } => {
            set.iter()
                .map(|t| {
                    size_of::<crate::glossary::Term>() as u64
                        + text(&t.source)
                        + text(&t.target)
                        + maybe(t.note.as_ref())
                })
                .sum::<u64>()
                + remove.iter().map(|r| 24 + text(r)).sum::<u64>()
        }
        Op::ReorderPages { order } => 16 * order.len() as u64,
        Op::ReorderNodes { order, .. } => 16 * order.len() as u64,
        Op::RemovePage { .. } | Op::RemoveNode { .. } => 0,
    }
}

/// What a change is called in history (and what undo says it undid),
/// from the op as applied and the scene after it, e.g. `edit translation ·
/// page 3`. Replay computes it the same way, so the log need not hold it.
pub fn describe(scene: &Scene, op: &Op) -> String {
    let page = |id: PageId| match scene.page_index(id) {
        Some(i) => format!(" · page {}", i + 1),
        None => String::new(),
    };
    match op {
        Op::Batch {
            label: Some(label), ..
        } => label.clone(),
        Op::Batch { ops, .. } if ops.len() == 1 => describe(scene, &ops[0]),
        Op::Batch { ops, .. } => format!("{} changes", ops.len()),
        Op::AddPage { page, .. } => format!("add page {}", page.name),
        Op::RemovePage { .. } => "remove page".into(),
        Op::UpdatePage { id, .. } => format!("edit page{}", page(*id)),
        Op::ReorderPages { .. } => "reorder pages".into(),
        Op::AddNode { page: p, .. } => format!("add node{}", page(*p)),
        Op::RemoveNode { page: p, .. } => format!("remove node{}", page(*p)),
        Op::ReorderNodes { page: p, .. } => format!("reorder nodes{}", page(*p)),
        Op::UpdateProject { .. } => "edit project".into(),
        Op::UpdateGlossary { set, remove } => match (set.as_slice(), remove.as_slice()) {
            ([term], []) => format!("glossary: set {}", term.source),
            ([], [source]) => format!("glossary: remove {source}"),
            _ => "edit glossary".into(),
        },
        Op::UpdateNode { page: p, patch, .. } => {
            let what = match &patch.kind {
                Some(KindPatch::Text {
                    translation: Some(_),
                    ..
                }) => "edit translation".to_owned(),
                Some(KindPatch::Text { text: Some(_), .. }) => "edit text".to_owned(),
                Some(KindPatch::Text {
                    state: Some(state), ..
                }) => format!("mark {}", state.as_str()),
                _ if patch.transform.is_some() => "move node".to_owned(),
                _ => "edit node".to_owned(),
            };
            format!("{what}{}", page(*p))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_entry(key: &str, n: usize) -> Entry {
        let id = PageId::new();
        Entry {
            forward: Op::RemovePage { id },
            inverse: Op::ReorderPages { order: vec![id] },
            label: format!("e · page {n}"),
            group: Some(Group {
                key: key.into(),
                what: "e".into(),
                pages: 1,
            }),
            by: None,
            agent: None,
            session: None,
            epoch: 0,
        }
    }

    #[test]
    fn a_group_is_one_entry_whose_inverse_runs_last_page_first() {
        let mut h = History::new(2, u64::MAX);
        let entries: Vec<Entry> = (1..=600).map(|n| page_entry("job", n)).collect();
        for e in entries.clone() {
            h.push(e);
        }
        assert_eq!(h.undo_len(), 1);
        let top = h.next_undo().unwrap();
        assert_eq!(top.label, "e · 600 pages");
        let (Op::Batch { ops: f, .. }, Op::Batch { ops: i, .. }) = (&top.forward, &top.inverse)
        else {
            panic!("{top:?}")
        };
        assert_eq!(f.len(), 600);
        assert_eq!(f[0], entries[0].forward);
        assert_eq!(i[0], entries[599].inverse);
        assert_eq!(i[599], entries[0].inverse);
    }

    #[test]
    fn the_oldest_entries_go_when_the_stacks_outgrow_their_bytes() {
        let big = |n: usize| Entry {
            forward: Op::UpdateProject {
                patch: crate::op::ProjectPatch {
                    name: Some("x".repeat(1000)),
                    ..Default::default()
                },
            },
            inverse: Op::RemovePage { id: PageId::new() },
            label: format!("rename {n}"),
            group: None,
            by: None,
            agent: None,
            session: None,
            epoch: 0,
        };
        let one = weight(&big(0));
        let mut h = History::new(500, one * 3);
        for n in 0..10 {
            h.push(big(n));
        }
        assert_eq!(h.undo_len(), 3);
        assert_eq!(h.next_undo().unwrap().label, "rename 9");
        assert_eq!(h.dropped(), 7);
        assert!(h.bytes() <= one * 3);
        // The change just made stays undoable however big it is.
        let mut tiny = History::new(500, 1);
        tiny.push(big(0));
        assert_eq!(tiny.undo_len(), 1);
        // Undo moves bytes to redo; a new change frees them.
        h.undone();
        assert_eq!(h.bytes(), one * 3);
        h.push(big(10));
        assert_eq!((h.undo_len(), h.redo_len()), (3, 0));
        assert_eq!(h.bytes(), one * 3);
    }

    #[test]
    fn another_edit_between_pages_splits_the_group() {
        let mut h = History::new(10, u64::MAX);
        h.push(page_entry("job", 1));
        h.push(Entry {
            group: None,
            by: None,
            agent: None,
            session: None,
            epoch: 0,
            ..page_entry("", 0)
        });
        h.push(page_entry("job", 2));
        h.push(page_entry("other", 1));
        assert_eq!(h.undo_len(), 4);
    }
}
