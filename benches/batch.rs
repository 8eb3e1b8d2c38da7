//! Big batches: apply and undo of one `Batch` of 10,000 and 100,000
//! `AddNode` (linear means the second costs ~10× the first), and `/healthz`
//! latency of a running `quire --headless` while such a batch is posted to
//! it in another session.
//!
//! `cargo bench --bench batch` (pin with `taskset -c 0` to compare builds).

#![allow(clippy::print_stdout)]

#[path = "support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quire_model::ids::PageId;
use quire_model::op::{NewNode, NewPage, Op};
use quire_model::scene::{NodeKind, Transform};
use quire_store::Durability;
use serde_json::{Value, json};

const RUNS: usize = 3;

fn node(i: usize) -> NewNode {
    NewNode {
        id: None,
        transform: Transform {
            x: (i % 50) as f64 * 20.0,
            y: (i / 50) as f64 * 20.0,
            width: 18.0,
            height: 18.0,
            rotation: None,
        },
        visible: true,
        kind: NodeKind::source(Some(format!("node {i}"))),
    }
}

fn add_nodes(page: PageId, n: usize) -> Op {
    Op::Batch {
        ops: (0..n)
            .map(|i| Op::AddNode {
                page,
                node: node(i),
                at: None,
            })
            .collect(),
        label: None,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Apply and undo of one batch of `n` nodes, `RUNS` times: the medians.
fn apply_and_undo(rt: &tokio::runtime::Runtime, n: usize) -> (Duration, Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    let core = support::core(dir.path(), Durability::Batch, 1_000_000, 10);
    let id = core
        .blocking()
        .create_managed_project("batch")
        .expect("project")
        .id;
    let page = Op::AddPage {
        page: NewPage {
            id: None,
            name: "page".into(),
            width: Some(1000),
            height: Some(1000),
            nodes: None,
            document: None,
        },
        at: None,
    };
    let page = PageId(rt.block_on(core.apply(id, page)).expect("page").created[0]);
    let (mut applies, mut undos) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let op = add_nodes(page, n);
        let start = Instant::now();
        rt.block_on(core.apply(id, op)).expect("apply");
        applies.push(start.elapsed());
        let start = Instant::now();
        rt.block_on(core.undo(id)).expect("undo");
        undos.push(start.elapsed());
    }
    (median(applies), median(undos))
}

/// `/healthz` latency while a batch of `n` nodes is posted in another
/// session: (median, max, batch time).
fn healthz_during_apply(n: usize) -> (Duration, Duration, Duration) {
    let server = support::headless(&[]);
    let http = support::blocking_client().build().expect("client");
    let post = |path: &str, body: &Value| -> Value {
        http.post(format!("{}{path}", server.url))
            .json(body)
            .send()
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.json())
            .expect("POST")
    };
    let busy = post("/api/v1/projects", &json!({ "name": "busy" }))["id"]
        .as_str()
        .expect("session id")
        .to_owned();
    post("/api/v1/projects", &json!({ "name": "other" }));
    let page = post(
        &format!("/api/v1/sessions/{busy}/history/apply"),
        &json!({ "type": "AddPage", "page": { "name": "p" } }),
    )["created"][0]
        .as_str()
        .expect("page id")
        .to_owned();
    let batch = serde_json::to_vec(&add_nodes(page.parse().expect("uuid"), n)).expect("encode");

    let done = Arc::new(AtomicBool::new(false));
    let prober = {
        let done = done.clone();
        let url = format!("{}/healthz", server.url);
        std::thread::spawn(move || {
            let http = support::blocking_client().build().expect("client");
            let mut seen = Vec::new();
            // At least one probe: a small apply (the smoke run) can end
            // before the prober's first request.
            loop {
                let start = Instant::now();
                http.get(&url).send().expect("healthz");
                seen.push(start.elapsed());
                if done.load(Ordering::SeqCst) {
                    break;
                }
            }
            seen
        })
    };
    let start = Instant::now();
    let reply = http
        .post(format!(
            "{}/api/v1/sessions/{busy}/history/apply",
            server.url
        ))
        .header("content-type", "application/json")
        .body(batch)
        .timeout(Duration::from_secs(600))
        .send()
        .expect("apply");
    let took = start.elapsed();
    assert!(reply.status().is_success(), "{}", reply.status());
    done.store(true, Ordering::SeqCst);
    let seen = prober.join().expect("prober");
    let max = seen.iter().copied().max().unwrap_or_default();
    (median(seen), max, took)
}

fn main() {
    // `cargo test --all-targets` runs benches without --bench: a quick
    // smoke run of the same code with small batches.
    let measure = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if measure {
        &[10_000, 25_000, 50_000, 100_000]
    } else {
        &[100, 1_000]
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    println!(
        "one Batch of n AddNode on one page (durability batch), median of {RUNS}, and the cost per op:"
    );
    for &n in sizes {
        let (apply, undo) = apply_and_undo(&rt, n);
        let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
        println!(
            "  n = {n:>6}: apply {} ({:.2} µs/op), undo {} ({:.2} µs/op)",
            ms(apply),
            per(apply),
            ms(undo),
            per(undo)
        );
    }
    let n = sizes[sizes.len() - 1];
    let (med, max, took) = healthz_during_apply(n);
    println!(
        "GET /healthz while POST /history/apply of {n} AddNode runs in another session ({}): median {}, max {}",
        ms(took),
        format_args!("{:.0} µs", med.as_secs_f64() * 1e6),
        ms(max)
    );
}
