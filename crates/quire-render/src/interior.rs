//! A balloon's interior: where its translation is set (spec 12, "In the
//! balloon"). The node's region, rasterised, is opened with a disk of
//! about half its inradius: a tail (or a gap in the outline that let the
//! region run into the panel) is narrower than that and goes, while the
//! body keeps its shape. Lines are then as wide as the interior is at
//! their height, around the body's widest point, and the block is
//! centred on the body, never on a bounding box with the tail in it.

/// The opened region, one bit a pixel, in image coordinates from
/// `(x0, y0)`, with each row's run around the body's centre.
pub(super) struct Interior {
    x0: f64,
    y0: f64,
    /// Per row: the run of the interior that holds the centre column
    /// (`[left, right)` in pixels from `x0`), if the row crosses it.
    rows: Vec<Option<(usize, usize)>>,
    /// The first and last rows the body has.
    top: usize,
    bottom: usize,
    /// The body's widest extent, left to right.
    across: f64,
}

/// The share of the inradius the opening disk has: a tail narrower than
/// about this much of the body's thickness goes.
const OPENING: f32 = 0.45;

impl Interior {
    /// The interior of the polygon `shape` (image pixels); `None` when it
    /// covers no pixel.
    pub(super) fn of(shape: &[[f64; 2]]) -> Option<Interior> {
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for [x, y] in shape {
            (x0, y0, x1, y1) = (x0.min(*x), y0.min(*y), x1.max(*x), y1.max(*y));
        }
        if !(x1 - x0).is_finite() || !(y1 - y0).is_finite() {
            return None;
        }
        let (x0, y0) = (x0.floor(), y0.floor());
        // A region is at most the page; these are its pixels' counts.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let (w, h) = (
            ((x1.ceil() - x0) as usize).max(1),
            ((y1.ceil() - y0) as usize).max(1),
        );
        let local: Vec<[f64; 2]> = shape.iter().map(|p| [p[0] - x0, p[1] - y0]).collect();
        #[allow(clippy::cast_possible_truncation)]
        let inside = quire_vision::clean::polygon(&local, w as u32, h as u32);
        let outside: Vec<bool> = inside.iter().map(|b| !b).collect();
        let depth = distance(&outside, w, h, true);
        let (deepest, radius) = depth
            .iter()
            .enumerate()
            .fold(
                (0, 0.0f32),
                |(at, most), (i, d)| {
                    if *d > most { (i, *d) } else { (at, most) }
                },
            );
        if radius <= 0.0 {
            return None;
        }
        // Opening: the pixels within r of a pixel at least r deep.
        let r = (radius * OPENING).max(1.0);
        let core: Vec<bool> = depth.iter().map(|d| *d >= r).collect();
        let from_core = distance(&core, w, h, false);
        let body: Vec<bool> = (0..w * h).map(|i| inside[i] && from_core[i] <= r).collect();
        let centre = deepest % w;
        let rows: Vec<Option<(usize, usize)>> = (0..h)
            .map(|y| {
                let row = &body[y * w..(y + 1) * w];
                if !row[centre] {
                    return None;
                }
                let left = row[..centre].iter().rposition(|b| !b).map_or(0, |i| i + 1);
                let right = row[centre..]
                    .iter()
                    .position(|b| !b)
                    .map_or(w, |i| centre + i);
                Some((left, right))
            })
            .collect();
        let top = rows.iter().position(Option::is_some)?;
        let bottom = rows.iter().rposition(Option::is_some)?;
        let (left, right) = rows
            .iter()
            .flatten()
            .fold((usize::MAX, 0), |(l, r), (a, b)| (l.min(*a), r.max(*b)));
        Some(Interior {
            x0,
            y0,
            rows,
            top,
            bottom,
            across: (right - left) as f64,
        })
    }

    /// The body's top and bottom (image pixels, the bottom row's far edge).
    pub(super) fn top_bottom(&self) -> (f64, f64) {
        (
            self.y0 + self.top as f64,
            self.y0 + self.bottom as f64 + 1.0,
        )
    }

    /// How wide the body is at its widest.
    pub(super) fn across(&self) -> f64 {
        self.across
    }

    /// Whether the pixel at `(x, y)` lies in the body, at least `pad`
    /// pixels in from its edge across (and the body's top and bottom).
    pub(super) fn holds(&self, x: u32, y: u32, pad: f64) -> bool {
        let (x, y) = (f64::from(x) - self.x0, f64::from(y) - self.y0);
        if y < 0.0 || y < self.top as f64 + pad || y >= self.bottom as f64 + 1.0 - pad {
            return false;
        }
        // Non-negative, and checked against the rows.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let row = self.rows.get(y as usize).copied().flatten();
        row.is_some_and(|(l, r)| x >= l as f64 + pad && x < r as f64 - pad)
    }

    /// The span (image pixels) every row from `top` to `bottom` has
    /// inside the body, around its centre; `None` when a row of the band
    /// is outside it.
    pub(super) fn span(&self, top: f64, bottom: f64) -> Option<(f64, f64)> {
        let first = (top - self.y0).floor();
        let last = (bottom - self.y0).ceil() - 1.0;
        if first < 0.0 || last < first {
            return None;
        }
        // Non-negative and checked against the rows below.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let (first, last) = (first as usize, last as usize);
        if last >= self.rows.len() {
            return None;
        }
        let (mut left, mut right) = (0, usize::MAX);
        for row in &self.rows[first..=last] {
            let (l, r) = (*row)?;
            (left, right) = (left.max(l), right.min(r));
        }
        (left < right).then_some((self.x0 + left as f64, self.x0 + right as f64))
    }
}

/// Each pixel's distance to the nearest `source` pixel, and with
/// `beyond_is_source` to the nearest pixel past the image's edge: a
/// two-pass chamfer with steps of 1 and √2, within 8 % of Euclidean.
fn distance(source: &[bool], w: usize, h: usize, beyond_is_source: bool) -> Vec<f32> {
    const DIAGONAL: f32 = std::f32::consts::SQRT_2;
    let far = (w + h) as f32;
    let mut d: Vec<f32> = source.iter().map(|s| if *s { 0.0 } else { far }).collect();
    let edge = |x: usize, y: usize| x == 0 || y == 0 || x + 1 == w || y + 1 == h;
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            let mut best = d[i];
            if beyond_is_source && edge(x, y) {
                best = best.min(1.0);
            }
            if x > 0 {
                best = best.min(d[i - 1] + 1.0);
            }
            if y > 0 {
                best = best.min(d[i - w] + 1.0);
                if x > 0 {
                    best = best.min(d[i - w - 1] + DIAGONAL);
                }
                if x + 1 < w {
                    best = best.min(d[i - w + 1] + DIAGONAL);
                }
            }
            d[i] = best;
        }
    }
    for y in (0..h).rev() {
        for x in (0..w).rev() {
            let i = y * w + x;
            let mut best = d[i];
            if x + 1 < w {
                best = best.min(d[i + 1] + 1.0);
            }
            if y + 1 < h {
                best = best.min(d[i + w] + 1.0);
                if x + 1 < w {
                    best = best.min(d[i + w + 1] + DIAGONAL);
                }
                if x > 0 {
                    best = best.min(d[i + w - 1] + DIAGONAL);
                }
            }
            d[i] = best;
        }
    }
    d
}
