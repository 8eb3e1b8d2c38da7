//! What `ocr` reads: each node's cut of the page (its region's box,
//! whitened outside the region, scaled to a letter height), and the cuts
//! stacked into few images for Tesseract.

use super::*;

/// A node to read.
pub(super) struct Target {
    pub(super) id: NodeId,
    pub(super) text: Option<String>,
    /// Page units: the text's box, and the region whose outside is
    /// whitened (the box's corners when it has none).
    pub(super) area: quire_model::scene::Transform,
    pub(super) region: Vec<Point>,
    pub(super) language: String,
}

/// One node's cut, ready to stack.
pub(super) struct Cut {
    pub(super) id: NodeId,
    pub(super) basis: Option<String>,
    pub(super) language: String,
    /// The language it is read as when not the node's own (a column in a
    /// Latin-script project read as Japanese): recorded on the node.
    pub(super) tag: Option<String>,
    pub(super) image: GrayImage,
}

/// How much taller than wide a block in a Latin-script project must be
/// to be taken for a column of Japanese or Chinese.
const COLUMN: f64 = 2.0;

/// Each target's cut of the page: its region's box, whitened outside the
/// region, scaled to [`LETTER_HEIGHT`]; and, with Tesseract, the blocks
/// that are columns in a project whose script is not written in columns
/// when it has no `columns` data to read them with (read with it when it
/// has).
pub(super) fn cut_all(
    page: &Page,
    image: &GrayImage,
    targets: Vec<Target>,
    backend: OcrBackend,
    columns: Option<&str>,
) -> (Vec<Cut>, Vec<NodeId>) {
    let per_unit = quire_render::pixels_per_unit(page, image.width());
    let detect = quire_vision::detect::Settings::default();
    let mut unreadable = Vec::new();
    let cuts = targets
        .into_iter()
        .filter_map(|t| {
            let pixels: Vec<[f64; 2]> = t
                .region
                .iter()
                .map(|p| [p[0] * per_unit, p[1] * per_unit])
                .collect();
            // The text's box, within its region's box: the balloon's
            // outline stays out of the cut.
            let r = bounding(&pixels);
            let a = &t.area;
            let (ax, ay) = (a.x * per_unit, a.y * per_unit);
            let (ax1, ay1) = ((a.x + a.width) * per_unit, (a.y + a.height) * per_unit);
            let (bx, by) = (ax.max(r.x), ay.max(r.y));
            let b = quire_model::scene::Transform {
                x: bx,
                y: by,
                width: ax1.min(r.x + r.width) - bx,
                height: ay1.min(r.y + r.height) - by,
                rotation: None,
            };
            let (w, h) = (image.width(), image.height());
            let x0 = b.x.floor().clamp(0.0, f64::from(w)) as u32;
            let y0 = b.y.floor().clamp(0.0, f64::from(h)) as u32;
            let x1 = (b.x + b.width).ceil().clamp(0.0, f64::from(w)) as u32;
            let y1 = (b.y + b.height).ceil().clamp(0.0, f64::from(h)) as u32;
            if x1 <= x0 || y1 <= y0 {
                return None;
            }
            let local: Vec<[f64; 2]> = pixels
                .iter()
                .map(|p| [p[0] - f64::from(x0), p[1] - f64::from(y0)])
                .collect();
            let inside = quire_vision::clean::polygon(&local, x1 - x0, y1 - y0);
            let mut crop = GrayImage::from_fn(x1 - x0, y1 - y0, |x, y| {
                if inside[(y * (x1 - x0) + x) as usize] {
                    *image.get_pixel(x0 + x, y0 + y)
                } else {
                    Luma([255])
                }
            });
            // Light letters outlined in ink on the art are read as black
            // letters on white: only a block with no balloon (its region
            // its box) may hold them.
            if t.region.len() <= 4
                && let Some(letters) = quire_vision::detect::letters_for_reading(&crop, &detect)
            {
                crop = letters;
            }
            let letters = quire_vision::detect::glyph_height(&crop, &detect);
            let most =
                (MAX_CUT_PIXELS / (f64::from(crop.width()) * f64::from(crop.height()))).sqrt();
            let scale = letters
                .map_or(1.0, |h| (LETTER_HEIGHT / f64::from(h)).clamp(0.5, 4.0))
                .min(most);
            if (scale - 1.0).abs() > 0.05 {
                let (cw, ch) = (
                    (f64::from(crop.width()) * scale).round().max(1.0) as u32,
                    (f64::from(crop.height()) * scale).round().max(1.0) as u32,
                );
                crop =
                    image::imageops::resize(&crop, cw, ch, image::imageops::FilterType::CatmullRom);
            }
            let vertical = b.height > b.width * 1.5;
            let column = b.height > b.width * COLUMN && !unspaced(&t.language);
            // The onnx backend reads every language its model knows; the
            // tag still says how lines join.
            let (language, tag) = match (backend, column, columns) {
                (OcrBackend::Tesseract, true, Some(data)) => {
                    let tag = if data.starts_with("jpn") { "ja" } else { "zh" };
                    (data.to_owned(), Some(tag.to_owned()))
                }
                (OcrBackend::Tesseract, true, None) => {
                    unreadable.push(t.id);
                    return None;
                }
                (OcrBackend::Tesseract, false, _) => {
                    (tesseract_language(&t.language, vertical).ok()?, None)
                }
                (OcrBackend::Onnx, ..) => (t.language.clone(), None),
            };
            Some(Cut {
                id: t.id,
                basis: t.text,
                language,
                tag,
                image: crop,
            })
        })
        .collect();
    (cuts, unreadable)
}

/// The cuts in stacks of at most [`MAX_STACK_PIXELS`].
pub(super) fn batches(cuts: Vec<Cut>) -> Vec<Vec<Cut>> {
    let mut out: Vec<Vec<Cut>> = Vec::new();
    let mut size = 0u64;
    for cut in cuts {
        let (w, h) = cut.image.dimensions();
        let area = u64::from(w + 2 * GAP) * u64::from(h + GAP);
        match out.last_mut() {
            Some(last) if size + area <= MAX_STACK_PIXELS => {
                size += area;
                last.push(cut);
            }
            _ => {
                size = area;
                out.push(vec![cut]);
            }
        }
    }
    out
}

/// The cuts one above the other on white, and where each starts.
pub(super) fn stack(cuts: &[Cut]) -> (GrayImage, Vec<u32>) {
    let width = cuts.iter().map(|c| c.image.width()).max().unwrap_or(1) + 2 * GAP;
    let height = cuts.iter().map(|c| c.image.height() + GAP).sum::<u32>() + GAP;
    let mut out = GrayImage::from_pixel(width, height, Luma([255]));
    let mut tops = Vec::with_capacity(cuts.len());
    let mut y = GAP;
    for cut in cuts {
        // Each cut's area starts half a gap above it, so a word that
        // reaches a little above its cut still counts as its own.
        tops.push(y - GAP / 2);
        image::imageops::replace(&mut out, &cut.image, i64::from(GAP), i64::from(y));
        y += cut.image.height() + GAP;
    }
    (out, tops)
}
