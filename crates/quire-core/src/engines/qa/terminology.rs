//! `terminology`: the source has a glossary term and the translation
//! lacks the term's required translation.

use super::{Context, Rule, RuleLevel, translated};
use crate::glossary::rendered;
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "terminology",
    key: "terminology",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    let Some(sources) = context.sources else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (t, translation) in translated(page) {
        for term in sources.glossary.found(t.source) {
            if !rendered(term, translation) {
                out.push((
                    t.node.id,
                    format!(
                        "terminology: {} has the glossary term \"{}\", to be translated \"{}\", but the translation does not have it",
                        t.what(), term.source, term.target
                    ),
                ));
            }
        }
    }
    out
}
