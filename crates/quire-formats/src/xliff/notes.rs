//! What a unit's notes say. A fresh 2.0 export writes where each node
//! is, its cue's timing and what its file's entry said ([`unit_notes`]).
//!
//! Open suggestions (spec 10, "Suggestions") go in as well: a 2.0 unit's
//! `<note category="suggestion">` with the author and votes in quire's
//! namespace, a 1.2 unit's `<alt-trans origin="suggestion">` with the
//! text as its `<target>`. Exports write them; reading never takes them
//! as a translation or a note, and writing a file back replaces those an
//! earlier export wrote, so round trips do not pile them up.

use std::ops::Range;

use quick_xml::Writer;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event as Xml};

use super::{QUIRE, element, is_in, xml_attribute, xml_char, xml_err};
use crate::inline;
use quire_model::error::CoreResult;
use quire_model::scene::NodeKind;
use quire_model::suggestion::{Suggestion, ranked};

/// The note category (2.0) and `alt-trans` origin (1.2) of a suggestion.
pub(super) const SUGGESTION: &str = "suggestion";

/// Who proposed it, as the file names them.
fn author(s: &Suggestion) -> &str {
    s.author().unwrap_or("a person")
}

/// `text` with the characters XML cannot hold replaced (U+FFFD).
fn xml_text(text: &str) -> String {
    text.chars()
        .map(|c| if xml_char(c) { c } else { '\u{FFFD}' })
        .collect()
}

/// A 2.0 suggestion note's start tag and text (unescaped).
pub(super) fn note(s: &Suggestion) -> (BytesStart<'static>, String) {
    let votes = s.score().to_string();
    let attributes = [
        ("category", SUGGESTION),
        ("quire:author", author(s)),
        ("quire:votes", votes.as_str()),
    ];
    (element("note", &attributes).into_owned(), xml_text(&s.text))
}

/// Escapes text content.
fn escaped(text: &str) -> String {
    xml_text(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A 2.0 suggestion note as markup, declaring quire's namespace itself
/// (written into a file as it came).
pub(super) fn note_markup(s: &Suggestion) -> String {
    format!(
        "<note category=\"{SUGGESTION}\" xmlns:quire=\"{QUIRE}\" quire:author=\"{}\" \
         quire:votes=\"{}\">{}</note>",
        xml_attribute(author(s)),
        s.score(),
        escaped(&s.text)
    )
}

/// A 1.2 suggestion as markup: an `<alt-trans>` whose `<target>` is the
/// text, the author and votes in a note.
pub(super) fn alt_trans_markup(s: &Suggestion, prefix: &str) -> String {
    let votes = s.score();
    let unit = if votes.abs() == 1 { "vote" } else { "votes" };
    format!(
        "<{prefix}alt-trans origin=\"{SUGGESTION}\"><{prefix}target>{}</{prefix}target>\
         <{prefix}note from=\"{}\">suggestion by {} ({votes} {unit})</{prefix}note></{prefix}alt-trans>",
        escaped(&s.text),
        xml_attribute(author(s)),
        escaped(author(s)),
    )
}

/// Whether `n` is a suggestion an export wrote: a 2.0 note of category
/// `suggestion`, a 1.2 `<alt-trans origin="suggestion">`.
pub(super) fn is_suggestion(n: roxmltree::Node<'_, '_>, ns: Option<&str>) -> bool {
    (is_in(&n, "note", ns) && n.attribute("category") == Some(SUGGESTION))
        || (is_in(&n, "alt-trans", ns) && n.attribute("origin") == Some(SUGGESTION))
}

/// `prefix:` of `element`'s name as the file writes it (empty without
/// one).
fn prefix_of(original: &str, element: roxmltree::Node<'_, '_>) -> String {
    let start = element.range().start;
    let tag = &original[start..inline::start_tag_end(original, start)];
    match inline::qname(tag).split_once(':') {
        Some((prefix, _)) => format!("{prefix}:"),
        None => String::new(),
    }
}

/// Where `element`'s end tag starts (`None` for an empty element).
fn end_tag(original: &str, element: roxmltree::Node<'_, '_>) -> Option<usize> {
    let range = element.range();
    let text = &original[range.clone()];
    if text.ends_with("/>") {
        return None;
    }
    text.rfind("</").map(|at| range.start + at)
}

/// The edits that make `unit` (written back into `original`) carry
/// `open` as its suggestions: those an earlier export wrote removed, the
/// open ones added (2.0: in its `<notes>`, made before its first segment
/// when it has none; 1.2: at its end).
pub(super) fn edits(
    original: &str,
    unit: roxmltree::Node<'_, '_>,
    two: bool,
    ns: Option<&str>,
    open: &[Suggestion],
) -> Vec<(Range<usize>, String)> {
    let mut edits = Vec::new();
    let prefix = prefix_of(original, unit);
    if !two {
        for old in unit.children().filter(|c| is_suggestion(*c, ns)) {
            edits.push((old.range(), String::new()));
        }
        if let Some(at) = end_tag(original, unit).filter(|_| !open.is_empty()) {
            let markup: String = open.iter().map(|s| alt_trans_markup(s, &prefix)).collect();
            edits.push((at..at, markup));
        }
        return edits;
    }
    let markup: String = open.iter().map(note_markup).collect();
    let notes = unit.children().find(|c| is_in(c, "notes", ns));
    if let Some(notes) = notes {
        let all: Vec<_> = notes.children().filter(|c| c.is_element()).collect();
        let old: Vec<_> = all.iter().filter(|c| is_suggestion(**c, ns)).collect();
        // Notes of nothing but suggestions, and none open now: they go
        // whole (a `<notes>` must hold a note).
        if open.is_empty() && !old.is_empty() && old.len() == all.len() {
            return vec![(notes.range(), String::new())];
        }
        edits.extend(old.iter().map(|n| (n.range(), String::new())));
        if let Some(at) = end_tag(original, notes).filter(|_| !open.is_empty()) {
            edits.push((at..at, markup));
        }
        return edits;
    }
    let first = unit
        .children()
        .find(|c| is_in(c, "segment", ns) || is_in(c, "ignorable", ns));
    if let Some(first) = first.filter(|_| !open.is_empty()) {
        let at = first.range().start;
        edits.push((at..at, format!("<{prefix}notes>{markup}</{prefix}notes>")));
    }
    edits
}

/// A unit's `<notes>`: where its node is, its cue's timing, what its
/// file's entry said, and its open suggestions.
pub(super) fn unit_notes(
    w: &mut Writer<Vec<u8>>,
    page: &quire_model::scene::Page,
    node: &quire_model::scene::Node,
) -> CoreResult<()> {
    w.write_event(Xml::Start(BytesStart::new("notes")))
        .map_err(xml_err)?;
    let timing = match &node.kind {
        NodeKind::Text {
            timing: Some(t), ..
        } => Some(("timing", crate::subtitles::format_timing(t))),
        _ => None,
    };
    let notes = [("page", page.id.to_string()), ("node", node.id.to_string())];
    let entry = match &node.kind {
        NodeKind::Text {
            entry: Some(entry), ..
        } => entry_notes(entry),
        _ => Vec::new(),
    };
    for (category, value) in notes.into_iter().chain(timing).chain(entry) {
        let note = element("note", &[("category", category)]);
        w.write_event(Xml::Start(note)).map_err(xml_err)?;
        w.write_event(Xml::Text(BytesText::new(&value)))
            .map_err(xml_err)?;
        w.write_event(Xml::End(BytesEnd::new("note")))
            .map_err(xml_err)?;
    }
    if let NodeKind::Text { suggestions, .. } = &node.kind {
        for suggestion in ranked(suggestions) {
            let (start, text) = note(suggestion);
            w.write_event(Xml::Start(start)).map_err(xml_err)?;
            w.write_event(Xml::Text(BytesText::new(&text)))
                .map_err(xml_err)?;
            w.write_event(Xml::End(BytesEnd::new("note")))
                .map_err(xml_err)?;
        }
    }
    w.write_event(Xml::End(BytesEnd::new("notes")))
        .map_err(xml_err)?;
    Ok(())
}

/// What a file's entry said of a segment, as XLIFF 2.0 notes by category:
/// a PO entry's `msgctxt` (`context`), flags (`flags`), translator
/// comments (`translator`), extracted comments (`developer`) and
/// references (`location`), as a PO editor shows them; other labels as
/// they are.
fn entry_notes(entry: &quire_model::scene::Entry) -> Vec<(&str, String)> {
    entry
        .notes
        .iter()
        .filter_map(|note| {
            let (label, text) = note.split_once(": ")?;
            let category = match label {
                "comment" => "translator",
                "note" => "developer",
                "references" => "location",
                other => other,
            };
            Some((category, text.to_owned()))
        })
        .collect()
}
