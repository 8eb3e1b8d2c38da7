//! The core's own settings beside the engines': command engines,
//! providers and named pipelines, in the core's terms. The launcher adapts
//! the configuration to them (`launch::core_config`): the config's schema
//! types carry what only a file needs (serde defaults, secrets read from a
//! variable or a file, the `[engines]` table's flag beside its ids) and
//! stay out of the core. The plain values a config key holds as they are
//! ([`EngineInput`], [`EngineOutput`], [`PipelinePreset`]) are defined here
//! and read by the config. Each built-in engine's own settings are in its
//! file (`engines::settings`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A command engine: an external program run once per page.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandEngine {
    /// The pipeline stage it belongs to (`ocr`, `translate`, …).
    pub stage: String,
    pub description: String,
    /// Program and arguments; `{image}`, `{page_json}` and
    /// `{target_language}` are replaced per page. Never run through a shell.
    pub command: Vec<String>,
    pub input: EngineInput,
    pub output: EngineOutput,
    pub timeout_secs: u64,
    /// Most bytes of stdout read; past that the step fails and the program
    /// is stopped.
    pub max_output_bytes: u64,
    /// Whether an unattended client (HTTP, MCP) may not run it unless
    /// `allow_unattended` is set.
    pub requires_approval: bool,
}

/// What a command engine reads on stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineInput {
    PageImage,
    PageJson,
}

/// What a command engine writes on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineOutput {
    Ops,
    TesseractTsv,
}

/// An OpenAI-compatible chat-completions endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Provider {
    /// Up to `/v1`; `/chat/completions` is added.
    pub base_url: String,
    pub model: String,
    pub api_key: ApiKey,
    pub timeout_secs: u64,
    pub max_retries: u32,
    /// Requests at once to it, across every job of the process.
    pub max_in_flight: usize,
    /// Whether its model reads images: each page's picture then goes
    /// with the page's text.
    pub images: bool,
}

/// A provider's API key as the configuration resolved it. Its `Debug`
/// never shows the key.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum ApiKey {
    /// None configured: requests go without `Authorization`.
    #[default]
    None,
    Key(String),
    /// Configured through a variable or file that gave nothing; why. The
    /// provider cannot be used.
    Unresolved(String),
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiKey::None => f.write_str("None"),
            ApiKey::Key(_) => f.write_str("Key([redacted])"),
            ApiKey::Unresolved(why) => write!(f, "Unresolved({why:?})"),
        }
    }
}

/// A named pipeline (`[pipelines.<name>]`): steps run by one name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelinePreset {
    /// Engine ids, run in order.
    pub steps: Vec<String>,
    #[serde(default)]
    pub description: String,
}

/// The preset every quire has: a raw chapter to a typeset draft.
pub fn built_in_presets() -> std::collections::BTreeMap<String, PipelinePreset> {
    let steps = [
        "detect",
        "ocr",
        "tm",
        "llm-translate",
        "qa",
        "clean",
        "render",
    ];
    std::collections::BTreeMap::from([(
        "chapter".to_owned(),
        PipelinePreset {
            steps: steps.iter().map(|s| (*s).to_owned()).collect(),
            description: "A raw chapter to a typeset draft: find, read, translate, check, clear and set every balloon".into(),
        },
    )])
}
