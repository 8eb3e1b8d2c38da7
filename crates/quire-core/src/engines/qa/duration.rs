//! `duration`: a cue shown for less than the shortest or more than the
//! longest time the style guide allows.

use super::{Context, Rule, RuleLevel};
use crate::cues::{cues, seconds};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "duration",
    key: "duration",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    let limits = context.limits;
    cues(page)
        .into_iter()
        .filter_map(|cue| {
            let (shown, number) = (cue.duration_ms(), cue.number);
            let said = if shown < limits.min_duration_ms {
                format!(
                    "cue {number}: shown {}, under {}",
                    seconds(shown),
                    seconds(limits.min_duration_ms)
                )
            } else if shown > limits.max_duration_ms {
                format!(
                    "cue {number}: shown {}, over {}",
                    seconds(shown),
                    seconds(limits.max_duration_ms)
                )
            } else {
                return None;
            };
            Some((cue.node, said))
        })
        .collect()
}
