//! The peer bench: quire's MCP server against the bare rmcp server of
//! `examples/mcp_peer.rs` (`cargo bench --bench mcp -- --bench peer`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{
    INIT, INITIALIZED, Stdio_, bin, call, call_tool, handshake_post, median, open_session, rss_kib,
    serve_http, spawn_program, stateless, stop,
};

/// The bare rmcp server of `examples/mcp_peer.rs`, built next to the
/// measured binary (`PEER_BIN` overrides).
fn peer_bin() -> Option<String> {
    let path = std::env::var("PEER_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            let quire = std::path::PathBuf::from(bin());
            quire.parent().unwrap().join("examples/mcp_peer")
        });
    path.exists().then(|| path.to_string_lossy().into_owned())
}

/// Medians of quire's samples, the peer's, and of their per-round ratios.
fn compare(name: &str, quire: &[Duration], peer: &[Duration]) {
    let ratios: Vec<f64> = quire
        .iter()
        .zip(peer)
        .map(|(q, p)| q.as_secs_f64() / p.as_secs_f64())
        .collect();
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "{name:<48} quire {:>9.1?}   rmcp {:>9.1?}   {:.2}x (paired, n = {})",
        median(quire.to_vec()),
        median(peer.to_vec()),
        sorted[sorted.len() / 2],
        ratios.len()
    );
}

/// quire against a bare rmcp 3.11 server in the same run: rounds
/// interleave the two and alternate which goes first, so that a busy host
/// slows both alike.
/// quire against the bare rmcp server, each measurement paired and
/// alternated: starts in both eras, warm calls over stdio and `/mcp`, four
/// clients at once, and a headless server's memory with a project open.
pub(super) fn peer_bench(data: &Path) {
    let Some(peer) = peer_bin() else {
        println!("peer: not built (cargo build --release --example mcp_peer): skipped");
        return;
    };
    let quire = bin();
    let servers: Servers = [
        (quire.as_str(), &["mcp", "stdio", "-q"][..]),
        (peer.as_str(), &["stdio"][..]),
    ];
    starts(&servers, data);
    stateless_starts(&servers, data);
    stdio_calls(&servers, data);
    http_calls(&quire, &peer, data);
    one_project_open(&quire, data);
}

/// The two servers' programs and arguments: quire's, then the peer's.
type Servers<'a> = [(&'a str, &'a [&'a str]); 2];

/// Which server goes first in a round: they alternate.
fn first(round: usize) -> [usize; 2] {
    if round.is_multiple_of(2) {
        [0, 1]
    } else {
        [1, 0]
    }
}

/// Start: spawn -> initialize -> tools/list; then the idle process's RSS.
fn starts(servers: &Servers<'_>, data: &Path) {
    let mut starts = [Vec::new(), Vec::new()];
    let mut idle = [Vec::new(), Vec::new()];
    for round in 0..60 {
        for which in first(round) {
            let (program, args) = servers[which];
            let start = Instant::now();
            let mut p = spawn_program(program, data, args);
            p.send(INIT);
            p.answer(1);
            p.send(INITIALIZED);
            p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#);
            p.answer(2);
            starts[which].push(start.elapsed());
            if round.is_multiple_of(6) {
                std::thread::sleep(Duration::from_millis(50));
                idle[which].push(rss_kib(p.child.id()));
            }
            drop(p.stdin);
            p.child.wait().unwrap();
        }
    }
    compare(
        "peer: stdio spawn -> initialize -> tools/list",
        &starts[0],
        &starts[1],
    );
    let mid = |mut v: Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let (q, p) = (mid(idle[0].clone()), mid(idle[1].clone()));
    println!(
        "{:<48} quire {q:>6} KiB   rmcp {p:>6} KiB   {:.2}x",
        "peer: idle RSS after tools/list (stdio)",
        q as f64 / p as f64
    );
}

/// Start in the stateless era: spawn -> server/discover -> tools/list.
fn stateless_starts(servers: &Servers<'_>, data: &Path) {
    let mut starts = [Vec::new(), Vec::new()];
    for round in 0..60 {
        for which in first(round) {
            let (program, args) = servers[which];
            let start = Instant::now();
            let mut p = spawn_program(program, data, args);
            p.send(&stateless(1, "server/discover", json!({})));
            p.answer(1);
            p.send(&stateless(2, "tools/list", json!({})));
            let listed = p.answer(2);
            assert!(listed["result"]["tools"].is_array(), "{listed}");
            starts[which].push(start.elapsed());
            drop(p.stdin);
            p.child.wait().unwrap();
        }
    }
    compare(
        "peer: stdio 2026-07-28 spawn -> discover -> tools/list",
        &starts[0],
        &starts[1],
    );
}

/// Warm calls over stdio: blocks of 100, alternating.
fn stdio_calls(servers: &Servers<'_>, data: &Path) {
    let mut procs: Vec<Stdio_> = servers
        .iter()
        .map(|(program, args)| {
            let mut p = spawn_program(program, data, args);
            p.send(INIT);
            p.answer(1);
            p.send(INITIALIZED);
            p
        })
        .collect();
    let mut calls = [Vec::new(), Vec::new()];
    for block in 0..30u64 {
        for which in first(block as usize) {
            for i in 0..100 {
                let id = 10 + block * 100 + i;
                let msg = call(id);
                let start = Instant::now();
                procs[which].send(&msg);
                procs[which].answer(id);
                if block >= 2 {
                    calls[which].push(start.elapsed());
                }
            }
        }
    }
    compare("peer: stdio warm tools/call", &calls[0], &calls[1]);
    for p in procs {
        drop(p.stdin);
        let mut child = p.child;
        child.wait().unwrap();
    }
}

/// Warm calls over /mcp (handshake era, one session each), a small and a
/// ~5 kB result; then four clients at once.
fn http_calls(quire: &str, peer: &str, data: &Path) {
    let served = [
        serve_http(quire, data, &["--headless", "--port", "0"]),
        serve_http(peer, data, &["http"]),
    ];
    let urls = [served[0].1.clone(), served[1].1.clone()];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        quire_core::install_tls_provider();
        let client = reqwest::Client::new();
        warm_http_calls(&client, &urls).await;
        four_clients(&client, &urls).await;
    });
    for (child, _) in served {
        stop(child);
    }
}

async fn warm_http_calls(client: &reqwest::Client, urls: &[String; 2]) {
    let mut sessions = Vec::new();
    for url in urls {
        sessions.push(open_session(client, url).await);
    }
    for (tool, label, marker) in [
        (
            "quire_list_sessions",
            "peer: /mcp warm tools/call",
            &b"sessions"[..],
        ),
        (
            "quire_list_engines",
            "peer: /mcp warm tools/call, ~5 kB result",
            &b"result"[..],
        ),
    ] {
        let mut calls = [Vec::new(), Vec::new()];
        let mut sizes = [0, 0];
        for block in 0..30u64 {
            for which in first(block as usize) {
                for i in 0..100 {
                    let start = Instant::now();
                    let body = handshake_post(
                        client,
                        &urls[which],
                        Some(&sessions[which]),
                        call_tool(10 + block * 100 + i, tool),
                    )
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap();
                    assert!(body.windows(marker.len()).any(|w| w == marker), "{body:?}");
                    sizes[which] = body.len();
                    if block >= 2 {
                        calls[which].push(start.elapsed());
                    }
                }
            }
        }
        compare(label, &calls[0], &calls[1]);
        println!(
            "{:<48} quire {:>6} B     rmcp {:>6} B",
            "  reply bytes", sizes[0], sizes[1]
        );
    }
}

/// Four clients at once, a session each, 200 calls each: calls a second,
/// alternating which server goes first.
async fn four_clients(client: &reqwest::Client, urls: &[String; 2]) {
    let mut rates = [Vec::new(), Vec::new()];
    for round in 0..8usize {
        for which in first(round) {
            let url = &urls[which];
            let mut ids = Vec::new();
            for _ in 0..4 {
                ids.push(open_session(client, url).await);
            }
            let start = Instant::now();
            let clients = ids.iter().map(|id| {
                let (client, url, id) = (client.clone(), url.clone(), id.clone());
                async move {
                    for i in 0..200u64 {
                        handshake_post(&client, &url, Some(&id), call(10 + i))
                            .await
                            .unwrap()
                            .bytes()
                            .await
                            .unwrap();
                    }
                }
            });
            futures_util::future::join_all(clients).await;
            rates[which].push(800.0 / start.elapsed().as_secs_f64());
        }
    }
    let mid = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ratios: Vec<f64> = rates[0].iter().zip(&rates[1]).map(|(q, p)| q / p).collect();
    println!(
        "{:<48} quire {:>6.0}/s   rmcp {:>6.0}/s   {:.2}x (median of rounds)",
        "peer: /mcp 4 clients at once, calls a second",
        mid(rates[0].clone()),
        mid(rates[1].clone()),
        mid(ratios)
    );
}

/// A headless server with one project open (a page of text), idle; and
/// the binary's size.
fn one_project_open(quire: &str, data: &Path) {
    let (child, url) = serve_http(quire, data, &["--headless", "--port", "0"]);
    let api = url.trim_end_matches("/mcp").to_owned();
    let http = reqwest::blocking::Client::new();
    let project: Value = http
        .post(format!("{api}/api/v1/projects"))
        .json(&json!({ "name": "One" }))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let session = project["id"].as_str().unwrap();
    http.post(format!("{api}/api/v1/sessions/{session}/pages"))
        .json(&json!({ "name": "p1", "text": "One.\n\nTwo.\n\nThree." }))
        .send()
        .unwrap()
        .error_for_status()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    println!(
        "{:<48} {:>6} KiB",
        "headless, one project open: RSS",
        rss_kib(child.id())
    );
    stop(child);
    let size = std::fs::metadata(quire).map_or(0, |m| m.len());
    println!("{:<48} {:.1} MB", "binary size", size as f64 / 1e6);
}
