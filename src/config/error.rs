//! Configuration errors: one line that names where the problem is (file,
//! line and column, environment variable, flag or mode file), the key, and
//! what is wrong.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Where the bad value came from: `path:line:column`, `env QUIRE_X`,
    /// `flag --port`, a mode file.
    pub origin: Option<String>,
    /// The dotted key, when one is known.
    pub key: Option<String>,
    pub message: String,
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        ConfigError {
            origin: None,
            key: None,
            message: message.into(),
        }
    }

    /// A value that parsed but is not acceptable.
    pub fn invalid(key: &str, message: impl Into<String>) -> Self {
        ConfigError {
            origin: None,
            key: Some(key.to_owned()),
            message: message.into(),
        }
    }

    pub fn at(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(origin) = &self.origin {
            write!(f, "{origin}: ")?;
        }
        if let Some(key) = &self.key {
            write!(f, "key `{key}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// The candidate closest to `word`, if it is close enough to be a likely
/// typo (used for "did you mean" hints).
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// 1-based line and column of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_keys_only() {
        assert_eq!(suggest("prot", ["port", "host", "token"]), Some("port"));
        assert_eq!(suggest("zzzzzz", ["port", "host"]), None);
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("a\nbc\n", 0), (1, 1));
        assert_eq!(line_col("a\nbc\n", 3), (2, 2));
    }
}
