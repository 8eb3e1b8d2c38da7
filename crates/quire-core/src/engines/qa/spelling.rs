//! `spelling`: words of the translation the target language's Hunspell
//! dictionary does not know, with its suggestions ([`crate::spelling`]).

use super::{Context, Rule, RuleLevel};
use quire_model::ids::NodeId;
use quire_model::scene::{NodeKind, Page};

pub(super) const RULE: Rule = Rule {
    id: "spelling",
    key: "spelling",
    default: RuleLevel::Warning,
    check,
};

fn check(page: &Page, context: &Context<'_>) -> Vec<(NodeId, String)> {
    let Some(speller) = context.speller else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for node in &page.nodes {
        let NodeKind::Text {
            translation: Some(translation),
            ..
        } = &node.kind
        else {
            continue;
        };
        let wrong = speller.check(translation);
        if wrong.is_empty() {
            continue;
        }
        let said: Vec<String> = wrong
            .iter()
            .map(|m| match m.suggestions.as_slice() {
                [] => format!("\"{}\" (no suggestion)", m.word),
                s => format!("\"{}\" (maybe {})", m.word, s.join(", ")),
            })
            .collect();
        out.push((node.id, format!("spelling: {}", said.join("; "))));
    }
    out
}
