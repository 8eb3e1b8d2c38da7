//! `quire mcp tui --endpoint PATH`: a stdio MCP server with exactly two
//! tools, `get_view_context` and `select_session`, bridged to one shared
//! TUI over its Unix socket.
//!
//! The adapter checks the endpoint file and directory before connecting,
//! sends each navigation with a deadline, never retries on its own, and
//! says plainly when an outcome is unknown (`timeout_unknown`,
//! `outcome_unknown`) so the agent reconciles with `get_view_context`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};

use crate::mcp::schema;
use crate::share::ShareError;
use crate::share::endpoint::EndpointFile;
use crate::share::protocol::{
    GET_VIEW_CONTEXT, HELLO, Hello, Outcome, PROTOCOL, Reply, Request, SELECT_SESSION, SelectArgs,
};

/// The two tools are named like the protocol methods they call.
const CONTEXT_TOOL: &str = GET_VIEW_CONTEXT;
const SELECT_TOOL: &str = SELECT_SESSION;

/// Extra time after the deadline before the adapter gives up waiting.
const GRACE: Duration = Duration::from_secs(1);

const CONTEXT_DESCRIPTION: &str = "Read the shared TUI's view state: which route it shows (home or a session), \
whether navigation is blocked right now and why, and the instance/generation/revision to pass to \
select_session. Never returns text, titles, paths or credentials.";

const SELECT_DESCRIPTION: &str = "Move the person's TUI to another session. Pass instance, generation and revision from \
a recent get_view_context, the target sessionId, and a new requestId (a UUID) for each attempt. \
Rejections are definitive (the TUI did not move) and carry the current context: stale_revision or \
stale_identity mean read the context again; navigation_blocked means the person is busy (wait for \
retryAfterMs, or leave them alone). timeout_unknown and outcome_unknown mean the result did not \
arrive: the navigation may or may not have happened, so call get_view_context to see, or repeat \
the identical request (same requestId): the TUI answers a repeat with the original outcome. The \
adapter never retries by itself.";

/// The socket connection and the replies waiting on it.
#[cfg(unix)]
struct Conn {
    write: crate::share::conn::Writer<tokio::net::unix::OwnedWriteHalf>,
    pending: Arc<std::sync::Mutex<HashMap<u64, oneshot::Sender<Reply>>>>,
    next_id: u64,
}

#[cfg(not(unix))]
struct Conn;

#[derive(Clone)]
pub struct Adapter {
    endpoint: Arc<EndpointFile>,
    conn: Arc<Mutex<Option<Conn>>>,
    deadline: Duration,
    tools: Arc<Vec<Tool>>,
}

/// Why a call could not get an answer.
enum Failure {
    /// Nothing was sent: definitive, nothing happened.
    NotSent(ShareError),
    /// Sent, but the connection failed before the reply.
    Lost,
    /// Sent, no reply by the deadline plus grace.
    Timeout,
    /// The TUI answered with a protocol error.
    Protocol(String, String),
}

impl Adapter {
    /// Checks the endpoint file, connects and says hello.
    #[cfg(unix)]
    pub async fn connect(
        path: &std::path::Path,
        deadline: Duration,
    ) -> Result<Adapter, ShareError> {
        let uid = rustix::process::getuid().as_raw();
        let endpoint = crate::share::endpoint::read_checked(path, uid)?;
        let adapter = Adapter {
            endpoint: Arc::new(endpoint),
            conn: Arc::new(Mutex::new(None)),
            deadline,
            tools: Arc::new(tools()),
        };
        adapter.ensure_connected().await?;
        Ok(adapter)
    }

    #[cfg(unix)]
    async fn ensure_connected(&self) -> Result<(), ShareError> {
        use crate::share::conn::{self, Frame};
        let mut guard = self.conn.lock().await;
        if guard.is_some() {
            return Ok(());
        }
        let stream = tokio::net::UnixStream::connect(&self.endpoint.socket)
            .await
            .map_err(|source| ShareError::Unreachable {
                socket: self.endpoint.socket.clone(),
                source,
            })?;
        let (read, write) = stream.into_split();
        let (mut reader, mut write) = conn::framed(read, write);
        let hello = Request {
            id: 0,
            method: HELLO.into(),
            params: serde_json::to_value(Hello {
                token: self.endpoint.token.clone(),
                client: format!("quire mcp tui {}", env!("CARGO_PKG_VERSION")),
                protocol: PROTOCOL,
            })
            .unwrap_or(Value::Null),
        };
        conn::send(&mut write, &hello)
            .await
            .map_err(ShareError::Connection)?;
        let first = tokio::time::timeout(Duration::from_secs(5), conn::next(&mut reader))
            .await
            .map_err(|_| ShareError::GreetingTimeout)?
            .map_err(ShareError::Connection)?;
        let line = match first {
            None => return Err(ShareError::Refused),
            Some(Frame::Line(line)) => line,
            Some(Frame::TooLong | Frame::NotText) => {
                return Err(ShareError::Nonsense("an unreadable frame".into()));
            }
        };
        let reply: Reply =
            serde_json::from_str(&line).map_err(|e| ShareError::Nonsense(e.to_string()))?;
        if let Some(error) = reply.error {
            return Err(ShareError::GreetingRefused(error.message));
        }
        let pending: Arc<std::sync::Mutex<HashMap<u64, oneshot::Sender<Reply>>>> = Arc::default();
        let readers = pending.clone();
        let conn_slot = self.conn.clone();
        tokio::spawn(async move {
            while let Ok(Some(frame)) = conn::next(&mut reader).await {
                let Frame::Line(line) = frame else { continue };
                if let Ok(reply) = serde_json::from_str::<Reply>(&line) {
                    let waiter = readers.lock().ok().and_then(|mut p| p.remove(&reply.id));
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(reply);
                    }
                }
            }
            // Connection gone. The slot empties first, so a caller that
            // learns of the loss (its sender drops) and calls again
            // reconnects instead of writing into the dead connection.
            *conn_slot.lock().await = None;
            if let Ok(mut p) = readers.lock() {
                p.clear();
            }
        });
        *guard = Some(Conn {
            write,
            pending,
            next_id: 1,
        });
        Ok(())
    }

    #[cfg(not(unix))]
    async fn ensure_connected(&self) -> Result<(), ShareError> {
        Err(ShareError::unsupported())
    }

    #[cfg(not(unix))]
    async fn send(
        &self,
        _method: &str,
        _params: Value,
    ) -> Result<oneshot::Receiver<Reply>, ShareError> {
        Err(ShareError::unsupported())
    }

    /// Writes one request; the receiver gets its reply.
    #[cfg(unix)]
    async fn send(
        &self,
        method: &str,
        params: Value,
    ) -> Result<oneshot::Receiver<Reply>, ShareError> {
        let (tx, rx) = oneshot::channel();
        let mut guard = self.conn.lock().await;
        let Some(conn) = guard.as_mut() else {
            return Err(ShareError::Closed);
        };
        let id = conn.next_id;
        conn.next_id += 1;
        if let Ok(mut p) = conn.pending.lock() {
            p.insert(id, tx);
        }
        let frame = Request {
            id,
            method: method.to_owned(),
            params,
        };
        if let Err(e) = crate::share::conn::send(&mut conn.write, &frame).await {
            *guard = None;
            return Err(ShareError::Connection(e));
        }
        Ok(rx)
    }

    /// Sends one request and waits for its reply until `wait`.
    async fn call(&self, method: &str, params: Value, wait: Duration) -> Result<Value, Failure> {
        self.ensure_connected().await.map_err(Failure::NotSent)?;
        let rx = self.send(method, params).await.map_err(Failure::NotSent)?;
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(reply)) => match (reply.result, reply.error) {
                (Some(result), _) => Ok(result),
                (None, Some(e)) => Err(Failure::Protocol(e.code, e.message)),
                (None, None) => Err(Failure::Protocol("bad_reply".into(), "empty reply".into())),
            },
            Ok(Err(_)) => Err(Failure::Lost),
            Err(_) => Err(Failure::Timeout),
        }
    }

    async fn get_view_context(&self, args: ContextArgs) -> Outcome {
        let wait = args.timeout_ms.map_or(self.deadline, |ms| {
            self.deadline.min(Duration::from_millis(ms))
        });
        match self.call(GET_VIEW_CONTEXT, json!({}), wait + GRACE).await {
            Ok(value) => decode(value),
            Err(f) => failure(f, false),
        }
    }

    async fn select_session(&self, args: SelectArgs) -> Outcome {
        let mut params = serde_json::to_value(&args).unwrap_or(Value::Null);
        if let Some(obj) = params.as_object_mut() {
            obj.insert("deadlineMs".into(), json!(self.deadline.as_millis() as u64));
        }
        match self
            .call(SELECT_SESSION, params, self.deadline + GRACE)
            .await
        {
            Ok(value) => decode(value),
            Err(f) => failure(f, true),
        }
    }
}

fn decode(value: Value) -> Outcome {
    serde_json::from_value(value).unwrap_or_else(|e| {
        Outcome::rejected(
            "bad_reply",
            format!("the TUI answered something unexpected: {e}"),
            None,
        )
    })
}

fn failure(f: Failure, navigation: bool) -> Outcome {
    match f {
        Failure::NotSent(why) => Outcome::rejected(
            "not_connected",
            format!("{why}; nothing was sent, nothing happened"),
            None,
        ),
        Failure::Lost if navigation => Outcome::rejected(
            "outcome_unknown",
            "the connection to the TUI failed after the request was sent: the navigation may have happened; call get_view_context or repeat the identical request",
            None,
        ),
        Failure::Timeout if navigation => Outcome::rejected(
            "timeout_unknown",
            "no answer by the deadline: the navigation may have happened; call get_view_context or repeat the identical request",
            None,
        ),
        Failure::Lost => {
            Outcome::rejected("connection_lost", "the connection to the TUI failed", None)
        }
        Failure::Timeout => Outcome::rejected("timeout", "the TUI did not answer in time", None),
        Failure::Protocol(code, message) => Outcome::rejected(&code, message, None),
    }
}

/// `get_view_context`'s one optional argument (a tool with none would
/// need `additionalProperties: false`, which Gemini's MCP converter
/// cannot read; see [`crate::mcp::tools::ListArgs`]).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ContextArgs {
    /// How long to wait for the TUI, in ms; at most (and by default) the
    /// adapter's deadline.
    #[serde(default)]
    #[schemars(range(min = 1))]
    timeout_ms: Option<u64>,
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            CONTEXT_TOOL,
            CONTEXT_DESCRIPTION,
            schema::of::<ContextArgs>(),
        )
        .with_title("Read the shared TUI's view")
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false))
        .with_raw_output_schema(schema::output_of::<Outcome>()),
        // Moving the view loses nothing, and the same requestId again
        // changes nothing (the TUI remembers it).
        Tool::new(SELECT_TOOL, SELECT_DESCRIPTION, schema::of::<SelectArgs>())
            .with_title("Move the shared TUI to a session")
            .with_annotations(
                ToolAnnotations::new()
                    .destructive(false)
                    .idempotent(true)
                    .open_world(false),
            )
            .with_raw_output_schema(schema::output_of::<Outcome>()),
    ]
}

/// Every result says `isError` and carries the outcome; rejections and
/// unknown outcomes are errors.
fn result(outcome: &Outcome) -> Result<CallToolResult, ErrorData> {
    let json = serde_json::to_value(outcome)
        .map_err(|e| ErrorData::internal_error(format!("cannot encode: {e}"), None))?;
    Ok(crate::mcp::reply::structured(json, !outcome.ok))
}

impl ServerHandler for Adapter {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("quire-tui", env!("CARGO_PKG_VERSION")).with_title("a shared quire TUI"))
            .with_instructions(
                "These tools reach one person's live quire TUI, which they chose to share. You can read a \
                 small view state and move the TUI to another session when the person is not using it; \
                 nothing else. Read with get_view_context before every select_session.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let outcome = match request.name.as_ref() {
            // Arguments that do not fit are the model's to correct: a tool
            // error, as the workspace tools answer them.
            CONTEXT_TOOL => match crate::mcp::reply::parse::<ContextArgs>(args) {
                Ok(args) => self.get_view_context(args).await,
                Err(crate::mcp::reply::Failure::Tool(e)) => {
                    Outcome::rejected(&e.code, e.message, None)
                }
                Err(other) => return crate::mcp::reply::finish(Err(other)),
            },
            SELECT_TOOL => match crate::mcp::reply::parse::<SelectArgs>(args) {
                Ok(args) => self.select_session(args).await,
                Err(crate::mcp::reply::Failure::Tool(e)) => {
                    Outcome::rejected(&e.code, e.message, None)
                }
                Err(other) => return crate::mcp::reply::finish(Err(other)),
            },
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{other}`"),
                    None,
                ));
            }
        };
        result(&outcome).map(Into::into)
    }
}

/// Runs the adapter on stdin/stdout until stdin closes.
pub async fn run(endpoint: PathBuf, deadline: Duration) -> Result<(), ShareError> {
    use rmcp::ServiceExt;
    let adapter = Adapter::connect(&endpoint, deadline).await?;
    let running = adapter
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| ShareError::Mcp(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ShareError::Mcp(e.to_string()))?;
    Ok(())
}
