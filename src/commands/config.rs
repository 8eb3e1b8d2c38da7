//! `quire config show | check | paths`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::write_failed;
use crate::config::show::{Format, render};
use crate::config::{LoadRequest, Loaded, ModeSelect, check_file, load_with};
use crate::error::Failure;

pub fn show(
    loaded: &Loaded,
    format: Format,
    origin: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    out.write_all(render(loaded, format, origin).as_bytes())
        .map_err(write_failed)
}

/// Validates every layer under every mode (so each mode's overlay is checked
/// against the schema too), and `file` on its own when given. Secrets whose
/// `_env` or `_file` does not resolve are warned about on `warn`: they fail
/// only where they are used.
pub fn check(
    loaded: &Loaded,
    request: &LoadRequest,
    file: Option<&Path>,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> Result<(), Failure> {
    if let Some(file) = file {
        check_file(file, &loaded.modes)?;
    }
    let modes = loaded.modes.load_all()?;
    for mode in &modes {
        let per_mode = LoadRequest {
            mode: ModeSelect::Named(mode.name.clone()),
            ..request.clone()
        };
        load_with(&per_mode, loaded.dirs.clone())?;
    }
    let mut checked: Vec<String> = loaded
        .files
        .iter()
        .filter(|f| f.path.exists())
        .map(|f| f.path.display().to_string())
        .collect();
    if let Some(file) = file {
        checked.push(file.display().to_string());
    }
    let w = write_failed;
    let config = &loaded.config;
    let secrets = [
        ("serving HTTP", &config.server.token),
        ("`quire attach`", &config.attach.token),
    ]
    .into_iter()
    .map(|(what, s)| (what.to_owned(), s))
    .chain(
        config
            .providers
            .iter()
            .map(|(id, p)| (format!("llm-translate with provider `{id}`"), &p.api_key)),
    );
    let users = config
        .server
        .users
        .iter()
        .map(|u| (format!("serving HTTP to user `{}`", u.name), &u.token));
    for (what, secret) in secrets.chain(users) {
        if let Some(why) = secret.unresolved_reason() {
            writeln!(warn, "quire: warning: {why}; {what} fails until it is set").map_err(w)?;
        }
    }
    let files = [
        ("server.token_file", config.server.token_file.as_deref()),
        ("attach.token_file", config.attach.token_file.as_deref()),
    ]
    .into_iter()
    .map(|(k, p)| (k.to_owned(), p))
    .chain(config.providers.iter().map(|(id, p)| {
        (
            format!("providers.{id}.api_key_file"),
            p.api_key_file.as_deref(),
        )
    }));
    for (key, path) in files {
        if let Some(why) = path.and_then(|p| secret_file_warning(&key, p)) {
            writeln!(warn, "quire: warning: {why}").map_err(w)?;
        }
    }
    writeln!(out, "ok: configuration is valid").map_err(w)?;
    for path in checked {
        writeln!(out, "  file {path}").map_err(w)?;
    }
    for mode in &modes {
        writeln!(
            out,
            "  mode {} ({})",
            mode.name,
            mode.origin.file(&mode.name)
        )
        .map_err(w)?;
    }
    Ok(())
}

/// What `config check` can tell of a secret file beyond whether this user
/// reads it: that it is empty or only line breaks (no secret is set), or, run as root, that
/// only root can read it, so a service running as another user cannot
/// (the packaged unit's dynamic user gets the token through
/// `LoadCredential=` instead).
fn secret_file_warning(key: &str, path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let only_line_breaks = |bytes: Vec<u8>| bytes.iter().all(|b| matches!(b, b'\n' | b'\r'));
    if std::fs::read(path).is_ok_and(only_line_breaks) {
        return Some(format!(
            "{key}: {} is empty: no secret is set",
            path.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let only_root = meta.uid() == 0 && meta.permissions().mode() & 0o077 == 0;
        if rustix::process::geteuid().is_root() && only_root {
            let hint = if key == "server.token_file" {
                "; the packaged quire-headless.service runs as a dynamic user and gets \
                 /etc/quire/token through LoadCredential= (leave server.token_file unset \
                 for it; see /usr/share/doc/quire/PACKAGING.md)"
            } else {
                "; give the service user its own copy, or pass it with LoadCredential="
            };
            return Some(format!(
                "{key}: only root can read {} (owner root, mode {:04o}), so a service \
                 running as another user cannot{hint}",
                path.display(),
                meta.permissions().mode() & 0o777
            ));
        }
    }
    None
}

pub fn paths(loaded: &Loaded, out: &mut dyn Write) -> Result<(), Failure> {
    let mut rows: Vec<(String, PathBuf)> = Vec::new();
    for file in &loaded.files {
        rows.push((file.role.to_owned(), file.path.clone()));
    }
    rows.push(("system modes".to_owned(), loaded.dirs.system_modes_dir()));
    if let Some(dir) = loaded.dirs.user_modes_dir() {
        rows.push(("user modes".to_owned(), dir));
    }
    let data = loaded.data_paths()?;
    rows.push(("data dir".to_owned(), data.data_dir));
    rows.push(("projects dir".to_owned(), data.projects_dir));
    rows.push(("logs dir".to_owned(), data.logs_dir));
    rows.push(("memory dir".to_owned(), data.memory_dir));
    let width = rows.iter().map(|(r, _)| r.len()).max().unwrap_or(0);
    for (role, path) in rows {
        let state = if path.exists() { "exists" } else { "missing" };
        writeln!(out, "{role:<width$}  {state:<7}  {}", path.display()).map_err(write_failed)?;
    }
    Ok(())
}
