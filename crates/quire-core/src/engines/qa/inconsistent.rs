//! `inconsistent`: the same source is translated otherwise elsewhere in
//! the project (against the step's [`super::Sources`]).

use super::{Context, Rule, RuleLevel, short, translated};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "inconsistent",
    key: "inconsistent",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    let Some(sources) = context.sources else {
        return Vec::new();
    };
    translated(page)
        .filter_map(|(t, translation)| {
            let (other, page_number) = sources.other(t.source, translation, t.node.id)?;
            Some((
                t.node.id,
                format!(
                    "inconsistent: {} is translated \"{}\" here and \"{}\" on page {page_number}",
                    t.what(),
                    short(translation.trim()),
                    short(other)
                ),
            ))
        })
        .collect()
}
