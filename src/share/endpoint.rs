//! The shared TUI's private directory and `endpoint.json`, and the checks
//! the adapter makes before it trusts them.
//!
//! ```text
//! $TMPDIR/quire-XXXXXXXXXX/   mode 0700, owned by the user
//!     s                        the Unix socket
//!     endpoint.json            mode 0600: protocol, socket, instance, token
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::error::ShareError;
use super::protocol::PROTOCOL;
use crate::config::secret::Secret;

/// `sun_path` size, terminating NUL included.
#[cfg(target_os = "macos")]
pub const SOCKET_PATH_LIMIT: usize = 104;
#[cfg(not(target_os = "macos"))]
pub const SOCKET_PATH_LIMIT: usize = 108;

/// Name of the socket inside the private directory (short on purpose).
const SOCKET_NAME: &str = "s";
const DIR_PREFIX: &str = "quire-";
/// Random characters of the directory name.
const DIR_RANDOM: usize = 10;

/// The capability a shared TUI hands out: whoever reads it may connect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointFile {
    pub protocol: u32,
    pub socket: PathBuf,
    pub instance: Uuid,
    /// 256 random bits, hex.
    #[serde(serialize_with = "crate::config::secret::expose")]
    pub token: Secret,
    /// The TUI's process, so stale directories can be recognised.
    pub pid: u32,
}

/// Random bytes from the operating system.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], ShareError> {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf)
        .map_err(|e| ShareError::Random(std::io::Error::other(e.to_string())))?;
    Ok(buf)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The temporary root: `$TMPDIR`, else `/tmp`.
pub fn temp_root() -> PathBuf {
    std::env::var_os("TMPDIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// Checks, before anything is created, that the socket path fits
/// `sun_path`; the error gives the length, the limit and the fix.
pub fn check_socket_path(root: &Path) -> Result<(), ShareError> {
    let example = root
        .join(format!("{DIR_PREFIX}{}", "x".repeat(DIR_RANDOM)))
        .join(SOCKET_NAME);
    let len = example.as_os_str().len() + 1;
    if len > SOCKET_PATH_LIMIT {
        return Err(ShareError::SocketPathTooLong {
            len,
            limit: SOCKET_PATH_LIMIT,
        });
    }
    Ok(())
}

/// A created endpoint; its files are removed when it is dropped.
#[derive(Debug)]
pub struct Endpoint {
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub file: PathBuf,
    pub content: EndpointFile,
}

impl Endpoint {
    /// Creates the private directory and `endpoint.json` (the socket is
    /// bound by the server afterwards).
    #[cfg(unix)]
    pub fn create(root: &Path) -> Result<Endpoint, ShareError> {
        use std::io::Write;
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

        check_socket_path(root)?;
        let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let random = random_bytes::<DIR_RANDOM>()?;
        let name: String = random
            .iter()
            .map(|b| alphabet[*b as usize % alphabet.len()] as char)
            .collect();
        let dir = root.join(format!("{DIR_PREFIX}{name}"));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| ShareError::io("create", &dir, e))?;
        let token = Secret::new(hex(&random_bytes::<32>()?));
        let content = EndpointFile {
            protocol: PROTOCOL,
            socket: dir.join(SOCKET_NAME),
            instance: uuid::Builder::from_random_bytes(random_bytes::<16>()?).into_uuid(),
            token,
            pid: std::process::id(),
        };
        let file = dir.join("endpoint.json");
        let text = serde_json::to_vec_pretty(&content)
            .map_err(|e| ShareError::io("encode", &file, std::io::Error::other(e)))?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&file)
            .map_err(|e| ShareError::io("create", &file, e))?;
        f.write_all(&text)
            .and_then(|_| f.sync_all())
            .map_err(|e| ShareError::io("write", &file, e))?;
        Ok(Endpoint {
            socket: content.socket.clone(),
            dir,
            file,
            content,
        })
    }

    /// Deletes the socket, `endpoint.json` and the directory.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_file(&self.file);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes private directories of ours left by TUIs that are gone (Linux:
/// their pid has no `/proc` entry). Best effort; errors are ignored.
#[cfg(target_os = "linux")]
pub fn remove_stale(root: &Path) {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::getuid().as_raw();
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let is_ours = entry.file_name().to_string_lossy().starts_with(DIR_PREFIX)
            && std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if !is_ours {
            continue;
        }
        let Ok(text) = std::fs::read(dir.join("endpoint.json")) else {
            continue;
        };
        let Ok(file) = serde_json::from_slice::<EndpointFile>(&text) else {
            continue;
        };
        if !Path::new(&format!("/proc/{}", file.pid)).exists() {
            let _ = std::fs::remove_file(dir.join(SOCKET_NAME));
            let _ = std::fs::remove_file(dir.join("endpoint.json"));
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn remove_stale(_root: &Path) {}

/// The adapter's checks: the endpoint file and its directory belong to
/// `uid` and are closed to group and others. Returns the file's content.
#[cfg(unix)]
pub fn read_checked(path: &Path, uid: u32) -> Result<EndpointFile, ShareError> {
    let file_meta = std::fs::symlink_metadata(path)
        .map_err(|e| ShareError::io("read the endpoint file", path, e))?;
    if !file_meta.is_file() {
        return Err(ShareError::NotAFile(path.to_path_buf()));
    }
    check_owner_and_mode(path, &file_meta, uid, "the endpoint file")?;
    // An endpoint path always names a file in a directory.
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir_meta = std::fs::symlink_metadata(dir)
        .map_err(|e| ShareError::io("read the endpoint directory", dir, e))?;
    check_owner_and_mode(dir, &dir_meta, uid, "the endpoint directory")?;
    let text = std::fs::read(path).map_err(|e| ShareError::io("read", path, e))?;
    let file: EndpointFile =
        serde_json::from_slice(&text).map_err(|source| ShareError::NotAnEndpoint {
            path: path.to_path_buf(),
            source,
        })?;
    if file.protocol != PROTOCOL {
        return Err(ShareError::ProtocolMismatch {
            path: path.to_path_buf(),
            theirs: file.protocol,
        });
    }
    Ok(file)
}

#[cfg(unix)]
fn check_owner_and_mode(
    path: &Path,
    meta: &std::fs::Metadata,
    uid: u32,
    what: &'static str,
) -> Result<(), ShareError> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != uid {
        return Err(ShareError::Owner {
            what,
            path: path.to_path_buf(),
            owner: meta.uid(),
            uid,
        });
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(ShareError::Mode {
            what,
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn me() -> u32 {
        rustix::process::getuid().as_raw()
    }

    #[test]
    fn creates_a_private_directory_and_file() {
        let root = tempfile::tempdir().unwrap();
        let ep = Endpoint::create(root.path()).unwrap();
        let dir_mode = std::fs::metadata(&ep.dir).unwrap().permissions().mode() & 0o777;
        let file_mode = std::fs::metadata(&ep.file).unwrap().permissions().mode() & 0o777;
        assert_eq!((dir_mode, file_mode), (0o700, 0o600));
        assert_eq!(ep.content.token.get().unwrap().unwrap().len(), 64);
        let read = read_checked(&ep.file, me()).unwrap();
        assert_eq!(read, ep.content);
        let dir = ep.dir.clone();
        drop(ep);
        assert!(!dir.exists(), "dropping the endpoint removes it");
    }

    #[test]
    fn refuses_open_modes_and_other_owners() {
        let root = tempfile::tempdir().unwrap();
        let ep = Endpoint::create(root.path()).unwrap();
        std::fs::set_permissions(&ep.file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = read_checked(&ep.file, me()).unwrap_err().to_string();
        assert!(
            err.contains("the endpoint file") && err.contains("0644"),
            "{err}"
        );
        std::fs::set_permissions(&ep.file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&ep.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = read_checked(&ep.file, me()).unwrap_err().to_string();
        assert!(
            err.contains("the endpoint directory") && err.contains("0755"),
            "{err}"
        );
        std::fs::set_permissions(&ep.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let err = read_checked(&ep.file, me() + 1).unwrap_err().to_string();
        assert!(err.contains("not to you"), "{err}");
    }

    #[test]
    fn a_long_tmpdir_is_refused_before_anything_is_created() {
        let root = tempfile::tempdir().unwrap();
        let long = root.path().join("x".repeat(120));
        let err = check_socket_path(&long).unwrap_err().to_string();
        assert!(
            err.contains(&format!("limit of {SOCKET_PATH_LIMIT}")),
            "{err}"
        );
        assert!(err.contains("TMPDIR"), "{err}");
        assert!(Endpoint::create(&long).is_err());
        assert!(!long.exists());
    }
}
