//! Undo and redo, per person (spec 10, "Undo is per person"): a caller
//! steps their own newest entry ([`Actor`]); one that is not the newest of
//! all only if nobody has changed since what it changed.

use std::sync::Arc;

use super::{Pending, Session, State, Stepped};
use quire_model::apply::apply;
use quire_model::error::{CoreError, CoreResult};
use quire_model::hash::BlobHash;
use quire_model::history::{Actor, Entry, History};
use quire_model::limits;
use quire_model::op::Op;
use quire_model::scene::Scene;
use quire_store::storage::log::FrameKind;
use quire_store::storage::now_rfc3339;

impl Session {
    /// Undoes `who`'s latest change still in effect (spec 10, "Undo is
    /// per person"); `None` when they have none. Refused with
    /// `CoreError::UndoConflict`, nothing changed, when someone else has
    /// changed what it changed since.
    pub fn undo(&self, who: Actor<'_>) -> CoreResult<Option<(Pending, Stepped)>> {
        self.step(FrameKind::Undo, &mut self.lock(), who)
    }

    /// Redoes `who`'s latest undone change; `None` when there is none.
    pub fn redo(&self, who: Actor<'_>) -> CoreResult<Option<(Pending, Stepped)>> {
        self.step(FrameKind::Redo, &mut self.lock(), who)
    }

    /// [`Session::undo`] or [`Session::redo`] if it can run at once and is
    /// light; `None` when it must run on a blocking thread.
    pub fn try_step(
        &self,
        undo: bool,
        who: Actor<'_>,
    ) -> Option<CoreResult<Option<(Pending, Stepped)>>> {
        let kind = if undo {
            FrameKind::Undo
        } else {
            FrameKind::Redo
        };
        if self.unwritable().is_some() {
            return None;
        }
        let mut state = self.try_lock()?;
        let next = match kind {
            FrameKind::Undo => state.history.next_undo_for(who).map(|e| &e.inverse),
            _ => state.history.next_redo_for(who).map(|e| &e.forward),
        };
        if next.is_some_and(limits::is_heavy) {
            return None;
        }
        Some(self.step(kind, &mut state, who))
    }

    fn step(
        &self,
        kind: FrameKind,
        state: &mut State,
        who: Actor<'_>,
    ) -> CoreResult<Option<(Pending, Stepped)>> {
        self.check_open(state)?;
        let entry = match kind {
            FrameKind::Undo => state.history.next_undo_for(who),
            _ => state.history.next_redo_for(who),
        };
        let Some(entry) = entry else {
            return Ok(None);
        };
        let (op, check) = match kind {
            FrameKind::Undo => (&entry.inverse, &entry.forward),
            _ => (&entry.forward, &entry.inverse),
        };
        // The newest entry in effect is undone as it always was; any
        // other only if what it changed still holds its values (someone
        // else's change since would be overwritten), and a redo only if
        // what it changes still holds the values its undo left.
        let newest = kind == FrameKind::Undo
            && state
                .history
                .next_undo()
                .is_some_and(|top| top.epoch == entry.epoch);
        if !newest && !self.holds(&state.scene, op, check) {
            return Err(CoreError::UndoConflict(since(&state.history, entry, who)));
        }
        let (op, epoch) = (op.clone(), entry.epoch);
        let stepped = Stepped {
            label: entry.label.clone(),
            ops: op.count(),
            by: entry.by.clone(),
        };
        let applied = apply(&mut state.scene, op, &|h| self.blobs.contains(h))?;
        let at = now_rfc3339();
        let pending = self.commit(state, kind, at, applied, None, (who, Some(epoch)))?;
        Ok(Some((pending, stepped)))
    }

    /// Whether `op` then `back` leaves `scene` as it is: what `back`
    /// sets still holds its values, so `op` overwrites nobody's change.
    fn holds(&self, scene: &Scene, op: &Op, back: &Op) -> bool {
        let blobs = |h: &BlobHash| self.blobs.contains(h);
        let mut probe = scene.clone();
        apply(&mut probe, op.clone(), &blobs).is_ok()
            && apply(&mut probe, back.clone(), &blobs).is_ok()
            && probe.project == scene.project
            && probe.pages.len() == scene.pages.len()
            && probe
                .pages
                .iter()
                .zip(&scene.pages)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
    }
}

/// Why `entry` cannot be undone (or redone) for `who`: who changed what
/// it changed since, as the newest entry of someone else on its pages
/// names them.
fn since(history: &History, entry: &Entry, who: Actor<'_>) -> String {
    let pages = entry.forward.pages_changed();
    let overlaps = |other: &Entry| match (&pages, other.forward.pages_changed()) {
        (Some(mine), Some(theirs)) => theirs.iter().any(|p| mine.contains(p)),
        _ => true,
    };
    let by = history
        .after(entry.epoch)
        .find(|other| !who.owns(other) && overlaps(other))
        .map(|other| match (&other.by, &other.agent) {
            (Some(user), Some(agent)) => format!("{user}'s agent {agent}"),
            (Some(user), None) => user.clone(),
            (None, Some(agent)) => format!("the agent {agent}"),
            (None, None) => "someone else".to_owned(),
        })
        .unwrap_or_else(|| "someone else".to_owned());
    format!(
        "`{}` cannot be taken back: {by} has changed what it changed since; nothing was changed",
        entry.label
    )
}
