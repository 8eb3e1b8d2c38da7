//! `placeholders`: the translation's placeholders (`{0}`, `%s`, `<b>`, …)
//! are not the source's.

use super::{Context, Rule, RuleLevel, translated};
use crate::engines::text::placeholders;
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "placeholders",
    key: "placeholders",
    default: RuleLevel::Error,
    check,
};

fn check(page: &Page, _: &Context<'_>) -> Vec<(NodeId, String)> {
    translated(page)
        .filter_map(|(t, translation)| {
            let (want, got) = (placeholders(t.source), placeholders(translation));
            (want != got).then(|| {
                (
                    t.node.id,
                    format!(
                        "placeholders differ: {} has [{}] but the translation has [{}]",
                        t.what(),
                        want.join(" "),
                        got.join(" ")
                    ),
                )
            })
        })
        .collect()
}
