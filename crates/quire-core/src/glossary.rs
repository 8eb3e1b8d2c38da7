//! The project glossary: terms `{ source, target, note?, caseSensitive? }`,
//! one per source text, kept in the project (sorted by source) and changed
//! only by [`quire_model::op::Op::UpdateGlossary`], so every edit and import is
//! an undoable history entry that the log replays.
//!
//! Also here: merging a CSV or TBX file's terms (read by
//! `quire_formats::glossary`) into a glossary ([`Core::import_glossary`]),
//! and [`Matcher`], which finds a glossary's
//! terms in a text for the `terminology` QA rule and for `llm-translate`.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::{Deserialize, Serialize};

use super::Core;
use quire_formats::glossary::GlossaryFormat;
use quire_formats::glossary::{parse_csv, parse_tbx};
use quire_model::error::{CoreError, CoreResult};
use quire_model::glossary::{Term, position};
use quire_model::ids::SessionId;
use quire_model::op::Op;

/// Whether `c` joins letters into words (so a term must not match inside
/// one); scripts written without spaces (CJK) have no such boundary.
fn wordish(c: char) -> bool {
    c.is_alphanumeric() && u32::from(c) < 0x2E80
}

/// A term found in `text` at `start..end` is a whole word (or in a script
/// without spaces).
fn at_boundary(text: &str, start: usize, end: usize) -> bool {
    let inner_first = text[start..].chars().next();
    let inner_last = text[..end].chars().next_back();
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    let joins = |outer: Option<char>, inner: Option<char>| {
        outer.is_some_and(wordish) && inner.is_some_and(wordish)
    };
    !joins(before, inner_first) && !joins(after, inner_last)
}

/// Finds a glossary's terms in texts: one automaton for the case-sensitive
/// terms, one over lower-cased text for the rest; whole words only.
#[derive(Debug)]
pub struct Matcher {
    terms: Vec<Term>,
    exact: Option<(AhoCorasick, Vec<usize>)>,
    folded: Option<(AhoCorasick, Vec<usize>)>,
}

impl Matcher {
    pub fn new(terms: &[Term]) -> Matcher {
        let build = |case_sensitive: bool| {
            let (patterns, ids): (Vec<String>, Vec<usize>) = terms
                .iter()
                .enumerate()
                .filter(|(_, t)| t.case_sensitive == case_sensitive && !t.source.is_empty())
                .map(|(i, t)| {
                    let p = if case_sensitive {
                        t.source.clone()
                    } else {
                        t.source.to_lowercase()
                    };
                    (p, i)
                })
                .unzip();
            if patterns.is_empty() {
                return None;
            }
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .ok()
                .map(|ac| (ac, ids))
        };
        Matcher {
            terms: terms.to_vec(),
            exact: build(true),
            folded: build(false),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The terms whose source occurs in `text`, each once, in glossary
    /// order.
    pub fn found(&self, text: &str) -> Vec<&Term> {
        let mut hits = Vec::new();
        let mut scan = |ac: &AhoCorasick, ids: &[usize], hay: &str| {
            for m in ac.find_iter(hay) {
                if at_boundary(hay, m.start(), m.end()) {
                    hits.push(ids[m.pattern().as_usize()]);
                }
            }
        };
        if let Some((ac, ids)) = &self.exact {
            scan(ac, ids, text);
        }
        if let Some((ac, ids)) = &self.folded {
            scan(ac, ids, &text.to_lowercase());
        }
        hits.sort_unstable();
        hits.dedup();
        hits.into_iter().map(|i| &self.terms[i]).collect()
    }
}

/// Whether `translation` renders `term` (holds its target).
pub fn rendered(term: &Term, translation: &str) -> bool {
    if term.case_sensitive {
        translation.contains(&term.target)
    } else {
        translation
            .to_lowercase()
            .contains(&term.target.to_lowercase())
    }
}

/// What a glossary import is asked for.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GlossaryImport {
    /// csv (a header row naming `source` and `target`, and optionally
    /// `note` and `caseSensitive`) or tbx.
    pub format: GlossaryFormat,
    /// The file's text.
    pub content: String,
}

/// What a glossary import did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlossaryReport {
    /// The epoch after the import (unchanged when nothing changed).
    pub epoch: u64,
    /// Terms new to the glossary.
    pub added: usize,
    /// Terms whose target, note or case rule changed.
    pub updated: usize,
    /// Terms the glossary already had as they are.
    pub unchanged: usize,
}

/// The op that brings `incoming` into `current` (later terms of `incoming`
/// win over earlier ones with the same source), and what it does.
fn merge(current: &[Term], incoming: Vec<Term>) -> (Vec<Term>, usize, usize, usize) {
    let mut latest: HashMap<String, Term> = HashMap::new();
    let mut order = Vec::new();
    for term in incoming {
        if !latest.contains_key(&term.source) {
            order.push(term.source.clone());
        }
        latest.insert(term.source.clone(), term);
    }
    let (mut set, mut added, mut updated, mut unchanged) = (Vec::new(), 0, 0, 0);
    for source in order {
        let Some(term) = latest.remove(&source) else {
            continue;
        };
        match position(current, &source) {
            Ok(i) if current[i] == term => unchanged += 1,
            Ok(_) => {
                updated += 1;
                set.push(term);
            }
            Err(_) => {
                added += 1;
                set.push(term);
            }
        }
    }
    (set, added, updated, unchanged)
}

impl Core {
    /// Adds (or updates, by source) the terms of a CSV or TBX file to the
    /// session's glossary as one history entry; a file that cannot be read
    /// changes nothing and says where it is wrong.
    pub async fn import_glossary(
        &self,
        session: SessionId,
        import: GlossaryImport,
    ) -> CoreResult<GlossaryReport> {
        let snapshot = self.scene(session).await?;
        let project = &snapshot.scene.project;
        let (source, target) = (
            project.source_language.clone(),
            project.target_language.clone(),
        );
        let GlossaryImport { format, content } = import;
        let terms = super::blocking(move || match format {
            GlossaryFormat::Csv => parse_csv(&content),
            GlossaryFormat::Tbx => parse_tbx(&content, source.as_deref(), target.as_deref()),
        })
        .await?;
        if terms.is_empty() {
            return Err(CoreError::InvalidInput("the file has no terms".into()));
        }
        let (set, added, updated, unchanged) = merge(&project.glossary, terms);
        let mut report = GlossaryReport {
            epoch: snapshot.epoch,
            added,
            updated,
            unchanged,
        };
        if !set.is_empty() {
            let count = set.len();
            let op = Op::Batch {
                ops: vec![Op::UpdateGlossary {
                    set,
                    remove: Vec::new(),
                }],
                label: Some(format!(
                    "import glossary · {count} term{}",
                    if count == 1 { "" } else { "s" }
                )),
            };
            report.epoch = self.apply(session, op).await?.epoch;
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(source: &str, target: &str, case_sensitive: bool) -> Term {
        Term {
            source: source.into(),
            target: target.into(),
            note: None,
            case_sensitive,
        }
    }

    #[test]
    fn terms_are_found_as_whole_words_with_their_case_rule() {
        let m = Matcher::new(&[
            term("cat", "chat", false),
            term("Apple", "Apple", true),
            term("東京", "Tokyo", false),
        ]);
        let found = |t: &str| {
            m.found(t)
                .iter()
                .map(|t| t.source.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(found("The CAT sat."), ["cat"]);
        assert_eq!(found("concatenate"), Vec::<String>::new());
        assert_eq!(found("an apple, an Apple"), ["Apple"]);
        assert_eq!(found("an apple"), Vec::<String>::new());
        assert_eq!(found("私は東京に"), ["東京"]);
        assert!(rendered(&term("cat", "chat", false), "Le Chat"));
        assert!(!rendered(&term("Apple", "Apple", true), "apple"));
    }
}
