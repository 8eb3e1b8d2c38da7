//! SubRip (`.srt`) and WebVTT (`.vtt`), both ways.
//!
//! Import: a subtitle file becomes one page whose text nodes are its cues,
//! in order, each with its [`Timing`]. Cue text is kept as written (markup
//! such as `<i>` included), and so is what the file says around it: the
//! cue's id and settings (WebVTT), coordinates (SubRip), the `WEBVTT`
//! header and the `NOTE`, `STYLE` and `REGION` blocks (kept with the cue
//! they come before, or after the last). Times must be well-formed and
//! each cue must not end before it starts: a file that breaks that is
//! refused with the line that does. Cues may overlap (two speakers at
//! once).
//!
//! Export: the timed text nodes of one page as cues, with their original
//! timings, ids, settings and blocks, the translation where there is one
//! and the source where there is none.

use std::fmt::Write as _;

use quire_model::error::{CoreError, CoreResult};
use quire_model::scene::{NodeKind, Page, Scene, Timing};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubtitleFormat {
    Srt,
    Vtt,
}

impl SubtitleFormat {
    /// From a file name's extension.
    pub fn from_path(name: &str) -> Option<SubtitleFormat> {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".srt") {
            Some(SubtitleFormat::Srt)
        } else if lower.ends_with(".vtt") {
            Some(SubtitleFormat::Vtt)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            SubtitleFormat::Srt => "SubRip",
            SubtitleFormat::Vtt => "WebVTT",
        }
    }
}

/// One cue as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Cue {
    pub timing: Timing,
    pub text: String,
}

/// `HH:MM:SS,mmm` (SubRip) or `HH:MM:SS.mmm` (WebVTT).
pub fn format_time(ms: u64, format: SubtitleFormat) -> String {
    let separator = match format {
        SubtitleFormat::Srt => ',',
        SubtitleFormat::Vtt => '.',
    };
    let (h, m, s, milli) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    format!("{h:02}:{m:02}:{s:02}{separator}{milli:03}")
}

/// `start --> end`, as SubRip writes it (the notes of XLIFF and PO).
pub fn format_timing(t: &Timing) -> String {
    format!(
        "{} --> {}",
        format_time(t.start, SubtitleFormat::Srt),
        format_time(t.end, SubtitleFormat::Srt)
    )
}

/// A time: `H…H:MM:SS,mmm` in SubRip (`.` tolerated, and, as the tools
/// that read it allow, one-digit fields and one to three digits of
/// milliseconds: `0:0:1,5` is 1.005 s), `[H…H:]MM:SS.mmm` in WebVTT.
/// In milliseconds, wide enough for any hours a file writes; [`MAX_TIME_MS`]
/// bounds what is kept.
fn parse_time(s: &str, format: SubtitleFormat) -> Option<u128> {
    let (clock, milli) = match format {
        SubtitleFormat::Srt => s.split_once([',', '.'])?,
        SubtitleFormat::Vtt => s.split_once('.')?,
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let (h, m, sec) = match (format, parts.as_slice()) {
        (_, [h, m, s]) => (*h, *m, *s),
        (SubtitleFormat::Vtt, [m, s]) => ("0", *m, *s),
        _ => return None,
    };
    let digits = |t: &str, len: Option<usize>| {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && len.is_none_or(|l| t.len() == l))
            .then(|| t.parse::<u64>().ok())
            .flatten()
    };
    let (h, m, sec, milli) = match format {
        SubtitleFormat::Srt if milli.len() <= 3 && m.len() <= 2 && sec.len() <= 2 => (
            digits(h, None)?,
            digits(m, None)?,
            digits(sec, None)?,
            digits(milli, None)?,
        ),
        SubtitleFormat::Srt => return None,
        SubtitleFormat::Vtt => (
            digits(h, None)?,
            digits(m, Some(2))?,
            digits(sec, Some(2))?,
            digits(milli, Some(3))?,
        ),
    };
    let (h, m, sec, milli) = (
        u128::from(h),
        u128::from(m),
        u128::from(sec),
        u128::from(milli),
    );
    (m < 60 && sec < 60).then(|| ((h * 60 + m) * 60 + sec) * 1000 + milli)
}

/// The latest time a cue may have: 2^53 ms (about 285,000 years), the
/// most a JSON number (a double) holds exactly, so that every time quire
/// accepts reaches every client as it was read.
pub const MAX_TIME_MS: u64 = 1 << 53;

fn bad(format: SubtitleFormat, line: usize, message: impl std::fmt::Display) -> CoreError {
    CoreError::InvalidInput(format!(
        "not a {} file quire can read: line {line}: {message}",
        format.name()
    ))
}

/// `start --> end[ settings]` on line `n`.
fn parse_timing(line: &str, n: usize, format: SubtitleFormat) -> CoreResult<Timing> {
    let expected = match format {
        SubtitleFormat::Srt => "HH:MM:SS,mmm",
        SubtitleFormat::Vtt => "HH:MM:SS.mmm or MM:SS.mmm",
    };
    let (start, rest) = line
        .split_once("-->")
        .ok_or_else(|| bad(format, n, "a cue without a `start --> end` line"))?;
    let rest = rest.trim_start();
    let (end, settings) = rest.split_once([' ', '\t']).unwrap_or((rest, ""));
    let time = |t: &str| {
        let ms = parse_time(t.trim(), format).ok_or_else(|| {
            bad(
                format,
                n,
                format!("`{}` is not a time ({expected})", t.trim()),
            )
        })?;
        u64::try_from(ms)
            .ok()
            .filter(|ms| *ms <= MAX_TIME_MS)
            .ok_or_else(|| {
                bad(
                    format,
                    n,
                    format!(
                        "`{}` is later than quire can hold exactly ({MAX_TIME_MS} ms, 2^53)",
                        t.trim()
                    ),
                )
            })
    };
    let settings = settings.trim();
    let timing = Timing {
        start: time(start)?,
        end: time(end)?,
        settings: (!settings.is_empty()).then(|| settings.to_owned()),
        ..Timing::default()
    };
    if timing.end < timing.start {
        return Err(bad(
            format,
            n,
            format!(
                "the cue ends ({}) before it starts ({})",
                end.trim(),
                start.trim()
            ),
        ));
    }
    Ok(timing)
}

/// The cues of a subtitle file; see the module doc.
pub fn parse(format: SubtitleFormat, text: &str) -> CoreResult<Vec<Cue>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Blocks of non-blank lines, each with the number of its first line.
    let mut blocks: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            blocks.extend(current.take());
        } else {
            current
                .get_or_insert_with(|| (i + 1, Vec::new()))
                .1
                .push(line);
        }
    }
    blocks.extend(current);
    let blocks = split_at_timings(blocks, format);
    let mut blocks = blocks.into_iter();
    // The blocks read since the last cue, for the next one.
    let mut pending: Vec<String> = Vec::new();
    if format == SubtitleFormat::Vtt {
        let header = blocks.next();
        let ok = header.as_ref().is_some_and(|(_, b)| {
            b[0].strip_prefix("WEBVTT")
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        });
        if !ok {
            return Err(bad(format, 1, "a WebVTT file starts with `WEBVTT`"));
        }
        pending.extend(header.map(|(_, lines)| lines.join("\n")));
    }
    let mut cues: Vec<Cue> = Vec::new();
    for (start, lines) in blocks {
        if format == SubtitleFormat::Vtt
            && ["NOTE", "STYLE", "REGION"].iter().any(|k| {
                lines[0]
                    .strip_prefix(k)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
            })
        {
            pending.push(lines.join("\n"));
            continue;
        }
        // The timing line is the first or, after a cue number or id, the
        // second.
        let at = usize::from(!lines[0].contains("-->"));
        let Some(timing_line) = lines.get(at) else {
            return Err(bad(format, start, "a cue without a `start --> end` line"));
        };
        if format == SubtitleFormat::Srt && at == 1 && lines[0].trim().parse::<u64>().is_err() {
            return Err(bad(
                format,
                start,
                format!("`{}` is not a cue number", lines[0].trim()),
            ));
        }
        let n = start + at;
        // Cues may overlap (two speakers at once): legal in both formats.
        let mut timing = parse_timing(timing_line, n, format)?;
        match format {
            SubtitleFormat::Vtt if at == 1 => timing.id = Some(lines[0].to_owned()),
            SubtitleFormat::Srt if at == 1 => timing.number = lines[0].trim().parse().ok(),
            _ => {}
        }
        if !pending.is_empty() {
            timing.before = Some(pending.join("\n\n"));
            pending.clear();
        }
        cues.push(Cue {
            timing,
            text: lines[at + 1..].join("\n"),
        });
    }
    let Some(last) = cues.last_mut() else {
        return Err(bad(format, 1, "it has no cues"));
    };
    if !pending.is_empty() {
        last.timing.after = Some(pending.join("\n\n"));
    }
    Ok(cues)
}

/// The blocks with each cue in its own: a line holding `-->` after a
/// cue's timing line starts the next cue even without a blank line before
/// it (as WebVTT's parser reads it), with, in SubRip, the cue number on
/// the line before it.
fn split_at_timings(
    blocks: Vec<(usize, Vec<&str>)>,
    format: SubtitleFormat,
) -> Vec<(usize, Vec<&str>)> {
    let mut out = Vec::with_capacity(blocks.len());
    for (start, lines) in blocks {
        let Some(timing) = lines.iter().position(|l| l.contains("-->")) else {
            out.push((start, lines));
            continue;
        };
        let mut from = 0;
        for k in timing + 1..lines.len() {
            if !lines[k].contains("-->") {
                continue;
            }
            let numbered = format == SubtitleFormat::Srt
                && k >= timing + 2
                && lines[k - 1].trim().parse::<u64>().is_ok();
            let cut = if numbered { k - 1 } else { k };
            if cut > from {
                out.push((start + from, lines[from..cut].to_vec()));
                from = cut;
            }
        }
        out.push((start + from, lines[from..].to_vec()));
    }
    out
}

/// Cue text that stays one cue: no blank lines, and no `-->` in WebVTT.
fn cue_text(text: &str, format: SubtitleFormat) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let joined = lines.join("\n");
    match format {
        SubtitleFormat::Srt => joined,
        SubtitleFormat::Vtt => joined.replace("-->", "--&gt;"),
    }
}

/// The cues of `page`: its timed text nodes, in order.
fn page_cues(page: &Page) -> Vec<(&Timing, &str)> {
    page.nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Text {
                text,
                translation,
                timing: Some(t),
                ..
            } => Some((
                &**t,
                translation
                    .as_deref()
                    .filter(|t| !t.is_empty())
                    .or(text.as_deref())
                    .unwrap_or(""),
            )),
            _ => None,
        })
        .collect()
}

/// The subtitle page of `scene` (or of the pages kept in it) as a file.
pub fn export(scene: &Scene, format: SubtitleFormat) -> CoreResult<String> {
    let pages: Vec<&Page> = scene
        .pages
        .iter()
        .filter(|p| !page_cues(p).is_empty())
        .map(|p| &**p)
        .collect();
    let page = match pages.as_slice() {
        [page] => page,
        [] => {
            return Err(CoreError::InvalidInput(
                "no page has timed cues to export (import a .srt or .vtt file first)".into(),
            ));
        }
        more => {
            return Err(CoreError::InvalidInput(format!(
                "{} pages have timed cues ({}); export one of them with `pages`",
                more.len(),
                more.iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };
    let cues = page_cues(page);
    let mut out = String::new();
    // A WebVTT file's own header, else the bare one.
    let has_header = cues
        .first()
        .and_then(|(t, _)| t.before.as_deref())
        .is_some_and(|b| b.starts_with("WEBVTT"));
    if format == SubtitleFormat::Vtt && !has_header {
        out.push_str("WEBVTT\n\n");
    }
    for (i, (timing, text)) in cues.into_iter().enumerate() {
        // Blocks are WebVTT's; a SubRip file has none to write.
        if let Some(before) = timing
            .before
            .as_deref()
            .filter(|_| format == SubtitleFormat::Vtt)
        {
            let _ = write!(out, "{before}\n\n");
        }
        match (format, timing.id.as_deref()) {
            (SubtitleFormat::Srt, _) => {
                let number = timing.number.unwrap_or(i as u64 + 1);
                let _ = writeln!(out, "{number}");
            }
            (SubtitleFormat::Vtt, Some(id)) => {
                let _ = writeln!(out, "{id}");
            }
            (SubtitleFormat::Vtt, None) => {}
        }
        let settings = timing
            .settings
            .as_deref()
            .map(|s| format!(" {s}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{} --> {}{settings}\n{}\n",
            format_time(timing.start, format),
            format_time(timing.end, format),
            cue_text(text, format)
        );
        if let Some(after) = timing
            .after
            .as_deref()
            .filter(|_| format == SubtitleFormat::Vtt)
        {
            let _ = write!(out, "{after}\n\n");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRT: SubtitleFormat = SubtitleFormat::Srt;
    const VTT: SubtitleFormat = SubtitleFormat::Vtt;

    #[test]
    fn a_timing_line_starts_a_cue_and_numbers_are_kept() {
        let srt =
            "0\n00:00:01,000 --> 00:00:02,000\nSame\n1\n00:00:03,000 --> 00:00:04,000\nSame\n";
        let cues = parse(SRT, srt).expect("parses");
        let read: Vec<_> = cues
            .iter()
            .map(|c| (c.timing.number, c.text.as_str()))
            .collect();
        assert_eq!(read, [(Some(0), "Same"), (Some(1), "Same")]);
        let vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\nSame\n00:03.000 --> 00:04.000\nSame\n";
        let cues = parse(VTT, vtt).expect("parses");
        assert_eq!(cues.len(), 2);
        assert_eq!(cues[1].timing.start, 3000);
        assert_eq!(cues[1].text, "Same");
    }

    #[test]
    fn reads_subrip_and_webvtt_cues() {
        let srt = "\u{feff}1\r\n00:00:01,000 --> 00:00:02,500\r\nHello\r\nthere\r\n\r\n\r\n2\r\n01:02:03,004 --> 01:02:04,000 X1:0\r\n<i>Bye</i>\r\n";
        let cues = parse(SRT, srt).expect("parses");
        assert_eq!(cues.len(), 2);
        assert_eq!(
            cues[0].timing,
            Timing {
                start: 1000,
                end: 2500,
                number: Some(1),
                ..Timing::default()
            }
        );
        assert_eq!(cues[1].timing.settings.as_deref(), Some("X1:0"));
        assert_eq!(cues[0].text, "Hello\nthere");
        assert_eq!(cues[1].timing.start, 3_723_004);
        assert_eq!(cues[1].text, "<i>Bye</i>");
        let vtt = "WEBVTT - a title\n\nNOTE a comment\nover lines\n\nintro\n00:01.000 --> 00:02.000 align:start\nHi\n\n00:00:03.000 --> 00:00:04.000\nYo\n";
        let cues = parse(VTT, vtt).expect("parses");
        assert_eq!(
            cues.iter()
                .map(|c| (c.timing.start, c.text.as_str()))
                .collect::<Vec<_>>(),
            vec![(1000, "Hi"), (3000, "Yo")]
        );
    }

    #[test]
    fn bad_times_name_their_line() {
        let cases = [
            (
                SRT,
                "1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n00:00:1,5000 --> 00:00:03,000\nB\n",
                "line 6: `00:00:1,5000` is not a time",
            ),
            (
                SRT,
                "1\n00:00:05,000 --> 00:00:02,000\nA\n",
                "line 2: the cue ends",
            ),
            (SRT, "1\nHello\n", "line 2: a cue without"),
            (
                SRT,
                "one\n00:00:01,000 --> 00:00:02,000\nA\n",
                "line 1: `one` is not a cue number",
            ),
            (
                SRT,
                "1\n00:00:01,000 --> 00:61:02,000\nA\n",
                "line 2: `00:61:02,000`",
            ),
            (
                VTT,
                "1\n00:01.000 --> 00:02.000\nA\n",
                "line 1: a WebVTT file starts",
            ),
            (
                VTT,
                "WEBVTT\n\n00:01,000 --> 00:02.000\nA\n",
                "line 3: `00:01,000`",
            ),
            (SRT, "\n\n", "no cues"),
        ];
        for (format, text, expected) in cases {
            let e = parse(format, text).expect_err(text).to_string();
            assert!(e.contains(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn webvtt_ids_settings_and_blocks_come_back_as_read() {
        let vtt = "WEBVTT - title\nKind: captions\n\nSTYLE\n::cue { color: yellow }\n\n\
                   NOTE first\n\nintro\n00:01.000 --> 00:02.000 position:10% align:start\nHi\n\n\
                   NOTE between\n\n00:00:03.000 --> 00:00:04.000\nYo\n\nNOTE the end\n";
        let cues = parse(VTT, vtt).expect("parses");
        let first = &cues[0].timing;
        assert_eq!(first.id.as_deref(), Some("intro"));
        assert_eq!(first.settings.as_deref(), Some("position:10% align:start"));
        assert_eq!(
            first.before.as_deref(),
            Some("WEBVTT - title\nKind: captions\n\nSTYLE\n::cue { color: yellow }\n\nNOTE first")
        );
        assert_eq!(cues[1].timing.before.as_deref(), Some("NOTE between"));
        assert_eq!(cues[1].timing.after.as_deref(), Some("NOTE the end"));
        let mut page = Page {
            id: quire_model::ids::PageId::new(),
            name: "ep".into(),
            width: None,
            height: None,
            nodes: Vec::new(),
            document: None,
        };
        for cue in &cues {
            let mut kind = NodeKind::source(Some(cue.text.clone()));
            if let NodeKind::Text { timing, .. } = &mut kind {
                *timing = Some(Box::new(cue.timing.clone()));
            }
            page.nodes.push(quire_model::scene::Node {
                id: quire_model::ids::NodeId::new(),
                transform: Default::default(),
                visible: true,
                kind,
            });
        }
        let mut scene = Scene::new("s", "2026-12-03T00:00:00Z");
        scene.pages.push(page.into());
        let written = export(&scene, VTT).unwrap();
        let full = vtt.replace("00:01.000 --> 00:02.000", "00:00:01.000 --> 00:00:02.000");
        assert_eq!(written, full + "\n");
    }

    #[test]
    fn times_are_written_back_as_read() {
        for ms in [0, 999, 61_001, 3_599_999, 360_000_000] {
            for format in [SRT, VTT] {
                assert_eq!(
                    parse_time(&format_time(ms, format), format),
                    Some(u128::from(ms))
                );
            }
        }
        assert_eq!(cue_text("a\n\n-->b", VTT), "a\n--&gt;b");
        // SubRip as sloppy tools write it, read as pysrt reads it.
        assert_eq!(parse_time("0:0:1,5", SRT), Some(1005));
        assert_eq!(parse_time("00:00:0,000", SRT), Some(0));
        assert_eq!(parse_time("00:00:1.500", VTT), None);
    }
}
