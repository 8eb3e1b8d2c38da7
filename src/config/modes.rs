//! Modes: which frontends to start and which config values to overlay.
//!
//! A mode is data, a TOML file: the built-ins in the repository's `modes/`
//! are embedded here; system modes live in `/etc/quire/modes/*.toml` and user
//! modes in `<config dir>/modes/*.toml`. A user mode overrides a system mode
//! of the same name, which overrides a built-in.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::dirs::Dirs;
use crate::config::error::{ConfigError, suggest};
use crate::config::schema::is_valid_id;
use crate::config::source::TomlSource;

/// The built-in modes, embedded so the binary works with no file on disk.
const BUILT_IN: &[(&str, &str)] = &[
    ("headless", include_str!("../../modes/headless.toml")),
    ("stdio", include_str!("../../modes/stdio.toml")),
    ("tui", include_str!("../../modes/tui.toml")),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Frontend {
    Tui,
    Http,
    McpHttp,
    McpStdio,
}

impl Frontend {
    pub fn name(self) -> &'static str {
        match self {
            Frontend::Tui => "tui",
            Frontend::Http => "http",
            Frontend::McpHttp => "mcp-http",
            Frontend::McpStdio => "mcp-stdio",
        }
    }
}

impl fmt::Display for Frontend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a mode file came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeOrigin {
    BuiltIn,
    System(PathBuf),
    User(PathBuf),
}

impl ModeOrigin {
    /// The file, as shown to people.
    pub fn file(&self, name: &str) -> String {
        match self {
            ModeOrigin::BuiltIn => format!("built-in modes/{name}.toml"),
            ModeOrigin::System(p) | ModeOrigin::User(p) => p.display().to_string(),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            ModeOrigin::BuiltIn => "built-in",
            ModeOrigin::System(_) => "system",
            ModeOrigin::User(_) => "user",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeFile {
    #[serde(default)]
    description: String,
    frontends: Vec<Frontend>,
    #[serde(default)]
    config: toml::Table,
}

/// A loaded, validated mode.
#[derive(Debug, Clone)]
pub struct Mode {
    pub name: String,
    pub origin: ModeOrigin,
    pub description: String,
    pub frontends: Vec<Frontend>,
    /// The `[config]` overlay, applied above the config files.
    pub overlay: toml::Table,
    /// The mode file, kept to point errors in the overlay at a line.
    pub source: TomlSource,
}

impl Mode {
    pub fn has(&self, frontend: Frontend) -> bool {
        self.frontends.contains(&frontend)
    }

    fn parse(name: &str, origin: ModeOrigin, text: String) -> Result<Mode, ConfigError> {
        let file = origin.file(name);
        let source = TomlSource::parse(file.clone(), text)?;
        let parsed: ModeFile = toml::from_str(&source.text).map_err(|e| {
            let at = match e.span() {
                Some(span) => {
                    let (line, col) = crate::config::error::line_col(&source.text, span.start);
                    format!("{file}:{line}:{col}")
                }
                None => file.clone(),
            };
            ConfigError::new(format!("invalid mode file: {}", e.message().trim())).at(at)
        })?;
        let mut frontends = parsed.frontends;
        let before = frontends.len();
        frontends.sort();
        frontends.dedup();
        if frontends.len() != before {
            return Err(ConfigError::new("a frontend is listed twice").at(file));
        }
        let fail = |message: &str| Err(ConfigError::new(message.to_owned()).at(file.clone()));
        if frontends.is_empty() {
            return fail("a mode needs at least one frontend (tui, http, mcp-http, mcp-stdio)");
        }
        if frontends.contains(&Frontend::McpHttp) && !frontends.contains(&Frontend::Http) {
            return fail(
                "frontend `mcp-http` requires `http` (MCP is served on the HTTP listener)",
            );
        }
        if frontends.contains(&Frontend::McpStdio) && frontends.contains(&Frontend::Tui) {
            return fail(
                "frontend `mcp-stdio` cannot be combined with `tui`: both need the terminal",
            );
        }
        if parsed.config.contains_key("default_mode") {
            return Err(ConfigError::invalid(
                "config.default_mode",
                "a mode overlay cannot choose the default mode",
            )
            .at(source.locate(&["config".into(), "default_mode".into()], false)));
        }
        Ok(Mode {
            name: name.to_owned(),
            origin,
            description: parsed.description,
            frontends,
            overlay: parsed.config,
            source,
        })
    }
}

/// Every mode quire can find, by name; files are parsed when asked for.
#[derive(Debug, Clone)]
pub struct ModeRegistry {
    entries: BTreeMap<String, ModeOrigin>,
    /// Files in a modes directory whose name is not a valid mode name.
    bad_names: Vec<PathBuf>,
}

impl ModeRegistry {
    pub fn discover(dirs: &Dirs) -> Result<Self, ConfigError> {
        let mut entries: BTreeMap<String, ModeOrigin> = BUILT_IN
            .iter()
            .map(|(name, _)| ((*name).to_owned(), ModeOrigin::BuiltIn))
            .collect();
        let mut bad_names = Vec::new();
        let mut scan = |dir: PathBuf, user: bool| -> Result<(), ConfigError> {
            let read = match std::fs::read_dir(&dir) {
                Ok(read) => read,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => {
                    return Err(ConfigError::new(format!(
                        "cannot read modes directory {}: {e}",
                        dir.display()
                    )));
                }
            };
            let mut files: Vec<PathBuf> = read
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            files.sort();
            for path in files {
                let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
                    bad_names.push(path);
                    continue;
                };
                if !is_valid_id(name) {
                    bad_names.push(path);
                    continue;
                }
                let origin = if user {
                    ModeOrigin::User(path.clone())
                } else {
                    ModeOrigin::System(path.clone())
                };
                entries.insert(name.to_owned(), origin);
            }
            Ok(())
        };
        scan(dirs.system_modes_dir(), false)?;
        if let Some(user) = dirs.user_modes_dir() {
            scan(user, true)?;
        }
        Ok(ModeRegistry { entries, bad_names })
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Loads and validates one mode.
    pub fn get(&self, name: &str) -> Result<Mode, ConfigError> {
        let Some(origin) = self.entries.get(name) else {
            let mut message = format!("unknown mode `{name}`");
            if let Some(near) = suggest(name, self.names()) {
                message.push_str(&format!(" (did you mean `{near}`?)"));
            }
            let available: Vec<&str> = self.names().collect();
            message.push_str(&format!("; available: {}", available.join(", ")));
            return Err(ConfigError::new(message));
        };
        let text = match origin {
            ModeOrigin::BuiltIn => BUILT_IN
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| (*text).to_owned())
                .ok_or_else(|| ConfigError::new(format!("built-in mode `{name}` is missing")))?,
            ModeOrigin::System(path) | ModeOrigin::User(path) => std::fs::read_to_string(path)
                .map_err(|e| ConfigError::new(format!("cannot read {}: {e}", path.display())))?,
        };
        Mode::parse(name, origin.clone(), text)
    }

    /// Every mode, loaded; the first invalid one is an error.
    pub fn load_all(&self) -> Result<Vec<Mode>, ConfigError> {
        if let Some(path) = self.bad_names.first() {
            return Err(ConfigError::new(
                "a mode file name must be letters, digits, `-` or `_` followed by .toml",
            )
            .at(path.display().to_string()));
        }
        self.names().map(|name| self.get(name)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Mode, ConfigError> {
        Mode::parse("m", ModeOrigin::User("/x/m.toml".into()), text.to_owned())
    }

    #[test]
    fn built_ins_are_valid() {
        for (name, text) in BUILT_IN {
            Mode::parse(name, ModeOrigin::BuiltIn, (*text).to_owned()).unwrap();
        }
    }

    #[test]
    fn rules_are_enforced_with_the_file_named() {
        let cases = [
            ("frontends = []", "at least one frontend"),
            ("frontends = [\"mcp-http\"]", "requires `http`"),
            ("frontends = [\"tui\", \"mcp-stdio\"]", "cannot be combined"),
            ("frontends = [\"tui\", \"tui\"]", "listed twice"),
            ("frontends = [\"web\"]", "unknown variant `web`"),
            (
                "frontends = [\"tui\"]\ncolour = 1",
                "unknown field `colour`",
            ),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
            assert!(err.starts_with("/x/m.toml"), "{text}: {err}");
        }
    }
}
