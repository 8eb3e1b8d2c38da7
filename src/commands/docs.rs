//! `quire completions SHELL` and `quire man [--out DIR]`, generated from the
//! clap definition so they never drift from the real command line.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

pub fn completions(shell: Shell, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "quire", out);
    Ok(())
}

/// The main page on `out`, or (with `dir`) `quire.1` plus one page per
/// subcommand written into `dir`, whose names are then listed on `out`.
pub fn man(dir: Option<&Path>, out: &mut dyn Write) -> anyhow::Result<()> {
    let cmd = Cli::command();
    match dir {
        None => clap_mangen::Man::new(cmd)
            .render(out)
            .context("cannot write the man page"),
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
            let mut names: Vec<String> = std::fs::read_dir(dir)?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("quire") && n.ends_with(".1"))
                .collect();
            names.sort();
            for name in names {
                writeln!(out, "{}", dir.join(name).display())?;
            }
            Ok(())
        }
    }
}
