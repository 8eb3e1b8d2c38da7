//! The translation workflow at size: XLIFF export and import of a project
//! of 1,000 pages × 50 text nodes (every target changed, so the import
//! updates 50,000 units in one history entry), and the undo of a
//! `pseudo-translate` step over 600 pages (one entry of 600 page batches).
//!
//! `cargo bench --bench workflow` (pin with `taskset -c 0` to compare builds).

#![allow(clippy::print_stdout)]

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use quire::config::schema::Durability;
use quire::core::events::{Event, JobStatus};
use quire::core::export::{ExportFormat, ExportSpec};
use quire::core::ids::SessionId;
use quire::core::jobs::{Approval, PipelineSpec};
use quire::core::op::{NewNode, NewPage, Op};
use quire::core::scene::{NodeKind, Transform};
use quire::core::translations::{TranslationFormat, TranslationImport};
use quire::core::{Core, lang::Languages};

const RUNS: usize = 3;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn page(p: usize, nodes: usize, translated: bool) -> Op {
    Op::AddPage {
        page: NewPage {
            id: None,
            name: format!("p{p:04}"),
            width: Some(1200),
            height: Some(1800),
            nodes: Some(
                (0..nodes)
                    .map(|n| NewNode {
                        id: None,
                        transform: Transform {
                            x: 10.0,
                            y: n as f64 * 30.0,
                            width: 400.0,
                            height: 28.0,
                            rotation: None,
                        },
                        visible: true,
                        kind: NodeKind::Text {
                            text: Some(format!("Line {n} of page {p}: \"quoted\" & <marked>")),
                            translation: translated
                                .then(|| format!("Ligne {n} de la page {p} : « citée »")),
                            source_lang: None,
                            style: None,
                            state: None,
                            origin: None,
                            timing: None,
                        },
                    })
                    .collect(),
            ),
        },
        at: None,
    }
}

async fn project(
    core: &Core,
    name: &str,
    pages: usize,
    nodes: usize,
    translated: bool,
) -> SessionId {
    let languages = Languages {
        source_language: Some("en".into()),
        target_language: Some("fr".into()),
    };
    let id = core
        .create_managed_project_with(name, languages)
        .await
        .expect("project")
        .id;
    for chunk in (0..pages).collect::<Vec<_>>().chunks(50) {
        let ops = chunk.iter().map(|p| page(*p, nodes, translated)).collect();
        core.apply(id, Op::Batch { ops, label: None })
            .await
            .expect("pages");
    }
    id
}

fn xliff_spec() -> ExportSpec {
    ExportSpec {
        format: ExportFormat::Xliff,
        pages: None,
        target_language: None,
    }
}

/// The sizes measured: the real ones under `--bench`, small ones when
/// `cargo test --all-targets` runs this as a smoke test.
struct Sizes {
    pages: usize,
    job_pages: usize,
}

async fn xliff(core: &Core, sizes: &Sizes) {
    let id = project(core, "xliff", sizes.pages, 50, true).await;
    let units = sizes.pages * 50;
    let mut export = Vec::new();
    let mut bytes = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        bytes = core.export(id, xliff_spec()).await.expect("export").bytes;
        export.push(start.elapsed());
    }
    // The reviewer changed every target: 50,000 units to merge.
    let reviewed = String::from_utf8(bytes.clone())
        .expect("utf-8")
        .replace("Ligne ", "Rangée ");
    let mut import = Vec::new();
    for run in 0..RUNS {
        let content = if run % 2 == 0 {
            reviewed.clone()
        } else {
            String::from_utf8(bytes.clone()).expect("utf-8")
        };
        let start = Instant::now();
        let report = core
            .import_translations(
                id,
                TranslationImport {
                    format: TranslationFormat::Xliff,
                    content,
                    force: false,
                },
            )
            .await
            .expect("import");
        import.push(start.elapsed());
        assert_eq!(report.updated, units, "{:?}", report.conflicts.first());
    }
    println!(
        "XLIFF {} pages × 50 nodes ({:.1} MiB): export {}, import of {units} changed units {} (medians of {RUNS})",
        sizes.pages,
        bytes.len() as f64 / (1 << 20) as f64,
        ms(median(export)),
        ms(median(import)),
    );
}

async fn undo_job(core: &Core, sizes: &Sizes) {
    let pages = sizes.job_pages;
    let id = project(core, "job", pages, 4, false).await;
    let mut events = core.subscribe(None);
    let job = core
        .start_pipeline(
            id,
            PipelineSpec {
                steps: vec!["pseudo-translate".into()],
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
            assert_eq!(*status, JobStatus::Completed);
            break;
        }
    }
    let (mut undo, mut redo) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let start = Instant::now();
        let step = core.undo(id).await.expect("undo").expect("an entry");
        undo.push(start.elapsed());
        assert_eq!(step.label, format!("pseudo-translate · {pages} pages"));
        let start = Instant::now();
        core.redo(id).await.expect("redo").expect("an entry");
        redo.push(start.elapsed());
    }
    println!(
        "undo of a {pages}-page pseudo-translate step ({} edits, one entry): undo {}, redo {} (medians of {RUNS})",
        pages * 4,
        ms(median(undo)),
        ms(median(redo)),
    );
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let core = support::core(dir.path(), Durability::Batch, 1_000_000, 500);
    let sizes = if std::env::args().any(|a| a == "--bench") {
        Sizes {
            pages: 1000,
            job_pages: 600,
        }
    } else {
        Sizes {
            pages: 10,
            job_pages: 12,
        }
    };
    rt.block_on(async {
        xliff(&core, &sizes).await;
        undo_job(&core, &sizes).await;
    });
}
