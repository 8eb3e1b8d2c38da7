//! `quire engines list`: the built-in engines, the command engines of the
//! configuration and the named pipelines.

use std::io::Write;

use super::write_failed;
use crate::config::Loaded;
use crate::error::Failure;
use quire_core::engines::Registry;

pub fn list(loaded: &Loaded, json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let engines = quire_core::engines::with_pipelines(
        Registry::new(&crate::launch::command_engines(&loaded.config.engines)).list(),
        &loaded.config.named_pipelines(),
    );
    if json {
        let text = serde_json::to_string_pretty(&engines)
            .map_err(|e| Failure::Runtime(anyhow::Error::new(e)))?;
        return writeln!(out, "{text}").map_err(write_failed);
    }
    let rows: Vec<[String; 4]> = engines
        .iter()
        .map(|e| {
            let kind = if e.stage == "pipeline" {
                if e.built_in {
                    "built-in pipeline"
                } else {
                    "pipeline"
                }
                .to_owned()
            } else if e.built_in {
                "built-in".to_owned()
            } else if e.requires_approval {
                "command, needs approval".to_owned()
            } else {
                "command".to_owned()
            };
            let description = match &e.command {
                Some(cmd) if e.description.is_empty() => format!("runs {cmd}"),
                Some(cmd) => format!("{} (runs {cmd})", e.description),
                None => e.description.clone(),
            };
            [e.id.clone(), e.stage.clone(), kind, description]
        })
        .collect();
    super::table(out, ["ID", "STAGE", "KIND", "DESCRIPTION"], &rows)
}
