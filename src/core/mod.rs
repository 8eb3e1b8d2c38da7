//! The core state service: the one owner of every project, scene, history
//! and event in the process. Frontends hold a [`Core`] clone and call it;
//! they never reach into sessions or storage themselves.
//!
//! - [`scene`] and [`op`]: the data model and the changes to it;
//!   [`apply`] applies an op and computes its inverse (pure).
//! - [`session`]: one open project: scene, [`history`], storage.
//! - [`storage`]: the project directory: snapshot, op log, lock; [`blobs`].
//! - [`events`]: the event bus with its ring and snapshots.
//!
//! Blocking calls (open, create, close, blobs) do file I/O and belong on a
//! blocking thread in async code; `apply`, `undo`, `redo` and `scene` are
//! async and wait only for their own durability.

pub mod apply;
pub mod blobs;
pub mod engines;
pub mod error;
pub mod events;
pub mod export;
pub mod history;
pub mod ids;
pub mod import;
pub mod jobs;
pub mod lang;
pub mod limits;
pub mod objects;
pub mod op;
pub mod paths;
pub mod scene;
pub mod session;
pub mod storage;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::UNIX_EPOCH;

use serde::Serialize;
use uuid::Uuid;

use self::blobs::BlobHash;
use self::engines::{EngineInfo, Registry};
pub use self::error::{CoreError, CoreResult};
use self::events::{Event, EventBus, SessionSummary, Subscription};
use self::ids::{ProjectId, SessionId};
use self::op::Op;
use self::scene::Scene;
use self::session::{Pending, SceneSnapshot, Session, SessionSettings};
use self::storage::lock::Holder;
use self::storage::{ProjectFiles, ProjectToml, SnapshotFile, fsync_dir, now_rfc3339};
use crate::config::Config;
use crate::config::dirs::DataPaths;
use crate::config::schema::{EnginesConfig, ProviderConfig};

/// What the core needs from the configuration.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    pub projects_dir: PathBuf,
    pub session: SessionSettings,
    /// The mode this process runs, recorded in project locks.
    pub mode: String,
    /// Command engines and whether unattended clients may run them.
    pub engines: EnginesConfig,
    /// Translation providers for `llm-translate`.
    pub providers: BTreeMap<String, ProviderConfig>,
}

impl CoreConfig {
    pub fn new(config: &Config, paths: &DataPaths, mode: &str) -> Self {
        CoreConfig {
            projects_dir: paths.projects_dir.clone(),
            session: SessionSettings {
                durability: config.storage.durability,
                snapshot_every_ops: config.storage.snapshot_every_ops,
                undo_limit: config.history.undo_limit,
                max_op_bytes: config.server.max_body_bytes,
            },
            mode: mode.to_owned(),
            engines: config.engines.clone(),
            providers: config.providers.clone(),
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

/// A managed project in the projects directory.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectEntry {
    pub id: ProjectId,
    pub name: String,
    pub path: PathBuf,
    pub updated_at_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
}

/// A cheap, cloneable handle on the process's one core.
#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
}

struct Inner {
    config: CoreConfig,
    bus: Arc<EventBus>,
    registry: Registry,
    jobs: jobs::Jobs,
    /// Shared by engines that call HTTP services (connection reuse). Built
    /// on first use: loading TLS roots costs milliseconds that a process
    /// which never calls a provider (e.g. a short `mcp stdio`) should not pay.
    http: std::sync::OnceLock<reqwest::Client>,
    // Quick lookups only; never held across I/O or an await.
    workspace: Mutex<Workspace>,
    // Serializes open, create and close, which do I/O; lookups don't wait.
    lifecycle: Mutex<()>,
    /// The HTTP URL this process serves, recorded in project locks so a
    /// second process can suggest `quire attach URL`.
    advertised_url: Mutex<Option<String>>,
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
                registry: Registry::new(&config.engines.commands),
                config,
                bus: Arc::new(EventBus::new()),
                jobs: jobs::Jobs::default(),
                http: std::sync::OnceLock::new(),
                workspace: Mutex::new(Workspace::default()),
                lifecycle: Mutex::new(()),
                advertised_url: Mutex::new(None),
            }),
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

    pub fn config(&self) -> &CoreConfig {
        &self.inner.config
    }

    pub fn projects_dir(&self) -> &Path {
        &self.inner.config.projects_dir
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        self.inner.http.get_or_init(reqwest::Client::new)
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The pipeline engines: built-in and configured.
    pub fn engines(&self) -> Vec<EngineInfo> {
        self.inner.registry.list()
    }

    pub fn events(&self) -> &Arc<EventBus> {
        &self.inner.bus
    }

    /// Events after `after` (or a `Snapshot` first), see [`EventBus::subscribe`].
    pub fn subscribe(&self, after: Option<u64>) -> Subscription {
        self.inner.bus.subscribe(after)
    }

    fn holder(&self) -> Holder {
        Holder {
            pid: std::process::id(),
            mode: self.inner.config.mode.clone(),
            url: self
                .inner
                .advertised_url
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// Records the URL this process serves; projects opened from now on
    /// name it in their lock file. Call before opening projects.
    pub fn set_advertised_url(&self, url: &str) {
        *self
            .inner
            .advertised_url
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(url.to_owned());
    }

    // ---- workspace -------------------------------------------------------

    /// Opens the project directory at `path` (blocking). If it is already
    /// open here, returns its session; either way it becomes current.
    pub fn open_project(&self, path: &Path) -> CoreResult<SessionSummary> {
        let _guard = self.lifecycle();
        let dir = std::fs::canonicalize(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                CoreError::not_found("project directory", path.display())
            }
            _ => CoreError::io(path.display(), e),
        })?;
        if !dir.is_dir() {
            return Err(CoreError::InvalidInput(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let existing = self.workspace().by_path(&dir).map(|s| s.id);
        if let Some(id) = existing {
            self.make_current(id)?;
            return self.session(id);
        }
        let session = Session::open(
            &dir,
            self.inner.config.session.clone(),
            &self.holder(),
            self.inner.bus.clone(),
        )?;
        let id = session.id;
        let mut workspace = self.workspace();
        self.inner.bus.publish(Event::SessionOpened {
            session_id: id,
            project_id: session.project_id,
            name: session.name(),
            path: session.path.clone(),
            epoch: session.epoch(),
        });
        workspace.sessions.push(Arc::new(session));
        workspace.activate(id);
        self.inner.bus.publish(Event::CurrentSessionChanged {
            session_id: Some(id),
        });
        drop(workspace);
        self.session(id)
    }

    /// Creates a project named `name` at `path`, which must not exist or be
    /// an empty directory, and opens it (blocking).
    pub fn create_project(&self, path: &Path, name: &str) -> CoreResult<SessionSummary> {
        let name = check_project_name(name)?;
        {
            let _guard = self.lifecycle();
            init_project_dir(path, &name)?;
        }
        self.open_project(path)
    }

    /// Creates a managed project in the projects directory (blocking).
    pub fn create_managed_project(&self, name: &str) -> CoreResult<SessionSummary> {
        let name = check_project_name(name)?;
        let root = self.projects_dir().to_path_buf();
        std::fs::create_dir_all(&root).map_err(|e| CoreError::io(root.display(), e))?;
        let path = {
            let _guard = self.lifecycle();
            let slug = slug(&name);
            let mut n = 1;
            let path = loop {
                let candidate = if n == 1 {
                    root.join(&slug)
                } else {
                    root.join(format!("{slug}-{n}"))
                };
                if !candidate.exists() {
                    break candidate;
                }
                n += 1;
            };
            init_project_dir(&path, &name)?;
            path
        };
        self.open_project(&path)
    }

    /// Opens a managed project by id and makes it current (blocking).
    pub fn open_managed_project(&self, id: ProjectId) -> CoreResult<SessionSummary> {
        let entry = self
            .list_projects()?
            .into_iter()
            .find(|p| p.id == id)
            .ok_or_else(|| CoreError::not_found("project", id))?;
        self.open_project(&entry.path)
    }

    /// Managed projects (directories with a `project.toml` in the projects
    /// directory), most recently updated first.
    pub fn list_projects(&self) -> CoreResult<Vec<ProjectEntry>> {
        list_projects_in(self.projects_dir(), &self.sessions())
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

    /// Saves and closes a session (blocking): a final snapshot, then the
    /// lock is released.
    pub fn close_session(&self, id: SessionId) -> CoreResult<()> {
        self.cancel_session_jobs(id);
        let _guard = self.lifecycle();
        let session = self
            .workspace()
            .find(id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("session", id))?;
        let result = session.close();
        let mut workspace = self.workspace();
        workspace.sessions.retain(|s| s.id != id);
        self.inner
            .bus
            .publish(Event::SessionClosed { session_id: id });
        if workspace.current == Some(id) {
            let next = workspace.sessions.last().map(|s| s.id);
            workspace.current = next;
            self.inner
                .bus
                .publish(Event::CurrentSessionChanged { session_id: next });
        }
        drop(workspace);
        drop(session);
        result
    }

    /// Closes every session (blocking); used at shutdown. Returns the
    /// errors of sessions that could not be saved.
    pub fn close_all(&self) -> Vec<(SessionId, CoreError)> {
        let ids: Vec<SessionId> = self.workspace().sessions.iter().map(|s| s.id).collect();
        ids.into_iter()
            .filter_map(|id| self.close_session(id).err().map(|e| (id, e)))
            .collect()
    }

    fn open_session(&self, id: SessionId) -> CoreResult<Arc<Session>> {
        self.workspace()
            .find(id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("session", id))
    }

    // ---- scene and history ----------------------------------------------

    /// Applies `op` in memory and queues it; await the result to know it is
    /// durable. For callers that pipeline many ops.
    pub fn submit(&self, id: SessionId, op: Op) -> CoreResult<Pending> {
        self.open_session(id)?.submit(op)
    }

    /// Undoes in memory and queues it (see [`Core::submit`]); `None` at the
    /// boundary.
    pub fn submit_undo(&self, id: SessionId) -> CoreResult<Option<Pending>> {
        self.open_session(id)?.undo()
    }

    /// Redoes in memory and queues it (see [`Core::submit`]).
    pub fn submit_redo(&self, id: SessionId) -> CoreResult<Option<Pending>> {
        self.open_session(id)?.redo()
    }

    /// Applies `op`; returns once it is durable. A heavy op (a big batch)
    /// or a session busy with one applies on a blocking thread, so neither
    /// holds up a runtime worker.
    pub async fn apply(&self, id: SessionId, op: Op) -> CoreResult<ApplyResult> {
        let session = self.open_session(id)?;
        let pending = match session.try_submit(op) {
            Ok(pending) => pending?,
            Err(op) => blocking(move || session.submit(*op)).await?,
        };
        let (epoch, created) = pending.durable().await?;
        Ok(ApplyResult { epoch, created })
    }

    /// Undoes the latest change: its new epoch, or `None` at the boundary.
    pub async fn undo(&self, id: SessionId) -> CoreResult<Option<u64>> {
        self.step(id, true).await
    }

    /// Redoes the latest undone change: its new epoch, or `None`.
    pub async fn redo(&self, id: SessionId) -> CoreResult<Option<u64>> {
        self.step(id, false).await
    }

    async fn step(&self, id: SessionId, undo: bool) -> CoreResult<Option<u64>> {
        let session = self.open_session(id)?;
        let pending = match session.try_step(undo) {
            Some(pending) => pending?,
            None => blocking(move || if undo { session.undo() } else { session.redo() }).await?,
        };
        match pending {
            Some(p) => Ok(Some(p.durable().await?.0)),
            None => Ok(None),
        }
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

    // ---- blobs ----------------------------------------------------------

    /// Stores bytes in the session's project (blocking); returns the hash.
    pub fn put_blob(&self, id: SessionId, bytes: &[u8]) -> CoreResult<BlobHash> {
        self.open_session(id)?.blobs().put(bytes)
    }

    /// Reads and verifies a blob (blocking).
    pub fn get_blob(&self, id: SessionId, hash: &BlobHash) -> CoreResult<Vec<u8>> {
        self.open_session(id)?.blobs().get(hash)
    }

    /// The blob store of a session's project.
    pub fn blob_store(&self, id: SessionId) -> CoreResult<blobs::BlobStore> {
        Ok(self.open_session(id)?.blobs().clone())
    }

    /// Reads and verifies a blob on a blocking thread.
    pub async fn read_blob(&self, id: SessionId, hash: BlobHash) -> CoreResult<Vec<u8>> {
        let store = self.blob_store(id)?;
        tokio::task::spawn_blocking(move || store.get(&hash))
            .await
            .map_err(|e| CoreError::Io(format!("blob reader failed: {e}")))?
    }
}

/// Runs blocking core work (file I/O, a heavy apply, waiting for a
/// session's lock) on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> CoreResult<T> + Send + 'static,
) -> CoreResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CoreError::Io(format!("a blocking task failed: {e}")))?
}

/// A new project's name, trimmed, under the one name rule.
fn check_project_name(name: &str) -> CoreResult<String> {
    let trimmed = name.trim();
    limits::check_name("a project name", trimmed).map_err(CoreError::InvalidInput)?;
    Ok(trimmed.to_owned())
}

/// A directory name for a project name: lowercase letters, digits and `-`.
pub(crate) fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() {
        "project".to_owned()
    } else {
        out
    }
}

/// Writes a new, empty project. `project.toml` is written last: a directory
/// without it is not a project, so a crash here leaves no half project.
fn init_project_dir(path: &Path, name: &str) -> CoreResult<()> {
    if path.exists() {
        let empty = std::fs::read_dir(path)
            .map_err(|e| CoreError::io(path.display(), e))?
            .next()
            .is_none();
        if !empty {
            return Err(CoreError::Conflict(format!(
                "{} already exists and is not empty",
                path.display()
            )));
        }
    }
    storage::private_dir(path)?;
    storage::tighten(path);
    storage::private_dir(&path.join("blobs"))?;
    let files = ProjectFiles::new(path.to_path_buf());
    let now = now_rfc3339();
    let snapshot = SnapshotFile {
        epoch: 0,
        scene: Scene::new(name, &now),
    };
    storage::write_atomic(&files.scene_json(), &snapshot.encode()?)?;
    storage::write_private(&files.ops_log(), b"")?;
    ProjectToml {
        id: ProjectId::new(),
        name: name.to_owned(),
        created_at: now,
        format_version: storage::FORMAT_VERSION,
        epoch: Some(0),
    }
    .write(&files.project_toml())?;
    fsync_dir(path)?;
    if let Some(parent) = path.parent() {
        fsync_dir(parent)?;
    }
    Ok(())
}

/// Managed projects under `root`; unreadable entries are skipped with a
/// warning so one broken project does not hide the others.
pub fn list_projects_in(root: &Path, open: &[SessionSummary]) -> CoreResult<Vec<ProjectEntry>> {
    let read = match std::fs::read_dir(root) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CoreError::io(root.display(), e)),
    };
    let mut out = Vec::new();
    for entry in read.flatten() {
        let dir = entry.path();
        let files = ProjectFiles::new(dir.clone());
        if !files.project_toml().is_file() {
            continue;
        }
        let toml = match ProjectToml::read(&files.project_toml()) {
            Ok(toml) => toml,
            Err(e) => {
                tracing::warn!("skipping {}: {e}", dir.display());
                continue;
            }
        };
        let canonical = std::fs::canonicalize(&dir).unwrap_or(dir.clone());
        if !paths::is_managed(&canonical, root) {
            tracing::warn!(
                "skipping {}: it links to {}, outside the projects directory",
                dir.display(),
                canonical.display()
            );
            continue;
        }
        let session = open.iter().find(|s| s.path == canonical);
        let updated_at_ms = [files.scene_json(), files.ops_log(), files.project_toml()]
            .iter()
            .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
            .filter_map(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
            .max()
            .unwrap_or(0);
        out.push(ProjectEntry {
            id: toml.id,
            name: session.map_or(toml.name, |s| s.name.clone()),
            path: canonical,
            updated_at_ms,
            session_id: session.map(|s| s.id),
        });
    }
    out.sort_by(|a, b| {
        b.updated_at_ms
            .cmp(&a.updated_at_ms)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_directory_safe() {
        assert_eq!(slug("My Manga: Vol. 1"), "my-manga-vol-1");
        assert_eq!(slug("???"), "project");
        assert_eq!(slug("Ünïcödé"), "ünïcödé");
    }

    #[test]
    fn names_are_checked() {
        assert!(check_project_name("  ").is_err());
        assert!(check_project_name("a\nb").is_err());
        assert_eq!(check_project_name(" ok ").unwrap(), "ok");
    }
}
