//! `reading-speed`: a cue's translation faster to read than the limit
//! (characters a second of the cue's duration, spaces and punctuation
//! counted, line breaks not).

use super::{Context, Rule, RuleLevel, each_cue_measured};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "reading-speed",
    key: "reading_speed",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    each_cue_measured(page, context, |m, limits| {
        m.too_fast(limits).into_iter().collect()
    })
}
