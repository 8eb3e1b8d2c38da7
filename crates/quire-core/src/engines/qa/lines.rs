//! `lines`: a cue's translation in more lines than the limit.

use super::{Context, Rule, RuleLevel};
use crate::cues::{cues, measure};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "lines",
    key: "lines",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    let mut out = Vec::new();
    for cue in cues(page) {
        let Some(translation) = cue.translation else {
            continue;
        };
        if let Some(message) =
            measure(translation, cue.duration_ms()).too_many_lines(context.limits)
        {
            out.push((cue.node, format!("cue {}: {message}", cue.number)));
        }
    }
    out
}
