//! The MCP frontend (rmcp): the workspace tools, served over streamable
//! HTTP at `/mcp` (on the HTTP listener, behind its guard) and over stdio
//! (`quire mcp stdio`); `tui.rs` is the other MCP server, `quire mcp tui`,
//! bridged to one shared TUI over its socket (no core behind it).
//!
//! Errors follow `05-mcp.md`: everything a model can correct (arguments
//! that do not fit, no project open, an unknown id, anything the core
//! rejects) is a tool execution error, and nothing was changed; only an
//! unknown tool is a JSON-RPC error (see `reply.rs`).

mod calls;
mod http;
pub use http::{HttpSessions, http_router};
mod fixtures;
mod import;
mod lasting;
pub use lasting::LastingSessions;
pub mod prompts;
pub mod reply;
pub mod resources;
pub mod schema;
pub mod stdio;
mod tasks;
pub mod tools;
pub mod tui;
pub mod watch;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ErrorData, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig, ServerRequest, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::{CancellationToken, DropGuard};

use self::reply::{Failure, Outcome, ToolError, ok, parse};
use self::tools::*;
use crate::access::Caller;
use crate::wire::{Cancelled, Closed, Epoch};
use quire_core::Core;
use quire_model::ids::SessionId;
use quire_model::workflow::Writer;

/// Largest export returned inline (base64 in an embedded resource).
pub const INLINE_EXPORT_LIMIT: usize = 16 << 20;
/// How long a result waits for the client to answer the ping that shows
/// it has handled the notifications before it.
const SETTLE_DEADLINE: Duration = Duration::from_secs(2);
/// How long a stateless-era client may keep `tools/list` (the tools change
/// only with the binary).
pub(crate) const TOOLS_TTL: Duration = Duration::from_secs(3600);
/// The author of an agent's edits when its client did not name itself.
const UNNAMED_CLIENT: &str = "an MCP client";
/// `quire_view_page`'s long side when none is asked for: what the vision
/// models of the main providers take without scaling again.
const DEFAULT_VIEW_SIDE: u32 = 1568;
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

/// What the config allows a connection.
#[derive(Debug, Clone, Copy)]
pub struct Allowed {
    /// `mcp.allow_any_path` (stdio always allows any path).
    pub any_path: bool,
    /// `server.max_body_bytes`: the largest item or file `quire_import_pages`
    /// takes.
    pub item_bytes: u64,
    /// `mcp.conformance_fixtures`: also the suite's `test_*` fixtures.
    pub fixtures: bool,
}

impl Allowed {
    pub fn from_config(config: &crate::config::Config) -> Self {
        Allowed {
            any_path: config.mcp.allow_any_path,
            item_bytes: config.server.max_body_bytes.get(),
            fixtures: config.mcp.conformance_fixtures,
        }
    }
}

/// Which era of MCP a request belongs to (`05-mcp.md`, Protocol eras).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: `initialize`, then a connection (over HTTP
    /// an `Mcp-Session-Id`) that remembers the project opened last.
    Handshake,
    /// 2026-07-28 and later: every request carries its own metadata and
    /// no connection state lives between requests.
    Stateless,
}

impl Era {
    fn of(ctx: &RequestContext<RoleServer>) -> Era {
        let stateless = ctx
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if stateless {
            Era::Stateless
        } else {
            Era::Handshake
        }
    }
}

/// The message for a method MCP 2026-07-28 removed (SEP-2575), saying
/// what replaces it; `None` for any other method. In that era each of them
/// is "method not found" (over HTTP a 404), and changes nothing.
pub fn removed_in_stateless_era(method: &str) -> Option<String> {
    let instead = match method {
        "initialize" => "send server/discover, and each request's own _meta",
        "ping" => "any request shows the server is there (server/discover is cheap)",
        "logging/setLevel" => {
            "send the level with each request (_meta io.modelcontextprotocol/logLevel)"
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            "use subscriptions/listen with resourceSubscriptions"
        }
        _ => return None,
    };
    Some(format!("{method} is not part of MCP 2026-07-28: {instead}"))
}

/// What a request can do about an engine that needs a person's approval
/// (`05-mcp.md`, Protocol eras): in the stateless era a client that takes
/// form input is asked through an input-required result, and calls again
/// with the person's answer; any other client is refused, as before,
/// unless `engines.allow_unattended`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asking {
    /// The client cannot ask its person.
    No,
    /// It can: an engine that needs approval is asked about.
    Can,
    /// Its person approved (the answer to [`APPROVE`] came back accepted).
    Approved,
}

/// The key of the approval question in an input-required result.
const APPROVE: &str = "approve";

impl Asking {
    fn of(
        ctx: &RequestContext<RoleServer>,
        answers: Option<&rmcp::model::InputResponses>,
    ) -> Asking {
        let can_ask = Era::of(ctx) == Era::Stateless
            && ctx
                .client_capabilities()
                .is_some_and(|c| c.elicitation.is_some());
        // An answer that is not a yes (declined, cancelled) is a no: the
        // call is refused as unattended, not asked again.
        match answers.and_then(|a| a.get(APPROVE)) {
            Some(answer) if can_ask => {
                let yes =
                    answer["action"] == "accept" && answer["content"][APPROVE] == Value::Bool(true);
                if yes { Asking::Approved } else { Asking::No }
            }
            _ if can_ask => Asking::Can,
            _ => Asking::No,
        }
    }
}

/// One MCP connection's handler. rmcp makes one per connection (one for
/// stdio, one per streamable-HTTP session of the handshake era, one per
/// request of the stateless era over HTTP), so `active` is per connection.
#[derive(Clone)]
pub struct QuireMcp {
    core: Core,
    transport: Transport,
    allowed: Allowed,
    /// The era of the request being answered (see [`QuireMcp::call`]).
    era: Era,
    /// Who the request's edits are recorded as: the agent, by its client.
    writer: Writer,
    /// Who is calling (a server's user over `/mcp`; the machine's person
    /// over stdio): its role decides which tools it may call.
    caller: Caller,
    /// Whether the request's client can ask its person to approve an
    /// engine, or has (see [`Asking`]).
    asking: Asking,
    /// The session this connection last opened.
    active: Arc<Mutex<Option<SessionId>>>,
    /// The log level and resource subscriptions of this connection.
    watch: Arc<watch::Watch>,
    /// Ends the connection's watch task when the last clone of this
    /// handler is dropped (the connection has ended).
    stop: Arc<DropGuard>,
    /// Over stdio, the sessions earlier processes opened (see
    /// [`LastingSessions`]).
    lasting: Option<LastingSessions>,
}

impl QuireMcp {
    pub fn new(core: Core, transport: Transport, allowed: Allowed) -> Self {
        QuireMcp {
            core,
            transport,
            allowed,
            era: Era::Handshake,
            asking: Asking::No,
            writer: Writer::Agent {
                client: UNNAMED_CLIENT.into(),
                user: None,
                below_review: None,
                session: None,
            },
            caller: Caller::local(),
            active: Arc::new(Mutex::new(None)),
            watch: Arc::new(watch::Watch::default()),
            stop: Arc::new(CancellationToken::new().drop_guard()),
            lasting: None,
        }
    }

    /// Keeps the sessions this handler opens for later processes, and
    /// takes up those that earlier ones opened (`quire mcp stdio`).
    pub fn lasting(mut self, sessions: LastingSessions) -> Self {
        self.lasting = Some(sessions);
        self
    }

    /// Over stdio, a `sessionId` this process does not have open is
    /// reopened when an earlier process on the same data dir gave it out
    /// and it was not closed; otherwise `unknown_session`, saying so.
    async fn take_up(&self, args: &Value) -> Outcome<()> {
        let Some(lasting) = &self.lasting else {
            return Ok(());
        };
        let Some(id) = args
            .get("sessionId")
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<SessionId>().ok())
        else {
            return Ok(());
        };
        if self.core.resolve(Some(id)).is_ok() {
            return Ok(());
        }
        let Some(path) = lasting.lookup(id) else {
            return Err(ToolError::new(
                "unknown_session",
                format!(
                    "unknown session {id}: no quire process on this data dir opened it, or it \
                     was closed (quire_open_project opens a project and returns its sessionId)"
                ),
            )
            .with("id", id.to_string())
            .into());
        };
        let reopened = self.core.reopen_session(&path, id).await?;
        if reopened.id != id {
            return Err(ToolError::new(
                "unknown_session",
                format!(
                    "session {id}'s project is open in this process as session {}: use that id",
                    reopened.id
                ),
            )
            .with("id", id.to_string())
            .into());
        }
        Ok(())
    }

    /// Makes `id` this connection's active session (e.g. `--project`).
    pub fn set_active(&self, id: SessionId) {
        *self.active.lock().unwrap_or_else(PoisonError::into_inner) = Some(id);
    }

    fn active(&self) -> Option<SessionId> {
        *self.active.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// This handler as one request sees it: its era, and its client as
    /// the author of its edits (per request in the stateless era, from
    /// `initialize` in the handshake era).
    fn for_request(&self, ctx: &RequestContext<RoleServer>) -> QuireMcp {
        let client = ctx.client_info().map_or_else(
            || UNNAMED_CLIENT.to_owned(),
            |info| {
                let name = info.title.filter(|t| !t.is_empty()).unwrap_or(info.name);
                format!("{name} {}", info.version).trim().to_owned()
            },
        );
        // Over `/mcp`, the user the HTTP guard found (whose agent this is).
        let caller = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
            .cloned()
            .unwrap_or_else(|| self.caller.clone());
        let user = caller.name().map(str::to_owned);
        let session = http::conversation(ctx);
        QuireMcp {
            era: Era::of(ctx),
            core: self
                .core
                .acting_for(caller.name())
                .below_review(caller.below_review())
                .as_agent(Some(&client), session.as_deref()),
            writer: Writer::Agent {
                client,
                user,
                below_review: caller.below_review().map(str::to_owned),
                session,
            },
            caller,
            ..self.clone()
        }
    }

    /// `value` as the result, without the server's paths unless the
    /// caller is an admin (over stdio, the machine's person is).
    fn seen<T: serde::Serialize>(&self, value: &T) -> Outcome<CallToolResult> {
        let value = serde_json::to_value(value).unwrap_or_default();
        ok(&crate::access::as_seen_by(Some(&self.caller), value))
    }

    /// `sessionId`, else (handshake era, or stdio, which has one client)
    /// the connection's active session, else the current one, else the
    /// tool error `no_session`. A stateless request over HTTP has no
    /// connection: without `sessionId` it is `session_required`, never
    /// another client's project.
    fn session(&self, given: Option<SessionId>) -> Outcome<SessionId> {
        if let Some(id) = given {
            return Ok(self.core.resolve(Some(id))?);
        }
        if self.era == Era::Stateless && self.transport == Transport::Http {
            return Err(ToolError::new(
                "session_required",
                "sessionId is required: MCP 2026-07-28 keeps no connection to remember the \
                 project you opened, so name it in each call (quire_open_project returns it; \
                 quire_list_sessions lists the open ones)",
            )
            .into());
        }
        if let Some(id) = self
            .active()
            .filter(|id| self.core.resolve(Some(*id)).is_ok())
        {
            return Ok(id);
        }
        Ok(self.core.resolve(None)?)
    }

    async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: RequestContext<RoleServer>,
    ) -> Outcome<CallToolResult> {
        let Some(tool) = ToolName::parse(name) else {
            return Err(Failure::Protocol(ErrorData::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            )));
        };
        let (role, what) = tool.needs();
        self.caller
            .may(role, what)
            .map_err(|why| ToolError::new("forbidden_role", why))?;
        self.take_up(&args).await?;
        match tool {
            ToolName::OpenProject => self.open_project(parse(args)?).await,
            ToolName::CloseProject => {
                let a: SessionArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                self.core.close_session(id).await?;
                if let Some(lasting) = &self.lasting {
                    lasting.forget(id);
                }
                ok(&Closed { closed: id })
            }
            ToolName::Apply => {
                let a: ApplyArgs = parse(args)?;
                let (role, what) = crate::access::op_needs(&a.op);
                self.caller
                    .may(role, what)
                    .map_err(|why| ToolError::new("forbidden_role", why))?;
                let id = self.session(a.session_id)?;
                ok(&self.core.apply_as(id, a.op, self.writer.clone()).await?)
            }
            ToolName::Undo | ToolName::Redo => {
                let a: SessionArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                let stepped = if tool == ToolName::Undo {
                    Epoch::undone(self.core.undo(id).await?)
                } else {
                    Epoch::redone(self.core.redo(id).await?)
                };
                ok(&stepped)
            }
            ToolName::StartPipeline => self.start_pipeline(parse(args)?, ctx).await,
            ToolName::ListSessions => {
                let a: ListArgs = parse(args)?;
                let mut sessions = self.core.sessions();
                sessions.retain(|s| a.keeps(&[&s.name, &s.id.to_string()]));
                self.seen(&Sessions { sessions })
            }
            ToolName::GetScene => {
                let a: GetSceneArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                ok(&self.core.scene_pages(id, a.pages.as_deref()).await?)
            }
            ToolName::ListEngines => {
                let a: ListArgs = parse(args)?;
                let mut engines = self.core.engines();
                engines.retain(|e| a.keeps(&[&e.id, &e.stage]));
                ok(&Engines { engines })
            }
            ToolName::GetJob => {
                let a: JobArgs = parse(args)?;
                ok(&self.core.job(a.job_id)?)
            }
            ToolName::CancelJob => {
                let a: JobArgs = parse(args)?;
                ok(&Cancelled {
                    cancelled: self.core.cancel_job(a.job_id)?,
                })
            }
            ToolName::Export => self.export(parse(args)?).await,
            ToolName::ViewPage => self.view_page(parse(args)?).await,
            ToolName::ImportPages => self.import_pages(parse(args)?).await,
            ToolName::ImportTranslations => self.import_translations(parse(args)?).await,
            ToolName::Suggestions => self.suggestions(parse(args)?).await,
        }
    }
}

impl ServerHandler for QuireMcp {
    #[allow(deprecated)] // `enable_logging`: see `watch.rs`.
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_completions()
            .enable_logging()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
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
                 with quire_export. Pass the sessionId quire_open_project returns: MCP 2026-07-28 \
                 over HTTP requires it; elsewhere a call without it acts on the project you \
                 opened last.",
            )
    }

    /// The same tools in the same order for every client of this binary:
    /// in the stateless era a client may keep the list for an hour.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = tools::all().to_vec();
        if self.allowed.fixtures {
            tools.extend(fixtures::tools());
        }
        let mut result = ListToolsResult::with_all_items(tools);
        if Era::of(&context) == Era::Stateless {
            result.ttl_ms = Some(TOOLS_TTL.as_millis() as u64);
            result.cache_scope = Some(rmcp::model::CacheScope::Public);
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.allowed.fixtures && fixtures::is_tool(&request.name) {
            let capabilities = context.client_capabilities();
            return fixtures::call(&request, &context, capabilities.as_ref()).await;
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let mut this = self.for_request(&context);
        this.asking = Asking::of(&context, request.input_responses.as_ref());
        // A task only for a 2026-07-28 client that declared the extension
        // and did not ask to wait (`05-mcp.md`, "Long jobs"): `wait: true`
        // is an answer to wait for in every era, and a handshake-era client
        // that never asked for a task (Inspector, pydantic-ai) gets what it
        // asked for.
        let as_task = ToolName::parse(&request.name) == Some(ToolName::StartPipeline)
            && Era::of(&context) == Era::Stateless
            && args.get("wait") != Some(&Value::Bool(true))
            && context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
        if as_task {
            return match this.start_task(args).await {
                Ok(task) => Ok(CallToolResponse::Task(task)),
                Err(failure) => reply::finish(Err(failure)),
            };
        }
        let outcome = this.call(&request.name, args, context).await;
        // Over /mcp, only an admin is told where the server keeps things.
        let outcome = if this.transport == Transport::Http && !this.caller.sees_paths() {
            outcome.map_err(|failure| failure.without_dir(this.core.projects_dir()))
        } else {
            outcome
        };
        reply::finish(outcome)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        tasks::get(&self.core, &request.task_id).map(rmcp::model::GetTaskResult::new)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::cancel(&self.core, &request.task_id)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        watch::spawn(
            self.core.clone(),
            context.peer,
            self.watch.clone(),
            self.stop.token().clone(),
        );
    }

    // MCP logging: see `watch.rs` on rmcp's deprecation.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.watch.set_level(request.level);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut listed = resources::list(&self.core);
        if self.allowed.fixtures {
            listed.extend(fixtures::resources());
        }
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut templates = resources::templates();
        if self.allowed.fixtures {
            templates.extend(fixtures::templates());
        }
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if self.allowed.fixtures && fixtures::is_resource(&request.uri) {
            return fixtures::read(&request.uri).map(Into::into);
        }
        let uri = resources::Uri::parse(&request.uri)?;
        let contents = resources::read(&self.core, uri).await?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // The fixtures never change: a subscription to one is kept by
        // nobody, and says so by succeeding.
        if self.allowed.fixtures && fixtures::is_resource(&request.uri) {
            return fixtures::read(&request.uri).map(|_| ());
        }
        let uri = resources::Uri::parse(&request.uri)?;
        let seen = resources::subscribable(&self.core, uri.clone()).await?;
        self.watch.subscribe(uri, seen);
        Ok(())
    }

    /// `subscriptions/listen` (stateless era): the resources of quire it
    /// names that parse (`quire://sessions/…`), and the list's changes.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| resources::Uri::parse(uri).is_ok_and(|u| u.session().is_some()))
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let accepted = context.accepted().clone();
        let follows = Arc::new(watch::Watch::default());
        for given in accepted.resource_subscriptions.iter().flatten() {
            let uri = resources::Uri::parse(given)?;
            let seen = resources::subscribable(&self.core, uri.clone())
                .await
                .ok()
                .flatten();
            follows.subscribe(uri, seen);
        }
        let sink = watch::Sink::Listen {
            sink: context.sink().clone(),
            list_changed: accepted.resources_list_changed == Some(true),
        };
        tokio::select! {
            () = watch::run(self.core.clone(), sink, follows) => {}
            () = context.cancelled() => {}
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.allowed.fixtures && fixtures::is_resource(&request.uri) {
            return Ok(());
        }
        let uri = resources::Uri::parse(&request.uri)?;
        self.watch.unsubscribe(&uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut listed = prompts::list();
        if self.allowed.fixtures {
            listed.extend(fixtures::prompts());
        }
        Ok(ListPromptsResult::with_all_items(listed))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if self.allowed.fixtures && fixtures::is_prompt(&request.name) {
            return fixtures::prompt(
                &request.name,
                request.arguments.as_ref(),
                request.input_responses.as_ref(),
            );
        }
        prompts::get(&self.core, &request.name, &request.arguments, self.active()).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let completion = prompts::complete(&self.core, &request, self.active()).await?;
        Ok(CompleteResult::new(completion))
    }
}

/// The question a client puts to its person before engines that need
/// approval run: `engines` names them and what they run.
fn approval_question(engines: &str) -> rmcp::model::InputRequiredResult {
    let question = serde_json::json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": format!(
                "An agent asks quire to run {engines}, which needs your approval. Allow it this once?"
            ),
            "requestedSchema": {
                "type": "object",
                "properties": {
                    APPROVE: {
                        "type": "boolean",
                        "title": "Run it",
                        "description": "Run this pipeline now (only this call)",
                    },
                },
                "required": [APPROVE],
            },
        },
    });
    let mut requests = rmcp::model::InputRequests::new();
    if let Ok(request) = serde_json::from_value(question) {
        requests.insert(APPROVE.to_owned(), request);
    }
    rmcp::model::InputRequiredResult::from_input_requests(requests)
}

/// A length in image pixels, to a hundredth (finer says nothing to a
/// model and costs tokens).
fn pixels(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Returns once the client has handled the notifications sent before, so
/// that the result which follows cannot overtake them.
///
/// Over stdio a notification and a response can arrive in one read, and
/// the TypeScript SDK handles the notification in a microtask but the
/// response at once: the call settles first and its last progress
/// notifications are dropped as "unknown token". A client answers a ping
/// only after what came before it; so a ping, answered, is the proof. A
/// client that does not answer in [`SETTLE_DEADLINE`] gets the result
/// anyway. (Over `/mcp` each message is its own SSE event, read apart.)
async fn settle_notifications(ctx: &RequestContext<RoleServer>) {
    let ping = ServerRequest::PingRequest(Default::default());
    let _ = tokio::time::timeout(SETTLE_DEADLINE, ctx.peer.send_request(ping)).await;
}

/// `quire mcp stdio`: serves one connection on stdin/stdout until stdin
/// closes. `active` becomes the connection's active session.
pub async fn serve_stdio(
    core: Core,
    config: &crate::config::Config,
    active: Option<SessionId>,
    data_dir: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let mut handler = QuireMcp::new(core, Transport::Stdio, Allowed::from_config(config));
    if let Some(dir) = data_dir {
        handler = handler.lasting(LastingSessions::in_data_dir(dir));
    }
    if let Some(id) = active {
        handler.set_active(id);
    }
    // Pipes (how MCP clients spawn a server) are driven by the IO reactor;
    // anything else falls back to tokio's blocking stdin/stdout.
    let (read, write) = rmcp::transport::stdio_pipes();
    let mut transport = stdio::StdioTransport::new(read, write);
    if !config.mcp.conformance_fixtures {
        transport = transport.answering_tools_list(tools::LIST_JSON);
    }
    let running = match handler.serve(transport).await {
        Ok(running) => running,
        // The client went away before it said hello: nothing to do.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    running.waiting().await?;
    Ok(())
}
