//! XLIFF inline codes as placeholders a translator can type and QA can
//! count.
//!
//! A segment's source is read into text in which every inline code is a
//! numbered tag, as CAT tools show them: a paired code (XLIFF 1.2 `<g>`,
//! 2.0 `<pc>`) as `<g1>…</g1>`, a standalone one (`<x/>`, `<ph>`, `<bpt>`,
//! `<sc/>`, …) as `<x2/>`; markers (`<mrk>`) keep their text, `<cp>` is its
//! character. The numbers follow the source; a target's codes are matched
//! to the source's by element and id. Writing a translation back turns each
//! tag into the source's code as the file wrote it (its element, ids and
//! native content verbatim); a tag that names no code, or a paired tag left
//! unbalanced, is written as the text it is, so the file stays well
//! formed (and QA's placeholder rule names the difference).

use std::collections::HashMap;

use roxmltree::Node;

/// Whether `local` is a code quire shows as a paired tag.
fn is_paired(local: &str) -> bool {
    matches!(local, "g" | "pc")
}

/// Whether `local` is a standalone code (its content, if any, is native
/// code, not text).
fn is_standalone(local: &str) -> bool {
    matches!(
        local,
        "x" | "bx" | "ex" | "ph" | "bpt" | "ept" | "it" | "sc" | "ec"
    )
}

/// One code of a segment's source (or a target's code the source lacks).
#[derive(Debug)]
struct Code {
    /// The element's local name, the tag's name.
    tag: String,
    paired: bool,
    /// Standalone: the whole element as written; paired: its start tag.
    xml: String,
    /// A paired element's qualified name, for its end tag.
    qname: String,
}

/// The codes of a segment, numbered from 1 in source order.
#[derive(Debug, Default)]
pub(crate) struct Codes {
    list: Vec<Code>,
    by_key: HashMap<(String, String), usize>,
}

/// The end of the start tag that begins at `start` in `text` (past its
/// `>`), quoted attribute values skipped.
pub(crate) fn start_tag_end(text: &str, start: usize) -> usize {
    let mut quote: Option<u8> = None;
    for (i, b) in text.as_bytes()[start..].iter().enumerate() {
        match (quote, *b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(*b),
            (None, b'>') => return start + i + 1,
            _ => {}
        }
    }
    text.len()
}

/// The qualified name a start tag (`<x:g id="1">`, `<xlf:target/>`)
/// opens.
pub(crate) fn qname(start_tag: &str) -> &str {
    let end = start_tag
        .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .unwrap_or(start_tag.len());
    &start_tag[1.min(end)..end]
}

impl Codes {
    /// `node`'s content (a `<source>` or `<target>` of the document whose
    /// text is `text`, in namespace `ns`) as tagged text, numbering codes
    /// not seen before after the ones that were.
    pub(crate) fn read(&mut self, node: Node<'_, '_>, text: &str, ns: Option<&str>) -> String {
        let mut out = String::new();
        let mut ordinal: HashMap<String, usize> = HashMap::new();
        // A standalone code's content is native code: skipped to its end.
        let mut skip_to = 0;
        // The paired codes open at this point (where each ends), innermost
        // last: nodes come in document order, and one that starts past an
        // open code's end closes it.
        let mut open: Vec<(usize, &str, usize)> = Vec::new();
        let close = |open: &mut Vec<(usize, &str, usize)>, out: &mut String, at: usize| {
            while let Some((end, local, n)) = open.last().copied()
                && end <= at
            {
                out.push_str(&format!("</{local}{n}>"));
                open.pop();
            }
        };
        for child in node.descendants().skip(1) {
            let range = child.range();
            if range.start < skip_to {
                continue;
            }
            close(&mut open, &mut out, range.start);
            if child.is_text() {
                out.push_str(child.text().unwrap_or(""));
                continue;
            }
            if !child.is_element() || child.tag_name().namespace() != ns {
                continue;
            }
            let local = child.tag_name().name();
            if local == "cp" {
                let c = child
                    .attribute("hex")
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .and_then(char::from_u32);
                out.extend(c);
            } else if is_paired(local) {
                let n = self.number(child, text, &mut ordinal);
                out.push_str(&format!("<{local}{n}>"));
                open.push((range.end, local, n));
            } else if is_standalone(local) {
                let n = self.number(child, text, &mut ordinal);
                out.push_str(&format!("<{local}{n}/>"));
                skip_to = range.end;
            }
        }
        close(&mut open, &mut out, usize::MAX);
        out
    }

    /// The element's key: its name and id (`rid`, `startRef` for codes
    /// that point at another), else its place among its kind.
    fn key(child: Node<'_, '_>, ordinal: &HashMap<String, usize>) -> (String, String) {
        let local = child.tag_name().name().to_owned();
        let id = ["id", "rid", "startRef"]
            .iter()
            .find_map(|a| child.attribute(*a))
            .map(str::to_owned)
            .unwrap_or_else(|| format!("#{}", ordinal.get(&local).copied().unwrap_or(0) + 1));
        (local, id)
    }

    /// The number of `child`'s code, a new one if it has none yet.
    fn number(
        &mut self,
        child: Node<'_, '_>,
        text: &str,
        ordinal: &mut HashMap<String, usize>,
    ) -> usize {
        let key = Self::key(child, ordinal);
        *ordinal.entry(key.0.clone()).or_default() += 1;
        if let Some(n) = self.by_key.get(&key) {
            return n + 1;
        }
        let range = child.range();
        let paired = is_paired(&key.0);
        let xml = if paired {
            text[range.start..start_tag_end(text, range.start)].to_owned()
        } else {
            text[range].to_owned()
        };
        // A paired element written empty (`<g id="1"/>`) opens and closes.
        let xml = match xml.strip_suffix("/>") {
            Some(open) if paired => format!("{open}>"),
            _ => xml,
        };
        self.list.push(Code {
            qname: qname(&xml).to_owned(),
            tag: key.0.clone(),
            paired,
            xml,
        });
        self.by_key.insert(key, self.list.len() - 1);
        self.list.len()
    }

    /// Tagged text written back as XLIFF content: each tag as its code,
    /// everything else escaped by `escape`.
    pub(crate) fn write(&self, tagged: &str, escape: &dyn Fn(&str) -> String) -> String {
        let tokens = tags(tagged);
        // Which tags stand for a code: a standalone tag for a standalone
        // code, a paired tag closed in order for a paired one.
        let mut valid = vec![false; tokens.len()];
        let mut open: Vec<(usize, usize)> = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            let Some(code) = t.n.checked_sub(1).and_then(|n| self.list.get(n)) else {
                continue;
            };
            if code.tag != t.name {
                continue;
            }
            match t.kind {
                TagKind::Empty => valid[i] = !code.paired,
                TagKind::Open if code.paired => open.push((i, t.n)),
                TagKind::Close if code.paired => {
                    if open.last().is_some_and(|(_, n)| *n == t.n)
                        && let Some((j, _)) = open.pop()
                    {
                        valid[i] = true;
                        valid[j] = true;
                    }
                }
                _ => {}
            }
        }
        let mut out = String::with_capacity(tagged.len());
        let mut last = 0;
        for (t, ok) in tokens.iter().zip(valid) {
            if !ok {
                continue;
            }
            out.push_str(&escape(&tagged[last..t.start]));
            let code = &self.list[t.n - 1];
            match t.kind {
                TagKind::Close => out.push_str(&format!("</{}>", code.qname)),
                _ => out.push_str(&code.xml),
            }
            last = t.end;
        }
        out.push_str(&escape(&tagged[last..]));
        out
    }
}

/// Whether tagged text has anything to translate besides its codes
/// (a segment of codes and spaces only is left as the file has it).
pub(crate) fn has_text(tagged: &str) -> bool {
    let mut last = 0;
    for t in tags(tagged) {
        if !tagged[last..t.start].trim().is_empty() {
            return true;
        }
        last = t.end;
    }
    !tagged[last..].trim().is_empty()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum TagKind {
    Open,
    Close,
    Empty,
}

/// A tag in tagged text: `<g1>`, `</g1>`, `<x2/>`.
#[derive(Debug)]
struct Tag<'a> {
    start: usize,
    end: usize,
    name: &'a str,
    n: usize,
    kind: TagKind,
}

/// The tags of `text`, in order.
fn tags(text: &str) -> Vec<Tag<'_>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find('<') {
        let start = from + at;
        from = start + 1;
        let rest = &text[start + 1..];
        let close = rest.starts_with('/');
        let body = if close { &rest[1..] } else { rest };
        let name_len = body.bytes().take_while(u8::is_ascii_lowercase).count();
        let digits = body[name_len..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if name_len == 0 || digits == 0 {
            continue;
        }
        let after = &body[name_len + digits..];
        let (kind, tail) = if after.starts_with("/>") && !close {
            (TagKind::Empty, 2)
        } else if after.starts_with('>') {
            (if close { TagKind::Close } else { TagKind::Open }, 1)
        } else {
            continue;
        };
        let Ok(n) = body[name_len..name_len + digits].parse() else {
            continue;
        };
        let end = start + 1 + usize::from(close) + name_len + digits + tail;
        out.push(Tag {
            start,
            end,
            name: &body[..name_len],
            n,
            kind,
        });
        from = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: &str = "urn:oasis:names:tc:xliff:document:1.2";

    fn escape(s: &str) -> String {
        s.replace('&', "&amp;").replace('<', "&lt;")
    }

    #[test]
    fn codes_become_numbered_tags_and_come_back_as_written() {
        let xml = format!(
            "<u xmlns=\"{NS}\"><source>Click <g id=\"1\" ctype=\"x-b\">here</g> \
             <x id=\"ph\" equiv-text=\"{{{{ n }}}}\"/> <bpt id=\"2\">&lt;i&gt;</bpt>it\
             <ept id=\"2\">&lt;/i&gt;</ept></source>\
             <target><x id=\"ph\"/> <g id=\"1\" ctype=\"x-b\">ici</g></target></u>"
        );
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let source = doc
            .descendants()
            .find(|n| n.has_tag_name("source"))
            .unwrap();
        let target = doc
            .descendants()
            .find(|n| n.has_tag_name("target"))
            .unwrap();
        let mut codes = Codes::default();
        let tagged = codes.read(source, &xml, Some(NS));
        assert_eq!(tagged, "Click <g1>here</g1> <x2/> <bpt3/>it<ept4/>");
        assert_eq!(codes.read(target, &xml, Some(NS)), "<x2/> <g1>ici</g1>");
        assert_eq!(
            codes.write("<x2/> a & <g1>b</g1> <i>", &escape),
            "<x id=\"ph\" equiv-text=\"{{ n }}\"/> a &amp; <g id=\"1\" ctype=\"x-b\">b</g> &lt;i>"
        );
        assert!(!has_text(" <x2/> <g1> </g1>") && has_text("<x2/> a"));
        // Unbalanced, unknown or mistyped tags stay text.
        assert_eq!(
            codes.write("<g1>x <x9/> <x2>y <x2/>", &escape),
            "&lt;g1>x &lt;x9/> &lt;x2>y <x id=\"ph\" equiv-text=\"{{ n }}\"/>"
        );
    }
}
