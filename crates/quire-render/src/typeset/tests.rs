//! The typesetter's own tests: breaking, sizes, shapes.

use super::*;

/// Black rows, regular, centred, in the default face: `content` at
/// `size` (or what fits).
fn black(content: &str, size: Option<f32>) -> Text<'_> {
    Text {
        content,
        family: None,
        size,
        color: Rgba([0, 0, 0, 255]),
        stroke: None,
        vertical: false,
        weight: 400,
        italic: false,
        align: Align::Center,
        locale: "en",
    }
}

fn split(text: &str, per: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    columns_of(&chars, per)
        .into_iter()
        .map(|c| c.iter().collect())
        .collect()
}

#[test]
fn columns_keep_punctuation_with_its_word() {
    assert_eq!(split("あいうえおか", 3), ["あいう", "えおか"]);
    // A comma that would head a column hangs below the one before.
    assert_eq!(split("あいう、えお", 3), ["あいう、", "えお"]);
    // An opening bracket that would end a column starts the next.
    assert_eq!(split("あい「うえ」", 3), ["あい", "「うえ」"]);
}

/// "VAS-TU" in a box too narrow for it at its size: Unicode allows a
/// break after the hyphen, but a smaller size on one line is chosen;
/// text that has no whole-word fit still breaks where it may.
#[test]
fn a_word_is_not_split_at_its_hyphen_while_a_smaller_size_keeps_it_whole() {
    let fonts = crate::fonts::Fonts::new(crate::RenderConfig::default());
    let mut shaper = fonts.take("fr").expect("a font");
    let mut image = RgbaImage::new(160, 160);
    let rect = Rect {
        x: 0,
        y: 0,
        w: 160,
        h: 160,
    };
    let inner = inset(rect);
    let (w, h) = (inner.w as f32, inner.h as f32);
    let text = |content| black(content, Some(60.0));
    let word = text("VAS-TU");
    assert!(Layout::horizontal(&mut shaper, &word, 60.0, w, h, true).breaks_a_word());
    let done = set(&mut shaper, &mut image, rect, &word, 8.0);
    let chosen = Layout::horizontal(&mut shaper, &word, done.size, w, h, true);
    assert!(done.fits && !chosen.breaks_a_word(), "{done:?}");
    assert!(done.size < 60.0, "{done:?}");
    // Two words side by side break between them, at the larger size.
    let two = text("VAS TU");
    let done = set(&mut shaper, &mut image, rect, &two, 8.0);
    assert!(done.fits && done.size >= 50.0, "{done:?}");
}

/// A word too long for a narrow balloon at the smallest size is
/// broken with a hyphen at the end of each line it spans, and every
/// piece is inside the shape; a word that fits whole is not broken.
#[test]
fn a_word_too_long_for_the_balloon_is_hyphenated() {
    let fonts = crate::fonts::Fonts::new(crate::RenderConfig::default());
    let mut shaper = fonts.take("de").expect("a font");
    let shape = [[0.0, 0.0], [90.0, 0.0], [90.0, 200.0], [0.0, 200.0]];
    let text = |content| Text {
        locale: "de",
        ..black(content, None)
    };
    let word = text("DONAUDAMPFSCHIFFFAHRT");
    let interior = Interior::of(&shape).unwrap();
    let whole = shaped(
        &mut shaper,
        &word,
        &words(word.content),
        &interior,
        16.0,
        false,
    );
    assert!(whole.is_none(), "too wide at 16 px on whole words");
    let broken = shaped(
        &mut shaper,
        &word,
        &words(word.content),
        &interior,
        16.0,
        true,
    )
    .expect("fits hyphenated");
    let lines: Vec<String> = broken
        .buffers
        .iter()
        .map(|(b, _, _)| b.lines.iter().map(|l| l.text().to_owned()).collect())
        .collect();
    assert!(lines.len() >= 2, "{lines:?}");
    let (last, rest) = lines.split_last().unwrap();
    assert!(
        rest.iter().all(|l| l.ends_with('-') && l.len() > 2),
        "{lines:?}"
    );
    assert!(!last.ends_with('-'), "{lines:?}");
    let joined: String = lines.concat().replace('-', "");
    assert_eq!(joined, "DONAUDAMPFSCHIFFFAHRT");
    // Each break is one German hyphenation allows (Do-nau-dampf-…), not
    // wherever the line ran out.
    let allowed = crate::hyphens::points("de", "DONAUDAMPFSCHIFFFAHRT").unwrap();
    let mut at = 0;
    for line in rest {
        at += line.chars().count() - 1;
        assert!(
            allowed.contains(&at),
            "{lines:?} breaks after {at}, not at {allowed:?}"
        );
    }
    // Through set_in_shape: the largest size on whole words first.
    let mut image = RgbaImage::new(100, 210);
    let short = set_in_shape(
        &mut shaper,
        &mut image,
        &shape,
        &interior,
        &text("JA NEIN"),
        8.0,
    );
    assert!(short.is_some_and(|s| s.fits), "short words fit whole");
    let long =
        set_in_shape(&mut shaper, &mut image, &shape, &interior, &word, 8.0).expect("it fits");
    assert!(long.fits, "{long:?}");
}

/// Text in an elliptical balloon follows its shape: every letter
/// inside the ellipse, the first and last lines shorter than the one
/// in the middle, no word broken.
#[test]
fn text_in_a_balloon_follows_its_outline() {
    let fonts = crate::fonts::Fonts::new(crate::RenderConfig::default());
    let mut shaper = fonts.take("en").expect("a font");
    let mut image = RgbaImage::from_pixel(400, 300, Rgba([255, 255, 255, 255]));
    let (cx, cy, rx, ry) = (200.0, 150.0, 170.0, 110.0);
    let shape: Vec<[f64; 2]> = (0..64)
        .map(|k| {
            let a = f64::from(k) * std::f64::consts::TAU / 64.0;
            [cx + rx * a.cos(), cy + ry * a.sin()]
        })
        .collect();
    let text = black(
        "WHERE ARE WE GOING TONIGHT, MY OLD FRIEND? NOBODY TOLD ME ANYTHING AT ALL",
        None,
    );
    let interior = Interior::of(&shape).unwrap();
    let set =
        set_in_shape(&mut shaper, &mut image, &shape, &interior, &text, 8.0).expect("it fits");
    assert!(set.fits && set.size > 12.0, "{set:?}");
    // Rows with ink, grouped into lines; each line's ink from left to right.
    let mut lines: Vec<(u32, u32)> = Vec::new();
    let mut inside = true;
    let mut last_row = None;
    for y in 0..image.height() {
        let ink: Vec<u32> = (0..image.width())
            .filter(|x| image.get_pixel(*x, y)[0] < 128)
            .collect();
        for x in &ink {
            let (dx, dy) = ((f64::from(*x) - cx) / rx, (f64::from(y) - cy) / ry);
            inside &= dx * dx + dy * dy <= 1.0;
        }
        let (Some(first), Some(last)) = (ink.first(), ink.last()) else {
            continue;
        };
        match (last_row, lines.last_mut()) {
            (Some(prev), Some(line)) if prev + 1 == y => {
                *line = (line.0.min(*first), line.1.max(*last))
            }
            _ => lines.push((*first, *last)),
        }
        last_row = Some(y);
    }
    assert!(inside, "ink outside the balloon");
    assert!(lines.len() >= 3, "{lines:?}");
    let width = |l: &(u32, u32)| l.1 - l.0;
    let middle = width(&lines[lines.len() / 2]);
    assert!(
        width(&lines[0]) < middle && width(&lines[lines.len() - 1]) < middle,
        "{lines:?}"
    );
}

/// A balloon whose region runs down into its tail: the text is set in
/// the body, centred on it, and no ink lands in the tail or on the
/// outline.
#[test]
fn the_tail_is_cut_off_and_the_text_centred_on_the_body() {
    let fonts = crate::fonts::Fonts::new(crate::RenderConfig::default());
    let mut shaper = fonts.take("en").expect("a font");
    let mut image = RgbaImage::from_pixel(420, 340, Rgba([255, 255, 255, 255]));
    let (cx, cy, rx, ry) = (200.0, 130.0, 150.0, 90.0);
    let mut shape: Vec<[f64; 2]> = Vec::new();
    for k in 0..72 {
        let a = f64::from(k) * std::f64::consts::TAU / 72.0;
        shape.push([cx + rx * a.cos(), cy + ry * a.sin()]);
        // Between 55° and 60° (down and right) the outline runs out to
        // the tail's tip and back.
        if k == 11 {
            shape.push([340.0, 320.0]);
        }
    }
    let text = Text {
        weight: 700,
        ..black(
            "THE TAIL POINTS AT WHOEVER SPEAKS, BUT NOTHING IS EVER WRITTEN IN IT",
            None,
        )
    };
    let interior = Interior::of(&shape).unwrap();
    let set =
        set_in_shape(&mut shaper, &mut image, &shape, &interior, &text, 8.0).expect("it fits");
    assert!(set.fits && set.size > 14.0, "{set:?}");
    let (mut top, mut bottom, mut outside) = (u32::MAX, 0, Vec::new());
    for (x, y, p) in image.enumerate_pixels() {
        if p[0] >= 128 {
            continue;
        }
        (top, bottom) = (top.min(y), bottom.max(y));
        // Inside the body with 2 px to spare from its outline.
        let (dx, dy) = (
            (f64::from(x) - cx) / (rx - 2.0),
            (f64::from(y) - cy) / (ry - 2.0),
        );
        if dx * dx + dy * dy > 1.0 {
            outside.push((x, y));
        }
    }
    assert!(
        outside.is_empty(),
        "ink outside the body: {:?}",
        &outside[..outside.len().min(10)]
    );
    let middle = f64::from(top + bottom) / 2.0;
    assert!(
        (middle - cy).abs() < 12.0,
        "centred at {middle}, the body at {cy}"
    );
}

/// Rows of Chinese or Japanese break between characters, but never put
/// a closing mark at a line's start or an opening bracket at its end.
#[test]
fn cjk_punctuation_stays_with_its_character() {
    let got: Vec<String> = words("あいう、えお「かき」く。")
        .into_iter()
        .map(|(w, _)| w)
        .collect();
    assert_eq!(
        got,
        ["あ", "い", "う、", "え", "お", "「か", "き」", "く。"]
    );
    let latin: Vec<String> = words("Hello, (world)!")
        .into_iter()
        .map(|(w, _)| w)
        .collect();
    assert_eq!(latin, ["Hello,", "(world)!"]);
}
