//! The wire between a shared TUI and `quire mcp tui`: what both processes
//! must agree on, and nothing of either side. The TUI's side lives in
//! `tui/share/`, the adapter (an MCP server) in `mcp/tui.rs`; neither
//! imports the other. Linux and macOS only; the Unix parts are behind
//! `cfg(unix)` so the program builds everywhere.
//!
//! - `protocol.rs` — the frames and their limits;
//! - `conn.rs` — the one connection type both sides use (bounded lines);
//! - `endpoint.rs` — the private directory, `endpoint.json`, their checks;
//! - `error.rs` — what can go wrong on either side, with its cause.

pub mod conn;
pub mod endpoint;
pub mod error;
pub mod protocol;

pub use error::ShareError;

/// Whether this platform can share a TUI.
pub fn supported() -> bool {
    cfg!(any(target_os = "linux", target_os = "macos"))
}
