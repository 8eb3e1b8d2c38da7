//! The MCP frontend (rmcp): the workspace tools, served over streamable
//! HTTP at `/mcp` (on the HTTP listener, behind its guard) and over stdio
//! (`quire mcp stdio`); `tui.rs` is the other MCP server, `quire mcp tui`,
//! bridged to one shared TUI over its socket (no core behind it).
//!
//! Errors follow `05-mcp.md`: everything a model can correct (arguments
//! that do not fit, no project open, an unknown id, anything the core
//! rejects) is a tool execution error, and nothing was changed; only an
//! unknown tool is a JSON-RPC error (see `reply.rs`).

mod import;
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

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, ErrorData, GetPromptRequestParams, GetPromptResponse, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig,
    ServerRequest, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::{CancellationToken, DropGuard};

use self::reply::{Failure, Outcome, ToolError, ok, parse};
use self::tools::*;
use crate::core::events::{Event, JobProgress};
use crate::core::glossary::{GlossaryFormat, GlossaryImport};
use crate::core::ids::{JobId, SessionId};
use crate::core::jobs::{Approval, PipelineSpec};
use crate::core::paths;
use crate::core::scene::{NodeKind, TextState};
use crate::core::storage::SnapshotFile;
use crate::core::translations::{TranslationFormat, TranslationImport};
use crate::core::workflow::Writer;
use crate::core::{Core, CoreError};
use crate::wire::{self, Cancelled, Closed, Epoch};

/// Largest export returned inline (base64 in an embedded resource).
pub const INLINE_EXPORT_LIMIT: usize = 16 << 20;
/// How long a result waits for the client to answer the ping that shows
/// it has handled the notifications before it.
const SETTLE_DEADLINE: Duration = Duration::from_secs(2);
/// How long a stateless-era client may keep `tools/list` (the tools change
/// only with the binary).
const TOOLS_TTL: Duration = Duration::from_secs(3600);
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
}

impl Allowed {
    pub fn from_config(config: &crate::config::Config) -> Self {
        Allowed {
            any_path: config.mcp.allow_any_path,
            item_bytes: config.server.max_body_bytes.get(),
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
    /// Whether the request's client can ask its person to approve an
    /// engine, or has (see [`Asking`]).
    asking: Asking,
    /// The session this connection last opened.
    active: Arc<Mutex<Option<SessionId>>>,
    /// Built once per process (see [`tools::all`]).
    tools: Arc<[Tool]>,
    /// The log level and resource subscriptions of this connection.
    watch: Arc<watch::Watch>,
    /// Ends the connection's watch task when the last clone of this
    /// handler is dropped (the connection has ended).
    stop: Arc<DropGuard>,
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
            },
            active: Arc::new(Mutex::new(None)),
            tools: tools::all(),
            watch: Arc::new(watch::Watch::default()),
            stop: Arc::new(CancellationToken::new().drop_guard()),
        }
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
        QuireMcp {
            era: Era::of(ctx),
            writer: Writer::Agent { client },
            ..self.clone()
        }
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
        match tool {
            ToolName::OpenProject => self.open_project(parse(args)?).await,
            ToolName::CloseProject => {
                let a: SessionArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                self.core.close_session(id).await?;
                ok(&Closed { closed: id })
            }
            ToolName::Apply => {
                let a: ApplyArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                ok(&self.core.apply_as(id, a.op, self.writer.clone()).await?)
            }
            ToolName::Undo | ToolName::Redo => {
                let a: SessionArgs = parse(args)?;
                let id = self.session(a.session_id)?;
                let step = if tool == ToolName::Undo {
                    self.core.undo(id).await?
                } else {
                    self.core.redo(id).await?
                };
                ok(&Epoch::from(step))
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
                let mut snapshot = self.core.scene(id).await?;
                if let Some(pages) = a.pages {
                    if let Some(missing) = pages.iter().find(|p| snapshot.scene.page(**p).is_none())
                    {
                        return Err(CoreError::not_found("page", missing).into());
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
        }
    }

    /// Whether a path may name any place (stdio, or `mcp.allow_any_path`).
    fn any_path(&self) -> bool {
        self.transport == Transport::Stdio || self.allowed.any_path
    }

    async fn view_page(&self, a: ViewPageArgs) -> Outcome<CallToolResult> {
        let id = self.session(a.session_id)?;
        let max_side = a.max_side.unwrap_or(DEFAULT_VIEW_SIDE);
        let (page, picture) = self.core.page_picture(id, a.page_id, max_side).await?;
        let scale = picture.scale;
        let nodes = page
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Text {
                    text, translation, ..
                } => Some(ViewNode {
                    id: n.id,
                    text: text.clone(),
                    translation: translation.clone(),
                    state: n.kind.state().unwrap_or(TextState::Initial),
                    bounds: PixelBox {
                        x: pixels(n.transform.x * scale),
                        y: pixels(n.transform.y * scale),
                        width: pixels(n.transform.width * scale),
                        height: pixels(n.transform.height * scale),
                        rotation: n.transform.rotation,
                    },
                    visible: n.visible,
                }),
                _ => None,
            })
            .collect();
        let view = PageView {
            page_id: page.id,
            name: page.name,
            image: ViewImage {
                width: picture.width,
                height: picture.height,
                mime_type: picture.mime_type.to_owned(),
                scale,
            },
            nodes,
        };
        let mut result = ok(&view)?;
        let data = base64::engine::general_purpose::STANDARD.encode(&picture.bytes);
        result
            .content
            .push(ContentBlock::image(data, picture.mime_type));
        Ok(result)
    }

    async fn import_pages(&self, a: ImportPagesArgs) -> Outcome<CallToolResult> {
        let id = self.session(a.session_id)?;
        if let Some(lang) = &a.source_lang {
            crate::core::lang::check_tag("sourceLang", lang)?;
        }
        let limit = self.allowed.item_bytes;
        let mut sources = Vec::new();
        for given in a.files.unwrap_or_default() {
            let path = paths::resolve(&given, self.core.projects_dir(), self.any_path())?;
            sources.push(import::read_file(&path, limit).await?);
        }
        for item in a.items.unwrap_or_default() {
            sources.push(import::inline(item, limit)?);
        }
        ok(&self
            .core
            .import_pages(id, sources, a.source_lang.as_deref())
            .await?)
    }

    async fn import_translations(&self, a: ImportTranslationsArgs) -> Outcome<CallToolResult> {
        let id = self.session(a.session_id)?;
        let (content, named) = match (a.path, a.content) {
            (Some(given), None) => {
                let path = paths::resolve(&given, self.core.projects_dir(), self.any_path())?;
                let bytes = import::read_bytes(&path, self.allowed.item_bytes).await?;
                let content = String::from_utf8(bytes).map_err(|_| {
                    CoreError::InvalidInput(format!("{} is not UTF-8", path.display()))
                })?;
                (content, Some(given))
            }
            (None, Some(content)) => (content, None),
            _ => {
                let message = "invalid arguments: give path or content (one of them)";
                return Err(ToolError::new("invalid_arguments", message).into());
            }
        };
        // A glossary file by its name, or (inline) by its look: TBX is XML
        // with a <tbx> or <martif> root, CSV a first line naming columns.
        let glossary = match &named {
            Some(name) => GlossaryFormat::from_path(name),
            None => GlossaryFormat::sniff(&content),
        };
        if let Some(format) = glossary {
            let import = GlossaryImport { format, content };
            return ok(&self.core.import_glossary(id, import).await?);
        }
        let format = named
            .as_deref()
            .and_then(TranslationFormat::from_path)
            .unwrap_or_else(|| TranslationFormat::sniff(&content));
        let import = TranslationImport {
            format,
            content,
            force: a.force,
        };
        ok(&self.core.import_translations(id, import).await?)
    }

    async fn open_project(&self, a: OpenProjectArgs) -> Outcome<CallToolResult> {
        let path = paths::resolve(&a.path, self.core.projects_dir(), self.any_path())?;
        let is_archive = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("zip"));
        let s = match a.create_name {
            Some(name) => self.core.create_project(&path, &name).await?,
            None if is_archive => {
                let bytes = import::read_bytes(&path, u64::MAX).await?;
                self.core.import_managed_archive(bytes).await?
            }
            None => self.core.open_project(&path).await?,
        };
        self.set_active(s.id);
        ok(&Opened {
            session_id: s.id,
            name: s.name,
            path: s.path.display().to_string(),
        })
    }

    /// `quire_start_pipeline` for a client that declares the tasks
    /// extension: the job starts, and its task is the answer (`wait` is
    /// the client's to do, through `tasks/get`).
    async fn start_task(&self, args: Value) -> Outcome<rmcp::model::CreateTaskResult> {
        let a: StartPipelineArgs = parse(args)?;
        let id = self.session(a.session_id)?;
        let job = self.start_job(id, a.spec).await?;
        Ok(tasks::created(job))
    }

    /// Starts a pipeline as this request may: approved by the client's
    /// person, or asking them (see [`Asking`]), or unattended.
    async fn start_job(&self, id: SessionId, spec: PipelineSpec) -> Outcome<JobId> {
        let approval = match self.asking {
            Asking::Approved => Approval::Client,
            Asking::No | Asking::Can => Approval::Unattended,
        };
        let steps = spec.steps.clone();
        match self.core.start_pipeline(id, spec, approval).await {
            Err(CoreError::ApprovalRequired(_)) if self.asking == Asking::Can => {
                let gated: Vec<String> = self
                    .core
                    .engines()
                    .into_iter()
                    .filter(|e| e.requires_approval && steps.contains(&e.id))
                    .map(|e| match e.command {
                        Some(command) => format!("{} (runs `{command}`)", e.id),
                        None => e.id,
                    })
                    .collect();
                Err(Failure::Ask(Box::new(approval_question(&gated.join(", ")))))
            }
            started => Ok(started?),
        }
    }

    async fn start_pipeline(
        &self,
        a: StartPipelineArgs,
        ctx: RequestContext<RoleServer>,
    ) -> Outcome<CallToolResult> {
        let id = self.session(a.session_id)?;
        // Subscribe first so no event of the job can be missed.
        let mut events = self.core.subscribe(Some(self.core.events().seq()));
        let job = self.start_job(id, a.spec).await?;
        if !a.wait {
            return ok(&Started {
                started: wire::Started { job_id: job },
                status: None,
                warnings: None,
                error: None,
            });
        }
        let token = ctx.meta.get_progress_token();
        // Stateless era: the job's warnings come as log messages on this
        // call's own stream, at the level the request asked for (if any).
        let log_level = match self.era {
            Era::Stateless => ctx.meta.log_level(),
            Era::Handshake => None,
        };
        let limit = a
            .wait_timeout_secs
            .map_or(DEFAULT_WAIT, Duration::from_secs);
        let deadline = tokio::time::Instant::now() + limit;
        // MCP says progress MUST increase: a value equal to the last one
        // sent (a step boundary) is not sent again.
        let mut last_sent = f64::NEG_INFINITY;
        loop {
            let next = tokio::select! {
                next = events.next() => next,
                _ = tokio::time::sleep_until(deadline) => None,
                _ = ctx.ct.cancelled() => None,
            };
            let Some(envelope) = next else { break };
            if let Some(least) = log_level
                && let Some((of, level, data)) = watch::job_log(&envelope.event)
                && of == job
                && watch::reaches(level, least)
            {
                watch::tell(&ctx.peer, level, data).await;
            }
            if let Some(p) = JobProgress::of(&envelope.event, job) {
                if let Some(token) = &token
                    && p.overall_percent > last_sent
                {
                    last_sent = p.overall_percent;
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
        if last_sent > f64::NEG_INFINITY && self.transport == Transport::Stdio {
            settle_notifications(&ctx).await;
        }
        let summary = self.core.job(job)?;
        ok(&Started {
            started: wire::Started { job_id: job },
            status: Some(summary.status),
            warnings: Some(summary.warnings),
            error: summary.error,
        })
    }

    async fn export(&self, a: ExportArgs) -> Outcome<CallToolResult> {
        let id = self.session(a.session_id)?;
        if a.out_path.is_some() && self.transport != Transport::Stdio {
            return Err(CoreError::InvalidInput(
                "outPath is only available over stdio; over /mcp the export is returned inline"
                    .into(),
            )
            .into());
        }
        // Checked before the export is built: a refused path costs nothing.
        let out_path = match &a.out_path {
            Some(given) => {
                let p = paths::resolve(given, self.core.projects_dir(), true)?;
                paths::check_output(&p)?;
                Some(p)
            }
            None => None,
        };
        let format = a.spec.format;
        let export = self.core.export(id, a.spec).await?;
        let size = export.bytes.len() as u64;
        let too_big = export.bytes.len() > INLINE_EXPORT_LIMIT;
        // (where, whether an existing file there may be replaced): quire's
        // own exports directory is quire's to overwrite.
        let target = match (out_path, too_big) {
            (Some(path), _) => Some((path, a.overwrite)),
            (None, true) if self.transport == Transport::Stdio => Some((
                self.core
                    .projects_dir()
                    .join("exports")
                    .join(&export.file_name),
                true,
            )),
            (None, true) => {
                return Err(CoreError::InvalidInput(format!(
                    "the export is {} MiB, over the 16 MiB MCP limit; use the HTTP route POST /api/v1/projects/current/export",
                    size >> 20
                ))
                .into());
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
        if let Some((path, overwrite)) = target {
            paths::write_output_file(path.clone(), export.bytes, overwrite).await?;
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
        let mut result = ListToolsResult::with_all_items(self.tools.to_vec());
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
        let args = Value::Object(request.arguments.unwrap_or_default());
        let mut this = self.for_request(&context);
        this.asking = Asking::of(&context, request.input_responses.as_ref());
        let declares_tasks = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        if declares_tasks && ToolName::parse(&request.name) == Some(ToolName::StartPipeline) {
            return match this.start_task(args).await {
                Ok(task) => Ok(CallToolResponse::Task(task)),
                Err(failure) => reply::finish(Err(failure)),
            };
        }
        reply::finish(this.call(&request.name, args, context).await)
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
        Ok(ListResourcesResult::with_all_items(resources::list(
            &self.core,
        )))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = resources::Uri::parse(&request.uri)?;
        let contents = resources::read(&self.core, uri).await?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = resources::Uri::parse(&request.uri)?;
        let seen = resources::subscribable(&self.core, uri).await?;
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
            let seen = resources::subscribable(&self.core, uri)
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
        let uri = resources::Uri::parse(&request.uri)?;
        self.watch.unsubscribe(&uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
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
        .layer(axum::middleware::from_fn(json_rpc_errors))
}

/// Every refusal `/mcp` answers is a JSON-RPC error body, as a client of
/// the protocol reads it: a body that is not JSON is a parse error (400,
/// -32700) before it reaches rmcp, and rmcp's plain-text refusals (a wrong
/// `Content-Type` or `Accept`) keep their status with an invalid-request
/// error (-32600) carrying their text.
async fn json_rpc_errors(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
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
        use axum::extract::FromRequest;
        let (parts, body) = request.into_parts();
        let head = parts.clone();
        // Read under the server's `DefaultBodyLimit` (server.max_body_bytes).
        let request = axum::extract::Request::from_parts(parts, body);
        let bytes = match axum::body::Bytes::from_request(request, &()).await {
            Ok(bytes) => bytes,
            Err(e) => {
                return error(
                    e.status(),
                    -32600,
                    format!("Invalid Request: {}", e.body_text()),
                );
            }
        };
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
            return error(StatusCode::BAD_REQUEST, -32700, format!("Parse error: {e}"));
        }
        // rmcp would first ask for the `Mcp-Name` header these methods
        // have no use for in 2026-07-28, which misleads: say what to use.
        let stateless = head
            .headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28.as_str());
        let frame = stateless
            .then(|| serde_json::from_slice::<Frame>(&bytes).ok())
            .flatten();
        if let Some(frame) = frame
            && let Some(method @ ("resources/subscribe" | "resources/unsubscribe")) =
                frame.method.as_deref()
        {
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": frame.id,
                "error": {
                    "code": -32601,
                    "message": format!(
                        "{method} is not part of MCP 2026-07-28: use subscriptions/listen \
                         with resourceSubscriptions"
                    ),
                },
            });
            return (StatusCode::OK, axum::Json(body)).into_response();
        }
        axum::extract::Request::from_parts(head, axum::body::Body::from(bytes))
    } else {
        request
    };
    let response = next.run(request).await;
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

/// What `/mcp` reads of a frame itself: its method and id.
#[derive(serde::Deserialize)]
struct Frame {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    id: Option<Value>,
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
    // The HTTP guard has already checked Host and Origin; rmcp checks the
    // host again with the same list.
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
    // Origins are the guard's alone: it also admits this server's own
    // origin, which a fixed list given to rmcp could not name (`--port 0`).
    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .disable_allowed_origins();
    mcp_config.max_request_body_bytes =
        usize::try_from(server.max_body_bytes.get()).unwrap_or(usize::MAX);
    mcp_config.cancellation_token = stop;
    let allowed = Allowed::from_config(config);
    StreamableHttpService::new(
        move || Ok(QuireMcp::new(core.clone(), Transport::Http, allowed)),
        Default::default(),
        mcp_config,
    )
}

/// `quire mcp stdio`: serves one connection on stdin/stdout until stdin
/// closes. `active` becomes the connection's active session.
pub async fn serve_stdio(
    core: Core,
    config: &crate::config::Config,
    active: Option<SessionId>,
) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let handler = QuireMcp::new(core, Transport::Stdio, Allowed::from_config(config));
    if let Some(id) = active {
        handler.set_active(id);
    }
    // Pipes (how MCP clients spawn a server) are driven by the IO reactor;
    // anything else falls back to tokio's blocking stdin/stdout.
    let (read, write) = rmcp::transport::stdio_pipes();
    let transport = stdio::StdioTransport::new(read, write);
    let running = match handler.serve(transport).await {
        Ok(running) => running,
        // The client went away before it said hello: nothing to do.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    running.waiting().await?;
    Ok(())
}
