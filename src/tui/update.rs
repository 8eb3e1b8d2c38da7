//! `update`: the only place the TUI's state changes. It never does I/O; it
//! returns effects for the runtime to carry out.

use std::time::Instant;

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::app::{
    App, ConfirmAction, Draft, EditBox, Effect, HomeRow, InputLine, Loaded, Modal, Msg, Pane,
    PendingSave, Route, ShareEvent,
};
use super::backend::{BackendError, BackendEvent};
use super::commands;
use super::complete::{self, Completion};
use super::layout::{Hit, hit_test};
use super::navigate;
use crate::core::events::{Event, JobStatus, JobSummary};
use crate::core::ids::{PageId, SessionId};
use crate::core::jobs::Approval;
use crate::core::op::{Basis, NodePatch, Op};
use crate::core::scene::{Node, NodeKind, TextState};

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
    if app.edit.is_some() {
        edit_key(app, key, fx);
        return;
    }
    if app.input.is_some() {
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
            app.input = Some(InputLine {
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

fn modal_key(app: &mut App, modal: Modal, key: KeyEvent, fx: &mut Vec<Effect>) {
    let yes = matches!(key.code, KeyCode::Char('y') | KeyCode::Enter);
    let no = matches!(key.code, KeyCode::Char('n') | KeyCode::Esc);
    match modal {
        Modal::Help => {
            let (max, page) = super::view::help_scroll_range(app);
            let now = app.help_scroll.min(max);
            app.help_scroll = match key.code {
                KeyCode::Esc | KeyCode::Char('?' | 'q') | KeyCode::Enter => {
                    app.modal = None;
                    0
                }
                KeyCode::Down | KeyCode::Char('j') => now.saturating_add(1).min(max),
                KeyCode::Up | KeyCode::Char('k') => now.saturating_sub(1),
                KeyCode::PageDown | KeyCode::Char(' ') => now.saturating_add(page).min(max),
                KeyCode::PageUp => now.saturating_sub(page),
                KeyCode::Home | KeyCode::Char('g') => 0,
                KeyCode::End | KeyCode::Char('G') => max,
                _ => now,
            };
        }
        Modal::Confirm { action, .. } => {
            if yes {
                app.modal = None;
                match action {
                    ConfirmAction::CloseSession(id) => fx.push(Effect::Close(id)),
                    ConfirmAction::EditFinal(id) => open_edit(app, id, true),
                    ConfirmAction::Overwrite(effect) => fx.push(*effect),
                }
            } else if no {
                app.modal = None;
            }
        }
        Modal::Conflict { mut draft, theirs } => match key.code {
            // Keep mine: saved over theirs, now that the person has seen it.
            KeyCode::Char('k') | KeyCode::Enter => {
                app.modal = None;
                draft.based_on = theirs;
                save(app, draft, fx);
            }
            KeyCode::Char('t') => {
                app.modal = None;
                app.say("kept their translation; your draft is dropped");
            }
            // Back to the draft, to merge by hand.
            KeyCode::Char('e') | KeyCode::Esc => {
                app.modal = None;
                draft.based_on = theirs;
                app.edit = Some(EditBox::new(draft));
            }
            _ => app.modal = Some(Modal::Conflict { draft, theirs }),
        },
        Modal::Approval { session, spec, .. } => {
            if yes {
                app.modal = None;
                app.say(format!("starting {}", spec.steps.join(" → ")));
                fx.push(Effect::Run {
                    session,
                    spec,
                    approval: Approval::Person,
                });
            } else if no {
                app.modal = None;
                app.say("not run");
            }
        }
    }
}

/// Char-index editing shared by the edit box and the command line.
fn edit_text(text: &mut String, cursor: &mut usize, key: KeyEvent) -> bool {
    let len = text.chars().count();
    let at = |s: &String, i: usize| s.char_indices().nth(i).map_or(s.len(), |(b, _)| b);
    match key.code {
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
            let b = at(text, *cursor);
            text.insert(b, c);
            *cursor += 1;
        }
        KeyCode::Char('u') => {
            text.clear();
            *cursor = 0;
        }
        KeyCode::Backspace if *cursor > 0 => {
            let b = at(text, *cursor - 1);
            text.remove(b);
            *cursor -= 1;
        }
        KeyCode::Delete if *cursor < len => {
            let b = at(text, *cursor);
            text.remove(b);
        }
        KeyCode::Left => *cursor = cursor.saturating_sub(1),
        KeyCode::Right => *cursor = (*cursor + 1).min(len),
        KeyCode::Home => *cursor = 0,
        KeyCode::End => *cursor = len,
        _ => return false,
    }
    true
}

fn edit_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(edit) = app.edit.as_mut() else {
        return;
    };
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Esc => {
            app.edit = None;
            app.say("edit dropped");
        }
        // Alt-Enter or Ctrl-j: a line break in the translation.
        KeyCode::Enter if alt => edit.area.insert_newline(),
        KeyCode::Char('j') if ctrl => edit.area.insert_newline(),
        KeyCode::Enter => {
            if let Some(edit) = app.edit.take() {
                save(app, edit.draft(), fx);
            }
        }
        _ => {
            edit.area.input(key);
        }
    }
}

/// Sends a draft and shows it as saved at once, so that the next key (in
/// the same burst, say `e`) acts on the saved value.
fn save(app: &mut App, draft: Draft, fx: &mut Vec<Effect>) {
    let translation = (!draft.text.is_empty()).then(|| draft.text.clone());
    let op = Op::UpdateNode {
        page: draft.page,
        id: draft.node,
        // Saying the state is what unlocks a final one.
        patch: NodePatch::text(
            Some(translation),
            draft.unlock.then_some(TextState::Translated),
        ),
        // Refused if someone else saved this node since the draft began.
        based_on: Some(Basis {
            translation: Some(draft.based_on.clone()),
            ..Basis::default()
        }),
    };
    app.saving.push(PendingSave {
        draft: draft.clone(),
        epoch: None,
    });
    show_saves(app);
    fx.push(Effect::Save { draft, op });
}

/// Puts the pending saves into the shown scene (until a loaded scene has
/// them).
fn show_saves(app: &mut App) {
    let Some((shown, snapshot)) = app.scene.as_mut() else {
        return;
    };
    for pending in app.saving.iter().filter(|p| p.draft.session == *shown) {
        let d = &pending.draft;
        let node = snapshot
            .scene
            .pages
            .iter_mut()
            .find(|p| p.id == d.page)
            .map(std::sync::Arc::make_mut)
            .and_then(|p| p.nodes.iter_mut().find(|n| n.id == d.node));
        if let Some(Node {
            kind:
                NodeKind::Text {
                    translation,
                    state,
                    origin,
                    ..
                },
            ..
        }) = node
        {
            *translation = (!d.text.is_empty()).then(|| d.text.clone());
            *state = Some(TextState::inferred(translation.as_deref()));
            // A person's, until the scene says more.
            *origin = None;
        }
    }
}

fn on_saved(app: &mut App, draft: Draft, result: Result<u64, BackendError>, fx: &mut Vec<Effect>) {
    let Some(i) = app.saving.iter().position(|p| p.draft == draft) else {
        return;
    };
    match result {
        Ok(epoch) => {
            let loaded = app
                .scene
                .as_ref()
                .is_some_and(|(id, s)| *id == draft.session && s.epoch >= epoch);
            if loaded {
                app.saving.remove(i);
            } else {
                app.saving[i].epoch = Some(epoch);
            }
            app.say("translation saved");
        }
        Err(e) => {
            app.saving.remove(i);
            // What the scene really holds again.
            request_scene(app, draft.session, fx);
            if let Some(theirs) = e.theirs {
                // Someone saved this node since the draft began: the person
                // decides, as in the web workbench.
                app.modal = Some(Modal::Conflict { draft, theirs });
                app.fail("someone else changed this translation meanwhile: keep yours or theirs?");
                return;
            }
            if app.edit.is_none() {
                app.edit = Some(EditBox::new(draft));
                app.fail(format!(
                    "not saved: {e} · the draft is kept: Enter retries, Esc drops it"
                ));
            } else {
                app.fail(format!("a save failed: {e}"));
            }
        }
    }
}

/// How many command lines the history keeps.
const HISTORY: usize = 200;

fn input_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(input) = app.input.as_mut() else {
        return;
    };
    if key.code != KeyCode::Tab {
        app.choices.clear();
    }
    match key.code {
        KeyCode::Esc => {
            app.input = None;
            app.history_at = None;
        }
        KeyCode::Enter => {
            let text = app.input.take().map(|i| i.text).unwrap_or_default();
            app.history_at = None;
            if !text.trim().is_empty() && app.history.last() != Some(&text) {
                app.history.push(text.clone());
                if app.history.len() > HISTORY {
                    app.history.remove(0);
                }
            }
            commands::run(app, &text, fx);
        }
        KeyCode::Up | KeyCode::Down => {
            let len = app.history.len();
            let at = match (app.history_at, key.code) {
                (None, KeyCode::Up) if len > 0 => Some(len - 1),
                (Some(i), KeyCode::Up) => Some(i.saturating_sub(1)),
                (Some(i), KeyCode::Down) if i + 1 < len => Some(i + 1),
                _ => None,
            };
            app.history_at = at;
            let text = at.map(|i| app.history[i].clone()).unwrap_or_default();
            *input = InputLine {
                cursor: text.chars().count(),
                text,
            };
        }
        KeyCode::Tab => {
            let line = input.clone();
            match complete::complete(app, &line) {
                Completion::Line { input, choices } => {
                    app.input = Some(input);
                    app.choices = choices;
                }
                Completion::ListDir { dir } => fx.push(Effect::ListDir { dir, line }),
                Completion::None => app.choices.clear(),
            }
        }
        KeyCode::Backspace if input.text.is_empty() => app.input = None,
        _ => {
            edit_text(&mut input.text, &mut input.cursor, key);
        }
    }
}

fn paste(app: &mut App, text: &str) {
    let line = text.replace(['\r', '\n'], " ");
    if let Some(edit) = app.edit.as_mut() {
        edit.area.insert_str(text.replace('\r', ""));
    } else if let Some(input) = app.input.as_mut() {
        for c in line.chars() {
            let b = input
                .text
                .char_indices()
                .nth(input.cursor)
                .map_or(input.text.len(), |(b, _)| b);
            input.text.insert(b, c);
            input.cursor += 1;
        }
    }
}

fn move_sel(sel: &mut usize, len: usize, delta: isize) {
    if len == 0 {
        *sel = 0;
        return;
    }
    let next = (*sel as isize + delta).clamp(0, len as isize - 1);
    *sel = next as usize;
}

fn home_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let rows = app.home_rows();
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => move_sel(&mut app.home_selected, rows.len(), -1),
        KeyCode::Down | KeyCode::Char('j') => move_sel(&mut app.home_selected, rows.len(), 1),
        KeyCode::PageUp => move_sel(&mut app.home_selected, rows.len(), -10),
        KeyCode::PageDown => move_sel(&mut app.home_selected, rows.len(), 10),
        KeyCode::Home | KeyCode::Char('g') => app.home_selected = 0,
        KeyCode::End | KeyCode::Char('G') => app.home_selected = rows.len().saturating_sub(1),
        KeyCode::Enter => open_home_row(app, rows.get(app.home_selected).cloned(), fx),
        KeyCode::Char('n') => {
            app.input = Some(InputLine {
                text: "new ".into(),
                cursor: 4,
            })
        }
        KeyCode::Char('x') | KeyCode::Char('d') => {
            if let Some(HomeRow::Session(id)) = rows.get(app.home_selected) {
                confirm_close(app, *id);
            }
        }
        _ => {}
    }
}

pub fn confirm_close(app: &mut App, id: crate::core::ids::SessionId) {
    let name = app
        .session(id)
        .map_or_else(|| id.to_string(), |s| s.name.clone());
    app.modal = Some(Modal::Confirm {
        message: format!("Save and close `{name}`?"),
        action: ConfirmAction::CloseSession(id),
    });
}

fn open_home_row(app: &mut App, row: Option<HomeRow>, fx: &mut Vec<Effect>) {
    match row {
        Some(HomeRow::Session(id)) => show_session(app, id, fx),
        Some(HomeRow::Project(id)) => {
            app.say("opening…");
            fx.push(Effect::Open(id));
        }
        None => {}
    }
}

/// Shows a session (its scene loads in the background).
pub fn show_session(app: &mut App, id: crate::core::ids::SessionId, fx: &mut Vec<Effect>) {
    if app.route != Route::Session(id) {
        app.route = Route::Session(id);
        app.focus = Pane::Pages;
        app.page_selected = 0;
        app.node_selected = 0;
        if app.scene.as_ref().is_some_and(|(s, _)| *s != id) {
            app.scene = None;
        }
    }
    request_scene(app, id, fx);
}

fn request_scene(app: &mut App, id: crate::core::ids::SessionId, fx: &mut Vec<Effect>) {
    if app.scene_loading {
        app.scene_stale = true;
    } else {
        app.scene_loading = true;
        fx.push(Effect::LoadScene(id));
    }
}

fn page_count(app: &App) -> usize {
    app.scene.as_ref().map_or(0, |(_, s)| s.scene.pages.len())
}

fn node_count(app: &App) -> usize {
    app.scene
        .as_ref()
        .and_then(|(_, s)| s.scene.pages.get(app.page_selected))
        .map_or(0, |p| p.nodes.len())
}

fn session_key(
    app: &mut App,
    id: crate::core::ids::SessionId,
    key: KeyEvent,
    fx: &mut Vec<Effect>,
) {
    let delta = match key.code {
        KeyCode::Up | KeyCode::Char('k') => Some(-1),
        KeyCode::Down | KeyCode::Char('j') => Some(1),
        KeyCode::PageUp => Some(-10),
        KeyCode::PageDown => Some(10),
        _ => None,
    };
    if let Some(delta) = delta {
        move_in_focus(app, delta);
        return;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('f') if ctrl => {
            app.input = Some(InputLine {
                text: "find ".into(),
                cursor: 5,
            })
        }
        KeyCode::Home | KeyCode::Char('g') => move_in_focus(app, isize::MIN / 2),
        KeyCode::End | KeyCode::Char('G') => move_in_focus(app, isize::MAX / 2),
        KeyCode::Char(c @ ('n' | 'N')) => next_node(app, c == 'N'),
        KeyCode::Tab | KeyCode::BackTab => {
            let has_jobs = !app.jobs_hidden && app.jobs_of(id).next().is_some();
            let back = key.code == KeyCode::BackTab;
            app.focus = match (app.focus, has_jobs, back) {
                (Pane::Pages, _, false) | (Pane::Jobs, _, true) => Pane::Nodes,
                (Pane::Nodes, true, false) | (Pane::Pages, true, true) => Pane::Jobs,
                _ => Pane::Pages,
            }
        }
        KeyCode::Char('w') => {
            app.jobs_hidden = !app.jobs_hidden;
            if app.jobs_hidden && app.focus == Pane::Jobs {
                app.focus = Pane::Nodes;
            }
            app.say(if app.jobs_hidden {
                "jobs pane hidden · w shows it"
            } else {
                "jobs pane shown"
            });
        }
        KeyCode::Enter if app.focus == Pane::Jobs => jump_to_warning(app, id),
        KeyCode::Esc if app.focus == Pane::Jobs => app.focus = Pane::Nodes,
        KeyCode::Right | KeyCode::Char('l') | KeyCode::Enter if app.focus == Pane::Pages => {
            app.focus = Pane::Nodes;
        }
        KeyCode::Left | KeyCode::Char('h') if app.focus == Pane::Nodes => app.focus = Pane::Pages,
        KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => app.route = Route::Home,
        KeyCode::Char('e') | KeyCode::Enter => start_edit(app, id),
        KeyCode::Char('u') => fx.push(Effect::Undo(id)),
        KeyCode::Char('r') => mark(app, id, TextState::Reviewed, fx),
        KeyCode::Char('f') => mark(app, id, TextState::Final, fx),
        _ => {}
    }
}

fn move_in_focus(app: &mut App, delta: isize) {
    match app.focus {
        Pane::Pages => {
            let before = app.page_selected;
            let pages = page_count(app);
            move_sel(&mut app.page_selected, pages, delta);
            if before != app.page_selected {
                app.node_selected = 0;
            }
        }
        Pane::Nodes => {
            // Among the nodes the list shows (a filter may hide some).
            let shown = navigate::shown_nodes(app);
            let mut at = shown
                .iter()
                .position(|&i| i == app.node_selected)
                .unwrap_or(0);
            move_sel(&mut at, shown.len(), delta);
            if let Some(&i) = shown.get(at) {
                app.node_selected = i;
            }
        }
        Pane::Jobs => {
            let n = app
                .shown_session()
                .map_or(0, |id| app.warnings_of(id).len());
            move_sel(&mut app.warning_selected, n, delta);
        }
    }
}

/// `n`/`N`: the next (previous) match of the last `/find`, or else the
/// next node that needs work.
pub fn next_node(app: &mut App, back: bool) {
    let found = match &app.find {
        Some(needle) => navigate::next_where(app, back, |n| navigate::holds(n, needle)),
        None => {
            let warned = navigate::warned(app);
            navigate::next_where(app, back, |n| navigate::needs_work(n, &warned))
        }
    };
    match found {
        Some((page, node)) => {
            app.page_selected = page;
            app.node_selected = node;
            app.focus = Pane::Nodes;
        }
        None if app.find.is_some() => app.fail("no node holds that text"),
        None => app.say("nothing left to do: every node is translated and none is flagged"),
    }
}

/// `/N`: page N (from 1).
pub fn go_to_page(app: &mut App, n: usize) {
    let pages = page_count(app);
    if n == 0 || n > pages {
        return app.fail(format!("there are {pages} pages"));
    }
    app.page_selected = n - 1;
    app.node_selected = 0;
}

/// Enter on a warning: show its node (by id, so a reordered page still
/// finds it), with the focus on the nodes.
fn jump_to_warning(app: &mut App, id: SessionId) {
    let Some(w) = app
        .warnings_of(id)
        .get(app.warning_selected)
        .copied()
        .cloned()
    else {
        app.fail("no warning selected");
        return;
    };
    let Some((_, snapshot)) = &app.scene else {
        return;
    };
    let pages = &snapshot.scene.pages;
    let page = match w.finding.page_id {
        Some(pid) => pages.iter().position(|p| p.id == pid),
        None => (w.page_index < pages.len()).then_some(w.page_index),
    };
    let Some(page) = page else {
        app.fail("that page is gone");
        return;
    };
    let node = w
        .finding
        .node_id
        .and_then(|nid| pages[page].nodes.iter().position(|n| n.id == nid));
    app.page_selected = page;
    app.node_selected = node.unwrap_or(0);
    app.focus = Pane::Nodes;
    if w.finding.node_id.is_some() && node.is_none() {
        app.fail("that node is gone; its page is shown");
    } else {
        app.say(format!("{}: {}", w.finding.rule, w.finding.message));
    }
}

/// The selected text node of the shown page, or a failure said.
fn selected_text_node(app: &mut App) -> Option<(PageId, Node)> {
    let Some((_, snapshot)) = &app.scene else {
        app.fail("the session is still loading");
        return None;
    };
    let found = snapshot
        .scene
        .pages
        .get(app.page_selected)
        .and_then(|p| Some((p.id, p.nodes.get(app.node_selected)?.clone())));
    match found {
        Some((page, node)) if matches!(node.kind, NodeKind::Text { .. }) => Some((page, node)),
        Some(_) => {
            app.fail("only text nodes have a translation");
            None
        }
        None => {
            app.fail("no node selected");
            None
        }
    }
}

/// `r` / `f`: marks the selected translation reviewed or final; the same
/// key again steps back (final → reviewed → translated).
fn mark(app: &mut App, session: SessionId, to: TextState, fx: &mut Vec<Effect>) {
    let Some((page, node)) = selected_text_node(app) else {
        return;
    };
    let NodeKind::Text { translation, .. } = &node.kind else {
        return;
    };
    if translation.as_deref().is_none_or(str::is_empty) {
        return app.fail("translate it first: there is nothing to review");
    }
    let current = node.kind.state().unwrap_or(TextState::Initial);
    let state = match (current, to) {
        (TextState::Final, TextState::Final) => TextState::Reviewed,
        (TextState::Reviewed, TextState::Reviewed) => TextState::Translated,
        _ => to,
    };
    fx.push(Effect::Apply {
        session,
        op: Op::UpdateNode {
            page,
            id: node.id,
            patch: NodePatch::text(None, Some(state)),
            based_on: None,
        },
        what: format!("marked {}", state.as_str()),
    });
}

/// `e` on a text node: an edit box with its current translation; a final
/// translation asks first.
fn start_edit(app: &mut App, session: SessionId) {
    let Some((_, node)) = selected_text_node(app) else {
        return;
    };
    if node.kind.state() == Some(TextState::Final) {
        app.modal = Some(Modal::Confirm {
            message: "This translation is final. Edit it anyway?".into(),
            action: ConfirmAction::EditFinal(session),
        });
        return;
    }
    open_edit(app, session, false);
}

fn open_edit(app: &mut App, session: SessionId, unlock: bool) {
    let Some((page, node)) = selected_text_node(app) else {
        return;
    };
    let NodeKind::Text { translation, .. } = node.kind else {
        return;
    };
    app.edit = Some(EditBox::new(Draft {
        session,
        page,
        node: node.id,
        text: translation.clone().unwrap_or_default(),
        unlock,
        based_on: translation,
    }));
}

fn mouse_event(app: &mut App, mouse: MouseEvent, fx: &mut Vec<Effect>) {
    let hit = hit_test(app, mouse.column, mouse.row);
    match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) => match hit {
            Some(Hit::Revoke) => fx.push(Effect::Revoke),
            Some(Hit::HomeRow(i))
                if app.modal.is_none() && app.input.is_none() && app.edit.is_none() =>
            {
                if app.home_selected == i {
                    let rows = app.home_rows();
                    open_home_row(app, rows.get(i).cloned(), fx);
                } else {
                    app.home_selected = i;
                }
            }
            Some(Hit::Page(i)) if app.modal.is_none() => {
                app.focus = Pane::Pages;
                if i < page_count(app) && i != app.page_selected {
                    app.page_selected = i;
                    app.node_selected = 0;
                }
            }
            Some(Hit::Node(i)) if app.modal.is_none() => {
                app.focus = Pane::Nodes;
                if i < node_count(app) {
                    app.node_selected = i;
                }
            }
            // A click on a warning jumps to its node; on the pane, opens it.
            Some(Hit::Warning(i)) if app.modal.is_none() => {
                app.warning_selected = i;
                if let Some(id) = app.shown_session() {
                    jump_to_warning(app, id);
                }
            }
            Some(Hit::Jobs) if app.modal.is_none() => app.focus = Pane::Jobs,
            _ => {}
        },
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let delta = if mouse.kind == MouseEventKind::ScrollUp {
                -3
            } else {
                3
            };
            match hit {
                Some(Hit::HomeRow(_)) => {
                    let len = app.home_rows().len();
                    move_sel(&mut app.home_selected, len, delta);
                }
                Some(Hit::Page(_)) => {
                    app.focus = Pane::Pages;
                    move_in_focus(app, delta);
                }
                Some(Hit::Node(_)) => {
                    app.focus = Pane::Nodes;
                    move_in_focus(app, delta);
                }
                Some(Hit::Warning(_) | Hit::Jobs) => {
                    app.focus = Pane::Jobs;
                    move_in_focus(app, delta);
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// Reloads what the person sees.
fn reload(app: &mut App, fx: &mut Vec<Effect>) {
    fx.extend([
        Effect::LoadSessions,
        Effect::LoadProjects,
        Effect::LoadEngines,
        Effect::LoadJobs,
    ]);
    if let Some(id) = app.shown_session() {
        request_scene(app, id, fx);
    }
}

fn backend_event(app: &mut App, event: BackendEvent, fx: &mut Vec<Effect>) {
    match event {
        BackendEvent::Connected => {
            if !app.connected && app.loaded {
                app.say(format!("reconnected to {}", app.backend_name));
            }
            app.connected = true;
            app.generation += 1;
            reload(app, fx);
        }
        BackendEvent::Disconnected(why) => {
            if app.connected && app.loaded {
                app.reopen = app.sessions.iter().map(|s| s.project_id).collect();
                app.reopen_shown = app
                    .shown_session()
                    .and_then(|id| app.session(id))
                    .map(|s| s.project_id);
            }
            app.connected = false;
            let hint = if why.contains("401") {
                " · the server wants a token: pass --token (or set QUIRE_ATTACH__TOKEN)"
            } else {
                ""
            };
            app.fail(format!("disconnected: {why}{hint}; retrying"));
        }
        BackendEvent::Event(event) => workspace_event(app, event, fx),
    }
}

fn workspace_event(app: &mut App, event: Event, fx: &mut Vec<Effect>) {
    match event {
        Event::Snapshot { jobs, sessions } => {
            app.jobs = jobs;
            app.sessions = sessions;
            // The stream and the API are two connections: a snapshot can
            // be older than an answer already in. The list asked for now
            // is newer, and decides whether the shown session is gone.
            fx.extend([Effect::LoadSessions, Effect::LoadProjects]);
            if let Some(id) = app.shown_session() {
                request_scene(app, id, fx);
            }
        }
        Event::SessionOpened { .. }
        | Event::SessionClosed { .. }
        | Event::CurrentSessionChanged { .. } => {
            fx.extend([Effect::LoadSessions, Effect::LoadProjects]);
        }
        Event::SceneAdvanced {
            session_id,
            epoch,
            name,
            ..
        } => {
            if let Some(s) = app.sessions.iter_mut().find(|s| s.id == session_id) {
                s.epoch = epoch;
                s.name = name;
            }
            let behind = app
                .scene
                .as_ref()
                .is_none_or(|(id, snap)| *id != session_id || snap.epoch < epoch);
            if app.shown_session() == Some(session_id) && behind {
                request_scene(app, session_id, fx);
            }
        }
        Event::JobStarted { id, .. } => {
            if !app.jobs.iter().any(|j| j.id == id)
                && let Some(job) = JobSummary::started(&event)
            {
                app.jobs.push(job);
            }
        }
        Event::JobProgress { job_id: id, .. } | Event::JobWarning { job_id: id, .. } => {
            if let Some(j) = app.jobs.iter_mut().find(|j| j.id == id) {
                j.apply(&event);
            }
        }
        Event::JobFinished {
            id,
            status,
            ref error,
        } => {
            if let Some(j) = app.jobs.iter_mut().find(|j| j.id == id) {
                j.apply(&event);
                let steps = j.steps.join(" → ");
                let warnings = j.warnings.len();
                match status {
                    JobStatus::Completed => app.say(format!("{steps}: done")),
                    JobStatus::CompletedWithErrors => {
                        app.fail(format!("{steps}: done with {warnings} warning(s)"))
                    }
                    JobStatus::Cancelled => app.say(format!("{steps}: cancelled")),
                    JobStatus::Failed => app.fail(format!(
                        "{steps}: failed: {}",
                        error.clone().unwrap_or_default()
                    )),
                    JobStatus::Queued | JobStatus::Running => {}
                }
            }
        }
        Event::ConfigChanged {} => fx.push(Effect::LoadEngines),
    }
}

/// The shown session was closed elsewhere: go home and say so.
/// Keeps the home selection on the row it was on when the lists change
/// under it (a list re-sorted by an edit elsewhere), else in range.
fn keep_home_row(app: &mut App, keep: Option<HomeRow>) {
    let rows = app.home_rows();
    app.home_selected = keep
        .and_then(|row| rows.iter().position(|r| *r == row))
        .unwrap_or_else(|| app.home_selected.min(rows.len().saturating_sub(1)));
}

/// The shown project has a new session (the server restarted): show it
/// in place, selection, draft and pending saves kept.
fn session_moved(app: &mut App, old: SessionId, new: SessionId, fx: &mut Vec<Effect>) {
    app.route = Route::Session(new);
    app.scene = None;
    if let Some(edit) = app.edit.as_mut().filter(|e| e.session == old) {
        edit.session = new;
    }
    app.saving.retain(|p| p.draft.session != old);
    request_scene(app, new, fx);
}

/// Home, when the shown session is gone (unless it is being reopened).
fn leave_closed_session(app: &mut App) {
    if let Some(id) = app.shown_session()
        && app.loaded
        && app.reopen_shown.is_none()
        && !app.sessions.iter().any(|s| s.id == id)
    {
        app.route = Route::Home;
        app.scene = None;
        app.say("the session was closed");
    }
}

fn share_event(app: &mut App, event: ShareEvent, fx: &mut Vec<Effect>) {
    match event {
        ShareEvent::Bar(bar) => app.share = Some(bar),
        ShareEvent::Navigate(session) => show_session(app, session, fx),
        ShareEvent::Revoked => {
            app.share = None;
            app.say("sharing revoked: the endpoint is gone");
        }
    }
}

fn on_loaded(app: &mut App, loaded: Loaded, fx: &mut Vec<Effect>) {
    match loaded {
        Loaded::Sessions(asked, Ok(_)) if app.sessions_asked.is_some_and(|t| asked < t) => {}
        Loaded::Sessions(asked, Ok(sessions)) => {
            app.sessions_asked = Some(asked);
            let keep = app.home_rows().get(app.home_selected).cloned();
            // A server that restarted gives the same project a new session:
            // keep showing the project.
            // (While the server restarts, the shown session may be missing
            // from the list already: the project being reopened is the one.)
            let shown_project = app
                .shown_session()
                .and_then(|id| app.session(id))
                .map(|s| s.project_id)
                .or(app.reopen_shown);
            app.sessions = sessions;
            if let (Some(old), Some(project)) = (app.shown_session(), shown_project)
                && app.session(old).is_none()
                && let Some(new) = app
                    .sessions
                    .iter()
                    .find(|s| s.project_id == project)
                    .map(|s| s.id)
            {
                session_moved(app, old, new, fx);
            }
            // A server that restarted without them: open them again.
            for project in std::mem::take(&mut app.reopen) {
                if !app.sessions.iter().any(|s| s.project_id == project) {
                    fx.push(Effect::Reopen(project));
                }
            }
            if app
                .reopen_shown
                .is_some_and(|p| app.sessions.iter().any(|s| s.project_id == p))
            {
                app.reopen_shown = None;
            }
            if !app.loaded {
                app.loaded = true;
                app.start_overlay = None;
                if let Some(id) = app.pending_show.take() {
                    show_session(app, id, fx);
                }
            }
            leave_closed_session(app);
            keep_home_row(app, keep);
        }
        Loaded::Projects(Ok(projects)) => {
            let keep = app.home_rows().get(app.home_selected).cloned();
            app.projects = projects;
            keep_home_row(app, keep);
        }
        Loaded::Engines(Ok(engines)) => app.engines = engines,
        Loaded::Jobs(Ok(jobs)) => app.jobs = jobs,
        Loaded::Scene(id, result) => {
            app.scene_loading = false;
            match result {
                Ok(snapshot) if app.shown_session() == Some(id) => {
                    let epoch = snapshot.epoch;
                    app.saving.retain(|p| {
                        p.draft.session != id || p.epoch.is_none_or(|saved| saved > epoch)
                    });
                    app.scene = Some((id, snapshot));
                    show_saves(app);
                    let pages = page_count(app);
                    app.page_selected = app.page_selected.min(pages.saturating_sub(1));
                    let nodes = node_count(app);
                    app.node_selected = app.node_selected.min(nodes.saturating_sub(1));
                }
                Err(e) if app.shown_session() == Some(id) => {
                    app.fail(format!("cannot load the session: {e}"));
                }
                // For a session no longer shown (closed, or moved to a new
                // id by a server restart): nothing to show.
                Ok(_) | Err(_) => {}
            }
            if std::mem::take(&mut app.scene_stale)
                && let Some(shown) = app.shown_session()
            {
                request_scene(app, shown, fx);
            }
        }
        Loaded::Reopened(_, at, Ok(session)) => {
            // Lists asked for before this would not have it.
            app.sessions_asked = Some(at);
            let shown_gone = app
                .shown_session()
                .is_none_or(|id| app.session(id).is_none());
            if !app.sessions.iter().any(|s| s.id == session.id) {
                app.sessions.push(session.clone());
            }
            fx.extend([Effect::LoadSessions, Effect::LoadProjects]);
            // `reopen_shown` stays until a session list has it, so that a
            // list from before the open does not send the view home.
            if app.reopen_shown == Some(session.project_id) {
                match app.shown_session() {
                    Some(old) if shown_gone => session_moved(app, old, session.id, fx),
                    None => show_session(app, session.id, fx),
                    Some(_) => {}
                }
                app.say(format!("reopened {}", session.name));
            }
        }
        Loaded::Reopened(project, _, Err(e)) => {
            if app.reopen_shown == Some(project) {
                app.reopen_shown = None;
                leave_closed_session(app);
            }
            app.fail(format!("could not open the project again: {e}"));
        }
        Loaded::Opened(Ok(session)) => {
            app.say(format!("opened {}", session.name));
            if !app.sessions.iter().any(|s| s.id == session.id) {
                app.sessions.push(session.clone());
            }
            fx.extend([Effect::LoadSessions, Effect::LoadProjects]);
            show_session(app, session.id, fx);
        }
        Loaded::Done(Ok(message)) => app.say(message),
        Loaded::Saved(draft, result) => on_saved(app, draft, result, fx),
        Loaded::Imported(Ok((files, result))) => {
            app.attachments.clear();
            match result.skipped.as_slice() {
                [] => app.say(format!("imported {files} file(s) as pages")),
                skipped => {
                    let named: Vec<String> = skipped
                        .iter()
                        .take(3)
                        .map(|s| format!("{} ({})", s.name, s.reason))
                        .collect();
                    let more = skipped.len().saturating_sub(3);
                    app.fail(format!(
                        "imported {files} file(s); {} entr{} skipped: {}{}",
                        skipped.len(),
                        if skipped.len() == 1 { "y" } else { "ies" },
                        named.join("; "),
                        if more > 0 {
                            format!(" and {more} more")
                        } else {
                            String::new()
                        }
                    ));
                }
            }
        }
        Loaded::Located(Ok(file)) => commands::stage(app, file),
        // Only if the line is still what was completed.
        Loaded::Listed(line, entries) if app.input.as_ref() == Some(&line) => {
            match complete::paths(&line, &entries) {
                Completion::Line { input, choices } => {
                    app.input = Some(input);
                    app.choices = choices;
                }
                _ => app.choices.clear(),
            }
        }
        Loaded::Listed(..) => {}
        Loaded::Picture(session, blob, image) => {
            if let Some(preview) = app
                .preview
                .as_mut()
                .filter(|p| p.session == session && p.blob == blob)
            {
                preview.image = image;
            }
        }
        Loaded::Exists { path, retry } => {
            app.modal = Some(Modal::Confirm {
                message: format!("{} exists. Overwrite it?", path.display()),
                action: ConfirmAction::Overwrite(retry),
            });
        }
        Loaded::Sessions(_, Err(e))
        | Loaded::Projects(Err(e))
        | Loaded::Engines(Err(e))
        | Loaded::Jobs(Err(e))
        | Loaded::Opened(Err(e))
        | Loaded::Done(Err(e))
        | Loaded::Imported(Err(e))
        | Loaded::Located(Err(e)) => app.fail(e.message),
    }
}
