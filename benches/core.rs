//! Core benchmarks (targets in spec/09-quality.md):
//!
//! - apply throughput, durability `batch`, one writer pipelining its ops;
//! - apply with durability `fsync`: one writer vs 8 concurrent writers
//!   (group commit);
//! - undo + redo with 10 vs 10,000 history entries;
//! - `scene.json` serialization for 1,000 pages × 50 nodes;
//! - opening that project with 10,000 frames in `ops.log`.
//!
//! Run: `cargo bench --bench core` (add `-- --quick` for a fast pass).

#![allow(clippy::unwrap_used)]

#[path = "support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use quire_core::Core;
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{NewNode, NewPage, NodePatch, Op};
use quire_model::scene::{NodeKind, Transform};
use quire_store::Durability;
use quire_store::storage::SnapshotFile;

use support::core;

fn text_node(i: usize) -> NewNode {
    NewNode {
        id: None,
        transform: Transform {
            x: (i % 7) as f64 * 40.0,
            y: (i / 7) as f64 * 30.0,
            width: 120.0,
            height: 28.0,
            rotation: None,
        },
        visible: true,
        kind: NodeKind::Text {
            text: Some(format!(
                "Line {i}: the quick brown fox jumps over the lazy dog"
            )),
            translation: Some(format!(
                "Ligne {i} : le renard brun saute par-dessus le chien"
            )),
            source_lang: Some("en".into()),
            style: None,
            state: None,
            origin: None,
            timing: None,
            region: None,
            found_by: None,
            source_edit: None,
            entry: None,
            suggestions: Vec::new(),
        },
    }
}

fn page_op(p: usize, nodes: usize) -> Op {
    Op::AddPage {
        page: NewPage {
            id: None,
            name: format!("page {p:04}"),
            width: Some(1200),
            height: Some(1800),
            nodes: Some((0..nodes).map(text_node).collect()),
            document: None,
        },
        at: None,
    }
}

fn translate(page: PageId, node: NodeId, n: u64) -> Op {
    Op::UpdateNode {
        page,
        id: node,
        patch: NodePatch::text(Some(Some(format!("translation {n}"))), None),
        based_on: None,
    }
}

/// A session with one page of `nodes` text nodes; returns its ids.
fn small_session(core: &Core, rt: &tokio::runtime::Runtime) -> (SessionId, PageId, Vec<NodeId>) {
    let id = core.blocking().create_managed_project("bench").unwrap().id;
    let created = rt.block_on(core.apply(id, page_op(0, 8))).unwrap().created;
    let page = PageId(created[0]);
    let nodes = created[1..].iter().map(|u| NodeId(*u)).collect();
    (id, page, nodes)
}

fn apply_batch_single_writer(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let core = core(dir.path(), Durability::Batch, 1000, 500);
    let (id, page, nodes) = small_session(&core, &rt);
    let mut group = c.benchmark_group("apply");
    group.throughput(Throughput::Elements(1));
    let mut n = 0u64;
    group.bench_function("batch, 1 writer, pipelined", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            let mut last = None;
            for _ in 0..iters {
                n += 1;
                let op = translate(page, nodes[(n % 8) as usize], n);
                last = Some(core.blocking().submit(id, op).unwrap());
            }
            // Acknowledged means durable: the run ends when the last op is.
            rt.block_on(last.unwrap().durable()).unwrap();
            start.elapsed()
        })
    });
    group.finish();
}

fn apply_fsync_writers(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let core = core(dir.path(), Durability::Fsync, 1000, 500);
    let (id, page, nodes) = small_session(&core, &rt);
    let mut group = c.benchmark_group("apply fsync");
    group.throughput(Throughput::Elements(1));
    for writers in [1u64, 8] {
        group.bench_with_input(
            BenchmarkId::new("writers", writers),
            &writers,
            |b, &writers| {
                b.iter_custom(|iters| {
                    let per = iters.div_ceil(writers);
                    let start = Instant::now();
                    rt.block_on(async {
                        let tasks: Vec<_> = (0..writers)
                            .map(|w| {
                                let core = core.clone();
                                let nodes = nodes.clone();
                                tokio::spawn(async move {
                                    for i in 0..per {
                                        let op = translate(page, nodes[(w % 8) as usize], i);
                                        core.apply(id, op).await.unwrap();
                                    }
                                })
                            })
                            .collect();
                        for t in tasks {
                            t.await.unwrap();
                        }
                    });
                    // Report per op: scale to exactly `iters` ops.
                    start
                        .elapsed()
                        .mul_f64(iters as f64 / (per * writers) as f64)
                })
            },
        );
    }
    group.finish();
}

fn undo_redo(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("undo+redo");
    for history in [10usize, 10_000] {
        let dir = tempfile::tempdir().unwrap();
        let core = core(dir.path(), Durability::Batch, 1_000_000, history);
        let (id, page, nodes) = small_session(&core, &rt);
        let mut last = None;
        for i in 0..history as u64 {
            last = Some(
                core.blocking()
                    .submit(id, translate(page, nodes[(i % 8) as usize], i))
                    .unwrap(),
            );
        }
        rt.block_on(last.unwrap().durable()).unwrap();
        group.bench_with_input(BenchmarkId::new("history", history), &history, |b, _| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                let mut last = None;
                for _ in 0..iters {
                    let _undo = core.blocking().submit_undo(id).unwrap().unwrap();
                    last = core.blocking().submit_redo(id).unwrap();
                }
                let elapsed = start.elapsed();
                rt.block_on(last.unwrap().durable()).unwrap();
                elapsed
            })
        });
        drop(core);
    }
    group.finish();
}

/// A project of 1,000 pages × 50 nodes, snapshotted, then `frames` more
/// ops left in `ops.log`. Returns its directory.
fn big_project(root: &Path, frames: u64) -> PathBuf {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let core = core(root, Durability::Batch, 1_000_000, 10);
    let id = core.blocking().create_managed_project("big").unwrap().id;
    let mut last = None;
    for p in 0..1000 {
        last = Some(core.blocking().submit(id, page_op(p, 50)).unwrap());
    }
    rt.block_on(last.unwrap().durable()).unwrap();
    let path = core.session(id).unwrap().path;
    core.blocking().close_session(id).unwrap();
    let id = core.blocking().open_project(&path).unwrap().id;
    let scene = rt.block_on(core.scene(id)).unwrap().scene;
    let mut last = None;
    for n in 0..frames {
        let page = &scene.pages[(n % 1000) as usize];
        let node = page.nodes[(n % 50) as usize].id;
        last = Some(
            core.blocking()
                .submit(id, translate(page.id, node, n))
                .unwrap(),
        );
    }
    rt.block_on(last.unwrap().durable()).unwrap();
    // Dropped without closing: the frames stay in the log.
    drop(core);
    path
}

fn scene_json_and_open(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = big_project(dir.path(), 10_000);
    let mut group = c.benchmark_group("1000 pages x 50 nodes");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));

    let snapshot = SnapshotFile::read(&path.join("scene.json"))
        .unwrap()
        .unwrap();
    group.bench_function("serialize scene.json", |b| {
        b.iter(|| snapshot.encode().unwrap())
    });
    let log_lines = std::fs::read_to_string(path.join("ops.log"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(log_lines, 10_000);
    group.bench_function("open (snapshot + 10,000 frames)", |b| {
        b.iter(|| {
            let core = core(dir.path(), Durability::Fsync, 1_000_000, 500);
            let session = core.blocking().open_project(&path).unwrap();
            assert_eq!(session.epoch, 11_000);
            // Dropping the core releases the lock without a new snapshot.
            drop(core);
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    apply_batch_single_writer,
    apply_fsync_writers,
    undo_redo,
    scene_json_and_open
);
criterion_main!(benches);
