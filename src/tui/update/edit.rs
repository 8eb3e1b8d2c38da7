//! Typing: modal answers, the node editor and its saves, the command line,
//! pasted text.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::HISTORY;
use super::keys::{open_edit, request_scene};
use crate::tui::app::{
    App, ConfirmAction, Draft, EditBox, Effect, InputLine, Merge, Modal, PendingSave, Side,
};
use crate::tui::backend::BackendError;
use crate::tui::commands;
use crate::tui::complete::{self, Completion};
use crate::tui::drafts::KeptDraft;
use quire_core::jobs::Approval;
use quire_model::ids::{NodeId, SessionId};
use quire_model::op::{Basis, NodePatch, Op};
use quire_model::scene::{Node, NodeKind, TextState};

pub(super) fn modal_key(app: &mut App, modal: Modal, key: KeyEvent, fx: &mut Vec<Effect>) {
    let yes = matches!(key.code, KeyCode::Char('y') | KeyCode::Enter);
    let no = matches!(key.code, KeyCode::Char('n') | KeyCode::Esc);
    match modal {
        Modal::Help | Modal::Reading { .. } => {
            // Kept open unless a key below closes it.
            app.modal = Some(modal);
            let (max, page) = crate::tui::view::help_scroll_range(app);
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
                    ConfirmAction::Run(effect) => fx.push(*effect),
                    ConfirmAction::DropDraft => {
                        if let Some(edit) = app.editing.edit.take() {
                            keep(app, edit.session, edit.node, None, fx);
                        }
                        app.say("draft dropped");
                    }
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
                app.editing.edit = Some(EditBox::new(draft));
            }
            _ => app.modal = Some(Modal::Conflict { draft, theirs }),
        },
        Modal::Merge { merge, at } => merge_key(app, merge, at, key, fx),
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
pub(super) fn edit_text(text: &mut String, cursor: &mut usize, key: KeyEvent) -> bool {
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

pub(super) fn edit_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(edit) = app.editing.edit.as_mut() else {
        return;
    };
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Esc => {
            let draft = edit.draft();
            if draft.text == draft.based_on.clone().unwrap_or_default() {
                app.editing.edit = None;
                keep(app, draft.session, draft.node, None, fx);
                app.say("edit closed, nothing changed");
            } else {
                app.modal = Some(Modal::Confirm {
                    message: "Drop this draft? What you typed will be lost.".into(),
                    action: ConfirmAction::DropDraft,
                });
            }
        }
        // Alt-1…3: the memory's match as the draft.
        KeyCode::Char(c @ '1'..='3') if alt => {
            let session = edit.session;
            super::keys::use_match(app, session, usize::from(c as u8 - b'1'));
        }
        // Alt-Enter or Ctrl-j: a line break in the translation.
        KeyCode::Enter if alt => edit.area.insert_newline(),
        KeyCode::Char('j') if ctrl => edit.area.insert_newline(),
        KeyCode::Enter => {
            if let Some(edit) = app.editing.edit.take() {
                save(app, edit.draft(), fx);
            }
        }
        _ => {
            if edit.area.input(key) {
                let draft = edit.draft();
                let kept = KeptDraft {
                    page: draft.page,
                    text: draft.text,
                    based_on: draft.based_on,
                };
                keep(app, draft.session, draft.node, Some(kept), fx);
            }
        }
    }
}

/// Keeps (or forgets) a node's draft on disk, and in the app's copy.
pub(super) fn keep(
    app: &mut App,
    session: SessionId,
    node: NodeId,
    draft: Option<KeptDraft>,
    fx: &mut Vec<Effect>,
) {
    let Some(project) = app.session(session).map(|s| s.project_id) else {
        return;
    };
    if let Some((p, kept)) = &mut app.editing.kept
        && *p == project
    {
        match &draft {
            Some(d) => kept.insert(node, d.clone()),
            None => kept.remove(&node),
        };
    }
    app.editing.draft_seq += 1;
    fx.push(Effect::KeepDraft {
        seq: app.editing.draft_seq,
        project,
        node,
        draft,
    });
}

/// Sends a draft and shows it as saved at once, so that the next key (in
/// the same burst, say `e`) acts on the saved value.
pub(super) fn save(app: &mut App, draft: Draft, fx: &mut Vec<Effect>) {
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
    // Its marks from the last `qa` run no longer hold.
    app.desk.changed_since_qa.insert(draft.node);
    app.editing.saving.push(PendingSave {
        draft: draft.clone(),
        epoch: None,
    });
    show_saves(app);
    fx.push(Effect::Save { draft, op });
}

/// Puts the pending saves into the shown scene (until a loaded scene has
/// them).
pub(super) fn show_saves(app: &mut App) {
    let Some((shown, snapshot)) = app.desk.scene.as_mut() else {
        return;
    };
    for pending in app
        .editing
        .saving
        .iter()
        .filter(|p| p.draft.session == *shown)
    {
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

pub(super) fn on_saved(
    app: &mut App,
    draft: Draft,
    result: Result<u64, BackendError>,
    fx: &mut Vec<Effect>,
) {
    let Some(i) = app.editing.saving.iter().position(|p| p.draft == draft) else {
        return;
    };
    match result {
        Ok(epoch) => {
            keep(app, draft.session, draft.node, None, fx);
            let loaded = app
                .desk
                .scene
                .as_ref()
                .is_some_and(|(id, s)| *id == draft.session && s.epoch >= epoch);
            if loaded {
                // The scene came before this answer, so the draft was laid
                // over it (no author, no origin): read the node as saved.
                app.editing.saving.remove(i);
                request_scene(app, draft.session, fx);
            } else {
                app.editing.saving[i].epoch = Some(epoch);
            }
            app.say("translation saved");
        }
        Err(e) => {
            app.editing.saving.remove(i);
            // What the scene really holds again.
            request_scene(app, draft.session, fx);
            if let Some(theirs) = e.theirs {
                // Someone saved this node since the draft began: the person
                // decides, as in the web workbench.
                app.modal = Some(Modal::Conflict { draft, theirs });
                app.fail("someone else changed this translation meanwhile: keep yours or theirs?");
                return;
            }
            if app.editing.edit.is_none() {
                app.editing.edit = Some(EditBox::new(draft));
                app.fail(format!(
                    "not saved: {e} · the draft is kept: Enter retries, Esc drops it"
                ));
            } else {
                app.fail(format!("a save failed: {e}"));
            }
        }
    }
}

pub(super) fn input_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(input) = app.command.input.as_mut() else {
        return;
    };
    if key.code != KeyCode::Tab {
        app.command.choices.clear();
    }
    match key.code {
        KeyCode::Esc => {
            app.command.input = None;
            app.command.history_at = None;
        }
        KeyCode::Enter => {
            let text = app.command.input.take().map(|i| i.text).unwrap_or_default();
            app.command.history_at = None;
            if !text.trim().is_empty() && app.command.history.last() != Some(&text) {
                app.command.history.push(text.clone());
                if app.command.history.len() > HISTORY {
                    app.command.history.remove(0);
                }
            }
            commands::run(app, &text, fx);
        }
        KeyCode::Up | KeyCode::Down => {
            let len = app.command.history.len();
            let at = match (app.command.history_at, key.code) {
                (None, KeyCode::Up) if len > 0 => Some(len - 1),
                (Some(i), KeyCode::Up) => Some(i.saturating_sub(1)),
                (Some(i), KeyCode::Down) if i + 1 < len => Some(i + 1),
                _ => None,
            };
            app.command.history_at = at;
            let text = at
                .map(|i| app.command.history[i].clone())
                .unwrap_or_default();
            *input = InputLine {
                cursor: text.chars().count(),
                text,
            };
        }
        KeyCode::Tab => {
            let line = input.clone();
            match complete::complete(app, &line) {
                Completion::Line { input, choices } => {
                    app.command.input = Some(input);
                    app.command.choices = choices;
                }
                Completion::ListDir { dir } => fx.push(Effect::ListDir { dir, line }),
                Completion::None => app.command.choices.clear(),
            }
        }
        KeyCode::Backspace if input.text.is_empty() => app.command.input = None,
        _ => {
            edit_text(&mut input.text, &mut input.cursor, key);
        }
    }
}

pub(super) fn paste(app: &mut App, text: &str) {
    let line = text.replace(['\r', '\n'], " ");
    if let Some(edit) = app.editing.edit.as_mut() {
        edit.area.insert_str(text.replace('\r', ""));
    } else if let Some(input) = app.command.input.as_mut() {
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

/// The merge modal: move, keep quire's side (`m`), take the file's (`t`,
/// or `a` for every conflict still open), close (the rest stay as here).
fn merge_key(app: &mut App, mut merge: Merge, at: usize, key: KeyEvent, fx: &mut Vec<Effect>) {
    let last = merge.rows.len().saturating_sub(1);
    let open = |merge: &Merge| -> Vec<String> {
        merge
            .rows
            .iter()
            .filter(|(_, side)| side.is_none())
            .map(|(c, _)| c.unit.clone())
            .collect()
    };
    let take = |merge: &Merge, units: Vec<String>, fx: &mut Vec<Effect>| {
        fx.push(Effect::ImportTranslations {
            session: merge.session,
            path: merge.path.clone(),
            format: merge.format,
            force: false,
            take: units,
        });
    };
    let at = match key.code {
        KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => {
            let left = open(&merge).len();
            if left > 0 {
                app.say(format!("{left} conflict(s) left as they are here"));
            }
            app.modal = None;
            return;
        }
        KeyCode::Down | KeyCode::Char('j') => (at + 1).min(last),
        KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
        KeyCode::Char('m') => {
            if let Some((_, side @ None)) = merge.rows.get_mut(at) {
                *side = Some(Side::Mine);
            }
            (at + 1).min(last)
        }
        KeyCode::Char('t') => {
            if let Some((c, None)) = merge.rows.get(at) {
                app.say(format!("taking the file's side of page {}…", c.page));
                take(&merge, vec![c.unit.clone()], fx);
            }
            at
        }
        KeyCode::Char('a') => {
            let units = open(&merge);
            if !units.is_empty() {
                app.say(format!(
                    "taking the file's side of {} conflict(s)…",
                    units.len()
                ));
                take(&merge, units, fx);
            }
            at
        }
        _ => at,
    };
    app.modal = Some(Modal::Merge { merge, at });
}
