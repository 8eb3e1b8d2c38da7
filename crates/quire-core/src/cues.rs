//! Subtitle cues: what a viewer reads of one (its lines without tags), its
//! reading speed against a style guide's limits, and the cues of a page
//! as the `qa` engine's subtitle rules read them (`engines/qa/`). The
//! TUI's status line shows the same [`measure`] while a cue is typed.

use crate::engines::text::{Piece, pieces};
use quire_model::ids::NodeId;
use quire_model::scene::SubtitleLimits;
use quire_model::scene::{NodeKind, Page, Timing};

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
    /// The limits this cue goes past, as (rule, message) pairs: what
    /// the `line-length`, `lines` and `reading-speed` rules say.
    pub fn over(&self, limits: &SubtitleLimits) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = self
            .long_lines(limits)
            .into_iter()
            .map(|m| ("line-length", m))
            .collect();
        out.extend(self.too_many_lines(limits).map(|m| ("lines", m)));
        out.extend(self.too_fast(limits).map(|m| ("reading-speed", m)));
        out
    }

    /// Each line longer than the limit.
    pub fn long_lines(&self, limits: &SubtitleLimits) -> Vec<String> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > limits.line_length)
            .map(|(i, n)| {
                format!(
                    "line {} has {n} characters, over {}",
                    i + 1,
                    limits.line_length
                )
            })
            .collect()
    }

    /// More lines than the limit.
    pub fn too_many_lines(&self, limits: &SubtitleLimits) -> Option<String> {
        (self.lines.len() > limits.lines)
            .then(|| format!("{} lines, over {}", self.lines.len(), limits.lines))
    }

    /// Faster to read than the limit.
    pub fn too_fast(&self, limits: &SubtitleLimits) -> Option<String> {
        let cps = self.cps.filter(|&c| c > limits.reading_speed)?;
        Some(format!(
            "{cps:.1} characters a second, over {} ({} characters)",
            limits.reading_speed, self.chars
        ))
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

/// A cue as the subtitle rules read it: a text node with timing and
/// source text.
#[derive(Debug, Clone, Copy)]
pub struct Cue<'a> {
    /// What a reviewer calls it: "cue 26" (among the page's timed nodes).
    pub number: usize,
    pub node: NodeId,
    pub timing: &'a Timing,
    /// Its translation, when it has one that is not blank.
    pub translation: Option<&'a str>,
}

impl Cue<'_> {
    pub fn duration_ms(&self) -> u64 {
        self.timing.end.saturating_sub(self.timing.start)
    }
}

/// The cues of `page` with source text, in the page's order.
pub fn cues(page: &Page) -> Vec<Cue<'_>> {
    let timed = page.nodes.iter().filter(|n| timing(&n.kind).is_some());
    (1..)
        .zip(timed)
        .filter_map(|(number, node)| {
            let NodeKind::Text {
                text,
                translation,
                timing: Some(timing),
                ..
            } = &node.kind
            else {
                return None;
            };
            if text.as_deref().is_none_or(|t| t.trim().is_empty()) {
                return None;
            }
            Some(Cue {
                number,
                node: node.id,
                timing,
                translation: translation.as_deref().filter(|t| !t.trim().is_empty()),
            })
        })
        .collect()
}

/// `1.5 s`: a duration as the subtitle rules say it.
pub fn seconds(ms: u64) -> String {
    let s = format!("{:.3}", ms as f64 / 1000.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} s")
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_model::scene::SubtitleProfile;

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
