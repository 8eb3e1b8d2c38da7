//! `lines`: a cue's translation in more lines than the limit.

use super::{Context, Rule, RuleLevel, each_cue_measured};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "lines",
    key: "lines",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    each_cue_measured(page, context, |m, limits| {
        m.too_many_lines(limits).into_iter().collect()
    })
}
