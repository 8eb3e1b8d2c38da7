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
pub fn parse(text: &str) -> Result<Document<'_>, String> {
    let options = ParsingOptions {
        allow_dtd: false,
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
        assert!(e.contains("not well-formed"), "{e}");
    }
}
