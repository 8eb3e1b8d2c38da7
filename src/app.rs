//! From arguments to exit code: parse, load config, start logging, dispatch.
//!
//! clap's types end here: they become a [`LoadRequest`] and a [`Launch`] or
//! a helper command, and every error is printed once, as one
//! `quire: error: …` line on stderr.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{
    Cli, Command, ConfigCommand, EnginesCommand, GlossaryCommand, McpCommand, ModelsCommand,
    ModesCommand, ProjectsCommand, TmCommand,
};
use crate::commands;
use crate::config::modes::Frontend;
use crate::config::{self, LoadRequest, Loaded, ModeSelect, Overrides};
use crate::error::Failure;
use crate::launch::{self, Launch};
use crate::logging::{self, LogRequest};

/// Runs quire with `args` (including the program name) and returns the
/// process exit code.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    let verbose = cli.global.verbose;
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            report(&failure, verbose);
            failure.exit_code()
        }
    }
}

fn report(failure: &Failure, verbose: u8) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "quire: error: {}", failure.headline());
    if verbose > 0
        && let Failure::Runtime(e) = failure
    {
        let _ = writeln!(err, "\ndetail: {e:?}");
    }
}

/// clap's own output: help and version go to stdout with exit 0; usage
/// errors get our prefix and exit 2.
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            let _ = write!(std::io::stderr().lock(), "quire: error: {text}");
            ExitCode::from(2)
        }
    }
}

/// What the arguments ask for, before any config is read.
enum Plan {
    Launch(Launch),
    Helper(Command),
}

fn execute(cli: Cli) -> Result<(), Failure> {
    // Locked only by one-shot commands: a server (e.g. MCP over stdio)
    // writes stdout from other threads.
    let stdout = std::io::stdout();

    // Generated from the clap definition alone: they work even when the
    // configuration is broken.
    match &cli.command {
        Some(Command::Completions { shell }) => {
            reject_tui_mcp(cli.tui_mcp, "completions")?;
            return commands::docs::completions(*shell, &mut commands::Output::new(stdout.lock()))
                .map_err(Failure::from);
        }
        Some(Command::Man { out: dir }) => {
            reject_tui_mcp(cli.tui_mcp, "man")?;
            return commands::docs::man(dir.as_deref(), &mut commands::Output::new(stdout.lock()))
                .map_err(Failure::from);
        }
        _ => {}
    }

    let explicit_mode = if cli.headless {
        Some("headless".to_owned())
    } else {
        cli.global.mode.clone()
    };
    let named = |name: Option<String>| name.map_or(ModeSelect::Default, ModeSelect::Named);
    let mut attach_token = None;
    let tui_mcp = cli.tui_mcp;
    let (mode, plan) = match cli.command {
        None => (
            named(explicit_mode),
            Plan::Launch(Launch::Mode {
                share: tui_mcp,
                project: cli.global.project.clone(),
            }),
        ),
        Some(Command::Attach(args)) => {
            if cli.global.project.is_some() {
                return Err(Failure::usage(
                    "--project cannot be used with `attach`: the server opens projects",
                ));
            }
            attach_token = args.token.clone();
            let mode = explicit_mode.unwrap_or_else(|| "tui".to_owned());
            (
                ModeSelect::Named(mode),
                Plan::Launch(Launch::Attach {
                    url: args.url,
                    share: tui_mcp || args.tui_mcp,
                }),
            )
        }
        Some(Command::Mcp(McpCommand::Stdio)) => {
            reject_tui_mcp(tui_mcp, "mcp stdio")?;
            if let Some(mode) = explicit_mode.as_deref().filter(|m| *m != "stdio") {
                return Err(Failure::usage(format!(
                    "`mcp stdio` runs mode `stdio`; it cannot be combined with mode `{mode}`"
                )));
            }
            (
                ModeSelect::Named("stdio".to_owned()),
                Plan::Launch(Launch::McpStdio {
                    project: cli.global.project.clone(),
                }),
            )
        }
        Some(Command::Mcp(McpCommand::Tui {
            endpoint,
            deadline_ms,
        })) => {
            reject_tui_mcp(tui_mcp, "mcp tui")?;
            (
                ModeSelect::None,
                Plan::Launch(Launch::McpTui {
                    endpoint,
                    deadline_ms,
                }),
            )
        }
        Some(other) => {
            if tui_mcp {
                return Err(Failure::usage(
                    "--tui-mcp starts a shared TUI; it cannot be combined with a helper command",
                ));
            }
            (named(explicit_mode), Plan::Helper(other))
        }
    };

    let request = LoadRequest {
        config_files: cli.global.config_files.clone(),
        mode,
        overrides: Overrides {
            host: cli.global.host.clone(),
            port: cli.global.port,
            data_dir: cli.global.data_dir.clone(),
            log_level: cli.global.log_level.map(|l| l.as_str().to_owned()),
            attach_token,
        },
    };
    let loaded = config::load(&request)?;
    // While the TUI owns the terminal, logs go to <data dir>/logs/quire.log.
    let tui = match &plan {
        Plan::Launch(Launch::Attach { .. }) => true,
        Plan::Launch(Launch::Mode { .. }) => {
            loaded.mode.as_ref().is_some_and(|m| m.has(Frontend::Tui))
        }
        _ => false,
    };
    let log_file = if tui {
        loaded
            .data_paths()
            .ok()
            .map(|p| p.logs_dir.join("quire.log"))
    } else {
        None
    };
    // Held until this function returns: the log file's writer then drains.
    let _log = logging::init(LogRequest {
        flag: cli.global.log_level,
        quiet: cli.global.quiet,
        verbose: cli.global.verbose,
        config: loaded.config.log.level,
        file: log_file,
        format: loaded.config.log.format,
    });
    tracing::debug!(
        mode = loaded.mode.as_ref().map_or("none", |m| m.name.as_str()),
        files = loaded.files.iter().filter(|f| f.path.exists()).count(),
        "configuration loaded"
    );

    match plan {
        Plan::Launch(launch) => {
            check_launch(&loaded, &launch)?;
            launch::start(loaded, launch)
        }
        Plan::Helper(command) => helper(
            &loaded,
            &request,
            command,
            &mut commands::Output::new(stdout.lock()),
        ),
    }
}

fn reject_tui_mcp(tui_mcp: bool, what: &str) -> Result<(), Failure> {
    if tui_mcp {
        return Err(Failure::usage(format!(
            "--tui-mcp starts a shared TUI; it cannot be combined with `{what}`"
        )));
    }
    Ok(())
}

/// Mode rules that depend on how quire was started.
fn check_launch(loaded: &Loaded, launch: &Launch) -> Result<(), Failure> {
    let Some(mode) = &loaded.mode else {
        return Ok(());
    };
    let frontends = || {
        mode.frontends
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match launch {
        Launch::Mode { share: true, .. } | Launch::Attach { share: true, .. }
            if !mode.has(Frontend::Tui) =>
        {
            Err(Failure::usage(format!(
                "--tui-mcp needs a mode with the `tui` frontend; mode `{}` has {}",
                mode.name,
                frontends()
            )))
        }
        Launch::Attach { .. } if !mode.has(Frontend::Tui) => Err(Failure::usage(format!(
            "`attach` runs the TUI; mode `{}` has no `tui` frontend (it has {})",
            mode.name,
            frontends()
        ))),
        Launch::McpStdio { .. } if !mode.has(Frontend::McpStdio) => Err(Failure::usage(format!(
            "`mcp stdio` needs mode `stdio` to include the `mcp-stdio` frontend ({} has {})",
            mode.origin.file(&mode.name),
            frontends()
        ))),
        _ => Ok(()),
    }
}

fn helper(
    loaded: &Loaded,
    request: &LoadRequest,
    command: Command,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    match command {
        Command::Config(ConfigCommand::Show { origin, format }) => {
            commands::config::show(loaded, format, origin, out)
        }
        Command::Config(ConfigCommand::Check { file }) => commands::config::check(
            loaded,
            request,
            file.as_deref(),
            out,
            &mut std::io::stderr().lock(),
        ),
        Command::Config(ConfigCommand::Paths) => commands::config::paths(loaded, out),
        Command::Modes(ModesCommand::List) => commands::modes::list(loaded, out),
        Command::Modes(ModesCommand::Show { name }) => commands::modes::show(loaded, &name, out),
        Command::Projects(ProjectsCommand::List { json }) => {
            commands::projects::list(loaded, json, out)
        }
        Command::Backup { out: to, project } => {
            commands::backup::backup(loaded, &to, &project, out)
        }
        Command::Restore { from } => commands::backup::restore(loaded, &from, out),
        Command::Gc => commands::backup::gc(loaded, out),
        Command::Batch(args) => commands::batch::batch(loaded, &args),
        Command::Reload { pid } => {
            crate::reload::signal_and_wait(pid, &loaded.data_paths()?.data_dir, out)
        }
        Command::Projects(ProjectsCommand::Import { file, name }) => {
            commands::projects::import(loaded, &file, name.as_deref(), out)
        }
        Command::Glossary(GlossaryCommand::Import { file, into }) => {
            commands::glossary::import(loaded, &file, &into, out)
        }
        Command::Tm(TmCommand::Import { file }) => commands::tm::import(loaded, &file, out),
        Command::Tm(TmCommand::Export { project, out: file }) => {
            commands::tm::export(loaded, &project, file.as_deref(), out)
        }
        Command::Engines(EnginesCommand::List { json }) => {
            commands::engines::list(loaded, json, out)
        }
        Command::Models(ModelsCommand::List { json }) => commands::models::list(loaded, json, out),
        Command::Attach(_)
        | Command::Mcp(_)
        | Command::Completions { .. }
        | Command::Man { .. } => Err(Failure::usage("not a helper command")),
    }
}
