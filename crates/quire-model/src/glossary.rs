//! A project glossary's terms, as the scene holds them (sorted by source)
//! and the `UpdateGlossary` op changes them. Reading glossary files and
//! finding terms in text are the core's (`core::glossary`).

use serde::{Deserialize, Serialize};

/// A glossary term: `source` must be translated as `target`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Term {
    pub source: String,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    // Match the source (and look for the target) with case as written.
    #[serde(default, skip_serializing_if = "is_false")]
    pub case_sensitive: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Where `source` is (or would go) in a glossary sorted by source.
pub fn position(terms: &[Term], source: &str) -> Result<usize, usize> {
    terms.binary_search_by(|t| t.source.as_str().cmp(source))
}
