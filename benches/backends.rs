//! Models on inference servers (spec 17): a generated chapter
//! (`tests/pages/make.py`, 1200 × 1800 px) through `detect` and `ocr` with
//! PP-OCRv6's small models run here (the `quire-ppocr` helper, tract, one
//! page per core) and on 1, 2 and 4 replicas of Seldon MLServer
//! (onnxruntime, one thread each) behind a balancer that, like a
//! Kubernetes Service, sends each connection to the next replica. For
//! each: pages per minute, and per page the time the replicas spent
//! answering (from quire's backend counters) beside the wall time, and
//! the CPU time quire and the replicas used, which says where the time
//! goes.
//!
//! `cargo bench --bench backends` (20 pages; 3 without `--bench`). Needs
//! `.venv` with Pillow, `.venv-mlserver` and the models in `.models/`, as
//! `scripts/test` installs them.

#![allow(clippy::print_stdout)]

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use quire_core::engines::backends::Backend;
use quire_core::engines::settings::ModelRef;
use quire_core::engines::{detect, ocr};
use quire_core::events::JobStatus;
use quire_core::settings::ApiKey;
use quire_core::{Core, CoreConfig};
use quire_store::Durability;

/// CPU seconds (user and system) process `pid` has used (`self` for
/// this one), from `/proc` (Linux; 100 ticks a second).
fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and
    // stime are the 14th and 15th of the whole line.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// One MLServer replica serving both models, ready.
struct Replica(Child);

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn replica(root: &Path, models: &Path, work: &Path) -> (Replica, u16) {
    let (http, grpc) = (free_port(), free_port());
    let repository = work.join(format!("replica-{http}"));
    std::fs::create_dir_all(&repository).expect("repository");
    let settings = serde_json::json!({
        "host": "127.0.0.1", "http_port": http, "grpc_port": grpc,
        "metrics_endpoint": null, "parallel_workers": 0,
    });
    std::fs::write(repository.join("settings.json"), settings.to_string()).expect("settings");
    for (name, file) in [
        ("ppocr-det", "PP-OCRv6_det_small.onnx"),
        ("ppocr-rec", "PP-OCRv6_rec_small.onnx"),
    ] {
        std::fs::create_dir_all(repository.join(name)).expect("model dir");
        let model = serde_json::json!({
            "name": name, "implementation": "quire_onnx.OnnxModel",
            "parameters": { "uri": models.join(file) },
        });
        std::fs::write(
            repository.join(name).join("model-settings.json"),
            model.to_string(),
        )
        .expect("model settings");
    }
    let child = Command::new(root.join(".venv-mlserver/bin/mlserver"))
        .arg("start")
        .arg(&repository)
        .current_dir(&repository)
        .env("PYTHONPATH", root.join("deploy/mlserver"))
        .env("ONNX_THREADS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mlserver (.venv-mlserver, scripts/test makes it)");
    let replica = Replica(child);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ready(http) {
        assert!(Instant::now() < deadline, "replica on {http} not ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    (replica, http)
}

fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let mut answer = String::new();
    stream
        .write_all(b"GET /v2/health/ready HTTP/1.0\r\nHost: r\r\n\r\n")
        .is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.1 200")
}

/// A balancer on 127.0.0.1 sending each connection to the next of
/// `ports`, as a Kubernetes Service does; its port.
async fn balancer(ports: Vec<u16>) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let next = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let to = ports[next.fetch_add(1, Ordering::Relaxed) % ports.len()];
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(("127.0.0.1", to)).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    port
}

fn backend(url: &str, model: &str, in_flight: usize) -> Backend {
    Backend {
        url: url.to_owned(),
        model: model.to_owned(),
        version: String::new(),
        timeout_secs: 300,
        max_in_flight: in_flight,
        max_retries: 0,
        dictionary: None,
        api_key: ApiKey::None,
    }
}

/// `detect` then `ocr` on a fresh project of the chapter: seconds taken.
async fn chapter(core: &Core, dir: &Path, pages: usize, name: &str) -> f64 {
    let id = support::chapter_project(core, dir, pages, name).await;
    let (took, status) = support::run_job(core, id, &["detect", "ocr"]).await;
    assert_ne!(status, JobStatus::Failed, "{name}");
    took.as_secs_f64()
}

fn configured(base: &CoreConfig, det: ModelRef, rec: ModelRef) -> CoreConfig {
    let mut config = base.clone();
    config.settings.update(|o: &mut ocr::OcrSettings| {
        o.backend = ocr::OcrBackend::Onnx;
        o.detector = Some(det.clone());
        o.model = Some(rec);
        o.timeout_secs = 3600;
    });
    config.settings.update(|d: &mut detect::DetectSettings| {
        d.backend = detect::DetectBackend::Onnx;
        d.model = Some(det);
        d.timeout_secs = 3600;
    });
    config
}

fn main() {
    let pages = if std::env::args().any(|a| a == "--bench") {
        20
    } else {
        3
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let models: PathBuf = root.join(".models/rapidocr-3.10.0");
    let dir = tempfile::tempdir().expect("temp dir");
    let made = Command::new(root.join(".venv/bin/python"))
        .arg(root.join("tests/pages/make.py"))
        .arg(dir.path())
        .arg(pages.to_string())
        .status()
        .expect("python with Pillow (.venv, scripts/test makes it)");
    assert!(made.success(), "make.py failed");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let projects = tempfile::tempdir().expect("temp dir");
        let base = support::core(projects.path(), Durability::Fsync, 1000, 500).config();
        let here = configured(
            &base,
            ModelRef::File(models.join("PP-OCRv6_det_small.onnx")),
            ModelRef::File(models.join("PP-OCRv6_rec_small.onnx")),
        );
        let core = Core::new(here);
        let secs = chapter(&core, dir.path(), pages, "local").await;
        println!(
            "local (helper, tract): {pages} pages in {secs:.1} s: {:.1} pages/min",
            pages as f64 * 60.0 / secs
        );
        drop(core);
        for replicas in [1usize, 2, 4] {
            let work = tempfile::tempdir().expect("temp dir");
            let started: Vec<(Replica, u16)> = (0..replicas)
                .map(|_| replica(root, &models, work.path()))
                .collect();
            let port = balancer(started.iter().map(|(_, p)| *p).collect()).await;
            let url = format!("http://127.0.0.1:{port}");
            let mut config = configured(
                &base,
                ModelRef::Backend("det".into()),
                ModelRef::Backend("rec".into()),
            );
            config.backends = BTreeMap::from([
                ("det".into(), backend(&url, "ppocr-det", 2 * replicas)),
                ("rec".into(), backend(&url, "ppocr-rec", 2 * replicas)),
            ]);
            let core = Core::new(config);
            let cpu = |started: &[(Replica, u16)]| {
                let served: f64 = started
                    .iter()
                    .map(|(r, _)| cpu_seconds(&r.0.id().to_string()))
                    .sum();
                (cpu_seconds("self"), served)
            };
            let before = cpu(&started);
            let secs = chapter(&core, dir.path(), pages, "remote").await;
            let after = cpu(&started);
            let (ours, theirs) = (after.0 - before.0, after.1 - before.1);
            let served: f64 = core
                .backends()
                .snapshot()
                .iter()
                .map(|(_, s)| s.seconds)
                .sum();
            let requests: u64 = core
                .backends()
                .snapshot()
                .iter()
                .flat_map(|(_, s)| s.requests.iter().map(|(_, n)| *n))
                .sum();
            println!(
                "{replicas} replica{}: {pages} pages in {secs:.1} s: {:.1} pages/min; {requests} requests, {:.2} s of answers per page (wall {:.2} s/page); CPU per page: quire {:.2} s, the replicas {:.2} s",
                if replicas == 1 { "" } else { "s" },
                pages as f64 * 60.0 / secs,
                served / pages as f64,
                secs / pages as f64,
                ours / pages as f64,
                theirs / pages as f64
            );
            drop(started);
        }
    });
}
