//! The core state service: the one owner of every project, scene, history
//! and event in the process. Frontends hold a [`Core`] clone and call it;
//! they never reach into sessions or storage themselves.
//!
//! - [`session`]: one open project: its scene, history and storage (the
//!   data model, the ops and their application are `quire-model`'s; the
//!   project directory and the blobs `quire-store`'s).
//! - [`events`]: the event bus with its ring and snapshots.
//! - [`engines`]: the pipeline engines, each with its settings; [`jobs`]
//!   runs them.
//!
//! What frontends call is async and never blocks a runtime worker: file
//! I/O (open, create, close, list, blobs) runs on tokio's blocking pool,
//! and `apply`, `undo`, `redo` and `scene` wait only for their own
//! durability (a heavy op goes to the blocking pool too). The same calls as
//! plain blocking functions are [`Core::blocking`], for threads that may
//! block (tests, benchmarks).

pub mod archive;
pub mod backup;
pub mod bases;
mod blocking;
pub mod cues;
pub mod engines;
pub mod events;
pub mod export;
pub mod find;
pub mod glossary;
pub mod import;
pub mod jobs;
pub mod journal;
pub mod matches;
pub mod memories;
pub mod paths;
pub mod picture;
pub mod projects;
pub mod session;
pub mod settings;
pub mod spelling;
pub mod suggestions;
pub mod tm;
pub mod translations;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use serde::Serialize;
use uuid::Uuid;

pub use self::blocking::Blocking;
use self::engines::settings::SettingsMap;
use self::engines::{EngineInfo, Registry};
use self::events::{Event, EventBus, SessionSummary, Subscription};
use self::session::{SceneSnapshot, Session, SessionSettings};
use self::settings::{CommandEngine, PipelinePreset, Provider};
use quire_model::error::{CoreError, CoreResult};
use quire_model::hash::BlobHash;
use quire_model::history::Group;
use quire_model::ids::{PageId, ProjectId, SessionId};
use quire_model::lang::Languages;
use quire_model::op::Op;
use quire_model::workflow::{Dropped, Writer};
use quire_store::storage::lock::Holder;

/// What the core needs from the configuration.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    pub projects_dir: PathBuf,
    pub session: SessionSettings,
    /// The mode this process runs, recorded in project locks.
    pub mode: String,
    /// Command engines by id.
    pub commands: BTreeMap<String, CommandEngine>,
    /// Whether unattended clients (HTTP, MCP) may run the command engines
    /// that require approval.
    pub allow_unattended: bool,
    /// Translation providers for `llm-translate`.
    pub providers: BTreeMap<String, Provider>,
    /// Models on inference servers (`[backends.NAME]`), which page
    /// engines' model keys name.
    pub backends: BTreeMap<String, engines::backends::Backend>,
    /// Each built-in engine's settings, by table (`[qa]`, `[render]`, …).
    pub settings: SettingsMap,
    /// Named pipelines: the built-in `chapter` and `[pipelines.<name>]`.
    pub pipelines: BTreeMap<String, PipelinePreset>,
    /// The most pixels an image may have (`limits.max_image_pixels`),
    /// checked from its header before anything decodes it.
    pub max_image_pixels: u64,
    /// Where imported translation memories (TMX) are kept: beside the
    /// projects directory, `memory`.
    pub memory_dir: PathBuf,
}

impl CoreConfig {
    /// A configuration with every setting but these at its default.
    pub fn new(projects_dir: PathBuf, session: SessionSettings, mode: &str) -> CoreConfig {
        let memory_dir = projects_dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| projects_dir.join(".memory"), |p| p.join("memory"));
        CoreConfig {
            memory_dir,
            projects_dir,
            session,
            mode: mode.to_owned(),
            commands: BTreeMap::new(),
            allow_unattended: false,
            providers: BTreeMap::new(),
            backends: BTreeMap::new(),
            settings: SettingsMap::defaults(),
            pipelines: settings::built_in_presets(),
            max_image_pixels: quire_formats::images::DEFAULT_MAX_PIXELS,
        }
    }
}

/// The result of an applied op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema, serde::Deserialize)]
pub struct ApplyResult {
    pub epoch: u64,
    /// Ids of the pages and nodes the op added, in op order.
    pub created: Vec<Uuid>,
}

/// What an undo or redo did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema, serde::Deserialize)]
pub struct StepResult {
    /// The epoch after it.
    pub epoch: u64,
    /// The history entry, e.g. `pseudo-translate · 600 pages`.
    pub label: String,
    /// How many ops it applied.
    pub ops: usize,
    /// Who made the change it undid or redid, when the server knows.
    pub by: Option<String>,
}

/// An open project that cannot be written (see [`Core::unwritable`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwritable {
    pub session_id: SessionId,
    pub name: String,
    pub why: String,
}

/// A managed project in the projects directory.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectEntry {
    pub id: ProjectId,
    pub name: String,
    /// Where it is on the server: absent for a caller who is not an
    /// admin (read back as empty).
    #[serde(default)]
    pub path: PathBuf,
    pub updated_at_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
}

impl ProjectEntry {
    /// A managed project by id or by name (case-insensitive).
    pub fn find(projects: &[ProjectEntry], target: &str) -> Option<ProjectId> {
        if let Ok(id) = target.parse::<ProjectId>()
            && projects.iter().any(|p| p.id == id)
        {
            return Some(id);
        }
        projects
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(target))
            .map(|p| p.id)
    }
}

/// A cheap, cloneable handle on the process's one core, acting for one of
/// the server's users or for nobody in particular ([`Core::acting_for`]).
#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
    /// The user whose changes these are: the ops it applies, the steps it
    /// undoes or redoes and the jobs it starts are signed with the name.
    user: Option<Arc<str>>,
    /// The user's role, when it is below `review`: what they may not do
    /// to a segment's review state is refused naming it
    /// ([`Core::below_review`]).
    below_review: Option<Arc<str>>,
    /// The agent (its MCP client) this handle acts as: its undo and redo
    /// take back only its own steps ([`Core::as_agent`]).
    agent: Option<Arc<str>>,
    /// The agent's MCP session, when it has one: its undo takes back only
    /// what it made through that session.
    agent_session: Option<Arc<str>>,
}

struct Inner {
    /// Replaced whole when engine settings are reloaded
    /// ([`Core::reload_engines`]); a job keeps the one it started with.
    config: RwLock<Arc<CoreConfig>>,
    /// The engines of `config`, rebuilt with it.
    registry: RwLock<Arc<Registry>>,
    /// `config`'s directories, which a reload never changes.
    projects_dir: PathBuf,
    memory_dir: PathBuf,
    bus: Arc<EventBus>,
    jobs: jobs::Jobs,
    /// Shared by engines that call HTTP services (connection reuse). Built
    /// on first use: loading TLS roots costs milliseconds that a process
    /// which never calls a provider (e.g. a short `mcp stdio`) should not pay.
    http: std::sync::OnceLock<reqwest::Client>,
    /// Backends' and providers' gates and counters, for the process.
    backends: engines::backends::Backends,
    /// The last pictures made of page images (`picture.rs`): an agent
    /// looks at a page again after each edit, and its image is the same.
    pictures: picture::Recent,
    /// Thumbnails of image blobs (`blob_picture`), for page strips.
    thumbnails: picture::Recent,
    /// Permits for decoding images at once (one per core), made when
    /// first asked for: counting the cores reads the cgroup's files, a
    /// tenth of `quire mcp stdio`'s start.
    decoding: std::sync::OnceLock<tokio::sync::Semaphore>,
    /// The fonts the `render` engine and page exports set text in.
    fonts: Arc<quire_render::fonts::Fonts>,
    // Quick lookups only; never held across I/O or an await.
    workspace: Mutex<Workspace>,
    // Serializes open, create and close, which do I/O; lookups don't wait.
    lifecycle: Mutex<()>,
    /// The HTTP URL this process serves, recorded in project locks so a
    /// second process can suggest `quire attach URL`.
    /// The HTTP URL this process serves, and whether it serves MCP at
    /// `/mcp` there.
    advertised_url: Mutex<Option<(String, bool)>>,
    /// The memory the desk's matches and concordance look in, kept
    /// between calls (`matches.rs`).
    desk: Mutex<matches::Cache>,
}

#[derive(Default)]
struct Workspace {
    /// Open sessions, least recently made current first.
    sessions: Vec<Arc<Session>>,
    current: Option<SessionId>,
}

impl Workspace {
    fn find(&self, id: SessionId) -> Option<&Arc<Session>> {
        self.sessions.iter().find(|s| s.id == id)
    }

    fn by_path(&self, path: &Path) -> Option<&Arc<Session>> {
        self.sessions.iter().find(|s| s.path == path)
    }

    /// Makes `id` current and most recent.
    fn activate(&mut self, id: SessionId) {
        if let Some(i) = self.sessions.iter().position(|s| s.id == id) {
            let session = self.sessions.remove(i);
            self.sessions.push(session);
        }
        self.current = Some(id);
    }
}

impl Core {
    pub fn new(config: CoreConfig) -> Core {
        Core {
            inner: Arc::new(Inner {
                registry: RwLock::new(Arc::new(Registry::new(&config.commands))),
                fonts: Arc::new(quire_render::fonts::Fonts::new(
                    quire_render::RenderConfig::clone(&config.settings.get()),
                )),
                projects_dir: config.projects_dir.clone(),
                memory_dir: config.memory_dir.clone(),
                config: RwLock::new(Arc::new(config)),
                bus: Arc::new(EventBus::new()),
                jobs: jobs::Jobs::default(),
                http: std::sync::OnceLock::new(),
                backends: engines::backends::Backends::default(),
                pictures: picture::Recent::new(picture::RECENT_PAGES),
                thumbnails: picture::Recent::new(picture::RECENT_THUMBNAILS),
                decoding: std::sync::OnceLock::new(),
                workspace: Mutex::new(Workspace::default()),
                lifecycle: Mutex::new(()),
                advertised_url: Mutex::new(None),
                desk: Mutex::new(matches::Cache::default()),
            }),
            user: None,
            below_review: None,
            agent: None,
            agent_session: None,
        }
    }

    /// This core acting for `user` (a name from `[[server.users]]`):
    /// what it changes is recorded as that user's.
    pub fn acting_for(&self, user: Option<&str>) -> Core {
        Core {
            inner: self.inner.clone(),
            user: user.map(Arc::from),
            below_review: self.below_review.clone(),
            agent: self.agent.clone(),
            agent_session: self.agent_session.clone(),
        }
    }

    /// This handle for an agent (its MCP client, `name version`, and the
    /// MCP session it speaks through, when it has one): its undo and redo
    /// take back only the steps it made (spec 10, "Undo is per person"),
    /// through that session when it has one, never its person's.
    pub fn as_agent(&self, client: Option<&str>, session: Option<&str>) -> Core {
        Core {
            agent: client.map(Arc::from),
            agent_session: session.map(Arc::from),
            ..self.clone()
        }
    }

    /// This handle for a user whose role (`role`, e.g. `edit`) is below
    /// `review` (spec 10, "Review states"): marking a segment reviewed or
    /// final, or changing a final one, is refused with
    /// `CoreError::Forbidden` naming the role; what they import or add is
    /// at most `translated`. `None`: they may (the default).
    pub fn below_review(&self, role: Option<&str>) -> Core {
        Core {
            inner: self.inner.clone(),
            below_review: role.map(Arc::from),
            ..self.clone()
        }
    }

    /// The role set by [`Core::below_review`], if any.
    pub fn role_below_review(&self) -> Option<&str> {
        self.below_review.as_deref()
    }

    /// The user this handle acts for.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The writer of this handle's edits: its agent's (an agent's
    /// handle, [`Core::as_agent`]), else a person's, signed with its user.
    fn person(&self) -> Writer {
        let user = self.user().map(str::to_owned);
        let below_review = self.role_below_review().map(str::to_owned);
        match &self.agent {
            Some(client) => Writer::Agent {
                client: client.to_string(),
                user,
                below_review,
                session: self.agent_session.as_deref().map(str::to_owned),
            },
            None => Writer::Person { user, below_review },
        }
    }

    fn workspace(&self) -> MutexGuard<'_, Workspace> {
        self.inner
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn lifecycle(&self) -> MutexGuard<'_, ()> {
        self.inner
            .lifecycle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The configuration as it is now (a reload may replace it).
    pub fn config(&self) -> Arc<CoreConfig> {
        self.inner
            .config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Takes the engine and provider settings of a reloaded configuration:
    /// the command engines and `allow_unattended`, the providers, the
    /// pipelines and the engines' settings (the caller has kept the tables
    /// a reload does not take at their running values:
    /// [`SettingsMap::reload_over`]). The rest of `config` is not read:
    /// directories, sessions and limits change only with a restart. A job
    /// already running finishes with the settings it started with.
    pub fn reload_engines(&self, config: CoreConfig) {
        let mut next = CoreConfig::clone(&self.config());
        next.commands = config.commands;
        next.allow_unattended = config.allow_unattended;
        next.providers = config.providers;
        next.pipelines = config.pipelines;
        next.settings = config.settings;
        let registry = Arc::new(Registry::new(&next.commands));
        let mut held = self
            .inner
            .config
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        *self
            .inner
            .registry
            .write()
            .unwrap_or_else(PoisonError::into_inner) = registry;
        *held = Arc::new(next);
    }

    pub fn projects_dir(&self) -> &Path {
        &self.inner.projects_dir
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        self.inner.http.get_or_init(|| {
            install_tls_provider();
            reqwest::Client::new()
        })
    }

    pub(crate) fn registry(&self) -> Arc<Registry> {
        self.inner
            .registry
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The pipeline engines, built-in and configured, then the named
    /// pipelines ([`engines::with_pipelines`]).
    pub fn engines(&self) -> Vec<EngineInfo> {
        engines::with_pipelines(self.registry().list(), &self.config().pipelines)
    }

    pub fn events(&self) -> &Arc<EventBus> {
        &self.inner.bus
    }

    /// Events after `after` (or a `Snapshot` first), see [`EventBus::subscribe`].
    pub fn subscribe(&self, after: Option<u64>) -> Subscription {
        self.inner.bus.subscribe(after)
    }

    fn holder(&self) -> Holder {
        let served = self
            .inner
            .advertised_url
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Holder {
            pid: std::process::id(),
            mode: self.config().mode.clone(),
            mcp: served
                .as_ref()
                .and_then(|(url, mcp)| mcp.then(|| format!("{url}/mcp"))),
            url: served.map(|(url, _)| url),
        }
    }

    /// Records the URL this process serves (and whether MCP is at `/mcp`
    /// there); projects opened from now on name it in their lock file.
    /// Call before opening projects.
    pub fn set_advertised_url(&self, url: &str, mcp: bool) {
        *self
            .inner
            .advertised_url
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((url.to_owned(), mcp));
    }

    // ---- workspace -------------------------------------------------------

    /// The blocking API: the same calls for threads that may block (tests,
    /// benchmarks, a launcher before its runtime runs). Frontends use the
    /// async methods, which run this on tokio's blocking pool: nothing a
    /// frontend calls can put an fsync, a lock wait or a thread join on a
    /// runtime worker.
    pub fn blocking(&self) -> Blocking<'_> {
        Blocking(self)
    }

    /// Opens the project directory at `path`. If it is already open here,
    /// returns its session; either way it becomes current.
    pub async fn open_project(&self, path: &Path) -> CoreResult<SessionSummary> {
        let (core, path) = (self.clone(), path.to_path_buf());
        blocking(move || core.blocking().open_project(&path)).await
    }

    /// Opens the project directory at `path` as session `id`, which an
    /// earlier process gave out (`quire mcp stdio` keeps a session id
    /// valid across its processes: `05-mcp.md`). If the project is open
    /// here already, returns its session, whatever its id.
    pub async fn reopen_session(&self, path: &Path, id: SessionId) -> CoreResult<SessionSummary> {
        let (core, path) = (self.clone(), path.to_path_buf());
        blocking(move || core.blocking().reopen_session(&path, id)).await
    }

    /// Creates a project named `name` at `path`, which must not exist or be
    /// an empty directory, and opens it.
    pub async fn create_project(&self, path: &Path, name: &str) -> CoreResult<SessionSummary> {
        let (core, path, name) = (self.clone(), path.to_path_buf(), name.to_owned());
        blocking(move || core.blocking().create_project(&path, &name)).await
    }

    /// Creates a managed project in the projects directory and opens it.
    pub async fn create_managed_project(&self, name: &str) -> CoreResult<SessionSummary> {
        self.create_managed_project_with(name, Languages::default())
            .await
    }

    /// [`Core::create_managed_project`] with its languages set from the
    /// start (checked before anything is created).
    pub async fn create_managed_project_with(
        &self,
        name: &str,
        languages: Languages,
    ) -> CoreResult<SessionSummary> {
        let (core, name) = (self.clone(), name.to_owned());
        blocking(move || {
            core.blocking()
                .create_managed_project_with(&name, &languages)
        })
        .await
    }

    /// Opens a managed project by id and makes it current.
    pub async fn open_managed_project(&self, id: ProjectId) -> CoreResult<SessionSummary> {
        let core = self.clone();
        blocking(move || core.blocking().open_managed_project(id)).await
    }

    /// Opens a managed project by id without making it current (see
    /// [`Blocking::open_managed_session`]).
    pub async fn open_managed_session(&self, id: ProjectId) -> CoreResult<SessionSummary> {
        let core = self.clone();
        blocking(move || core.blocking().open_managed_session(id)).await
    }

    /// Managed projects, most recently updated first.
    pub async fn list_projects(&self) -> CoreResult<Vec<ProjectEntry>> {
        let core = self.clone();
        blocking(move || core.blocking().list_projects()).await
    }

    /// Open sessions, as the published events describe them.
    pub fn sessions(&self) -> Vec<SessionSummary> {
        self.inner.bus.sessions()
    }

    pub fn session(&self, id: SessionId) -> CoreResult<SessionSummary> {
        self.sessions()
            .into_iter()
            .find(|s| s.id == id)
            .ok_or_else(|| CoreError::not_found("session", id))
    }

    pub fn current_session(&self) -> Option<SessionId> {
        self.workspace().current
    }

    /// `id` when given, else the current session, else `NoSession`.
    pub fn resolve(&self, id: Option<SessionId>) -> CoreResult<SessionId> {
        match id {
            Some(id) => self
                .workspace()
                .find(id)
                .map(|s| s.id)
                .ok_or_else(|| CoreError::not_found("session", id)),
            None => self.current_session().ok_or(CoreError::NoSession),
        }
    }

    pub fn make_current(&self, id: SessionId) -> CoreResult<()> {
        let mut workspace = self.workspace();
        if workspace.find(id).is_none() {
            return Err(CoreError::not_found("session", id));
        }
        let changed = workspace.current != Some(id);
        workspace.activate(id);
        if changed {
            self.inner.bus.publish(Event::CurrentSessionChanged {
                session_id: Some(id),
            });
        }
        Ok(())
    }

    /// Saves and closes a session: a final snapshot, then the lock is
    /// released.
    pub async fn close_session(&self, id: SessionId) -> CoreResult<()> {
        let core = self.clone();
        blocking(move || core.blocking().close_session(id)).await
    }

    /// Closes every session; used at shutdown. Returns the errors of
    /// sessions that could not be saved.
    pub async fn close_all(&self) -> Vec<(SessionId, CoreError)> {
        let core = self.clone();
        blocking(move || Ok(core.blocking().close_all()))
            .await
            .unwrap_or_else(|e| vec![(SessionId::new(), e)])
    }

    fn open_session(&self, id: SessionId) -> CoreResult<Arc<Session>> {
        self.workspace()
            .find(id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("session", id))
    }

    // ---- scene and history ----------------------------------------------

    /// Applies a person's `op`; returns once it is durable. A heavy op (a
    /// big batch) or a session busy with one applies on a blocking thread,
    /// so neither holds up a runtime worker.
    pub async fn apply(&self, id: SessionId, op: Op) -> CoreResult<ApplyResult> {
        self.apply_as(id, op, self.person()).await
    }

    /// Applies `op` as `writer` wrote it (a person, or an agent over MCP),
    /// as [`Core::apply`] does.
    pub async fn apply_as(&self, id: SessionId, op: Op, writer: Writer) -> CoreResult<ApplyResult> {
        let session = self.open_session(id)?;
        let submitted = match session.try_submit(op, &writer) {
            Ok(submitted) => submitted?,
            Err(op) => blocking(move || session.submit(*op, &writer, None)).await?,
        };
        let pending = submitted
            .pending
            .ok_or_else(|| CoreError::internal("a person's or an agent's change was dropped"))?;
        let (epoch, created) = pending.durable().await?;
        Ok(ApplyResult { epoch, created })
    }

    /// An engine's edits (part `group` of a job's history entry): applied
    /// as far as `writer`'s policy allows; returns what was dropped.
    pub(crate) async fn apply_engine(
        &self,
        id: SessionId,
        op: Op,
        writer: Writer,
        group: Group,
    ) -> CoreResult<Vec<Dropped>> {
        let session = self.open_session(id)?;
        let submitted = blocking(move || session.submit(op, &writer, Some(group))).await?;
        if let Some(pending) = submitted.pending {
            pending.durable().await?;
        }
        Ok(submitted.dropped)
    }

    /// The scene and its epoch, once everything in it is durable.
    pub async fn scene(&self, id: SessionId) -> CoreResult<SceneSnapshot> {
        let session = self.open_session(id)?;
        let snapshot = match session.try_snapshot() {
            Some(snapshot) => snapshot?,
            None => {
                let session = session.clone();
                blocking(move || session.snapshot()).await?
            }
        };
        session.wait_durable(snapshot.epoch).await?;
        Ok(snapshot)
    }

    /// The scene with only `pages` (in scene order) when given; a page id
    /// the scene does not have is `not_found`.
    pub async fn scene_pages(
        &self,
        id: SessionId,
        pages: Option<&[PageId]>,
    ) -> CoreResult<SceneSnapshot> {
        let mut snapshot = self.scene(id).await?;
        if let Some(pages) = pages {
            if let Some(missing) = pages.iter().find(|p| snapshot.scene.page(**p).is_none()) {
                return Err(CoreError::not_found("page", missing));
            }
            snapshot.scene.pages.retain(|p| pages.contains(&p.id));
        }
        Ok(snapshot)
    }

    /// The bytes every open project's undo and redo stacks hold (for
    /// `/metrics`).
    pub async fn history_bytes(&self) -> u64 {
        let sessions: Vec<Arc<Session>> = self.workspace().sessions.to_vec();
        blocking(move || Ok(sessions.iter().map(|s| s.history_bytes()).sum()))
            .await
            .unwrap_or(0)
    }

    /// The open projects that cannot be written now (a full disk), each
    /// after one more try to reopen its writer: name, session and why,
    /// without a path (a health check may be public).
    pub async fn unwritable(&self) -> Vec<Unwritable> {
        let failed: Vec<Arc<Session>> = self
            .workspace()
            .sessions
            .iter()
            .filter(|s| s.unwritable().is_some())
            .cloned()
            .collect();
        let mut out = Vec::new();
        for session in failed {
            let check = session.clone();
            let Err(e) = blocking(move || check.check_writable()).await else {
                continue;
            };
            let why = match e.io_kind() {
                Some(kind) if kind != std::io::ErrorKind::Other => {
                    std::io::Error::from(kind).to_string()
                }
                _ => "its log cannot be written".to_owned(),
            };
            out.push(Unwritable {
                session_id: session.id,
                name: session.name(),
                why,
            });
        }
        out
    }

    // ---- blobs ----------------------------------------------------------

    /// Stores bytes in the session's project; returns the hash.
    pub async fn put_blob(&self, id: SessionId, bytes: Vec<u8>) -> CoreResult<BlobHash> {
        let store = self.blob_store(id)?;
        blocking(move || store.put(&bytes)).await
    }

    /// The blob store of a session's project.
    pub fn blob_store(&self, id: SessionId) -> CoreResult<quire_store::blobs::BlobStore> {
        Ok(self.open_session(id)?.blobs().clone())
    }

    /// Reads and verifies a blob.
    pub async fn read_blob(&self, id: SessionId, hash: BlobHash) -> CoreResult<Vec<u8>> {
        let store = self.blob_store(id)?;
        blocking(move || store.get(&hash)).await
    }
}

/// Runs blocking core work (file I/O, a heavy apply, waiting for a
/// session's lock) on tokio's blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> CoreResult<T> + Send + 'static,
) -> CoreResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CoreError::internal(format!("a blocking task failed: {e}")))?
}

/// Makes rustls's `ring` provider the process's TLS provider, once; every
/// HTTP client quire builds (an engine's provider, `quire attach`) calls it
/// first. reqwest is built without a provider of its own (its default,
/// aws-lc-rs, is a large C build); a provider installed earlier by the
/// embedding program is kept.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error only says another provider is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closing releases the project even while a read elsewhere still
    /// holds the session (a blocking task that has answered but not yet
    /// dropped it): it opens again at once, here or in another process.
    #[test]
    fn a_closed_project_opens_again_while_its_session_is_still_held() {
        let dir = tempfile::tempdir().unwrap();
        let settings = SessionSettings {
            durability: quire_store::Durability::Batch,
            snapshot_every_ops: 100,
            undo_limit: 100,
            max_op_bytes: 1 << 20,
            history_max_bytes: 1 << 20,
        };
        let core = Core::new(CoreConfig::new(
            dir.path().join("projects"),
            settings,
            "test",
        ));
        let path = dir.path().join("p");
        let opened = core.blocking().create_project(&path, "P").unwrap();
        let held = core.open_session(opened.id).unwrap();
        core.blocking().close_session(opened.id).unwrap();
        let again = core.blocking().open_project(&path).unwrap();
        assert_ne!(again.id, opened.id);
        drop(held);
    }
}
