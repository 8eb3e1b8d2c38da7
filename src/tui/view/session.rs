//! A project's screen: the pages, nodes and node panes.

use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::jobs::jobs;
use super::{accent, bold, clip, dim, fit, selected};
use crate::tui::app::{App, Pane};
use crate::tui::layout::{inner, scroll_offset, session_areas};
use quire_model::ids::NodeId;
use quire_model::scene::{Author, Node, NodeKind, Page, TextState};

/// One character for a text node's state: ` ` initial, `m` a machine's
/// translation (an engine's or an agent's), `t` a person's, `R` reviewed,
/// `F` final; `?` over all of them when the source changed since.
pub(super) fn state_mark(kind: &NodeKind) -> char {
    if kind.source_changed() {
        return '?';
    }
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
pub(super) fn state_style(kind: &NodeKind) -> Style {
    let colour = match state_mark(kind) {
        '?' => Color::Yellow,
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

/// `translated · llm-translate` (or `· by a person`, `· by ana`, `· by
/// agent claude-code 2.1.0 of ana`), for the detail pane's heading.
pub(super) fn state_words(kind: &NodeKind) -> String {
    let words = origin_words(kind);
    match kind {
        NodeKind::Text {
            source_edit: Some(edit),
            ..
        } if kind.source_changed() => {
            let by = match (&edit.client, &edit.user) {
                (Some(client), _) => format!("agent {client}"),
                (None, Some(user)) => user.clone(),
                (None, None) => "a person".to_owned(),
            };
            format!("{words} · source changed by {by}: review")
        }
        _ => words,
    }
}

fn origin_words(kind: &NodeKind) -> String {
    let state = kind.state().map_or("", TextState::as_str);
    match kind {
        NodeKind::Text {
            origin: Some(o), ..
        } => {
            // The server's user it was made as, when it has users.
            let of = o
                .user
                .as_deref()
                .map(|u| format!(" of {u}"))
                .unwrap_or_default();
            match (o.by, &o.engine, &o.client) {
                (Author::Agent, _, Some(client)) => format!("{state} · by agent {client}{of}"),
                (Author::Agent, _, None) => format!("{state} · by an agent{of}"),
                (_, Some(engine), _) => match &o.user {
                    Some(user) => format!("{state} · {engine}, run by {user}"),
                    None => format!("{state} · {engine}"),
                },
                _ => format!("{state} · by {}", o.user.as_deref().unwrap_or("a person")),
            }
        }
        _ => state.to_owned(),
    }
}

/// A block's own lettering in words (`Comic Neue 28 px bold italic left
/// #202020 outline #ffffff columns, kept`); `None` when it names none.
fn lettering_words(style: &quire_model::scene::Style) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    words.extend(style.font_family.clone());
    words.extend(style.font_size.map(|s| format!("{s} px")));
    words.extend(style.font_weight.map(|w| match w {
        400 => "regular".to_owned(),
        700 => "bold".to_owned(),
        w => format!("weight {w}"),
    }));
    words.extend(
        style
            .italic
            .map(|i| if i { "italic" } else { "upright" }.to_owned()),
    );
    words.extend(style.align.map(|a| a.as_str().to_owned()));
    words.extend(style.color.clone());
    words.extend(style.stroke.as_ref().map(|s| format!("outline {s}")));
    words.extend(
        style
            .vertical
            .map(|v| if v { "columns" } else { "rows" }.to_owned()),
    );
    words.extend(
        style
            .clean
            .map(|c| if c { "cleaned" } else { "kept" }.to_owned()),
    );
    (!words.is_empty()).then(|| words.join(" "))
}

/// A node's row: kind, state mark, `!` when a warning names it, then the
/// source and the translation side by side, so both show at any width.
pub(super) fn node_summary(
    node: &Node,
    cue: Option<usize>,
    warned: bool,
    width: usize,
) -> (String, Style) {
    let hidden = if node.visible { "" } else { " (hidden)" };
    let flag = if warned { '!' } else { ' ' };
    let text = match &node.kind {
        NodeKind::Text {
            text, translation, ..
        } => {
            let source = format!("{}{hidden}", text.as_deref().unwrap_or(""));
            let mark = state_mark(&node.kind);
            // A cue by its number, as a reviewer names it.
            let label = cue.map_or_else(|| "T".to_owned(), |n| format!("{n:>3}"));
            let rest = width.saturating_sub(label.len() + 4 + 3);
            match translation {
                Some(translation) => {
                    let source_w = rest / 2;
                    format!(
                        "{label} {mark}{flag} {} → {}",
                        fit(&source, source_w),
                        clip(translation, rest - source_w)
                    )
                }
                // Untranslated, the source gets the row.
                None => format!(
                    "{label} {mark}{flag} {} → ·",
                    clip(&source, rest.saturating_sub(2))
                ),
            }
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

/// A cue's counts (`38·12 chars · 15.2 cps`), red with what goes past the
/// limits when something does.
pub(super) fn measure_line(app: &App, text: &str, duration_ms: u64) -> Line<'static> {
    let measure = quire_core::cues::measure(text, duration_ms);
    let profile = app
        .desk
        .scene
        .as_ref()
        .and_then(|(_, s)| s.scene.project.subtitle_profile);
    let limits = &app.prefs.subtitles.limits(profile);
    let mut rules: Vec<&str> = measure.over(limits).into_iter().map(|(r, _)| r).collect();
    if rules.is_empty() {
        return Line::styled(measure.summary(), Style::default().fg(Color::Green));
    }
    // What goes past, briefly: `over 42 chars/line, 2 lines, 17 cps`.
    rules.dedup();
    let past: Vec<String> = rules
        .into_iter()
        .map(|rule| match rule {
            "line-length" => format!("{} chars/line", limits.line_length),
            "lines" => format!("{} lines", limits.lines),
            _ => format!("{} cps", limits.reading_speed),
        })
        .collect();
    Line::styled(
        format!("{} · over {}", measure.summary(), past.join(", ")),
        Style::default().fg(Color::Red),
    )
}

/// Under a translation: the warnings that name its node, whole, the
/// glossary terms its source holds with their required translations, and
/// its own lettering.
fn desk_lines(app: &App, node: &Node, source: Option<&str>) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let NodeKind::Text {
        style: Some(style), ..
    } = &node.kind
        && let Some(words) = lettering_words(style)
    {
        lines.push(Line::styled(format!("lettering: {words} · /style"), dim()));
    }
    let warnings = app
        .shown_session()
        .map(|id| app.warnings_of(id))
        .unwrap_or_default();
    for w in warnings
        .iter()
        .filter(|w| w.finding.node_id == Some(node.id))
    {
        lines.push(Line::styled(
            format!("⚠ {}", warning_text(&w.finding.rule, &w.finding.message)),
            Style::default().fg(Color::Yellow),
        ));
    }
    lines.extend(suggestion_lines(node));
    lines.extend(match_lines(app, node));
    if let (Some(matcher), Some(source)) = (&app.desk.glossary, source) {
        for term in matcher.found(source) {
            let note = term
                .note
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            lines.push(Line::styled(
                format!("≡ {} → {}{note}", term.source, term.target),
                Style::default().fg(Color::Cyan),
            ));
        }
    }
    lines
}

/// A text node's open suggestions, most votes first, numbered as
/// `/accept N`, `/reject N` and `/vote N` count them.
fn suggestion_lines(node: &Node) -> Vec<Line<'static>> {
    let NodeKind::Text { suggestions, .. } = &node.kind else {
        return Vec::new();
    };
    if suggestions.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("Suggestions ({})", suggestions.len()), bold()),
        Span::styled("  /accept N · /reject N · /vote N", dim()),
    ])];
    for (i, s) in quire_model::suggestion::ranked(suggestions)
        .into_iter()
        .enumerate()
    {
        let votes = s.score();
        let unit = if votes.abs() == 1 { "vote" } else { "votes" };
        lines.push(Line::from(vec![
            Span::styled(format!("✎{} ", i + 1), bold()),
            Span::raw(s.text.replace('\n', " ⏎ ")),
            Span::styled(
                format!(" · {} · {votes} {unit}", s.author().unwrap_or("a person")),
                dim(),
            ),
        ]));
    }
    lines
}

/// The memory's matches for `node`: `1 92% target · origin · date`, and
/// for a fuzzy one its source with what differs marked (red: only the
/// memory has it; green: only this segment).
fn match_lines(app: &App, node: &Node) -> Vec<Line<'static>> {
    use quire_core::matches::Change;
    let found = match &app.desk.matches {
        Some(((id, _), Ok(found))) if *id == node.id => found,
        _ => return Vec::new(),
    };
    let mut lines = Vec::new();
    for (i, m) in found.iter().enumerate() {
        let score = m
            .score
            .map_or(String::new(), |s| format!("{:.0}% ", s * 100.0));
        let date = m
            .changed
            .as_deref()
            .map(|c| format!(" · {}", &c[..c.len().min(10)]))
            .unwrap_or_default();
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", i + 1), bold()),
            Span::styled(score, Style::default().fg(Color::Magenta)),
            Span::raw(m.target.clone()),
            Span::styled(format!(" · {}{date}", m.origin), dim()),
        ]));
        if m.score.is_some_and(|s| s < 1.0) && !m.diff.is_empty() {
            let mut spans = vec![Span::styled("  ≈ ", dim())];
            for part in &m.diff {
                let style = match part.change {
                    Change::Same => dim(),
                    Change::Removed => Style::default()
                        .fg(Color::Red)
                        .add_modifier(Modifier::CROSSED_OUT),
                    Change::Added => Style::default().fg(Color::Green),
                };
                spans.push(Span::styled(format!("{} ", part.text), style));
            }
            lines.push(Line::from(spans));
        }
    }
    lines
}

/// A warning's message, with its rule in front unless the message already
/// begins with it (`spelling: …`, `missing translation: …`).
pub(super) fn warning_text(rule: &str, message: &str) -> String {
    let words = rule.replace('-', " ");
    let starts = message
        .get(..words.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(&words));
    if starts
        || message.starts_with("leading or trailing")
        || message.starts_with("translation too long")
    {
        message.to_owned()
    } else {
        format!("{words}: {message}")
    }
}

/// A text as lines, its line breaks kept.
pub(super) fn lines_of(text: &str) -> Vec<Line<'static>> {
    text.split('\n').map(|l| Line::raw(l.to_owned())).collect()
}

/// A project's screen: its pages, the selected page's nodes, the selected
/// node, and the jobs pane when there is room for it.
pub(super) fn session(app: &App, frame: &mut Frame, area: Rect) {
    let s = session_areas(app, area);
    let Some((_, snapshot)) = &app.desk.scene else {
        frame.render_widget(
            Paragraph::new("loading…").block(Block::default().borders(Borders::ALL)),
            area,
        );
        return;
    };
    let pages = &snapshot.scene.pages;
    pages_pane(app, frame, s.pages, pages);
    let page = pages.get(app.desk.page_selected).map(|p| p.as_ref());
    nodes_pane(app, frame, s.nodes, pages, page);
    detail_pane(app, frame, s.detail, page);
    if let Some(jobs_area) = s.jobs {
        jobs(app, frame, jobs_area);
    }
}

/// A pane's border: the accent colour when it has the focus.
pub(super) fn border(app: &App, pane: Pane) -> Style {
    if app.desk.focus == pane {
        Style::default().fg(accent(app))
    } else {
        Style::default()
    }
}

/// The page list: number, name and how many text nodes are translated.
pub(super) fn pages_pane(app: &App, frame: &mut Frame, area: Rect, pages: &[Arc<Page>]) {
    let inner_pages = inner(area);
    let height = inner_pages.height as usize;
    let offset = scroll_offset(app.desk.page_selected, pages.len(), height);
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
            let style = if i == app.desk.page_selected {
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
                .border_style(border(app, Pane::Pages))
                .title(format!(" Pages ({}) ", pages.len())),
        ),
        area,
    );
}

/// The nodes of the selected page that pass the filter, one row each.
pub(super) fn nodes_pane(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    pages: &[Arc<Page>],
    page: Option<&Page>,
) {
    let inner_nodes = inner(area);
    let nodes: &[Node] = page.map_or(&[], |p| &p.nodes);
    let height = inner_nodes.height as usize;
    let shown = crate::tui::navigate::shown_nodes(app);
    let at = shown
        .iter()
        .position(|&i| i == app.desk.node_selected)
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
    let cues: std::collections::HashMap<NodeId, usize> = page
        .map(|p| quire_core::cues::numbers(p).collect())
        .unwrap_or_default();
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
                let (text, style) =
                    node_summary(n, cues.get(&n.id).copied(), warned.contains(&n.id), width);
                let in_range = app.desk.visual.is_some_and(|a| {
                    (a.min(app.desk.node_selected)..=a.max(app.desk.node_selected)).contains(&i)
                });
                let style = if i == app.desk.node_selected && app.desk.focus == Pane::Nodes {
                    selected()
                } else if in_range {
                    style.bg(Color::DarkGray)
                } else if i == app.desk.node_selected {
                    style.add_modifier(Modifier::UNDERLINED)
                } else {
                    style
                };
                Line::styled(fit(&text, width), style)
            })
            .collect()
    };
    let title = match (page, app.desk.filter) {
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
                .border_style(border(app, Pane::Nodes))
                .title(title),
        ),
        area,
    );
}

/// The selected node: a text's source (and what its file notes of it)
/// above its translation, each given rows so that the translation always
/// shows; an image's heading above its picture with the boxes drawn.
pub(super) fn detail_pane(app: &App, frame: &mut Frame, area: Rect, page: Option<&Page>) {
    let nodes: &[Node] = page.map_or(&[], |p| &p.nodes);
    let (top, bottom): (Vec<Line>, Vec<Line>) = match nodes.get(app.desk.node_selected) {
        Some(node) => match &node.kind {
            NodeKind::Text {
                text,
                translation,
                source_lang,
                timing,
                entry,
                ..
            } => {
                let cue = timing.as_ref().and(page).and_then(|p| {
                    quire_core::cues::numbers(p)
                        .find(|(id, _)| *id == node.id)
                        .map(|(_, n)| format!(" · cue {n}"))
                });
                let heading = Line::from(vec![
                    Span::styled(
                        format!(
                            "Source{}{}",
                            source_lang
                                .as_deref()
                                .map(|l| format!(" ({l})"))
                                .unwrap_or_default(),
                            cue.unwrap_or_default()
                        ),
                        bold(),
                    ),
                    Span::styled(
                        timing
                            .as_ref()
                            .map(|t| format!("  {}", quire_formats::subtitles::format_timing(t)))
                            .unwrap_or_default(),
                        dim(),
                    ),
                ]);
                let mut top = vec![heading];
                top.extend(lines_of(text.as_deref().unwrap_or_default()));
                // What the file it came from says of it (a PO entry's
                // context, comments and flags; an XLIFF unit's notes).
                let notes = entry.as_ref().map_or(&[][..], |e| &e.notes[..]);
                top.extend(notes.iter().map(|n| Line::styled(n.clone(), dim())));
                let mut bottom = vec![Line::from(vec![
                    Span::styled("Translation", bold()),
                    Span::styled(format!("  {}", state_words(&node.kind)), dim()),
                ])];
                match translation {
                    Some(t) => bottom.extend(lines_of(t)),
                    None => bottom.push(Line::styled("not translated · e to edit", dim())),
                }
                if let (Some(t), Some(timing)) = (translation, timing) {
                    bottom.push(measure_line(
                        app,
                        t,
                        timing.end.saturating_sub(timing.start),
                    ));
                }
                bottom.extend(desk_lines(app, node, text.as_deref()));
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
                let shown = app.desk.preview.as_ref().filter(|p| p.blob == *blob);
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
    frame.render_widget(Block::default().borders(Borders::ALL).title(" Node "), area);
    let inside = inner(area);
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
    let picture = nodes
        .get(app.desk.node_selected)
        .and_then(|n| match &n.kind {
            NodeKind::Image { blob, .. } => app
                .desk
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
}
