//! The core state service: workspace, sessions, scene, ops and history,
//! storage, blobs, events. Built in the core issue.
