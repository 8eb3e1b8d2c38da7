//! Logging with `tracing`, always to stderr: stdout belongs to command output
//! and, in `mcp stdio` / `mcp tui`, to protocol frames only.

use std::io::IsTerminal;
use std::sync::OnceLock;

use tracing_subscriber::EnvFilter;

use tracing_subscriber::fmt::writer::BoxMakeWriter;

use crate::config::schema::{LogFormat, LogLevel};

/// How the level was asked for, highest precedence first: `--log-level`,
/// `-q` / `-v`, `RUST_LOG`, then the config's `log.level`.
#[derive(Debug, Clone)]
pub struct LogRequest {
    pub flag: Option<LogLevel>,
    pub quiet: bool,
    pub verbose: u8,
    pub config: LogLevel,
    /// Log to this file instead of stderr (while the TUI owns the terminal).
    pub file: Option<std::path::PathBuf>,
    /// Lines as text or as JSON objects (`[log] format`).
    pub format: LogFormat,
}

/// Installs the global subscriber. Calling it twice is harmless (the second
/// call does nothing), which keeps tests that run commands in-process simple.
///
/// A log file is written by a background thread (`tracing-appender`), so
/// logging never does file I/O on the caller's thread (a runtime worker,
/// the TUI's loop); keep the returned guard until the end, when it writes
/// out what is still queued.
#[must_use = "dropping the guard stops the log file's writer"]
pub fn init(request: LogRequest) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let from_config = request.flag.is_none()
        && !request.quiet
        && request.verbose == 0
        && !std::env::var("RUST_LOG").is_ok_and(|spec| !spec.trim().is_empty());
    let filter = match (request.flag, request.quiet, request.verbose) {
        (Some(level), _, _) => directive(level),
        (None, true, _) => directive(LogLevel::Error),
        (None, false, 1) => directive(LogLevel::Debug),
        (None, false, v) if v >= 2 => directive(LogLevel::Trace),
        _ => match std::env::var("RUST_LOG") {
            Ok(spec) if !spec.trim().is_empty() => {
                EnvFilter::try_new(spec).unwrap_or_else(|_| directive(request.config))
            }
            _ => directive(request.config),
        },
    };
    // The log names projects and what was done to them: owner-only, as
    // the data directory is.
    let file = request.file.as_ref().and_then(|path| {
        if let Some(dir) = path.parent() {
            let _ = quire_store::storage::private_dir(dir);
        }
        quire_store::storage::private_file()
            .create(true)
            .append(true)
            .open(path)
            .ok()
    });
    // A log line that cannot be written (stderr closed: a supervisor's log
    // reader died, `quire --headless 2>&1 | head`) is dropped. Reporting
    // it would `eprintln!` to the same closed stderr, which panics the
    // thread that logged: a request handler, whose client then got its
    // connection closed with no answer.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .log_internal_errors(false);
    let ansi = file.is_none() && color_on_stderr();
    let (writer, guard) = match file {
        Some(file) => {
            let (writer, guard) = tracing_appender::non_blocking(file);
            (BoxMakeWriter::new(writer), Some(guard))
        }
        None => (BoxMakeWriter::new(std::io::stderr), None),
    };
    let installed = match request.format {
        LogFormat::Text => {
            let builder = builder
                .with_writer(writer)
                .with_ansi(ansi)
                .with_filter_reloading();
            let handle = builder.reload_handle();
            builder
                .try_init()
                .map(|()| Box::new(move |f| handle.reload(f).map_err(|e| e.to_string())) as Reload)
        }
        // One JSON object a line, its fields at the top level: what a log
        // shipper (journald's, Loki's, Vector's) reads without a parser.
        LogFormat::Json => {
            let builder = builder
                .json()
                .flatten_event(true)
                .with_writer(writer)
                .with_filter_reloading();
            let handle = builder.reload_handle();
            builder
                .try_init()
                .map(|()| Box::new(move |f| handle.reload(f).map_err(|e| e.to_string())) as Reload)
        }
    };
    if let Ok(reload) = installed {
        let _ = RELOAD.set(Installed {
            from_config,
            reload,
        });
    }
    guard
}

/// Replaces the installed subscriber's filter.
type Reload = Box<dyn Fn(EnvFilter) -> Result<(), String> + Send + Sync>;

/// The subscriber [`init`] installed, for [`reload_level`].
struct Installed {
    /// Whether the level is the config's (no flag and no `RUST_LOG` chose
    /// another), so that a reloaded config's level applies.
    from_config: bool,
    reload: Reload,
}

static RELOAD: OnceLock<Installed> = OnceLock::new();

/// Sets the level a reloaded config asks for (SIGHUP). `Ok(false)` when
/// the command line or `RUST_LOG` chose the level, which then stays.
pub fn reload_level(level: LogLevel) -> Result<bool, String> {
    let installed = RELOAD
        .get()
        .ok_or("no log subscriber was installed by quire")?;
    if !installed.from_config {
        return Ok(false);
    }
    (installed.reload)(directive(level))?;
    Ok(true)
}

/// quire's own events at `level`; other crates at most at `warn`, so that a
/// dependency's chatter does not drown ours (RUST_LOG gives full control).
fn directive(level: LogLevel) -> EnvFilter {
    let others = match level {
        LogLevel::Error => "error",
        _ => "warn",
    };
    // rmcp logs every error response it sends at warn; those are answers
    // to clients, not problems of this process.
    EnvFilter::new(format!("{others},rmcp=error,quire={}", level.as_str()))
}

/// Colour only for a terminal, and never when `NO_COLOR` is set.
pub fn color_on_stderr() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}
