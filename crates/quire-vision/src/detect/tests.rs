//! The builtin detector on pages drawn here: what it finds, keeps apart
//! and leaves out.

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

/// An outlined `H` at (x, y): a white letter, 10 × 14 with strokes 3
/// wide, in a black outline 2 pixels thick, drawn over whatever is there.
fn outlined_letter(page: &mut GrayImage, x: u32, y: u32) {
    let stroke = |dx: i64, dy: i64| {
        (0..10).contains(&dx)
            && (0..14).contains(&dy)
            && (!(3..7).contains(&dx) || (6..9).contains(&dy))
    };
    for dy in -2i64..16 {
        for dx in -2i64..12 {
            let near = (-2..=2).any(|oy| (-2..=2).any(|ox| stroke(dx + ox, dy + oy)));
            let (px, py) = ((i64::from(x) + dx) as u32, (i64::from(y) + dy) as u32);
            if stroke(dx, dy) {
                page.put_pixel(px, py, Luma([255]));
            } else if near {
                page.put_pixel(px, py, Luma([0]));
            }
        }
    }
}

/// Grey art with dark strokes across it, in a panel.
fn art(page: &mut GrayImage) {
    panel(page, 20, 20, 579, 379, 150);
    for k in 0..12u32 {
        for t in 0..500u32 {
            let (x, y) = (40 + t, 40 + (t * (k + 1) * 7 / 10 + k * 23) % 320);
            for w in 0..3 {
                page.put_pixel(x, (y + w).min(370), Luma([20]));
            }
        }
    }
}

#[test]
fn light_letters_outlined_on_the_art_are_one_block_with_their_outlines_masked() {
    let mut p = page(600, 400);
    art(&mut p);
    // A caption of two words on the art.
    for i in 0..5 {
        outlined_letter(&mut p, 100 + i * 16, 150);
    }
    for i in 0..3 {
        outlined_letter(&mut p, 100 + 5 * 16 + 14 + i * 16, 150);
    }
    let found = detect(&p, &Settings::default());
    let outlined: Vec<&Block> = found.blocks.iter().filter(|b| b.outlined).collect();
    assert_eq!(outlined.len(), 1, "{:?}", found.blocks);
    let b = outlined[0];
    assert_eq!(b.glyphs, 8);
    assert!(!b.in_balloon);
    assert!(
        b.bounds.left <= 100 && b.bounds.right >= 100 + 8 * 16 + 4,
        "{b:?}"
    );
    // The mask holds the letters and their outlines, and no art apart
    // from them.
    assert_eq!(found.mask.get_pixel(101, 151)[0], 255, "a letter");
    assert_eq!(found.mask.get_pixel(98, 151)[0], 255, "its outline");
    assert_eq!(found.mask.get_pixel(400, 300)[0], 0, "the art");
    // Read as black letters on white: the letters' insides only.
    let cut = image::imageops::crop_imm(&p, 90, 140, 160, 34).to_image();
    let letters = letters_for_reading(&cut, &Settings::default()).expect("outlined letters");
    assert_eq!(letters.get_pixel(11, 11)[0], 0, "inside a letter");
    assert_eq!(letters.get_pixel(8, 11)[0], 255, "its outline");
}

#[test]
fn black_letters_and_scattered_light_in_the_art_are_not_outlined_text() {
    // Black letters in a balloon: their counters are no letters.
    let mut p = page(600, 400);
    balloon(&mut p, 300.0, 200.0, 150.0, 80.0);
    word(&mut p, 220, 190, 8);
    let found = detect(&p, &Settings::default());
    assert_eq!(found.blocks.len(), 1);
    assert!(!found.blocks[0].outlined);
    assert!(letters_for_reading(&p, &Settings::default()).is_none());
    // Four outlined letters scattered over the art are no caption.
    let mut p = page(600, 400);
    art(&mut p);
    for (x, y) in [(60, 60), (300, 120), (150, 300), (480, 220)] {
        outlined_letter(&mut p, x, y);
    }
    let found = detect(&p, &Settings::default());
    assert!(
        found.blocks.iter().all(|b| !b.outlined),
        "{:?}",
        found.blocks
    );
}

#[test]
fn rows_of_a_screentone_are_no_text() {
    // A light panel under a screen of 3 × 3 dots every 7 pixels, with a
    // second screen crossing it that merges dots in pairs along a row:
    // letter-sized marks in a line, on the screentone's paper.
    let mut p = page(600, 400);
    panel(&mut p, 20, 20, 579, 379, 235);
    for y in (30..370).step_by(7) {
        for x in (30..570).step_by(7) {
            for (dx, dy) in [
                (0, 0),
                (1, 0),
                (2, 0),
                (0, 1),
                (1, 1),
                (2, 1),
                (0, 2),
                (1, 2),
                (2, 2),
            ] {
                p.put_pixel(x + dx, y + dy, Luma([30]));
            }
        }
    }
    for x in (30..570).step_by(7) {
        for y in 191..198 {
            p.put_pixel(x + 1, y, Luma([30]));
        }
    }
    let found = detect(&p, &Settings::default());
    assert!(found.blocks.is_empty(), "{:?}", found.blocks);
}

#[test]
fn a_model_balloon_box_closes_an_outline_the_page_leaves_open() {
    // An oval balloon whose outline breaks on its right, opening onto
    // the page, with two rows of letters the model boxed as one text.
    let mut p = page(400, 300);
    balloon(&mut p, 200.0, 150.0, 100.0, 60.0);
    for y in 135..165 {
        for x in 295..310 {
            p.put_pixel(x, y, Luma([255]));
        }
    }
    for k in 0..5 {
        letter(&mut p, 150 + 14 * k, 128);
        letter(&mut p, 150 + 14 * k, 152);
    }
    let text = Bounds {
        left: 146,
        top: 124,
        right: 220,
        bottom: 170,
    };
    let bubble = Bounds {
        left: 96,
        top: 86,
        right: 304,
        bottom: 214,
    };
    let settings = Settings::default();
    let text_only = [Found {
        bounds: text,
        kind: FoundKind::Text,
    }];
    // Without the balloon's box its paper is the page's: no balloon.
    let alone = detect_found(&p, &text_only, &settings);
    assert_eq!(alone.blocks.len(), 1);
    assert!(!alone.blocks[0].in_balloon);
    let with_bubble = [
        text_only[0],
        Found {
            bounds: bubble,
            kind: FoundKind::Bubble,
        },
    ];
    let found = detect_found(&p, &with_bubble, &settings);
    assert_eq!(found.blocks.len(), 1);
    let block = &found.blocks[0];
    assert!(block.in_balloon);
    assert_eq!(block.glyphs, 10);
    // The region is the balloon's inside: within its box, reaching its
    // outline above and below the text, never past the box at the gap.
    let (mut top, mut bottom, mut left, mut right) = (f64::MAX, 0.0f64, f64::MAX, 0.0f64);
    for [x, y] in &block.region {
        assert!(
            (96.0..=305.0).contains(x) && (86.0..=215.0).contains(y),
            "{x}, {y}"
        );
        top = top.min(*y);
        bottom = bottom.max(*y);
        left = left.min(*x);
        right = right.max(*x);
    }
    assert!(top < 95.0 && bottom > 205.0, "{top}..{bottom}");
    // Through the gap to the box's edge; stopped by the outline elsewhere.
    assert!(right > 300.0, "{right}");
    assert!(left > 98.0 && left < 105.0, "{left}");
    // Free text in the same box is not the balloon's.
    let free = [
        Found {
            bounds: text,
            kind: FoundKind::FreeText,
        },
        with_bubble[1],
    ];
    assert!(!detect_found(&p, &free, &settings).blocks[0].in_balloon);
}
