//! `missing-translation`: a text node with source text and no translation.

use super::{Context, Rule, RuleLevel, texts};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "missing-translation",
    key: "missing_translation",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, _: &Context<'_>) -> Vec<(NodeId, String)> {
    texts(page)
        .filter(|t| t.translation.is_none())
        .map(|t| (t.node.id, format!("missing translation: {}", t.what())))
        .collect()
}
