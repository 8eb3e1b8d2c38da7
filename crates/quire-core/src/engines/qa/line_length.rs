//! `line-length`: each line of a cue's translation longer than the
//! style guide's limit (characters, tags not counted).

use super::{Context, Rule, RuleLevel, each_cue_measured};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "line-length",
    key: "line_length",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    each_cue_measured(page, context, |m, limits| m.long_lines(limits))
}
