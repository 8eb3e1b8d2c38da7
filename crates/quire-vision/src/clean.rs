//! Removing a page's text (the `clean` engine's `builtin` backend):
//!
//! 1. The text mask is dilated by `dilate` pixels, so the soft edge of
//!    each glyph goes too.
//! 2. Inside a balloon (a region polygon), the dilated mask's pixels are
//!    filled with the balloon's own background: the median of the
//!    region's pixels outside the mask, when at least three in four of them
//!    lie near it (white and flat-tinted balloons). The dilation stops at
//!    the region, so a balloon's outline is never touched.
//! 3. Each piece of what is left (a glyph outside balloons, or in a
//!    balloon that is not flat as a whole) whose ring of pixels just
//!    around it is flat in the same sense is filled with the ring's
//!    colour: a word on open paper, or in a box that also crosses art.
//! 4. Everything else masked (text on art, a balloon with a gradient, an
//!    `inpaint` mask from another tool) is inpainted by Telea's
//!    fast-marching method (A. Telea, "An Image Inpainting Technique
//!    Based on the Fast Marching Method", 2004): pixels are filled from
//!    the edge of the hole inwards, in order of their distance to it,
//!    each from the known pixels around it, weighted by how close they
//!    are, how nearly they lie along the distance's gradient and how
//!    near their own distance is.
//!
//! With an inpainting model ([`Inpaint`], the `onnx` backend's), the
//! model fills what step 4 would: each piece of the hole with the art
//! around it, in windows of its own.
//!
//! Pixels outside the dilated masks never change.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use image::{GrayImage, Rgba, RgbaImage};

pub use crate::windows::Inpaint;

use crate::labels::Bounds;

/// How far around a pixel Telea's method looks for known pixels.
pub const INPAINT_RADIUS: i64 = 5;

/// How near (in grey levels) a balloon's pixels must be to its median for
/// the balloon to count as flat.
const FLAT_SPREAD: i32 = 24;

/// What [`clean`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleaned {
    /// Pixels filled with their balloon's background.
    pub filled: u64,
    /// Pixels inpainted.
    pub inpainted: u64,
}

/// Removes the text of `text` (non-zero pixels) from `image`: see the
/// module doc. `regions` are balloon outlines in the image's pixels;
/// `inpaint` is another tool's mask of pixels to inpaint. Both masks are
/// scaled to the image when their size differs.
pub fn clean(
    image: &mut RgbaImage,
    text: &GrayImage,
    inpaint: Option<&GrayImage>,
    regions: &[Vec<[f64; 2]>],
    dilate: u32,
) -> Cleaned {
    // Without a model nothing can fail.
    clean_with(image, text, inpaint, regions, dilate, None).unwrap_or_default()
}

/// [`clean`], with `model` (when given) inpainting instead of Telea and the
/// patches; fails with the model's word.
pub fn clean_with(
    image: &mut RgbaImage,
    text: &GrayImage,
    inpaint: Option<&GrayImage>,
    regions: &[Vec<[f64; 2]>],
    dilate: u32,
    model: Option<&dyn Inpaint>,
) -> Result<Cleaned, String> {
    let (w, h) = image.dimensions();
    let text = bits(text, w, h);
    // Each region's pixels, and whether a pixel lies in any.
    let mut in_region = vec![false; text.len()];
    let inside: Vec<Vec<usize>> = regions
        .iter()
        .map(|r| {
            let mut pixels = Vec::new();
            each_inside(r, w, h, |i| {
                in_region[i] = true;
                pixels.push(i);
            });
            pixels
        })
        .collect();
    // The glyphs in balloons, dilated and kept within their balloon.
    let mut out = Cleaned::default();
    let grown = grow(&text, w, h, dilate);
    let mut hole = vec![false; text.len()];
    for region in &inside {
        let masked: Vec<usize> = region.iter().copied().filter(|&i| grown[i]).collect();
        if masked.is_empty() {
            continue;
        }
        match flat_background(image, region, &grown) {
            Some(colour) => {
                for &i in &masked {
                    image.put_pixel(i as u32 % w, i as u32 / w, colour);
                }
                out.filled += masked.len() as u64;
            }
            None => masked.iter().for_each(|&i| hole[i] = true),
        }
    }
    // The glyphs elsewhere, dilated but kept out of the balloons.
    let loose: Vec<bool> = (0..text.len()).map(|i| text[i] && !in_region[i]).collect();
    let loose = grow(&loose, w, h, dilate);
    for (i, masked) in loose.iter().enumerate() {
        if *masked && !in_region[i] {
            hole[i] = true;
        }
    }
    let (filled, mut textured) = fill_flat_pieces(image, &mut hole);
    out.filled += filled;
    if let Some(mask) = inpaint {
        for (i, masked) in bits(mask, w, h).into_iter().enumerate() {
            hole[i] |= masked;
            textured[i] |= masked;
        }
    }
    if let Some(model) = model {
        out.inpainted = crate::windows::by_model(image, &hole, model)?;
        return Ok(out);
    }
    // Patches where the art around is textured, so the texture goes on;
    // Telea for the rest (smooth art, and whatever no patch reaches).
    out.inpainted = crate::patches::exemplar(image, &mut hole, &textured);
    out.inpainted += telea(image, &mut hole, INPAINT_RADIUS);
    Ok(out)
}

/// The mask's non-zero pixels at `w` × `h`.
fn bits(mask: &GrayImage, w: u32, h: u32) -> Vec<bool> {
    let scaled;
    let mask = if mask.dimensions() == (w, h) {
        mask
    } else {
        scaled = image::imageops::resize(mask, w, h, image::imageops::FilterType::Nearest);
        &scaled
    };
    mask.pixels().map(|p| p[0] > 127).collect()
}

/// `mask` grown by `r` pixels in every direction (a square: two passes of
/// a running window).
pub fn grow(mask: &[bool], w: u32, h: u32, r: u32) -> Vec<bool> {
    if r == 0 {
        return mask.to_vec();
    }
    let (w, h, r) = (w as usize, h as usize, r as usize);
    let pass = |src: &[bool], len: usize, lines: usize, at: &dyn Fn(usize, usize) -> usize| {
        let mut dst = vec![false; src.len()];
        for line in 0..lines {
            // How many set pixels are in the window around `k`.
            let mut count = 0usize;
            for k in 0..r.min(len) {
                count += usize::from(src[at(line, k)]);
            }
            for k in 0..len {
                if k + r < len {
                    count += usize::from(src[at(line, k + r)]);
                }
                if k > r {
                    count -= usize::from(src[at(line, k - r - 1)]);
                }
                dst[at(line, k)] = count > 0;
            }
        }
        dst
    };
    let rows = pass(mask, w, h, &|y, x| y * w + x);
    pass(&rows, h, w, &|x, y| y * w + x)
}

/// Which pixels' centres lie inside the polygon (even-odd rule).
pub fn polygon(points: &[[f64; 2]], w: u32, h: u32) -> Vec<bool> {
    let mut inside = vec![false; w as usize * h as usize];
    each_inside(points, w, h, |i| inside[i] = true);
    inside
}

/// Calls `f` with the index (`y * w + x`) of each pixel whose centre lies
/// inside the polygon (even-odd rule), row by row over the polygon's rows
/// only.
pub fn each_inside(points: &[[f64; 2]], w: u32, h: u32, mut f: impl FnMut(usize)) {
    if points.len() < 3 {
        return;
    }
    let (mut top, mut bottom) = (f64::MAX, f64::MIN);
    for p in points {
        (top, bottom) = (top.min(p[1]), bottom.max(p[1]));
    }
    // Clamped to the image's rows.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rows = (top - 0.5).ceil().clamp(0.0, f64::from(h)) as u32
        ..(bottom + 0.5).ceil().clamp(0.0, f64::from(h)) as u32;
    let mut crossings = Vec::new();
    for y in rows {
        let cy = f64::from(y) + 0.5;
        crossings.clear();
        for (i, a) in points.iter().enumerate() {
            let b = points[(i + 1) % points.len()];
            if (a[1] <= cy) != (b[1] <= cy) {
                crossings.push(a[0] + (cy - a[1]) / (b[1] - a[1]) * (b[0] - a[0]));
            }
        }
        crossings.sort_by(f64::total_cmp);
        for pair in crossings.chunks_exact(2) {
            // Pixel x is inside when x + 0.5 lies between the crossings.
            let from = (pair[0] - 0.5).ceil().max(0.0);
            let to = (pair[1] - 0.5).ceil().min(f64::from(w));
            // Clamped to 0..=w just above.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            for x in from as usize..to.max(from) as usize {
                f(y as usize * w as usize + x);
            }
        }
    }
}

/// How wide the ring around a piece of the hole is.
const RING: u32 = 2;

/// Fills each 8-connected piece of `hole` whose ring is flat with the
/// ring's colour, taking it out of the hole: [`LOOSE_FLAT`] of the ring
/// near its median, or [`PLAIN_SHARE`] when the art around is not
/// [`dotted`] (paper with a scan's dirt, an outline passing). Answers
/// how many pixels, and which pieces lie in screentone (for patches).
fn fill_flat_pieces(image: &mut RgbaImage, hole: &mut [bool]) -> (u64, Vec<bool>) {
    let (w, h) = image.dimensions();
    let (labels, pieces) = crate::labels::label(w, h, |x, y| hole[(y * w + x) as usize], true);
    let mut filled = 0;
    let mut textured = vec![false; hole.len()];
    for (id, piece) in pieces.iter().enumerate() {
        let b = piece.bounds;
        let (left, top) = (b.left.saturating_sub(RING), b.top.saturating_sub(RING));
        let (right, bottom) = ((b.right + RING).min(w - 1), (b.bottom + RING).min(h - 1));
        let (bw, bh) = (right - left + 1, bottom - top + 1);
        let index = |x: u32, y: u32| (y * w + x) as usize;
        let mine: Vec<bool> = (top..=bottom)
            .flat_map(|y| (left..=right).map(move |x| (x, y)))
            .map(|(x, y)| labels[index(x, y)] == id as u32)
            .collect();
        let near = grow(&mine, bw, bh, RING);
        let ring: Vec<bool> = (0..mine.len())
            .map(|k| near[k] && !hole[index(left + k as u32 % bw, top + k as u32 / bw)])
            .collect();
        let samples = ring
            .iter()
            .enumerate()
            .filter(|(_, r)| **r)
            .map(|(k, _)| *image.get_pixel(left + k as u32 % bw, top + k as u32 / bw));
        let pixels = mine
            .iter()
            .enumerate()
            .filter(|(_, m)| **m)
            .map(|(k, _)| (left + k as u32 % bw, top + k as u32 / bw));
        let Some((colour, share)) = median_share(samples.collect()) else {
            continue;
        };
        let flat = if share >= LOOSE_FLAT {
            true
        } else if dotted(image, hole, &b) {
            pixels
                .clone()
                .for_each(|(x, y)| textured[index(x, y)] = true);
            false
        } else {
            share >= PLAIN_SHARE
        };
        if flat {
            for (x, y) in pixels {
                image.put_pixel(x, y, colour);
                hole[index(x, y)] = false;
                filled += 1;
            }
        }
    }
    (filled, textured)
}

/// The region's background when it is flat: the median colour of its
/// pixels (indices) outside the mask, if three in four of them are near it.
fn flat_background(image: &RgbaImage, region: &[usize], masked: &[bool]) -> Option<Rgba<u8>> {
    let w = image.width();
    let samples: Vec<Rgba<u8>> = region
        .iter()
        .filter(|&&i| !masked[i])
        .map(|&i| *image.get_pixel(i as u32 % w, i as u32 / w))
        .collect();
    flat(samples)
}

/// The share of a balloon's paper (outside the mask) that must be near
/// its median for the balloon to be flat: a white or tinted balloon's,
/// the letters' soft edges taken by the dilation; not the screentone
/// around a caption whose region is its box.
const BALLOON_FLAT: f64 = 0.9;

/// The share of the ring around a piece of the hole that must be near
/// its median for the piece to be filled flat.
const LOOSE_FLAT: f64 = 0.9;

/// The share near the median that is enough when the art around is no
/// screentone.
const PLAIN_SHARE: f64 = 0.75;

/// How far around a piece [`dotted`] looks, and how much darker than
/// the median a pixel must be to be part of a dot.
const TONE_REACH: u32 = 10;
const DOT_DARKER: i32 = 32;

/// Whether the art within [`TONE_REACH`] of a piece (boxed by `b`) is a
/// screentone or halftone: dots darker than its median, small (2 to 30 pixels, at most 6
/// across) and many (six or more, one for every 60 known pixels). Lines
/// and an outline are few and long; a scan's dirt is single pixels.
fn dotted(image: &RgbaImage, hole: &[bool], b: &Bounds) -> bool {
    let (w, h) = image.dimensions();
    let (left, top) = (
        b.left.saturating_sub(TONE_REACH),
        b.top.saturating_sub(TONE_REACH),
    );
    let (right, bottom) = (
        (b.right + TONE_REACH).min(w - 1),
        (b.bottom + TONE_REACH).min(h - 1),
    );
    let (bw, bh) = (right - left + 1, bottom - top + 1);
    let luma = |p: &Rgba<u8>| {
        (i32::from(p[0]) * 299 + i32::from(p[1]) * 587 + i32::from(p[2]) * 114) / 1000
    };
    let known = |x: u32, y: u32| !hole[((top + y) * w + left + x) as usize];
    // The paper: the median grey of the known pixels around.
    let mut greys: Vec<i32> = (0..bh)
        .flat_map(|y| (0..bw).map(move |x| (x, y)))
        .filter(|&(x, y)| known(x, y))
        .map(|(x, y)| luma(image.get_pixel(left + x, top + y)))
        .collect();
    greys.sort_unstable();
    let Some(&paper) = greys.get(greys.len() / 2) else {
        return false;
    };
    let dot = |x: u32, y: u32| {
        known(x, y) && luma(image.get_pixel(left + x, top + y)) < paper - DOT_DARKER
    };
    let (_, blobs) = crate::labels::label(bw, bh, dot, true);
    let dots = blobs
        .iter()
        .filter(|c| (2..=30).contains(&c.area) && c.bounds.width() <= 6 && c.bounds.height() <= 6)
        .count();
    let seen = (0..bh)
        .flat_map(|y| (0..bw).map(move |x| (x, y)))
        .filter(|&(x, y)| known(x, y))
        .count();
    dots >= 6 && dots * 60 >= seen
}

/// The samples' median colour, if [`BALLOON_FLAT`] of them are near it.
fn flat(samples: Vec<Rgba<u8>>) -> Option<Rgba<u8>> {
    median_share(samples)
        .filter(|(_, share)| *share >= BALLOON_FLAT)
        .map(|(colour, _)| colour)
}

/// The samples' median colour and the share of them near it.
fn median_share(samples: Vec<Rgba<u8>>) -> Option<(Rgba<u8>, f64)> {
    if samples.is_empty() {
        return None;
    }
    let mut colour = [0u8; 4];
    for (c, value) in colour.iter_mut().enumerate() {
        let mut channel: Vec<u8> = samples.iter().map(|p| p[c]).collect();
        channel.sort_unstable();
        *value = channel[channel.len() / 2];
    }
    let near = samples
        .iter()
        .filter(|p| (0..3).all(|c| (i32::from(p[c]) - i32::from(colour[c])).abs() <= FLAT_SPREAD))
        .count();
    Some((Rgba(colour), near as f64 / samples.len() as f64))
}

/// A pixel waiting in the fast-marching band, nearest first.
#[derive(PartialEq)]
struct Near(f32, usize);

impl Eq for Near {}

impl Ord for Near {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flag {
    Known,
    Band,
    Inside,
}

/// Telea's fast-marching inpainting of the `hole` pixels (cleared as they
/// are filled); answers how many it filled.
pub fn telea(image: &mut RgbaImage, hole: &mut [bool], radius: i64) -> u64 {
    let (w, h) = (i64::from(image.width()), i64::from(image.height()));
    let at = |x: i64, y: i64| (y * w + x) as usize;
    let within = |x: i64, y: i64| x >= 0 && y >= 0 && x < w && y < h;
    let mut flag: Vec<Flag> = hole
        .iter()
        .map(|m| if *m { Flag::Inside } else { Flag::Known })
        .collect();
    let mut dist = vec![0f32; hole.len()];
    let mut band = BinaryHeap::new();
    let mut total = 0u64;
    for y in 0..h {
        for x in 0..w {
            let i = at(x, y);
            if flag[i] != Flag::Inside {
                continue;
            }
            total += 1;
            dist[i] = f32::MAX;
            // The known pixels at the hole's edge start the band.
            for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] {
                if within(nx, ny) && flag[at(nx, ny)] == Flag::Known {
                    flag[at(nx, ny)] = Flag::Band;
                    band.push(Near(0.0, at(nx, ny)));
                }
            }
        }
    }
    let mut pixels: Vec<[f32; 3]> = image
        .pixels()
        .map(|p| [f32::from(p[0]), f32::from(p[1]), f32::from(p[2])])
        .collect();
    while let Some(Near(_, i)) = band.pop() {
        if flag[i] == Flag::Known {
            continue;
        }
        flag[i] = Flag::Known;
        let (x, y) = (i as i64 % w, i as i64 / w);
        for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] {
            if !within(nx, ny) || flag[at(nx, ny)] != Flag::Inside {
                continue;
            }
            let n = at(nx, ny);
            let t = [(-1, -1), (1, -1), (-1, 1), (1, 1)]
                .iter()
                .map(|&(dx, dy)| {
                    let a = within(nx + dx, ny).then(|| at(nx + dx, ny));
                    let b = within(nx, ny + dy).then(|| at(nx, ny + dy));
                    let solved = |k: Option<usize>| k.filter(|k| flag[*k] != Flag::Inside);
                    eikonal(solved(a).map(|k| dist[k]), solved(b).map(|k| dist[k]))
                })
                .fold(f32::MAX, f32::min);
            dist[n] = t;
            pixels[n] = fill(&pixels, &flag, &dist, (nx, ny), (w, h), radius);
            flag[n] = Flag::Band;
            band.push(Near(t, n));
        }
    }
    for (i, m) in hole.iter_mut().enumerate() {
        if *m && flag[i] == Flag::Known {
            let p = pixels[i];
            // Rounded and clamped to a channel's range.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let colour = Rgba([
                p[0].round().clamp(0.0, 255.0) as u8,
                p[1].round().clamp(0.0, 255.0) as u8,
                p[2].round().clamp(0.0, 255.0) as u8,
                255,
            ]);
            image.put_pixel(i as u32 % w as u32, i as u32 / w as u32, colour);
            *m = false;
        }
    }
    total
}

/// The arrival distance at a pixel from two solved neighbours along
/// different axes (the first-order solution of |∇T| = 1).
fn eikonal(a: Option<f32>, b: Option<f32>) -> f32 {
    match (a, b) {
        (Some(a), Some(b)) => {
            let r = 2.0 - (a - b) * (a - b);
            if r > 0.0 {
                let s = (a + b + r.sqrt()) / 2.0;
                if s >= a && s >= b {
                    return s;
                }
            }
            1.0 + a.min(b)
        }
        (Some(a), None) | (None, Some(a)) => 1.0 + a,
        (None, None) => f32::MAX,
    }
}

/// One pixel's colour from the known pixels within `radius`: each
/// extrapolated along its own gradient and weighted by direction,
/// distance and level (Telea's weights).
fn fill(
    pixels: &[[f32; 3]],
    flag: &[Flag],
    dist: &[f32],
    (x, y): (i64, i64),
    (w, h): (i64, i64),
    radius: i64,
) -> [f32; 3] {
    let at = |x: i64, y: i64| (y * w + x) as usize;
    let known =
        |x: i64, y: i64| x >= 0 && y >= 0 && x < w && y < h && flag[at(x, y)] != Flag::Inside;
    let here = dist[at(x, y)];
    // The distance's gradient at the pixel, from its solved neighbours.
    let slope = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(a), Some(b)) => (dist[b] - dist[a]) / 2.0,
        (Some(a), None) => here - dist[a],
        (None, Some(b)) => dist[b] - here,
        (None, None) => 0.0,
    };
    let side = |x: i64, y: i64| known(x, y).then(|| at(x, y));
    let grad_t = [
        slope(side(x - 1, y), side(x + 1, y)),
        slope(side(x, y - 1), side(x, y + 1)),
    ];
    let mut sum = [0f32; 3];
    let mut weights = 0f32;
    for qy in y - radius..=y + radius {
        for qx in x - radius..=x + radius {
            let (rx, ry) = (x - qx, y - qy);
            if (rx == 0 && ry == 0) || rx * rx + ry * ry > radius * radius || !known(qx, qy) {
                continue;
            }
            let q = at(qx, qy);
            let (rx, ry) = (rx as f32, ry as f32);
            let length2 = rx * rx + ry * ry;
            let direction = ((rx * grad_t[0] + ry * grad_t[1]) / length2.sqrt())
                .abs()
                .max(1e-6);
            let distance = 1.0 / length2;
            let level = 1.0 / (1.0 + (dist[q] - here).abs());
            let weight = direction * distance * level;
            // The image's gradient at q, where its neighbours are known.
            let gradient = |c: usize| {
                let dx = match (known(qx - 1, qy), known(qx + 1, qy)) {
                    (true, true) => (pixels[at(qx + 1, qy)][c] - pixels[at(qx - 1, qy)][c]) / 2.0,
                    _ => 0.0,
                };
                let dy = match (known(qx, qy - 1), known(qx, qy + 1)) {
                    (true, true) => (pixels[at(qx, qy + 1)][c] - pixels[at(qx, qy - 1)][c]) / 2.0,
                    _ => 0.0,
                };
                dx * rx + dy * ry
            };
            for (c, s) in sum.iter_mut().enumerate() {
                *s += weight * (pixels[q][c] + gradient(c));
            }
            weights += weight;
        }
    }
    if weights > 0.0 {
        sum.map(|s| s / weights)
    } else {
        pixels[at(x, y)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Luma;

    fn mask_of(w: u32, h: u32, on: impl Fn(u32, u32) -> bool) -> GrayImage {
        GrayImage::from_fn(w, h, |x, y| Luma([if on(x, y) { 255 } else { 0 }]))
    }

    #[test]
    fn a_polygon_covers_the_pixels_whose_centres_it_holds() {
        let square = [[2.0, 2.0], [6.0, 2.0], [6.0, 5.0], [2.0, 5.0]];
        let inside = polygon(&square, 10, 10);
        let count = inside.iter().filter(|b| **b).count();
        assert_eq!(count, 4 * 3);
        assert!(inside[2 * 10 + 2] && inside[4 * 10 + 5]);
        assert!(!inside[5 * 10 + 2] && !inside[2 * 10 + 6]);
    }

    #[test]
    fn growing_a_mask_adds_a_square_around_each_pixel() {
        let mut mask = vec![false; 49];
        mask[3 * 7 + 3] = true;
        let grown = grow(&mask, 7, 7, 2);
        assert_eq!(grown.iter().filter(|b| **b).count(), 25);
        assert!(grown[7 + 1] && !grown[0] && grown[5 * 7 + 5] && !grown[6 * 7 + 6]);
    }

    #[test]
    fn text_in_a_balloon_takes_its_background_and_spares_the_outline() {
        // A tinted balloon (outline black) holding a black bar of "text".
        let (w, h) = (60u32, 40u32);
        let tint = Rgba([250, 240, 200, 255]);
        let mut image = RgbaImage::from_fn(w, h, |x, y| {
            let edge = x == 5 || x == 54 || y == 5 || y == 34;
            let inside = (5..=54).contains(&x) && (5..=34).contains(&y);
            if edge {
                Rgba([0, 0, 0, 255])
            } else if inside {
                tint
            } else {
                Rgba([90, 140, 60, 255])
            }
        });
        for y in 18..22 {
            for x in 15..45 {
                image.put_pixel(x, y, Rgba([10, 10, 10, 255]));
            }
        }
        let before = image.clone();
        let text = mask_of(w, h, |x, y| (15..45).contains(&x) && (18..22).contains(&y));
        let region = vec![[6.0, 6.0], [54.0, 6.0], [54.0, 34.0], [6.0, 34.0]];
        let done = clean(&mut image, &text, None, &[region], 3);
        assert!(done.filled > 0 && done.inpainted == 0);
        for (x, y, p) in image.enumerate_pixels() {
            if (15..45).contains(&x) && (18..22).contains(&y) {
                assert_eq!(*p, tint, "({x}, {y}) still holds text");
            } else if !(12..48).contains(&x) || !(15..25).contains(&y) {
                assert_eq!(
                    p,
                    before.get_pixel(x, y),
                    "({x}, {y}) outside the mask changed"
                );
            }
        }
    }

    #[test]
    fn text_on_art_is_inpainted_from_the_art_around_it() {
        // A horizontal gradient with a black blot: the blot is filled with
        // what the gradient has there.
        let (w, h) = (40u32, 30u32);
        let shade = |x: u32| Rgba([(x * 6) as u8, 80, 200 - (x * 4) as u8, 255]);
        let mut image = RgbaImage::from_fn(w, h, |x, _| shade(x));
        for y in 12..17 {
            for x in 17..23 {
                image.put_pixel(x, y, Rgba([0, 0, 0, 255]));
            }
        }
        let text = mask_of(w, h, |x, y| (17..23).contains(&x) && (12..17).contains(&y));
        let done = clean(&mut image, &text, None, &[], 1);
        assert!(done.inpainted > 0 && done.filled == 0);
        for y in 12..17 {
            for x in 17..23 {
                let (got, want) = (image.get_pixel(x, y), shade(x));
                for c in 0..3 {
                    let off = (i32::from(got[c]) - i32::from(want[c])).abs();
                    assert!(off <= 12, "({x}, {y}) channel {c}: {got:?} vs {want:?}");
                }
            }
        }
    }

    #[test]
    fn text_on_a_screentone_is_inpainted_with_the_screentone_not_a_flat_tint() {
        // Dots of 3 × 3 every 5 pixels on a tint; a caption's mask over a
        // region that is its box (no balloon): the dots go on through it.
        let (w, h) = (120u32, 80u32);
        let tone = |x: u32, y: u32| {
            if x % 5 < 3 && y % 5 < 3 {
                Rgba([20, 20, 20, 255])
            } else {
                Rgba([120, 200, 120, 255])
            }
        };
        let mut image = RgbaImage::from_fn(w, h, tone);
        let inside = |x: u32, y: u32| (30..90).contains(&x) && (34..44).contains(&y);
        for y in 0..h {
            for x in 0..w {
                if inside(x, y) {
                    image.put_pixel(x, y, Rgba([255, 255, 255, 255]));
                }
            }
        }
        let text = mask_of(w, h, inside);
        let region = vec![[26.0, 30.0], [94.0, 30.0], [94.0, 48.0], [26.0, 48.0]];
        let done = clean(&mut image, &text, None, &[region], 1);
        assert!(done.inpainted > 0 && done.filled == 0, "{done:?}");
        let dots = (34..44)
            .flat_map(|y| (30..90).map(move |x| (x, y)))
            .filter(|&(x, y)| image.get_pixel(x, y)[0] < 60)
            .count();
        let wrong = (34..44)
            .flat_map(|y| (30..90).map(move |x| (x, y)))
            .filter(|&(x, y)| image.get_pixel(x, y) != &tone(x, y))
            .count();
        // 600 pixels, 9 in 25 of them dots.
        assert!((170..=260).contains(&dots), "{dots} dark pixels");
        assert!(wrong <= 60, "{wrong} pixels unlike the screentone");
    }
}
