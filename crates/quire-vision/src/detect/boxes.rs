//! The geometry of boxes the detector works with: inside, around, near,
//! gaps and overlaps, padding, corners and outlines, reading order.

use super::*;

/// Whether `inner` lies inside `outer` without holding it (a balloon's
/// own outline holds the balloon).
pub(super) fn within(inner: &Bounds, outer: &Bounds) -> bool {
    inner.left > outer.left
        && inner.top > outer.top
        && inner.right < outer.right
        && inner.bottom < outer.bottom
}

/// The paper component most of the pixels two pixels outside `b` belong to.
pub(super) fn around(b: &Bounds, paper: &[u32], width: u32, height: u32) -> Option<u32> {
    let left = i64::from(b.left) - 2;
    let right = i64::from(b.right) + 2;
    let top = i64::from(b.top) - 2;
    let bottom = i64::from(b.bottom) + 2;
    let mut votes: Vec<(u32, usize)> = Vec::new();
    let mut vote = |x: i64, y: i64| {
        if x < 0 || y < 0 || x >= i64::from(width) || y >= i64::from(height) {
            return;
        }
        let label = paper[y as usize * width as usize + x as usize];
        if label == NONE {
            return;
        }
        match votes.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => votes.push((label, 1)),
        }
    };
    for x in left..=right {
        vote(x, top);
        vote(x, bottom);
    }
    for y in top + 1..bottom {
        vote(left, y);
        vote(right, y);
    }
    votes
        .into_iter()
        .max_by_key(|(l, n)| (*n, *l))
        .map(|(l, _)| l)
}

/// Glyphs outside balloons joined into blocks: two glyphs are in one line
/// when their rows overlap by half the shorter one and the gap between
/// them is at most the taller one's height; lines of a like height are in
/// one block when they overlap across and the gap between them is at most
/// the taller glyph's height. Blocks with too few glyphs, glyphs of very
/// different heights, or a short one in the top or bottom margin (a page
/// number) are dropped.
pub(super) fn free_blocks<'a>(
    glyphs: &[&'a Glyph],
    settings: &Settings,
    height: u32,
    apart: &dyn Fn(&Bounds, &Bounds) -> bool,
) -> Vec<Vec<&'a Glyph>> {
    let blocks = clusters(glyphs, |a, b| {
        near(&a.bounds, &b.bounds) && !apart(&a.bounds, &b.bounds)
    });
    let margin = f64::from(height) * 0.07;
    let mut blocks: Vec<Vec<&Glyph>> = blocks.into_iter().map(like_height).collect();
    blocks.retain(|block| {
        let heights = block.iter().map(|g| g.bounds.height());
        let (low, high) = (
            heights.clone().min().unwrap_or(0),
            heights.max().unwrap_or(0),
        );
        let top = block.iter().map(|g| g.bounds.top).min().unwrap_or(0);
        let bottom = block.iter().map(|g| g.bounds.bottom).max().unwrap_or(0);
        let in_margin = f64::from(bottom) < margin || f64::from(top) > f64::from(height) - margin;
        block.len() >= settings.min_free_glyphs
            && f64::from(high) <= f64::from(low) * 2.5
            && !(settings.drop_page_numbers && in_margin && block.len() <= 4)
    });
    blocks
}

/// The glyphs whose height is like the block's median height (from
/// half of it to 1.8 times it): the letters, without the bits of art
/// that passed for glyphs beside them.
pub(super) fn like_height(mut glyphs: Vec<&Glyph>) -> Vec<&Glyph> {
    let mut heights: Vec<u32> = glyphs.iter().map(|g| g.bounds.height()).collect();
    heights.sort_unstable();
    let Some(&median) = heights.get(heights.len() / 2) else {
        return glyphs;
    };
    let median = f64::from(median);
    glyphs.retain(|g| {
        let h = f64::from(g.bounds.height());
        h * 2.0 >= median && h <= median * 1.8
    });
    glyphs
}

/// Whether the paper behind glyphs (in their box) is light on average (text on
/// dark or busy art is not found without a model).
pub(super) fn on_light(block: &[&Glyph], page: &GrayImage, level: u8) -> bool {
    let Some(b) = block.iter().map(|g| g.bounds).reduce(|a, b| a.union(&b)) else {
        return false;
    };
    // Around a lone glyph: a thin letter's own box is all ink and edge.
    let b = match block {
        [one] => padded(&one.bounds, page.width(), page.height()),
        _ => b,
    };
    light_box(&b, page, level)
}

/// Whether the paper (the pixels lighter than `level`) in `b` is light:
/// its median, not its mean, since the soft edges of bold letters are
/// many and would darken a white caption.
pub(super) fn light_box(b: &Bounds, page: &GrayImage, level: u8) -> bool {
    paper_grey(b, page, level).is_some_and(|grey| grey >= LIGHT)
}

/// The median grey of the paper (the pixels lighter than `level`) in
/// `b`; `None` when it has none.
pub(super) fn paper_grey(b: &Bounds, page: &GrayImage, level: u8) -> Option<u8> {
    let mut counts = [0u64; 256];
    for y in b.top..=b.bottom {
        for x in b.left..=b.right {
            let grey = page.get_pixel(x, y).0[0];
            if grey > level {
                counts[usize::from(grey)] += 1;
            }
        }
    }
    let n: u64 = counts.iter().sum();
    let mut seen = 0;
    (0..=255u8).find(|grey| {
        seen += counts[usize::from(*grey)];
        n > 0 && seen * 2 >= n
    })
}

/// Whether two glyphs are neighbours in a line or in lines of one block.
pub(super) fn near(a: &Bounds, b: &Bounds) -> bool {
    near_by(a, b, 1.0)
}

/// [`near`] with the gaps allowed `reach` times as wide: the lines of one
/// balloon may be set farther apart than those of a caption.
pub(super) fn near_by(a: &Bounds, b: &Bounds, reach: f64) -> bool {
    let tall = f64::from(a.height().max(b.height())) * reach;
    let short = f64::from(a.height().min(b.height()));
    if tall > short * 2.5 * reach {
        return false;
    }
    let gap_x = gap(a.left, a.right, b.left, b.right);
    let gap_y = gap(a.top, a.bottom, b.top, b.bottom);
    let overlap_y = overlap(a.top, a.bottom, b.top, b.bottom);
    let same_line = f64::from(overlap_y) >= short / 2.0 && f64::from(gap_x) <= tall;
    let next_line = gap_x == 0 && f64::from(gap_y) <= tall;
    same_line || next_line
}

/// Pixels between two spans (0 when they touch or overlap).
pub(super) fn gap(a0: u32, a1: u32, b0: u32, b1: u32) -> u32 {
    if a1 < b0 {
        b0 - a1 - 1
    } else {
        a0.saturating_sub(b1 + 1)
    }
}

/// Pixels two spans share.
pub(super) fn overlap(a0: u32, a1: u32, b0: u32, b1: u32) -> u32 {
    (a1.min(b1) + 1).saturating_sub(a0.max(b0))
}

/// `text` with a margin of a fifth of its height (at least 2 pixels),
/// kept inside the page.
pub(super) fn padded(text: &Bounds, width: u32, height: u32) -> Bounds {
    let pad = (text.height() / 5).clamp(2, 16);
    Bounds {
        left: text.left.saturating_sub(pad),
        top: text.top.saturating_sub(pad),
        right: (text.right + pad).min(width - 1),
        bottom: (text.bottom + pad).min(height - 1),
    }
}

/// A box as a region: its four corners, clockwise from the top left.
pub(super) fn corners(b: &Bounds) -> Vec<[f64; 2]> {
    let (l, t) = (f64::from(b.left), f64::from(b.top));
    let (r, bo) = (f64::from(b.right + 1), f64::from(b.bottom + 1));
    vec![[l, t], [r, t], [r, bo], [l, bo]]
}

/// A balloon's outline: along each of [`REGION_POINTS`] rays from the
/// centre of its box, the farthest pixel that is the balloon's (text and
/// specks inside it do not stop a ray).
pub(super) fn outline(balloon: u32, b: &Bounds, paper: &[u32], width: u32) -> Vec<[f64; 2]> {
    let cx = f64::from(b.left + b.right + 1) / 2.0;
    let cy = f64::from(b.top + b.bottom + 1) / 2.0;
    let reach = f64::from(b.width().max(b.height()));
    (0..REGION_POINTS)
        .map(|k| {
            let angle = k as f64 * std::f64::consts::TAU / REGION_POINTS as f64;
            let (dx, dy) = (angle.cos(), angle.sin());
            let mut far = [cx, cy];
            let mut r = 0.0;
            while r <= reach {
                let (x, y) = (cx + dx * r, cy + dy * r);
                let inside = x >= f64::from(b.left)
                    && y >= f64::from(b.top)
                    && x < f64::from(b.right + 1)
                    && y < f64::from(b.bottom + 1);
                if inside && paper[y as usize * width as usize + x as usize] == balloon {
                    // The far edge of the pixel, not its corner.
                    far = [x + dx * 0.5, y + dy * 0.5];
                }
                r += 0.5;
            }
            [far[0].round(), far[1].round()]
        })
        .collect()
}

/// Sorts blocks into reading order: rows of the page (a block's row is
/// where its centre is, in steps of a sixteenth of the page), and in a
/// row from the left, or from the right.
pub(super) fn order(blocks: &mut [Block], right_to_left: bool, height: u32) {
    let row_height = (height / 16).max(1);
    blocks.sort_by_key(|b| {
        let row = (b.bounds.top + b.bounds.bottom) / 2 / row_height;
        let across = if right_to_left {
            u32::MAX - b.bounds.right
        } else {
            b.bounds.left
        };
        (row, across)
    });
}
