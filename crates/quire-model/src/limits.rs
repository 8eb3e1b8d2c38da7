//! What the core accepts: the limits every client op is checked against
//! before it is applied, and so before it can reach `ops.log`.
//!
//! Anything acknowledged must decode again when the log is replayed after a
//! crash. Most of that is guaranteed by construction (the log is written by
//! the same serde types that read it, and the core's session decodes every
//! frame once with the recovery decoder before queueing it); these limits
//! cover what the types alone do not bound: nesting (serde_json's decoder
//! stops at 128 levels, and 0.1.0 logged a `Batch` nested 62 deep that it
//! could then not reopen), the size of one apply, and names and texts that
//! every frontend has to show.
//!
//! Only what clients (and engines) submit is checked. Undo, redo and
//! recovery replay inverses of ops that were accepted before, possibly
//! under older rules, and must restore exactly what was there.

use crate::op::{KindPatch, NewNode, NewPage, NodePatch, Op, StylePatch};
use crate::scene::{NodeKind, Origin, Point, Style};

/// Deepest `Batch` nesting: a batch inside a batch is depth 2.
pub const MAX_BATCH_DEPTH: usize = 8;
/// Most ops one op may hold, counting every member of every nested batch.
pub const MAX_BATCH_OPS: usize = 100_000;
/// Longest project, page or node name, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// Largest `text` or `translation` of one node, in bytes (UTF-8).
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// Longest short attribute (`sourceLang`, `fontFamily`, `color`), in bytes.
pub const MAX_ATTRIBUTE_BYTES: usize = 256;
/// Most points of a text node's `region`.
pub const MAX_REGION_POINTS: usize = 256;

/// An op with at least this many ops in it applies on a blocking thread,
/// so that it holds up no other request.
pub const HEAVY_OPS: usize = 1024;

/// Whether applying `op` is heavy work (see [`HEAVY_OPS`]). Counts at most
/// that many ops.
pub fn is_heavy(op: &Op) -> bool {
    fn count(op: &Op, seen: &mut usize) -> bool {
        *seen += 1;
        if *seen >= HEAVY_OPS {
            return true;
        }
        match op {
            Op::Batch { ops, .. } => ops.iter().any(|o| count(o, seen)),
            Op::AddPage { page, .. } => {
                *seen += page.nodes.as_ref().map_or(0, Vec::len);
                *seen >= HEAVY_OPS
            }
            _ => false,
        }
    }
    count(op, &mut 0)
}

/// [`check_name`]'s characters as a JSON Schema `pattern` (ECMA-262): no
/// control character (Unicode `Cc`), and one that is not whitespace.
pub const NAME_PATTERN: &str = concat!(
    r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f]",
    r"[^\u0000-\u001f\u007f-\u009f]*$"
);

/// The one rule for names, wherever one is set (create and rename alike):
/// 1 to 200 characters, not only whitespace, no control characters.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err(format!("{what} must not be empty"));
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(format!(
            "{what} is {chars} characters long; at most {MAX_NAME_CHARS} are allowed"
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{what} must not contain control characters (found U+{:04X})",
            u32::from(c)
        ));
    }
    Ok(())
}

/// Checks `op` against every limit above; the error names the member
/// (`ops[3] ops[0] AddNode: …`) that is over.
pub fn check_op(op: &Op) -> Result<(), String> {
    let mut count = 0usize;
    walk(op, 1, "", &mut count)
}

fn walk(op: &Op, depth: usize, path: &str, count: &mut usize) -> Result<(), String> {
    let fail = |msg: String| format!("{path}{}: {msg}", op.type_name());
    match op {
        Op::Batch { ops, label } => {
            if depth > MAX_BATCH_DEPTH {
                return Err(fail(format!(
                    "batches may nest at most {MAX_BATCH_DEPTH} deep"
                )));
            }
            if let Some(label) = label {
                check_name("a batch label", label).map_err(fail)?;
            }
            *count += ops.len();
            if *count > MAX_BATCH_OPS {
                return Err(fail(format!(
                    "one op may hold at most {MAX_BATCH_OPS} ops, counting nested batches"
                )));
            }
            for (i, member) in ops.iter().enumerate() {
                walk(member, depth + 1, &format!("{path}ops[{i}] "), count)?;
            }
            Ok(())
        }
        Op::AddPage { page, .. } => check_new_page(page).map_err(fail),
        Op::UpdatePage { patch, .. } => match &patch.name {
            Some(name) => check_name("a page name", name).map_err(fail),
            None => Ok(()),
        },
        Op::AddNode { node, .. } => check_new_node(node).map_err(fail),
        Op::UpdateNode { patch, .. } => check_node_patch(patch).map_err(fail),
        Op::UpdateProject { patch } => {
            for (what, value) in [
                ("a project name", patch.name.as_ref()),
                ("series", patch.series.as_ref().and_then(Option::as_ref)),
                ("number", patch.number.as_ref().and_then(Option::as_ref)),
                (
                    "translator",
                    patch.translator.as_ref().and_then(Option::as_ref),
                ),
            ] {
                if let Some(value) = value {
                    check_name(what, value).map_err(fail)?;
                }
            }
            patch
                .style
                .as_ref()
                .map_or(Ok(()), check_style_patch)
                .map_err(fail)
        }
        Op::UpdateGlossary { set, remove } => {
            for (i, term) in set.iter().enumerate() {
                check_term(term).map_err(|e| fail(format!("set[{i}]: {e}")))?;
            }
            for (i, source) in remove.iter().enumerate() {
                check_text("source", Some(source))
                    .map_err(|e| fail(format!("remove[{i}]: {e}")))?;
            }
            Ok(())
        }
        Op::RemovePage { .. }
        | Op::ReorderPages { .. }
        | Op::RemoveNode { .. }
        | Op::ReorderNodes { .. } => Ok(()),
    }
}

fn check_new_page(page: &NewPage) -> Result<(), String> {
    check_name("a page name", &page.name)?;
    for (i, node) in page.nodes.iter().flatten().enumerate() {
        check_new_node(node).map_err(|e| format!("nodes[{i}]: {e}"))?;
    }
    Ok(())
}

fn check_origin(origin: Option<&Origin>) -> Result<(), String> {
    if let Some(origin) = origin {
        check_attribute("origin.engine", origin.engine.as_deref())?;
        check_attribute("origin.at", Some(&origin.at))?;
        if let Some(score) = origin.score
            && !(score.is_finite() && (0.0..=1.0).contains(&score))
        {
            return Err(format!("origin.score is {score}; it must be from 0 to 1"));
        }
    }
    Ok(())
}

/// A region: 3 to [`MAX_REGION_POINTS`] points, every coordinate finite.
pub fn check_region(region: &[Point]) -> Result<(), String> {
    if region.len() < 3 || region.len() > MAX_REGION_POINTS {
        return Err(format!(
            "a region has {} points; it needs 3 to {MAX_REGION_POINTS}",
            region.len()
        ));
    }
    if let Some(p) = region.iter().find(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(format!("a region point [{}, {}] is not finite", p[0], p[1]));
    }
    Ok(())
}

fn check_new_node(node: &NewNode) -> Result<(), String> {
    match &node.kind {
        NodeKind::Text {
            text,
            translation,
            source_lang,
            style,
            origin,
            region,
            source_edit,
            ..
        } => {
            region.as_deref().map_or(Ok(()), check_region)?;
            check_origin(origin.as_deref())?;
            check_origin(source_edit.as_deref())?;
            check_text("text", text.as_deref())?;
            check_text("translation", translation.as_deref())?;
            check_attribute("sourceLang", source_lang.as_deref())?;
            if let Some(Style {
                font_family,
                color,
                stroke,
                ..
            }) = style
            {
                check_attribute("fontFamily", font_family.as_deref())?;
                check_attribute("color", color.as_deref())?;
                check_attribute("stroke", stroke.as_deref())?;
            }
            Ok(())
        }
        NodeKind::Image { name, .. } => match name {
            Some(name) => check_name("an image name", name),
            None => Ok(()),
        },
        NodeKind::Mask { .. } => Ok(()),
    }
}

fn check_node_patch(patch: &NodePatch) -> Result<(), String> {
    match &patch.kind {
        Some(KindPatch::Text {
            text,
            translation,
            source_lang,
            style,
            origin,
            region,
            ..
        }) => {
            if let Some(Some(region)) = region {
                check_region(region)?;
            }
            check_origin(origin.as_ref().and_then(Option::as_deref))?;
            check_text("text", text.as_ref().and_then(Option::as_deref))?;
            check_text(
                "translation",
                translation.as_ref().and_then(Option::as_deref),
            )?;
            check_attribute(
                "sourceLang",
                source_lang.as_ref().and_then(Option::as_deref),
            )?;
            style.as_ref().map_or(Ok(()), check_style_patch)
        }
        Some(KindPatch::Image {
            name: Some(Some(name)),
            ..
        }) => check_name("an image name", name),
        _ => Ok(()),
    }
}

fn check_style_patch(style: &StylePatch) -> Result<(), String> {
    for (field, value) in [
        ("fontFamily", &style.font_family),
        ("color", &style.color),
        ("stroke", &style.stroke),
    ] {
        check_attribute(field, value.as_ref().and_then(Option::as_deref))?;
    }
    Ok(())
}

/// A glossary term's texts: each at most a name's length, no control
/// characters.
fn check_term(term: &crate::glossary::Term) -> Result<(), String> {
    check_name("a term's source", &term.source)?;
    check_name("a term's target", &term.target)?;
    check_text("note", term.note.as_deref())
}

fn check_text(field: &str, value: Option<&str>) -> Result<(), String> {
    match value {
        Some(v) if v.len() > MAX_TEXT_BYTES => Err(format!(
            "{field} is {} bytes; at most {MAX_TEXT_BYTES} (1 MiB) are allowed",
            v.len()
        )),
        _ => Ok(()),
    }
}

fn check_attribute(field: &str, value: Option<&str>) -> Result<(), String> {
    let Some(v) = value else { return Ok(()) };
    if v.len() > MAX_ATTRIBUTE_BYTES {
        return Err(format!(
            "{field} is {} bytes; at most {MAX_ATTRIBUTE_BYTES} are allowed",
            v.len()
        ));
    }
    if v.chars().any(char::is_control) {
        return Err(format!("{field} must not contain control characters"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_name_pattern_agrees_with_the_name_rule() {
        let pattern = regex::Regex::new(NAME_PATTERN).unwrap();
        for name in [
            "Chapter 1",
            " x ",
            "ページ",
            "a\u{a0}b",
            "",
            " ",
            "\t\n",
            "a\u{1}",
            "a\u{7f}",
            "a\u{85}b",
            "\u{3000}",
            "tab\there",
        ] {
            let short = name.chars().count() <= MAX_NAME_CHARS;
            assert_eq!(
                pattern.is_match(name) && short,
                check_name("name", name).is_ok(),
                "{name:?}"
            );
        }
    }

    use super::*;
    use crate::op::{PagePatch, ProjectPatch};

    /// The schema tells clients the same name limit the op check holds.
    #[test]
    fn the_schema_says_the_name_limit() {
        let schema = serde_json::to_value(schemars::schema_for!(crate::op::NewPage)).unwrap();
        let name = &schema["properties"]["name"];
        assert_eq!(name["maxLength"], MAX_NAME_CHARS, "{name}");
        assert_eq!(name["minLength"], 1, "{name}");
    }

    fn nested(depth: usize) -> Op {
        let mut op = Op::UpdateProject {
            patch: ProjectPatch {
                name: Some("n".into()),
                ..Default::default()
            },
        };
        for _ in 0..depth {
            op = Op::Batch {
                ops: vec![op],
                label: None,
            };
        }
        op
    }

    #[test]
    fn nesting_is_limited_at_eight() {
        check_op(&nested(MAX_BATCH_DEPTH)).unwrap();
        let err = check_op(&nested(MAX_BATCH_DEPTH + 1)).unwrap_err();
        assert!(err.contains("nest at most 8 deep"), "{err}");
        assert!(err.starts_with("ops[0] "), "names the member: {err}");
    }

    #[test]
    fn names_follow_one_rule() {
        for bad in ["", "   ", "a\u{7}b", "line\nbreak"] {
            assert!(check_name("a page name", bad).is_err(), "{bad:?}");
        }
        check_name("a page name", &"é".repeat(200)).unwrap();
        assert!(check_name("a page name", &"é".repeat(201)).is_err());
        let rename = Op::UpdatePage {
            id: crate::ids::PageId::new(),
            patch: PagePatch {
                name: Some("x".repeat(300)),
                ..PagePatch::default()
            },
        };
        assert!(check_op(&rename).unwrap_err().contains("at most 200"));
    }
}
