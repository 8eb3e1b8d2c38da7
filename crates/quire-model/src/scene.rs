//! The scene model: a project's pages and their layered nodes.
//!
//! Pages are behind `Arc` so that a snapshot of the scene (for a reader, or
//! for writing `scene.json`) is a cheap clone; an op copies only the page it
//! changes (`Arc::make_mut`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::hash::BlobHash;
use crate::ids::{NodeId, PageId};
use crate::suggestion::Suggestion;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scene {
    pub project: ProjectMeta,
    pub pages: Vec<Arc<Page>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectMeta {
    pub name: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339; the time of the last change to the scene.
    pub updated_at: String,
    /// The language of the source text (BCP 47), once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_language: Option<String>,
    /// The language translated into (BCP 47), once set: XLIFF's `trgLang`
    /// and the default `targetLanguage` of translation engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_language: Option<String>,
    /// Terms and their required translations, sorted by source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub glossary: Vec<crate::glossary::Term>,
    /// The order pages' text is read in; unset, it follows the source
    /// language ([`ProjectMeta::reading`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading_direction: Option<ReadingDirection>,
    /// The book this project is part of, as a comic export names it
    /// (ComicInfo's `Series`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    /// Its chapter or issue number as written, e.g. `12.5` (`Number`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    /// Who translated it: a person or a group (`Translator`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translator: Option<String>,
    /// Words the `spelling` rule accepts in this project (names, coined
    /// words), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    /// The subtitle limits this project's cues are checked against, when
    /// not the config's `[qa.subtitles] profile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitle_profile: Option<SubtitleProfile>,
    /// The lettering of every block that does not name its own, field by
    /// field (face, size, weight, colour, …): a group's house style.
    #[serde(
        default,
        deserialize_with = "crate::objects::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub style: Option<Box<Style>>,
}

/// The order a page's text is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ReadingDirection {
    // Left to right: Western comics, most scripts.
    Ltr,
    // Right to left: manga.
    Rtl,
}

/// A set of subtitle limits by name: the Netflix style guides' for adult
/// and for children's programmes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SubtitleProfile {
    #[default]
    Netflix,
    NetflixChildren,
}

/// The limits a cue is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubtitleLimits {
    /// Characters per line, tags not counted.
    pub line_length: usize,
    /// Lines per cue.
    pub lines: usize,
    /// Characters per second of the cue's duration, line breaks and tags
    /// not counted.
    pub reading_speed: f64,
    pub min_duration_ms: u64,
    pub max_duration_ms: u64,
    /// The shortest gap between a cue's end and the next one's start.
    pub min_gap_ms: u64,
}

impl SubtitleProfile {
    pub const ALL: [SubtitleProfile; 2] =
        [SubtitleProfile::Netflix, SubtitleProfile::NetflixChildren];

    /// Its name in the config and the project (`netflix-children`).
    pub fn name(self) -> &'static str {
        match self {
            SubtitleProfile::Netflix => "netflix",
            SubtitleProfile::NetflixChildren => "netflix-children",
        }
    }

    pub fn limits(self) -> SubtitleLimits {
        // Both profiles: 42 characters a line, 2 lines, 5/6 s (20 frames
        // at 24 fps) to 7 s, a gap of 2 frames at 24 fps.
        let adult = SubtitleLimits {
            line_length: 42,
            lines: 2,
            reading_speed: 17.0,
            min_duration_ms: 833,
            max_duration_ms: 7_000,
            min_gap_ms: 83,
        };
        match self {
            SubtitleProfile::Netflix => adult,
            SubtitleProfile::NetflixChildren => SubtitleLimits {
                reading_speed: 13.0,
                ..adult
            },
        }
    }
}

impl ProjectMeta {
    /// The reading direction: the one set, else right to left for a
    /// Japanese source, else left to right.
    pub fn reading(&self) -> ReadingDirection {
        self.reading_direction.unwrap_or_else(|| {
            let japanese = self
                .source_language
                .as_deref()
                .is_some_and(|l| l == "ja" || l.starts_with("ja-"));
            if japanese {
                ReadingDirection::Rtl
            } else {
                ReadingDirection::Ltr
            }
        })
    }
}

/// A point of a region, `[x, y]` in page units.
pub type Point = [f64; 2];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Page {
    pub id: PageId,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Bottom to top.
    #[serde(default)]
    pub nodes: Vec<Node>,
    /// The translation file the page was made from, kept whole to be
    /// written back in its own format (not in the wire schema: only an
    /// import sets it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub document: Option<Box<Document>>,
}

/// A translation file a page was made from (a PO catalog, an XLIFF
/// document from any tool), kept as a blob of its text in UTF-8: its
/// export writes the same file back with the page's translations in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Document {
    /// `po` or `xliff` (the version is the file's own).
    pub format: String,
    /// The file's text.
    pub blob: BlobHash,
    /// The file's name as it came.
    pub name: String,
}

/// Where a text node stands in the translation file its page was made
/// from: the key the file knows it by, and what the file says about it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    /// PO: `msgctxt` and `msgid` (joined by U+0004, as gettext does);
    /// XLIFF: the file's place and the unit's id.
    pub key: String,
    /// The plural form (PO `msgstr[n]`) or the segment (XLIFF 2.0) within
    /// the entry, when it has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<u32>,
    /// Read-only: comments, flags, references, context, notes, as
    /// `label: text`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Node {
    pub id: NodeId,
    pub transform: Transform,
    pub visible: bool,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Transform {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum NodeKind {
    #[serde(rename_all = "camelCase")]
    Text {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        translation: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source_lang: Option<String>,
        #[serde(
            default,
            deserialize_with = "crate::objects::optional",
            skip_serializing_if = "Option::is_none"
        )]
        style: Option<Style>,
        // Default: `translated` if it has a translation, else `initial`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<TextState>,
        /// Who wrote the translation (quire records it).
        #[serde(
            default,
            deserialize_with = "crate::objects::optional",
            skip_serializing_if = "Option::is_none"
        )]
        origin: Option<Box<Origin>>,
        /// When a subtitle cue is shown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timing: Option<Box<Timing>>,
        /// The balloon (or text area) the text lives in: a polygon of 3 to
        /// 256 `[x, y]` points in page units (an image page's pixels).
        /// Clearing and typesetting happen inside it; `transform` stays
        /// the text's box.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        region: Option<Vec<Point>>,
        /// The engine that placed the node (`detect`), kept only while no
        /// person or agent changes it: what `detect.existing = "replace"`
        /// may remove. Engines set it; the core clears it on any other
        /// edit (not in the wire schema: no client sets it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(skip)]
        found_by: Option<String>,
        /// Who changed the source text (a person or an agent, and when)
        /// since the translation was last written or reviewed: while set,
        /// the translation awaits review (QA's `source-changed`, `fuzzy`
        /// in a PO export). quire records it; any translation or state
        /// written clears it (not in the wire schema: no client sets it).
        #[serde(
            default,
            deserialize_with = "crate::objects::optional",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(skip)]
        source_edit: Option<Box<Origin>>,
        /// Its entry in the translation file the page was made from
        /// (only an import sets it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(skip)]
        entry: Option<Box<Entry>>,
        /// Its open suggestions (spec 10, "Suggestions"): changed only
        /// through a suggestion act, which the core resolves (not in the
        /// wire schema: no client sets it).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(skip)]
        suggestions: Vec<Suggestion>,
    },
    #[serde(rename_all = "camelCase")]
    Image {
        blob: BlobHash,
        role: ImageRole,
        #[serde(default = "full_opacity")]
        opacity: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// A rendered image's digest of what it was rendered from (quire
        /// records it); it is stale when the page no longer matches.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rendered_from: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Mask { blob: BlobHash, role: MaskRole },
}

/// The XLIFF 2.0 segment states. `final` is locked: no engine writes it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum TextState {
    Initial,
    Translated,
    Reviewed,
    Final,
}

impl TextState {
    /// What a node written before states existed (0.1.0) is.
    pub fn inferred(translation: Option<&str>) -> TextState {
        match translation {
            Some(t) if !t.is_empty() => TextState::Translated,
            _ => TextState::Initial,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TextState::Initial => "initial",
            TextState::Translated => "translated",
            TextState::Reviewed => "reviewed",
            TextState::Final => "final",
        }
    }

    pub fn parse(s: &str) -> Option<TextState> {
        [
            TextState::Initial,
            TextState::Translated,
            TextState::Reviewed,
            TextState::Final,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }
}

/// When a subtitle cue is on screen, in milliseconds from the start, and
/// what its file said of it besides its text, written back as read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    pub start: u64,
    pub end: u64,
    /// The cue's identifier (WebVTT), as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The cue's number (SubRip), as written: a file numbered from 0, or
    /// with gaps, is written back so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// What follows the end time on its line (WebVTT `position:10%
    /// align:start`, SubRip coordinates), as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<String>,
    /// The blocks before the cue (the `WEBVTT` header before the first;
    /// `NOTE`, `STYLE`, `REGION`), as written, blank-line separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// The blocks after the last cue, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// Who wrote a translation: a person, an engine (by id), or an agent over
/// MCP (by its client's name and version).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Origin {
    pub by: Author,
    /// The engine's id, e.g. `llm-translate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The agent's MCP client, name and version, e.g. `claude-code 2.1.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The server's user it was made as (`[[server.users]]`): the person,
    /// the person whose agent it was, or who started the engine's job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// RFC 3339.
    pub at: String,
    /// For a translation memory's: how similar the remembered source was
    /// (1 identical; at least `tm.min_score`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// For an accepted suggestion: who proposed it (`user` accepted it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_by: Option<String>,
}

impl Origin {
    /// Whether a machine wrote it (an engine or an agent): work a person
    /// has yet to check, which `overwrite: machine` may replace while it
    /// is only `translated`.
    pub fn is_machine(&self) -> bool {
        self.by != Author::Human
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Author {
    Human,
    Engine,
    Agent,
}

fn full_opacity() -> f64 {
    1.0
}

impl NodeKind {
    /// A text node with only its source text (no translation yet).
    pub fn source(text: Option<String>) -> NodeKind {
        NodeKind::Text {
            text,
            translation: None,
            source_lang: None,
            style: None,
            state: None,
            origin: None,
            timing: None,
            region: None,
            found_by: None,
            source_edit: None,
            entry: None,
            suggestions: Vec::new(),
        }
    }

    /// A text node with only a region, placed by `engine`: text found
    /// but not yet read.
    pub fn found(region: Vec<Point>, engine: &str) -> NodeKind {
        let mut kind = NodeKind::source(None);
        if let NodeKind::Text {
            region: r,
            found_by,
            ..
        } = &mut kind
        {
            *r = Some(region);
            *found_by = Some(engine.to_owned());
        }
        kind
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            NodeKind::Text { .. } => "text",
            NodeKind::Image { .. } => "image",
            NodeKind::Mask { .. } => "mask",
        }
    }

    /// A text node's state, inferred for a node that has none recorded.
    pub fn state(&self) -> Option<TextState> {
        match self {
            NodeKind::Text {
                state, translation, ..
            } => Some(state.unwrap_or_else(|| TextState::inferred(translation.as_deref()))),
            _ => None,
        }
    }

    /// Whether this is a text node whose translation a machine (an engine
    /// or an agent) wrote and no person has reviewed: the PO export's
    /// `fuzzy`, the `m` mark, what `overwrite: machine` may replace.
    pub fn is_machine_work(&self) -> bool {
        matches!(self, NodeKind::Text { origin: Some(o), .. } if o.is_machine())
            && self.state() == Some(TextState::Translated)
    }

    /// Whether this text node's source changed after its translation was
    /// written or reviewed (see `source_edit`): a translation to check.
    pub fn source_changed(&self) -> bool {
        matches!(self, NodeKind::Text { source_edit: Some(_), translation: Some(t), .. } if !t.is_empty())
    }

    /// The blob this node shows, if any.
    pub fn blob(&self) -> Option<&BlobHash> {
        match self {
            NodeKind::Text { .. } => None,
            NodeKind::Image { blob, .. } | NodeKind::Mask { blob, .. } => Some(blob),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Style {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub font_family: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub font_size: Option<f64>,
    // As CSS: 400 regular, 700 bold; unset, bold (plain comments keep
    // `tools/list` small).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 900))]
    pub font_weight: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub italic: Option<bool>,
    // Unset: centred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<TextAlign>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Outline colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stroke: Option<String>,
    /// CJK columns, right to left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertical: Option<bool>,
    // Whether clean and render clear the source under it: `true` even
    // untranslated, `false` never; unset, only when it has a translation
    // (a plain comment: `tools/list` is kept small).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean: Option<bool>,
}

/// How a block's lines sit across its balloon or box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TextAlign {
    Left,
    Center,
    Right,
}

impl TextAlign {
    pub fn as_str(self) -> &'static str {
        match self {
            TextAlign::Left => "left",
            TextAlign::Center => "center",
            TextAlign::Right => "right",
        }
    }

    pub fn parse(s: &str) -> Option<TextAlign> {
        [TextAlign::Left, TextAlign::Center, TextAlign::Right]
            .into_iter()
            .find(|a| a.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ImageRole {
    Source,
    Rendered,
    // The source with its text removed (one per page, with the digest
    // of what it was made from, like `rendered`).
    Cleaned,
    Custom,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MaskRole {
    Segment,
    Inpaint,
    // The glyph pixels of the page's source text.
    Text,
}

impl Scene {
    pub fn new(name: &str, now: &str) -> Self {
        Scene {
            project: ProjectMeta {
                name: name.to_owned(),
                created_at: now.to_owned(),
                updated_at: now.to_owned(),
                source_language: None,
                target_language: None,
                glossary: Vec::new(),
                reading_direction: None,
                series: None,
                number: None,
                translator: None,
                words: Vec::new(),
                subtitle_profile: None,
                style: None,
            },
            pages: Vec::new(),
        }
    }

    pub fn page_index(&self, id: PageId) -> Option<usize> {
        self.pages.iter().position(|p| p.id == id)
    }

    pub fn page(&self, id: PageId) -> Option<&Page> {
        self.pages.iter().find(|p| p.id == id).map(|p| &**p)
    }

    /// Equal in everything a person edits: the project and every page.
    /// `updatedAt` and the times in translation origins say when a change
    /// was made, and so differ between two runs of the same edits.
    pub fn same_content(&self, other: &Scene) -> bool {
        let untimed = |scene: &Scene| {
            let mut pages: Vec<Page> = scene.pages.iter().map(|p| (**p).clone()).collect();
            for node in pages.iter_mut().flat_map(|p| p.nodes.iter_mut()) {
                if let NodeKind::Text {
                    origin: Some(o), ..
                } = &mut node.kind
                {
                    o.at.clear();
                }
            }
            pages
        };
        let project = |p: &ProjectMeta| {
            (
                p.name.clone(),
                p.created_at.clone(),
                p.source_language.clone(),
                p.target_language.clone(),
                p.glossary.clone(),
            )
        };
        project(&self.project) == project(&other.project) && untimed(self) == untimed(other)
    }
}

impl Page {
    /// Records the inferred state on text nodes that have none (a page
    /// from a 0.1.0 project, or added without one).
    pub fn infer_states(&mut self) {
        for node in &mut self.nodes {
            let inferred = node.kind.state();
            if let NodeKind::Text { state, .. } = &mut node.kind {
                *state = inferred;
            }
        }
    }

    pub fn node_index(&self, id: NodeId) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }
}
