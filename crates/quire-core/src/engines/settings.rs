//! What an engine declares about its settings, and where the core keeps
//! them.
//!
//! An engine's settings are one table of the configuration (`[detect]`),
//! read into a type of the engine's own that implements [`Settings`]: its
//! table's name, its defaults (`Default`), the checks serde cannot make
//! ([`Settings::check`]) and whether a reload takes it. The engine lists
//! its types in [`super::BuiltIn::tables`]; the configuration, the launcher
//! and a reload go through every listed type ([`super::each_table`]) and
//! name no engine. The values live in a [`SettingsMap`], by table.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// One engine's settings: a table of the configuration.
pub trait Settings:
    Serialize + DeserializeOwned + Default + Clone + fmt::Debug + Send + Sync + 'static
{
    /// Its table in the configuration (`detect` reads `[detect]`).
    const TABLE: &'static str;

    /// Whether a reload (SIGHUP) takes a changed table; otherwise the
    /// running value stays until a restart.
    const RELOADS: bool = true;

    /// What serde cannot check: ranges, files that must exist, keys that
    /// depend on each other. `Err` names the key inside the table.
    fn check(&self, _context: &Context) -> Result<(), Invalid> {
        Ok(())
    }

    /// The model files these settings name (`quire models list` shows
    /// each with its size, digest and whether it loads).
    fn models(&self) -> Vec<ModelFile> {
        Vec::new()
    }
}

/// A model a table names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFile {
    /// The key inside the table (`model`, `detector`).
    pub key: &'static str,
    pub source: ModelRef,
    pub role: ModelRole,
}

/// Where a model key's model is: a file run here, or a model on an
/// inference server, `{ backend = "NAME" }` naming a `[backends.NAME]`
/// table (spec 17).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelRef {
    File(std::path::PathBuf),
    Backend(String),
}

impl ModelRef {
    /// The file, when it is one.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            ModelRef::File(path) => Some(path),
            ModelRef::Backend(_) => None,
        }
    }
}

impl Serialize for ModelRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            ModelRef::File(path) => path.serialize(serializer),
            ModelRef::Backend(name) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("backend", name)?;
                map.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for ModelRef {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = ModelRef;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a model file's path, or { backend = \"NAME\" }")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ModelRef, E> {
                Ok(ModelRef::File(v.into()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ModelRef, A::Error> {
                let mut backend = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "backend" {
                        return Err(serde::de::Error::custom(format!(
                            "unknown key `{key}` beside a model's `backend` (the only key)"
                        )));
                    }
                    backend = Some(map.next_value::<String>()?);
                }
                backend.map(ModelRef::Backend).ok_or_else(|| {
                    serde::de::Error::custom("a model table needs `backend = \"NAME\"`")
                })
            }
        }
        deserializer.deserialize_any(Visit)
    }
}

/// What a model file is loaded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRole {
    /// Finds text lines on a page.
    Detector,
    /// Reads the text of one line.
    Recognizer,
    /// Finds boxes of classes (balloons, text) on a page.
    Boxes {
        format: super::ppocr::BoxFormat,
        size: u32,
        classes: usize,
    },
    /// Fills in the masked pixels of an image.
    Inpainter { size: u32, unit_output: bool },
}

impl ModelRole {
    /// The models a helper loads to load `path` as this.
    pub fn models(self, path: &std::path::Path) -> super::ppocr::Models {
        let path = path.to_path_buf();
        let mut models = super::ppocr::Models::default();
        match self {
            ModelRole::Detector => models.detector = Some(path),
            ModelRole::Recognizer => models.recognizer = Some(path),
            ModelRole::Boxes {
                format,
                size,
                classes,
            } => {
                models.boxes = Some(super::ppocr::BoxModel {
                    path,
                    format,
                    size,
                    classes,
                });
            }
            ModelRole::Inpainter { size, unit_output } => {
                models.inpainter = Some(super::ppocr::InpaintModel {
                    path,
                    size,
                    unit_output,
                });
            }
        }
        models
    }

    /// What it is, for a person.
    pub fn name(self) -> &'static str {
        match self {
            ModelRole::Detector => "text-line detector",
            ModelRole::Recognizer => "recogniser",
            ModelRole::Boxes { .. } => "box detector",
            ModelRole::Inpainter { .. } => "inpainting model",
        }
    }
}

/// What a check may compare a table with, besides itself.
#[derive(Debug, Clone)]
pub struct Context {
    /// `limits.max_image_pixels`.
    pub max_image_pixels: u64,
    /// The names of the `[backends.NAME]` tables.
    pub backends: Vec<String>,
}

/// A key of a table that fails its check, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The key inside the table (`min_score`, `fonts.0`).
    pub key: String,
    pub why: String,
}

impl Invalid {
    pub fn new(key: impl Into<String>, why: impl Into<String>) -> Invalid {
        Invalid {
            key: key.into(),
            why: why.into(),
        }
    }

    /// `key`'s `value` when it is outside `range` (of `unit`).
    pub fn outside<T>(
        key: &str,
        value: T,
        range: std::ops::RangeInclusive<T>,
        unit: &str,
    ) -> Result<(), Invalid>
    where
        T: PartialOrd + std::fmt::Display,
    {
        if range.contains(&value) {
            return Ok(());
        }
        Err(Invalid::new(
            key,
            format!(
                "is {value}; it must be from {} to {} ({unit})",
                range.start(),
                range.end()
            ),
        ))
    }

    /// A model key (`key`): refused when it names no file or a backend
    /// that is not defined, or when it is missing and `needed` says who
    /// needs it (`what` it must be).
    pub fn model_ref(
        key: &str,
        model: Option<&ModelRef>,
        needed: Option<&str>,
        what: &str,
        context: &Context,
    ) -> Result<(), Invalid> {
        match (model, needed) {
            (Some(ModelRef::File(path)), _) if !path.is_file() => Err(Invalid::new(
                key,
                format!("{} is not a file", path.display()),
            )),
            (Some(ModelRef::Backend(name)), _) if !context.backends.contains(name) => {
                let defined = if context.backends.is_empty() {
                    "none defined: add a [backends.NAME] table".to_owned()
                } else {
                    format!("defined: {}", context.backends.join(", "))
                };
                Err(Invalid::new(
                    key,
                    format!("no backend \"{name}\" ({defined})"),
                ))
            }
            (None, Some(by)) => Err(Invalid::new(key, format!("is needed by {by} ({what})"))),
            _ => Ok(()),
        }
    }
}

/// Goes through settings types, one call per type (see
/// [`super::each_table`]).
pub trait Tables {
    fn table<T: Settings>(&mut self);
}

/// A table's value with what the map needs to show and compare it.
#[derive(Clone)]
struct Entry {
    value: Arc<dyn Any + Send + Sync>,
    show: fn(&(dyn Any + Send + Sync)) -> toml::Value,
    models: fn(&(dyn Any + Send + Sync)) -> Vec<ModelFile>,
    reloads: bool,
}

fn models<T: Settings>(value: &(dyn Any + Send + Sync)) -> Vec<ModelFile> {
    value.downcast_ref::<T>().map(T::models).unwrap_or_default()
}

/// A table as TOML (its keys in the type's order, as `config show` lists
/// them); an empty table if it cannot be written, which no test lets
/// pass.
fn show<T: Settings>(value: &(dyn Any + Send + Sync)) -> toml::Value {
    value
        .downcast_ref::<T>()
        .and_then(|v| toml::Value::try_from(v).ok())
        .unwrap_or_else(|| toml::Value::Table(toml::Table::new()))
}

/// Every engine's settings, by table.
#[derive(Clone, Default)]
pub struct SettingsMap {
    tables: BTreeMap<&'static str, Entry>,
}

impl fmt::Debug for SettingsMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.tables()).finish()
    }
}

impl SettingsMap {
    /// Every table of the built-in engines at its default.
    pub fn defaults() -> SettingsMap {
        struct Defaults(SettingsMap);
        impl Tables for Defaults {
            fn table<T: Settings>(&mut self) {
                self.0.set(T::default());
            }
        }
        let mut defaults = Defaults(SettingsMap::default());
        super::each_table(&mut defaults);
        defaults.0
    }

    /// The settings of type `T`: as set, else its defaults.
    pub fn get<T: Settings>(&self) -> Arc<T> {
        self.tables
            .get(T::TABLE)
            .and_then(|entry| entry.value.clone().downcast::<T>().ok())
            .unwrap_or_default()
    }

    pub fn set<T: Settings>(&mut self, value: T) {
        self.tables.insert(
            T::TABLE,
            Entry {
                value: Arc::new(value),
                show: show::<T>,
                models: models::<T>,
                reloads: T::RELOADS,
            },
        );
    }

    /// Changes the settings of type `T` in place.
    pub fn update<T: Settings>(&mut self, change: impl FnOnce(&mut T)) {
        let mut value = T::clone(&self.get::<T>());
        change(&mut value);
        self.set(value);
    }

    /// Each table's name and value, in name order.
    pub fn tables(&self) -> impl Iterator<Item = (&'static str, toml::Value)> + '_ {
        self.tables
            .iter()
            .map(|(name, entry)| (*name, (entry.show)(entry.value.as_ref())))
    }

    /// Every model file the tables name, with its table's name.
    pub fn models(&self) -> Vec<(&'static str, ModelFile)> {
        self.tables
            .iter()
            .flat_map(|(name, entry)| {
                (entry.models)(entry.value.as_ref())
                    .into_iter()
                    .map(|model| (*name, model))
            })
            .collect()
    }

    /// Makes this map (a configuration read again) what a running server
    /// goes on with: a table that differs from `running`'s is named in
    /// `changed` when a reload takes it, else in `restart` and set back to
    /// the running value.
    pub fn reload_over(&mut self, running: &SettingsMap) -> Reloaded {
        let mut reloaded = Reloaded::default();
        for (name, old) in &running.tables {
            let differs = self
                .tables
                .get(name)
                .is_none_or(|new| (new.show)(new.value.as_ref()) != (old.show)(old.value.as_ref()));
            if !differs {
                continue;
            }
            if old.reloads {
                reloaded.changed.push(name);
            } else {
                reloaded.restart.push(name);
                self.tables.insert(name, old.clone());
            }
        }
        reloaded
    }
}

/// What [`SettingsMap::reload_over`] found, by table name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reloaded {
    pub changed: Vec<&'static str>,
    pub restart: Vec<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
    struct Knob {
        turns: u32,
    }

    impl Settings for Knob {
        const TABLE: &'static str = "knob";
    }

    #[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
    struct Fixed {
        size: u32,
    }

    impl Settings for Fixed {
        const TABLE: &'static str = "fixed";
        const RELOADS: bool = false;
    }

    #[test]
    fn a_table_not_set_reads_as_its_default_and_update_changes_one() {
        let mut map = SettingsMap::default();
        assert_eq!(*map.get::<Knob>(), Knob::default());
        map.update::<Knob>(|k| k.turns = 3);
        assert_eq!(map.get::<Knob>().turns, 3);
        let tables: Vec<_> = map.tables().collect();
        assert_eq!(tables, [("knob", toml::toml! { turns = 3 }.into())]);
    }

    #[test]
    fn a_reload_takes_what_reloads_and_keeps_the_rest_for_a_restart() {
        let mut running = SettingsMap::default();
        running.set(Knob { turns: 1 });
        running.set(Fixed { size: 1 });
        let mut file = running.clone();
        assert_eq!(file.reload_over(&running), Reloaded::default());
        file.set(Knob { turns: 2 });
        file.set(Fixed { size: 2 });
        let reloaded = file.reload_over(&running);
        assert_eq!(reloaded.changed, ["knob"]);
        assert_eq!(reloaded.restart, ["fixed"]);
        assert_eq!(file.get::<Knob>().turns, 2);
        assert_eq!(file.get::<Fixed>().size, 1, "kept until a restart");
    }

    #[test]
    fn every_built_in_table_has_its_default() {
        let defaults = SettingsMap::defaults();
        let names: Vec<&str> = defaults.tables().map(|(name, _)| name).collect();
        for table in [
            "clean", "detect", "llm", "ocr", "qa", "render", "spell", "tm",
        ] {
            assert!(names.contains(&table), "{table} in {names:?}");
        }
        for (name, value) in defaults.tables() {
            let written = value.as_table().is_some_and(|t| !t.is_empty());
            assert!(written, "{name} is written as TOML: {value:?}");
        }
    }
}
