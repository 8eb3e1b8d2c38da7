//! TMX 1.4 (and the 1.1–1.3 files that differ only in `lang` for
//! `xml:lang`), both ways: translation units with a variant per language,
//! their dates and author.
//!
//! Reading keeps each variant's text: character data and `<hi>`, without
//! the native codes of inline elements (`<bpt>`, `<ept>`, `<ph>`, `<it>`,
//! `<ut>`), which a memory match cannot use. Writing is TMX 1.4b: a header
//! quire fills in, a `<tu>` per unit with `creationdate`, `changedate` and
//! `creationid`, a `<tuv xml:lang>` per variant.

use std::fmt::Write as _;

use quire_model::error::{CoreError, CoreResult};

/// One translation unit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Unit {
    /// `tuid`, when the file gives one.
    pub id: Option<String>,
    /// RFC 3339 (`changedate`, else `creationdate`).
    pub changed: Option<String>,
    /// RFC 3339 (`creationdate`).
    pub created: Option<String>,
    /// Who made it (`creationid`).
    pub creator: Option<String>,
    /// The unit's text in each language, as the file orders them.
    pub variants: Vec<Variant>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The language tag as the file writes it.
    pub lang: String,
    pub text: String,
}

/// A read TMX file.
#[derive(Debug, Default)]
pub struct Tmx {
    /// The header's `srclang` (`*all*`: any).
    pub source_language: Option<String>,
    pub units: Vec<Unit>,
}

/// The first child element of `node` named `name` (any namespace).
fn element<'a, 'i>(node: &roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
    node.children()
        .find(|c| c.is_element() && c.tag_name().name() == name)
}

fn bad(message: impl std::fmt::Display) -> CoreError {
    CoreError::InvalidInput(format!("not a TMX file quire can read: {message}"))
}

const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

/// The units of a TMX document.
pub fn parse(text: &str) -> CoreResult<Tmx> {
    let doc = crate::xml::parse(text).map_err(bad)?;
    let root = doc.root_element();
    if root.tag_name().name() != "tmx" {
        return Err(bad(format!(
            "the root element is <{}>, not <tmx>",
            root.tag_name().name()
        )));
    }
    let header = element(&root, "header").ok_or_else(|| bad("it has no <header>"))?;
    let body = element(&root, "body").ok_or_else(|| bad("it has no <body>"))?;
    let mut units = Vec::new();
    for tu in body
        .children()
        .filter(|c| c.is_element() && c.tag_name().name() == "tu")
    {
        let at = || doc.text_pos_at(tu.range().start);
        let mut variants = Vec::new();
        for tuv in tu
            .children()
            .filter(|c| c.is_element() && c.tag_name().name() == "tuv")
        {
            let lang = tuv
                .attribute((XML_NS, "lang"))
                .or_else(|| tuv.attribute("lang"))
                .ok_or_else(|| bad(format!("a <tuv> without xml:lang at {}", at())))?;
            let Some(seg) = element(&tuv, "seg") else {
                return Err(bad(format!("a <tuv> without <seg> at {}", at())));
            };
            variants.push(Variant {
                lang: lang.to_owned(),
                text: segment_text(&seg),
            });
        }
        let date = |name: &str| tu.attribute(name).and_then(rfc3339);
        units.push(Unit {
            id: tu.attribute("tuid").map(str::to_owned),
            changed: date("changedate").or_else(|| date("creationdate")),
            created: date("creationdate"),
            creator: tu.attribute("creationid").map(str::to_owned),
            variants,
        });
    }
    Ok(Tmx {
        source_language: header.attribute("srclang").map(str::to_owned),
        units,
    })
}

/// Inline elements whose content is native code, not text.
const CODES: [&str; 5] = ["bpt", "ept", "ph", "it", "ut"];

/// A `<seg>`'s text: its character data, and `<hi>`'s, but not what the
/// code elements hold (walked in document order: nesting costs no stack).
fn segment_text(seg: &roxmltree::Node<'_, '_>) -> String {
    let mut out = String::new();
    for node in seg.descendants().filter(roxmltree::Node::is_text) {
        let in_code = node
            .ancestors()
            .take_while(|a| a != seg)
            .any(|a| a.is_element() && CODES.contains(&a.tag_name().name()));
        if !in_code {
            out.push_str(node.text().unwrap_or(""));
        }
    }
    out
}

/// A TMX date (`YYYYMMDDThhmmssZ`) as RFC 3339; `None` when it is not one.
fn rfc3339(date: &str) -> Option<String> {
    let b = date.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    (b.len() == 16 && digits(0..8) && b[8] == b'T' && digits(9..15) && b[15] == b'Z').then(|| {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &date[0..4],
            &date[4..6],
            &date[6..8],
            &date[9..11],
            &date[11..13],
            &date[13..15]
        )
    })
}

/// An RFC 3339 time as a TMX date, to the second; `None` when it is not
/// one.
fn tmx_date(rfc: &str) -> Option<String> {
    let digits: String = rfc.chars().take(19).filter(char::is_ascii_digit).collect();
    (digits.len() == 14).then(|| format!("{}T{}Z", &digits[..8], &digits[8..]))
}

/// Text as XML character data or an attribute value: markup and quotes
/// as entities, and what XML 1.0 cannot carry dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' => out.push(c),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// `units` as a TMX 1.4b document whose source language is `source`.
pub fn write(source: &str, units: &[Unit]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str("<tmx version=\"1.4\">\n");
    let _ = writeln!(
        out,
        "  <header creationtool=\"quire\" creationtoolversion=\"{}\" datatype=\"plaintext\" \
         segtype=\"block\" adminlang=\"en\" srclang=\"{}\" o-tmf=\"quire\"/>",
        env!("CARGO_PKG_VERSION"),
        escape(source)
    );
    out.push_str("  <body>\n");
    for unit in units {
        out.push_str("    <tu");
        if let Some(id) = &unit.id {
            let _ = write!(out, " tuid=\"{}\"", escape(id));
        }
        let dates = [
            ("creationdate", unit.created.as_deref()),
            ("changedate", unit.changed.as_deref()),
        ];
        for (name, date) in dates {
            if let Some(date) = date.and_then(tmx_date) {
                let _ = write!(out, " {name}=\"{date}\"");
            }
        }
        if let Some(who) = &unit.creator {
            let _ = write!(out, " creationid=\"{}\"", escape(who));
        }
        out.push_str(">\n");
        for v in &unit.variants {
            let _ = writeln!(
                out,
                "      <tuv xml:lang=\"{}\"><seg>{}</seg></tuv>",
                escape(&v.lang),
                escape(&v.text)
            );
        }
        out.push_str("    </tu>\n");
    }
    out.push_str("  </body>\n</tmx>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_languages_dates_and_text_without_native_codes() {
        let tmx = "<?xml version=\"1.0\"?>\n<!DOCTYPE tmx SYSTEM \"tmx14.dtd\">\
            <tmx version=\"1.4\"><header srclang=\"en-US\" datatype=\"html\" segtype=\"sentence\" \
            o-tmf=\"x\" adminlang=\"en\" creationtool=\"t\" creationtoolversion=\"1\"/><body>\
            <tu tuid=\"7\" creationdate=\"20240102T030405Z\" creationid=\"ann\">\
            <tuv xml:lang=\"en-US\"><seg>A <bpt i=\"1\">&lt;b&gt;</bpt>bold<ept i=\"1\">&lt;/b&gt;</ept> \
            <hi>word</hi><ph>&lt;br/&gt;</ph></seg></tuv>\
            <tuv lang=\"FR-CA\"><seg>Un mot <it pos=\"begin\">&lt;i&gt;</it>gras</seg></tuv></tu>\
            </body></tmx>";
        let read = parse(tmx).expect("parses");
        assert_eq!(read.source_language.as_deref(), Some("en-US"));
        let unit = &read.units[0];
        assert_eq!(unit.id.as_deref(), Some("7"));
        assert_eq!(unit.changed.as_deref(), Some("2024-01-02T03:04:05Z"));
        assert_eq!(unit.creator.as_deref(), Some("ann"));
        let texts: Vec<_> = unit
            .variants
            .iter()
            .map(|v| (v.lang.as_str(), v.text.as_str()))
            .collect();
        assert_eq!(texts, [("en-US", "A bold word"), ("FR-CA", "Un mot gras")]);
    }

    #[test]
    fn what_it_writes_it_reads_back() {
        let unit = Unit {
            id: Some("n1".into()),
            changed: Some("2026-12-03T10:11:12.345Z".into()),
            created: Some("2026-12-01T00:00:00Z".into()),
            creator: Some("quire".into()),
            variants: vec![
                Variant {
                    lang: "en".into(),
                    text: "Tom & \"Jerry\" <3\nline".into(),
                },
                Variant {
                    lang: "fr".into(),
                    text: "Tom et « Jerry »".into(),
                },
            ],
        };
        let back = parse(&write("en", std::slice::from_ref(&unit))).expect("reads");
        let mut want = unit;
        want.changed = Some("2026-12-03T10:11:12Z".into());
        assert_eq!(back.units, [want]);
    }

    #[test]
    fn says_what_is_wrong() {
        for (tmx, expected) in [
            ("<xliff/>", "<xliff>, not <tmx>"),
            ("<tmx><body/></tmx>", "no <header>"),
            (
                "<tmx><header/><body><tu><tuv><seg/></tuv></tu></body></tmx>",
                "without xml:lang",
            ),
            ("<tmx><header/>", "well-formed"),
            (
                "<!DOCTYPE tmx [<!ENTITY a 'b'>]><tmx/>",
                "it declares a DTD",
            ),
        ] {
            let e = parse(tmx).expect_err(tmx).to_string();
            assert!(e.contains(expected), "{tmx}: {e}");
        }
    }
}
