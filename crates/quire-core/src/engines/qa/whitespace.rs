//! `whitespace`: the translation's leading or trailing whitespace is not
//! the source's.

use super::{Context, Rule, RuleLevel, translated};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "whitespace",
    key: "whitespace",
    default: RuleLevel::Warning,
    check,
};

fn edges(s: &str) -> (&str, &str) {
    let start = &s[..s.len() - s.trim_start().len()];
    let end = &s[s.trim_end().len()..];
    (start, end)
}

fn check(page: &Page, _: &Context<'_>) -> Vec<(NodeId, String)> {
    translated(page)
        .filter(|(t, translation)| edges(t.source) != edges(translation))
        .map(|(t, _)| {
            (
                t.node.id,
                format!("leading or trailing whitespace differs: {}", t.what()),
            )
        })
        .collect()
}
