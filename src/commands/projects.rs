//! `quire projects list`: the managed projects in the projects directory,
//! and which are open in a running quire. `quire projects import FILE`: a
//! project archive unpacked there as a new project, or a new project made
//! from a translator's file (PO, XLIFF), subtitles, an image or text.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::write_failed;
use crate::config::Loaded;
use crate::error::Failure;
use quire_core::Core;
use quire_core::import::{ImageFile, makes_pages};
use quire_core::projects::list_projects_in;
use quire_model::error::CoreError;
use quire_model::lang::Languages;
use quire_store::storage::lock::{Holder, ProjectLock};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    #[serde(flatten)]
    project: quire_core::ProjectEntry,
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

pub fn import(
    loaded: &Loaded,
    file: &Path,
    name: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let runtime = |e: CoreError| Failure::Runtime(anyhow::Error::new(e));
    let bytes = std::fs::read(file).map_err(|e| runtime(CoreError::io(file, e)))?;
    let given = ImageFile {
        name: file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        bytes,
    };
    // A file pages are made of (not a zip: that is a project archive).
    if makes_pages(&given) {
        let (core, rt) = super::glossary::in_process(loaded)?;
        let (session, result) = rt
            .block_on(core.create_project_from_files(name, Languages::default(), vec![given]))
            .map_err(runtime)?;
        rt.block_on(core.close_session(session.id))
            .map_err(runtime)?;
        let nodes = result.created.len().saturating_sub(1);
        writeln!(
            out,
            "made `{}` from {}: {nodes} segments; {}",
            session.name,
            file.display(),
            session.path.display()
        )
        .map_err(write_failed)?;
        for skipped in result.skipped {
            writeln!(out, "  {}: {}", skipped.name, skipped.reason).map_err(write_failed)?;
        }
        return Ok(());
    }
    if name.is_some() {
        return Err(runtime(CoreError::InvalidInput(
            "--name is for files a project is made from; an archive keeps its own name".into(),
        )));
    }
    let bytes = given.bytes;
    let paths = loaded.data_paths()?;
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
