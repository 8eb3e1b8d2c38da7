//! An inpainting model fed a window at a time (the `clean` engine's
//! `onnx` backend): the hole's pieces, each with the art around it.

use image::{GrayImage, Luma, RgbImage, Rgba, RgbaImage};

use crate::labels::Bounds;

/// A model that fills in the masked (non-zero) pixels of an image and
/// leaves the others; [`clean_with`](crate::clean::clean_with) sends it a window at a time.
pub trait Inpaint {
    fn inpaint(&self, image: &RgbImage, mask: &GrayImage) -> Result<RgbImage, String>;
}

/// The fewest pixels of art a window holds around its piece of the hole,
/// on each side (more for a bigger piece: half its size).
const WINDOW_MARGIN: u32 = 32;

/// Fills `hole` by `model`: the hole's 8-connected pieces, each with the
/// art around it ([`WINDOW_MARGIN`]), windows that overlap merged; each
/// window sent alone, only its hole's pixels taken back. How many pixels.
pub(crate) fn by_model(
    image: &mut RgbaImage,
    hole: &[bool],
    model: &dyn Inpaint,
) -> Result<u64, String> {
    let (w, h) = image.dimensions();
    let (_, pieces) = crate::labels::label(w, h, |x, y| hole[(y * w + x) as usize], true);
    let mut windows: Vec<Bounds> = Vec::new();
    for piece in &pieces {
        let b = piece.bounds;
        let m = WINDOW_MARGIN.max(b.width().max(b.height()) / 2);
        let mut window = Bounds {
            left: b.left.saturating_sub(m),
            top: b.top.saturating_sub(m),
            right: (b.right + m).min(w - 1),
            bottom: (b.bottom + m).min(h - 1),
        };
        // Merged with every window it meets, until it meets none.
        while let Some(i) = windows
            .iter()
            .position(|o| o.intersection(&window).is_some())
        {
            window = window.union(&windows.swap_remove(i));
        }
        windows.push(window);
    }
    let mut filled = 0;
    for win in windows {
        let crop = RgbImage::from_fn(win.width(), win.height(), |x, y| {
            let p = image.get_pixel(win.left + x, win.top + y).0;
            image::Rgb([p[0], p[1], p[2]])
        });
        let at = |x: u32, y: u32| hole[((win.top + y) * w + win.left + x) as usize];
        let mask = GrayImage::from_fn(win.width(), win.height(), |x, y| {
            Luma([if at(x, y) { 255 } else { 0 }])
        });
        let answer = model.inpaint(&crop, &mask)?;
        if answer.dimensions() != crop.dimensions() {
            return Err(format!(
                "the inpainting model answered {} × {} for a {} × {} window",
                answer.width(),
                answer.height(),
                crop.width(),
                crop.height()
            ));
        }
        for (x, y, p) in answer.enumerate_pixels() {
            if at(x, y) {
                let alpha = image.get_pixel(win.left + x, win.top + y).0[3];
                image.put_pixel(win.left + x, win.top + y, Rgba([p[0], p[1], p[2], alpha]));
                filled += 1;
            }
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask_of(w: u32, h: u32, on: impl Fn(u32, u32) -> bool) -> GrayImage {
        GrayImage::from_fn(w, h, |x, y| Luma([if on(x, y) { 255 } else { 0 }]))
    }

    /// A stand-in model: every masked pixel red, and it notes each window.
    struct Red(std::cell::RefCell<Vec<(u32, u32)>>);

    impl Inpaint for Red {
        fn inpaint(&self, image: &RgbImage, mask: &GrayImage) -> Result<RgbImage, String> {
            self.0.borrow_mut().push(image.dimensions());
            let mut out = image.clone();
            for (x, y, p) in out.enumerate_pixels_mut() {
                if mask.get_pixel(x, y)[0] > 0 {
                    *p = image::Rgb([255, 0, 0]);
                }
            }
            Ok(out)
        }
    }

    #[test]
    fn a_model_fills_the_hole_a_window_at_a_time_and_nothing_else() {
        // Stripes (no flat ring), with two words far apart.
        let art = RgbaImage::from_fn(400, 200, |x, _| {
            if x % 4 < 2 {
                Rgba([40, 40, 40, 255])
            } else {
                Rgba([220, 220, 220, 255])
            }
        });
        let text = mask_of(400, 200, |x, y| {
            (20..60).contains(&y) && ((20..80).contains(&x) || (300..360).contains(&x))
        });
        let mut image = art.clone();
        let model = Red(Default::default());
        let done = crate::clean::clean_with(&mut image, &text, None, &[], 0, Some(&model)).unwrap();
        assert_eq!(done.inpainted, 2 * 60 * 40);
        assert_eq!(model.0.borrow().len(), 2, "{:?}", model.0.borrow());
        for (x, y, p) in image.enumerate_pixels() {
            if text.get_pixel(x, y)[0] > 0 {
                assert_eq!(p.0, [255, 0, 0, 255]);
            } else {
                assert_eq!(p, art.get_pixel(x, y), "({x}, {y})");
            }
        }
    }

    #[test]
    fn a_model_that_fails_fails_the_clean_in_its_words() {
        struct Broken;
        impl Inpaint for Broken {
            fn inpaint(&self, _: &RgbImage, _: &GrayImage) -> Result<RgbImage, String> {
                Err("the model is broken".into())
            }
        }
        let mut image = RgbaImage::from_fn(100, 100, |x, _| {
            Rgba([if x % 2 == 0 { 30 } else { 220 }, 0, 0, 255])
        });
        let text = mask_of(100, 100, |x, y| {
            (40..50).contains(&x) && (40..50).contains(&y)
        });
        let e =
            crate::clean::clean_with(&mut image, &text, None, &[], 0, Some(&Broken)).unwrap_err();
        assert_eq!(e, "the model is broken");
    }
}
