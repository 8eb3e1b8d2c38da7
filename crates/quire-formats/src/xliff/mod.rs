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

use crate::inline::{self, Codes};
use crate::units::{DocUnit, Document, Fill, Filled, Languages, Parsed, Unit};
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::NodeId;
use quire_model::scene::{NodeKind, Scene, TextState};

mod notes;
mod write_back;
pub(super) use write_back::write_back;

const XLIFF_2: &str = "urn:oasis:names:tc:xliff:document:2.0";
/// XLIFF 1.0, 1.1 and 1.2's namespaces start so.
const XLIFF_1_PREFIX: &str = "urn:oasis:names:tc:xliff:document:1.";
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
    let suggested = texts().any(|(_, n, ..)| {
        matches!(&n.kind, NodeKind::Text { suggestions, .. } if !suggestions.is_empty())
    });
    if export_id.is_some() || suggested {
        file_attributes.push(("xmlns:quire", QUIRE));
    }
    if let Some(id) = export_id {
        file_attributes.push(("quire:export", id));
    }
    let file = element("file", &file_attributes);
    w.write_event(Xml::Start(file)).map_err(xml_err)?;
    for page in &scene.pages {
        let id = format!("p{}", page.id);
        let group = element("group", &[("id", &id), ("name", &page.name)]);
        w.write_event(Xml::Start(group)).map_err(xml_err)?;
        let mut cues = 0;
        for node in &page.nodes {
            let NodeKind::Text {
                text,
                translation,
                timing,
                ..
            } = &node.kind
            else {
                continue;
            };
            let state = node.kind.state().unwrap_or(TextState::Initial);
            let id = format!("n{}", node.id);
            // A cue's unit is named by its number, as a reviewer calls it.
            let number = timing.as_ref().map(|_| {
                cues += 1;
                cues.to_string()
            });
            let mut unit = vec![("id", id.as_str())];
            unit.extend(number.as_deref().map(|n| ("name", n)));
            w.write_event(Xml::Start(element("unit", &unit)))
                .map_err(xml_err)?;
            notes::unit_notes(&mut w, page, node)?;
            // A machine's translation nobody has checked (a PO entry's
            // `fuzzy`, a source changed since) waits for review.
            let unchecked = translation.as_deref().is_some_and(|t| !t.is_empty())
                && (node.kind.is_machine_work() || node.kind.source_changed());
            let mut segment = vec![("state", state.as_str())];
            if unchecked {
                segment.push(("subState", NEEDS_REVIEW));
            }
            let segment = element("segment", &segment);
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
    CoreError::InvalidInput(format!("not an XLIFF file quire can read: {message}"))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Version {
    /// XLIFF 1.0 to 1.2: `<trans-unit>`, states on `<target>`.
    One,
    /// XLIFF 2.x: `<unit>`, `<segment>`s with states.
    Two,
}

/// The XLIFF version of `doc` and its namespace (XLIFF 1.x files may
/// have none).
fn version<'a>(doc: &'a roxmltree::Document<'_>) -> CoreResult<(Version, Option<&'a str>)> {
    let root = doc.root_element();
    if root.tag_name().name() != "xliff" {
        return Err(bad(format!(
            "the root element is <{}>, not <xliff>",
            root.tag_name().name()
        )));
    }
    let ns = root.tag_name().namespace();
    // The element's own `version`, not another vocabulary's (`its:version`).
    let version = root
        .attributes()
        .find(|a| a.name() == "version" && a.namespace().is_none())
        .map(|a| a.value().trim());
    let refused = |v: &str| {
        Err(bad(format!(
            "it says XLIFF version `{v}`; quire reads XLIFF 1.0 to 1.2 and 2.x"
        )))
    };
    match (ns, version) {
        // 2.1 and 2.2 keep 2.0's namespace.
        (Some(XLIFF_2), None) => Ok((Version::Two, ns)),
        (Some(XLIFF_2), Some(v)) if two_point(v) => Ok((Version::Two, ns)),
        (Some(XLIFF_2), Some(v)) => refused(v),
        // 1.0 and 1.1 files are read like 1.2 (spec 14; Passolo and
        // others still write 1.0, without a namespace), and so is a 1.x
        // namespace without a version.
        (Some(n), None) if n.starts_with(XLIFF_1_PREFIX) => Ok((Version::One, ns)),
        (Some(n), Some("1.0" | "1.1" | "1.2")) if n.starts_with(XLIFF_1_PREFIX) => {
            Ok((Version::One, ns))
        }
        (Some(n), Some(v)) if n.starts_with(XLIFF_1_PREFIX) => refused(v),
        (None, Some("1.0" | "1.1" | "1.2")) => Ok((Version::One, ns)),
        (None, Some(v)) => refused(v),
        _ => Err(bad(format!(
            "the namespace is {}, neither XLIFF 1.2's nor 2.0's",
            ns.unwrap_or("missing")
        ))),
    }
}

/// `2.0`, `2.1`, `2.2`, …: a 2.x version.
fn two_point(version: &str) -> bool {
    version
        .strip_prefix("2.")
        .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
}

/// One translatable segment of a document as read: where it is, what it
/// says, and the elements to write its translation into.
struct Slot<'a, 'i> {
    /// The unit's id (and the segment's place among several), for reports.
    name: String,
    /// The id quire gave a unit that had none (on its first segment only),
    /// for the export to write.
    made_id: Option<String>,
    key: String,
    form: Option<u32>,
    /// The `<trans-unit>` or `<unit>`.
    unit: roxmltree::Node<'a, 'i>,
    /// The `<segment>` (2.0), whose `state` it is.
    segment: Option<roxmltree::Node<'a, 'i>>,
    /// Where a new target goes after (`<source>`, or 1.2's `<seg-source>`).
    after: roxmltree::Node<'a, 'i>,
    target: Option<roxmltree::Node<'a, 'i>>,
    source_text: String,
    target_text: Option<String>,
    codes: Codes,
    state: Option<TextState>,
    /// 1.2's `needs-review-*` (or `needs-adaptation`, `needs-l10n`) state.
    machine: Option<bool>,
    translate: bool,
    notes: Vec<String>,
    /// An XLIFF 1.2 unit segmented by `<seg-source>` (Trados, OmegaT):
    /// this segment's marker; `target` is then the target's marker of
    /// the same `mid`.
    mrk: Option<Mrk<'a, 'i>>,
}

/// A segment marker (`<mrk mtype="seg" mid="…">`) of a segmented unit.
struct Mrk<'a, 'i> {
    /// The source marker's start tag, for a target marker written anew.
    start_tag: String,
    /// The unit's `<target>`, when it has one.
    target_element: Option<roxmltree::Node<'a, 'i>>,
}

/// One segment of a unit as found: its `<segment>` (2.0), the element
/// holding its source and target, and the source and target themselves
/// (segment markers in a segmented 1.2 unit).
struct Part<'a, 'i> {
    segment: Option<roxmltree::Node<'a, 'i>>,
    holder: roxmltree::Node<'a, 'i>,
    source: roxmltree::Node<'a, 'i>,
    target: Option<roxmltree::Node<'a, 'i>>,
    mrk: Option<Mrk<'a, 'i>>,
}

/// The segments of `unit`: 2.0's `<segment>`s; a 1.2 unit's
/// `<seg-source>` markers when it is segmented, else the unit itself.
fn parts_of<'a, 'i>(
    unit: roxmltree::Node<'a, 'i>,
    version: Version,
    ns: Option<&str>,
    text: &str,
) -> Result<Vec<Part<'a, 'i>>, String> {
    let child = |parent: roxmltree::Node<'a, 'i>, name: &str| {
        parent.children().find(|n| is_in(n, name, ns))
    };
    let source_of = |holder| child(holder, "source").ok_or("has no <source>");
    let is_seg =
        |n: &roxmltree::Node<'_, '_>| is_in(n, "mrk", ns) && n.attribute("mtype") == Some("seg");
    match version {
        Version::Two => unit
            .children()
            .filter(|n| is_in(n, "segment", ns))
            .map(|s| {
                Ok(Part {
                    segment: Some(s),
                    holder: s,
                    source: source_of(s)?,
                    target: child(s, "target"),
                    mrk: None,
                })
            })
            .collect(),
        Version::One => {
            source_of(unit)?;
            let markers: Vec<_> = child(unit, "seg-source")
                .map(|s| s.descendants().filter(is_seg).collect())
                .unwrap_or_default();
            let target = child(unit, "target");
            if markers.is_empty() {
                return Ok(vec![Part {
                    segment: None,
                    holder: unit,
                    source: source_of(unit)?,
                    target,
                    mrk: None,
                }]);
            }
            let targets: Vec<_> = target
                .map(|t| t.descendants().filter(is_seg).collect())
                .unwrap_or_default();
            Ok(markers
                .into_iter()
                .map(|m| {
                    let mid = m.attribute("mid");
                    let start = m.range().start;
                    Part {
                        segment: None,
                        holder: unit,
                        source: m,
                        target: targets.iter().copied().find(|t| t.attribute("mid") == mid),
                        mrk: Some(Mrk {
                            start_tag: text[start..inline::start_tag_end(text, start)].to_owned(),
                            target_element: target,
                        }),
                    }
                })
                .collect())
        }
    }
}

/// Whether `node` is the XLIFF element `name` (in namespace `ns`).
fn is_in(node: &roxmltree::Node<'_, '_>, name: &str, ns: Option<&str>) -> bool {
    node.is_element() && node.tag_name().name() == name && node.tag_name().namespace() == ns
}

/// The XLIFF 1.2 target state as quire's state, and whether it asks for
/// review (a machine's or an unchecked translation).
fn state_1(state: &str) -> (TextState, bool) {
    match state {
        "new" | "needs-translation" => (TextState::Initial, false),
        "translated" => (TextState::Translated, false),
        "signed-off" => (TextState::Reviewed, false),
        "final" => (TextState::Final, false),
        // needs-review-*, needs-adaptation, needs-l10n.
        _ => (TextState::Translated, true),
    }
}

/// quire's state as an XLIFF 1.2 target state.
fn state_to_1(filled: &Filled) -> &'static str {
    match filled.state {
        _ if filled.translation.is_none() => "needs-translation",
        TextState::Initial | TextState::Translated if filled.machine => "needs-review-translation",
        TextState::Initial | TextState::Translated => "translated",
        TextState::Reviewed => "signed-off",
        TextState::Final => "final",
    }
}

/// Whether `node`, or the nearest element above it that says, allows
/// translation (`translate="no"` does not).
fn translatable(node: roxmltree::Node<'_, '_>) -> bool {
    node.ancestors()
        .find_map(|n| n.attribute("translate"))
        .is_none_or(|t| t != "no")
}

/// The notes a unit's file gives it, `label: text`: its groups, names,
/// notes and (1.2) context.
fn notes_of(unit: roxmltree::Node<'_, '_>, ns: Option<&str>) -> Vec<String> {
    let mut notes = Vec::new();
    let groups: Vec<String> = unit
        .ancestors()
        .filter(|n| is_in(n, "group", ns))
        .filter_map(|g| {
            g.attribute("resname")
                .or(g.attribute("name"))
                .or(g.attribute("id"))
        })
        .map(str::to_owned)
        .collect();
    if !groups.is_empty() {
        let path: Vec<String> = groups.into_iter().rev().collect();
        notes.push(format!("group: {}", path.join(" / ")));
    }
    if let Some(name) = unit.attribute("resname").or(unit.attribute("name")) {
        notes.push(format!("name: {name}"));
    }
    for n in unit.descendants() {
        let text = || n.text().unwrap_or("").trim().to_owned();
        // A suggestion an export wrote is not the file's note.
        if n.ancestors().any(|a| notes::is_suggestion(a, ns)) {
            continue;
        }
        if is_in(&n, "note", ns) && !text().is_empty() {
            notes.push(format!("note: {}", text()));
        } else if is_in(&n, "context", ns) && !text().is_empty() {
            let kind = n.attribute("context-type").unwrap_or("context");
            notes.push(format!("context: {kind}: {}", text()));
        }
    }
    notes
}

/// The `subState` of a 2.0 segment whose translation a person has yet to
/// check (a PO entry's `fuzzy`, a machine's translation).
const NEEDS_REVIEW: &str = "quire:needs-review";

/// The id of a unit the file left without one: its place in its `<file>`
/// (from 1) and a digest of its source text, so the same file read again
/// names it the same.
fn synthesized_id(place: usize, unit: roxmltree::Node<'_, '_>, ns: Option<&str>) -> String {
    let source: String = unit
        .descendants()
        .filter(|n| is_in(n, "source", ns))
        .flat_map(|s| s.descendants().filter_map(|t| t.text()))
        .collect();
    let digest = quire_model::hash::BlobHash::of(source.as_bytes()).to_hex();
    format!("quire-{}-{}", place + 1, &digest[..8])
}

/// Every segment of an XLIFF 1.2 or 2.0 document, in order.
fn slots<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
    text: &str,
    version: Version,
    ns: Option<&str>,
) -> CoreResult<Vec<Slot<'a, 'i>>> {
    let root = doc.root_element();
    let unit_name = match version {
        Version::One => "trans-unit",
        Version::Two => "unit",
    };
    let mut out = Vec::new();
    let mut occurrences = std::collections::HashMap::new();
    // A quire export says where a machine's translation waits for review
    // (`subState`); a segment of one without it has none.
    let ours = root
        .children()
        .filter(|n| is_in(n, "file", ns))
        .chain([root])
        .any(|n| n.attribute((QUIRE, "export")).is_some());
    for (f, file) in root.children().filter(|n| is_in(n, "file", ns)).enumerate() {
        for (place, unit) in file
            .descendants()
            .filter(|n| is_in(n, unit_name, ns))
            .enumerate()
        {
            let at = || doc.text_pos_at(unit.range().start);
            // A unit without an id (XLIFF 1.1 monolingual files, some
            // extractors) is named by its place and source; the export
            // writes that id, so the file comes back by it.
            let made_id = unit
                .attribute("id")
                .is_none()
                .then(|| synthesized_id(place, unit, ns));
            let id = unit.attribute("id").or(made_id.as_deref()).unwrap_or("");
            // Ids repeat in some tools' files (PASSOLO numbers menu
            // entries per menu): the second one is `id@2`, and so on.
            let mut key = format!("{f}/{id}");
            let seen = occurrences.entry(key.clone()).or_insert(0usize);
            *seen += 1;
            if *seen > 1 {
                key = format!("{key}@{seen}");
            }
            let translate = translatable(unit);
            let notes = notes_of(unit, ns);
            let child = |parent: roxmltree::Node<'a, 'i>, name: &str| {
                parent.children().find(|n| is_in(n, name, ns))
            };
            let parts = parts_of(unit, version, ns, text)
                .map_err(|why| bad(format!("unit {id} {why} at {}", at())))?;
            let several = parts.len() > 1;
            for (i, part) in parts.into_iter().enumerate() {
                let Part {
                    segment,
                    holder,
                    source,
                    target,
                    mrk,
                } = part;
                let mut codes = Codes::default();
                let source_text = codes.read(source, text, ns);
                let target_text = target.map(|t| codes.read(t, text, ns));
                let element = mrk.as_ref().map_or(target, |m| m.target_element);
                let (state, machine) = match (version, segment) {
                    (Version::Two, Some(s)) => match s.attribute("state") {
                        Some(st) => {
                            let state = TextState::parse(st).ok_or_else(|| {
                                bad(format!(
                                    "unit {id}: unknown segment state `{st}` at {}",
                                    at()
                                ))
                            })?;
                            // A reviewer who marks it reviewed or final has
                            // checked it, whatever mark is left.
                            let waits = s.attribute("subState") == Some(NEEDS_REVIEW)
                                && state <= TextState::Translated;
                            (Some(state), (waits || ours).then_some(waits))
                        }
                        None => (None, None),
                    },
                    _ => {
                        let read = element.and_then(|t| t.attribute("state")).map(state_1);
                        let approved = unit.attribute("approved") == Some("yes");
                        match read {
                            Some((s, m)) if approved => (Some(s.max(TextState::Reviewed)), Some(m)),
                            Some((s, m)) => (Some(s), Some(m)),
                            None if approved && element.is_some() => {
                                (Some(TextState::Reviewed), Some(false))
                            }
                            None => (None, None),
                        }
                    }
                };
                let after = match version {
                    Version::One => child(holder, "seg-source").unwrap_or(source),
                    Version::Two => source,
                };
                let form = several.then(|| u32::try_from(i).unwrap_or(u32::MAX));
                out.push(Slot {
                    made_id: made_id.clone().filter(|_| i == 0),
                    name: if several {
                        format!("{id}#{}", i + 1)
                    } else {
                        id.to_owned()
                    },
                    key: key.clone(),
                    form,
                    unit,
                    segment,
                    after,
                    target,
                    source_text,
                    target_text,
                    codes,
                    state,
                    machine,
                    translate,
                    notes: notes.clone(),
                    mrk,
                });
            }
        }
    }
    Ok(out)
}

/// The units of an XLIFF 1.2 or 2.0 document for a merge, with its
/// languages and export id. Units of quire's own exports (`n<node id>`)
/// name their node; any other is matched by its key.
pub(super) fn parse(text: &str) -> CoreResult<Parsed> {
    let doc = crate::xml::parse(text).map_err(bad)?;
    let (version, ns) = version(&doc)?;
    let mut units = Vec::new();
    for slot in slots(&doc, text, version, ns)? {
        // As `document` reads a file: nothing to translate, no node.
        if !slot.translate || !inline::has_text(&slot.source_text) {
            continue;
        }
        let node = match (version, slot.form) {
            (Version::Two, None) => slot.unit.attribute("id").and_then(|id| {
                id.strip_prefix('n')
                    .and_then(|id| id.parse().ok())
                    .map(NodeId)
            }),
            _ => None,
        };
        units.push(Unit {
            id: slot.name,
            node,
            source: slot.source_text,
            target: slot.target_text,
            state: slot.state,
            machine: slot.machine,
            unmergeable: None,
            key: Some((slot.key, slot.form)),
        });
    }
    if units.is_empty() {
        return Err(bad("it has no translatable unit"));
    }
    let (language, source_language) = languages(&doc, version, ns);
    let export = doc
        .descendants()
        .filter(|n| is_in(n, "file", ns) || is_in(n, "xliff", ns))
        .find_map(|n| n.attribute((QUIRE, "export")))
        .map(str::to_owned);
    Ok(Parsed {
        units,
        language,
        source_language,
        export,
    })
}

/// The target and source languages a document declares.
fn languages(
    doc: &roxmltree::Document<'_>,
    version: Version,
    ns: Option<&str>,
) -> (Option<String>, Option<String>) {
    let root = doc.root_element();
    let attribute = |node: Option<roxmltree::Node<'_, '_>>, name: &str| {
        node.and_then(|n| n.attribute(name))
            .filter(|v| !v.trim().is_empty())
            .map(str::to_owned)
    };
    match version {
        Version::Two => (
            attribute(Some(root), "trgLang"),
            attribute(Some(root), "srcLang"),
        ),
        Version::One => {
            let file = root.children().find(|n| is_in(n, "file", ns));
            (
                attribute(file, "target-language"),
                attribute(file, "source-language"),
            )
        }
    }
}

/// An XLIFF 1.2 or 2.0 document from any tool read whole, to make a page
/// of: a unit per segment (keyed by the file's place and the unit's id),
/// inline codes as numbered tags, groups, names, notes and contexts as
/// notes, states from 1.2's `state`/`approved` or 2.0's `state`. Units
/// marked `translate="no"` are counted, not read.
pub(super) fn document(text: &str) -> CoreResult<Document> {
    let doc = crate::xml::parse(text).map_err(bad)?;
    let (version, ns) = version(&doc)?;
    let mut out = Document {
        kind: match version {
            Version::One => "XLIFF 1.2",
            Version::Two => "XLIFF 2.0",
        },
        ..Document::default()
    };
    for slot in slots(&doc, text, version, ns)? {
        if !slot.translate {
            out.locked += 1;
            continue;
        }
        // Codes and spaces only: nothing to translate, left as it is.
        if !inline::has_text(&slot.source_text) {
            continue;
        }
        let target = slot.target_text.filter(|t| !t.is_empty());
        out.units.push(DocUnit {
            entry: quire_model::scene::Entry {
                key: slot.key,
                form: slot.form,
                notes: slot.notes,
            },
            source: slot.source_text,
            machine: slot.machine == Some(true) && target.is_some(),
            state: slot.state.filter(|_| target.is_some()),
            target,
        });
    }
    if out.units.is_empty() {
        return Err(bad("it has no unit to translate"));
    }
    let (language, source_language) = languages(&doc, version, ns);
    out.language = language;
    out.source_language = source_language;
    Ok(out)
}
