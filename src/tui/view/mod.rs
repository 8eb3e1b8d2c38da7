//! `view`: draws the state. Reads only; no I/O, no state changes. Lists
//! build only their visible rows, so a 1,000-page session draws as fast as
//! a small one.

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::app::{App, HomeRow, Modal, Route};
use super::layout::{REVOKE, areas, centered, home_list, scroll_offset, share_line};
use crate::config::schema::Theme;
use quire_model::ids::SessionId;

mod jobs;
mod overlays;
mod session;
use jobs::attachments;
pub use overlays::help_scroll_range;
use overlays::{approval, confirm, conflict, edit_box, exit_overlay, help};
use session::session;
pub use session::split_rows;

/// The accent colour of the config's `tui.theme`: cyan reads well on dark
/// backgrounds, blue on light ones; `auto` keeps cyan, which most terminal
/// palettes adapt.
fn accent(app: &App) -> Color {
    match app.prefs.theme {
        Theme::Light => Color::Blue,
        Theme::Dark | Theme::Auto => Color::Cyan,
    }
}

fn selected() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

/// One line of at most `width` columns (display width: a CJK character
/// takes two), with an ellipsis when cut; line breaks show as `⏎`.
fn clip(text: &str, width: usize) -> String {
    let flat = text.replace('\n', "⏎");
    if flat.width() <= width {
        return flat;
    }
    let room = width.saturating_sub(1);
    let mut used = 0;
    let mut out: String = flat
        .chars()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= room
        })
        .collect();
    out.push('…');
    out
}

/// `text` clipped and padded to exactly `width` columns.
fn fit(text: &str, width: usize) -> String {
    let mut line = clip(text, width);
    let pad = width.saturating_sub(line.width());
    line.extend(std::iter::repeat_n(' ', pad));
    line
}

pub fn view(app: &App, frame: &mut Frame) {
    let area = frame.area();
    let a = areas(app, area);
    title(app, frame, a.title);
    if let Some(bar) = a.share {
        share_bar(app, frame, bar);
    }
    if let Some(text) = &app.start_overlay {
        start_overlay(frame, a.body, text);
    } else {
        match app.route {
            Route::Home => home(app, frame, a.body),
            Route::Session(_) => session(app, frame, a.body),
        }
    }
    if let Some(chips) = a.chips {
        attachments(app, frame, chips);
    }
    bottom_line(app, frame, a.line);
    hints(app, frame, a.hints);
    if app.editing.edit.is_some() {
        edit_box(app, frame, area);
    }
    match &app.modal {
        Some(Modal::Help | Modal::Reading { .. }) => help(app, frame, area),
        Some(Modal::Confirm { message, .. }) => confirm(app, frame, area, message),
        Some(Modal::Approval { engines, .. }) => approval(app, frame, area, engines),
        Some(Modal::Conflict { draft, theirs }) => conflict(app, frame, area, draft, theirs),
        Some(Modal::Merge { merge, at }) => overlays::merge(app, frame, area, merge, *at),
        None => {}
    }
    if app.exit_overlay {
        exit_overlay(app, frame, area);
    }
}

/// ` · ja → fr` when the shown project has languages set (`?` for the one
/// not set yet); empty otherwise.
fn languages(app: &App, id: SessionId) -> String {
    let Some((shown, snapshot)) = &app.desk.scene else {
        return String::new();
    };
    let project = &snapshot.scene.project;
    if *shown != id || (project.source_language.is_none() && project.target_language.is_none()) {
        return String::new();
    }
    let tag = |t: &Option<String>| t.clone().unwrap_or_else(|| "?".to_owned());
    format!(
        " · {} → {}",
        tag(&project.source_language),
        tag(&project.target_language)
    )
}

fn title(app: &App, frame: &mut Frame, area: Rect) {
    let connection = if !app.link.attached {
        Span::styled("local", dim())
    } else if app.link.connected {
        Span::styled("● connected", Style::default().fg(Color::Green))
    } else {
        Span::styled(
            "○ disconnected",
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        )
    };
    // The place, as much of it as fits beside the connection: the epoch
    // goes first, then the languages, then the name is cut.
    let room = usize::from(area.width)
        .saturating_sub(connection.width() + 2)
        .saturating_sub(" quire ".width() + app.link.backend_name.width() + 4);
    let place = match app.route {
        Route::Home => "Home".to_owned(),
        Route::Session(id) => match app.session(id) {
            Some(s) => {
                let languages = languages(app, id);
                let epoch = format!(" · epoch {}", s.epoch);
                [
                    format!("{}{languages}{epoch}", s.name),
                    format!("{}{languages}", s.name),
                ]
                .into_iter()
                .find(|p| p.width() <= room)
                .unwrap_or_else(|| clip(&s.name, room))
            }
            None => "session".to_owned(),
        },
    };
    let left = Line::from(vec![
        Span::styled(
            " quire ",
            Style::default()
                .fg(Color::Black)
                .bg(accent(app))
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(" {} · ", app.link.backend_name)),
        Span::styled(place, bold()),
    ]);
    frame.render_widget(Paragraph::new(left), area);
    frame.render_widget(
        Paragraph::new(Line::from(vec![connection, Span::raw(" ")])).alignment(Alignment::Right),
        area,
    );
}

fn share_bar(app: &App, frame: &mut Frame, area: Rect) {
    let Some(share) = &app.share else { return };
    let style = Style::default().fg(Color::Black).bg(Color::Yellow);
    // The endpoint is what a person copies: never cut. On one row when it
    // fits, else on the rows below, wrapped.
    let text = if area.height <= 1 {
        share_line(share, true)
    } else {
        format!("{}\n {}", share_line(share, false), share.endpoint)
    };
    frame.render_widget(
        Paragraph::new(text).style(style).wrap(Wrap { trim: false }),
        area,
    );
    frame.render_widget(
        Paragraph::new(Span::styled(REVOKE, style.add_modifier(Modifier::BOLD)))
            .alignment(Alignment::Right),
        Rect {
            width: area.width.saturating_sub(1),
            ..area
        },
    );
}

fn start_overlay(frame: &mut Frame, area: Rect, text: &str) {
    let lines = vec![
        Line::raw(""),
        Line::styled(text.to_owned(), bold()),
        Line::raw(""),
        Line::styled("q quits", dim()),
    ];
    let box_area = centered(area, 50, 6);
    frame.render_widget(Clear, box_area);
    frame.render_widget(
        Paragraph::new(lines)
            .alignment(Alignment::Center)
            .block(Block::default().borders(Borders::ALL).title(" quire ")),
        box_area,
    );
}

fn home(app: &App, frame: &mut Frame, area: Rect) {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(" Workspace ", bold()));
    frame.render_widget(block, area);
    let list = home_list(area);
    let rows = app.home_rows();
    if rows.is_empty() {
        welcome(frame, list);
        return;
    }
    let height = list.height as usize;
    let offset = scroll_offset(app.workspace.home_selected, rows.len(), height);
    let width = list.width as usize;
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, row)| {
            let text = match row {
                HomeRow::Session(id) => match app.session(*id) {
                    Some(s) => {
                        let mut tags = Vec::new();
                        if s.current {
                            tags.push("current");
                        }
                        if app.is_busy(s.id) {
                            tags.push("busy");
                        }
                        format!(
                            "● {}  · open · epoch {} {}",
                            s.name,
                            s.epoch,
                            if tags.is_empty() {
                                String::new()
                            } else {
                                format!("· {}", tags.join(" · "))
                            }
                        )
                    }
                    None => "●".to_owned(),
                },
                HomeRow::Project(id) => match app
                    .workspace
                    .projects
                    .iter()
                    .find(|p| p.id.to_string() == *id)
                {
                    Some(p) => format!("○ {}  · {}", p.name, p.path.display()),
                    None => "○".to_owned(),
                },
            };
            let style = if i == app.workspace.home_selected {
                selected()
            } else {
                Style::default()
            };
            Line::styled(fit(&text, width), style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
}

fn welcome(frame: &mut Frame, area: Rect) {
    let lines = vec![
        Line::styled("Welcome to quire.", bold()),
        Line::raw(""),
        Line::raw("There are no projects yet."),
        Line::raw(""),
        Line::raw("Create one:  type  /new My comic            and press Enter"),
        Line::raw("Open one:    type  /open /path/to/project   and press Enter"),
        Line::raw(""),
        Line::raw("Then stage pages with  /attach page1.png  (or a .txt file) and  /import  them,"),
        Line::raw("and run engines with  /run pseudo-translate qa."),
        Line::raw(""),
        Line::styled("Press ? for every key and command, q to quit.", dim()),
    ];
    let h = lines.len() as u16;
    let box_area = Rect {
        y: area.y + area.height.saturating_sub(h) / 2,
        height: h.min(area.height),
        ..area
    };
    frame.render_widget(Paragraph::new(lines).alignment(Alignment::Center), box_area);
}

fn bottom_line(app: &App, frame: &mut Frame, area: Rect) {
    if let Some(input) = &app.command.input {
        let line = Line::from(vec![
            Span::styled(":", Style::default().fg(accent(app))),
            Span::raw(input.text.clone()),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        let before: String = input.text.chars().take(input.cursor).collect();
        let x = area.x + 1 + before.width().min(area.width as usize) as u16;
        frame.set_cursor_position((x.min(area.x + area.width.saturating_sub(1)), area.y));
        return;
    }
    if let Some(status) = &app.status {
        let style = if status.error {
            Style::default().fg(Color::Red)
        } else {
            Style::default()
        };
        frame.render_widget(
            Paragraph::new(Span::styled(clip(&status.text, area.width as usize), style)),
            area,
        );
    }
}

fn hints(app: &App, frame: &mut Frame, area: Rect) {
    let text = if app.exit_overlay {
        "y quit · n stay"
    } else if let Some(modal) = &app.modal {
        match modal {
            Modal::Help => "Esc, ? or Enter closes help",
            Modal::Reading { .. } => "Esc or Enter closes · ↑↓ scroll",
            Modal::Confirm { .. } => "y/Enter confirm · n/Esc cancel",
            Modal::Approval { .. } => "y/Enter run these commands · n/Esc do not run",
            Modal::Conflict { .. } => "k/Enter keep mine · t use theirs · e/Esc edit my draft",
            Modal::Merge { .. } => {
                "j/k move · m keep mine · t take the file's · a take all · Esc close"
            }
        }
    } else if let Some(edit) = &app.editing.edit {
        const KEYS: &str = "Enter save · Alt-Enter/Ctrl-j new line · Alt-1..3 a match · Esc close · Ctrl-u/r undo/redo";
        // A cue's counts as it is typed.
        let timing = app.desk.scene.as_ref().and_then(|(_, s)| {
            let page = s.scene.page(edit.page)?;
            match &page.nodes[page.node_index(edit.node)?].kind {
                quire_model::scene::NodeKind::Text {
                    timing: Some(t), ..
                } => Some(t.end.saturating_sub(t.start)),
                _ => None,
            }
        });
        if let Some(duration) = timing {
            let counts = session::measure_line(app, &edit.area.lines().join("\n"), duration);
            let width = counts.width();
            let mut spans = counts.spans;
            spans.push(Span::styled(
                clip(
                    &format!(" · {KEYS}"),
                    (area.width as usize).saturating_sub(width),
                ),
                dim(),
            ));
            return frame.render_widget(Paragraph::new(Line::from(spans)), area);
        }
        KEYS
    } else if app.command.input.is_some() && !app.command.choices.is_empty() {
        return frame.render_widget(
            Paragraph::new(Span::styled(
                clip(&app.command.choices.join("  "), area.width as usize),
                dim(),
            )),
            area,
        );
    } else if app.command.input.is_some() {
        "Enter run · Esc drop · Tab completes · ↑↓ history · ? for commands"
    } else {
        match app.route {
            Route::Home => {
                "↑↓ select · Enter open · /new NAME · /open PATH · x close · ? help · q quit"
            }
            Route::Session(_) => {
                "↑↓ move · Tab pane · e edit · r review · f final · u undo · : command · ? help · q quit"
            }
        }
    };
    frame.render_widget(
        Paragraph::new(Span::styled(clip(text, area.width as usize), dim())),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_translation_keeps_its_rows_when_the_source_is_long() {
        assert_eq!(split_rows(10, 3, 2), (3, 7));
        // A long source: the translation keeps what it needs, up to half.
        assert_eq!(split_rows(6, 9, 2), (4, 2));
        assert_eq!(split_rows(6, 9, 9), (3, 3));
        // A short source leaves the rest to a long translation.
        assert_eq!(split_rows(6, 2, 9), (2, 4));
    }

    #[test]
    fn clipping_counts_display_columns() {
        assert_eq!(fit("今日は", 4), "今… ");
        assert_eq!(fit("今日は", 6), "今日は");
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(clip("a\nb", 5), "a⏎b");
    }
}
