//! Writing a translator's own XLIFF file back: the targets and states
//! quire has written into the file as it came, everything else byte for
//! byte.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use super::*;

/// Segment markers to add, by the target (or the place for one) they go
/// in: the target element if there is one, where a target goes, and the
/// markers.
type Missing<'a, 'i> = BTreeMap<usize, (Option<roxmltree::Node<'a, 'i>>, usize, Vec<String>)>;
/// The least state of each segmented unit's segments, by where its target
/// is (or is to be made).
type Lowest<'a, 'i> = HashMap<usize, (Option<roxmltree::Node<'a, 'i>>, Filled)>;

/// `<target>`'s name as the file writes its XLIFF elements: with the
/// prefix `sibling` (a `<source>`) has, if any (`xlf:target`).
fn target_name(original: &str, sibling: roxmltree::Node<'_, '_>) -> String {
    let start = sibling.range().start;
    let tag = &original[start..inline::start_tag_end(original, start)];
    match inline::qname(tag).split_once(':') {
        Some((prefix, _)) => format!("{prefix}:target"),
        None => "target".to_owned(),
    }
}

/// `element` (of the document `original`) written again with `content`:
/// its start tag as written (an empty element opened up; `state` set when
/// given), then its end tag.
fn whole_element(
    original: &str,
    element: roxmltree::Node<'_, '_>,
    state: Option<&str>,
    content: &str,
) -> String {
    let start = element.range().start;
    let mut tag = original[start..inline::start_tag_end(original, start)].to_owned();
    if let Some(open) = tag.strip_suffix("/>") {
        tag = format!("{}>", open.trim_end());
    }
    if let Some(state) = state {
        tag = set_attribute(&tag, "state", state);
    }
    let qname = inline::qname(&tag).to_owned();
    format!("{tag}{content}</{qname}>")
}

/// `tag` (a start tag as written) with attribute `name` set to `value`:
/// its value replaced where it has one, else added at the end.
fn set_attribute(tag: &str, name: &str, value: &str) -> String {
    let value = xml_attribute(value);
    let b = tag.as_bytes();
    let space = |i: usize| b.get(i).is_some_and(u8::is_ascii_whitespace);
    let mut i = 1;
    while i < b.len() && !space(i) && b[i] != b'>' && b[i] != b'/' {
        i += 1;
    }
    loop {
        while space(i) {
            i += 1;
        }
        if i >= b.len() || b[i] == b'>' || b[i] == b'/' {
            break;
        }
        let start = i;
        while i < b.len() && b[i] != b'=' && !space(i) {
            i += 1;
        }
        let attribute = &tag[start..i];
        while space(i) || b.get(i) == Some(&b'=') {
            i += 1;
        }
        let Some(&quote) = b.get(i) else { break };
        let from = i + 1;
        let Some(len) = tag[from..].find(char::from(quote)) else {
            break;
        };
        if attribute == name {
            return format!("{}{value}{}", &tag[..from], &tag[from + len..]);
        }
        i = from + len + 1;
    }
    let close = if tag.ends_with("/>") {
        tag.len() - 2
    } else {
        tag.len().saturating_sub(1)
    };
    format!(
        "{} {name}=\"{value}\"{}",
        tag[..close].trim_end(),
        &tag[close..]
    )
}

/// `original` (an XLIFF 1.2 or 2.0 document's text) with each segment
/// `fill` gives written into it: the target element replaced or added
/// (its codes as the source wrote them), its state (1.2: the target's
/// `state` and the unit's `approved`; 2.0: the segment's `state`), the
/// export id on the first `<file>` in quire's namespace and the project's
/// languages. Everything else stays byte for byte; the declaration says
/// UTF-8, which the text is written in.
pub(crate) fn write_back(
    original: &str,
    fill: Fill<'_>,
    export: Option<&str>,
    languages: Languages<'_>,
) -> CoreResult<String> {
    let doc = crate::xml::parse(original).map_err(bad)?;
    let (version, ns) = version(&doc)?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    // Attributes to set on start tags, by where the tag starts.
    let mut attributes: BTreeMap<usize, Vec<(String, String)>> = BTreeMap::new();
    // Segment markers to add, by the target (or the place for one) they
    // go in.
    let mut missing: Missing<'_, '_> = BTreeMap::new();
    // The least state of the segments of each segmented unit's target (by
    // where the target is, or is to be made).
    let mut lowest: Lowest<'_, '_> = HashMap::new();
    // The name a target made there is written with (the file's prefix).
    let mut target_names: HashMap<usize, String> = HashMap::new();
    let mut set = |node: roxmltree::Node<'_, '_>, name: &str, value: &str| {
        attributes
            .entry(node.range().start)
            .or_default()
            .push((name.to_owned(), value.to_owned()));
    };
    for slot in slots(&doc, original, version, ns)? {
        if let Some(id) = &slot.made_id {
            set(slot.unit, "id", id);
        }
        let Some(filled) = slot.translate.then(|| fill(&slot.key, slot.form)).flatten() else {
            continue;
        };
        // A unit's suggestions go with its first segment.
        if slot.form.unwrap_or(0) == 0 {
            let two = version == Version::Two;
            let open = &filled.suggestions;
            edits.extend(notes::edits(original, slot.unit, two, ns, open));
        }
        // A segment that says what the file says is left as written.
        let was = slot.target_text.clone().filter(|t| !t.is_empty());
        let was_state = slot
            .state
            .unwrap_or_else(|| TextState::inferred(was.as_deref()));
        let was_machine = slot.machine == Some(true) && was.is_some();
        if filled.translation == was && filled.state == was_state && filled.machine == was_machine {
            continue;
        }
        let content = slot
            .codes
            .write(filled.translation.as_deref().unwrap_or(""), &xliff_content);
        let state = match version {
            Version::One => Some(state_to_1(&filled)),
            Version::Two => None,
        };
        // A segment marker of a segmented unit: its content replaced, or
        // a marker added to the unit's target (made when it has none).
        // The unit's state and approval stay as the file has them.
        if let Some(mrk) = &slot.mrk {
            // The target's state: the least of its segments'.
            let place = mrk
                .target_element
                .map_or(slot.after.range().end, |t| t.range().start);
            let least = lowest
                .entry(place)
                .or_insert((mrk.target_element, filled.clone()));
            if (filled.state, !filled.machine) < (least.1.state, !least.1.machine)
                || filled.translation.is_none()
            {
                least.1 = filled.clone();
            }
            let written = match slot.target {
                Some(target) => whole_element(original, target, None, &content),
                None => format!(
                    "{}{content}</{}>",
                    mrk.start_tag,
                    inline::qname(&mrk.start_tag)
                ),
            };
            match (slot.target, mrk.target_element) {
                (Some(target), _) => edits.push((target.range(), written)),
                (None, Some(element)) => missing
                    .entry(element.range().start)
                    .or_insert_with(|| (Some(element), slot.after.range().end, Vec::new()))
                    .2
                    .push(written),
                (None, None) => missing
                    .entry(slot.after.range().end)
                    .or_insert_with(|| (None, slot.after.range().end, Vec::new()))
                    .2
                    .push(written),
            }
            if mrk.target_element.is_none() {
                target_names.insert(slot.after.range().end, target_name(original, slot.after));
            }
            continue;
        }
        match slot.target {
            Some(target) => {
                edits.push((
                    target.range(),
                    whole_element(original, target, state, &content),
                ));
            }
            None if filled.translation.is_some() => {
                let at = slot.after.range().end;
                let target = target_name(original, slot.after);
                let open = match state {
                    Some(state) => format!("<{target} state=\"{state}\">"),
                    None => format!("<{target}>"),
                };
                edits.push((at..at, format!("{open}{content}</{target}>")));
            }
            None => {}
        }
        for (node, name, value) in state_attributes(version, &slot, &filled) {
            set(node, name, value);
        }
    }
    for (element, least) in lowest.values() {
        if let Some(element) = element {
            set(*element, "state", state_to_1(least));
        }
    }
    edits.extend(lacked_markers(original, missing, &target_names, &lowest));
    for (node, name, value) in file_attributes(&doc, ns, version, export, languages) {
        set(node, &name, &value);
    }
    for (start, values) in attributes {
        let end = inline::start_tag_end(original, start);
        let tag = values
            .iter()
            .fold(original[start..end].to_owned(), |tag, (name, value)| {
                set_attribute(&tag, name, value)
            });
        edits.push((start..end, tag));
    }
    edits.extend(utf8_declaration(original));
    splice(original, edits)
}

/// The attributes that say a filled segment's state: 2.0's `state` (and
/// `subState` while a machine's translation waits for review) on the
/// segment; 1.2's `approved` on the unit.
fn state_attributes<'a, 'i>(
    version: Version,
    slot: &Slot<'a, 'i>,
    filled: &Filled,
) -> Vec<(roxmltree::Node<'a, 'i>, &'static str, &'static str)> {
    let translated = filled.translation.is_some();
    match (version, slot.segment) {
        (Version::Two, Some(segment)) => {
            let state = if translated {
                filled.state.max(TextState::Translated)
            } else {
                TextState::Initial
            };
            let mut out = vec![(segment, "state", state.as_str())];
            if filled.machine && translated {
                out.push((segment, "subState", NEEDS_REVIEW));
            }
            out
        }
        _ if translated && filled.state >= TextState::Reviewed => {
            vec![(slot.unit, "approved", "yes")]
        }
        _ if slot.unit.attribute("approved").is_some() => vec![(slot.unit, "approved", "no")],
        _ => Vec::new(),
    }
}

/// What the file's root and `<file>`s get: the export id in quire's
/// namespace on the first (declared when the file lacks it), and the
/// project's languages where the file names others or none (1.x: each
/// `<file>`'s `source-language` and `target-language`; 2.0: the root's
/// `srcLang` and `trgLang`).
fn file_attributes<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
    ns: Option<&str>,
    version: Version,
    export: Option<&str>,
    languages: Languages<'_>,
) -> Vec<(roxmltree::Node<'a, 'i>, String, String)> {
    let mut out = Vec::new();
    let root = doc.root_element();
    let mut language = |node: roxmltree::Node<'a, 'i>, name: &str, tag: Option<&str>| {
        if let Some(tag) = tag
            && !node
                .attribute(name)
                .is_some_and(|file| Languages::names(file, tag))
        {
            out.push((node, name.to_owned(), tag.to_owned()));
        }
    };
    match version {
        Version::One => {
            for file in root.children().filter(|n| is_in(n, "file", ns)) {
                language(file, "source-language", languages.source);
                language(file, "target-language", languages.target);
            }
        }
        Version::Two => {
            language(root, "srcLang", languages.source);
            language(root, "trgLang", languages.target);
        }
    }
    if let (Some(export), Some(file)) = (export, root.children().find(|n| is_in(n, "file", ns))) {
        let prefix = match file.lookup_prefix(QUIRE) {
            Some(p) if !p.is_empty() => p.to_owned(),
            _ => {
                out.push((file, "xmlns:quire".to_owned(), QUIRE.to_owned()));
                "quire".to_owned()
            }
        };
        out.push((file, format!("{prefix}:export"), export.to_owned()));
    }
    out
}

/// Markers a segmented unit's target lacked: put inside it (a `<target/>`
/// opened up), or a target made for them after the `<seg-source>`.
fn lacked_markers(
    original: &str,
    missing: Missing<'_, '_>,
    target_names: &HashMap<usize, String>,
    lowest: &Lowest<'_, '_>,
) -> Vec<(Range<usize>, String)> {
    let mut out = Vec::new();
    for (element, at, markers) in missing.into_values() {
        let markers = markers.concat();
        match element {
            Some(t) if original[t.range()].ends_with("/>") => {
                out.push((t.range(), whole_element(original, t, None, &markers)));
            }
            Some(t) => {
                let end = t.range().start + original[t.range()].rfind("</").unwrap_or(0);
                out.push((end..end, markers));
            }
            None => {
                let target = target_names
                    .get(&at)
                    .cloned()
                    .unwrap_or_else(|| "target".to_owned());
                let state = lowest.get(&at).map_or("translated", |(_, f)| state_to_1(f));
                out.push((
                    at..at,
                    format!("<{target} state=\"{state}\">{markers}</{target}>"),
                ));
            }
        }
    }
    out
}

/// The declaration made to name UTF-8, the encoding written, when it
/// names another.
fn utf8_declaration(original: &str) -> Option<(Range<usize>, String)> {
    let end = original.strip_prefix("<?xml").and(original.find("?>"))?;
    let declaration = &original[..end + 2];
    let utf8 = ["\"utf-8\"", "'utf-8'"]
        .iter()
        .any(|u| declaration.to_ascii_lowercase().contains(u));
    (declaration.contains("encoding") && !utf8)
        .then(|| (0..end + 2, set_attribute(declaration, "encoding", "UTF-8")))
}

/// `original` with each edit's range replaced by its text.
fn splice(original: &str, mut edits: Vec<(Range<usize>, String)>) -> CoreResult<String> {
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(original.len() + original.len() / 2);
    let mut last = 0;
    for (range, text) in edits {
        if range.start < last {
            return Err(CoreError::internal(format!(
                "XLIFF write-back: overlapping edits at {}",
                range.start
            )));
        }
        out.push_str(&original[last..range.start]);
        out.push_str(&text);
        last = range.end;
    }
    out.push_str(&original[last..]);
    Ok(out)
}
