//! Setting one text node in its box: the largest size, from the node's
//! `fontSize` (or what the box allows) down to `render.min_font_size`, at
//! which the text fits on whole words, else with lines broken by
//! Unicode's rules (cosmic-text: between words in Latin text, after a
//! word's hyphen, between any two characters in CJK text),
//! centred; or, for `vertical`, in columns top to bottom, right to left,
//! with the punctuation that has vertical forms in those forms. Text that
//! does not fit at the smallest size is drawn at it, clipped to the box.

use cosmic_text::{Align, Attrs, Buffer, Color, Family, Metrics, Shaping, Wrap};
use image::{Rgba, RgbaImage};

use super::fonts::Shaper;
use super::interior::Interior;
use super::paint::{Rect, blend};

/// What to set and how.
pub(super) struct Text<'a> {
    pub(super) content: &'a str,
    /// `style.fontFamily`; the default sans-serif when `None`.
    pub(super) family: Option<&'a str>,
    /// `style.fontSize` in pixels: the size to start from.
    pub(super) size: Option<f32>,
    pub(super) color: Rgba<u8>,
    pub(super) stroke: Option<Rgba<u8>>,
    pub(super) vertical: bool,
    /// 100 to 900, as CSS.
    pub(super) weight: u16,
    pub(super) italic: bool,
    /// How rows sit across their line (columns are always centred).
    pub(super) align: Align,
    /// The target language (BCP 47): where its words may break.
    pub(super) locale: &'a str,
}

/// How it went.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Set {
    pub(super) size: f32,
    /// False when the text did not fit even at the smallest size and was
    /// clipped.
    pub(super) fits: bool,
    /// Characters no font had a glyph for.
    pub(super) missing: Vec<char>,
}

/// The largest size any text starts from when its node names none.
const MAX_AUTO_SIZE: f32 = 96.0;
const LINE_HEIGHT: f32 = 1.2;
/// Vertical text: each character's cell is this many sizes high, each
/// column this many wide.
const CELL_HEIGHT: f32 = 1.08;
const COLUMN_WIDTH: f32 = 1.3;

/// Sets `text` in `rect` of `image`.
pub(super) fn set(
    shaper: &mut Shaper,
    image: &mut RgbaImage,
    rect: Rect,
    text: &Text<'_>,
    min_size: f32,
) -> Set {
    let inner = inset(rect);
    let (w, h) = (inner.w as f32, inner.h as f32);
    let start = text
        .size
        .unwrap_or_else(|| h.min(MAX_AUTO_SIZE))
        .max(min_size);
    let layout = |shaper: &mut Shaper, size: f32, strict: bool| {
        if text.vertical {
            Layout::vertical(shaper, text, size, w, h)
        } else {
            Layout::horizontal(shaper, text, size, w, h, strict)
        }
    };
    // The largest size at which `good` holds, by halving the range (half
    // pixels).
    let steps = ((start - min_size) * 2.0).floor().max(0.0);
    let size_at = |i: f32| min_size + i / 2.0;
    let largest = |shaper: &mut Shaper, good: &dyn Fn(&Layout) -> bool| {
        if good(&layout(shaper, size_at(steps), true)) {
            return Some(steps);
        }
        let (mut lo, mut hi) = (0.0f32, steps);
        let mut best = None;
        while lo <= hi {
            let mid = ((lo + hi) / 2.0).floor();
            if good(&layout(shaper, size_at(mid), true)) {
                best = Some(mid);
                lo = mid + 1.0;
            } else if mid == 0.0 {
                break;
            } else {
                hi = mid - 1.0;
            }
        }
        best
    };
    // Whole words first ("VAS-TU" is not split at its hyphen while a
    // smaller size keeps it whole), then any break Unicode allows, then,
    // too long even so, breaks anywhere at the smallest size.
    let best = largest(shaper, &|l: &Layout| l.fits && !l.breaks_a_word())
        .or_else(|| largest(shaper, &|l: &Layout| l.fits));
    let (size, fitted) = match best {
        Some(i) => (size_at(i), layout(shaper, size_at(i), true)),
        None => (min_size, layout(shaper, min_size, false)),
    };
    let (fits, missing) = (fitted.fits, fitted.missing());
    fitted.draw(shaper, image, rect, inner, text);
    Set {
        size,
        fits,
        missing,
    }
}

/// Sets horizontal `text` inside `shape` (a balloon's outline, in the
/// image's pixels), in its [`Interior`] (the tail cut off): the largest
/// size at which its words fit on lines as wide as the body is at each
/// line's height (an ellipse's first and last lines are short), the
/// lines centred across and the block centred on the body, clear of the
/// outline (see [`shaped`]).
/// Words are broken only when no size from `min_size` up fits them whole,
/// with a hyphen at the line's end (each Chinese or Japanese character is
/// a word); a line break in the text is kept. `None` when the text is
/// vertical or nothing fits even so: the caller sets it in its box.
pub(super) fn set_in_shape(
    shaper: &mut Shaper,
    image: &mut RgbaImage,
    shape: &[[f64; 2]],
    interior: &Interior,
    text: &Text<'_>,
    min_size: f32,
) -> Option<Set> {
    if text.vertical || shape.len() < 3 {
        return None;
    }
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0.0f64, 0.0f64);
    for [x, y] in shape {
        (x0, y0) = (x0.min(x.clamp(0.0, w)), y0.min(y.clamp(0.0, h)));
        (x1, y1) = (x1.max(x.clamp(0.0, w)), y1.max(y.clamp(0.0, h)));
    }
    // Clamped to the image: the casts cannot truncate.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let clip = Rect {
        x: x0.floor() as u32,
        y: y0.floor() as u32,
        w: (x1.ceil() - x0.floor()) as u32,
        h: (y1.ceil() - y0.floor()) as u32,
    };
    if clip.w == 0 || clip.h == 0 {
        return None;
    }
    let words = words(text.content);
    let start = text
        .size
        .unwrap_or_else(|| (clip.h as f32).min(MAX_AUTO_SIZE))
        .max(min_size);
    let steps = ((start - min_size) * 2.0).floor().max(0.0);
    let size_at = |i: f32| min_size + i / 2.0;
    // The largest size that fits, by halving the range (half pixels):
    // on whole words first, then with long words hyphenated.
    let largest = |shaper: &mut Shaper, hyphenate: bool| {
        let mut fit =
            |i: f32| shaped(shaper, text, &words, interior, size_at(i), hyphenate).map(|l| (i, l));
        if let Some(best) = fit(steps) {
            return Some(best);
        }
        let (mut lo, mut hi, mut best) = (0.0f32, steps - 1.0, None);
        while lo <= hi {
            let mid = ((lo + hi) / 2.0).floor();
            match fit(mid) {
                Some(found) => {
                    best = Some(found);
                    lo = mid + 1.0;
                }
                None if mid == 0.0 => break,
                None => hi = mid - 1.0,
            }
        }
        best
    };
    let (i, layout) = largest(shaper, false).or_else(|| largest(shaper, true))?;
    let missing = layout.missing();
    let origin = Rect {
        x: 0,
        y: 0,
        w: image.width(),
        h: image.height(),
    };
    layout.draw(shaper, image, clip, origin, text);
    Some(Set {
        size: size_at(i),
        fits: true,
        missing,
    })
}

/// A text's words, each with whether a space comes before it; a line
/// break is the word `"\n"`. Each Chinese or Japanese character is a
/// word, but a closing mark (`、`, `」`, `！`, small kana) stays with the
/// character before it and an opening bracket with the one after, so no
/// line starts or ends with one (the rule columns follow too).
fn words(text: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for (word, spaced) in split_words(text) {
        let glued = !spaced
            && out.last().is_some_and(|(last, _)| {
                last != "\n"
                    && (word.starts_with(|c| NO_START.contains(c))
                        || last.ends_with(|c| NO_END.contains(c)))
            });
        match out.last_mut() {
            Some((last, _)) if glued && word != "\n" => last.push_str(&word),
            _ => out.push((word, spaced)),
        }
    }
    out
}

/// [`words`] before the marks are glued to their characters.
fn split_words(text: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if n > 0 {
            out.push(("\n".into(), false));
        }
        for (k, word) in line.split_whitespace().enumerate() {
            let mut current = String::new();
            let mut spaced = k > 0;
            for c in word.chars() {
                if is_cjk(c) {
                    if !current.is_empty() {
                        out.push((std::mem::take(&mut current), spaced));
                        spaced = false;
                    }
                    out.push((c.to_string(), spaced));
                    spaced = false;
                } else {
                    current.push(c);
                }
            }
            if !current.is_empty() {
                out.push((current, spaced));
            }
        }
    }
    out
}

/// How wide `content` is set on one line at `size`.
fn measure(shaper: &mut Shaper, text: &Text<'_>, content: &str, size: f32) -> f32 {
    let mut buffer = Buffer::new(&mut shaper.system, Metrics::new(size, size * LINE_HEIGHT));
    buffer.set_size(None, None);
    buffer.set_wrap(Wrap::None);
    buffer.set_text(content, &attrs(text), Shaping::Advanced, None);
    buffer.shape_until_scroll(&mut shaper.system, false);
    buffer.layout_runs().map(|r| r.line_w).fold(0.0, f32::max)
}

/// Sets a node's text: in its balloon's `shape` when it has one and the
/// words fit it; else in its box `rect`, and then never past the
/// balloon's interior (columns, or rows too long for the shape).
pub(super) fn place(
    shaper: &mut Shaper,
    image: &mut RgbaImage,
    rect: Rect,
    shape: Option<&[[f64; 2]]>,
    text: &Text<'_>,
    min_size: f32,
) -> Set {
    // The interior is made once: set in it, or clipped to it.
    let Some((shape, interior)) = shape.and_then(|s| Some((s, Interior::of(s)?))) else {
        return set(shaper, image, rect, text, min_size);
    };
    match set_in_shape(shaper, image, shape, &interior, text, min_size) {
        Some(done) => done,
        None => set_clipped(shaper, image, rect, &interior, text, min_size),
    }
}

/// Sets `text` in `rect` as [`set`] does, keeping only the ink that lies
/// in the balloon's `interior` (2 px in from its outline): what the balloon
/// cannot hold is clipped there, never set on the outline or the art
/// around it (spec 12, "Minimum size"). For text [`set_in_shape`] could
/// not fit, and for columns.
pub(super) fn set_clipped(
    shaper: &mut Shaper,
    image: &mut RgbaImage,
    rect: Rect,
    interior: &Interior,
    text: &Text<'_>,
    min_size: f32,
) -> Set {
    let before = image::imageops::crop_imm(image, rect.x, rect.y, rect.w, rect.h).to_image();
    let mut done = set(shaper, image, rect, text, min_size);
    let mut clipped = false;
    for (dx, dy, was) in before.enumerate_pixels() {
        let (x, y) = (rect.x + dx, rect.y + dy);
        if *image.get_pixel(x, y) != *was && !interior.holds(x, y, 2.0) {
            image.put_pixel(x, y, *was);
            clipped = true;
        }
    }
    done.fits &= !clipped;
    done
}

/// The longest start of `word` that fits `room` with a hyphen after it,
/// and the rest: broken where the target language's patterns allow
/// (`hyphens.rs`), or, for a language with none, after any letter
/// leaving two on each side; `None` when no start fits.
fn hyphen_split(
    shaper: &mut Shaper,
    text: &Text<'_>,
    word: &str,
    size: f32,
    room: f64,
) -> Option<(String, String)> {
    let chars: Vec<char> = word.chars().collect();
    if chars.len() < 4 || chars.iter().any(|c| is_cjk(*c)) {
        return None;
    }
    let points: Vec<usize> = match super::hyphens::points(text.locale, word) {
        Some(points) => points,
        None => (2..=chars.len() - 2).collect(),
    };
    let head = |k: usize| chars[..k].iter().collect::<String>();
    let fits = |shaper: &mut Shaper, k: usize| {
        f64::from(measure(shaper, text, &format!("{}-", head(k)), size)) <= room
    };
    // Widths grow with the letters: the longest start that fits, by halving.
    let (mut lo, mut hi) = (0, points.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fits(shaper, points[mid]) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let k = *points.get(lo.checked_sub(1)?)?;
    Some((head(k), chars[k..].iter().collect()))
}

/// The words set in `shape` at `size` on as few lines as hold them, or
/// `None` when they do not fit. With `hyphenate`, a word wider than its
/// line is broken with a hyphen at the line's end (spec 12, "Word
/// breaks"); without, it does not fit.
fn shaped(
    shaper: &mut Shaper,
    text: &Text<'_>,
    words: &[(String, bool)],
    interior: &Interior,
    size: f32,
    hyphenate: bool,
) -> Option<Layout> {
    let line = f64::from(size * LINE_HEIGHT);
    let across = interior.across();
    let (top, bottom) = interior.top_bottom();
    // Room to the outline: half a size across and a third down, and at
    // least a twentieth of the balloon, as a letterer leaves.
    let pad_x = (f64::from(size) * 0.5).max(across / 20.0);
    let pad_y = (f64::from(size) / 3.0).max((bottom - top) / 20.0);
    let (top, bottom) = (top + pad_y, bottom - pad_y);
    let most = ((bottom - top) / line).floor();
    if most < 1.0 {
        return None;
    }
    let space =
        f64::from(measure(shaper, text, "x x", size) - 2.0 * measure(shaper, text, "x", size));
    let widths: Vec<f64> = words
        .iter()
        .map(|(w, _)| f64::from(measure(shaper, text, w, size)))
        .collect();
    let middle = (top + bottom) / 2.0;
    // Whole lines of a small size: at most a few hundred.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    for count in 1..=(most as usize) {
        let first = middle - count as f64 * line / 2.0;
        let spans: Option<Vec<(f64, f64)>> = (0..count)
            .map(|i| {
                let y = first + i as f64 * line;
                interior
                    .span(y, y + line)
                    .map(|(l, r)| (l + pad_x, r - pad_x))
                    .filter(|(l, r)| l < r)
            })
            .collect();
        let Some(spans) = spans else {
            continue;
        };
        let mut lines: Vec<String> = vec![String::new()];
        let mut used = 0.0;
        let mut fits = true;
        let mut queue: std::collections::VecDeque<(String, bool, f64)> = words
            .iter()
            .zip(&widths)
            .map(|((word, spaced), width)| (word.clone(), *spaced, *width))
            .collect();
        while let Some((word, spaced, width)) = queue.pop_front() {
            if word == "\n" {
                lines.push(String::new());
                used = 0.0;
                continue;
            }
            let Some(&(l, r)) = spans.get(lines.len() - 1) else {
                fits = false;
                break;
            };
            let gap = if spaced && used > 0.0 { space } else { 0.0 };
            if used > 0.0 && used + gap + width > r - l {
                lines.push(String::new());
                used = 0.0;
            }
            let Some(&(l, r)) = spans.get(lines.len() - 1) else {
                fits = false;
                break;
            };
            if width > r - l {
                // The line is empty here: the word's start and a hyphen
                // on it, the rest on the next.
                let split = hyphenate
                    .then(|| hyphen_split(shaper, text, &word, size, r - l))
                    .flatten();
                let Some((head, tail)) = split else {
                    fits = false;
                    break;
                };
                *lines.last_mut()? = format!("{head}-");
                let tail_width = f64::from(measure(shaper, text, &tail, size));
                queue.push_front((tail, false, tail_width));
                lines.push(String::new());
                used = 0.0;
                continue;
            }
            let current = lines.last_mut()?;
            if spaced && !current.is_empty() {
                current.push(' ');
                used += space;
            }
            current.push_str(&word);
            used += width;
        }
        if !fits || lines.len() > count {
            continue;
        }
        let buffers = lines
            .iter()
            .zip(&spans)
            .enumerate()
            .map(|(i, (content, (l, r)))| {
                let mut buffer =
                    Buffer::new(&mut shaper.system, Metrics::new(size, size * LINE_HEIGHT));
                buffer.set_size(Some((r - l) as f32), None);
                buffer.set_wrap(Wrap::None);
                buffer.set_text(content, &attrs(text), Shaping::Advanced, Some(text.align));
                buffer.shape_until_scroll(&mut shaper.system, false);
                // Fewer lines than places: the block stays centred.
                let shift = (count - lines.len()) as f64 * line / 2.0;
                (buffer, *l as f32, (first + shift + i as f64 * line) as f32)
            })
            .collect();
        return Some(Layout {
            buffers,
            fits: true,
        });
    }
    None
}

/// A little room between the box's edge and the text.
fn inset(r: Rect) -> Rect {
    let pad = (r.w.min(r.h) / 16).clamp(1, 8);
    if r.w <= 2 * pad || r.h <= 2 * pad {
        return r;
    }
    Rect {
        x: r.x + pad,
        y: r.y + pad,
        w: r.w - 2 * pad,
        h: r.h - 2 * pad,
    }
}

/// Laid-out text: one buffer per column (vertical) or one in all.
struct Layout {
    /// Each buffer with its offset from the inner box's top left.
    buffers: Vec<(Buffer, f32, f32)>,
    fits: bool,
}

impl Layout {
    fn horizontal(
        shaper: &mut Shaper,
        text: &Text<'_>,
        size: f32,
        w: f32,
        h: f32,
        strict: bool,
    ) -> Layout {
        let mut buffer = Buffer::new(&mut shaper.system, Metrics::new(size, size * LINE_HEIGHT));
        buffer.set_size(Some(w), None);
        buffer.set_wrap(if strict {
            Wrap::Word
        } else {
            Wrap::WordOrGlyph
        });
        let attrs = attrs(text);
        buffer.set_text(text.content, &attrs, Shaping::Advanced, Some(text.align));
        buffer.shape_until_scroll(&mut shaper.system, false);
        let (mut lines, mut widest) = (0usize, 0.0f32);
        for run in buffer.layout_runs() {
            lines += 1;
            widest = widest.max(run.line_w);
        }
        let height = lines as f32 * size * LINE_HEIGHT;
        let fits = height <= h + 0.5 && widest <= w + 0.5;
        // Centred in the box; from its top when it overflows.
        let top = ((h - height) / 2.0).max(0.0);
        Layout {
            buffers: vec![(buffer, 0.0, top)],
            fits,
        }
    }

    fn vertical(shaper: &mut Shaper, text: &Text<'_>, size: f32, w: f32, h: f32) -> Layout {
        let cell = size * CELL_HEIGHT;
        let per_column = ((h / cell).floor() as usize).max(1);
        let mut columns: Vec<String> = Vec::new();
        for paragraph in text.content.lines() {
            let chars: Vec<char> = paragraph.chars().filter(|c| !c.is_control()).collect();
            for column in columns_of(&chars, per_column) {
                columns.push(
                    column
                        .iter()
                        .map(|c| format!("{}\n", upright(*c)))
                        .collect(),
                );
            }
        }
        let column_w = size * COLUMN_WIDTH;
        let total_w = columns.len() as f32 * column_w;
        let tallest = columns
            .iter()
            .map(|c| c.chars().filter(|ch| *ch != '\n').count())
            .max()
            .unwrap_or(0) as f32
            * cell;
        let fits = total_w <= w + 0.5 && tallest <= h + 0.5;
        // The block of columns centred; the first column on the right.
        let right = (w + total_w) / 2.0;
        let top = ((h - tallest) / 2.0).max(0.0);
        let attrs = attrs(text);
        let buffers = columns
            .iter()
            .enumerate()
            .map(|(i, column)| {
                let mut buffer = Buffer::new(&mut shaper.system, Metrics::new(size, cell));
                buffer.set_size(Some(column_w), None);
                buffer.set_wrap(Wrap::None);
                buffer.set_text(column, &attrs, Shaping::Advanced, Some(Align::Center));
                buffer.shape_until_scroll(&mut shaper.system, false);
                (buffer, right - (i + 1) as f32 * column_w, top)
            })
            .collect();
        Layout { buffers, fits }
    }

    /// Draws the outline (when asked for) and then the letters, clipped to
    /// `clip`, with the layout's origin at `inner`'s top left.
    fn draw(
        mut self,
        shaper: &mut Shaper,
        image: &mut RgbaImage,
        clip: Rect,
        inner: Rect,
        text: &Text<'_>,
    ) {
        let mut passes: Vec<(Rgba<u8>, f32, f32)> = Vec::new();
        if let Some(stroke) = text.stroke {
            let size = self
                .buffers
                .first()
                .map_or(12.0, |(b, _, _)| b.metrics().font_size);
            let r = (size / 14.0).clamp(1.0, 6.0);
            for i in 0..16 {
                let a = i as f32 * std::f32::consts::TAU / 16.0;
                passes.push((stroke, r * a.cos(), r * a.sin()));
            }
        }
        passes.push((text.color, 0.0, 0.0));
        for (color, dx, dy) in passes {
            let ink = Color::rgba(color[0], color[1], color[2], color[3]);
            for (buffer, ox, oy) in &mut self.buffers {
                let x0 = f64::from(inner.x) + f64::from(*ox + dx);
                let y0 = f64::from(inner.y) + f64::from(*oy + dy);
                buffer.draw(
                    &mut shaper.system,
                    &mut shaper.cache,
                    ink,
                    |x, y, w, h, c| {
                        let rgba = [c.r(), c.g(), c.b(), c.a()];
                        for py in 0..h {
                            for px in 0..w {
                                // Pixel positions: small integers.
                                #[allow(clippy::cast_possible_truncation)]
                                let (ix, iy) = (
                                    (x0 + f64::from(x) + f64::from(px)).round() as i64,
                                    (y0 + f64::from(y) + f64::from(py)).round() as i64,
                                );
                                blend(image, clip, ix, iy, rgba);
                            }
                        }
                    },
                );
            }
        }
    }

    /// The characters whose glyph is the font's "missing" glyph.
    /// Whether a line ends inside a word: after a hyphen or a letter with
    /// a letter or digit next (a break between two Chinese or Japanese
    /// characters, or at a space, is between words).
    fn breaks_a_word(&self) -> bool {
        let mut previous: Option<usize> = None;
        for (buffer, _, _) in &self.buffers {
            for run in buffer.layout_runs() {
                let start = run.glyphs.iter().map(|g| g.start).min();
                if previous == Some(run.line_i)
                    && let Some(at) = start
                {
                    let before = run.text[..at].chars().next_back();
                    let after = run.text[at..].chars().next();
                    if let (Some(b), Some(a)) = (before, after)
                        && (b.is_alphanumeric()
                            || matches!(b, '-' | '\u{2010}' | '\'' | '\u{2019}'))
                        && a.is_alphanumeric()
                        && !is_cjk(b)
                        && !is_cjk(a)
                    {
                        return true;
                    }
                }
                previous = Some(run.line_i);
            }
        }
        false
    }

    fn missing(&self) -> Vec<char> {
        let mut out: Vec<char> = Vec::new();
        for (buffer, _, _) in &self.buffers {
            for run in buffer.layout_runs() {
                for g in run.glyphs.iter().filter(|g| g.glyph_id == 0) {
                    out.extend(
                        run.text[g.start..g.end]
                            .chars()
                            .filter(|c| !c.is_whitespace()),
                    );
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Whether `c` is written without spaces between words (Chinese,
/// Japanese kana, Korean, their full-width forms).
fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
}

fn attrs<'a>(text: &Text<'a>) -> Attrs<'a> {
    let style = if text.italic {
        cosmic_text::Style::Italic
    } else {
        cosmic_text::Style::Normal
    };
    let attrs = Attrs::new()
        .weight(cosmic_text::Weight(text.weight))
        .style(style);
    match text.family {
        Some(family) => attrs.family(Family::Name(family)),
        None => attrs.family(Family::SansSerif),
    }
}

/// Characters a column must not start with (closing brackets, the
/// small punctuation of CJK text) and must not end with (opening brackets).
const NO_START: &str =
    "、。，．,.：；！？!?）」』】〕〉》｝]）ー…‥々ゝゞヽヾぁぃぅぇぉっゃゅょァィゥェォッャュョ";
const NO_END: &str = "（「『【〔〈《｛[(";

/// Splits a paragraph into columns of at most `per_column` characters,
/// by the line-breaking rules of Japanese (kinsoku): a closing mark or a
/// small kana at the head of a column hangs at the foot of the previous
/// one (one cell past it, as in print), and an opening bracket at the foot
/// of a column moves to the head of the next.
fn columns_of(chars: &[char], per_column: usize) -> Vec<&[char]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        let mut end = (start + per_column).min(chars.len());
        if end < chars.len() && NO_START.contains(chars[end]) {
            end += 1;
        } else if end < chars.len() && end - start > 1 && NO_END.contains(chars[end - 1]) {
            end -= 1;
        }
        out.push(&chars[start..end]);
        start = end;
    }
    out
}

/// The vertical presentation form of punctuation that has one (so a comma
/// sits in the top right of its cell and brackets open downwards).
fn upright(c: char) -> char {
    match c {
        '、' => '︑',
        '。' => '︒',
        '，' | ',' => '︐',
        '：' => '︓',
        '；' => '︔',
        '！' => '︕',
        '？' => '︖',
        '「' => '﹁',
        '」' => '﹂',
        '『' => '﹃',
        '』' => '﹄',
        '（' | '(' => '︵',
        '）' | ')' => '︶',
        '【' => '︻',
        '】' => '︼',
        '…' => '︙',
        'ー' | '—' | '―' | '─' => '︱',
        other => other,
    }
}

#[cfg(test)]
mod tests;
