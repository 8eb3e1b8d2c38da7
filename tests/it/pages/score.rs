//! How the page tests score what the engines made of a generated page
//! set against its truth: balloons found, OCR read, glyphs `clean`
//! left, pixels it changed where it must not.

use super::*;

#[derive(Default, Debug, serde::Serialize)]
pub(super) struct Report {
    pub(super) balloons: usize,
    pub(super) matched: usize,
    pub(super) nodes: usize,
    pub(super) false_nodes: usize,
    pub(super) merged: usize,
    pub(super) english: usize,
    pub(super) exact: usize,
    pub(super) characters: usize,
    pub(super) character_errors: usize,
    pub(super) mask_pixels: u64,
    /// Glyph pixels left dark where the page without its text is much
    /// lighter.
    pub(super) ink_left: u64,
    /// The glyph pixels' distance from the page without its text: the
    /// sum over them of the largest difference of a channel.
    pub(super) restore_error: u64,
    pub(super) changed_outside: u64,
    /// Pixels of the boxes of nodes with no translation, and how many of
    /// them clean changed (spec 13: untranslated text stays).
    pub(super) kept_pixels: u64,
    pub(super) kept_changed: u64,
}

/// What [`Report`] comes to.
pub(super) struct Ratios {
    pub(super) recall: f64,
    pub(super) precision: f64,
    pub(super) exact: f64,
    pub(super) characters: f64,
    pub(super) ink: f64,
    /// The mean of `restore_error` (grey levels).
    pub(super) restore: f64,
}

impl Report {
    pub(super) fn ratios(&self) -> Ratios {
        Ratios {
            recall: self.matched as f64 / self.balloons.max(1) as f64,
            precision: (self.nodes - self.false_nodes) as f64 / self.nodes.max(1) as f64,
            exact: self.exact as f64 / self.english.max(1) as f64,
            characters: 1.0 - self.character_errors as f64 / self.characters.max(1) as f64,
            ink: self.ink_left as f64 / self.mask_pixels.max(1) as f64,
            restore: self.restore_error as f64 / self.mask_pixels.max(1) as f64,
        }
    }

    /// The figures in a line, as the tests print them.
    pub(super) fn summary(&self) -> String {
        let r = self.ratios();
        format!(
            "recall {:.1} %, precision {:.1} %, merged {}, OCR exact {:.1} %, characters {:.1} %, ink left {:.2} %, glyph pixels off by {:.1} grey levels, changed outside {}, untranslated changed {} of {} px",
            r.recall * 100.0,
            r.precision * 100.0,
            self.merged,
            r.exact * 100.0,
            r.characters * 100.0,
            r.ink * 100.0,
            r.restore,
            self.changed_outside,
            self.kept_changed,
            self.kept_pixels
        )
    }
}

/// The balloons found on `page` and, for the English ones, what OCR read
/// of them against the truth, into `report`.
// What it misread is printed, as the tests that call it print.
#[allow(clippy::print_stderr)]
pub(super) fn score_reading(truth: &Value, page: &Page, report: &mut Report) {
    for (balloon, text) in score_balloons(truth, page, report) {
        if balloon["lang"] == "en" {
            let want = normal(balloon["text"].as_str().unwrap());
            let got = normal(&text);
            report.english += 1;
            report.exact += usize::from(got == want);
            report.characters += want.chars().count();
            report.character_errors += strsim::levenshtein(&got, &want);
            if got != want {
                eprintln!("{}: read {got:?} for {want:?}", page.name);
            }
        }
    }
}

/// `clean` on `page`, into `report`: the true glyphs (`<dir>/<page>.text.png`)
/// left dark inside the translated blocks where the page without its text
/// (`<page>.blank.png`) is not, and how far they are from it; what changed outside the
/// detected mask grown by clean's dilation, and what changed in the
/// blocks with no translation. The cleaned image.
pub(super) async fn score_clean(
    t: &TestCore,
    id: SessionId,
    dir: &Path,
    page: &Page,
    report: &mut Report,
) -> image::RgbaImage {
    let source = stored_image(t, id, page, ImageRole::Source).await;
    let cleaned = stored_image(t, id, page, ImageRole::Cleaned).await;
    let glyphs = image::open(dir.join(format!("{}.text.png", page.name)))
        .unwrap()
        .to_luma8();
    let blank = image::open(dir.join(format!("{}.blank.png", page.name)))
        .unwrap()
        .to_rgba8();
    let detected = text_mask(t, id, page).await;
    let (w, h) = source.dimensions();
    let bits: Vec<bool> = detected.pixels().map(|p| p[0] > 127).collect();
    let grown = quire_vision::clean::grow(&bits, w, h, 3);
    let (translated, untranslated) = translated_boxes(page, 4.0);
    for (x, y, p) in cleaned.enumerate_pixels() {
        let i = (y * w + x) as usize;
        let changed = p != source.get_pixel(x, y);
        report.changed_outside += u64::from(changed && !grown[i]);
        let cleared = translated.iter().any(|b| inside(b, x, y));
        if !cleared && untranslated.iter().any(|b| inside(b, x, y)) {
            report.kept_pixels += 1;
            report.kept_changed += u64::from(changed);
        }
        if cleared && glyphs.get_pixel(x, y)[0] > 127 {
            report.mask_pixels += 1;
            let luma =
                |p: &image::Rgba<u8>| (u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2])) / 3;
            let under = blank.get_pixel(x, y);
            // Dark, and much darker than the page there without text.
            report.ink_left += u64::from(luma(p) < 128 && luma(p) + 64 < luma(under));
            report.restore_error += (0..3)
                .map(|c| u64::from(p[c].abs_diff(under[c])))
                .max()
                .unwrap_or(0);
        }
    }
    cleaned
}

/// The boxes (region's or transform's, grown by `grow` px) of the page's
/// text nodes with a translation, and of those without one.
pub(super) fn translated_boxes(page: &Page, grow: f64) -> (Vec<Box4>, Vec<Box4>) {
    let mut split = (Vec::new(), Vec::new());
    for (node, (_, r, _)) in page
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Text { .. }))
        .zip(found(page))
    {
        let grown = [
            r[0] - grow,
            r[1] - grow,
            r[2] + 2.0 * grow,
            r[3] + 2.0 * grow,
        ];
        let translated = matches!(&node.kind, NodeKind::Text { translation: Some(t), .. } if !t.trim().is_empty());
        if translated {
            &mut split.0
        } else {
            &mut split.1
        }
        .push(grown);
    }
    split
}

pub(super) fn inside(b: &Box4, x: u32, y: u32) -> bool {
    let (x, y) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
    x >= b[0] && x < b[0] + b[2] && y >= b[1] && y < b[1] + b[3]
}

/// Counts a page's balloons, nodes, false nodes and merged regions into
/// `report`: a balloon is found by the first unused node whose region
/// overlaps its outline, or whose box overlaps its text's box, by an IoU
/// of 0.5; a node is merged when half of two balloons' text lies in its
/// region. Answers each found balloon's truth with its node's text.
// What it missed is printed, as the tests that call it print.
#[allow(clippy::print_stderr)]
pub(super) fn score_balloons<'a>(
    truth: &'a Value,
    page: &Page,
    report: &mut Report,
) -> Vec<(&'a Value, String)> {
    let balloons = truth["balloons"].as_array().unwrap();
    let nodes = found(page);
    report.balloons += balloons.len();
    report.nodes += nodes.len();
    let mut used = vec![false; nodes.len()];
    let mut matched = Vec::new();
    for balloon in balloons {
        let (outline, text_box) = (box4(&balloon["box"]), box4(&balloon["text_box"]));
        let hit = nodes.iter().enumerate().find(|(k, (b, r, _))| {
            !used[*k] && (iou(*r, outline) >= 0.5 || iou(*b, text_box) >= 0.5)
        });
        let Some((k, (_, _, text))) = hit else {
            eprintln!("{}: missed {:?}", page.name, balloon["text"]);
            continue;
        };
        used[k] = true;
        report.matched += 1;
        matched.push((balloon, text.clone()));
    }
    for (k, (b, r, text)) in nodes.iter().enumerate() {
        let inside = balloons
            .iter()
            .filter(|x| covered(box4(&x["text_box"]), *r) >= 0.5)
            .count();
        report.merged += usize::from(inside > 1);
        if inside > 1 {
            eprintln!("{}: one node over {inside} balloons at {r:?}", page.name);
        }
        if !used[k] {
            report.false_nodes += 1;
            eprintln!(
                "{}: a node matches no balloon at {b:?} (region {r:?}), read {text:?}",
                page.name
            );
        }
    }
    matched
}
