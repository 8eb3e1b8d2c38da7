//! Project directories under the projects directory: a name checked, the
//! directory name made of it, a new project written, and the managed
//! projects listed.

use std::path::Path;
use std::time::UNIX_EPOCH;

use crate::events::SessionSummary;
use crate::{ProjectEntry, paths};
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::ProjectId;
use quire_model::lang::Languages;
use quire_model::scene::Scene;
use quire_store::storage::{ProjectFiles, ProjectToml, SnapshotFile, fsync_dir, now_rfc3339};

/// A new project's name, trimmed, under the one name rule.
pub(crate) fn check_project_name(name: &str) -> CoreResult<String> {
    let trimmed = name.trim();
    quire_model::limits::check_name("a project name", trimmed).map_err(CoreError::InvalidInput)?;
    Ok(trimmed.to_owned())
}

/// A directory name for a project name: lowercase letters, digits and `-`.
pub(crate) fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() {
        "project".to_owned()
    } else {
        out
    }
}

/// Writes a new, empty project. `project.toml` is written last: a directory
/// without it is not a project, so a crash here leaves no half project.
pub(crate) fn init_project_dir(path: &Path, name: &str, languages: &Languages) -> CoreResult<()> {
    languages.check()?;
    if path.exists() {
        let empty = std::fs::read_dir(path)
            .map_err(|e| CoreError::io(path, e))?
            .next()
            .is_none();
        if !empty {
            return Err(CoreError::Conflict(format!(
                "{} already exists and is not empty",
                path.display()
            )));
        }
    }
    quire_store::storage::private_dir(path)?;
    quire_store::storage::tighten(path);
    quire_store::storage::private_dir(&path.join("blobs"))?;
    let files = ProjectFiles::new(path.to_path_buf());
    let now = now_rfc3339();
    let mut scene = Scene::new(name, &now);
    scene
        .project
        .source_language
        .clone_from(&languages.source_language);
    scene
        .project
        .target_language
        .clone_from(&languages.target_language);
    let snapshot = SnapshotFile { epoch: 0, scene };
    quire_store::storage::write_atomic(&files.scene_json(), &snapshot.encode()?)?;
    quire_store::storage::write_private(&files.ops_log(), b"")?;
    ProjectToml {
        id: ProjectId::new(),
        name: name.to_owned(),
        created_at: now,
        format_version: quire_store::storage::FORMAT_VERSION,
        epoch: Some(0),
    }
    .write(&files.project_toml())?;
    fsync_dir(path)?;
    if let Some(parent) = path.parent() {
        fsync_dir(parent)?;
    }
    Ok(())
}

/// Managed projects under `root`; unreadable entries are skipped with a
/// warning so one broken project does not hide the others.
pub fn list_projects_in(root: &Path, open: &[SessionSummary]) -> CoreResult<Vec<ProjectEntry>> {
    let read = match std::fs::read_dir(root) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CoreError::io(root, e)),
    };
    let mut out = Vec::new();
    for entry in read.flatten() {
        let dir = entry.path();
        let files = ProjectFiles::new(dir.clone());
        if !files.project_toml().is_file() {
            continue;
        }
        let toml = match ProjectToml::read(&files.project_toml()) {
            Ok(toml) => toml,
            Err(e) => {
                tracing::warn!("skipping {}: {e}", dir.display());
                continue;
            }
        };
        let canonical = std::fs::canonicalize(&dir).unwrap_or(dir.clone());
        if !paths::is_managed(&canonical, root) {
            tracing::warn!(
                "skipping {}: it links to {}, outside the projects directory",
                dir.display(),
                canonical.display()
            );
            continue;
        }
        let session = open.iter().find(|s| s.path == canonical);
        let updated_at_ms = [files.scene_json(), files.ops_log(), files.project_toml()]
            .iter()
            .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
            .filter_map(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
            .max()
            .unwrap_or(0);
        out.push(ProjectEntry {
            id: toml.id,
            name: session.map_or(toml.name, |s| s.name.clone()),
            path: canonical,
            updated_at_ms,
            session_id: session.map(|s| s.id),
        });
    }
    out.sort_by(|a, b| {
        b.updated_at_ms
            .cmp(&a.updated_at_ms)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_directory_safe() {
        assert_eq!(slug("My Manga: Vol. 1"), "my-manga-vol-1");
        assert_eq!(slug("???"), "project");
        assert_eq!(slug("Ünïcödé"), "ünïcödé");
    }

    #[test]
    fn names_are_checked() {
        assert!(check_project_name("  ").is_err());
        assert!(check_project_name("a\nb").is_err());
        assert_eq!(check_project_name(" ok ").unwrap(), "ok");
    }
}
