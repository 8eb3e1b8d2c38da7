//! gettext PO, both ways.
//!
//! Export: a header (`Language:` from the project, UTF-8), then an entry per
//! text node with a source: `msgctxt` the node id, `msgid` the source,
//! `msgstr` the translation (empty when there is none), the page's name as
//! an extracted comment (`#. page: …`, and `#. timing: …` for a subtitle
//! cue), and `#, fuzzy` when an engine wrote
//! the translation and nobody has reviewed it.
//!
//! Import reads such a file into units for [`crate::units`] to merge
//! by `msgctxt`: `fuzzy` means a machine's translation, no `fuzzy` a
//! person's. An entry with plural forms is read and reported, not merged
//! (a text node holds one translation). The parser is small and strict: a
//! file it cannot read is refused with the line that is wrong.

use std::fmt::Write as _;

use crate::units::{DocUnit, Document, Fill, Filled, Languages, Parsed, Unit};
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::NodeId;
use quire_model::scene::{NodeKind, Scene};
use quire_model::suggestion::{Suggestion, ranked};

mod write_back;
pub(super) use write_back::write_back;

/// The header that names the quire export a file came from.
const EXPORT_HEADER: &str = "X-Quire-Export";
/// Poedit's header for the language a catalog translates from.
const SOURCE_LANGUAGE_HEADER: &str = "X-Source-Language";

/// A PO string's body, escaped as gettext does (`\\`, `\"`, `\n`, `\t`,
/// `\r` and the other C escapes).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_control() && u32::from(c) < 0x80 => {
                let _ = write!(out, "\\{:03o}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// The widest line `msgcat` writes.
const WIDTH: usize = 79;

/// `keyword "…"` as `msgcat` writes it: on one line when it fits in
/// [`WIDTH`] columns and has no line break inside; else an empty first
/// string, then the text split after each line break and wrapped after
/// spaces so that each quoted line fits.
fn field(out: &mut String, keyword: &str, value: &str) {
    let escaped = escape(value);
    let inner_break = value.trim_end_matches('\n').contains('\n');
    if !inner_break && keyword.chars().count() + escaped.chars().count() + 3 <= WIDTH {
        let _ = writeln!(out, "{keyword} \"{escaped}\"");
        return;
    }
    let _ = writeln!(out, "{keyword} \"\"");
    for line in value.split_inclusive('\n') {
        let mut current = String::new();
        for word in escape(line).split_inclusive(' ') {
            if !current.is_empty() && current.chars().count() + word.chars().count() + 2 > WIDTH {
                let _ = writeln!(out, "\"{current}\"");
                current.clear();
            }
            current.push_str(word);
        }
        let _ = writeln!(out, "\"{current}\"");
    }
}

/// A comment's text on one line (a newline would end the comment).
fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

/// How a suggestion's translator comment starts.
const SUGGESTION_BY: &str = "# suggestion by ";

/// An open suggestion as a translator comment (spec 10, "Suggestions"):
/// `# suggestion by NAME (N votes): TEXT`, its line breaks as `\n`.
fn suggestion_comment(s: &Suggestion) -> String {
    let votes = s.score();
    let unit = if votes.abs() == 1 { "vote" } else { "votes" };
    let text = s.text.replace('\r', "").replace('\n', "\\n");
    format!(
        "{SUGGESTION_BY}{} ({votes} {unit}): {text}",
        one_line(s.author().unwrap_or("a person"))
    )
}

/// Whether a comment line is one [`suggestion_comment`] wrote: never read
/// as a note, and replaced when the file is written back.
fn is_suggestion_comment(comment: &str) -> bool {
    comment.starts_with(SUGGESTION_BY)
}

/// The scene (or the pages kept in it) as a PO file; `export_id`, when
/// given, goes in the `X-Quire-Export` header.
pub fn export(scene: &Scene, target_language: Option<&str>, export_id: Option<&str>) -> String {
    let language = target_language
        .or(scene.project.target_language.as_deref())
        .map(crate::units::gettext_locale)
        .unwrap_or_default();
    let source = scene.project.source_language.as_deref();
    let mut out = String::new();
    let _ = writeln!(out, "# {}", one_line(&scene.project.name));
    out.push_str("msgid \"\"\nmsgstr \"\"\n");
    for line in [
        format!("Project-Id-Version: {}\n", one_line(&scene.project.name)),
        format!("Language: {language}\n"),
        "MIME-Version: 1.0\n".to_owned(),
        "Content-Type: text/plain; charset=UTF-8\n".to_owned(),
        "Content-Transfer-Encoding: 8bit\n".to_owned(),
        format!("X-Generator: quire {}\n", env!("CARGO_PKG_VERSION")),
    ]
    .into_iter()
    .chain(source.map(|tag| {
        format!(
            "{SOURCE_LANGUAGE_HEADER}: {}\n",
            crate::units::gettext_locale(tag)
        )
    }))
    .chain(export_id.map(|id| format!("{EXPORT_HEADER}: {}\n", one_line(id))))
    {
        let _ = writeln!(out, "\"{}\"", escape(&line));
    }
    for page in &scene.pages {
        for node in &page.nodes {
            let NodeKind::Text {
                text: Some(text),
                translation,
                timing,
                suggestions,
                ..
            } = &node.kind
            else {
                continue;
            };
            // An empty msgid is the header's; there is nothing to translate.
            if text.is_empty() {
                continue;
            }
            out.push('\n');
            for suggestion in ranked(suggestions) {
                out.push_str(&suggestion_comment(suggestion));
                out.push('\n');
            }
            let _ = writeln!(out, "#. page: {}", one_line(&page.name));
            if let Some(t) = timing {
                let _ = writeln!(out, "#. timing: {}", crate::subtitles::format_timing(t));
            }
            // Unreviewed machine work, or a source changed since the
            // translation: gettext's "check this one".
            if node.kind.is_machine_work() || node.kind.source_changed() {
                out.push_str("#, fuzzy\n");
            }
            field(&mut out, "msgctxt", &node.id.to_string());
            field(&mut out, "msgid", text);
            field(&mut out, "msgstr", translation.as_deref().unwrap_or(""));
        }
    }
    out
}

fn bad(line: usize, message: impl std::fmt::Display) -> CoreError {
    CoreError::InvalidInput(format!(
        "not a PO file quire can read: line {line}: {message}"
    ))
}

/// The body of a quoted PO string (`"…"`), unescaped.
fn unquote(s: &str, line: usize) -> CoreResult<String> {
    let s = s.trim();
    let Some(inner) = s.strip_prefix('"') else {
        return Err(bad(line, "a string must start with \""));
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    loop {
        match chars.next() {
            None => return Err(bad(line, "the string is not closed (a \" is missing)")),
            Some('"') => {
                let rest: String = chars.collect();
                if !rest.trim().is_empty() {
                    return Err(bad(
                        line,
                        format!("text after the closing quote: `{}`", rest.trim()),
                    ));
                }
                return Ok(out);
            }
            Some('\\') => {
                let c = match chars.next() {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('r') => '\r',
                    Some('a') => '\u{7}',
                    Some('b') => '\u{8}',
                    Some('v') => '\u{b}',
                    Some('f') => '\u{c}',
                    Some(c @ ('\\' | '"' | '\'' | '?')) => c,
                    Some(d @ '0'..='7') => {
                        let mut value = d.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            let mut peek = chars.clone();
                            match peek.next().and_then(|c| c.to_digit(8)) {
                                Some(v) => {
                                    value = value * 8 + v;
                                    chars = peek;
                                }
                                None => break,
                            }
                        }
                        char::from_u32(value)
                            .ok_or_else(|| bad(line, format!("\\{value:o} is not a character")))?
                    }
                    Some(other) => {
                        return Err(bad(line, format!("unknown escape `\\{other}`")));
                    }
                    None => return Err(bad(line, "the string ends in a lone \\")),
                };
                out.push(c);
            }
            Some(c) => out.push(c),
        }
    }
}

/// Which string a continuation line adds to.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    Context,
    Id,
    Plural,
    Str,
}

/// One entry as it is read: its strings, and its comment lines as
/// written.
#[derive(Default)]
struct Entry {
    /// The line it starts on.
    line: usize,
    /// Its lines as the file has them, written back when nothing in it
    /// changes.
    raw: Vec<String>,
    comments: Vec<String>,
    context: Option<String>,
    id: Option<String>,
    plural: Option<String>,
    strs: Vec<String>,
}

impl Entry {
    fn is_empty(&self) -> bool {
        self.context.is_none() && self.id.is_none() && self.strs.is_empty()
    }

    fn is_header(&self) -> bool {
        self.context.is_none() && self.id.as_deref() == Some("")
    }

    fn flags(&self) -> impl Iterator<Item = &str> {
        self.comments
            .iter()
            .filter_map(|c| c.strip_prefix("#,"))
            .flat_map(|f| f.split(','))
            .map(str::trim)
            .filter(|f| !f.is_empty())
    }

    fn fuzzy(&self) -> bool {
        self.flags().any(|f| f == "fuzzy")
    }

    /// `msgctxt` and `msgid` joined by U+0004, as gettext keys a catalog.
    fn key(&self) -> String {
        let id = self.id.as_deref().unwrap_or("");
        match &self.context {
            Some(context) => format!("{context}\u{4}{id}"),
            None => id.to_owned(),
        }
    }

    /// How many `msgstr[n]` a plural entry has, at least `nplurals`.
    fn forms(&self, nplurals: Option<usize>) -> usize {
        self.strs.len().max(nplurals.unwrap_or(0))
    }

    /// What the comments say, for a translator to read: `label: text`.
    fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .context
            .iter()
            .map(|c| format!("context: {c}"))
            .collect();
        let mut references = Vec::new();
        for comment in &self.comments {
            let (label, rest) = match comment.get(..2) {
                Some("#.") => ("note", &comment[2..]),
                Some("#:") => {
                    references.push(comment[2..].trim());
                    continue;
                }
                Some("#|") => ("previous", &comment[2..]),
                Some("#," | "#~") => continue,
                _ if is_suggestion_comment(comment) => continue,
                _ => ("comment", &comment[1..]),
            };
            if !rest.trim().is_empty() {
                notes.push(format!("{label}: {}", rest.trim()));
            }
        }
        if !references.is_empty() {
            notes.push(format!("references: {}", references.join(" ")));
        }
        let flags: Vec<&str> = self.flags().filter(|f| *f != "fuzzy").collect();
        if !flags.is_empty() {
            notes.push(format!("flags: {}", flags.join(", ")));
        }
        notes
    }
}

/// A PO file's parts in order: its entries, and what is kept as written
/// (obsolete `#~` entries, comments after the last entry).
enum Block {
    Entry(Entry),
    Kept(Vec<String>),
}

/// A PO file read whole.
struct Catalog {
    blocks: Vec<Block>,
    last_line: usize,
}

impl Catalog {
    fn header(&self) -> Option<&Entry> {
        self.blocks.iter().find_map(|b| match b {
            Block::Entry(e) if e.is_header() => Some(e),
            _ => None,
        })
    }

    /// A header field's value (`Language`), when it has one.
    fn header_field(&self, name: &str) -> Option<String> {
        let header = self.header()?;
        header.strs.first()?.lines().find_map(|l| {
            let value = l.strip_prefix(name)?.strip_prefix(':')?.trim();
            (!value.is_empty()).then(|| value.to_owned())
        })
    }

    /// The languages the header names (target, source), as BCP 47 tags:
    /// `Language` and Poedit's `X-Source-Language`.
    fn languages(&self) -> (Option<String>, Option<String>) {
        let tag = |name: &str| {
            self.header_field(name)
                .and_then(|l| crate::units::locale_tag(&l))
        };
        (tag("Language"), tag(SOURCE_LANGUAGE_HEADER))
    }

    /// The entries but the header.
    fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Entry(e) if !e.is_header() => Some(e),
            _ => None,
        })
    }

    /// `nplurals` of the `Plural-Forms` header.
    fn nplurals(&self) -> Option<usize> {
        let forms = self.header_field("Plural-Forms")?;
        let n = forms.split("nplurals=").nth(1)?;
        n.trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
            .filter(|n| (1..=16).contains(n))
    }
}

/// A PO file's entries and what it keeps as written.
fn read(text: &str) -> CoreResult<Catalog> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut blocks: Vec<Block> = Vec::new();
    let mut entry = Entry::default();
    let mut obsolete: Vec<String> = Vec::new();
    let mut current: Option<Field> = None;
    let finish = |blocks: &mut Vec<Block>, entry: &mut Entry, line: usize| -> CoreResult<()> {
        let done = std::mem::take(entry);
        if done.is_empty() {
            if !done.comments.is_empty() {
                blocks.push(Block::Kept(done.comments));
            }
            return Ok(());
        }
        if done.id.is_none() {
            return Err(bad(done.line, "an entry without msgid"));
        }
        if done.strs.is_empty() {
            return Err(bad(line, "an entry without msgstr"));
        }
        blocks.push(Block::Entry(done));
        Ok(())
    };
    let keep = |blocks: &mut Vec<Block>, obsolete: &mut Vec<String>| {
        if !obsolete.is_empty() {
            blocks.push(Block::Kept(std::mem::take(obsolete)));
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            keep(&mut blocks, &mut obsolete);
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            // A comment after the strings starts the next entry.
            if current == Some(Field::Str) {
                finish(&mut blocks, &mut entry, n)?;
                current = None;
            }
            if comment.starts_with('~') {
                // An obsolete entry: kept as written, with the comments
                // above it.
                if !entry.is_empty() {
                    return Err(bad(n, "an obsolete (#~) line inside an entry"));
                }
                obsolete.append(&mut entry.comments);
                entry = Entry::default();
                obsolete.push(line.to_owned());
                continue;
            }
            keep(&mut blocks, &mut obsolete);
            if entry.line == 0 {
                entry.line = n;
            }
            entry.comments.push(line.to_owned());
            entry.raw.push(raw.trim_end().to_owned());
            continue;
        }
        keep(&mut blocks, &mut obsolete);
        if let Some(rest) = line.strip_prefix('"') {
            let Some(field) = current else {
                return Err(bad(n, "a string that continues nothing"));
            };
            let value = unquote(&format!("\"{rest}"), n)?;
            match field {
                Field::Context => entry.context.get_or_insert_default().push_str(&value),
                Field::Id => entry.id.get_or_insert_default().push_str(&value),
                Field::Plural => entry.plural.get_or_insert_default().push_str(&value),
                Field::Str => {
                    if let Some(last) = entry.strs.last_mut() {
                        last.push_str(&value);
                    }
                }
            }
            entry.raw.push(raw.trim_end().to_owned());
            continue;
        }
        let (keyword, rest) = line
            .split_once(|c: char| c.is_whitespace() || c == '"')
            .map(|(k, _)| (k, line[k.len()..].trim_start()))
            .unwrap_or((line, ""));
        if rest.is_empty() {
            return Err(bad(n, format!("`{keyword}` without a string")));
        }
        let value = unquote(rest, n)?;
        match keyword {
            "msgctxt" => {
                if current.is_some() {
                    finish(&mut blocks, &mut entry, n)?;
                }
                if entry.line == 0 {
                    entry.line = n;
                }
                entry.context = Some(value);
                current = Some(Field::Context);
            }
            "msgid" => {
                if current == Some(Field::Str) || entry.id.is_some() {
                    finish(&mut blocks, &mut entry, n)?;
                }
                if entry.line == 0 {
                    entry.line = n;
                }
                entry.id = Some(value);
                current = Some(Field::Id);
            }
            "msgid_plural" if entry.id.is_some() && entry.strs.is_empty() => {
                entry.plural = Some(value);
                current = Some(Field::Plural);
            }
            "msgstr" if entry.id.is_some() && entry.plural.is_none() && entry.strs.is_empty() => {
                entry.strs.push(value);
                current = Some(Field::Str);
            }
            k if k.starts_with("msgstr[") && entry.plural.is_some() => {
                if k != format!("msgstr[{}]", entry.strs.len()) {
                    return Err(bad(
                        n,
                        format!("`{k}` where msgstr[{}] was due", entry.strs.len()),
                    ));
                }
                entry.strs.push(value);
                current = Some(Field::Str);
            }
            "msgid_plural" | "msgstr" => {
                return Err(bad(n, format!("`{keyword}` out of place")));
            }
            k if k.starts_with("msgstr[") => {
                return Err(bad(n, format!("`{k}` without msgid_plural")));
            }
            other => return Err(bad(n, format!("unknown keyword `{other}`"))),
        }
        entry.raw.push(raw.trim_end().to_owned());
    }
    let last_line = text.lines().count();
    finish(&mut blocks, &mut entry, last_line)?;
    keep(&mut blocks, &mut obsolete);
    Ok(Catalog { blocks, last_line })
}

/// The entries of a PO file, for a merge: one unit per entry, or per
/// plural form of an entry that is not one of quire's own (whose
/// `msgctxt` names a node: such an entry is reported, not merged). The
/// header's `Language` and export id come with them.
pub(super) fn parse(text: &str) -> CoreResult<Parsed> {
    let catalog = read(text)?;
    let mut units = Vec::new();
    for e in catalog.entries() {
        let id = e.id.clone().unwrap_or_default();
        let node = e
            .context
            .as_deref()
            .and_then(|c| c.parse().ok())
            .map(NodeId);
        let name = match (&e.context, node) {
            (Some(context), Some(_)) => context.clone(),
            (Some(context), None) => format!("msgctxt {context:?} msgid {id:?}"),
            (None, _) => format!("msgid {id:?}"),
        };
        let machine = Some(e.fuzzy());
        match &e.plural {
            Some(_) if node.is_some() => units.push(Unit {
                id: name,
                node,
                source: id,
                machine,
                unmergeable: Some("it has plural forms, and a text node holds one translation"),
                ..Unit::default()
            }),
            Some(plural) => {
                for (n, s) in e.strs.iter().enumerate() {
                    units.push(Unit {
                        id: format!("{name}[{n}]"),
                        source: if n == 0 { id.clone() } else { plural.clone() },
                        target: Some(s.clone()),
                        machine,
                        key: Some((e.key(), u32::try_from(n).ok())),
                        ..Unit::default()
                    });
                }
            }
            None => units.push(Unit {
                id: name,
                node,
                source: id,
                target: e.strs.first().cloned(),
                machine,
                key: Some((e.key(), None)),
                ..Unit::default()
            }),
        }
    }
    if units.is_empty() {
        return Err(bad(
            catalog.last_line,
            "it has no entries besides the header",
        ));
    }
    let (language, source_language) = catalog.languages();
    Ok(Parsed {
        units,
        language,
        source_language,
        export: catalog.header_field(EXPORT_HEADER),
    })
}

/// A PO or POT file read whole, to make a page of: a unit per entry with
/// a `msgid` (per form of a plural entry, as many as `Plural-Forms`
/// says), keyed by `msgctxt` and `msgid`, its comments, flags and
/// references as notes; `fuzzy` marks a machine's translation.
pub(super) fn document(text: &str, max_bytes: u64) -> CoreResult<Document> {
    let catalog = read(text)?;
    let nplurals = catalog.nplurals();
    let mut units: Vec<DocUnit> = Vec::new();
    // What the page's op costs at least, counted as units are made.
    let mut cost = 0u64;
    let mut entries = 0usize;
    for e in catalog.entries() {
        entries += 1;
        if cost > max_bytes {
            let forms = nplurals.map_or_else(String::new, |n| format!(" (nplurals={n})"));
            return Err(CoreError::InvalidInput(format!(
                "its entries make a page of more than {} units{forms}, past {} MiB as an op \
                 after {entries} of them, more than server.max_body_bytes ({max_bytes} bytes) \
                 allows; split the file",
                units.len(),
                cost >> 20
            )));
        }
        let id = e.id.clone().unwrap_or_default();
        if id.is_empty() {
            continue;
        }
        let notes = e.notes();
        let target = |n: usize| e.strs.get(n).filter(|s| !s.is_empty()).cloned();
        let unit = |form: Option<usize>, source: &str, notes: Vec<String>| {
            let target = target(form.unwrap_or(0));
            DocUnit {
                entry: quire_model::scene::Entry {
                    key: e.key(),
                    form: form.and_then(|f| u32::try_from(f).ok()),
                    notes,
                },
                source: source.to_owned(),
                machine: e.fuzzy() && target.is_some(),
                target,
                state: None,
            }
        };
        let cost_of = |u: &DocUnit| {
            crate::units::UNIT_BYTES
                + (u.source.len()
                    + u.target.as_ref().map_or(0, String::len)
                    + u.entry.key.len()
                    + u.entry.notes.iter().map(String::len).sum::<usize>()) as u64
        };
        match &e.plural {
            Some(plural) => {
                let forms = e.forms(nplurals);
                for n in 0..forms {
                    let mut notes = notes.clone();
                    notes.push(format!("plural: form {} of {forms}", n + 1));
                    let made = unit(Some(n), if n == 0 { &id } else { plural }, notes);
                    cost = cost.saturating_add(cost_of(&made));
                    units.push(made);
                }
            }
            None => {
                let made = unit(None, &id, notes);
                cost = cost.saturating_add(cost_of(&made));
                units.push(made);
            }
        }
    }
    if cost > max_bytes {
        return Err(CoreError::InvalidInput(format!(
            "its {} units make a page of more than {} MiB as an op, more than \
             server.max_body_bytes ({max_bytes} bytes) allows; split the file",
            units.len(),
            cost >> 20
        )));
    }
    if units.is_empty() {
        return Err(bad(catalog.last_line, "it has no entries to translate"));
    }
    let (language, source_language) = catalog.languages();
    Ok(Document {
        units,
        language,
        source_language,
        locked: 0,
        kind: "PO",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn units(po: &str) -> Vec<Unit> {
        parse(po).expect("parses").units
    }

    #[test]
    fn reads_entries_flags_continuations_and_the_language() {
        let po = "msgid \"\"\nmsgstr \"\"\n\"Language: fr\\n\"\n\n\
                  #. page: One\n#, fuzzy, c-format\nmsgctxt \"a\"\nmsgid \"\"\n\"Hello\\n\"\n\"world\"\n\
                  msgstr \"Bonjour\"\n\n#~ msgid \"old\"\n#~ msgstr \"vieux\"\n\n\
                  msgctxt \"b\"\nmsgid \"one\"\nmsgid_plural \"many\"\nmsgstr[0] \"un\"\nmsgstr[1] \"des\"\n";
        let parsed = parse(po).expect("parses");
        assert_eq!(parsed.language.as_deref(), Some("fr"));
        // A plural entry not from quire: a unit per form, by its key.
        assert_eq!(parsed.units.len(), 3);
        let a = &parsed.units[0];
        assert_eq!(
            (a.id.as_str(), a.source.as_str(), a.target.as_deref()),
            (
                r#"msgctxt "a" msgid "Hello\nworld""#,
                "Hello\nworld",
                Some("Bonjour")
            )
        );
        assert_eq!(a.machine, Some(true));
        assert_eq!(a.key, Some(("a\u{4}Hello\nworld".to_owned(), None)));
        let forms: Vec<_> = parsed.units[1..]
            .iter()
            .map(|u| {
                (
                    u.source.as_str(),
                    u.target.as_deref(),
                    u.key.clone().unwrap().1,
                )
            })
            .collect();
        assert_eq!(
            forms,
            [("one", Some("un"), Some(0)), ("many", Some("des"), Some(1))]
        );
        assert_eq!(parsed.units[1].machine, Some(false));
        // One of quire's own (its msgctxt a node id) is reported instead.
        let own = po.replace("msgctxt \"b\"", &format!("msgctxt \"{}\"", NodeId::new()));
        let own = parse(&own).expect("parses");
        assert!(own.units[1].unmergeable.is_some());
    }

    #[test]
    fn names_the_line_of_what_is_wrong() {
        let cases = [
            ("msgctxt \"a\"\nmsgid \"x\nmsgstr \"y\"\n", "line 2"),
            ("msgctxt \"a\"\nmsgid \"x\"\nmsgstr \"y\" z\n", "line 3"),
            ("msgctxt \"a\"\nmsgid \"x\"\nmsgstr \"\\q\"\n", "line 3"),
            ("msgctxt \"a\"\nmsgid \"x\"\nmsgtext \"y\"\n", "line 3"),
            ("\"stray\"\n", "line 1"),
            ("msgctxt \"a\"\nmsgid \"x\"\n", "without msgstr"),
            ("msgid \"\"\nmsgstr \"\"\n", "no entries"),
        ];
        for (po, expected) in cases {
            let e = parse(po).expect_err(po).to_string();
            assert!(e.contains(expected), "{po:?}: {e}");
        }
    }

    proptest! {
        #[test]
        fn escaped_strings_come_back(s in "\\PC*|[\\\\\"\n\t\r\u{1}\u{7f}a]{0,12}") {
            let mut po = String::new();
            field(&mut po, "msgctxt", "c");
            field(&mut po, "msgid", "x");
            field(&mut po, "msgstr", &s);
            let got = units(&po);
            prop_assert_eq!(got[0].target.as_deref(), Some(s.as_str()));
        }

        #[test]
        fn arbitrary_input_never_panics(s in "(msgid|msgstr|msgctxt|#,|\"|\\\\|\n| |x|fuzzy)*") {
            let _ = parse(&s);
        }
    }
}
