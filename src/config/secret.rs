//! Secrets (bearer tokens, API keys): held in memory, never printed.
//!
//! `Secret` serializes as `"[redacted]"` whenever it holds a value, so no
//! serialization of the config (`config show`, the HTTP config endpoint, a
//! log line with `{:?}`) can leak one. A secret may be written inline or
//! through `<name>_env` (an environment variable) or `<name>_file` (a file
//! that must not be readable by group or others); [`resolve`] turns the
//! indirection into the value once, at load time.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::ConfigError;

pub const REDACTED: &str = "[redacted]";

#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    pub fn is_set(&self) -> bool {
        !self.0.is_empty()
    }

    /// The secret itself. Call sites are the few places that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_set() {
            f.write_str(REDACTED)
        } else {
            f.write_str("\"\"")
        }
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(if self.is_set() { REDACTED } else { "" })
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

/// Resolves one secret from its inline value or its `_env` / `_file`
/// indirection. `key` is the dotted config key of the inline value, used in
/// error messages (e.g. `server.token`).
pub fn resolve(
    key: &str,
    inline: &Secret,
    env: Option<&str>,
    file: Option<&Path>,
) -> Result<Secret, ConfigError> {
    let given = [inline.is_set(), env.is_some(), file.is_some()]
        .iter()
        .filter(|set| **set)
        .count();
    if given > 1 {
        return Err(ConfigError::invalid(
            key,
            format!("set only one of `{key}`, `{key}_env` and `{key}_file`"),
        ));
    }
    if let Some(var) = env {
        return match std::env::var(var) {
            Ok(value) if !value.is_empty() => Ok(Secret(value)),
            Ok(_) => Err(ConfigError::invalid(
                &format!("{key}_env"),
                format!("environment variable {var} is empty"),
            )),
            Err(_) => Err(ConfigError::invalid(
                &format!("{key}_env"),
                format!("environment variable {var} is not set"),
            )),
        };
    }
    if let Some(path) = file {
        return read_secret_file(key, path).map(Secret);
    }
    Ok(inline.clone())
}

fn read_secret_file(key: &str, path: &Path) -> Result<String, ConfigError> {
    let file_key = format!("{key}_file");
    let meta = std::fs::metadata(path).map_err(|e| {
        ConfigError::invalid(&file_key, format!("cannot read {}: {e}", path.display()))
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(ConfigError::invalid(
                &file_key,
                format!(
                    "secret file {} is readable by group or others (mode {mode:04o}); run `chmod 600 {}`",
                    path.display(),
                    path.display()
                ),
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError::invalid(&file_key, format!("cannot read {}: {e}", path.display()))
    })?;
    let value = text.trim_end_matches(['\n', '\r']).to_owned();
    if value.is_empty() {
        return Err(ConfigError::invalid(
            &file_key,
            format!("secret file {} is empty", path.display()),
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_redacted_and_debug_hides_value() {
        let s = Secret::new("hunter2");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"[redacted]\"");
        assert_eq!(format!("{s:?}"), "[redacted]");
        assert_eq!(serde_json::to_string(&Secret::default()).unwrap(), "\"\"");
    }

    #[test]
    fn two_sources_is_an_error() {
        let err = resolve("server.token", &Secret::new("a"), Some("X"), None).unwrap_err();
        assert!(err.to_string().contains("set only one of"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn file_permissions_are_checked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = resolve("server.token", &Secret::default(), None, Some(&path)).unwrap_err();
        assert!(
            err.to_string().contains("readable by group or others"),
            "{err}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let ok = resolve("server.token", &Secret::default(), None, Some(&path)).unwrap();
        assert_eq!(ok.expose(), "s3cret");
    }
}
