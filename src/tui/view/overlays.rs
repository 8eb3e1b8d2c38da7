//! What draws over the screen: the editor, help, questions and the exit
//! notice.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::{accent, bold, clip, dim};
use crate::tui::app::{App, Draft, Merge, Modal, Side};
use crate::tui::commands::COMMANDS;
use crate::tui::layout::centered;

pub(super) fn edit_box(app: &App, frame: &mut Frame, area: Rect) {
    let Some(edit) = &app.editing.edit else {
        return;
    };
    let w = area.width.saturating_sub(4).min(100);
    let mut draft = edit.area.clone();
    draft.set_block(
        Block::default()
            .borders(Borders::ALL)
            .border_style(Style::default().fg(accent(app)))
            .title(" Translation (draft) "),
    );
    // As tall as the draft, at most half the screen.
    let rows = draft
        .measure(w)
        .preferred_rows
        .clamp(3, (area.height / 2).max(3))
        .min(area.height);
    let box_area = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y
            + area
                .height
                .saturating_sub(rows + 3)
                .max(1)
                .min(area.height - rows),
        width: w,
        height: rows,
    };
    frame.render_widget(Clear, box_area);
    frame.render_widget(&draft, box_area);
    if let Some(position) = draft.rendered_cursor_position() {
        frame.set_cursor_position(position);
    }
}

pub(super) fn modal_box(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    title: &str,
    lines: Vec<Line>,
    w: u16,
) {
    let h = lines.len() as u16 + 2;
    let box_area = centered(area, w, h);
    frame.render_widget(Clear, box_area);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(Style::default().fg(accent(app)))
                .title(format!(" {title} ")),
        ),
        box_area,
    );
}

/// The help modal's width, at most.
pub(super) const HELP_WIDTH: u16 = 88;

/// Everything help lists: keys, commands, engines.
pub(super) fn help_lines(app: &App) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::styled("Keys", bold()),
        Line::raw("  ↑↓ j k     move            Enter     open / select"),
        Line::raw("  Tab        pages → nodes → jobs       mouse  click, wheel"),
        Line::raw("  Enter      on a warning: show its node  w  hide/show jobs"),
        Line::raw("  e          edit a translation (Enter saves, Esc asks first)"),
        Line::raw("    in it:   Alt-Enter or Ctrl-j new line, Ctrl-u/Ctrl-r undo/redo,"),
        Line::raw("             Alt-f/Alt-b word, Ctrl-a/Ctrl-e line start/end"),
        Line::raw("  r / f      mark reviewed / final and go on (again: step back)"),
        Line::raw("  v          select a range: j/k extend it, r/f mark it all"),
        Line::raw("  1 2 3      the memory's match as the draft (Alt-1..3 in it)"),
        Line::raw("  n / N      next / previous node that needs work (or /find match)"),
        Line::raw("  g G Home End  first / last row    Ctrl-f  find    :N  page N"),
        Line::raw("  u / Ctrl-r undo / redo     Esc       back home"),
        Line::raw("  : or /     command line    q Ctrl-c  quit"),
        Line::raw(""),
        Line::styled("Commands", bold()),
    ];
    let width = usize::from(HELP_WIDTH.min(app.width).saturating_sub(2));
    for (cmd, what) in COMMANDS {
        // A description too long for the row goes on under itself.
        let mut row = format!("  {cmd:<22}");
        for word in what.split(' ') {
            if row.width() + 1 + word.width() > width && row.trim().len() > cmd.len() {
                lines.push(Line::raw(std::mem::replace(&mut row, " ".repeat(24))));
            }
            row.push(' ');
            row.push_str(word);
        }
        lines.push(Line::raw(row));
    }
    if !app.workspace.engines.is_empty() {
        lines.push(Line::raw(""));
        lines.push(Line::styled("Engines", bold()));
        for e in &app.workspace.engines {
            let approval = if e.requires_approval {
                " (asks first)"
            } else {
                ""
            };
            // One row each, whatever the width: descriptions are long.
            let width = usize::from(HELP_WIDTH.min(app.width).saturating_sub(2));
            lines.push(Line::raw(clip(
                &format!("  {:<18} {}{approval}", e.id, e.description),
                width,
            )));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "Esc closes this help · ↑↓ PgUp PgDn Home End scroll",
        dim(),
    ));
    lines
}

/// What the scrolled modal shown (help, or text to read) holds.
fn scrolled_lines(app: &App) -> (String, Vec<Line<'static>>) {
    match &app.modal {
        Some(Modal::Reading { title, lines }) => {
            let mut out: Vec<Line<'static>> = lines.iter().cloned().map(Line::raw).collect();
            out.push(Line::raw(""));
            out.push(Line::styled(
                "Esc closes · ↑↓ PgUp PgDn Home End scroll",
                dim(),
            ));
            (title.clone(), out)
        }
        _ => ("Help".to_owned(), help_lines(app)),
    }
}

/// How far help (or the text being read) scrolls at the app's terminal
/// size, and how many rows it shows at once.
pub fn help_scroll_range(app: &App) -> (u16, u16) {
    let inner = HELP_WIDTH.min(app.width).saturating_sub(2);
    let rows = Paragraph::new(scrolled_lines(app).1)
        .wrap(Wrap { trim: false })
        .line_count(inner);
    let rows = u16::try_from(rows).unwrap_or(u16::MAX);
    let visible = rows.min(app.height.saturating_sub(2));
    (rows - visible, visible)
}

pub(super) fn help(app: &App, frame: &mut Frame, area: Rect) {
    let (max, visible) = help_scroll_range(app);
    let scroll = app.help_scroll.min(max);
    let (name, lines) = scrolled_lines(app);
    let box_area = centered(area, HELP_WIDTH, visible + 2);
    let title = if max > 0 {
        format!(" {name} · {}/{} ", scroll + visible, max + visible)
    } else {
        format!(" {name} ")
    };
    frame.render_widget(Clear, box_area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(Style::default().fg(accent(app)))
                    .title(title),
            ),
        box_area,
    );
}

pub(super) fn confirm(app: &App, frame: &mut Frame, area: Rect, message: &str) {
    let mut lines: Vec<Line> = message.lines().map(|l| Line::raw(l.to_owned())).collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled("y yes · n no", dim()));
    let width = if lines.len() > 4 { 76 } else { 60 };
    modal_box(app, frame, area, "Confirm", lines, width);
}

pub(super) fn approval(app: &App, frame: &mut Frame, area: Rect, engines: &[(String, String)]) {
    let mut lines = vec![
        Line::raw("These engines run programs on this machine:"),
        Line::raw(""),
    ];
    for (id, command) in engines {
        lines.push(Line::styled(format!("  {id}"), bold()));
        lines.push(Line::raw(format!("    {command}")));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("y run them · n do not", bold()));
    modal_box(app, frame, area, "Approve engines", lines, 76);
}

pub(super) fn conflict(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    draft: &Draft,
    theirs: &Option<String>,
) {
    let shown = |v: Option<&str>| match v {
        Some(v) if !v.is_empty() => v.to_owned(),
        _ => "(no translation)".to_owned(),
    };
    let mut lines = vec![
        Line::raw("Someone else saved this translation after you began:"),
        Line::raw(""),
        Line::styled("Theirs", bold()),
    ];
    lines.extend(
        shown(theirs.as_deref())
            .lines()
            .map(|l| Line::raw(format!("  {l}"))),
    );
    lines.push(Line::styled("Yours", bold()));
    lines.extend(
        shown(Some(&draft.text))
            .lines()
            .map(|l| Line::raw(format!("  {l}"))),
    );
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "k keep mine · t use theirs · e edit my draft",
        bold(),
    ));
    modal_box(app, frame, area, "Changed meanwhile", lines, 72);
}

/// The conflicts a merged file left: where, both sides, why, and what was
/// decided; the selected one marked. As many rows as fit, around it.
pub(super) fn merge(app: &App, frame: &mut Frame, area: Rect, merge: &Merge, at: usize) {
    let shown = |v: &Option<String>| match v {
        Some(v) if !v.is_empty() => v.replace(['\n', '\r'], " ⏎ "),
        _ => "(none)".to_owned(),
    };
    let width = area.width.saturating_sub(4).min(96);
    let text = usize::from(width.saturating_sub(12)).max(8);
    // Four lines a conflict; as many as fit with the title and keys.
    let fit = (usize::from(area.height.saturating_sub(6)) / 4).max(1);
    let first = at
        .saturating_sub(fit - 1)
        .min(merge.rows.len().saturating_sub(fit));
    let file = merge.path.file_name().map_or_else(
        || merge.path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut lines = Vec::new();
    for (i, (c, side)) in merge.rows.iter().enumerate().skip(first).take(fit) {
        let mark = if i == at { "▶ " } else { "  " };
        let decided = match side {
            None => String::new(),
            Some(Side::Mine) => " · kept here".to_owned(),
            Some(Side::Theirs) => " · the file's taken".to_owned(),
        };
        let head = format!("{mark}page {} · {}{decided}", c.page, c.message);
        let style = if i == at { bold() } else { Style::default() };
        lines.push(Line::styled(clip(&head, usize::from(width)), style));
        lines.push(Line::raw(format!(
            "    here  {}",
            clip(&shown(&c.mine), text)
        )));
        lines.push(Line::raw(format!(
            "    file  {}",
            clip(&shown(&c.theirs), text)
        )));
        lines.push(Line::raw(""));
    }
    lines.push(Line::styled(
        "m keep mine · t take the file's · a take all · Esc close",
        dim(),
    ));
    let title = format!("{} conflict(s) in {file}", merge.rows.len());
    modal_box(app, frame, area, &title, lines, width);
}

pub(super) fn exit_overlay(app: &App, frame: &mut Frame, area: Rect) {
    let lines = vec![
        Line::styled("A job is still running.", bold()),
        Line::raw("Quitting cancels nothing on a server, but a local job stops."),
        Line::raw(""),
        Line::styled("y quit anyway · n stay", dim()),
    ];
    modal_box(app, frame, area, "Quit?", lines, 64);
}
