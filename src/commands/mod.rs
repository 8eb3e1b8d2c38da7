//! Helper commands: one-shot work that prints to stdout and exits.
//!
//! Each takes a writer, so tests can run them in process; `crate::app`
//! passes stdout.

pub mod config;
pub mod docs;
pub mod modes;
pub mod projects;

use crate::error::Failure;

/// A write to stdout failed (e.g. a closed pipe).
pub(crate) fn write_failed(e: std::io::Error) -> Failure {
    Failure::Runtime(anyhow::Error::new(e).context("cannot write output"))
}
