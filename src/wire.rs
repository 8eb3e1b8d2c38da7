//! The edge: small result shapes that more than one frontend puts on (or
//! reads from) the wire — the HTTP API answers them, the MCP tools return
//! them as structured content, the attached TUI (`tui/remote.rs`) reads
//! them back. One definition each, so the three cannot drift.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use quire_core::StepResult;
use quire_model::ids::{JobId, SessionId};

/// A session was saved and closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Closed {
    pub closed: SessionId,
}

/// The result of undo or redo: what it did, or `epoch: null` when there
/// was nothing to undo or redo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Epoch {
    pub epoch: Option<u64>,
    /// The entry undone or redone, e.g. `pseudo-translate · 600 pages`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// How many ops it applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<usize>,
    /// Who made the change undone or redone (`[[server.users]]`); left
    /// out of the MCP schema for its budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub by: Option<String>,
    /// With `epoch: null`: "nothing of yours to undo" (undo is per
    /// person); left out of the MCP schema for its budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub message: Option<String>,
}

impl Epoch {
    /// What an undo did, or that the caller has nothing to undo.
    pub fn undone(step: Option<StepResult>) -> Epoch {
        Epoch::stepped(step, "nothing of yours to undo")
    }

    /// What a redo did, or that the caller has nothing to redo.
    pub fn redone(step: Option<StepResult>) -> Epoch {
        Epoch::stepped(step, "nothing of yours to redo")
    }

    fn stepped(step: Option<StepResult>, nothing: &str) -> Epoch {
        match step {
            Some(StepResult {
                epoch,
                label,
                ops,
                by,
            }) => Epoch {
                epoch: Some(epoch),
                label: Some(label),
                ops: Some(ops),
                by,
                message: None,
            },
            None => Epoch {
                epoch: None,
                label: None,
                ops: Some(0),
                by: None,
                message: Some(nothing.to_owned()),
            },
        }
    }
}

impl Epoch {
    pub fn into_step(self) -> Option<StepResult> {
        Some(StepResult {
            epoch: self.epoch?,
            label: self.label.unwrap_or_default(),
            ops: self.ops.unwrap_or_default(),
            by: self.by,
        })
    }
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

/// The HTTP export's header saying how many segments had no translation
/// and how they were written (`67 of 120 segments have no translation:
/// written with their source text`); the attached TUI reads it back.
pub const UNTRANSLATED_HEADER: &str = "quire-untranslated";
