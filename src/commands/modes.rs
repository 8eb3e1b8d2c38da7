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
    let header = [
        "NAME".to_owned(),
        "FRONTENDS".to_owned(),
        "SOURCE".to_owned(),
        "DESCRIPTION".to_owned(),
    ];
    let mut widths = [0usize; 3];
    for row in std::iter::once(&header).chain(rows.iter()) {
        for (w, cell) in widths.iter_mut().zip(row.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(rows.iter()) {
        writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:<w2$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        )
        .map_err(write_failed)?;
    }
    Ok(())
}

pub fn show(loaded: &Loaded, name: &str, out: &mut dyn Write) -> Result<(), Failure> {
    let mode = loaded.modes.get(name)?;
    let frontends: Vec<&str> = mode.frontends.iter().map(|f| f.name()).collect();
    writeln!(out, "name:        {}", mode.name).map_err(write_failed)?;
    writeln!(
        out,
        "file:        {} ({})",
        mode.origin.file(&mode.name),
        mode.origin.kind()
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
