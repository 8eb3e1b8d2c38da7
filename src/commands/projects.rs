//! `quire projects list`: the managed projects in the projects directory,
//! and which are open in a running quire. `quire projects import FILE`: a
//! project archive unpacked there as a new project.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::write_failed;
use crate::config::Loaded;
use crate::core::storage::lock::{Holder, ProjectLock};
use crate::core::{Core, CoreError, list_projects_in};
use crate::error::Failure;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    #[serde(flatten)]
    project: crate::core::ProjectEntry,
    #[serde(skip_serializing_if = "Option::is_none")]
    open_in: Option<Holder>,
}

pub fn list(loaded: &Loaded, json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let paths = loaded.data_paths()?;
    let projects = list_projects_in(&paths.projects_dir, &[])
        .map_err(|e| Failure::Runtime(anyhow::Error::new(e)))?;
    let rows: Vec<Row> = projects
        .into_iter()
        .map(|project| Row {
            open_in: ProjectLock::probe(&project.path),
            project,
        })
        .collect();
    if json {
        let text = serde_json::to_string_pretty(&rows)
            .map_err(|e| Failure::Runtime(anyhow::Error::new(e)))?;
        return writeln!(out, "{text}").map_err(write_failed);
    }
    if rows.is_empty() {
        return writeln!(
            out,
            "no projects in {}\ncreate one in the TUI (`quire`, then /new NAME) or with \
             POST /api/v1/projects on a headless server",
            paths.projects_dir.display()
        )
        .map_err(write_failed);
    }
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|r| {
            let updated = humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + std::time::Duration::from_millis(r.project.updated_at_ms),
            );
            let state = match &r.open_in {
                Some(h) => format!("open (pid {}, {})", h.pid, h.mode),
                None => "closed".to_owned(),
            };
            [
                r.project.name.clone(),
                updated.to_string(),
                state,
                r.project.path.display().to_string(),
            ]
        })
        .collect();
    super::table(out, ["NAME", "UPDATED", "STATE", "PATH"], &cells)
}

pub fn import(loaded: &Loaded, file: &Path, out: &mut dyn Write) -> Result<(), Failure> {
    let runtime = |e: CoreError| Failure::Runtime(anyhow::Error::new(e));
    let paths = loaded.data_paths()?;
    let bytes = std::fs::read(file).map_err(|e| runtime(CoreError::io(file, e)))?;
    let core = Core::new(crate::launch::core_config(&loaded.config, &paths, "cli"));
    let session = core
        .blocking()
        .import_managed_archive(&bytes)
        .map_err(runtime)?;
    core.blocking().close_session(session.id).map_err(runtime)?;
    writeln!(
        out,
        "imported `{}` as a new project: {}",
        session.name,
        session.path.display()
    )
    .map_err(write_failed)
}
