//! `end-punctuation`: the source ends with `?`, `!` or `…` (fullwidth
//! and `...` forms counted as those) and the translation does not end
//! with the same.

use super::{Context, Rule, RuleLevel, translated};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "end-punctuation",
    key: "end_punctuation",
    default: RuleLevel::Warning,
    check,
};

/// The kind of end punctuation a text closes with, else none.
fn end_mark(text: &str) -> Option<char> {
    let text = text.trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '」' | '』' | '”' | '’' | ')' | '）' | '»')
    });
    if text.ends_with("...") || text.ends_with('…') || text.ends_with('⋯') {
        return Some('…');
    }
    match text.chars().last()? {
        '?' | '？' | '¿' => Some('?'),
        '!' | '！' | '¡' => Some('!'),
        _ => None,
    }
}

fn check(page: &Page, _: &Context<'_>) -> Vec<(NodeId, String)> {
    let mark = |m: Option<char>| m.map_or_else(|| "no mark".to_owned(), |c| format!("`{c}`"));
    translated(page)
        .filter_map(|(t, translation)| {
            let (want, got) = (end_mark(t.source), end_mark(translation));
            (want.is_some() && want != got).then(|| {
                (
                    t.node.id,
                    format!(
                        "end punctuation differs: {} ends with {} but the translation with {}",
                        t.what(),
                        mark(want),
                        mark(got)
                    ),
                )
            })
        })
        .collect()
}
