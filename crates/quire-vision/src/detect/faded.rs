//! The faded parts of a block's letters, for its mask.

use image::{GrayImage, Luma};

use super::Bounds;

/// How much darker than a block's paper a pixel next to its letters must
/// be to be a faded part of them.
const FADED: u8 = 64;

/// The faded parts of a block's letters added to `mask`: pixels in
/// `bounds` lighter than ink but [`FADED`] darker than the block's paper
/// (the median of its pixels lighter than ink), reached from the mask
/// through such pixels. A worn print's thin strokes and a scan's soft
/// edges are grey, not ink; left out of the mask, `clean` would leave
/// them as lines through the new lettering.
pub(super) fn faded_edges(page: &GrayImage, mask: &mut GrayImage, bounds: &Bounds, level: u8) {
    let Some(paper) = super::boxes::paper_grey(bounds, page, level) else {
        return;
    };
    let Some(limit) = paper.checked_sub(FADED).filter(|l| *l > level) else {
        return;
    };
    let faded = |x: u32, y: u32| {
        let grey = page.get_pixel(x, y).0[0];
        grey > level && grey <= limit
    };
    let mut queue: Vec<(u32, u32)> = Vec::new();
    for y in bounds.top..=bounds.bottom {
        for x in bounds.left..=bounds.right {
            if mask.get_pixel(x, y).0[0] > 0 {
                queue.push((x, y));
            }
        }
    }
    let within = (
        i64::from(bounds.left),
        i64::from(bounds.top),
        i64::from(bounds.right),
        i64::from(bounds.bottom),
    );
    while let Some((x, y)) = queue.pop() {
        for (nx, ny) in crate::labels::neighbours((i64::from(x), i64::from(y)), within) {
            let (nx, ny) = (nx as u32, ny as u32);
            if mask.get_pixel(nx, ny).0[0] == 0 && faded(nx, ny) {
                mask.put_pixel(nx, ny, Luma([255]));
                queue.push((nx, ny));
            }
        }
    }
}
