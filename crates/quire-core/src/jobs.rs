//! Pipeline jobs: validated at start, queued per session (FIFO), run in the
//! background one page at a time, reported through events.
//!
//! Steps run in order over all the job's pages (every page through step 1,
//! then step 2, …). A step failing on a page is a `JobWarning` and the job
//! goes on; cancellation is checked between pages. Each step's edits to a
//! page are one labelled `Batch`, applied as the page is done; in history
//! the step's pages are one entry (see `history::Group`).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::StreamExt;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::Core;
use super::engines::{Engine, PageInput, PageOutcome, PageWork, Pictures, Step, page_image};
use super::events::{Event, JobStatus};
use super::session::SceneSnapshot;
use super::settings::{ApiKey, Provider};
use super::tm::Memory;
use quire_model::error::{CoreError, CoreResult};
use quire_model::finding::Finding;
use quire_model::finding::Severity;
use quire_model::history::Group;
use quire_model::ids::{JobId, NodeId, PageId, SessionId};
use quire_model::journal::Who;
use quire_model::op::Op;
use quire_model::workflow::{Overwrite, Writer};

/// What `start_pipeline` is asked to run: the one definition behind the
/// HTTP body, the MCP tool's arguments (flattened into them) and what an
/// attached TUI sends.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PipelineSpec {
    /// Engine ids or pipeline names (chapter), run in order.
    #[schemars(length(min = 1))]
    pub steps: Vec<String>,
    /// Pages, in this order (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<PageId>>,
    /// Only these text nodes; default pages: theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<NodeId>>,
    /// BCP 47; default: the project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// For translated nodes without a font.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_font: Option<String>,
    /// Which `[providers.<id>]` llm-translate uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// untranslated (default), also unreviewed machine work, or all but
    /// final.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<Overwrite>,
}

/// Who is starting a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// A person approved it in the TUI (after seeing each engine's command).
    Person,
    /// The person at an MCP client approved this call (asked through an
    /// input-required round, after seeing the engine and its command).
    Client,
    /// An HTTP or MCP client: engines that require approval are refused
    /// unless `engines.allow_unattended` is set.
    Unattended,
}

pub(crate) struct Job {
    pub id: JobId,
    pub session: SessionId,
    steps: Vec<Arc<dyn Engine>>,
    pages: Vec<PageId>,
    spec: PipelineSpec,
    provider: Option<(String, Provider)>,
    /// Who started it: its engines' edits are signed with the name.
    user: Option<String>,
    /// The agent's client, when an agent started it.
    client: Option<String>,
    /// And the MCP session it started it through.
    mcp_session: Option<String>,
    cancelled: AtomicBool,
    /// Fires on cancel: a running engine is stopped at once (a command
    /// engine's process group is killed), not only between pages.
    cancel: CancellationToken,
    running: AtomicBool,
}

/// What [`Core::page_blobs`] read for an engine.
struct PageBlobs {
    image: Option<Vec<u8>>,
    mask: Option<Vec<u8>>,
    text_mask: Option<Vec<u8>>,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<Arc<Job>>,
    /// A worker task is draining this queue.
    worker: bool,
}

#[derive(Default)]
struct State {
    queues: HashMap<SessionId, Queue>,
    /// Jobs queued or running.
    live: HashMap<JobId, Arc<Job>>,
}

/// The job queues of a core.
#[derive(Default)]
pub(crate) struct Jobs {
    // Held to queue, dequeue or cancel; never across an await.
    state: Mutex<State>,
}

impl Jobs {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Core {
    /// Checks `spec` completely, queues the job and returns its id at once;
    /// the job runs in the background (on the current tokio runtime).
    pub async fn start_pipeline(
        &self,
        session: SessionId,
        spec: PipelineSpec,
        approval: Approval,
    ) -> CoreResult<JobId> {
        let snapshot = self.scene(session).await?;
        // The project's target language unless the pipeline names one.
        let mut spec = spec;
        if spec.target_language.is_none() {
            spec.target_language = snapshot.scene.project.target_language.clone();
        }
        if let Some(tag) = &spec.target_language {
            quire_model::lang::check_tag("targetLanguage", tag)?;
        }
        if spec.steps.is_empty() {
            return Err(CoreError::InvalidInput(
                "a pipeline needs at least one step".into(),
            ));
        }
        let registry = self.registry();
        // A named pipeline stands for its steps (an engine's id wins).
        let presets = &self.config().pipelines;
        spec.steps = spec
            .steps
            .iter()
            .flat_map(|id| match presets.get(id) {
                Some(preset) if registry.get(id).is_none() => preset.steps.clone(),
                _ => vec![id.clone()],
            })
            .collect();
        let mut steps = Vec::with_capacity(spec.steps.len());
        for id in &spec.steps {
            let engine = registry.get(id).ok_or_else(|| {
                CoreError::InvalidInput(format!(
                    "unknown step `{id}` (engines: {}; pipelines: {})",
                    registry.ids().join(", "),
                    presets
                        .keys()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            steps.push(engine);
        }
        if let Some(nodes) = &spec.nodes {
            let text_node = |id: &NodeId| {
                snapshot.scene.pages.iter().any(|p| {
                    p.nodes.iter().any(|n| {
                        n.id == *id && matches!(n.kind, quire_model::scene::NodeKind::Text { .. })
                    })
                })
            };
            if let Some(missing) = nodes.iter().find(|n| !text_node(n)) {
                return Err(CoreError::InvalidInput(format!(
                    "unknown text node id {missing} (not in the scene)"
                )));
            }
            if spec.pages.is_none() {
                spec.pages = Some(
                    snapshot
                        .scene
                        .pages
                        .iter()
                        .filter(|p| p.nodes.iter().any(|n| nodes.contains(&n.id)))
                        .map(|p| p.id)
                        .collect(),
                );
            }
        }
        let pages = match &spec.pages {
            Some(pages) => {
                if let Some(missing) = pages.iter().find(|p| snapshot.scene.page(**p).is_none()) {
                    return Err(CoreError::InvalidInput(format!(
                        "unknown page id {missing} (not in the scene)"
                    )));
                }
                pages.clone()
            }
            None => snapshot.scene.pages.iter().map(|p| p.id).collect(),
        };
        let allow_unattended = self.config().allow_unattended;
        if approval == Approval::Unattended
            && !allow_unattended
            && let Some(engine) = steps.iter().find(|e| e.info().requires_approval)
        {
            let info = engine.info();
            return Err(CoreError::ApprovalRequired(format!(
                "engine `{}` runs `{}` and needs a person's approval in the TUI; \
                 set engines.allow_unattended = true to allow it from HTTP or MCP",
                info.id,
                info.command.as_deref().unwrap_or("a program")
            )));
        }
        let provider = match steps.iter().find(|e| e.needs().provider) {
            Some(engine) => {
                if spec
                    .target_language
                    .as_deref()
                    .is_none_or(|t| t.trim().is_empty())
                {
                    return Err(CoreError::InvalidInput(format!(
                        "{} needs targetLanguage (give it, or set the project's with UpdateProject)",
                        engine.info().id
                    )));
                }
                Some(self.provider(spec.provider.as_deref())?)
            }
            None => None,
        };
        let job = Arc::new(Job {
            id: JobId::new(),
            session,
            steps,
            pages,
            spec,
            provider,
            user: self.user().map(str::to_owned),
            client: self.agent.as_deref().map(str::to_owned),
            mcp_session: self.agent_session.as_deref().map(str::to_owned),
            cancelled: AtomicBool::new(false),
            cancel: CancellationToken::new(),
            running: AtomicBool::new(false),
        });
        let spawn_worker = {
            let mut state = self.inner.jobs.lock();
            self.inner.bus.publish(Event::JobStarted {
                id: job.id,
                session_id: session,
                steps: job.spec.steps.clone(),
                total_pages: job.pages.len(),
                started_by: Who::of(job.user.as_deref(), job.client.as_deref(), None),
            });
            state.live.insert(job.id, job.clone());
            let queue = state.queues.entry(session).or_default();
            queue.pending.push_back(job.clone());
            !std::mem::replace(&mut queue.worker, true)
        };
        if spawn_worker {
            let core = self.clone();
            tokio::spawn(async move { core.drain_queue(session).await });
        }
        Ok(job.id)
    }

    /// The provider for `llm-translate`: the one named, else the only one,
    /// else the one called `default`.
    fn provider(&self, name: Option<&str>) -> CoreResult<(String, Provider)> {
        let providers = &self.config().providers;
        let pick = match name {
            Some(name) => providers.get_key_value(name),
            None if providers.len() == 1 => providers.iter().next(),
            None => providers.get_key_value("default"),
        };
        let pick = pick.map(|(k, v)| match &v.api_key {
            ApiKey::None | ApiKey::Key(_) => Ok((k.clone(), v.clone())),
            ApiKey::Unresolved(why) => Err(CoreError::InvalidInput(format!(
                "provider `{k}` cannot be used: {why}"
            ))),
        });
        pick.transpose()?.ok_or_else(|| {
            CoreError::InvalidInput(match (name, providers.len()) {
                (Some(name), _) => format!("unknown provider `{name}`"),
                (None, 0) => "llm-translate needs a provider: configure [providers.<id>] with base_url and model".into(),
                (None, _) => "several providers are configured: name one with `provider`, or call one `default`".into(),
            })
        })
    }

    /// Cancels a queued or running job. `Ok(false)` when it had already
    /// finished. A queued job ends at once; a running one after its
    /// current page.
    pub fn cancel_job(&self, id: JobId) -> CoreResult<bool> {
        let mut state = self.inner.jobs.lock();
        let Some(job) = state.live.get(&id).cloned() else {
            return match self.inner.bus.job(id) {
                Some(_) => Ok(false),
                None => Err(CoreError::not_found("job", id)),
            };
        };
        job.cancelled.store(true, Ordering::SeqCst);
        job.cancel.cancel();
        if !job.running.load(Ordering::SeqCst) {
            if let Some(queue) = state.queues.get_mut(&job.session) {
                queue.pending.retain(|j| j.id != id);
            }
            state.live.remove(&id);
            self.inner.bus.publish(Event::JobFinished {
                id,
                status: JobStatus::Cancelled,
                error: None,
            });
        }
        Ok(true)
    }

    /// Cancels every job of a session (when it closes).
    pub(crate) fn cancel_session_jobs(&self, session: SessionId) {
        let ids: Vec<JobId> = {
            let state = self.inner.jobs.lock();
            state
                .live
                .values()
                .filter(|j| j.session == session)
                .map(|j| j.id)
                .collect()
        };
        for id in ids {
            let _ = self.cancel_job(id);
        }
    }

    /// Jobs in flight and the last 100 finished, with their warnings.
    pub fn jobs(&self) -> Vec<super::events::JobSummary> {
        self.inner.bus.jobs()
    }

    pub fn job(&self, id: JobId) -> CoreResult<super::events::JobSummary> {
        self.inner
            .bus
            .job(id)
            .ok_or_else(|| CoreError::not_found("job", id))
    }

    async fn drain_queue(&self, session: SessionId) {
        loop {
            let job = {
                let mut state = self.inner.jobs.lock();
                let Some(queue) = state.queues.get_mut(&session) else {
                    return;
                };
                match queue.pending.pop_front() {
                    Some(job) => {
                        job.running.store(true, Ordering::SeqCst);
                        job
                    }
                    None => {
                        state.queues.remove(&session);
                        return;
                    }
                }
            };
            let (status, error) = self.run_job(&job).await;
            let mut state = self.inner.jobs.lock();
            state.live.remove(&job.id);
            self.inner.bus.publish(Event::JobFinished {
                id: job.id,
                status,
                error,
            });
        }
    }

    /// The page's pictures an engine reads ([`Pictures`]); why not, when
    /// one cannot be read.
    async fn page_blobs(
        &self,
        session: SessionId,
        pictures: Pictures,
        page: &quire_model::scene::Page,
    ) -> Result<PageBlobs, String> {
        let read = |hash: Option<&quire_model::hash::BlobHash>, what: &'static str| {
            let hash = hash.copied();
            async move {
                match hash {
                    Some(hash) => self
                        .read_blob(session, hash)
                        .await
                        .map(Some)
                        .map_err(|e| format!("cannot read the {what}: {e}")),
                    None => Ok(None),
                }
            }
        };
        let (image, mask, text_mask) = match pictures {
            Pictures::None => (None, None, None),
            Pictures::Image => (page_image(page), None, None),
            Pictures::RenderSources => quire_render::sources(page)
                .map_or((None, None, None), |(_, source, mask)| {
                    (Some(source), mask, None)
                }),
            Pictures::CleanSources => (
                quire_render::source(page).map(|(_, blob)| blob),
                quire_render::inpaint_mask(page),
                quire_render::cleaned::text_mask(page),
            ),
        };
        Ok(PageBlobs {
            image: read(image, "page image").await?,
            mask: read(mask, "inpaint mask").await?,
            text_mask: read(text_mask, "text mask").await?,
        })
    }

    async fn store_blobs(&self, session: SessionId, blobs: Vec<Vec<u8>>) -> CoreResult<()> {
        if blobs.is_empty() {
            return Ok(());
        }
        let store = self.blob_store(session)?;
        super::blocking(move || blobs.iter().try_for_each(|b| store.put(b).map(|_| ()))).await
    }

    /// What a step's engine asked to be gathered once: the scene and the
    /// translation memory.
    async fn gather(
        &self,
        job: &Job,
        needs: super::engines::Needs,
    ) -> Result<(Option<SceneSnapshot>, Option<Memory>), String> {
        let scene = if needs.scene {
            Some(self.scene(job.session).await.map_err(|e| e.to_string())?)
        } else {
            None
        };
        let memory = if needs.memory {
            let language = job.spec.target_language.as_deref();
            Some(
                self.memory(job.session, language)
                    .await
                    .map_err(|e| e.to_string())?,
            )
        } else {
            None
        };
        Ok((scene, memory))
    }

    /// What one page's outcome leaves: its findings said, its blobs
    /// stored, its ops applied as one batch labelled `label` (in the
    /// step's history group), each edit the policy dropped said. Whether
    /// anything was said.
    async fn settle(
        &self,
        job: &Job,
        (page, label): (PageId, String),
        outcome: PageOutcome,
        (writer, group): (&Writer, &Group),
        said: &(dyn Fn(Finding) + Sync),
    ) -> bool {
        let failed = |message: String| {
            Finding::new("engine-failed", Severity::Error, message).on(page, None)
        };
        let mut warned = false;
        for finding in outcome.warnings {
            warned = true;
            said(finding);
        }
        if let Err(e) = self.store_blobs(job.session, outcome.blobs).await {
            said(failed(format!("cannot store what the engine made: {e}")));
            return true;
        }
        if outcome.ops.is_empty() {
            return warned;
        }
        let batch = Op::Batch {
            ops: outcome.ops,
            label: Some(label),
        };
        match self
            .apply_engine(job.session, batch, writer.clone(), group.clone())
            .await
        {
            Ok(dropped) => {
                for d in dropped {
                    warned = true;
                    let message = format!("kept the translation: {}", d.why);
                    let kept = Finding::new("kept-translation", Severity::Warning, message);
                    said(kept.on(d.page, Some(d.node)));
                }
            }
            Err(e) => {
                warned = true;
                said(failed(format!("the engine's edits do not apply: {e}")));
            }
        }
        warned
    }

    /// What `work` makes of one page of `job`, from the page as it is now.
    async fn compute(
        &self,
        job: &Job,
        work: &dyn PageWork,
        pictures: Pictures,
        page_id: PageId,
    ) -> Computed {
        if job.cancelled.load(Ordering::SeqCst) {
            return Computed::Cancelled;
        }
        let snapshot = match self.scene(job.session).await {
            Ok(s) => s,
            Err(e) => return Computed::Fatal(e.to_string()),
        };
        let Some(page) = snapshot.scene.page(page_id) else {
            return Computed::Removed;
        };
        let blobs = match self.page_blobs(job.session, pictures, page).await {
            Ok(blobs) => blobs,
            Err(message) => return Computed::Done(Err(message)),
        };
        let input = PageInput {
            page,
            image: blobs.image.as_deref(),
            mask: blobs.mask.as_deref(),
            text_mask: blobs.text_mask.as_deref(),
        };
        Computed::Done(work.page(input).await)
    }

    async fn run_job(&self, job: &Job) -> (JobStatus, Option<String>) {
        let total_steps = job.steps.len();
        let total_pages = job.pages.len();
        let mut warned = false;
        let progress = |step_index: usize, engine: &dyn Engine, page: usize| {
            let done = step_index * total_pages + page;
            let all = total_steps * total_pages;
            let overall_percent = if all == 0 {
                100.0
            } else {
                (done as f64 * 1000.0 / all as f64).round() / 10.0
            };
            self.inner.bus.publish(Event::JobProgress {
                job_id: job.id,
                step: engine.info().id.clone(),
                step_index,
                total_steps,
                page,
                total_pages,
                overall_percent,
            });
        };
        let warn = |page_index: usize, engine: &dyn Engine, finding: Finding| {
            self.inner.bus.publish(Event::JobWarning {
                job_id: job.id,
                page_index,
                total_pages,
                step_id: engine.info().id.clone(),
                finding,
            });
        };
        let failed = |page: PageId, message: String| {
            Finding::new("engine-failed", Severity::Error, message).on(page, None)
        };
        let provider = job.provider.as_ref().map(|(id, p)| (id.as_str(), p));
        let overwrite = job.spec.overwrite.unwrap_or_default();
        // Every step with the settings of the job's start, a reload or not.
        let config = self.config();
        for (step_index, engine) in job.steps.iter().enumerate() {
            let engine = engine.as_ref();
            let id = &engine.info().id;
            progress(step_index, engine, 0);
            // The step's pages join one history entry.
            let group = Group {
                key: format!("{}/{step_index}", job.id),
                what: id.clone(),
                pages: 1,
            };
            let writer = Writer::Engine {
                id: id.clone(),
                overwrite,
                user: job.user.clone(),
                client: job.client.clone(),
                session: job.mcp_session.clone(),
            };
            let needs = engine.needs();
            let (scene, memory) = match self.gather(job, needs).await {
                Ok(gathered) => gathered,
                Err(e) => return (JobStatus::Failed, Some(e)),
            };
            let step = Step {
                target_language: job.spec.target_language.as_deref(),
                system_prompt: job.spec.system_prompt.as_deref(),
                default_font: job.spec.default_font.as_deref(),
                overwrite,
                nodes: job.spec.nodes.as_deref(),
                scene: scene.as_ref().map(|s| &s.scene),
                memory,
                provider,
                http: needs.provider.then(|| self.http()),
                config: &config,
                fonts: &self.inner.fonts,
                backends: &self.inner.backends,
            };
            let work = match engine.prepare(step) {
                Ok(work) => work,
                Err(e) => return (JobStatus::Failed, Some(format!("{id}: {e}"))),
            };
            let work = &*work;
            let at_once = at_once(needs, work);
            if let Some(finding) = work.before() {
                warned |= finding.severity != Severity::Info;
                warn(0, engine, finding);
            }
            let computed = futures_util::stream::iter(job.pages.iter().copied().enumerate())
                .map(|(page_index, page_id)| async move {
                    (
                        page_index,
                        page_id,
                        self.compute(job, work, needs.pictures, page_id).await,
                    )
                })
                .buffered(at_once);
            let mut computed = std::pin::pin!(computed);
            loop {
                let next = tokio::select! {
                    next = computed.next() => next,
                    // Dropping the engines' futures stops what they run.
                    () = job.cancel.cancelled() => return (JobStatus::Cancelled, None),
                };
                let Some((page_index, page_id, outcome)) = next else {
                    break;
                };
                let said = |finding: Finding| warn(page_index, engine, finding);
                let label = format!("{} · page {}", id, page_index + 1);
                warned |= match outcome {
                    Computed::Cancelled => return (JobStatus::Cancelled, None),
                    Computed::Fatal(e) => return (JobStatus::Failed, Some(e)),
                    Computed::Removed => {
                        let gone = format!("page {} was removed", page_index + 1);
                        said(Finding::new("page-removed", Severity::Warning, gone));
                        true
                    }
                    Computed::Done(Ok(outcome)) => {
                        let at = (page_id, label);
                        self.settle(job, at, outcome, (&writer, &group), &said)
                            .await
                    }
                    Computed::Done(Err(message)) => {
                        if let Some(fatal) = work.fatal() {
                            return (JobStatus::Failed, Some(format!("{id}: {fatal}")));
                        }
                        said(failed(page_id, message));
                        true
                    }
                };
                progress(step_index, engine, page_index + 1);
            }
            // Said, but no problem: the job's status stays as it is.
            if let Some(summary) = work.summary() {
                let last = job.pages.len().saturating_sub(1);
                warn(
                    last,
                    engine,
                    Finding::new("summary", Severity::Info, summary),
                );
            }
        }
        if warned {
            (JobStatus::CompletedWithErrors, None)
        } else {
            (JobStatus::Completed, None)
        }
    }
}

/// How many pages of a step are worked on at once: those an engine says
/// stand alone a few at a time (one per core, or what its models on a
/// server take; their results settle in page order), the others one after
/// another.
fn at_once(needs: super::engines::Needs, work: &dyn PageWork) -> usize {
    if needs.parallel {
        work.at_once().unwrap_or_else(super::engines::pages_at_once)
    } else {
        1
    }
}

/// What became of one page of a step before it settles.
enum Computed {
    /// The job was cancelled before the page began.
    Cancelled,
    /// The session cannot be read: the job fails.
    Fatal(String),
    /// The page is gone.
    Removed,
    Done(Result<PageOutcome, String>),
}
