//! The edge: small result shapes that more than one frontend puts on (or
//! reads from) the wire — the HTTP API answers them, the MCP tools return
//! them as structured content, the attached TUI (`tui/remote.rs`) reads
//! them back. One definition each, so the three cannot drift.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::core::ids::{JobId, SessionId};

/// A session was saved and closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Closed {
    pub closed: SessionId,
}

/// The result of undo or redo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Epoch {
    /// The new epoch; null when there was nothing to undo or redo.
    pub epoch: Option<u64>,
}

/// A pipeline was accepted: its job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    pub job_id: JobId,
}

/// The result of cancelling a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Cancelled {
    /// False when the job had already finished.
    pub cancelled: bool,
}
