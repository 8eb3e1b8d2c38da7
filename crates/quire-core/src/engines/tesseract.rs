//! Tesseract's TSV output (`tesseract IMAGE - tsv`) turned into text nodes:
//! one node per paragraph, its words joined by spaces and its lines by
//! newlines, its box the union of its words' boxes.

use std::collections::BTreeMap;

use crate::op::NewNode;
use crate::scene::{NodeKind, Transform};

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

#[derive(Default)]
struct Paragraph {
    lines: BTreeMap<u32, Vec<String>>,
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
    words: usize,
}

/// Parses Tesseract TSV; an error names the line that does not fit.
pub fn parse(tsv: &str) -> Result<Vec<NewNode>, String> {
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
    let mut paragraphs: BTreeMap<(u32, u32, u32), Paragraph> = BTreeMap::new();
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
        if text.is_empty() || num(10)? < 0.0 {
            continue;
        }
        let (left, top, width, height) = (num(6)?, num(7)?, num(8)?, num(9)?);
        let key = (num(1)? as u32, num(2)? as u32, num(3)? as u32);
        let p = paragraphs.entry(key).or_default();
        if p.words == 0 {
            (p.left, p.top, p.right, p.bottom) = (left, top, left + width, top + height);
        } else {
            p.left = p.left.min(left);
            p.top = p.top.min(top);
            p.right = p.right.max(left + width);
            p.bottom = p.bottom.max(top + height);
        }
        p.words += 1;
        p.lines
            .entry(num(4)? as u32)
            .or_default()
            .push(text.to_owned());
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
            },
        })
        .collect())
}
