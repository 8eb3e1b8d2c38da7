//! What serde cannot check in a loaded configuration (a name that must
//! be unique, a URL's scheme, ids that must not collide), and its secrets
//! read from their variables and files. Each part is one function;
//! [`finish`] runs them in order, and the first error names the key and the
//! layer that set it. (An engine's own table checks itself:
//! `Settings::check`, run as the table is read.)

use std::collections::HashSet;

use figment::Figment;

use super::error::ConfigError;
use super::load::{Layer, invalid_at, origin_of_value};
use super::schema::{Config, OAuthConfig, ServerConfig, is_valid_id};
use super::secret;

/// Where a key was set: what the checks point at.
struct Origins<'a> {
    figment: &'a Figment,
    layers: &'a [Layer],
}

impl Origins<'_> {
    /// `message` about `key`, at the layer that set it.
    fn at(&self, key: &str, message: String) -> ConfigError {
        invalid_at(self.figment, self.layers, key, message)
    }

    /// A secret's error, at the layer that set the key it names (or
    /// `key`).
    fn secret(&self, key: &str, e: ConfigError) -> ConfigError {
        let origin_key = e.key.clone().unwrap_or_else(|| key.to_owned());
        match origin_of_value(self.figment, self.layers, &origin_key) {
            Some(o) => e.at(o),
            None => e,
        }
    }
}

/// Checks `config` and resolves its secrets.
pub(super) fn finish(
    mut config: Config,
    figment: &Figment,
    layers: &[Layer],
) -> Result<Config, ConfigError> {
    let origins = Origins { figment, layers };
    if config.server.host.trim().is_empty() {
        return Err(origins.at("server.host", "must not be empty".into()));
    }
    check_command_engines(&config, &origins)?;
    check_pipelines(&config, &origins)?;
    check_providers(&config, &origins)?;
    check_backends(&config, &origins)?;
    resolve_users(&mut config.server, &origins)?;
    check_server(&config)?;
    let attach = &mut config.attach;
    attach.token = secret::resolve(
        "attach.token",
        &attach.token,
        attach.token_env.as_deref(),
        attach.token_file.as_deref(),
    )
    .map_err(|e| origins.secret("attach.token", e))?;
    for (id, provider) in config.providers.iter_mut() {
        let key = format!("providers.{id}.api_key");
        provider.api_key = secret::resolve(
            &key,
            &provider.api_key,
            provider.api_key_env.as_deref(),
            provider.api_key_file.as_deref(),
        )
        .map_err(|e| origins.secret(&key, e))?;
    }
    for (name, backend) in config.backends.iter_mut() {
        let key = format!("backends.{name}.api_key");
        backend.api_key = secret::resolve(
            &key,
            &backend.api_key,
            backend.api_key_env.as_deref(),
            backend.api_key_file.as_deref(),
        )
        .map_err(|e| origins.secret(&key, e))?;
    }
    Ok(config)
}

/// A backend (spec 17, rule 5): a valid name, the one protocol, an
/// http(s) URL, a model, its numbers in range and a readable dictionary.
/// Nothing here asks the network.
fn check_backends(config: &Config, origins: &Origins<'_>) -> Result<(), ConfigError> {
    for (name, backend) in &config.backends {
        let at = |key: &str, why: String| origins.at(&format!("backends.{name}.{key}"), why);
        if !is_valid_id(name) {
            return Err(origins.at(
                &format!("backends.{name}"),
                "invalid backend name (use letters, digits, `-` and `_`)".into(),
            ));
        }
        if backend.protocol != "open-inference" {
            return Err(at(
                "protocol",
                format!(
                    "is \"{}\"; the only protocol is \"open-inference\" (KServe v2 REST)",
                    backend.protocol
                ),
            ));
        }
        if !(backend.url.starts_with("http://") || backend.url.starts_with("https://"))
            || reqwest::Url::parse(&backend.url).is_err()
        {
            return Err(at("url", "must be an http:// or https:// URL".into()));
        }
        if backend.model.trim().is_empty() {
            return Err(at("model", "must name the model on the server".into()));
        }
        let ranges = [
            ("timeout_secs", backend.timeout_secs, 1..=3600),
            ("max_in_flight", backend.max_in_flight as u64, 1..=256),
            ("max_retries", u64::from(backend.max_retries), 0..=10),
        ];
        for (key, value, range) in ranges {
            if !range.contains(&value) {
                return Err(at(
                    key,
                    format!(
                        "is {value}; it must be from {} to {}",
                        range.start(),
                        range.end()
                    ),
                ));
            }
        }
        if let Some(path) = &backend.dictionary
            && let Err(e) = std::fs::File::open(path)
        {
            return Err(at(
                "dictionary",
                format!("{} cannot be read: {e}", path.display()),
            ));
        }
    }
    Ok(())
}

/// A command engine's id is its own (no built-in engine's, no named
/// pipeline's), and it names a program.
fn check_command_engines(config: &Config, origins: &Origins<'_>) -> Result<(), ConfigError> {
    let built_in = quire_core::engines::built_in_ids();
    for (id, engine) in &config.engines.commands {
        if built_in.contains(id) {
            return Err(origins.at(
                &format!("engines.{id}"),
                format!("`{id}` is a built-in engine; give the command engine another id"),
            ));
        }
        if config.named_pipelines().contains_key(id) {
            return Err(origins.at(
                &format!("engines.{id}"),
                format!("`{id}` is a named pipeline; give the command engine another id"),
            ));
        }
        let key = format!("engines.{id}.command");
        match engine.command.first() {
            None => return Err(origins.at(&key, "must name a program".into())),
            Some(program) if program.trim().is_empty() => {
                return Err(origins.at(&key, "must name a program".into()));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A named pipeline has a valid name no engine has, and steps that are
/// engines.
fn check_pipelines(config: &Config, origins: &Origins<'_>) -> Result<(), ConfigError> {
    let built_in = quire_core::engines::built_in_ids();
    for (name, preset) in &config.pipelines {
        let key = format!("pipelines.{name}");
        if !is_valid_id(name) {
            return Err(origins.at(
                &key,
                "invalid pipeline name (use letters, digits, `-` and `_`)".into(),
            ));
        }
        if built_in.contains(name) || config.engines.commands.contains_key(name) {
            return Err(origins.at(
                &key,
                format!("`{name}` is an engine's id; give the pipeline another name"),
            ));
        }
        if preset.steps.is_empty() {
            return Err(origins.at(
                &format!("{key}.steps"),
                "must name at least one engine".into(),
            ));
        }
        if let Some(step) = preset
            .steps
            .iter()
            .find(|s| !built_in.contains(*s) && !config.engines.commands.contains_key(s.as_str()))
        {
            return Err(origins.at(
                &format!("{key}.steps"),
                format!("`{step}` is not an engine (see `quire engines list`)"),
            ));
        }
    }
    Ok(())
}

/// A provider has a valid id and an http(s) URL.
fn check_providers(config: &Config, origins: &Origins<'_>) -> Result<(), ConfigError> {
    for (id, provider) in &config.providers {
        if !is_valid_id(id) {
            return Err(origins.at(
                &format!("providers.{id}"),
                "invalid provider id (use letters, digits, `-` and `_`)".into(),
            ));
        }
        if !(provider.base_url.starts_with("http://") || provider.base_url.starts_with("https://"))
        {
            return Err(origins.at(
                &format!("providers.{id}.base_url"),
                "must be an http:// or https:// URL".into(),
            ));
        }
        if !(1..=256).contains(&provider.max_in_flight) {
            return Err(origins.at(
                &format!("providers.{id}.max_in_flight"),
                format!("is {}; it must be from 1 to 256", provider.max_in_flight),
            ));
        }
    }
    Ok(())
}

/// `server.token` and each user's token resolved; user names valid and
/// unique; no two people with one token.
fn resolve_users(server: &mut ServerConfig, origins: &Origins<'_>) -> Result<(), ConfigError> {
    server.token = secret::resolve(
        "server.token",
        &server.token,
        server.token_env.as_deref(),
        server.token_file.as_deref(),
    )
    .map_err(|e| origins.secret("server.token", e))?;
    let mut names = HashSet::new();
    for (i, user) in server.users.iter_mut().enumerate() {
        let key = format!("server.users.{i}.token");
        let valid = !user.name.is_empty()
            && user.name.chars().count() <= 64
            && user
                .name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
        if !valid {
            return Err(ConfigError::invalid(
                &format!("server.users.{i}.name"),
                format!(
                    "`{}` is not a user name (1 to 64 letters, digits, `-`, `_`, `.`, `@`)",
                    user.name
                ),
            ));
        }
        if user.name == crate::access::OWNER && server.token.is_set() {
            return Err(ConfigError::invalid(
                &format!("server.users.{i}.name"),
                "`owner` is server.token's user; give this one another name",
            ));
        }
        if !names.insert(user.name.clone()) {
            return Err(ConfigError::invalid(
                &format!("server.users.{i}.name"),
                format!("two users are named `{}`", user.name),
            ));
        }
        user.token = secret::resolve(
            &key,
            &user.token,
            user.token_env.as_deref(),
            user.token_file.as_deref(),
        )
        .map_err(|e| origins.secret(&key, e))?;
    }
    let mut tokens: Vec<(&str, &str)> = Vec::new();
    let owner = server
        .token
        .get()
        .ok()
        .flatten()
        .map(|t| (crate::access::OWNER, t));
    for (name, token) in owner.into_iter().chain(
        server
            .users
            .iter()
            .filter_map(|u| Some((u.name.as_str(), u.token.get().ok().flatten()?))),
    ) {
        if let Some((other, _)) = tokens.iter().find(|(_, t)| *t == token) {
            return Err(ConfigError::invalid(
                "server.users",
                format!("`{other}` and `{name}` have the same token; each person needs their own"),
            ));
        }
        tokens.push((name, token));
    }
    Ok(())
}

/// The proxy's user header, `[server.oauth]`, and the conformance
/// fixtures, which no team server may serve.
fn check_server(config: &Config) -> Result<(), ConfigError> {
    let server = &config.server;
    if let Some(header) = &server.trusted_proxy_header
        && axum::http::HeaderName::from_bytes(header.as_bytes()).is_err()
    {
        return Err(ConfigError::invalid(
            "server.trusted_proxy_header",
            format!("`{header}` is not a header name"),
        ));
    }
    if let Some(oauth) = &server.oauth {
        check_oauth(oauth)?;
    }
    if config.mcp.conformance_fixtures && (!server.users.is_empty() || server.oauth.is_some()) {
        return Err(ConfigError::invalid(
            "mcp.conformance_fixtures",
            "the conformance suite's fixtures are a test switch: not on a server with \
             [[server.users]] or [server.oauth]",
        ));
    }
    Ok(())
}

/// `[server.oauth]` (`05-mcp.md`, "Authorization", rule 1): an issuer, an
/// audience, and exactly one of `jwks_url` (https, or http to this
/// machine) and `jwks_file` (read now: it must hold a JWKS).
fn check_oauth(oauth: &OAuthConfig) -> Result<(), ConfigError> {
    let invalid =
        |key: &str, why: String| Err(ConfigError::invalid(&format!("server.oauth.{key}"), why));
    for (key, value) in [
        ("issuer", &oauth.issuer),
        ("audience", &oauth.audience),
        ("user_claim", &oauth.user_claim),
        ("role_claim", &oauth.role_claim),
    ] {
        if value.trim().is_empty() {
            return invalid(key, "must not be empty".into());
        }
    }
    match (&oauth.jwks_url, &oauth.jwks_file) {
        (Some(_), Some(_)) => invalid("jwks_url", "give jwks_url or jwks_file, not both".into()),
        (None, None) => invalid(
            "jwks_url",
            "the issuer's keys are needed: set jwks_url (or jwks_file)".into(),
        ),
        (Some(url), None) => {
            let parsed = reqwest::Url::parse(url);
            let ok = parsed.as_ref().is_ok_and(|u| {
                u.scheme() == "https"
                    || (u.scheme() == "http"
                        && u.host_str().is_some_and(super::reload::is_loopback_name))
            });
            if ok {
                Ok(())
            } else {
                invalid(
                    "jwks_url",
                    format!("`{url}` is not an https:// URL (http:// only to this machine)"),
                )
            }
        }
        (None, Some(path)) => {
            crate::oauth::check_jwks_file(path).or_else(|why| invalid("jwks_file", why))
        }
    }
}
