//! The typed configuration: every key quire understands.
//!
//! Each struct denies unknown fields, so a misspelt key anywhere (a file, a
//! mode overlay, a `QUIRE_` variable) is an error rather than silently
//! ignored. Defaults live in `config/default.toml`, not here, so that
//! `config show --origin` can name them; only the open-ended tables
//! (`engines.<id>`, `providers.<id>`) carry serde defaults for their optional
//! fields.

use std::collections::BTreeMap;
use std::fmt;
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::PathBuf;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::secret::Secret;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Mode started by a bare `quire`.
    pub default_mode: String,
    pub paths: PathsConfig,
    pub log: LogConfig,
    pub server: ServerConfig,
    pub storage: StorageConfig,
    pub history: HistoryConfig,
    pub tui: TuiConfig,
    pub mcp: McpConfig,
    pub attach: AttachConfig,
    pub engines: EnginesConfig,
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Models on inference servers (Open Inference Protocol), by name.
    pub backends: BTreeMap<String, BackendConfig>,
    /// Named pipelines besides the built-in `chapter` (which one of the
    /// same name replaces).
    pub pipelines: BTreeMap<String, PipelinePreset>,
    pub limits: LimitsConfig,
    /// The built-in engines' tables (`[qa]`, `[detect]`, `[render]`, …),
    /// each read into its engine's own type: the engines declare them
    /// (`quire_core::engines::each_table`), and the loader reads every one
    /// it is given besides this struct's keys.
    #[serde(skip)]
    pub engine_settings: SettingsMap,
}

impl Config {
    /// The whole configuration as one table, secrets redacted: the
    /// schema's keys in its order, then each engine's table (`[detect]`,
    /// `[qa]`, …) by name. What `config show` prints and `GET
    /// /api/v1/config` answers.
    pub fn effective(&self) -> toml::Table {
        // Tables, strings, numbers, booleans and arrays, all of which TOML
        // holds: this conversion does not fail.
        let mut table = match toml::Value::try_from(self) {
            Ok(toml::Value::Table(table)) => table,
            _ => toml::Table::new(),
        };
        for (name, value) in self.engine_settings.tables() {
            table.insert(name.to_owned(), value);
        }
        table
    }

    /// The named pipelines: the built-in `chapter`, then
    /// `[pipelines.<name>]` (a configured one of the same name replaces
    /// it).
    pub fn named_pipelines(&self) -> BTreeMap<String, PipelinePreset> {
        let mut presets = quire_core::settings::built_in_presets();
        presets.extend(self.pipelines.clone());
        presets
    }
}

/// `[limits]`: what quire takes in, besides the limits of ops (which are
/// fixed) and of request bodies (`server.max_body_bytes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// The most pixels an image may have, read from its header before
    /// anything decodes it (import, thumbnails, render, pictures).
    pub max_image_pixels: NonZeroU64,
}

use quire_core::engines::settings::SettingsMap;
use quire_core::settings::{EngineInput, EngineOutput, PipelinePreset};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathsConfig {
    /// Empty means the platform data directory.
    pub data_dir: PathBuf,
    /// Empty means `<data_dir>/projects`.
    pub projects_dir: PathBuf,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    pub level: LogLevel,
    #[serde(default)]
    pub format: LogFormat,
}

/// How log lines are written (`[log] format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// `2026-12-04T05:32:19Z  INFO request method=POST route=… status=200`.
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    pub host: String,
    pub port: u16,
    pub token: Secret,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: NonZeroU64,
    /// A connection whose peer accepts none of the data sent to it for this
    /// long is closed (e.g. an event-stream client that stopped reading),
    /// so it cannot pin server memory.
    pub send_timeout_secs: NonZeroU64,
    /// The team: each person's name, token and role (`[[server.users]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<UserConfig>,
    /// A header an authenticating reverse proxy names the user in (e.g.
    /// `X-Forwarded-User`), believed only from `trusted_proxies`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_proxy_header: Option<String>,
    /// The proxies' addresses: their `trusted_proxy_header` names the user
    /// and their `X-Forwarded-For` the client's address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// `/metrics` answers without a token.
    #[serde(default)]
    pub metrics_public: bool,
    /// Bearer JWTs from the team's identity provider (`[server.oauth]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthConfig>,
}

/// quire as an OAuth resource server (`[server.oauth]`, `05-mcp.md`,
/// "Authorization"): whose tokens it takes, for which audience, with which
/// keys, and which claims name the user and their role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// The tokens' `iss`, exactly.
    pub issuer: String,
    /// What a token's `aud` must be or hold: this resource's URL.
    pub audience: String,
    /// Where the issuer publishes its keys (https, or http to loopback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_url: Option<String>,
    /// The keys in a file instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_file: Option<PathBuf>,
    /// The claim naming the user.
    #[serde(default = "default_user_claim")]
    pub user_claim: String,
    /// The claim naming the role (one name, or a list).
    #[serde(default = "default_role_claim")]
    pub role_claim: String,
}

fn default_user_claim() -> String {
    "sub".into()
}

fn default_role_claim() -> String {
    "role".into()
}

/// One person of the team (`[[server.users]]`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    /// Shown as the author of their edits.
    pub name: String,
    #[serde(default)]
    pub token: Secret,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    #[serde(default = "default_role")]
    pub role: Role,
}

fn default_role() -> Role {
    Role::Edit
}

/// What a user may do, each role allowing what the one before allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Read everything and follow events.
    Read,
    /// Also add suggestions and vote on them; never changes a translation
    /// or a state.
    Suggest,
    /// Also apply ops, run engines, import and export, accept and reject
    /// suggestions.
    Edit,
    /// Also mark segments reviewed and final, and change a final one.
    Review,
    /// Also create, close and delete projects, change the glossary and
    /// the memory.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Suggest => "suggest",
            Role::Edit => "edit",
            Role::Review => "review",
            Role::Admin => "admin",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageConfig {
    pub durability: Durability,
    pub snapshot_every_ops: NonZeroU64,
}

use quire_store::Durability;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryConfig {
    pub undo_limit: NonZeroUsize,
    /// What the undo and redo stacks of one session may hold, in bytes;
    /// the oldest entries go first.
    pub max_bytes: NonZeroU64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiConfig {
    pub theme: Theme,
    pub mouse: bool,
    /// Whether `n` stops at machine translations (an engine's or an
    /// agent's) as well as untranslated and warned nodes.
    pub next_stops_at_machine: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    Auto,
    Dark,
    Light,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    pub allow_any_path: bool,
    /// Also serve the official conformance suite's fixture tools,
    /// resources and prompts (a test switch; refused with users or OAuth).
    #[serde(default)]
    pub conformance_fixtures: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttachConfig {
    pub token: Secret,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
}

/// `[engines]`: one flag plus any number of `[engines.<id>]` command engines.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EnginesConfig {
    pub allow_unattended: bool,
    #[serde(flatten)]
    pub commands: BTreeMap<String, CommandEngineConfig>,
}

/// A command engine: an external program run once per page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandEngineConfig {
    #[serde(default = "default_stage")]
    pub stage: String,
    #[serde(default)]
    pub description: String,
    /// Program and arguments; `{image}`, `{page_json}` and
    /// `{target_language}` are replaced per page. Never run through a shell.
    pub command: Vec<String>,
    pub input: EngineInput,
    pub output: EngineOutput,
    #[serde(default = "default_engine_timeout")]
    pub timeout_secs: NonZeroU64,
    /// Most bytes of stdout read; past that the step fails and the program
    /// is stopped.
    #[serde(default = "default_max_output")]
    pub max_output_bytes: NonZeroU64,
    #[serde(default = "default_true")]
    pub requires_approval: bool,
}

/// An OpenAI-compatible chat-completions endpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub base_url: String,
    pub model: String,
    #[serde(default)]
    pub api_key: Secret,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_file: Option<PathBuf>,
    #[serde(default = "default_provider_timeout")]
    pub timeout_secs: NonZeroU64,
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Requests at once to this provider, across every job of the
    /// process.
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: usize,
    /// Whether the model reads images: `llm-translate` then sends each
    /// image page's picture with its text.
    #[serde(default)]
    pub images: bool,
}

/// One model on an inference server that speaks the Open Inference
/// Protocol (KServe v2 REST), which a page engine's model key names.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    /// The only protocol: `open-inference`.
    pub protocol: String,
    /// The server's base URL; quire adds `/v2/…`.
    pub url: String,
    /// The model's name on the server.
    pub model: String,
    /// Empty: the server's default version.
    #[serde(default)]
    pub version: String,
    #[serde(default = "default_backend_timeout")]
    pub timeout_secs: u64,
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: usize,
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// A recogniser's characters, one a line (else the model metadata's
    /// `parameters.character`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dictionary: Option<PathBuf>,
    #[serde(default)]
    pub api_key: Secret,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_file: Option<PathBuf>,
}

fn default_stage() -> String {
    "custom".to_owned()
}

fn default_engine_timeout() -> NonZeroU64 {
    NonZeroU64::new(120).unwrap_or(NonZeroU64::MIN)
}

fn default_max_output() -> NonZeroU64 {
    NonZeroU64::new(64 << 20).unwrap_or(NonZeroU64::MIN)
}

fn default_provider_timeout() -> NonZeroU64 {
    NonZeroU64::new(60).unwrap_or(NonZeroU64::MIN)
}

fn default_max_retries() -> u32 {
    3
}

fn default_max_in_flight() -> usize {
    4
}

fn default_backend_timeout() -> u64 {
    30
}

fn default_true() -> bool {
    true
}

/// Keys of `[engines]` that are not engine ids.
pub(crate) const ENGINES_FLAGS: &[&str] = &["allow_unattended"];

impl<'de> Deserialize<'de> for EnginesConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EnginesVisitor;

        impl<'de> Visitor<'de> for EnginesVisitor {
            type Value = EnginesConfig;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`allow_unattended` and [engines.<id>] tables")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EnginesConfig, A::Error> {
                let mut out = EnginesConfig::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "allow_unattended" {
                        out.allow_unattended = map.next_value()?;
                    } else if is_valid_id(&key) {
                        let engine = map.next_value::<CommandEngineConfig>()?;
                        out.commands.insert(key, engine);
                    } else {
                        return Err(de::Error::custom(format!(
                            "invalid engine id `{key}` (use letters, digits, `-` and `_`)"
                        )));
                    }
                }
                Ok(out)
            }
        }

        deserializer.deserialize_map(EnginesVisitor)
    }
}

/// Ids of engines, providers and modes: short, shell- and URL-safe names.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
