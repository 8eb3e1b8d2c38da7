//! Sharing this TUI with an MCP client (`--tui-mcp`): the socket server,
//! and the part of the TUI's loop that answers requests on the exact state
//! the person sees.
//!
//! - `mod.rs` — [`Share`]: the listener, the connections, the requests;
//! - `decide.rs` — the view context, blocked reasons, the request ledger
//!   (pure).
//!
//! Connections are checked (peer uid, then the token in the first frame
//! within 2 s) before anything is answered. Every request reaches the loop
//! as a [`ShareRequest`]; [`Share::handle`] reads the state and returns the
//! messages `update` applies ([`ShareEvent`]), so `update` stays the only
//! code that changes it. `select_session` validates the session through
//! the TUI's own backend in the background and commits (or not) back in the
//! loop, after re-checking that nothing blocks it and it was not revoked.

pub mod decide;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};
use uuid::Uuid;

use self::decide::{Admission, Ledger, blocked_reasons, context, precheck};
use super::app::{App, Msg, ShareBar, ShareEvent};
use super::backend::Backend;
use super::clock::Clock;
use super::context::view_state;
use crate::config::secret::Secret;
use crate::share::ShareError;
use crate::share::conn::{self, Frame};
use crate::share::endpoint::{Endpoint, remove_stale, temp_root};
use crate::share::protocol::{
    GET_VIEW_CONTEXT, HELLO, Hello, MAX_FRAME, NAVIGATION_LIMIT, Outcome, PROTOCOL, Receipt, Reply,
    Request, SELECT_SESSION, SelectArgs, ViewContext,
};

/// How long a connection has to present its token.
const HELLO_TIMEOUT: Duration = Duration::from_secs(2);
/// Deadline of a `select_session` that names none.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(5);

/// Requests from connections (and validation results) for the TUI loop.
pub enum ShareRequest {
    Context {
        reply: oneshot::Sender<Outcome>,
    },
    Select {
        args: SelectArgs,
        deadline: Instant,
        reply: oneshot::Sender<Outcome>,
    },
    Validated {
        args: SelectArgs,
        deadline: Instant,
        check: Check,
    },
}

/// Step 6: what the backend said about the target session.
pub enum Check {
    Known(bool),
    Failed(String),
    TimedOut,
}

/// Sharing, as a part of the TUI's loop.
pub struct Share {
    endpoint: Endpoint,
    instance: Uuid,
    ledger: Ledger,
    /// A navigation `update` is applying; answered after it.
    committing: Option<SelectArgs>,
    tx: mpsc::UnboundedSender<ShareRequest>,
    rx: mpsc::UnboundedReceiver<ShareRequest>,
    backend: Arc<dyn Backend>,
    server: Option<tokio::task::JoinHandle<()>>,
    stop: watch::Sender<bool>,
    /// Replies waiting for a request's validation, by request id.
    waiting: HashMap<Uuid, Vec<oneshot::Sender<Outcome>>>,
    revoked: bool,
    /// The loop's clock, for deadlines (shared with the connections).
    clock: Clock,
}

impl Share {
    /// Creates the endpoint under `$TMPDIR` (else `/tmp`) and starts
    /// listening (call inside a runtime).
    pub fn start(backend: Arc<dyn Backend>) -> Result<Share, ShareError> {
        let root = temp_root();
        remove_stale(&root);
        Self::start_in(backend, &root)
    }

    /// Like [`Share::start`], with the temporary root given.
    #[cfg(unix)]
    pub fn start_in(
        backend: Arc<dyn Backend>,
        root: &std::path::Path,
    ) -> Result<Share, ShareError> {
        if !crate::share::supported() {
            return Err(ShareError::unsupported());
        }
        let endpoint = Endpoint::create(root)?;
        let listener = tokio::net::UnixListener::bind(&endpoint.socket)
            .map_err(|e| ShareError::io("listen on", &endpoint.socket, e))?;
        let uid = rustix::process::getuid().as_raw();
        let (tx, rx) = mpsc::unbounded_channel();
        let (stop, stopped) = watch::channel(false);
        let token = endpoint.content.token.clone();
        let instance = endpoint.content.instance;
        let clock = Clock::default();
        let server = tokio::spawn(serve(
            listener,
            uid,
            token,
            instance,
            tx.clone(),
            stopped,
            clock.clone(),
        ));
        Ok(Share {
            endpoint,
            instance,
            ledger: Ledger::default(),
            committing: None,
            tx,
            rx,
            backend,
            server: Some(server),
            stop,
            waiting: HashMap::new(),
            revoked: false,
            clock,
        })
    }

    #[cfg(not(unix))]
    pub fn start_in(
        _backend: Arc<dyn Backend>,
        _root: &std::path::Path,
    ) -> Result<Share, ShareError> {
        Err(ShareError::unsupported())
    }

    pub fn endpoint_file(&self) -> PathBuf {
        self.endpoint.file.clone()
    }

    /// The clock deadlines are measured on; the loop adopts it, so both
    /// agree on "now".
    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// What the sharing bar shows.
    pub fn bar(&self) -> ShareBar {
        ShareBar {
            endpoint: self.endpoint.file.display().to_string(),
            used: self.ledger.used(),
            limit: NAVIGATION_LIMIT,
        }
    }

    /// The queue of requests from connections and validations.
    pub fn requests(&mut self) -> &mut mpsc::UnboundedReceiver<ShareRequest> {
        &mut self.rx
    }

    /// Ends sharing: fences pending navigations, closes the listener and
    /// every connection, deletes the endpoint. The message tells `update`.
    pub fn revoke(&mut self) -> Option<Msg> {
        if self.revoked {
            return None;
        }
        self.revoked = true;
        self.shut_down();
        for (_, replies) in self.waiting.drain() {
            for reply in replies {
                let _ = reply.send(Outcome::rejected(
                    "revoked",
                    "sharing was revoked; the navigation did not happen",
                    None,
                ));
            }
        }
        Some(Msg::Share(ShareEvent::Revoked))
    }

    /// Stops the listener and every connection, deletes the endpoint.
    fn shut_down(&mut self) {
        let _ = self.stop.send(true);
        if let Some(server) = self.server.take() {
            server.abort();
        }
        self.endpoint.remove();
    }

    fn ctx(&self, app: &App, now: Instant) -> ViewContext {
        context(&view_state(app), self.instance, self.ledger.used(), now)
    }

    fn select(
        &mut self,
        app: &App,
        args: SelectArgs,
        deadline: Instant,
        reply: oneshot::Sender<Outcome>,
        now: Instant,
    ) {
        match self.ledger.admit(&args) {
            Admission::Repeat(outcome) => {
                let _ = reply.send(*outcome);
            }
            Admission::Wait => self.waiting.entry(args.request_id).or_default().push(reply),
            Admission::Conflict => {
                let _ = reply.send(Outcome::rejected(
                    "request_id_conflict",
                    "this requestId was used with other arguments; use a new requestId for a new attempt",
                    Some(self.ctx(app, now)),
                ));
            }
            Admission::LimitReached => {
                let _ = reply.send(Outcome::rejected(
                    "limit_reached",
                    format!("this TUI accepted its {NAVIGATION_LIMIT} navigations; only a restart with --tui-mcp resets that"),
                    Some(self.ctx(app, now)),
                ));
            }
            Admission::New => {
                let view = view_state(app);
                let target_busy = app.is_busy(args.session_id);
                if let Err((code, message)) =
                    precheck(&args, &view, self.instance, target_busy, now)
                {
                    let outcome = Outcome::rejected(code, message, Some(self.ctx(app, now)));
                    self.ledger.finish(&args, &outcome);
                    let _ = reply.send(outcome);
                    return;
                }
                self.waiting.entry(args.request_id).or_default().push(reply);
                let backend = self.backend.clone();
                let tx = self.tx.clone();
                let clock = self.clock.clone();
                tokio::spawn(async move {
                    let left = deadline.saturating_duration_since(clock.now());
                    let check = match tokio::time::timeout(left, backend.sessions()).await {
                        Ok(Ok(sessions)) => {
                            Check::Known(sessions.iter().any(|s| s.id == args.session_id))
                        }
                        Ok(Err(e)) => Check::Failed(e.message),
                        Err(_) => Check::TimedOut,
                    };
                    let _ = tx.send(ShareRequest::Validated {
                        args,
                        deadline,
                        check,
                    });
                });
            }
        }
    }

    /// Step 7, back in the loop: commits the navigation (a message for
    /// `update`, answered in [`Share::after_update`]) or rejects it.
    fn validated(
        &mut self,
        app: &App,
        args: SelectArgs,
        deadline: Instant,
        check: Check,
        now: Instant,
    ) -> Option<Msg> {
        if self.revoked {
            return None;
        }
        let exceeded = || {
            Outcome::rejected(
                "deadline_exceeded",
                "the deadline passed during validation; the navigation did not happen",
                None,
            )
        };
        let outcome = match check {
            _ if now > deadline => exceeded(),
            Check::TimedOut => exceeded(),
            Check::Failed(e) => Outcome::rejected(
                "backend_error",
                format!("the session could not be checked ({e}); the navigation did not happen"),
                None,
            ),
            Check::Known(false) => Outcome::rejected(
                "unknown_session",
                format!("the workspace has no open session {}", args.session_id),
                None,
            ),
            Check::Known(true) => {
                // The person may have started using the TUI meanwhile.
                let (reasons, _) =
                    blocked_reasons(&view_state(app), app.is_busy(args.session_id), now);
                if reasons.is_empty() {
                    let session = args.session_id;
                    self.committing = Some(args);
                    return Some(Msg::Share(ShareEvent::Navigate(session)));
                }
                Outcome::rejected(
                    "navigation_blocked",
                    "the person started using the TUI during validation; the navigation did not happen",
                    None,
                )
            }
        };
        self.answer(app, &args, outcome, now);
        None
    }

    /// Records a request's outcome, with the current context, and answers
    /// everyone waiting for it.
    fn answer(&mut self, app: &App, args: &SelectArgs, mut outcome: Outcome, now: Instant) {
        outcome.context = Some(self.ctx(app, now));
        self.ledger.finish(args, &outcome);
        for reply in self.waiting.remove(&args.request_id).unwrap_or_default() {
            let _ = reply.send(outcome.clone());
        }
    }

    /// Called after every `update`: answers the navigation it just applied
    /// with a receipt of the state it left.
    pub fn after_update(&mut self, app: &App, now: Instant) {
        let Some(args) = self.committing.take() else {
            return;
        };
        let context = self.ctx(app, now);
        let outcome = Outcome {
            ok: true,
            code: None,
            message: None,
            receipt: Some(Receipt {
                request_id: args.request_id,
                session_id: args.session_id,
                route: "session".into(),
                revision: context.revision,
                context,
            }),
            context: None,
        };
        self.answer(app, &args, outcome, now);
    }

    /// Answers one request against the current state; returns what
    /// `update` must apply.
    pub fn handle(&mut self, app: &App, request: ShareRequest, now: Instant) -> Vec<Msg> {
        let mut msgs = Vec::new();
        match request {
            ShareRequest::Context { reply } => {
                let _ = reply.send(Outcome::context(self.ctx(app, now)));
            }
            ShareRequest::Select {
                args,
                deadline,
                reply,
            } => {
                if self.revoked {
                    let _ = reply.send(Outcome::rejected("revoked", "sharing was revoked", None));
                } else {
                    self.select(app, args, deadline, reply, now);
                }
            }
            ShareRequest::Validated {
                args,
                deadline,
                check,
            } => msgs.extend(self.validated(app, args, deadline, check, now)),
        }
        let shown = app.share.as_ref().map(|bar| bar.used);
        if !self.revoked && shown != Some(self.ledger.used()) {
            msgs.push(Msg::Share(ShareEvent::Bar(self.bar())));
        }
        msgs
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The first wait after a failed `accept` (e.g. `EMFILE`); doubles up to
/// [`ACCEPT_BACKOFF_MAX`], and resets after a success.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Accepts connections until stopped.
#[cfg(unix)]
async fn serve(
    listener: tokio::net::UnixListener,
    uid: u32,
    token: Secret,
    instance: Uuid,
    tx: mpsc::UnboundedSender<ShareRequest>,
    mut stop: watch::Receiver<bool>,
    clock: Clock,
) {
    let mut backoff = ACCEPT_BACKOFF;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                backoff = ACCEPT_BACKOFF;
                stream
            }
            Err(e) => {
                // Out of descriptors or memory: retrying at once would spin.
                tracing::warn!(
                    "sharing: cannot accept a connection ({e}); retrying in {backoff:?}"
                );
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                continue;
            }
        };
        let peer_ok = stream
            .peer_cred()
            .is_ok_and(|cred| peer_allowed(cred.uid(), uid));
        if !peer_ok {
            continue;
        }
        tokio::spawn(connection(
            stream,
            token.clone(),
            instance,
            tx.clone(),
            stop.clone(),
            clock.clone(),
        ));
    }
}

/// Only the TUI's own user may connect.
pub fn peer_allowed(peer_uid: u32, own_uid: u32) -> bool {
    peer_uid == own_uid
}

#[cfg(unix)]
async fn connection(
    stream: tokio::net::UnixStream,
    token: Secret,
    instance: Uuid,
    tx: mpsc::UnboundedSender<ShareRequest>,
    mut stop: watch::Receiver<bool>,
    clock: Clock,
) {
    let (read, write) = stream.into_split();
    let (mut reader, mut writer) = conn::framed(read, write);
    // The first frame must be a valid hello with the token, in time;
    // otherwise close without answering anything.
    let first = tokio::time::timeout(HELLO_TIMEOUT, conn::next(&mut reader)).await;
    let Ok(Ok(Some(Frame::Line(line)))) = first else {
        return;
    };
    let Ok(request) = serde_json::from_str::<Request>(&line) else {
        return;
    };
    if request.method != HELLO {
        return;
    }
    let Ok(hello) = serde_json::from_value::<Hello>(request.params) else {
        return;
    };
    if !hello
        .token
        .get()
        .ok()
        .flatten()
        .is_some_and(|t| token.matches(t))
    {
        return;
    }
    if hello.protocol != PROTOCOL {
        let reply = Reply::error(
            request.id,
            "protocol_mismatch",
            format!("this TUI speaks protocol {PROTOCOL}"),
        );
        let _ = conn::send(&mut writer, &reply).await;
        return;
    }
    let hello_reply = Reply::ok(
        request.id,
        serde_json::json!({ "protocol": PROTOCOL, "instance": instance }),
    );
    if conn::send(&mut writer, &hello_reply).await.is_err() {
        return;
    }
    loop {
        let frame = tokio::select! {
            frame = conn::next(&mut reader) => frame,
            _ = stop.wait_for(|s| *s) => return,
        };
        let reply = match frame {
            Ok(Some(Frame::Line(line))) => answer(&line, &tx, &mut stop, &clock).await,
            Ok(Some(Frame::TooLong)) => Some(Reply::error(
                0,
                "frame_too_large",
                format!("frames are limited to {MAX_FRAME} bytes"),
            )),
            Ok(Some(Frame::NotText)) => Some(Reply::error(
                0,
                "bad_request",
                "not a request frame: not UTF-8",
            )),
            Ok(None) | Err(_) => return,
        };
        let Some(reply) = reply else { return };
        if conn::send(&mut writer, &reply).await.is_err() {
            return;
        }
    }
}

/// Answers one frame (after hello). `None` when the TUI is gone.
async fn answer(
    line: &str,
    tx: &mpsc::UnboundedSender<ShareRequest>,
    stop: &mut watch::Receiver<bool>,
    clock: &Clock,
) -> Option<Reply> {
    let request: Request = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => {
            return Some(Reply::error(
                0,
                "bad_request",
                format!("not a request frame: {e}"),
            ));
        }
    };
    let id = request.id;
    let (reply_tx, reply_rx) = oneshot::channel();
    let msg = match request.method.as_str() {
        GET_VIEW_CONTEXT => ShareRequest::Context { reply: reply_tx },
        SELECT_SESSION => {
            let deadline_ms = request.params.get("deadlineMs").and_then(|v| v.as_u64());
            let mut params = request.params.clone();
            if let Some(obj) = params.as_object_mut() {
                obj.remove("deadlineMs");
            }
            let args: SelectArgs = match serde_json::from_value(params) {
                Ok(a) => a,
                Err(e) => {
                    return Some(Reply::error(
                        id,
                        "bad_request",
                        format!("invalid select_session params: {e}"),
                    ));
                }
            };
            let deadline =
                clock.now() + deadline_ms.map_or(DEFAULT_DEADLINE, Duration::from_millis);
            ShareRequest::Select {
                args,
                deadline,
                reply: reply_tx,
            }
        }
        HELLO => return Some(Reply::error(id, "bad_request", "already greeted")),
        other => {
            return Some(Reply::error(
                id,
                "unknown_method",
                format!("unknown method `{other}`"),
            ));
        }
    };
    if tx.send(msg).is_err() {
        return None;
    }
    tokio::select! {
        outcome = reply_rx => match outcome {
            Ok(outcome) => Some(Reply::ok(id, outcome)),
            Err(_) => None,
        },
        _ = stop.wait_for(|s| *s) => Some(Reply::ok(id, Outcome::rejected("revoked", "sharing was revoked", None))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_uid_may_connect() {
        assert!(peer_allowed(1000, 1000));
        assert!(!peer_allowed(0, 1000));
        assert!(!peer_allowed(1001, 1000));
    }
}
