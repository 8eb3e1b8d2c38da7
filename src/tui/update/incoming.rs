//! What arrives from outside the keyboard: mouse clicks, the backend's
//! events, finished loads and the sharing adapter's requests.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

use super::edit::{on_saved, show_saves};
use super::keys::{
    jump_to_warning, move_in_focus, move_sel, node_count, open_home_row, page_count, request_scene,
    show_session,
};
use crate::tui::app::{
    App, ConfirmAction, Effect, HomeRow, Loaded, Merge, Modal, Pane, QA_STEP, Route, ShareEvent,
    Side,
};
use crate::tui::backend::{BackendError, BackendEvent};
use crate::tui::commands;
use crate::tui::complete::{self, Completion};
use crate::tui::layout::{Hit, hit_test};
use quire_core::events::{Event, JobStatus, JobSummary, SessionSummary};
use quire_core::import::ImportResult;
use quire_core::matches::Match;
use quire_core::session::SceneSnapshot;
use quire_model::ids::SessionId;
use quire_model::scene::NodeKind;

pub(super) fn mouse_event(app: &mut App, mouse: MouseEvent, fx: &mut Vec<Effect>) {
    let hit = hit_test(app, mouse.column, mouse.row);
    match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) => match hit {
            Some(Hit::Revoke) => fx.push(Effect::Revoke),
            Some(Hit::HomeRow(i))
                if app.modal.is_none()
                    && app.command.input.is_none()
                    && app.editing.edit.is_none() =>
            {
                if app.workspace.home_selected == i {
                    let rows = app.home_rows();
                    open_home_row(app, rows.get(i).cloned(), fx);
                } else {
                    app.workspace.home_selected = i;
                }
            }
            Some(Hit::Page(i)) if app.modal.is_none() => {
                app.desk.focus = Pane::Pages;
                if i < page_count(app) && i != app.desk.page_selected {
                    app.desk.page_selected = i;
                    app.desk.node_selected = 0;
                }
            }
            Some(Hit::Node(i)) if app.modal.is_none() => {
                app.desk.focus = Pane::Nodes;
                if i < node_count(app) {
                    app.desk.node_selected = i;
                }
            }
            // A click on a warning jumps to its node; on the pane, opens it.
            Some(Hit::Warning(i)) if app.modal.is_none() => {
                app.desk.warning_selected = i;
                if let Some(id) = app.shown_session() {
                    jump_to_warning(app, id);
                }
            }
            Some(Hit::Jobs) if app.modal.is_none() => app.desk.focus = Pane::Jobs,
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
                    move_sel(&mut app.workspace.home_selected, len, delta);
                }
                Some(Hit::Page(_)) => {
                    app.desk.focus = Pane::Pages;
                    move_in_focus(app, delta);
                }
                Some(Hit::Node(_)) => {
                    app.desk.focus = Pane::Nodes;
                    move_in_focus(app, delta);
                }
                Some(Hit::Warning(_) | Hit::Jobs) => {
                    app.desk.focus = Pane::Jobs;
                    move_in_focus(app, delta);
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// Reloads what the person sees.
pub(super) fn reload(app: &mut App, fx: &mut Vec<Effect>) {
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

pub(super) fn backend_event(app: &mut App, event: BackendEvent, fx: &mut Vec<Effect>) {
    match event {
        BackendEvent::Connected => {
            if !app.link.connected && app.link.loaded {
                app.say(format!("reconnected to {}", app.link.backend_name));
            }
            app.link.connected = true;
            app.link.generation += 1;
            reload(app, fx);
        }
        BackendEvent::Disconnected(why) => {
            if app.link.connected && app.link.loaded {
                app.link.reopen = app
                    .workspace
                    .sessions
                    .iter()
                    .map(|s| s.project_id)
                    .collect();
                app.link.reopen_shown = app
                    .shown_session()
                    .and_then(|id| app.session(id))
                    .map(|s| s.project_id);
            }
            app.link.connected = false;
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

pub(super) fn workspace_event(app: &mut App, event: Event, fx: &mut Vec<Effect>) {
    match event {
        Event::Snapshot { jobs, sessions } => {
            app.workspace.jobs = jobs;
            app.workspace.sessions = sessions;
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
            if let Some(s) = app
                .workspace
                .sessions
                .iter_mut()
                .find(|s| s.id == session_id)
            {
                s.epoch = epoch;
                s.name = name;
            }
            let behind = app
                .desk
                .scene
                .as_ref()
                .is_none_or(|(id, snap)| *id != session_id || snap.epoch < epoch);
            if app.shown_session() == Some(session_id) && behind {
                request_scene(app, session_id, fx);
            }
        }
        Event::JobStarted { id, .. } => {
            if !app.workspace.jobs.iter().any(|j| j.id == id)
                && let Some(job) = JobSummary::started(&event)
            {
                app.workspace.jobs.push(job);
            }
        }
        Event::JobProgress { job_id: id, .. } | Event::JobWarning { job_id: id, .. } => {
            if let Some(j) = app.workspace.jobs.iter_mut().find(|j| j.id == id) {
                j.apply(&event);
            }
        }
        Event::JobFinished {
            id,
            status,
            ref error,
        } => {
            if let Some(j) = app.workspace.jobs.iter_mut().find(|j| j.id == id) {
                j.apply(&event);
                if j.steps.iter().any(|s| s == QA_STEP) {
                    app.desk.changed_since_qa.clear();
                }
                let Some(j) = app.workspace.jobs.iter().find(|j| j.id == id) else {
                    return;
                };
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
pub(super) fn keep_home_row(app: &mut App, keep: Option<HomeRow>) {
    let rows = app.home_rows();
    app.workspace.home_selected = keep
        .and_then(|row| rows.iter().position(|r| *r == row))
        .unwrap_or_else(|| {
            app.workspace
                .home_selected
                .min(rows.len().saturating_sub(1))
        });
}

/// The shown project has a new session (the server restarted): show it
/// in place, selection, draft and pending saves kept.
pub(super) fn session_moved(app: &mut App, old: SessionId, new: SessionId, fx: &mut Vec<Effect>) {
    app.route = Route::Session(new);
    app.desk.scene = None;
    if let Some(edit) = app.editing.edit.as_mut().filter(|e| e.session == old) {
        edit.session = new;
    }
    app.editing.saving.retain(|p| p.draft.session != old);
    request_scene(app, new, fx);
}

/// Home, when the shown session is gone (unless it is being reopened).
pub(super) fn leave_closed_session(app: &mut App) {
    if let Some(id) = app.shown_session()
        && app.link.loaded
        && app.link.reopen_shown.is_none()
        && !app.workspace.sessions.iter().any(|s| s.id == id)
    {
        app.route = Route::Home;
        app.desk.scene = None;
        app.say("the session was closed");
    }
}

pub(super) fn share_event(app: &mut App, event: ShareEvent, fx: &mut Vec<Effect>) {
    match event {
        ShareEvent::Bar(bar) => app.share = Some(bar),
        ShareEvent::Navigate(session) => show_session(app, session, fx),
        ShareEvent::Revoked => {
            app.share = None;
            app.say("sharing revoked: the endpoint is gone");
        }
    }
}

/// Notes the text nodes a newer scene of the shown session changed (their
/// `qa` marks no longer hold).
fn note_changes(app: &mut App, id: SessionId, new: &SceneSnapshot) {
    let Some((shown, old)) = &app.desk.scene else {
        return;
    };
    if *shown != id {
        app.desk.changed_since_qa.clear();
        return;
    }
    let text = |n: &quire_model::scene::Node| match &n.kind {
        NodeKind::Text {
            text, translation, ..
        } => Some((text.clone(), translation.clone())),
        _ => None,
    };
    let pages: HashMap<_, _> = old.scene.pages.iter().map(|p| (p.id, p)).collect();
    for page in &new.scene.pages {
        let Some(before) = pages.get(&page.id) else {
            continue;
        };
        if Arc::ptr_eq(page, before) {
            continue;
        }
        let earlier: HashMap<_, _> = before.nodes.iter().map(|n| (n.id, text(n))).collect();
        for node in &page.nodes {
            if earlier.get(&node.id).is_some_and(|t| *t != text(node)) {
                app.desk.changed_since_qa.insert(node.id);
            }
        }
    }
}

pub(super) fn on_loaded(app: &mut App, loaded: Loaded, fx: &mut Vec<Effect>) {
    match loaded {
        Loaded::Drafts(project, kept) => app.editing.kept = Some((project, kept)),
        Loaded::Matches(node, found) => {
            if let Some(((n, _), shown)) = &mut app.desk.matches
                && *n == node
            {
                *shown = found.map_err(|e| e.to_string());
            }
        }
        Loaded::Concordance(query, found) => concordance_loaded(app, query, found),
        Loaded::History(found) => history_loaded(app, found),
        Loaded::Sessions(asked, Ok(_))
            if app.workspace.sessions_asked.is_some_and(|t| asked < t) => {}
        Loaded::Sessions(asked, Ok(sessions)) => sessions_loaded(app, asked, sessions, fx),
        Loaded::Projects(Ok(projects)) => {
            let keep = app.home_rows().get(app.workspace.home_selected).cloned();
            app.workspace.projects = projects;
            keep_home_row(app, keep);
        }
        Loaded::Engines(Ok(engines)) => app.workspace.engines = engines,
        Loaded::Jobs(Ok(jobs)) => app.workspace.jobs = jobs,
        Loaded::Scene(id, result) => scene_loaded(app, id, result, fx),
        Loaded::Reopened(_, at, Ok(session)) => reopened(app, at, session, fx),
        Loaded::Reopened(project, _, Err(e)) => {
            if app.link.reopen_shown == Some(project) {
                app.link.reopen_shown = None;
                leave_closed_session(app);
            }
            app.fail(format!("could not open the project again: {e}"));
        }
        Loaded::Opened(Ok(session)) => {
            if !app.workspace.sessions.iter().any(|s| s.id == session.id) {
                app.workspace.sessions.push(session.clone());
            }
            fx.extend([Effect::LoadSessions, Effect::LoadProjects]);
            show_session(app, session.id, fx);
            app.say(format!("opened {}", session.name));
        }
        Loaded::Done(Ok(message)) => app.say(message),
        Loaded::Merged(Ok((message, merge))) => merged(app, message, merge),
        Loaded::Saved(draft, result) => on_saved(app, draft, result, fx),
        Loaded::Imported(Ok((files, result))) => imported(app, files, &result),
        Loaded::Located(Ok(file)) => commands::stage(app, file),
        // Only if the line is still what was completed.
        Loaded::Listed(line, entries) if app.command.input.as_ref() == Some(&line) => {
            match complete::paths(&line, &entries) {
                Completion::Line { input, choices } => {
                    app.command.input = Some(input);
                    app.command.choices = choices;
                }
                _ => app.command.choices.clear(),
            }
        }
        Loaded::Listed(..) => {}
        Loaded::Picture(session, blob, image) => {
            if let Some(preview) = app
                .desk
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
        | Loaded::Merged(Err(e))
        | Loaded::Imported(Err(e))
        | Loaded::Located(Err(e)) => app.fail(e.message),
    }
}

/// The history's answer, shown to read: an entry a line (when, who,
/// what), each change under it.
fn history_loaded(app: &mut App, found: Result<quire_core::journal::HistoryPage, BackendError>) {
    use quire_model::journal::Who;
    match found {
        Ok(page) => {
            let who = |by: &Who| match by {
                Who::Human { user } => user.clone().unwrap_or_else(|| "a person".into()),
                Who::Agent {
                    user: Some(user),
                    client,
                } => format!("{user}'s agent {client}"),
                Who::Agent { user: None, client } => format!("the agent {client}"),
                Who::Engine {
                    engine,
                    user: Some(user),
                    ..
                } => format!("{engine} for {user}"),
                Who::Engine { engine, .. } => engine.clone(),
            };
            let value = |v: &serde_json::Value| match v {
                serde_json::Value::Null => "—".to_owned(),
                serde_json::Value::String(s) => format!("\"{s}\""),
                other => other.to_string(),
            };
            let mut lines = Vec::new();
            for entry in &page.entries {
                let at = entry.at.get(..16).unwrap_or(&entry.at).replace('T', " ");
                lines.push(format!("{at}  {}: {}", who(&entry.by), entry.label));
                for change in entry.changes.iter().take(5) {
                    lines.push(format!(
                        "   {}: {} → {}",
                        change.field,
                        value(&change.before),
                        value(&change.after)
                    ));
                }
                if entry.changes.len() > 5 {
                    lines.push(format!("   … {} more", entry.changes.len() - 5));
                }
            }
            if lines.is_empty() {
                lines.push("nothing in the history matches".to_owned());
            }
            app.help_scroll = 0;
            app.modal = Some(Modal::Reading {
                title: format!("History · {} entries", page.entries.len()),
                lines,
            });
        }
        Err(e) => app.fail(format!("history: {e}")),
    }
}

/// A concordance search's answer, shown to read.
fn concordance_loaded(app: &mut App, query: String, found: Result<Vec<Match>, BackendError>) {
    match found {
        Ok(found) => {
            let lines = if found.is_empty() {
                vec![format!("nothing remembered holds \"{query}\"")]
            } else {
                found
                    .iter()
                    .flat_map(|m| {
                        [
                            format!("{} → {}", m.source, m.target),
                            format!(
                                "   {}{}",
                                m.origin,
                                m.changed
                                    .as_deref()
                                    .map(|c| format!(" · {}", &c[..c.len().min(10)]))
                                    .unwrap_or_default()
                            ),
                        ]
                    })
                    .collect()
            };
            app.help_scroll = 0;
            app.modal = Some(Modal::Reading {
                title: format!("Concordance · \"{query}\" · {}", found.len()),
                lines,
            });
        }
        Err(e) => app.fail(format!("concordance: {e}")),
    }
}

/// The open sessions: the shown project followed to its new session
/// after a server restart, projects it lost opened again.
fn sessions_loaded(
    app: &mut App,
    asked: Instant,
    sessions: Vec<SessionSummary>,
    fx: &mut Vec<Effect>,
) {
    app.workspace.sessions_asked = Some(asked);
    let keep = app.home_rows().get(app.workspace.home_selected).cloned();
    // A server that restarted gives the same project a new session:
    // keep showing the project.
    // (While the server restarts, the shown session may be missing
    // from the list already: the project being reopened is the one.)
    let shown_project = app
        .shown_session()
        .and_then(|id| app.session(id))
        .map(|s| s.project_id)
        .or(app.link.reopen_shown);
    app.workspace.sessions = sessions;
    if let (Some(old), Some(project)) = (app.shown_session(), shown_project)
        && app.session(old).is_none()
        && let Some(new) = app
            .workspace
            .sessions
            .iter()
            .find(|s| s.project_id == project)
            .map(|s| s.id)
    {
        session_moved(app, old, new, fx);
    }
    // A server that restarted without them: open them again.
    for project in std::mem::take(&mut app.link.reopen) {
        if !app
            .workspace
            .sessions
            .iter()
            .any(|s| s.project_id == project)
        {
            fx.push(Effect::Reopen(project));
        }
    }
    if app
        .link
        .reopen_shown
        .is_some_and(|p| app.workspace.sessions.iter().any(|s| s.project_id == p))
    {
        app.link.reopen_shown = None;
    }
    if !app.link.loaded {
        app.link.loaded = true;
        app.start_overlay = None;
        if let Some(id) = app.link.pending_show.take() {
            show_session(app, id, fx);
        }
    }
    leave_closed_session(app);
    keep_home_row(app, keep);
}

/// A session's scene: shown if that session still is, with its drafts
/// and glossary.
fn scene_loaded(
    app: &mut App,
    id: SessionId,
    result: Result<SceneSnapshot, BackendError>,
    fx: &mut Vec<Effect>,
) {
    app.desk.scene_loading = false;
    match result {
        Ok(snapshot) if app.shown_session() == Some(id) => {
            let epoch = snapshot.epoch;
            app.editing
                .saving
                .retain(|p| p.draft.session != id || p.epoch.is_none_or(|saved| saved > epoch));
            note_changes(app, id, &snapshot);
            if let Some(project) = app.session(id).map(|s| s.project_id)
                && app.editing.kept.as_ref().is_none_or(|(p, _)| *p != project)
            {
                app.editing.kept = Some((project, Default::default()));
                fx.push(Effect::LoadDrafts(project));
            }
            let terms = &snapshot.scene.project.glossary;
            let same_terms = app
                .desk
                .scene
                .as_ref()
                .is_some_and(|(_, old)| old.scene.project.glossary == *terms);
            if !same_terms || app.desk.glossary.is_none() {
                app.desk.glossary = (!terms.is_empty())
                    .then(|| Arc::new(quire_core::glossary::Matcher::new(terms)));
            }
            app.desk.scene = Some((id, snapshot));
            show_saves(app);
            let pages = page_count(app);
            app.desk.page_selected = app.desk.page_selected.min(pages.saturating_sub(1));
            let nodes = node_count(app);
            app.desk.node_selected = app.desk.node_selected.min(nodes.saturating_sub(1));
        }
        Err(e) if app.shown_session() == Some(id) => {
            app.fail(format!("cannot load the session: {e}"));
        }
        // For a session no longer shown (closed, or moved to a new
        // id by a server restart): nothing to show.
        Ok(_) | Err(_) => {}
    }
    if std::mem::take(&mut app.desk.scene_stale)
        && let Some(shown) = app.shown_session()
    {
        request_scene(app, shown, fx);
    }
}

/// A project open before a server restart is open again.
fn reopened(app: &mut App, at: Instant, session: SessionSummary, fx: &mut Vec<Effect>) {
    // Lists asked for before this would not have it.
    app.workspace.sessions_asked = Some(at);
    let shown_gone = app
        .shown_session()
        .is_none_or(|id| app.session(id).is_none());
    if !app.workspace.sessions.iter().any(|s| s.id == session.id) {
        app.workspace.sessions.push(session.clone());
    }
    fx.extend([Effect::LoadSessions, Effect::LoadProjects]);
    // `reopen_shown` stays until a session list has it, so that a
    // list from before the open does not send the view home.
    if app.link.reopen_shown == Some(session.project_id) {
        match app.shown_session() {
            Some(old) if shown_gone => session_moved(app, old, session.id, fx),
            None => show_session(app, session.id, fx),
            Some(_) => {}
        }
        app.say(format!("reopened {}", session.name));
    }
}

/// Files imported as pages: said, with what was skipped.
fn imported(app: &mut App, files: usize, result: &ImportResult) {
    app.editing.attachments.clear();
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

/// A translation file merged: said in the status line; its conflicts
/// listed in the merge modal (the one open for this file takes what the
/// answer says was taken).
fn merged(app: &mut App, message: String, merge: Merge) {
    app.say(message);
    if let Some(Modal::Merge { merge: open, .. }) = &mut app.modal
        && open.session == merge.session
        && open.path == merge.path
    {
        for (row, side) in &mut open.rows {
            let taken = merge
                .rows
                .iter()
                .any(|(c, s)| c.unit == row.unit && *s == Some(Side::Theirs));
            if taken {
                *side = Some(Side::Theirs);
            }
        }
        return;
    }
    if merge.rows.iter().any(|(_, side)| side.is_none()) && app.modal.is_none() {
        let at = merge
            .rows
            .iter()
            .position(|(_, s)| s.is_none())
            .unwrap_or(0);
        app.modal = Some(Modal::Merge { merge, at });
    }
}
