//! `line-length`: each line of a cue's translation longer than the
//! style guide's limit (characters, tags not counted).

use super::{Context, Rule, RuleLevel};
use crate::cues::{cues, measure};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "line-length",
    key: "line_length",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    let mut out = Vec::new();
    for cue in cues(page) {
        let Some(translation) = cue.translation else {
            continue;
        };
        let found = measure(translation, cue.duration_ms()).long_lines(context.limits);
        for message in found {
            out.push((cue.node, format!("cue {}: {message}", cue.number)));
        }
    }
    out
}
