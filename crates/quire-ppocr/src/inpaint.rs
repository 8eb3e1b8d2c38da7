//! An inpainting model (LaMa and its like, exported to ONNX): an image
//! and a mask of the pixels to fill in, the image with them filled out.
//!
//! The model takes two inputs of `size` × `size`: the image `[1, 3, S, S]`
//! (RGB in 0..1) and the mask `[1, 1, S, S]` (1 where a pixel is to be
//! filled); the input whose name holds `mask` is the mask, else the
//! second. Its one output `[1, 3, S, S]` is RGB in 0..255 (LaMa's export)
//! or, with `unit_output`, in 0..1. The window quire sends is scaled to
//! the model's size and the answer back; only the masked pixels of the
//! answer are kept, so the pixels around the hole never change.

use std::path::Path;
use std::sync::Mutex;

use image::{GrayImage, RgbImage, imageops};
use tract_onnx::prelude::*;

use crate::local::Plan;

/// A loaded inpainting model.
pub struct Inpainter {
    model: InferenceModel,
    size: usize,
    /// Which input is the mask (the other is the image).
    mask_input: usize,
    unit_output: bool,
    plan: Mutex<Option<Plan>>,
}

impl Inpainter {
    pub fn load(path: &Path, size: u32, unit_output: bool) -> Result<Inpainter, String> {
        if !(32..=4096).contains(&size) {
            return Err(format!(
                "an inpainting model needs an input of 32 to 4096 pixels (given {size})"
            ));
        }
        let model = crate::local::load(path)?;
        if model.inputs.len() != 2 {
            return Err(format!(
                "{} has {}; an inpainting model takes two, the image and the mask",
                path.display(),
                crate::local::inputs(model.inputs.len())
            ));
        }
        let named_mask = (0..2).find(|&i| {
            model
                .node(model.inputs[i].node)
                .name
                .to_lowercase()
                .contains("mask")
        });
        Ok(Inpainter {
            model,
            size: size as usize,
            mask_input: named_mask.unwrap_or(1),
            unit_output,
            plan: Mutex::new(None),
        })
    }

    fn plan(&self) -> Result<Plan, String> {
        let s = self.size;
        let shapes = [
            (1 - self.mask_input, [1, 3, s, s]),
            (self.mask_input, [1, 1, s, s]),
        ];
        crate::local::fixed_plan(&self.model, &self.plan, &shapes, "the inpainting model")
    }

    /// `image` with the pixels `mask` marks (non-zero) filled in by the
    /// model; every other pixel as it was.
    pub fn inpaint(&self, image: &RgbImage, mask: &GrayImage) -> Result<RgbImage, String> {
        let (w, h) = image.dimensions();
        if mask.dimensions() != (w, h) {
            return Err(format!(
                "the mask is {} × {} and the image {w} × {h}",
                mask.width(),
                mask.height()
            ));
        }
        let s = self.size as u32;
        let small = imageops::resize(image, s, s, imageops::FilterType::Triangle);
        // A masked pixel stays masked at any scale: the mask is shrunk by
        // its largest value over each target pixel's source pixels.
        let hole = GrayImage::from_fn(s, s, |x, y| {
            let (x0, y0) = (x * w / s, y * h / s);
            let (x1, y1) = (
                ((x + 1) * w).div_ceil(s).max(x0 + 1),
                ((y + 1) * h).div_ceil(s).max(y0 + 1),
            );
            let on =
                (y0..y1.min(h)).any(|yy| (x0..x1.min(w)).any(|xx| mask.get_pixel(xx, yy)[0] > 0));
            image::Luma([if on { 255 } else { 0 }])
        });
        let n = self.size;
        let pixels: Tensor = tract_ndarray::Array4::from_shape_fn((1, 3, n, n), |(_, c, y, x)| {
            let masked = hole.get_pixel(x as u32, y as u32)[0] > 0;
            // LaMa sees the hole as black.
            if masked {
                0.0
            } else {
                f32::from(small.get_pixel(x as u32, y as u32)[c]) / 255.0
            }
        })
        .into();
        let holes: Tensor = tract_ndarray::Array4::from_shape_fn((1, 1, n, n), |(_, _, y, x)| {
            if hole.get_pixel(x as u32, y as u32)[0] > 0 {
                1.0f32
            } else {
                0.0
            }
        })
        .into();
        let inputs = if self.mask_input == 1 {
            tvec!(pixels.into(), holes.into())
        } else {
            tvec!(holes.into(), pixels.into())
        };
        let out = self
            .plan()?
            .run(inputs)
            .map_err(|e| format!("the inpainting model failed: {e}"))?;
        let filled = out[0]
            .to_plain_array_view::<f32>()
            .map_err(|e| format!("the inpainting model's output is not f32: {e}"))?;
        if filled.shape() != [1, 3, n, n] {
            return Err(format!(
                "the inpainting model's output is {:?}; it must be [1, 3, {n}, {n}]",
                filled.shape()
            ));
        }
        let scale = if self.unit_output { 255.0 } else { 1.0 };
        let answer = RgbImage::from_fn(s, s, |x, y| {
            let c = |k: usize| {
                (filled[[0, k, y as usize, x as usize]] * scale)
                    .round()
                    .clamp(0.0, 255.0) as u8
            };
            image::Rgb([c(0), c(1), c(2)])
        });
        let back = imageops::resize(&answer, w, h, imageops::FilterType::Triangle);
        let mut out = image.clone();
        for (x, y, p) in out.enumerate_pixels_mut() {
            if mask.get_pixel(x, y)[0] > 0 {
                *p = *back.get_pixel(x, y);
            }
        }
        Ok(out)
    }
}
