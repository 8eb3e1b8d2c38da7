//! Subtitle cues: what a viewer reads of one (its lines without tags), its
//! reading speed, and the `qa` rules a subtitle style guide sets
//! (`line-length`, `lines`, `reading-speed`, `duration`, `gap`,
//! `overlap`). The TUI's status line shows the same [`measure`] while a
//! cue is typed.

use crate::engines::text::{Piece, pieces};
use crate::ids::NodeId;
use crate::scene::SubtitleLimits;
use crate::scene::{NodeKind, Page, Timing};

/// The text a viewer sees: tags (`<i>`, `{\an8}`) and placeholders left
/// out.
pub fn visible(text: &str) -> String {
    pieces(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Plain(s) => Some(s),
            Piece::Placeholder(_) => None,
        })
        .collect()
}

/// A cue's counts, the way subtitle guides count: characters per line
/// (spaces and punctuation included, tags not), and characters per second
/// of its duration (line breaks not counted).
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    pub lines: Vec<usize>,
    pub chars: usize,
    /// `None` for a cue of no duration.
    pub cps: Option<f64>,
}

pub fn measure(text: &str, duration_ms: u64) -> Measure {
    let seen = visible(text);
    let lines: Vec<usize> = seen
        .trim_end_matches(['\n', '\r'])
        .split('\n')
        .map(|l| l.trim_end_matches('\r').chars().count())
        .collect();
    let chars = lines.iter().sum();
    let cps = (duration_ms > 0).then(|| chars as f64 * 1000.0 / duration_ms as f64);
    Measure { lines, chars, cps }
}

impl Measure {
    /// The limits this cue goes past, as (rule, message) pairs.
    pub fn over(&self, limits: &SubtitleLimits) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for (i, &n) in self.lines.iter().enumerate() {
            if n > limits.line_length {
                out.push((
                    "line-length",
                    format!(
                        "line {} has {n} characters, over {}",
                        i + 1,
                        limits.line_length
                    ),
                ));
            }
        }
        if self.lines.len() > limits.lines {
            out.push((
                "lines",
                format!("{} lines, over {}", self.lines.len(), limits.lines),
            ));
        }
        if let Some(cps) = self.cps.filter(|&c| c > limits.reading_speed) {
            out.push((
                "reading-speed",
                format!(
                    "{cps:.1} characters a second, over {} ({} characters)",
                    limits.reading_speed, self.chars
                ),
            ));
        }
        out
    }

    /// `38·12 chars · 15.2 cps`: what an editor's status line shows.
    pub fn summary(&self) -> String {
        let lines: Vec<String> = self.lines.iter().map(usize::to_string).collect();
        match self.cps {
            Some(cps) => format!("{} chars · {cps:.1} cps", lines.join("·")),
            None => format!("{} chars", lines.join("·")),
        }
    }
}

/// The 1-based number of each cue (a text node with timing) of a page, in
/// the page's order: what a reviewer calls "cue 26".
pub fn numbers(page: &Page) -> impl Iterator<Item = (NodeId, usize)> + '_ {
    let timed = page.nodes.iter().filter(|n| timing(&n.kind).is_some());
    (1..).zip(timed).map(|(number, n)| (n.id, number))
}

fn timing(kind: &NodeKind) -> Option<&Timing> {
    match kind {
        NodeKind::Text { timing, .. } => timing.as_deref(),
        _ => None,
    }
}

fn seconds(ms: u64) -> String {
    let s = format!("{:.3}", ms as f64 / 1000.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} s")
}

/// The subtitle problems of `page`'s cues, each as (rule, node, message):
/// a translation's lines and reading speed, and every cue's duration and
/// its gap to the cue before (by start time).
pub fn problems(page: &Page, limits: &SubtitleLimits) -> Vec<(&'static str, NodeId, String)> {
    let mut out = Vec::new();
    let mut cues: Vec<(usize, NodeId, &Timing)> = Vec::new();
    let timed = page.nodes.iter().filter(|n| timing(&n.kind).is_some());
    for (number, node) in (1..).zip(timed) {
        let NodeKind::Text {
            text,
            translation,
            timing: Some(timing),
            ..
        } = &node.kind
        else {
            continue;
        };
        if text.as_deref().is_none_or(|t| t.trim().is_empty()) {
            continue;
        }
        cues.push((number, node.id, timing));
        let duration = timing.end.saturating_sub(timing.start);
        if let Some(translation) = translation.as_deref().filter(|t| !t.trim().is_empty()) {
            for (rule, message) in measure(translation, duration).over(limits) {
                out.push((rule, node.id, format!("cue {number}: {message}")));
            }
        }
        if duration < limits.min_duration_ms {
            out.push((
                "duration",
                node.id,
                format!(
                    "cue {number}: shown {}, under {}",
                    seconds(duration),
                    seconds(limits.min_duration_ms)
                ),
            ));
        } else if duration > limits.max_duration_ms {
            out.push((
                "duration",
                node.id,
                format!(
                    "cue {number}: shown {}, over {}",
                    seconds(duration),
                    seconds(limits.max_duration_ms)
                ),
            ));
        }
    }
    cues.sort_by_key(|(number, _, t)| (t.start, *number));
    for pair in cues.windows(2) {
        let ((before, _, earlier), (number, id, timing)) = (pair[0], pair[1]);
        if timing.start < earlier.end {
            out.push((
                "overlap",
                id,
                format!(
                    "cue {number} starts {} before cue {before} ends",
                    seconds(earlier.end - timing.start)
                ),
            ));
        } else if timing.start - earlier.end < limits.min_gap_ms {
            out.push((
                "gap",
                id,
                format!(
                    "cue {number} starts {} ms after cue {before} ends, under {} ms",
                    timing.start - earlier.end,
                    limits.min_gap_ms
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::SubtitleProfile;

    #[test]
    fn tags_are_not_counted_and_line_breaks_are_not_read() {
        let m = measure("<i>Hello there,</i>\n{\\an8}General Kenobi!", 2_000);
        assert_eq!(m.lines, [12, 15]);
        assert_eq!(m.chars, 27);
        assert_eq!(m.cps, Some(13.5));
        assert_eq!(m.summary(), "12·15 chars · 13.5 cps");
        assert!(m.over(&SubtitleProfile::Netflix.limits()).is_empty());
        let fast = measure("Twenty-seven characters, ok", 1_000);
        let over = fast.over(&SubtitleProfile::NetflixChildren.limits());
        assert_eq!(over.len(), 1, "{over:?}");
        assert_eq!(over[0].0, "reading-speed");
    }

    #[test]
    fn a_cue_with_no_duration_has_no_speed() {
        assert_eq!(measure("Hi", 0).cps, None);
        assert_eq!(measure("Hi", 0).summary(), "2 chars");
    }
}
