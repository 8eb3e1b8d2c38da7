//! Integration tests: the real `quire` binary, one test binary for speed.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod harness;

mod hostile_archives;
mod hostile_backups;
mod hostile_files;

mod archive;
mod batch;
mod cli_config;
mod cli_docs;
mod cli_modes;
#[path = "../../crates/quire-core/tests/it/support.rs"]
#[allow(
    dead_code,
    reason = "the core's test support; these tests use part of it"
)]
mod core_base;
mod core_config;
mod deploy;
mod desk;
mod disk_full;
#[path = "../../crates/quire-core/tests/it/fake_llm.rs"]
#[allow(
    dead_code,
    reason = "the core's fake provider; these tests use part of it"
)]
mod fake_llm;
mod glossary;
mod http_api;
mod http_binary;
mod http_refusals;
mod http_support;
mod interop;
mod mcp;
mod mcp_stdio;
mod mcp_ts;
mod oauth;
mod openapi;
mod pages;
mod proxy_support;
mod readme;
mod render;
mod roundtrips;
mod share;
mod stale_writes;
mod team;
mod tm;
mod tui;
mod tui_live;
mod tui_support;
mod under_attack;
mod web;
