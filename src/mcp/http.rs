//! `/mcp`: MCP's streamable HTTP transport under axum, with the JSON-RPC
//! error shapes and the session bookkeeping rmcp leaves to the server.

use std::collections::HashMap;

use rmcp::model::ProtocolVersion;
use serde_json::Value;

use super::*;
use quire_core::Core;

/// The `/mcp` route (streamable HTTP), and its sessions. Cancelling `stop`
/// ends its sessions' streams, for a quick graceful shutdown.
pub fn http_router(
    core: Core,
    config: &crate::config::Config,
    stop: tokio_util::sync::CancellationToken,
) -> (axum::Router, HttpSessions) {
    let sessions = HttpSessions::default();
    let router = axum::Router::new()
        .nest_service(
            "/mcp",
            http_service(core, config, stop, sessions.manager.clone()),
        )
        .layer(axum::middleware::from_fn_with_state(
            sessions.clone(),
            json_rpc_errors,
        ));
    (router, sessions)
}

type SessionManager = rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// `/mcp`'s sessions of the handshake era, each with the grant of the user
/// who opened it: a reload that revokes a user ends their sessions
/// ([`HttpSessions::end_revoked`]).
#[derive(Clone, Default)]
pub struct HttpSessions {
    manager: Arc<SessionManager>,
    /// Never held across an `.await`.
    grants: Arc<Mutex<HashMap<Arc<str>, crate::access::Grant>>>,
}

impl HttpSessions {
    /// Records who opened session `id`; forgets sessions that have ended
    /// when there are many.
    async fn opened(&self, id: Arc<str>, grant: crate::access::Grant) {
        let crowded = {
            let mut grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
            grants.insert(id, grant);
            grants.len() >= 1024 && grants.len().is_power_of_two()
        };
        if crowded {
            let live = self.manager.sessions.read().await;
            self.grants
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|id, _| live.contains_key(id));
        }
    }

    /// Ends every session whose user's grant a reload revoked; how many.
    pub async fn end_revoked(&self) -> usize {
        use rmcp::transport::streamable_http_server::session::SessionManager as _;
        let ended: Vec<Arc<str>> = {
            let mut grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
            let ended = grants
                .iter()
                .filter(|(_, grant)| grant.is_revoked())
                .map(|(id, _)| id.clone())
                .collect();
            grants.retain(|_, grant| !grant.is_revoked());
            ended
        };
        for id in &ended {
            if let Err(e) = self.manager.close_session(id).await {
                tracing::warn!("cannot end MCP session {id}: {e}");
            }
        }
        ended.len()
    }
}

/// Every refusal `/mcp` answers is a JSON-RPC error body, as a client of
/// the protocol reads it: a body that is not JSON is a parse error (400,
/// -32700) before it reaches rmcp, and rmcp's plain-text refusals (a wrong
/// `Content-Type` or `Accept`) keep their status with an invalid-request
/// error (-32600) carrying their text.
///
/// Also: rmcp answers a session's DELETE with 202; the Python SDK (and the
/// HTTP meaning of "done, nothing to send") expect 204, and warn
/// otherwise. Only DELETE: a POSTed notification must stay 202, as the
/// spec says. (One middleware for both: each layer costs every call.)
///
/// And: a new session is recorded with its user's grant ([`HttpSessions`]).
pub(super) async fn json_rpc_errors(
    axum::extract::State(sessions): axum::extract::State<HttpSessions>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let delete = request.method() == axum::http::Method::DELETE;
    let grant = request
        .extensions()
        .get::<Caller>()
        .map(|caller| caller.grant.clone());
    let mut only_reads = false;
    let error = |status: StatusCode, code: i32, message: String| {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": code, "message": message },
        });
        (status, axum::Json(body)).into_response()
    };
    let json_body = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let request = if request.method() == axum::http::Method::POST && json_body {
        use axum::RequestExt;
        // Read under the server's `DefaultBodyLimit` (server.max_body_bytes).
        let (head, body) = request.with_limited_body().into_parts();
        let bytes = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => bytes,
            Err(e) => {
                let mut cause = std::error::Error::source(&e);
                let mut too_large = false;
                while let Some(inner) = cause {
                    too_large |= inner.is::<http_body_util::LengthLimitError>();
                    cause = inner.source();
                }
                let status = if too_large {
                    StatusCode::PAYLOAD_TOO_LARGE
                } else {
                    StatusCode::BAD_REQUEST
                };
                return error(
                    status,
                    -32600,
                    format!("Invalid Request: Failed to buffer the request body: {e}"),
                );
            }
        };
        // One frame read as what it says; a batch, or a frame of another
        // shape, is only checked to be JSON (rmcp answers it).
        let frame = serde_json::from_slice::<Frame>(&bytes).ok();
        if frame.is_none()
            && let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes)
        {
            return error(StatusCode::BAD_REQUEST, -32700, format!("Parse error: {e}"));
        }
        only_reads = frame.as_ref().is_some_and(Frame::only_reads);
        // The methods 2026-07-28 removed are "method not found" there, a
        // 404 as for any method it does not know (rmcp would accept
        // `logging/setLevel`, and first ask for the `Mcp-Name` header the
        // subscriptions have no use for, which misleads).
        let stateless = head
            .headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .or_else(|| {
                frame
                    .as_ref()
                    .filter(|_| !head.headers.contains_key("mcp-session-id"))
                    .and_then(Frame::protocol_version)
            })
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28.as_str());
        if let Some(frame) = frame.as_ref().filter(|_| stateless)
            && let Some(message) = frame.method.as_deref().and_then(removed_in_stateless_era)
        {
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": frame.id,
                "error": { "code": -32601, "message": message },
            });
            return (StatusCode::NOT_FOUND, axum::Json(body)).into_response();
        }
        axum::extract::Request::from_parts(head, axum::body::Body::from(bytes))
    } else {
        request
    };
    let opening = request.method() == axum::http::Method::POST
        && !request.headers().contains_key("mcp-session-id");
    let mut response = next.run(request).await;
    if opening
        && let Some(grant) = grant
        && let Some(id) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
    {
        sessions.opened(Arc::from(id), grant).await;
    }
    if only_reads {
        response.extensions_mut().insert(crate::access::OnlyRead);
    }
    if delete && response.status() == StatusCode::ACCEPTED {
        let (mut parts, _) = response.into_parts();
        parts.status = StatusCode::NO_CONTENT;
        return axum::response::Response::from_parts(parts, axum::body::Body::empty());
    }
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|v| v.starts_with("text/plain"));
    if !response.status().is_client_error() || !plain {
        return response;
    }
    let status = response.status();
    let text = axum::body::to_bytes(response.into_body(), 64 << 10)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    error(status, -32600, format!("Invalid Request: {}", text.trim()))
}

/// What `/mcp` reads of a frame itself: its method, id and tool.
#[derive(serde::Deserialize)]
pub(super) struct Frame {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    params: Option<FrameParams>,
}

#[derive(serde::Deserialize)]
pub(super) struct FrameParams {
    #[serde(default)]
    name: Option<String>,
    #[serde(default, rename = "_meta")]
    meta: Option<FrameMeta>,
}

#[derive(serde::Deserialize)]
pub(super) struct FrameMeta {
    #[serde(default, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<String>,
}

impl Frame {
    /// The protocol version the frame's `_meta` names (2026-07-28 and
    /// later carry one on every request).
    fn protocol_version(&self) -> Option<&str> {
        self.params
            .as_ref()?
            .meta
            .as_ref()?
            .protocol_version
            .as_deref()
    }

    /// Whether answering it changes nothing of the work: every request but
    /// a call of a tool that changes the workspace (by its `readOnlyHint`)
    /// and a task's cancellation. A frame without a method (a client's
    /// answer to the server) counts as a change.
    fn only_reads(&self) -> bool {
        match self.method.as_deref() {
            Some("tools/call") => self
                .params
                .as_ref()
                .and_then(|p| p.name.as_deref())
                .is_some_and(tools::only_reads),
            Some("tasks/cancel") | None => false,
            Some(_) => true,
        }
    }
}

pub(super) fn http_service(
    core: Core,
    config: &crate::config::Config,
    stop: tokio_util::sync::CancellationToken,
    sessions: Arc<SessionManager>,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<QuireMcp, SessionManager> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let server = &config.server;
    // Host and Origin are the guard's alone: it checks them against the
    // rules in force (a SIGHUP may add a host; a list given to rmcp would
    // keep the one of the start), and it admits this server's own origin,
    // which a fixed list could not name (`--port 0`).
    let mut mcp_config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins();
    mcp_config.max_request_body_bytes =
        usize::try_from(server.max_body_bytes.get()).unwrap_or(usize::MAX);
    mcp_config.cancellation_token = stop;
    let allowed = Allowed::from_config(config);
    StreamableHttpService::new(
        move || Ok(QuireMcp::new(core.clone(), Transport::Http, allowed)),
        sessions,
        mcp_config,
    )
}

/// The MCP session of a call over `/mcp` with sessions: two conversations
/// of one client are two agents, each undoing only its own steps. Over
/// stdio (a conversation a process) and statelessly, none: the client and
/// user are the agent.
pub(super) fn conversation(
    ctx: &rmcp::service::RequestContext<rmcp::RoleServer>,
) -> Option<String> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}
