//! Exemplar-based inpainting, after A. Criminisi, P. Pérez and K. Toyama,
//! "Region Filling and Object Removal by Exemplar-Based Image
//! Inpainting" (2004): the hole is filled a patch at a time from its
//! edge inwards. The next patch is centred on the edge pixel with the
//! highest priority: how much of its patch is known (and how surely),
//! times how strongly an edge of the image (an isophote) runs into the
//! hole there, so lines are carried in before flat areas close over
//! them. Its unknown pixels are copied from the patch nearby, wholly
//! outside the hole, that best matches its known ones. Screentone,
//! hatching and lines go on through where the text was; a diffusion
//! (Telea's method, `clean::telea`) would smooth them to a blur. A
//! source must match well enough: where the only whole patches lie
//! across an outline, in another colour (a balloon's lines close
//! together), nothing is copied and the caller smooths the rest.

use image::RgbaImage;

/// A patch's half side: patches are 9 × 9 pixels.
const HALF: i64 = 4;

/// How far (in pixels, each way) from a patch its source is looked for;
/// twice as far when nothing whole lies that near.
const SEARCH: i64 = 28;

/// What a source's distance costs, per known pixel and squared pixel of
/// distance, against its squared differences (three channels): a patch
/// 16 pixels farther must match about 9 levels a channel better.
const NEARER: u64 = 1;

/// The most a source may differ from a patch's known pixels: the root
/// of the mean squared difference of a channel, in grey levels.
const MISMATCH: u64 = 32;

/// Fills the `hole` pixels of `image` that `fill` picks (cleared from
/// the hole as they are filled) with patches copied from around them;
/// answers how many it filled. The other hole pixels are neither filled
/// nor copied. A pixel with no whole patch of known pixels within reach
/// stays in the hole.
pub fn exemplar(image: &mut RgbaImage, hole: &mut [bool], fill: &[bool]) -> u64 {
    let (w, h) = (i64::from(image.width()), i64::from(image.height()));
    if w < 2 * HALF + 1 || h < 2 * HALF + 1 || !(0..hole.len()).any(|i| hole[i] && fill[i]) {
        return 0;
    }
    let at = |x: i64, y: i64| (y * w + x) as usize;
    // Where a whole patch of known pixels lies: a summed-area table of
    // the hole as it was at the start (filled pixels are never copied).
    let mut sat = vec![0u32; ((w + 1) * (h + 1)) as usize];
    for y in 0..h {
        let mut row = 0;
        for x in 0..w {
            row += u32::from(hole[at(x, y)]);
            sat[((y + 1) * (w + 1) + x + 1) as usize] = sat[(y * (w + 1) + x + 1) as usize] + row;
        }
    }
    let whole = |cx: i64, cy: i64| {
        let (x0, y0, x1, y1) = (cx - HALF, cy - HALF, cx + HALF + 1, cy + HALF + 1);
        if x0 < 0 || y0 < 0 || x1 > w || y1 > h {
            return false;
        }
        let s = |x: i64, y: i64| sat[(y * (w + 1) + x) as usize];
        s(x1, y1) + s(x0, y0) == s(x0, y1) + s(x1, y0)
    };
    let mut confidence: Vec<f32> = hole.iter().map(|&m| if m { 0.0 } else { 1.0 }).collect();
    let grey = |image: &RgbaImage, i: usize| {
        let p = image.get_pixel((i as i64 % w) as u32, (i as i64 / w) as u32);
        0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2])
    };
    let on_front = |hole: &[bool], x: i64, y: i64| {
        hole[at(x, y)] && fill[at(x, y)] && neighbours(x, y, w, h).any(|(nx, ny)| !hole[at(nx, ny)])
    };
    let priority = |image: &RgbaImage, hole: &[bool], confidence: &[f32], x: i64, y: i64| {
        let mut sure = 0.0;
        for (px, py) in patch(x, y, w, h) {
            sure += confidence[at(px, py)];
        }
        sure /= ((2 * HALF + 1) * (2 * HALF + 1)) as f32;
        // The hole's normal here, from its mask's slope.
        let unknown = |x: i64, y: i64| {
            let (x, y) = (x.clamp(0, w - 1), y.clamp(0, h - 1));
            if hole[at(x, y)] { 1.0f32 } else { 0.0 }
        };
        let (nx, ny) = (
            unknown(x + 1, y) - unknown(x - 1, y),
            unknown(x, y + 1) - unknown(x, y - 1),
        );
        let norm = (nx * nx + ny * ny).sqrt().max(1e-3);
        // The strongest edge among the patch's known pixels whose
        // neighbours are known too: the isophote runs across it.
        let mut best = (0.0f32, 0.0f32, 0.0f32);
        for (px, py) in patch(x, y, w, h) {
            if px < 1 || py < 1 || px >= w - 1 || py >= h - 1 {
                continue;
            }
            if neighbours(px, py, w, h).any(|(qx, qy)| hole[at(qx, qy)]) || hole[at(px, py)] {
                continue;
            }
            let g = |dx: i64, dy: i64| grey(image, at(px + dx, py + dy));
            let gx = (g(1, -1) + 2.0 * g(1, 0) + g(1, 1)) - (g(-1, -1) + 2.0 * g(-1, 0) + g(-1, 1));
            let gy = (g(-1, 1) + 2.0 * g(0, 1) + g(1, 1)) - (g(-1, -1) + 2.0 * g(0, -1) + g(1, -1));
            let m = gx * gx + gy * gy;
            if m > best.0 {
                best = (m, gx, gy);
            }
        }
        // The isophote is the gradient turned a quarter.
        let (ix, iy) = (-best.2, best.1);
        let data = (ix * nx + iy * ny).abs() / (norm * 4.0 * 255.0);
        sure * (data + 0.001)
    };
    let mut front: Vec<usize> = (0..hole.len())
        .filter(|&i| on_front(hole, i as i64 % w, i as i64 / w))
        .collect();
    let mut rank: Vec<f32> = vec![0.0; hole.len()];
    let mut listed = vec![false; hole.len()];
    for &i in &front {
        listed[i] = true;
        rank[i] = priority(image, hole, &confidence, i as i64 % w, i as i64 / w);
    }
    let mut filled = 0;
    loop {
        front.retain(|&i| hole[i]);
        let Some(&p) = front
            .iter()
            .max_by(|a, b| rank[**a].total_cmp(&rank[**b]).then(b.cmp(a)))
        else {
            break;
        };
        let (x, y) = (p as i64 % w, p as i64 / w);
        let Some((sx, sy)) = source(image, hole, (x, y), &whole) else {
            // Nothing to copy from near enough: left to the caller.
            front.retain(|&i| i != p);
            continue;
        };
        let sure = rank_confidence(&confidence, x, y, w, h);
        for (px, py) in patch(x, y, w, h) {
            let i = at(px, py);
            if hole[i] && fill[i] {
                let from = *image.get_pixel((sx + px - x) as u32, (sy + py - y) as u32);
                image.put_pixel(px as u32, py as u32, from);
                hole[i] = false;
                confidence[i] = sure;
                filled += 1;
            }
        }
        // The front near the patch, and its priorities, again.
        for py in (y - HALF - 1).max(0)..=(y + HALF + 1).min(h - 1) {
            for px in (x - HALF - 1).max(0)..=(x + HALF + 1).min(w - 1) {
                let i = at(px, py);
                if !listed[i] && on_front(hole, px, py) {
                    listed[i] = true;
                    front.push(i);
                }
            }
        }
        for &i in &front {
            let (fx, fy) = (i as i64 % w, i as i64 / w);
            if (fx - x).abs() <= 2 * HALF + 1 && (fy - y).abs() <= 2 * HALF + 1 && hole[i] {
                rank[i] = priority(image, hole, &confidence, fx, fy);
            }
        }
    }
    filled
}

/// The mean confidence of a patch: what its filled pixels are given.
fn rank_confidence(confidence: &[f32], x: i64, y: i64, w: i64, h: i64) -> f32 {
    let mut sum = 0.0;
    let mut n = 0.0;
    for (px, py) in patch(x, y, w, h) {
        sum += confidence[(py * w + px) as usize];
        n += 1.0;
    }
    sum / n
}

/// The centre of the whole known patch near `(x, y)` whose pixels best
/// match the known pixels of the patch there (least sum of squared
/// differences).
fn source(
    image: &RgbaImage,
    hole: &[bool],
    (x, y): (i64, i64),
    whole: &dyn Fn(i64, i64) -> bool,
) -> Option<(i64, i64)> {
    let (w, h) = (i64::from(image.width()), i64::from(image.height()));
    let known: Vec<(i64, i64, [u8; 3])> = patch(x, y, w, h)
        .filter(|(px, py)| !hole[(py * w + px) as usize])
        .map(|(px, py)| {
            let p = image.get_pixel(px as u32, py as u32);
            (px - x, py - y, [p[0], p[1], p[2]])
        })
        .collect();
    for reach in [SEARCH, 2 * SEARCH] {
        let mut best: Option<(u64, i64, i64)> = None;
        for cy in (y - reach).max(HALF)..=(y + reach).min(h - 1 - HALF) {
            for cx in (x - reach).max(HALF)..=(x + reach).min(w - 1 - HALF) {
                if !whole(cx, cy) {
                    continue;
                }
                let limit = best.map_or(u64::MAX, |b| b.0);
                // Nearer sources are preferred: a gradient's level and
                // the lines' places are kept.
                let (dx, dy) = (cx - x, cy - y);
                let mut cost = (dx * dx + dy * dy) as u64 * known.len() as u64 * NEARER;
                for (dx, dy, c) in &known {
                    let q = image.get_pixel((cx + dx) as u32, (cy + dy) as u32);
                    for k in 0..3 {
                        let d = i64::from(q[k]) - i64::from(c[k]);
                        cost += (d * d) as u64;
                    }
                    if cost >= limit {
                        break;
                    }
                }
                if cost < limit {
                    best = Some((cost, cx, cy));
                }
            }
        }
        // A source unlike the patch (the only whole ones lie across an
        // outline, in another colour) is no source: Telea's smoothing
        // does less harm there.
        if let Some((cost, cx, cy)) = best {
            let (dx, dy) = (cx - x, cy - y);
            let unlike = cost - (dx * dx + dy * dy) as u64 * known.len() as u64 * NEARER;
            let most = known.len() as u64 * 3 * MISMATCH * MISMATCH;
            return (unlike <= most).then_some((cx, cy));
        }
    }
    None
}

/// The pixels of the patch centred on `(x, y)` that lie in the image.
fn patch(x: i64, y: i64, w: i64, h: i64) -> impl Iterator<Item = (i64, i64)> {
    ((y - HALF).max(0)..=(y + HALF).min(h - 1))
        .flat_map(move |py| ((x - HALF).max(0)..=(x + HALF).min(w - 1)).map(move |px| (px, py)))
}

/// The 8 neighbours of `(x, y)` that lie in the image.
fn neighbours(x: i64, y: i64, w: i64, h: i64) -> impl Iterator<Item = (i64, i64)> {
    crate::labels::neighbours((x, y), (0, 0, w - 1, h - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    /// A screentone: a dot every 6 pixels on a tint.
    fn tone(w: u32, h: u32) -> RgbaImage {
        RgbaImage::from_fn(w, h, |x, y| {
            if x % 6 < 2 && y % 6 < 2 {
                Rgba([20, 20, 20, 255])
            } else {
                Rgba([120, 200, 120, 255])
            }
        })
    }

    #[test]
    fn a_screentone_goes_on_through_the_hole() {
        let truth = tone(96, 64);
        let mut image = truth.clone();
        let mut hole = vec![false; 96 * 64];
        // A word-sized hole, painted over.
        for y in 26..38 {
            for x in 20..76 {
                hole[y * 96 + x] = true;
                image.put_pixel(x as u32, y as u32, Rgba([255, 255, 255, 255]));
            }
        }
        let before = hole.iter().filter(|h| **h).count() as u64;
        let all = vec![true; hole.len()];
        assert_eq!(exemplar(&mut image, &mut hole, &all), before);
        assert!(!hole.contains(&true));
        // The dots are back where they were: the lattice is continued,
        // not blurred to its mean.
        let wrong = (26..38)
            .flat_map(|y| (20..76).map(move |x| (x, y)))
            .filter(|&(x, y)| image.get_pixel(x, y) != truth.get_pixel(x, y))
            .count();
        assert!(
            wrong * 20 <= before as usize,
            "{wrong} of {before} pixels wrong"
        );
    }

    #[test]
    fn pixels_outside_the_hole_never_change() {
        let mut image = tone(40, 40);
        let truth = image.clone();
        let mut hole = vec![false; 40 * 40];
        for i in [20 * 40 + 20, 20 * 40 + 21, 21 * 40 + 20] {
            hole[i] = true;
        }
        let mask = hole.clone();
        exemplar(&mut image, &mut hole, &mask.clone());
        for (i, (a, b)) in image.pixels().zip(truth.pixels()).enumerate() {
            assert!(mask[i] || a == b, "pixel {i} changed");
        }
    }

    #[test]
    fn a_hole_with_nothing_whole_near_it_is_left() {
        // Smaller than a patch: nothing to copy from.
        let mut image = tone(6, 6);
        let mut hole = vec![true; 36];
        assert_eq!(exemplar(&mut image, &mut hole, &[true; 36]), 0);
        assert!(hole.iter().all(|h| *h));
    }
}
