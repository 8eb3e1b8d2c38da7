//! Export a session (optionally some pages): `archive` (a zip of the
//! project, importable again), `json` (the scene snapshot), `markdown`
//! (each text block's source and translation), `xliff` (XLIFF 2.0, one
//! unit per text node), `po` (gettext, one entry per text node) — or, for
//! a page made from a PO or XLIFF file, that file written back with its
//! translations (`quire_formats::units::write_back`) —, `srt` and
//! `vtt` (a subtitle page's cues), and the rendered pages (`png`, `cbz`,
//! `pdf`: [`quire_render::export`]). The archive is [`super::archive`]'s.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::Core;
use super::projects::slug;
use quire_formats::subtitles::{self, SubtitleFormat};
use quire_formats::units::{Filled, TranslationFormat};
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::{PageId, SessionId};
use quire_model::scene::{NodeKind, Page, Scene, TextState};
use quire_model::suggestion::ranked;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Archive,
    Json,
    Markdown,
    Xliff,
    Po,
    Tmx,
    Srt,
    Vtt,
    // The rendered pages: PNG files in a zip, a comic book archive, a PDF
    // (plain comments: doc comments would make each its own schema in the
    // MCP tool's list).
    Png,
    Cbz,
    Pdf,
}

impl ExportFormat {
    pub fn media_type(self) -> &'static str {
        match self {
            ExportFormat::Archive => "application/zip",
            ExportFormat::Json => "application/json",
            ExportFormat::Markdown => "text/markdown; charset=utf-8",
            ExportFormat::Xliff => "application/xliff+xml",
            ExportFormat::Po => "text/x-gettext-translation; charset=utf-8",
            ExportFormat::Tmx => "application/x-tmx+xml",
            ExportFormat::Srt => "application/x-subrip; charset=utf-8",
            ExportFormat::Vtt => "text/vtt; charset=utf-8",
            ExportFormat::Png => "application/zip",
            ExportFormat::Cbz => "application/vnd.comicbook+zip",
            ExportFormat::Pdf => "application/pdf",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Archive => "quire.zip",
            ExportFormat::Json => "json",
            ExportFormat::Markdown => "md",
            ExportFormat::Xliff => "xlf",
            ExportFormat::Po => "po",
            ExportFormat::Tmx => "tmx",
            ExportFormat::Srt => "srt",
            ExportFormat::Vtt => "vtt",
            ExportFormat::Png => "png.zip",
            ExportFormat::Cbz => "cbz",
            ExportFormat::Pdf => "pdf",
        }
    }

    /// Text formats can be shown inline; archives, images and PDFs are
    /// binary.
    pub fn is_text(self) -> bool {
        !matches!(
            self,
            ExportFormat::Archive | ExportFormat::Png | ExportFormat::Cbz | ExportFormat::Pdf
        )
    }
}

/// What an export is asked for: the one definition behind the HTTP body,
/// the MCP tool's arguments (flattened into them) and what an attached TUI
/// sends.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportSpec {
    /// srt, vtt: one subtitle page; png, cbz, pdf: rendered pages.
    pub format: ExportFormat,
    /// Only these pages; default all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<PageId>>,
    /// XLIFF `trgLang`, PO `Language`; default: the project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_language: Option<String>,
    // png, cbz, pdf: the page images as png (default), jpeg or webp (a
    // plain comment: the values say it, and `tools/list` is kept small).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_format: Option<ImageFormat>,
    /// jpeg, webp: 1-100, default 85.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub quality: Option<u8>,
    // srt, vtt, po: untranslated segments written as their source (srt,
    // vtt default), empty (po default), or refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untranslated: Option<Untranslated>,
    /// archive: with the undo history, so the project keeps its undo where
    /// it is imported (left out of the MCP schema, for its budget).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub history: bool,
}

/// How an export writes the segments that have no translation.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Untranslated {
    Source,
    Empty,
    Refuse,
}

impl Untranslated {
    pub fn as_str(self) -> &'static str {
        match self {
            Untranslated::Source => "source",
            Untranslated::Empty => "empty",
            Untranslated::Refuse => "refuse",
        }
    }
}

/// The untranslated segments an export wrote, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unfilled {
    pub count: usize,
    pub total: usize,
    pub written: Untranslated,
}

impl Unfilled {
    /// `67 of 120 segments have no translation: written with their source`.
    pub fn said(&self) -> String {
        let how = match self.written {
            Untranslated::Source => "written with their source text",
            Untranslated::Empty => "written empty",
            Untranslated::Refuse => "refused",
        };
        format!(
            "{} of {} segments have no translation: {how}",
            self.count, self.total
        )
    }

    /// The `Quire-Untranslated` header: `67/120 source`.
    pub fn header(&self) -> String {
        format!("{}/{} {}", self.count, self.total, self.written.as_str())
    }
}

/// The page images of a `png`, `cbz` or `pdf` export.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Png,
    Jpeg,
    Webp,
}

/// The quality of JPEG and WebP pages when none is given: visually
/// lossless on lettering at about a tenth of the PNG's size.
pub const DEFAULT_QUALITY: u8 = 85;

impl ExportSpec {
    /// The whole project in `format`, every option at its default.
    pub fn of(format: ExportFormat) -> ExportSpec {
        ExportSpec {
            format,
            pages: None,
            target_language: None,
            image_format: None,
            quality: None,
            untranslated: None,
            history: false,
        }
    }

    /// A format as people write it on a command line: `po`, `xliff`,
    /// `cbz`, and for the rendered pages an image format and quality,
    /// `cbz:jpeg:90`; why not, naming the part that is wrong.
    pub fn parse(given: &str) -> Result<ExportSpec, String> {
        let mut parts = given.split(':');
        let format = match parts.next().unwrap_or_default() {
            "markdown" | "md" => ExportFormat::Markdown,
            "xliff" | "xlf" => ExportFormat::Xliff,
            "po" => ExportFormat::Po,
            "srt" => ExportFormat::Srt,
            "vtt" => ExportFormat::Vtt,
            "json" => ExportFormat::Json,
            "tmx" => ExportFormat::Tmx,
            "archive" | "zip" => ExportFormat::Archive,
            "png" => ExportFormat::Png,
            "cbz" => ExportFormat::Cbz,
            "pdf" => ExportFormat::Pdf,
            other => {
                return Err(format!(
                    "unknown format `{other}` (markdown, xliff, po, srt, vtt, json, tmx, archive, \
                     png, cbz, pdf)"
                ));
            }
        };
        let mut spec = ExportSpec::of(format);
        spec.image_format = match parts.next() {
            None => None,
            Some("png") => Some(ImageFormat::Png),
            Some("jpeg" | "jpg") => Some(ImageFormat::Jpeg),
            Some("webp") => Some(ImageFormat::Webp),
            Some(other) => return Err(format!("unknown image format `{other}` (png, jpeg, webp)")),
        };
        spec.quality = match parts.next() {
            None => None,
            Some(q) => Some(
                q.parse::<u8>()
                    .ok()
                    .filter(|q| (1..=100).contains(q))
                    .ok_or_else(|| format!("quality `{q}` is not a whole number from 1 to 100"))?,
            ),
        };
        if parts.next().is_some() {
            return Err(format!(
                "`{given}`: FORMAT, FORMAT:IMAGE or FORMAT:IMAGE:QUALITY"
            ));
        }
        Ok(spec)
    }

    /// How the page images are written, refused when it does not apply.
    fn encoding(&self) -> CoreResult<quire_render::export::Encoding> {
        use quire_render::export::Encoding;
        let pages = matches!(
            self.format,
            ExportFormat::Png | ExportFormat::Cbz | ExportFormat::Pdf
        );
        if !pages && (self.image_format.is_some() || self.quality.is_some()) {
            return Err(CoreError::InvalidInput(
                "imageFormat and quality apply to the png, cbz and pdf exports only".into(),
            ));
        }
        if let Some(q) = self.quality
            && !(1..=100).contains(&q)
        {
            return Err(CoreError::InvalidInput(format!(
                "quality {q} is out of range (1-100)"
            )));
        }
        let quality = self.quality.unwrap_or(DEFAULT_QUALITY);
        match self.image_format {
            None | Some(ImageFormat::Png) if self.quality.is_some() => {
                Err(CoreError::InvalidInput(
                    "quality applies to jpeg and webp images (give imageFormat)".into(),
                ))
            }
            None | Some(ImageFormat::Png) => Ok(Encoding::Png),
            Some(ImageFormat::Jpeg) => Ok(Encoding::Jpeg(quality)),
            Some(ImageFormat::Webp) => Ok(Encoding::Webp(quality)),
        }
    }
}

/// Exported bytes with what to call them.
#[derive(Debug, Clone)]
pub struct Export {
    pub bytes: Vec<u8>,
    pub media_type: &'static str,
    pub file_name: String,
    /// A subtitle or PO export with untranslated segments: how many, and
    /// how they were written.
    pub untranslated: Option<Unfilled>,
}

/// For an srt, vtt or po export: `scene` with its untranslated segments
/// written as `spec` asks (or refused), and what was done.
fn fill_untranslated(
    scene: &mut Scene,
    format: ExportFormat,
    asked: Option<Untranslated>,
) -> CoreResult<Option<Unfilled>> {
    let subtitles = matches!(format, ExportFormat::Srt | ExportFormat::Vtt);
    if !subtitles && format != ExportFormat::Po {
        if asked.is_some() {
            return Err(CoreError::InvalidInput(
                "untranslated applies to the srt, vtt and po exports only".into(),
            ));
        }
        return Ok(None);
    }
    let written = asked.unwrap_or(if subtitles {
        Untranslated::Source
    } else {
        Untranslated::Empty
    });
    // A text node that counts (a cue, for subtitles; any text with a
    // source otherwise), and whether it has no translation.
    let counted = |kind: &NodeKind| match kind {
        NodeKind::Text {
            text,
            translation,
            timing,
            ..
        } if !(subtitles && timing.is_none())
            && text.as_deref().is_some_and(|t| !t.trim().is_empty()) =>
        {
            Some(translation.as_deref().is_none_or(str::is_empty))
        }
        _ => None,
    };
    let (mut count, mut total) = (0, 0);
    let mut missing: Vec<String> = Vec::new();
    for page in &scene.pages {
        for node in &page.nodes {
            let Some(untranslated) = counted(&node.kind) else {
                continue;
            };
            total += 1;
            if !untranslated {
                continue;
            }
            count += 1;
            if missing.len() < 10 {
                missing.push(
                    match crate::cues::numbers(page).find(|(id, _)| *id == node.id) {
                        Some((_, n)) => format!("cue {n}"),
                        None => {
                            let source = match &node.kind {
                                NodeKind::Text { text, .. } => text.as_deref().unwrap_or_default(),
                                _ => "",
                            };
                            format!("\"{}\"", source.chars().take(30).collect::<String>())
                        }
                    },
                );
            }
        }
    }
    // Only what is written otherwise than the format does by itself (a PO
    // entry with the source, an empty cue) changes the export's copy, and
    // only the pages that have such a node are copied.
    let rewrite = match written {
        Untranslated::Source => !subtitles,
        Untranslated::Empty => subtitles,
        Untranslated::Refuse => false,
    };
    if rewrite && count > 0 {
        for page in &mut scene.pages {
            if !page.nodes.iter().any(|n| counted(&n.kind) == Some(true)) {
                continue;
            }
            for node in &mut std::sync::Arc::make_mut(page).nodes {
                if counted(&node.kind) != Some(true) {
                    continue;
                }
                if let NodeKind::Text {
                    text, translation, ..
                } = &mut node.kind
                {
                    if subtitles {
                        *text = Some(String::new());
                    } else {
                        *translation = text.clone();
                    }
                }
            }
        }
    }
    if count == 0 {
        return Ok(None);
    }
    if written == Untranslated::Refuse {
        return Err(CoreError::InvalidInput(format!(
            "{count} of {total} segments have no translation ({}{}); translate them, or export with untranslated = source or empty",
            missing.join(", "),
            if count > missing.len() { ", …" } else { "" }
        )));
    }
    Ok(Some(Unfilled {
        count,
        total,
        written,
    }))
}

impl Core {
    /// Keeps what an XLIFF or PO export of `scene` says of each segment,
    /// before the file leaves; the id the file is to carry.
    async fn record_base(&self, session: SessionId, scene: &Scene) -> CoreResult<String> {
        let dir = self.open_session(session)?.exports_dir();
        let base = super::bases::Base::of(scene);
        let id = base.id.clone();
        super::blocking(move || base.save(&dir)).await?;
        Ok(id)
    }

    pub async fn export(&self, session: SessionId, spec: ExportSpec) -> CoreResult<Export> {
        if let Some(tag) = &spec.target_language {
            quire_model::lang::check_tag("targetLanguage", tag)?;
        }
        let encoding = spec.encoding()?;
        if spec.history && (spec.format != ExportFormat::Archive || spec.pages.is_some()) {
            return Err(CoreError::InvalidInput(
                "history: only an archive of the whole project carries its undo history".into(),
            ));
        }
        let snapshot = self.scene(session).await?;
        let mut scene = snapshot.scene;
        if let Some(pages) = &spec.pages {
            if let Some(missing) = pages.iter().find(|p| scene.page(**p).is_none()) {
                return Err(CoreError::InvalidInput(format!(
                    "unknown page id {missing} (not in the scene)"
                )));
            }
            let keep: HashSet<PageId> = pages.iter().copied().collect();
            scene.pages.retain(|p| keep.contains(&p.id));
        }
        // A translator's own PO goes back as it came: its untranslated
        // entries stay empty, as the file had them.
        let untranslated = if own_document(&scene, spec.format).is_some() {
            None
        } else {
            fill_untranslated(&mut scene, spec.format, spec.untranslated)?
        };
        let bytes = match spec.format {
            ExportFormat::Json => serde_json::to_vec_pretty(&super::session::SceneSnapshot {
                epoch: snapshot.epoch,
                scene,
            })
            .map_err(|e| CoreError::internal(format!("cannot encode the scene: {e}")))?,
            ExportFormat::Markdown => markdown(&scene).into_bytes(),
            ExportFormat::Xliff | ExportFormat::Po => {
                let base = self.record_base(session, &scene).await?;
                let language = spec.target_language.as_deref();
                if let Some(page) = own_document(&scene, spec.format) {
                    let languages = (
                        scene.project.source_language.clone(),
                        language
                            .or(scene.project.target_language.as_deref())
                            .map(str::to_owned),
                    );
                    let bytes = self.write_document(session, page, &base, languages).await?;
                    let name = page.document.as_ref().map(|d| d.name.clone());
                    return Ok(Export {
                        bytes,
                        media_type: spec.format.media_type(),
                        file_name: name.unwrap_or_default(),
                        untranslated: None,
                    });
                }
                if spec.format == ExportFormat::Xliff {
                    quire_formats::xliff::export(&scene, language, Some(&base))?
                } else {
                    quire_formats::po::export(&scene, language, Some(&base)).into_bytes()
                }
            }
            ExportFormat::Tmx => self.export_tmx(session).await?,
            ExportFormat::Srt => subtitles::export(&scene, SubtitleFormat::Srt)?.into_bytes(),
            ExportFormat::Vtt => subtitles::export(&scene, SubtitleFormat::Vtt)?.into_bytes(),
            ExportFormat::Png | ExportFormat::Cbz | ExportFormat::Pdf => {
                self.export_pages(session, scene, spec.format, encoding, spec.target_language)
                    .await?
            }
            ExportFormat::Archive => {
                let project_id = self.session(session)?.project_id;
                let store = self.blob_store(session)?;
                // The history and the scene of one epoch, read together.
                let (epoch, scene, history) = if spec.history {
                    let open = self.open_session(session)?;
                    let (snapshot, stacks) =
                        super::blocking(move || open.snapshot_with_history()).await?;
                    (snapshot.epoch, snapshot.scene, Some(stacks))
                } else {
                    (snapshot.epoch, scene, None)
                };
                tokio::task::spawn_blocking(move || {
                    super::archive::write(project_id, epoch, scene, &store, history)
                })
                .await
                .map_err(|e| CoreError::internal(format!("archive writer failed: {e}")))??
            }
        };
        let name = slug(&self.session(session)?.name);
        Ok(Export {
            bytes,
            media_type: spec.format.media_type(),
            file_name: format!("{name}.{}", spec.format.extension()),
            untranslated,
        })
    }

    /// The translation file `page` was made from, written back with its
    /// translations, `base` as its export id and the project's languages
    /// (source, target).
    async fn write_document(
        &self,
        session: SessionId,
        page: &Page,
        base: &str,
        (source, target): (Option<String>, Option<String>),
    ) -> CoreResult<Vec<u8>> {
        let Some(document) = page.document.clone() else {
            return Err(CoreError::internal("the page has no document"));
        };
        let format = match document.format.as_str() {
            "po" => TranslationFormat::Po,
            _ => TranslationFormat::Xliff,
        };
        let filled: HashMap<(String, Option<u32>), Filled> = page
            .nodes
            .iter()
            .filter_map(|node| {
                let NodeKind::Text {
                    translation,
                    entry: Some(entry),
                    suggestions,
                    ..
                } = &node.kind
                else {
                    return None;
                };
                let translation = translation.clone().filter(|t| !t.is_empty());
                let first = entry.form.unwrap_or(0) == 0;
                let filled = Filled {
                    state: node.kind.state().unwrap_or(TextState::Initial),
                    machine: node.kind.is_machine_work() || node.kind.source_changed(),
                    translation,
                    suggestions: if first {
                        ranked(suggestions).into_iter().cloned().collect()
                    } else {
                        Vec::new()
                    },
                };
                Some(((entry.key.clone(), entry.form), filled))
            })
            .collect();
        let store = self.blob_store(session)?;
        let base = base.to_owned();
        super::blocking(move || {
            let bytes = store.get(&document.blob)?;
            let original = String::from_utf8(bytes).map_err(|_| {
                CoreError::internal(format!("the document of {} is not UTF-8", document.name))
            })?;
            let fill = |key: &str, form: Option<u32>| filled.get(&(key.to_owned(), form)).cloned();
            quire_formats::units::write_back(
                format,
                &original,
                &fill,
                Some(&base),
                quire_formats::units::Languages {
                    source: source.as_deref(),
                    target: target.as_deref(),
                },
            )
            .map(String::into_bytes)
        })
        .await
    }

    /// The rendered page exports: each image page's current render (made
    /// now, in memory, when stale or missing), in page order.
    async fn export_pages(
        &self,
        session: SessionId,
        scene: Scene,
        format: ExportFormat,
        encoding: quire_render::export::Encoding,
        language: Option<String>,
    ) -> CoreResult<Vec<u8>> {
        let language = language.or_else(|| scene.project.target_language.clone());
        let settings = quire_render::Settings::new(
            &self.config().settings.get::<quire_render::RenderConfig>(),
            self.config().max_image_pixels,
            language.as_deref(),
        )
        .for_project(&scene.project);
        let store = self.blob_store(session)?;
        let fonts = self.inner.fonts.clone();
        super::blocking(move || {
            let sheets = quire_render::sheets(
                &scene,
                &|hash| store.get(hash),
                &fonts,
                &settings,
                format == ExportFormat::Pdf,
            )?;
            let project = &scene.project;
            let title = project.name.as_str();
            let pictures = |sheets: Vec<quire_render::export::Sheet>| {
                let pictures: Vec<quire_render::export::Picture> = sheets
                    .into_iter()
                    .filter_map(|s| match s {
                        quire_render::export::Sheet::Picture { png, width, height } => {
                            Some((png, width, height))
                        }
                        quire_render::export::Sheet::Text(_) => None,
                    })
                    .collect();
                if pictures.is_empty() {
                    return Err(CoreError::InvalidInput(
                        "no page has an image to render (text pages go into the pdf export)".into(),
                    ));
                }
                Ok(pictures)
            };
            let bytes = match format {
                ExportFormat::Png => quire_render::export::png_zip(pictures(sheets)?, encoding),
                ExportFormat::Cbz => quire_render::export::cbz(
                    pictures(sheets)?,
                    encoding,
                    &quire_render::export::ComicInfo {
                        title,
                        series: project.series.as_deref(),
                        number: project.number.as_deref(),
                        translator: project.translator.as_deref(),
                        language: language.as_deref(),
                        source_language: project.source_language.as_deref(),
                        right_to_left: project.reading()
                            == quire_model::scene::ReadingDirection::Rtl,
                    },
                ),
                _ => quire_render::export::pdf(sheets, encoding, title, &fonts, &settings.locale),
            };
            bytes.map_err(CoreError::internal)
        })
        .await
    }
}

/// The page whose own translation file an export in `format` writes
/// back: the only page with text, when it came from a file of that
/// format. Other exports are quire's own XLIFF 2.0 or PO.
fn own_document(scene: &Scene, format: ExportFormat) -> Option<&Page> {
    let mut with_text = scene.pages.iter().filter(|p| {
        p.nodes
            .iter()
            .any(|n| matches!(n.kind, NodeKind::Text { .. }))
    });
    let page = with_text.next()?;
    let wanted = match format {
        ExportFormat::Po => "po",
        _ => "xliff",
    };
    (with_text.next().is_none() && page.document.as_ref()?.format == wanted).then_some(page)
}

/// Each page as a table (one row per text node: source, translation, state),
/// so the source and its translation stay apart when rendered; all text
/// escaped, line breaks as `<br>`.
fn markdown(scene: &Scene) -> String {
    let mut out = format!("# {}\n", md_escape(&scene.project.name));
    for (i, page) in scene.pages.iter().enumerate() {
        out.push_str(&format!("\n## {}. {}\n\n", i + 1, md_escape(&page.name)));
        let rows: Vec<String> = page
            .nodes
            .iter()
            .filter_map(|node| match &node.kind {
                NodeKind::Text {
                    text, translation, ..
                } => Some((node, text, translation)),
                _ => None,
            })
            .enumerate()
            .map(|(n, (node, text, translation))| {
                let state = node.kind.state().unwrap_or(TextState::Initial);
                format!(
                    "| {} | {} | {} | {} |\n",
                    n + 1,
                    text.as_deref().map_or_else(String::new, md_escape),
                    translation
                        .as_deref()
                        .map_or_else(|| "*(not translated)*".to_owned(), md_escape),
                    state.as_str()
                )
            })
            .collect();
        if rows.is_empty() {
            out.push_str("*(no text)*\n");
            continue;
        }
        out.push_str("| # | Source | Translation | State |\n| ---: | --- | --- | --- |\n");
        out.extend(rows);
    }
    out
}

/// Text as Markdown that renders as exactly that text inside a table cell
/// or heading (inline content, where no block syntax applies): the
/// characters inline syntax uses backslash-escaped, `<`, `>` and `&` as
/// entities, line breaks as `<br>`; other punctuation stays readable.
fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' => out.push_str("<br>"),
            '\r' => {}
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}
