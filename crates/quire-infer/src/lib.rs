//! What surrounds a page model: PP-OCR's text detector and recogniser
//! (the ONNX models PaddleOCR publishes, e.g. the
//! `PP-OCRv6_det_small.onnx` and `PP-OCRv6_rec_small.onnx` inside PyPI's
//! `rapidocr` wheel) without the model itself. Where a model runs is the
//! caller's [`Infer`]: tract in the `quire-ppocr` helper process, or an
//! inference server (quire-core's backends); the pixels sent and the
//! answers read are this crate's, the same either way.
//!
//! [`Detector`] is a DB (differentiable binarisation) model: it maps an
//! image, its short side scaled to 736 pixels, to a probability that each
//! pixel is text; the pixels over 0.3 form text lines, a line is kept when
//! its mean probability is over 0.5 and grown by the ratio the model was
//! trained to shrink it by. [`Recognizer`] is a CTC model: a line image 48
//! pixels tall in, a distribution over its dictionary (stored in the
//! model's `character` metadata) per 8 pixels of width out; the most
//! likely class of each step, repeats merged and blanks dropped, is the
//! text. A vertical line (taller than wide) is turned a quarter to the
//! left first, as the models were trained. [`read`] puts the two
//! together for one text block: its lines, in reading order, each read.
//!
//! A line is padded to the next of a few widths, so a model run here
//! makes a plan for each width once; a model that takes batches gets the
//! lines of one width in one call.

use image::{RgbImage, imageops};

/// The detector's input: the short side scaled to this, the long side at
/// most [`DET_LONG_SIDE`], both rounded to a multiple of 32.
const DET_SHORT_SIDE: f32 = 736.0;
const DET_LONG_SIDE: f32 = 2000.0;
/// A pixel is text over this probability; a line is kept over the other.
const PIXEL_THRESHOLD: f32 = 0.3;
const LINE_THRESHOLD: f32 = 0.5;
/// How much a found line is grown (the ratio the labels were shrunk by).
const UNCLIP_RATIO: f32 = 1.6;
/// The recogniser's line height, and the widths its plans are made for
/// (a line is padded to the next one; a longer line is squeezed).
const REC_HEIGHT: u32 = 48;
const REC_WIDTHS: [u32; 8] = [96, 160, 256, 384, 512, 768, 1024, 1536];

/// A model's input or output: FP32 values in row-major order and the
/// shape they fill.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

/// Where a model runs: in the `quire-ppocr` helper (tract) or on an inference
/// server (quire's Open Inference Protocol backends). Everything around
/// the model (scaling, normalising, reading its outputs) is this crate's,
/// the same wherever it runs.
pub trait Infer: Send + Sync {
    /// Runs the model on its one input; its first output.
    fn infer(&self, input: Tensor) -> Result<Tensor, String>;

    /// Whether it takes several images in one call (a batch of lines of
    /// one width as one request): a server's round trip costs more than
    /// a batch; here a plan per batch size would cost more than it saves.
    fn batches(&self) -> bool {
        false
    }
}

/// Images as the models take them: RGB scaled to -1..1, channels first,
/// each padded on the right to `width` (with 0).
fn tensor(images: &[&RgbImage], width: usize) -> Tensor {
    let h = images.first().map_or(0, |i| i.height() as usize);
    let mut data = Vec::with_capacity(images.len() * 3 * h * width);
    for image in images {
        let w = image.width() as usize;
        for c in 0..3 {
            for y in 0..h {
                for x in 0..width {
                    data.push(if x < w {
                        f32::from(image.get_pixel(x as u32, y as u32)[c]) / 127.5 - 1.0
                    } else {
                        0.0
                    });
                }
            }
        }
    }
    Tensor {
        shape: vec![images.len(), 3, h, width],
        data,
    }
}

/// A text line the detector found, in the pixels of the image it was given.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Line {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
    /// Its mean text probability.
    pub score: f32,
}

impl Line {
    /// Whether it runs top to bottom (a column of CJK text).
    pub fn vertical(&self) -> bool {
        self.height > 1.5 * self.width
    }
}

/// The DB text detector.
pub struct Detector {
    model: Box<dyn Infer>,
}

impl Detector {
    /// The detector `model` runs.
    pub fn new(model: Box<dyn Infer>) -> Detector {
        Detector { model }
    }

    /// The text lines of `image`, in no order. `scale` is what the image
    /// is scaled by for the model; without one, a page's: its short side
    /// to 736 pixels (its long side at most 2,000). Lines are found best
    /// when letters are 12 to 30 pixels tall in the model's input.
    pub fn lines(&self, image: &RgbImage, scale: Option<f32>) -> Result<Vec<Line>, String> {
        let (w0, h0) = (image.width() as f32, image.height() as f32);
        if w0 < 2.0 || h0 < 2.0 {
            return Ok(Vec::new());
        }
        let page = (DET_SHORT_SIDE / w0.min(h0)).min(DET_LONG_SIDE / w0.max(h0));
        let scale = scale.unwrap_or(page).min(DET_LONG_SIDE / w0.max(h0));
        let round = |v: f32| (((v * scale) / 32.0).round() as usize).max(1) * 32;
        let (w, h) = (round(w0), round(h0));
        let resized = imageops::resize(image, w as u32, h as u32, imageops::FilterType::Triangle);
        let prob = self.model.infer(tensor(&[&resized], w))?;
        let [1, 1, ph, pw] = prob.shape[..] else {
            return Err(format!(
                "the detector's output is {:?}, not one map [1, 1, height, width]",
                prob.shape
            ));
        };
        let at = |x: usize, y: usize| prob.data[y * pw + x];
        let (sx, sy) = (w0 / pw as f32, h0 / ph as f32);
        Ok(components(pw, ph, |x, y| at(x, y) > PIXEL_THRESHOLD)
            .into_iter()
            .filter_map(|pixels| {
                let score =
                    pixels.iter().map(|&(x, y)| at(x, y)).sum::<f32>() / pixels.len() as f32;
                let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
                for &(x, y) in &pixels {
                    (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
                }
                let (bw, bh) = ((x1 - x0 + 1) as f32, (y1 - y0 + 1) as f32);
                if score < LINE_THRESHOLD || bw.min(bh) < 3.0 {
                    return None;
                }
                // Grown by area × ratio / perimeter on every side.
                let grow = bw * bh * UNCLIP_RATIO / (2.0 * (bw + bh));
                let left = ((x0 as f32 - grow) * sx).max(0.0);
                let top = ((y0 as f32 - grow) * sy).max(0.0);
                let right = (((x1 + 1) as f32 + grow) * sx).min(w0);
                let bottom = (((y1 + 1) as f32 + grow) * sy).min(h0);
                Some(Line {
                    x: left,
                    y: top,
                    width: right - left,
                    height: bottom - top,
                    score,
                })
            })
            .collect())
    }
}

/// The 4-connected components of the pixels `on` picks, each its pixels.
fn components(w: usize, h: usize, on: impl Fn(usize, usize) -> bool) -> Vec<Vec<(usize, usize)>> {
    let mut seen = vec![false; w * h];
    let mut out = Vec::new();
    for start in 0..w * h {
        if seen[start] || !on(start % w, start / w) {
            continue;
        }
        seen[start] = true;
        let mut pixels = Vec::new();
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            pixels.push((x, y));
            let mut visit = |nx: usize, ny: usize| {
                let j = ny * w + nx;
                if !seen[j] && on(nx, ny) {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(x - 1, y);
            }
            if x + 1 < w {
                visit(x + 1, y);
            }
            if y > 0 {
                visit(x, y - 1);
            }
            if y + 1 < h {
                visit(x, y + 1);
            }
        }
        out.push(pixels);
    }
    out
}

/// The CTC text recogniser and its dictionary.
pub struct Recognizer {
    model: Box<dyn Infer>,
    /// Class 0 is the blank; class `i` is `chars[i - 1]`, the last a space.
    chars: Vec<String>,
}

impl Recognizer {
    /// The recogniser `model` runs, reading with `dictionary`: its
    /// characters, one a line (a PP-OCR model's `character` metadata, or
    /// the `ppocr_keys.txt` PaddleOCR ships beside it).
    pub fn new(model: Box<dyn Infer>, dictionary: &str) -> Recognizer {
        let mut chars: Vec<String> = dictionary.lines().map(str::to_owned).collect();
        chars.push(" ".into());
        Recognizer { model, chars }
    }

    /// How many characters the dictionary has.
    pub fn dictionary_len(&self) -> usize {
        self.chars.len() - 1
    }

    /// The text of one line image and the mean probability of its
    /// characters (0 when it reads nothing).
    pub fn read(&self, line: &RgbImage) -> Result<(String, f32), String> {
        let mut read = self.read_all(&[line])?;
        Ok(read.pop().unwrap_or_default())
    }

    /// [`Recognizer::read`] for each of `lines`, in their order. A model
    /// that [`Infer::batches`] gets the lines of one width in one call.
    pub fn read_all(&self, lines: &[&RgbImage]) -> Result<Vec<(String, f32)>, String> {
        // Each line as the model takes it, and the width it is padded to.
        let mut prepared: Vec<Option<(RgbImage, u32)>> = Vec::with_capacity(lines.len());
        for line in lines {
            let line = if line.height() as f32 > 1.5 * line.width() as f32 {
                imageops::rotate270(*line)
            } else {
                (*line).clone()
            };
            if line.width() == 0 || line.height() == 0 {
                prepared.push(None);
                continue;
            }
            let natural =
                (REC_HEIGHT as f32 * line.width() as f32 / line.height() as f32).ceil() as u32;
            let width = REC_WIDTHS
                .into_iter()
                .find(|w| *w >= natural)
                .unwrap_or(REC_WIDTHS[REC_WIDTHS.len() - 1]);
            let resized = imageops::resize(
                &line,
                natural.clamp(1, width),
                REC_HEIGHT,
                imageops::FilterType::Triangle,
            );
            prepared.push(Some((resized, width)));
        }
        let mut out = vec![(String::new(), 0.0); lines.len()];
        let mut widths: Vec<u32> = prepared.iter().flatten().map(|(_, w)| *w).collect();
        widths.sort_unstable();
        widths.dedup();
        for width in widths {
            let of_width: Vec<usize> = (0..prepared.len())
                .filter(|&i| matches!(&prepared[i], Some((_, w)) if *w == width))
                .collect();
            let calls: Vec<&[usize]> = if self.model.batches() {
                vec![&of_width[..]]
            } else {
                of_width.chunks(1).collect()
            };
            for call in calls {
                let images: Vec<&RgbImage> = call
                    .iter()
                    .filter_map(|&i| prepared[i].as_ref().map(|(image, _)| image))
                    .collect();
                let probs = self.model.infer(tensor(&images, width as usize))?;
                let [n, steps, classes] = probs.shape[..] else {
                    return Err(format!(
                        "the recogniser's output is {:?}, not [lines, steps, classes]",
                        probs.shape
                    ));
                };
                if n != call.len() || probs.data.len() != n * steps * classes {
                    return Err(format!(
                        "the recogniser answered {n} lines for {}",
                        call.len()
                    ));
                }
                for (row, &i) in call.iter().enumerate() {
                    let values = &probs.data[row * steps * classes..(row + 1) * steps * classes];
                    out[i] = self.decode(values, classes);
                }
            }
        }
        Ok(out)
    }

    /// One line's text from its steps' class scores (`classes` a step):
    /// the most likely class of each step, repeats merged and blanks
    /// dropped, and the mean probability of the characters kept.
    fn decode(&self, values: &[f32], classes: usize) -> (String, f32) {
        let (mut text, mut sum, mut kept, mut last) = (String::new(), 0.0, 0usize, 0usize);
        for step in values.chunks(classes.max(1)) {
            let (mut best, mut p) = (0, f32::MIN);
            for (k, &v) in step.iter().enumerate() {
                if v > p {
                    (best, p) = (k, v);
                }
            }
            if best != 0
                && best != last
                && let Some(c) = self.chars.get(best - 1)
            {
                text.push_str(c);
                sum += p;
                kept += 1;
            }
            last = best;
        }
        let text = text.trim().to_owned();
        if kept == 0 || text.is_empty() {
            (String::new(), 0.0)
        } else {
            (text, sum / kept as f32)
        }
    }
}

/// One line (or a piece of one) of a block, read.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReadLine {
    pub line: Line,
    /// Which row (or column) of the block it is on, in reading order: the
    /// detector may cut a line at a wide gap, and the pieces share a row.
    pub row: usize,
    pub text: String,
    pub confidence: f32,
}

/// The lines of a text block (a balloon's cut), found and read, in
/// reading order: rows top to bottom and left to right within a row, or
/// columns right to left and top to bottom within a column.
pub fn read(
    detector: &Detector,
    recognizer: &Recognizer,
    image: &RgbImage,
    scale: Option<f32>,
) -> Result<Vec<ReadLine>, String> {
    let lines = detector.lines(image, scale)?;
    let vertical = lines.iter().filter(|l| l.vertical()).count() * 2 > lines.len();
    // (across, along): where a line sits across the reading direction
    // (its row or column) and along it.
    let key = |l: &Line| {
        if vertical {
            (-(l.x + l.width / 2.0), l.y, l.x, l.width)
        } else {
            (l.y + l.height / 2.0, l.x, l.y, l.height)
        }
    };
    let mut order: Vec<Line> = lines;
    order.sort_by(|a, b| key(a).0.total_cmp(&key(b).0));
    // A line joins the row before when its centre lies within that row.
    let mut rows: Vec<(f32, f32, Vec<Line>)> = Vec::new();
    for line in order {
        let (_, _, start, size) = key(&line);
        let centre = start + size / 2.0;
        match rows.last_mut() {
            Some((lo, hi, members)) if centre >= *lo && centre <= *hi => members.push(line),
            _ => rows.push((start, start + size, vec![line])),
        }
    }
    let mut placed = Vec::new();
    for (row, (_, _, mut members)) in rows.into_iter().enumerate() {
        members.sort_by(|a, b| key(a).1.total_cmp(&key(b).1));
        placed.extend(members.into_iter().map(|line| (row, line)));
    }
    let crops: Vec<RgbImage> = placed
        .iter()
        .map(|(_, line)| {
            imageops::crop_imm(
                image,
                line.x as u32,
                line.y as u32,
                (line.width.ceil() as u32).max(1),
                (line.height.ceil() as u32).max(1),
            )
            .to_image()
        })
        .collect();
    let read = recognizer.read_all(&crops.iter().collect::<Vec<_>>())?;
    let mut out = Vec::new();
    for ((row, line), (text, confidence)) in placed.into_iter().zip(read) {
        if !text.is_empty() {
            out.push(ReadLine {
                line,
                row,
                text,
                confidence,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_four_connected_and_complete() {
        // Two bars and a diagonal neighbour that is not connected to them.
        let on = |x: usize, y: usize| (y == 0 && x < 3) || (y == 2 && x >= 1) || (x == 3 && y == 1);
        let mut found = components(5, 3, on);
        for c in &mut found {
            c.sort_unstable();
        }
        found.sort();
        assert_eq!(
            found,
            vec![
                vec![(0, 0), (1, 0), (2, 0)],
                vec![(1, 2), (2, 2), (3, 1), (3, 2), (4, 2)],
            ]
        );
    }

    #[test]
    fn a_column_is_vertical_and_a_row_is_not() {
        let line = |width, height| Line {
            x: 0.0,
            y: 0.0,
            width,
            height,
            score: 1.0,
        };
        assert!(line(20.0, 200.0).vertical());
        assert!(!line(200.0, 20.0).vertical());
        assert!(!line(30.0, 40.0).vertical());
    }
}
