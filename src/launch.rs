//! Starting a mode: build the one core, start the mode's frontends over it,
//! wait for them to end.

use std::path::PathBuf;

use crate::config::Loaded;
use crate::error::Failure;

/// A launch form of the command line.
#[derive(Debug, Clone)]
pub enum Launch {
    /// `quire`, `quire --mode NAME`, `quire --headless`, `quire --tui-mcp`.
    Mode {
        share: bool,
        project: Option<PathBuf>,
    },
    /// `quire attach URL`.
    Attach { url: String, share: bool },
    /// `quire mcp stdio`.
    McpStdio { project: Option<PathBuf> },
    /// `quire mcp tui --endpoint PATH`.
    McpTui { endpoint: PathBuf },
}

pub fn start(loaded: Loaded, launch: Launch) -> Result<(), Failure> {
    let frontend = match &launch {
        Launch::Mode { .. } => loaded
            .mode
            .as_ref()
            .and_then(|m| m.frontends.first())
            .map_or("tui", |f| f.name()),
        Launch::Attach { .. } => "tui",
        Launch::McpStdio { .. } => "mcp-stdio",
        Launch::McpTui { .. } => "tui-share adapter",
    };
    Err(not_built(frontend))
}

/// The one placeholder allowed while frontends are being built.
pub fn not_built(frontend: &str) -> Failure {
    Failure::Runtime(anyhow::anyhow!(
        "frontend {frontend} is not available in this build yet"
    ))
}
