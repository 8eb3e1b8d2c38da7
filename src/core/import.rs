//! Importing pages: from text (one text node per paragraph), image files
//! (PNG, JPEG, WebP; one page each with a `source` image node), subtitle
//! files (one page, a timed text node per cue: [`super::subtitles`]) and
//! comic archives (CBZ or ZIP; a page per image: [`super::comic`]). Each
//! import is one undoable `Batch`. Every file is checked before anything is
//! stored, so a bad file imports nothing.

use std::sync::Arc;

use super::error::{CoreError, CoreResult};
use super::ids::SessionId;
use super::op::{NewNode, NewPage, Op};
use super::scene::{ImageRole, NodeKind, Timing, Transform};
use super::subtitles::{self, SubtitleFormat};
use super::{ApplyResult, Core};

/// An uploaded file.
#[derive(Debug, Clone, Default)]
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

/// What imported pages are made from.
#[derive(Debug, Clone)]
pub enum PageSource {
    /// A page with a text node per paragraph.
    Text { name: String, text: String },
    /// A page with the image as its full-page `source` node.
    Image(ImageFile),
    /// A page with a timed text node per cue.
    Subtitles {
        name: String,
        text: String,
        format: SubtitleFormat,
    },
    /// A CBZ or ZIP: a page per image in it.
    Comic(ImageFile),
}

impl PageSource {
    /// A file as the kind of page its name and bytes say: a subtitle file
    /// (`.srt`, `.vtt`), a comic archive (`.cbz`, `.zip`), an image (by its
    /// bytes), or UTF-8 text (`.txt`, `.md`, or no extension).
    pub fn from_file(file: ImageFile) -> CoreResult<PageSource> {
        if let Some(format) = SubtitleFormat::from_path(&file.name) {
            let text = String::from_utf8(file.bytes).map_err(|_| {
                CoreError::InvalidInput(format!("{}: a subtitle file must be UTF-8", file.name))
            })?;
            return Ok(PageSource::Subtitles {
                name: page_name(&file.name),
                text,
                format,
            });
        }
        if super::comic::is_comic(&file.name) {
            return Ok(PageSource::Comic(file));
        }
        if imagesize::image_type(&file.bytes).is_ok() {
            return Ok(PageSource::Image(file));
        }
        let base = file.name.rsplit(['/', '\\']).next().unwrap_or(&file.name);
        let is_text = match base.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => {
                ["txt", "md", "text", "markdown"].contains(&ext.to_ascii_lowercase().as_str())
            }
            _ => true,
        };
        let not_a_page = |name: &str| {
            CoreError::InvalidInput(format!(
                "{name}: not an image (PNG, JPEG, WebP), text (.txt, .md), subtitles \
                 (.srt, .vtt) or a comic archive (.cbz, .zip)"
            ))
        };
        if !is_text {
            return Err(not_a_page(&file.name));
        }
        let name = file.name;
        match String::from_utf8(file.bytes) {
            Ok(text) => Ok(PageSource::Text {
                name: page_name(&name),
                text,
            }),
            Err(_) => Err(CoreError::InvalidInput(format!("{name}: not UTF-8 text"))),
        }
    }
}

/// The `AddPage` of a subtitle file: a text node per cue, with its timing.
fn subtitle_page(
    name: &str,
    text: &str,
    format: SubtitleFormat,
    source_lang: Option<&str>,
) -> CoreResult<Op> {
    let cues = subtitles::parse(format, text)
        .map_err(|e| CoreError::InvalidInput(format!("{name}: {e}")))?;
    let nodes = cues
        .into_iter()
        .map(|cue| text_node(cue.text, source_lang, Some(cue.timing)))
        .collect();
    Ok(Op::AddPage {
        page: NewPage {
            id: None,
            name: name.to_owned(),
            width: None,
            height: None,
            nodes: Some(nodes),
        },
        at: None,
    })
}

fn text_node(text: String, source_lang: Option<&str>, timing: Option<Timing>) -> NewNode {
    NewNode {
        id: None,
        transform: Transform::default(),
        visible: true,
        kind: NodeKind::Text {
            text: Some(text),
            translation: None,
            source_lang: source_lang.map(str::to_owned),
            style: None,
            state: None,
            origin: None,
            timing,
        },
    }
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
        .map(|p| text_node(p, source_lang, None))
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

    /// Pages from uploaded files, in natural file name order (`page2`
    /// before `page10`), each file as [`PageSource::from_file`] reads it.
    pub async fn import_files(
        &self,
        session: SessionId,
        mut files: Vec<ImageFile>,
    ) -> CoreResult<ApplyResult> {
        if files.is_empty() {
            return Err(CoreError::InvalidInput("no files to import".into()));
        }
        files.sort_by(|a, b| natord::compare(&a.name, &b.name));
        let sources = files
            .into_iter()
            .map(PageSource::from_file)
            .collect::<CoreResult<Vec<_>>>()?;
        self.import_pages(session, sources, None).await
    }

    /// Pages from text, images, subtitles and comic archives, in the order
    /// given, as one history entry. Every source is checked before anything
    /// is stored; a bad one refuses the whole import and names itself.
    pub async fn import_pages(
        &self,
        session: SessionId,
        sources: Vec<PageSource>,
        source_lang: Option<&str>,
    ) -> CoreResult<ApplyResult> {
        if sources.is_empty() {
            return Err(CoreError::InvalidInput("nothing to import".into()));
        }
        // Each page's op, or the image it is to be made from (images are
        // stored together once all of them are checked).
        let mut slots: Vec<Result<Op, ImageFile>> = Vec::with_capacity(sources.len());
        for source in sources {
            match source {
                PageSource::Text { name, text } => {
                    slots.push(Ok(text_page(&name, &text, source_lang)?));
                }
                PageSource::Subtitles { name, text, format } => {
                    slots.push(Ok(subtitle_page(&name, &text, format, source_lang)?));
                }
                PageSource::Image(file) => slots.push(Err(file)),
                PageSource::Comic(file) => {
                    let name = file.name;
                    let pages =
                        super::blocking(move || super::comic::images(&name, &file.bytes)).await?;
                    slots.extend(pages.into_iter().map(Err));
                }
            }
        }
        let count = slots.len();
        let mut at = Vec::new();
        let mut files = Vec::new();
        for (i, slot) in slots.iter_mut().enumerate() {
            if let Err(file) = slot {
                at.push(i);
                files.push(std::mem::take(file));
            }
        }
        let mut ops: Vec<Option<Op>> = slots.into_iter().map(Result::ok).collect();
        if !files.is_empty() {
            for (i, op) in at.into_iter().zip(self.image_pages(session, files).await?) {
                ops[i] = Some(op);
            }
        }
        let ops: Vec<Op> = ops.into_iter().flatten().collect();
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
                            rendered_from: None,
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
