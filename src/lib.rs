//! quire: a local-first workbench for page-based text projects.
//!
//! Code map (see ARCHITECTURE.md for the invariants):
//!
//! - [`app`] turns arguments into a config and a command, prints errors once
//!   and picks the exit code; [`cli`] is the clap definition it reads.
//! - [`config`] layers the configuration (figment) and knows every key;
//!   `config::modes` loads the mode files that say which frontends to start.
//! - [`launch`] starts a mode: one core ([`quire_core::Core`]) and the
//!   mode's frontends.
//! - The core owns all state: sessions, scenes, history, storage, events,
//!   and the engines. The crates below it are named where they are used:
//!   `quire_model` (the data model), `quire_store` (a project on disk),
//!   `quire_formats` (the files people bring), `quire_render`.
//! - Frontends, each talking only to the core: [`http`] (with the web
//!   workbench's files), [`mcp`], [`tui`];
//!   [`share`] is the wire between a shared TUI and `quire mcp tui`.
//! - [`wire`] holds the result shapes several frontends share on the wire.
//! - [`access`] knows the server's users, their roles, and the throttle on
//!   failed authentication; [`oauth`] verifies the bearer JWTs of a
//!   `[server.oauth]` identity provider.
//! - [`commands`] are the one-shot helpers (`config show`, `modes list`, …).
//! - [`signals`]: SIGTERM, SIGINT and SIGHUP as a graceful stop;
//!   [`reload`] is what a server does on SIGHUP, and `quire reload`.

pub mod access;
pub mod app;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod http;
pub mod launch;
pub mod logging;
pub mod mcp;
pub mod oauth;
pub mod reload;
pub mod share;
pub mod signals;
pub mod tui;
pub mod wire;
