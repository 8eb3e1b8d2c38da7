//! Errors of the core. Each variant has a stable `code` that frontends map,
//! in one place each, to an HTTP status, an MCP error or an exit code.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// No session is open (or current) to act on.
    #[error("no project is open")]
    NoSession,
    /// An id or name that does not exist: `what` is e.g. "session", "page".
    #[error("unknown {what} {id}")]
    NotFound { what: &'static str, id: String },
    /// An op that does not apply to the scene; nothing was changed.
    #[error("{0}")]
    InvalidOp(String),
    /// A request that is well formed but not acceptable (bad name, bad path).
    #[error("{0}")]
    InvalidInput(String),
    /// The state does not allow it (e.g. a project directory that exists).
    #[error("{0}")]
    Conflict(String),
    /// An edit made from values the node no longer has: someone changed it
    /// meanwhile. Nothing was changed; both values are carried.
    #[error("{0}")]
    Stale(Box<Stale>),
    /// An undo or redo that would overwrite someone else's later change
    /// (per-person undo); the message names who. Nothing was changed.
    #[error("{0}")]
    UndoConflict(String),
    /// The caller's role does not allow it (marking a segment reviewed
    /// with the `edit` role); the message names the role that would.
    #[error("{0}")]
    Forbidden(String),
    /// An engine that needs a person's approval was started without it.
    #[error("{0}")]
    ApprovalRequired(String),
    /// Another process holds the project's lock.
    #[error("{0}")]
    Locked(String),
    /// A project file on disk is damaged; nothing was changed.
    #[error("{}{}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Corrupt {
        file: PathBuf,
        line: Option<usize>,
        message: String,
    },
    /// The operating system refused (disk full, permissions, fsync
    /// failure: `kind` says which, `path` where), or the core failed
    /// inside (`kind` is `Other`, no path).
    #[error("{}{message}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Io {
        kind: io::ErrorKind,
        path: Option<PathBuf>,
        message: String,
    },
}

impl CoreError {
    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            CoreError::NoSession => "no_session",
            CoreError::NotFound { .. } => "not_found",
            CoreError::InvalidOp(_) => "invalid_op",
            CoreError::InvalidInput(_) => "invalid_input",
            CoreError::Conflict(_) | CoreError::Stale(_) => "conflict",
            CoreError::ApprovalRequired(_) => "approval_required",
            CoreError::Forbidden(_) => "forbidden_role",
            CoreError::UndoConflict(_) => "undo_conflict",
            CoreError::Locked(_) => "locked",
            CoreError::Corrupt { .. } => "corrupt",
            CoreError::Io { .. } => "io",
        }
    }

    pub fn not_found(what: &'static str, id: impl ToString) -> Self {
        CoreError::NotFound {
            what,
            id: id.to_string(),
        }
    }

    /// The operating system refused an operation on `path`.
    pub fn io(path: impl AsRef<Path>, e: io::Error) -> Self {
        CoreError::Io {
            kind: e.kind(),
            path: Some(path.as_ref().to_path_buf()),
            message: e.to_string(),
        }
    }

    /// The operating system refused, not about one file.
    pub fn io_during(what: &str, e: io::Error) -> Self {
        CoreError::Io {
            kind: e.kind(),
            path: None,
            message: format!("{what}: {e}"),
        }
    }

    /// The core failed inside (an encoder, a worker thread).
    pub fn internal(message: impl Into<String>) -> Self {
        CoreError::Io {
            kind: io::ErrorKind::Other,
            path: None,
            message: message.into(),
        }
    }

    /// The same error, its message prefixed with what was being done.
    pub fn context(self, what: &str) -> Self {
        match self {
            CoreError::Io {
                kind,
                path,
                message,
            } => CoreError::Io {
                kind,
                path,
                message: format!("{what}: {message}"),
            },
            other => other,
        }
    }

    /// The `io::ErrorKind` of an `Io` error.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            CoreError::Io { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

pub type CoreResult<T> = Result<T, CoreError>;

/// A stale edit: what its client based it on and what the node says now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stale {
    pub page_id: crate::ids::PageId,
    pub node_id: crate::ids::NodeId,
    /// `text` or `translation`.
    pub field: &'static str,
    /// The value the edit was made from (`None`: none).
    pub based_on: Option<String>,
    /// The value the node has now.
    pub current: Option<String>,
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<String>| match v {
            Some(v) => format!("{v:?}"),
            None => "empty".to_owned(),
        };
        write!(
            f,
            "node {} changed since this edit was made: its {} is now {}, and was {} when the \
             edit began; nothing was changed (send it again without basedOn to replace theirs, \
             or keep theirs)",
            self.node_id,
            self.field,
            show(&self.current),
            show(&self.based_on)
        )
    }
}
