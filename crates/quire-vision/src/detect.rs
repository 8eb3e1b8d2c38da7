//! Text and balloons found by classical image analysis (the `detect`
//! engine's `builtin` backend), no model files:
//!
//! 1. Ink: pixels at or below the page's Otsu threshold, and never lighter
//!    than [`MAX_INK`] (grey art and tints are paper to the detector).
//! 2. Glyphs: 8-connected ink components of a letter's size
//!    (`min_text_height` to `max_text_height` tall, at most four heights
//!    wide, neither a solid block nor a hairline frame), not touching the
//!    page's edge.
//! 3. Balloons: 4-connected components of paper (what is not ink) that do
//!    not reach the page's edge, cover at most `max_balloon_share` of it,
//!    are light inside (a mean grey of at least [`LIGHT`], a standard
//!    deviation of at most [`MAX_SPREAD`]) and hold no art
//!    (no other ink component of [`ART_PIXELS`] or more inside them). A
//!    glyph belongs to the paper component most of the pixels just
//!    outside its box belong to.
//! 4. Blocks: the glyphs of one balloon are one block, whatever their
//!    layout, less those of a height unlike the block's (bits of art); glyphs elsewhere (on art, on the open page) are joined into
//!    lines and lines into blocks by distance, and such a block needs
//!    `min_free_glyphs` glyphs of a like height on light paper. A short
//!    free block in the top or bottom margin is a page number. All else
//!    is dropped.
//! 5. A block's box is its glyphs' box with a margin; its region is its
//!    balloon's outline (the farthest balloon pixel along
//!    [`REGION_POINTS`] rays from the balloon's centre), or that box
//!    when it has no balloon. The text mask holds the kept glyphs' pixels
//!    and the marks smaller than a letter among them (`keep_marks`).
//!
//! Blocks come in reading order: by rows of the page, and in a row from
//! the left, or from the right for a right-to-left page.

use image::{GrayImage, Luma};

pub use crate::labels::Bounds;
use crate::labels::{self, Component, NONE};

/// How many points a balloon's region has.
pub const REGION_POINTS: usize = 64;

/// The darkest mean grey a balloon's inside (or the paper behind a block
/// outside balloons) may have: balloons are white or lightly tinted.
pub const LIGHT: u8 = 180;

/// The largest standard deviation of grey inside a balloon: its paper is
/// even (white or one tint, with the letters' soft edges); a light panel
/// of gradients or a caption box open onto the art around it is not.
pub const MAX_SPREAD: f64 = 20.0;

/// Ink components at least this big that are not glyphs are art.
pub const ART_PIXELS: u64 = 200;

/// The lightest grey that can be ink. Lettering is near black on any
/// scan; a page with much grey art would otherwise put its Otsu level
/// above the art and take the art (and the text on it) for ink.
pub const MAX_INK: u8 = 110;

/// What the detector looks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The shortest glyph, in pixels: anything smaller is noise
    /// (screentone dots, specks).
    pub min_text_height: u32,
    /// The tallest glyph, in pixels: anything taller is art or a
    /// balloon's outline.
    pub max_text_height: u32,
    /// The largest share of the page a balloon may cover.
    pub max_balloon_share: f64,
    /// The fewest glyphs of a block outside balloons.
    pub min_free_glyphs: usize,
    /// Whether rows are read from the right (manga).
    pub right_to_left: bool,
    /// Whether a short block in the top or bottom margin (a page number)
    /// is dropped.
    pub drop_page_numbers: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_text_height: 6,
            max_text_height: 120,
            max_balloon_share: 0.25,
            min_free_glyphs: 3,
            right_to_left: false,
            drop_page_numbers: true,
        }
    }
}

/// A piece of text: one balloon's, or one block on art or the open page.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The text's box: its glyphs' box with a margin.
    pub bounds: Bounds,
    /// The balloon's outline, or the box's corners, as `[x, y]` points.
    pub region: Vec<[f64; 2]>,
    /// Whether the text is in a balloon.
    pub in_balloon: bool,
    /// How many glyphs (ink components) it holds.
    pub glyphs: usize,
}

/// What a page holds.
#[derive(Debug, Clone)]
pub struct Detection {
    /// In reading order.
    pub blocks: Vec<Block>,
    /// The kept glyphs' pixels (255), the page's `text` mask.
    pub mask: GrayImage,
}

/// The ink and paper of a page, and which paper components are balloons.
struct Analysis {
    width: u32,
    height: u32,
    /// The ink's level: at or below it is ink.
    level: u8,
    ink_labels: Vec<u32>,
    ink_parts: Vec<Component>,
    paper_labels: Vec<u32>,
    paper_parts: Vec<Component>,
    /// By paper component: whether it is a balloon.
    balloon: Vec<bool>,
}

impl Analysis {
    /// Steps 1 and 3 of the module doc.
    fn of(page: &GrayImage, level: u8, settings: &Settings) -> Analysis {
        let (width, height) = page.dimensions();
        let ink = |x: u32, y: u32| page.get_pixel(x, y).0[0] <= level;
        let (ink_labels, ink_parts) = labels::label(width, height, ink, true);
        let (paper_labels, paper_parts) = labels::label(width, height, |x, y| !ink(x, y), false);
        let page_area = f64::from(width) * f64::from(height);
        // Each paper component's mean grey and its spread: a balloon is
        // light inside and evenly so.
        let mut sums = vec![(0u64, 0u64); paper_parts.len()];
        for (i, label) in paper_labels.iter().enumerate() {
            if *label != NONE {
                let (x, y) = ((i % width as usize) as u32, (i / width as usize) as u32);
                let grey = u64::from(page.get_pixel(x, y).0[0]);
                let sum = &mut sums[*label as usize];
                sum.0 += grey;
                sum.1 += grey * grey;
            }
        }
        // Art inside a paper component: an ink component of some size, not
        // a glyph, that the component surrounds.
        let mut holds_art = vec![false; paper_parts.len()];
        for part in &ink_parts {
            if part.area >= ART_PIXELS
                && !is_glyph(part, settings)
                && let Some(paper) = around(&part.bounds, &paper_labels, width, height)
                && within(&part.bounds, &paper_parts[paper as usize].bounds)
            {
                holds_art[paper as usize] = true;
            }
        }
        let balloon = paper_parts
            .iter()
            .enumerate()
            .map(|(id, part)| {
                let (sum, squares) = sums[id];
                let n = part.area as f64;
                let mean = sum as f64 / n;
                let spread = (squares as f64 / n - mean * mean).max(0.0).sqrt();
                !part.on_edge
                    && part.area as f64 <= settings.max_balloon_share * page_area
                    && mean >= f64::from(LIGHT)
                    && spread <= MAX_SPREAD
                    && !holds_art[id]
            })
            .collect();
        Analysis {
            width,
            height,
            level,
            ink_labels,
            ink_parts,
            paper_labels,
            paper_parts,
            balloon,
        }
    }

    /// The balloon `b`'s outline, or `bounds`' corners without one.
    fn region(&self, balloon: Option<u32>, bounds: &Bounds) -> Vec<[f64; 2]> {
        match balloon {
            Some(p) => outline(
                p,
                &self.paper_parts[p as usize].bounds,
                &self.paper_labels,
                self.width,
            ),
            None => corners(bounds),
        }
    }

    /// The found blocks in reading order and the mask of their ink: the
    /// `kept` components and the marks among them.
    fn finish(
        &self,
        page: &GrayImage,
        mut kept: Vec<bool>,
        found: Vec<(Option<u32>, u32, Block)>,
        settings: &Settings,
    ) -> Detection {
        let (width, height) = (self.width, self.height);
        keep_marks(
            &mut kept,
            &self.ink_parts,
            &found,
            &self.paper_labels,
            (page, self.level),
        );
        let mut blocks: Vec<Block> = found.into_iter().map(|(_, _, block)| block).collect();
        order(&mut blocks, settings.right_to_left, height);
        let mut mask = GrayImage::new(width, height);
        for (i, label) in self.ink_labels.iter().enumerate() {
            if *label != NONE && kept[*label as usize] {
                let (x, y) = ((i % width as usize) as u32, (i / width as usize) as u32);
                mask.put_pixel(x, y, Luma([255]));
            }
        }
        Detection { blocks, mask }
    }
}

/// The text blocks of `page`; see the module doc.
pub fn detect(page: &GrayImage, settings: &Settings) -> Detection {
    let (width, height) = page.dimensions();
    let level = otsu(page).min(MAX_INK);
    let a = Analysis::of(page, level, settings);
    let is_balloon = |id: u32| a.balloon[id as usize];
    let (ink_parts, paper_labels) = (&a.ink_parts, &a.paper_labels);

    let glyphs: Vec<Glyph> = ink_parts
        .iter()
        .enumerate()
        .filter(|(_, part)| is_glyph(part, settings))
        .map(|(id, part)| Glyph {
            id: id as u32,
            bounds: part.bounds,
            paper: around(&part.bounds, paper_labels, width, height),
        })
        .collect();

    let mut groups: Vec<(Option<u32>, Vec<&Glyph>)> = Vec::new();
    let mut free = Vec::new();
    for glyph in &glyphs {
        match glyph.paper {
            Some(p) if is_balloon(p) => match groups.iter_mut().find(|(b, _)| *b == Some(p)) {
                Some((_, members)) => members.push(glyph),
                None => groups.push((Some(p), vec![glyph])),
            },
            _ => free.push(glyph),
        }
    }
    // A balloon holds one block: paper whose glyphs fall apart into
    // several blocks, with a stroke of ink or a wide gap between them
    // (balloons with broken outlines sharing it), is not one.
    let apart =
        |a: &Bounds, b: &Bounds| ink_between(a, b, 0, |x, y| page.get_pixel(x, y).0[0] <= level);
    let (whole, shared): (Vec<_>, Vec<_>) = groups.into_iter().partition(|(_, members)| {
        clusters(members, |a, b| {
            near_by(&a.bounds, &b.bounds, 2.5) && !apart(&a.bounds, &b.bounds)
        })
        .len()
            == 1
    });
    let mut groups = whole;
    free.extend(shared.into_iter().flat_map(|(_, members)| members));
    // Outside balloons, only glyphs on light paper are text (a letter-sized
    // bit of art on a dark panel is not); judged glyph by glyph, so that
    // art beside a caption does not take the caption with it.
    // The block then needs light paper as a whole too.
    free.retain(|g| on_light(&[g], page, level));
    groups.extend(
        free_blocks(&free, settings, height, &apart)
            .into_iter()
            .filter(|block| on_light(block, page, level))
            .map(|g| (None, g)),
    );

    let mut kept = vec![false; ink_parts.len()];
    // Each block, with its balloon and its letters' median height.
    let found: Vec<(Option<u32>, u32, Block)> = groups
        .into_iter()
        .map(|(balloon, members)| (balloon, like_height(members)))
        .filter(|(_, members)| !members.is_empty())
        .map(|(balloon, members)| {
            for g in &members {
                kept[g.id as usize] = true;
            }
            let text = members
                .iter()
                .map(|g| g.bounds)
                .reduce(|a, b| a.union(&b))
                .unwrap_or(members[0].bounds);
            let bounds = padded(&text, width, height);
            let mut heights: Vec<u32> = members.iter().map(|g| g.bounds.height()).collect();
            heights.sort_unstable();
            let block = Block {
                region: a.region(balloon, &bounds),
                bounds,
                in_balloon: balloon.is_some(),
                glyphs: members.len(),
            };
            (balloon, heights[heights.len() / 2], block)
        })
        .collect();
    a.finish(page, kept, found, settings)
}

/// The text blocks of `page` from text lines a model found (the `onnx`
/// backend's detector): the same balloons, regions, order and mask as
/// [`detect`], with the model deciding what is text instead of the
/// glyph rules. A line shorter across than `min_text_height` is dropped.
/// A line is in the balloon whose paper most of the paper pixels inside
/// its box belong to; the lines of one balloon are one block, and lines
/// outside balloons are joined into blocks by distance (a short block in
/// the top or bottom margin is a page number). A line's ink is the ink
/// components that lie inside its box (text light on dark art has none:
/// its block is found, its mask is empty).
pub fn detect_lines(page: &GrayImage, lines: &[Bounds], settings: &Settings) -> Detection {
    let (width, height) = page.dimensions();
    let level = otsu(page).min(MAX_INK);
    let a = Analysis::of(page, level, settings);
    let lines: Vec<Bounds> = lines
        .iter()
        .filter(|l| l.right < width && l.bottom < height)
        .filter(|l| l.width().min(l.height()) >= settings.min_text_height)
        .copied()
        .collect();
    // Each line's balloon, by the paper inside its box.
    let paper_of = |l: &Bounds| {
        let mut votes: Vec<(u32, usize)> = Vec::new();
        for y in l.top..=l.bottom {
            for x in l.left..=l.right {
                let label = a.paper_labels[y as usize * width as usize + x as usize];
                if label == NONE {
                    continue;
                }
                match votes.iter_mut().find(|(v, _)| *v == label) {
                    Some((_, n)) => *n += 1,
                    None => votes.push((label, 1)),
                }
            }
        }
        votes
            .into_iter()
            .max_by_key(|(v, n)| (*n, *v))
            .map(|(v, _)| v)
            .filter(|v| a.balloon[*v as usize])
    };
    let mut by_paper: Vec<(Option<u32>, Vec<usize>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let paper = paper_of(line);
        match by_paper
            .iter_mut()
            .find(|(b, _)| paper.is_some() && *b == paper)
        {
            Some((_, members)) => members.push(i),
            None => by_paper.push((paper, vec![i])),
        }
    }
    // Lines joined by distance, never across a stroke of ink. A balloon
    // holds one block: a "balloon" whose lines fall apart into several
    // is paper that several balloons with broken outlines share, and its
    // blocks are taken as blocks outside balloons.
    let joined = |x: &usize, y: &usize| {
        let (x, y) = (&lines[*x], &lines[*y]);
        // A line's box is grown around its letters: look for the stroke
        // a little way into both.
        let reach = x.height().min(x.width()).min(y.height().min(y.width())) / 8;
        lines_near(x, y) && !ink_between(x, y, reach, |px, py| page.get_pixel(px, py).0[0] <= level)
    };
    let mut groups: Vec<(Option<u32>, Vec<usize>)> = Vec::new();
    let mut free = Vec::new();
    for (paper, members) in by_paper {
        match paper {
            Some(p) if clusters(&members, joined).len() == 1 => groups.push((Some(p), members)),
            _ => free.extend(members),
        }
    }
    groups.extend(
        clusters(&free, joined)
            .into_iter()
            .map(|block| (None, block)),
    );
    // Each line's ink: the components inside its box (2 px of slack).
    let mut owner = vec![usize::MAX; a.ink_parts.len()];
    for (id, part) in a.ink_parts.iter().enumerate() {
        let b = part.bounds;
        owner[id] = lines
            .iter()
            .position(|l| {
                b.left + 2 >= l.left
                    && b.top + 2 >= l.top
                    && b.right <= l.right + 2
                    && b.bottom <= l.bottom + 2
            })
            .unwrap_or(usize::MAX);
    }
    let margin = f64::from(height) * 0.07;
    let mut kept = vec![false; a.ink_parts.len()];
    let found = groups
        .into_iter()
        .filter_map(|(balloon, members)| {
            let bounds = members
                .iter()
                .map(|i| lines[*i])
                .reduce(|x, y| x.union(&y))?;
            let ink: Vec<usize> = (0..owner.len())
                .filter(|id| owner[*id] != usize::MAX && members.contains(&owner[*id]))
                .collect();
            let in_margin = f64::from(bounds.bottom) < margin
                || f64::from(bounds.top) > f64::from(height) - margin;
            if balloon.is_none() && settings.drop_page_numbers && in_margin && ink.len() <= 4 {
                return None;
            }
            for id in &ink {
                kept[*id] = true;
            }
            // The letters' height: the lines' short side.
            let mut across: Vec<u32> = members
                .iter()
                .map(|i| lines[*i].width().min(lines[*i].height()))
                .collect();
            across.sort_unstable();
            let block = Block {
                region: a.region(balloon, &bounds),
                bounds,
                in_balloon: balloon.is_some(),
                glyphs: ink.len(),
            };
            Some((balloon, across[across.len() / 2], block))
        })
        .collect();
    a.finish(page, kept, found, settings)
}

/// `items` in groups: two are in one group when `joined` says so of them,
/// or of a chain of items between them (union-find), in first-seen order.
fn clusters<T: Copy>(items: &[T], joined: impl Fn(&T, &T) -> bool) -> Vec<Vec<T>> {
    let mut parent: Vec<usize> = (0..items.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..items.len() {
        for j in i + 1..items.len() {
            if joined(&items[i], &items[j]) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut out: Vec<Vec<T>> = Vec::new();
    let mut group_of_root = vec![usize::MAX; items.len()];
    for (i, item) in items.iter().enumerate() {
        let r = root(&mut parent, i);
        if group_of_root[r] == usize::MAX {
            group_of_root[r] = out.len();
            out.push(Vec::new());
        }
        out[group_of_root[r]].push(*item);
    }
    out
}

/// Whether a stroke of ink (a balloon's outline, a caption's or panel's
/// border, straight or wavy) runs between two boxes side by side or one
/// above the other: across the gap between them, widened by `reach` into
/// each, nine in ten of the rows (or columns) of the span they share
/// meet ink.
fn ink_between(a: &Bounds, b: &Bounds, reach: u32, ink: impl Fn(u32, u32) -> bool) -> bool {
    let crossed = |hits: usize, span: u32| hits * 10 >= span as usize * 9;
    // Side by side: each shared row must meet ink in the gap.
    let (left, right) = if a.right < b.left { (a, b) } else { (b, a) };
    if left.right < right.left {
        let (y0, y1) = (left.top.max(right.top), left.bottom.min(right.bottom));
        if y0 <= y1 {
            let from = (left.right + 1).saturating_sub(reach).max(left.left);
            let to = (right.left - 1 + reach).min(right.right);
            let hits = (y0..=y1)
                .filter(|y| (from..=to).any(|x| ink(x, *y)))
                .count();
            return crossed(hits, y1 - y0 + 1);
        }
    }
    // One above the other: each shared column must meet ink in the gap.
    let (top, bottom) = if a.bottom < b.top { (a, b) } else { (b, a) };
    if top.bottom < bottom.top {
        let (x0, x1) = (top.left.max(bottom.left), top.right.min(bottom.right));
        if x0 <= x1 {
            let from = (top.bottom + 1).saturating_sub(reach).max(top.top);
            let to = (bottom.top - 1 + reach).min(bottom.bottom);
            let hits = (x0..=x1)
                .filter(|x| (from..=to).any(|y| ink(*x, y)))
                .count();
            return crossed(hits, x1 - x0 + 1);
        }
    }
    false
}

/// Whether two text lines are neighbours in one block: lines of one
/// direction (both across or both down the page), the thicker at most
/// twice as thick as the other, whose spans overlap
/// across, no farther apart than the thinner one is thick; or pieces of
/// one line, overlapping by half along and no farther apart than the
/// thicker one is thick.
fn lines_near(a: &Bounds, b: &Bounds) -> bool {
    let down = |l: &Bounds| l.height() > l.width().saturating_mul(3) / 2;
    if down(a) != down(b) {
        return false;
    }
    // In the lines' own frame: spans along the text, then across it.
    let spans = |l: &Bounds| {
        let (x, y) = ((l.left, l.right), (l.top, l.bottom));
        if down(a) { (y, x) } else { (x, y) }
    };
    let (((a0, a1), (c0, c1)), ((b0, b1), (d0, d1))) = (spans(a), spans(b));
    let (ta, tb) = (c1 - c0 + 1, d1 - d0 + 1);
    // A title's line beside a balloon's is not one text.
    if ta.max(tb) > ta.min(tb).saturating_mul(2) {
        return false;
    }
    let next_line = overlap(a0, a1, b0, b1) > 0 && gap(c0, c1, d0, d1) <= ta.min(tb);
    let same_line = overlap(c0, c1, d0, d1) * 2 >= ta.min(tb) && gap(a0, a1, b0, b1) <= ta.max(tb);
    next_line || same_line
}

/// Marks smaller than a letter that belong to a block's text go in the
/// mask with its letters: the strokes of a kana written in pieces (こ,
/// ー), dakuten, dots, commas and accents. In a balloon, any ink no taller
/// or wider than 1.8 of its letters' median height that the balloon's
/// paper surrounds; outside balloons, such ink inside the block's box on
/// light paper (not the screentone of the art a caption sits beside).
fn keep_marks(
    kept: &mut [bool],
    ink_parts: &[Component],
    blocks: &[(Option<u32>, u32, Block)],
    paper: &[u32],
    (page, level): (&GrayImage, u8),
) {
    let (width, height) = page.dimensions();
    for (id, part) in ink_parts.iter().enumerate() {
        if kept[id] || part.on_edge {
            continue;
        }
        let b = part.bounds;
        let mark = |letter: u32| {
            let most = f64::from(letter) * 1.8;
            f64::from(b.width()) <= most && f64::from(b.height()) <= most
        };
        kept[id] = blocks.iter().any(|(balloon, letter, block)| {
            mark(*letter)
                && match balloon {
                    Some(p) => around(&b, paper, width, height) == Some(*p),
                    None => {
                        within(&b, &block.bounds)
                            && light_box(&padded(&b, width, height), page, level)
                    }
                }
        });
    }
}

struct Glyph {
    /// Its ink component.
    id: u32,
    bounds: Bounds,
    /// The paper component around it.
    paper: Option<u32>,
}

/// The level that best splits the page's histogram in two (Otsu's
/// method): at or below it is ink.
fn otsu(page: &GrayImage) -> u8 {
    let mut histogram = [0u64; 256];
    for pixel in page.pixels() {
        histogram[usize::from(pixel.0[0])] += 1;
    }
    let total: u64 = histogram.iter().sum();
    let sum: f64 = (0..256).map(|i| i as f64 * histogram[i] as f64).sum();
    let (mut below, mut below_sum, mut best, mut level) = (0u64, 0.0, -1.0, 127u8);
    for (i, &count) in histogram.iter().enumerate() {
        below += count;
        below_sum += i as f64 * count as f64;
        if below == 0 || below == total {
            continue;
        }
        let above = total - below;
        let mean_below = below_sum / below as f64;
        let mean_above = (sum - below_sum) / above as f64;
        let between = below as f64 * above as f64 * (mean_below - mean_above).powi(2);
        if between > best {
            best = between;
            level = i as u8;
        }
    }
    level
}

/// Whether an ink component is the size and shape of a letter.
/// The median height of the glyphs in `image` (a crop of one block, which
/// OCR scales to the size its reader likes); `None` when it has none.
pub fn glyph_height(image: &GrayImage, settings: &Settings) -> Option<u32> {
    let (width, height) = image.dimensions();
    let level = otsu(image).min(MAX_INK);
    let (_, parts) = labels::label(
        width,
        height,
        |x, y| image.get_pixel(x, y).0[0] <= level,
        true,
    );
    let mut heights: Vec<u32> = parts
        .iter()
        .filter(|part| is_glyph(part, settings))
        .map(|part| part.bounds.height())
        .collect();
    heights.sort_unstable();
    heights.get(heights.len() / 2).copied()
}

fn is_glyph(part: &Component, settings: &Settings) -> bool {
    let (w, h) = (part.bounds.width(), part.bounds.height());
    let fill = part.area as f64 / (f64::from(w) * f64::from(h));
    !part.on_edge
        && (settings.min_text_height..=settings.max_text_height).contains(&h)
        && w <= settings.max_text_height.saturating_mul(4)
        // Neither a hairline frame nor a solid block; a solid bar is a
        // letter when it is thin (I, l, the stem of !).
        && (fill >= 0.08 && (fill <= 0.92 || w.saturating_mul(3) <= h))
}

/// Whether `inner` lies inside `outer` without holding it (a balloon's
/// own outline holds the balloon).
fn within(inner: &Bounds, outer: &Bounds) -> bool {
    inner.left > outer.left
        && inner.top > outer.top
        && inner.right < outer.right
        && inner.bottom < outer.bottom
}

/// The paper component most of the pixels two pixels outside `b` belong to.
fn around(b: &Bounds, paper: &[u32], width: u32, height: u32) -> Option<u32> {
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
fn free_blocks<'a>(
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
fn like_height(mut glyphs: Vec<&Glyph>) -> Vec<&Glyph> {
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
fn on_light(block: &[&Glyph], page: &GrayImage, level: u8) -> bool {
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
fn light_box(b: &Bounds, page: &GrayImage, level: u8) -> bool {
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
    for (grey, count) in counts.iter().enumerate() {
        seen += count;
        if n > 0 && seen * 2 >= n {
            return grey >= usize::from(LIGHT);
        }
    }
    false
}

/// Whether two glyphs are neighbours in a line or in lines of one block.
fn near(a: &Bounds, b: &Bounds) -> bool {
    near_by(a, b, 1.0)
}

/// [`near`] with the gaps allowed `reach` times as wide: the lines of one
/// balloon may be set farther apart than those of a caption.
fn near_by(a: &Bounds, b: &Bounds, reach: f64) -> bool {
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
fn gap(a0: u32, a1: u32, b0: u32, b1: u32) -> u32 {
    if a1 < b0 {
        b0 - a1 - 1
    } else {
        a0.saturating_sub(b1 + 1)
    }
}

/// Pixels two spans share.
fn overlap(a0: u32, a1: u32, b0: u32, b1: u32) -> u32 {
    (a1.min(b1) + 1).saturating_sub(a0.max(b0))
}

/// `text` with a margin of a fifth of its height (at least 2 pixels),
/// kept inside the page.
fn padded(text: &Bounds, width: u32, height: u32) -> Bounds {
    let pad = (text.height() / 5).clamp(2, 16);
    Bounds {
        left: text.left.saturating_sub(pad),
        top: text.top.saturating_sub(pad),
        right: (text.right + pad).min(width - 1),
        bottom: (text.bottom + pad).min(height - 1),
    }
}

/// A box as a region: its four corners, clockwise from the top left.
fn corners(b: &Bounds) -> Vec<[f64; 2]> {
    let (l, t) = (f64::from(b.left), f64::from(b.top));
    let (r, bo) = (f64::from(b.right + 1), f64::from(b.bottom + 1));
    vec![[l, t], [r, t], [r, bo], [l, bo]]
}

/// A balloon's outline: along each of [`REGION_POINTS`] rays from the
/// centre of its box, the farthest pixel that is the balloon's (text and
/// specks inside it do not stop a ray).
fn outline(balloon: u32, b: &Bounds, paper: &[u32], width: u32) -> Vec<[f64; 2]> {
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
fn order(blocks: &mut [Block], right_to_left: bool, height: u32) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A white page.
    fn page(width: u32, height: u32) -> GrayImage {
        GrayImage::from_pixel(width, height, Luma([255]))
    }

    /// An ellipse's outline, 3 pixels thick, centred at (cx, cy).
    fn balloon(page: &mut GrayImage, cx: f64, cy: f64, rx: f64, ry: f64) {
        for y in 0..page.height() {
            for x in 0..page.width() {
                let d = ((f64::from(x) - cx) / rx).powi(2) + ((f64::from(y) - cy) / ry).powi(2);
                let outer = ((f64::from(x) - cx) / (rx + 3.0)).powi(2)
                    + ((f64::from(y) - cy) / (ry + 3.0)).powi(2);
                if d > 1.0 && outer <= 1.0 {
                    page.put_pixel(x, y, Luma([0]));
                }
            }
        }
    }

    /// A panel: a 3-pixel frame filled with `grey`.
    fn panel(page: &mut GrayImage, left: u32, top: u32, right: u32, bottom: u32, grey: u8) {
        for y in top..=bottom {
            for x in left..=right {
                let frame = x < left + 3 || x > right - 3 || y < top + 3 || y > bottom - 3;
                page.put_pixel(x, y, Luma([if frame { 0 } else { grey }]));
            }
        }
    }

    /// An `H`, 10 × 14 pixels, strokes 3 wide, at (x, y): 96 ink pixels.
    fn letter(page: &mut GrayImage, x: u32, y: u32) {
        for dy in 0..14 {
            for dx in 0..10 {
                if !(3..7).contains(&dx) || (6..9).contains(&dy) {
                    page.put_pixel(x + dx, y + dy, Luma([0]));
                }
            }
        }
    }

    /// `n` letters in a row from (x, y), 13 pixels apart.
    fn word(page: &mut GrayImage, x: u32, y: u32, n: u32) {
        for i in 0..n {
            letter(page, x + i * 13, y);
        }
    }

    #[test]
    fn each_balloon_is_one_block_and_noise_and_page_numbers_are_dropped() {
        let mut p = page(600, 800);
        // Two balloons side by side, their outlines touching, and a third.
        balloon(&mut p, 150.0, 150.0, 110.0, 70.0);
        word(&mut p, 95, 120, 6);
        word(&mut p, 105, 150, 5);
        balloon(&mut p, 375.0, 150.0, 110.0, 70.0);
        word(&mut p, 330, 140, 5);
        balloon(&mut p, 300.0, 450.0, 140.0, 90.0);
        word(&mut p, 220, 420, 9);
        word(&mut p, 240, 450, 7);
        word(&mut p, 250, 480, 5);
        // A caption on a light tint, no balloon; a dark panel with a
        // letter-sized mark in it (not text), and a light panel with art
        // and three letters in it (not a balloon: its letters are a block
        // of their own).
        for y in 600..700 {
            for x in 50..550 {
                p.put_pixel(x, y, Luma([210]));
            }
        }
        word(&mut p, 100, 640, 8);
        panel(&mut p, 20, 240, 180, 340, 150);
        letter(&mut p, 60, 280);
        panel(&mut p, 420, 240, 590, 340, 235);
        for y in 260..300 {
            for x in 430..450 {
                p.put_pixel(x, y, Luma([0]));
            }
        }
        word(&mut p, 470, 300, 3);
        // Screentone dots and a page number in the bottom margin.
        for y in (720..760).step_by(6) {
            for x in (50..550).step_by(6) {
                p.put_pixel(x, y, Luma([0]));
                p.put_pixel(x + 1, y, Luma([0]));
            }
        }
        word(&mut p, 290, 775, 2);

        let found = detect(&p, &Settings::default());
        let summary: Vec<(bool, usize)> = found
            .blocks
            .iter()
            .map(|b| (b.in_balloon, b.glyphs))
            .collect();
        assert_eq!(
            summary,
            [(true, 11), (true, 5), (false, 3), (true, 21), (false, 8)],
            "{:?}",
            found.blocks
        );
        // Every kept letter's 96 pixels are the mask, nothing else.
        let masked = found.mask.pixels().filter(|m| m.0[0] == 255).count();
        assert_eq!(masked, (11 + 5 + 3 + 21 + 8) * 96);
        // The regions follow the balloons' insides.
        let first = &found.blocks[0];
        assert_eq!(first.region.len(), REGION_POINTS);
        for [x, y] in &first.region {
            let d = ((x - 150.0) / 110.0).powi(2) + ((y - 150.0) / 70.0).powi(2);
            assert!(
                (0.9..=1.1).contains(&d),
                "({x}, {y}) is off the outline: {d}"
            );
        }
        assert_eq!(found.blocks[4].region.len(), 4, "a box outside balloons");
        // A box holds its text with a margin and stays in its balloon.
        let b = found.blocks[1].bounds;
        assert!(b.left < 330 && b.right > 330 + 4 * 13 + 9, "{b:?}");
        assert!(b.left > 265 && b.right < 485, "{b:?}");
    }

    #[test]
    fn a_right_to_left_page_reads_a_row_from_the_right() {
        let mut p = page(600, 400);
        balloon(&mut p, 150.0, 150.0, 110.0, 70.0);
        word(&mut p, 100, 140, 4);
        balloon(&mut p, 420.0, 160.0, 110.0, 70.0);
        word(&mut p, 380, 140, 3);
        let glyphs = |settings: &Settings| -> Vec<usize> {
            detect(&p, settings)
                .blocks
                .iter()
                .map(|b| b.glyphs)
                .collect()
        };
        assert_eq!(glyphs(&Settings::default()), [4, 3]);
        let rtl = Settings {
            right_to_left: true,
            ..Settings::default()
        };
        assert_eq!(glyphs(&rtl), [3, 4]);
    }

    #[test]
    fn a_blank_or_solid_page_has_no_text() {
        for level in [0, 128, 255] {
            let found = detect(
                &GrayImage::from_pixel(50, 40, Luma([level])),
                &Settings::default(),
            );
            assert!(found.blocks.is_empty());
        }
    }
}
