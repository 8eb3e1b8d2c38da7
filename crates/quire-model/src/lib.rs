//! quire's data model: what a project is and how it changes, with no I/O.
//!
//! - [`scene`]: a project's pages and their layered nodes; [`ids`] their
//!   typed ids; [`hash::BlobHash`] what names a page image.
//! - [`op`]: every change to a scene, as clients send them; [`apply`]
//!   applies one (checked first against [`limits`]) and returns its
//!   inverse; [`history`] keeps the inverses for undo and redo.
//! - [`workflow`]: who writes a translation and what a job's overwrite
//!   policy lets an engine replace.
//! - [`glossary`]: the project glossary's terms; [`lang`]: BCP 47 tags.
//! - [`error`]: the errors every layer above reports, each with a stable
//!   code; [`finding`]: a problem a check found, naming its page and node.
//!
//! Nothing here touches a file, a socket or a runtime: the store, the
//! formats and the core build on it, never the other way round.

pub mod apply;
pub mod error;
pub mod finding;
pub mod glossary;
pub mod hash;
pub mod history;
pub mod ids;
pub mod journal;
pub mod lang;
pub mod limits;
pub mod objects;
pub mod op;
pub mod scene;
pub mod suggestion;
pub mod workflow;
