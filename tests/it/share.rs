//! TUI sharing end to end inside one process: a TUI loop (TestBackend) over
//! the in-process core, shared on a real Unix socket, driven by a raw
//! protocol client. Every rule of spec/07-tui-sharing.md that the unit
//! tests do not already cover.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use quire::share::endpoint::EndpointFile;
use quire::share::protocol::NAVIGATION_LIMIT;
use quire::tui::app::{App, Msg, Route};
use quire::tui::backend::{Backend, BackendEvent, Local, Reply};
use quire::tui::clock::Clock;
use quire::tui::run::Runner;
use quire::tui::share::Share;
use quire_model::ids::SessionId;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::{Notify, mpsc};
use uuid::Uuid;

use crate::core_base::TestCore;
use crate::http_support::{Binary, json_post};
use quire::config::secret::Secret;
use quire::tui::remote::Remote;

mod adapter;
mod navigation;

/// A backend whose `sessions()` waits until the test opens the gate, so a
/// validation can be caught in flight.
struct Gated {
    inner: Local,
    gate: Arc<Notify>,
    gated: Arc<std::sync::atomic::AtomicBool>,
    /// How many calls are waiting at the gate.
    held: Arc<std::sync::atomic::AtomicUsize>,
}

impl Backend for Gated {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn sessions(&self) -> Reply<'_, Vec<quire_core::events::SessionSummary>> {
        Box::pin(async move {
            if self.gated.load(std::sync::atomic::Ordering::SeqCst) {
                // Registered before it is counted, so a test that saw the
                // count cannot open the gate too early.
                let opened = self.gate.notified();
                self.held.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                opened.await;
            }
            self.inner.sessions().await
        })
    }
    fn projects(&self) -> Reply<'_, Vec<quire_core::ProjectEntry>> {
        self.inner.projects()
    }
    fn engines(&self) -> Reply<'_, Vec<quire_core::engines::EngineInfo>> {
        self.inner.engines()
    }
    fn jobs(&self) -> Reply<'_, Vec<quire_core::events::JobSummary>> {
        self.inner.jobs()
    }
    fn create_project(
        &self,
        name: String,
        languages: quire_model::lang::Languages,
    ) -> Reply<'_, quire_core::events::SessionSummary> {
        self.inner.create_project(name, languages)
    }
    fn open_project(&self, target: String) -> Reply<'_, quire_core::events::SessionSummary> {
        self.inner.open_project(target)
    }
    fn close_session(&self, id: SessionId) -> Reply<'_, ()> {
        self.inner.close_session(id)
    }
    fn scene(&self, id: SessionId) -> Reply<'_, quire_core::session::SceneSnapshot> {
        self.inner.scene(id)
    }
    fn apply(&self, id: SessionId, op: quire_model::op::Op) -> Reply<'_, quire_core::ApplyResult> {
        self.inner.apply(id, op)
    }
    fn undo(&self, id: SessionId) -> Reply<'_, Option<quire_core::StepResult>> {
        self.inner.undo(id)
    }
    fn redo(&self, id: SessionId) -> Reply<'_, Option<quire_core::StepResult>> {
        self.inner.redo(id)
    }
    fn start_pipeline(
        &self,
        id: SessionId,
        spec: quire_core::jobs::PipelineSpec,
        approval: quire_core::jobs::Approval,
    ) -> Reply<'_, quire_model::ids::JobId> {
        self.inner.start_pipeline(id, spec, approval)
    }
    fn cancel_job(&self, id: quire_model::ids::JobId) -> Reply<'_, bool> {
        self.inner.cancel_job(id)
    }
    fn import_text(
        &self,
        id: SessionId,
        name: String,
        text: String,
    ) -> Reply<'_, quire_core::ApplyResult> {
        self.inner.import_text(id, name, text)
    }
    fn import_files(
        &self,
        id: SessionId,
        files: Vec<quire_core::import::ImageFile>,
    ) -> Reply<'_, quire_core::import::ImportResult> {
        self.inner.import_files(id, files)
    }
    fn create_project_from(
        &self,
        name: Option<String>,
        languages: quire_model::lang::Languages,
        file: quire_core::import::ImageFile,
    ) -> Reply<'_, quire_core::events::SessionSummary> {
        self.inner.create_project_from(name, languages, file)
    }
    fn import_translations(
        &self,
        id: SessionId,
        import: quire_core::translations::TranslationImport,
    ) -> Reply<'_, quire_core::translations::ImportReport> {
        self.inner.import_translations(id, import)
    }
    fn import_glossary(
        &self,
        id: SessionId,
        import: quire_core::glossary::GlossaryImport,
    ) -> Reply<'_, quire_core::glossary::GlossaryReport> {
        self.inner.import_glossary(id, import)
    }
    fn import_archive(&self, bytes: Vec<u8>) -> Reply<'_, quire_core::events::SessionSummary> {
        self.inner.import_archive(bytes)
    }
    fn export(
        &self,
        id: SessionId,
        spec: quire_core::export::ExportSpec,
    ) -> Reply<'_, quire::tui::backend::Exported> {
        self.inner.export(id, spec)
    }
    fn matches(
        &self,
        id: SessionId,
        node: quire_model::ids::NodeId,
    ) -> Reply<'_, Vec<quire_core::matches::Match>> {
        self.inner.matches(id, node)
    }
    fn concordance(
        &self,
        id: SessionId,
        query: String,
    ) -> Reply<'_, Vec<quire_core::matches::Match>> {
        self.inner.concordance(id, query)
    }
    fn history(&self, id: SessionId, query: String) -> Reply<'_, quire_core::journal::HistoryPage> {
        self.inner.history(id, query)
    }
    fn suggest(
        &self,
        id: SessionId,
        node: quire_model::ids::NodeId,
        action: quire_core::suggestions::Action,
    ) -> Reply<'_, ()> {
        self.inner.suggest(id, node, action)
    }
    fn picture(
        &self,
        id: SessionId,
        hash: quire_model::hash::BlobHash,
        max_side: u32,
    ) -> Reply<'_, Vec<u8>> {
        self.inner.picture(id, hash, max_side)
    }
    fn events(&self) -> mpsc::UnboundedReceiver<BackendEvent> {
        self.inner.events()
    }
}

struct Harness {
    _core: TestCore,
    sessions: Vec<SessionId>,
    endpoint: EndpointFile,
    endpoint_path: std::path::PathBuf,
    input: mpsc::UnboundedSender<Msg>,
    gate: Arc<Notify>,
    gated: Arc<std::sync::atomic::AtomicBool>,
    held: Arc<std::sync::atomic::AtomicUsize>,
    state: Arc<std::sync::Mutex<App>>,
    /// The loop's clock: moved past the recent-input window, not slept.
    clock: Clock,
    _tmp: tempfile::TempDir,
}

/// A shared TUI on a workspace with two open sessions, showing home.
async fn shared_tui() -> Harness {
    // A short root, so the socket path fits whatever TMPDIR says.
    let tmp = tempfile::Builder::new()
        .prefix("qs")
        .tempdir_in("/tmp")
        .unwrap();
    let core = TestCore::new();
    let a = core.session("Alpha");
    let b = core.session("Beta");
    let gate = Arc::new(Notify::new());
    let gated = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let held = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let backend: Arc<dyn Backend> = Arc::new(Gated {
        inner: Local::new(core.core.clone()),
        gate: gate.clone(),
        gated: gated.clone(),
        held: held.clone(),
    });
    let live = share_live(
        backend,
        App::new("this workspace".into(), false),
        tmp.path(),
    );
    let idle = live.idle.clone();
    let h = Harness {
        _core: core,
        sessions: vec![a, b],
        endpoint: live.endpoint,
        endpoint_path: live.endpoint_path,
        input: live.input,
        gate,
        gated,
        held,
        state: live.state,
        clock: live.clock,
        _tmp: tmp,
    };
    // Settled: the first loads are applied, so the revision holds still.
    h.wait(|app| {
        app.link.loaded
            && app.workspace.sessions.len() == 2
            && idle.load(std::sync::atomic::Ordering::SeqCst)
    })
    .await;
    h
}

/// A running shared TUI loop: its endpoint, its input, and a mirror of its
/// state after every step.
struct Live {
    endpoint: EndpointFile,
    endpoint_path: std::path::PathBuf,
    input: mpsc::UnboundedSender<Msg>,
    state: Arc<std::sync::Mutex<App>>,
    idle: Arc<std::sync::atomic::AtomicBool>,
    clock: Clock,
}

/// The capability in an endpoint file.
fn token(endpoint: &EndpointFile) -> String {
    endpoint.token.get().unwrap().unwrap().to_owned()
}

/// Runs `app` over `backend` in a `TestBackend` terminal, shared with an
/// endpoint under `root`.
fn share_live(backend: Arc<dyn Backend>, app: App, root: &std::path::Path) -> Live {
    let share = Share::start_in(backend.clone(), root).unwrap();
    let endpoint_path = share.endpoint_file();
    let endpoint: EndpointFile =
        serde_json::from_slice(&std::fs::read(&endpoint_path).unwrap()).unwrap();
    let mut runner = Runner::new(
        Terminal::new(TestBackend::new(100, 30)).unwrap(),
        backend,
        app,
    )
    .with_share(share);
    let input = runner.sender();
    let clock = runner.clock();
    let state = Arc::new(std::sync::Mutex::new(runner.app.clone()));
    let idle = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mirror = state.clone();
    let idle_mirror = idle.clone();
    tokio::spawn(async move {
        while runner.step().await {
            *mirror.lock().unwrap() = runner.app.clone();
            idle_mirror.store(runner.idle(), std::sync::atomic::Ordering::SeqCst);
        }
        *mirror.lock().unwrap() = runner.app.clone();
    });
    Live {
        endpoint,
        endpoint_path,
        input,
        state,
        idle,
        clock,
    }
}

/// Waits until the mirrored state satisfies `done` (deadline 30 s).
async fn wait_state(state: &std::sync::Mutex<App>, mut done: impl FnMut(&App) -> bool) {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        if done(&state.lock().unwrap()) {
            return;
        }
        assert!(Instant::now() < end, "condition never held");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

impl Harness {
    async fn wait(&self, done: impl FnMut(&App) -> bool) {
        wait_state(&self.state, done).await;
    }

    fn key(&self, code: KeyCode) {
        self.input
            .send(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
            .unwrap();
    }

    /// Types `:tui-mcp-revoke` and waits until sharing has ended.
    async fn revoke(&self) {
        self.key(KeyCode::Char(':'));
        for ch in "tui-mcp-revoke".chars() {
            self.key(KeyCode::Char(ch));
        }
        self.key(KeyCode::Enter);
        self.wait(|app| app.share.is_none()).await;
    }

    async fn connect(&self) -> Client {
        let mut c = Client::raw(&self.endpoint.socket).await;
        let hello = c
            .request(
                "hello",
                json!({ "token": token(&self.endpoint), "client": "test", "protocol": 1 }),
            )
            .await
            .expect("hello answered");
        assert_eq!(
            hello["result"]["instance"],
            self.endpoint.instance.to_string()
        );
        c
    }
}

struct Client {
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    writer: tokio::net::unix::OwnedWriteHalf,
    next: u64,
}

impl Client {
    async fn raw(path: &std::path::Path) -> Client {
        let stream = UnixStream::connect(path).await.unwrap();
        let (r, w) = stream.into_split();
        Client {
            reader: BufReader::new(r),
            writer: w,
            next: 0,
        }
    }

    async fn send_line(&mut self, line: &[u8]) {
        self.writer.write_all(line).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
    }

    /// The next reply line, `None` when the TUI closed the connection.
    async fn read(&mut self) -> Option<Value> {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(30), self.reader.read_line(&mut line))
            .await
            .expect("no reply in time")
            .ok()?;
        (n > 0).then(|| serde_json::from_str(&line).unwrap())
    }

    async fn request(&mut self, method: &str, params: Value) -> Option<Value> {
        let id = self.next;
        self.next += 1;
        let frame = json!({ "id": id, "method": method, "params": params });
        self.send_line(frame.to_string().as_bytes()).await;
        self.read().await
    }

    async fn context(&mut self) -> Value {
        let r = self.request("get_view_context", json!({})).await.unwrap();
        assert_eq!(r["result"]["ok"], true, "{r}");
        r["result"]["context"].clone()
    }

    async fn select(&mut self, ctx: &Value, session: SessionId, request: Uuid) -> Value {
        let params = json!({
            "instance": ctx["instance"], "generation": ctx["generation"], "revision": ctx["revision"],
            "sessionId": session, "requestId": request, "deadlineMs": 5000,
        });
        self.request("select_session", params).await.unwrap()["result"].clone()
    }
}

/// A context once the recent-input window is over: the TUI's clock is
/// moved past it.
async fn quiet_context(c: &mut Client, clock: &Clock) -> Value {
    loop {
        let ctx = c.context().await;
        match ctx["retryAfterMs"].as_u64() {
            Some(ms) => clock.advance(Duration::from_millis(ms)),
            None => return ctx,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_frames_get_errors_and_bad_hellos_get_nothing() {
    let h = shared_tui().await;
    // A wrong token: closed without a word.
    let mut wrong = Client::raw(&h.endpoint.socket).await;
    let r = wrong
        .request(
            "hello",
            json!({ "token": "0".repeat(64), "client": "x", "protocol": 1 }),
        )
        .await;
    assert!(r.is_none(), "a wrong token got an answer: {r:?}");
    // Something other than hello first: closed.
    let mut rude = Client::raw(&h.endpoint.socket).await;
    assert!(rude.request("get_view_context", json!({})).await.is_none());
    // Silence: closed after the hello window.
    let mut silent = Client::raw(&h.endpoint.socket).await;
    assert!(silent.read().await.is_none());
    // After hello, bad frames are answered and the connection lives on.
    let mut c = h.connect().await;
    c.send_line(b"this is not json").await;
    assert_eq!(c.read().await.unwrap()["error"]["code"], "bad_request");
    c.send_line(&vec![b'x'; 70 * 1024]).await;
    assert_eq!(c.read().await.unwrap()["error"]["code"], "frame_too_large");
    let r = c.request("format_disk", json!({})).await.unwrap();
    assert_eq!(r["error"]["code"], "unknown_method");
    let r = c
        .request("select_session", json!({ "sessionId": 5 }))
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], "bad_request");
    assert_eq!(c.context().await["route"], "home");
}

#[test]
fn a_too_long_tmpdir_fails_at_start_with_the_fix() {
    let s = crate::harness::Sandbox::new();
    let long = s.path(&"d".repeat(110));
    std::fs::create_dir_all(&long).unwrap();
    let before = std::fs::read_dir(&long).unwrap().count();
    let out = s.quire().env("TMPDIR", &long).args(["--tui-mcp"]).run();
    let err = out.stderr();
    assert_eq!(out.code(), 1, "{err}");
    let first = err.lines().next().unwrap();
    assert!(first.starts_with("quire: error:"), "{first}");
    assert!(
        first.contains("limit of") && first.contains("TMPDIR"),
        "{first}"
    );
    assert_eq!(
        std::fs::read_dir(&long).unwrap().count(),
        before,
        "nothing was created"
    );
}

#[test]
fn the_adapter_refuses_an_unsafe_endpoint_file() {
    use std::os::unix::fs::PermissionsExt;
    let s = crate::harness::Sandbox::new();
    s.quire()
        .args(["mcp", "tui", "--endpoint", "/nonexistent/endpoint.json"])
        .run()
        .fails(1, &["cannot read the endpoint file"]);
    let dir = s.path("ep");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let file = s.write("ep/endpoint.json", "{}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    s.quire()
        .args(["mcp", "tui", "--endpoint", file.to_str().unwrap()])
        .run()
        .fails(1, &["the endpoint file", "accessible to group or others"]);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    s.quire()
        .args(["mcp", "tui", "--endpoint", file.to_str().unwrap()])
        .run()
        .fails(1, &["the endpoint directory"]);
}

/// A fake TUI behind a real endpoint: it greets, reads one request, then
/// either never answers or hangs up. Returns the endpoint and a counter of
/// requests received after the greeting.
async fn fake_tui(
    hang_up: bool,
) -> (
    quire::share::endpoint::Endpoint,
    tempfile::TempDir,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    let root = tempfile::Builder::new()
        .prefix("qf")
        .tempdir_in("/tmp")
        .unwrap();
    let ep = quire::share::endpoint::Endpoint::create(root.path()).unwrap();
    let listener = tokio::net::UnixListener::bind(&ep.socket).unwrap();
    let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let counter = counter.clone();
            tokio::spawn(async move {
                let (r, mut w) = stream.into_split();
                let mut lines = BufReader::new(r).lines();
                let Ok(Some(_hello)) = lines.next_line().await else {
                    return;
                };
                w.write_all(b"{\"id\":0,\"result\":{\"protocol\":1}}\n")
                    .await
                    .unwrap();
                let Ok(Some(_request)) = lines.next_line().await else {
                    return;
                };
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if hang_up {
                    return;
                }
                // Never answer; keep the connection open.
                while let Ok(Some(_)) = lines.next_line().await {
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    (ep, root, seen)
}

/// A real `quire mcp tui` adapter process, spoken to as an MCP client.
struct AdapterProc {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    out: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    next: u64,
}

impl AdapterProc {
    async fn start(endpoint: &std::path::Path, deadline_ms: u64) -> AdapterProc {
        let mut child = tokio::process::Command::new(crate::harness::BIN)
            .args(["mcp", "tui", "--endpoint", endpoint.to_str().unwrap()])
            .args(["--deadline-ms", &deadline_ms.to_string()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut a = AdapterProc {
            child,
            stdin,
            out,
            next: 1,
        };
        let init = a
            .rpc(
                "initialize",
                json!({ "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": { "name": "t", "version": "1" } }),
            )
            .await;
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        a.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        a
    }

    async fn send(&mut self, v: Value) {
        self.stdin
            .write_all(format!("{v}\n").as_bytes())
            .await
            .unwrap();
    }

    /// One JSON-RPC request; every line before its answer must be a
    /// protocol frame too.
    async fn rpc(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.out.next_line())
                .await
                .expect("the adapter answers in time")
                .unwrap()
                .expect("the adapter is still running");
            let v: Value = serde_json::from_str(&line).expect("stdout holds only JSON-RPC");
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            if v["id"] == id {
                return v;
            }
        }
    }

    /// A tool call's result (`isError` plus `structuredContent`).
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let r = self
            .rpc(
                "tools/call",
                json!({ "name": tool, "arguments": arguments }),
            )
            .await;
        r["result"].clone()
    }

    async fn select(&mut self, ctx: &Value, session: SessionId) -> Value {
        self.call(
            "select_session",
            json!({
                "instance": ctx["instance"], "generation": ctx["generation"],
                "revision": ctx["revision"], "sessionId": session, "requestId": Uuid::new_v4() }),
        )
        .await
    }
}

/// Calls `select_session` through a real adapter with a 300 ms deadline.
async fn adapter_select(endpoint: &std::path::Path) -> Value {
    let mut a = AdapterProc::start(endpoint, 300).await;
    let ctx = json!({ "instance": Uuid::new_v4(), "generation": 1, "revision": 1 });
    a.select(&ctx, SessionId::new()).await
}

/// A small deterministic generator for the fuzz test (xorshift64*).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `len` random bytes with no newline in them.
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| match self.next() as u8 {
                b'\n' => b'?',
                b => b,
            })
            .collect()
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}
