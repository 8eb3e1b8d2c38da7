//! What `quire_import_pages` is given, read into the core's page sources:
//! files (by path) and inline items (text, or base64 image data). Each is
//! checked here for size and kind, before the core stores anything.

use std::path::Path;

use base64::Engine as _;

use super::reply::Outcome;
use super::tools::ImportItem;
use quire_core::import::{ImageFile, PageSource};
use quire_model::error::CoreError;
use quire_store::blobs::media_type;

/// The image types a page may be made from.
const IMAGE_TYPES: [&str; 3] = ["image/png", "image/jpeg", "image/webp"];

fn too_large(what: &str, bytes: u64, limit: u64) -> CoreError {
    CoreError::InvalidInput(format!(
        "{what} is {bytes} bytes, over the {limit}-byte limit (server.max_body_bytes)"
    ))
}

/// A file's bytes, if it is a file of at most `limit` bytes.
pub(super) async fn read_bytes(path: &Path, limit: u64) -> Outcome<Vec<u8>> {
    let shown = path.display().to_string();
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| CoreError::io(path, e))?;
    if !meta.is_file() {
        return Err(CoreError::InvalidInput(format!("{shown} is not a file")).into());
    }
    if meta.len() > limit {
        return Err(too_large(&shown, meta.len(), limit).into());
    }
    Ok(tokio::fs::read(path)
        .await
        .map_err(|e| CoreError::io(path, e))?)
}

/// A file, as the kind of page its name and bytes say (an image, a
/// subtitle file, a comic archive or UTF-8 text).
pub(super) async fn read_file(path: &Path, limit: u64) -> Outcome<PageSource> {
    let shown = path.display().to_string();
    let bytes = read_bytes(path, limit).await?;
    let name = path
        .file_name()
        .map_or(shown, |n| n.to_string_lossy().into_owned());
    Ok(PageSource::from_file(ImageFile { name, bytes })?)
}

/// An inline item: text as given; image data decoded, its type checked
/// against the `mimeType` it claims.
pub(super) fn inline(item: ImportItem, limit: u64) -> Outcome<PageSource> {
    match item {
        ImportItem::Text(t) => {
            let len = t.text.len() as u64;
            if len > limit {
                return Err(too_large(&format!("item `{}`", t.name), len, limit).into());
            }
            Ok(PageSource::Text {
                name: t.name,
                text: t.text,
            })
        }
        ImportItem::Image(i) => {
            let what = format!("item `{}`", i.name);
            if !IMAGE_TYPES.contains(&i.mime_type.as_str()) {
                return Err(CoreError::InvalidInput(format!(
                    "{what}: mimeType `{}` is not an image type quire reads (image/png, image/jpeg, image/webp)",
                    i.mime_type
                ))
                .into());
            }
            // Checked before decoding: base64 is 4 characters per 3 bytes.
            let decoded_len = (i.data.len() as u64) / 4 * 3;
            if decoded_len > limit {
                return Err(too_large(&what, decoded_len, limit).into());
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(i.data.trim())
                .map_err(|e| {
                    CoreError::InvalidInput(format!("{what}: data is not base64 ({e})"))
                })?;
            match media_type(&bytes) {
                found if found == i.mime_type => {}
                "application/octet-stream" => {
                    return Err(CoreError::InvalidInput(format!(
                        "{what}: the data is not an image"
                    ))
                    .into());
                }
                found => {
                    return Err(CoreError::InvalidInput(format!(
                        "{what}: the data is {found}, not {}",
                        i.mime_type
                    ))
                    .into());
                }
            }
            Ok(PageSource::Image(ImageFile {
                name: i.name,
                bytes,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::reply::Failure;
    use crate::mcp::tools::{ImageItem, TextItem};

    fn refused(outcome: Outcome<PageSource>) -> String {
        match outcome {
            Err(Failure::Tool(e)) => e.message,
            other => panic!("not refused: {other:?}"),
        }
    }

    fn image(mime_type: &str, data: &str) -> ImportItem {
        ImportItem::Image(ImageItem {
            name: "p1.png".into(),
            mime_type: mime_type.into(),
            data: data.into(),
        })
    }

    // The 8-byte PNG signature and an IHDR chunk of a 1×1 image.
    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    #[test]
    fn an_image_item_is_decoded_and_its_type_checked() {
        assert!(matches!(
            inline(image("image/png", PNG_1X1), 1 << 20),
            Ok(PageSource::Image(_))
        ));
        assert!(refused(inline(image("image/jpeg", PNG_1X1), 1 << 20)).contains("not image/jpeg"));
        assert!(
            refused(inline(image("text/plain", PNG_1X1), 1 << 20)).contains("not an image type")
        );
        let text = base64::engine::general_purpose::STANDARD.encode("hello");
        assert!(refused(inline(image("image/png", &text), 1 << 20)).contains("not an image"));
        assert!(refused(inline(image("image/png", "%%%"), 1 << 20)).contains("not base64"));
        assert!(
            refused(inline(image("image/png", PNG_1X1), 10)).contains("over the 10-byte limit")
        );
    }

    #[test]
    fn a_text_item_over_the_limit_is_refused() {
        let item = ImportItem::Text(TextItem {
            name: "t".into(),
            text: "x".repeat(11),
        });
        assert!(refused(inline(item, 10)).contains("11 bytes"));
    }
}
