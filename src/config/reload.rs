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
/// trusted proxy, `metrics_public`, `[server.oauth]`, the log level, the
/// command engines, providers and pipelines, and each engine's table that
/// says a reload takes it (`Settings::RELOADS`: all but `[render]`).
/// Everything else (addresses, limits, directories, storage, history, the
/// log's format, the MCP, TUI and attach settings) needs a restart.
///
/// Refused, with why (the running config stays whole): a config that
/// would open a server started with tokens (no `server.token` and no
/// users), a user or `server.token` whose secret does not resolve (a
/// missing or unreadable `token_file`), and a config that exposes a server
/// without tokens (see [`exposed_without_tokens`]).
pub fn plan(running: &Config, file: Config) -> Result<Reload, String> {
    if secured(running) && !secured(&file) {
        return Err(
            "it has no server.token and no [[server.users]], and this server runs with them: \
             a reload never opens a server to everyone (restart it to serve without tokens)"
                .to_owned(),
        );
    }
    if let Some(why) = unresolved_token(&file) {
        return Err(why);
    }
    if let Some(why) = exposed_without_tokens(&file.server) {
        return Err(why);
    }
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
        "server.oauth": server.oauth,
        "log.level": log.level,
        "engines": engines,
        "providers": providers,
        "pipelines": pipelines,
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
        "limits": limits,
    }
    // The engines' tables: each says whether a reload takes it.
    let engines = next.engine_settings.reload_over(&running.engine_settings);
    changed.extend(engines.changed);
    restart.extend(engines.restart);
    Ok(Reload {
        config: next,
        changed,
        restart,
    })
}

/// Whether every request must bring a token.
fn secured(config: &Config) -> bool {
    config.server.token.is_set() || !config.server.users.is_empty() || config.server.oauth.is_some()
}

/// A token that is configured but does not resolve, named by its user and
/// why (the file it could not read).
fn unresolved_token(config: &Config) -> Option<String> {
    let server = &config.server;
    if let Some(why) = server.token.unresolved_reason() {
        return Some(format!("server.token does not resolve: {why}"));
    }
    server.users.iter().find_map(|user| {
        user.token
            .unresolved_reason()
            .map(|why| format!("user `{}` has no token: {why}", user.name))
    })
}

/// Why a server with no token and no users would be reachable beyond this
/// machine (`16-operations.md`, "Under attack", rule 7): its trusted
/// proxies pass others' requests on, or an allowed host is not a loopback
/// name (a proxy or a DNS name points others at it). `None` when it has
/// tokens, or serves only this machine. The bound address is checked when
/// binding.
pub fn exposed_without_tokens(server: &super::schema::ServerConfig) -> Option<String> {
    if server.token.is_set() || !server.users.is_empty() || server.oauth.is_some() {
        return None;
    }
    if !server.trusted_proxies.is_empty() {
        return Some(
            "server.trusted_proxies is set but there is no token and no user: a proxy would \
             let anyone in; set server.token or [[server.users]], or remove \
             server.trusted_proxies"
                .to_owned(),
        );
    }
    let remote = server
        .allowed_hosts
        .iter()
        .find(|host| !is_loopback_name(host))?;
    Some(format!(
        "server.allowed_hosts names `{remote}`, which is not this machine, but there is no \
         token and no user: anyone who reaches it would get in; set server.token or \
         [[server.users]], or remove `{remote}`"
    ))
}

/// `localhost`, a loopback address, with or without brackets or a port.
pub fn is_loopback_name(host: &str) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        match host.rsplit_once(':') {
            Some((name, port))
                if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) =>
            {
                name
            }
            _ => host,
        }
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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
        file.server.token = crate::config::secret::Secret::new("t");
        file.server.allowed_hosts = vec!["quire.example".into()];
        file.log.level = crate::config::schema::LogLevel::Debug;
        file.engines.allow_unattended = !running.engines.allow_unattended;
        file.server.port = running.server.port + 1;
        file.history.undo_limit = running.history.undo_limit.saturating_add(1);
        let reload = plan(&running, file).unwrap();
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

    fn with_user(mut config: Config, name: &str, token: crate::config::secret::Secret) -> Config {
        config.server.users.push(crate::config::schema::UserConfig {
            name: name.to_owned(),
            token,
            token_env: None,
            token_file: None,
            role: crate::config::schema::Role::Edit,
        });
        config
    }

    #[test]
    fn a_reload_that_would_open_a_secured_server_is_refused() {
        use crate::config::secret::Secret;
        let running = with_user(defaults(), "ana", Secret::new("a1"));
        let why = plan(&running, defaults()).unwrap_err();
        assert!(why.contains("a reload never opens a server"), "{why}");
        let mut with_token = defaults();
        with_token.server.token = Secret::new("t");
        assert!(plan(&running, with_token).is_ok());
        // A server without users may stay without them.
        assert!(plan(&defaults(), defaults()).is_ok());
    }

    #[test]
    fn a_user_whose_token_does_not_resolve_fails_the_reload_by_name() {
        use crate::config::secret::{Secret, resolve};
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("bea");
        let unresolved = resolve(
            "server.users.1.token",
            &Secret::default(),
            None,
            Some(&gone),
        )
        .unwrap();
        let running = with_user(defaults(), "ana", Secret::new("a1"));
        let file = with_user(running.clone(), "bea", unresolved);
        let why = plan(&running, file).unwrap_err();
        assert!(why.starts_with("user `bea` has no token: "), "{why}");
        assert!(why.contains(&gone.display().to_string()), "{why}");
    }

    #[test]
    fn a_server_without_tokens_is_not_exposed_by_a_proxy_or_a_host() {
        let mut server = defaults().server;
        assert_eq!(exposed_without_tokens(&server), None);
        server.allowed_hosts = vec!["LOCALHOST:4096".into(), "[::1]".into(), "127.0.0.2".into()];
        assert_eq!(exposed_without_tokens(&server), None);
        server.allowed_hosts.push("quire.example.org".into());
        let why = exposed_without_tokens(&server).unwrap();
        assert!(why.contains("`quire.example.org`"), "{why}");
        server.allowed_hosts.clear();
        server.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
        let why = exposed_without_tokens(&server).unwrap();
        assert!(why.contains("server.trusted_proxies"), "{why}");
        server.token = crate::config::secret::Secret::new("t");
        assert_eq!(exposed_without_tokens(&server), None);
    }

    #[test]
    fn the_same_file_changes_nothing() {
        let reload = plan(&defaults(), defaults()).unwrap();
        assert!(reload.changed.is_empty() && reload.restart.is_empty());
    }
}
