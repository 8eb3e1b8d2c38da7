//! `too-long`: more characters than the node's box holds at its font
//! size (a rough count: an average glyph width and line height).

use super::{Context, Rule, RuleLevel, translated};
use quire_model::ids::NodeId;
use quire_model::scene::{NodeKind, Page};

pub(super) const RULE: Rule = Rule {
    id: "too-long",
    key: "too_long",
    default: RuleLevel::Warning,
    check,
};

/// Font size assumed when a node has none.
const DEFAULT_FONT_SIZE: f64 = 16.0;
/// Average glyph width as a fraction of the font size; line height 1.2.
const GLYPH_WIDTH: f64 = 0.55;
const LINE_HEIGHT: f64 = 1.2;

/// How many characters fit in a `width × height` box at `font_size`.
pub fn box_capacity(width: f64, height: f64, font_size: f64) -> usize {
    let per_line = (width / (font_size * GLYPH_WIDTH)).floor().max(0.0);
    let lines = (height / (font_size * LINE_HEIGHT)).floor().max(0.0);
    (per_line * lines) as usize
}

fn check(page: &Page, _: &Context<'_>) -> Vec<(NodeId, String)> {
    translated(page)
        .filter_map(|(t, translation)| {
            let b = &t.node.transform;
            if b.width <= 0.0 || b.height <= 0.0 {
                return None;
            }
            let size = match &t.node.kind {
                NodeKind::Text { style, .. } => style.as_ref().and_then(|s| s.font_size),
                _ => None,
            }
            .unwrap_or(DEFAULT_FONT_SIZE);
            let capacity = box_capacity(b.width, b.height, size);
            let length = translation.chars().count();
            (length > capacity).then(|| {
                (
                    t.node.id,
                    format!(
                        "translation too long: {}: {length} characters, the {}×{} box holds about {capacity} at font size {size}",
                        t.what(), b.width, b.height
                    ),
                )
            })
        })
        .collect()
}
