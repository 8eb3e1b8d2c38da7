//! Runs the built-in detector on image files and prints what it found:
//! `cargo run -p quire-vision --example detect -- PAGE… [--out DIR]`
//! (with `--out`, each page's text mask and an outline picture go there).

// A developer's tool: what it finds is its output.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;

use image::Rgb;
use quire_vision::detect::{Settings, detect};

fn main() {
    let mut out = None;
    let mut pages = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--out" {
            out = args.next().map(PathBuf::from);
        } else {
            pages.push(PathBuf::from(arg));
        }
    }
    for path in pages {
        let picture = match image::open(&path) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                std::process::exit(1);
            }
        };
        let found = detect(&picture.to_luma8(), &Settings::default());
        println!("{}: {} blocks", path.display(), found.blocks.len());
        for b in &found.blocks {
            let r = b.bounds;
            println!(
                "  [{}, {}, {}, {}] {} glyphs{}{}",
                r.left,
                r.top,
                r.width(),
                r.height(),
                b.glyphs,
                if b.in_balloon { ", in a balloon" } else { "" },
                if b.outlined { ", outlined" } else { "" }
            );
        }
        if let Some(dir) = &out {
            let stem = path.file_stem().expect("a file name").to_string_lossy();
            found
                .mask
                .save(dir.join(format!("{stem}.mask.png")))
                .expect("the picture saved");
            let mut shown = picture.to_rgb8();
            for b in &found.blocks {
                for p in &b.region {
                    let (x, y) = (p[0] as u32, p[1] as u32);
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        if x + dx < shown.width() && y + dy < shown.height() {
                            shown.put_pixel(x + dx, y + dy, Rgb([255, 0, 0]));
                        }
                    }
                }
                let r = b.bounds;
                for x in r.left..=r.right {
                    shown.put_pixel(x, r.top, Rgb([0, 160, 255]));
                    shown.put_pixel(x, r.bottom, Rgb([0, 160, 255]));
                }
                for y in r.top..=r.bottom {
                    shown.put_pixel(r.left, y, Rgb([0, 160, 255]));
                    shown.put_pixel(r.right, y, Rgb([0, 160, 255]));
                }
            }
            shown
                .save(dir.join(format!("{stem}.found.png")))
                .expect("the picture saved");
        }
    }
}
