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
                    entry: None,
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

#[tokio::test(flavor = "multi_thread")]
async fn cbz_png_and_pdf_hold_the_rendered_pages_in_order() {
    let test = "cbz_png_and_pdf_hold_the_rendered_pages_in_order";
    let (Some(config), true) = (fonts(test), poppler(test)) else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("Chapter 3");
    t.core
        .apply(
            id,
            serde_json::from_value(
                serde_json::json!({ "type": "UpdateProject", "patch": { "targetLanguage": "fr" } }),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let out = out_dir("exports");
    let a = [(60.0, 60.0, 280.0, 120.0)];
    let (first, nodes) = page(
        &t,
        id,
        "p1.png",
        png(&comic(500, 700, &a)),
        &[plain(a[0], "一", "First page")],
    )
    .await;
    let (second, _) = page(
        &t,
        id,
        "p2.png",
        png(&comic(640, 480, &a)),
        &[plain(a[0], "二", "Second page")],
    )
    .await;
    t.core
        .import_text(
            id,
            "Afterword",
            "Thanks for reading.\n\nあとがき",
            Some("ja"),
        )
        .await
        .unwrap();
    assert_eq!(
        render(&t, id).await.0,
        JobStatus::CompletedWithErrors,
        "the text page has no image"
    );
    let epoch = t.core.scene(id).await.unwrap().epoch;

    // CBZ: the pages in order, then ComicInfo.xml.
    let cbz = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Cbz))
        .await
        .unwrap();
    assert_eq!(cbz.media_type, "application/vnd.comicbook+zip");
    assert!(cbz.file_name.ends_with(".cbz"), "{}", cbz.file_name);
    std::fs::write(out.join("chapter.cbz"), &cbz.bytes).unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(cbz.bytes.clone())).unwrap();
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().into_owned())
        .collect();
    assert_eq!(names, ["001.png", "002.png", "ComicInfo.xml"]);
    for (i, (page, size)) in [(first, (500, 700)), (second, (640, 480))]
        .into_iter()
        .enumerate()
    {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut zip.by_index(i).unwrap(), &mut bytes).unwrap();
        let image = image::load_from_memory(&bytes).unwrap().to_rgba8();
        assert_eq!(image.dimensions(), size);
        assert_eq!(
            image,
            rendered(&t, id, page).await,
            "the stored render, as it is"
        );
    }
    let mut info = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("ComicInfo.xml").unwrap(), &mut info).unwrap();
    let doc = roxmltree::Document::parse(&info).unwrap();
    let field = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name(name))
            .and_then(|n| n.text())
            .map(str::to_owned)
    };
    assert_eq!(field("Title").as_deref(), Some("Chapter 3"));
    assert_eq!(field("PageCount").as_deref(), Some("2"));
    assert_eq!(field("LanguageISO").as_deref(), Some("fr"));

    // PNG: the same images as 001.png, 002.png.
    let pngs = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Png))
        .await
        .unwrap();
    let zip = zip::ZipArchive::new(std::io::Cursor::new(pngs.bytes)).unwrap();
    assert_eq!(
        zip.file_names()
            .map(|n| n.unwrap().into_owned())
            .collect::<Vec<_>>(),
        ["001.png", "002.png"]
    );

    // PDF: one page per rendered image at its size, then the text page.
    let pdf = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Pdf))
        .await
        .unwrap();
    assert_eq!(pdf.media_type, "application/pdf");
    let path = out.join("chapter.pdf");
    std::fs::write(&path, &pdf.bytes).unwrap();
    let info = Command::new("pdfinfo")
        .args(["-f", "1", "-l", "3"])
        .arg(&path)
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    let info = info.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(info.contains("Pages: 3"), "{info}");
    assert!(info.contains("Page 1 size: 500 x 700 pts"), "{info}");
    assert!(info.contains("Page 2 size: 640 x 480 pts"), "{info}");
    assert!(info.contains("Page 3 size: 595 x 842 pts (A4)"), "{info}");
    let first_page = out.join("pdf-page");
    let ok = Command::new("pdftoppm")
        .args(["-r", "72", "-f", "1", "-l", "1", "-png", "-singlefile"])
        .arg(&path)
        .arg(&first_page)
        .status()
        .unwrap();
    assert!(ok.success());
    let from_pdf = image::open(out.join("pdf-page.png")).unwrap().to_rgba8();
    golden_like(&from_pdf, &rendered(&t, id, first).await);
    let text = Command::new("pdftotext")
        .args(["-f", "3", "-l", "3"])
        .arg(&path)
        .arg("-")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Afterword")
            && text.contains("Thanks for reading.")
            && text.contains("あとがき"),
        "{text}"
    );

    // Exports change nothing; a stale page is rendered for the export.
    assert_eq!(t.core.scene(id).await.unwrap().epoch, epoch);
    t.core
        .apply(
            id,
            serde_json::from_value(
                serde_json::json!({ "type": "UpdateNode", "page": first, "id": nodes[0],
                "patch": { "kind": { "type": "text", "translation": "Changed since" } } }),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let cbz = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Cbz))
        .await
        .unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(cbz.bytes)).unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut zip.by_index(0).unwrap(), &mut bytes).unwrap();
    let fresh = image::load_from_memory(&bytes).unwrap().to_rgba8();
    assert_ne!(
        fresh,
        rendered(&t, id, first).await,
        "the stale render was not used"
    );
    assert_eq!(
        t.core.scene(id).await.unwrap().epoch,
        epoch + 1,
        "the export stored nothing"
    );
}

/// Two renderings of one page agree (a PDF page rasterised by poppler
/// against the PNG it embeds): at most 1 % of the pixels far apart.
/// What a group publishes: the pages as JPEG or WebP at a quality, and a
/// ComicInfo.xml that names the series, the chapter, the translator, the
/// languages and the reading direction. A bad option is refused and
/// changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn pages_export_as_jpeg_or_webp_with_the_books_comicinfo() {
    let test = "pages_export_as_jpeg_or_webp_with_the_books_comicinfo";
    let (Some(config), true) = (fonts(test), poppler(test)) else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("Chapter 12.5");
    let book = serde_json::json!({ "type": "UpdateProject", "patch": {
        "sourceLanguage": "ja", "targetLanguage": "fr",
        "series": "Contes <d'or> & d'argent", "number": "12.5", "translator": "Équipe Quire" } });
    t.core
        .apply(id, serde_json::from_value(book).unwrap())
        .await
        .unwrap();
    let a = [(60.0, 60.0, 280.0, 120.0)];
    let mut pages = Vec::new();
    for (name, size) in [("p1.png", (500, 700)), ("p2.png", (640, 480))] {
        let (page_id, _) = page(
            &t,
            id,
            name,
            png(&comic(size.0, size.1, &a)),
            &[plain(a[0], "一", "Une page")],
        )
        .await;
        pages.push(page_id);
    }
    assert_eq!(render(&t, id).await.0, JobStatus::Completed);
    let epoch = t.core.scene(id).await.unwrap().epoch;
    let out = out_dir("encoded");
    let export = |format, image_format, quality| ExportSpec {
        image_format,
        quality,
        ..ExportSpec::of(format)
    };
    let entries = |bytes: Vec<u8>| {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        (0..zip.len())
            .map(|i| {
                let mut file = zip.by_index(i).unwrap();
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut file, &mut bytes).unwrap();
                (file.name().unwrap().into_owned(), bytes)
            })
            .collect::<Vec<_>>()
    };

    // CBZ of JPEGs: the same pages, within JPEG's tolerance.
    let cbz = t
        .core
        .export(
            id,
            export(ExportFormat::Cbz, Some(ImageFormat::Jpeg), Some(90)),
        )
        .await
        .unwrap();
    std::fs::write(out.join("jpeg.cbz"), &cbz.bytes).unwrap();
    let files = entries(cbz.bytes);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["001.jpg", "002.jpg", "ComicInfo.xml"]);
    for ((_, bytes), page_id) in files.iter().zip(&pages) {
        assert_eq!(
            image::guess_format(bytes).unwrap(),
            image::ImageFormat::Jpeg
        );
        let decoded = image::load_from_memory(bytes).unwrap().to_rgba8();
        golden_like(&decoded, &rendered(&t, id, *page_id).await);
    }
    let info = String::from_utf8(files[2].1.clone()).unwrap();
    let doc = roxmltree::Document::parse(&info).unwrap();
    let fields: Vec<(String, String)> = doc
        .root_element()
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() != "Pages")
        .map(|n| {
            (
                n.tag_name().name().to_owned(),
                n.text().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let expected = [
        ("Title", "Chapter 12.5"),
        ("Series", "Contes <d'or> & d'argent"),
        ("Number", "12.5"),
        ("Notes", "Translated from ja to fr."),
        ("Translator", "Équipe Quire"),
        ("PageCount", "2"),
        ("LanguageISO", "fr"),
        ("Manga", "YesAndRightToLeft"),
    ];
    assert_eq!(
        fields,
        expected.map(|(k, v)| (k.to_owned(), v.to_owned())),
        "the ComicInfo 2.1 elements, in the schema's order"
    );
    let sizes: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("Page"))
        .map(|n| n.attribute("ImageSize").unwrap().to_owned())
        .collect();
    assert_eq!(
        sizes,
        [files[0].1.len().to_string(), files[1].1.len().to_string()]
    );

    // A zip of lossy WebPs, alpha kept; the default quality.
    let webp = t
        .core
        .export(id, export(ExportFormat::Png, Some(ImageFormat::Webp), None))
        .await
        .unwrap();
    let files = entries(webp.bytes);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["001.webp", "002.webp"]);
    for ((_, bytes), page_id) in files.iter().zip(&pages) {
        assert_eq!(
            image::guess_format(bytes).unwrap(),
            image::ImageFormat::WebP
        );
        let decoded = image::load_from_memory(bytes).unwrap().to_rgba8();
        golden_like(&decoded, &rendered(&t, id, *page_id).await);
    }

    // A PDF of JPEG pages: poppler reads each at its size.
    let pdf = t
        .core
        .export(
            id,
            export(ExportFormat::Pdf, Some(ImageFormat::Jpeg), Some(70)),
        )
        .await
        .unwrap();
    let path = out.join("jpeg.pdf");
    std::fs::write(&path, &pdf.bytes).unwrap();
    let images = Command::new("pdfimages")
        .arg("-list")
        .arg(&path)
        .output()
        .unwrap();
    let images = String::from_utf8_lossy(&images.stdout);
    let kinds: Vec<&str> = images
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert_eq!(kinds, ["image", "image"], "{images}");
    assert!(
        images
            .lines()
            .skip(2)
            .all(|l| l.split_whitespace().nth(8) == Some("jpeg")),
        "embedded as JPEG: {images}"
    );

    // Bad options: refused, named, nothing changed.
    for (spec, says) in [
        (
            export(ExportFormat::Cbz, Some(ImageFormat::Jpeg), Some(0)),
            "quality 0 is out of range",
        ),
        (
            export(ExportFormat::Cbz, Some(ImageFormat::Webp), Some(101)),
            "quality 101 is out of range",
        ),
        (
            export(ExportFormat::Cbz, None, Some(80)),
            "quality applies to jpeg and webp",
        ),
        (
            export(ExportFormat::Cbz, Some(ImageFormat::Png), Some(80)),
            "quality applies to jpeg and webp",
        ),
        (
            export(ExportFormat::Xliff, Some(ImageFormat::Jpeg), None),
            "png, cbz and pdf exports only",
        ),
    ] {
        let e = t.core.export(id, spec.clone()).await.unwrap_err();
        assert_eq!(e.code(), "invalid_input", "{spec:?}");
        assert!(e.to_string().contains(says), "{spec:?}: {e}");
    }
    for patch in [
        serde_json::json!({ "series": "line\nbreak" }),
        serde_json::json!({ "translator": " " }),
        serde_json::json!({ "number": "9".repeat(201) }),
    ] {
        let op = serde_json::json!({ "type": "UpdateProject", "patch": patch });
        let e = t
            .core
            .apply(id, serde_json::from_value(op).unwrap())
            .await
            .unwrap_err();
        assert_eq!(e.code(), "invalid_op", "{patch}: {e}");
    }
    let scene = t.core.scene(id).await.unwrap();
    assert_eq!(scene.epoch, epoch);
    assert_eq!(
        scene.scene.project.translator.as_deref(),
        Some("Équipe Quire")
    );

    // The book's fields clear with null, and undo brings them back.
    let clear = serde_json::json!({ "type": "UpdateProject",
        "patch": { "series": null, "number": null, "translator": null } });
    t.core
        .apply(id, serde_json::from_value(clear).unwrap())
        .await
        .unwrap();
    let project = t.core.scene(id).await.unwrap().scene.project;
    assert_eq!(
        (project.series, project.number, project.translator),
        (None, None, None)
    );
    t.core.undo(id).await.unwrap();
    let project = t.core.scene(id).await.unwrap().scene.project;
    assert_eq!(project.number.as_deref(), Some("12.5"));
}

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

#[tokio::test(flavor = "multi_thread")]
async fn bad_inputs_warn_or_fail_and_change_nothing_else() {
    let Some(mut config) = fonts("bad_inputs_warn_or_fail_and_change_nothing_else") else {
        return;
    };
    // No CJK font: Japanese text has no glyphs.
    config.fonts = vec![DEJAVU.into()];
    let t = TestCore::with_render(config);
    let id = t.session("Bad");
    let a = [
        (40.0, 40.0, 200.0, 80.0),
        (40.0, 200.0, 0.0, 60.0),
        (40.0, 300.0, 200.0, 80.0),
        (40.0, 420.0, 200.0, 80.0),
    ];
    let (good, nodes) = page(
        &t,
        id,
        "good.png",
        png(&comic(400, 560, &[a[0], a[2], a[3]])),
        &[
            plain(a[0], "x", "Fine"),
            plain(a[1], "x", "No room"),
            Box {
                at: a[2],
                text: "x",
                translation: Some("Unknown face"),
                style: Some(Style {
                    font_family: Some("No Such Font Family".into()),
                    ..Style::default()
                }),
            },
            plain(a[3], "x", "日本語"),
        ],
    )
    .await;
    t.core
        .import_text(id, "notes", "A text page.", None)
        .await
        .unwrap();
    // A PNG whose header is right and whose data is not (the import
    // refuses it now; an older project may hold one).
    let mut corrupt = png(&RgbImage::new(300, 200));
    corrupt.truncate(40);
    corrupt.extend_from_slice(b"not image data at all");
    let (broken, _) = raw_page(&t, id, "broken", corrupt, &[plain(a[0], "x", "Never set")]).await;
    let before = t.core.scene(id).await.unwrap();

    let (status, findings) = render(&t, id).await;
    assert_eq!(status, JobStatus::CompletedWithErrors);
    let rules: Vec<(&str, Option<NodeId>)> = findings
        .iter()
        .map(|f| (f.rule.as_str(), f.node_id))
        .collect();
    let notes = before.scene.pages[1].id;
    assert!(
        rules.contains(&("empty-box", Some(nodes[1]))),
        "{findings:?}"
    );
    assert!(
        rules.contains(&("missing-font", Some(nodes[2]))),
        "{findings:?}"
    );
    assert!(
        rules.contains(&("missing-glyphs", Some(nodes[3]))),
        "{findings:?}"
    );
    assert!(
        findings
            .iter()
            .any(|f| f.rule == "no-image" && f.page_id == Some(notes)),
        "{findings:?}"
    );
    assert!(
        findings.iter().any(|f| f.rule == "engine-failed"
            && f.page_id == Some(broken)
            && f.message.contains("cannot be read")),
        "{findings:?}"
    );
    // The good page is rendered; nothing else changed.
    let after = t.core.scene(id).await.unwrap();
    assert_eq!(
        after.epoch,
        before.epoch + 1,
        "one page's render, nothing more"
    );
    for page in &after.scene.pages {
        let old = before.scene.page(page.id).unwrap();
        if page.id == good {
            assert_eq!(page.nodes.len(), old.nodes.len() + 1);
            assert_eq!(&page.nodes[..1], &old.nodes[..1]);
        } else {
            assert_eq!(**page, *old, "page {}", page.name);
        }
    }
    // An export that needs the broken page's render fails, naming it, and
    // changes nothing.
    let e = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Cbz))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("`broken`") && e.to_string().contains("cannot be read"),
        "{e}"
    );
    assert_eq!(t.core.scene(id).await.unwrap().epoch, after.epoch);
}

/// Text no installed font has is not shaped (0.2 looked for each such
/// character through every font file, 14 s for 5,000 of them): the page
/// renders with a warning naming the characters; a 1 MiB translation sets
/// what its box can show and warns that the rest is clipped.
#[tokio::test]
async fn text_no_font_has_and_text_past_the_box_are_named_not_shaped() {
    let Some(mut config) = fonts("text_no_font_has_and_text_past_the_box_are_named_not_shaped")
    else {
        return;
    };
    config.fonts = vec![DEJAVU.into()];
    let t = TestCore::with_render(config);
    let id = t.session("Unshaped");
    let private: String = (0xE000u32..0xE000 + 5000)
        .filter_map(char::from_u32)
        .collect();
    let private: &'static str = String::leak(format!("Hi {private}"));
    let huge: &'static str = String::leak("word ".repeat((1 << 20) / 5 - 1));
    let boxes = [(40.0, 40.0, 300.0, 120.0), (40.0, 240.0, 300.0, 120.0)];
    let (_, nodes) = page(
        &t,
        id,
        "page.png",
        png(&comic(400, 420, &boxes)),
        &[plain(boxes[0], "x", private), plain(boxes[1], "x", huge)],
    )
    .await;
    let (status, findings) = render(&t, id).await;
    assert_eq!(status, JobStatus::CompletedWithErrors, "{findings:?}");
    let missing = findings
        .iter()
        .find(|f| f.rule == "missing-glyphs" && f.node_id == Some(nodes[0]))
        .unwrap_or_else(|| panic!("{findings:?}"));
    assert!(missing.message.contains("\\u{e000}"), "{}", missing.message);
    assert!(
        findings
            .iter()
            .any(|f| f.rule == "overflow" && f.node_id == Some(nodes[1])),
        "{findings:?}"
    );
    assert!(
        !findings.iter().any(|f| f.rule == "engine-failed"),
        "{findings:?}"
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
