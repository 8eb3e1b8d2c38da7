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

pub use quire_model::scene::{SubtitleLimits, SubtitleProfile};

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
    /// The subtitle rules, on cues (text with timing).
    pub line_length: RuleLevel,
    pub lines: RuleLevel,
    pub reading_speed: RuleLevel,
    pub duration: RuleLevel,
    pub gap: RuleLevel,
    pub overlap: RuleLevel,
    pub spelling: RuleLevel,
    /// The subtitle rules' limits (`[qa.subtitles]`).
    pub subtitles: SubtitleSettings,
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
            line_length: RuleLevel::Warning,
            lines: RuleLevel::Warning,
            reading_speed: RuleLevel::Warning,
            duration: RuleLevel::Warning,
            gap: RuleLevel::Warning,
            overlap: RuleLevel::Warning,
            spelling: RuleLevel::Warning,
            subtitles: SubtitleSettings::default(),
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
            "line-length" => self.line_length,
            "lines" => self.lines,
            "reading-speed" => self.reading_speed,
            "duration" => self.duration,
            "gap" => self.gap,
            "overlap" => self.overlap,
            "spelling" => self.spelling,
            _ => RuleLevel::Warning,
        }
    }
}

/// `[qa.subtitles]`: a profile, and any of its limits set otherwise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubtitleSettings {
    pub profile: SubtitleProfile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_length: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading_speed: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_gap_ms: Option<u64>,
}

impl SubtitleSettings {
    /// The profile's limits (the project's profile when it names one),
    /// with the ones set here instead.
    pub fn limits(&self, project: Option<SubtitleProfile>) -> SubtitleLimits {
        let base = project.unwrap_or(self.profile).limits();
        SubtitleLimits {
            line_length: self.line_length.unwrap_or(base.line_length),
            lines: self.lines.unwrap_or(base.lines),
            reading_speed: self.reading_speed.unwrap_or(base.reading_speed),
            min_duration_ms: self.min_duration_ms.unwrap_or(base.min_duration_ms),
            max_duration_ms: self.max_duration_ms.unwrap_or(base.max_duration_ms),
            min_gap_ms: self.min_gap_ms.unwrap_or(base.min_gap_ms),
        }
    }
}

/// Where the `spelling` rule finds Hunspell dictionaries (`[spell]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpellSettings {
    /// `.dic` files (each beside its `.aff`) or directories of them,
    /// looked in before the system's (`/usr/share/hunspell`, …).
    pub dictionaries: Vec<std::path::PathBuf>,
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

/// What `detect` does on a page that already has text nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Existing {
    /// A found region that overlaps a text node gives that node its
    /// region (when it has none); only what overlaps nothing is added.
    #[default]
    Merge,
    /// Pages with any text node are left alone.
    Skip,
    /// The text nodes this engine placed that no one has changed since
    /// are found again: those that match a found block stay as they are,
    /// the others go; a person's or agent's node is kept as with `merge`.
    Replace,
}

impl Existing {
    pub fn as_str(self) -> &'static str {
        match self {
            Existing::Merge => "merge",
            Existing::Skip => "skip",
            Existing::Replace => "replace",
        }
    }
}

/// What the `detect` engine finds text with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DetectBackend {
    /// Classical image analysis, no model files (`quire-vision`).
    #[default]
    Builtin,
    /// A text-line detection model, run by the `quire-ppocr` helper; the
    /// balloons, regions and mask are then found around its lines.
    Onnx,
}

/// The `detect` engine's settings (`[detect]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetectSettings {
    /// What finds the text.
    #[serde(default)]
    pub backend: DetectBackend,
    /// `onnx`: the text-line detection model (a DB model such as
    /// PP-OCR's detector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<std::path::PathBuf>,
    /// What to do on pages that already have text nodes.
    pub existing: Existing,
    /// The shortest glyph in pixels; smaller marks are noise.
    pub min_text_height: u32,
    /// The tallest glyph in pixels; taller shapes are art.
    pub max_text_height: u32,
    /// Whether page numbers (a short line in the top or bottom margin)
    /// are dropped.
    pub drop_page_numbers: bool,
    /// How long one page may take, in seconds (for `onnx`, each exchange
    /// with the helper).
    pub timeout_secs: u64,
    /// The largest page (width × height) detection reads; a larger one
    /// fails with a warning naming this setting.
    pub max_pixels: u64,
}

impl Default for DetectSettings {
    fn default() -> Self {
        DetectSettings {
            backend: DetectBackend::default(),
            model: None,
            existing: Existing::Merge,
            min_text_height: 6,
            max_text_height: 120,
            drop_page_numbers: true,
            timeout_secs: 60,
            max_pixels: 32_000_000,
        }
    }
}

/// The `ocr` engine's settings (`[ocr]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OcrSettings {
    /// What reads the text.
    #[serde(default)]
    pub backend: OcrBackend,
    /// The Tesseract program (a name on `PATH` or a path).
    pub tesseract: String,
    /// `onnx`: the recognition model (PP-OCR's, its dictionary in its
    /// `character` metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<std::path::PathBuf>,
    /// `onnx`: the text-line detector run inside each node's cut
    /// (PP-OCR's DB model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detector: Option<std::path::PathBuf>,
    /// Below this confidence (0 to 1) a node read gets a
    /// `low-confidence` warning.
    pub min_confidence: f64,
    /// How long one page may take, in seconds.
    pub timeout_secs: u64,
}

impl Default for OcrSettings {
    fn default() -> Self {
        OcrSettings {
            backend: OcrBackend::default(),
            tesseract: "tesseract".into(),
            model: None,
            detector: None,
            min_confidence: 0.6,
            timeout_secs: 60,
        }
    }
}

/// What the `ocr` engine reads with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OcrBackend {
    /// The system's Tesseract, one run per page and language.
    #[default]
    Tesseract,
    /// PP-OCR's models (`ocr.model`, `ocr.detector`), run in process by
    /// tract: Japanese, Chinese and English, horizontal and vertical.
    Onnx,
}

/// The `clean` engine's settings (`[clean]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CleanSettings {
    /// How many pixels the text mask grows before it is cleared, to take
    /// the soft edges of letters.
    pub dilate: u32,
}

impl Default for CleanSettings {
    fn default() -> Self {
        CleanSettings { dilate: 3 }
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

/// The `llm-translate` engine's settings (`[llm]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// How many pages before and after the one being translated are sent
    /// with it as context (their source, and their translation when they
    /// have one); 0 sends none.
    pub context_pages: u32,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings { context_pages: 1 }
    }
}
