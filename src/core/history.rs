//! Linear undo/redo. Each entry holds a resolved op and its inverse, so
//! undo and redo cost the same whatever the history's length.

use std::collections::VecDeque;

use super::op::Op;

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub forward: Op,
    pub inverse: Op,
}

#[derive(Debug, Clone)]
pub struct History {
    undo: VecDeque<Entry>,
    redo: Vec<Entry>,
    limit: usize,
}

impl History {
    pub fn new(limit: usize) -> Self {
        History {
            undo: VecDeque::new(),
            redo: Vec::new(),
            limit: limit.max(1),
        }
    }

    /// A new change: clears redo and forgets the oldest entry past the limit.
    pub fn push(&mut self, entry: Entry) {
        self.redo.clear();
        self.push_undo(entry);
    }

    fn push_undo(&mut self, entry: Entry) {
        self.undo.push_back(entry);
        if self.undo.len() > self.limit {
            self.undo.pop_front();
        }
    }

    pub fn next_undo(&self) -> Option<&Entry> {
        self.undo.back()
    }

    pub fn next_redo(&self) -> Option<&Entry> {
        self.redo.last()
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
        self.redo.push(entry);
    }

    /// Replay of a redo whose entry predates the log.
    pub fn redone_unknown(&mut self, entry: Entry) {
        self.push_undo(entry);
    }

    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    pub fn redo_len(&self) -> usize {
        self.redo.len()
    }
}
