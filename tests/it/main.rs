//! Integration tests: the real `quire` binary, one test binary for speed.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod harness;

mod hostile_archives;
mod hostile_backups;
mod hostile_files;

mod archive;
mod cli_config;
mod cli_docs;
mod cli_modes;
mod core_crash;
mod core_events;
mod core_io;
mod core_jobs;
mod core_limits;
mod core_llm;
mod core_ops;
mod core_props;
mod core_safety;
mod core_storage;
mod core_support;
mod core_workflow;
mod desk;
mod disk_full;
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
mod readme;
mod render;
mod roundtrips;
mod share;
mod stale_writes;
mod team;
mod tidy;
mod tm;
mod tui;
mod tui_live;
mod tui_support;
mod under_attack;
mod web;
