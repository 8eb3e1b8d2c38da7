//! The project lock: an OS advisory lock (`flock` on Unix) on `.lock`, held
//! for as long as the project is open and released by the OS when the
//! process exits, however it exits. The file records who holds it, so a
//! second process can say whom it is waiting for.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::core::error::{CoreError, CoreResult};

/// What the holder writes into `.lock`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    pub mode: String,
    /// The HTTP URL of the holder, when it serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A held project lock; dropping it releases the lock.
#[derive(Debug)]
pub struct ProjectLock {
    file: File,
}

impl ProjectLock {
    /// Takes the lock of the project in `dir` or says who holds it.
    pub fn acquire(dir: &Path, holder: &Holder) -> CoreResult<Self> {
        let path = dir.join(".lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| CoreError::io(path.display(), e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(held_by(dir, toml::from_str::<Holder>(&text).ok()));
            }
            Err(TryLockError::Error(e)) => return Err(CoreError::io(path.display(), e)),
        }
        let mut lock = ProjectLock { file };
        lock.record(holder)
            .map_err(|e| CoreError::io(path.display(), e))?;
        Ok(lock)
    }

    /// Who holds the lock of the project in `dir`, if anyone, without
    /// taking it or writing anything.
    pub fn probe(dir: &Path) -> Option<Holder> {
        let mut file = File::open(dir.join(".lock")).ok()?;
        match file.try_lock_shared() {
            Ok(()) => None,
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                Some(toml::from_str(&text).unwrap_or(Holder {
                    pid: 0,
                    mode: "unknown".into(),
                    url: None,
                }))
            }
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
    if let Some(url) = holder.url {
        message.push_str(&format!("; work with it through `quire attach {url}`"));
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
            text.contains("quire attach http://127.0.0.1:4096"),
            "{text}"
        );
        drop(lock);
        ProjectLock::acquire(dir.path(), &holder).unwrap();
    }
}
