//! Tesseract's TSV output (`tesseract IMAGE - tsv`) turned into text nodes:
//! one node per paragraph, its words joined by spaces and its lines by
//! newlines, its box the union of its words' boxes.

use std::collections::BTreeMap;

use quire_model::op::NewNode;
use quire_model::scene::{NodeKind, Transform};

const COLUMNS: [&str; 12] = [
    "level",
    "page_num",
    "block_num",
    "par_num",
    "line_num",
    "word_num",
    "left",
    "top",
    "width",
    "height",
    "conf",
    "text",
];

/// Word rows (level 5) carry the text.
const WORD_LEVEL: u32 = 5;

/// One word Tesseract read.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// Its paragraph: page, block and paragraph numbers.
    pub paragraph: (u32, u32, u32),
    /// Its line within the paragraph.
    pub line: u32,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    /// 0 to 100.
    pub confidence: f64,
    pub text: String,
}

/// The words of Tesseract TSV, in its order; an error names the line that
/// does not fit.
pub fn words(tsv: &str) -> Result<Vec<Word>, String> {
    let mut rows = tsv.lines().enumerate();
    let Some((_, header)) = rows.next() else {
        return Err("empty output (expected a Tesseract TSV header)".into());
    };
    let header: Vec<&str> = header.trim_end_matches('\r').split('\t').collect();
    if header != COLUMNS {
        return Err(format!(
            "line 1: not a Tesseract TSV header (expected {})",
            COLUMNS.join(", ")
        ));
    }
    let mut words = Vec::new();
    for (i, row) in rows {
        let row = row.trim_end_matches('\r');
        if row.is_empty() {
            continue;
        }
        let cells: Vec<&str> = row.splitn(12, '\t').collect();
        if cells.len() < 11 {
            return Err(format!(
                "line {}: {} columns, expected 12",
                i + 1,
                cells.len()
            ));
        }
        let num = |k: usize| -> Result<f64, String> {
            cells[k].trim().parse::<f64>().map_err(|_| {
                format!(
                    "line {}: column {} is not a number: `{}`",
                    i + 1,
                    COLUMNS[k],
                    cells[k]
                )
            })
        };
        let level = num(0)? as u32;
        if level != WORD_LEVEL {
            continue;
        }
        let text = cells.get(11).map_or("", |t| t.trim());
        let confidence = num(10)?;
        if text.is_empty() || confidence < 0.0 {
            continue;
        }
        words.push(Word {
            paragraph: (num(1)? as u32, num(2)? as u32, num(3)? as u32),
            line: num(4)? as u32,
            left: num(6)?,
            top: num(7)?,
            width: num(8)?,
            height: num(9)?,
            confidence,
            text: text.to_owned(),
        });
    }
    Ok(words)
}

#[derive(Default)]
struct Paragraph {
    lines: BTreeMap<u32, Vec<String>>,
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
    words: usize,
}

/// Parses Tesseract TSV into one node per paragraph; an error names the
/// line that does not fit.
pub fn parse(tsv: &str) -> Result<Vec<NewNode>, String> {
    let mut paragraphs: BTreeMap<(u32, u32, u32), Paragraph> = BTreeMap::new();
    for word in words(tsv)? {
        let (left, top) = (word.left, word.top);
        let (right, bottom) = (left + word.width, top + word.height);
        let p = paragraphs.entry(word.paragraph).or_default();
        if p.words == 0 {
            (p.left, p.top, p.right, p.bottom) = (left, top, right, bottom);
        } else {
            p.left = p.left.min(left);
            p.top = p.top.min(top);
            p.right = p.right.max(right);
            p.bottom = p.bottom.max(bottom);
        }
        p.words += 1;
        p.lines.entry(word.line).or_default().push(word.text);
    }
    Ok(paragraphs
        .into_values()
        .map(|p| NewNode {
            id: None,
            transform: Transform {
                x: p.left,
                y: p.top,
                width: p.right - p.left,
                height: p.bottom - p.top,
                rotation: None,
            },
            visible: true,
            kind: NodeKind::Text {
                text: Some(
                    p.lines
                        .values()
                        .map(|words| words.join(" "))
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                translation: None,
                state: None,
                origin: None,
                source_lang: None,
                style: None,
                timing: None,
                region: None,
                found_by: None,
                source_edit: None,
                entry: None,
                suggestions: Vec::new(),
            },
        })
        .collect())
}
