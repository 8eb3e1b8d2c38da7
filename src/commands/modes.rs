//! `quire modes list` and `quire modes show NAME`.

use std::io::Write;

use super::write_failed;
use crate::config::Loaded;
use crate::config::show::dotted_lines;
use crate::error::Failure;

pub fn list(loaded: &Loaded, out: &mut dyn Write) -> Result<(), Failure> {
    let modes = loaded.modes.load_all()?;
    let default = loaded.config.default_mode.as_str();
    let rows: Vec<[String; 4]> = modes
        .iter()
        .map(|m| {
            let marker = if m.name == default { " (default)" } else { "" };
            let frontends: Vec<&str> = m.frontends.iter().map(|f| f.name()).collect();
            [
                format!("{}{marker}", m.name),
                frontends.join(","),
                m.origin.file(&m.name),
                m.description.clone(),
            ]
        })
        .collect();
    super::table(out, ["NAME", "FRONTENDS", "SOURCE", "DESCRIPTION"], &rows)
}

pub fn show(loaded: &Loaded, name: &str, out: &mut dyn Write) -> Result<(), Failure> {
    let mode = loaded.modes.get(name)?;
    let frontends: Vec<&str> = mode.frontends.iter().map(|f| f.name()).collect();
    writeln!(out, "name:        {}", mode.name).map_err(write_failed)?;
    let kind = match mode.origin {
        crate::config::modes::ModeOrigin::BuiltIn => "embedded in the binary",
        ref other => other.kind(),
    };
    writeln!(
        out,
        "file:        {} ({kind})",
        mode.origin.file(&mode.name),
    )
    .map_err(write_failed)?;
    writeln!(out, "frontends:   {}", frontends.join(", ")).map_err(write_failed)?;
    writeln!(out, "description: {}", mode.description).map_err(write_failed)?;
    if mode.overlay.is_empty() {
        writeln!(out, "overlay:     (none)").map_err(write_failed)?;
    } else {
        writeln!(out, "overlay:").map_err(write_failed)?;
        for line in dotted_lines(&mode.overlay) {
            writeln!(out, "  {line}").map_err(write_failed)?;
        }
    }
    Ok(())
}
