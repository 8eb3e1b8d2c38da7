//! SIGHUP in a serving mode: the config is loaded again, checked against
//! what runs ([`crate::config::reload::plan`]), and what may change while
//! serving is put in effect, or nothing is and the log says why. Either way
//! the outcome is told three ways: the log, systemd's `STATUS=`, and
//! `<data dir>/reload.json`, which `quire reload PID` (the packaged unit's
//! `ExecReload=`) waits for, so that `systemctl reload` fails when the
//! reload did.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::Failure;
use crate::http::AppState;
use crate::mcp::HttpSessions;

/// The outcome file's name in the data directory.
const OUTCOME: &str = "reload.json";

/// The last reload's outcome, as `<data dir>/reload.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Outcome {
    /// The server's process id.
    pub pid: u32,
    /// How many reloads that process has done, this one included.
    pub seq: u64,
    pub ok: bool,
    /// The line the log has (without `SIGHUP: `).
    pub message: String,
}

/// How a loaded config becomes the core's settings (`launch::core_config`,
/// handed in so that this module does not reach back into `launch`).
pub type CoreSettings =
    fn(&crate::config::Config, &crate::config::dirs::DataPaths, &str) -> quire_core::CoreConfig;

/// What a server needs to reload.
pub struct Reloader {
    request: crate::config::LoadRequest,
    state: AppState,
    mcp: Option<HttpSessions>,
    outcome: Option<PathBuf>,
    core_settings: CoreSettings,
    seq: u64,
}

impl Reloader {
    /// `outcome_dir`: the data directory, where `reload.json` is written.
    pub fn new(
        request: crate::config::LoadRequest,
        state: AppState,
        mcp: Option<HttpSessions>,
        outcome_dir: Option<&Path>,
        core_settings: CoreSettings,
    ) -> Reloader {
        Reloader {
            request,
            state,
            mcp,
            outcome: outcome_dir.map(|d| d.join(OUTCOME)),
            core_settings,
            seq: 0,
        }
    }

    /// One SIGHUP.
    pub async fn reload(&mut self) {
        notify(&[sd_notify::NotifyState::Reloading]);
        let outcome = self.apply();
        let status = match &outcome {
            Ok(said) => {
                tracing::info!("SIGHUP: {said}");
                format!("SIGHUP: {said}")
            }
            Err(why) => {
                let line = format!("SIGHUP: the config does not load, nothing changed: {why}");
                tracing::error!("{line}");
                line
            }
        };
        notify(&[
            sd_notify::NotifyState::Status(&status),
            sd_notify::NotifyState::Ready,
        ]);
        self.seq += 1;
        if let Some(path) = &self.outcome {
            let written = Outcome {
                pid: std::process::id(),
                seq: self.seq,
                ok: outcome.is_ok(),
                message: status.trim_start_matches("SIGHUP: ").to_owned(),
            };
            let bytes = serde_json::to_vec(&written).unwrap_or_default();
            let dir = path.parent().map(quire_store::storage::private_dir);
            if let Err(e) = dir
                .unwrap_or(Ok(()))
                .and_then(|()| quire_store::storage::write_atomic(path, &bytes))
            {
                tracing::warn!("cannot write {}: {e}", path.display());
            }
        }
        if let Some(mcp) = &self.mcp {
            let ended = mcp.end_revoked().await;
            if ended > 0 {
                tracing::info!("SIGHUP: ended {ended} MCP sessions of users it revoked");
            }
        }
    }

    /// Loads, checks and applies the config; what was done, or why nothing
    /// was.
    fn apply(&self) -> Result<String, String> {
        let loaded = crate::config::load(&self.request).map_err(|e| e.to_string())?;
        let running = self.state.config();
        let plan = crate::config::reload::plan(&running, loaded.config)?;
        let paths = crate::config::dirs::DataPaths::resolve(&plan.config, &loaded.dirs)
            .ok_or("no data directory to resolve")?;
        let mode = self.state.core.config().mode.clone();
        self.state
            .core
            .reload_engines((self.core_settings)(&plan.config, &paths, &mode));
        let level = match crate::logging::reload_level(plan.config.log.level) {
            Ok(true) => format!("log level {}", plan.config.log.level.as_str()),
            Ok(false) => "log level (kept: the command line or RUST_LOG sets it)".to_owned(),
            Err(e) => format!("log level (not changed: {e})"),
        };
        let changed = if plan.changed.is_empty() {
            "nothing changed".to_owned()
        } else {
            format!("changed: {}", plan.changed.join(", "))
        };
        let restart = plan.restart.clone();
        let revoked = self.state.reload(plan.config);
        let users = self.state.guard.users().names();
        let users = if users.is_empty() {
            "none: open to this machine".to_owned()
        } else {
            users.join(", ")
        };
        if !revoked.is_empty() {
            let names: Vec<&str> = revoked.iter().map(|n| &**n).collect();
            tracing::info!(
                "SIGHUP: revoked {}: their event streams and MCP sessions end now",
                names.join(", ")
            );
        }
        if !restart.is_empty() {
            tracing::warn!(
                "SIGHUP: changed but not applied until a restart: {}",
                restart.join(", ")
            );
        }
        Ok(format!(
            "reloaded the users ({users}), {level}, the allowed hosts and origins, \
             the trusted proxy, and the engine and provider settings ({changed})"
        ))
    }
}

/// Tells systemd (when it started us with `Type=notify`).
pub fn notify(state: &[sd_notify::NotifyState<'_>]) {
    if let Err(e) = sd_notify::notify(state) {
        tracing::warn!("cannot notify systemd: {e}");
    }
}

/// How long `quire reload` waits for the server's answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// `quire reload PID`: sends SIGHUP to the server `pid` that serves the
/// data directory `data_dir` and waits for its outcome; an error when it
/// refused the config (or did not answer), so that `systemctl reload`
/// fails with it.
pub fn signal_and_wait(
    pid: u32,
    data_dir: &Path,
    out: &mut dyn std::io::Write,
) -> Result<(), Failure> {
    let path = data_dir.join(OUTCOME);
    let read = || -> Option<Outcome> {
        let bytes = std::fs::read(&path).ok()?;
        serde_json::from_slice::<Outcome>(&bytes)
            .ok()
            .filter(|o| o.pid == pid)
    };
    let before = read().map_or(0, |o| o.seq);
    send_hangup(pid)?;
    let deadline = Instant::now() + ANSWER_WITHIN;
    loop {
        if let Some(outcome) = read().filter(|o| o.seq > before) {
            if outcome.ok {
                writeln!(out, "{}", outcome.message).map_err(crate::commands::write_failed)?;
                return Ok(());
            }
            return Err(Failure::Runtime(anyhow::anyhow!(
                "the server refused the reload: {}",
                outcome.message
            )));
        }
        if Instant::now() >= deadline {
            return Err(Failure::Runtime(anyhow::anyhow!(
                "process {pid} did not say within {} s whether it reloaded (is it a quire \
                 server using {}?)",
                ANSWER_WITHIN.as_secs(),
                data_dir.display()
            )));
        }
        // A file another process writes: looked at again shortly.
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
fn send_hangup(pid: u32) -> Result<(), Failure> {
    let id = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| Failure::usage(format!("{pid} is not a process id")))?;
    rustix::process::kill_process(id, rustix::process::Signal::HUP)
        .map_err(|e| Failure::Runtime(anyhow::anyhow!("cannot send SIGHUP to process {pid}: {e}")))
}

#[cfg(not(unix))]
fn send_hangup(pid: u32) -> Result<(), Failure> {
    Err(Failure::usage(format!(
        "reloading process {pid} needs SIGHUP, which this system does not have"
    )))
}
