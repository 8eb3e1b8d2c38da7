//! What several benchmarks share: a core over a directory, and a real
//! `quire --headless` in its own sandbox.

#![allow(dead_code, unreachable_pub)] // each benchmark uses what it needs

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use std::time::{Duration, Instant};

use quire_core::events::{Event, JobStatus};
use quire_core::jobs::{Approval, PipelineSpec};
use quire_core::session::SessionSettings;
use quire_core::{Core, CoreConfig};
use quire_model::ids::SessionId;
use quire_store::Durability;

/// A core whose managed projects live in `root`.
pub fn core(
    root: &Path,
    durability: Durability,
    snapshot_every_ops: u64,
    undo_limit: usize,
) -> Core {
    Core::new(CoreConfig::new(
        root.to_path_buf(),
        SessionSettings {
            durability,
            snapshot_every_ops,
            undo_limit,
            max_op_bytes: 64 << 20,
            history_max_bytes: 256 << 20,
        },
        "bench",
    ))
}

/// Runs `steps` on session `id` to the end: how long it took, and how it
/// ended.
pub async fn run_job(core: &Core, id: SessionId, steps: &[&str]) -> (Duration, JobStatus) {
    let mut events = core.subscribe(None);
    let start = Instant::now();
    let job = core
        .start_pipeline(
            id,
            PipelineSpec {
                steps: steps.iter().map(|s| (*s).to_owned()).collect(),
                ..PipelineSpec::default()
            },
            Approval::Unattended,
        )
        .await
        .expect("pipeline");
    loop {
        let envelope = events.next().await.expect("events");
        if let Event::JobFinished { id, status, .. } = &envelope.event
            && *id == job
        {
            return (start.elapsed(), *status);
        }
    }
}

/// A running `quire --headless --port 0` (killed when dropped).
pub struct Server {
    pub child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the release binary headless in a fresh sandbox, durability
/// `batch`, with `env` on top; returns once it says where it serves.
pub fn headless(env: &[(&str, &str)]) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_quire"));
    command
        .args(["--headless", "--port", "0"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("c"))
        .env("XDG_DATA_HOME", dir.path().join("d"))
        .env("QUIRE_SYSTEM_CONFIG_DIR", dir.path().join("e"))
        .env("QUIRE_STORAGE__DURABILITY", "batch")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("start quire --headless");
    let stderr = child.stderr.take().expect("stderr");
    let mut url = None;
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("stderr line");
        if let Some(rest) = line.split("serving ").nth(1) {
            url = rest.split_whitespace().next().map(str::to_owned);
            break;
        }
    }
    Server {
        child,
        url: url.expect("the server printed its URL"),
        _dir: dir,
    }
}

/// A blocking HTTP client, built after quire's TLS provider is installed
/// (quire's reqwest has none of its own).
pub fn blocking_client() -> reqwest::blocking::ClientBuilder {
    quire_core::install_tls_provider();
    reqwest::blocking::Client::builder()
}

/// A project of the generated pages `page-01.png`… in `dir` (as
/// `tests/pages/make.py` draws them), English into French; its session.
pub async fn chapter_project(core: &Core, dir: &Path, pages: usize, name: &str) -> SessionId {
    let id = core.create_managed_project(name).await.expect("project").id;
    let files = (1..=pages)
        .map(|n| {
            let name = format!("page-{n:02}.png");
            quire_core::import::ImageFile {
                bytes: std::fs::read(dir.join(&name)).expect("page"),
                name,
            }
        })
        .collect();
    core.import_files(id, files).await.expect("import");
    let languages = quire_model::op::ProjectPatch {
        source_language: Some(Some("en".into())),
        target_language: Some(Some("fr".into())),
        ..quire_model::op::ProjectPatch::default()
    };
    core.apply(id, quire_model::op::Op::UpdateProject { patch: languages })
        .await
        .expect("languages");
    id
}
