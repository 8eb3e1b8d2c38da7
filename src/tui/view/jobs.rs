//! The jobs pane: each job's progress, result and warnings, and the files
//! attached for the next import.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Wrap};

use super::{accent, bold, clip, dim, fit, selected};
use crate::tui::app::{App, Pane};
use crate::tui::layout::{inner, scroll_offset, shown_gauges, warning_rows};
use quire_core::events::{JobStatus, JobSummary};

/// `1 warning`, `2 warnings`.
pub(super) fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

pub(super) fn job_label(job: &JobSummary) -> (String, f64, Color) {
    let percent = job.progress.as_ref().map_or(0.0, |p| p.overall_percent);
    let status = match job.status {
        JobStatus::Queued => "queued",
        JobStatus::Running => "running",
        JobStatus::Completed => "done",
        JobStatus::CompletedWithErrors => "done with warnings",
        JobStatus::Cancelled => "cancelled",
        JobStatus::Failed => "failed",
    };
    // A step's summary says what it did; it is not a warning.
    let said: Vec<&str> = job
        .warnings
        .iter()
        .filter(|w| w.finding.rule == "summary")
        .map(|w| w.finding.message.as_str())
        .collect();
    let warnings = job.warnings.len() - said.len() + job.warnings_omitted;
    let counted = match warnings {
        0 => String::new(),
        n => format!(" · {}", count(n, "warning")),
    };
    let summary: String = said.iter().map(|s| format!(" · {s}")).collect();
    let label = format!(
        "{} · {status} · {percent:.0}%{counted}{summary}",
        job.steps.join(" → ")
    );
    let color = if matches!(
        job.status,
        JobStatus::Failed | JobStatus::CompletedWithErrors
    ) {
        Color::Yellow
    } else {
        Color::Green
    };
    (label, (percent / 100.0).clamp(0.0, 1.0), color)
}

pub(super) fn jobs(app: &App, frame: &mut Frame, area: Rect) {
    let Some(id) = app.shown_session() else {
        return;
    };
    let jobs: Vec<_> = app.jobs_of(id).collect();
    // Idle: the latest job on one line.
    if area.height <= 1 {
        if let Some(job) = jobs.last() {
            let (label, _, color) = job_label(job);
            let hint = " · Tab to read · w hides";
            let line = Line::from(vec![
                Span::styled("Jobs ", bold()),
                Span::styled(label, Style::default().fg(color)),
                Span::styled(hint, dim()),
            ]);
            frame.render_widget(Paragraph::new(line), area);
        }
        return;
    }
    let warnings = app.warnings_of(id);
    let focused = app.desk.focus == Pane::Jobs;
    let title = if focused {
        format!(
            " Jobs · {} · Enter shows the node ",
            count(warnings.len(), "warning")
        )
    } else {
        format!(" Jobs · {} ", count(warnings.len(), "warning"))
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(if focused {
            Style::default().fg(accent(app))
        } else {
            Style::default()
        })
        .title(title);
    frame.render_widget(block, area);
    let inside = inner(area);
    for (row, job) in jobs.iter().rev().take(shown_gauges(app, id)).enumerate() {
        let (label, ratio, color) = job_label(job);
        frame.render_widget(
            Gauge::default()
                .gauge_style(Style::default().fg(color))
                .ratio(ratio)
                .label(clip(&label, inside.width as usize)),
            Rect {
                y: inside.y + row as u16,
                height: 1,
                ..inside
            },
        );
    }
    let mut list = warning_rows(area, shown_gauges(app, id));
    // Focused, the selected warning is read whole under the list.
    if focused && let Some(w) = warnings.get(app.desk.warning_selected) {
        let text = super::session::warning_text(&w.finding.rule, &w.finding.message);
        let whole = Paragraph::new(text).wrap(Wrap { trim: false });
        let rows = (whole.line_count(list.width) as u16).min(list.height.saturating_sub(2) / 2 + 1);
        if rows > 0 && list.height > rows + 1 {
            list.height -= rows + 1;
            let under = Rect {
                y: list.y + list.height + 1,
                height: rows,
                ..list
            };
            frame.render_widget(whole.style(Style::default().fg(Color::Yellow)), under);
        }
    }
    let height = list.height as usize;
    let offset = scroll_offset(app.desk.warning_selected, warnings.len(), height);
    let width = list.width as usize;
    let lines: Vec<Line> = warnings
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, w)| {
            let step = if w.step_id == crate::tui::app::QA_STEP {
                String::new()
            } else {
                format!("{} · ", w.step_id)
            };
            let text = fit(
                &format!(
                    "⚠ p{} · {step}{}",
                    w.page_index + 1,
                    super::session::warning_text(&w.finding.rule, &w.finding.message)
                ),
                width,
            );
            let style = if focused && i == app.desk.warning_selected {
                selected()
            } else {
                Style::default().fg(Color::Yellow)
            };
            Line::styled(text, style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
}

pub(super) fn attachments(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled(" staged: ", dim())];
    for a in &app.editing.attachments {
        spans.push(Span::styled(
            format!(" {} ", a.name),
            Style::default().bg(Color::Blue).fg(Color::White),
        ));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled("· /import adds them as pages", dim()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
