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

use Refusal::{Failed, Held};

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
    ///
    /// A lock this process let go of a moment ago can still be held by a
    /// child it was starting then (a command engine, the model helper):
    /// the child's copy of the descriptor holds the lock until its `exec`
    /// closes it. So a lock whose holder is this very process (or whose
    /// record is gone, so that nobody can be named) is tried again for up
    /// to a second before it counts as held; the core never asks for a
    /// project it has open.
    pub fn acquire(dir: &Path, holder: &Holder) -> CoreResult<Self> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        loop {
            match Self::try_acquire(dir, holder) {
                Err(Held(found)) => {
                    let ours = found.as_ref().is_none_or(|h| h.pid == std::process::id());
                    if !ours || std::time::Instant::now() >= deadline {
                        return Err(held_by(dir, found));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(Failed(e)) => return Err(e),
                Ok(lock) => return Ok(lock),
            }
        }
    }

    fn try_acquire(dir: &Path, holder: &Holder) -> Result<Self, Refusal> {
        #[cfg(unix)]
        let dir_lock = {
            let handle = File::open(dir).map_err(|e| Failed(CoreError::io(dir, e)))?;
            match handle.try_lock() {
                Ok(()) => handle,
                Err(TryLockError::WouldBlock) => return Err(Held(read_holder(dir))),
                Err(TryLockError::Error(e)) => return Err(Failed(CoreError::io(dir, e))),
            }
        };
        let path = dir.join(".lock");
        let file = lock_file(&path).map_err(|e| match e {
            LockFailure::Held => Held(read_holder(dir)),
            LockFailure::Io(e) => Failed(CoreError::io(&path, e)),
        })?;
        let mut lock = ProjectLock {
            file,
            #[cfg(unix)]
            _dir: dir_lock,
        };
        lock.record(holder)
            .map_err(|e| Failed(CoreError::io(&path, e)))?;
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

/// Why a try at the lock failed: someone holds it (who, if `.lock` says),
/// or an error.
enum Refusal {
    Held(Option<Holder>),
    Failed(CoreError),
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

    /// A child started while the lock was held keeps a copy of its
    /// descriptors until its `exec`; taking the lock again right after
    /// letting go waits for that, rather than naming this very process as
    /// the holder. (The flake it fixes: an archive closed and reopened
    /// while other tests started programs.)
    #[cfg(target_os = "linux")]
    #[test]
    #[allow(
        unsafe_code,
        reason = "pre_exec: the child waits between its fork and its exec, as a slow start does"
    )]
    fn a_lock_a_starting_child_still_holds_is_taken_once_it_execs() {
        use std::os::unix::process::CommandExt;
        use std::time::{Duration, Instant};

        let dir = tempfile::tempdir().unwrap();
        let holder = Holder {
            pid: std::process::id(),
            mode: "test".into(),
            url: None,
            mcp: None,
        };
        let lock = ProjectLock::acquire(dir.path(), &holder).unwrap();
        let spawner = std::thread::spawn(|| {
            let mut true_ = std::process::Command::new("true");
            // SAFETY: the child only sleeps (nanosleep) before its exec.
            unsafe {
                true_.pre_exec(|| {
                    std::thread::sleep(Duration::from_millis(300));
                    Ok(())
                });
            }
            true_.status().unwrap()
        });
        // Wait until the child exists: from then on it holds a copy of
        // the lock's descriptors.
        let deadline = Instant::now() + Duration::from_secs(10);
        let children = || {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
                .any(|pids| !pids.trim().is_empty())
        };
        while !children() {
            assert!(Instant::now() < deadline, "the child did not start");
            std::thread::yield_now();
        }
        drop(lock);
        ProjectLock::acquire(dir.path(), &holder).unwrap();
        assert!(spawner.join().unwrap().success());
    }

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
        // Another test's child that is still starting may hold the lock a
        // moment after `drop` (see the test above): with the record gone,
        // `acquire` waits that out as it does for its own process.
        let holder = Holder {
            pid: std::process::id(),
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
