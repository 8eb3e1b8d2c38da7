//! Importing pages: from text (one text node per paragraph), image files
//! (PNG, JPEG, WebP; one page each with a `source` image node), subtitle
//! files (one page, a timed text node per cue: `quire_formats::subtitles`),
//! translation files from any tool (PO/POT, XLIFF 1.2 and 2.0: one page,
//! a text node per segment with its entry, the file kept whole as the
//! page's document to be written back: `quire_formats::units`) and
//! comic archives (CBZ or ZIP; a page per image: `quire_formats::comic`). Each
//! import is one undoable `Batch`. Every image is checked whole
//! ([`images::check`]) and staged; the blobs go into place only once
//! every file has passed, so a bad file imports nothing (but a broken page
//! inside a comic archive, which is skipped and named).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{ApplyResult, Core};
use quire_formats::comic::Skipped;
use quire_formats::comic::{self, Checked};
use quire_formats::images;
use quire_formats::subtitles::{self, SubtitleFormat};
use quire_formats::units::{self, Document, TranslationFormat};
use quire_model::error::{CoreError, CoreResult};
use quire_model::hash::BlobHash;
use quire_model::ids::SessionId;
use quire_model::op::{NewNode, NewPage, Op, ProjectPatch};
use quire_model::scene::{Author, ImageRole, NodeKind, Origin, Timing, Transform};
use quire_store::blobs::Staging;

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

/// What an import of pages did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportResult {
    pub epoch: u64,
    /// Ids of the pages and nodes the import added, in order.
    pub created: Vec<Uuid>,
    /// Comic archive entries that were not imported, and why (a page that
    /// does not decode, a zip bomb's entry); empty when every page came in.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
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
    /// A PO or XLIFF file: a page with a text node per segment.
    Translations {
        /// The file's name as given.
        file: String,
        /// Its text, decoded.
        text: String,
        format: TranslationFormat,
    },
}

/// Whether `file` is one a project is made from (a translation or
/// subtitle file, an image or text) rather than a zip (a comic, or a
/// project archive, which `projects import` unpacks as it is).
pub fn makes_pages(file: &ImageFile) -> bool {
    if TranslationFormat::from_path(&file.name).is_some()
        || SubtitleFormat::from_path(&file.name).is_some()
    {
        return true;
    }
    if comic::is_comic(&file.name) {
        return false;
    }
    imagesize::image_type(&file.bytes).is_ok() || is_text_name(&file.name)
}

/// Whether a file by this name is read as text (`.txt`, `.md`, or no
/// extension).
fn is_text_name(name: &str) -> bool {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    match base.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            ["txt", "md", "text", "markdown"].contains(&ext.to_ascii_lowercase().as_str())
        }
        _ => true,
    }
}

impl PageSource {
    /// A file as the kind of page its name and bytes say: a subtitle file
    /// (`.srt`, `.vtt`), a translation file (`.po`, `.pot`, `.xlf`,
    /// `.xliff`, in the encoding it declares), a comic archive (`.cbz`,
    /// `.zip`), an image (by its bytes), or UTF-8 text (`.txt`, `.md`, or
    /// no extension).
    pub fn from_file(file: ImageFile) -> CoreResult<PageSource> {
        if let Some(format) = SubtitleFormat::from_path(&file.name) {
            let text = quire_formats::text::decode(&file.name, &file.bytes, None)?.text;
            return Ok(PageSource::Subtitles {
                name: page_name(&file.name),
                text,
                format,
            });
        }
        if let Some(format) = TranslationFormat::from_path(&file.name) {
            let text = units::decode(format, &file.name, &file.bytes)?;
            return Ok(PageSource::Translations {
                file: file.name,
                text,
                format,
            });
        }
        if comic::is_comic(&file.name) {
            return Ok(PageSource::Comic(file));
        }
        if imagesize::image_type(&file.bytes).is_ok() {
            return Ok(PageSource::Image(file));
        }
        let is_text = is_text_name(&file.name);
        let not_a_page = |name: &str| {
            CoreError::InvalidInput(format!(
                "{name}: not an image (PNG, JPEG, WebP), text (.txt, .md), subtitles \
                 (.srt, .vtt), translations (.po, .pot, .xlf, .xliff, .poxliff) or a comic archive \
                 (.cbz, .zip)"
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
            document: None,
        },
        at: None,
    })
}

/// The `AddPage` of a translation file (its text stored as `blob`): a
/// text node per segment, with the file's translation, state and entry;
/// and what the file says it translates from and into.
fn document_page(
    file: &str,
    document: Document,
    format: TranslationFormat,
    blob: BlobHash,
    source_lang: Option<&str>,
) -> Op {
    let at = quire_store::storage::now_rfc3339();
    let source_lang = source_lang.or(document.source_language.as_deref());
    let nodes = document
        .units
        .into_iter()
        .map(|unit| {
            let mut node = text_node(unit.source, source_lang, None);
            if let NodeKind::Text {
                translation,
                state,
                origin,
                entry,
                ..
            } = &mut node.kind
            {
                // A translation that came in the file is marked as such: a
                // person's, or (PO `fuzzy`, XLIFF 1.2 `needs-review-*`) a
                // machine's, by the `import` engine.
                *origin = unit.target.as_ref().map(|_| {
                    Box::new(Origin {
                        by: if unit.machine {
                            Author::Engine
                        } else {
                            Author::Human
                        },
                        engine: Some(super::translations::IMPORTED_ENGINE.to_owned()),
                        client: None,
                        user: None,
                        at: at.clone(),
                        score: None,
                        suggested_by: None,
                    })
                });
                *state = unit.state;
                *translation = unit.target;
                *entry = Some(Box::new(unit.entry));
            }
            node
        })
        .collect();
    Op::AddPage {
        page: NewPage {
            id: None,
            name: page_name(file),
            width: None,
            height: None,
            nodes: Some(nodes),
            document: Some(Box::new(quire_model::scene::Document {
                format: format.name().to_ascii_lowercase(),
                blob,
                name: file.rsplit(['/', '\\']).next().unwrap_or(file).to_owned(),
            })),
        },
        at: None,
    }
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
            timing: timing.map(Box::new),
            region: None,
            found_by: None,
            source_edit: None,
            entry: None,
            suggestions: Vec::new(),
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
            document: None,
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
    ) -> CoreResult<ImportResult> {
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

    /// A new managed project made from files (a translator's PO or XLIFF,
    /// subtitles, pages): named `name`, else after the first file; its
    /// pages as [`Core::import_files`] makes them, and its languages as
    /// given, else from a translation file that declares them. A file that
    /// cannot be imported leaves no project behind.
    pub async fn create_project_from_files(
        &self,
        name: Option<&str>,
        languages: super::Languages,
        files: Vec<ImageFile>,
    ) -> CoreResult<(super::SessionSummary, ImportResult)> {
        let Some(first) = files.first() else {
            return Err(CoreError::InvalidInput("no files to import".into()));
        };
        let name = name
            .map(str::to_owned)
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| page_name(&first.name));
        let session = self.create_managed_project_with(&name, languages).await?;
        match self.import_files(session.id, files).await {
            Ok(result) => Ok((self.session(session.id)?, result)),
            Err(e) => {
                let closed = self.close_session(session.id).await;
                if closed.is_ok()
                    && let Err(removed) = std::fs::remove_dir_all(&session.path)
                {
                    tracing::warn!(
                        "cannot remove the project {} a refused import made: {removed}",
                        session.path.display()
                    );
                }
                Err(e)
            }
        }
    }

    /// Pages from text, images, subtitles and comic archives, in the order
    /// given, as one history entry. Every source is checked before anything
    /// is stored; a bad one refuses the whole import and names itself, but
    /// for a comic archive's broken pages, which are skipped and named.
    pub async fn import_pages(
        &self,
        session: SessionId,
        sources: Vec<PageSource>,
        source_lang: Option<&str>,
    ) -> CoreResult<ImportResult> {
        if sources.is_empty() {
            return Err(CoreError::InvalidInput("nothing to import".into()));
        }
        let staging = self.blob_store(session)?.staging();
        let max_pixels = self.config().max_image_pixels;
        let max_op_bytes = self.config().session.max_op_bytes;
        let source_lang = source_lang.map(str::to_owned);
        // Checking an image decodes it: as many at once as thumbnails may
        // (one per core), so concurrent imports of huge pages do not add up.
        let permit = self.decode_permit().await?;
        let (mut ops, staging, skipped, languages) = super::blocking(move || {
            let limits = Limits {
                max_pixels,
                max_op_bytes,
            };
            pages_of(sources, source_lang.as_deref(), limits, staging)
        })
        .await?;
        drop(permit);
        // A translation file says what the project translates from and
        // into, when the project does not say yet.
        if languages.source.is_some() || languages.target.is_some() {
            let project = self.scene(session).await?.scene.project.clone();
            let valid = |tag: &Option<String>, current: &Option<String>| {
                tag.clone().filter(|t| {
                    current.is_none() && quire_model::lang::check_tag("language", t).is_ok()
                })
            };
            let source = valid(&languages.source, &project.source_language);
            let target = valid(&languages.target, &project.target_language);
            if source.is_some() || target.is_some() {
                ops.push(Op::UpdateProject {
                    patch: ProjectPatch {
                        source_language: source.map(Some),
                        target_language: target.map(Some),
                        ..ProjectPatch::default()
                    },
                });
            }
        }
        let pages = ops
            .iter()
            .filter(|o| matches!(o, Op::AddPage { .. }))
            .count();
        let batch = Op::Batch {
            label: Some(format!("import {}", counted(pages, "page"))),
            ops,
        };
        // What apply would refuse by its limits (a page name too long) is
        // refused before the blobs go into place.
        quire_model::limits::check_op(&batch).map_err(CoreError::InvalidOp)?;
        super::blocking(move || staging.commit()).await?;
        let ApplyResult { epoch, created } = self.apply(session, batch).await?;
        Ok(ImportResult {
            epoch,
            created,
            skipped,
        })
    }
}

/// The languages translation files declare (the first that says).
#[derive(Default)]
struct Languages {
    source: Option<String>,
    target: Option<String>,
}

/// The `AddPage` of every source, in order, with the images staged (a
/// blocking call: it decodes every image).
/// What an import may cost: an image's pixels, an op's bytes.
#[derive(Clone, Copy)]
struct Limits {
    max_pixels: u64,
    max_op_bytes: u64,
}

fn pages_of(
    sources: Vec<PageSource>,
    source_lang: Option<&str>,
    limits: Limits,
    mut staging: Staging,
) -> CoreResult<(Vec<Op>, Staging, Vec<Skipped>, Languages)> {
    let max_pixels = limits.max_pixels;
    let mut ops = Vec::with_capacity(sources.len());
    let mut skipped = Vec::new();
    let mut languages = Languages::default();
    for source in sources {
        match source {
            PageSource::Text { name, text } => ops.push(text_page(&name, &text, source_lang)?),
            PageSource::Subtitles { name, text, format } => {
                ops.push(subtitle_page(&name, &text, format, source_lang)?);
            }
            PageSource::Translations { file, text, format } => {
                let document = units::read_document_within(format, &text, limits.max_op_bytes)
                    .map_err(|e| CoreError::InvalidInput(format!("{file}: {e}")))?;
                languages.source = languages.source.take().or(document.source_language.clone());
                languages.target = languages.target.take().or(document.language.clone());
                if document.locked > 0 {
                    skipped.push(Skipped {
                        name: format!("{file}: {}", counted(document.locked, "unit")),
                        reason: "marked translate=\"no\": kept in the file as they are".into(),
                    });
                }
                let blob = staging.put(text.as_bytes())?;
                ops.push(document_page(&file, document, format, blob, source_lang));
            }
            PageSource::Image(file) => {
                if file.name.trim().is_empty() {
                    return Err(CoreError::InvalidInput("a file has no name".into()));
                }
                let header = images::check(&file.bytes, max_pixels)
                    .map_err(|e| CoreError::InvalidInput(format!("{}: {e}", file.name)))?;
                let blob = staging.put(&file.bytes)?;
                ops.push(image_page(&Checked {
                    name: file.name,
                    header,
                    blob,
                }));
            }
            PageSource::Comic(file) => {
                let (pages, bad) =
                    comic::pages(&file.name, &file.bytes, max_pixels, &mut |data| {
                        staging.put(data)
                    })?;
                ops.extend(pages.iter().map(image_page));
                skipped.extend(bad.into_iter().map(|s| Skipped {
                    name: format!("{}/{}", file.name, s.name),
                    reason: s.reason,
                }));
            }
        }
    }
    Ok((ops, staging, skipped, languages))
}

/// The `AddPage` of a checked image: the image as its full-page `source`.
fn image_page(image: &Checked) -> Op {
    let (w, h) = (image.header.width, image.header.height);
    Op::AddPage {
        page: NewPage {
            id: None,
            name: page_name(&image.name),
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
                    blob: image.blob,
                    role: ImageRole::Source,
                    opacity: 1.0,
                    name: Some(image.name.clone()),
                    rendered_from: None,
                },
            }]),
            document: None,
        },
        at: None,
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
