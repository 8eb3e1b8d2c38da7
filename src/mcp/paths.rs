//! Where an MCP client may point `quire_open_project` and `outPath`.
//!
//! Relative paths resolve inside the projects directory and may not climb
//! out of it with `..`. Absolute paths outside it are refused over `/mcp`
//! (a remote client) unless `mcp.allow_any_path` is set, and allowed over
//! stdio (the local user's own client spawned this process).

use std::path::{Component, Path, PathBuf};

use crate::core::CoreError;

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
                "`{given}`: `..` may not lead out of the projects directory {}",
                projects_dir.display()
            )));
        }
        if !any_absolute && !inside(&path, projects_dir) {
            return Err(CoreError::InvalidInput(format!(
                "`{given}` is outside the projects directory {}; over /mcp only paths inside it are allowed (set mcp.allow_any_path = true to allow any)",
                projects_dir.display()
            )));
        }
        return Ok(path);
    }
    let rel = normalize(raw).ok_or_else(|| {
        CoreError::InvalidInput(format!(
            "`{given}`: `..` may not climb out of the projects directory {}",
            projects_dir.display()
        ))
    })?;
    let path = projects_dir.join(rel);
    if !any_absolute && !inside(&path, projects_dir) {
        return Err(CoreError::InvalidInput(format!(
            "`{given}` leads out of the projects directory {} (through a link)",
            projects_dir.display()
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
