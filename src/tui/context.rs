//! What the view shows, derived from the state alone: the facts TUI sharing
//! (`share`) decides on. A pure function, so the answer is always about the
//! exact state the person sees.

use std::time::{Duration, Instant};

use super::app::{App, Route};
use quire_model::ids::SessionId;

/// How long after a key press, click or scroll the view counts as in use.
pub const RECENT_INPUT: Duration = Duration::from_millis(1500);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewState {
    pub route: RouteKind,
    pub session: Option<SessionId>,
    /// The command line or an edit box holds text.
    pub draft: bool,
    /// Files are staged.
    pub attachments: bool,
    /// The open modal: `help`, `confirm` or `approval`.
    pub modal: Option<&'static str>,
    pub approval_pending: bool,
    pub start_overlay: bool,
    pub exit_overlay: bool,
    /// The shown session has a job queued or running.
    pub busy: bool,
    pub connected: bool,
    /// Loaded and connected, and the shown session's scene is on screen.
    pub ready: bool,
    pub last_input: Option<Instant>,
    pub revision: u64,
    pub generation: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    Home,
    Session,
}

impl RouteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RouteKind::Home => "home",
            RouteKind::Session => "session",
        }
    }
}

pub fn view_state(app: &App) -> ViewState {
    let (route, session) = match app.route {
        Route::Home => (RouteKind::Home, None),
        Route::Session(id) => (RouteKind::Session, Some(id)),
    };
    let scene_shown = match session {
        Some(id) => app.desk.scene.as_ref().is_some_and(|(s, _)| *s == id),
        None => true,
    };
    ViewState {
        route,
        session,
        draft: app.has_draft(),
        attachments: !app.editing.attachments.is_empty(),
        modal: app.modal.as_ref().map(|m| m.kind()),
        approval_pending: matches!(app.modal, Some(super::app::Modal::Approval { .. })),
        start_overlay: app.start_overlay.is_some(),
        exit_overlay: app.exit_overlay,
        busy: session.is_some_and(|id| app.is_busy(id)),
        connected: app.link.connected,
        ready: app.link.loaded && app.link.connected && app.start_overlay.is_none() && scene_shown,
        last_input: app.last_input,
        revision: app.revision,
        generation: app.link.generation,
    }
}

/// Time left in the recent-input window at `now`, if any.
pub fn recent_input_left(state: &ViewState, now: Instant) -> Option<Duration> {
    let last = state.last_input?;
    let elapsed = now.saturating_duration_since(last);
    (elapsed < RECENT_INPUT).then(|| RECENT_INPUT - elapsed)
}
