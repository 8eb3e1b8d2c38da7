//! Secrets (bearer tokens, API keys): held in memory, never printed.
//!
//! `Secret` serializes as `"[redacted]"` whenever it holds a value, so no
//! serialization of the config (`config show`, the HTTP config endpoint, a
//! log line with `{:?}`) can leak one. A secret may be written inline or
//! through `<name>_env` (an environment variable) or `<name>_file` (a file
//! that must not be readable by group or others); [`resolve`] turns the
//! indirection into the value once, at load time.
//!
//! An indirection that does not resolve (the variable is unset, the file
//! unreadable) does not fail the load: the secret is *unresolved*, with the
//! reason, and fails only where it is used. A provider key named by an
//! unset variable must not stop `config show`, `projects list` or the TUI;
//! only the pipeline that calls that provider fails, naming the variable.
//! `config check` warns about every unresolved secret.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::ConfigError;

pub const REDACTED: &str = "[redacted]";
/// How `config show` prints a secret whose `_env` or `_file` did not resolve.
pub const UNSET: &str = "[unset]";

#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(State);

#[derive(Clone, Default, PartialEq, Eq)]
enum State {
    #[default]
    Empty,
    Value(String),
    /// `_env` or `_file` was given but gave nothing; why.
    Unresolved(String),
}

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        if value.is_empty() {
            Secret(State::Empty)
        } else {
            Secret(State::Value(value))
        }
    }

    fn unresolved(why: String) -> Self {
        Secret(State::Unresolved(why))
    }

    /// Whether a value was configured (resolved or not).
    pub fn is_set(&self) -> bool {
        !matches!(self.0, State::Empty)
    }

    /// The secret for the few places that must send or compare it: `None`
    /// when none is configured, `Err` with the reason when it is configured
    /// through a variable or file that did not resolve.
    pub fn get(&self) -> Result<Option<&str>, &str> {
        match &self.0 {
            State::Empty => Ok(None),
            State::Value(v) => Ok(Some(v)),
            State::Unresolved(why) => Err(why),
        }
    }

    /// Compares in constant time with what a client presented; never
    /// matches when no value is held.
    pub fn matches(&self, given: &str) -> bool {
        match &self.0 {
            State::Value(v) => constant_time_eq::constant_time_eq(given.as_bytes(), v.as_bytes()),
            State::Empty | State::Unresolved(_) => false,
        }
    }

    /// Why the secret did not resolve, if it did not.
    pub fn unresolved_reason(&self) -> Option<&str> {
        self.get().err()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            State::Empty => f.write_str("\"\""),
            State::Value(_) => f.write_str(REDACTED),
            State::Unresolved(_) => f.write_str(UNSET),
        }
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(match &self.0 {
            State::Empty => "",
            State::Value(_) => REDACTED,
            State::Unresolved(_) => UNSET,
        })
    }
}

/// `serialize_with` for the one place a secret is written out on purpose:
/// a file that hands the capability over (the shared TUI's
/// `endpoint.json`, mode 0600).
pub fn expose<S: Serializer>(secret: &Secret, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(match &secret.0 {
        State::Value(v) => v,
        State::Empty | State::Unresolved(_) => "",
    })
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret::new)
    }
}

/// Resolves one secret from its inline value or its `_env` / `_file`
/// indirection. `key` is the dotted config key of the inline value, used in
/// messages (e.g. `server.token`). Giving more than one source, or an
/// inline value of only whitespace, is an error; an indirection that does
/// not resolve gives an unresolved secret (see the module docs).
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
    if let Ok(Some(value)) = inline.get()
        && value.trim().is_empty()
    {
        return Err(ConfigError::invalid(
            key,
            "must not be blank (only whitespace); remove it or give a real value",
        ));
    }
    let blank = |what: String| Secret::unresolved(format!("{what} holds only whitespace"));
    if let Some(var) = env {
        return Ok(match std::env::var(var) {
            Ok(value) if value.trim().is_empty() && !value.is_empty() => {
                blank(format!("{key}_env: environment variable {var}"))
            }
            Ok(value) if !value.is_empty() => Secret::new(value),
            Ok(_) => Secret::unresolved(format!("{key}_env: environment variable {var} is empty")),
            Err(_) => {
                Secret::unresolved(format!("{key}_env: environment variable {var} is not set"))
            }
        });
    }
    if let Some(path) = file {
        // `%d/NAME`: systemd's credentials directory, as unit files write
        // it (`LoadCredential=`), where a service's dynamic user can read.
        let credential = path.to_str().and_then(|p| p.strip_prefix("%d/"));
        let resolved;
        let path = match credential {
            Some(name) => match std::env::var_os("CREDENTIALS_DIRECTORY") {
                Some(dir) => {
                    resolved = Path::new(&dir).join(name);
                    resolved.as_path()
                }
                None => {
                    return Ok(Secret::unresolved(format!(
                        "{key}_file: {} names a systemd credential, but CREDENTIALS_DIRECTORY is not set (not started by systemd with LoadCredential=)",
                        path.display()
                    )));
                }
            },
            None => path,
        };
        return Ok(match read_secret_file(key, path)? {
            // An empty file (after its trailing line breaks) says "none":
            // what a service manager passes when the operator has not
            // provided one (the packaged unit's `SetCredential=token:\n`
            // fallback). Where a secret is required,
            // that is refused as if none was configured.
            Ok(value) if value.is_empty() => Secret::default(),
            Ok(value) if value.trim().is_empty() => {
                blank(format!("{key}_file: {}", path.display()))
            }
            Ok(value) => Secret::new(value),
            Err(why) => Secret::unresolved(why),
        });
    }
    Ok(inline.clone())
}

/// The value of a secret file: `Ok(Err(why))` when it cannot be read (it
/// may appear later, e.g. provisioned by the service manager), `Err` when
/// it is readable by others: that is a leak now, refused at load.
fn read_secret_file(key: &str, path: &Path) -> Result<Result<String, String>, ConfigError> {
    let file_key = format!("{key}_file");
    let unreadable = |e: std::io::Error| {
        Ok(Err(format!(
            "{file_key}: cannot read {}: {e}",
            path.display()
        )))
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => return unreadable(e),
    };
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
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return unreadable(e),
    };
    Ok(Ok(text.trim_end_matches(['\n', '\r']).to_owned()))
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
    fn two_sources_and_blank_values_are_errors() {
        let err = resolve("server.token", &Secret::new("a"), Some("X"), None).unwrap_err();
        assert!(err.to_string().contains("set only one of"), "{err}");
        let err = resolve("server.token", &Secret::new("  \t"), None, None).unwrap_err();
        assert!(err.to_string().contains("must not be blank"), "{err}");
    }

    #[test]
    fn an_unset_variable_leaves_the_secret_unresolved() {
        let s = resolve(
            "providers.p.api_key",
            &Secret::default(),
            Some("QUIRE_SECRET_TEST_SURELY_UNSET"),
            None,
        )
        .unwrap();
        assert!(s.is_set());
        let why = s.get().unwrap_err();
        assert!(
            why.contains("providers.p.api_key_env") && why.contains("is not set"),
            "{why}"
        );
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"[unset]\"");
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
        assert_eq!(ok.get(), Ok(Some("s3cret")));
    }
}
