//! The project glossary: terms `{ source, target, note?, caseSensitive? }`,
//! one per source text, kept in the project (sorted by source) and changed
//! only by [`super::op::Op::UpdateGlossary`], so every edit and import is
//! an undoable history entry that the log replays.
//!
//! Also here: reading CSV and TBX files into terms
//! ([`Core::import_glossary`]), and [`Matcher`], which finds a glossary's
//! terms in a text for the `terminology` QA rule and for `llm-translate`.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::{Deserialize, Serialize};

use super::Core;
use super::error::{CoreError, CoreResult};
use super::ids::SessionId;
use super::op::Op;
pub use quire_model::glossary::{Term, position};

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

/// The formats a glossary comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GlossaryFormat {
    Csv,
    Tbx,
}

impl GlossaryFormat {
    /// From a file's text, when there is no name to go by: XML whose root
    /// is `<tbx>` or `<martif>` is TBX, a first line naming a `source` and
    /// a `target` column is CSV; anything else is not a glossary.
    pub fn sniff(content: &str) -> Option<GlossaryFormat> {
        let text = content.trim_start_matches('\u{feff}').trim_start();
        if text.starts_with('<') {
            let head: String = text.chars().take(1024).collect();
            return (head.contains("<tbx") || head.contains("<martif"))
                .then_some(GlossaryFormat::Tbx);
        }
        let first = text.lines().next().unwrap_or("").to_ascii_lowercase();
        let columns: Vec<&str> = first
            .split(',')
            .map(|c| c.trim().trim_matches('"'))
            .collect();
        (columns.contains(&"source") && columns.contains(&"target")).then_some(GlossaryFormat::Csv)
    }

    /// From a file name's extension.
    pub fn from_path(path: &str) -> Option<GlossaryFormat> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".csv") {
            Some(GlossaryFormat::Csv)
        } else if lower.ends_with(".tbx") {
            Some(GlossaryFormat::Tbx)
        } else {
            None
        }
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

fn bad_csv(line: u64, message: impl std::fmt::Display) -> CoreError {
    CoreError::InvalidInput(format!(
        "not a glossary CSV quire can read: line {line}: {message}"
    ))
}

/// `true`/`false`, `yes`/`no`, `1`/`0`, or empty (false).
fn flag(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "false" | "no" | "0" => Some(false),
        "true" | "yes" | "1" => Some(true),
        _ => None,
    }
}

/// The terms of a CSV file: a header row names the columns (`source`,
/// `target`, optionally `note` and `caseSensitive`; any order, any case);
/// every row must have the source and target.
pub fn parse_csv(content: &str) -> CoreResult<Vec<Term>> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(content.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| bad_csv(1, e))?
        .iter()
        .map(|h| h.trim().to_ascii_lowercase().replace(['_', '-', ' '], ""))
        .collect::<Vec<_>>();
    let column = |names: &[&str]| header.iter().position(|h| names.contains(&h.as_str()));
    let (Some(source), Some(target)) = (
        column(&["source", "term", "sourceterm"]),
        column(&["target", "translation", "targetterm"]),
    ) else {
        return Err(bad_csv(
            1,
            format!(
                "the header row must name a `source` and a `target` column (it has: {})",
                header.join(", ")
            ),
        ));
    };
    let note = column(&["note", "notes", "comment", "definition"]);
    let case = column(&["casesensitive", "case"]);
    let mut terms = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, csv::Position::line);
            bad_csv(line, e)
        })?;
        let line = record.position().map_or(0, csv::Position::line);
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let field = |i: usize, name: &str| {
            record
                .get(i)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| bad_csv(line, format!("the `{name}` column is missing or empty")))
        };
        let case_sensitive = match case.and_then(|i| record.get(i)) {
            Some(v) => flag(v).ok_or_else(|| {
                bad_csv(line, format!("caseSensitive is `{v}`, not true or false"))
            })?,
            None => false,
        };
        terms.push(Term {
            source: field(source, "source")?.to_owned(),
            target: field(target, "target")?.to_owned(),
            note: note
                .and_then(|i| record.get(i))
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
            case_sensitive,
        });
    }
    Ok(terms)
}

fn bad_tbx(message: impl std::fmt::Display) -> CoreError {
    CoreError::InvalidInput(format!("not a TBX file quire can read: {message}"))
}

/// Whether a TBX/`xml:lang` tag is `wanted` or one of its regional forms
/// (`pt` takes `pt-BR`).
fn lang_matches(tag: &str, wanted: &str) -> bool {
    let tag = tag.to_ascii_lowercase().replace('_', "-");
    let wanted = wanted.to_ascii_lowercase();
    tag == wanted
        || tag.starts_with(&format!("{wanted}-"))
        || wanted.starts_with(&format!("{tag}-"))
}

/// The terms of a TBX file (TBX 2 `martif`/`termEntry` or TBX 3
/// `tbx`/`conceptEntry`): per entry, the first term of the source language
/// and the first of the target language (the project's; without them, the
/// entry's first and second languages); a definition or note as the note.
pub fn parse_tbx(
    content: &str,
    source_language: Option<&str>,
    target_language: Option<&str>,
) -> CoreResult<Vec<Term>> {
    let doc = super::xml::parse(content).map_err(bad_tbx)?;
    let root = doc.root_element().tag_name().name();
    if root != "martif" && root != "tbx" {
        return Err(bad_tbx(format!(
            "the root element is <{root}>, not <tbx> or <martif>"
        )));
    }
    let named =
        |n: &roxmltree::Node<'_, '_>, name: &str| n.is_element() && n.tag_name().name() == name;
    let text_of = |n: roxmltree::Node<'_, '_>| -> String {
        n.descendants()
            .filter(roxmltree::Node::is_text)
            .filter_map(|t| t.text())
            .collect::<String>()
            .trim()
            .to_owned()
    };
    let mut terms = Vec::new();
    for entry in doc
        .descendants()
        .filter(|n| named(n, "termEntry") || named(n, "conceptEntry"))
    {
        let at = doc.text_pos_at(entry.range().start);
        let mut langs: Vec<(String, String)> = Vec::new();
        for set in entry
            .children()
            .filter(|n| named(n, "langSet") || named(n, "langSec"))
        {
            let lang = set
                .attribute((roxmltree::NS_XML_URI, "lang"))
                .or_else(|| set.attribute("lang"))
                .ok_or_else(|| {
                    bad_tbx(format!(
                        "a <{}> without xml:lang at {at}",
                        set.tag_name().name()
                    ))
                })?;
            if let Some(term) = set.descendants().find(|n| named(n, "term")) {
                langs.push((lang.to_owned(), text_of(term)));
            }
        }
        let pick = |wanted: Option<&str>, fallback: usize| match wanted {
            Some(w) => langs.iter().find(|(l, _)| lang_matches(l, w)),
            None => langs.get(fallback),
        };
        let (Some((_, source)), Some((_, target))) =
            (pick(source_language, 0), pick(target_language, 1))
        else {
            continue;
        };
        if source.is_empty() || target.is_empty() || source == target && langs.len() < 2 {
            continue;
        }
        let note = entry
            .descendants()
            .find(|n| {
                (named(n, "descrip") && n.attribute("type") == Some("definition"))
                    || named(n, "note")
            })
            .map(text_of)
            .filter(|n| !n.is_empty());
        terms.push(Term {
            source: source.clone(),
            target: target.clone(),
            note,
            case_sensitive: false,
        });
    }
    if terms.is_empty() {
        return Err(bad_tbx(match (source_language, target_language) {
            (Some(s), Some(t)) => format!("no entry has terms in both {s} and {t}"),
            _ => "no entry has terms in two languages".to_owned(),
        }));
    }
    Ok(terms)
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

    #[test]
    fn csv_columns_come_from_the_header_and_bad_rows_name_their_line() {
        let terms = parse_csv("Target,Source,Note\nchat,cat,animal\n\"porte, d'entrée\",door,\n")
            .expect("reads");
        assert_eq!(terms.len(), 2);
        assert_eq!(terms[0].note.as_deref(), Some("animal"));
        assert_eq!(terms[1].target, "porte, d'entrée");
        let cases = [
            (
                "source,target\ncat,chat\ndog\n",
                "line 3: the `target` column is missing",
            ),
            (
                "word,meaning\ncat,chat\n",
                "line 1: the header row must name",
            ),
            (
                "source,target,caseSensitive\ncat,chat,maybe\n",
                "line 2: caseSensitive is `maybe`",
            ),
        ];
        for (csv, expected) in cases {
            let e = parse_csv(csv).expect_err(csv).to_string();
            assert!(e.contains(expected), "{csv:?}: {e}");
        }
    }

    #[test]
    fn tbx_entries_give_the_project_languages() {
        let tbx = r#"<?xml version="1.0"?>
<tbx type="TBX-Basic" style="dca" xml:lang="en" xmlns="urn:iso:std:iso:30042:ed-2">
 <text><body>
  <conceptEntry id="1">
   <descrip type="definition">a small feline</descrip>
   <langSec xml:lang="en"><termSec><term>cat</term></termSec></langSec>
   <langSec xml:lang="de"><termSec><term>Katze</term></termSec></langSec>
   <langSec xml:lang="fr-FR"><termSec><term>chat</term></termSec></langSec>
  </conceptEntry>
  <conceptEntry id="2">
   <langSec xml:lang="en"><termSec><term>dog</term></termSec></langSec>
  </conceptEntry>
 </body></text>
</tbx>"#;
        let terms = parse_tbx(tbx, Some("en"), Some("fr")).expect("reads");
        assert_eq!(terms.len(), 1);
        assert_eq!(
            (terms[0].source.as_str(), terms[0].target.as_str()),
            ("cat", "chat")
        );
        assert_eq!(terms[0].note.as_deref(), Some("a small feline"));
        assert!(
            parse_tbx("source,target", None, None)
                .unwrap_err()
                .to_string()
                .contains("not well-formed XML")
        );
        assert!(
            parse_tbx(tbx, Some("en"), Some("ja"))
                .unwrap_err()
                .to_string()
                .contains("in both en and ja")
        );
    }
}
