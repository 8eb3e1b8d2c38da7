//! `view`: draws the state. Reads only; no I/O, no state changes. Lists
//! build only their visible rows, so a 1,000-page session draws as fast as
//! a small one.

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Gauge, Paragraph, Wrap};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::app::{App, Draft, HomeRow, Modal, Pane, Route};
use super::commands::COMMANDS;
use super::layout::{
    REVOKE, areas, centered, home_list, inner, scroll_offset, session_areas, share_line,
    shown_gauges, warning_rows,
};
use crate::config::schema::Theme;
use crate::core::events::{JobStatus, JobSummary};
use crate::core::ids::{NodeId, SessionId};
use crate::core::scene::{Author, Node, NodeKind, TextState};

/// The accent colour of the config's `tui.theme`: cyan reads well on dark
/// backgrounds, blue on light ones; `auto` keeps cyan, which most terminal
/// palettes adapt.
fn accent(app: &App) -> Color {
    match app.theme {
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
    if app.edit.is_some() {
        edit_box(app, frame, area);
    }
    match &app.modal {
        Some(Modal::Help) => help(app, frame, area),
        Some(Modal::Confirm { message, .. }) => confirm(app, frame, area, message),
        Some(Modal::Approval { engines, .. }) => approval(app, frame, area, engines),
        Some(Modal::Conflict { draft, theirs }) => conflict(app, frame, area, draft, theirs),
        None => {}
    }
    if app.exit_overlay {
        exit_overlay(app, frame, area);
    }
}

/// ` · ja → fr` when the shown project has languages set (`?` for the one
/// not set yet); empty otherwise.
fn languages(app: &App, id: SessionId) -> String {
    let Some((shown, snapshot)) = &app.scene else {
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
    let place = match app.route {
        Route::Home => "Home".to_owned(),
        Route::Session(id) => match app.session(id) {
            Some(s) => format!("{}{} · epoch {}", s.name, languages(app, id), s.epoch),
            None => "session".to_owned(),
        },
    };
    let connection = if !app.attached {
        Span::styled("local", dim())
    } else if app.connected {
        Span::styled("● connected", Style::default().fg(Color::Green))
    } else {
        Span::styled(
            "○ disconnected",
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        )
    };
    let left = Line::from(vec![
        Span::styled(
            " quire ",
            Style::default()
                .fg(Color::Black)
                .bg(accent(app))
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(" {} · ", app.backend_name)),
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
    let offset = scroll_offset(app.home_selected, rows.len(), height);
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
                HomeRow::Project(id) => match app.projects.iter().find(|p| p.id.to_string() == *id)
                {
                    Some(p) => format!("○ {}  · {}", p.name, p.path.display()),
                    None => "○".to_owned(),
                },
            };
            let style = if i == app.home_selected {
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

/// One character for a text node's state: ` ` initial, `m` a machine's
/// translation (an engine's or an agent's), `t` a person's, `R` reviewed,
/// `F` final.
fn state_mark(kind: &NodeKind) -> char {
    match kind.state() {
        Some(TextState::Translated) if kind.is_machine_work() => 'm',
        Some(TextState::Translated) => 't',
        Some(TextState::Reviewed) => 'R',
        Some(TextState::Final) => 'F',
        _ => ' ',
    }
}

/// A text node's colour by state, with its mark: an engine's translation
/// magenta, a person's cyan, reviewed green, final blue and bold (and a
/// warning, yellow, over all of them).
fn state_style(kind: &NodeKind) -> Style {
    let colour = match state_mark(kind) {
        'm' => Color::Magenta,
        't' => Color::Cyan,
        'R' => Color::Green,
        'F' => {
            return Style::default()
                .fg(Color::Blue)
                .add_modifier(Modifier::BOLD);
        }
        _ => return Style::default(),
    };
    Style::default().fg(colour)
}

/// `translated · llm-translate` (or `· by a person`, `· by agent
/// claude-code 2.1.0`), for the detail pane's heading.
fn state_words(kind: &NodeKind) -> String {
    let state = kind.state().map_or("", TextState::as_str);
    match kind {
        NodeKind::Text {
            origin: Some(o), ..
        } => match (o.by, &o.engine, &o.client) {
            (Author::Agent, _, Some(client)) => format!("{state} · by agent {client}"),
            (Author::Agent, _, None) => format!("{state} · by an agent"),
            (_, Some(engine), _) => format!("{state} · {engine}"),
            _ => format!("{state} · by a person"),
        },
        _ => state.to_owned(),
    }
}

/// A node's row: kind, state mark, `!` when a warning names it, then the
/// source and the translation side by side, so both show at any width.
fn node_summary(node: &Node, warned: bool, width: usize) -> (String, Style) {
    let hidden = if node.visible { "" } else { " (hidden)" };
    let flag = if warned { '!' } else { ' ' };
    let text = match &node.kind {
        NodeKind::Text {
            text, translation, ..
        } => {
            let source = format!("{}{hidden}", text.as_deref().unwrap_or(""));
            let mark = state_mark(&node.kind);
            let rest = width.saturating_sub(5 + 3);
            let source_w = rest / 2;
            let translation = translation.as_deref().unwrap_or("·");
            format!(
                "T {mark}{flag} {} → {}",
                fit(&source, source_w),
                clip(translation, rest - source_w)
            )
        }
        NodeKind::Image { name, role, .. } => format!(
            "I  {flag} {}{hidden}",
            format!("{} ({role:?})", name.as_deref().unwrap_or("image")).to_lowercase()
        ),
        NodeKind::Mask { role, .. } => {
            format!(
                "M  {flag} {}{hidden}",
                format!("mask ({role:?})").to_lowercase()
            )
        }
    };
    let style = if warned {
        Style::default().fg(Color::Yellow)
    } else if node.visible {
        state_style(&node.kind)
    } else {
        dim()
    };
    (fit(&text, width), style)
}

/// Rows for a source part of `top` rows above a translation part of
/// `bottom` rows in `height`: both whole when they fit; otherwise the
/// translation keeps at least half (or all it needs, if less).
pub fn split_rows(height: u16, top: u16, bottom: u16) -> (u16, u16) {
    if top + bottom <= height {
        return (top, height - top);
    }
    let keep = bottom.min(height.div_ceil(2).max(height.saturating_sub(top)));
    (height - keep, keep)
}

/// A text as lines, its line breaks kept.
fn lines_of(text: &str) -> Vec<Line<'static>> {
    text.split('\n').map(|l| Line::raw(l.to_owned())).collect()
}

fn session(app: &App, frame: &mut Frame, area: Rect) {
    let s = session_areas(app, area);
    let focused = |pane: Pane| {
        if app.focus == pane {
            Style::default().fg(accent(app))
        } else {
            Style::default()
        }
    };
    let Some((_, snapshot)) = &app.scene else {
        frame.render_widget(
            Paragraph::new("loading…").block(Block::default().borders(Borders::ALL)),
            area,
        );
        return;
    };
    let pages = &snapshot.scene.pages;
    // Pages.
    let inner_pages = inner(s.pages);
    let height = inner_pages.height as usize;
    let offset = scroll_offset(app.page_selected, pages.len(), height);
    let width = inner_pages.width as usize;
    let page_lines: Vec<Line> = pages
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, p)| {
            // Progress: text nodes translated (or further) of all.
            let (done, texts) = p.nodes.iter().fold((0, 0), |(done, all), n| match &n.kind {
                NodeKind::Text { translation, .. } => {
                    (done + usize::from(translation.is_some()), all + 1)
                }
                _ => (done, all),
            });
            let progress = format!(" {done}/{texts}");
            let name_w = width.saturating_sub(4 + progress.len());
            let text = format!("{:>3} {}{progress}", i + 1, fit(&p.name, name_w));
            let style = if i == app.page_selected {
                selected()
            } else {
                Style::default()
            };
            Line::styled(fit(&text, width), style)
        })
        .collect();
    frame.render_widget(
        Paragraph::new(page_lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(focused(Pane::Pages))
                .title(format!(" Pages ({}) ", pages.len())),
        ),
        s.pages,
    );
    // Nodes of the selected page.
    let page = pages.get(app.page_selected);
    let inner_nodes = inner(s.nodes);
    let nodes: &[Node] = page.map_or(&[], |p| &p.nodes);
    let height = inner_nodes.height as usize;
    let shown = super::navigate::shown_nodes(app);
    let at = shown
        .iter()
        .position(|&i| i == app.node_selected)
        .unwrap_or(0);
    let offset = scroll_offset(at, shown.len(), height);
    let width = inner_nodes.width as usize;
    let warned: std::collections::HashSet<NodeId> = app
        .shown_session()
        .map(|id| app.warnings_of(id))
        .unwrap_or_default()
        .iter()
        .filter_map(|w| w.finding.node_id)
        .collect();
    let node_lines: Vec<Line> = if nodes.is_empty() {
        vec![Line::styled("no nodes on this page", dim())]
    } else if shown.is_empty() {
        vec![Line::styled(
            "no node here passes the filter · /filter all",
            dim(),
        )]
    } else {
        shown
            .iter()
            .skip(offset)
            .take(height)
            .map(|&i| (i, &nodes[i]))
            .map(|(i, n)| {
                let (text, style) = node_summary(n, warned.contains(&n.id), width);
                let style = if i == app.node_selected && app.focus == Pane::Nodes {
                    selected()
                } else if i == app.node_selected {
                    style.add_modifier(Modifier::UNDERLINED)
                } else {
                    style
                };
                Line::styled(fit(&text, width), style)
            })
            .collect()
    };
    let title = match (page, app.filter) {
        (Some(p), Some(filter)) => format!(
            " {} · {} of {} nodes {} ",
            p.name,
            shown.len(),
            p.nodes.len(),
            filter.name()
        ),
        (Some(p), None) => format!(" {} · {} nodes ", p.name, p.nodes.len()),
        (None, _) if pages.is_empty() => " no pages yet: /attach a file, then /import ".to_owned(),
        (None, _) => " Nodes ".to_owned(),
    };
    frame.render_widget(
        Paragraph::new(node_lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(focused(Pane::Nodes))
                .title(title),
        ),
        s.nodes,
    );
    // Detail of the selected node: its source above, its translation
    // below, each given rows so that the translation always shows.
    let (top, bottom): (Vec<Line>, Vec<Line>) = match nodes.get(app.node_selected) {
        Some(node) => match &node.kind {
            NodeKind::Text {
                text,
                translation,
                source_lang,
                timing,
                ..
            } => {
                let heading = Line::from(vec![
                    Span::styled(
                        format!(
                            "Source{}",
                            source_lang
                                .as_deref()
                                .map(|l| format!(" ({l})"))
                                .unwrap_or_default()
                        ),
                        bold(),
                    ),
                    Span::styled(
                        timing
                            .as_ref()
                            .map(|t| format!("  {}", crate::core::subtitles::format_timing(t)))
                            .unwrap_or_default(),
                        dim(),
                    ),
                ]);
                let mut top = vec![heading];
                top.extend(lines_of(text.as_deref().unwrap_or_default()));
                let mut bottom = vec![Line::from(vec![
                    Span::styled("Translation", bold()),
                    Span::styled(format!("  {}", state_words(&node.kind)), dim()),
                ])];
                match translation {
                    Some(t) => bottom.extend(lines_of(t)),
                    None => bottom.push(Line::styled("not translated · e to edit", dim())),
                }
                (top, bottom)
            }
            NodeKind::Image {
                blob,
                role,
                opacity,
                name,
                ..
            } => {
                let size = match page.and_then(|p| p.width.zip(p.height)) {
                    Some((w, h)) => format!(" · {w}×{h}"),
                    None => String::new(),
                };
                let mut top = vec![Line::from(vec![
                    Span::styled(format!("Image ({role:?}) "), bold()),
                    Span::raw(format!(
                        "{}{size} · opacity {opacity}",
                        name.as_deref().unwrap_or("unnamed")
                    )),
                ])];
                let shown = app.preview.as_ref().filter(|p| p.blob == *blob);
                match shown.map(|p| (&p.image, &p.protocol)) {
                    Some((Ok(_), Some(_))) => {}
                    Some((Err(why), _)) => top.push(Line::styled(why.clone(), dim())),
                    _ => top.push(Line::styled(
                        format!("blob {}", &blob.to_hex()[..16]),
                        dim(),
                    )),
                }
                (top, Vec::new())
            }
            NodeKind::Mask { blob, role } => (
                vec![
                    Line::styled(format!("Mask ({role:?})"), bold()),
                    Line::styled(format!("blob {}", &blob.to_hex()[..16]), dim()),
                ],
                Vec::new(),
            ),
        },
        None => (vec![Line::styled("select a node", dim())], Vec::new()),
    };
    frame.render_widget(
        Block::default().borders(Borders::ALL).title(" Node "),
        s.detail,
    );
    let inside = inner(s.detail);
    let top = Paragraph::new(top).wrap(Wrap { trim: false });
    let bottom = Paragraph::new(bottom).wrap(Wrap { trim: false });
    let (top_rows, bottom_rows) = split_rows(
        inside.height,
        top.line_count(inside.width) as u16,
        bottom.line_count(inside.width) as u16,
    );
    frame.render_widget(
        top,
        Rect {
            height: top_rows,
            ..inside
        },
    );
    frame.render_widget(
        bottom,
        Rect {
            y: inside.y + top_rows,
            height: bottom_rows,
            ..inside
        },
    );
    // The page picture, with its boxes, under the image's heading.
    let picture = nodes.get(app.node_selected).and_then(|n| match &n.kind {
        NodeKind::Image { blob, .. } => app
            .preview
            .as_ref()
            .filter(|p| p.blob == *blob)
            .and_then(|p| p.protocol.as_ref()),
        _ => None,
    });
    if let Some(protocol) = picture
        && inside.height > 1
    {
        frame.render_widget(
            ratatui_image::Image::new(protocol),
            Rect {
                y: inside.y + 1,
                height: inside.height - 1,
                ..inside
            },
        );
    }
    if let Some(jobs_area) = s.jobs {
        jobs(app, frame, jobs_area);
    }
}

/// `1 warning`, `2 warnings`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn job_label(job: &JobSummary) -> (String, f64, Color) {
    let percent = job.progress.as_ref().map_or(0.0, |p| p.overall_percent);
    let status = match job.status {
        JobStatus::Queued => "queued",
        JobStatus::Running => "running",
        JobStatus::Completed => "done",
        JobStatus::CompletedWithErrors => "done with warnings",
        JobStatus::Cancelled => "cancelled",
        JobStatus::Failed => "failed",
    };
    let warnings = job.warnings.len() + job.warnings_omitted;
    let counted = match warnings {
        0 => String::new(),
        n => format!(" · {}", count(n, "warning")),
    };
    let label = format!(
        "{} · {status} · {percent:.0}%{counted}",
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

fn jobs(app: &App, frame: &mut Frame, area: Rect) {
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
    let focused = app.focus == Pane::Jobs;
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
    let list = warning_rows(area, shown_gauges(app, id));
    let height = list.height as usize;
    let offset = scroll_offset(app.warning_selected, warnings.len(), height);
    let width = list.width as usize;
    let lines: Vec<Line> = warnings
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, w)| {
            let text = fit(
                &format!(
                    "⚠ page {} · {} · {}: {}",
                    w.page_index + 1,
                    w.step_id,
                    w.finding.rule,
                    w.finding.message
                ),
                width,
            );
            let style = if focused && i == app.warning_selected {
                selected()
            } else {
                Style::default().fg(Color::Yellow)
            };
            Line::styled(text, style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
}

fn attachments(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled(" staged: ", dim())];
    for a in &app.attachments {
        spans.push(Span::styled(
            format!(" {} ", a.name),
            Style::default().bg(Color::Blue).fg(Color::White),
        ));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled("· /import adds them as pages", dim()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn bottom_line(app: &App, frame: &mut Frame, area: Rect) {
    if let Some(input) = &app.input {
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
            Modal::Confirm { .. } => "y/Enter confirm · n/Esc cancel",
            Modal::Approval { .. } => "y/Enter run these commands · n/Esc do not run",
            Modal::Conflict { .. } => "k/Enter keep mine · t use theirs · e/Esc edit my draft",
        }
    } else if app.edit.is_some() {
        "Enter save · Alt-Enter/Ctrl-j new line · Esc drop · Ctrl-u/r undo/redo"
    } else if app.input.is_some() && !app.choices.is_empty() {
        return frame.render_widget(
            Paragraph::new(Span::styled(
                clip(&app.choices.join("  "), area.width as usize),
                dim(),
            )),
            area,
        );
    } else if app.input.is_some() {
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

fn edit_box(app: &App, frame: &mut Frame, area: Rect) {
    let Some(edit) = &app.edit else { return };
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

fn modal_box(app: &App, frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line>, w: u16) {
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
const HELP_WIDTH: u16 = 88;

/// Everything help lists: keys, commands, engines.
fn help_lines(app: &App) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::styled("Keys", bold()),
        Line::raw("  ↑↓ j k     move            Enter     open / select"),
        Line::raw("  Tab        pages → nodes → jobs       mouse  click, wheel"),
        Line::raw("  Enter      on a warning: show its node  w  hide/show jobs"),
        Line::raw("  e          edit a translation (Enter saves, Esc drops)"),
        Line::raw("    in it:   Alt-Enter or Ctrl-j new line, Ctrl-u/Ctrl-r undo/redo,"),
        Line::raw("             Alt-f/Alt-b word, Ctrl-a/Ctrl-e line start/end"),
        Line::raw("  r / f      mark reviewed / final (again: step back)"),
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
    if !app.engines.is_empty() {
        lines.push(Line::raw(""));
        lines.push(Line::styled("Engines", bold()));
        for e in &app.engines {
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

/// How far help scrolls at the app's terminal size, and how many rows it
/// shows at once.
pub fn help_scroll_range(app: &App) -> (u16, u16) {
    let inner = HELP_WIDTH.min(app.width).saturating_sub(2);
    let rows = Paragraph::new(help_lines(app))
        .wrap(Wrap { trim: false })
        .line_count(inner);
    let rows = u16::try_from(rows).unwrap_or(u16::MAX);
    let visible = rows.min(app.height.saturating_sub(2));
    (rows - visible, visible)
}

fn help(app: &App, frame: &mut Frame, area: Rect) {
    let (max, visible) = help_scroll_range(app);
    let scroll = app.help_scroll.min(max);
    let box_area = centered(area, HELP_WIDTH, visible + 2);
    let title = if max > 0 {
        format!(" Help · {}/{} ", scroll + visible, max + visible)
    } else {
        " Help ".to_owned()
    };
    frame.render_widget(Clear, box_area);
    frame.render_widget(
        Paragraph::new(help_lines(app))
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

fn confirm(app: &App, frame: &mut Frame, area: Rect, message: &str) {
    let lines = vec![
        Line::raw(message.to_owned()),
        Line::raw(""),
        Line::styled("y yes · n no", dim()),
    ];
    modal_box(app, frame, area, "Confirm", lines, 60);
}

fn approval(app: &App, frame: &mut Frame, area: Rect, engines: &[(String, String)]) {
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

fn conflict(app: &App, frame: &mut Frame, area: Rect, draft: &Draft, theirs: &Option<String>) {
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

fn exit_overlay(app: &App, frame: &mut Frame, area: Rect) {
    let lines = vec![
        Line::styled("A job is still running.", bold()),
        Line::raw("Quitting cancels nothing on a server, but a local job stops."),
        Line::raw(""),
        Line::styled("y quit anyway · n stay", dim()),
    ];
    modal_box(app, frame, area, "Quit?", lines, 64);
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
