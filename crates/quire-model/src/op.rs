//! Ops: every change to a scene, as clients send them (JSON, tagged by
//! `type`, camelCase).
//!
//! Clients never send previous values; [`crate::apply`] records what undo
//! needs. The same `Op` type also holds a *resolved* op (every id filled in,
//! every position explicit), which is what the log stores and what undo and
//! redo replay.

use serde::{Deserialize, Deserializer, Serialize};

use crate::glossary::Term;
use crate::hash::BlobHash;
use crate::ids::{NodeId, PageId};
use crate::objects;
use crate::scene::{
    ImageRole, MaskRole, NodeKind, Origin, Point, ReadingDirection, TextAlign, TextState, Timing,
    Transform,
};
use crate::suggestion::{Suggest, Suggestion};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum Op {
    #[serde(rename_all = "camelCase")]
    AddPage {
        #[serde(deserialize_with = "objects::one")]
        page: NewPage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<usize>,
    },
    #[serde(rename_all = "camelCase")]
    RemovePage { id: PageId },
    #[serde(rename_all = "camelCase")]
    UpdatePage {
        id: PageId,
        #[serde(deserialize_with = "objects::one")]
        patch: PagePatch,
    },
    #[serde(rename_all = "camelCase")]
    ReorderPages { order: Vec<PageId> },
    #[serde(rename_all = "camelCase")]
    AddNode {
        page: PageId,
        #[serde(deserialize_with = "objects::one")]
        node: NewNode,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<usize>,
    },
    #[serde(rename_all = "camelCase")]
    RemoveNode { page: PageId, id: NodeId },
    #[serde(rename_all = "camelCase")]
    UpdateNode {
        page: PageId,
        id: NodeId,
        #[serde(deserialize_with = "objects::one")]
        patch: NodePatch,
        // The values the edit was made from; refused (a conflict) when the
        // node says otherwise now. (A plain comment: the MCP schema budget.)
        #[serde(
            default,
            deserialize_with = "objects::optional",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(with = "Basis")]
        based_on: Option<Basis>,
    },
    #[serde(rename_all = "camelCase")]
    ReorderNodes { page: PageId, order: Vec<NodeId> },
    #[serde(rename_all = "camelCase")]
    UpdateProject {
        #[serde(deserialize_with = "objects::one")]
        patch: ProjectPatch,
    },
    // Sets glossary terms (by source: added, or replacing the term with
    // that source) and removes terms by source. (A plain comment: the MCP
    // schema budget.)
    #[serde(rename_all = "camelCase")]
    UpdateGlossary {
        #[serde(default)]
        set: Vec<Term>,
        #[serde(default)]
        remove: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    Batch {
        #[serde(deserialize_with = "objects::list")]
        ops: Vec<Op>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
}

/// The most pages [`Op::pages_changed`] names; past that, reading the
/// whole scene costs about as much as reading them one by one.
pub const MAX_CHANGED_PAGES: usize = 64;

impl Op {
    pub fn type_name(&self) -> &'static str {
        match self {
            Op::AddPage { .. } => "AddPage",
            Op::RemovePage { .. } => "RemovePage",
            Op::UpdatePage { .. } => "UpdatePage",
            Op::ReorderPages { .. } => "ReorderPages",
            Op::AddNode { .. } => "AddNode",
            Op::RemoveNode { .. } => "RemoveNode",
            Op::UpdateNode { .. } => "UpdateNode",
            Op::ReorderNodes { .. } => "ReorderNodes",
            Op::UpdateProject { .. } => "UpdateProject",
            Op::UpdateGlossary { .. } => "UpdateGlossary",
            Op::Batch { .. } => "Batch",
        }
    }

    /// The blobs the op makes nodes show (images and masks it adds or
    /// points at), each once per mention.
    pub fn blobs(&self) -> Vec<&BlobHash> {
        let mut out = Vec::new();
        self.collect_blobs(&mut out);
        out
    }

    fn collect_blobs<'a>(&'a self, out: &mut Vec<&'a BlobHash>) {
        match self {
            Op::Batch { ops, .. } => ops.iter().for_each(|op| op.collect_blobs(out)),
            Op::AddPage { page, .. } => {
                out.extend(page.nodes.iter().flatten().filter_map(|n| n.kind.blob()));
                out.extend(page.document.as_ref().map(|d| &d.blob));
            }
            Op::AddNode { node, .. } => out.extend(node.kind.blob()),
            Op::UpdateNode { patch, .. } => {
                if let Some(
                    KindPatch::Image { blob: Some(b), .. } | KindPatch::Mask { blob: Some(b), .. },
                ) = &patch.kind
                {
                    out.push(b);
                }
            }
            _ => {}
        }
    }

    /// The pages whose content the op changes, when that is all it
    /// changes: what a client showing the scene must read again. `None`
    /// when the page list or the project changed (a page added, removed or
    /// reordered, a project field, the glossary), or when more than
    /// [`MAX_CHANGED_PAGES`] pages did: then the whole scene is the thing
    /// to read.
    pub fn pages_changed(&self) -> Option<Vec<PageId>> {
        let mut pages = Vec::new();
        if !self.collect_pages(&mut pages) {
            return None;
        }
        pages.sort_unstable();
        Some(pages)
    }

    /// Adds the op's pages to `out` (each once); false as soon as the op
    /// changes more than pages' contents, or more than
    /// [`MAX_CHANGED_PAGES`] pages: a big batch under the session's lock
    /// costs a look at a few ids per op, and stops there.
    fn collect_pages(&self, out: &mut Vec<PageId>) -> bool {
        match self {
            Op::UpdatePage { id: page, .. }
            | Op::AddNode { page, .. }
            | Op::RemoveNode { page, .. }
            | Op::UpdateNode { page, .. }
            | Op::ReorderNodes { page, .. } => {
                if !out.contains(page) {
                    out.push(*page);
                }
                out.len() <= MAX_CHANGED_PAGES
            }
            Op::Batch { ops, .. } => ops.iter().all(|op| op.collect_pages(out)),
            Op::AddPage { .. }
            | Op::RemovePage { .. }
            | Op::ReorderPages { .. }
            | Op::UpdateProject { .. }
            | Op::UpdateGlossary { .. } => false,
        }
    }

    /// How many ops this is, members of batches counted one by one.
    pub fn count(&self) -> usize {
        match self {
            Op::Batch { ops, .. } => ops.iter().map(Op::count).sum(),
            _ => 1,
        }
    }

    /// A short description for history lists.
    pub fn label(&self) -> String {
        match self {
            Op::Batch {
                label: Some(label), ..
            } => label.clone(),
            Op::Batch { ops, .. } => format!("Batch of {}", ops.len()),
            other => other.type_name().to_owned(),
        }
    }
}

// A new page: its id and nodes are optional. (A plain comment: the
// schema's `required` says so, and `tools/list` has a budget.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewPage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<PageId>,
    // `limits::MAX_NAME_CHARS` (a literal: schemars takes no path here).
    #[schemars(length(min = 1, max = 200))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    #[serde(
        default,
        deserialize_with = "objects::optional_list",
        skip_serializing_if = "Option::is_none"
    )]
    pub nodes: Option<Vec<NewNode>>,
    /// See [`crate::scene::Page::document`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub document: Option<Box<crate::scene::Document>>,
}

/// A node as a client adds it: the id is optional, `transform` defaults to
/// an unplaced zero box and `visible` to true.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewNode {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<NodeId>,
    #[serde(default, deserialize_with = "objects::one")]
    pub transform: Transform,
    #[serde(default = "yes")]
    pub visible: bool,
    #[serde(deserialize_with = "objects::one")]
    pub kind: NodeKind,
}

fn yes() -> bool {
    true
}

/// `Some(None)` clears a field (JSON `null`); `None` (absent) leaves it.
pub type Clearable<T> = Option<Option<T>>;

// What an edit was made from: the node's values as its client last saw
// them (`null`: it had none). The core compares them, under the session's
// lock, with what the node says when the edit applies, and refuses the
// edit with a conflict carrying both values when they differ: a change
// made meanwhile by someone else is never silently replaced. The log keeps
// edits without it (it held when they applied). (Plain comments: the MCP
// schema budget; the schema's description is the one line below.)
/// Refused if the node no longer has these values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Basis {
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub text: Clearable<String>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub translation: Clearable<String>,
}

/// Deserializes a field so that `null` becomes `Some(None)`, not `None`.
fn clearable<'de, D, T>(d: D) -> Result<Clearable<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PagePatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub width: Clearable<u32>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub height: Clearable<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    // BCP 47, e.g. `ja`; null clears it (plain comments: `tools/list` is
    // kept small, and the tool's description says what null does).
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub source_language: Clearable<String>,
    // BCP 47, e.g. `pt-BR`.
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub target_language: Clearable<String>,
    // ltr or rtl; null: as the source language reads.
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub reading_direction: Clearable<ReadingDirection>,
    // The book's series, chapter number and translator, as a CBZ export's
    // ComicInfo.xml names them; null clears one.
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub series: Clearable<String>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub number: Clearable<String>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub translator: Clearable<String>,
    /// Words added to and removed from the project's word list (the
    /// `spelling` rule's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_words: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_words: Vec<String>,
    /// The subtitle profile its cues are checked against; null: the
    /// config's.
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub subtitle_profile: Clearable<crate::scene::SubtitleProfile>,
    // The project's lettering, field by field (null clears a field).
    #[serde(
        default,
        deserialize_with = "objects::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub style: Option<StylePatch>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodePatch {
    #[serde(
        default,
        deserialize_with = "objects::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub transform: Option<TransformPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible: Option<bool>,
    // Its `type` must match the node's (a plain comment: the budget).
    #[serde(
        default,
        deserialize_with = "objects::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<KindPatch>,
}

impl NodePatch {
    /// A text node's translation and/or state, nothing else.
    pub fn text(translation: Clearable<String>, state: Option<TextState>) -> NodePatch {
        let mut kind = KindPatch::text();
        if let KindPatch::Text {
            translation: t,
            state: s,
            ..
        } = &mut kind
        {
            (*t, *s) = (translation, state);
        }
        NodePatch::kind(kind)
    }

    /// A suggestion act on a text node, for the core to resolve.
    pub fn suggest(act: Suggest) -> NodePatch {
        let mut kind = KindPatch::text();
        if let KindPatch::Text { suggest, .. } = &mut kind {
            *suggest = Some(Box::new(act));
        }
        NodePatch::kind(kind)
    }

    /// A text node's source text, nothing else.
    pub fn source(text: Clearable<String>) -> NodePatch {
        let mut kind = KindPatch::text();
        if let KindPatch::Text { text: t, .. } = &mut kind {
            *t = text;
        }
        NodePatch::kind(kind)
    }

    /// A text node's style (its lettering), nothing else.
    pub fn style(style: StylePatch) -> NodePatch {
        let mut kind = KindPatch::text();
        if let KindPatch::Text { style: s, .. } = &mut kind {
            *s = Some(style);
        }
        NodePatch::kind(kind)
    }

    /// A text node's region, nothing else.
    pub fn region(region: Clearable<Vec<Point>>) -> NodePatch {
        let mut kind = KindPatch::text();
        if let KindPatch::Text { region: r, .. } = &mut kind {
            *r = region;
        }
        NodePatch::kind(kind)
    }

    fn kind(kind: KindPatch) -> NodePatch {
        NodePatch {
            kind: Some(kind),
            ..NodePatch::default()
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransformPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<f64>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub rotation: Clearable<f64>,
}

// The text patch is what nearly every op carries: boxing it would cost
// an allocation per edit to save bytes on the rarer image and mask
// patches.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum KindPatch {
    #[serde(rename_all = "camelCase")]
    Text {
        #[serde(
            default,
            deserialize_with = "clearable",
            skip_serializing_if = "Option::is_none"
        )]
        text: Clearable<String>,
        #[serde(
            default,
            deserialize_with = "clearable",
            skip_serializing_if = "Option::is_none"
        )]
        translation: Clearable<String>,
        #[serde(
            default,
            deserialize_with = "clearable",
            skip_serializing_if = "Option::is_none"
        )]
        source_lang: Clearable<String>,
        #[serde(
            default,
            deserialize_with = "objects::optional",
            skip_serializing_if = "Option::is_none"
        )]
        style: Option<StylePatch>,
        /// A `final` translation changes only with a state given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<TextState>,
        #[serde(
            default,
            deserialize_with = "objects::clearable",
            skip_serializing_if = "Option::is_none"
        )]
        origin: Clearable<Box<Origin>>,
        #[serde(
            default,
            deserialize_with = "clearable",
            skip_serializing_if = "Option::is_none"
        )]
        timing: Clearable<Box<Timing>>,
        /// The balloon the text lives in (3 to 256 `[x, y]` points); null
        /// clears it.
        #[serde(
            default,
            deserialize_with = "clearable",
            skip_serializing_if = "Option::is_none"
        )]
        region: Clearable<Vec<Point>>,
        #[serde(
            default,
            deserialize_with = "clearable",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(skip)]
        found_by: Clearable<String>,
        /// Only the core sets it (see the node's `sourceEdit`).
        #[serde(
            default,
            deserialize_with = "objects::clearable",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(skip)]
        source_edit: Clearable<Box<Origin>>,
        /// The node's open suggestions as the core resolved them (it
        /// drops any a client sends).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(skip)]
        suggestions: Option<Box<Vec<Suggestion>>>,
        /// A suggestion act, which the core turns into `suggestions` (and,
        /// for an accept, the translation).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(skip)]
        suggest: Option<Box<Suggest>>,
    },
    #[serde(rename_all = "camelCase")]
    Image {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blob: Option<BlobHash>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<ImageRole>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        opacity: Option<f64>,
        #[serde(
            default,
            deserialize_with = "clearable",
            skip_serializing_if = "Option::is_none"
        )]
        name: Clearable<String>,
    },
    #[serde(rename_all = "camelCase")]
    Mask {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blob: Option<BlobHash>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<MaskRole>,
    },
}

impl KindPatch {
    /// A text patch that changes nothing, for a constructor to fill in.
    pub(crate) fn text() -> KindPatch {
        KindPatch::Text {
            text: None,
            translation: None,
            source_lang: None,
            style: None,
            state: None,
            origin: None,
            timing: None,
            region: None,
            found_by: None,
            source_edit: None,
            suggestions: None,
            suggest: None,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            KindPatch::Text { .. } => "text",
            KindPatch::Image { .. } => "image",
            KindPatch::Mask { .. } => "mask",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StylePatch {
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub font_family: Clearable<String>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub font_size: Clearable<f64>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = 100, max = 900))]
    pub font_weight: Clearable<u16>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub italic: Clearable<bool>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub align: Clearable<TextAlign>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub color: Clearable<String>,
    /// Outline colour.
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub stroke: Clearable<String>,
    /// CJK columns, right to left.
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub vertical: Clearable<bool>,
    #[serde(
        default,
        deserialize_with = "clearable",
        skip_serializing_if = "Option::is_none"
    )]
    pub clean: Clearable<bool>,
}

impl StylePatch {
    /// The patch that sets every field `style` has (an archive's project
    /// rebuilt by ops); `None` for a style with none.
    pub fn setting(style: &crate::scene::Style) -> Option<StylePatch> {
        let patch = StylePatch {
            font_family: style.font_family.clone().map(Some),
            font_size: style.font_size.map(Some),
            font_weight: style.font_weight.map(Some),
            italic: style.italic.map(Some),
            align: style.align.map(Some),
            color: style.color.clone().map(Some),
            stroke: style.stroke.clone().map(Some),
            vertical: style.vertical.map(Some),
            clean: style.clean.map(Some),
        };
        (patch != StylePatch::default()).then_some(patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(json: serde_json::Value) -> Op {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn pages_changed_names_the_pages_or_none_when_the_list_changed() {
        let (a, b) = (PageId::new(), PageId::new());
        let edit = |page: PageId| {
            serde_json::json!({ "type": "UpdateNode", "page": page, "id": NodeId::new(),
                "patch": { "kind": { "type": "text", "translation": "x" } } })
        };
        assert_eq!(op(edit(a)).pages_changed(), Some(vec![a]));
        let both = op(
            serde_json::json!({ "type": "Batch", "ops": [edit(b), edit(a), edit(b),
            { "type": "UpdatePage", "id": a, "patch": { "name": "n" } }] }),
        );
        let mut expected = vec![a, b];
        expected.sort_unstable();
        assert_eq!(both.pages_changed(), Some(expected));
        let with_page = op(serde_json::json!({ "type": "Batch", "ops": [edit(a),
            { "type": "AddPage", "page": { "name": "new" } }] }));
        assert_eq!(with_page.pages_changed(), None);
        for structural in [
            serde_json::json!({ "type": "RemovePage", "id": a }),
            serde_json::json!({ "type": "ReorderPages", "order": [b, a] }),
            serde_json::json!({ "type": "UpdateProject", "patch": { "name": "p" } }),
        ] {
            assert_eq!(op(structural).pages_changed(), None);
        }
        let many: Vec<_> = (0..=MAX_CHANGED_PAGES)
            .map(|_| edit(PageId::new()))
            .collect();
        assert_eq!(
            op(serde_json::json!({ "type": "Batch", "ops": many })).pages_changed(),
            None
        );
    }

    #[test]
    fn null_clears_and_absent_leaves() {
        let p: PagePatch = serde_json::from_str(r#"{"width": null}"#).unwrap();
        assert_eq!(p.width, Some(None));
        assert_eq!(p.height, None);
        // A cleared field survives a round trip through the log.
        let back: PagePatch = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn ops_are_tagged_by_type_in_camel_case() {
        let op: Op = serde_json::from_str(
            r#"{"type":"UpdateNode","page":"0190d2a0-0000-7000-8000-000000000001",
                "id":"0190d2a0-0000-7000-8000-000000000002",
                "patch":{"kind":{"type":"text","translation":null,"sourceLang":"ja"}}}"#,
        )
        .unwrap();
        let Op::UpdateNode { patch, .. } = &op else {
            panic!("{op:?}")
        };
        assert_eq!(
            patch.kind,
            Some(KindPatch::Text {
                text: None,
                translation: Some(None),
                source_lang: Some(Some("ja".into())),
                style: None,
                state: None,
                origin: None,
                timing: None,
                region: None,
                found_by: None,
                source_edit: None,
                suggestions: None,
                suggest: None,
            })
        );
        let again: Op = serde_json::from_str(&serde_json::to_string(&op).unwrap()).unwrap();
        assert_eq!(again, op);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let err = serde_json::from_str::<Op>(r#"{"type":"RemovePage","id":"x","force":true}"#)
            .unwrap_err();
        assert!(err.to_string().contains("unknown field") || err.to_string().contains("UUID"));
        let err = serde_json::from_str::<Op>(r#"{"type":"Explode"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `Explode`"), "{err}");
    }
}
