//! `quire tm import FILE.tmx`: a TMX file into the translation memory;
//! `quire tm export --project NAME… [--out FILE]`: the reviewed and final
//! segments of projects as one TMX file (each project opened and closed
//! again in this process, so not while another quire has it open).

use std::io::Write;
use std::path::Path;

use super::write_failed;
use crate::config::Loaded;
use crate::error::Failure;
use quire_model::error::CoreError;

fn runtime_err(e: CoreError) -> Failure {
    Failure::Runtime(anyhow::Error::new(e))
}

pub fn import(loaded: &Loaded, file: &Path, out: &mut dyn Write) -> Result<(), Failure> {
    let shown = file.display().to_string();
    if !shown.to_ascii_lowercase().ends_with(".tmx") {
        return Err(Failure::usage(format!(
            "{shown}: a translation memory is a .tmx file"
        )));
    }
    let bytes = std::fs::read(file).map_err(|e| runtime_err(CoreError::io(file, e)))?;
    let (core, runtime) = super::glossary::in_process(loaded)?;
    let report = runtime
        .block_on(core.import_tmx(&shown, bytes))
        .map_err(runtime_err)?;
    let verb = if report.replaced { "replaced" } else { "added" };
    writeln!(
        out,
        "memory `{}` {verb}: {} units in {}",
        report.name,
        report.units,
        report.languages.join(", ")
    )
    .map_err(write_failed)
}

pub fn export(
    loaded: &Loaded,
    projects: &[String],
    file: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let (core, runtime) = super::glossary::in_process(loaded)?;
    let tmx = runtime
        .block_on(async {
            let mut scenes = Vec::new();
            for project in projects {
                let session = super::glossary::open(&core, project).await?;
                let scene = core.scene(session.id).await;
                core.close_session(session.id).await?;
                scenes.push(scene?.scene);
            }
            quire_core::memories::tmx_of_all(&scenes)
        })
        .map_err(runtime_err)?;
    match file {
        Some(path) => {
            quire_core::paths::write_output(path, &tmx, false).map_err(runtime_err)?;
            writeln!(out, "wrote {} ({} bytes)", path.display(), tmx.len()).map_err(write_failed)
        }
        None => out.write_all(&tmx).map_err(write_failed),
    }
}
