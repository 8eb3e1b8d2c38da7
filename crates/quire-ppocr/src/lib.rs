//! PP-OCR's text detector and recogniser (the ONNX models PaddleOCR
//! publishes, e.g. the `PP-OCRv6_det_small.onnx` and
//! `PP-OCRv6_rec_small.onnx` inside PyPI's `rapidocr` wheel), run by
//! tract: pure Rust, no runtime library to install or ship.
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
//! A model is optimised for each input size it sees; the plans are kept
//! (a chapter's pages have one size, a line's width is rounded up to one
//! of a few widths), so a page costs only its inference.
//!
//! Two more kinds of model plug in beside them: a detector with box and
//! label outputs (RT-DETR, YOLO: [`boxes`]) and an inpainting model (LaMa:
//! [`inpaint`]).
//!
//! quire runs these models in a helper process, `quire-ppocr`, which
//! [`serve`] answers (module [`helper`]): the model runtime is most of
//! this crate's code, and kept out of the `quire` binary it no longer
//! loads at every start.

pub mod boxes;
pub mod helper;
pub mod inpaint;
pub use helper::serve;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use image::{RgbImage, imageops};
use tract_onnx::prelude::*;

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

type Plan = Arc<TypedRunnableModel>;

/// The one plan of a model whose inputs have fixed `shapes` (input
/// index, shape), made at the first call and kept in `kept`.
fn fixed_plan(
    model: &InferenceModel,
    kept: &Mutex<Option<Plan>>,
    shapes: &[(usize, [usize; 4])],
    what: &str,
) -> Result<Plan, String> {
    let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(plan) = kept.as_ref() {
        return Ok(plan.clone());
    }
    let plan: Plan = shapes
        .iter()
        .try_fold(model.clone(), |m, (input, shape)| {
            m.with_input_fact(*input, f32::fact(*shape).into())
        })
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable())
        .map_err(|e| format!("{what} cannot run on its {:?} input: {e}", shapes[0].1))?;
    *kept = Some(plan.clone());
    Ok(plan)
}

/// "1 input", "2 inputs".
fn inputs(n: usize) -> String {
    if n == 1 {
        "1 input".to_owned()
    } else {
        format!("{n} inputs")
    }
}

fn load(path: &Path) -> Result<InferenceModel, String> {
    tract_onnx::onnx()
        // The models' own shape annotations use symbols that do not unify
        // once the input has a size: the shapes are inferred instead.
        .with_ignore_value_info(true)
        .with_ignore_output_shapes(true)
        .model_for_path(path)
        .map_err(|e| format!("{} cannot be loaded as an ONNX model: {e}", path.display()))
}

/// A plan for `model` with an input of `shape`, made once and kept.
fn plan(
    model: &InferenceModel,
    plans: &Mutex<HashMap<(usize, usize), Plan>>,
    shape: [usize; 4],
) -> Result<Plan, String> {
    let key = (shape[2], shape[3]);
    if let Some(plan) = plans
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return Ok(plan.clone());
    }
    let made = model
        .clone()
        .with_input_fact(0, f32::fact(shape).into())
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable())
        .map_err(|e| {
            format!(
                "the model cannot run on a {}×{} input: {e}",
                shape[3], shape[2]
            )
        })?;
    plans
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, made.clone());
    Ok(made)
}

/// An image as the models take it: RGB scaled to -1..1, channels first.
fn tensor(image: &RgbImage, width: usize) -> Tensor {
    let (w, h) = (image.width() as usize, image.height() as usize);
    tract_ndarray::Array4::from_shape_fn((1, 3, h, width), |(_, c, y, x)| {
        if x < w {
            f32::from(image.get_pixel(x as u32, y as u32)[c]) / 127.5 - 1.0
        } else {
            0.0
        }
    })
    .into()
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
    model: InferenceModel,
    plans: Mutex<HashMap<(usize, usize), Plan>>,
}

impl Detector {
    pub fn load(path: &Path) -> Result<Detector, String> {
        Ok(Detector {
            model: load(path)?,
            plans: Mutex::new(HashMap::new()),
        })
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
        let plan = plan(&self.model, &self.plans, [1, 3, h, w])?;
        let out = plan
            .run(tvec!(tensor(&resized, w).into()))
            .map_err(|e| format!("the detector failed: {e}"))?;
        let prob = out[0]
            .to_plain_array_view::<f32>()
            .map_err(|e| format!("the detector's output is not f32: {e}"))?;
        let (ph, pw) = (prob.shape()[2], prob.shape()[3]);
        let at = |x: usize, y: usize| prob[[0, 0, y, x]];
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
    model: InferenceModel,
    /// Class 0 is the blank; class `i` is `chars[i - 1]`, the last a space.
    chars: Vec<String>,
    plans: Mutex<HashMap<(usize, usize), Plan>>,
}

impl Recognizer {
    /// The model at `path`, its dictionary from its `character` metadata.
    pub fn load(path: &Path) -> Result<Recognizer, String> {
        let proto = tract_onnx::onnx()
            .proto_model_for_path(path)
            .map_err(|e| format!("{} cannot be read as an ONNX model: {e}", path.display()))?;
        let dictionary = proto
            .metadata_props
            .iter()
            .find(|p| p.key == "character")
            .map(|p| p.value.clone())
            .ok_or_else(|| {
                format!(
                    "{} has no `character` metadata: not a PP-OCR recognition model with its dictionary",
                    path.display()
                )
            })?;
        let mut chars: Vec<String> = dictionary.lines().map(str::to_owned).collect();
        chars.push(" ".into());
        Ok(Recognizer {
            model: load(path)?,
            chars,
            plans: Mutex::new(HashMap::new()),
        })
    }

    /// How many characters the dictionary has.
    pub fn dictionary_len(&self) -> usize {
        self.chars.len() - 1
    }

    /// The text of one line image and the mean probability of its
    /// characters (0 when it reads nothing).
    pub fn read(&self, line: &RgbImage) -> Result<(String, f32), String> {
        let turned;
        let line = if line.height() as f32 > 1.5 * line.width() as f32 {
            turned = imageops::rotate270(line);
            &turned
        } else {
            line
        };
        if line.width() == 0 || line.height() == 0 {
            return Ok((String::new(), 0.0));
        }
        let natural =
            (REC_HEIGHT as f32 * line.width() as f32 / line.height() as f32).ceil() as u32;
        let width = REC_WIDTHS
            .into_iter()
            .find(|w| *w >= natural)
            .unwrap_or(REC_WIDTHS[REC_WIDTHS.len() - 1]);
        let resized = imageops::resize(
            line,
            natural.clamp(1, width),
            REC_HEIGHT,
            imageops::FilterType::Triangle,
        );
        let plan = plan(
            &self.model,
            &self.plans,
            [1, 3, REC_HEIGHT as usize, width as usize],
        )?;
        let out = plan
            .run(tvec!(tensor(&resized, width as usize).into()))
            .map_err(|e| format!("the recogniser failed: {e}"))?;
        let probs = out[0]
            .to_plain_array_view::<f32>()
            .map_err(|e| format!("the recogniser's output is not f32: {e}"))?;
        let (steps, classes) = (probs.shape()[1], probs.shape()[2]);
        let (mut text, mut sum, mut kept, mut last) = (String::new(), 0.0, 0usize, 0usize);
        for t in 0..steps {
            let (mut best, mut p) = (0, f32::MIN);
            for k in 0..classes {
                if probs[[0, t, k]] > p {
                    (best, p) = (k, probs[[0, t, k]]);
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
        Ok(if kept == 0 || text.is_empty() {
            (String::new(), 0.0)
        } else {
            (text, sum / kept as f32)
        })
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
    let mut out = Vec::new();
    for (row, (_, _, mut members)) in rows.into_iter().enumerate() {
        members.sort_by(|a, b| key(a).1.total_cmp(&key(b).1));
        for line in members {
            let crop = imageops::crop_imm(
                image,
                line.x as u32,
                line.y as u32,
                (line.width.ceil() as u32).max(1),
                (line.height.ceil() as u32).max(1),
            )
            .to_image();
            let (text, confidence) = recognizer.read(&crop)?;
            if !text.is_empty() {
                out.push(ReadLine {
                    line,
                    row,
                    text,
                    confidence,
                });
            }
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
