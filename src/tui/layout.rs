//! Where things are on screen: one pure function of the state and the
//! terminal size, used both to draw and to hit-test mouse clicks.

use ratatui::layout::{Constraint, Direction, Layout, Rect};

use super::app::{App, Route};

/// A label of the sharing bar that can be clicked.
pub const REVOKE: &str = "[Revoke]";

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
    if app.share.is_some() {
        constraints.push(Constraint::Length(1));
    }
    constraints.push(Constraint::Min(3));
    if !app.attachments.is_empty() {
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
    let chips = (!app.attachments.is_empty()).then(&mut next);
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

/// How many rows the jobs pane takes when the session has jobs.
const JOBS_HEIGHT: u16 = 7;

pub fn session_areas(app: &App, body: Rect) -> SessionAreas {
    let has_jobs = app
        .shown_session()
        .is_some_and(|id| app.jobs_of(id).next().is_some());
    let (main, jobs) = if has_jobs && body.height > JOBS_HEIGHT + 6 {
        let v = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Min(6), Constraint::Length(JOBS_HEIGHT)])
            .split(body);
        (v[0], Some(v[1]))
    } else {
        (body, None)
    };
    let h = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(28), Constraint::Percentage(72)])
        .split(main);
    let right = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Percentage(62), Constraint::Percentage(38)])
        .split(h[1]);
    SessionAreas {
        pages: h[0],
        nodes: right[0],
        detail: right[1],
        jobs,
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
                let offset = scroll_offset(app.home_selected, rows, list.height as usize);
                let i = offset + (row - list.y) as usize;
                return (i < rows).then_some(Hit::HomeRow(i));
            }
        }
        Route::Session(_) => {
            let s = session_areas(app, a.body);
            let pages = inner(s.pages);
            if contains(pages, col, row) {
                let len = app.scene.as_ref().map_or(0, |(_, s)| s.scene.pages.len());
                let offset = scroll_offset(app.page_selected, len, pages.height as usize);
                return Some(Hit::Page(offset + (row - pages.y) as usize));
            }
            let nodes = inner(s.nodes);
            if contains(nodes, col, row) {
                let len = app
                    .scene
                    .as_ref()
                    .and_then(|(_, s)| s.scene.pages.get(app.page_selected))
                    .map_or(0, |p| p.nodes.len());
                let offset = scroll_offset(app.node_selected, len, nodes.height as usize);
                return Some(Hit::Node(offset + (row - nodes.y) as usize));
            }
        }
    }
    None
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
