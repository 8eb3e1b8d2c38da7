//! Export a session (optionally some pages): `archive` (a zip of the
//! project, importable again), `json` (the scene snapshot), `markdown`
//! (each text block's source and translation) and `xliff` (XLIFF 2.0, one
//! unit per text node). Also the archive's way back in.

use std::collections::HashSet;
use std::io::{Cursor, Read, Write};
use std::path::Path;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event as Xml};
use serde::Deserialize;

use super::blobs::{BlobHash, BlobStore};
use super::error::{CoreError, CoreResult};
use super::events::SessionSummary;
use super::ids::{PageId, ProjectId, SessionId};
use super::scene::{NodeKind, Scene};
use super::storage::{self, FORMAT_VERSION, ProjectFiles, ProjectToml, SnapshotFile};
use super::{Core, slug};

/// Largest archive content quire unpacks (guards against zip bombs).
const MAX_ARCHIVE_BYTES: u64 = 8 << 30;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Archive,
    Json,
    Markdown,
    Xliff,
}

impl ExportFormat {
    pub fn media_type(self) -> &'static str {
        match self {
            ExportFormat::Archive => "application/zip",
            ExportFormat::Json => "application/json",
            ExportFormat::Markdown => "text/markdown; charset=utf-8",
            ExportFormat::Xliff => "application/xliff+xml",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Archive => "quire.zip",
            ExportFormat::Json => "json",
            ExportFormat::Markdown => "md",
            ExportFormat::Xliff => "xlf",
        }
    }

    /// Text formats can be shown inline; the archive is binary.
    pub fn is_text(self) -> bool {
        self != ExportFormat::Archive
    }
}

/// What an export is asked for: the one definition behind the HTTP body,
/// the MCP tool's arguments (flattened into them) and what an attached TUI
/// sends.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportSpec {
    /// archive (zip of the project), json, markdown or xliff (XLIFF 2.0).
    pub format: ExportFormat,
    /// Only these pages (in scene order); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<PageId>>,
    /// XLIFF `trgLang`; default: the project's.
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
            ExportFormat::Xliff => xliff(&scene, spec.target_language.as_deref())?,
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

fn markdown(scene: &Scene) -> String {
    let mut out = format!("# {}\n", scene.project.name);
    for (i, page) in scene.pages.iter().enumerate() {
        out.push_str(&format!("\n## {}. {}\n", i + 1, page.name));
        let mut any = false;
        for node in &page.nodes {
            let NodeKind::Text {
                text, translation, ..
            } = &node.kind
            else {
                continue;
            };
            any = true;
            let one_line = |s: &str| s.trim().replace('\n', "<br>");
            out.push_str(&format!(
                "\n- **Source:** {}\n  **Translation:** {}\n",
                text.as_deref().map_or_else(|| "—".to_owned(), one_line),
                translation
                    .as_deref()
                    .map_or_else(|| "_(not translated)_".to_owned(), one_line)
            ));
        }
        if !any {
            out.push_str("\n_(no text)_\n");
        }
    }
    out
}

/// Whether XML 1.0 can carry `c` at all (its `Char` production); the C0
/// controls but tab, LF and CR, and U+FFFE/U+FFFF, cannot appear even as
/// character references.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Segment text as XLIFF 2.0 content, escaped: markup characters as
/// entities, CR as `&#13;` (a parser would turn a raw one into LF), and a
/// character XML cannot carry as XLIFF's `<cp hex="…"/>`, so the text
/// comes back exactly.
fn xliff_content(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c if !xml_char(c) => out.push_str(&format!("<cp hex=\"{:04X}\"/>", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// An attribute value, escaped: quotes and markup as entities, tab, LF and
/// CR as character references (attribute normalisation would turn raw ones
/// into spaces), and a character XML cannot carry replaced by U+FFFD
/// (attributes have no `<cp>`; names cannot hold such characters since
/// the name rule, but projects from 0.1.0 may).
fn xml_attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if !xml_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `<name key="value" …>` with each value escaped by [`xml_attribute`].
fn element<'a>(name: &'a str, attributes: &[(&str, &str)]) -> BytesStart<'a> {
    let mut start = BytesStart::new(name);
    for (key, value) in attributes {
        start.push_attribute(quick_xml::events::attributes::Attribute {
            key: quick_xml::name::QName(key),
            value: xml_attribute(value).into(),
        });
    }
    start
}

fn xml_err(e: impl std::fmt::Display) -> CoreError {
    CoreError::internal(format!("cannot write XLIFF: {e}"))
}

fn xliff(scene: &Scene, target_language: Option<&str>) -> CoreResult<Vec<u8>> {
    let texts = || {
        scene.pages.iter().flat_map(|p| {
            p.nodes.iter().filter_map(move |n| match &n.kind {
                NodeKind::Text {
                    text,
                    translation,
                    source_lang,
                    ..
                } => Some((p, n, text, translation, source_lang)),
                _ => None,
            })
        })
    };
    // The project's languages first, then what the nodes say.
    let src_lang = scene
        .project
        .source_language
        .clone()
        .or_else(|| texts().find_map(|(.., lang)| lang.clone()))
        .unwrap_or_else(|| "und".to_owned());
    let target_language = target_language.or(scene.project.target_language.as_deref());
    let has_targets = texts().any(|(_, _, _, t, _)| t.is_some());
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Xml::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .map_err(xml_err)?;
    let trg = target_language.unwrap_or("und");
    let mut root_attributes = vec![
        ("xmlns", "urn:oasis:names:tc:xliff:document:2.0"),
        ("version", "2.0"),
        ("srcLang", src_lang.as_str()),
    ];
    if has_targets || target_language.is_some() {
        root_attributes.push(("trgLang", trg));
    }
    w.write_event(Xml::Start(element("xliff", &root_attributes)))
        .map_err(xml_err)?;
    let file = element(
        "file",
        &[("id", "f1"), ("original", scene.project.name.as_str())],
    );
    w.write_event(Xml::Start(file)).map_err(xml_err)?;
    for page in &scene.pages {
        let id = format!("p{}", page.id);
        let group = element("group", &[("id", &id), ("name", &page.name)]);
        w.write_event(Xml::Start(group)).map_err(xml_err)?;
        for node in &page.nodes {
            let NodeKind::Text {
                text, translation, ..
            } = &node.kind
            else {
                continue;
            };
            let id = format!("n{}", node.id);
            w.write_event(Xml::Start(element("unit", &[("id", &id)])))
                .map_err(xml_err)?;
            w.write_event(Xml::Start(BytesStart::new("notes")))
                .map_err(xml_err)?;
            for (category, value) in [("page", page.id.to_string()), ("node", node.id.to_string())]
            {
                let note = element("note", &[("category", category)]);
                w.write_event(Xml::Start(note)).map_err(xml_err)?;
                w.write_event(Xml::Text(BytesText::new(&value)))
                    .map_err(xml_err)?;
                w.write_event(Xml::End(BytesEnd::new("note")))
                    .map_err(xml_err)?;
            }
            w.write_event(Xml::End(BytesEnd::new("notes")))
                .map_err(xml_err)?;
            w.write_event(Xml::Start(BytesStart::new("segment")))
                .map_err(xml_err)?;
            let parts = [
                ("source", Some(text.as_deref().unwrap_or(""))),
                ("target", translation.as_deref()),
            ];
            for (tag, value) in parts {
                let Some(value) = value else { continue };
                let el = element(tag, &[("xml:space", "preserve")]);
                w.write_event(Xml::Start(el)).map_err(xml_err)?;
                w.write_event(Xml::Text(BytesText::from_escaped(xliff_content(value))))
                    .map_err(xml_err)?;
                w.write_event(Xml::End(BytesEnd::new(tag)))
                    .map_err(xml_err)?;
            }
            w.write_event(Xml::End(BytesEnd::new("segment")))
                .map_err(xml_err)?;
            w.write_event(Xml::End(BytesEnd::new("unit")))
                .map_err(xml_err)?;
        }
        w.write_event(Xml::End(BytesEnd::new("group")))
            .map_err(xml_err)?;
    }
    w.write_event(Xml::End(BytesEnd::new("file")))
        .map_err(xml_err)?;
    w.write_event(Xml::End(BytesEnd::new("xliff")))
        .map_err(xml_err)?;
    let mut bytes = w.into_inner();
    bytes.push(b'\n');
    Ok(bytes)
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

pub(super) fn unpack(bytes: &[u8], dest: &Path) -> CoreResult<()> {
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
    // Unpack beside the destination, check everything, then rename: a
    // refused archive leaves nothing behind.
    let work = tempfile::Builder::new()
        .prefix(".quire-import-")
        .tempdir_in(parent)
        .map_err(|e| CoreError::io(parent, e))?;
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| bad_archive(e.to_string()))?;
    let mut total = 0u64;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| bad_archive(e.to_string()))?;
        if entry.is_dir() {
            continue;
        }
        let name = entry
            .name()
            .map_err(|e| bad_archive(e.to_string()))?
            .into_owned();
        let rel =
            entry_path(&name).ok_or_else(|| bad_archive(format!("unexpected entry `{name}`")))?;
        total = total.saturating_add(entry.size());
        if total > MAX_ARCHIVE_BYTES {
            return Err(bad_archive("content larger than 8 GiB"));
        }
        let mut content = Vec::with_capacity(entry.size().min(1 << 26) as usize);
        entry
            .by_ref()
            .take(MAX_ARCHIVE_BYTES)
            .read_to_end(&mut content)
            .map_err(|e| bad_archive(format!("`{name}`: {e}")))?;
        if let Some(hex) = rel.strip_prefix("blobs/") {
            let hash: BlobHash = hex.replace('/', "").parse().map_err(bad_archive)?;
            if BlobHash::of(&content) != hash {
                return Err(bad_archive(format!(
                    "blob `{name}` does not match its hash"
                )));
            }
        }
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
        storage::write_private(&path, &content)?;
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
