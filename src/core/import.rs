//! Importing pages: from text (one text node per paragraph) and from image
//! files (PNG, JPEG, WebP; one page each with a `source` image node). Each
//! import is one undoable `Batch`. Every file is checked before anything is
//! stored, so a bad file imports nothing.

use std::sync::Arc;

use super::error::{CoreError, CoreResult};
use super::ids::SessionId;
use super::op::{NewNode, NewPage, Op};
use super::scene::{ImageRole, NodeKind, Transform};
use super::{ApplyResult, Core};

/// An uploaded file.
#[derive(Debug, Clone)]
pub struct ImageFile {
    /// The file name as given (used for ordering and the page name).
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Paragraphs of `text`: blocks separated by blank lines, trimmed.
pub fn paragraphs(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n");
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(current.join("\n").trim().to_owned());
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        out.push(current.join("\n").trim().to_owned());
    }
    out
}

/// Width and height of a PNG, JPEG or WebP image, or why not.
pub fn image_size(name: &str, bytes: &[u8]) -> CoreResult<(u32, u32)> {
    use imagesize::ImageType;
    match imagesize::image_type(bytes) {
        Ok(ImageType::Png | ImageType::Jpeg | ImageType::Webp) => {}
        Ok(other) => {
            return Err(CoreError::InvalidInput(format!(
                "{name}: unsupported image format {other:?} (use PNG, JPEG or WebP)"
            )));
        }
        Err(_) => {
            return Err(CoreError::InvalidInput(format!(
                "{name}: not an image (use PNG, JPEG or WebP)"
            )));
        }
    }
    let size = imagesize::blob_size(bytes).map_err(|e| {
        CoreError::InvalidInput(format!("{name}: corrupt or truncated image ({e})"))
    })?;
    let (w, h) = (u32::try_from(size.width), u32::try_from(size.height));
    match (w, h) {
        (Ok(w), Ok(h)) if w > 0 && h > 0 => Ok((w, h)),
        _ => Err(CoreError::InvalidInput(format!(
            "{name}: corrupt image (size {}×{})",
            size.width, size.height
        ))),
    }
}

/// The page name for a file: its name without directories or extension.
fn page_name(file: &str) -> String {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    match base.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => base.to_owned(),
    }
}

/// `3 pages`, `1 image`.
fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// What one imported page is made from.
#[derive(Debug, Clone)]
pub enum PageSource {
    /// A page with a text node per paragraph.
    Text { name: String, text: String },
    /// A page with the image as its full-page `source` node.
    Image(ImageFile),
}

/// The `AddPage` of a text page; refuses an empty name or text.
fn text_page(name: &str, text: &str, source_lang: Option<&str>) -> CoreResult<Op> {
    if name.trim().is_empty() {
        return Err(CoreError::InvalidInput(
            "a page name must not be empty".into(),
        ));
    }
    let nodes: Vec<NewNode> = paragraphs(text)
        .into_iter()
        .map(|p| NewNode {
            id: None,
            transform: Transform::default(),
            visible: true,
            kind: NodeKind::Text {
                text: Some(p),
                translation: None,
                source_lang: source_lang.map(str::to_owned),
                style: None,
                state: None,
                origin: None,
            },
        })
        .collect();
    if nodes.is_empty() {
        return Err(CoreError::InvalidInput(format!(
            "`{name}`: no text to import"
        )));
    }
    Ok(Op::AddPage {
        page: NewPage {
            id: None,
            name: name.trim().to_owned(),
            width: None,
            height: None,
            nodes: Some(nodes),
        },
        at: None,
    })
}

impl Core {
    /// One page named `name` with a text node per paragraph of `text`.
    pub async fn import_text(
        &self,
        session: SessionId,
        name: &str,
        text: &str,
        source_lang: Option<&str>,
    ) -> CoreResult<ApplyResult> {
        let page = text_page(name, text, source_lang)?;
        self.apply_as_one(session, vec![page], format!("import text {}", name.trim()))
            .await
    }

    /// `ops` as one history entry named `label`.
    async fn apply_as_one(
        &self,
        session: SessionId,
        ops: Vec<Op>,
        label: String,
    ) -> CoreResult<ApplyResult> {
        self.apply(
            session,
            Op::Batch {
                ops,
                label: Some(label),
            },
        )
        .await
    }

    /// One page per image, in natural file name order (`page2` before
    /// `page10`), each with a full-page `source` image node.
    pub async fn import_images(
        &self,
        session: SessionId,
        mut files: Vec<ImageFile>,
    ) -> CoreResult<ApplyResult> {
        if files.is_empty() {
            return Err(CoreError::InvalidInput("no files to import".into()));
        }
        files.sort_by(|a, b| natord::compare(&a.name, &b.name));
        let ops = self.image_pages(session, files).await?;
        let label = counted(ops.len(), "image");
        self.apply_as_one(session, ops, format!("import {label}"))
            .await
    }

    /// Pages from text and images, in the order given, as one history
    /// entry. Every source is checked before anything is stored; a bad
    /// one refuses the whole import and names itself.
    pub async fn import_pages(
        &self,
        session: SessionId,
        sources: Vec<PageSource>,
        source_lang: Option<&str>,
    ) -> CoreResult<ApplyResult> {
        if sources.is_empty() {
            return Err(CoreError::InvalidInput("nothing to import".into()));
        }
        let count = sources.len();
        let mut slots: Vec<Option<Op>> = Vec::with_capacity(count);
        let mut images = Vec::new();
        for (i, source) in sources.into_iter().enumerate() {
            match source {
                PageSource::Text { name, text } => {
                    slots.push(Some(text_page(&name, &text, source_lang)?));
                }
                PageSource::Image(file) => {
                    slots.push(None);
                    images.push((i, file));
                }
            }
        }
        let (at, files): (Vec<usize>, Vec<ImageFile>) = images.into_iter().unzip();
        if !files.is_empty() {
            let ops = self.image_pages(session, files).await?;
            for (i, op) in at.into_iter().zip(ops) {
                slots[i] = Some(op);
            }
        }
        let ops: Vec<Op> = slots.into_iter().flatten().collect();
        self.apply_as_one(session, ops, format!("import {}", counted(count, "page")))
            .await
    }

    /// The `AddPage`s of `files`, in their order: every image checked
    /// first, then the bytes stored as blobs (off the runtime).
    async fn image_pages(&self, session: SessionId, files: Vec<ImageFile>) -> CoreResult<Vec<Op>> {
        let mut sizes = Vec::with_capacity(files.len());
        for file in &files {
            if file.name.trim().is_empty() {
                return Err(CoreError::InvalidInput("a file has no name".into()));
            }
            sizes.push(image_size(&file.name, &file.bytes)?);
        }
        let store = self.blob_store(session)?;
        let files = Arc::new(files);
        let stored = files.clone();
        let hashes = tokio::task::spawn_blocking(move || {
            stored
                .iter()
                .map(|f| store.put(&f.bytes))
                .collect::<CoreResult<Vec<_>>>()
        })
        .await
        .map_err(|e| CoreError::internal(format!("blob writer failed: {e}")))??;
        Ok(files
            .iter()
            .zip(sizes)
            .zip(hashes)
            .map(|((file, (w, h)), blob)| Op::AddPage {
                page: NewPage {
                    id: None,
                    name: page_name(&file.name),
                    width: Some(w),
                    height: Some(h),
                    nodes: Some(vec![NewNode {
                        id: None,
                        transform: Transform {
                            x: 0.0,
                            y: 0.0,
                            width: f64::from(w),
                            height: f64::from(h),
                            rotation: None,
                        },
                        visible: true,
                        kind: NodeKind::Image {
                            blob,
                            role: ImageRole::Source,
                            opacity: 1.0,
                            name: Some(file.name.clone()),
                        },
                    }]),
                },
                at: None,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_split_on_blank_lines() {
        assert_eq!(
            paragraphs("One\ntwo\n\n\n  Three  \r\n\r\nFour\n"),
            vec!["One\ntwo", "Three", "Four"]
        );
        assert!(paragraphs(" \n\n").is_empty());
    }

    #[test]
    fn page_names_drop_directories_and_extensions() {
        assert_eq!(page_name("scans/p010.png"), "p010");
        assert_eq!(page_name(".hidden"), ".hidden");
        assert_eq!(page_name("noext"), "noext");
    }
}
