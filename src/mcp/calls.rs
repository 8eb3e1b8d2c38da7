//! The tools whose work is more than one core call: viewing and importing
//! pages, merging translations back, opening a project, starting a pipeline
//! (or a task) and exporting.

use std::time::Duration;

use base64::Engine as _;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ResourceContents};
use rmcp::service::RequestContext;
use serde_json::Value;

use super::reply::{Failure, Outcome, ToolError, ok, parse};
use super::tools::*;
use super::*;
use crate::config::schema::Role;
use crate::wire;
use quire_core::events::{Event, JobProgress};
use quire_core::glossary::GlossaryImport;
use quire_core::jobs::{Approval, PipelineSpec};
use quire_core::paths;
use quire_core::translations::TranslationImport;
use quire_formats::glossary::GlossaryFormat;
use quire_formats::units::TranslationFormat;
use quire_model::error::CoreError;
use quire_model::ids::{JobId, SessionId};
use quire_model::scene::{ImageRole, NodeKind, TextState};

impl QuireMcp {
    /// Whether a path may name any place (stdio, or `mcp.allow_any_path`).
    pub(super) fn any_path(&self) -> bool {
        self.transport == Transport::Stdio || self.allowed.any_path
    }

    pub(super) async fn view_page(&self, a: ViewPageArgs) -> Outcome<CallToolResult> {
        let id = self.session(a.session_id)?;
        let max_side = a.max_side.unwrap_or(DEFAULT_VIEW_SIDE);
        let role = match a.view.unwrap_or(ViewImageRole::Source) {
            ViewImageRole::Source => ImageRole::Source,
            ViewImageRole::Cleaned => ImageRole::Cleaned,
            ViewImageRole::Rendered => ImageRole::Rendered,
        };
        let regions = a.regions.unwrap_or(false);
        let (page, picture) = self
            .core
            .page_picture(id, a.page_id, role, max_side, regions)
            .await?;
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

    /// `quire_suggestions`: lists, or adds, votes, accepts or rejects
    /// and then lists; accepting and rejecting need `edit`.
    pub(super) async fn suggestions(&self, a: SuggestionsArgs) -> Outcome<CallToolResult> {
        use quire_core::suggestions::Action;
        let id = self.session(a.session_id)?;
        let missing = |what: &str| {
            let message = format!("invalid arguments: {what} is needed for this action");
            ToolError::new("invalid_arguments", message)
        };
        let which = || {
            a.suggestion_id
                .clone()
                .ok_or_else(|| missing("suggestionId"))
        };
        let action = match a.action {
            SuggestionAction::List => None,
            SuggestionAction::Add => Some(Action::Add {
                text: a.text.clone().ok_or_else(|| missing("text"))?,
            }),
            SuggestionAction::Vote => Some(Action::Vote {
                id: which()?,
                value: a.value.ok_or_else(|| missing("value"))?,
            }),
            SuggestionAction::Accept => Some(Action::Accept { id: which()? }),
            SuggestionAction::Reject => Some(Action::Reject { id: which()? }),
        };
        let mut epoch = None;
        if let Some(action) = action {
            if action.edits() {
                self.caller
                    .may(Role::Edit, "accepting or rejecting a suggestion")
                    .map_err(|why| ToolError::new("forbidden_role", why))?;
            }
            epoch = Some(self.core.suggest(id, a.node_id, action).await?.epoch);
        }
        let suggestions = self.core.suggestions(id, a.node_id).await?;
        ok(&SuggestionList { epoch, suggestions })
    }

    pub(super) async fn import_pages(&self, a: ImportPagesArgs) -> Outcome<CallToolResult> {
        let id = self.session(a.session_id)?;
        if let Some(lang) = &a.source_lang {
            quire_model::lang::check_tag("sourceLang", lang)?;
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

    pub(super) async fn import_translations(
        &self,
        a: ImportTranslationsArgs,
    ) -> Outcome<CallToolResult> {
        let id = self.session(a.session_id)?;
        let (content, named) = match (a.path, a.content) {
            (Some(given), None) => {
                let path = paths::resolve(&given, self.core.projects_dir(), self.any_path())?;
                let bytes = import::read_bytes(&path, self.allowed.item_bytes).await?;
                // A translation memory goes into the memory, not the session.
                if given.to_ascii_lowercase().ends_with(".tmx") {
                    return ok(&self.core.import_tmx(&given, bytes).await?);
                }
                let content = match TranslationFormat::from_path(&given) {
                    Some(format) => quire_formats::units::decode(format, &given, &bytes)?,
                    None => String::from_utf8(bytes).map_err(|_| {
                        CoreError::InvalidInput(format!("{} is not UTF-8", path.display()))
                    })?,
                };
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
            take: a.take,
        };
        ok(&self.core.import_translations(id, import).await?)
    }

    pub(super) async fn open_project(&self, a: OpenProjectArgs) -> Outcome<CallToolResult> {
        let path = paths::resolve(&a.path, self.core.projects_dir(), self.any_path())?;
        let is_archive = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("zip"));
        if a.create_name.is_some() || is_archive {
            self.caller
                .may(crate::config::schema::Role::Admin, "creating a project")
                .map_err(|why| ToolError::new("forbidden_role", why))?;
        }
        let s = match a.create_name {
            Some(name) => self.core.create_project(&path, &name).await?,
            None if is_archive => {
                let bytes = import::read_bytes(&path, u64::MAX).await?;
                self.core.import_managed_archive(bytes).await?
            }
            None => self.core.open_project(&path).await?,
        };
        self.set_active(s.id);
        if let Some(lasting) = &self.lasting {
            lasting.record(s.id, &s.path);
        }
        self.seen(&Opened {
            session_id: s.id,
            name: s.name,
            path: s.path.display().to_string(),
        })
    }

    /// `quire_start_pipeline` for a client that declares the tasks
    /// extension: the job starts, and its task is the answer (`wait` is
    /// the client's to do, through `tasks/get`).
    pub(super) async fn start_task(&self, args: Value) -> Outcome<rmcp::model::CreateTaskResult> {
        let a: StartPipelineArgs = parse(args)?;
        let id = self.session(a.session_id)?;
        let job = self.start_job(id, a.spec).await?;
        Ok(tasks::created(job))
    }

    /// Starts a pipeline as this request may: approved by the client's
    /// person, or asking them (see [`Asking`]), or unattended.
    pub(super) async fn start_job(&self, id: SessionId, spec: PipelineSpec) -> Outcome<JobId> {
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

    pub(super) async fn start_pipeline(
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

    pub(super) async fn export(&self, a: ExportArgs) -> Outcome<CallToolResult> {
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
        // Untranslated segments, said beside the result (a text block: the
        // output schema stays as it is).
        let note = export.untranslated.map(|u| ContentBlock::text(u.said()));
        if let Some((path, overwrite)) = target {
            paths::write_output_file(path.clone(), export.bytes, overwrite).await?;
            result.path = Some(path.display().to_string());
            let mut reply = ok(&result)?;
            reply.content.extend(note);
            return Ok(reply);
        }
        if format.is_text() {
            result.text = Some(String::from_utf8_lossy(&export.bytes).into_owned());
            let mut reply = ok(&result)?;
            reply.content.extend(note);
            return Ok(reply);
        }
        let mut reply = ok(&result)?;
        reply.content.extend(note);
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
