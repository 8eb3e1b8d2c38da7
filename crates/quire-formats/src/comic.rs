//! A CBZ (or any ZIP) of page images, read for an import of pages: the PNG,
//! JPEG and WebP entries in natural name order (`p2` before `p10`,
//! directories included), other entries (`ComicInfo.xml`, `__MACOSX/`,
//! hidden files) passed over.
//!
//! The archive is checked whole before any entry is inflated (entry count,
//! no symbolic links, no absolute or `..` paths, no name twice); then each
//! page is inflated, checked ([`images::check`]) and staged one at a time,
//! so memory holds one page whatever the archive holds. An entry that
//! inflates past what its image can need, compresses far better than an
//! image does, or does not decode is skipped and named; what inflates past
//! the archive limit refuses the whole archive.

use std::collections::HashSet;
use std::io::{Cursor, Read};

use quire_model::error::{CoreError, CoreResult};
use quire_model::hash::BlobHash;
use serde::{Deserialize, Serialize};

use crate::images::{self, Header};
use crate::{ARCHIVE_LIMITS, ArchiveLimits};

/// How much better than its compressed size an image entry may inflate.
/// PNG, JPEG and WebP are compressed already and barely shrink in a zip;
/// an entry of zeros behind an image header shrinks a thousandfold.
const MAX_RATIO: u64 = 100;

/// Bytes read before the header is looked at: every format's size is in
/// its first few hundred bytes, a JPEG's after its EXIF.
const HEADER_BYTES: u64 = 1 << 16;

/// A page image that passed [`images::check`], kept as `blob`.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The file or archive entry name.
    pub name: String,
    pub header: Header,
    pub blob: BlobHash,
}

/// An entry of a comic archive that did not come in, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// `archive.cbz/entry.jpg`.
    pub name: String,
    pub reason: String,
}

/// Where a page's bytes go once checked (an import's staging area); it
/// returns their hash.
pub type Keep<'a> = dyn FnMut(&[u8]) -> CoreResult<BlobHash> + 'a;

/// Whether `name` (a file name) is a comic archive by its extension.
pub fn is_comic(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".cbz") || lower.ends_with(".zip")
}

fn is_page_image(entry: &str) -> bool {
    let base = entry.rsplit('/').next().unwrap_or(entry);
    let lower = base.to_ascii_lowercase();
    !base.starts_with('.')
        && !entry.starts_with("__MACOSX/")
        && [".png", ".jpg", ".jpeg", ".webp"]
            .iter()
            .any(|e| lower.ends_with(e))
}

/// Whether an entry name stays inside the archive: relative, no `..`.
fn is_safe(entry: &str) -> bool {
    let entry = entry.replace('\\', "/");
    !entry.starts_with('/') && !entry.contains(':') && entry.split('/').all(|part| part != "..")
}

/// The pages of a comic archive named `archive`, each handed to `keep`
/// as it is checked, and the entries skipped; see the module doc.
pub fn pages(
    archive: &str,
    bytes: &[u8],
    max_pixels: u64,
    keep: &mut Keep<'_>,
) -> CoreResult<(Vec<Checked>, Vec<Skipped>)> {
    read_within(archive, bytes, max_pixels, keep, &ARCHIVE_LIMITS)
}

fn read_within(
    archive: &str,
    bytes: &[u8],
    max_pixels: u64,
    keep: &mut Keep<'_>,
    limits: &ArchiveLimits,
) -> CoreResult<(Vec<Checked>, Vec<Skipped>)> {
    let bad = |message: String| CoreError::InvalidInput(format!("{archive}: {message}"));
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| bad(format!("not a ZIP archive ({e})")))?;
    if zip.len() > limits.entries {
        return Err(bad(format!(
            "{} entries; at most {} are allowed",
            zip.len(),
            limits.entries
        )));
    }
    // Two entries of one name collapse into one in the reader's directory:
    // which page is meant cannot be told.
    if zip.has_duplicate_names() {
        return Err(bad(
            "two of its entries have one name; which page is meant cannot be told".into(),
        ));
    }
    if zip.index_for_name("project.toml").is_some() && zip.index_for_name("scene.json").is_some() {
        return Err(bad(
            "this is a quire project archive, not a comic; import it as a project".into(),
        ));
    }
    // The whole directory first: nothing is inflated from an archive that
    // is refused.
    let mut seen = HashSet::new();
    let mut wanted = Vec::new();
    for i in 0..zip.len() {
        let entry = zip
            .by_index_raw(i)
            .map_err(|e| bad(format!("entry {i}: {e}")))?;
        let name = entry
            .name()
            .map_err(|e| bad(format!("entry {i}: {e}")))?
            .into_owned();
        if entry.is_symlink() {
            return Err(bad(format!("`{name}` is a symbolic link")));
        }
        if !is_safe(&name) {
            return Err(bad(format!("`{name}` points outside the archive")));
        }
        if !seen.insert(name.clone()) {
            return Err(bad(format!("`{name}` appears twice")));
        }
        if !entry.is_dir() && is_page_image(&name) {
            wanted.push((i, name));
        }
    }
    if wanted.is_empty() {
        return Err(bad("no PNG, JPEG or WebP pages in it".into()));
    }
    wanted.sort_by(|a, b| natord::compare(&a.1, &b.1));
    let mut left = limits.bytes;
    let (mut pages, mut skipped) = (Vec::new(), Vec::new());
    for (i, name) in wanted {
        let mut entry = zip.by_index(i).map_err(|e| bad(format!("`{name}`: {e}")))?;
        let compressed = entry.compressed_size();
        match inflate(&mut entry, compressed, max_pixels, &mut left) {
            Ok(data) => match images::check(&data, max_pixels) {
                Ok(header) => pages.push(Checked {
                    blob: keep(&data)?,
                    name,
                    header,
                }),
                Err(reason) => skipped.push(Skipped { name, reason }),
            },
            Err(Inflate::Skip(reason)) => skipped.push(Skipped { name, reason }),
            Err(Inflate::Bomb) => {
                return Err(bad(format!(
                    "it inflates to more than {} bytes (a zip bomb?)",
                    limits.bytes
                )));
            }
        }
    }
    if pages.is_empty() {
        let why: Vec<String> = skipped
            .iter()
            .take(5)
            .map(|s| format!("{}: {}", s.name, s.reason))
            .collect();
        return Err(bad(format!("no page could be read ({})", why.join("; "))));
    }
    Ok((pages, skipped))
}

enum Inflate {
    /// This entry is not a page; the others may be.
    Skip(String),
    /// The archive as a whole inflates past its limit.
    Bomb,
}

/// One entry's bytes, read in chunks against every bound as they inflate:
/// what its header says it can need, its compression ratio, and what is
/// `left` of the archive's limit.
fn inflate(
    entry: &mut impl Read,
    compressed: u64,
    max_pixels: u64,
    left: &mut u64,
) -> Result<Vec<u8>, Inflate> {
    let mut data = Vec::new();
    let mut cap = HEADER_BYTES;
    let mut header = None;
    let mut chunk = [0u8; 1 << 16];
    loop {
        let n = entry
            .read(&mut chunk)
            .map_err(|e| Inflate::Skip(format!("cannot be inflated ({e})")))?;
        if n == 0 {
            break;
        }
        *left = left.checked_sub(n as u64).ok_or(Inflate::Bomb)?;
        data.extend_from_slice(&chunk[..n]);
        let len = data.len() as u64;
        if len > compressed.saturating_mul(MAX_RATIO).max(HEADER_BYTES) {
            return Err(Inflate::Skip(format!(
                "it inflates more than {MAX_RATIO} times its compressed size, which no \
                 image does (a zip bomb?)"
            )));
        }
        if header.is_none() && len >= cap {
            let found = images::header(&data, max_pixels).map_err(Inflate::Skip)?;
            cap = found.max_file_bytes();
            header = Some(found);
        }
        if header.is_some() && len > cap {
            return Err(Inflate::Skip(format!(
                "it inflates to more than the {cap} bytes its image can need"
            )));
        }
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data) in entries {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .expect("entry");
            zip.write_all(data).expect("write");
        }
        zip.finish().expect("finish").into_inner()
    }

    fn png() -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(image::RgbImage::new(3, 2))
            .write_to(&mut out, image::ImageFormat::Png)
            .expect("png");
        out.into_inner()
    }

    fn read(bytes: &[u8], limits: &ArchiveLimits) -> CoreResult<(Vec<Checked>, Vec<Skipped>)> {
        read_within(
            "c.cbz",
            bytes,
            images::DEFAULT_MAX_PIXELS,
            &mut |data| Ok(BlobHash::of(data)),
            limits,
        )
    }

    #[test]
    fn pages_come_in_natural_order_and_other_entries_are_passed_over() {
        let png = png();
        let bytes = zip_of(&[
            ("p10.png", &png),
            ("ComicInfo.xml", b"<ComicInfo/>"),
            ("p2.png", &png),
            ("__MACOSX/._p2.png", b"x"),
            ("p1.PNG", &png),
        ]);
        let (pages, skipped) = read(&bytes, &ARCHIVE_LIMITS).expect("reads");
        let names: Vec<&str> = pages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["p1.PNG", "p2.png", "p10.png"]);
        assert!(skipped.is_empty());
    }

    #[test]
    fn a_broken_page_is_skipped_by_name_and_the_others_come_in() {
        let png = png();
        let bytes = zip_of(&[("p1.png", &png), ("p2.png", &png[..png.len() / 2])]);
        let (pages, skipped) = read(&bytes, &ARCHIVE_LIMITS).expect("reads");
        assert_eq!(pages.len(), 1);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].name, "p2.png");
        assert!(skipped[0].reason.contains("truncated"), "{skipped:?}");
    }

    #[test]
    fn an_image_header_over_a_sea_of_zeros_is_not_inflated() {
        let mut bomb = png();
        bomb.truncate(33); // signature and IHDR of a 3 × 2 image
        bomb.resize(64 << 20, 0);
        let bytes = zip_of(&[("p1.png", &png()), ("p2.png", &bomb)]);
        let (pages, skipped) = read(&bytes, &ARCHIVE_LIMITS).expect("reads");
        assert_eq!(pages.len(), 1);
        assert!(skipped[0].reason.contains("zip bomb"), "{skipped:?}");
    }

    #[test]
    fn unsafe_or_oversized_archives_are_refused() {
        let cases: [(Vec<u8>, &str); 4] = [
            (zip_of(&[("../evil.png", b"x")]), "points outside"),
            (zip_of(&[("ComicInfo.xml", b"x")]), "no PNG, JPEG or WebP"),
            (b"not a zip".to_vec(), "not a ZIP archive"),
            (
                zip_of(&[("project.toml", b"x"), ("scene.json", b"{}")]),
                "quire project archive",
            ),
        ];
        for (bytes, expected) in cases {
            let e = read(&bytes, &ARCHIVE_LIMITS)
                .expect_err(expected)
                .to_string();
            assert!(e.contains(expected), "{e}");
        }
        let png = png();
        let big = zip_of(&[("a.png", &png), ("b.png", &png)]);
        let tight = ArchiveLimits {
            bytes: png.len() as u64 + 10,
            entries: 10,
        };
        let e = read(&big, &tight).expect_err("too big");
        assert!(e.to_string().contains("zip bomb"), "{e}");
        let e = read(&zip_of(&[("a.png", b"not an image")]), &ARCHIVE_LIMITS)
            .expect_err("nothing readable");
        assert!(
            e.to_string()
                .contains("no page could be read (a.png: not an image"),
            "{e}"
        );
    }
}
