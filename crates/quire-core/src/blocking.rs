//! The blocking API of the core ([`Core::blocking`]): workspace changes
//! (open, create, close), pipelined submits and blob I/O as plain calls
//! that may block their thread. The async methods of [`Core`] run these on
//! tokio's blocking pool; this is for threads that may block.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::events::{Event, SessionSummary};
use super::projects::{check_project_name, init_project_dir, list_projects_in, slug};
use super::session::{Pending, Session};
use super::{Core, CoreError, CoreResult, ProjectEntry};
use quire_model::hash::BlobHash;
use quire_model::ids::{ProjectId, SessionId};
use quire_model::lang::Languages;
use quire_model::op::Op;
use quire_model::workflow::Writer;

/// The blocking calls of a [`Core`]; see the module docs.
pub struct Blocking<'a>(pub(super) &'a Core);

impl Blocking<'_> {
    /// Opens the project directory at `path` . If it is already
    /// open here, returns its session; either way it becomes current.
    pub fn open_project(&self, path: &Path) -> CoreResult<SessionSummary> {
        self.open_dir(path, true, None)
    }

    /// Opens the project directory at `path` as session `id` (one that an
    /// earlier process gave out), unless it is open here already (under
    /// that id or another); it becomes current.
    pub fn reopen_session(&self, path: &Path, id: SessionId) -> CoreResult<SessionSummary> {
        if let Ok(open) = self.0.session(id) {
            return Ok(open);
        }
        self.open_dir(path, true, Some(id))
    }

    /// Opens (or finds) the project directory at `path`, as session `id`
    /// when given; it becomes current when `make_current`, or when no
    /// session is.
    fn open_dir(
        &self,
        path: &Path,
        make_current: bool,
        id: Option<SessionId>,
    ) -> CoreResult<SessionSummary> {
        let _guard = self.0.lifecycle();
        let dir = std::fs::canonicalize(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                CoreError::not_found("project directory", path.display())
            }
            _ => CoreError::io(path, e),
        })?;
        if !dir.is_dir() {
            return Err(CoreError::InvalidInput(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let existing = self.0.workspace().by_path(&dir).map(|s| s.id);
        if let Some(id) = existing {
            if make_current {
                self.0.make_current(id)?;
            }
            return self.0.session(id);
        }
        let session = Session::open_as(
            &dir,
            self.0.config().session.clone(),
            &self.0.holder(),
            self.0.inner.bus.clone(),
            id.unwrap_or_default(),
        )?;
        let id = session.id;
        let mut workspace = self.0.workspace();
        self.0.inner.bus.publish(Event::SessionOpened {
            session_id: id,
            project_id: session.project_id,
            name: session.name(),
            path: session.path.clone(),
            epoch: session.epoch(),
            opened_at: session.opened_at.clone(),
        });
        workspace.sessions.push(Arc::new(session));
        if make_current || workspace.current.is_none() {
            workspace.activate(id);
            self.0.inner.bus.publish(Event::CurrentSessionChanged {
                session_id: Some(id),
            });
        }
        drop(workspace);
        self.0.session(id)
    }

    /// Creates a project named `name` at `path`, which must not exist or be
    /// an empty directory, and opens it .
    pub fn create_project(&self, path: &Path, name: &str) -> CoreResult<SessionSummary> {
        let name = check_project_name(name)?;
        {
            let _guard = self.0.lifecycle();
            init_project_dir(path, &name, &Languages::default())?;
        }
        self.open_project(path)
    }

    /// Creates a managed project in the projects directory .
    pub fn create_managed_project(&self, name: &str) -> CoreResult<SessionSummary> {
        self.create_managed_project_with(name, &Languages::default())
    }

    /// [`Blocking::create_managed_project`] with its languages.
    pub fn create_managed_project_with(
        &self,
        name: &str,
        languages: &Languages,
    ) -> CoreResult<SessionSummary> {
        let name = check_project_name(name)?;
        let root = self.0.projects_dir().to_path_buf();
        quire_store::storage::private_dir(&root)?;
        let path = {
            let _guard = self.0.lifecycle();
            let path = free_path(&root, &name);
            init_project_dir(&path, &name, languages)?;
            path
        };
        self.open_project(&path)
    }

    /// Unpacks a project archive into the projects directory as a new
    /// project (a new id, a directory named after it) and opens it.
    pub fn import_managed_archive(&self, bytes: &[u8]) -> CoreResult<SessionSummary> {
        let name = super::archive::archive_name(bytes)?;
        let root = self.0.projects_dir().to_path_buf();
        quire_store::storage::private_dir(&root)?;
        let path = {
            let _guard = self.0.lifecycle();
            let path = free_path(&root, &name);
            super::archive::unpack(bytes, &path)?;
            path
        };
        self.open_imported(&path)
    }

    /// Opens a managed project by id and makes it current .
    pub fn open_managed_project(&self, id: ProjectId) -> CoreResult<SessionSummary> {
        let path = self.managed_path(id)?;
        self.open_dir(&path, true, None)
    }

    /// Opens a managed project by id (or finds its session) and leaves the
    /// current session as it is (unless there is none): what a client that
    /// addresses its session by id asks for, so that a browser opening a
    /// project never moves what another client's `current` routes act on.
    pub fn open_managed_session(&self, id: ProjectId) -> CoreResult<SessionSummary> {
        let path = self.managed_path(id)?;
        self.open_dir(&path, false, None)
    }

    fn managed_path(&self, id: ProjectId) -> CoreResult<std::path::PathBuf> {
        self.list_projects()?
            .into_iter()
            .find(|p| p.id == id)
            .map(|p| p.path)
            .ok_or_else(|| CoreError::not_found("project", id))
    }

    /// Managed projects (directories with a `project.toml` in the projects
    /// directory), most recently updated first.
    pub fn list_projects(&self) -> CoreResult<Vec<ProjectEntry>> {
        list_projects_in(self.0.projects_dir(), &self.0.sessions())
    }

    /// Saves and closes a session: a final snapshot, then the
    /// lock is released.
    pub fn close_session(&self, id: SessionId) -> CoreResult<()> {
        self.0.cancel_session_jobs(id);
        let _guard = self.0.lifecycle();
        let session = self
            .0
            .workspace()
            .find(id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("session", id))?;
        let result = session.close();
        let mut workspace = self.0.workspace();
        workspace.sessions.retain(|s| s.id != id);
        self.0
            .inner
            .bus
            .publish(Event::SessionClosed { session_id: id });
        if workspace.current == Some(id) {
            let next = workspace.sessions.last().map(|s| s.id);
            workspace.current = next;
            self.0
                .inner
                .bus
                .publish(Event::CurrentSessionChanged { session_id: next });
        }
        drop(workspace);
        drop(session);
        result
    }

    /// Closes every session ; used at shutdown. Returns the
    /// errors of sessions that could not be saved.
    pub fn close_all(&self) -> Vec<(SessionId, CoreError)> {
        let ids: Vec<SessionId> = self.0.workspace().sessions.iter().map(|s| s.id).collect();
        ids.into_iter()
            .filter_map(|id| self.close_session(id).err().map(|e| (id, e)))
            .collect()
    }

    /// Applies `op` in memory and queues it; await the result to know it is
    /// durable. For callers that pipeline many ops.
    pub fn submit(&self, id: SessionId, op: Op) -> CoreResult<Pending> {
        let submitted = self.0.open_session(id)?.submit(op, &Writer::PERSON, None)?;
        submitted
            .pending
            .ok_or_else(|| CoreError::internal("a person's change was dropped"))
    }

    /// Undoes in memory and queues it (see [`Blocking::submit`]); `None` at the
    /// boundary.
    pub fn submit_undo(&self, id: SessionId) -> CoreResult<Option<Pending>> {
        Ok(self
            .0
            .open_session(id)?
            .undo(quire_model::history::Actor::default())?
            .map(|(pending, _)| pending))
    }

    /// Redoes in memory and queues it (see [`Blocking::submit`]).
    pub fn submit_redo(&self, id: SessionId) -> CoreResult<Option<Pending>> {
        Ok(self
            .0
            .open_session(id)?
            .redo(quire_model::history::Actor::default())?
            .map(|(pending, _)| pending))
    }

    /// Stores bytes in the session's project ; returns the hash.
    pub fn put_blob(&self, id: SessionId, bytes: &[u8]) -> CoreResult<BlobHash> {
        self.0.open_session(id)?.blobs().put(bytes)
    }

    /// Reads and verifies a blob .
    pub fn get_blob(&self, id: SessionId, hash: &BlobHash) -> CoreResult<Vec<u8>> {
        self.0.open_session(id)?.blobs().get(hash)
    }

    /// Unpacks an archive made by `export` into `dest` as a new project and
    /// opens it (see [`Core::import_archive`]).
    pub fn import_archive(&self, bytes: &[u8], dest: &Path) -> CoreResult<SessionSummary> {
        super::archive::unpack(bytes, dest)?;
        self.open_imported(dest)
    }

    /// Opens a project an import has just written; one that cannot be
    /// opened (the disk filled up meanwhile, say) is removed again, so a
    /// refused import never leaves a project behind.
    fn open_imported(&self, path: &Path) -> CoreResult<SessionSummary> {
        self.open_project(path).inspect_err(|_| {
            if let Err(e) = std::fs::remove_dir_all(path) {
                tracing::warn!("cannot remove the unopened import {}: {e}", path.display());
            }
        })
    }
}

/// A directory in `root` for a project called `name` that does not exist
/// yet: its slug, else the slug with `-2`, `-3`, ….
fn free_path(root: &Path, name: &str) -> PathBuf {
    let slug = slug(name);
    (1..)
        .map(|n| match n {
            1 => root.join(&slug),
            n => root.join(format!("{slug}-{n}")),
        })
        .find(|candidate| !candidate.exists())
        .unwrap_or_else(|| root.join(slug))
}
