//! The core's integration tests: a `Core` over temporary directories, no
//! configuration file and no frontend.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod clean;
mod crash;
mod events;
#[allow(
    dead_code,
    reason = "shared with the binary's tests, which use the rest"
)]
mod fake_llm;
mod io;
mod jobs;
mod limits;
mod llm;
mod ops;
mod props;
mod safety;
mod storage;
#[allow(
    dead_code,
    reason = "shared with the binary's tests, which use the rest"
)]
mod support;
mod undo;
mod workflow;
