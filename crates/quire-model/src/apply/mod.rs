//! Applying ops to a scene, with the inverse computed by the core.
//!
//! Pure: no I/O, no clock. [`apply`] checks an op completely before it
//! changes anything, so a failing op leaves the scene untouched; a `Batch`
//! rolls back the members it already applied. The returned [`Applied`]
//! holds the op *resolved* (ids and positions filled in, so replaying it
//! gives the same scene) and its inverse (what undo applies).

mod index;
mod project;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use uuid::Uuid;

use crate::error::CoreError;
use crate::hash::BlobHash;
use crate::ids::{NodeId, PageId};
use crate::op::{
    KindPatch, NewNode, NewPage, NodePatch, Op, PagePatch, StylePatch, TransformPatch,
};
use crate::scene::{Node, NodeKind, Page, Scene, Style, TextState, Timing, Transform};
use index::Index;
use project::{update_glossary, update_project};

/// The result of applying one op.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The op as applied, every id and position explicit.
    pub op: Op,
    /// The op that undoes it.
    pub inverse: Op,
    /// Ids of the pages and nodes the op added, in op order.
    pub created: Vec<Uuid>,
}

/// Whether a blob exists in the project's store.
pub type BlobCheck<'a> = &'a dyn Fn(&BlobHash) -> bool;

/// Applies `op` to `scene`, or changes nothing and says precisely why not.
pub fn apply(scene: &mut Scene, op: Op, blobs: BlobCheck<'_>) -> Result<Applied, CoreError> {
    let mut index = Index::for_op(&op);
    apply_at(scene, op, blobs, &Member::Top, &mut index).map_err(CoreError::InvalidOp)
}

/// Where an op sits in the op being applied (`ops[2] ops[0] `), written out
/// only when an error names it: a batch of 100,000 ops must not build
/// 100,000 strings.
#[derive(Clone, Copy)]
enum Member<'a> {
    Top,
    Of(&'a Member<'a>, usize),
}

impl std::fmt::Display for Member<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Member::Top => Ok(()),
            Member::Of(parent, i) => write!(f, "{parent}ops[{i}] "),
        }
    }
}

fn apply_at(
    scene: &mut Scene,
    op: Op,
    blobs: BlobCheck<'_>,
    path: &Member<'_>,
    index: &mut Index,
) -> Result<Applied, String> {
    let name = op.type_name();
    let fail = |msg: String| format!("{path}{name}: {msg}");
    match op {
        Op::Batch { ops, label } => apply_batch(scene, ops, label, blobs, path, index),
        Op::AddPage { page, at } => add_page(scene, page, at, blobs, index).map_err(fail),
        Op::RemovePage { id } => {
            let at = find_page(scene, id, index).map_err(fail)?;
            let page = scene.pages.remove(at);
            index.page_removed(scene, id, at);
            // The removed page moves into the inverse unless a reader
            // still shares it.
            let page = Arc::try_unwrap(page).unwrap_or_else(|shared| (*shared).clone());
            Ok(Applied {
                op: Op::RemovePage { id },
                inverse: Op::AddPage {
                    page: page_into_new(page),
                    at: Some(at),
                },
                created: Vec::new(),
            })
        }
        Op::UpdatePage { id, patch } => {
            let at = find_page(scene, id, index).map_err(fail)?;
            if patch == PagePatch::default() {
                return Err(fail("the patch changes nothing".into()));
            }
            for size in [patch.width, patch.height].into_iter().flatten().flatten() {
                if size == 0 {
                    return Err(fail("width and height must be at least 1".into()));
                }
            }
            let page = Arc::make_mut(&mut scene.pages[at]);
            let mut old = PagePatch::default();
            if let Some(name) = &patch.name {
                old.name = Some(std::mem::replace(&mut page.name, name.clone()));
            }
            if let Some(width) = patch.width {
                old.width = Some(std::mem::replace(&mut page.width, width));
            }
            if let Some(height) = patch.height {
                old.height = Some(std::mem::replace(&mut page.height, height));
            }
            Ok(Applied {
                op: Op::UpdatePage { id, patch },
                inverse: Op::UpdatePage { id, patch: old },
                created: Vec::new(),
            })
        }
        Op::ReorderPages { order } => {
            let current: Vec<PageId> = scene.pages.iter().map(|p| p.id).collect();
            check_permutation(&current, &order, "page").map_err(fail)?;
            let mut pages: HashMap<PageId, Arc<Page>> = std::mem::take(&mut scene.pages)
                .into_iter()
                .map(|p| (p.id, p))
                .collect();
            scene.pages = order.iter().filter_map(|id| pages.remove(id)).collect();
            index.pages_reordered();
            Ok(Applied {
                op: Op::ReorderPages { order },
                inverse: Op::ReorderPages { order: current },
                created: Vec::new(),
            })
        }
        Op::AddNode { page, node, at } => {
            add_node(scene, (page, node, at), blobs, index).map_err(fail)
        }
        Op::RemoveNode { page, id } => {
            let p = find_page(scene, page, index).map_err(fail)?;
            let at = find_node(&scene.pages[p], id, index).map_err(fail)?;
            let node = Arc::make_mut(&mut scene.pages[p]).nodes.remove(at);
            index.node_removed(&scene.pages[p], id, at);
            Ok(Applied {
                op: Op::RemoveNode { page, id },
                inverse: Op::AddNode {
                    page,
                    node: node_into_new(node),
                    at: Some(at),
                },
                created: Vec::new(),
            })
        }
        Op::UpdateNode {
            page, id, patch, ..
        } => {
            let p = find_page(scene, page, index).map_err(fail)?;
            let at = find_node(&scene.pages[p], id, index).map_err(fail)?;
            check_node_patch(&scene.pages[p].nodes[at], &patch, blobs).map_err(fail)?;
            let mut patch = patch;
            implied_state(&mut patch);
            let node = &mut Arc::make_mut(&mut scene.pages[p]).nodes[at];
            let old = patch_node(node, &patch);
            Ok(Applied {
                op: Op::UpdateNode {
                    page,
                    id,
                    patch,
                    based_on: None,
                },
                inverse: Op::UpdateNode {
                    page,
                    id,
                    patch: old,
                    based_on: None,
                },
                created: Vec::new(),
            })
        }
        Op::ReorderNodes { page, order } => {
            let p = find_page(scene, page, index).map_err(fail)?;
            let current: Vec<NodeId> = scene.pages[p].nodes.iter().map(|n| n.id).collect();
            check_permutation(&current, &order, "node").map_err(fail)?;
            let target = Arc::make_mut(&mut scene.pages[p]);
            let mut nodes: HashMap<NodeId, Node> = std::mem::take(&mut target.nodes)
                .into_iter()
                .map(|n| (n.id, n))
                .collect();
            target.nodes = order.iter().filter_map(|id| nodes.remove(id)).collect();
            index.nodes_reordered(page);
            Ok(Applied {
                op: Op::ReorderNodes { page, order },
                inverse: Op::ReorderNodes {
                    page,
                    order: current,
                },
                created: Vec::new(),
            })
        }
        Op::UpdateGlossary { set, remove } => {
            update_glossary(&mut scene.project.glossary, set, remove).map_err(fail)
        }
        Op::UpdateProject { patch } => update_project(&mut scene.project, patch).map_err(fail),
    }
}

/// `AddPage`: the page built (its nodes' blobs checked) and put at `at`
/// (the end by default).
fn add_page(
    scene: &mut Scene,
    page: NewPage,
    at: Option<usize>,
    blobs: BlobCheck<'_>,
    index: &mut Index,
) -> Result<Applied, String> {
    let at = at.unwrap_or(scene.pages.len());
    if at > scene.pages.len() {
        return Err(out_of_range(at, scene.pages.len()));
    }
    let page = build_page(page, blobs)?;
    if index.page(scene, page.id).is_some() {
        return Err(format!("a page with id {} already exists", page.id));
    }
    let mut created = vec![page.id.0];
    created.extend(page.nodes.iter().map(|n| n.id.0));
    let id = page.id;
    let resolved = Op::AddPage {
        page: page_into_new(page.clone()),
        at: Some(at),
    };
    scene.pages.insert(at, Arc::new(page));
    index.page_inserted(scene, at);
    Ok(Applied {
        op: resolved,
        inverse: Op::RemovePage { id },
        created,
    })
}

/// `AddNode`: the node built (its blobs checked) and put at `at` (the
/// end by default) of page `page`.
fn add_node(
    scene: &mut Scene,
    (page, node, at): (PageId, NewNode, Option<usize>),
    blobs: BlobCheck<'_>,
    index: &mut Index,
) -> Result<Applied, String> {
    let p = find_page(scene, page, index)?;
    let len = scene.pages[p].nodes.len();
    let at = at.unwrap_or(len);
    if at > len {
        return Err(out_of_range(at, len));
    }
    let node = build_node(node, blobs)?;
    if index.node(&scene.pages[p], node.id).is_some() {
        return Err(format!(
            "page {page} already has a node with id {}",
            node.id
        ));
    }
    let id = node.id;
    let resolved = Op::AddNode {
        page,
        node: node_into_new(node.clone()),
        at: Some(at),
    };
    Arc::make_mut(&mut scene.pages[p]).nodes.insert(at, node);
    index.node_inserted(&scene.pages[p], at);
    Ok(Applied {
        op: resolved,
        inverse: Op::RemoveNode { page, id },
        created: vec![id.0],
    })
}

fn apply_batch(
    scene: &mut Scene,
    ops: Vec<Op>,
    label: Option<String>,
    blobs: BlobCheck<'_>,
    path: &Member<'_>,
    index: &mut Index,
) -> Result<Applied, String> {
    if ops.is_empty() {
        return Err(format!("{path}Batch: has no ops"));
    }
    let mut done: Vec<Applied> = Vec::with_capacity(ops.len());
    for (i, op) in ops.into_iter().enumerate() {
        match apply_at(scene, op, blobs, &Member::Of(path, i), index) {
            Ok(applied) => done.push(applied),
            Err(e) => {
                rollback(scene, done, blobs, index);
                return Err(e);
            }
        }
    }
    let created = done
        .iter()
        .flat_map(|a| a.created.iter().copied())
        .collect();
    let mut forward = Vec::with_capacity(done.len());
    let mut inverse = Vec::with_capacity(done.len());
    for applied in done {
        forward.push(applied.op);
        inverse.push(applied.inverse);
    }
    inverse.reverse();
    Ok(Applied {
        op: Op::Batch {
            ops: forward,
            label: label.clone(),
        },
        inverse: Op::Batch {
            ops: inverse,
            label,
        },
        created,
    })
}

/// Undoes already-applied members of a failed batch, last first. Inverses
/// of applied ops always apply (they restore what was just there).
fn rollback(scene: &mut Scene, done: Vec<Applied>, blobs: BlobCheck<'_>, index: &mut Index) {
    for applied in done.into_iter().rev() {
        let result = apply_at(scene, applied.inverse, blobs, &Member::Top, index);
        debug_assert!(result.is_ok(), "rollback failed: {result:?}");
    }
}

fn out_of_range(at: usize, len: usize) -> String {
    format!("index `at` {at} is out of range (0..={len})")
}

fn find_page(scene: &Scene, id: PageId, index: &mut Index) -> Result<usize, String> {
    index
        .page(scene, id)
        .ok_or_else(|| format!("unknown page id {id}"))
}

fn find_node(page: &Page, id: NodeId, index: &mut Index) -> Result<usize, String> {
    index
        .node(page, id)
        .ok_or_else(|| format!("page {} has no node with id {id}", page.id))
}

fn check_permutation<T: Copy + Eq + std::hash::Hash + std::fmt::Display>(
    current: &[T],
    order: &[T],
    what: &str,
) -> Result<(), String> {
    let known: HashSet<T> = current.iter().copied().collect();
    let mut seen = HashSet::with_capacity(order.len());
    for id in order {
        if !known.contains(id) {
            return Err(format!("order names unknown {what} id {id}"));
        }
        if !seen.insert(*id) {
            return Err(format!("order names {what} {id} twice"));
        }
    }
    if order.len() != current.len() {
        let missing = current.iter().find(|id| !seen.contains(*id));
        return Err(match missing {
            Some(id) => format!(
                "order is not a permutation of the {} {what}s: {what} {id} is missing",
                current.len()
            ),
            None => format!(
                "order is not a permutation of the {} {what}s",
                current.len()
            ),
        });
    }
    Ok(())
}

fn build_page(new: NewPage, blobs: BlobCheck<'_>) -> Result<Page, String> {
    for size in [new.width, new.height].into_iter().flatten() {
        if size == 0 {
            return Err("page width and height must be at least 1".into());
        }
    }
    let mut nodes = Vec::new();
    let mut ids = HashSet::new();
    for (i, node) in new.nodes.unwrap_or_default().into_iter().enumerate() {
        let node = build_node(node, blobs).map_err(|e| format!("nodes[{i}]: {e}"))?;
        if !ids.insert(node.id) {
            return Err(format!("nodes[{i}]: node id {} appears twice", node.id));
        }
        nodes.push(node);
    }
    if let Some(document) = &new.document
        && !blobs(&document.blob)
    {
        return Err(format!(
            "the blob {} of document {} is not stored",
            document.blob, document.name
        ));
    }
    Ok(Page {
        id: new.id.unwrap_or_default(),
        name: new.name,
        width: new.width,
        height: new.height,
        nodes,
        document: new.document,
    })
}

fn build_node(new: NewNode, blobs: BlobCheck<'_>) -> Result<Node, String> {
    check_transform(&new.transform)?;
    check_kind(&new.kind, blobs)?;
    let mut kind = new.kind;
    let inferred = kind.state();
    if let NodeKind::Text { style, state, .. } = &mut kind {
        if style.as_ref() == Some(&Style::default()) {
            *style = None;
        }
        *state = inferred;
    }
    Ok(Node {
        id: new.id.unwrap_or_default(),
        transform: new.transform,
        visible: new.visible,
        kind,
    })
}

fn page_into_new(page: Page) -> NewPage {
    NewPage {
        id: Some(page.id),
        name: page.name,
        width: page.width,
        height: page.height,
        nodes: Some(page.nodes.into_iter().map(node_into_new).collect()),
        document: page.document,
    }
}

fn node_into_new(node: Node) -> NewNode {
    NewNode {
        id: Some(node.id),
        transform: node.transform,
        visible: node.visible,
        kind: node.kind,
    }
}

fn check_transform(t: &Transform) -> Result<(), String> {
    let values = [
        Some(t.x),
        Some(t.y),
        Some(t.width),
        Some(t.height),
        t.rotation,
    ];
    if values.iter().flatten().any(|v| !v.is_finite()) {
        return Err("transform values must be finite numbers".into());
    }
    if t.width < 0.0 || t.height < 0.0 {
        return Err("transform width and height must not be negative".into());
    }
    Ok(())
}

fn check_opacity(opacity: f64) -> Result<(), String> {
    if !(0.0..=1.0).contains(&opacity) {
        return Err(format!("opacity {opacity} is outside 0..=1"));
    }
    Ok(())
}

fn check_blob(hash: &BlobHash, blobs: BlobCheck<'_>) -> Result<(), String> {
    if !blobs(hash) {
        return Err(format!("blob {hash} is not in the project's blob store"));
    }
    Ok(())
}

fn check_kind(kind: &NodeKind, blobs: BlobCheck<'_>) -> Result<(), String> {
    match kind {
        NodeKind::Text { style, timing, .. } => {
            if let Some(size) = style.as_ref().and_then(|s| s.font_size) {
                check_font_size(size)?;
            }
            if let Some(weight) = style.as_ref().and_then(|s| s.font_weight) {
                check_font_weight(weight)?;
            }
            timing.as_deref().map_or(Ok(()), check_timing)
        }
        NodeKind::Image { blob, opacity, .. } => {
            check_opacity(*opacity)?;
            check_blob(blob, blobs)
        }
        NodeKind::Mask { blob, .. } => check_blob(blob, blobs),
    }
}

fn check_timing(t: &Timing) -> Result<(), String> {
    if t.end < t.start {
        return Err(format!(
            "timing ends ({} ms) before it starts ({} ms)",
            t.end, t.start
        ));
    }
    // A cue's line and the blocks around it: what a file can sensibly
    // hold, far above what subtitle files have.
    for (what, value, most) in [
        ("id", &t.id, 1024),
        ("settings", &t.settings, 1024),
        ("before", &t.before, 1 << 20),
        ("after", &t.after, 1 << 20),
    ] {
        if value.as_ref().is_some_and(|v| v.len() > most) {
            return Err(format!("timing `{what}` is longer than {most} bytes"));
        }
    }
    Ok(())
}

fn check_font_size(size: f64) -> Result<(), String> {
    if !size.is_finite() || size <= 0.0 {
        return Err(format!("font size {size} must be a positive number"));
    }
    Ok(())
}

/// The values a style patch sets, checked.
fn check_style_patch(style: &StylePatch) -> Result<(), String> {
    if let Some(Some(size)) = style.font_size {
        check_font_size(size)?;
    }
    if let Some(Some(weight)) = style.font_weight {
        check_font_weight(weight)?;
    }
    Ok(())
}

fn check_font_weight(weight: u16) -> Result<(), String> {
    if !(100..=900).contains(&weight) {
        return Err(format!(
            "font weight {weight} must be from 100 (thin) to 900 (black); 400 is regular, 700 bold"
        ));
    }
    Ok(())
}

fn check_node_patch(node: &Node, patch: &NodePatch, blobs: BlobCheck<'_>) -> Result<(), String> {
    if *patch == NodePatch::default() {
        return Err("the patch changes nothing".into());
    }
    if let Some(t) = &patch.transform {
        let mut next = node.transform;
        apply_transform_patch(&mut next, t);
        check_transform(&next)?;
    }
    let Some(kind) = &patch.kind else {
        return Ok(());
    };
    if kind.type_name() != node.kind.type_name() {
        return Err(format!(
            "the patch is for a {} node but node {} is a {} node",
            kind.type_name(),
            node.id,
            node.kind.type_name()
        ));
    }
    match kind {
        KindPatch::Text {
            style,
            timing,
            suggest,
            ..
        } => {
            if suggest.is_some() {
                return Err(
                    "a suggestion is added, voted on, accepted or rejected through \
                            the suggestions API, not in an op"
                        .into(),
                );
            }
            if let Some(style) = style {
                check_style_patch(style)?;
            }
            if let Some(Some(t)) = timing {
                check_timing(t)?;
            }
        }
        KindPatch::Image { blob, opacity, .. } => {
            if let Some(o) = opacity {
                check_opacity(*o)?;
            }
            if let Some(b) = blob {
                check_blob(b, blobs)?;
            }
        }
        KindPatch::Mask { blob, .. } => {
            if let Some(b) = blob {
                check_blob(b, blobs)?;
            }
        }
    }
    Ok(())
}

fn apply_transform_patch(t: &mut Transform, p: &TransformPatch) -> TransformPatch {
    let mut old = TransformPatch::default();
    if let Some(x) = p.x {
        old.x = Some(std::mem::replace(&mut t.x, x));
    }
    if let Some(y) = p.y {
        old.y = Some(std::mem::replace(&mut t.y, y));
    }
    if let Some(w) = p.width {
        old.width = Some(std::mem::replace(&mut t.width, w));
    }
    if let Some(h) = p.height {
        old.height = Some(std::mem::replace(&mut t.height, h));
    }
    if let Some(r) = p.rotation {
        old.rotation = Some(std::mem::replace(&mut t.rotation, r));
    }
    old
}

/// Replaces `*slot` with `new` when the patch sets it; returns the old value
/// in patch form.
fn swap<T: Clone>(slot: &mut T, new: &Option<T>) -> Option<T> {
    new.as_ref().map(|v| std::mem::replace(slot, v.clone()))
}

/// Applies a checked patch and returns the patch that restores the node.
fn patch_node(node: &mut Node, patch: &NodePatch) -> NodePatch {
    let mut old = NodePatch {
        transform: patch
            .transform
            .as_ref()
            .map(|t| apply_transform_patch(&mut node.transform, t)),
        visible: swap(&mut node.visible, &patch.visible),
        kind: None,
    };
    old.kind = match (&mut node.kind, &patch.kind) {
        (
            NodeKind::Text {
                text,
                translation,
                source_lang,
                style,
                state,
                origin,
                timing,
                region,
                found_by,
                source_edit,
                entry: _,
                suggestions,
            },
            Some(KindPatch::Text {
                text: p_text,
                translation: p_translation,
                source_lang: p_lang,
                style: p_style,
                state: p_state,
                origin: p_origin,
                timing: p_timing,
                region: p_region,
                found_by: p_found,
                source_edit: p_source_edit,
                suggestions: p_suggestions,
                suggest: _,
            }),
        ) => {
            let was = state.unwrap_or_else(|| TextState::inferred(translation.as_deref()));
            Some(KindPatch::Text {
                text: swap(text, p_text),
                translation: swap(translation, p_translation),
                source_lang: swap(source_lang, p_lang),
                style: p_style.as_ref().map(|p| patch_style(style, p)),
                state: p_state.map(|new| {
                    *state = Some(new);
                    was
                }),
                origin: swap(origin, p_origin),
                timing: swap(timing, p_timing),
                region: swap(region, p_region),
                found_by: swap(found_by, p_found),
                source_edit: swap(source_edit, p_source_edit),
                suggestions: p_suggestions
                    .as_ref()
                    .map(|new| Box::new(std::mem::replace(suggestions, new.to_vec()))),
                suggest: None,
            })
        }
        (
            NodeKind::Image {
                blob,
                role,
                opacity,
                name,
                ..
            },
            Some(KindPatch::Image {
                blob: p_blob,
                role: p_role,
                opacity: p_opacity,
                name: p_name,
            }),
        ) => Some(KindPatch::Image {
            blob: swap(blob, p_blob),
            role: swap(role, p_role),
            opacity: swap(opacity, p_opacity),
            name: swap(name, p_name),
        }),
        (
            NodeKind::Mask { blob, role },
            Some(KindPatch::Mask {
                blob: p_blob,
                role: p_role,
            }),
        ) => Some(KindPatch::Mask {
            blob: swap(blob, p_blob),
            role: swap(role, p_role),
        }),
        _ => None,
    };
    old
}

/// A patch that changes a translation without saying its state: the
/// state follows the translation (`translated`, or `initial` when it is
/// cleared). Written into the resolved op, so undo restores the old state.
fn implied_state(patch: &mut NodePatch) {
    if let Some(KindPatch::Text {
        translation: Some(t),
        state: state @ None,
        ..
    }) = &mut patch.kind
    {
        *state = Some(TextState::inferred(t.as_deref()));
    }
}

/// Style is patched field by field. A style with no field set is stored as
/// no style at all, so that undo restores exactly the same scene.
fn patch_style(style: &mut Option<Style>, p: &StylePatch) -> StylePatch {
    let s = style.get_or_insert_with(Style::default);
    let old = StylePatch {
        font_family: swap(&mut s.font_family, &p.font_family),
        font_size: swap(&mut s.font_size, &p.font_size),
        font_weight: swap(&mut s.font_weight, &p.font_weight),
        italic: swap(&mut s.italic, &p.italic),
        align: swap(&mut s.align, &p.align),
        color: swap(&mut s.color, &p.color),
        stroke: swap(&mut s.stroke, &p.stroke),
        vertical: swap(&mut s.vertical, &p.vertical),
        clean: swap(&mut s.clean, &p.clean),
    };
    if *s == Style::default() {
        *style = None;
    }
    old
}
