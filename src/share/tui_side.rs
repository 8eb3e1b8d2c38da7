//! The shared TUI's side: the socket server, and the extension of the TUI's
//! loop that answers requests on the exact state the person sees.
//!
//! Connections are checked (peer uid, then the token in the first frame
//! within 2 s) before anything is answered. Every request goes through the
//! TUI's loop as a message; `select_session` validates the session through
//! the TUI's own backend in the background and commits (or not) back in the
//! loop, after re-checking that nothing blocks it and it was not revoked.

use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};
use uuid::Uuid;

use super::decide::{Admission, Ledger, blocked_reasons, context, precheck};
use super::endpoint::{Endpoint, remove_stale, temp_root};
use super::protocol::{
    Hello, MAX_FRAME, NAVIGATION_LIMIT, Outcome, PROTOCOL, Receipt, Reply, Request, SelectArgs,
};
use crate::tui::app::{App, Effect, ShareBar};
use crate::tui::backend::Backend;
use crate::tui::context::view_state;
use crate::tui::run::{ExtRequest, Extension};

/// How long a connection has to present its token.
const HELLO_TIMEOUT: Duration = Duration::from_secs(2);
/// Deadline of a `select_session` that names none.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(5);

/// Requests from connections (and validation results) for the TUI loop.
enum ShareMsg {
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
enum Check {
    Known(bool),
    Failed(String),
    TimedOut,
}

/// Sharing, as an extension of the TUI's loop.
pub struct Share {
    endpoint: Endpoint,
    instance: Uuid,
    ledger: Ledger,
    tx: mpsc::UnboundedSender<ExtRequest>,
    rx: mpsc::UnboundedReceiver<ExtRequest>,
    backend: Arc<dyn Backend>,
    server: Option<tokio::task::JoinHandle<()>>,
    stop: watch::Sender<bool>,
    /// Replies waiting for a request's validation, by request id.
    waiting: HashMap<Uuid, Vec<oneshot::Sender<Outcome>>>,
    revoked: bool,
}

/// Whether this platform can share a TUI.
pub fn supported() -> bool {
    cfg!(any(target_os = "linux", target_os = "macos"))
}

impl Share {
    /// Creates the endpoint under `$TMPDIR` (else `/tmp`) and starts
    /// listening (call inside a runtime).
    pub fn start(backend: Arc<dyn Backend>) -> Result<Share, String> {
        let root = temp_root();
        remove_stale(&root);
        Self::start_in(backend, &root)
    }

    /// Like [`Share::start`], with the temporary root given.
    #[cfg(unix)]
    pub fn start_in(backend: Arc<dyn Backend>, root: &std::path::Path) -> Result<Share, String> {
        if !supported() {
            return Err(unsupported());
        }
        let endpoint = Endpoint::create(root)?;
        let listener = tokio::net::UnixListener::bind(&endpoint.socket)
            .map_err(|e| format!("cannot listen on {}: {e}", endpoint.socket.display()))?;
        let uid = rustix::process::getuid().as_raw();
        let (tx, rx) = mpsc::unbounded_channel();
        let (stop, stopped) = watch::channel(false);
        let token = endpoint.content.token.clone();
        let instance = endpoint.content.instance;
        let server = tokio::spawn(serve(listener, uid, token, instance, tx.clone(), stopped));
        Ok(Share {
            endpoint,
            instance,
            ledger: Ledger::default(),
            tx,
            rx,
            backend,
            server: Some(server),
            stop,
            waiting: HashMap::new(),
            revoked: false,
        })
    }

    #[cfg(not(unix))]
    pub fn start_in(_backend: Arc<dyn Backend>, _root: &std::path::Path) -> Result<Share, String> {
        Err(unsupported())
    }

    pub fn endpoint_file(&self) -> PathBuf {
        self.endpoint.file.clone()
    }

    /// Ends sharing: fences pending navigations, closes the listener and
    /// every connection, deletes the endpoint.
    fn revoke(&mut self, app: &mut App) {
        if self.revoked {
            return;
        }
        self.revoked = true;
        let _ = self.stop.send(true);
        if let Some(server) = self.server.take() {
            server.abort();
        }
        for (_, replies) in self.waiting.drain() {
            for reply in replies {
                let _ = reply.send(Outcome::rejected(
                    "revoked",
                    "sharing was revoked; the navigation did not happen",
                    None,
                ));
            }
        }
        self.endpoint.remove();
        app.share = None;
        app.say("sharing revoked: the endpoint is gone");
    }

    fn ctx(&self, app: &App, now: Instant) -> super::protocol::ViewContext {
        context(&view_state(app), self.instance, self.ledger.used(), now)
    }

    fn select(
        &mut self,
        app: &mut App,
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
                tokio::spawn(async move {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let check = match tokio::time::timeout(left, backend.sessions()).await {
                        Ok(Ok(sessions)) => {
                            Check::Known(sessions.iter().any(|s| s.id == args.session_id))
                        }
                        Ok(Err(e)) => Check::Failed(e.message),
                        Err(_) => Check::TimedOut,
                    };
                    let msg: ExtRequest = Box::new(ShareMsg::Validated {
                        args,
                        deadline,
                        check,
                    });
                    let _ = tx.send(msg);
                });
            }
        }
    }

    fn validated(
        &mut self,
        app: &mut App,
        args: SelectArgs,
        deadline: Instant,
        check: Check,
        now: Instant,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        if self.revoked {
            return fx;
        }
        let exceeded = || {
            Outcome::rejected(
                "deadline_exceeded",
                "the deadline passed during validation; the navigation did not happen",
                None,
            )
        };
        let mut outcome = match check {
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
                    crate::tui::update::show_session(app, args.session_id, &mut fx);
                    app.revision += 1;
                    let context = self.ctx(app, now);
                    Outcome {
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
                    }
                } else {
                    Outcome::rejected(
                        "navigation_blocked",
                        "the person started using the TUI during validation; the navigation did not happen",
                        None,
                    )
                }
            }
        };
        outcome.context = Some(self.ctx(app, now));
        self.ledger.finish(&args, &outcome);
        for reply in self.waiting.remove(&args.request_id).unwrap_or_default() {
            let _ = reply.send(outcome.clone());
        }
        fx
    }
}

fn unsupported() -> String {
    format!(
        "TUI sharing (--tui-mcp) is not supported on {}: only on Linux and macOS",
        std::env::consts::OS
    )
}

impl Extension for Share {
    fn after_update(&mut self, app: &mut App) {
        if self.revoked {
            return;
        }
        app.share = Some(ShareBar {
            endpoint: self.endpoint.file.display().to_string(),
            used: self.ledger.used(),
            limit: NAVIGATION_LIMIT,
        });
    }

    fn effect(&mut self, app: &mut App, effect: &Effect) -> bool {
        if *effect == Effect::Revoke {
            self.revoke(app);
            return true;
        }
        false
    }

    fn requests(&mut self) -> &mut mpsc::UnboundedReceiver<ExtRequest> {
        &mut self.rx
    }

    fn handle(&mut self, app: &mut App, request: ExtRequest, now: Instant) -> Vec<Effect> {
        let Ok(msg) = (request as Box<dyn Any>).downcast::<ShareMsg>() else {
            return Vec::new();
        };
        match *msg {
            ShareMsg::Context { reply } => {
                let _ = reply.send(Outcome::context(self.ctx(app, now)));
                Vec::new()
            }
            ShareMsg::Select {
                args,
                deadline,
                reply,
            } => {
                if self.revoked {
                    let _ = reply.send(Outcome::rejected("revoked", "sharing was revoked", None));
                } else {
                    self.select(app, args, deadline, reply, now);
                }
                Vec::new()
            }
            ShareMsg::Validated {
                args,
                deadline,
                check,
            } => self.validated(app, args, deadline, check, now),
        }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(server) = self.server.take() {
            server.abort();
        }
        self.endpoint.remove();
    }
}

/// Accepts connections until stopped.
#[cfg(unix)]
async fn serve(
    listener: tokio::net::UnixListener,
    uid: u32,
    token: String,
    instance: Uuid,
    tx: mpsc::UnboundedSender<ExtRequest>,
    stop: watch::Receiver<bool>,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
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
        ));
    }
}

/// Only the TUI's own user may connect.
pub fn peer_allowed(peer_uid: u32, own_uid: u32) -> bool {
    peer_uid == own_uid
}

/// One frame: a line, or a line that was too long (its rest discarded).
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Line(Vec<u8>),
    TooLong,
}

/// Reads one newline-terminated frame of at most `MAX_FRAME` bytes without
/// holding more than that in memory. `None` at end of stream.
pub async fn read_frame<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<Frame>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() && !too_long {
                None
            } else if too_long {
                Some(Frame::TooLong)
            } else {
                Some(Frame::Line(line))
            });
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(i) => {
                if !too_long && line.len() + i <= MAX_FRAME {
                    line.extend_from_slice(&buf[..i]);
                } else {
                    too_long = true;
                }
                reader.consume(i + 1);
                return Ok(Some(if too_long {
                    Frame::TooLong
                } else {
                    Frame::Line(line)
                }));
            }
            None => {
                let n = buf.len();
                if !too_long && line.len() + n <= MAX_FRAME {
                    line.extend_from_slice(buf);
                } else {
                    too_long = true;
                    line.clear();
                }
                reader.consume(n);
            }
        }
    }
}

#[cfg(unix)]
async fn connection(
    stream: tokio::net::UnixStream,
    token: String,
    instance: Uuid,
    tx: mpsc::UnboundedSender<ExtRequest>,
    mut stop: watch::Receiver<bool>,
) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    // The first frame must be a valid hello with the token, in time;
    // otherwise close without answering anything.
    let first = tokio::time::timeout(HELLO_TIMEOUT, read_frame(&mut reader)).await;
    let Ok(Ok(Some(Frame::Line(line)))) = first else {
        return;
    };
    let Ok(request) = serde_json::from_slice::<Request>(&line) else {
        return;
    };
    if request.method != "hello" {
        return;
    }
    let Ok(hello) = serde_json::from_value::<Hello>(request.params) else {
        return;
    };
    if !constant_time_eq::constant_time_eq(hello.token.as_bytes(), token.as_bytes()) {
        return;
    }
    if hello.protocol != PROTOCOL {
        let reply = Reply::error(
            request.id,
            "protocol_mismatch",
            format!("this TUI speaks protocol {PROTOCOL}"),
        );
        let _ = write_reply(&mut write, &reply).await;
        return;
    }
    let hello_reply = Reply::ok(
        request.id,
        serde_json::json!({ "protocol": PROTOCOL, "instance": instance }),
    );
    if write_reply(&mut write, &hello_reply).await.is_err() {
        return;
    }
    loop {
        let frame = tokio::select! {
            frame = read_frame(&mut reader) => frame,
            _ = stop.wait_for(|s| *s) => return,
        };
        let reply = match frame {
            Ok(Some(Frame::Line(line))) => answer(&line, &tx, &mut stop).await,
            Ok(Some(Frame::TooLong)) => Some(Reply::error(
                0,
                "frame_too_large",
                format!("frames are limited to {MAX_FRAME} bytes"),
            )),
            Ok(None) | Err(_) => return,
        };
        let Some(reply) = reply else { return };
        if write_reply(&mut write, &reply).await.is_err() {
            return;
        }
    }
}

async fn write_reply<W: AsyncWriteExt + Unpin>(
    write: &mut W,
    reply: &Reply,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(reply).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write.write_all(&bytes).await?;
    write.flush().await
}

/// Answers one frame (after hello). `None` when the TUI is gone.
async fn answer(
    line: &[u8],
    tx: &mpsc::UnboundedSender<ExtRequest>,
    stop: &mut watch::Receiver<bool>,
) -> Option<Reply> {
    let request: Request = match serde_json::from_slice(line) {
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
        "get_view_context" => ShareMsg::Context { reply: reply_tx },
        "select_session" => {
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
                Instant::now() + deadline_ms.map_or(DEFAULT_DEADLINE, Duration::from_millis);
            ShareMsg::Select {
                args,
                deadline,
                reply: reply_tx,
            }
        }
        "hello" => return Some(Reply::error(id, "bad_request", "already greeted")),
        other => {
            return Some(Reply::error(
                id,
                "unknown_method",
                format!("unknown method `{other}`"),
            ));
        }
    };
    let boxed: ExtRequest = Box::new(msg);
    if tx.send(boxed).is_err() {
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

    #[tokio::test]
    async fn frames_are_capped_without_buffering_the_excess() {
        let mut data = b"{\"a\":1}\n".to_vec();
        data.extend(vec![b'x'; MAX_FRAME + 10]);
        data.push(b'\n');
        data.extend(b"{\"b\":2}");
        let mut reader = BufReader::with_capacity(1024, &data[..]);
        assert_eq!(
            read_frame(&mut reader).await.unwrap(),
            Some(Frame::Line(b"{\"a\":1}".to_vec()))
        );
        assert_eq!(read_frame(&mut reader).await.unwrap(), Some(Frame::TooLong));
        assert_eq!(
            read_frame(&mut reader).await.unwrap(),
            Some(Frame::Line(b"{\"b\":2}".to_vec()))
        );
        assert_eq!(read_frame(&mut reader).await.unwrap(), None);
    }
}
