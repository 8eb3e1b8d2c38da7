//! The page understanding engines (`detect`, `ocr`, `clean`) scored on a
//! page set with ground truth drawn by Pillow (`tests/pages/make.py`:
//! balloons of three shapes, white and tinted, three fonts including
//! Comic Neue, a caption on the art, screentone, page numbers, and a page
//! of vertical Japanese), against the targets of spec 13. Tesseract reads
//! for `ocr`. The figures are printed and written to
//! `<target tmp>/pages/report.json`.

use quire_core::engines::detect::{DetectBackend, DetectSettings, Existing};
use quire_core::engines::ocr::{OcrBackend, OcrSettings};
use quire_core::engines::settings::ModelRef;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use image::GrayImage;
use quire_core::events::Event;
use quire_core::import::ImageFile;
use quire_core::jobs::Approval;
use quire_model::finding::Finding;
use quire_model::ids::SessionId;
use quire_model::op::{Op, ProjectPatch};
use quire_model::scene::{ImageRole, MaskRole, NodeKind, Page};
use serde_json::Value;

use crate::core_base::{TestCore, stored_image};
use crate::core_base::{follow, spec};

mod after_detect;
mod backends;
mod holdout;
mod models;
mod onnx;
mod readback;
mod score;
use score::*;

/// One box `[x, y, w, h]` in pixels.
type Box4 = [f64; 4];

fn iou(a: Box4, b: Box4) -> f64 {
    let w = (a[0] + a[2]).min(b[0] + b[2]) - a[0].max(b[0]);
    let h = (a[1] + a[3]).min(b[1] + b[3]) - a[1].max(b[1]);
    if w <= 0.0 || h <= 0.0 {
        return 0.0;
    }
    let i = w * h;
    i / (a[2] * a[3] + b[2] * b[3] - i)
}

/// How much of `inner` lies in `outer`.
fn covered(inner: Box4, outer: Box4) -> f64 {
    let w = (inner[0] + inner[2]).min(outer[0] + outer[2]) - inner[0].max(outer[0]);
    let h = (inner[1] + inner[3]).min(outer[1] + outer[3]) - inner[1].max(outer[1]);
    if w <= 0.0 || h <= 0.0 {
        return 0.0;
    }
    w * h / (inner[2] * inner[3])
}

fn box4(v: &Value) -> Box4 {
    let n = |i: usize| v[i].as_f64().unwrap();
    [n(0), n(1), n(2), n(3)]
}

/// The page set, made by Pillow into the test's temporary directory.
/// The generated page set in `<CARGO_TARGET_TMPDIR>/<name>`, and its truth.
fn page_set(test: &str, name: &str) -> Option<(PathBuf, Value)> {
    page_set_seeded(test, name, None)
}

/// [`page_set`], or with a `seed` the held-out set `make.py` draws from
/// it (other faces, shapes with tails, marks on the art).
fn page_set_seeded(test: &str, name: &str, seed: Option<u32>) -> Option<(PathBuf, Value)> {
    let python = crate::mcp::python_with(test, "PIL")?;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pages/make.py");
    let out = Command::new(python)
        .arg(script)
        .arg(&dir)
        .arg("6")
        .args(seed.map(|s| s.to_string()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let truth = std::fs::read_to_string(dir.join("truth.json")).unwrap();
    Some((dir, serde_json::from_str(&truth).unwrap()))
}

async fn run(t: &TestCore, id: SessionId, steps: &[&str]) -> Vec<Finding> {
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(steps), Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    match events.last() {
        Some(Event::JobFinished { error: None, .. }) => {}
        other => panic!("{steps:?}: {other:?}"),
    }
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::JobWarning { finding, .. } => Some(finding),
            _ => None,
        })
        .collect()
}

/// Whether the system's Tesseract is there (a test that needs it fails in
/// CI without it).
fn tesseract(test: &str) -> bool {
    let missing = crate::harness::missing_program("tesseract", "--version");
    crate::harness::tool_available("tesseract", test, missing)
}

/// The text nodes of a page: their box (or region's box) and text.
fn found(page: &Page) -> Vec<(Box4, Box4, String)> {
    page.nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Text { text, region, .. } => {
                let t = &n.transform;
                let b = [t.x, t.y, t.width, t.height];
                let r = region.as_ref().map_or(b, |r| {
                    let xs = r.iter().map(|p| p[0]);
                    let ys = r.iter().map(|p| p[1]);
                    let (x0, x1) = (xs.clone().fold(f64::MAX, f64::min), xs.fold(0.0, f64::max));
                    let (y0, y1) = (ys.clone().fold(f64::MAX, f64::min), ys.fold(0.0, f64::max));
                    [x0, y0, x1 - x0, y1 - y0]
                });
                Some((b, r, text.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .collect()
}

async fn text_mask(t: &TestCore, id: SessionId, page: &Page) -> GrayImage {
    let blob = page
        .nodes
        .iter()
        .find_map(|n| match &n.kind {
            NodeKind::Mask {
                blob,
                role: MaskRole::Text,
            } => Some(*blob),
            _ => None,
        })
        .expect("a text mask");
    let bytes = t.core.read_blob(id, blob).await.unwrap();
    image::load_from_memory(&bytes).unwrap().to_luma8()
}

fn normal(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase()
}

/// A session of the page set's pages, its source language English.
async fn page_set_session(t: &TestCore, dir: &Path, pages: &[Value]) -> SessionId {
    let id = t.session("pages");
    let files = pages
        .iter()
        .map(|p| {
            let name = format!("{}.png", p["name"].as_str().unwrap());
            ImageFile {
                bytes: std::fs::read(dir.join(&name)).unwrap(),
                name,
            }
        })
        .collect();
    t.core.import_files(id, files).await.unwrap();
    let english = ProjectPatch {
        source_language: Some(Some("en".into())),
        ..ProjectPatch::default()
    };
    t.core
        .apply(id, Op::UpdateProject { patch: english })
        .await
        .unwrap();
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn detect_ocr_and_clean_meet_their_targets_on_a_generated_page_set() {
    let test = "detect_ocr_and_clean_meet_their_targets_on_a_generated_page_set";
    let Some((dir, truth)) = page_set(test, "pages") else {
        return;
    };
    if !tesseract(test) {
        return;
    }
    let t = TestCore::new();
    let pages = truth["pages"].as_array().unwrap();
    let id = page_set_session(&t, &dir, pages).await;

    run(&t, id, &["detect"]).await;
    let once = t.core.scene(id).await.unwrap().scene;
    run(&t, id, &["detect"]).await;
    let twice = t.core.scene(id).await.unwrap().scene;
    assert_eq!(once, twice, "detect run again changed the scene");

    // Clean clears what has a translation to set over it: every block
    // OCR read gets one here; what it could not read keeps its pixels.
    let findings = run(&t, id, &["ocr", "pseudo-translate", "clean"]).await;
    let scene = t.core.scene(id).await.unwrap().scene;
    // The Japanese page's columns, in an English project: read as
    // Japanese where Tesseract has `jpn_vert`, else named and left
    // unread (and so kept by clean), never read as English.
    let japanese = scene.pages.last().unwrap();
    let named: Vec<&Finding> = findings.iter().filter(|f| f.rule == "script").collect();
    let columns_read = japanese.nodes.iter().any(|n| {
        matches!(&n.kind, NodeKind::Text { source_lang: Some(l), text: Some(_), .. } if l == "ja")
    });
    assert!(
        columns_read || !named.is_empty(),
        "the Japanese columns were neither read as Japanese nor named: {findings:?}"
    );
    assert!(
        named.iter().all(|f| f.page_id == Some(japanese.id)),
        "only the Japanese page's columns: {named:?}"
    );
    let mut report = Report::default();
    for (truth, page) in pages.iter().zip(&scene.pages) {
        score_reading(truth, page, &mut report);
        let cleaned = score_clean(&t, id, &dir, page, &mut report).await;
        cleaned
            .save(dir.join(format!("{}.cleaned.png", page.name)))
            .unwrap();
    }
    let Ratios {
        recall,
        precision,
        exact,
        characters,
        ink,
        ..
    } = report.ratios();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pages/report.json");
    std::fs::write(&out, serde_json::to_string_pretty(&report).unwrap()).unwrap();
    eprintln!("pages: {}", report.summary());
    // Spec 13's targets, where they hold today.
    assert!(recall >= 0.95, "balloon recall {recall:.3}: {report:?}");
    assert!(precision >= 0.95, "precision {precision:.3}: {report:?}");
    assert!(exact >= 0.90, "OCR exact balloons {exact:.3}: {report:?}");
    assert!(
        characters >= 0.97,
        "OCR characters {characters:.3}: {report:?}"
    );
    assert_eq!(report.merged, 0, "{report:?}");
    assert!(ink < 0.005, "ink left {ink:.4}: {report:?}");
    assert_eq!(report.changed_outside, 0, "{report:?}");
    assert_eq!(report.kept_changed, 0, "{report:?}");
}

/// PP-OCRv6's small detector and recogniser, as PyPI's `rapidocr` 3.10.0
/// wheel ships them (`scripts/test` puts them in `.models/`; or
/// `QUIRE_PPOCR_MODELS` names the directory).
pub fn ppocr_models(test: &str) -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::var_os("QUIRE_PPOCR_MODELS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join(".models/rapidocr-3.10.0"),
        PathBuf::from,
    );
    let det = dir.join("PP-OCRv6_det_small.onnx");
    let rec = dir.join("PP-OCRv6_rec_small.onnx");
    let missing = (!det.is_file() || !rec.is_file()).then(|| {
        format!(
            "{} has no PP-OCRv6 models (./scripts/test takes them from the rapidocr 3.10.0 wheel)",
            dir.display()
        )
    });
    crate::harness::tool_available("ppocr-models", test, missing).then_some((det, rec))
}

fn onnx_core(det: &Path, rec: &Path) -> TestCore {
    let (det, rec) = (det.to_path_buf(), rec.to_path_buf());
    TestCore::configured(move |c| {
        c.settings.update(|ocr: &mut OcrSettings| {
            ocr.backend = OcrBackend::Onnx;
            ocr.detector = Some(ModelRef::File(det));
            ocr.model = Some(ModelRef::File(rec));
        });
    })
}

/// A white 200 × 100 image page imported into the session; its id.
async fn blank_page(t: &TestCore, id: SessionId) -> quire_model::ids::PageId {
    let page = image::RgbImage::from_pixel(200, 100, image::Rgb([255, 255, 255]));
    let mut png = std::io::Cursor::new(Vec::new());
    page.write_to(&mut png, image::ImageFormat::Png).unwrap();
    t.core
        .import_files(
            id,
            vec![ImageFile {
                name: "p.png".into(),
                bytes: png.into_inner(),
            }],
        )
        .await
        .unwrap();
    t.core.scene(id).await.unwrap().scene.pages[0].id
}

/// A program standing in for Tesseract: a shell script.
fn fake_tesseract(dir: &Path, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("tesseract");
    std::fs::write(&path, format!("#!/bin/sh\ncat >/dev/null\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn ocr_output_that_is_too_big_or_a_missing_language_is_named_and_changes_nothing() {
    let bin = tempfile::tempdir().unwrap();
    let cases = [
        (
            "head -c 20000000 /dev/zero | tr '\\0' a",
            "wrote more than 16777216 bytes",
        ),
        (
            "echo \"Failed loading language 'eng'\" >&2; exit 1",
            "install it (Debian: tesseract-ocr-eng)",
        ),
        (
            "printf 'level\\tnot\\ta header\\n'",
            "not a Tesseract TSV header",
        ),
    ];
    for (body, want) in cases {
        let program = fake_tesseract(bin.path(), body);
        let t = TestCore::configured(|c| {
            c.settings
                .update(|ocr: &mut OcrSettings| ocr.tesseract = program)
        });
        let id = t.session("ocr");
        let page_id = blank_page(&t, id).await;
        let node = crate::core_base::text_node("");
        t.core
            .apply(
                id,
                Op::AddNode {
                    page: page_id,
                    node,
                    at: None,
                },
            )
            .await
            .unwrap();
        let before = t.core.scene(id).await.unwrap().scene;
        let warnings = run(&t, id, &["ocr"]).await;
        assert!(
            warnings.iter().any(|w| w.message.contains(want)),
            "{body}: {warnings:?}"
        );
        assert_eq!(t.core.scene(id).await.unwrap().scene, before, "{body}");
    }
}

/// The real pages of the test data, made by other people: the
/// Wikipe-tan page (its six balloons transcribed by a person) and a
/// Golden Age scan with comic-text-detector's predicted text mask. What
/// the `chapter` preset makes of them (`detect` with both backends, `ocr`
/// with Tesseract, a fake LLM, `clean`, `render`) is printed and written
/// to `<target tmp>/real-pages/` with the cleaned and rendered pages, and
/// held to floors at today's figures; then each translated node gets a
/// known English line and Tesseract reads the rendered page back
/// (`readback.rs`).
#[tokio::test(flavor = "multi_thread")]
async fn real_pages_are_found_read_and_cleared() {
    let test = "real_pages_are_found_read_and_cleared";
    let Some(dir) = crate::harness::testdata(test, "comics") else {
        return;
    };
    if !tesseract(test) {
        return;
    }
    let Some((det, _)) = ppocr_models(test) else {
        return;
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-pages");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    // The chapter preset end to end, its llm-translate against a local
    // fake provider (each segment's text, marked "FR").
    let (base, _fake) = crate::fake_llm::fake_provider().await;
    let provider = crate::fake_llm::provider(&base, "good", 30, 0);
    let with_provider = provider.clone();
    let builtin = TestCore::configured(move |c| {
        c.providers = BTreeMap::from([("default".to_owned(), with_provider)]);
    });
    let builtin = real_pages(builtin, &dir, &out.join("builtin")).await;
    let onnx = TestCore::configured(move |c| {
        c.providers = BTreeMap::from([("default".to_owned(), provider)]);
        c.settings.update(|detect: &mut DetectSettings| {
            detect.backend = DetectBackend::Onnx;
            detect.model = Some(ModelRef::File(det));
        });
    });
    let onnx = real_pages(onnx, &dir, &out.join("onnx")).await;
    let report = serde_json::json!({ "builtin": builtin, "onnx": onnx });
    std::fs::write(
        out.join("report.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    eprintln!("real pages: {report}");
    // Floors a little under today's figures (builtin: 1 of 6 Wikipe-tan
    // balloons, 78 % of the scan's predicted text pixels; onnx: 4 of 6,
    // 89 %), so that neither backend gets worse unnoticed.
    let figure =
        |backend: &str, page: &str, key: &str| report[backend][page][key].as_f64().unwrap();
    assert!(figure("builtin", "wikipe-tan", "found") >= 1.0, "{report}");
    assert!(figure("onnx", "wikipe-tan", "found") >= 4.0, "{report}");
    assert!(
        figure("builtin", "dcm-006013", "mask_recall") >= 0.68,
        "{report}"
    );
    assert!(
        figure("onnx", "dcm-006013", "mask_recall") >= 0.85,
        "{report}"
    );
    for backend in ["builtin", "onnx"] {
        assert!(
            figure(backend, "dcm-006013", "mask_precision") >= 0.9,
            "{report}"
        );
    }
    // What render set there read back (9 and 11 of 19 today; spec 12's
    // 95 % is far off on these pages: see docs/comics.md).
    assert!(figure("builtin", "read back", "read") >= 8.0, "{report}");
    assert!(figure("onnx", "read back", "read") >= 10.0, "{report}");
}

/// The real pages through the `chapter` preset (detect, ocr, tm,
/// llm-translate, qa, clean, render) in `t`, the cleaned and rendered
/// pages saved in `out`, and the figures.
// What it read is printed, as the test that calls it prints.
#[allow(clippy::print_stderr)]
async fn real_pages(t: TestCore, dir: &Path, out: &Path) -> Value {
    std::fs::create_dir_all(out).unwrap();
    let names = ["mit_wikipe-tan_manga_page1_en.jpg", "ctd_dcm-006013_en.jpg"];
    let id = t.session("real pages");
    let files = names
        .iter()
        .map(|name| ImageFile {
            bytes: std::fs::read(dir.join(name)).unwrap(),
            name: (*name).into(),
        })
        .collect();
    t.core.import_files(id, files).await.unwrap();
    let languages = ProjectPatch {
        source_language: Some(Some("en".into())),
        target_language: Some(Some("fr".into())),
        ..ProjectPatch::default()
    };
    t.core
        .apply(id, Op::UpdateProject { patch: languages })
        .await
        .unwrap();
    run(&t, id, &["chapter"]).await;
    let scene = t.core.scene(id).await.unwrap().scene;
    for page in &scene.pages {
        stored_image(&t, id, page, ImageRole::Rendered)
            .await
            .save(out.join(format!("{}.rendered.png", page.name)))
            .unwrap();
        let cleaned = stored_image(&t, id, page, ImageRole::Cleaned).await;
        cleaned
            .save(out.join(format!("{}.cleaned.png", page.name)))
            .unwrap();
        text_mask(&t, id, page)
            .await
            .save(out.join(format!("{}.mask.png", page.name)))
            .unwrap();
        // The scan's top half, before and after, side by side (the
        // picture in `docs/comics.md`).
        if page.name.starts_with("ctd_dcm") {
            let source = stored_image(&t, id, page, ImageRole::Source).await;
            let (w, h) = (source.width(), source.height() / 2);
            let mut both = image::RgbaImage::from_pixel(2 * w + 12, h, image::Rgba([255; 4]));
            image::imageops::replace(
                &mut both,
                &image::imageops::crop_imm(&source, 0, 0, w, h).to_image(),
                0,
                0,
            );
            image::imageops::replace(
                &mut both,
                &image::imageops::crop_imm(&cleaned, 0, 0, w, h).to_image(),
                i64::from(w) + 12,
                0,
            );
            both.save(out.join("before-after.png")).unwrap();
        }
    }

    // Wikipe-tan: a balloon is found when a node's box or region covers
    // at least half of the person's (approximate) box.
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("mit_wikipe-tan_manga_page1_en.json")).unwrap(),
    )
    .unwrap();
    let page_named = |start: &str| {
        scene
            .pages
            .iter()
            .find(|p| p.name.starts_with(start))
            .unwrap()
    };
    let nodes = found(page_named("mit_wikipe-tan"));
    let (mut balloons, mut hits, mut characters, mut errors) = (0, 0, 0, 0);
    for block in truth["blocks"].as_array().unwrap() {
        if !block["kind"].as_str().unwrap().starts_with("balloon") {
            continue;
        }
        balloons += 1;
        let b = box4(&block["box"]);
        let b = [b[0], b[1], b[2] - b[0], b[3] - b[1]];
        let want = normal(block["text"].as_str().unwrap());
        characters += want.chars().count();
        let hit = nodes
            .iter()
            .filter(|(n, r, _)| covered(b, *n) >= 0.5 || covered(b, *r) >= 0.5)
            .map(|(_, _, text)| normal(text))
            .min_by_key(|got| strsim::levenshtein(got, &want));
        match hit {
            Some(got) => {
                hits += 1;
                errors += strsim::levenshtein(&got, &want);
                eprintln!("wikipe-tan: read {got:?} for {want:?}");
            }
            None => {
                errors += want.chars().count();
                eprintln!("wikipe-tan: missed {want:?}");
            }
        }
    }

    // The scan: our text mask against comic-text-detector's prediction,
    // each grown by 3 px to forgive a stroke's edge.
    let predicted = image::open(dir.join("ctd_dcm-006013_en.mask-pred.png"))
        .unwrap()
        .to_luma8();
    let scan = page_named("ctd_dcm-006013");
    let ours = text_mask(&t, id, scan).await;
    let (w, h) = ours.dimensions();
    let bits = |m: &GrayImage| m.pixels().map(|p| p[0] > 127).collect::<Vec<bool>>();
    let (theirs_bits, ours_bits) = (bits(&predicted), bits(&ours));
    let theirs_grown = quire_vision::clean::grow(&theirs_bits, w, h, 3);
    let ours_grown = quire_vision::clean::grow(&ours_bits, w, h, 3);
    let share = |of: &[bool], within: &[bool]| {
        let n = of.iter().filter(|b| **b).count();
        let inside = of.iter().zip(within).filter(|(a, b)| **a && **b).count();
        inside as f64 / n.max(1) as f64
    };
    let mask_recall = share(&theirs_bits, &ours_grown);
    let mask_precision = share(&ours_bits, &theirs_grown);
    let chars = 1.0 - errors as f64 / characters.max(1) as f64;
    let (exact, set) = readback::read_back(&t, id, out).await;
    serde_json::json!({
        "wikipe-tan": { "balloons": balloons, "found": hits, "characters": chars },
        "dcm-006013": { "nodes": found(scan).len(), "mask_recall": mask_recall, "mask_precision": mask_precision },
        "read back": { "set": set, "read": exact, "share": exact as f64 / set.max(1) as f64 },
    })
}

/// The `onnx` backend of `detect` (PP-OCRv6's small detector in tract,
/// the balloons found around its lines) on the generated page set:
/// held to spec 13's detection targets, like the built-in backend, and
/// never a duplicate when run again.
#[tokio::test(flavor = "multi_thread")]
async fn the_onnx_detector_finds_the_balloons_of_the_page_set() {
    let test = "the_onnx_detector_finds_the_balloons_of_the_page_set";
    let Some((det, _)) = ppocr_models(test) else {
        return;
    };
    let Some((dir, truth)) = page_set(test, "pages-onnx-detect") else {
        return;
    };
    let t = TestCore::configured(move |c| {
        c.settings.update(|detect: &mut DetectSettings| {
            detect.backend = DetectBackend::Onnx;
            detect.model = Some(ModelRef::File(det));
        });
    });
    let pages = truth["pages"].as_array().unwrap();
    let id = page_set_session(&t, &dir, pages).await;
    run(&t, id, &["detect"]).await;
    let once = t.core.scene(id).await.unwrap().scene;
    run(&t, id, &["detect"]).await;
    assert_eq!(
        once,
        t.core.scene(id).await.unwrap().scene,
        "detect run again changed the scene"
    );
    let mut report = Report::default();
    for (truth, page) in pages.iter().zip(&once.pages) {
        score_balloons(truth, page, &mut report);
        text_mask(&t, id, page).await;
    }
    let recall = report.matched as f64 / report.balloons as f64;
    let precision = (report.nodes - report.false_nodes) as f64 / report.nodes.max(1) as f64;
    eprintln!(
        "pages (onnx detect): recall {:.1} %, precision {:.1} %, merged {}",
        recall * 100.0,
        precision * 100.0,
        report.merged
    );
    assert!(recall >= 0.95, "balloon recall {recall:.3}: {report:?}");
    assert!(precision >= 0.95, "precision {precision:.3}: {report:?}");
    assert_eq!(report.merged, 0, "{report:?}");
}

/// The text nodes of a page.
fn text_nodes(page: &Page) -> impl Iterator<Item = &quire_model::scene::Node> {
    page.nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Text { .. }))
}

/// A fixture of the core's tests (`crates/quire-core/tests/fixtures`).
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/quire-core/tests/fixtures")
        .join(name)
}
