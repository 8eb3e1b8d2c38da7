//! A TOML document read from a file (or embedded), kept with its text so
//! that errors found later (an unknown key, a wrong type) can point at the
//! line and column where the key was written.

use std::path::Path;

use figment::value::Dict;
use toml::de::{DeTable, DeValue};

use super::error::{ConfigError, line_col};

#[derive(Debug, Clone)]
pub struct TomlSource {
    /// How the document is named in messages: a path, or `config/default.toml`.
    pub display: String,
    pub text: String,
    /// The values, read straight into figment's tree: no `toml::Table` on
    /// the way (a start reads the 7 KB of built-in defaults every time).
    pub dict: Dict,
}

impl TomlSource {
    /// Parses `text`; a syntax error names `display`, the line and column.
    pub fn parse(display: impl Into<String>, text: String) -> Result<Self, ConfigError> {
        let display = display.into();
        match toml::from_str::<Dict>(&text) {
            Ok(dict) => Ok(TomlSource {
                display,
                text,
                dict,
            }),
            Err(e) => {
                let origin = match e.span() {
                    Some(span) => {
                        let (line, col) = line_col(&text, span.start);
                        format!("{display}:{line}:{col}")
                    }
                    None => display,
                };
                Err(ConfigError::new(format!("invalid TOML: {}", e.message().trim())).at(origin))
            }
        }
    }

    /// Reads and parses a file. `Ok(None)` when it does not exist.
    pub fn read_optional(path: &Path) -> Result<Option<Self>, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(path.display().to_string(), text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ConfigError::new(format!(
                "cannot read {}: {e}",
                path.display()
            ))),
        }
    }

    /// Reads and parses a file that must exist.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        Self::read_optional(path)?
            .ok_or_else(|| ConfigError::new(format!("{}: no such file", path.display())))
    }

    /// `display:line:column` of the key at `path` (or of its value when
    /// `value` is true), or just `display` when the key is not in this
    /// document.
    pub fn locate(&self, path: &[String], value: bool) -> String {
        match self.span_of(path, value) {
            Some(offset) => {
                let (line, col) = line_col(&self.text, offset);
                format!("{}:{line}:{col}", self.display)
            }
            None => self.display.clone(),
        }
    }

    fn span_of(&self, path: &[String], value: bool) -> Option<usize> {
        let doc = DeTable::parse(&self.text).ok()?;
        let mut table = doc.get_ref();
        let (last, parents) = path.split_last()?;
        for key in parents {
            let (_, v) = table.iter().find(|(k, _)| k.get_ref() == key)?;
            match v.get_ref() {
                DeValue::Table(t) => table = t,
                _ => return None,
            }
        }
        let (k, v) = table.iter().find(|(k, _)| k.get_ref() == last)?;
        Some(if value {
            v.span().start
        } else {
            k.span().start
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_error_names_line_and_column() {
        let err = TomlSource::parse("x.toml", "[server]\nport = \n".into()).unwrap_err();
        let origin = err.origin.unwrap();
        assert!(origin.starts_with("x.toml:2:"), "{origin}");
    }

    #[test]
    fn locates_nested_and_dotted_keys() {
        let src = TomlSource::parse("x.toml", "a = 1\n[server]\nprot = 5\n".into()).unwrap();
        assert_eq!(
            src.locate(&["server".into(), "prot".into()], false),
            "x.toml:3:1"
        );
        assert_eq!(
            src.locate(&["server".into(), "prot".into()], true),
            "x.toml:3:8"
        );
        let dotted = TomlSource::parse("m.toml", "[config]\nserver.port = 1\n".into()).unwrap();
        assert_eq!(
            dotted.locate(&["config".into(), "server".into(), "port".into()], false),
            "m.toml:2:8"
        );
    }
}
