//! Reading the XML files people bring (XLIFF, TBX): one parser setting for
//! all of them, and a bound on how deep elements may nest.
//!
//! roxmltree builds the tree without recursing, and quire's readers walk it
//! with iterators, so depth costs no stack; the bound is there so that a
//! file no tool writes (0.2 crashed on `<target>` nesting 10,000 inline
//! elements) is refused by name before anything reads it.

use roxmltree::{Document, ParsingOptions};

/// Deepest element nesting accepted. Real files nest a dozen levels (inline
/// codes inside inline codes at most a few deep); this is far above that.
pub const MAX_DEPTH: usize = 4096;

/// Parses `text` with DTDs refused (no entity expansion from the file), and
/// refuses elements nested deeper than [`MAX_DEPTH`]. The error says which.
/// A document type that only names an external DTD (`<!DOCTYPE tmx SYSTEM
/// "tmx14.dtd">`, as TMX tools write) declares nothing and is let
/// through; nothing is ever fetched.
pub fn parse(text: &str) -> Result<Document<'_>, String> {
    let allow_dtd = match doctype(text) {
        Doctype::None => false,
        Doctype::External => true,
        Doctype::Subset => {
            return Err(
                "it declares a DTD (a DOCTYPE with an internal subset, `[` … `]`); quire reads \
                 no DTD in XLIFF, TMX or TBX files"
                    .to_owned(),
            );
        }
    };
    let options = ParsingOptions {
        allow_dtd,
        ..ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, options)
        .map_err(|e| format!("not well-formed XML ({e})"))?;
    // Nodes come in document order, so a node's parent is seen first: its
    // depth is one more than the parent's, looked up by id.
    let mut depths = vec![0usize; doc.descendants().count() + 1];
    for node in doc.descendants().filter(roxmltree::Node::is_element) {
        let up = node.parent().map_or(0, |p| depths[p.id().get() as usize]);
        let depth = up + 1;
        if depth > MAX_DEPTH {
            return Err(format!(
                "elements nest more than {MAX_DEPTH} deep (at {}); quire reads at most \
                 {MAX_DEPTH} levels",
                doc.text_pos_at(node.range().start)
            ));
        }
        depths[node.id().get() as usize] = depth;
    }
    Ok(doc)
}

/// What a document's type declaration declares.
#[derive(Debug, PartialEq, Eq)]
enum Doctype {
    /// There is none before the root element.
    None,
    /// Only a name and an external identifier (`SYSTEM "tmx14.dtd"`),
    /// which is never fetched: nothing is declared in the file.
    External,
    /// An internal subset (`[` … `]`), or a declaration that does not end:
    /// refused whole, whatever it declares.
    Subset,
}

/// The document type declaration of `text`, found as an XML reader finds
/// it: after the XML declaration, comments, processing instructions and
/// white space of the prolog (a `<!DOCTYPE` inside a comment is not one),
/// reading its quoted literals whole (a `>` or `[` inside one is text).
fn doctype(text: &str) -> Doctype {
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        let skipped = if rest.starts_with("<?") {
            rest.find("?>").map(|end| &rest[end + 2..])
        } else if let Some(comment) = rest.strip_prefix("<!--") {
            comment.find("-->").map(|end| &comment[end + 3..])
        } else if let Some(declaration) = rest.strip_prefix("<!DOCTYPE") {
            return subset_of(declaration);
        } else {
            return Doctype::None;
        };
        match skipped {
            Some(after) => rest = after,
            // An unclosed comment or instruction: the parser refuses it.
            None => return Doctype::None,
        }
    }
}

/// What follows `<!DOCTYPE`: a subset if a `[` comes outside a literal
/// before the closing `>`.
fn subset_of(declaration: &str) -> Doctype {
    let mut quote = None;
    for c in declaration.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => return Doctype::Subset,
            (None, '>') => return Doctype::External,
            (None, _) => {}
        }
    }
    Doctype::Subset
}

/// The text of an XML file in any encoding a tool writes: a byte order
/// mark (UTF-8, UTF-16), else the declaration's `encoding`, else UTF-8.
/// Bytes that are not text in that encoding are refused.
pub fn decode(bytes: &[u8]) -> Result<String, String> {
    let (encoding, body) = match encoding_rs::Encoding::for_bom(bytes) {
        Some((encoding, bom)) => (encoding, &bytes[bom..]),
        None => {
            // The declaration is ASCII in every encoding it can name.
            let head = &bytes[..bytes.len().min(200)];
            let head = String::from_utf8_lossy(head);
            let named = head
                .strip_prefix("<?xml")
                .and_then(|d| d.split("?>").next())
                .and_then(|d| d.split("encoding").nth(1))
                .and_then(|d| d.split(['"', '\'']).nth(1));
            let encoding = match named {
                Some(label) => encoding_rs::Encoding::for_label(label.trim().as_bytes())
                    .ok_or_else(|| format!("it declares an unknown encoding `{label}`"))?,
                None => encoding_rs::UTF_8,
            };
            (encoding, bytes)
        }
    };
    let (text, had_errors) = encoding.decode_without_bom_handling(body);
    if had_errors {
        return Err(format!("it is not valid {} text", encoding.name()));
    }
    Ok(text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}x{}", "<g>".repeat(depth), "</g>".repeat(depth))
    }

    #[test]
    fn nesting_is_bounded_by_name_and_counted_without_recursion() {
        assert!(parse(&nested(MAX_DEPTH)).is_ok());
        let e = parse(&nested(MAX_DEPTH + 1)).expect_err("too deep");
        assert!(e.contains("more than 4096 deep"), "{e}");
        // Far past any stack a recursive walk would have.
        let e = parse(&nested(200_000)).expect_err("too deep");
        assert!(e.contains("4096"), "{e}");
    }

    #[test]
    fn a_dtd_is_refused() {
        let e = parse("<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>").expect_err("dtd");
        assert!(e.contains("it declares a DTD"), "{e}");
        // However it is written: after a comment holding an external one,
        // with `>` or `[` in a literal, after the XML declaration and a
        // processing instruction.
        for hidden in [
            "<!-- <!DOCTYPE x SYSTEM \"a.dtd\"> --><!DOCTYPE x [<!ENTITY a 'b'>]><x>&a;</x>",
            "<!DOCTYPE x SYSTEM \"a>b.dtd\" [<!ENTITY a 'b'>]><x>&a;</x>",
            "<!DOCTYPE x PUBLIC '-//a>' 'b]' [<!ENTITY a 'b'>]><x>&a;</x>",
            "<?xml version=\"1.0\"?>\n<?pi x?>\n<!DOCTYPE x [<!ENTITY a 'b'>]><x>&a;</x>",
            "\u{feff}<!DOCTYPE x [\n]><x/>",
            "<!DOCTYPE x SYSTEM \"never closed",
        ] {
            let e = parse(hidden).expect_err(hidden);
            assert!(e.contains("it declares a DTD"), "{hidden}: {e}");
        }
        assert_eq!(doctype("<!-- <!DOCTYPE x [ ] --><x/>"), Doctype::None);
        assert_eq!(
            doctype("<!DOCTYPE x SYSTEM \"a[b\"><x/>"),
            Doctype::External
        );
        // Naming an external one declares nothing; it is never read.
        let doc = parse("<!DOCTYPE x SYSTEM \"/etc/passwd\"><x>y</x>").expect("external");
        assert_eq!(doc.root_element().text(), Some("y"));
        assert!(parse("<!DOCTYPE x SYSTEM \"x.dtd\"><x>&a;</x>").is_err());
    }

    #[test]
    fn decodes_by_bom_or_declaration() {
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("<x>é</x>".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16).unwrap(), "<x>é</x>");
        let latin1 = b"<?xml version='1.0' encoding='ISO-8859-1'?><x>\xe9</x>";
        assert!(decode(latin1).unwrap().ends_with("<x>é</x>"));
        assert!(decode(b"<x>\xff</x>").unwrap_err().contains("UTF-8"));
        assert!(
            decode(b"<?xml version=\"1.0\" encoding=\"klingon\"?><x/>")
                .unwrap_err()
                .contains("klingon")
        );
    }
}
