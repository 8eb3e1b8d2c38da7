//! TUI sharing: a person lets an external MCP client read a small view
//! state of their live TUI and move it to another session, nothing more.
//! Linux and macOS only; the Unix parts are behind `cfg(unix)` so the
//! program builds everywhere.
//!
//! - `protocol.rs` — the frames between the adapter and the TUI;
//! - `endpoint.rs` — the private directory, `endpoint.json`, their checks;
//! - `decide.rs` — the view context, blocked reasons, the request ledger
//!   (pure);
//! - `tui_side.rs` — the socket server and the extension of the TUI's loop;
//! - `adapter.rs` — `quire mcp tui`, the stdio MCP server for the client.

pub mod adapter;
pub mod decide;
pub mod endpoint;
pub mod protocol;
pub mod tui_side;
