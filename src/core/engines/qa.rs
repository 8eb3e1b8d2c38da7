//! `qa`: checks each text node and reports every problem as one finding
//! naming its page and node: a missing translation, a placeholder set
//! that differs, a translation too long for its box, leading or trailing
//! whitespace that differs.

use super::text::placeholders;
use crate::core::events::{Finding, Severity};
use crate::core::scene::{NodeKind, Page};

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

fn short(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    s
}

fn edges(s: &str) -> (&str, &str) {
    let start = &s[..s.len() - s.trim_start().len()];
    let end = &s[s.trim_end().len()..];
    (start, end)
}

/// The problems of every text node of `page`, one finding each.
pub fn check_page(page: &Page) -> Vec<Finding> {
    let mut problems = Vec::new();
    for node in &page.nodes {
        let NodeKind::Text {
            text,
            translation,
            style,
            ..
        } = &node.kind
        else {
            continue;
        };
        let Some(text) = text.as_deref().filter(|t| !t.trim().is_empty()) else {
            continue;
        };
        let what = format!("\"{}\"", short(text));
        let mut found = |rule: &str, severity: Severity, message: String| {
            problems.push(Finding::new(rule, severity, message).on(page.id, Some(node.id)));
        };
        let Some(translation) = translation.as_deref().filter(|t| !t.trim().is_empty()) else {
            found(
                "missing-translation",
                Severity::Warning,
                format!("missing translation: {what}"),
            );
            continue;
        };
        let (want, got) = (placeholders(text), placeholders(translation));
        if want != got {
            found(
                "placeholders",
                Severity::Error,
                format!(
                    "placeholders differ: {what} has [{}] but the translation has [{}]",
                    want.join(" "),
                    got.join(" ")
                ),
            );
        }
        let t = &node.transform;
        if t.width > 0.0 && t.height > 0.0 {
            let size = style
                .as_ref()
                .and_then(|s| s.font_size)
                .unwrap_or(DEFAULT_FONT_SIZE);
            let capacity = box_capacity(t.width, t.height, size);
            let length = translation.chars().count();
            if length > capacity {
                found(
                    "too-long",
                    Severity::Warning,
                    format!(
                        "translation too long: {what}: {length} characters, the {}×{} box holds about {capacity} at font size {size}",
                        t.width, t.height
                    ),
                );
            }
        }
        if edges(text) != edges(translation) {
            found(
                "whitespace",
                Severity::Warning,
                format!("leading or trailing whitespace differs: {what}"),
            );
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ids::{NodeId, PageId};
    use crate::core::scene::{Node, Transform};

    fn node(text: &str, translation: Option<&str>, w: f64, h: f64) -> Node {
        Node {
            id: NodeId::new(),
            transform: Transform {
                x: 0.0,
                y: 0.0,
                width: w,
                height: h,
                rotation: None,
            },
            visible: true,
            kind: NodeKind::Text {
                text: Some(text.into()),
                translation: translation.map(Into::into),
                source_lang: None,
                style: None,
                state: None,
                origin: None,
            },
        }
    }

    #[test]
    fn reports_each_kind_of_problem() {
        let page = Page {
            id: PageId::new(),
            name: "p".into(),
            width: None,
            height: None,
            nodes: vec![
                node("Hello", None, 0.0, 0.0),
                node("Hi {0}", Some("Salut"), 0.0, 0.0),
                node(
                    "Hi",
                    Some("Une traduction beaucoup trop longue"),
                    30.0,
                    20.0,
                ),
                node("Hi ", Some("Salut"), 0.0, 0.0),
                node("Fine {0}", Some("Bien {0}"), 500.0, 100.0),
            ],
        };
        let problems = check_page(&page);
        let rules: Vec<&str> = problems.iter().map(|p| p.rule.as_str()).collect();
        assert_eq!(
            rules,
            [
                "missing-translation",
                "placeholders",
                "too-long",
                "whitespace"
            ],
            "{problems:#?}"
        );
        for (p, node) in problems.iter().zip(&page.nodes) {
            assert_eq!((p.page_id, p.node_id), (Some(page.id), Some(node.id)));
            // The ids travel as fields; the message is for people.
            assert!(!p.message.contains(&node.id.to_string()), "{}", p.message);
        }
        assert!(problems[1].message.contains("[{0}]"));
        assert_eq!(problems[1].severity, Severity::Error);
    }

    #[test]
    fn capacity_grows_with_the_box() {
        assert_eq!(box_capacity(0.0, 100.0, 16.0), 0);
        assert!(box_capacity(200.0, 100.0, 16.0) > box_capacity(100.0, 100.0, 16.0));
    }
}
