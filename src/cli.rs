//! The command line (clap derive). These types go no further than
//! [`crate::app`], which turns them into a load request and a command.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};
use clap_complete::Shell;

use crate::config::schema::LogLevel;
use crate::config::show::Format;

const AFTER_HELP: &str = "\
Launch forms:
  quire                          start the default mode (built-in default: tui)
  quire --mode NAME              start a mode by name (see `quire modes list`)
  quire --headless               HTTP API, SSE events and MCP at /mcp
  quire --tui-mcp                TUI shared live with an MCP client
  quire attach URL               TUI on a running headless server
  quire mcp stdio                MCP server over stdin/stdout

Configuration layers, lowest first: config/default.toml (built in),
/etc/quire/config.toml, the user's config.toml, --config files, the mode's
overlay, QUIRE_* variables (QUIRE_SERVER__PORT=5000 sets server.port), flags.
`quire config show --origin` shows which layer set every value.";

#[derive(Debug, Parser)]
#[command(
    name = "quire",
    version,
    about = "Local-first workbench for page-based text projects",
    long_about = "quire: a local-first workbench for page-based text projects (comics, slides, \
                  screenshots, subtitles, documents) whose text is reviewed, translated, checked \
                  and exported. One binary runs a terminal UI, a headless HTTP/MCP server, or an \
                  MCP stdio server, all over one core.",
    after_help = AFTER_HELP,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    /// Shorthand for `--mode headless`
    #[arg(long, conflicts_with = "mode")]
    pub headless: bool,

    /// Share this TUI live with an external MCP client (Linux and macOS only;
    /// only for modes with the `tui` frontend)
    #[arg(long)]
    pub tui_mcp: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// One more config file, layered above the user's (repeatable)
    #[arg(long = "config", value_name = "FILE", global = true, action = ArgAction::Append)]
    pub config_files: Vec<PathBuf>,

    /// The mode to start [default: config `default_mode`, built in: tui]
    #[arg(long, value_name = "NAME", global = true)]
    pub mode: Option<String>,

    /// HTTP bind host for modes that serve HTTP [default: config `server.host`, built in: 127.0.0.1]
    #[arg(long, value_name = "HOST", global = true)]
    pub host: Option<String>,

    /// HTTP port; 0 picks a free port [default: config `server.port`, built in: 4096]
    #[arg(long, value_name = "PORT", global = true)]
    pub port: Option<u16>,

    /// Data directory holding projects/ and logs/ [default: config `paths.data_dir`, else the
    /// platform data dir]
    #[arg(long, value_name = "DIR", global = true)]
    pub data_dir: Option<PathBuf>,

    /// Log level on stderr; also RUST_LOG [default: config `log.level`, built in: info]
    #[arg(long, value_name = "LEVEL", value_enum, global = true)]
    pub log_level: Option<LogLevel>,

    /// Open this project directory at start
    #[arg(long, value_name = "PATH", global = true)]
    pub project: Option<PathBuf>,

    /// Less on stderr (errors only)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// More on stderr (-v debug, -vv trace; error detail)
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the TUI against a running headless server, e.g. http://localhost:4096
    Attach(AttachArgs),
    /// MCP servers over stdin/stdout
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Show and check the configuration
    #[command(subcommand)]
    Config(ConfigCommand),
    /// List and show modes
    #[command(subcommand)]
    Modes(ModesCommand),
    /// Managed projects in the data directory
    #[command(subcommand)]
    Projects(ProjectsCommand),
    /// Pipeline engines
    #[command(subcommand)]
    Engines(EnginesCommand),
    /// A project's glossary
    #[command(subcommand)]
    Glossary(GlossaryCommand),
    /// The translation memory: TMX in and out
    #[command(subcommand)]
    Tm(TmCommand),
    /// The models the configuration names: files and backends
    #[command(subcommand)]
    Models(ModelsCommand),
    /// Copy the data directory's projects (each at one acknowledged moment,
    /// with its whole undo history and blobs) and memory, safely while a
    /// server runs
    Backup {
        /// A directory to create, or a FILE.tar to write
        #[arg(long, value_name = "DIR|FILE")]
        out: PathBuf,
        /// Only these projects (by name or directory; repeatable)
        #[arg(long, value_name = "NAME")]
        project: Vec<String>,
    },
    /// Bring a backup back into the data directory (--data-dir): the same
    /// project ids and their whole undo history; refuses to overwrite
    Restore {
        /// A directory or .tar that `quire backup` wrote
        from: PathBuf,
    },
    /// Run a preset on one input with no server and no terminal: a CBZ, a
    /// folder of images, PO, XLIFF, SRT or VTT; its exports and
    /// report.json go to DIR/NAME/ (exit 0 done, 3 partial, 1 failed, 2
    /// usage); run again, it goes on where it stopped
    Batch(BatchArgs),
    /// Remove the blobs no op refers to (what an aborted import left) from
    /// every project that is not open
    Gc,
    /// Tell the server PID (serving --data-dir) to reload its config
    /// (SIGHUP) and wait for its answer: exits 1 when it refused the new
    /// config and kept the old one (what `systemctl reload` runs)
    Reload {
        /// The server's process id (systemd's $MAINPID)
        pid: u32,
    },
    /// Print a shell completion script
    Completions {
        /// bash, zsh, fish, elvish or powershell
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page, or write every page to a directory
    Man {
        /// Write quire.1 and one page per subcommand into DIR
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The input: a .cbz or .zip of images, a folder of images, a .po,
    /// an XLIFF, a .srt or a .vtt
    #[arg(conflicts_with = "inputs", required_unless_present = "inputs")]
    pub input: Option<PathBuf>,
    /// A text file of inputs, one a line (relative to its folder; empty
    /// lines and `#` lines not counted)
    #[arg(long, value_name = "LIST")]
    pub inputs: Option<PathBuf>,
    /// Which input of the list, from 0 [default: JOB_COMPLETION_INDEX, else
    /// SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN]
    #[arg(long, value_name = "N", requires = "inputs")]
    pub index: Option<usize>,
    /// The pipeline (`chapter`, a [pipelines.NAME]) or engine to run
    #[arg(long, value_name = "NAME")]
    pub preset: String,
    /// Where the results go: DIR/NAME/ for an input NAME.EXT
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// An export to write instead of the input's own format (repeatable;
    /// e.g. po, xliff, srt, cbz, cbz:jpeg:90, pdf)
    #[arg(long, value_name = "FORMAT")]
    pub export: Vec<String>,
    /// The project's source language (BCP 47), when the input does not say
    #[arg(long, value_name = "TAG")]
    pub source_language: Option<String>,
    /// The project's target language (BCP 47)
    #[arg(long, value_name = "TAG")]
    pub target_language: Option<String>,
    /// Start DIR/NAME/ afresh instead of going on from an earlier run
    #[arg(long)]
    pub restart: bool,
}

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// Base URL of the headless server
    pub url: String,
    /// Bearer token for the server [default: config `attach.token`; prefer QUIRE_ATTACH__TOKEN,
    /// since arguments are visible to other local users]
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    /// Share this TUI live with an external MCP client (Linux and macOS only)
    #[arg(long)]
    pub tui_mcp: bool,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Serve the workspace MCP tools over stdin/stdout (what MCP clients spawn)
    Stdio,
    /// Bridge a stdio MCP client to one running TUI started with --tui-mcp
    Tui {
        /// The endpoint.json the TUI shows in its sharing bar
        #[arg(long, value_name = "PATH")]
        endpoint: PathBuf,
        /// How long the TUI may take to decide a navigation
        #[arg(long, value_name = "MS", default_value_t = 5000)]
        deadline_ms: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective config (secrets redacted)
    Show {
        /// Name the layer that set every value
        #[arg(long)]
        origin: bool,
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Toml)]
        format: Format,
    },
    /// Validate the config and every mode file; with FILE, validate that file too
    Check {
        /// A config file to validate on its own
        file: Option<PathBuf>,
    },
    /// Every file and directory quire reads or writes, and whether it exists
    Paths,
}

#[derive(Debug, Subcommand)]
pub enum ModesCommand {
    /// Built-in, system and user modes with their source file and description
    List,
    /// One mode's file, frontends and config overlay
    Show {
        /// Mode name
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProjectsCommand {
    /// Managed projects in the projects directory
    List {
        /// One JSON array instead of a table
        #[arg(long)]
        json: bool,
    },
    /// A new project from a file: a project archive (an `archive` export),
    /// or a translator's PO/POT or XLIFF, subtitles, an image or text
    Import {
        /// The .quire.zip, .po, .pot, .xlf, .xliff, .srt, .vtt, … file
        file: std::path::PathBuf,
        /// The new project's name (default: the file's; not for archives)
        #[arg(long)]
        name: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum GlossaryCommand {
    /// Add the terms of a CSV or TBX file (one history entry; a term whose
    /// source the glossary has replaces it)
    Import {
        /// The .csv (header row: source, target, note?, caseSensitive?) or .tbx file
        file: std::path::PathBuf,
        /// The managed project (name or id) or project directory to add them to
        #[arg(long, value_name = "PROJECT")]
        into: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TmCommand {
    /// Add a TMX file to the memory the `tm` engine reads (named after the
    /// file; one of the same name is replaced)
    Import {
        /// The .tmx file (TMX 1.1 to 1.4, any encoding it declares)
        file: std::path::PathBuf,
    },
    /// Write the reviewed and final segments of projects as TMX 1.4b
    Export {
        /// A managed project (name or id) or project directory; repeat for more
        #[arg(long, value_name = "PROJECT", required = true)]
        project: Vec<String>,
        /// Where to write it (default: stdout)
        #[arg(long, short, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Each configured model: a file with its size, its sha256 and whether
    /// it loads; a backend with whether it is ready and serves what its
    /// key needs. Exits 1 when one cannot be used
    List {
        /// One JSON array instead of a table
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum EnginesCommand {
    /// Registered pipeline engines (built-in and configured)
    List {
        /// One JSON array instead of a table
        #[arg(long)]
        json: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
