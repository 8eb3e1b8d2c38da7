//! `quire glossary import FILE --into PROJECT`: a CSV or TBX file's terms
//! added to a project's glossary, as one history entry, the project opened
//! and closed again in this process (so not while another quire has it
//! open: its lock says so).

use std::io::Write;
use std::path::Path;

use super::write_failed;
use crate::config::Loaded;
use crate::error::Failure;
use quire_core::events::SessionSummary;
use quire_core::glossary::GlossaryImport;
use quire_core::{Core, ProjectEntry};
use quire_formats::glossary::GlossaryFormat;
use quire_model::error::CoreError;

pub fn import(
    loaded: &Loaded,
    file: &Path,
    project: &str,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let runtime_err = |e: CoreError| Failure::Runtime(anyhow::Error::new(e));
    let shown = file.display().to_string();
    let format = GlossaryFormat::from_path(&shown).ok_or_else(|| {
        Failure::usage(format!(
            "{shown}: a glossary is a .csv (a header row naming source and target) or a .tbx file"
        ))
    })?;
    let bytes = std::fs::read(file).map_err(|e| runtime_err(CoreError::io(file, e)))?;
    let content = String::from_utf8(bytes)
        .map_err(|_| runtime_err(CoreError::InvalidInput(format!("{shown} is not UTF-8"))))?;
    let (core, runtime) = in_process(loaded)?;
    let (name, report) = runtime
        .block_on(async {
            let session = open(&core, project).await?;
            let import = GlossaryImport { format, content };
            let report = core.import_glossary(session.id, import).await;
            core.close_session(session.id).await?;
            Ok::<_, CoreError>((session.name, report?))
        })
        .map_err(runtime_err)?;
    writeln!(
        out,
        "glossary of `{name}`: {} added, {} updated, {} unchanged",
        report.added, report.updated, report.unchanged
    )
    .map_err(write_failed)
}

/// Opens `project`: a project directory, or a managed project's name or
/// id.
pub(super) async fn open(core: &Core, project: &str) -> Result<SessionSummary, CoreError> {
    let dir = Path::new(project);
    if dir.is_dir() {
        return core.open_project(dir).await;
    }
    let projects = core.list_projects().await?;
    let id = ProjectEntry::find(&projects, project)
        .ok_or_else(|| CoreError::not_found("project", project))?;
    core.open_managed_project(id).await
}

/// A core in this process and a current-thread runtime to drive it: what
/// the helpers that open a project use.
pub(super) fn in_process(loaded: &Loaded) -> Result<(Core, tokio::runtime::Runtime), Failure> {
    let paths = loaded.data_paths()?;
    let core = Core::new(crate::launch::core_config(&loaded.config, &paths, "cli"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Runtime(anyhow::Error::new(e)))?;
    Ok((core, runtime))
}
