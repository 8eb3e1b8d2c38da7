//! The path rules, in one place for every frontend.
//!
//! - **Project paths** a client names (`quire_open_project`): relative
//!   paths resolve inside the projects directory and may not climb out of
//!   it with `..`; absolute paths outside it are refused to remote clients
//!   (`/mcp`, unless `mcp.allow_any_path`) and allowed to local ones (stdio,
//!   the TUI), whose user started this process.
//! - **Managed projects** (listed and opened by id over HTTP, shown on the
//!   TUI's home screen) are the directories whose real path, links
//!   followed, is inside the projects directory: a symlink in it that
//!   points elsewhere is not a managed project.
//! - **Output files** (an export's `outPath`, the TUI's `/export PATH`) are
//!   never inside a project directory, links followed: only the core
//!   writes there (0.1.0 let `outPath = <project>/scene.json` overwrite an
//!   open project's snapshot).

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::CoreError;
use quire_model::error::CoreResult;
use quire_store::storage::{self, ProjectFiles};

/// Lexically removes `.` and resolves `..`; `None` if `..` climbs above
/// the start.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return None;
                }
                out.pop();
                depth -= 1;
            }
            Component::Normal(part) => {
                out.push(part);
                depth += 1;
            }
            Component::RootDir | Component::Prefix(_) => out.push(component.as_os_str()),
        }
    }
    Some(out)
}

/// `path` with its existing part resolved (symlinks followed) and the rest,
/// which does not exist yet, appended as written.
fn real(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = std::fs::canonicalize(&existing).unwrap_or(existing);
    out.extend(rest.into_iter().rev());
    out
}

/// Whether `path` is (or would be) inside `root`, links followed.
fn inside(path: &Path, root: &Path) -> bool {
    real(path).starts_with(real(root))
}

/// Whether `dir` is a managed project of `projects_dir`: inside it once
/// links are followed.
pub fn is_managed(dir: &Path, projects_dir: &Path) -> bool {
    inside(dir, projects_dir)
}

/// The project directory `path` is (or would be) inside, links followed.
pub fn enclosing_project(path: &Path) -> Option<PathBuf> {
    real(path)
        .ancestors()
        .find(|dir| {
            ProjectFiles::new(dir.to_path_buf())
                .project_toml()
                .is_file()
        })
        .map(Path::to_path_buf)
}

/// Checks that `path` may receive an output file: not a directory, and
/// not inside any project directory (links followed).
pub fn check_output(path: &Path) -> CoreResult<()> {
    if path.as_os_str().is_empty() {
        return Err(CoreError::InvalidInput("the output path is empty".into()));
    }
    if path.is_dir() {
        return Err(CoreError::InvalidInput(format!(
            "{} is a directory; name the file to write",
            path.display()
        )));
    }
    if let Some(project) = enclosing_project(path) {
        return Err(CoreError::InvalidInput(format!(
            "{} is inside the quire project {}; only quire itself writes into a project \
             directory, so write the file elsewhere",
            path.display(),
            project.display()
        )));
    }
    Ok(())
}

/// [`write_output`] on tokio's blocking pool, for async callers.
pub async fn write_output_file(path: PathBuf, bytes: Vec<u8>, overwrite: bool) -> CoreResult<()> {
    crate::blocking(move || write_output(&path, &bytes, overwrite)).await
}

/// Writes an output file under [`check_output`]: missing parent
/// directories are created, and the file appears whole or not at all
/// (temporary file beside it, then rename). An existing file is replaced
/// only with `overwrite`; otherwise it is a conflict and stays as it was
/// (checked by the rename itself, so a file that appears meanwhile is not
/// lost either).
pub fn write_output(path: &Path, bytes: &[u8], overwrite: bool) -> CoreResult<()> {
    check_output(path)?;
    let exists = || {
        CoreError::Conflict(format!(
            "{} already exists; say to overwrite it",
            path.display()
        ))
    };
    if !overwrite && std::fs::symlink_metadata(path).is_ok() {
        return Err(exists());
    }
    let dir = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => dir.to_path_buf(),
        None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| CoreError::io(&dir, e))?;
    let mut tmp = storage::temp_file_in(&dir)?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| CoreError::io(path, e))?;
    if !overwrite {
        return match tmp.persist_noclobber(path) {
            Ok(_) => Ok(()),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
            Err(e) => Err(CoreError::io(path, e.error)),
        };
    }
    // Follow a link at the target: what it points to is what was checked.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    tmp.persist(&target)
        .map_err(|e| CoreError::io(path, e.error))?;
    Ok(())
}

/// Resolves `given` for a client; `any_absolute` allows absolute paths
/// outside the projects directory.
pub fn resolve(given: &str, projects_dir: &Path, any_absolute: bool) -> Result<PathBuf, CoreError> {
    if given.trim().is_empty() {
        return Err(CoreError::InvalidInput("the path is empty".into()));
    }
    let raw = Path::new(given);
    if raw.is_absolute() {
        let path = normalize(raw)
            .ok_or_else(|| CoreError::InvalidInput(format!("`{given}` climbs above the root")))?;
        let climbs = raw.components().any(|c| c == Component::ParentDir);
        if climbs && !inside(&path, projects_dir) {
            return Err(CoreError::InvalidInput(format!(
                "`{given}`: `..` may not lead out of the projects directory"
            )));
        }
        if !any_absolute && !inside(&path, projects_dir) {
            return Err(CoreError::InvalidInput(format!(
                "`{given}` is outside the projects directory; over /mcp only paths inside it are allowed (set mcp.allow_any_path = true to allow any)"
            )));
        }
        return Ok(path);
    }
    let rel = normalize(raw).ok_or_else(|| {
        CoreError::InvalidInput(format!(
            "`{given}`: `..` may not climb out of the projects directory"
        ))
    })?;
    let path = projects_dir.join(rel);
    if !any_absolute && !inside(&path, projects_dir) {
        return Err(CoreError::InvalidInput(format!(
            "`{given}` leads out of the projects directory (through a link)"
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_stay_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(resolve("a/b", root, false).unwrap(), root.join("a/b"));
        assert_eq!(resolve("a/../b", root, false).unwrap(), root.join("b"));
        for bad in ["..", "../x", "a/../../x"] {
            let err = resolve(bad, root, true).unwrap_err().to_string();
            assert!(err.contains("may not climb out"), "{bad}: {err}");
        }
    }

    #[test]
    fn absolute_paths_depend_on_the_transport() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        std::fs::create_dir_all(&root).unwrap();
        let outside = dir.path().join("elsewhere");
        assert!(resolve(outside.to_str().unwrap(), &root, false).is_err());
        assert_eq!(
            resolve(outside.to_str().unwrap(), &root, true).unwrap(),
            outside
        );
        let within = root.join("p");
        assert_eq!(
            resolve(within.to_str().unwrap(), &root, false).unwrap(),
            within
        );
        let sneaky = format!("{}/../elsewhere", root.display());
        assert!(resolve(&sneaky, &root, true).is_err());
    }

    #[test]
    fn a_projects_directory_that_does_not_exist_yet_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("not/yet");
        assert_eq!(resolve("p", &root, false).unwrap(), root.join("p"));
    }

    #[test]
    fn outputs_never_go_into_a_project() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join("blobs")).unwrap();
        std::fs::write(project.join("project.toml"), "").unwrap();
        for bad in [
            project.join("scene.json"),
            project.join("blobs/new/x.zip"),
            project.join("export.xlf"),
        ] {
            let err = write_output(&bad, b"x", false).unwrap_err().to_string();
            assert!(err.contains("is inside the quire project"), "{err}");
            assert!(!bad.exists() || bad.ends_with("scene.json"));
        }
        assert!(!project.join("scene.json").exists());
        let good = dir.path().join("out/export.xlf");
        write_output(&good, b"ok", false).unwrap();
        assert_eq!(std::fs::read(&good).unwrap(), b"ok");
        assert!(write_output(dir.path(), b"x", true).is_err(), "a directory");
        // An existing file stays unless overwriting is asked for.
        let err = write_output(&good, b"again", false).unwrap_err();
        assert_eq!(err.code(), "conflict");
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(std::fs::read(&good).unwrap(), b"ok");
        write_output(&good, b"again", true).unwrap();
        assert_eq!(std::fs::read(&good).unwrap(), b"again");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_into_a_project_is_followed_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("project.toml"), "x").unwrap();
        std::fs::write(project.join("scene.json"), "keep").unwrap();
        let link = dir.path().join("innocent.json");
        std::os::unix::fs::symlink(project.join("scene.json"), &link).unwrap();
        assert!(write_output(&link, b"boom", true).is_err());
        std::os::unix::fs::symlink(&project, dir.path().join("dirlink")).unwrap();
        assert!(write_output(&dir.path().join("dirlink/scene.json"), b"boom", true).is_err());
        assert_eq!(std::fs::read(project.join("scene.json")).unwrap(), b"keep");
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_projects_directory_are_refused_over_http() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        assert!(resolve("out/x", &root, false).is_err());
        assert!(resolve("out/x", &root, true).is_ok());
    }
}
