//! Errors of TUI sharing, on both sides of the socket. Each keeps its
//! cause; `Display` is the sentence a person reads.

use std::io;
use std::path::PathBuf;

use super::protocol::PROTOCOL;

#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    #[error("TUI sharing (--tui-mcp) is not supported on {0}: only on Linux and macOS")]
    Unsupported(&'static str),
    #[error(
        "the sharing socket path would be {len} bytes (with its NUL), over this platform's limit of {limit}: \
         point TMPDIR at a shorter private directory (e.g. `mkdir -m 700 /tmp/q && TMPDIR=/tmp/q quire --tui-mcp`) \
         and start a new TUI"
    )]
    SocketPathTooLong { len: usize, limit: usize },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the operating system gave no random bytes: {0}")]
    Random(#[source] io::Error),
    #[error("{} is not a regular file", .0.display())]
    NotAFile(PathBuf),
    #[error("{what} {} belongs to uid {owner}, not to you (uid {uid}); refusing to use it", path.display())]
    Owner {
        what: &'static str,
        path: PathBuf,
        owner: u32,
        uid: u32,
    },
    #[error("{what} {} is accessible to group or others (mode {mode:04o}); refusing to use it", path.display())]
    Mode {
        what: &'static str,
        path: PathBuf,
        mode: u32,
    },
    #[error("{} is not a quire endpoint file: {source}", path.display())]
    NotAnEndpoint {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "{} speaks protocol {theirs} but this quire speaks {PROTOCOL}; use the same quire version as the TUI",
        path.display()
    )]
    ProtocolMismatch { path: PathBuf, theirs: u32 },
    #[error("cannot reach the shared TUI at {}: {source} (is it still running and shared?)", socket.display())]
    Unreachable {
        socket: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot talk to the TUI: {0}")]
    Connection(#[source] io::Error),
    #[error("the TUI did not answer the greeting")]
    GreetingTimeout,
    #[error("the TUI refused the connection (wrong token, or another user)")]
    Refused,
    #[error("the TUI refused the greeting: {0}")]
    GreetingRefused(String),
    #[error("the TUI answered nonsense: {0}")]
    Nonsense(String),
    #[error("the connection to the TUI is closed")]
    Closed,
    #[error("MCP stdio failed: {0}")]
    Mcp(String),
}

impl ShareError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        ShareError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// On a platform that cannot share.
    pub fn unsupported() -> Self {
        ShareError::Unsupported(std::env::consts::OS)
    }
}
