//! Glossary files: CSV (a header row naming the columns) and TBX (2 and
//! 3) read into terms. Merging them into a project's glossary is the
//! core's (`Core::import_glossary`).

use quire_model::error::{CoreError, CoreResult};
use quire_model::glossary::Term;
use serde::{Deserialize, Serialize};

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
    let doc = crate::xml::parse(content).map_err(bad_tbx)?;
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
#[cfg(test)]
mod tests {
    use super::*;

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
