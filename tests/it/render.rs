//! The `render` engine and the page exports, checked by independent tools:
//! Tesseract reads the rendered pages (the translations in their boxes, the
//! sources gone), golden images hold the typesetting (with a tolerance),
//! poppler's `pdfinfo`, `pdftoppm` and `pdftotext` read the PDF, and
//! ComicTagger's `comicapi` reads the CBZ and its `ComicInfo.xml`
//! (`tests/render/checks.py`, which also drives it all over MCP). Bad
//! inputs warn or fail clearly and change nothing else.
//!
//! The fonts are fixed files (DejaVu Sans, Noto Sans CJK), not the
//! system's choice, so the goldens hold on any machine that has them.
//! `QUIRE_BLESS=1` rewrites the goldens; look at them before committing.

use std::path::{Path, PathBuf};
use std::process::Command;

use image::{Rgb, RgbImage, RgbaImage};
use quire_core::events::{Event, JobStatus};
use quire_core::export::{ExportFormat, ExportSpec, ImageFormat};
use quire_core::import::ImageFile;
use quire_core::jobs::Approval;
use quire_model::finding::Finding;
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{NewNode, NodePatch, Op};
use quire_model::scene::{ImageRole, NodeKind, Style, Transform};
use quire_render::RenderConfig;

use crate::core_base::{TestCore, stored_image};
use crate::core_base::{follow, spec};
use crate::harness::tool_available;

mod exports;
mod refusals;

const DEJAVU: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const NOTO_CJK: &str = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc";
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/render");

/// The fixed fonts, or `None` when they are missing and allowed to be
/// (`ALLOW_MISSING_TOOLS=fonts`); scripts/test installs them.
fn fonts(test: &str) -> Option<RenderConfig> {
    let missing = [DEJAVU, NOTO_CJK]
        .iter()
        .find(|f| !Path::new(f).exists())
        .map(|f| format!("{f} is missing (Debian's fonts-dejavu-core and fonts-noto-cjk)"));
    tool_available("fonts", test, missing).then(|| RenderConfig {
        min_font_size: 8.0,
        font_family: "DejaVu Sans".into(),
        fonts: vec![DEJAVU.into(), NOTO_CJK.into()],
        system_fonts: false,
    })
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("render")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn png(image: &RgbImage) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// A comic-like page drawn here: a light panel with a gradient, and a white
/// balloon (an ellipse with a dark outline) around each box.
fn comic(width: u32, height: u32, balloons: &[(f64, f64, f64, f64)]) -> RgbImage {
    let mut image = RgbImage::from_fn(width, height, |x, y| {
        Rgb([
            (200 + (x * 40 / width)) as u8,
            (215 + (y * 30 / height)) as u8,
            230,
        ])
    });
    for &(bx, by, bw, bh) in balloons {
        let (cx, cy) = (bx + bw / 2.0, by + bh / 2.0);
        let (rx, ry) = (bw / 2.0 + bw * 0.22, bh / 2.0 + bh * 0.3);
        for y in 0..height {
            for x in 0..width {
                let (dx, dy) = ((f64::from(x) - cx) / rx, (f64::from(y) - cy) / ry);
                let d = dx * dx + dy * dy;
                if d <= 1.0 {
                    image.put_pixel(x, y, Rgb([252, 252, 252]));
                } else if d <= 1.06 {
                    image.put_pixel(x, y, Rgb([20, 20, 20]));
                }
            }
        }
    }
    image
}

struct Box {
    at: (f64, f64, f64, f64),
    text: &'static str,
    translation: Option<&'static str>,
    style: Option<Style>,
}

fn plain(at: (f64, f64, f64, f64), text: &'static str, translation: &'static str) -> Box {
    Box {
        at,
        text,
        translation: Some(translation),
        style: None,
    }
}

/// A page of `image` with text nodes over `boxes`.
async fn page(
    t: &TestCore,
    id: SessionId,
    name: &str,
    image: Vec<u8>,
    boxes: &[Box],
) -> (PageId, Vec<NodeId>) {
    let before = t.core.scene(id).await.unwrap().scene.pages.len();
    t.core
        .import_files(
            id,
            vec![ImageFile {
                name: name.into(),
                bytes: image,
            }],
        )
        .await
        .unwrap();
    let page = t.core.scene(id).await.unwrap().scene.pages[before].id;
    (page, add_boxes(t, id, page, boxes).await)
}

/// A page whose image is stored as given, past the import's checks: what
/// an older quire (or a command engine) may have left in a project.
async fn raw_page(
    t: &TestCore,
    id: SessionId,
    name: &str,
    image: Vec<u8>,
    boxes: &[Box],
) -> (PageId, Vec<NodeId>) {
    let blob = t.core.put_blob(id, image).await.unwrap();
    let page = PageId::new();
    let op = crate::core_base::image_page(name, blob, (300, 200), Some(page));
    t.core.apply(id, op).await.unwrap();
    (page, add_boxes(t, id, page, boxes).await)
}

async fn add_boxes(t: &TestCore, id: SessionId, page: PageId, boxes: &[Box]) -> Vec<NodeId> {
    let ops = boxes
        .iter()
        .map(|b| Op::AddNode {
            page,
            node: NewNode {
                id: None,
                transform: Transform {
                    x: b.at.0,
                    y: b.at.1,
                    width: b.at.2,
                    height: b.at.3,
                    rotation: None,
                },
                visible: true,
                kind: NodeKind::Text {
                    text: Some(b.text.into()),
                    translation: b.translation.map(str::to_owned),
                    source_lang: None,
                    style: b.style.clone(),
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
        })
        .collect();
    let created = t
        .core
        .apply(id, Op::Batch { ops, label: None })
        .await
        .unwrap()
        .created;
    created.into_iter().map(NodeId).collect()
}

/// Runs `render` over the session; its status and findings.
async fn render(t: &TestCore, id: SessionId) -> (JobStatus, Vec<Finding>) {
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["render"]), Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    let findings = events
        .iter()
        .filter_map(|e| match e {
            Event::JobWarning { finding, .. } => Some(finding.clone()),
            _ => None,
        })
        .collect();
    let status = match events.last() {
        Some(Event::JobFinished { status, .. }) => *status,
        other => panic!("{other:?}"),
    };
    (status, findings)
}

/// The page's rendered image.
async fn rendered(t: &TestCore, id: SessionId, page: PageId) -> RgbaImage {
    let scene = t.core.scene(id).await.unwrap().scene;
    stored_image(t, id, scene.page(page).unwrap(), ImageRole::Rendered).await
}

/// The words Tesseract reads (confidence over 40).
fn ocr(path: &Path) -> Vec<String> {
    let out = Command::new("tesseract")
        .arg(path)
        .args(["-", "--psm", "11", "tsv"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let conf: f64 = f.get(10)?.parse().ok()?;
            let word = f.get(11)?.trim();
            if conf < 40.0 || word.is_empty() {
                return None;
            }
            Some(word.to_owned())
        })
        .collect()
}

fn tesseract(test: &str) -> bool {
    let missing = crate::harness::missing_program("tesseract", "--version");
    tool_available("tesseract", test, missing)
}

fn letters(word: &str) -> String {
    word.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_uppercase()
}

#[tokio::test(flavor = "multi_thread")]
async fn tesseract_reads_the_translations_in_their_boxes_and_not_the_sources() {
    let test = "tesseract_reads_the_translations_in_their_boxes_and_not_the_sources";
    let (Some(config), true) = (fonts(test), tesseract(test)) else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("OCR");
    let out = out_dir("ocr");
    // The source page's text is set by quire itself, on a page drawn here;
    // Tesseract checks that it reads.
    let balloons = [(200.0, 120.0, 460.0, 110.0), (320.0, 440.0, 480.0, 110.0)];
    let sources = ["WHERE IS THE SHIP", "BEHIND THE ISLAND"];
    let targets = ["OPEN THE DOOR NOW", "FOLLOW THAT BIRD"];
    let (first, _) = page(
        &t,
        id,
        "source.png",
        png(&comic(1000, 700, &balloons)),
        &[
            plain(balloons[0], "", sources[0]),
            plain(balloons[1], "", sources[1]),
        ],
    )
    .await;
    assert_eq!(render(&t, id).await.0, JobStatus::Completed);
    let source = rendered(&t, id, first).await;
    source.save(out.join("source.png")).unwrap();
    for (i, (text, at)) in sources.iter().zip(balloons).enumerate() {
        let read = ocr_box(&source, at, &out.join(format!("source-{i}.png")));
        for word in text.split(' ') {
            assert!(
                read.iter().any(|w| letters(w) == word),
                "the source page lacks {word}: {read:?}"
            );
        }
    }
    // The page to translate: that image, its text as the nodes' sources.
    let (second, nodes) = page(
        &t,
        id,
        "page.png",
        std::fs::read(out.join("source.png")).unwrap(),
        &[
            plain(balloons[0], sources[0], targets[0]),
            plain(balloons[1], sources[1], targets[1]),
        ],
    )
    .await;
    let (status, findings) = render(&t, id).await;
    assert_eq!(status, JobStatus::Completed, "{findings:?}");
    assert_eq!(nodes.len(), 2);
    let page = rendered(&t, id, second).await;
    page.save(out.join("rendered.png")).unwrap();
    // Each box read on its own (Tesseract's page layout analysis skips a
    // balloon now and then): its translation is there, its source is not.
    for (i, (target, at)) in targets.iter().zip(balloons).enumerate() {
        let read = ocr_box(&page, at, &out.join(format!("box-{i}.png")));
        for word in target.split(' ') {
            assert!(
                read.iter().any(|w| letters(w) == word),
                "box {i}: {word} not read in {read:?}"
            );
        }
        for word in sources
            .iter()
            .flat_map(|s| s.split(' '))
            .filter(|w| w.len() > 3)
        {
            assert!(
                !read.iter().any(|w| letters(w) == word),
                "box {i}: {word} still reads: {read:?}"
            );
        }
    }
    let whole = ocr(&out.join("rendered.png"));
    for word in sources
        .iter()
        .flat_map(|s| s.split(' '))
        .filter(|w| w.len() > 3)
    {
        assert!(
            !whole.iter().any(|w| letters(w) == word),
            "{word} still reads: {whole:?}"
        );
    }
}

/// The words Tesseract reads in the box at `at` (with a margin of 12 px),
/// so a word found is a word inside the box.
fn ocr_box(page: &RgbaImage, at: (f64, f64, f64, f64), path: &Path) -> Vec<String> {
    let (x, y) = ((at.0 - 12.0).max(0.0) as u32, (at.1 - 12.0).max(0.0) as u32);
    let w = ((at.2 + 24.0) as u32).min(page.width() - x);
    let h = ((at.3 + 24.0) as u32).min(page.height() - y);
    image::imageops::crop_imm(page, x, y, w, h)
        .to_image()
        .save(path)
        .unwrap();
    ocr(path)
}

/// Compares `image` with the golden `name` (or writes it with
/// `QUIRE_BLESS=1`): the same size, at most 0.5 % of the pixels off by
/// more than 48 in a channel, and a mean difference under 2.
fn golden(name: &str, image: &RgbaImage, out: &Path) {
    let path = Path::new(GOLDEN).join(name);
    image.save(out.join(name)).unwrap();
    if std::env::var_os("QUIRE_BLESS").is_some() {
        std::fs::create_dir_all(GOLDEN).unwrap();
        image.save(&path).unwrap();
        return;
    }
    let want = image::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (QUIRE_BLESS=1 writes it)", path.display()))
        .to_rgba8();
    assert_eq!(want.dimensions(), image.dimensions(), "{name}");
    let (mut off, mut sum) = (0usize, 0u64);
    for (a, b) in want.pixels().zip(image.pixels()) {
        let d = (0..3).map(|c| a[c].abs_diff(b[c])).max().unwrap_or(0);
        sum += u64::from(d);
        if d > 48 {
            off += 1;
        }
    }
    let pixels = (want.width() * want.height()) as f64;
    let (share, mean) = (off as f64 / pixels, sum as f64 / pixels);
    assert!(
        share < 0.005 && mean < 2.0,
        "{name}: {:.2} % of the pixels differ, mean {mean:.2} (see {})",
        share * 100.0,
        out.join(name).display()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn golden_pages_latin_vertical_and_overflow() {
    let Some(config) = fonts("golden_pages_latin_vertical_and_overflow") else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("Golden");
    let out = out_dir("golden");
    let latin = [
        (80.0, 70.0, 330.0, 150.0),
        (480.0, 260.0, 260.0, 190.0),
        (120.0, 560.0, 520.0, 110.0),
    ];
    let (latin_page, _) = page(
        &t,
        id,
        "latin.png",
        png(&comic(800, 760, &latin)),
        &[
            plain(latin[0], "どこへ行くの?", "Where are we going?"),
            Box {
                at: latin[1],
                text: "海へ",
                translation: Some("To the sea, before the sun comes up."),
                style: Some(Style {
                    color: Some("#b00020".into()),
                    stroke: Some("#ffe066".into()),
                    font_size: Some(30.0),
                    ..Style::default()
                }),
            },
            plain(latin[2], "地図を持って", "Bring the map — and the compass!"),
        ],
    )
    .await;
    let tall = [(90.0, 60.0, 150.0, 420.0), (330.0, 80.0, 110.0, 300.0)];
    let vertical = |text: &'static str, translation: &'static str, at| Box {
        at,
        text,
        translation: Some(translation),
        style: Some(Style {
            vertical: Some(true),
            ..Style::default()
        }),
    };
    let (vertical_page, _) = page(
        &t,
        id,
        "vertical.png",
        png(&comic(560, 560, &tall)),
        &[
            vertical(
                "Where are we going?",
                "どこへ行くの？　海へ、夜明け前に。",
                tall[0],
            ),
            vertical("Bring the map!", "地図を持って「早く」", tall[1]),
        ],
    )
    .await;
    let small = [(110.0, 110.0, 150.0, 36.0)];
    let (overflow_page, overflow_nodes) = page(
        &t,
        id,
        "overflow.png",
        png(&comic(400, 260, &small)),
        &[plain(
            small[0],
            "short",
            "A translation far too long for this little box, however small its letters are set: quire shrinks it to the smallest size it may, then clips what is left and reports it, naming the node.",
        )],
    )
    .await;
    let (status, findings) = render(&t, id).await;
    assert_eq!(
        status,
        JobStatus::CompletedWithErrors,
        "the overflow is reported: {findings:?}"
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].rule, "overflow");
    assert_eq!(findings[0].node_id, Some(overflow_nodes[0]));
    assert!(
        findings[0].message.contains("8 px"),
        "{}",
        findings[0].message
    );
    golden("latin.png", &rendered(&t, id, latin_page).await, &out);
    golden("vertical.png", &rendered(&t, id, vertical_page).await, &out);
    golden("overflow.png", &rendered(&t, id, overflow_page).await, &out);
}

/// A Japanese translation in a balloon 1.5 times as tall as wide is set in
/// columns unless its style says `vertical = false` (spec 12, "Vertical
/// CJK"); in a wide balloon, in rows. Each box is compared with the same
/// text set with `vertical` said outright.
#[tokio::test(flavor = "multi_thread")]
async fn japanese_in_a_tall_balloon_is_set_in_columns_by_default() {
    let Some(config) = fonts("japanese_in_a_tall_balloon_is_set_in_columns_by_default") else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("Columns");
    let target = quire_model::op::ProjectPatch {
        target_language: Some(Some("ja".into())),
        ..Default::default()
    };
    t.core
        .apply(id, Op::UpdateProject { patch: target })
        .await
        .unwrap();
    let with = |at, vertical: Option<bool>| Box {
        at,
        text: "Where are we going?",
        translation: Some("どこへ行くの？海へ"),
        style: vertical.map(|v| Style {
            vertical: Some(v),
            ..Style::default()
        }),
    };
    let tall = |x: f64| (x, 20.0, 90.0, 240.0);
    let wide = |y: f64| (20.0, y, 240.0, 90.0);
    let boxes = [
        with(tall(20.0), None),
        with(tall(150.0), Some(true)),
        with(tall(280.0), Some(false)),
        with(wide(280.0), None),
        with(wide(400.0), Some(false)),
    ];
    let (page_id, _) = page(
        &t,
        id,
        "columns.png",
        png(&RgbImage::from_pixel(400, 520, Rgb([255, 255, 255]))),
        &boxes,
    )
    .await;
    let (status, findings) = render(&t, id).await;
    assert_eq!(status, JobStatus::Completed, "{findings:?}");
    let image = rendered(&t, id, page_id).await;
    image.save(out_dir("columns").join("columns.png")).unwrap();
    let crop = |(x, y, w, h): (f64, f64, f64, f64)| {
        image::imageops::crop_imm(&image, x as u32, y as u32, w as u32, h as u32).to_image()
    };
    let ink = |b: &RgbaImage| b.pixels().filter(|p| p[0] < 128).count();
    let (auto, columns, rows) = (crop(tall(20.0)), crop(tall(150.0)), crop(tall(280.0)));
    assert!(ink(&auto) > 300, "ink in the tall box");
    assert_eq!(auto, columns, "a tall balloon: columns");
    assert_ne!(auto, rows, "vertical = false: rows");
    assert_eq!(crop(wide(280.0)), crop(wide(400.0)), "a wide balloon: rows");
}

/// Japanese, Korean, Chinese, Cyrillic and Latin text each find a font
/// (DejaVu Sans for the alphabets, Noto Sans CJK for the rest): no
/// `missing-glyphs` warning, and ink in every box.
#[tokio::test(flavor = "multi_thread")]
async fn every_script_finds_a_font() {
    let Some(config) = fonts("every_script_finds_a_font") else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("Scripts");
    let texts = [
        "こんにちは、世界",
        "안녕하세요 세계",
        "你好，世界",
        "Привет, мир",
        "Hello, world",
    ];
    let boxes: Vec<(f64, f64, f64, f64)> = (0..texts.len())
        .map(|i| (40.0, 30.0 + 90.0 * i as f64, 320.0, 70.0))
        .collect();
    let nodes: Vec<Box> = texts
        .iter()
        .zip(&boxes)
        .map(|(t, at)| plain(*at, "x", t))
        .collect();
    let (page_id, _) = page(
        &t,
        id,
        "scripts.png",
        png(&RgbImage::from_pixel(400, 480, Rgb([255, 255, 255]))),
        &nodes,
    )
    .await;
    let (status, findings) = render(&t, id).await;
    assert_eq!(
        (status, findings.as_slice()),
        (JobStatus::Completed, &[][..]),
        "{findings:?}"
    );
    let image = rendered(&t, id, page_id).await;
    image.save(out_dir("scripts").join("scripts.png")).unwrap();
    for (text, (x, y, w, h)) in texts.iter().zip(boxes) {
        let ink = (y as u32..(y + h) as u32)
            .flat_map(|py| (x as u32..(x + w) as u32).map(move |px| (px, py)))
            .filter(|&(px, py)| image.get_pixel(px, py)[0] < 100)
            .count();
        assert!(ink > 200, "{text}: {ink} dark pixels");
    }
}

fn poppler(test: &str) -> bool {
    let missing = crate::harness::missing_program("pdfinfo", "-v")
        .or_else(|| crate::harness::missing_program("pdftoppm", "-v"));
    tool_available("pdfinfo", test, missing)
}

/// Two renderings of one page agree (a PDF page rasterised by poppler
/// against the PNG it embeds): at most 1 % of the pixels far apart.
fn golden_like(a: &RgbaImage, b: &RgbaImage) {
    assert_eq!(a.dimensions(), b.dimensions());
    let off = a
        .pixels()
        .zip(b.pixels())
        .filter(|(p, q)| (0..3).any(|c| p[c].abs_diff(q[c]) > 48))
        .count();
    assert!(
        off * 100 < (a.width() * a.height()) as usize,
        "{off} pixels differ"
    );
}

/// The interop checks: ComicTagger's `comicapi` reads the CBZ, and the
/// whole flow runs over MCP with the official Python SDK, against the real
/// binary.
#[test]
fn comicapi_reads_the_cbz_and_mcp_renders_and_exports() {
    let test = "comicapi_reads_the_cbz_and_mcp_renders_and_exports";
    let Some(python) = crate::mcp::python_with(test, "comicapi, mcp") else {
        return;
    };
    let Some(config) = fonts(test) else {
        return;
    };
    let s = crate::harness::Sandbox::new();
    s.user_config(&format!(
        "[render]\nfont_family = \"DejaVu Sans\"\nfonts = [\"{}\", \"{}\"]\nsystem_fonts = false\n",
        config.fonts[0].display(),
        config.fonts[1].display()
    ));
    let server = crate::http_support::Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let out = out_dir("mcp");
    let mut cmd = Command::new(python);
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/render/checks.py"
    ))
    .arg(&server.url)
    .arg(&out);
    crate::harness::run_checker(&s, &mut cmd, "render: ok");
    assert!(server.terminate().success());
}

/// A translation set in its balloon's region rather than its small box:
/// larger than the box would allow, inside the outline, and read back by
/// Tesseract word for word.
#[tokio::test(flavor = "multi_thread")]
async fn a_translation_is_set_in_its_balloons_shape_and_reads_back() {
    let test = "a_translation_is_set_in_its_balloons_shape_and_reads_back";
    let (Some(config), true) = (fonts(test), tesseract(test)) else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("shape");
    // The balloon around a small box: an ellipse 1.44 × 1.6 its size.
    let at = (220.0, 160.0, 260.0, 120.0);
    let image = png(&comic(700, 440, &[at]));
    let words = "WHERE ARE WE GOING TONIGHT MY OLD FRIEND";
    let (page_id, nodes) = page(&t, id, "p.png", image, &[plain(at, "source", words)]).await;
    let (cx, cy) = (at.0 + at.2 / 2.0, at.1 + at.3 / 2.0);
    let (rx, ry) = (
        at.2 / 2.0 + at.2 * 0.22 - 2.0,
        at.3 / 2.0 + at.3 * 0.3 - 2.0,
    );
    let region: Vec<[f64; 2]> = (0..48)
        .map(|k| {
            let a = f64::from(k) * std::f64::consts::TAU / 48.0;
            [(cx + rx * a.cos()).round(), (cy + ry * a.sin()).round()]
        })
        .collect();
    let patch = NodePatch::region(Some(Some(region)));
    t.core
        .apply(
            id,
            Op::UpdateNode {
                page: page_id,
                id: nodes[0],
                patch,
                based_on: None,
            },
        )
        .await
        .unwrap();
    let (status, findings) = render(&t, id).await;
    assert_eq!(status, JobStatus::Completed, "{findings:?}");
    assert!(findings.is_empty(), "{findings:?}");
    let out = rendered(&t, id, page_id).await;
    let path = out_dir("shape").join("shape.png");
    out.save(&path).unwrap();
    let read: Vec<String> = ocr(&path).iter().map(|w| letters(w)).collect();
    for word in words.split(' ') {
        assert!(read.contains(&word.to_owned()), "{word} not in {read:?}");
    }
    // Dark letter pixels: all inside the outline, some outside the box
    // (the balloon gave the text more room than its box).
    let (mut outside_box, mut outside_balloon) = (0, 0);
    for (x, y, p) in out.enumerate_pixels() {
        if p[0] > 100 {
            continue;
        }
        let (fx, fy) = (f64::from(x), f64::from(y));
        let (dx, dy) = ((fx - cx) / rx, (fy - cy) / ry);
        if dx * dx + dy * dy <= 0.97 {
            let in_box = fx >= at.0 && fx < at.0 + at.2 && fy >= at.1 && fy < at.1 + at.3;
            outside_box += usize::from(!in_box);
        } else if dx * dx + dy * dy < 1.0 {
            outside_balloon += 1;
        }
    }
    assert!(outside_box > 0, "the text kept to its box");
    assert_eq!(outside_balloon, 0, "letters on the outline");
}
