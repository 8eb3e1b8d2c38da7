//! Text and balloons found by classical image analysis (the `detect`
//! engine's `builtin` backend), no model files:
//!
//! 1. Ink: pixels at or below the page's Otsu threshold, and never lighter
//!    than [`MAX_INK`] (grey art and tints are paper to the detector).
//! 2. Glyphs: 8-connected ink components of a letter's size
//!    (`min_text_height` to `max_text_height` tall, at most four heights
//!    wide, neither a solid block nor a hairline frame), not touching the
//!    page's edge, and not on a screentone's paper (paper holding many
//!    specks of one size: its dots, merged in pairs, pass for letters).
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
//!    is dropped. Light letters with a dark outline on the art, which the
//!    glyph rules cannot see, are found from their insides
//!    (`outlined.rs`) and make blocks of their own.
//! 5. A block's box is its glyphs' box with a margin; its region is its
//!    balloon's outline (the farthest balloon pixel along
//!    [`REGION_POINTS`] rays from the balloon's centre), or that box
//!    when it has no balloon or the "balloon" is over
//!    60 times the box (a panel's paper). The text mask holds the kept glyphs' pixels
//!    and the marks smaller than a letter among them (`keep_marks`).
//!
//! Blocks come in reading order: by rows of the page, and in a row from
//! the left, or from the right for a right-to-left page.

use image::{GrayImage, Luma};

pub use crate::labels::Bounds;
use crate::labels::{self, Component, NONE};

mod boxes;
use boxes::*;
mod faded;
use faded::faded_edges;
mod screentone;
use screentone::screentone;
mod outlined;
pub use outlined::letters_for_reading;
mod lines;
pub use lines::{Found, FoundKind, detect_found, detect_lines};

/// The most times a balloon's box may be its text's (with its margin):
/// a word in a roomy balloon is some 30 times; a panel's paper around a
/// few specks, hundreds.
const MAX_BALLOON_TO_TEXT: u64 = 60;

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
    /// Whether its letters are light with a dark outline, on the art
    /// (`outlined.rs`).
    pub outlined: bool,
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
    /// By paper component: whether it is speckled (a screentone's paper).
    speckled: Vec<bool>,
    /// By ink component: the paper component around it ([`around`]).
    ink_paper: Vec<Option<u32>>,
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
        // The specks (ink smaller than a letter) each paper component
        // holds, by their size.
        let ink_paper: Vec<Option<u32>> = ink_parts
            .iter()
            .map(|part| around(&part.bounds, &paper_labels, width, height))
            .collect();
        let mut holds: Vec<Vec<(u32, u32)>> = vec![Vec::new(); paper_parts.len()];
        let small = settings.min_text_height;
        for (part, paper) in ink_parts.iter().zip(&ink_paper) {
            if let Some(paper) = paper
                && part.bounds.height() < small
                && part.bounds.width() < small
            {
                holds[*paper as usize].push((part.bounds.width(), part.bounds.height()));
            }
        }
        let speckled = paper_parts
            .iter()
            .zip(&holds)
            .map(|(part, specks)| screentone(part.area, specks))
            .collect();
        for (part, paper) in ink_parts.iter().zip(&ink_paper) {
            if part.area >= ART_PIXELS
                && !is_glyph(part, settings)
                && let Some(paper) = *paper
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
            speckled,
            ink_paper,
        }
    }

    /// The balloon `b`'s outline, or `bounds`' corners without one, or
    /// when the "balloon" is many times the text's size: light paper that
    /// big around a few letters is a panel (screentone's paper between its
    /// dots, a sky), and a region never covers a panel (spec 13, "Each
    /// balloon once").
    fn region(&self, balloon: Option<u32>, bounds: &Bounds) -> Vec<[f64; 2]> {
        let area = |b: &Bounds| u64::from(b.width()) * u64::from(b.height());
        let balloon = balloon.filter(|p| {
            area(&self.paper_parts[*p as usize].bounds) <= MAX_BALLOON_TO_TEXT * area(bounds)
        });
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
        outlined: &[usize],
        settings: &Settings,
    ) -> Detection {
        let (width, height) = (self.width, self.height);
        keep_marks(
            &mut kept,
            (&self.ink_parts, &self.ink_paper),
            &found,
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
        for block in blocks.iter().filter(|b| !b.outlined) {
            faded_edges(page, &mut mask, &block.bounds, self.level);
        }
        for &i in outlined {
            mask.put_pixel(i as u32 % width, i as u32 / width, Luma([255]));
        }
        Detection { blocks, mask }
    }
}

/// The text blocks of `page`; see the module doc.
pub fn detect(page: &GrayImage, settings: &Settings) -> Detection {
    detect_outlined(page, settings).0
}

/// [`detect`], with the outlined letters it saw (`outlined.rs`): each
/// one, and the box each of its blocks gathers them from.
fn detect_outlined(
    page: &GrayImage,
    settings: &Settings,
) -> (Detection, Vec<outlined::Letter>, Vec<Bounds>) {
    let (width, height) = page.dimensions();
    let level = otsu(page).min(MAX_INK);
    let a = Analysis::of(page, level, settings);
    let is_balloon = |id: u32| a.balloon[id as usize];
    let ink_parts = &a.ink_parts;

    let glyphs: Vec<Glyph> = ink_parts
        .iter()
        .enumerate()
        .filter(|(_, part)| is_glyph(part, settings))
        .map(|(id, part)| Glyph {
            id: id as u32,
            bounds: part.bounds,
            paper: a.ink_paper[id],
        })
        // A screentone's dots, merged in pairs where two screens cross,
        // are no letters.
        .filter(|g| !g.paper.is_some_and(|p| a.speckled[p as usize]))
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
    // (balloons with broken outlines sharing it), is not one. Its
    // letters must hang together; the smaller glyphs and marks in it
    // (a dakuten, the strokes of a kana like こ, each too short for a
    // letter) bridge the gaps, or a column of Japanese would fall apart
    // at every one.
    let apart =
        |a: &Bounds, b: &Bounds| ink_between(a, b, 0, |x, y| page.get_pixel(x, y).0[0] <= level);
    let marks = balloon_marks(&a, settings, &groups);
    let (whole, shared): (Vec<_>, Vec<_>) = groups.into_iter().partition(|(balloon, members)| {
        // The letters (of the block's height) must hang together; a
        // dakuten or a stroke too small to be one only bridges.
        let letters = like_height(members.clone());
        let mut items: Vec<(bool, Bounds)> = members
            .iter()
            .map(|g| (letters.iter().any(|l| l.id == g.id), g.bounds))
            .collect();
        if let Some(p) = balloon {
            items.extend(
                marks
                    .iter()
                    .filter(|(q, _)| q == p)
                    .map(|(_, b)| (false, *b)),
            );
        }
        clusters(&items, |a, b| {
            near_by(&a.1, &b.1, 2.5) && !apart(&a.1, &b.1)
        })
        .iter()
        .filter(|cluster| cluster.iter().any(|(glyph, _)| *glyph))
        .count()
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
    let mut found: Vec<(Option<u32>, u32, Block)> = groups
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
                outlined: false,
            };
            (balloon, heights[heights.len() / 2], block)
        })
        .collect();
    let (mask, letters, rooms) = outlined_blocks(page, &a, &mut found, settings);
    (a.finish(page, kept, found, &mask, settings), letters, rooms)
}

/// The blocks of light letters outlined in ink on the art
/// (`outlined.rs`) added to `found`, where none of `found` is: the
/// pixels of their masks, the letters, and each block's room.
fn outlined_blocks(
    page: &GrayImage,
    a: &Analysis,
    found: &mut Vec<(Option<u32>, u32, Block)>,
    settings: &Settings,
) -> (Vec<usize>, Vec<outlined::Letter>, Vec<Bounds>) {
    let taken: Vec<Bounds> = found.iter().map(|(_, _, b)| b.bounds).collect();
    let letters = outlined::letters(page, a, settings, &taken);
    let mut mask = Vec::new();
    let mut rooms = Vec::new();
    for row in outlined::blocks(&letters, settings, a.height) {
        rooms.push(row.room());
        let bounds = padded(&row.text, a.width, a.height);
        found.push((
            None,
            row.letter,
            Block {
                region: corners(&bounds),
                bounds,
                in_balloon: false,
                glyphs: row.letters,
                outlined: true,
            },
        ));
        mask.extend(row.mask);
    }
    (mask, letters, rooms)
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
    (ink_parts, ink_paper): (&[Component], &[Option<u32>]),
    blocks: &[(Option<u32>, u32, Block)],
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
                    Some(p) => ink_paper[id] == Some(*p),
                    None => {
                        within(&b, &block.bounds)
                            && light_box(&padded(&b, width, height), page, level)
                    }
                }
        });
    }
}

/// The ink smaller than a glyph (at least 4 pixels) in the balloons of
/// `groups`, by balloon.
fn balloon_marks(
    a: &Analysis,
    settings: &Settings,
    groups: &[(Option<u32>, Vec<&Glyph>)],
) -> Vec<(u32, Bounds)> {
    let balloons: Vec<u32> = groups.iter().filter_map(|(b, _)| *b).collect();
    a.ink_parts
        .iter()
        .zip(&a.ink_paper)
        .filter(|(part, _)| {
            part.area >= 4
                && !part.on_edge
                && !is_glyph(part, settings)
                && part.bounds.height() <= settings.max_text_height
                && part.bounds.width() <= settings.max_text_height
        })
        .filter_map(|(part, paper)| {
            let paper = (*paper)?;
            balloons.contains(&paper).then_some((paper, part.bounds))
        })
        .collect()
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

#[cfg(test)]
mod tests;
