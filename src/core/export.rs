//! Export a session (optionally some pages): `archive` (a zip of the
//! project, importable again), `json` (the scene snapshot), `markdown`
//! (each text block's source and translation), `xliff` (XLIFF 2.0, one
//! unit per text node), `po` (gettext, one entry per text node), `srt` and
//! `vtt` (a subtitle page's cues). Also the archive's way back in.

use std::collections::HashSet;
use std::io::{Cursor, Read, Write};
use std::path::Path;

use serde::Deserialize;

use super::blobs::{BlobHash, BlobStore};
use super::error::{CoreError, CoreResult};
use super::events::SessionSummary;
use super::ids::{PageId, ProjectId, SessionId};
use super::scene::{NodeKind, Scene, TextState};
use super::storage::{self, FORMAT_VERSION, ProjectFiles, ProjectToml, SnapshotFile};
use super::subtitles::{self, SubtitleFormat};
use super::{Core, render, slug};

/// Largest archive content quire unpacks (guards against zip bombs).
const MAX_ARCHIVE_BYTES: u64 = 8 << 30;
/// Most entries an archive may have (each is a file written).
const MAX_ARCHIVE_ENTRIES: usize = 200_000;

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
    /// archive: the project as a zip; srt, vtt: one subtitle page's cues;
    /// png, cbz, pdf: the rendered pages.
    pub format: ExportFormat,
    /// Only these pages (in scene order); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<PageId>>,
    /// XLIFF `trgLang`, PO `Language`; default: the project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_language: Option<String>,
}

/// Exported bytes with what to call them.
#[derive(Debug, Clone)]
pub struct Export {
    pub bytes: Vec<u8>,
    pub media_type: &'static str,
    pub file_name: String,
}

impl Core {
    pub async fn export(&self, session: SessionId, spec: ExportSpec) -> CoreResult<Export> {
        if let Some(tag) = &spec.target_language {
            super::lang::check_tag("targetLanguage", tag)?;
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
        let bytes = match spec.format {
            ExportFormat::Json => serde_json::to_vec_pretty(&SnapshotFile {
                epoch: snapshot.epoch,
                scene,
            })
            .map_err(|e| CoreError::internal(format!("cannot encode the scene: {e}")))?,
            ExportFormat::Markdown => markdown(&scene).into_bytes(),
            ExportFormat::Xliff => super::xliff::export(&scene, spec.target_language.as_deref())?,
            ExportFormat::Po => {
                super::po::export(&scene, spec.target_language.as_deref()).into_bytes()
            }
            ExportFormat::Srt => subtitles::export(&scene, SubtitleFormat::Srt)?.into_bytes(),
            ExportFormat::Vtt => subtitles::export(&scene, SubtitleFormat::Vtt)?.into_bytes(),
            ExportFormat::Png | ExportFormat::Cbz | ExportFormat::Pdf => {
                self.export_pages(session, scene, spec.format, spec.target_language)
                    .await?
            }
            ExportFormat::Archive => {
                let project_id = self.session(session)?.project_id;
                let store = self.blob_store(session)?;
                let epoch = snapshot.epoch;
                tokio::task::spawn_blocking(move || archive(project_id, epoch, scene, &store))
                    .await
                    .map_err(|e| CoreError::internal(format!("archive writer failed: {e}")))??
            }
        };
        let name = slug(&self.session(session)?.name);
        Ok(Export {
            bytes,
            media_type: spec.format.media_type(),
            file_name: format!("{name}.{}", spec.format.extension()),
        })
    }

    /// The rendered page exports: each image page's current render (made
    /// now, in memory, when stale or missing), in page order.
    async fn export_pages(
        &self,
        session: SessionId,
        scene: Scene,
        format: ExportFormat,
        language: Option<String>,
    ) -> CoreResult<Vec<u8>> {
        let language = language.or_else(|| scene.project.target_language.clone());
        let settings = self.render_settings(language.as_deref());
        let store = self.blob_store(session)?;
        let fonts = self.inner.fonts.clone();
        super::blocking(move || {
            let sheets = render::sheets(
                &scene,
                &store,
                &fonts,
                &settings,
                format == ExportFormat::Pdf,
            )?;
            let title = scene.project.name.as_str();
            let pictures = |sheets: Vec<render::export::Sheet>| {
                let pictures: Vec<(Vec<u8>, u32, u32)> = sheets
                    .into_iter()
                    .filter_map(|s| match s {
                        render::export::Sheet::Picture { png, width, height } => {
                            Some((png, width, height))
                        }
                        render::export::Sheet::Text(_) => None,
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
                ExportFormat::Png => render::export::png_zip(pictures(sheets)?),
                ExportFormat::Cbz => render::export::cbz(
                    pictures(sheets)?,
                    &render::export::ComicInfo {
                        title,
                        language: language.as_deref(),
                    },
                ),
                _ => render::export::pdf(sheets, title, &fonts, &settings.locale),
            };
            bytes.map_err(CoreError::internal)
        })
        .await
    }

    /// Unpacks an archive into the projects directory as a new project
    /// (see [`super::Blocking::import_managed_archive`]) and opens it.
    pub async fn import_managed_archive(&self, bytes: Vec<u8>) -> CoreResult<SessionSummary> {
        let core = self.clone();
        super::blocking(move || core.blocking().import_managed_archive(&bytes)).await
    }

    /// Unpacks an archive made by `export` into `dest` (which must not exist
    /// or be empty) as a new project, and opens it. Nothing is left behind
    /// when the archive is refused.
    pub async fn import_archive(&self, bytes: Vec<u8>, dest: &Path) -> CoreResult<SessionSummary> {
        let dest = dest.to_path_buf();
        let core = self.clone();
        super::blocking(move || {
            unpack(&bytes, &dest)?;
            core.blocking().open_project(&dest)
        })
        .await
    }
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

fn zip_err(e: impl std::fmt::Display) -> CoreError {
    CoreError::internal(format!("cannot write the archive: {e}"))
}

/// The project as a zip: `project.toml`, `scene.json` (a snapshot at
/// `epoch`), an empty `ops.log`, and every blob the scene uses.
fn archive(project: ProjectId, epoch: u64, scene: Scene, store: &BlobStore) -> CoreResult<Vec<u8>> {
    use zip::write::SimpleFileOptions;
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let toml = ProjectToml {
        id: project,
        name: scene.project.name.clone(),
        created_at: scene.project.created_at.clone(),
        format_version: FORMAT_VERSION,
        epoch: Some(epoch),
    };
    let toml = toml::to_string(&toml).map_err(zip_err)?;
    zip.start_file("project.toml", options).map_err(zip_err)?;
    zip.write_all(toml.as_bytes()).map_err(zip_err)?;
    let mut blobs: Vec<BlobHash> = scene
        .pages
        .iter()
        .flat_map(|p| p.nodes.iter().filter_map(|n| n.kind.blob().copied()))
        .collect();
    blobs.sort();
    blobs.dedup();
    let snapshot = SnapshotFile { epoch, scene }.encode()?;
    zip.start_file("scene.json", options).map_err(zip_err)?;
    zip.write_all(&snapshot).map_err(zip_err)?;
    zip.start_file("ops.log", options).map_err(zip_err)?;
    for hash in blobs {
        let bytes = store.get(&hash)?;
        let hex = hash.to_hex();
        // Images are already compressed.
        zip.start_file(format!("blobs/{}/{}", &hex[..2], &hex[2..]), stored)
            .map_err(zip_err)?;
        zip.write_all(&bytes).map_err(zip_err)?;
    }
    Ok(zip.finish().map_err(zip_err)?.into_inner())
}

fn bad_archive(message: impl Into<String>) -> CoreError {
    CoreError::InvalidInput(format!("not a quire archive: {}", message.into()))
}

/// Where an archive entry may go: only the files of a project directory.
fn entry_path(name: &str) -> Option<String> {
    match name {
        "project.toml" | "scene.json" | "ops.log" => Some(name.to_owned()),
        _ => {
            let rest = name.strip_prefix("blobs/")?;
            let (shard, tail) = rest.split_once('/')?;
            let hex = format!("{shard}{tail}");
            (shard.len() == 2 && hex.parse::<BlobHash>().is_ok()).then(|| name.to_owned())
        }
    }
}

/// What an archive may hold: content and entry count (zip bombs), read
/// as it inflates, whatever the entries declare.
pub(super) struct ArchiveLimits {
    pub bytes: u64,
    pub entries: usize,
}

pub(super) const ARCHIVE_LIMITS: ArchiveLimits = ArchiveLimits {
    bytes: MAX_ARCHIVE_BYTES,
    entries: MAX_ARCHIVE_ENTRIES,
};

pub(super) fn unpack(bytes: &[u8], dest: &Path) -> CoreResult<()> {
    unpack_within(bytes, dest, &ARCHIVE_LIMITS)
}

/// The project name an archive's `project.toml` records.
pub(super) fn archive_name(bytes: &[u8]) -> CoreResult<String> {
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| bad_archive(e.to_string()))?;
    let mut entry = zip
        .by_name("project.toml")
        .map_err(|_| bad_archive("no project.toml"))?;
    let mut text = String::new();
    entry
        .by_ref()
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(|e| bad_archive(format!("project.toml: {e}")))?;
    let toml: ProjectToml =
        toml::from_str(&text).map_err(|e| bad_archive(format!("project.toml: {e}")))?;
    Ok(toml.name)
}

fn unpack_within(bytes: &[u8], dest: &Path, limits: &ArchiveLimits) -> CoreResult<()> {
    if dest.exists()
        && std::fs::read_dir(dest)
            .map_err(|e| CoreError::io(dest, e))?
            .next()
            .is_some()
    {
        return Err(CoreError::Conflict(format!(
            "{} already exists and is not empty",
            dest.display()
        )));
    }
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| CoreError::io(parent, e))?;
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| bad_archive(e.to_string()))?;
    if zip.len() > limits.entries {
        return Err(bad_archive(format!(
            "{} entries; at most {} are allowed",
            zip.len(),
            limits.entries
        )));
    }
    // Unpack beside the destination, check everything, then rename: a
    // refused archive leaves nothing behind.
    let work = tempfile::Builder::new()
        .prefix(".quire-import-")
        .tempdir_in(parent)
        .map_err(|e| CoreError::io(parent, e))?;
    let mut left = limits.bytes;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| bad_archive(e.to_string()))?;
        let name = entry
            .name()
            .map_err(|e| bad_archive(e.to_string()))?
            .into_owned();
        if entry.is_symlink() {
            return Err(bad_archive(format!("`{name}` is a symbolic link")));
        }
        if entry.is_dir() {
            continue;
        }
        let rel =
            entry_path(&name).ok_or_else(|| bad_archive(format!("unexpected entry `{name}`")))?;
        let path = work.path().join(&rel);
        if let Some(dir) = path.parent() {
            let inside: Vec<&Path> = dir
                .ancestors()
                .take_while(|d| d.starts_with(work.path()))
                .collect();
            for dir in inside.into_iter().rev() {
                storage::private_dir(dir)?;
            }
        }
        let mut file = storage::private_file()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => bad_archive(format!("`{name}` appears twice")),
                _ => CoreError::io(&path, e),
            })?;
        // Inflated in chunks against what is left of the limit: an entry
        // cannot blow past it by lying about its size.
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(|e| bad_archive(format!("`{name}`: {e}")))?;
            if n == 0 {
                break;
            }
            left = left.checked_sub(n as u64).ok_or_else(|| {
                bad_archive(format!(
                    "it inflates to more than {} bytes (a zip bomb?)",
                    limits.bytes
                ))
            })?;
            hasher.update(&buf[..n]);
            file.write_all(&buf[..n])
                .map_err(|e| CoreError::io(&path, e))?;
        }
        if let Some(hex) = rel.strip_prefix("blobs/") {
            let hash: BlobHash = hex.replace('/', "").parse().map_err(bad_archive)?;
            if hash.to_hex() != hasher.finalize().to_hex().as_str() {
                return Err(bad_archive(format!(
                    "blob `{name}` does not match its hash"
                )));
            }
        }
    }
    let files = ProjectFiles::new(work.path().to_path_buf());
    let mut project =
        ProjectToml::read(&files.project_toml()).map_err(|e| bad_archive(e.to_string()))?;
    let snapshot = SnapshotFile::read(&files.scene_json())
        .map_err(|e| bad_archive(e.to_string()))?
        .ok_or_else(|| bad_archive("no scene.json"))?;
    let store = BlobStore::new(work.path());
    for page in &snapshot.scene.pages {
        for node in &page.nodes {
            if let Some(hash) = node.kind.blob()
                && !store.contains(hash)
            {
                return Err(bad_archive(format!(
                    "blob {hash} used by page `{}` is missing",
                    page.name
                )));
            }
        }
    }
    // A copy is a new project: it must not share the original's id.
    project.id = ProjectId::new();
    project.write(&files.project_toml())?;
    if !files.ops_log().exists() {
        storage::write_private(&files.ops_log(), b"")?;
    }
    storage::private_dir(&work.path().join("blobs"))?;
    if dest.exists() {
        std::fs::remove_dir(dest).map_err(|e| CoreError::io(dest, e))?;
    }
    let kept = work.keep();
    std::fs::rename(&kept, dest).map_err(|e| CoreError::io(dest, e))?;
    super::storage::fsync_dir(parent)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip of `entries` (name, bytes), deflated.
    fn zip_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
        use zip::write::SimpleFileOptions;
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, bytes) in entries {
            zip.start_file(*name, SimpleFileOptions::default()).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn an_archive_that_inflates_past_the_limit_is_refused_and_leaves_nothing() {
        // 4 MiB of zeros deflate to a few KiB: a small zip bomb.
        let zeros = vec![0u8; 4 << 20];
        let hash = BlobHash::of(&zeros).to_hex();
        let blob = format!("blobs/{}/{}", &hash[..2], &hash[2..]);
        let bomb = zip_of(&[("project.toml", Vec::new()), (&blob, zeros)]);
        assert!(bomb.len() < 64 << 10, "{}", bomb.len());
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("p");
        let limits = ArchiveLimits {
            bytes: 1 << 20,
            entries: 10,
        };
        let err = unpack_within(&bomb, &dest, &limits)
            .unwrap_err()
            .to_string();
        assert!(err.contains("inflates to more than 1048576 bytes"), "{err}");
        let many: Vec<(String, Vec<u8>)> = (0..11).map(|i| (format!("f{i}"), Vec::new())).collect();
        let many: Vec<(&str, Vec<u8>)> =
            many.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
        let err = unpack_within(&zip_of(&many), &dest, &limits)
            .unwrap_err()
            .to_string();
        assert!(err.contains("11 entries; at most 10"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn only_project_files_may_be_unpacked() {
        assert!(entry_path("project.toml").is_some());
        let hex = BlobHash::of(b"x").to_hex();
        assert!(entry_path(&format!("blobs/{}/{}", &hex[..2], &hex[2..])).is_some());
        for bad in [
            "../evil",
            "/etc/passwd",
            "blobs/../../x",
            ".lock",
            "blobs/ab/cd",
            "scene.json/x",
        ] {
            assert!(entry_path(bad).is_none(), "{bad}");
        }
    }
}
