//! Where ids sit in a scene, for applying big batches in linear time.
//!
//! Looking a page or node up by id is a scan of the page list or the
//! node list. One op pays that once, which is as cheap as an index would
//! be; a `Batch` of 100,000 `AddNode` would pay it 100,000 times
//! (quadratic: 0.1.0 took 59 s for 200,000). So a batch carries an
//! [`Index`]: maps from id to position, built on first use, kept up to date
//! by inserts and removals at the end of a list (appending, and undoing an
//! append, are O(1)), and dropped by anything that moves other entries (an
//! insert or removal in the middle, a reorder) to be rebuilt when next
//! needed. Such moves cost O(n) in the list itself anyway.

use std::collections::HashMap;

use crate::ids::{NodeId, PageId};
use crate::op::Op;
use crate::scene::{Page, Scene};

/// Batches smaller than this scan; the maps would cost more than they save.
const INDEX_FROM_OPS: usize = 16;

#[derive(Debug, Default)]
pub(super) struct Index {
    enabled: bool,
    pages: Option<HashMap<PageId, usize>>,
    nodes: HashMap<PageId, HashMap<NodeId, usize>>,
}

impl Index {
    /// An index for applying `op`: active only for big batches.
    pub(super) fn for_op(op: &Op) -> Index {
        Index {
            enabled: matches!(op, Op::Batch { ops, .. } if ops.len() >= INDEX_FROM_OPS),
            ..Index::default()
        }
    }

    pub(super) fn page(&mut self, scene: &Scene, id: PageId) -> Option<usize> {
        if !self.enabled {
            return scene.page_index(id);
        }
        self.pages
            .get_or_insert_with(|| {
                scene
                    .pages
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (p.id, i))
                    .collect()
            })
            .get(&id)
            .copied()
    }

    pub(super) fn node(&mut self, page: &Page, id: NodeId) -> Option<usize> {
        if !self.enabled {
            return page.node_index(id);
        }
        self.nodes
            .entry(page.id)
            .or_insert_with(|| {
                page.nodes
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (n.id, i))
                    .collect()
            })
            .get(&id)
            .copied()
    }

    /// After `scene.pages.insert(at, …)`.
    pub(super) fn page_inserted(&mut self, scene: &Scene, at: usize) {
        if let Some(map) = &mut self.pages {
            if at + 1 == scene.pages.len() {
                map.insert(scene.pages[at].id, at);
            } else {
                self.pages = None;
            }
        }
    }

    /// After `scene.pages.remove(at)` removed page `id`.
    pub(super) fn page_removed(&mut self, scene: &Scene, id: PageId, at: usize) {
        self.nodes.remove(&id);
        if let Some(map) = &mut self.pages {
            if at == scene.pages.len() {
                map.remove(&id);
            } else {
                self.pages = None;
            }
        }
    }

    pub(super) fn pages_reordered(&mut self) {
        self.pages = None;
    }

    /// After `page.nodes.insert(at, …)`.
    pub(super) fn node_inserted(&mut self, page: &Page, at: usize) {
        if let Some(map) = self.nodes.get_mut(&page.id) {
            if at + 1 == page.nodes.len() {
                map.insert(page.nodes[at].id, at);
            } else {
                self.nodes.remove(&page.id);
            }
        }
    }

    /// After `page.nodes.remove(at)` removed node `id`.
    pub(super) fn node_removed(&mut self, page: &Page, id: NodeId, at: usize) {
        if let Some(map) = self.nodes.get_mut(&page.id) {
            if at == page.nodes.len() {
                map.remove(&id);
            } else {
                self.nodes.remove(&page.id);
            }
        }
    }

    pub(super) fn nodes_reordered(&mut self, page: PageId) {
        self.nodes.remove(&page);
    }
}
