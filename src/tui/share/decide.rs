//! The decisions of TUI sharing, as pure functions of what the view shows:
//! the view context, the reasons navigation is blocked, and the request
//! ledger that makes repeats answer with their original outcome.

use std::collections::HashMap;
use std::time::Instant;

use uuid::Uuid;

use crate::share::protocol::{BlockedReason, NAVIGATION_LIMIT, Outcome, SelectArgs, ViewContext};
use crate::tui::context::{ViewState, recent_input_left};
use quire_model::ids::SessionId;

/// Why navigation is blocked now; `target` also counts when it is busy.
pub fn blocked_reasons(
    view: &ViewState,
    target_busy: bool,
    now: Instant,
) -> (Vec<BlockedReason>, Option<u64>) {
    let mut reasons = Vec::new();
    if view.draft {
        reasons.push(BlockedReason::Draft);
    }
    if view.attachments {
        reasons.push(BlockedReason::Attachment);
    }
    if view.modal.is_some() && !view.approval_pending {
        reasons.push(BlockedReason::Modal);
    }
    if view.approval_pending {
        reasons.push(BlockedReason::ApprovalPending);
    }
    if view.busy || target_busy {
        reasons.push(BlockedReason::SessionBusy);
    }
    if !view.connected {
        reasons.push(BlockedReason::BackendDisconnected);
    }
    if view.start_overlay {
        reasons.push(BlockedReason::StartOverlay);
    }
    if view.exit_overlay {
        reasons.push(BlockedReason::ExitOverlay);
    }
    let retry = recent_input_left(view, now);
    if retry.is_some() {
        reasons.push(BlockedReason::RecentInput);
    }
    (reasons, retry.map(|d| d.as_millis().max(1) as u64))
}

/// The context an agent reads.
pub fn context(view: &ViewState, instance: Uuid, used: usize, now: Instant) -> ViewContext {
    let (reasons, retry_after_ms) = blocked_reasons(view, false, now);
    ViewContext {
        instance,
        generation: view.generation,
        revision: view.revision,
        route: view.route.as_str().to_owned(),
        session_id: view.session,
        ready: view.ready,
        navigation_blocked: !reasons.is_empty(),
        blocked_reasons: reasons,
        retry_after_ms,
        navigations_used: used,
        navigations_limit: NAVIGATION_LIMIT,
    }
}

/// One recorded navigation request.
#[derive(Debug, Clone)]
pub enum Entry {
    /// Validation is in flight.
    Pending(SelectArgs),
    Done(SelectArgs, Box<Outcome>),
}

/// Every navigation request of this process, never evicted (at most
/// `NAVIGATION_LIMIT` entries).
#[derive(Debug, Default)]
pub struct Ledger {
    entries: HashMap<Uuid, Entry>,
}

/// What to do with an incoming `select_session`.
#[derive(Debug, Clone, PartialEq)]
pub enum Admission {
    /// A repeat of a finished request: its original outcome.
    Repeat(Box<Outcome>),
    /// A repeat of a request still being validated: wait for its outcome.
    Wait,
    /// Same id, other arguments.
    Conflict,
    /// A new request over the limit.
    LimitReached,
    /// A new request, now counted: evaluate it.
    New,
}

impl Ledger {
    pub fn used(&self) -> usize {
        self.entries.len()
    }

    /// Checks 1 and 2: the limit and the ledger. A `New` request is
    /// recorded as pending and counts against the limit.
    pub fn admit(&mut self, args: &SelectArgs) -> Admission {
        match self.entries.get(&args.request_id) {
            Some(Entry::Done(original, outcome)) if original == args => {
                Admission::Repeat(outcome.clone())
            }
            Some(Entry::Pending(original)) if original == args => Admission::Wait,
            Some(_) => Admission::Conflict,
            None if self.entries.len() >= NAVIGATION_LIMIT => Admission::LimitReached,
            None => {
                self.entries
                    .insert(args.request_id, Entry::Pending(args.clone()));
                Admission::New
            }
        }
    }

    /// Records the outcome of a counted request.
    pub fn finish(&mut self, args: &SelectArgs, outcome: &Outcome) {
        self.entries.insert(
            args.request_id,
            Entry::Done(args.clone(), Box::new(outcome.clone())),
        );
    }

    pub fn outcome(&self, request: Uuid) -> Option<&Outcome> {
        match self.entries.get(&request) {
            Some(Entry::Done(_, o)) => Some(o.as_ref()),
            _ => None,
        }
    }
}

/// Checks 3 to 5 on the current view: identity, revision, blocked.
pub fn precheck(
    args: &SelectArgs,
    view: &ViewState,
    instance: Uuid,
    target_busy: bool,
    now: Instant,
) -> Result<(), (&'static str, String)> {
    if args.instance != instance || args.generation != view.generation {
        return Err((
            "stale_identity",
            format!(
                "instance/generation {}/{} is not current ({instance}/{}); call get_view_context",
                args.instance, args.generation, view.generation
            ),
        ));
    }
    if args.revision != view.revision {
        return Err((
            "stale_revision",
            format!(
                "revision {} is not current ({}); the view changed, call get_view_context",
                args.revision, view.revision
            ),
        ));
    }
    let (reasons, _) = blocked_reasons(view, target_busy, now);
    if !reasons.is_empty() {
        let names: Vec<String> = reasons
            .iter()
            .map(|r| {
                serde_json::to_value(r)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .collect();
        return Err((
            "navigation_blocked",
            format!(
                "the person is using the TUI ({}); do not navigate now",
                names.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The session ids an agent may move to must exist in the workspace.
pub fn known(sessions: &[SessionId], id: SessionId) -> bool {
    sessions.contains(&id)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::tui::context::{RECENT_INPUT, RouteKind};

    fn view() -> ViewState {
        ViewState {
            route: RouteKind::Home,
            session: None,
            draft: false,
            attachments: false,
            modal: None,
            approval_pending: false,
            start_overlay: false,
            exit_overlay: false,
            busy: false,
            connected: true,
            ready: true,
            last_input: None,
            revision: 7,
            generation: 1,
        }
    }

    fn args(request: u128) -> SelectArgs {
        SelectArgs {
            instance: Uuid::from_u128(1),
            generation: 1,
            revision: 7,
            session_id: SessionId(Uuid::from_u128(9)),
            request_id: Uuid::from_u128(request),
        }
    }

    #[test]
    fn each_blocked_reason_is_reported() {
        let now = Instant::now();
        type Setter = Box<dyn Fn(&mut ViewState)>;
        let cases: Vec<(Setter, BlockedReason)> = vec![
            (Box::new(|v| v.draft = true), BlockedReason::Draft),
            (
                Box::new(|v| v.attachments = true),
                BlockedReason::Attachment,
            ),
            (Box::new(|v| v.modal = Some("help")), BlockedReason::Modal),
            (
                Box::new(|v| {
                    v.modal = Some("approval");
                    v.approval_pending = true;
                }),
                BlockedReason::ApprovalPending,
            ),
            (Box::new(|v| v.busy = true), BlockedReason::SessionBusy),
            (
                Box::new(|v| v.connected = false),
                BlockedReason::BackendDisconnected,
            ),
            (
                Box::new(|v| v.start_overlay = true),
                BlockedReason::StartOverlay,
            ),
            (
                Box::new(|v| v.exit_overlay = true),
                BlockedReason::ExitOverlay,
            ),
        ];
        for (set, reason) in cases {
            let mut v = view();
            set(&mut v);
            assert_eq!(blocked_reasons(&v, false, now).0, vec![reason]);
            let err = precheck(&args(1), &v, Uuid::from_u128(1), false, now).unwrap_err();
            assert_eq!(err.0, "navigation_blocked");
        }
        assert_eq!(
            blocked_reasons(&view(), true, now).0,
            vec![BlockedReason::SessionBusy]
        );
    }

    #[test]
    fn recent_input_blocks_for_exactly_the_window() {
        let t = Instant::now();
        let mut v = view();
        v.last_input = Some(t);
        let (r, retry) = blocked_reasons(&v, false, t + Duration::from_millis(1000));
        assert_eq!(r, vec![BlockedReason::RecentInput]);
        assert_eq!(retry, Some(500));
        let (r, retry) = blocked_reasons(&v, false, t + RECENT_INPUT - Duration::from_millis(1));
        assert_eq!((r.len(), retry), (1, Some(1)));
        assert_eq!(blocked_reasons(&v, false, t + RECENT_INPUT), (vec![], None));
    }

    #[test]
    fn identity_and_revision_are_checked_in_order() {
        let now = Instant::now();
        let me = Uuid::from_u128(1);
        let mut stale = args(1);
        stale.instance = Uuid::from_u128(2);
        stale.revision = 3;
        assert_eq!(
            precheck(&stale, &view(), me, false, now).unwrap_err().0,
            "stale_identity"
        );
        let mut old_gen = args(1);
        old_gen.generation = 0;
        assert_eq!(
            precheck(&old_gen, &view(), me, false, now).unwrap_err().0,
            "stale_identity"
        );
        let mut old_rev = args(1);
        old_rev.revision = 6;
        assert_eq!(
            precheck(&old_rev, &view(), me, false, now).unwrap_err().0,
            "stale_revision"
        );
        assert!(precheck(&args(1), &view(), me, false, now).is_ok());
    }

    #[test]
    fn the_ledger_repeats_conflicts_and_stops_at_the_limit() {
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&args(1)), Admission::New);
        assert_eq!(ledger.admit(&args(1)), Admission::Wait);
        let outcome = Outcome::rejected("stale_revision", "x", None);
        ledger.finish(&args(1), &outcome);
        assert_eq!(ledger.admit(&args(1)), Admission::Repeat(Box::new(outcome)));
        let mut changed = args(1);
        changed.revision = 8;
        assert_eq!(ledger.admit(&changed), Admission::Conflict);
        for i in 2..=NAVIGATION_LIMIT as u128 {
            assert_eq!(ledger.admit(&args(i)), Admission::New);
        }
        assert_eq!(ledger.used(), NAVIGATION_LIMIT);
        assert_eq!(ledger.admit(&args(1000)), Admission::LimitReached);
        assert!(
            matches!(ledger.admit(&args(1)), Admission::Repeat(_)),
            "repeats still work"
        );
    }
}
