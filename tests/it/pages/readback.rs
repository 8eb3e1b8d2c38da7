//! Whether what `render` sets on a real page can be read (spec 12,
//! "Setting rules a reader sees"): each node the chapter translated gets
//! a known English line, `clean` and `render` run again, and Tesseract
//! reads the node's box of the rendered page.

use super::*;
use quire_model::op::NodePatch;
use quire_model::scene::TextState;

/// The lines set, in turn.
const LINES: [&str; 8] = [
    "WHERE DID THE STORM COME FROM",
    "KEEP THE ENGINE RUNNING",
    "THE HARBOR LIGHTS ARE OUT",
    "HOLD ON TIGHT",
    "NOBODY KNOWS THAT SHIP",
    "TELL ME WHAT YOU FOUND",
    "FOLLOW THE RIVER NORTH",
    "IT WAS HERE A MOMENT AGO",
];

/// The nodes of the session's pages that have a translation given
/// [`LINES`], rendered again; how many read back (every word of the
/// line, in order, whatever the line breaks), of how many.
// What it misread is printed, as the test that calls it prints.
#[allow(clippy::print_stderr)]
pub(super) async fn read_back(t: &TestCore, id: SessionId, out: &Path) -> (usize, usize) {
    let scene = t.core.scene(id).await.unwrap().scene;
    let mut set = Vec::new();
    for page in &scene.pages {
        for node in &page.nodes {
            let NodeKind::Text {
                translation: Some(translation),
                ..
            } = &node.kind
            else {
                continue;
            };
            if translation.trim().is_empty() {
                continue;
            }
            let line = LINES[set.len() % LINES.len()];
            t.core
                .apply(
                    id,
                    Op::UpdateNode {
                        page: page.id,
                        id: node.id,
                        patch: NodePatch::text(
                            Some(Some(line.to_owned())),
                            Some(TextState::Translated),
                        ),
                        based_on: None,
                    },
                )
                .await
                .unwrap();
            set.push((page.id, node.id, line));
        }
    }
    run(t, id, &["clean", "render"]).await;
    let scene = t.core.scene(id).await.unwrap().scene;
    let mut exact = 0;
    for (n, (page_id, node_id, line)) in set.iter().enumerate() {
        let page = scene.pages.iter().find(|p| p.id == *page_id).unwrap();
        let node = page.nodes.iter().find(|n| n.id == *node_id).unwrap();
        let rendered = stored_image(t, id, page, ImageRole::Rendered).await;
        let per_unit = quire_render::pixels_per_unit(page, rendered.width());
        // The node's region (its balloon), whitened outside, as a reader
        // sees the balloon; its box when it has none.
        let b = &node.transform;
        let corners = [
            [b.x, b.y],
            [b.x + b.width, b.y],
            [b.x + b.width, b.y + b.height],
            [b.x, b.y + b.height],
        ];
        let region: Vec<[f64; 2]> = match &node.kind {
            NodeKind::Text {
                region: Some(r), ..
            } => r
                .iter()
                .map(|p| [p[0] * per_unit, p[1] * per_unit])
                .collect(),
            _ => corners
                .iter()
                .map(|p| [p[0] * per_unit, p[1] * per_unit])
                .collect(),
        };
        let (w, h) = rendered.dimensions();
        let inside = quire_vision::clean::polygon(&region, w, h);
        let x0 = region
            .iter()
            .map(|p| p[0])
            .fold(f64::MAX, f64::min)
            .max(0.0) as u32;
        let y0 = region
            .iter()
            .map(|p| p[1])
            .fold(f64::MAX, f64::min)
            .max(0.0) as u32;
        let x1 = (region.iter().map(|p| p[0]).fold(0.0, f64::max).ceil() as u32).min(w - 1);
        let y1 = (region.iter().map(|p| p[1]).fold(0.0, f64::max).ceil() as u32).min(h - 1);
        let cut = image::RgbaImage::from_fn(x1 - x0 + 1, y1 - y0 + 1, |x, y| {
            if inside[((y0 + y) * w + x0 + x) as usize] {
                *rendered.get_pixel(x0 + x, y0 + y)
            } else {
                image::Rgba([255, 255, 255, 255])
            }
        });
        // Lettering of 10 to 20 px, as on these pages, is small for
        // Tesseract: three times as large, as `ocr`'s own cuts are scaled.
        let cut = image::imageops::resize(
            &cut,
            cut.width() * 3,
            cut.height() * 3,
            image::imageops::FilterType::CatmullRom,
        );
        let path = out.join(format!("readback-{n:02}.png"));
        cut.save(&path).unwrap();
        // Every word of the line read, in its order; what else OCR makes
        // of the art and outline left in the region does not count.
        // Tesseract's block and sparse modes: a reader reads it when
        // either finds every word.
        let reads = |got: &[String]| {
            let mut rest = got.iter();
            line.split_whitespace().all(|word| rest.any(|g| g == word))
        };
        let block = words_read(&path, "6");
        let sparse = words_read(&path, "11");
        if reads(&block) || reads(&sparse) {
            exact += 1;
        } else {
            eprintln!("{}: read {block:?} and {sparse:?} for {line:?}", page.name);
        }
    }
    (exact, set.len())
}

/// The words Tesseract reads in the picture at `path` (page
/// segmentation mode `psm`), letters and
/// digits only, upper case, a word broken at a line's end whole.
fn words_read(path: &Path, psm: &str) -> Vec<String> {
    let out = Command::new("tesseract")
        .arg(path)
        .args(["-", "--psm", psm])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A word hyphenated across two lines is one word.
    let text = String::from_utf8_lossy(&out.stdout).replace("-\n", "");
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_uppercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}
