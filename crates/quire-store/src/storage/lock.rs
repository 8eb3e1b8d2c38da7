//! The project lock: OS advisory locks (`flock` on Unix), held for as long
//! as the project is open and released by the OS when the process exits,
//! however it exits.
//!
//! Two locks, because a lock on a file only holds while the file is there:
//! deleting `.lock` under a running holder let a second process create a
//! new `.lock`, lock that, and write the same project (0.1.0: both wrote
//! epoch 1 and the project no longer opened). So the holder locks the
//! project *directory* itself, which cannot be deleted while it holds
//! files, and also `.lock` (checked after locking to be the file at the
//! path), which records who holds it so that a second process can say whom
//! it waits for, and which quire 0.1.0 looks at.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use quire_model::error::{CoreError, CoreResult};

/// What the holder writes into `.lock`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    pub mode: String,
    /// The HTTP URL of the holder, when it serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its MCP endpoint, when it serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<String>,
}

/// A held project lock; dropping it releases both locks.
#[derive(Debug)]
pub struct ProjectLock {
    file: File,
    #[cfg(unix)]
    _dir: File,
}

impl ProjectLock {
    /// Takes the lock of the project in `dir` or says who holds it.
    pub fn acquire(dir: &Path, holder: &Holder) -> CoreResult<Self> {
        #[cfg(unix)]
        let dir_lock = {
            let handle = File::open(dir).map_err(|e| CoreError::io(dir, e))?;
            match handle.try_lock() {
                Ok(()) => handle,
                Err(TryLockError::WouldBlock) => return Err(held_by(dir, read_holder(dir))),
                Err(TryLockError::Error(e)) => return Err(CoreError::io(dir, e)),
            }
        };
        let path = dir.join(".lock");
        let file = lock_file(&path).map_err(|e| match e {
            LockFailure::Held => held_by(dir, read_holder(dir)),
            LockFailure::Io(e) => CoreError::io(&path, e),
        })?;
        let mut lock = ProjectLock {
            file,
            #[cfg(unix)]
            _dir: dir_lock,
        };
        lock.record(holder).map_err(|e| CoreError::io(&path, e))?;
        Ok(lock)
    }

    /// Who holds the lock of the project in `dir`, if anyone, without
    /// taking it or writing anything.
    pub fn probe(dir: &Path) -> Option<Holder> {
        #[cfg(unix)]
        let handle = File::open(dir).ok()?;
        #[cfg(not(unix))]
        let handle = File::open(dir.join(".lock")).ok()?;
        match handle.try_lock_shared() {
            Ok(()) => None,
            Err(TryLockError::WouldBlock) => Some(read_holder(dir).unwrap_or(Holder {
                pid: 0,
                mode: "unknown".into(),
                url: None,
                mcp: None,
            })),
            Err(TryLockError::Error(_)) => None,
        }
    }

    /// Rewrites the holder record (e.g. once the HTTP URL is known).
    pub fn record(&mut self, holder: &Holder) -> std::io::Result<()> {
        let text = toml::to_string(holder).map_err(std::io::Error::other)?;
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(text.as_bytes())
    }
}

enum LockFailure {
    Held,
    Io(std::io::Error),
}

/// Opens and locks `.lock`, making sure the locked file is the one at the
/// path: if it was replaced between the open and the lock, try again.
fn lock_file(path: &Path) -> Result<File, LockFailure> {
    for _ in 0..3 {
        let file = crate::storage::private_file()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(LockFailure::Io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(LockFailure::Held),
            Err(TryLockError::Error(e)) => return Err(LockFailure::Io(e)),
        }
        if same_file(&file, path) {
            return Ok(file);
        }
    }
    Err(LockFailure::Io(std::io::Error::other(
        "the lock file keeps being replaced while quire locks it",
    )))
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// The holder `.lock` names, if it names one.
fn read_holder(dir: &Path) -> Option<Holder> {
    let mut text = String::new();
    File::open(dir.join(".lock"))
        .and_then(|mut f| f.read_to_string(&mut text))
        .ok()?;
    toml::from_str(&text).ok()
}

fn held_by(dir: &Path, holder: Option<Holder>) -> CoreError {
    let Some(holder) = holder else {
        return CoreError::Locked(format!(
            "project {} is open in another process",
            dir.display()
        ));
    };
    let mut message = format!(
        "project {} is open in another quire process (pid {}, mode {})",
        dir.display(),
        holder.pid,
        holder.mode
    );
    match (holder.url, holder.mcp) {
        (Some(url), Some(mcp)) => message.push_str(&format!(
            "; work with it through `quire attach {url}`, or as an MCP client at {mcp}"
        )),
        (Some(url), None) => {
            message.push_str(&format!("; work with it through `quire attach {url}`"))
        }
        _ => {}
    }
    CoreError::Locked(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_names_the_holder_and_drop_releases() {
        let dir = tempfile::tempdir().unwrap();
        let holder = Holder {
            pid: 4242,
            mode: "headless".into(),
            url: Some("http://127.0.0.1:4096".into()),
            mcp: Some("http://127.0.0.1:4096/mcp".into()),
        };
        let lock = ProjectLock::acquire(dir.path(), &holder).unwrap();
        let err = ProjectLock::acquire(dir.path(), &holder).unwrap_err();
        let text = err.to_string();
        assert_eq!(err.code(), "locked");
        assert!(
            text.contains("pid 4242") && text.contains("mode headless"),
            "{text}"
        );
        assert!(
            text.contains("quire attach http://127.0.0.1:4096")
                && text.contains("MCP client at http://127.0.0.1:4096/mcp"),
            "{text}"
        );
        drop(lock);
        ProjectLock::acquire(dir.path(), &holder).unwrap();
    }

    #[test]
    fn deleting_the_lock_file_does_not_free_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let holder = Holder {
            pid: 1,
            mode: "test".into(),
            url: None,
            mcp: None,
        };
        let lock = ProjectLock::acquire(dir.path(), &holder).unwrap();
        std::fs::remove_file(dir.path().join(".lock")).unwrap();
        let err = ProjectLock::acquire(dir.path(), &holder).unwrap_err();
        assert_eq!(err.code(), "locked", "{err}");
        assert!(ProjectLock::probe(dir.path()).is_some());
        drop(lock);
        ProjectLock::acquire(dir.path(), &holder).unwrap();
    }
}
