//! Where things are on screen: one pure function of the state and the
//! terminal size, used both to draw and to hit-test mouse clicks.

use ratatui::layout::{Constraint, Direction, Layout, Rect};

use unicode_width::UnicodeWidthStr;

use super::app::{App, Pane, Route, ShareBar};

/// A label of the sharing bar that can be clicked.
pub const REVOKE: &str = "[Revoke]";

/// The sharing bar's text; `with_endpoint` puts the endpoint on it.
pub fn share_line(share: &ShareBar, with_endpoint: bool) -> String {
    let place = if with_endpoint {
        format!(" · {}", share.endpoint)
    } else {
        String::new()
    };
    format!(
        " shared with an MCP client{place} · {}/{} navigations ",
        share.used, share.limit
    )
}

/// One row when everything fits beside `[Revoke]`, else the endpoint
/// wrapped on the rows below.
fn share_rows(share: &ShareBar, width: u16) -> u16 {
    let width = usize::from(width.max(1));
    if share_line(share, true).width() + REVOKE.len() < width {
        return 1;
    }
    let endpoint = share.endpoint.width() + 1;
    (1 + endpoint.div_ceil(width)).min(4) as u16
}

pub struct Areas {
    pub title: Rect,
    pub share: Option<Rect>,
    pub revoke: Option<Rect>,
    pub body: Rect,
    pub chips: Option<Rect>,
    pub line: Rect,
    pub hints: Rect,
}

pub fn areas(app: &App, area: Rect) -> Areas {
    let mut constraints = vec![Constraint::Length(1)];
    if let Some(share) = &app.share {
        constraints.push(Constraint::Length(share_rows(share, area.width)));
    }
    constraints.push(Constraint::Min(3));
    if !app.editing.attachments.is_empty() {
        constraints.push(Constraint::Length(1));
    }
    constraints.push(Constraint::Length(1));
    constraints.push(Constraint::Length(1));
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints(constraints)
        .split(area);
    let mut i = 0;
    let mut next = || {
        let r = rows[i];
        i += 1;
        r
    };
    let title = next();
    let share = app.share.as_ref().map(|_| next());
    let revoke = share.map(|bar| {
        let w = REVOKE.len() as u16;
        Rect {
            x: bar.x + bar.width.saturating_sub(w + 1),
            y: bar.y,
            width: w.min(bar.width),
            height: 1,
        }
    });
    let body = next();
    let chips = (!app.editing.attachments.is_empty()).then(&mut next);
    let line = next();
    let hints = next();
    Areas {
        title,
        share,
        revoke,
        body,
        chips,
        line,
        hints,
    }
}

pub struct SessionAreas {
    pub pages: Rect,
    pub nodes: Rect,
    pub detail: Rect,
    pub jobs: Option<Rect>,
}

/// How many rows the jobs pane takes while a job runs or it has the focus.
const JOBS_HEIGHT: u16 = 7;

/// The jobs pane's rows: none without jobs or when hidden (`w`); one line
/// (no border) when idle; a bordered pane while a job is queued or
/// running; half the body when it has the focus, to read the warnings.
pub fn jobs_height(app: &App, body: Rect) -> u16 {
    let Some(id) = app.shown_session() else {
        return 0;
    };
    if app.desk.jobs_hidden || app.jobs_of(id).next().is_none() {
        return 0;
    }
    let wanted = if app.desk.focus == Pane::Jobs {
        JOBS_HEIGHT.max(body.height / 2)
    } else if app.live_job(id).is_some() {
        JOBS_HEIGHT.min(body.height / 3)
    } else {
        1
    };
    // The lists above keep at least 6 rows.
    wanted.min(body.height.saturating_sub(6)).max(1)
}

pub fn session_areas(app: &App, body: Rect) -> SessionAreas {
    let jobs_rows = jobs_height(app, body);
    let (main, jobs) = if jobs_rows > 0 && body.height > jobs_rows + 3 {
        let v = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Min(3), Constraint::Length(jobs_rows)])
            .split(body);
        (v[0], Some(v[1]))
    } else {
        (body, None)
    };
    let h = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(24), Constraint::Percentage(76)])
        .split(main);
    let right = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Percentage(55), Constraint::Percentage(45)])
        .split(h[1]);
    SessionAreas {
        pages: h[0],
        nodes: right[0],
        detail: right[1],
        jobs,
    }
}

/// The warning rows of a jobs pane of `rows` rows, and where they start.
pub fn warning_rows(jobs: Rect, live: usize) -> Rect {
    if jobs.height <= 1 {
        return Rect { height: 0, ..jobs };
    }
    let inside = inner(jobs);
    let gauges = (live as u16).min(inside.height);
    Rect {
        y: inside.y + gauges,
        height: inside.height - gauges,
        ..inside
    }
}

/// The rows inside a bordered list.
pub fn inner(area: Rect) -> Rect {
    Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    }
}

/// The first row shown of a list of `len` rows with `selected` visible in
/// `height` rows.
pub fn scroll_offset(selected: usize, len: usize, height: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    let offset = selected.saturating_sub(height.saturating_sub(1));
    offset.min(len - height)
}

/// What a click landed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    Revoke,
    HomeRow(usize),
    Page(usize),
    Node(usize),
    /// A warning of the jobs pane, by its index (newest first).
    Warning(usize),
    /// The one-line jobs pane: click to open it.
    Jobs,
}

fn contains(r: Rect, col: u16, row: u16) -> bool {
    col >= r.x && col < r.x + r.width && row >= r.y && row < r.y + r.height
}

pub fn hit_test(app: &App, col: u16, row: u16) -> Option<Hit> {
    let screen = Rect::new(0, 0, app.width, app.height);
    let a = areas(app, screen);
    if a.revoke.is_some_and(|r| contains(r, col, row)) {
        return Some(Hit::Revoke);
    }
    match app.route {
        Route::Home => {
            let list = home_list(a.body);
            if contains(list, col, row) {
                let rows = app.home_rows().len();
                let offset = scroll_offset(app.workspace.home_selected, rows, list.height as usize);
                let i = offset + (row - list.y) as usize;
                return (i < rows).then_some(Hit::HomeRow(i));
            }
        }
        Route::Session(_) => {
            let s = session_areas(app, a.body);
            let pages = inner(s.pages);
            if contains(pages, col, row) {
                let len = app
                    .desk
                    .scene
                    .as_ref()
                    .map_or(0, |(_, s)| s.scene.pages.len());
                let offset = scroll_offset(app.desk.page_selected, len, pages.height as usize);
                return Some(Hit::Page(offset + (row - pages.y) as usize));
            }
            if let (Some(jobs), Route::Session(id)) = (s.jobs, app.route)
                && contains(jobs, col, row)
            {
                if jobs.height <= 1 {
                    return Some(Hit::Jobs);
                }
                let list = warning_rows(jobs, shown_gauges(app, id));
                let len = app.warnings_of(id).len();
                if !contains(list, col, row) {
                    return Some(Hit::Jobs);
                }
                let offset = scroll_offset(app.desk.warning_selected, len, list.height as usize);
                let i = offset + (row - list.y) as usize;
                return Some(if i < len { Hit::Warning(i) } else { Hit::Jobs });
            }
            let nodes = inner(s.nodes);
            if contains(nodes, col, row) {
                let shown = super::navigate::shown_nodes(app);
                let at = shown
                    .iter()
                    .position(|&i| i == app.desk.node_selected)
                    .unwrap_or(0);
                let offset = scroll_offset(at, shown.len(), nodes.height as usize);
                let row = offset + (row - nodes.y) as usize;
                return shown.get(row).map(|&i| Hit::Node(i));
            }
        }
    }
    None
}

/// How many job gauges a bordered jobs pane shows above its warnings.
pub fn shown_gauges(app: &App, id: quire_model::ids::SessionId) -> usize {
    app.jobs_of(id).count().min(2)
}

/// The list of the home route (inside its border).
pub fn home_list(body: Rect) -> Rect {
    inner(body)
}

/// A rectangle of `w`×`h` centred in `area` (clamped to it).
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_keeps_the_selection_visible() {
        assert_eq!(scroll_offset(0, 100, 10), 0);
        assert_eq!(scroll_offset(9, 100, 10), 0);
        assert_eq!(scroll_offset(10, 100, 10), 1);
        assert_eq!(scroll_offset(99, 100, 10), 90);
        assert_eq!(scroll_offset(5, 3, 10), 0);
    }
}
