//! Linear undo/redo. Each entry holds a resolved op and its inverse, so
//! undo and redo cost the same whatever the history's length.
//!
//! A job's step is one entry however many pages it edits: each page's
//! edits are applied (and logged) as they are made, tagged with the step's
//! [`Group`], and an entry of the same group on top of the stack absorbs
//! them. A person's edit between two pages ends the entry (the next page
//! starts another), so undo never skips over someone's work.
//!
//! The stacks are saved beside each snapshot (`history.json`) and the log
//! replays on top of them, so history survives a restart.

use std::collections::VecDeque;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::ids::PageId;
use super::op::{KindPatch, Op};
use super::scene::Scene;

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
}

/// The stacks as `history.json` holds them, oldest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Stacks {
    pub undo: Vec<Arc<Entry>>,
    pub redo: Vec<Arc<Entry>>,
}

impl History {
    pub fn new(limit: usize) -> Self {
        History {
            undo: VecDeque::new(),
            redo: Vec::new(),
            limit: limit.max(1),
        }
    }

    /// Saved stacks, cut to the limit.
    pub fn restore(limit: usize, stacks: Stacks) -> Self {
        let mut history = History::new(limit);
        for entry in stacks.undo {
            history.push_undo(entry);
        }
        let skip = stacks.redo.len().saturating_sub(history.limit);
        history.redo = stacks.redo.into_iter().skip(skip).collect();
        history
    }

    /// The stacks to save (cheap: entries are shared).
    pub fn stacks(&self) -> Stacks {
        Stacks {
            undo: self.undo.iter().cloned().collect(),
            redo: self.redo.clone(),
        }
    }

    /// A new change: clears redo, joins the top entry when both belong to
    /// one group, and forgets the oldest entry past the limit.
    pub fn push(&mut self, entry: Entry) {
        self.redo.clear();
        if let (Some(top), Some(group)) = (self.undo.back_mut(), &entry.group)
            && top.group.as_ref().is_some_and(|g| g.key == group.key)
        {
            Arc::make_mut(top).absorb(entry);
            return;
        }
        self.push_undo(Arc::new(entry));
    }

    fn push_undo(&mut self, entry: Arc<Entry>) {
        self.undo.push_back(entry);
        if self.undo.len() > self.limit {
            self.undo.pop_front();
        }
    }

    pub fn next_undo(&self) -> Option<&Entry> {
        self.undo.back().map(|e| &**e)
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
            self.push_undo(entry);
        }
    }

    /// Replay of an undo whose entry predates the log (it was covered by a
    /// snapshot): keep it redoable.
    pub fn undone_unknown(&mut self, entry: Entry) {
        self.redo.push(Arc::new(entry));
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
        }
    }

    #[test]
    fn a_group_is_one_entry_whose_inverse_runs_last_page_first() {
        let mut h = History::new(2);
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
    fn another_edit_between_pages_splits_the_group() {
        let mut h = History::new(10);
        h.push(page_entry("job", 1));
        h.push(Entry {
            group: None,
            ..page_entry("", 0)
        });
        h.push(page_entry("job", 2));
        h.push(page_entry("other", 1));
        assert_eq!(h.undo_len(), 4);
    }
}
