//! Models on an inference server (spec 17): a real Open Inference
//! Protocol server, Seldon MLServer from PyPI, started by the tests with
//! `deploy/mlserver/quire_onnx.py` (the runtime the Kubernetes example
//! ships) serving the PP-OCRv6 files of the rapidocr wheel. The same
//! files run locally in the `quire-ppocr` helper, so the two must agree;
//! a server killed in the middle of a job, a wrong model name, a wrong
//! kind of model and an unreachable URL are each named, and change
//! nothing they should not.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use quire_core::engines::backends::Backend;
use quire_core::events::JobStatus;
use quire_core::settings::ApiKey;

use super::*;
use crate::core_base::finished;

/// A Seldon MLServer serving `ppocr-det` and `ppocr-rec` on 127.0.0.1.
pub struct MlServer {
    program: PathBuf,
    repository: tempfile::TempDir,
    pub url: String,
    child: Option<Child>,
}

/// Two ports nothing listens on now (MLServer needs its HTTP and gRPC
/// ports named; it cannot be given port 0 and say which it took).
fn free_ports() -> (u16, u16) {
    let a = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let b = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

impl MlServer {
    /// Started and ready, or `None` when MLServer is missing and
    /// `ALLOW_MISSING_TOOLS` allows it.
    pub fn start(test: &str, det: &Path, rec: &Path) -> Option<MlServer> {
        let program = std::env::var_os("QUIRE_MLSERVER").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-mlserver/bin/mlserver"),
            PathBuf::from,
        );
        let missing = (!program.is_file()).then(|| {
            format!(
                "{} is missing (./scripts/test installs MLServer into .venv-mlserver)",
                program.display()
            )
        });
        if !crate::harness::tool_available("mlserver", test, missing) {
            return None;
        }
        let repository = tempfile::tempdir().unwrap();
        let (http, grpc) = free_ports();
        // The settings the Kubernetes example ships, on this machine's
        // ports and files, without MLServer's own metrics port.
        let mut settings = shipped("settings.json");
        settings["host"] = "127.0.0.1".into();
        settings["http_port"] = http.into();
        settings["grpc_port"] = grpc.into();
        settings["metrics_endpoint"] = Value::Null;
        std::fs::write(
            repository.path().join("settings.json"),
            settings.to_string(),
        )
        .unwrap();
        for (name, key, file) in [
            ("ppocr-det", "det-settings.json", det),
            ("ppocr-rec", "rec-settings.json", rec),
        ] {
            let dir = repository.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            let mut model = shipped(key);
            assert_eq!(model["name"], name);
            let uri = model["parameters"]["uri"].as_str().unwrap();
            assert_eq!(Path::new(uri).file_name(), file.file_name());
            model["parameters"]["uri"] = file.to_str().unwrap().into();
            std::fs::write(dir.join("model-settings.json"), model.to_string()).unwrap();
        }
        let mut server = MlServer {
            program,
            repository,
            url: format!("http://127.0.0.1:{http}"),
            child: None,
        };
        server.launch();
        Some(server)
    }

    /// Starts the server (again, on the same ports) and waits until it
    /// says it is ready.
    pub fn launch(&mut self) {
        let log = std::fs::File::create(self.repository.path().join("mlserver.log")).unwrap();
        let runtime = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/mlserver");
        let child = Command::new(&self.program)
            .arg("start")
            .arg(self.repository.path())
            .current_dir(self.repository.path())
            .env("PYTHONPATH", runtime)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if self.ready() {
                return;
            }
            let exited = self.child.as_mut().unwrap().try_wait().unwrap();
            assert!(
                exited.is_none() && Instant::now() < deadline,
                "MLServer did not become ready ({exited:?}): {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether `GET /v2/health/ready` answers 200 (plain HTTP/1.0 over a
    /// socket: the tests' async runtime has no place for a blocking
    /// client).
    fn ready(&self) -> bool {
        use std::io::{Read, Write};
        let address = self.url.trim_start_matches("http://");
        let Ok(mut stream) = std::net::TcpStream::connect(address) else {
            return false;
        };
        let asked = stream.write_all(b"GET /v2/health/ready HTTP/1.0\r\nHost: mlserver\r\n\r\n");
        let mut answer = String::new();
        asked.is_ok()
            && stream.read_to_string(&mut answer).is_ok()
            && answer.starts_with("HTTP/1.1 200")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.repository.path().join("mlserver.log")).unwrap_or_default()
    }

    /// Kills the server at once (SIGKILL) and waits until it is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for MlServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A JSON file of the inference server's ConfigMap in
/// `deploy/kubernetes/inference-server.yaml` (a block under `KEY: |`).
fn shipped(key: &str) -> Value {
    let manifest = include_str!("../../../deploy/kubernetes/inference-server.yaml");
    let text: String = manifest
        .split(&format!("  {key}: |\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("no {key} in inference-server.yaml"))
        .lines()
        .take_while(|l| l.starts_with("    "))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&text).unwrap()
}

pub fn backend(url: &str, model: &str, max_in_flight: usize, max_retries: u32) -> Backend {
    Backend {
        url: url.to_owned(),
        model: model.to_owned(),
        version: String::new(),
        timeout_secs: 120,
        max_in_flight,
        max_retries,
        dictionary: None,
        api_key: ApiKey::None,
    }
}

/// A core whose `detect` (when `detect` is set) and `ocr` use the models
/// on `url`: `det` and `rec` name the server's models.
fn remote_core(url: &str, names: (&str, &str), detect: bool, in_flight: usize) -> TestCore {
    let (url, det, rec) = (url.to_owned(), names.0.to_owned(), names.1.to_owned());
    TestCore::configured(move |c| {
        c.backends
            .insert("det".into(), backend(&url, &det, in_flight, 1));
        c.backends
            .insert("rec".into(), backend(&url, &rec, in_flight, 1));
        c.settings.update(|ocr: &mut OcrSettings| {
            ocr.backend = OcrBackend::Onnx;
            ocr.detector = Some(ModelRef::Backend("det".into()));
            ocr.model = Some(ModelRef::Backend("rec".into()));
        });
        if detect {
            c.settings.update(|d: &mut DetectSettings| {
                d.backend = DetectBackend::Onnx;
                d.model = Some(ModelRef::Backend("det".into()));
            });
        }
    })
}

fn local_core(det: &Path, rec: &Path) -> TestCore {
    let (det, rec) = (det.to_path_buf(), rec.to_path_buf());
    TestCore::configured(move |c| {
        c.settings.update(|ocr: &mut OcrSettings| {
            ocr.backend = OcrBackend::Onnx;
            ocr.detector = Some(ModelRef::File(det.clone()));
            ocr.model = Some(ModelRef::File(rec));
        });
        c.settings.update(|d: &mut DetectSettings| {
            d.backend = DetectBackend::Onnx;
            d.model = Some(ModelRef::File(det));
        });
    })
}

/// What each test here starts from: the PP-OCRv6 files, a generated page
/// set named `set`, and MLServer serving the files; `None` when a tool is
/// missing and `ALLOW_MISSING_TOOLS` allows it.
fn served(test: &str, set: &str) -> Option<(PathBuf, Value, MlServer)> {
    let (det, rec) = ppocr_models(test)?;
    let (dir, truth) = page_set(test, set)?;
    let server = MlServer::start(test, &det, &rec)?;
    Some((dir, truth, server))
}

/// A URL where nothing listens (a port bound and let go).
fn closed_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port())
}

/// Rule 11: the models on the server give what the same files give run
/// here: as many blocks, each within two pixels, and at least 99 % of
/// the characters equal.
#[tokio::test(flavor = "multi_thread")]
async fn models_on_an_inference_server_find_and_read_what_the_files_do_here() {
    let test = "models_on_an_inference_server_find_and_read_what_the_files_do_here";
    let Some((dir, truth, server)) = served(test, "pages-backends") else {
        return;
    };
    let (det, rec) = ppocr_models(test).unwrap();
    let pages = truth["pages"].as_array().unwrap();
    let local = local_core(&det, &rec);
    let here = page_set_session(&local, &dir, pages).await;
    run(&local, here, &["detect", "ocr"]).await;
    let remote = remote_core(&server.url, ("ppocr-det", "ppocr-rec"), true, 4);
    let there = page_set_session(&remote, &dir, pages).await;
    run(&remote, there, &["detect", "ocr"]).await;
    let a = local.core.scene(here).await.unwrap().scene;
    let b = remote.core.scene(there).await.unwrap().scene;
    let (mut chars, mut errors, mut blocks) = (0, 0, 0);
    for (pa, pb) in a.pages.iter().zip(&b.pages) {
        let (na, nb) = (found(pa), found(pb));
        assert_eq!(na.len(), nb.len(), "page {}: blocks", pa.name);
        for ((ba, _, ta), (bb, _, tb)) in na.iter().zip(&nb) {
            for k in 0..4 {
                assert!(
                    (ba[k] - bb[k]).abs() <= 2.0,
                    "page {}: {ba:?} here, {bb:?} on the server",
                    pa.name
                );
            }
            chars += ta.chars().count();
            errors += strsim::levenshtein(ta, tb);
            blocks += 1;
        }
    }
    let equal = 1.0 - errors as f64 / chars.max(1) as f64;
    eprintln!(
        "backends: {blocks} blocks, {chars} characters, {:.2} % equal",
        equal * 100.0
    );
    assert!(
        blocks >= 20 && chars >= 200,
        "{blocks} blocks, {chars} chars"
    );
    assert!(equal >= 0.99, "{:.4} of the characters equal", equal);
    // Each backend's requests were counted, all answered.
    let counted = remote.core.backends().snapshot();
    let ok = |name: &str| {
        counted
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, s)| s.requests.iter().find(|(status, _)| status == "200"))
            .map_or(0, |(_, n)| *n)
    };
    assert!(ok("det") > 6 && ok("rec") > 0, "{counted:?}");
    assert!(
        counted
            .iter()
            .all(|(_, s)| s.ready == Some(true) && s.in_flight == 0),
        "{counted:?}"
    );
}

/// Rules 9 and 10: the server killed during `ocr` fails the job, naming
/// the backend and its URL; the pages read before it stay read; the same
/// job run again once the server is back reads only the rest.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_job_fails_it_by_name_and_a_rerun_reads_only_the_rest() {
    let test = "a_server_killed_mid_job_fails_it_by_name_and_a_rerun_reads_only_the_rest";
    let Some((dir, truth, mut server)) = served(test, "pages-backends-killed") else {
        return;
    };
    // One page at a time, so the kill lands before the last page.
    let t = remote_core(&server.url, ("ppocr-det", "ppocr-rec"), false, 1);
    let id = page_set_session(&t, &dir, truth["pages"].as_array().unwrap()).await;
    run(&t, id, &["detect"]).await;
    let unread = |scene: &quire_model::scene::Scene| -> Vec<usize> {
        scene
            .pages
            .iter()
            .map(|p| {
                p.nodes
                    .iter()
                    .filter(|n| matches!(&n.kind, NodeKind::Text { text: None, .. }))
                    .count()
            })
            .collect()
    };
    let before = unread(&t.core.scene(id).await.unwrap().scene);
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["ocr"]), Approval::Unattended)
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(600), sub.next())
            .await
            .expect("the job went on past its deadline")
            .expect("the event stream ended")
            .event
            .clone();
        match &event {
            Event::JobProgress { job_id, page, .. } if *job_id == job && *page == 1 => {
                server.kill();
            }
            Event::JobFinished { id: done, .. } if *done == job => {
                events.push(event);
                break;
            }
            _ => {}
        }
        events.push(event);
    }
    let (status, error) = finished(&events);
    let error = error.unwrap_or_default();
    assert_eq!(status, JobStatus::Failed, "{error}");
    let named = format!("(http://{}", server.url.trim_start_matches("http://"));
    assert!(
        error.contains("backend \"det\"") || error.contains("backend \"rec\""),
        "{error}"
    );
    assert!(
        error.contains(&named) && error.contains("unreachable"),
        "{error}"
    );
    let after = unread(&t.core.scene(id).await.unwrap().scene);
    assert_eq!(after[0], 0, "the first page was read before the kill");
    let left: usize = after.iter().sum();
    assert!(
        left > 0 && left < before.iter().sum(),
        "{before:?} → {after:?}"
    );
    // Back up: the same job reads only what is left, one detector
    // request per block.
    server.launch();
    let asked = |t: &TestCore| -> u64 {
        t.core
            .backends()
            .snapshot()
            .into_iter()
            .find(|(n, _)| n == "det")
            .map_or(0, |(_, s)| {
                s.requests
                    .iter()
                    .filter(|(status, _)| status == "200")
                    .map(|(_, n)| n)
                    .sum()
            })
    };
    let asked_before = asked(&t);
    run(&t, id, &["ocr"]).await;
    let done = unread(&t.core.scene(id).await.unwrap().scene);
    assert_eq!(done.iter().sum::<usize>(), 0, "{done:?}");
    assert_eq!(asked(&t) - asked_before, left as u64);
}

/// Rule 6: a wrong model name, a recogniser where a detector goes and an
/// unreachable URL each fail the job before it changes anything, in one
/// line naming the backend, its URL and what is wrong.
#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_model_a_wrong_kind_and_an_unreachable_url_are_named() {
    let test = "a_wrong_model_a_wrong_kind_and_an_unreachable_url_are_named";
    let Some((dir, truth, server)) = served(test, "pages-backends-wrong") else {
        return;
    };
    let closed = closed_url();
    let url = server.url.clone();
    let cases = [
        (
            url.as_str(),
            ("ppocr-det", "ppocr-recc"),
            format!("backend \"rec\" ({url}): no model \"ppocr-recc\" on the server"),
        ),
        (
            url.as_str(),
            ("ppocr-rec", "ppocr-rec"),
            format!(
                "backend \"det\" ({url}): output \"fetch_name_0\": wanted FP32 of rank 4 with 1 channel, the server has FP32 [-1, -1, 18710]"
            ),
        ),
        (
            closed.as_str(),
            ("ppocr-det", "ppocr-rec"),
            format!("backend \"det\" ({closed}): unreachable: connection refused"),
        ),
    ];
    let pages = &truth["pages"].as_array().unwrap()[..2];
    for (url, names, said) in cases {
        let t = remote_core(url, names, false, 2);
        let id = page_set_session(&t, &dir, pages).await;
        run(&t, id, &["detect"]).await;
        let before = t.core.scene(id).await.unwrap().scene;
        let mut sub = t.core.subscribe(None);
        let job = t
            .core
            .start_pipeline(id, spec(&["ocr"]), Approval::Unattended)
            .await
            .unwrap();
        let (status, error) = finished(&follow(&mut sub, job).await);
        assert_eq!(status, JobStatus::Failed);
        assert_eq!(error.as_deref(), Some(format!("ocr: {said}").as_str()));
        assert_eq!(t.core.scene(id).await.unwrap().scene, before, "{said}");
    }
}

/// Rules 5 and 7: `quire config check` refuses a backend it can check
/// without the network, and a key naming a backend that is not defined;
/// `quire models list` asks each backend and exits 1 when one is wrong.
#[test]
fn config_check_and_models_list_name_each_backend() {
    let test = "config_check_and_models_list_name_each_backend";
    let Some((det, rec)) = ppocr_models(test) else {
        return;
    };
    let Some(server) = MlServer::start(test, &det, &rec) else {
        return;
    };
    let s = crate::harness::Sandbox::new();
    let tables = |detector: &str, more: &str| {
        format!(
            "[backends.ppocr-det]\nprotocol = \"open-inference\"\nurl = \"{url}\"\nmodel = \"ppocr-det\"\n\
             [backends.ppocr-rec]\nprotocol = \"open-inference\"\nurl = \"{url}\"\nmodel = \"ppocr-rec\"\n{more}\n\
             [ocr]\nbackend = \"onnx\"\nmodel = {{ backend = \"ppocr-rec\" }}\ndetector = {{ backend = \"{detector}\" }}\n",
            url = server.url
        )
    };
    s.user_config(&tables("ppocr-det", ""));
    s.quire().args(["config", "check"]).run().success();
    let listed = s.quire().args(["models", "list", "--json"]).run();
    assert_eq!(listed.code(), 0, "{}", listed.stderr());
    let listed: Value = serde_json::from_str(&listed.stdout()).unwrap();
    let rows: Vec<(&str, &str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["key"].as_str().unwrap(),
                m["backend"].as_str().unwrap(),
                m["loads"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("ocr.detector", "ppocr-det", "ready"),
            ("ocr.model", "ppocr-rec", "ready (18708 characters)"),
        ]
    );
    // A backend no key names is listed too; a wrong model name makes
    // the command exit 1, its line saying why.
    let wrong =
        "[backends.typo]\nprotocol = \"open-inference\"\nurl = \"URL\"\nmodel = \"ppocr-recc\"\n"
            .replace("URL", &server.url);
    s.user_config(&tables("ppocr-det", &wrong));
    let table = s.quire().args(["models", "list"]).run();
    assert_eq!(table.code(), 1, "{}", table.stderr());
    let said = format!(
        "backend \"typo\" ({}): no model \"ppocr-recc\" on the server",
        server.url
    );
    assert!(table.stdout().contains(&said), "{}", table.stdout());
    assert!(table.stderr().contains("1 model cannot be used"));
    // Refused without asking the server, each naming its key.
    s.user_config(&tables("ppocr-dett", ""));
    s.quire().args(["config", "check"]).run().fails(
        2,
        &[
            "ocr.detector",
            "no backend \"ppocr-dett\" (defined: ppocr-det, ppocr-rec)",
        ],
    );
    let bad = [
        ("max_in_flight = 0", "backends.ppocr-rec.max_in_flight"),
        ("timeout_secs = 7200", "backends.ppocr-rec.timeout_secs"),
        ("max_retries = 11", "backends.ppocr-rec.max_retries"),
        ("protocol = \"grpc\"", "backends.ppocr-rec.protocol"),
        (
            "dictionary = \"/nonexistent/keys.txt\"",
            "backends.ppocr-rec.dictionary",
        ),
    ];
    for (line, key) in bad {
        let mut config = tables("ppocr-det", "");
        let at = config.find("model = \"ppocr-rec\"\n").unwrap() + "model = \"ppocr-rec\"\n".len();
        config.insert_str(at, &format!("{line}\n"));
        if line.starts_with("protocol") {
            config = config.replacen(
                "protocol = \"open-inference\"\nurl = \"URL\"\nmodel = \"ppocr-rec\""
                    .replace("URL", &server.url)
                    .as_str(),
                &format!("url = \"{}\"\nmodel = \"ppocr-rec\"", server.url),
                1,
            );
        }
        s.user_config(&config);
        s.quire().args(["config", "check"]).run().fails(2, &[key]);
    }
}

/// Rules 7 and 12: a headless server starts with a backend down, saying
/// so once; a job's requests to the others are counted on `/metrics`, as
/// the Prometheus client's parser reads it (tests/pages/backend_metrics.py).
#[test]
fn a_server_starts_with_a_backend_down_and_counts_each_backends_requests() {
    let test = "a_server_starts_with_a_backend_down_and_counts_each_backends_requests";
    let Some(python) = crate::mcp::python_with(test, "httpx, prometheus_client") else {
        return;
    };
    let Some((dir, _, server)) = served(test, "pages-backends-metrics") else {
        return;
    };
    let closed = closed_url();
    let s = crate::harness::Sandbox::new();
    let config = format!(
        "[server]\ntoken = \"{token}\"\n\
         [backends.det]\nprotocol = \"open-inference\"\nurl = \"{url}\"\nmodel = \"ppocr-det\"\n\
         [backends.rec]\nprotocol = \"open-inference\"\nurl = \"{url}\"\nmodel = \"ppocr-rec\"\n\
         [backends.down]\nprotocol = \"open-inference\"\nurl = \"{closed}\"\nmodel = \"ppocr-det\"\n\
         [ocr]\nbackend = \"onnx\"\nmodel = {{ backend = \"rec\" }}\ndetector = {{ backend = \"det\" }}\n",
        token = "backend-metrics-token",
        url = server.url
    );
    let mut quire = crate::http_support::Binary::headless_with_config(&s, "backends.toml", &config);
    let warned = quire.wait_for_log("backend \"down\"");
    assert!(
        warned.contains("WARN") && warned.contains(&format!("({closed}): unreachable")),
        "{warned}"
    );
    let mut cmd = Command::new(python);
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/pages/backend_metrics.py"
    ))
    .arg(&quire.url)
    .arg("backend-metrics-token")
    .arg(dir.join("page-01.png"));
    let out = crate::harness::run_checker(&s, &mut cmd, "ok");
    assert!(out.contains("backend metrics: ok"), "{out}");
    let warnings = quire
        .log()
        .into_iter()
        .filter(|l| l.contains("backend \""))
        .count();
    assert_eq!(warnings, 1, "one warning, for the backend that is down");
    assert!(quire.terminate().success());
}
