//! Connected components of the pixels a predicate picks, with what the
//! detector asks of each: its area, its box, whether it reaches the edge
//! of the page.

/// No component: a pixel the predicate did not pick.
pub(crate) const NONE: u32 = u32::MAX;

/// A box in pixels, edges included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub left: u32,
    pub top: u32,
    pub right: u32,
    pub bottom: u32,
}

impl Bounds {
    fn at(x: u32, y: u32) -> Bounds {
        Bounds {
            left: x,
            top: y,
            right: x,
            bottom: y,
        }
    }

    pub fn width(&self) -> u32 {
        self.right - self.left + 1
    }

    pub fn height(&self) -> u32 {
        self.bottom - self.top + 1
    }

    fn take(&mut self, x: u32, y: u32) {
        self.left = self.left.min(x);
        self.right = self.right.max(x);
        self.top = self.top.min(y);
        self.bottom = self.bottom.max(y);
    }

    /// The smallest box holding both.
    pub fn union(&self, other: &Bounds) -> Bounds {
        Bounds {
            left: self.left.min(other.left),
            top: self.top.min(other.top),
            right: self.right.max(other.right),
            bottom: self.bottom.max(other.bottom),
        }
    }

    /// The box both hold, if they meet.
    pub fn intersection(&self, other: &Bounds) -> Option<Bounds> {
        let b = Bounds {
            left: self.left.max(other.left),
            top: self.top.max(other.top),
            right: self.right.min(other.right),
            bottom: self.bottom.min(other.bottom),
        };
        (b.left <= b.right && b.top <= b.bottom).then_some(b)
    }
}

/// The 8 neighbours of `(x, y)` within `[left, right] × [top, bottom]`.
pub(crate) fn neighbours(
    (x, y): (i64, i64),
    (left, top, right, bottom): (i64, i64, i64, i64),
) -> impl Iterator<Item = (i64, i64)> {
    [
        (-1, -1),
        (0, -1),
        (1, -1),
        (-1, 0),
        (1, 0),
        (-1, 1),
        (0, 1),
        (1, 1),
    ]
    .into_iter()
    .map(move |(dx, dy)| (x + dx, y + dy))
    .filter(move |&(nx, ny)| nx >= left && ny >= top && nx <= right && ny <= bottom)
}

/// One component.
#[derive(Debug, Clone)]
pub(crate) struct Component {
    pub area: u64,
    pub bounds: Bounds,
    /// Whether a pixel of it is on the image's edge.
    pub on_edge: bool,
}

/// The components of the pixels `picked` says yes to, `eight`-connected
/// or 4-connected: each pixel's component (or [`NONE`]) and the
/// components in the order they were found (top to bottom).
pub(crate) fn label(
    width: u32,
    height: u32,
    picked: impl Fn(u32, u32) -> bool,
    eight: bool,
) -> (Vec<u32>, Vec<Component>) {
    let (w, h) = (width as usize, height as usize);
    let mut labels = vec![NONE; w * h];
    let mut components = Vec::new();
    let mut stack = Vec::new();
    for y in 0..height {
        for x in 0..width {
            let i = y as usize * w + x as usize;
            if labels[i] != NONE || !picked(x, y) {
                continue;
            }
            let id = components.len() as u32;
            let mut component = Component {
                area: 0,
                bounds: Bounds::at(x, y),
                on_edge: false,
            };
            labels[i] = id;
            stack.push((x, y));
            while let Some((cx, cy)) = stack.pop() {
                component.area += 1;
                component.bounds.take(cx, cy);
                if cx == 0 || cy == 0 || cx + 1 == width || cy + 1 == height {
                    component.on_edge = true;
                }
                for (dx, dy) in NEIGHBOURS.iter().take(if eight { 8 } else { 4 }) {
                    let (nx, ny) = (i64::from(cx) + dx, i64::from(cy) + dy);
                    if nx < 0 || ny < 0 || nx >= i64::from(width) || ny >= i64::from(height) {
                        continue;
                    }
                    let (nx, ny) = (nx as u32, ny as u32);
                    let n = ny as usize * w + nx as usize;
                    if labels[n] == NONE && picked(nx, ny) {
                        labels[n] = id;
                        stack.push((nx, ny));
                    }
                }
            }
            components.push(component);
        }
    }
    debug_assert_eq!(labels.len(), w * h);
    (labels, components)
}

/// The four edge neighbours first, then the corners.
const NEIGHBOURS: [(i64, i64); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_join_only_when_eight_connected() {
        // Two pixels touching at a corner, and one on the edge.
        let picked = |x: u32, y: u32| matches!((x, y), (1, 1) | (2, 2) | (4, 0));
        let (_, four) = label(5, 4, picked, false);
        assert_eq!(four.len(), 3);
        let (labels, eight) = label(5, 4, picked, true);
        assert_eq!(eight.len(), 2);
        assert_eq!(labels[5 + 1], labels[2 * 5 + 2]);
        // Found top to bottom: the edge pixel's row comes first.
        assert_eq!((eight[0].area, eight[0].on_edge), (1, true));
        let pair = &eight[1];
        assert_eq!(
            (pair.area, pair.bounds.width(), pair.on_edge),
            (2, 2, false)
        );
    }
}
