//! Pixels: colours from style strings, a box's background (the median of
//! its edge), clearing a box or an inpaint mask's pixels, and blending a
//! glyph's coverage onto the page.

use image::{GrayImage, Rgba, RgbaImage};

/// A rectangle of pixels, clipped to the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rect {
    pub(super) x: u32,
    pub(super) y: u32,
    pub(super) w: u32,
    pub(super) h: u32,
}

impl Rect {
    /// The pixels of a box in page units, `scale` pixels per unit, within
    /// an image of `width` × `height`; `None` when nothing is left.
    pub(super) fn of_box(
        t: &quire_model::scene::Transform,
        scale: f64,
        width: u32,
        height: u32,
    ) -> Option<Rect> {
        let (w, h) = (f64::from(width), f64::from(height));
        let x0 = (t.x * scale).round().clamp(0.0, w);
        let y0 = (t.y * scale).round().clamp(0.0, h);
        let x1 = ((t.x + t.width) * scale).round().clamp(0.0, w);
        let y1 = ((t.y + t.height) * scale).round().clamp(0.0, h);
        // Rounded and clamped to the image, so the casts cannot truncate.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let rect = Rect {
            x: x0 as u32,
            y: y0 as u32,
            w: (x1 - x0) as u32,
            h: (y1 - y0) as u32,
        };
        (rect.w > 0 && rect.h > 0).then_some(rect)
    }

    pub(super) fn contains(&self, x: i64, y: i64) -> bool {
        x >= i64::from(self.x)
            && y >= i64::from(self.y)
            && x < i64::from(self.x + self.w)
            && y < i64::from(self.y + self.h)
    }
}

/// `#rgb`, `#rrggbb`, `#rrggbbaa`, or one of a few names; `None` if not a
/// colour quire reads.
pub(super) fn parse_color(text: &str) -> Option<Rgba<u8>> {
    let t = text.trim().to_ascii_lowercase();
    let named = match t.as_str() {
        "black" => Some([0, 0, 0]),
        "white" => Some([255, 255, 255]),
        "red" => Some([255, 0, 0]),
        "green" => Some([0, 128, 0]),
        "blue" => Some([0, 0, 255]),
        "yellow" => Some([255, 255, 0]),
        "gray" | "grey" => Some([128, 128, 128]),
        _ => None,
    };
    if let Some([r, g, b]) = named {
        return Some(Rgba([r, g, b, 255]));
    }
    let hex = t.strip_prefix('#')?;
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    let nibble = |i: usize| u8::from_str_radix(&hex[i..=i], 16).ok().map(|v| v * 17);
    match hex.len() {
        3 => Some(Rgba([nibble(0)?, nibble(1)?, nibble(2)?, 255])),
        6 => Some(Rgba([byte(0)?, byte(2)?, byte(4)?, 255])),
        8 => Some(Rgba([byte(0)?, byte(2)?, byte(4)?, byte(6)?])),
        _ => None,
    }
}

/// Relative luminance (WCAG), 0 for black to 1 for white.
fn luminance(c: Rgba<u8>) -> f64 {
    let lin = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.039_28 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])
}

/// Black or white, whichever contrasts more with `background`.
pub(super) fn contrasting(background: Rgba<u8>) -> Rgba<u8> {
    let l = luminance(background);
    // Contrast with black: (l + .05) / .05; with white: 1.05 / (l + .05).
    if (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) {
        Rgba([0, 0, 0, 255])
    } else {
        Rgba([255, 255, 255, 255])
    }
}

/// The median colour (per channel) of the pixels on the rectangle's edge:
/// a speech balloon's paper, a caption box's fill.
pub(super) fn edge_median(image: &RgbaImage, r: Rect) -> Rgba<u8> {
    let (right, bottom) = (r.x + r.w - 1, r.y + r.h - 1);
    let rows = (r.x..=right).flat_map(|x| [(x, r.y), (x, bottom)]);
    let columns = (r.y..=bottom).flat_map(|y| [(r.x, y), (right, y)]);
    median(image, rows.chain(columns))
}

/// The median colour of all the rectangle's pixels.
pub(super) fn area_median(image: &RgbaImage, r: Rect) -> Rgba<u8> {
    median(
        image,
        (r.y..r.y + r.h).flat_map(|y| (r.x..r.x + r.w).map(move |x| (x, y))),
    )
}

/// The median, channel by channel, of the pixels at `points`.
fn median(image: &RgbaImage, points: impl Iterator<Item = (u32, u32)>) -> Rgba<u8> {
    let mut channels: [Vec<u8>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (x, y) in points {
        let p = image.get_pixel(x, y);
        for (c, values) in channels.iter_mut().enumerate() {
            values.push(p[c]);
        }
    }
    let mut out = [0u8; 3];
    for (c, values) in channels.iter_mut().enumerate() {
        values.sort_unstable();
        out[c] = values[values.len() / 2];
    }
    Rgba([out[0], out[1], out[2], 255])
}

pub(super) fn fill(image: &mut RgbaImage, r: Rect, color: Rgba<u8>) {
    for y in r.y..r.y + r.h {
        for x in r.x..r.x + r.w {
            image.put_pixel(x, y, color);
        }
    }
}

/// Fills every masked pixel (non-zero in `mask`, which is scaled to the
/// image when its size differs) from its surroundings by Telea's
/// fast-marching inpainting. Answers how many pixels it filled.
pub(super) fn inpaint(image: &mut RgbaImage, mask: &GrayImage) -> u64 {
    let (w, h) = image.dimensions();
    let mask = if mask.dimensions() == (w, h) {
        mask.clone()
    } else {
        image::imageops::resize(mask, w, h, image::imageops::FilterType::Nearest)
    };
    let mut hole: Vec<bool> = mask.pixels().map(|p| p[0] > 127).collect();
    quire_vision::clean::telea(image, &mut hole, quire_vision::clean::INPAINT_RADIUS)
}

/// Fills the pixels of the box `r` that lie inside a region (a polygon
/// in the image's pixels) with their median colour, the balloon's paper:
/// the text goes, the outline and whatever lies beyond the box stay.
/// Answers that colour.
pub(super) fn fill_region(image: &mut RgbaImage, r: Rect, region: &[[f64; 2]]) -> Rgba<u8> {
    let (mut x0, mut y0) = (f64::from(r.x), f64::from(r.y));
    let (mut x1, mut y1) = (f64::from(r.x + r.w), f64::from(r.y + r.h));
    let (mut rx0, mut ry0, mut rx1, mut ry1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for [x, y] in region {
        (rx0, ry0, rx1, ry1) = (rx0.min(*x), ry0.min(*y), rx1.max(*x), ry1.max(*y));
    }
    (x0, y0, x1, y1) = (x0.max(rx0), y0.max(ry0), x1.min(rx1), y1.min(ry1));
    let (w, h) = image.dimensions();
    // Clamped to the image.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (left, top, right, bottom) = (
        x0.floor().clamp(0.0, f64::from(w)) as u32,
        y0.floor().clamp(0.0, f64::from(h)) as u32,
        x1.ceil().clamp(0.0, f64::from(w)) as u32,
        y1.ceil().clamp(0.0, f64::from(h)) as u32,
    );
    let (bw, bh) = (right.saturating_sub(left), bottom.saturating_sub(top));
    let local: Vec<[f64; 2]> = region
        .iter()
        .map(|p| [p[0] - f64::from(left), p[1] - f64::from(top)])
        .collect();
    let inside = quire_vision::clean::polygon(&local, bw, bh);
    let points: Vec<(u32, u32)> = inside
        .iter()
        .enumerate()
        .filter(|(_, i)| **i)
        .map(|(k, _)| (left + k as u32 % bw, top + k as u32 / bw))
        .collect();
    if points.is_empty() {
        return Rgba([255, 255, 255, 255]);
    }
    let colour = median(image, points.iter().copied());
    for (x, y) in points {
        image.put_pixel(x, y, colour);
    }
    colour
}

/// Whether three in four of the rectangle's edge pixels are near their
/// median colour: a box on paper, not across art or an outline.
pub(super) fn edge_is_flat(image: &RgbaImage, r: Rect) -> bool {
    let (right, bottom) = (r.x + r.w - 1, r.y + r.h - 1);
    let rows = (r.x..=right).flat_map(|x| [(x, r.y), (x, bottom)]);
    let columns = (r.y..=bottom).flat_map(|y| [(r.x, y), (right, y)]);
    let edge: Vec<(u32, u32)> = rows.chain(columns).collect();
    let m = median(image, edge.iter().copied());
    let near = edge
        .iter()
        .filter(|(x, y)| {
            let p = image.get_pixel(*x, *y);
            (0..3).all(|c| (i32::from(p[c]) - i32::from(m[c])).abs() <= 24)
        })
        .count();
    near * 4 >= edge.len() * 3
}

/// Blends `color`, whose alpha is a glyph's coverage times the colour's
/// own alpha, onto the pixel at (x, y) when it lies in `clip`.
pub(super) fn blend(image: &mut RgbaImage, clip: Rect, x: i64, y: i64, color: [u8; 4]) {
    if color[3] == 0 || !clip.contains(x, y) {
        return;
    }
    // Inside `clip`, which lies inside the image.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let p = image.get_pixel_mut(x as u32, y as u32);
    let a = u32::from(color[3]);
    for c in 0..3 {
        let v = (u32::from(color[c]) * a + u32::from(p[c]) * (255 - a) + 127) / 255;
        // A weighted mean of two u8 values.
        #[allow(clippy::cast_possible_truncation)]
        {
            p[c] = v as u8;
        }
    }
    p[3] = 255;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_parse_or_are_refused() {
        assert_eq!(parse_color("#fff"), Some(Rgba([255, 255, 255, 255])));
        assert_eq!(parse_color("#102030"), Some(Rgba([16, 32, 48, 255])));
        assert_eq!(parse_color(" Black "), Some(Rgba([0, 0, 0, 255])));
        assert_eq!(parse_color("#10203080"), Some(Rgba([16, 32, 48, 128])));
        for bad in ["", "#12", "#gggggg", "rgb(1,2,3)", "#12345"] {
            assert_eq!(parse_color(bad), None, "{bad}");
        }
    }

    #[test]
    fn text_contrasts_with_its_background() {
        assert_eq!(
            contrasting(Rgba([250, 250, 245, 255])),
            Rgba([0, 0, 0, 255])
        );
        assert_eq!(
            contrasting(Rgba([20, 30, 60, 255])),
            Rgba([255, 255, 255, 255])
        );
    }

    #[test]
    fn the_background_is_the_median_of_the_edge() {
        let mut image = RgbaImage::from_pixel(20, 20, Rgba([200, 200, 200, 255]));
        let r = Rect {
            x: 2,
            y: 2,
            w: 10,
            h: 10,
        };
        fill(
            &mut image,
            Rect {
                x: 2,
                y: 2,
                w: 2,
                h: 2,
            },
            Rgba([0, 0, 0, 255]),
        );
        assert_eq!(edge_median(&image, r), Rgba([200, 200, 200, 255]));
    }

    #[test]
    fn inpainting_fills_a_hole_from_its_surroundings() {
        let mut image = RgbaImage::from_pixel(16, 16, Rgba([10, 100, 200, 255]));
        fill(
            &mut image,
            Rect {
                x: 4,
                y: 4,
                w: 6,
                h: 6,
            },
            Rgba([0, 0, 0, 255]),
        );
        let mut mask = GrayImage::new(8, 8);
        for y in 2..5 {
            for x in 2..5 {
                mask.put_pixel(x, y, image::Luma([255]));
            }
        }
        assert_eq!(inpaint(&mut image, &mask), 36);
        assert_eq!(*image.get_pixel(6, 6), Rgba([10, 100, 200, 255]));
    }
}
