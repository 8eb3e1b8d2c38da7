//! XLIFF 2.0, both ways.
//!
//! Export: one `<file>`, a `<group>` per page (id `p<page id>`), a
//! `<unit>` per text node (id `n<node id>`, the ids again as notes) with one
//! `<segment state=…>` holding the source and, when there is one, the
//! translation as target; `srcLang`/`trgLang` from the project.
//!
//! Import reads a file like that back into units by id for
//! [`crate::units`] to merge: targets and states. A file that is not
//! XLIFF 2.0 (XLIFF 1.2 included), is not well-formed or holds a DTD is
//! refused and says why.

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event as Xml};

use crate::units::{Parsed, Unit};
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::NodeId;
use quire_model::scene::{NodeKind, Scene, TextState};

const XLIFF_2: &str = "urn:oasis:names:tc:xliff:document:2.0";
const XLIFF_1: &str = "urn:oasis:names:tc:xliff:document:1.2";
/// quire's namespace, for what it adds to a file (the export id).
const QUIRE: &str = "urn:quire:xliff";

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

/// The scene (or the pages kept in it) as an XLIFF 2.0 document;
/// `export_id`, when given, goes in the `<file>`'s `quire:export`.
pub fn export(
    scene: &Scene,
    target_language: Option<&str>,
    export_id: Option<&str>,
) -> CoreResult<Vec<u8>> {
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
    let mut file_attributes = vec![("id", "f1"), ("original", scene.project.name.as_str())];
    if let Some(id) = export_id {
        file_attributes.extend([("xmlns:quire", QUIRE), ("quire:export", id)]);
    }
    let file = element("file", &file_attributes);
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
            let timing = match &node.kind {
                NodeKind::Text {
                    timing: Some(t), ..
                } => Some(("timing", crate::subtitles::format_timing(t))),
                _ => None,
            };
            let notes = [("page", page.id.to_string()), ("node", node.id.to_string())];
            for (category, value) in notes.into_iter().chain(timing) {
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

fn bad(message: impl std::fmt::Display) -> CoreError {
    CoreError::InvalidInput(format!("not an XLIFF 2.0 file quire can merge: {message}"))
}

/// The units of an XLIFF 2.0 document and its `trgLang`.
pub(super) fn parse(text: &str) -> CoreResult<Parsed> {
    let doc = crate::xml::parse(text).map_err(bad)?;
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
        let node = id
            .strip_prefix('n')
            .and_then(|id| id.parse().ok())
            .map(NodeId);
        units.push(Unit {
            id: id.to_owned(),
            node,
            source,
            target,
            state,
            ..Unit::default()
        });
    }
    if units.is_empty() {
        return Err(bad("it has no <unit>"));
    }
    let export = root
        .descendants()
        .filter(|n| is(n, "file") || is(n, "xliff"))
        .find_map(|n| n.attribute((QUIRE, "export")))
        .map(str::to_owned);
    Ok(Parsed {
        units,
        language: root.attribute("trgLang").map(str::to_owned),
        source_language: root.attribute("srcLang").map(str::to_owned),
        export,
    })
}

fn is(node: &roxmltree::Node<'_, '_>, name: &str) -> bool {
    node.is_element()
        && node.tag_name().name() == name
        && node.tag_name().namespace() == Some(XLIFF_2)
}

/// The text of a `<source>` or `<target>`: character data, `<cp hex>` as
/// its character, the text inside other inline elements (walked in document
/// order by an iterator: nesting costs no stack).
fn content(node: &roxmltree::Node<'_, '_>, unit: &str) -> CoreResult<String> {
    let mut out = String::new();
    for child in node.descendants().skip(1) {
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
        }
    }
    Ok(out)
}
