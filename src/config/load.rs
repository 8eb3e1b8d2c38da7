//! Layering: builds the effective [`Config`] from every source with figment,
//! lowest to highest:
//!
//! 1. `config/default.toml`, embedded
//! 2. `/etc/quire/config.toml`
//! 3. the user's `config.toml`
//! 4. each `--config FILE`, in order
//! 5. the selected mode's `[config]` overlay
//! 6. `QUIRE_` environment variables (`__` separates nesting)
//! 7. command-line flags
//!
//! Each source becomes its own figment provider with a label (`env
//! QUIRE_SERVER__PORT`, `flag --port`, a file path), so that the figment's
//! metadata names the layer that set every value and errors can point at
//! the exact line, variable or flag.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use figment::error::Kind;
use figment::value::{Dict, Map, Tag, Value};
use figment::{Figment, Metadata, Profile, Provider};

use super::dirs::{DataPaths, Dirs};
use super::error::{ConfigError, suggest};
use super::schema::{Config, ENGINES_FLAGS};
use super::source::TomlSource;
use crate::config::modes::{Mode, ModeRegistry};
use quire_core::engines::settings::{Context, Settings, SettingsMap, Tables};

const DEFAULT_TOML: &str = include_str!("../../config/default.toml");
/// `config/default.toml`'s values, as build.rs wrote them out: parsing the
/// text at every start cost a seventh of `quire mcp stdio`'s.
fn built_in_defaults() -> Dict {
    include!(concat!(env!("OUT_DIR"), "/default_config.rs"))
}

const DEFAULT_LABEL: &str = "default config/default.toml";
const ENV_PREFIX: &str = "QUIRE_";

/// Which mode's overlay to apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ModeSelect {
    /// `default_mode` from the config.
    #[default]
    Default,
    /// A mode named on the command line (or implied by a subcommand).
    Named(String),
    /// No mode at all (e.g. `quire mcp tui`, which runs no core).
    None,
}

/// Values given as command-line flags (layer 7).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub data_dir: Option<PathBuf>,
    pub log_level: Option<String>,
    pub attach_token: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct LoadRequest {
    pub config_files: Vec<PathBuf>,
    pub mode: ModeSelect,
    pub overrides: Overrides,
}

/// One config source, as a figment provider.
#[derive(Debug, Clone)]
pub(super) struct Layer {
    pub(super) label: String,
    /// The TOML document the values came from, to locate keys in errors.
    source: Option<Arc<TomlSource>>,
    /// Where the layer's keys sit inside `source` (`config` for a mode file).
    prefix: Vec<String>,
    dict: Dict,
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.label.clone())
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Ok(Map::from([(Profile::Default, self.dict.clone())]))
    }
}

impl Layer {
    /// The layer of `source`'s values under `prefix`; the source is kept
    /// for its text, to locate keys.
    fn from_toml(label: String, mut source: TomlSource, prefix: &[&str]) -> Self {
        let mut dict = std::mem::take(&mut source.dict);
        for key in prefix {
            dict = match dict.remove(*key) {
                Some(Value::Dict(_, d)) => d,
                _ => Dict::new(),
            };
        }
        Layer {
            label,
            prefix: prefix.iter().map(|s| (*s).to_owned()).collect(),
            source: Some(Arc::new(source)),
            dict,
        }
    }

    fn single(label: String, key: &str, value: Value) -> Self {
        let dict = match figment::util::nest(key, value) {
            Value::Dict(_, dict) => dict,
            _ => Dict::new(),
        };
        Layer {
            label,
            source: None,
            prefix: Vec::new(),
            dict,
        }
    }

    /// Where `key` was written in this layer: `file:line:col`, or the label.
    pub(super) fn locate(&self, key: &[String], value: bool) -> String {
        match &self.source {
            Some(source) => {
                let mut full = self.prefix.clone();
                full.extend(key.iter().cloned());
                source.locate(&full, value)
            }
            None => self.label.clone(),
        }
    }
}

/// A config file quire reads, for `config paths`.
#[derive(Debug, Clone)]
pub struct FileRole {
    pub role: &'static str,
    pub path: PathBuf,
}

/// The result of loading: the typed config plus what is needed to explain it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub mode: Option<Mode>,
    pub dirs: Dirs,
    pub modes: ModeRegistry,
    /// Every config file considered (present or not), lowest layer first.
    pub files: Vec<FileRole>,
    /// What it was loaded from: loaded again on SIGHUP.
    pub request: LoadRequest,
    figment: Figment,
}

impl Loaded {
    /// The label of the layer that set `key` (dotted), e.g. `env QUIRE_SERVER__PORT`.
    pub fn origin_of(&self, key: &str) -> String {
        self.figment
            .find_metadata(key)
            .map(|m| m.name.to_string())
            .unwrap_or_else(|| "built-in default".to_owned())
    }

    /// The data directory and projects directory this config points at.
    pub fn data_paths(&self) -> Result<DataPaths, ConfigError> {
        DataPaths::resolve(&self.config, &self.dirs).ok_or_else(|| {
            ConfigError::invalid(
                "paths.data_dir",
                "no home directory to derive a data directory from; set paths.data_dir or --data-dir",
            )
        })
    }
}

/// Loads the effective configuration for `request`.
pub fn load(request: &LoadRequest) -> Result<Loaded, ConfigError> {
    let dirs = Dirs::detect();
    load_with(request, dirs)
}

pub fn load_with(request: &LoadRequest, dirs: Dirs) -> Result<Loaded, ConfigError> {
    let mut files = Vec::new();
    let mut lower = Vec::new();

    lower.push(Layer::from_toml(
        DEFAULT_LABEL.to_owned(),
        TomlSource {
            display: "config/default.toml".to_owned(),
            text: DEFAULT_TOML.to_owned(),
            dict: built_in_defaults(),
        },
        &[],
    ));

    let system = dirs.system_config_file();
    if let Some(source) = TomlSource::read_optional(&system)? {
        lower.push(Layer::from_toml(
            format!("system {}", system.display()),
            source,
            &[],
        ));
    }
    files.push(FileRole {
        role: "system config",
        path: system,
    });
    if let Some(user) = dirs.user_config_file() {
        if let Some(source) = TomlSource::read_optional(&user)? {
            lower.push(Layer::from_toml(
                format!("user {}", user.display()),
                source,
                &[],
            ));
        }
        files.push(FileRole {
            role: "user config",
            path: user,
        });
    }
    for path in &request.config_files {
        let source = TomlSource::read(path)?;
        lower.push(Layer::from_toml(
            format!("--config {}", path.display()),
            source,
            &[],
        ));
        files.push(FileRole {
            role: "--config",
            path: path.clone(),
        });
    }

    let mut loose_vars = Vec::new();
    let mut upper = env_layers(&mut loose_vars)?;
    upper.extend(flag_layers(&request.overrides));

    let modes = ModeRegistry::discover(&dirs)?;
    let mode = match request.mode.clone() {
        ModeSelect::None => None,
        ModeSelect::Named(name) => Some(modes.get(&name)?),
        ModeSelect::Default => {
            let without_mode = figment_of(lower.iter().chain(upper.iter()));
            let name: String = without_mode.extract_inner("default_mode").map_err(|e| {
                let layers: Vec<Layer> = lower.iter().chain(upper.iter()).cloned().collect();
                explain(e, &without_mode, &layers)
            })?;
            let mode = modes.get(&name).map_err(|e| {
                let origin = without_mode
                    .find_metadata("default_mode")
                    .map(|m| m.name.to_string());
                let e = ConfigError::invalid("default_mode", e.message);
                match origin {
                    Some(o) => e.at(o),
                    None => e,
                }
            })?;
            Some(mode)
        }
    };

    let mut layers = lower;
    if let Some(mode) = &mode {
        let label = format!("mode {} ({})", mode.name, mode.origin.file(&mode.name));
        layers.push(Layer::from_toml(label, mode.source.clone(), &["config"]));
    }
    layers.extend(upper);

    let figment = figment_of(layers.iter());
    let mut config: Config = Figment::from(WithoutEngineTables(&figment))
        .extract()
        .map_err(|e| explain(e, &figment, &layers))?;
    config.engine_settings = read_engine_settings(&figment, &layers, &config)?;
    let config = super::checks::finish(config, &figment, &layers)?;
    check_loose_vars(&loose_vars, &config)?;

    Ok(Loaded {
        config,
        mode,
        dirs,
        modes,
        files,
        request: request.clone(),
        figment,
    })
}

/// Validates and loads one file as if it were given with `--config`; its
/// `default_mode` must name one of `modes`.
pub fn check_file(path: &Path, modes: &ModeRegistry) -> Result<(), ConfigError> {
    let request = LoadRequest {
        config_files: vec![path.to_path_buf()],
        mode: ModeSelect::None,
        ..LoadRequest::default()
    };
    // Only this file over the defaults: the user's own files are checked by
    // `config check` without an argument.
    let dirs = Dirs {
        system: PathBuf::from("/nonexistent/quire-check"),
        user_config: None,
        user_data: None,
    };
    let loaded = load_with(&request, dirs)?;
    let name = &loaded.config.default_mode;
    modes.get(name).map(|_| ()).map_err(|e| {
        let origin = loaded
            .figment
            .find_metadata("default_mode")
            .and_then(|m| m.name.strip_prefix("--config ").map(str::to_owned))
            .unwrap_or_else(|| "built-in default".to_owned());
        ConfigError::invalid("default_mode", e.message).at(origin)
    })
}

fn figment_of<'a>(layers: impl Iterator<Item = &'a Layer>) -> Figment {
    layers.fold(Figment::new(), |f, layer| f.merge(layer))
}

/// The names of the built-in engines' tables (`qa`, `detect`, …).
fn engine_tables() -> Vec<&'static str> {
    struct Names(Vec<&'static str>);
    impl Tables for Names {
        fn table<T: Settings>(&mut self) {
            self.0.push(T::TABLE);
        }
    }
    let mut names = Names(Vec::new());
    quire_core::engines::each_table(&mut names);
    names.0
}

/// The layers without the engines' tables: what [`Config`] is read from
/// (the tables are read by [`read_engine_settings`]). Errors are explained
/// against the whole figment, whose metadata names every value's layer.
struct WithoutEngineTables<'a>(&'a Figment);

impl Provider for WithoutEngineTables<'_> {
    fn metadata(&self) -> Metadata {
        Metadata::named("the configuration")
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        let tables = engine_tables();
        let mut data = self.0.data()?;
        for dict in data.values_mut() {
            dict.retain(|key, _| !tables.contains(&key.as_str()));
        }
        Ok(data)
    }
}

/// Each built-in engine's table read into its own type and checked
/// ([`Settings::check`]); the first that fails is the error, naming the
/// key and the layer that set it.
fn read_engine_settings(
    figment: &Figment,
    layers: &[Layer],
    config: &Config,
) -> Result<SettingsMap, ConfigError> {
    struct Read<'a> {
        figment: &'a Figment,
        layers: &'a [Layer],
        context: Context,
        settings: SettingsMap,
        failed: Option<ConfigError>,
    }
    impl Tables for Read<'_> {
        fn table<T: Settings>(&mut self) {
            if self.failed.is_some() {
                return;
            }
            // A table no layer has (not even the shipped defaults) is the
            // engine's `Default`.
            let value = match self.figment.extract_inner::<T>(T::TABLE) {
                Ok(value) => value,
                Err(_) if self.figment.find_value(T::TABLE).is_err() => T::default(),
                Err(mut e) => {
                    // figment puts the table after the path inside it.
                    if e.path.last().map(String::as_str) == Some(T::TABLE) {
                        e.path.pop();
                        e.path.insert(0, T::TABLE.to_owned());
                    }
                    self.failed = Some(explain(e, self.figment, self.layers));
                    return;
                }
            };
            match value.check(&self.context) {
                Ok(()) => self.settings.set(value),
                Err(invalid) => {
                    let key = format!("{}.{}", T::TABLE, invalid.key);
                    self.failed = Some(invalid_at(self.figment, self.layers, &key, invalid.why));
                }
            }
        }
    }
    let mut read = Read {
        figment,
        layers,
        context: Context {
            max_image_pixels: config.limits.max_image_pixels.get(),
            backends: config.backends.keys().cloned().collect(),
        },
        settings: SettingsMap::default(),
        failed: None,
    };
    quire_core::engines::each_table(&mut read);
    match read.failed {
        Some(error) => Err(error),
        None => Ok(read.settings),
    }
}

/// `message` about `key`, pointing at the layer (file and line, variable
/// or flag) that set it.
pub(super) fn invalid_at(
    figment: &Figment,
    layers: &[Layer],
    key: &str,
    message: String,
) -> ConfigError {
    let error = ConfigError::invalid(key, message);
    match origin_of_value(figment, layers, key) {
        Some(o) => error.at(o),
        None => error,
    }
}

/// Where the value of `key` was set: the file, line and column, the
/// variable or the flag of the layer that set it.
pub(super) fn origin_of_value(figment: &Figment, layers: &[Layer], key: &str) -> Option<String> {
    let parts: Vec<String> = key.split('.').map(str::to_owned).collect();
    figment
        .find_metadata(key)
        .and_then(|m| layers.iter().find(|l| l.label == m.name))
        .map(|l| l.locate(&parts, true))
}

/// Top-level keys that hold a value (the others are tables).
const TOP_LEVEL_VALUES: [&str; 1] = ["default_mode"];

/// `QUIRE_` variables. A variable whose name contains `__` is always a
/// config key and is checked strictly (so a typo is an error). One without
/// `__` is a key when it names a top-level value (`QUIRE_DEFAULT_MODE`);
/// any other is returned in `loose`: it must be `QUIRE_SYSTEM_CONFIG_DIR`,
/// `QUIRE_PPOCR_HELPER` (read where the helper starts) or named by a
/// `*_env` key (people keep their own secrets in `QUIRE_…`
/// variables), else [`check_loose_vars`] refuses it like an unknown key.
fn env_layers(loose: &mut Vec<String>) -> Result<Vec<Layer>, ConfigError> {
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with(ENV_PREFIX))
        .collect();
    vars.sort();
    let mut layers = Vec::new();
    for (name, raw) in vars {
        let rest = &name[ENV_PREFIX.len()..];
        let key = if rest.contains("__") {
            let parts: Vec<String> = rest.split("__").map(str::to_ascii_lowercase).collect();
            if parts.iter().any(String::is_empty) {
                return Err(
                    ConfigError::new("empty key segment; use `__` only between key names")
                        .at(format!("env {name}")),
                );
            }
            parts.join(".")
        } else if let Some(key) = TOP_LEVEL_VALUES
            .iter()
            .find(|k| rest.eq_ignore_ascii_case(k))
        {
            (*key).to_owned()
        } else {
            if name != super::dirs::SYSTEM_DIR_ENV && name != quire_core::engines::ppocr::HELPER_ENV
            {
                loose.push(name);
            }
            continue;
        };
        // Blank stays as written (figment would read it as an empty
        // string): a blank token must be refused, not taken as none.
        let value: Value = if raw.trim().is_empty() {
            Value::from(raw.clone())
        } else {
            raw.parse().unwrap_or_else(|_| Value::from(raw.clone()))
        };
        layers.push(Layer::single(format!("env {name}"), &key, value));
    }
    Ok(layers)
}

/// Refuses a `QUIRE_` variable that is neither a key nor a secret some
/// `*_env` key names: a typo (`QUIRE_DEFAULTMODE`) must not pass silently.
fn check_loose_vars(loose: &[String], config: &Config) -> Result<(), ConfigError> {
    let named: Vec<&str> = [
        config.server.token_env.as_deref(),
        config.attach.token_env.as_deref(),
    ]
    .into_iter()
    .chain(config.providers.values().map(|p| p.api_key_env.as_deref()))
    .chain(config.backends.values().map(|b| b.api_key_env.as_deref()))
    .flatten()
    .collect();
    let Some(name) = loose.iter().find(|n| !named.contains(&n.as_str())) else {
        return Ok(());
    };
    let rest = name[ENV_PREFIX.len()..].to_ascii_lowercase();
    let mut message = format!("unknown variable `{name}`: not a config key");
    let keys = TOP_LEVEL_VALUES.iter().map(|k| k.to_owned());
    if let Some(near) = suggest(&rest, keys) {
        message.push_str(&format!(
            " (did you mean `{ENV_PREFIX}{}`?)",
            near.to_ascii_uppercase()
        ));
    } else {
        message.push_str(&format!(
            "; nested keys use `__` (`{ENV_PREFIX}SERVER__PORT`), and a variable that holds a \
             secret must be named by a `*_env` key"
        ));
    }
    Err(ConfigError::new(message).at(format!("env {name}")))
}

fn flag_layers(o: &Overrides) -> Vec<Layer> {
    let mut layers = Vec::new();
    let mut push = |flag: &str, key: &str, value: Value| {
        layers.push(Layer::single(format!("flag {flag}"), key, value));
    };
    if let Some(host) = &o.host {
        push("--host", "server.host", Value::from(host.clone()));
    }
    if let Some(port) = o.port {
        push("--port", "server.port", Value::from(port));
    }
    if let Some(dir) = &o.data_dir {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        push(
            "--data-dir",
            "paths.data_dir",
            Value::from(dir.display().to_string()),
        );
    }
    if let Some(level) = &o.log_level {
        push("--log-level", "log.level", Value::from(level.clone()));
    }
    if let Some(token) = &o.attach_token {
        push("--token", "attach.token", Value::from(token.clone()));
    }
    layers
}

/// Turns a figment extraction error into one precise line.
fn explain(err: figment::Error, figment: &Figment, layers: &[Layer]) -> ConfigError {
    let layer_named = |name: &str| layers.iter().find(|l| l.label == name);
    let (key, message, is_value) = match &err.kind {
        Kind::UnknownField(field, expected) => {
            let mut key = err.path.clone();
            if key.last() != Some(field) {
                key.push(field.clone());
            }
            let parent = key[..key.len() - 1].join(".");
            let mut message = format!("unknown key `{}`", key.join("."));
            let tables = engine_tables();
            let candidates = expected
                .iter()
                .copied()
                .chain(
                    if parent == "engines" {
                        ENGINES_FLAGS
                    } else {
                        &[]
                    }
                    .iter()
                    .copied(),
                )
                .chain(tables.iter().copied().filter(|_| parent.is_empty()));
            if let Some(near) = suggest(field, candidates) {
                let near = if parent.is_empty() {
                    near.to_owned()
                } else {
                    format!("{parent}.{near}")
                };
                message.push_str(&format!(" (did you mean `{near}`?)"));
            }
            if ["share", "sharing", "tui_mcp", "tui-mcp"]
                .iter()
                .any(|s| field.to_ascii_lowercase().contains(s))
            {
                message.push_str("; sharing a TUI is turned on only by the --tui-mcp flag");
            }
            (key, message, false)
        }
        Kind::MissingField(field) => {
            let key = err.path.clone();
            (key, format!("missing key `{field}`"), false)
        }
        Kind::UnknownVariant(found, expected) => {
            let mut message = format!(
                "unknown value `{found}`, expected one of: {}",
                expected.join(", ")
            );
            if let Some(near) = suggest(found, expected.iter().copied()) {
                message.push_str(&format!(" (did you mean `{near}`?)"));
            }
            (err.path.clone(), message, true)
        }
        kind => (err.path.clone(), kind.to_string(), true),
    };
    let dotted = key.join(".");
    let layer = figment
        .find_metadata(&dotted)
        .and_then(|m| layer_named(&m.name))
        .or_else(|| err.metadata.as_ref().and_then(|m| layer_named(&m.name)));
    let origin = layer.map(|l| l.locate(&key, is_value));
    let error = match (&err.kind, key.is_empty()) {
        (Kind::UnknownField(..), _) | (_, true) => ConfigError::new(message),
        _ => ConfigError::invalid(&dotted, message),
    };
    match origin {
        Some(origin) => error.at(origin),
        None => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_defaults_are_the_text_parsed() {
        let parsed = TomlSource::parse("config/default.toml", DEFAULT_TOML.to_owned()).unwrap();
        assert!(parsed.dict.contains_key("server"), "{:?}", parsed.dict);
        assert_eq!(built_in_defaults(), parsed.dict);
    }

    /// Defaults are written once: every engine table of the shipped
    /// `config/default.toml` reads as its type's `Default`, and the file
    /// has no table the engines do not declare among the ones it leaves
    /// to them.
    #[test]
    fn the_shipped_engine_tables_are_the_engines_defaults() {
        let figment = Figment::new().merge(Layer::from_toml(
            "built-in".into(),
            TomlSource::parse("config/default.toml", DEFAULT_TOML.to_owned()).unwrap(),
            &[],
        ));
        let layers = [];
        let config: Config = Figment::from(WithoutEngineTables(&figment))
            .extract()
            .unwrap();
        let read = read_engine_settings(&figment, &layers, &config).unwrap();
        let shipped: Vec<_> = read.tables().collect();
        let defaults: Vec<_> = SettingsMap::defaults().tables().collect();
        assert_eq!(shipped, defaults);
        assert_eq!(shipped.len(), engine_tables().len());
    }

    /// A value an engine's check refuses names the table's key and the
    /// layer that set it.
    #[test]
    fn an_engine_table_out_of_range_names_its_key_and_layer() {
        let figment = Figment::new()
            .merge(Layer::from_toml(
                "built-in".into(),
                TomlSource::parse("config/default.toml", DEFAULT_TOML.to_owned()).unwrap(),
                &[],
            ))
            .merge(Layer::single(
                "flag --x".into(),
                "tm.min_score",
                Value::from(1.5),
            ));
        let config: Config = Figment::from(WithoutEngineTables(&figment))
            .extract()
            .unwrap();
        let layers = [Layer::single(
            "flag --x".into(),
            "tm.min_score",
            Value::from(1.5),
        )];
        let error = read_engine_settings(&figment, &layers, &config).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("tm.min_score"), "{text}");
        assert!(text.contains("flag --x"), "{text}");
    }
}
