//! XLIFF 2.0, both ways.
//!
//! Export: one `<file>`, a `<group>` per page (id `p<page id>`), a
//! `<unit>` per text node (id `n<node id>`, the ids again as notes) with one
//! `<segment state=…>` holding the source and, when there is one, the
//! translation as target; `srcLang`/`trgLang` from the project.
//!
//! Import merges a file like that back ([`Core::import_translations`]):
//! targets and states by unit id, as one history entry. A unit whose source
//! differs from the node's current text, or whose node is `final` here, is
//! a conflict: reported and left alone unless the import is forced. Units
//! this project does not have are reported as unmatched. A file that is not
//! XLIFF 2.0 (XLIFF 1.2 included), is not well-formed, holds a DTD, or
//! matches nothing changes nothing and says why.

use std::collections::HashMap;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event as Xml};
use serde::{Deserialize, Serialize};

use super::Core;
use super::error::{CoreError, CoreResult};
use super::ids::{NodeId, PageId, SessionId};
use super::op::{NodePatch, Op};
use super::scene::{Node, NodeKind, Scene, TextState};

const XLIFF_2: &str = "urn:oasis:names:tc:xliff:document:2.0";
const XLIFF_1: &str = "urn:oasis:names:tc:xliff:document:1.2";

/// Whether XML 1.0 can carry `c` at all (its `Char` production); the C0
/// controls but tab, LF and CR, and U+FFFE/U+FFFF, cannot appear even as
/// character references.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Segment text as XLIFF 2.0 content, escaped: markup characters as
/// entities, CR as `&#13;` (a parser would turn a raw one into LF), and a
/// character XML cannot carry as XLIFF's `<cp hex="…"/>`, so the text
/// comes back exactly.
fn xliff_content(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c if !xml_char(c) => out.push_str(&format!("<cp hex=\"{:04X}\"/>", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// An attribute value, escaped: quotes and markup as entities, tab, LF and
/// CR as character references (attribute normalisation would turn raw ones
/// into spaces), and a character XML cannot carry replaced by U+FFFD
/// (attributes have no `<cp>`; names cannot hold such characters since
/// the name rule, but projects from 0.1.0 may).
fn xml_attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if !xml_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `<name key="value" …>` with each value escaped by [`xml_attribute`].
fn element<'a>(name: &'a str, attributes: &[(&str, &str)]) -> BytesStart<'a> {
    let mut start = BytesStart::new(name);
    for (key, value) in attributes {
        start.push_attribute(quick_xml::events::attributes::Attribute {
            key: quick_xml::name::QName(key),
            value: xml_attribute(value).into(),
        });
    }
    start
}

fn xml_err(e: impl std::fmt::Display) -> CoreError {
    CoreError::internal(format!("cannot write XLIFF: {e}"))
}

/// The scene (or the pages kept in it) as an XLIFF 2.0 document.
pub fn export(scene: &Scene, target_language: Option<&str>) -> CoreResult<Vec<u8>> {
    let texts = || {
        scene.pages.iter().flat_map(|p| {
            p.nodes.iter().filter_map(move |n| match &n.kind {
                NodeKind::Text {
                    text,
                    translation,
                    source_lang,
                    ..
                } => Some((p, n, text, translation, source_lang)),
                _ => None,
            })
        })
    };
    // The project's languages first, then what the nodes say.
    let src_lang = scene
        .project
        .source_language
        .clone()
        .or_else(|| texts().find_map(|(.., lang)| lang.clone()))
        .unwrap_or_else(|| "und".to_owned());
    let target_language = target_language.or(scene.project.target_language.as_deref());
    let has_targets = texts().any(|(_, _, _, t, _)| t.is_some());
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Xml::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .map_err(xml_err)?;
    let trg = target_language.unwrap_or("und");
    let mut root_attributes = vec![
        ("xmlns", "urn:oasis:names:tc:xliff:document:2.0"),
        ("version", "2.0"),
        ("srcLang", src_lang.as_str()),
    ];
    if has_targets || target_language.is_some() {
        root_attributes.push(("trgLang", trg));
    }
    w.write_event(Xml::Start(element("xliff", &root_attributes)))
        .map_err(xml_err)?;
    let file = element(
        "file",
        &[("id", "f1"), ("original", scene.project.name.as_str())],
    );
    w.write_event(Xml::Start(file)).map_err(xml_err)?;
    for page in &scene.pages {
        let id = format!("p{}", page.id);
        let group = element("group", &[("id", &id), ("name", &page.name)]);
        w.write_event(Xml::Start(group)).map_err(xml_err)?;
        for node in &page.nodes {
            let NodeKind::Text {
                text, translation, ..
            } = &node.kind
            else {
                continue;
            };
            let state = node.kind.state().unwrap_or(TextState::Initial);
            let id = format!("n{}", node.id);
            w.write_event(Xml::Start(element("unit", &[("id", &id)])))
                .map_err(xml_err)?;
            w.write_event(Xml::Start(BytesStart::new("notes")))
                .map_err(xml_err)?;
            for (category, value) in [("page", page.id.to_string()), ("node", node.id.to_string())]
            {
                let note = element("note", &[("category", category)]);
                w.write_event(Xml::Start(note)).map_err(xml_err)?;
                w.write_event(Xml::Text(BytesText::new(&value)))
                    .map_err(xml_err)?;
                w.write_event(Xml::End(BytesEnd::new("note")))
                    .map_err(xml_err)?;
            }
            w.write_event(Xml::End(BytesEnd::new("notes")))
                .map_err(xml_err)?;
            let segment = element("segment", &[("state", state.as_str())]);
            w.write_event(Xml::Start(segment)).map_err(xml_err)?;
            let parts = [
                ("source", Some(text.as_deref().unwrap_or(""))),
                ("target", translation.as_deref()),
            ];
            for (tag, value) in parts {
                let Some(value) = value else { continue };
                let el = element(tag, &[("xml:space", "preserve")]);
                w.write_event(Xml::Start(el)).map_err(xml_err)?;
                w.write_event(Xml::Text(BytesText::from_escaped(xliff_content(value))))
                    .map_err(xml_err)?;
                w.write_event(Xml::End(BytesEnd::new(tag)))
                    .map_err(xml_err)?;
            }
            w.write_event(Xml::End(BytesEnd::new("segment")))
                .map_err(xml_err)?;
            w.write_event(Xml::End(BytesEnd::new("unit")))
                .map_err(xml_err)?;
        }
        w.write_event(Xml::End(BytesEnd::new("group")))
            .map_err(xml_err)?;
    }
    w.write_event(Xml::End(BytesEnd::new("file")))
        .map_err(xml_err)?;
    w.write_event(Xml::End(BytesEnd::new("xliff")))
        .map_err(xml_err)?;
    let mut bytes = w.into_inner();
    bytes.push(b'\n');
    Ok(bytes)
}

/// The formats translations come back in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TranslationFormat {
    Xliff,
}

impl TranslationFormat {
    /// From a file name's extension.
    pub fn from_path(path: &str) -> Option<TranslationFormat> {
        let lower = path.to_ascii_lowercase();
        (lower.ends_with(".xlf") || lower.ends_with(".xliff")).then_some(TranslationFormat::Xliff)
    }
}

/// What an import of translations is asked for: the HTTP body and the MCP
/// tool's arguments.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TranslationImport {
    /// xliff (XLIFF 2.0, as quire exports it).
    pub format: TranslationFormat,
    /// The file's text.
    pub content: String,
    /// Apply conflicting units too.
    #[serde(default)]
    pub force: bool,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The epoch after the import (unchanged when nothing was updated).
    pub epoch: u64,
    /// Units whose translation or state changed.
    pub updated: usize,
    /// Units that matched and already said the same.
    pub unchanged: usize,
    /// Units left alone (or, forced, applied anyway) and why.
    pub conflicts: Vec<Conflict>,
    /// Unit ids this project has no text node for.
    pub unmatched: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    pub unit: String,
    pub page_id: PageId,
    pub node_id: NodeId,
    pub message: String,
    /// Whether it was applied anyway (`force`).
    pub applied: bool,
}

/// One `<unit>` as read.
#[derive(Debug, PartialEq)]
struct Unit {
    id: String,
    source: String,
    target: Option<String>,
    state: Option<TextState>,
}

fn bad(message: impl std::fmt::Display) -> CoreError {
    CoreError::InvalidInput(format!("not an XLIFF 2.0 file quire can merge: {message}"))
}

/// The units of an XLIFF 2.0 document and its `trgLang`.
fn parse(text: &str) -> CoreResult<(Vec<Unit>, Option<String>)> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| bad(format!("not well-formed XML ({e})")))?;
    let root = doc.root_element();
    let ns = root.tag_name().namespace();
    if root.tag_name().name() != "xliff" {
        return Err(bad(format!(
            "the root element is <{}>, not <xliff>",
            root.tag_name().name()
        )));
    }
    if ns == Some(XLIFF_1)
        || root
            .attribute("version")
            .is_some_and(|v| v.starts_with('1'))
    {
        return Err(bad(
            "this is XLIFF 1.2; export XLIFF 2.0 from your tool (or quire) and import that",
        ));
    }
    if ns != Some(XLIFF_2) {
        return Err(bad(format!(
            "the namespace is {}, not {XLIFF_2}",
            ns.unwrap_or("missing")
        )));
    }
    let mut units = Vec::new();
    for unit in root.descendants().filter(|n| is(n, "unit")) {
        let at = || doc.text_pos_at(unit.range().start);
        let id = unit
            .attribute("id")
            .ok_or_else(|| bad(format!("a <unit> without an id at {}", at())))?;
        let mut source = String::new();
        let mut target: Option<String> = None;
        let mut state: Option<TextState> = None;
        for part in unit
            .children()
            .filter(|n| is(n, "segment") || is(n, "ignorable"))
        {
            if let Some(s) = part.attribute("state") {
                let s = TextState::parse(s).ok_or_else(|| {
                    bad(format!(
                        "unit {id}: unknown segment state `{s}` at {}",
                        at()
                    ))
                })?;
                state = Some(state.map_or(s, |old| old.min(s)));
            }
            for child in part.children().filter(roxmltree::Node::is_element) {
                if is(&child, "source") {
                    source.push_str(&content(&child, id)?);
                } else if is(&child, "target") {
                    target
                        .get_or_insert_with(String::new)
                        .push_str(&content(&child, id)?);
                }
            }
        }
        units.push(Unit {
            id: id.to_owned(),
            source,
            target,
            state,
        });
    }
    Ok((units, root.attribute("trgLang").map(str::to_owned)))
}

fn is(node: &roxmltree::Node<'_, '_>, name: &str) -> bool {
    node.is_element()
        && node.tag_name().name() == name
        && node.tag_name().namespace() == Some(XLIFF_2)
}

/// The text of a `<source>` or `<target>`: character data, `<cp hex>` as
/// its character, the text inside other inline elements.
fn content(node: &roxmltree::Node<'_, '_>, unit: &str) -> CoreResult<String> {
    let mut out = String::new();
    for child in node.children() {
        if child.is_text() {
            out.push_str(child.text().unwrap_or(""));
        } else if is(&child, "cp") {
            let hex = child.attribute("hex").unwrap_or("");
            let c = u32::from_str_radix(hex, 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| {
                    bad(format!(
                        "unit {unit}: <cp hex=\"{hex}\"> is not a character"
                    ))
                })?;
            out.push(c);
        } else if child.is_element() {
            out.push_str(&content(&child, unit)?);
        }
    }
    Ok(out)
}

/// What a matched unit asks of its node: `None` when it says what the
/// node already says.
fn change(node: &Node, unit: &Unit) -> Option<(Option<Option<String>>, TextState)> {
    let NodeKind::Text { translation, .. } = &node.kind else {
        return None;
    };
    let current = node.kind.state().unwrap_or(TextState::Initial);
    let target = match &unit.target {
        Some(t) if t.is_empty() => Some(None),
        Some(t) => Some(Some(t.clone())),
        None => None,
    };
    let new_translation = target.clone().unwrap_or_else(|| translation.clone());
    let changed = new_translation != *translation;
    let has = new_translation.as_deref().is_some_and(|t| !t.is_empty());
    let mut state = match unit.state {
        Some(s) => s,
        None if changed => TextState::inferred(new_translation.as_deref()),
        None => current,
    };
    // A state says where a translation stands: none without one, at least
    // `translated` with one.
    if !has {
        state = TextState::Initial;
    } else if state == TextState::Initial {
        state = TextState::Translated;
    }
    (changed || state != current).then(|| (changed.then_some(new_translation), state))
}

impl Core {
    /// Merges translations from an XLIFF 2.0 file into the session as one
    /// history entry; see the module doc.
    pub async fn import_translations(
        &self,
        session: SessionId,
        import: TranslationImport,
    ) -> CoreResult<ImportReport> {
        let TranslationImport {
            format: TranslationFormat::Xliff,
            content,
            force,
        } = import;
        let (units, trg_lang) = super::blocking(move || parse(&content)).await?;
        let snapshot = self.scene(session).await?;
        let scene = &snapshot.scene;
        if let (Some(file), Some(project)) = (&trg_lang, &scene.project.target_language)
            && !file.eq_ignore_ascii_case(project)
            && !force
        {
            return Err(CoreError::InvalidInput(format!(
                "the file translates into `{file}` but the project into `{project}`; \
                 import it with force to merge it anyway"
            )));
        }
        let nodes: HashMap<NodeId, (PageId, &Node)> = scene
            .pages
            .iter()
            .flat_map(|p| p.nodes.iter().map(move |n| (n.id, (p.id, n))))
            .collect();
        let mut report = ImportReport {
            epoch: snapshot.epoch,
            updated: 0,
            unchanged: 0,
            conflicts: Vec::new(),
            unmatched: Vec::new(),
        };
        let mut ops = Vec::new();
        for unit in &units {
            let found = unit
                .id
                .strip_prefix('n')
                .and_then(|id| id.parse().ok())
                .and_then(|id: uuid::Uuid| nodes.get(&NodeId(id)))
                .filter(|(_, n)| matches!(n.kind, NodeKind::Text { .. }));
            let Some((page, node)) = found else {
                report.unmatched.push(unit.id.clone());
                continue;
            };
            let Some((translation, state)) = change(node, unit) else {
                report.unchanged += 1;
                continue;
            };
            let NodeKind::Text { text, .. } = &node.kind else {
                continue;
            };
            let why = if text.as_deref().unwrap_or("") != unit.source {
                Some("its source changed since the export".to_owned())
            } else if node.kind.state() == Some(TextState::Final) {
                Some("it is final here".to_owned())
            } else {
                None
            };
            if let Some(message) = why {
                report.conflicts.push(Conflict {
                    unit: unit.id.clone(),
                    page_id: *page,
                    node_id: node.id,
                    message,
                    applied: force,
                });
                if !force {
                    continue;
                }
            }
            report.updated += 1;
            ops.push(Op::UpdateNode {
                page: *page,
                id: node.id,
                patch: NodePatch::text(translation, Some(state)),
            });
        }
        if !units.is_empty() && report.unmatched.len() == units.len() {
            return Err(CoreError::InvalidInput(format!(
                "none of the file's {} units is a text node of this project (was it exported from another one?)",
                units.len()
            )));
        }
        if units.is_empty() {
            return Err(bad("it has no <unit>"));
        }
        if !ops.is_empty() {
            let label = format!("import XLIFF · {} segments", ops.len());
            let batch = Op::Batch {
                ops,
                label: Some(label),
            };
            report.epoch = self.apply(session, batch).await?.epoch;
        }
        Ok(report)
    }
}
