//! The core's own settings: what an engine or a job needs to know, in the
//! core's terms. The launcher adapts the configuration to them
//! (`launch::core_config`): the config's schema types carry what only a
//! file needs (serde defaults, `NonZero` checks, secrets read from a
//! variable or a file, the `[engines]` table's flag beside its ids) and
//! stay out of the core. The plain values a config key holds as they are
//! ([`QaLevels`], [`TmSettings`], [`EngineInput`], [`EngineOutput`]) are
//! defined here and read by the config, as `RenderConfig` is the render
//! crate's and `Durability` the store's.

use std::fmt;

use quire_model::finding::Severity;
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

/// How much a QA rule's findings matter, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleLevel {
    Off,
    Info,
    Warning,
    Error,
}

impl RuleLevel {
    /// The severity its findings get; `None` when the rule is off.
    pub fn severity(self) -> Option<Severity> {
        match self {
            RuleLevel::Off => None,
            RuleLevel::Info => Some(Severity::Info),
            RuleLevel::Warning => Some(Severity::Warning),
            RuleLevel::Error => Some(Severity::Error),
        }
    }
}

/// Each rule of the `qa` engine, on (at a severity) or off (`[qa]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QaLevels {
    pub missing_translation: RuleLevel,
    pub placeholders: RuleLevel,
    pub too_long: RuleLevel,
    pub whitespace: RuleLevel,
    pub numbers: RuleLevel,
    pub end_punctuation: RuleLevel,
    pub inconsistent: RuleLevel,
    pub terminology: RuleLevel,
}

impl Default for QaLevels {
    fn default() -> Self {
        QaLevels {
            missing_translation: RuleLevel::Warning,
            placeholders: RuleLevel::Error,
            too_long: RuleLevel::Warning,
            whitespace: RuleLevel::Warning,
            numbers: RuleLevel::Warning,
            end_punctuation: RuleLevel::Warning,
            inconsistent: RuleLevel::Warning,
            terminology: RuleLevel::Warning,
        }
    }
}

impl QaLevels {
    /// The level of a rule by its finding name (`too-long`).
    pub fn level(&self, rule: &str) -> RuleLevel {
        match rule {
            "missing-translation" => self.missing_translation,
            "placeholders" => self.placeholders,
            "too-long" => self.too_long,
            "whitespace" => self.whitespace,
            "numbers" => self.numbers,
            "end-punctuation" => self.end_punctuation,
            "inconsistent" => self.inconsistent,
            "terminology" => self.terminology,
            _ => RuleLevel::Warning,
        }
    }
}

/// The translation memory the `tm` engine fills from (`[tm]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TmSettings {
    /// How similar a remembered source must be to be used, from 0 (any)
    /// to 1 (identical only).
    pub min_score: f64,
}

impl Default for TmSettings {
    fn default() -> Self {
        TmSettings { min_score: 0.85 }
    }
}
