//! Starting a mode: build the one core, start the mode's frontends over it,
//! wait for them to end, then flush and close every project.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::config::modes::Frontend;
use crate::config::schema::{BackendConfig, CommandEngineConfig, EnginesConfig, ProviderConfig};
use crate::config::{Config, ConfigError, Loaded};
use crate::error::Failure;
use crate::http::{self, BindError};
use crate::reload::notify;
use quire_core::engines::backends::Backend;
use quire_core::session::SessionSettings;
use quire_core::settings::{ApiKey, CommandEngine, Provider};
use quire_core::{Core, CoreConfig};

/// How long requests in flight may run after SIGINT/SIGTERM.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A launch form of the command line.
#[derive(Debug, Clone)]
pub enum Launch {
    /// `quire`, `quire --mode NAME`, `quire --headless`, `quire --tui-mcp`.
    Mode {
        share: bool,
        project: Option<PathBuf>,
    },
    /// `quire attach URL`.
    Attach { url: String, share: bool },
    /// `quire mcp stdio`.
    McpStdio { project: Option<PathBuf> },
    /// `quire mcp tui --endpoint PATH`.
    McpTui { endpoint: PathBuf, deadline_ms: u64 },
}

pub fn start(loaded: Loaded, launch: Launch) -> Result<(), Failure> {
    match launch {
        Launch::Mode { project, share } => {
            let Some(mode) = loaded.mode.clone() else {
                return Err(Failure::usage("no mode selected"));
            };
            if mode.has(Frontend::Tui) {
                return run_tui(loaded, project, share);
            }
            if mode.has(Frontend::McpStdio) {
                let with_http = mode.has(Frontend::Http);
                return run_stdio(loaded, project, with_http);
            }
            run_server(loaded, project)
        }
        Launch::Attach { url, share } => run_attach(loaded, &url, share),
        Launch::McpStdio { project } => run_stdio(loaded, project, false),
        Launch::McpTui {
            endpoint,
            deadline_ms,
        } => run_adapter(endpoint, deadline_ms),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("quire")
        .build()
        .context("cannot start the async runtime")
        .map_err(Failure::from)
}

fn core_for(loaded: &Loaded) -> Result<Core, Failure> {
    let paths = loaded.data_paths()?;
    let mode = loaded.mode.as_ref().map_or("none", |m| m.name.as_str());
    let core = Core::new(core_config(&loaded.config, &paths, mode));
    // What imports that a killed process was running left behind.
    let swept = quire_core::archive::sweep(core.projects_dir());
    if swept > 0 {
        tracing::info!(
            "removed {swept} unfinished import(s) from {}",
            core.projects_dir().display()
        );
    }
    Ok(core)
}

/// What the core needs, read from the configuration: the one adapter
/// between the config's schema and the core.
pub fn core_config(
    config: &crate::config::Config,
    paths: &crate::config::dirs::DataPaths,
    mode: &str,
) -> CoreConfig {
    CoreConfig {
        projects_dir: paths.projects_dir.clone(),
        memory_dir: paths.memory_dir.clone(),
        session: SessionSettings {
            durability: config.storage.durability,
            snapshot_every_ops: config.storage.snapshot_every_ops.get(),
            undo_limit: config.history.undo_limit.get(),
            max_op_bytes: config.server.max_body_bytes.get(),
            history_max_bytes: config.history.max_bytes.get(),
        },
        mode: mode.to_owned(),
        commands: command_engines(&config.engines),
        allow_unattended: config.engines.allow_unattended,
        providers: config
            .providers
            .iter()
            .map(|(id, p)| (id.clone(), provider(p)))
            .collect(),
        backends: core_backends(config),
        settings: config.engine_settings.clone(),
        pipelines: config.named_pipelines(),
        max_image_pixels: config.limits.max_image_pixels.get(),
    }
}

/// The `[engines.<id>]` tables as the core runs them.
pub fn command_engines(engines: &EnginesConfig) -> BTreeMap<String, CommandEngine> {
    engines
        .commands
        .iter()
        .map(|(id, engine)| (id.clone(), command_engine(engine)))
        .collect()
}

fn command_engine(engine: &CommandEngineConfig) -> CommandEngine {
    CommandEngine {
        stage: engine.stage.clone(),
        description: engine.description.clone(),
        command: engine.command.clone(),
        input: engine.input,
        output: engine.output,
        timeout_secs: engine.timeout_secs.get(),
        max_output_bytes: engine.max_output_bytes.get(),
        requires_approval: engine.requires_approval,
    }
}

/// A provider as the core calls it, its key resolved (or why not).
pub fn provider(provider: &ProviderConfig) -> Provider {
    Provider {
        base_url: provider.base_url.clone(),
        model: provider.model.clone(),
        api_key: match provider.api_key.get() {
            Ok(None) => ApiKey::None,
            Ok(Some(key)) => ApiKey::Key(key.to_owned()),
            Err(why) => ApiKey::Unresolved(why.to_owned()),
        },
        timeout_secs: provider.timeout_secs.get(),
        max_retries: provider.max_retries,
        max_in_flight: provider.max_in_flight,
        images: provider.images,
    }
}

/// The `[backends.NAME]` tables as the core calls them.
pub fn core_backends(config: &Config) -> BTreeMap<String, Backend> {
    config
        .backends
        .iter()
        .map(|(name, b)| (name.clone(), backend(b)))
        .collect()
}

/// A backend as the core calls it, its key resolved (or why not).
pub fn backend(backend: &BackendConfig) -> Backend {
    Backend {
        url: backend.url.clone(),
        model: backend.model.clone(),
        version: backend.version.clone(),
        timeout_secs: backend.timeout_secs,
        max_in_flight: backend.max_in_flight,
        max_retries: backend.max_retries,
        dictionary: backend.dictionary.clone(),
        api_key: match backend.api_key.get() {
            Ok(None) => ApiKey::None,
            Ok(Some(key)) => ApiKey::Key(key.to_owned()),
            Err(why) => ApiKey::Unresolved(why.to_owned()),
        },
    }
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The HTTP listener of a mode (with `/mcp` when the mode has `mcp-http`),
/// serving in the background until `stop` resolves. Routes answer 503 until
/// the caller marks the state ready.
struct Served {
    url: String,
    what: &'static str,
    state: http::AppState,
    /// `/mcp`'s sessions, when the mode serves MCP over HTTP.
    mcp: Option<crate::mcp::HttpSessions>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn serve_http(
    core: &Core,
    loaded: &Loaded,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<Served, Failure> {
    let mode = loaded.mode.as_ref();
    let mode_name = mode.map_or("none", |m| m.name.as_str());
    let with_mcp = mode.is_some_and(|m| m.has(Frontend::McpHttp));
    let config = Arc::new(loaded.config.clone());
    let listener = http::bind(&config).await.map_err(|e| match e {
        BindError::NeedsToken(_) => {
            Failure::Config(ConfigError::invalid("server.host", e.to_string()))
        }
        BindError::Exposed(_) => Failure::Config(ConfigError::new(e.to_string())),
        BindError::Secret(_) => Failure::Config(ConfigError::new(e.to_string())),
        BindError::Io(message) => Failure::Runtime(anyhow::anyhow!(message)),
    })?;
    let addr = listener.local_addr().context("no local address")?;
    let url = format!("http://{addr}");
    core.set_advertised_url(&url, with_mcp);
    let mcp_stop = tokio_util::sync::CancellationToken::new();
    let (mcp, mcp_sessions) =
        match with_mcp.then(|| crate::mcp::http_router(core.clone(), &config, mcp_stop.clone())) {
            Some((router, sessions)) => (Some(router), Some(sessions)),
            None => (None, None),
        };
    let app = http::app(core.clone(), config, mode_name, mcp);
    let mut stopping = app.state.shutdown.clone();
    tokio::spawn(async move {
        let _ = stopping.wait_for(|stop| *stop).await;
        mcp_stop.cancel();
    });
    let state = app.state.clone();
    let task = tokio::spawn(http::serve(
        listener,
        app.router,
        app.shutdown,
        stop,
        SHUTDOWN_GRACE,
        std::time::Duration::from_secs(loaded.config.server.send_timeout_secs.get()),
    ));
    Ok(Served {
        url,
        what: if with_mcp {
            "web /, API /api/v1, MCP /mcp"
        } else {
            "web /, API /api/v1"
        },
        state,
        mcp: mcp_sessions,
        task,
    })
}

/// Saves and closes every project; the first failure is the error.
async fn close_all(core: &Core) -> Result<(), Failure> {
    let failures = core.close_all().await;
    match failures.into_iter().next() {
        Some((id, e)) => Err(Failure::Runtime(anyhow::anyhow!(
            "session {id} was not saved: {e}"
        ))),
        None => Ok(()),
    }
}

/// Modes with the `http` frontend: serve until a signal, then close.
fn run_server(loaded: Loaded, project: Option<PathBuf>) -> Result<(), Failure> {
    let runtime = runtime()?;
    runtime.block_on(async move {
        let core = core_for(&loaded)?;
        let (reload_tx, mut reload_rx) = tokio::sync::mpsc::unbounded_channel();
        let stop = crate::signals::stop_or_reload(reload_tx);
        let stop = async move {
            stop.await;
            notify(&[sd_notify::NotifyState::Stopping]);
        };
        let (served, _) = serve_with_project(&core, &loaded, project, stop).await?;
        notify(&[sd_notify::NotifyState::Ready]);
        watchdog(&core);
        warn_of_backends(&core);
        let data_dir = loaded.data_paths().ok().map(|p| p.data_dir);
        let mut reloader = crate::reload::Reloader::new(
            loaded.request.clone(),
            served.state.clone(),
            served.mcp.clone(),
            data_dir.as_deref(),
            core_config,
        );
        tokio::spawn(async move {
            while reload_rx.recv().await.is_some() {
                reloader.reload().await;
            }
        });
        let result = served.task.await.context("server task failed")?;
        // What the access log still holds back, before the process ends.
        served.state.refusals.flush(std::time::Instant::now(), true);
        let closed = close_all(&core).await;
        result.context("server failed")?;
        closed
    })
}

/// Asks each backend whether it is ready, after the server has started
/// (servers start in any order on Kubernetes): one warning per backend
/// that is not; a job that uses it asks again.
fn warn_of_backends(core: &Core) {
    let core = core.clone();
    tokio::spawn(async move {
        for (_, checked) in core.check_backends().await {
            if let Err(why) = checked {
                tracing::warn!("{why}");
            }
        }
    });
}

/// With `WatchdogSec=` set in the unit, tells systemd at twice that rate
/// that the server is alive: the runtime still runs tasks and the
/// workspace can be locked. A server wedged there misses its pings and
/// systemd restarts it (with `Restart=on-failure`).
fn watchdog(core: &Core) {
    let Some(timeout) = sd_notify::watchdog_enabled() else {
        return;
    };
    let core = core.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(timeout / 2);
        loop {
            every.tick().await;
            let _ = core.current_session();
            notify(&[sd_notify::NotifyState::Watchdog]);
        }
    });
}

/// Serves HTTP, opens `--project`, then marks the routes ready and prints
/// the serving line (until then they answer 503). Stops serving if the
/// project does not open.
async fn serve_with_project(
    core: &Core,
    loaded: &Loaded,
    project: Option<PathBuf>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(Served, Option<quire_model::ids::SessionId>), Failure> {
    let served = serve_http(core, loaded, stop).await?;
    let opened = match open_at_start(core, project).await {
        Ok(opened) => opened,
        Err(e) => {
            served.task.abort();
            return Err(e);
        }
    };
    served.state.set_ready();
    say(&format!("quire: serving {} ({})", served.url, served.what));
    Ok((served, opened))
}

/// Opens `--project`, if any.
async fn open_at_start(
    core: &Core,
    project: Option<PathBuf>,
) -> Result<Option<quire_model::ids::SessionId>, Failure> {
    let Some(path) = project else {
        return Ok(None);
    };
    match core.open_project(&path).await {
        Ok(session) => Ok(Some(session.id)),
        Err(e) => Err(Failure::Runtime(
            anyhow::Error::new(e).context("cannot open --project"),
        )),
    }
}

/// `quire mcp stdio`: MCP on stdin/stdout until stdin closes (or a signal),
/// then every project is saved and closed. Nothing but protocol frames is
/// written to stdout. A mode with `mcp-stdio` and `http` also serves the
/// HTTP API (and `/mcp` with `mcp-http`) on the same core for as long as
/// the stdio client stays.
fn run_stdio(loaded: Loaded, project: Option<PathBuf>, with_http: bool) -> Result<(), Failure> {
    // One client, one connection: a single-threaded runtime starts faster
    // (blocking work still goes to the blocking pool).
    let runtime = if with_http {
        runtime()?
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name("quire")
            .build()
            .context("cannot start the async runtime")?
    };
    runtime.block_on(async move {
        let core = core_for(&loaded)?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (served, active) = if with_http {
            let stopped = async move {
                let _ = stopped.await;
            };
            let (served, active) = serve_with_project(&core, &loaded, project, stopped).await?;
            (Some(served), active)
        } else {
            (None, open_at_start(&core, project).await?)
        };
        let data_dir = loaded.data_paths().ok().map(|p| p.data_dir);
        let result = tokio::select! {
            result = crate::mcp::serve_stdio(
                core.clone(),
                &loaded.config,
                active,
                data_dir.as_deref(),
            ) => result,
            _ = crate::signals::stop_requested() => Ok(()),
        };
        drop(stop);
        if let Some(served) = served {
            let _ = served.task.await;
        }
        let closed = close_all(&core).await;
        result.context("MCP stdio server failed")?;
        closed
    })
}

/// Modes with the `tui` frontend: the TUI on the in-process core, plus the
/// HTTP API and `/mcp` when the mode has them (a person and an agent on one
/// workspace).
fn run_tui(loaded: Loaded, project: Option<PathBuf>, share: bool) -> Result<(), Failure> {
    check_sharing(share)?;
    let runtime = runtime()?;
    runtime.block_on(async move {
        let core = core_for(&loaded)?;
        let serve = loaded.mode.as_ref().is_some_and(|m| m.has(Frontend::Http));
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let served = if serve {
            let served = serve_http(&core, &loaded, async move {
                let _ = stop_rx.await;
            })
            .await?;
            served.state.set_ready();
            Some(served)
        } else {
            None
        };
        let status = served
            .as_ref()
            .map(|s| format!("serving {} ({})", s.url, s.what));
        let show = open_at_start(&core, project).await?;
        let backend: Arc<dyn crate::tui::backend::Backend> =
            Arc::new(crate::tui::backend::Local::new(core.clone()));
        let extension = start_sharing(share, &backend)?;
        let options = crate::tui::Options {
            mouse: loaded.config.tui.mouse,
            attached: false,
            show,
            status,
            theme: loaded.config.tui.theme,
            next_stops_at_machine: loaded.config.tui.next_stops_at_machine,
            settings: loaded.config.engine_settings.clone(),
            drafts_dir: loaded.data_paths().ok().map(|p| p.data_dir.join("drafts")),
        };
        let ran = crate::tui::run(backend, options, extension).await;
        let _ = stop_tx.send(());
        if let Some(served) = served {
            let _ = served.task.await;
        }
        let closed = close_all(&core).await;
        ran.context("the terminal failed")?;
        closed
    })
}

/// `quire attach URL`: the TUI on a running headless server.
fn run_attach(loaded: Loaded, url: &str, share: bool) -> Result<(), Failure> {
    check_sharing(share)?;
    let remote = crate::tui::remote::Remote::new(url, loaded.config.attach.token.clone())
        .map_err(|e| Failure::usage(e.message))?;
    let runtime = runtime()?;
    runtime.block_on(async move {
        let options = crate::tui::Options {
            mouse: loaded.config.tui.mouse,
            attached: true,
            show: None,
            status: None,
            theme: loaded.config.tui.theme,
            next_stops_at_machine: loaded.config.tui.next_stops_at_machine,
            settings: loaded.config.engine_settings.clone(),
            drafts_dir: loaded.data_paths().ok().map(|p| p.data_dir.join("drafts")),
        };
        let backend: Arc<dyn crate::tui::backend::Backend> = Arc::new(remote);
        let share = start_sharing(share, &backend)?;
        crate::tui::run(backend, options, share)
            .await
            .context("the terminal failed")?;
        Ok(())
    })
}

/// `--tui-mcp` on a platform that cannot share fails before anything starts.
fn check_sharing(share: bool) -> Result<(), Failure> {
    if share && !crate::share::supported() {
        return Err(Failure::Runtime(
            crate::share::ShareError::unsupported().into(),
        ));
    }
    Ok(())
}

/// Creates the sharing endpoint for `--tui-mcp`.
fn start_sharing(
    share: bool,
    backend: &Arc<dyn crate::tui::backend::Backend>,
) -> Result<Option<crate::tui::share::Share>, Failure> {
    if !share {
        return Ok(None);
    }
    let share =
        crate::tui::share::Share::start(backend.clone()).map_err(|e| Failure::Runtime(e.into()))?;
    Ok(Some(share))
}

/// `quire mcp tui`: the stdio MCP adapter to one shared TUI.
fn run_adapter(endpoint: PathBuf, deadline_ms: u64) -> Result<(), Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        // It holds no state: a stop signal ends it at once, as a closed
        // stdin does.
        let stop = crate::signals::stop_requested();
        tokio::select! {
            result = crate::mcp::tui::run(endpoint, Duration::from_millis(deadline_ms.max(1))) => {
                result.map_err(|e| Failure::Runtime(e.into()))
            }
            () = stop => Ok(()),
        }
    })
}
