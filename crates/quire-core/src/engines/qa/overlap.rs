//! `overlap`: a cue that starts before the cue before it (by start time)
//! ends.

use super::{Context, Rule, RuleLevel, by_start};
use crate::cues::seconds;
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "overlap",
    key: "overlap",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, _: &Context<'_>) -> Vec<(NodeId, String)> {
    let cues = by_start(page);
    cues.windows(2)
        .filter_map(|pair| {
            let (before, cue) = (&pair[0], &pair[1]);
            (cue.timing.start < before.timing.end).then(|| {
                (
                    cue.node,
                    format!(
                        "cue {} starts {} before cue {} ends",
                        cue.number,
                        seconds(before.timing.end - cue.timing.start),
                        before.number
                    ),
                )
            })
        })
        .collect()
}
