//! Blocks around what a model found: the text lines of a line detector
//! (PP-OCR's DB model), or the text and balloon boxes of a box detector
//! (RT-DETR, YOLO). The model decides what is text instead of the glyph
//! rules; the balloons, regions, order and mask are found as [`detect`]
//! finds them, and a balloon box the model gives closes an outline the
//! page leaves open (a scan's broken line, a balloon running off the
//! panel).

use image::GrayImage;

use super::*;

/// What a box detector's box is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundKind {
    /// A balloon (its body and tail).
    Bubble,
    /// Text in a balloon.
    Text,
    /// Text outside balloons: a caption, a sign, a sound.
    FreeText,
}

/// A box a model found, in the page's pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub bounds: Bounds,
    pub kind: FoundKind,
}

/// The text blocks of `page` from text lines a model found: see
/// [`detect_found`], with every line `Text` and no balloon boxes.
pub fn detect_lines(page: &GrayImage, lines: &[Bounds], settings: &Settings) -> Detection {
    let found: Vec<Found> = lines
        .iter()
        .map(|&bounds| Found {
            bounds,
            kind: FoundKind::Text,
        })
        .collect();
    detect_found(page, &found, settings)
}

/// Where a line's block lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Home {
    /// The balloon box of this index: every line of it is one block.
    Bubble(usize),
    /// A balloon's paper component.
    Paper(u32),
    /// Nowhere: lines are joined by distance.
    Free,
}

/// The text blocks of `page` from what a model found. A text box shorter
/// across than `min_text_height` is dropped. A `Text` box whose centre a
/// `Bubble` box holds (the smallest, if several) belongs to it, and the
/// text of one bubble is one block, whose region is the paper around the
/// text inside the bubble's box (the box closing any gap in the outline).
/// Any other text box is in the balloon whose paper most of the paper
/// pixels inside it belong to; the lines of one balloon are one block,
/// and the rest (`FreeText` among them) are joined into blocks by
/// distance (a short block in the top or bottom margin is a page number).
/// A box's ink is the ink components that lie inside it (text light on
/// dark art has none: its block is found, its mask is empty). A bubble
/// with no text box in it gives nothing.
pub fn detect_found(page: &GrayImage, found: &[Found], settings: &Settings) -> Detection {
    let (width, height) = page.dimensions();
    let level = otsu(page).min(MAX_INK);
    let a = Analysis::of(page, level, settings);
    let usable = |l: &Bounds| l.right < width && l.bottom < height;
    let bubbles: Vec<Bounds> = found
        .iter()
        .filter(|f| f.kind == FoundKind::Bubble && usable(&f.bounds))
        .map(|f| f.bounds)
        .collect();
    let (lines, in_bubbles): (Vec<Bounds>, Vec<bool>) = found
        .iter()
        .filter(|f| f.kind != FoundKind::Bubble && usable(&f.bounds))
        .filter(|f| f.bounds.width().min(f.bounds.height()) >= settings.min_text_height)
        .map(|f| (f.bounds, f.kind == FoundKind::Text))
        .unzip();
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
    let bubble_of = |l: &Bounds| {
        let (cx, cy) = ((l.left + l.right) / 2, (l.top + l.bottom) / 2);
        bubbles
            .iter()
            .enumerate()
            .filter(|(_, b)| (b.left..=b.right).contains(&cx) && (b.top..=b.bottom).contains(&cy))
            .min_by_key(|(_, b)| u64::from(b.width()) * u64::from(b.height()))
            .map(|(i, _)| i)
    };
    let mut homes: Vec<(Home, Vec<usize>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let home = match bubble_of(line).filter(|_| in_bubbles[i]) {
            Some(b) => Home::Bubble(b),
            None => paper_of(line).map_or(Home::Free, Home::Paper),
        };
        match homes
            .iter_mut()
            .find(|(h, _)| *h != Home::Free && *h == home)
        {
            Some((_, members)) => members.push(i),
            None => homes.push((home, vec![i])),
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
    let mut groups: Vec<(Home, Vec<usize>)> = Vec::new();
    let mut free = Vec::new();
    for (home, members) in homes {
        match home {
            Home::Bubble(_) => groups.push((home, members)),
            Home::Paper(_) if clusters(&members, joined).len() == 1 => {
                groups.push((home, members));
            }
            _ => free.extend(members),
        }
    }
    groups.extend(
        clusters(&free, joined)
            .into_iter()
            .map(|block| (Home::Free, block)),
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
        .filter_map(|(home, members)| {
            let bounds = members
                .iter()
                .map(|i| lines[*i])
                .reduce(|x, y| x.union(&y))?;
            let ink: Vec<usize> = (0..owner.len())
                .filter(|id| owner[*id] != usize::MAX && members.contains(&owner[*id]))
                .collect();
            let in_margin = f64::from(bounds.bottom) < margin
                || f64::from(bounds.top) > f64::from(height) - margin;
            if home == Home::Free && settings.drop_page_numbers && in_margin && ink.len() <= 4 {
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
            let (paper, region) = match home {
                Home::Bubble(b) => (None, bubble_region(page, level, &bubbles[b], &bounds)),
                Home::Paper(p) => (Some(p), a.region(Some(p), &bounds)),
                Home::Free => (None, a.region(None, &bounds)),
            };
            let block = Block {
                region,
                bounds,
                in_balloon: home != Home::Free,
                glyphs: ink.len(),
                outlined: false,
            };
            Some((paper, across[across.len() / 2], block))
        })
        .collect();
    a.finish(page, kept, found, &[], settings)
}

/// A balloon's region from its box: along each of [`REGION_POINTS`] rays
/// from the centre of the `text` box, once out of that box, the last
/// paper pixel before the first ink (the balloon's outline) or the
/// `bubble` box's edge, whichever comes first: the box closes whatever
/// gap the outline has.
fn bubble_region(page: &GrayImage, level: u8, bubble: &Bounds, text: &Bounds) -> Vec<[f64; 2]> {
    let cx = f64::from(text.left + text.right + 1) / 2.0;
    let cy = f64::from(text.top + text.bottom + 1) / 2.0;
    let within = |b: &Bounds, x: f64, y: f64| {
        x >= f64::from(b.left)
            && y >= f64::from(b.top)
            && x < f64::from(b.right + 1)
            && y < f64::from(b.bottom + 1)
    };
    (0..REGION_POINTS)
        .map(|k| {
            let angle = k as f64 * std::f64::consts::TAU / REGION_POINTS as f64;
            let (dx, dy) = (angle.cos(), angle.sin());
            let mut last = [cx, cy];
            let mut r = 0.0;
            loop {
                let (x, y) = (cx + dx * r, cy + dy * r);
                if !within(bubble, x, y) {
                    break;
                }
                let out_of_text = !within(text, x, y);
                if out_of_text && page.get_pixel(x as u32, y as u32).0[0] <= level {
                    break;
                }
                last = [x, y];
                r += 0.5;
            }
            last
        })
        .collect()
}
