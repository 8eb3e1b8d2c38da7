//! `numbers`: the numbers of the translation are not the source's
//! (`1,000`, `1 000` and `1000` are one number; numbers inside
//! placeholders are the placeholder rule's).

use super::{Context, Rule, RuleLevel, translated};
use crate::engines::text::{Piece, pieces};
use quire_model::ids::NodeId;
use quire_model::scene::Page;

pub(super) const RULE: Rule = Rule {
    id: "numbers",
    key: "numbers",
    default: RuleLevel::Warning,
    check,
};

/// The numbers in `text` outside its placeholders, digits only
/// (full-width digits count), sorted.
fn numbers(text: &str) -> Vec<String> {
    let plain: String = pieces(text)
        .into_iter()
        .map(|p| match p {
            Piece::Plain(s) => s,
            Piece::Placeholder(_) => " ",
        })
        .collect();
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = plain.chars().peekable();
    while let Some(c) = chars.next() {
        let digit = match c {
            '0'..='9' => Some(c),
            '０'..='９' => char::from_u32(u32::from(c) - 0xFF10 + u32::from('0')),
            _ => None,
        };
        match digit {
            Some(d) => current.push(d),
            // A separator inside a number (`1,000`, `3.5`, `1 000`).
            None if !current.is_empty()
                && matches!(c, ',' | '.' | ' ' | '\u{202F}' | '\u{A0}')
                && chars.peek().is_some_and(char::is_ascii_digit) => {}
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.sort();
    out
}

fn check(page: &Page, _: &Context<'_>) -> Vec<(NodeId, String)> {
    translated(page)
        .filter_map(|(t, translation)| {
            let (want, got) = (numbers(t.source), numbers(translation));
            (want != got).then(|| {
                (
                    t.node.id,
                    format!(
                        "numbers differ: {} has [{}] but the translation has [{}]",
                        t.what(),
                        want.join(" "),
                        got.join(" ")
                    ),
                )
            })
        })
        .collect()
}
