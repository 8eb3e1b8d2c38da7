//! A project on disk: its directory ([`storage`]: `project.toml`,
//! checksummed `scene.json` and `history.json`, the `ops.log` frames, the
//! log writer with group commit, the project lock) and its
//! content-addressed blobs ([`blobs`]).
//!
//! Files only: no runtime beyond the `watch` channel the log writer tells
//! durable epochs on, and nothing of the frontends or the core service.

pub mod blobs;
pub mod storage;

use serde::{Deserialize, Serialize};

/// When an acknowledged op is on disk (`storage.durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Every acknowledged op has been fsynced on its own.
    Fsync,
    /// Concurrent writers share one fsync (group commit).
    Batch,
}
