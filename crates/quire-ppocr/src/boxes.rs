//! A detector whose outputs are boxes with class scores: the balloon and
//! text detectors scanlation tools train (RT-DETR, YOLO), exported to
//! ONNX. quire keeps the pre- and post-processing, so a model needs only
//! its one image input and its raw outputs:
//!
//! - [`Format::Yolo`] (an Ultralytics YOLOv8/11 export, or YOLOv5's): the
//!   page letterboxed into a square of `size` (grey 114 around it), RGB in
//!   0..1; one output `[1, 4 + C, N]` (or `[1, N, 4 + C]`, or YOLOv5's
//!   `[1, N, 5 + C]` with an objectness) of centre, size and class scores
//!   in the input's pixels. Overlapping boxes of one class are suppressed
//!   (the best kept) here, as the raw export does not.
//! - [`Format::Detr`] (RT-DETR as Ultralytics or Hugging Face export it):
//!   the page stretched to `size` × `size`, RGB in 0..1; one output
//!   `[1, N, 4 + C]` of centre and size in 0..1 and class probabilities,
//!   or two outputs, boxes `[1, N, 4]` and class logits `[1, N, C]`
//!   (turned into probabilities by the sigmoid). A DETR gives each object
//!   one query: nothing is suppressed.
//!
//! A box's label is the index of its best class; what the labels mean
//! (balloon, text, free text) is the caller's configuration.

use std::path::Path;
use std::sync::Mutex;

use image::{Rgb, RgbImage, imageops};
use serde::{Deserialize, Serialize};
use tract_onnx::prelude::*;

use crate::local::Plan;

/// How boxes of one class may overlap (intersection over union) before
/// the weaker is suppressed, for [`Format::Yolo`].
const SUPPRESS_IOU: f32 = 0.45;

/// The layouts a box detector's input and outputs take: see the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Yolo,
    Detr,
}

/// A box a detector found, in the pixels of the image it was given.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Found {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
    /// The index of its best class.
    pub label: usize,
    pub score: f32,
}

impl Found {
    fn iou(&self, other: &Found) -> f32 {
        let w = (self.x + self.width).min(other.x + other.width) - self.x.max(other.x);
        let h = (self.y + self.height).min(other.y + other.height) - self.y.max(other.y);
        if w <= 0.0 || h <= 0.0 {
            return 0.0;
        }
        let both = w * h;
        both / (self.width * self.height + other.width * other.height - both)
    }
}

/// A loaded box detector.
pub struct BoxDetector {
    model: InferenceModel,
    format: Format,
    size: usize,
    classes: usize,
    plan: Mutex<Option<Plan>>,
}

impl BoxDetector {
    /// Loads `path` as a `format` detector of `classes` classes whose
    /// input is `size` × `size`.
    pub fn load(
        path: &Path,
        format: Format,
        size: u32,
        classes: usize,
    ) -> Result<BoxDetector, String> {
        if !(32..=4096).contains(&size) || classes == 0 {
            return Err(format!(
                "a box detector needs an input of 32 to 4096 pixels and at least one class \
                 (given {size} pixels and {classes} classes)"
            ));
        }
        let model = crate::local::load(path)?;
        if model.inputs.len() != 1 {
            return Err(format!(
                "{} has {}; a box detector takes one, the image",
                path.display(),
                crate::local::inputs(model.inputs.len())
            ));
        }
        Ok(BoxDetector {
            model,
            format,
            size: size as usize,
            classes,
            plan: Mutex::new(None),
        })
    }

    fn plan(&self) -> Result<Plan, String> {
        let s = self.size;
        crate::local::fixed_plan(
            &self.model,
            &self.plan,
            &[(0, [1, 3, s, s])],
            "the box detector",
        )
    }

    /// The boxes of `image` scoring at least `min_score`, best first.
    pub fn boxes(&self, image: &RgbImage, min_score: f32) -> Result<Vec<Found>, String> {
        let (w0, h0) = (image.width() as f32, image.height() as f32);
        if w0 < 2.0 || h0 < 2.0 {
            return Ok(Vec::new());
        }
        let s = self.size as u32;
        // The model's input, and how its pixels map back to the image's:
        // image = (input - offset) / scale, on each axis.
        let (input, scale, offset) = match self.format {
            Format::Yolo => {
                let k = (s as f32 / w0).min(s as f32 / h0);
                let (w, h) = (
                    ((w0 * k).round() as u32).clamp(1, s),
                    ((h0 * k).round() as u32).clamp(1, s),
                );
                let resized = imageops::resize(image, w, h, imageops::FilterType::Triangle);
                let mut square = RgbImage::from_pixel(s, s, Rgb([114, 114, 114]));
                let (dx, dy) = ((s - w) / 2, (s - h) / 2);
                imageops::replace(&mut square, &resized, i64::from(dx), i64::from(dy));
                (square, [k, k], [dx as f32, dy as f32])
            }
            Format::Detr => (
                imageops::resize(image, s, s, imageops::FilterType::Triangle),
                // Boxes come in 0..1 of the input: 1 / size of the image.
                [1.0 / w0, 1.0 / h0],
                [0.0, 0.0],
            ),
        };
        let tensor: Tensor =
            tract_ndarray::Array4::from_shape_fn((1, 3, self.size, self.size), |(_, c, y, x)| {
                f32::from(input.get_pixel(x as u32, y as u32)[c]) / 255.0
            })
            .into();
        let out = self
            .plan()?
            .run(tvec!(tensor.into()))
            .map_err(|e| format!("the box detector failed: {e}"))?;
        let rows = self.rows(&out)?;
        let mut found: Vec<Found> = rows
            .into_iter()
            .filter_map(|(b, label, score)| {
                if score < min_score || !score.is_finite() {
                    return None;
                }
                let left = ((b[0] - b[2] / 2.0 - offset[0]) / scale[0]).clamp(0.0, w0);
                let top = ((b[1] - b[3] / 2.0 - offset[1]) / scale[1]).clamp(0.0, h0);
                let right = ((b[0] + b[2] / 2.0 - offset[0]) / scale[0]).clamp(0.0, w0);
                let bottom = ((b[1] + b[3] / 2.0 - offset[1]) / scale[1]).clamp(0.0, h0);
                (right - left >= 1.0 && bottom - top >= 1.0).then_some(Found {
                    x: left,
                    y: top,
                    width: right - left,
                    height: bottom - top,
                    label,
                    score,
                })
            })
            .collect();
        found.sort_by(|a, b| b.score.total_cmp(&a.score));
        if self.format == Format::Yolo {
            let mut kept: Vec<Found> = Vec::new();
            for f in found {
                if !kept
                    .iter()
                    .any(|k| k.label == f.label && k.iou(&f) > SUPPRESS_IOU)
                {
                    kept.push(f);
                }
            }
            found = kept;
        }
        Ok(found)
    }

    /// Each candidate's box (centre x, centre y, width, height, in the
    /// input's pixels for YOLO and 0..1 for DETR), best class and score.
    fn rows(&self, out: &[TValue]) -> Result<Vec<([f32; 4], usize, f32)>, String> {
        let c = self.classes;
        let view = |i: usize| {
            out[i]
                .to_plain_array_view::<f32>()
                .map_err(|e| format!("the box detector's output {i} is not f32: {e}"))
        };
        let shape = |i: usize| out[i].shape().to_vec();
        let best = |scores: &mut dyn Iterator<Item = f32>| {
            scores
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((0, 0.0))
        };
        let mismatch = || {
            let shapes: Vec<String> = (0..out.len()).map(|i| format!("{:?}", shape(i))).collect();
            format!(
                "the box detector's outputs ({}) are not the {} layout for {c} classes \
                 (detect.labels names {c})",
                shapes.join(", "),
                match self.format {
                    Format::Yolo => "yolo",
                    Format::Detr => "detr",
                }
            )
        };
        match (self.format, out.len()) {
            (_, 1) => {
                let s = shape(0);
                if s.len() != 3 || s[0] != 1 {
                    return Err(mismatch());
                }
                let v = view(0)?;
                // Channels first ([1, 4 + C, N]) is the YOLOv8 export.
                let yolo = self.format == Format::Yolo;
                let (n, at): (usize, Box<dyn Fn(usize, usize) -> f32>) = if yolo && s[1] == 4 + c {
                    (s[2], Box::new(|k, j| v[[0, j, k]]))
                } else if s[2] == 4 + c || (yolo && s[2] == 5 + c) {
                    (s[1], Box::new(|k, j| v[[0, k, j]]))
                } else {
                    return Err(mismatch());
                };
                let objectness = yolo && s[1] != 4 + c && s[2] == 5 + c;
                let first = if objectness { 5 } else { 4 };
                Ok((0..n)
                    .map(|k| {
                        let b = [at(k, 0), at(k, 1), at(k, 2), at(k, 3)];
                        let (label, score) = best(&mut (first..first + c).map(|j| at(k, j)));
                        let score = if objectness { score * at(k, 4) } else { score };
                        (b, label, score)
                    })
                    .collect())
            }
            (Format::Detr, 2) => {
                let (boxes, logits) = match (shape(0).last(), shape(1).last()) {
                    (Some(4), Some(&l)) if l == c => (0, 1),
                    (Some(&l), Some(4)) if l == c => (1, 0),
                    _ => return Err(mismatch()),
                };
                let (b, l) = (view(boxes)?, view(logits)?);
                let (sb, sl) = (shape(boxes), shape(logits));
                if sb.len() != 3 || sl.len() != 3 || sb[1] != sl[1] {
                    return Err(mismatch());
                }
                let sigmoid = |x: f32| 1.0 / (1.0 + (-x).exp());
                Ok((0..sb[1])
                    .map(|k| {
                        let r = [b[[0, k, 0]], b[[0, k, 1]], b[[0, k, 2]], b[[0, k, 3]]];
                        let (label, score) = best(&mut (0..c).map(|j| sigmoid(l[[0, k, j]])));
                        (r, label, score)
                    })
                    .collect())
            }
            _ => Err(mismatch()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(x: f32, label: usize, score: f32) -> Found {
        Found {
            x,
            y: 0.0,
            width: 10.0,
            height: 10.0,
            label,
            score,
        }
    }

    #[test]
    fn overlap_is_measured_as_intersection_over_union() {
        assert_eq!(found(0.0, 0, 1.0).iou(&found(20.0, 0, 1.0)), 0.0);
        assert!((found(0.0, 0, 1.0).iou(&found(5.0, 0, 1.0)) - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(found(0.0, 0, 1.0).iou(&found(0.0, 1, 0.5)), 1.0);
    }

    #[test]
    fn a_size_or_class_count_out_of_range_is_refused_before_loading() {
        let e = BoxDetector::load(Path::new("/nonexistent.onnx"), Format::Yolo, 8, 3)
            .err()
            .unwrap();
        assert!(e.contains("32 to 4096"), "{e}");
        let e = BoxDetector::load(Path::new("/nonexistent.onnx"), Format::Detr, 640, 0)
            .err()
            .unwrap();
        assert!(e.contains("at least one class"), "{e}");
    }
}
