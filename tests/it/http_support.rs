//! Helpers for HTTP tests: the app served in process on 127.0.0.1:0, the
//! real binary started with `--port 0`, and a small SSE reader.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use quire::config::dirs::{DataPaths, Dirs};
use quire::config::{Config, LoadRequest, load_with};
use quire::http;
use quire_core::Core;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::harness::{BIN, Sandbox};

/// The default configuration, with data under `dir`.
pub fn config(dir: &std::path::Path) -> Config {
    let dirs = Dirs {
        system: dir.join("no-system"),
        user_config: None,
        user_data: Some(dir.join("data")),
    };
    load_with(&LoadRequest::default(), dirs).unwrap().config
}

/// The HTTP app served in this process.
pub struct TestServer {
    _dir: TempDir,
    pub core: Core,
    pub url: String,
    pub client: reqwest::Client,
    pub state: http::AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::with(|_| {}, None).await
    }

    /// Serves with `adjust` applied to the config and `extra` routes merged.
    pub async fn with(adjust: impl FnOnce(&mut Config), extra: Option<axum::Router>) -> Self {
        Self::build(adjust, extra, true).await
    }

    pub async fn build(
        adjust: impl FnOnce(&mut Config),
        extra: Option<axum::Router>,
        ready: bool,
    ) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("quire-http-")
            .tempdir()
            .unwrap();
        let mut cfg = config(dir.path());
        cfg.storage.durability = quire_store::Durability::Fsync;
        adjust(&mut cfg);
        let paths = DataPaths {
            data_dir: dir.path().join("data"),
            projects_dir: dir.path().join("data/projects"),
            logs_dir: dir.path().join("data/logs"),
            memory_dir: dir.path().join("data/memory"),
        };
        let core = Core::new(quire::launch::core_config(&cfg, &paths, "headless"));
        let send_timeout = Duration::from_secs(cfg.server.send_timeout_secs.get());
        let app = http::app(core.clone(), Arc::new(cfg), "headless", extra);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        if ready {
            app.state.set_ready();
        }
        let state = app.state.clone();
        tokio::spawn(http::serve(
            listener,
            app.router,
            app.shutdown,
            async move {
                let _ = stop_rx.await;
            },
            Duration::from_secs(5),
            send_timeout,
        ));
        TestServer {
            _dir: dir,
            core,
            url,
            client: crate::harness::http_client(),
            state,
            stop: Some(stop_tx),
        }
    }

    pub fn at(&self, path: &str) -> String {
        format!("{}{}", self.url, path)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.client.get(self.at(path)).send().await.unwrap();
        decode(r).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self
            .client
            .post(self.at(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        decode(r).await
    }

    pub async fn post_raw(&self, path: &str, body: &'static str) -> (u16, Value) {
        let r = self
            .client
            .post(self.at(path))
            .body(body)
            .send()
            .await
            .unwrap();
        decode(r).await
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut r = self.client.request(method, self.at(path));
        if let Some(body) = body {
            r = r.json(&body);
        }
        decode(r.send().await.unwrap()).await
    }

    /// The current session's epoch and scene, read through the API.
    pub async fn scene(&self) -> Value {
        let (status, scene) = self.get("/api/v1/scene.json").await;
        assert_eq!(status, 200, "{scene}");
        scene
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Status and JSON body (or the text as a JSON string when not JSON).
pub async fn decode(r: reqwest::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, value)
}

/// POSTs `body` as JSON to `url`: status and JSON body.
pub async fn json_post(client: &reqwest::Client, url: String, body: Value) -> (u16, Value) {
    let r = client.post(url).json(&body).send().await.unwrap();
    decode(r).await
}

/// Asserts an error status and code.
#[track_caller]
pub fn assert_error(got: &(u16, Value), status: u16, code: &str) {
    assert_eq!(got.0, status, "{}", got.1);
    assert_eq!(got.1["error"]["code"], code, "{}", got.1);
    assert!(
        got.1["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
}

/// A refusal by the HTTP guard of a request to `path`: the error body
/// above, or on `/mcp` a JSON-RPC error (no id, -32600) with the code as
/// `error.data.code`.
pub fn assert_refused(path: &str, got: &(u16, Value), status: u16, code: &str) {
    if path != "/mcp" {
        return assert_error(got, status, code);
    }
    assert_eq!(got.0, status, "{}", got.1);
    assert_eq!(got.1["jsonrpc"], "2.0", "{}", got.1);
    assert_eq!(got.1["id"], Value::Null, "{}", got.1);
    assert_eq!(got.1["error"]["code"], -32600, "{}", got.1);
    assert_eq!(got.1["error"]["data"]["code"], code, "{}", got.1);
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct Sse {
    pub id: Option<u64>,
    pub event: String,
    pub data: Value,
}

/// Reads SSE events from a streaming response, decoded by
/// `eventsource-stream` as the attached TUI decodes them (a character split
/// across chunks arrives whole).
pub struct SseReader {
    events: futures_util::stream::BoxStream<
        'static,
        Result<eventsource_stream::Event, eventsource_stream::EventStreamError<reqwest::Error>>,
    >,
}

impl SseReader {
    pub async fn connect(client: &reqwest::Client, url: &str, last_event_id: Option<u64>) -> Self {
        use eventsource_stream::Eventsource;
        let mut req = client.get(url);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-type"], "text/event-stream");
        SseReader {
            events: r.bytes_stream().eventsource().boxed(),
        }
    }

    /// The next event (comments and keep-alives skipped), within 30 s.
    pub async fn next(&mut self) -> Sse {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.next())
                .await
                .expect("no event in time")
                .expect("stream ended")
                .expect("a well-formed event stream");
            if event.data.is_empty() {
                continue;
            }
            return Sse {
                id: event.id.trim().parse().ok(),
                event: event.event,
                data: serde_json::from_str(&event.data).unwrap(),
            };
        }
    }

    /// Events until one matches `done`, which is included.
    pub async fn until(&mut self, mut done: impl FnMut(&Sse) -> bool) -> Vec<Sse> {
        let mut out = Vec::new();
        loop {
            let e = self.next().await;
            let stop = done(&e);
            out.push(e);
            if stop {
                return out;
            }
        }
    }
}

/// The real binary serving HTTP in a sandbox.
pub struct Binary {
    pub child: Child,
    pub url: String,
    /// The rest of its stderr, kept so its reader thread keeps draining it.
    stderr: mpsc::Receiver<String>,
    /// The lines of it read so far (by [`Binary::wait_for_log`]).
    seen: Vec<String>,
}

impl Drop for Binary {
    /// A failing test must not leave a server behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port that was free a moment ago, for a server that must
/// come back on the same port after a restart.
pub fn free_port() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string()
}

/// A blocking client for a server's routes, token by token.
pub struct Client {
    pub http: reqwest::blocking::Client,
    pub url: String,
}

/// The first page's id and its nodes' ids, from a `scene.json` reply.
pub fn first_page(scene: &Value) -> (String, Vec<String>) {
    let page = &scene["scene"]["pages"][0];
    let id = |v: &Value| v["id"].as_str().unwrap().to_owned();
    let nodes = page["nodes"].as_array().unwrap().iter().map(id).collect();
    (id(page), nodes)
}

impl Client {
    /// `METHOD path` with `token`; the status and the body (as JSON, or as
    /// a string when it is not JSON).
    pub fn call(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().unwrap();
        let status = response.status().as_u16();
        let text = response.text().unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// A new project named `name`, opened by `token`'s user: the routes
    /// prefix of its session (`/api/v1/sessions/{id}`).
    pub fn new_project(&self, token: &str, name: &str) -> String {
        let session = self.ok(
            "POST",
            "/api/v1/projects",
            token,
            Some(json!({ "name": name })),
        );
        format!("/api/v1/sessions/{}", session["id"].as_str().unwrap())
    }

    /// A text page `p1` of `text` (a node a paragraph) in the session
    /// `prefix` names; the scene after it.
    pub fn text_page(&self, prefix: &str, token: &str, text: &str) -> Value {
        self.ok(
            "POST",
            &format!("{prefix}/pages"),
            token,
            Some(json!({ "name": "p1", "text": text })),
        );
        self.ok("GET", &format!("{prefix}/scene.json"), token, None)
    }

    /// Files as one multipart upload to the session's pages route: the
    /// status and the body.
    pub fn upload(&self, prefix: &str, files: Vec<(String, Vec<u8>)>) -> (u16, Value) {
        let mut form = reqwest::blocking::multipart::Form::new();
        for (name, bytes) in files {
            form = form.part(
                "file",
                reqwest::blocking::multipart::Part::bytes(bytes).file_name(name),
            );
        }
        let response = self
            .http
            .post(format!("{}{prefix}/pages", self.url))
            .multipart(form)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(Value::Null))
    }

    /// `call`, which must succeed; its body.
    pub fn ok(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> Value {
        let (status, body) = self.call(method, path, token, body);
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {body}"
        );
        body
    }
}

impl Binary {
    /// Starts `quire ARGS` and waits for its `quire: serving` line.
    /// `quire --headless --port 0` with the config file `name` holding
    /// `text` in the sandbox.
    pub fn headless_with_config(sandbox: &Sandbox, name: &str, text: &str) -> Binary {
        let config = sandbox.write(name, text);
        let config = config.to_str().unwrap();
        Binary::start(
            sandbox,
            &["--config", config, "--headless", "--port", "0"],
            &[],
        )
    }

    pub fn start(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Binary {
        let mut cmd = Command::new(BIN);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", sandbox.path("home"))
            .env("XDG_CONFIG_HOME", sandbox.path("config"))
            .env("XDG_DATA_HOME", sandbox.path("data"))
            .env("QUIRE_SYSTEM_CONFIG_DIR", sandbox.path("etc"))
            .env("NO_COLOR", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        // Waited for by `terminate` or, if the test fails first, by `Drop`.
        #[allow(clippy::zombie_processes)]
        let mut child = cmd
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = rx.recv_timeout(left).expect("no `quire: serving` line");
            if let Some(rest) = line.strip_prefix("quire: serving ") {
                let url = rest.split_whitespace().next().unwrap().to_owned();
                return Binary {
                    child,
                    url,
                    stderr: rx,
                    seen: vec![line],
                };
            }
        }
    }

    /// Starts `quire --config CONFIG --headless --port 0 EXTRA…`.
    pub fn headless(
        sandbox: &Sandbox,
        config: &std::path::Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Binary {
        let config = config.to_str().unwrap();
        let mut args = vec!["--config", config, "--headless", "--port", "0"];
        args.extend_from_slice(extra);
        Binary::start(sandbox, &args, env)
    }

    /// A blocking client for its routes.
    pub fn client(&self) -> Client {
        Client {
            http: crate::harness::blocking_client(),
            url: self.url.clone(),
        }
    }

    /// The most memory the process has held so far (`VmHWM`), in MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/<pid>/status");
        kib / 1024.0
    }

    /// The memory the process holds now (`VmRSS`), in MiB.
    pub fn rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/<pid>/status");
        kib / 1024.0
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Sends `signal` (`HUP`, …) and returns at once.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal} {pid}");
    }

    /// Reads its stderr until a line holds `part` (within 30 s); that
    /// line.
    pub fn wait_for_log(&mut self, part: &str) -> String {
        if let Some(line) = self.seen.iter().find(|l| l.contains(part)) {
            return line.clone();
        }
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let Ok(line) = self.stderr.recv_timeout(left) else {
                panic!("no log line with `{part}` in:\n{}", self.seen.join("\n"));
            };
            self.seen.push(line.clone());
            if line.contains(part) {
                return line;
            }
        }
    }

    /// Every line of its stderr so far.
    pub fn log(&mut self) -> Vec<String> {
        while let Ok(line) = self.stderr.try_recv() {
            self.seen.push(line);
        }
        self.seen.clone()
    }

    /// SIGTERM, then the exit status and every line it wrote to stderr,
    /// up to its last (within 30 s).
    pub fn finish(mut self) -> (ExitStatus, Vec<String>) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        // Until the reader thread sees the end of stderr.
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("quire did not exit after SIGTERM"),
            }
        }
        let status = self.child.wait().unwrap();
        (status, std::mem::take(&mut self.seen))
    }

    /// SIGTERM, then the exit status (within 30 s).
    pub fn terminate(self) -> ExitStatus {
        self.stop_with("TERM")
    }

    /// Sends `signal` (`TERM`, `INT`, `HUP`), then the exit status (within
    /// 30 s).
    pub fn stop_with(mut self, signal: &str) -> ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < end, "quire did not exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
