//! `update`: the only place the TUI's state changes. It never does I/O; it
//! returns effects for the runtime to carry out.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

use super::app::{App, Effect, InputLine, Modal, Msg, Route, ShareEvent};
use super::navigate;

mod edit;
mod incoming;
mod keys;
use edit::{edit_key, input_key, modal_key, paste};
use incoming::{backend_event, mouse_event, on_loaded, share_event};
pub use keys::{confirm_close, go_to_page, next_node, show_session};
use keys::{home_key, session_key};

/// Applies `msg` at time `now`; returns what the runtime must do.
pub fn update(app: &mut App, msg: Msg, now: Instant) -> Vec<Effect> {
    let mut fx = Vec::new();
    let changes = !matches!(msg, Msg::Tick | Msg::Share(ShareEvent::Bar(_)));
    match msg {
        Msg::Key(key) => {
            if key.kind != KeyEventKind::Release {
                app.last_input = Some(now);
                key_event(app, key, &mut fx);
            }
        }
        Msg::Mouse(mouse) => {
            if matches!(
                mouse.kind,
                MouseEventKind::Down(_) | MouseEventKind::ScrollUp | MouseEventKind::ScrollDown
            ) {
                app.last_input = Some(now);
                mouse_event(app, mouse, &mut fx);
            }
        }
        Msg::Paste(text) => {
            app.last_input = Some(now);
            paste(app, &text);
        }
        Msg::Resize(w, h) => {
            app.width = w;
            app.height = h;
        }
        Msg::Backend(event) => backend_event(app, event, &mut fx),
        Msg::Loaded(loaded) => on_loaded(app, loaded, &mut fx),
        Msg::Tick => {}
        Msg::Terminate => {
            app.exit_overlay = false;
            app.quit = true;
        }
        Msg::Share(event) => share_event(app, event, &mut fx),
    }
    navigate::keep_selection_shown(app);
    super::preview::refresh(app, &mut fx);
    keys::request_matches(app, &mut fx);
    if changes {
        app.revision += 1;
    }
    fx
}

fn key_event(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if app.exit_overlay {
        match key.code {
            KeyCode::Char('y') | KeyCode::Enter => app.quit = true,
            KeyCode::Char('n') | KeyCode::Esc => app.exit_overlay = false,
            _ => {}
        }
        return;
    }
    if let Some(modal) = app.modal.clone() {
        modal_key(app, modal, key, fx);
        return;
    }
    if app.editing.edit.is_some() {
        edit_key(app, key, fx);
        return;
    }
    if app.command.input.is_some() {
        input_key(app, key, fx);
        return;
    }
    if ctrl && key.code == KeyCode::Char('c') {
        request_quit(app);
        return;
    }
    if ctrl && key.code == KeyCode::Char('r') {
        if let Some(id) = app.shown_session() {
            fx.push(Effect::Redo(id));
        }
        return;
    }
    match key.code {
        KeyCode::Char('q') => request_quit(app),
        KeyCode::Char('?') => app.modal = Some(Modal::Help),
        KeyCode::Char(':') | KeyCode::Char('/') => {
            app.command.input = Some(InputLine {
                text: String::new(),
                cursor: 0,
            })
        }
        _ => match app.route {
            Route::Home => home_key(app, key, fx),
            Route::Session(id) => session_key(app, id, key, fx),
        },
    }
}

/// `q` / Ctrl-c: asks first while a job runs.
pub fn request_quit(app: &mut App) {
    if app.any_busy() {
        app.exit_overlay = true;
    } else {
        app.quit = true;
    }
}

/// How many command lines the history keeps.
const HISTORY: usize = 200;
