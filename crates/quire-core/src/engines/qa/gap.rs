//! `gap`: a cue that starts less than the style guide's gap after the
//! cue before it (by start time) ends.

use super::{Context, Rule, RuleLevel, by_start};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "gap",
    key: "gap",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    let min_gap = context.limits.min_gap_ms;
    let cues = by_start(page);
    cues.windows(2)
        .filter_map(|pair| {
            let (before, cue) = (&pair[0], &pair[1]);
            let (ended, starts) = (before.timing.end, cue.timing.start);
            (starts >= ended && starts - ended < min_gap).then(|| {
                (
                    cue.node,
                    format!(
                        "cue {} starts {} ms after cue {} ends, under {min_gap} ms",
                        cue.number,
                        starts - ended,
                        before.number
                    ),
                )
            })
        })
        .collect()
}
