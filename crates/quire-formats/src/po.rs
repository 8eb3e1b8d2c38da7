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

use crate::units::{Parsed, Unit};
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::NodeId;
use quire_model::scene::{NodeKind, Scene};

/// The header that names the quire export a file came from.
const EXPORT_HEADER: &str = "X-Quire-Export";

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

/// `keyword "…"`, split after each embedded newline the way `msgcat` does
/// (an empty first line, then one quoted line per line of text).
fn field(out: &mut String, keyword: &str, value: &str) {
    let lines: Vec<&str> = value.split_inclusive('\n').collect();
    if lines.len() <= 1 {
        let _ = writeln!(out, "{keyword} \"{}\"", escape(value));
        return;
    }
    let _ = writeln!(out, "{keyword} \"\"");
    for line in lines {
        let _ = writeln!(out, "\"{}\"", escape(line));
    }
}

/// A comment's text on one line (a newline would end the comment).
fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

/// The scene (or the pages kept in it) as a PO file; `export_id`, when
/// given, goes in the `X-Quire-Export` header.
pub fn export(scene: &Scene, target_language: Option<&str>, export_id: Option<&str>) -> String {
    let language = target_language
        .or(scene.project.target_language.as_deref())
        .unwrap_or("");
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
            let _ = writeln!(out, "#. page: {}", one_line(&page.name));
            if let Some(t) = timing {
                let _ = writeln!(out, "#. timing: {}", crate::subtitles::format_timing(t));
            }
            if node.kind.is_machine_work() {
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
        "not a PO file quire can merge: line {line}: {message}"
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

/// One entry as it is read.
#[derive(Default)]
struct Entry {
    /// The line it starts on.
    line: usize,
    context: Option<String>,
    id: Option<String>,
    plural: bool,
    strs: Vec<String>,
    fuzzy: bool,
}

impl Entry {
    fn is_empty(&self) -> bool {
        self.context.is_none() && self.id.is_none() && self.strs.is_empty()
    }
}

/// The entries of a PO file (obsolete `#~` ones skipped) and its
/// `Language:` header.
pub(super) fn parse(text: &str) -> CoreResult<Parsed> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut entries: Vec<Entry> = Vec::new();
    let mut entry = Entry::default();
    let mut current: Option<Field> = None;
    let mut finish = |entry: &mut Entry, line: usize| -> CoreResult<()> {
        let done = std::mem::take(entry);
        if done.is_empty() {
            return Ok(());
        }
        if done.id.is_none() {
            return Err(bad(done.line, "an entry without msgid"));
        }
        if done.strs.is_empty() {
            return Err(bad(line, "an entry without msgstr"));
        }
        entries.push(done);
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            // A comment after the strings starts the next entry.
            if current == Some(Field::Str) {
                finish(&mut entry, n)?;
                current = None;
            }
            if let Some(flags) = comment.strip_prefix(',') {
                if entry.line == 0 {
                    entry.line = n;
                }
                entry.fuzzy |= flags.split(',').any(|f| f.trim() == "fuzzy");
            } else if comment.starts_with('~') && entry.is_empty() {
                // An obsolete entry (`#~ msgid …`): skipped, and so are the
                // flags written above it.
                entry = Entry::default();
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix('"') {
            let Some(field) = current else {
                return Err(bad(n, "a string that continues nothing"));
            };
            let value = unquote(&format!("\"{rest}"), n)?;
            match field {
                Field::Context => entry.context.get_or_insert_default().push_str(&value),
                Field::Id => entry.id.get_or_insert_default().push_str(&value),
                Field::Plural => {}
                Field::Str => {
                    if let Some(last) = entry.strs.last_mut() {
                        last.push_str(&value);
                    }
                }
            }
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
                    finish(&mut entry, n)?;
                }
                if entry.line == 0 {
                    entry.line = n;
                }
                entry.context = Some(value);
                current = Some(Field::Context);
            }
            "msgid" => {
                if current == Some(Field::Str) || entry.id.is_some() {
                    finish(&mut entry, n)?;
                }
                if entry.line == 0 {
                    entry.line = n;
                }
                entry.id = Some(value);
                current = Some(Field::Id);
            }
            "msgid_plural" if entry.id.is_some() => {
                entry.plural = true;
                current = Some(Field::Plural);
            }
            "msgstr" if entry.id.is_some() && !entry.plural => {
                entry.strs.push(value);
                current = Some(Field::Str);
            }
            k if k.starts_with("msgstr[") && entry.plural => {
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
    }
    let last = text.lines().count();
    finish(&mut entry, last)?;

    let mut language = None;
    let mut export = None;
    let mut units = Vec::new();
    for e in entries {
        let id = e.id.unwrap_or_default();
        if id.is_empty() && e.context.is_none() {
            let header = |name: &str| {
                e.strs[0]
                    .lines()
                    .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                    .map(|l| l.trim().to_owned())
                    .filter(|l| !l.is_empty())
            };
            language = header("Language");
            export = header(EXPORT_HEADER);
            continue;
        }
        let context = e.context.unwrap_or_default();
        let node = context.parse().ok().map(NodeId);
        units.push(Unit {
            id: if context.is_empty() {
                format!("msgid {id:?} (no msgctxt)")
            } else {
                context
            },
            node,
            source: id,
            target: if e.plural {
                None
            } else {
                e.strs.into_iter().next()
            },
            state: None,
            machine: Some(e.fuzzy),
            unmergeable: e
                .plural
                .then_some("it has plural forms, and a text node holds one translation"),
        });
    }
    if units.is_empty() {
        return Err(bad(last, "it has no entries besides the header"));
    }
    Ok(Parsed {
        units,
        language,
        source_language: None,
        export,
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
        assert_eq!(parsed.units.len(), 2);
        let a = &parsed.units[0];
        assert_eq!(
            (a.id.as_str(), a.source.as_str(), a.target.as_deref()),
            ("a", "Hello\nworld", Some("Bonjour"))
        );
        assert_eq!(a.machine, Some(true));
        let b = &parsed.units[1];
        assert!(b.unmergeable.is_some());
        assert_eq!(b.machine, Some(false));
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
