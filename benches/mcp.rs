//! MCP benchmarks (targets in spec/09-quality.md), medians:
//!
//! - `quire mcp stdio`: spawn → initialize → tools/list answered;
//! - a warm `tools/call` round trip over stdio (a cheap tool);
//! - a warm `tools/call` round trip over `/mcp` (streamable HTTP);
//! - TUI sharing: `get_view_context` through `quire mcp tui` to a shared TUI
//!   (the TUI runs in this process on a TestBackend);
//! - the size of the `tools/list` reply in bytes;
//! - `quire_view_page` on a 1200×1800 page (decode, scale to 1568, JPEG);
//! - apply → `notifications/resources/updated` for a subscribed scene;
//! - `/mcp` initialize of a new session, and the server's memory with 320
//!   idle sessions open;
//! - the stateless era (2026-07-28): `quire mcp stdio` spawn →
//!   `server/discover` → tools/list; over `/mcp` `server/discover` → the
//!   first call, a warm `tools/call`, and the server's memory across 1,000
//!   stateless requests (none should leave state behind);
//! - against a bare rmcp server (`examples/mcp_peer.rs`, built with `cargo
//!   build --release --example mcp_peer`) in interleaved rounds: stdio
//!   start in both eras, idle RSS, warm calls over stdio and `/mcp` (a
//!   small result and a ~5 kB one), 4 concurrent `/mcp` clients'
//!   throughput; then a headless server's RSS with one project open, and
//!   the binary's size.
//!
//! Run pinned to one CPU, as the specification asks for latency figures:
//! `taskset -c 0 cargo bench --bench mcp` (child processes inherit it);
//! `-- peer` (or `stdio`, `http`, `share`) runs only those sections.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "mcp/peer.rs"]
mod peer;

/// The binary measured: this build's, or `BENCH_BIN` (to compare builds
/// with one harness; parts an older binary lacks are skipped).
fn bin() -> String {
    std::env::var("BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_quire").to_owned())
}
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn show(name: &str, samples: Vec<Duration>) {
    let n = samples.len();
    let mut sorted = samples.clone();
    sorted.sort();
    let p90 = sorted[n * 9 / 10];
    println!(
        "{name:<48} median {:>10.1?}   p90 {:>10.1?}   (n = {n})",
        median(samples),
        p90
    );
}

struct Stdio_ {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

fn spawn(data: &std::path::Path) -> Stdio_ {
    spawn_with(data, &["mcp", "stdio", "-q"])
}

/// `quire ARGS` in the bench's sandbox, spoken to over stdin/stdout.
fn spawn_with(data: &std::path::Path, args: &[&str]) -> Stdio_ {
    spawn_program(&bin(), data, args)
}

/// `PROGRAM ARGS` in the bench's sandbox, spoken to over stdin/stdout.
fn spawn_program(program: &str, data: &std::path::Path, args: &[&str]) -> Stdio_ {
    let mut child = Command::new(program)
        .args(args)
        .env("XDG_CONFIG_HOME", data.join("config"))
        .env("XDG_DATA_HOME", data.join("data"))
        .env("QUIRE_SYSTEM_CONFIG_DIR", data.join("etc"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    Stdio_ {
        child,
        stdin,
        stdout,
    }
}

impl Stdio_ {
    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&mut self, id: u64) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            self.stdout.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

/// The per-request metadata of the stateless era.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "bench", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A stateless-era request: `method` with `params` and the metadata.
fn stateless(id: u64, method: &str, mut params: Value) -> String {
    params["_meta"] = stateless_meta();
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

fn call(id: u64) -> String {
    call_tool(id, "quire_list_sessions")
}

/// A handshake-era `tools/call` of `name` without arguments.
fn call_tool(id: u64, name: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": name, "arguments": {} } })
    .to_string()
}

fn stdio_benches(data: &std::path::Path) {
    let mut spawns = Vec::new();
    for _ in 0..40 {
        let start = Instant::now();
        let mut p = spawn(data);
        p.send(INIT);
        p.answer(1);
        p.send(INITIALIZED);
        p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#);
        p.answer(2);
        spawns.push(start.elapsed());
        drop(p.stdin);
        p.child.wait().unwrap();
    }
    show("stdio: spawn -> initialize -> tools/list", spawns);
    let mut spawns = Vec::new();
    for _ in 0..40 {
        let start = Instant::now();
        let mut p = spawn(data);
        p.send(&stateless(1, "server/discover", json!({})));
        p.answer(1);
        p.send(&stateless(2, "tools/list", json!({})));
        p.answer(2);
        spawns.push(start.elapsed());
        drop(p.stdin);
        p.child.wait().unwrap();
    }
    show("stdio 2026-07-28: spawn -> discover -> tools/list", spawns);
    let mut p = spawn(data);
    p.send(INIT);
    p.answer(1);
    p.send(INITIALIZED);
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#);
    let listed = p.answer(2);
    println!(
        "{:<48} {} bytes ({} tools)",
        "stdio: tools/list reply",
        listed.to_string().len(),
        listed["result"]["tools"].as_array().map_or(0, Vec::len)
    );
    let has_pages = listed["result"]["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "quire_view_page"));
    drop(p.stdin);
    p.child.wait().unwrap();

    let mut p = spawn(data);
    p.send(INIT);
    p.answer(1);
    p.send(INITIALIZED);
    let mut calls = Vec::new();
    for i in 0..3000u64 {
        let msg = call(10 + i);
        let start = Instant::now();
        p.send(&msg);
        p.answer(10 + i);
        if i >= 200 {
            calls.push(start.elapsed());
        }
    }
    show("stdio: warm tools/call round trip", calls);
    drop(p.stdin);
    p.child.wait().unwrap();
    if has_pages {
        page_benches(data);
    }
}

fn tool(id: u64, name: &str, arguments: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": name, "arguments": arguments } })
    .to_string()
}

/// A 1200×1800 RGB page as PNG: a gradient with some structure, so the
/// encoder and scaler do real work.
fn page_png(seed: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(1200, 1800, |x, y| {
        image::Rgb([
            ((x + seed) % 256) as u8,
            (y % 256) as u8,
            ((x ^ y ^ seed) % 256) as u8,
        ])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn page_benches(data: &std::path::Path) {
    use base64::Engine as _;
    let mut p = spawn(data);
    p.send(INIT);
    p.answer(1);
    p.send(INITIALIZED);
    p.send(&tool(
        2,
        "quire_open_project",
        json!({ "path": "bench-view", "createName": "View" }),
    ));
    let opened = p.answer(2);
    let session = opened["result"]["structuredContent"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    // One page per call: ten of them would pass the 16 MiB frame limit.
    let pages: Vec<String> = (0..10u32)
        .map(|seed| {
            let data = base64::engine::general_purpose::STANDARD.encode(page_png(seed));
            let item =
                json!({ "name": format!("p{seed}.png"), "mimeType": "image/png", "data": data });
            p.send(&tool(
                3 + u64::from(seed) * 1000,
                "quire_import_pages",
                json!({ "items": [item] }),
            ));
            let imported = p.answer(3 + u64::from(seed) * 1000);
            imported["result"]["structuredContent"]["created"][0]
                .as_str()
                .unwrap_or_else(|| panic!("import failed: {imported}"))
                .to_owned()
        })
        .collect();
    let mut view = |id: u64, page: &str| {
        let start = Instant::now();
        p.send(&tool(id, "quire_view_page", json!({ "pageId": page })));
        let v = p.answer(id);
        assert!(v["result"]["isError"] != json!(true), "{v}");
        start.elapsed()
    };
    let first: Vec<Duration> = pages
        .iter()
        .enumerate()
        .map(|(i, page)| view(100 + i as u64, page))
        .collect();
    show("stdio: quire_view_page, 1200x1800, first view", first);
    let views: Vec<Duration> = (0..30u64).map(|i| view(150 + i, &pages[0])).collect();
    show("stdio: quire_view_page, the same page again", views);

    // A subscriber hears of each change; changes are spaced beyond the
    // coalescing window, so each is told at once.
    let uri = format!("quire://sessions/{session}/scene");
    p.send(&json!({ "jsonrpc": "2.0", "id": 4, "method": "resources/subscribe", "params": { "uri": uri } }).to_string());
    p.answer(4);
    let mut updates = Vec::new();
    for i in 0..60u64 {
        let op = json!({ "type": "UpdateProject", "patch": { "name": format!("v{i}") } });
        let start = Instant::now();
        p.send(&tool(200 + i, "quire_apply", json!({ "op": op })));
        // The answer and the notification come in either order.
        let (mut told, mut answered) = (false, false);
        let mut line = String::new();
        while !(told && answered) {
            line.clear();
            p.stdout.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["method"] == "notifications/resources/updated" && !told {
                updates.push(start.elapsed());
                told = true;
            }
            answered |= v["id"] == 200 + i;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    show("stdio: apply -> resources/updated", updates);
    drop(p.stdin);
    p.child.wait().unwrap();
}

/// The resident memory of process `pid` in KiB (Linux `/proc`).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A POST to an MCP endpoint, accepting JSON or an event stream.
fn mcp_request(client: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
}

/// A handshake-era request to `/mcp`: in the session `session` names, or
/// none (an `initialize`).
fn handshake_post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: String,
) -> impl Future<Output = reqwest::Result<reqwest::Response>> + use<> {
    let mut r = mcp_request(client, url).header("MCP-Protocol-Version", "2025-06-18");
    if let Some(s) = session {
        r = r.header("Mcp-Session-Id", s);
    }
    r.body(body).send()
}

/// A handshake-era `/mcp` session, initialized: its id.
async fn open_session(client: &reqwest::Client, url: &str) -> String {
    let r = handshake_post(client, url, None, INIT.to_owned())
        .await
        .unwrap();
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    r.bytes().await.unwrap();
    handshake_post(client, url, Some(&id), INITIALIZED.to_owned())
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    id
}

/// Starts `PROGRAM ARGS` as an HTTP server in the bench's sandbox and
/// returns it with its MCP endpoint, read from the `… serving URL` line
/// it writes on stderr.
fn serve_http(program: &str, data: &std::path::Path, args: &[&str]) -> (Child, String) {
    let mut child = Command::new(program)
        .args(args)
        .env("XDG_CONFIG_HOME", data.join("config"))
        .env("XDG_DATA_HOME", data.join("data-http"))
        .env("QUIRE_SYSTEM_CONFIG_DIR", data.join("etc"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "{program} ended");
        if let Some((_, rest)) = line.split_once("serving ") {
            break format!("{}/mcp", rest.split_whitespace().next().unwrap());
        }
    };
    // Keep draining its stderr so that it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    (child, url)
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    child.wait().unwrap();
}

fn http_bench(data: &std::path::Path) {
    let (child, url) = serve_http(&bin(), data, &["--headless", "--port", "0"]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        quire_core::install_tls_provider();
        let client = reqwest::Client::new();
        let post = |session: Option<String>, body: String| {
            handshake_post(&client, &url, session.as_deref(), body)
        };
        // New sessions: initialize latency, then the memory they hold idle.
        let before = rss_kib(child.id());
        let mut inits = Vec::new();
        let mut idle = Vec::new();
        for _ in 0..320 {
            let start = Instant::now();
            let r = post(None, INIT.to_owned()).await.unwrap();
            let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
            r.bytes().await.unwrap();
            inits.push(start.elapsed());
            idle.push(id);
        }
        show("/mcp: initialize a new session", inits);
        let after = rss_kib(child.id());
        println!(
            "{:<48} {} KiB before, {} KiB after ({} KiB per session)",
            "/mcp: RSS with 320 idle sessions",
            before,
            after,
            after.saturating_sub(before) / 320
        );
        let r = post(None, INIT.to_owned()).await.unwrap();
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        r.bytes().await.unwrap();
        post(Some(session.clone()), INITIALIZED.to_owned())
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let mut calls = Vec::new();
        for i in 0..3000u64 {
            let start = Instant::now();
            let body = post(Some(session.clone()), call(10 + i))
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            assert!(!body.is_empty());
            if i >= 200 {
                calls.push(start.elapsed());
            }
        }
        show("/mcp: warm tools/call round trip", calls);

        // The stateless era: no session; every request stands alone.
        let post_stateless = |method: &'static str, name: Option<&'static str>, body: String| {
            let mut r = mcp_request(&client, &url)
                .header("Mcp-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", method);
            if let Some(name) = name {
                r = r.header("Mcp-Name", name);
            }
            r.body(body).send()
        };
        let stateless_call = |id: u64| {
            stateless(
                id,
                "tools/call",
                json!({ "name": "quire_list_sessions", "arguments": {} }),
            )
        };
        let mut firsts = Vec::new();
        for i in 0..200u64 {
            let start = Instant::now();
            let discover = stateless(i * 2, "server/discover", json!({}));
            post_stateless("server/discover", None, discover)
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            let body = post_stateless(
                "tools/call",
                Some("quire_list_sessions"),
                stateless_call(i * 2 + 1),
            )
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
            assert!(body.windows(8).any(|w| w == b"sessions"), "{body:?}");
            firsts.push(start.elapsed());
        }
        show("/mcp 2026-07-28: discover -> first tools/call", firsts);
        let before = rss_kib(child.id());
        let mut calls = Vec::new();
        for i in 0..3000u64 {
            let start = Instant::now();
            let body = post_stateless(
                "tools/call",
                Some("quire_list_sessions"),
                stateless_call(10_000 + i),
            )
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
            assert!(!body.is_empty());
            if i >= 200 {
                calls.push(start.elapsed());
            }
            if i == 999 {
                println!(
                    "{:<48} {} KiB before, {} KiB after 1,000",
                    "/mcp 2026-07-28: RSS across stateless requests",
                    before,
                    rss_kib(child.id())
                );
            }
        }
        show("/mcp 2026-07-28: warm tools/call round trip", calls);
        println!(
            "{:<48} {} KiB after 3,000",
            "/mcp 2026-07-28: RSS",
            rss_kib(child.id())
        );
    });
    stop(child);
}

fn share_bench(data: &std::path::Path) {
    use std::sync::Arc;

    use quire::tui::app::App;
    use quire::tui::backend::{Backend, Local};
    use quire::tui::run::Runner;
    use quire_core::{Core, CoreConfig};

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let root = tempfile::Builder::new()
        .prefix("qb")
        .tempdir_in("/tmp")
        .unwrap();
    let endpoint = rt.block_on(async {
        let core = Core::new(CoreConfig::new(
            data.join("share-projects"),
            quire_core::session::SessionSettings {
                durability: quire_store::Durability::Fsync,
                snapshot_every_ops: 1000,
                undo_limit: 100,
                max_op_bytes: 32 << 20,
                history_max_bytes: 256 << 20,
            },
            "bench",
        ));
        let backend: Arc<dyn Backend> = Arc::new(Local::new(core));
        let share = quire::tui::share::Share::start_in(backend.clone(), root.path()).unwrap();
        let endpoint = share.endpoint_file();
        let terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
        let mut runner =
            Runner::new(terminal, backend, App::new("bench".into(), false)).with_share(share);
        tokio::spawn(async move { while runner.step().await {} });
        endpoint
    });
    let mut p = spawn_with(
        data,
        &["mcp", "tui", "--endpoint", endpoint.to_str().unwrap()],
    );
    p.send(INIT);
    p.answer(1);
    p.send(INITIALIZED);
    let mut calls = Vec::new();
    for i in 0..3000u64 {
        let msg = json!({ "jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                          "params": { "name": "get_view_context", "arguments": {} } })
        .to_string();
        let start = Instant::now();
        p.send(&msg);
        let answer = p.answer(10 + i);
        assert_eq!(answer["result"]["structuredContent"]["ok"], true);
        if i >= 200 {
            calls.push(start.elapsed());
        }
    }
    show("share: get_view_context through the adapter", calls);
    drop(p.stdin);
    p.child.wait().unwrap();
    drop(rt);
}

/// One part of the bench, run in the bench's sandbox directory.
type Section = fn(&std::path::Path);

fn main() {
    // `cargo test --all-targets` runs benches once with --bench absent;
    // only measure when run as a benchmark.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    // `cargo bench --bench mcp -- NAME…` runs only the named sections.
    let named: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let sections: [(&str, Section); 4] = [
        ("stdio", stdio_benches),
        ("http", http_bench),
        ("share", share_bench),
        ("peer", peer::peer_bench),
    ];
    for (name, section) in sections {
        if named.is_empty() || named.iter().any(|n| n == name) {
            section(dir.path());
        }
    }
}
