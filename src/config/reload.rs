//! What a running server takes from its configuration when told to reload
//! (SIGHUP), and what waits for a restart.

use serde::Serialize;

use super::Config;

/// A configuration read again, split into what takes effect now and what
/// does not.
#[derive(Debug)]
pub struct Reload {
    /// What to run with from now on: the file's settings, but for those
    /// named in `restart`, which keep their running values.
    pub config: Config,
    /// Settings that take effect now and differ from the running ones.
    /// Secrets are not compared (they serialize redacted): a token or an
    /// API key is read again whether or not this names it.
    pub changed: Vec<&'static str>,
    /// Settings the file changed that only a restart applies.
    pub restart: Vec<&'static str>,
}

/// Splits `file` (the configuration as it loads now) against `running`.
/// Reloaded: the users and tokens, the allowed hosts and origins, the
/// trusted proxy, `metrics_public`, the log level, and the engine,
/// provider, pipeline, memory, QA and spelling settings. Everything else
/// (addresses, limits, directories, storage, history, rendering, the log's
/// format, the MCP, TUI and attach settings) needs a restart.
pub fn plan(running: &Config, file: Config) -> Reload {
    let mut next = file;
    let mut changed = Vec::new();
    let mut restart = Vec::new();
    macro_rules! reloaded {
        ($($name:literal: $($field:ident).+),+ $(,)?) => {$(
            if differs(&running.$($field).+, &next.$($field).+) {
                changed.push($name);
            }
        )+};
    }
    macro_rules! kept {
        ($($name:literal: $($field:ident).+),+ $(,)?) => {$(
            if differs(&running.$($field).+, &next.$($field).+) {
                restart.push($name);
                next.$($field).+ = running.$($field).+.clone();
            }
        )+};
    }
    reloaded! {
        "server.users": server.users,
        "server.allowed_hosts": server.allowed_hosts,
        "server.allowed_origins": server.allowed_origins,
        "server.trusted_proxy_header": server.trusted_proxy_header,
        "server.trusted_proxies": server.trusted_proxies,
        "server.metrics_public": server.metrics_public,
        "log.level": log.level,
        "engines": engines,
        "providers": providers,
        "pipelines": pipelines,
        "llm": llm,
        "tm": tm,
        "qa": qa,
        "spell": spell,
        "detect": detect,
        "ocr": ocr,
        "clean": clean,
    }
    kept! {
        "default_mode": default_mode,
        "paths": paths,
        "log.format": log.format,
        "server.host": server.host,
        "server.port": server.port,
        "server.max_body_bytes": server.max_body_bytes,
        "server.send_timeout_secs": server.send_timeout_secs,
        "storage": storage,
        "history": history,
        "tui": tui,
        "mcp": mcp,
        "attach": attach,
        "render": render,
        "limits": limits,
    }
    Reload {
        config: next,
        changed,
        restart,
    }
}

/// Whether two settings differ as the config shows them.
fn differs<T: Serialize>(a: &T, b: &T) -> bool {
    serde_json::to_value(a).ok() != serde_json::to_value(b).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::dirs::Dirs;
    use crate::config::{LoadRequest, load_with};

    fn defaults() -> Config {
        let dirs = Dirs {
            system: "/nonexistent/quire".into(),
            user_config: None,
            user_data: Some("/nonexistent/quire-data".into()),
        };
        load_with(&LoadRequest::default(), dirs).unwrap().config
    }

    #[test]
    fn what_can_change_changes_and_the_rest_keeps_its_running_value() {
        let running = defaults();
        let mut file = defaults();
        file.server.allowed_hosts = vec!["quire.example".into()];
        file.log.level = crate::config::schema::LogLevel::Debug;
        file.engines.allow_unattended = !running.engines.allow_unattended;
        file.server.port = running.server.port + 1;
        file.history.undo_limit = running.history.undo_limit.saturating_add(1);
        let reload = plan(&running, file);
        assert_eq!(
            reload.changed,
            ["server.allowed_hosts", "log.level", "engines"]
        );
        assert_eq!(reload.restart, ["server.port", "history"]);
        assert_eq!(reload.config.server.allowed_hosts, ["quire.example"]);
        assert_eq!(reload.config.server.port, running.server.port);
        assert_eq!(reload.config.history.undo_limit, running.history.undo_limit);
        assert_ne!(
            reload.config.engines.allow_unattended,
            running.engines.allow_unattended
        );
    }

    #[test]
    fn the_same_file_changes_nothing() {
        let reload = plan(&defaults(), defaults());
        assert!(reload.changed.is_empty() && reload.restart.is_empty());
    }
}
