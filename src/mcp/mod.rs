//! The MCP frontend (rmcp): the workspace tools, served over streamable
//! HTTP at `/mcp` (on the HTTP listener, behind its guard) and over stdio
//! (`quire mcp stdio`); `tui.rs` is the other MCP server, `quire mcp tui`,
//! bridged to one shared TUI over its socket (no core behind it).
//!
//! Errors follow one rule: arguments that do not fit a tool's schema are
//! JSON-RPC `-32602`; no session to act on is `-32600` (`no project is
//! open`); anything the core rejects is a tool result with `isError: true`
//! and `{ error: { code, message } }`, and nothing was changed.

pub mod stdio;
pub mod tools;
pub mod tui;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use self::tools::*;
use crate::core::events::{Event, JobProgress};
use crate::core::ids::SessionId;
use crate::core::jobs::Approval;
use crate::core::paths;
use crate::core::storage::SnapshotFile;
use crate::core::{Core, CoreError};
use crate::wire::{self, Cancelled, Closed, Epoch};

/// Largest export returned inline (base64 in an embedded resource).
pub const INLINE_EXPORT_LIMIT: usize = 16 << 20;
/// How long `wait: true` waits by default before answering `running`.
const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// Which transport a connection came in on; it decides the path rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `quire mcp stdio`: spawned by the local user's own client.
    Stdio,
    /// `/mcp` on the HTTP listener.
    Http,
}

/// One MCP connection's handler. rmcp makes one per connection (one for
/// stdio, one per streamable-HTTP session), so `active` is per connection.
#[derive(Clone)]
pub struct QuireMcp {
    core: Core,
    transport: Transport,
    allow_any_path: bool,
    /// The session this connection last opened.
    active: Arc<Mutex<Option<SessionId>>>,
    tools: Arc<Vec<Tool>>,
}

type Reply = Result<CallToolResult, ErrorData>;

impl QuireMcp {
    pub fn new(core: Core, transport: Transport, allow_any_path: bool) -> Self {
        QuireMcp {
            core,
            transport,
            allow_any_path,
            active: Arc::new(Mutex::new(None)),
            tools: Arc::new(tools::all()),
        }
    }

    /// Makes `id` this connection's active session (e.g. `--project`).
    pub fn set_active(&self, id: SessionId) {
        *self.active.lock().unwrap_or_else(PoisonError::into_inner) = Some(id);
    }

    fn active(&self) -> Option<SessionId> {
        *self.active.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `sessionId`, else the connection's active session, else the current
    /// one, else JSON-RPC -32600.
    fn session(&self, given: Option<SessionId>) -> Result<SessionId, ErrorData> {
        if let Some(id) = given {
            return self.core.resolve(Some(id)).map_err(|_| {
                ErrorData::invalid_request(format!("session {id} is not open"), None)
            });
        }
        if let Some(id) = self
            .active()
            .filter(|id| self.core.resolve(Some(*id)).is_ok())
        {
            return Ok(id);
        }
        self.core
            .resolve(None)
            .map_err(|_| ErrorData::invalid_request("no project is open", None))
    }

    async fn call(&self, name: &str, args: Value, ctx: RequestContext<RoleServer>) -> Reply {
        let Some(tool) = ToolName::parse(name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        };
        match tool {
            ToolName::OpenProject => self.open_project(parse(args)?).await,
            ToolName::CloseProject => {
                let a: SessionArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                match self.core.close_session(id).await {
                    Ok(()) => ok(&Closed { closed: id }),
                    Err(e) => rejected(e),
                }
            }
            ToolName::Apply => {
                let a: ApplyArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                reply(self.core.apply(id, a.op).await)
            }
            ToolName::Undo | ToolName::Redo => {
                let a: SessionArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                let result = if tool == ToolName::Undo {
                    self.core.undo(id).await
                } else {
                    self.core.redo(id).await
                };
                reply(result.map(|epoch| Epoch { epoch }))
            }
            ToolName::StartPipeline => self.start_pipeline(parse(args)?, ctx).await,
            ToolName::ListSessions => {
                let _: NoArgs = parse(args)?;
                ok(&Sessions {
                    sessions: self.core.sessions(),
                })
            }
            ToolName::GetScene => {
                let a: GetSceneArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                let mut snapshot = match self.core.scene(id).await {
                    Ok(s) => s,
                    Err(e) => return rejected(e),
                };
                if let Some(pages) = a.pages {
                    if let Some(missing) = pages.iter().find(|p| snapshot.scene.page(**p).is_none())
                    {
                        return rejected(CoreError::InvalidInput(format!(
                            "unknown page id {missing} (not in the scene)"
                        )));
                    }
                    snapshot.scene.pages.retain(|p| pages.contains(&p.id));
                }
                ok(&SnapshotFile {
                    epoch: snapshot.epoch,
                    scene: snapshot.scene,
                })
            }
            ToolName::ListEngines => {
                let _: NoArgs = parse(args)?;
                ok(&Engines {
                    engines: self.core.engines(),
                })
            }
            ToolName::GetJob => {
                let a: JobArgs = parse(args)?;
                reply(self.core.job(a.job_id))
            }
            ToolName::CancelJob => {
                let a: JobArgs = parse(args)?;
                reply(
                    self.core
                        .cancel_job(a.job_id)
                        .map(|cancelled| Cancelled { cancelled }),
                )
            }
            ToolName::Export => self.export(parse(args)?).await,
        }
    }

    async fn open_project(&self, a: OpenProjectArgs) -> Reply {
        let any = self.transport == Transport::Stdio || self.allow_any_path;
        let path = match paths::resolve(&a.path, self.core.projects_dir(), any) {
            Ok(p) => p,
            Err(e) => return rejected(e),
        };
        let opened = match a.create_name {
            Some(name) => self.core.create_project(&path, &name).await,
            None => self.core.open_project(&path).await,
        };
        match opened {
            Ok(s) => {
                self.set_active(s.id);
                ok(&Opened {
                    session_id: s.id,
                    name: s.name,
                    path: s.path.display().to_string(),
                })
            }
            Err(e) => rejected(e),
        }
    }

    async fn start_pipeline(&self, a: StartPipelineArgs, ctx: RequestContext<RoleServer>) -> Reply {
        let id = self.session(a.session_id)?;
        let spec = a.spec;
        // Subscribe first so no event of the job can be missed.
        let mut events = self.core.subscribe(Some(self.core.events().seq()));
        let job = match self
            .core
            .start_pipeline(id, spec, Approval::Unattended)
            .await
        {
            Ok(job) => job,
            Err(e) => return rejected(e),
        };
        if !a.wait {
            return ok(&Started {
                started: wire::Started { job_id: job },
                status: None,
                warnings: None,
                error: None,
            });
        }
        let token = ctx.meta.get_progress_token();
        let limit = a
            .wait_timeout_secs
            .map_or(DEFAULT_WAIT, Duration::from_secs);
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let next = tokio::select! {
                next = events.next() => next,
                _ = tokio::time::sleep_until(deadline) => None,
                _ = ctx.ct.cancelled() => None,
            };
            let Some(envelope) = next else { break };
            if let Some(p) = JobProgress::of(&envelope.event, job) {
                if let Some(token) = &token {
                    let message = format!(
                        "{} ({}/{}): page {} of {}",
                        p.step,
                        p.step_index + 1,
                        p.total_steps,
                        p.page,
                        p.total_pages
                    );
                    let _ = ctx
                        .peer
                        .notify_progress(
                            ProgressNotificationParam::new(token.clone(), p.overall_percent)
                                .with_total(100.0)
                                .with_message(message),
                        )
                        .await;
                }
                continue;
            }
            match &envelope.event {
                Event::JobFinished { id, .. } if *id == job => break,
                // Resynchronised after falling behind: the summary decides.
                Event::Snapshot { .. }
                    if self.core.job(job).is_ok_and(|j| j.status.is_finished()) =>
                {
                    break;
                }
                _ => {}
            }
        }
        let summary = match self.core.job(job) {
            Ok(summary) => summary,
            Err(e) => return rejected(e),
        };
        ok(&Started {
            started: wire::Started { job_id: job },
            status: Some(summary.status),
            warnings: Some(summary.warnings),
            error: summary.error,
        })
    }

    async fn export(&self, a: ExportArgs) -> Reply {
        let id = self.session(a.session_id)?;
        if a.out_path.is_some() && self.transport != Transport::Stdio {
            return rejected(CoreError::InvalidInput(
                "outPath is only available over stdio; over /mcp the export is returned inline"
                    .into(),
            ));
        }
        // Checked before the export is built: a refused path costs nothing.
        let out_path = match &a.out_path {
            Some(given) => {
                match paths::resolve(given, self.core.projects_dir(), true)
                    .and_then(|p| paths::check_output(&p).map(|()| p))
                {
                    Ok(p) => Some(p),
                    Err(e) => return rejected(e),
                }
            }
            None => None,
        };
        let format = a.spec.format;
        let spec = a.spec;
        let export = match self.core.export(id, spec).await {
            Ok(e) => e,
            Err(e) => return rejected(e),
        };
        let size = export.bytes.len() as u64;
        let too_big = export.bytes.len() > INLINE_EXPORT_LIMIT;
        let target = match (out_path, too_big) {
            (Some(path), _) => Some(path),
            (None, true) if self.transport == Transport::Stdio => Some(
                self.core
                    .projects_dir()
                    .join("exports")
                    .join(&export.file_name),
            ),
            (None, true) => {
                return rejected(CoreError::InvalidInput(format!(
                    "the export is {} MiB, over the 16 MiB MCP limit; use the HTTP route POST /api/v1/projects/current/export",
                    size >> 20
                )));
            }
            (None, false) => None,
        };
        let mut result = Exported {
            format,
            media_type: export.media_type.to_owned(),
            file_name: export.file_name.clone(),
            size,
            text: None,
            path: None,
        };
        if let Some(path) = target {
            let bytes = export.bytes;
            let dest = path.clone();
            let written = paths::write_output_file(dest, bytes).await;
            if let Err(e) = written {
                return rejected(e);
            }
            result.path = Some(path.display().to_string());
            return ok(&result);
        }
        if format.is_text() {
            result.text = Some(String::from_utf8_lossy(&export.bytes).into_owned());
            return ok(&result);
        }
        let mut reply = ok(&result)?;
        let blob = base64::engine::general_purpose::STANDARD.encode(&export.bytes);
        reply.content.push(ContentBlock::resource(
            ResourceContents::BlobResourceContents {
                uri: format!("quire://export/{}", export.file_name),
                mime_type: Some(export.media_type.to_owned()),
                blob,
                meta: None,
            },
        ));
        Ok(reply)
    }
}

fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ErrorData> {
    serde_json::from_value(args)
        .map_err(|e| ErrorData::invalid_params(format!("invalid arguments: {e}"), None))
}

/// A tool result carrying `json` both as structured content and as a JSON
/// text block (for clients that read only text).
pub fn structured(json: Value, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(json.to_string())];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(json);
    result
}

/// A successful result.
fn ok<T: Serialize>(value: &T) -> Reply {
    let json = serde_json::to_value(value)
        .map_err(|e| ErrorData::internal_error(format!("cannot encode the result: {e}"), None))?;
    Ok(structured(json, false))
}

/// A core rejection: `isError` with `{ error: { code, message } }`. Having
/// no session to act on is a protocol error instead (-32600).
fn rejected(error: CoreError) -> Reply {
    if error == CoreError::NoSession {
        return Err(ErrorData::invalid_request("no project is open", None));
    }
    let body = ToolError {
        error: ErrorBody {
            code: error.code().to_owned(),
            message: error.to_string(),
        },
    };
    Ok(structured(
        serde_json::to_value(&body).unwrap_or_default(),
        true,
    ))
}

fn reply<T: Serialize>(result: Result<T, CoreError>) -> Reply {
    match result {
        Ok(value) => ok(&value),
        Err(e) => rejected(e),
    }
}

impl ServerHandler for QuireMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("quire", env!("CARGO_PKG_VERSION"))
                    .with_title("quire workbench")
                    .with_description("Page-based text projects: review, translate, check, export"),
            )
            .with_instructions(
                "quire holds projects of pages with text nodes (source text and translation). \
                 Open or create a project with quire_open_project, read it with quire_get_scene, \
                 change it with quire_apply (undo with quire_undo), run engines such as \
                 pseudo-translate, llm-translate and qa with quire_start_pipeline, and export \
                 with quire_export. Calls without sessionId act on the project you opened last.",
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
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        self.call(&request.name, args, context)
            .await
            .map(Into::into)
    }
}

/// The `/mcp` route (streamable HTTP). Cancelling `stop` ends its
/// sessions' streams, for a quick graceful shutdown.
pub fn http_router(
    core: Core,
    config: &crate::config::Config,
    stop: tokio_util::sync::CancellationToken,
) -> axum::Router {
    axum::Router::new()
        .nest_service("/mcp", http_service(core, config, stop))
        .layer(axum::middleware::from_fn(session_ended))
}

/// rmcp answers a session's DELETE with 202; the Python SDK (and the HTTP
/// meaning of "done, nothing to send") expect 204, and warn otherwise.
/// Only DELETE: a POSTed notification must stay 202, as the spec says.
async fn session_ended(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let response = next.run(request).await;
    if !delete || response.status() != axum::http::StatusCode::ACCEPTED {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    parts.status = axum::http::StatusCode::NO_CONTENT;
    axum::response::Response::from_parts(parts, axum::body::Body::empty())
}

fn http_service(
    core: Core,
    config: &crate::config::Config,
    stop: tokio_util::sync::CancellationToken,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    QuireMcp,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let server = &config.server;
    // The HTTP guard has already checked Host and Origin; rmcp checks them
    // again with the same lists.
    let mut hosts: Vec<String> = vec![
        "localhost".into(),
        "127.0.0.1".into(),
        "::1".into(),
        "[::1]".into(),
    ];
    hosts.push(
        server
            .host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
    );
    hosts.extend(server.allowed_hosts.iter().cloned());
    let mut mcp_config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    if !server.allowed_origins.is_empty() {
        mcp_config = mcp_config.with_allowed_origins(server.allowed_origins.clone());
    }
    mcp_config.max_request_body_bytes =
        usize::try_from(server.max_body_bytes.get()).unwrap_or(usize::MAX);
    mcp_config.cancellation_token = stop;
    let allow_any = config.mcp.allow_any_path;
    StreamableHttpService::new(
        move || Ok(QuireMcp::new(core.clone(), Transport::Http, allow_any)),
        Default::default(),
        mcp_config,
    )
}

/// `quire mcp stdio`: serves one connection on stdin/stdout until stdin
/// closes. `active` becomes the connection's active session.
pub async fn serve_stdio(core: Core, active: Option<SessionId>) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let handler = QuireMcp::new(core, Transport::Stdio, true);
    if let Some(id) = active {
        handler.set_active(id);
    }
    let transport = stdio::StdioTransport::new(tokio::io::stdin(), tokio::io::stdout());
    let running = match handler.serve(transport).await {
        Ok(running) => running,
        // The client went away before it said hello: nothing to do.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    running.waiting().await?;
    Ok(())
}
