//! The `render` engine at size: 100 pages of 1200 × 1800 px, 8 translated
//! boxes each, rendered by one job (pages per second; the target is 20 on
//! a 2-core machine), then exported as CBZ and PDF (every page current, so
//! the stored renders are packed as they are), and a CBZ export when every
//! page is stale (rendered in memory for the export).
//!
//! `cargo bench --bench render` (pin with `taskset -c 0` to compare builds).

#![allow(clippy::print_stdout)]

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use image::{Rgb, RgbImage};
use quire_core::Core;
use quire_core::events::JobStatus;
use quire_core::export::{ExportFormat, ExportSpec};
use quire_core::import::ImageFile;
use quire_model::ids::SessionId;
use quire_model::op::{NewNode, Op};
use quire_model::scene::{NodeKind, Style, Transform};
use quire_store::Durability;

const WIDTH: u32 = 1200;
const HEIGHT: u32 = 1800;
const BOXES: usize = 8;

/// A page: a gradient with 8 white balloons, different for every `seed`.
fn page_png(seed: u32) -> Vec<u8> {
    let mut image = RgbImage::from_fn(WIDTH, HEIGHT, |x, y| {
        Rgb([
            ((x / 7 + seed * 13) % 200) as u8 + 30,
            ((y / 9 + seed) % 180) as u8 + 40,
            170,
        ])
    });
    for (bx, by, bw, bh) in boxes() {
        let (cx, cy, rx, ry) = (
            bx + bw / 2.0,
            by + bh / 2.0,
            bw / 2.0 + 30.0,
            bh / 2.0 + 30.0,
        );
        for y in (cy - ry) as u32..(cy + ry) as u32 {
            for x in (cx - rx) as u32..(cx + rx) as u32 {
                let (dx, dy) = ((f64::from(x) - cx) / rx, (f64::from(y) - cy) / ry);
                if dx * dx + dy * dy <= 1.0 {
                    image.put_pixel(x, y, Rgb([252, 252, 250]));
                }
            }
        }
    }
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("png");
    out.into_inner()
}

fn boxes() -> Vec<(f64, f64, f64, f64)> {
    (0..BOXES)
        .map(|i| {
            let (col, row) = ((i % 2) as f64, (i / 2) as f64);
            (100.0 + col * 560.0, 80.0 + row * 430.0, 420.0, 260.0)
        })
        .collect()
}

async fn project(core: &Core, pages: usize) -> SessionId {
    let session = core
        .create_managed_project("render bench")
        .await
        .expect("project");
    let id = session.id;
    let files = (0..pages)
        .map(|p| ImageFile {
            name: format!("{:03}.png", p + 1),
            bytes: page_png(p as u32),
        })
        .collect();
    core.import_files(id, files).await.expect("import");
    let scene = core.scene(id).await.expect("scene").scene;
    let mut ops = Vec::new();
    for page in &scene.pages {
        for (i, (x, y, w, h)) in boxes().into_iter().enumerate() {
            let vertical = i == BOXES - 1;
            ops.push(Op::AddNode {
                page: page.id,
                node: NewNode {
                    id: None,
                    transform: Transform { x, y, width: w, height: h, rotation: None },
                    visible: true,
                    kind: NodeKind::Text {
                        text: Some(format!("Source line {i}")),
                        translation: Some(if vertical {
                            "縦書きのテキストです。読めますか？".to_owned()
                        } else {
                            format!("Translated balloon number {i}, long enough to wrap over a few lines of text.")
                        }),
                        source_lang: None,
                        style: vertical.then(|| Style {
                            vertical: Some(true),
                            ..Style::default()
                        }),
                        state: None,
                        origin: None,
                        timing: None,
                        region: None,
                        found_by: None,
                        source_edit: None,
                        entry: None,
                        suggestions: Vec::new(),
                    },
                },
                at: None,
            });
        }
    }
    core.apply(id, Op::Batch { ops, label: None })
        .await
        .expect("boxes");
    id
}

async fn export(core: &Core, id: SessionId, format: ExportFormat) -> (Duration, usize) {
    let start = Instant::now();
    let bytes = core
        .export(id, ExportSpec::of(format))
        .await
        .expect("export")
        .bytes;
    (start.elapsed(), bytes.len())
}

fn main() {
    let pages = if std::env::args().any(|a| a == "--bench") {
        100
    } else {
        3
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let core = support::core(dir.path(), Durability::Fsync, 1000, 500);
    rt.block_on(async {
        let id = project(&core, pages).await;
        let (took, status) = support::run_job(&core, id, &["render"]).await;
        // Completed with warnings: each box's corners lie on the gradient
        // outside its balloon, which `crosses-art` names.
        assert_eq!(status, JobStatus::CompletedWithErrors);
        println!(
            "render {pages} pages of {WIDTH} × {HEIGHT} px, {BOXES} boxes each: {:.2} s, {:.1} pages/s",
            took.as_secs_f64(),
            pages as f64 / took.as_secs_f64()
        );
        for format in [ExportFormat::Cbz, ExportFormat::Pdf] {
            let (took, size) = export(&core, id, format).await;
            println!(
                "export {format:?} of the rendered pages: {:.2} s ({:.1} MiB)",
                took.as_secs_f64(),
                size as f64 / f64::from(1 << 20)
            );
        }
        // Every page stale: the export renders them itself.
        let scene = core.scene(id).await.expect("scene").scene;
        let ops = scene
            .pages
            .iter()
            .filter_map(|p| {
                let node = p.nodes.iter().find(|n| matches!(n.kind, NodeKind::Text { .. }))?;
                Some(Op::UpdateNode {
                    page: p.id,
                    id: node.id,
                    patch: serde_json::from_value(serde_json::json!({
                        "kind": { "type": "text", "translation": "Changed after the render." }
                    }))
                    .expect("patch"),
                    based_on: None,
                })
            })
            .collect();
        core.apply(id, Op::Batch { ops, label: None }).await.expect("stale");
        let (took, _) = export(&core, id, ExportFormat::Cbz).await;
        println!(
            "export Cbz with every page stale (rendered for the export): {:.2} s, {:.1} pages/s",
            took.as_secs_f64(),
            pages as f64 / took.as_secs_f64()
        );
    });
    unshapeable(&rt);
}

/// Text the fonts cannot set, one page each, with only DejaVu Sans: 5,000
/// characters of the Private Use Area (no font has them), 20,000 Japanese
/// characters (no CJK font), and a 1 MiB translation in one box. 0.2 took
/// 14 s and 23 s for the first two.
fn unshapeable(rt: &tokio::runtime::Runtime) {
    const DEJAVU: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
    if !std::path::Path::new(DEJAVU).exists() {
        println!("(no {DEJAVU}: the unshapeable-text cases are not run)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = quire_core::CoreConfig::new(
        dir.path().to_path_buf(),
        quire_core::session::SessionSettings {
            durability: Durability::Batch,
            snapshot_every_ops: 1000,
            undo_limit: 500,
            max_op_bytes: 64 << 20,
            history_max_bytes: 256 << 20,
        },
        "bench",
    );
    config
        .settings
        .update(|render: &mut quire_render::RenderConfig| {
            render.fonts = vec![DEJAVU.into()];
            render.system_fonts = false;
        });
    let core = Core::new(config);
    let private: String = (0xE000u32..0xE000 + 5000)
        .filter_map(char::from_u32)
        .collect();
    let japanese: String = "日本語の文章です。".chars().cycle().take(20_000).collect();
    let long = "word ".repeat((1 << 20) / 5);
    rt.block_on(async {
        for (what, text) in [
            ("5,000 characters no font has", private),
            ("20,000 Japanese characters, no CJK font", japanese),
            ("a 1 MiB translation in one box", long),
        ] {
            let id = project(&core, 1).await;
            let scene = core.scene(id).await.expect("scene").scene;
            let page = &scene.pages[0];
            let node = page
                .nodes
                .iter()
                .find(|n| matches!(n.kind, NodeKind::Text { .. }))
                .expect("a box");
            let patch = serde_json::from_value(serde_json::json!({
                "kind": { "type": "text", "translation": text }
            }))
            .expect("patch");
            core.apply(
                id,
                Op::UpdateNode {
                    page: page.id,
                    id: node.id,
                    patch,
                    based_on: None,
                },
            )
            .await
            .expect("translation");
            let (took, status) = support::run_job(&core, id, &["render"]).await;
            println!(
                "render a page with {what}: {:.2} s ({status:?})",
                took.as_secs_f64()
            );
        }
    });
}
