//! Event-stream clients that stop reading: the resident memory of a
//! running `quire --headless` with 500 of them connected while a project
//! with a 200-character name changes (every change is an event naming
//! it), and once the server has cut them off (`server.send_timeout_secs`).
//! 0.1.0 reached 406 MB with such clients (and 100 KB names) and stayed
//! there.
//!
//! `cargo bench --bench sse`; `cargo test` runs it with 20 clients.

#![allow(clippy::print_stdout)]

#[path = "support/mod.rs"]
mod support;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const SEND_TIMEOUT_SECS: u64 = 3;

/// Resident memory and open file descriptors of `pid`.
fn usage(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss_kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
    (rss_kb * 1024, fds)
}

/// A client that asks for the event stream with a tiny receive window and
/// then never reads.
fn stuck_client(addr: &str) -> TcpStream {
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let addr: std::net::SocketAddr = addr.parse().expect("address");
    socket.connect(&addr.into()).expect("connect");
    let mut stream: TcpStream = socket.into();
    stream
        .write_all(b"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("request");
    stream
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

fn main() {
    let clients = if std::env::args().any(|a| a == "--bench") {
        500
    } else {
        20
    };
    let server = support::headless(&[(
        "QUIRE_SERVER__SEND_TIMEOUT_SECS",
        &SEND_TIMEOUT_SECS.to_string(),
    )]);
    let pid = server.child.id();
    let http = support::blocking_client().build().expect("client");
    let post = |path: &str, body: &Value| {
        http.post(format!("{}{path}", server.url))
            .json(body)
            .send()
            .and_then(|r| r.error_for_status())
            .expect("POST");
    };
    post("/api/v1/projects", &json!({ "name": "stuck clients" }));
    let (idle_rss, idle_fds) = usage(pid);
    let addr = server.url.trim_start_matches("http://").to_owned();
    println!(
        "{clients} event-stream clients that stop reading, 4,000 events naming a 200-character project; RSS idle {}:",
        mib(idle_rss)
    );
    // Twice: what the first clients held is reused for the second ones.
    for round in 1..=2 {
        let streams: Vec<TcpStream> = (0..clients).map(|_| stuck_client(&addr)).collect();
        // Renames with a 200-character name (the longest allowed): each one
        // is a SceneAdvanced event carrying it, to every client.
        let mut peak = 0;
        for i in 0..4000 {
            let name = format!("{i:05}{}", "n".repeat(195));
            post(
                "/api/v1/history/apply",
                &json!({ "type": "UpdateProject", "patch": { "name": name } }),
            );
            if i % 100 == 0 {
                peak = peak.max(usage(pid).0);
            }
        }
        peak = peak.max(usage(pid).0);
        // Cut off once their window stayed shut for send_timeout_secs.
        let start = Instant::now();
        let deadline = start + Duration::from_secs(SEND_TIMEOUT_SECS * 20 + 60);
        loop {
            let (_, fds) = usage(pid);
            if fds <= idle_fds + 2 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{} connections are still open",
                fds - idle_fds
            );
            // Something must be pending for the kernel's timer to run.
            post(
                "/api/v1/history/apply",
                &json!({ "type": "UpdateProject", "patch": { "name": "tick" } }),
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let (after, _) = usage(pid);
        drop(streams);
        println!(
            "  round {round}: peak {} ({:.1} KiB per client), all cut off {:.1} s after the last event, then {}",
            mib(peak),
            (peak.saturating_sub(idle_rss)) as f64 / 1024.0 / clients as f64,
            start.elapsed().as_secs_f64(),
            mib(after)
        );
    }
}
