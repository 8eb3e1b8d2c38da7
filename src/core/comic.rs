//! A CBZ (or any ZIP) of page images, read into image files for
//! [`super::import`]: the PNG, JPEG and WebP entries in natural name order
//! (`p2` before `p10`, directories included), other entries (`ComicInfo.xml`,
//! `__MACOSX/`, hidden files) passed over. The archive import's safety rules
//! hold: at most as many entries and inflated bytes (counted as they
//! inflate), no symbolic links, no absolute or `..` paths, no name twice.

use std::collections::HashSet;
use std::io::{Cursor, Read};

use super::error::{CoreError, CoreResult};
use super::export::{ARCHIVE_LIMITS, ArchiveLimits};
use super::import::ImageFile;

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

/// The page images of a comic archive named `archive`; see the module doc.
pub(super) fn images(archive: &str, bytes: &[u8]) -> CoreResult<Vec<ImageFile>> {
    read_within(archive, bytes, &ARCHIVE_LIMITS)
}

fn read_within(archive: &str, bytes: &[u8], limits: &ArchiveLimits) -> CoreResult<Vec<ImageFile>> {
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
    if zip.index_for_name("project.toml").is_some() && zip.index_for_name("scene.json").is_some() {
        return Err(bad(
            "this is a quire project archive, not a comic; import it as a project".into(),
        ));
    }
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    let mut left = limits.bytes;
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
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
        if entry.is_dir() || !is_page_image(&name) {
            continue;
        }
        let mut data = Vec::new();
        let read = entry
            .by_ref()
            .take(left.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|e| bad(format!("`{name}`: {e}")))?;
        left = left.checked_sub(read as u64).ok_or_else(|| {
            bad(format!(
                "it inflates to more than {} bytes (a zip bomb?)",
                limits.bytes
            ))
        })?;
        files.push(ImageFile { name, bytes: data });
    }
    if files.is_empty() {
        return Err(bad("no PNG, JPEG or WebP pages in it".into()));
    }
    files.sort_by(|a, b| natord::compare(&a.name, &b.name));
    Ok(files)
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

    #[test]
    fn pages_come_in_natural_order_and_other_entries_are_passed_over() {
        let bytes = zip_of(&[
            ("p10.png", b"x"),
            ("ComicInfo.xml", b"<ComicInfo/>"),
            ("p2.png", b"x"),
            ("__MACOSX/._p2.png", b"x"),
            ("p1.JPG", b"x"),
        ]);
        let names: Vec<String> = images("c.cbz", &bytes)
            .expect("reads")
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, ["p1.JPG", "p2.png", "p10.png"]);
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
            let e = images("c.cbz", &bytes).expect_err(expected).to_string();
            assert!(e.contains(expected), "{e}");
        }
        let big = zip_of(&[("a.png", &[0u8; 100]), ("b.png", &[0u8; 100])]);
        let tight = ArchiveLimits {
            bytes: 150,
            entries: 10,
        };
        let e = read_within("c.cbz", &big, &tight).expect_err("too big");
        assert!(e.to_string().contains("zip bomb"), "{e}");
    }
}
