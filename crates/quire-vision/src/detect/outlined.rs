//! Light letters with a dark outline set straight on the art (captions,
//! titles, sound effects). The glyph rules see only the outlines, which
//! run into the art and into each other; the letters are found from
//! their insides instead:
//!
//! - a letter's inside is a paper component, light (its median grey at
//!   least [`LETTER_LIGHT`]) and thin for its height (no pixel of it
//!   farther than [`MAX_THICKNESS`] of the height from its edge: a
//!   stroke, not the blob of a counter or a pocket of art);
//! - a ring of ink closes it all round: the outline (taken to be at
//!   most a quarter of the height thick), or dark art or a dark box that
//!   light letters are set on.
//!
//! Letters of one height and one stroke close together are a block (see
//! [`blocks`]); its mask is each letter grown by its outline and a pixel
//! more, the marks among them (an `i`'s dot, punctuation) too.

use std::collections::VecDeque;

use image::{GrayImage, Luma};

use super::*;

/// The darkest median grey of a letter's inside.
const LETTER_LIGHT: u8 = 200;

/// The most a letter's inside may be thick (twice the farthest any of its
/// pixels lies from its edge), as a share of its height: a bold letter's
/// stroke is under a fifth of it, the counter of an `O` a third or more.
const MAX_THICKNESS: f64 = 0.4;

/// The least share of a ring around a letter that must be ink for the
/// outline to go on there; the first ring must be nearly all ink.
const RING_INK: f64 = 0.6;
const FIRST_RING_INK: f64 = 0.85;

/// One outlined letter or mark.
pub(super) struct Letter {
    pub(super) bounds: Bounds,
    /// Its inside's pixels (page indices).
    pub(super) inside: Vec<usize>,
    /// Its inside grown by its outline and a pixel more (page indices).
    pub(super) grown: Vec<usize>,
    /// How far its inside's deepest pixel lies from its edge: half its
    /// stroke.
    pub(super) stroke: u32,
}

/// The outlined letters and marks of the page analysed in `a`, less
/// those inside `taken` boxes (the counters of letters already found).
/// A letter's inside may pass for a small balloon; it holds no text.
pub(super) fn letters(
    page: &GrayImage,
    a: &Analysis,
    settings: &Settings,
    taken: &[Bounds],
) -> Vec<Letter> {
    let mut found = Vec::new();
    for (id, part) in a.paper_parts.iter().enumerate() {
        let b = part.bounds;
        let h = b.height();
        if part.on_edge
            || h < 2
            || h > settings.max_text_height
            || b.width() > settings.max_text_height.saturating_mul(4)
            || taken.iter().any(|t| within(&b, t))
        {
            continue;
        }
        if let Some(letter) = letter(id as u32, &b, a, page) {
            found.push(letter);
        }
    }
    found
}

/// The outlined letter (or mark) whose inside is paper component `id`,
/// boxed by `b`, if it is one.
fn letter(id: u32, b: &Bounds, a: &Analysis, page: &GrayImage) -> Option<Letter> {
    let (w, h) = (a.width as usize, a.height as usize);
    let most = (b.height() / 4).max(2);
    let pad = most + 2;
    let x0 = b.left.saturating_sub(pad) as usize;
    let y0 = b.top.saturating_sub(pad) as usize;
    let x1 = ((b.right + pad) as usize).min(w - 1);
    let y1 = ((b.bottom + pad) as usize).min(h - 1);
    let (ww, wh) = (x1 - x0 + 1, y1 - y0 + 1);
    let page_index = |l: usize| (y0 + l / ww) * w + x0 + l % ww;
    let ink = |l: usize| {
        let i = page_index(l);
        page.get_pixel((i % w) as u32, (i / w) as u32).0[0] <= a.level
    };
    let mine = |l: usize| a.paper_labels[page_index(l)] == id;
    // Outwards: each window pixel's distance (in 8-connected steps) from
    // the inside, and how much of each ring is ink.
    let mut out = vec![u32::MAX; ww * wh];
    let mut queue = VecDeque::new();
    let mut greys = [0u32; 256];
    let mut inside = Vec::new();
    for (l, dist) in out.iter_mut().enumerate() {
        if mine(l) {
            *dist = 0;
            queue.push_back(l);
            let i = page_index(l);
            inside.push(i);
            greys[usize::from(page.get_pixel((i % w) as u32, (i / w) as u32).0[0])] += 1;
        }
    }
    if median_grey(&greys) < LETTER_LIGHT {
        return None;
    }
    let mut rings = vec![(0u32, 0u32); pad as usize + 1];
    spread(&mut out, &mut queue, ww, wh, pad, |l, d| {
        rings[d as usize].1 += 1;
        rings[d as usize].0 += u32::from(ink(l));
    });
    let share = |r: usize| {
        let (ink, all) = rings[r];
        if all == 0 {
            0.0
        } else {
            f64::from(ink) / f64::from(all)
        }
    };
    if share(1) < FIRST_RING_INK {
        return None;
    }
    // Ink that goes on past a quarter of the height is dark art (or a
    // dark box) the letter sits on: the outline is taken to be that
    // quarter.
    let thick = ((1..rings.len())
        .take_while(|&r| share(r) >= RING_INK)
        .count() as u32)
        .min(most);
    // Inwards: how far the inside's pixels lie from its edge.
    let mut deep = vec![u32::MAX; ww * wh];
    let mut queue: VecDeque<usize> = (0..ww * wh).filter(|&l| !mine(l)).collect();
    for &l in &queue {
        deep[l] = 0;
    }
    let mut deepest = 0;
    spread(&mut deep, &mut queue, ww, wh, u32::MAX, |_, d| {
        deepest = deepest.max(d)
    });
    if f64::from(2 * deepest) > MAX_THICKNESS * f64::from(b.height()) + 2.0 {
        return None;
    }
    let grown = (0..ww * wh)
        .filter(|&l| out[l] <= thick + 1)
        .map(page_index)
        .collect();
    Some(Letter {
        bounds: *b,
        inside,
        grown,
        stroke: deepest,
    })
}

/// Breadth-first distances in 8-connected steps from the pixels already
/// at 0 in `dist` (queued), up to `limit`, calling `reached` on each
/// pixel given its distance.
fn spread(
    dist: &mut [u32],
    queue: &mut VecDeque<usize>,
    ww: usize,
    wh: usize,
    limit: u32,
    mut reached: impl FnMut(usize, u32),
) {
    while let Some(l) = queue.pop_front() {
        let d = dist[l];
        if d >= limit {
            continue;
        }
        let (x, y) = (l % ww, l / ww);
        let window = (0, 0, ww as i64 - 1, wh as i64 - 1);
        for (nx, ny) in crate::labels::neighbours((x as i64, y as i64), window) {
            let n = ny as usize * ww + nx as usize;
            if dist[n] == u32::MAX {
                dist[n] = d + 1;
                reached(n, d + 1);
                queue.push_back(n);
            }
        }
    }
}

fn median_grey(counts: &[u32; 256]) -> u8 {
    let n: u32 = counts.iter().sum();
    let mut seen = 0;
    for (grey, count) in counts.iter().enumerate() {
        seen += count;
        if seen * 2 >= n {
            return grey as u8;
        }
    }
    255
}

/// A block of outlined letters.
pub(super) struct Row {
    /// Its letters' median height.
    pub(super) letter: u32,
    /// Its letters' box.
    pub(super) text: Bounds,
    pub(super) letters: usize,
    /// Its mask's pixels (page indices): its letters and the marks within
    /// its box, grown.
    pub(super) mask: Vec<usize>,
}

impl Row {
    /// Where its letters and marks are gathered from: its letters' box
    /// grown by half a letter.
    pub(super) fn room(&self) -> Bounds {
        grow_box(&self.text, self.letter / 2)
    }
}

/// The fewest letters of a block of outlined letters.
const MIN_LETTERS: usize = 4;

/// The blocks of outlined letters: letters of one height and one stroke
/// (light pockets in art vary in both), no farther apart than 0.7 of
/// their height along a line or from line to line (words), and words on
/// one line up to 1.5 heights apart, [`MIN_LETTERS`] or more.
pub(super) fn blocks(letters: &[Letter], settings: &Settings, height: u32) -> Vec<Row> {
    let margin = f64::from(height) * 0.07;
    let candidates: Vec<usize> = (0..letters.len())
        .filter(|&i| letters[i].bounds.height() >= settings.min_text_height)
        .collect();
    let words = clusters(&candidates, |a, b| {
        near_by(&letters[*a].bounds, &letters[*b].bounds, 0.7)
    });
    // Words on one line, a wide space apart, are one block.
    let boxes: Vec<Bounds> = words
        .iter()
        .map(|w| {
            w.iter()
                .map(|&i| letters[i].bounds)
                .reduce(|a, b| a.union(&b))
                .unwrap_or(letters[w[0]].bounds)
        })
        .collect();
    let heights: Vec<u32> = words
        .iter()
        .map(|w| median(w.iter().map(|&i| letters[i].bounds.height())))
        .collect();
    let indices: Vec<usize> = (0..words.len()).collect();
    clusters(&indices, |a, b| {
        let (x, y) = (&boxes[*a], &boxes[*b]);
        let (ha, hb) = (heights[*a], heights[*b]);
        let short = f64::from(ha.min(hb));
        f64::from(overlap(x.top, x.bottom, y.top, y.bottom)) >= short * 0.7
            && f64::from(gap(x.left, x.right, y.left, y.right)) <= short * 1.5
            && f64::from(ha.max(hb)) <= short * 1.5
    })
    .into_iter()
    .map(|line| {
        line.iter()
            .flat_map(|&w| words[w].iter().copied())
            .collect()
    })
    .map(|members| alike(members, letters))
    .filter(|members| {
        let top = members
            .iter()
            .map(|&i| letters[i].bounds.top)
            .min()
            .unwrap_or(0);
        let bottom = members
            .iter()
            .map(|&i| letters[i].bounds.bottom)
            .max()
            .unwrap_or(0);
        let in_margin = f64::from(bottom) < margin || f64::from(top) > f64::from(height) - margin;
        members.len() >= MIN_LETTERS
            && !(settings.drop_page_numbers && in_margin && members.len() <= 4)
            && dense(members, letters)
    })
    .map(|members| {
        let letter_height = median(members.iter().map(|&i| letters[i].bounds.height()));
        let text = members
            .iter()
            .map(|&i| letters[i].bounds)
            .reduce(|a, b| a.union(&b))
            .unwrap_or(letters[members[0]].bounds);
        let mut pixels: Vec<usize> = Vec::new();
        for &i in &members {
            pixels.extend(&letters[i].grown);
        }
        // The marks: small insides within the row's box.
        let room = grow_box(&text, letter_height / 2);
        for l in letters {
            if l.bounds.height() < settings.min_text_height && within(&l.bounds, &room) {
                pixels.extend(&l.grown);
            }
        }
        Row {
            letter: letter_height,
            text,
            letters: members.len(),
            mask: pixels,
        }
    })
    .collect()
}

/// The members whose height is within a third of their median's, and
/// whose stroke is from 0.6 to 1.6 times the median stroke.
fn alike(mut members: Vec<usize>, letters: &[Letter]) -> Vec<usize> {
    if members.is_empty() {
        return members;
    }
    let height = f64::from(median(members.iter().map(|&i| letters[i].bounds.height())));
    let stroke = f64::from(median(members.iter().map(|&i| letters[i].stroke)).max(1));
    members.retain(|&i| {
        let (h, s) = (
            f64::from(letters[i].bounds.height()),
            f64::from(letters[i].stroke.max(1)),
        );
        h >= height * 0.67 && h <= height * 1.5 && s >= stroke * 0.6 && s <= stroke * 1.6
    });
    members
}

/// Whether the letters' boxes cover [`DENSE`] of the box around them: a
/// caption's letters stand close in rows; pockets of light in the art
/// that pass for letters lie scattered.
fn dense(members: &[usize], letters: &[Letter]) -> bool {
    let area = |b: &Bounds| f64::from(b.width()) * f64::from(b.height());
    let Some(all) = members
        .iter()
        .map(|&i| letters[i].bounds)
        .reduce(|a, b| a.union(&b))
    else {
        return false;
    };
    let covered: f64 = members.iter().map(|&i| area(&letters[i].bounds)).sum();
    covered >= DENSE * area(&all)
}

/// See [`dense`].
const DENSE: f64 = 0.3;

fn median(values: impl Iterator<Item = u32>) -> u32 {
    let mut values: Vec<u32> = values.collect();
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

fn grow_box(b: &Bounds, by: u32) -> Bounds {
    Bounds {
        left: b.left.saturating_sub(by),
        top: b.top.saturating_sub(by),
        right: b.right + by,
        bottom: b.bottom + by,
    }
}

/// `image` (a cut of one block) with its outlined letters black on white
/// and nothing else, for OCR; `None` when its text is not outlined
/// letters (ordinary glyphs are found in it, or no row of outlined
/// ones).
pub fn letters_for_reading(image: &GrayImage, settings: &Settings) -> Option<GrayImage> {
    let (found, letters, rooms) = detect_outlined(image, settings);
    if rooms.is_empty() || found.blocks.iter().any(|b| !b.outlined) {
        return None;
    }
    let (width, height) = image.dimensions();
    let mut out = GrayImage::from_pixel(width, height, Luma([255]));
    for l in &letters {
        if rooms.iter().any(|r| within(&l.bounds, r)) {
            for &i in &l.inside {
                out.put_pixel(i as u32 % width, i as u32 / width, Luma([0]));
            }
        }
    }
    Some(out)
}
