//! What taking input costs a running `quire --headless`, as time and as
//! the server's peak resident memory (`VmHWM`, reset before each case):
//!
//! - a 20-page CBZ upload (1200 × 1800 JPEG pages), read and checked one
//!   page at a time;
//! - a decompression-bomb CBZ (a PNG header over 512 MiB of zeros, 256 MiB
//!   of zeros named like a page), skipped entry by entry;
//! - the thumbnail of a 100-megapixel PNG (10,000 × 10,000, the default
//!   `limits.max_image_pixels`);
//! - 500 batch renames of 2,000 pages, the undo history's memory per entry
//!   and where `history.max_bytes` holds it.
//!
//! `cargo bench --bench intake`; `cargo test` runs it small (3 pages,
//! a 1,000 × 1,000 PNG, 20 renames of 200 pages).

#![allow(clippy::print_stdout)]

#[path = "support/mod.rs"]
mod support;

use std::io::{Cursor, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The server's resident and peak resident memory, in MiB.
fn memory(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Starts a new peak: the kernel sets `VmHWM` back to the current RSS.
fn reset_peak(pid: u32) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

fn jpeg(w: u32, h: u32, seed: u32) -> Vec<u8> {
    // Line art with some texture: what a scanned page compresses like.
    let image = image::RgbImage::from_fn(w, h, |x, y| {
        let v = if (x / 7 + y / 11 + seed).is_multiple_of(9) {
            30
        } else {
            235
        };
        let n = ((x * 31 + y * 17 + seed) % 23) as u8;
        image::Rgb([v + n / 2, v + n / 3, v])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut out, image::ImageFormat::Jpeg)
        .expect("jpeg");
    out.into_inner()
}

fn png(w: u32, h: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 200])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("png");
    out.into_inner()
}

fn zip_of(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    for (name, data) in entries {
        zip.start_file(name.as_str(), deflated).expect("entry");
        zip.write_all(data).expect("write");
    }
    zip.finish().expect("zip").into_inner()
}

struct Bench {
    server: support::Server,
    http: reqwest::blocking::Client,
    session: String,
}

impl Bench {
    fn start(env: &[(&str, &str)]) -> Bench {
        let server = support::headless(env);
        let http = support::blocking_client()
            .timeout(Duration::from_secs(600))
            .build()
            .expect("client");
        let session: Value = http
            .post(format!("{}/api/v1/projects", server.url))
            .json(&json!({ "name": "intake" }))
            .send()
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.json())
            .expect("project");
        Bench {
            session: session["id"].as_str().expect("id").to_owned(),
            server,
            http,
        }
    }

    fn pid(&self) -> u32 {
        self.server.child.id()
    }

    fn at(&self, rest: &str) -> String {
        format!("{}/api/v1/sessions/{}{rest}", self.server.url, self.session)
    }

    /// Uploads `bytes` as `name`; the reply, the time, and the memory before
    /// and at its peak.
    fn upload(&self, name: &str, bytes: Vec<u8>) -> (Value, Duration, (f64, f64)) {
        let (rss, _) = memory(self.pid());
        reset_peak(self.pid());
        let form = reqwest::blocking::multipart::Form::new().part(
            "file",
            reqwest::blocking::multipart::Part::bytes(bytes).file_name(name.to_owned()),
        );
        let start = Instant::now();
        let reply: Value = self
            .http
            .post(self.at("/pages"))
            .multipart(form)
            .send()
            .and_then(|r| r.json())
            .expect("upload");
        let took = start.elapsed();
        (reply, took, (rss, memory(self.pid()).1))
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (pages, side, renames, renamed) = if full {
        (20, 10_000, 500, 2_000)
    } else {
        (3, 1_000, 20, 200)
    };

    // A chapter.
    let bench = Bench::start(&[]);
    let entries: Vec<(String, Vec<u8>)> = (0..pages)
        .map(|i| (format!("p{i:03}.jpg"), jpeg(1200, 1800, i)))
        .collect();
    let size: usize = entries.iter().map(|(_, b)| b.len()).sum();
    let (reply, took, (base, peak)) = bench.upload("chapter.cbz", zip_of(&entries));
    assert!(
        reply["skipped"].as_array().is_some_and(Vec::is_empty),
        "{reply}"
    );
    println!(
        "{pages}-page CBZ upload (1200 × 1800 JPEG, {:.1} MiB): {:.2} s, peak {peak:.0} MiB (from {base:.0})",
        size as f64 / f64::from(1 << 20),
        took.as_secs_f64(),
    );

    // A bomb.
    let mut header_over_zeros = png(1000, 1000);
    header_over_zeros.truncate(33);
    header_over_zeros.resize(if full { 512 << 20 } else { 64 << 20 }, 0);
    let zeros = vec![0u8; if full { 256 << 20 } else { 32 << 20 }];
    let inflated = header_over_zeros.len() + zeros.len();
    let bomb = zip_of(&[
        ("p1.jpg".into(), jpeg(1200, 1800, 1)),
        ("p2.png".into(), header_over_zeros),
        ("p3.jpg".into(), zeros),
    ]);
    let packed = bomb.len();
    let (reply, took, (base, peak)) = bench.upload("bomb.cbz", bomb);
    assert_eq!(
        reply["skipped"].as_array().map(Vec::len),
        Some(2),
        "{reply}"
    );
    println!(
        "decompression-bomb CBZ ({:.1} MiB packed, {} MiB inflated, 2 of 3 entries skipped): {:.2} s, peak {peak:.0} MiB (from {base:.0})",
        packed as f64 / f64::from(1 << 20),
        inflated >> 20,
        took.as_secs_f64()
    );
    drop(bench);

    // A 100-megapixel page and its thumbnail.
    let bench = Bench::start(&[]);
    let big = png(side, side);
    let (reply, took, (import_base, import_peak)) = bench.upload("huge.png", big);
    let blob = reply["created"][1]
        .as_str()
        .map(|_| ())
        .and_then(|()| {
            let scene: Value = bench
                .http
                .get(bench.at("/scene.json"))
                .send()
                .ok()?
                .json()
                .ok()?;
            scene["scene"]["pages"][0]["nodes"][0]["kind"]["blob"]
                .as_str()
                .map(str::to_owned)
        })
        .expect("the page's blob");
    let (rss, _) = memory(bench.pid());
    reset_peak(bench.pid());
    let start = Instant::now();
    let thumb = bench
        .http
        .get(bench.at(&format!("/blobs/{blob}?maxSide=256")))
        .send()
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.bytes())
        .expect("thumbnail");
    let thumb_took = start.elapsed();
    let thumb_peak = memory(bench.pid()).1;
    println!(
        "{side} × {side} PNG: import (checked whole) {:.2} s, peak {import_peak:.0} MiB (from {import_base:.0}); 256 px thumbnail ({} bytes) {:.2} s, peak {thumb_peak:.0} MiB (from {rss:.0})",
        took.as_secs_f64(),
        thumb.len(),
        thumb_took.as_secs_f64()
    );
    drop(bench);

    // The undo history of big batches.
    let bench = Bench::start(&[]);
    let ops: Vec<Value> = (0..renamed)
        .map(|i| json!({ "type": "AddPage", "page": { "name": format!("page {i}") } }))
        .collect();
    let created: Value = bench
        .http
        .post(bench.at("/history/apply"))
        .json(&json!({ "type": "Batch", "ops": ops }))
        .send()
        .and_then(|r| r.json())
        .expect("pages");
    let ids: Vec<Value> = created["created"].as_array().expect("ids").clone();
    let (before, _) = memory(bench.pid());
    let mut at_50 = 0.0;
    let start = Instant::now();
    for round in 0..renames {
        let ops: Vec<Value> = ids
            .iter()
            .map(|id| {
                json!({ "type": "UpdatePage", "id": id,
                "patch": { "name": format!("round {round} of a long-ish page name") } })
            })
            .collect();
        bench
            .http
            .post(bench.at("/history/apply"))
            .json(&json!({ "type": "Batch", "ops": ops }))
            .send()
            .and_then(|r| r.error_for_status())
            .expect("rename");
        if round + 1 == 50.min(renames) {
            at_50 = memory(bench.pid()).0;
        }
    }
    let (after, peak) = memory(bench.pid());
    let mut undone = 0;
    loop {
        let step: Value = bench
            .http
            .post(bench.at("/history/undo"))
            .send()
            .and_then(|r| r.json())
            .expect("undo");
        if step["epoch"].is_null() {
            break;
        }
        undone += 1;
    }
    println!(
        "{renames} renames of {renamed} pages in {:.1} s: {:.2} MiB per entry (the first {}), RSS {before:.0} → {after:.0} MiB (peak {peak:.0}); undo reaches back {undone} entries (history.max_bytes 256 MiB)",
        start.elapsed().as_secs_f64(),
        (at_50 - before) / f64::from(50.min(renames)),
        50.min(renames)
    );
}
