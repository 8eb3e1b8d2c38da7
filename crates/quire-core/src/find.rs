//! Find and replace over a project's text: a literal text or a regular
//! expression, whole words or not, case or not; how many times it is
//! found; and a replacement in the translations as one op (a `Batch`,
//! one undo step), each edit based on the translation it replaces so a
//! change made meanwhile is refused rather than overwritten.

use regex::{NoExpand, Regex, RegexBuilder};

use quire_model::ids::{NodeId, PageId};
use quire_model::op::{Basis, NodePatch, Op};
use quire_model::scene::{NodeKind, Scene, TextState};

/// How a search reads its text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FindOptions {
    /// Only where the text is a whole word (or words).
    pub whole_words: bool,
    /// The text is a regular expression (Rust `regex` syntax); a
    /// replacement may name its groups (`$1`, `${name}`).
    pub regex: bool,
    /// Upper and lower case differ.
    pub match_case: bool,
}

/// A compiled search.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: Regex,
    expand: bool,
}

/// Longest search text, and the compiled size a pattern may reach.
const MAX_TEXT: usize = 1_000;
const MAX_COMPILED: usize = 1 << 20;

impl Pattern {
    pub fn new(text: &str, options: FindOptions) -> Result<Pattern, String> {
        if text.is_empty() {
            return Err("give a text to find".into());
        }
        if text.chars().count() > MAX_TEXT {
            return Err(format!("the text to find is over {MAX_TEXT} characters"));
        }
        let body = if options.regex {
            text.to_owned()
        } else {
            regex::escape(text)
        };
        let body = if options.whole_words {
            format!(r"\b(?:{body})\b")
        } else {
            body
        };
        let regex = RegexBuilder::new(&body)
            .case_insensitive(!options.match_case)
            .size_limit(MAX_COMPILED)
            .build()
            .map_err(|e| format!("not a regular expression quire can use: {e}"))?;
        Ok(Pattern {
            regex,
            expand: options.regex,
        })
    }

    /// How many times it is found in `text` (not overlapping).
    pub fn count(&self, text: &str) -> usize {
        self.regex.find_iter(text).count()
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// `text` with every match replaced by `with`.
    pub fn replace(&self, text: &str, with: &str) -> String {
        if self.expand {
            self.regex.replace_all(text, with).into_owned()
        } else {
            self.regex.replace_all(text, NoExpand(with)).into_owned()
        }
    }
}

/// Where a search finds its text: how many times, in how many segments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Found {
    pub matches: usize,
    pub segments: usize,
}

/// How often `pattern` is found in the sources and translations of
/// `scene`'s text nodes.
pub fn count(scene: &Scene, pattern: &Pattern) -> Found {
    let mut found = Found::default();
    for node in scene.pages.iter().flat_map(|p| &p.nodes) {
        if let NodeKind::Text {
            text, translation, ..
        } = &node.kind
        {
            let n: usize = [text, translation]
                .into_iter()
                .flatten()
                .map(|t| pattern.count(t))
                .sum();
            if n > 0 {
                found.matches += n;
                found.segments += 1;
            }
        }
    }
    found
}

/// One translation as a replacement leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub page: PageId,
    pub node: NodeId,
    pub before: String,
    pub after: String,
    pub matches: usize,
}

/// What replacing `pattern` with `with` in `scene`'s translations would
/// change, in reading order; `final` translations are left alone (their
/// count is the second value).
pub fn replacements(scene: &Scene, pattern: &Pattern, with: &str) -> (Vec<Replacement>, usize) {
    let mut out = Vec::new();
    let mut locked = 0;
    for page in &scene.pages {
        for node in &page.nodes {
            let NodeKind::Text {
                translation: Some(before),
                ..
            } = &node.kind
            else {
                continue;
            };
            let matches = pattern.count(before);
            if matches == 0 {
                continue;
            }
            if node.kind.state() == Some(TextState::Final) {
                locked += 1;
                continue;
            }
            let after = pattern.replace(before, with);
            if after != *before {
                out.push(Replacement {
                    page: page.id,
                    node: node.id,
                    before: before.clone(),
                    after,
                    matches,
                });
            }
        }
    }
    (out, locked)
}

/// The replacements as one op labelled `label`, each based on the
/// translation it replaces.
pub fn op(replacements: &[Replacement], label: String) -> Op {
    Op::Batch {
        ops: replacements
            .iter()
            .map(|r| Op::UpdateNode {
                page: r.page,
                id: r.node,
                patch: NodePatch::text(Some(Some(r.after.clone())), None),
                based_on: Some(Basis {
                    translation: Some(Some(r.before.clone())),
                    ..Basis::default()
                }),
            })
            .collect(),
        label: Some(label),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str, whole_words: bool, regex: bool, match_case: bool) -> Pattern {
        Pattern::new(
            text,
            FindOptions {
                whole_words,
                regex,
                match_case,
            },
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn words_case_and_expressions() {
        let text = "The cat and the Catalog; the cat's toy.";
        assert_eq!(pattern("cat", false, false, false).count(text), 3);
        assert_eq!(pattern("cat", true, false, false).count(text), 2);
        assert_eq!(pattern("Cat", true, false, true).count(text), 0);
        assert_eq!(
            pattern(r"(\w+)'s", false, true, false).replace(text, "of the $1"),
            "The cat and the Catalog; the of the cat toy."
        );
        // A literal replacement keeps its `$`.
        assert_eq!(
            pattern("toy", false, false, false).replace(text, "$5 toy"),
            "The cat and the Catalog; the cat's $5 toy."
        );
        // Regex metacharacters in a literal search are literal.
        assert_eq!(pattern("a.d", false, false, false).count("and a.d"), 1);
        assert!(
            Pattern::new(
                "(",
                FindOptions {
                    regex: true,
                    ..FindOptions::default()
                }
            )
            .is_err()
        );
        assert!(Pattern::new("", FindOptions::default()).is_err());
    }
}
