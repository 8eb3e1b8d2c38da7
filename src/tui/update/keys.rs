//! Keys on the home screen and in a session: moving, opening, marking,
//! starting an edit.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::tui::app::{
    App, ConfirmAction, Draft, EditBox, Effect, HomeRow, InputLine, Modal, Pane, Route,
};
use crate::tui::navigate;
use quire_model::ids::{PageId, SessionId};
use quire_model::op::{NodePatch, Op};
use quire_model::scene::{Node, NodeKind, TextState};

pub(super) fn move_sel(sel: &mut usize, len: usize, delta: isize) {
    if len == 0 {
        *sel = 0;
        return;
    }
    let next = (*sel as isize + delta).clamp(0, len as isize - 1);
    *sel = next as usize;
}

pub(super) fn home_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let rows = app.home_rows();
    match key.code {
        KeyCode::Up | KeyCode::Char('k') => {
            move_sel(&mut app.workspace.home_selected, rows.len(), -1)
        }
        KeyCode::Down | KeyCode::Char('j') => {
            move_sel(&mut app.workspace.home_selected, rows.len(), 1)
        }
        KeyCode::PageUp => move_sel(&mut app.workspace.home_selected, rows.len(), -10),
        KeyCode::PageDown => move_sel(&mut app.workspace.home_selected, rows.len(), 10),
        KeyCode::Home | KeyCode::Char('g') => app.workspace.home_selected = 0,
        KeyCode::End | KeyCode::Char('G') => {
            app.workspace.home_selected = rows.len().saturating_sub(1)
        }
        KeyCode::Enter => open_home_row(app, rows.get(app.workspace.home_selected).cloned(), fx),
        KeyCode::Char('n') => {
            app.command.input = Some(InputLine {
                text: "new ".into(),
                cursor: 4,
            })
        }
        KeyCode::Char('x') | KeyCode::Char('d') => {
            if let Some(HomeRow::Session(id)) = rows.get(app.workspace.home_selected) {
                confirm_close(app, *id);
            }
        }
        _ => {}
    }
}

pub fn confirm_close(app: &mut App, id: quire_model::ids::SessionId) {
    let name = app
        .session(id)
        .map_or_else(|| id.to_string(), |s| s.name.clone());
    app.modal = Some(Modal::Confirm {
        message: format!("Save and close `{name}`?"),
        action: ConfirmAction::CloseSession(id),
    });
}

pub(super) fn open_home_row(app: &mut App, row: Option<HomeRow>, fx: &mut Vec<Effect>) {
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
pub fn show_session(app: &mut App, id: quire_model::ids::SessionId, fx: &mut Vec<Effect>) {
    if app.route != Route::Session(id) {
        // What was said of the last project is not about this one.
        if app.status.as_ref().is_some_and(|s| !s.error) {
            app.status = None;
        }
        app.route = Route::Session(id);
        app.desk.visual = None;
        app.desk.focus = Pane::Pages;
        app.desk.page_selected = 0;
        app.desk.node_selected = 0;
        if app.desk.scene.as_ref().is_some_and(|(s, _)| *s != id) {
            app.desk.scene = None;
        }
    }
    request_scene(app, id, fx);
}

pub(super) fn request_scene(app: &mut App, id: quire_model::ids::SessionId, fx: &mut Vec<Effect>) {
    if app.desk.scene_loading {
        app.desk.scene_stale = true;
    } else {
        app.desk.scene_loading = true;
        fx.push(Effect::LoadScene(id));
    }
}

pub(super) fn page_count(app: &App) -> usize {
    app.desk
        .scene
        .as_ref()
        .map_or(0, |(_, s)| s.scene.pages.len())
}

pub(super) fn node_count(app: &App) -> usize {
    app.desk
        .scene
        .as_ref()
        .and_then(|(_, s)| s.scene.pages.get(app.desk.page_selected))
        .map_or(0, |p| p.nodes.len())
}

pub(super) fn session_key(
    app: &mut App,
    id: quire_model::ids::SessionId,
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
            app.command.input = Some(InputLine {
                text: "find ".into(),
                cursor: 5,
            })
        }
        KeyCode::Home | KeyCode::Char('g') => move_in_focus(app, isize::MIN / 2),
        KeyCode::End | KeyCode::Char('G') => move_in_focus(app, isize::MAX / 2),
        KeyCode::Char(c @ ('n' | 'N')) => next_node(app, c == 'N'),
        KeyCode::Tab | KeyCode::BackTab => {
            let has_jobs = !app.desk.jobs_hidden && app.jobs_of(id).next().is_some();
            let back = key.code == KeyCode::BackTab;
            app.desk.focus = match (app.desk.focus, has_jobs, back) {
                (Pane::Pages, _, false) | (Pane::Jobs, _, true) => Pane::Nodes,
                (Pane::Nodes, true, false) | (Pane::Pages, true, true) => Pane::Jobs,
                _ => Pane::Pages,
            }
        }
        KeyCode::Char('w') => {
            app.desk.jobs_hidden = !app.desk.jobs_hidden;
            if app.desk.jobs_hidden && app.desk.focus == Pane::Jobs {
                app.desk.focus = Pane::Nodes;
            }
            app.say(if app.desk.jobs_hidden {
                "jobs pane hidden · w shows it"
            } else {
                "jobs pane shown"
            });
        }
        KeyCode::Enter if app.desk.focus == Pane::Jobs => jump_to_warning(app, id),
        KeyCode::Esc if app.desk.focus == Pane::Jobs => app.desk.focus = Pane::Nodes,
        KeyCode::Esc if app.desk.visual.is_some() => {
            app.desk.visual = None;
            app.say("selection dropped");
        }
        KeyCode::Right | KeyCode::Char('l') | KeyCode::Enter if app.desk.focus == Pane::Pages => {
            app.desk.focus = Pane::Nodes;
        }
        KeyCode::Left | KeyCode::Char('h') if app.desk.focus == Pane::Nodes => {
            app.desk.focus = Pane::Pages
        }
        KeyCode::Esc | KeyCode::Left | KeyCode::Char('h') => app.route = Route::Home,
        KeyCode::Char('e') | KeyCode::Enter => start_edit(app, id),
        KeyCode::Char('u') => fx.push(Effect::Undo(id)),
        KeyCode::Char(c @ '1'..='3') => use_match(app, id, usize::from(c as u8 - b'1')),
        KeyCode::Char('v') if app.desk.focus == Pane::Nodes => {
            app.desk.visual = match app.desk.visual {
                Some(_) => {
                    app.say("selection dropped");
                    None
                }
                None => {
                    app.say("selecting: j/k extend · r/f mark them all · v or Esc drops");
                    Some(app.desk.node_selected)
                }
            };
        }
        KeyCode::Char(c @ ('r' | 'f')) => {
            let to = if c == 'r' {
                TextState::Reviewed
            } else {
                TextState::Final
            };
            if app.desk.visual.is_some() {
                mark_range(app, id, to, fx);
            } else if mark(app, id, to, fx) {
                // On to the next segment, as a reviewer reads.
                move_in_focus(app, 1);
            }
        }
        _ => {}
    }
}

pub(super) fn move_in_focus(app: &mut App, delta: isize) {
    match app.desk.focus {
        Pane::Pages => {
            let before = app.desk.page_selected;
            let pages = page_count(app);
            move_sel(&mut app.desk.page_selected, pages, delta);
            if before != app.desk.page_selected {
                app.desk.node_selected = 0;
                app.desk.visual = None;
            }
        }
        Pane::Nodes => {
            // Among the nodes the list shows (a filter may hide some).
            let shown = navigate::shown_nodes(app);
            let mut at = shown
                .iter()
                .position(|&i| i == app.desk.node_selected)
                .unwrap_or(0);
            move_sel(&mut at, shown.len(), delta);
            if let Some(&i) = shown.get(at) {
                app.desk.node_selected = i;
            }
        }
        Pane::Jobs => {
            let n = app
                .shown_session()
                .map_or(0, |id| app.warnings_of(id).len());
            move_sel(&mut app.desk.warning_selected, n, delta);
        }
    }
}

/// `n`/`N`: the next (previous) match of the last `/find`, or else the
/// next node that needs work.
pub fn next_node(app: &mut App, back: bool) {
    let pattern = match &app.desk.find {
        Some((text, options)) => match quire_core::find::Pattern::new(text, *options) {
            Ok(p) => Some(p),
            Err(e) => return app.fail(e),
        },
        None => None,
    };
    let found = match &pattern {
        Some(pattern) => navigate::next_where(app, back, |n| navigate::holds(n, pattern)),
        None => {
            let warned = navigate::warned(app);
            let machine = app.prefs.next_stops_at_machine;
            navigate::next_where(app, back, |n| navigate::needs_work(n, &warned, machine))
        }
    };
    match found {
        Some((page, node)) => {
            app.desk.page_selected = page;
            app.desk.node_selected = node;
            app.desk.focus = Pane::Nodes;
        }
        None if app.desk.find.is_some() => app.fail("no node holds that text"),
        None => app.say(
            "nothing left to do: every node is translated by a person or reviewed, and none is flagged",
        ),
    }
}

/// `/N`: page N (from 1).
pub fn go_to_page(app: &mut App, n: usize) {
    let pages = page_count(app);
    if n == 0 || n > pages {
        return app.fail(format!("there are {pages} pages"));
    }
    app.desk.page_selected = n - 1;
    app.desk.node_selected = 0;
}

/// Enter on a warning: show its node (by id, so a reordered page still
/// finds it), with the focus on the nodes.
pub(super) fn jump_to_warning(app: &mut App, id: SessionId) {
    let Some(w) = app
        .warnings_of(id)
        .get(app.desk.warning_selected)
        .copied()
        .cloned()
    else {
        app.fail("no warning selected");
        return;
    };
    let Some((_, snapshot)) = &app.desk.scene else {
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
    app.desk.page_selected = page;
    app.desk.node_selected = node.unwrap_or(0);
    app.desk.focus = Pane::Nodes;
    if w.finding.node_id.is_some() && node.is_none() {
        app.fail("that node is gone; its page is shown");
    } else {
        app.say(format!("{}: {}", w.finding.rule, w.finding.message));
    }
}

/// The selected text node of the shown page, or a failure said.
pub(super) fn selected_text_node(app: &mut App) -> Option<(PageId, Node)> {
    let Some((_, snapshot)) = &app.desk.scene else {
        app.fail("the session is still loading");
        return None;
    };
    let found = snapshot
        .scene
        .pages
        .get(app.desk.page_selected)
        .and_then(|p| Some((p.id, p.nodes.get(app.desk.node_selected)?.clone())));
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

/// Asks for the memory's matches of the selected text node, once per
/// node (while nothing else is in the way: the editor keeps its own).
pub(super) fn request_matches(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(session) = app.shown_session() else {
        return;
    };
    // Quietly: a selection that is not a text node asks for nothing.
    let node = match &app.desk.scene {
        Some((shown, snapshot)) if *shown == session => snapshot
            .scene
            .pages
            .get(app.desk.page_selected)
            .and_then(|p| p.nodes.get(app.desk.node_selected))
            .filter(
                |n| matches!(&n.kind, NodeKind::Text { text: Some(t), .. } if !t.trim().is_empty()),
            )
            .map(|n| (n.id, snapshot.epoch)),
        _ => None,
    };
    let Some(key) = node else {
        return;
    };
    if app.desk.matches.as_ref().is_some_and(|(k, _)| *k == key) {
        return;
    }
    let node = key.0;
    // The last answer for the node stays shown while the new one loads.
    let kept = match app.desk.matches.take() {
        Some(((n, _), found)) if n == node => found,
        _ => Ok(Vec::new()),
    };
    app.desk.matches = Some((key, kept));
    fx.push(Effect::LoadMatches { session, node });
}

/// `1`–`3` (or Alt-1–3 in the editor): the memory's match N as the draft.
pub(super) fn use_match(app: &mut App, session: SessionId, n: usize) {
    let Some((_, node)) = selected_text_node(app) else {
        return;
    };
    let target = match &app.desk.matches {
        Some(((id, _), Ok(found))) if *id == node.id => found.get(n).map(|m| m.target.clone()),
        _ => None,
    };
    let Some(target) = target else {
        return app.fail(format!("no match {} for this segment", n + 1));
    };
    if app.editing.edit.is_none() {
        start_edit(app, session);
    }
    if let Some(edit) = app.editing.edit.as_mut() {
        edit.area.select_all();
        edit.area.cut();
        edit.area.insert_str(&target);
        app.say(format!(
            "match {} inserted · Enter saves · Esc asks before dropping",
            n + 1
        ));
    }
}

/// `r` / `f` in a selection (`v`): every translated text node between the
/// anchor and the cursor marked reviewed or final, as one op.
fn mark_range(app: &mut App, session: SessionId, to: TextState, fx: &mut Vec<Effect>) {
    let Some(anchor) = app.desk.visual.take() else {
        return;
    };
    let Some(page) = app
        .desk
        .scene
        .as_ref()
        .and_then(|(_, s)| s.scene.pages.get(app.desk.page_selected))
        .cloned()
    else {
        return;
    };
    let (from, to_index) = (
        anchor.min(app.desk.node_selected),
        anchor.max(app.desk.node_selected),
    );
    let shown = navigate::shown_nodes(app);
    let ops: Vec<Op> = page
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| (from..=to_index).contains(i) && shown.contains(i))
        .filter(|(_, n)| match &n.kind {
            NodeKind::Text { translation, .. } => {
                translation.as_deref().is_some_and(|t| !t.is_empty()) && n.kind.state() != Some(to)
            }
            _ => false,
        })
        .map(|(_, n)| Op::UpdateNode {
            page: page.id,
            id: n.id,
            patch: NodePatch::text(None, Some(to)),
            based_on: None,
        })
        .collect();
    if ops.is_empty() {
        return app.say(format!(
            "nothing to mark: no translated node in the selection is not {} yet",
            to.as_str()
        ));
    }
    let what = format!("marked {} nodes {}", ops.len(), to.as_str());
    fx.push(Effect::Apply {
        session,
        op: Op::Batch {
            label: Some(what.clone()),
            ops,
        },
        what,
    });
}

/// `r` / `f`: marks the selected translation reviewed or final; the same
/// key again steps back (final → reviewed → translated). Whether it asked
/// for a change.
pub(super) fn mark(app: &mut App, session: SessionId, to: TextState, fx: &mut Vec<Effect>) -> bool {
    let Some((page, node)) = selected_text_node(app) else {
        return false;
    };
    let NodeKind::Text { translation, .. } = &node.kind else {
        return false;
    };
    if translation.as_deref().is_none_or(str::is_empty) {
        app.fail("translate it first: there is nothing to review");
        return false;
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
    true
}

/// `e` on a text node: an edit box with its current translation; a final
/// translation asks first.
pub(super) fn start_edit(app: &mut App, session: SessionId) {
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

pub(super) fn open_edit(app: &mut App, session: SessionId, unlock: bool) {
    let Some((page, node)) = selected_text_node(app) else {
        return;
    };
    let NodeKind::Text { translation, .. } = node.kind else {
        return;
    };
    // A draft typed earlier and never saved (the TUI was closed or
    // killed) comes back, if the translation is still what it started
    // from.
    let kept = app
        .editing
        .kept
        .as_ref()
        .and_then(|(_, k)| k.get(&node.id))
        .filter(|k| k.based_on == translation && Some(&k.text) != translation.as_ref())
        .map(|k| k.text.clone());
    if kept.is_some() {
        app.say("your unsaved draft is back · Enter saves it · Esc drops it");
    }
    app.editing.edit = Some(EditBox::new(Draft {
        session,
        page,
        node: node.id,
        text: kept.unwrap_or_else(|| translation.clone().unwrap_or_default()),
        unlock,
        based_on: translation,
    }));
}
