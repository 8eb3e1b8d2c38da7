//! The top-level failure of a command and its exit code.
//!
//! Exit codes (see `01-cli.md`): 0 success, 2 usage or configuration error,
//! 1 any other failure. Errors are printed once, by [`crate::app::run`].

use std::process::ExitCode;

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The command line asks for something that does not make sense.
    #[error("{0}")]
    Usage(String),
    /// A configuration or mode file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Anything else: I/O, a project that cannot be opened, a server that
    /// cannot bind.
    #[error(transparent)]
    Runtime(#[from] anyhow::Error),
    /// Work done but not all of it (`quire batch`: an entry skipped, a
    /// page failed); the message names what.
    #[error("{0}")]
    Partial(String),
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::Usage(message.into())
    }

    pub fn exit_code(&self) -> ExitCode {
        match self {
            Failure::Usage(_) | Failure::Config(_) => ExitCode::from(2),
            Failure::Runtime(_) => ExitCode::from(1),
            Failure::Partial(_) => ExitCode::from(3),
        }
    }

    /// The one line printed after `quire: error: `.
    pub fn headline(&self) -> String {
        match self {
            Failure::Runtime(e) => format!("{e:#}"),
            other => other.to_string(),
        }
    }
}
