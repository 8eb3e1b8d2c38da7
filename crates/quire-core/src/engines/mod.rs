//! Pipeline engines: one trait, one file per engine, one registry.
//!
//! An engine says what its step needs ([`Needs`]), prepares once per step
//! from what the job gathered ([`Step`]), and then turns one page at a time
//! into ops (applied by the job as one labelled `Batch`) and/or warnings.
//! It never applies anything itself, so every engine edit goes through the
//! same history as a person's.
//!
//! Adding an engine is a file here implementing [`Engine`] and
//! [`BuiltIn`] (with its settings, [`settings::Settings`]), and a line in
//! [`each_built_in`]: the configuration, the launcher and a reload find
//! its settings there.

pub mod backends;
pub mod clean;
pub mod command;
pub mod detect;
pub mod llm;
pub mod models;
pub mod ocr;
pub mod ppocr;
pub mod pseudo;
pub mod qa;
pub mod render;
pub mod retry;
pub mod settings;
pub mod tesseract;
pub mod text;
pub mod tm;

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Serialize;

use super::settings::{CommandEngine, Provider};
use crate::CoreConfig;
use crate::tm::Memory;
use quire_model::finding::Finding;
use quire_model::op::{KindPatch, NodePatch, Op, StylePatch};
use quire_model::scene::{Author, ImageRole, Node, NodeKind, Origin, Page, Scene};
use quire_model::workflow::Overwrite;
use quire_render::fonts::Fonts;

/// What the registry says about an engine.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineInfo {
    pub id: String,
    pub stage: String,
    pub description: String,
    pub requires_approval: bool,
    pub built_in: bool,
    /// The exact command line of a command engine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl EngineInfo {
    /// A built-in engine's entry.
    fn built_in(id: &str, stage: &str, description: &str) -> EngineInfo {
        EngineInfo {
            id: id.to_owned(),
            stage: stage.to_owned(),
            description: description.to_owned(),
            requires_approval: false,
            built_in: true,
            command: None,
        }
    }
}

/// `engines` and then the named pipelines as entries of their own (stage
/// `pipeline`, their steps in the description, needing approval when a
/// step does): a name runs wherever an engine id does, so every list of
/// engines offers them.
pub fn with_pipelines(
    mut engines: Vec<EngineInfo>,
    pipelines: &std::collections::BTreeMap<String, crate::settings::PipelinePreset>,
) -> Vec<EngineInfo> {
    let built_in = crate::settings::built_in_presets();
    let presets: Vec<EngineInfo> = pipelines
        .iter()
        .map(|(name, preset)| {
            let asks = preset
                .steps
                .iter()
                .any(|s| engines.iter().any(|e| e.id == *s && e.requires_approval));
            let steps = preset.steps.join(" → ");
            EngineInfo {
                id: name.clone(),
                stage: "pipeline".into(),
                description: if preset.description.is_empty() {
                    steps
                } else {
                    format!("{}: {steps}", preset.description)
                },
                requires_approval: asks,
                built_in: built_in.get(name) == Some(preset),
                command: None,
            }
        })
        .collect();
    engines.extend(presets);
    engines
}

/// What an engine asks the job to gather for its step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// The project's scene, once per step (checks across pages, the
    /// glossary).
    pub scene: bool,
    /// A translation memory from the managed projects, once per step.
    pub memory: bool,
    /// A translation provider (`[providers.<id>]`) and a target language,
    /// both checked before the job is queued.
    pub provider: bool,
    /// Which of each page's pictures it reads.
    pub pictures: Pictures,
    /// Its pages stand alone (nothing it makes of one page is read for
    /// another): several may be worked on at once, one per core.
    pub parallel: bool,
}

/// How many pages of an engine whose pages stand alone
/// ([`Needs::parallel`]) a job works on at once: one per core, at most
/// four.
pub fn pages_at_once() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// Which of a page's pictures an engine reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pictures {
    #[default]
    None,
    /// The page's image ([`page_image`]).
    Image,
    /// What a render starts from: the current cleaned image, else the
    /// source image and its inpaint mask.
    RenderSources,
    /// What `clean` reads: the source image, the inpaint mask and the text
    /// mask.
    CleanSources,
}

/// What the job hands an engine once per step.
pub struct Step<'a> {
    /// BCP 47: the pipeline's, else the project's.
    pub target_language: Option<&'a str>,
    pub system_prompt: Option<&'a str>,
    /// For translated nodes without a font.
    pub default_font: Option<&'a str>,
    /// Which translations a translation engine may replace; engines skip
    /// the rest (and the core drops any edit that gets through).
    pub overwrite: Overwrite,
    /// The only text nodes the engines that work node by node (ocr, tm,
    /// the translating engines) touch, when the pipeline names some.
    pub nodes: Option<&'a [quire_model::ids::NodeId]>,
    /// With [`Needs::scene`].
    pub scene: Option<&'a Scene>,
    /// With [`Needs::memory`].
    pub memory: Option<Memory>,
    /// With [`Needs::provider`]: the provider's id and settings, and the
    /// client to reach it with.
    pub provider: Option<(&'a str, &'a Provider)>,
    pub http: Option<&'a reqwest::Client>,
    /// The core's settings (an engine's own through [`Step::settings`],
    /// limits).
    pub config: &'a CoreConfig,
    pub fonts: &'a Arc<Fonts>,
    /// The process's gates and counters of backends and providers.
    pub backends: &'a backends::Backends,
}

impl Step<'_> {
    /// The engine's settings of type `T` (its table of the configuration).
    pub fn settings<T: settings::Settings>(&self) -> Arc<T> {
        self.config.settings.get::<T>()
    }

    /// Where the step finds models on backends.
    pub fn places(&self) -> models::Places<'_> {
        models::Places {
            backends: &self.config.backends,
            process: self.backends,
        }
    }
}

/// What an engine gets for one page.
pub struct PageInput<'a> {
    pub page: &'a Page,
    /// The pictures [`Needs::pictures`] asked for, when the page has them.
    pub image: Option<&'a [u8]>,
    pub mask: Option<&'a [u8]>,
    /// With [`Pictures::CleanSources`]: the page's text mask.
    pub text_mask: Option<&'a [u8]>,
}

/// What an engine made of one page.
#[derive(Debug, Default)]
pub struct PageOutcome {
    pub ops: Vec<Op>,
    /// Problems found (each becomes one `JobWarning`); the step did not fail.
    pub warnings: Vec<Finding>,
    /// Blobs the ops refer to (a rendered page), stored before they apply.
    pub blobs: Vec<Vec<u8>>,
}

/// What a step does to each page, once [`Engine::prepare`] made it.
pub trait PageWork: Send + Sync {
    /// One page. `Err` is the step failing on this page: a warning, and
    /// the job goes on.
    fn page<'a>(&'a self, input: PageInput<'a>) -> BoxFuture<'a, Result<PageOutcome, String>>;

    /// What the step did over all its pages, said once it ends (an `info`
    /// finding, `summary`); `None`: nothing worth a line.
    fn summary(&self) -> Option<String> {
        None
    }

    /// What holds for the whole step, said once before its first page (a
    /// project without a source language, for the memory): a warning
    /// marks the job as completed with errors, an `info` does not.
    fn before(&self) -> Option<Finding> {
        None
    }

    /// How many pages to work on at once, when its pages stand alone and
    /// one per core is not the answer (models on an inference server:
    /// enough to keep its requests in flight).
    fn at_once(&self) -> Option<usize> {
        None
    }

    /// A failure that ends the whole job rather than one page (a backend
    /// still failing after its retries): asked after a page fails.
    fn fatal(&self) -> Option<String> {
        None
    }
}

/// A pipeline engine.
pub trait Engine: Send + Sync {
    fn info(&self) -> &EngineInfo;

    /// What the job gathers for this engine's step; nothing by default.
    fn needs(&self) -> Needs {
        Needs::default()
    }

    /// Prepares the step. `Err` fails the job before any page.
    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String>;
}

/// A built-in engine: made by `Default`, with the settings tables it
/// reads.
pub trait BuiltIn: Engine + Default + 'static {
    /// Calls `tables.table::<T>()` for each settings type it reads; none by
    /// default.
    fn tables<V: settings::Tables>(_tables: &mut V) {}
}

/// Goes through the built-in engines' types (see [`each_built_in`]).
pub trait Visit {
    fn engine<E: BuiltIn>(&mut self);
}

/// The engines every quire has, in the order `quire engines list` shows
/// them. Adding one: its file, and a line here.
pub fn each_built_in<V: Visit>(visit: &mut V) {
    visit.engine::<detect::Detect>();
    visit.engine::<ocr::Ocr>();
    visit.engine::<clean::Clean>();
    visit.engine::<pseudo::PseudoTranslate>();
    visit.engine::<qa::Qa>();
    visit.engine::<llm::LlmTranslate>();
    visit.engine::<tm::Tm>();
    visit.engine::<render::Render>();
}

/// Every settings type the built-in engines read, each once.
pub fn each_table<V: settings::Tables>(tables: &mut V) {
    struct Each<'a, V>(&'a mut V);
    impl<V: settings::Tables> Visit for Each<'_, V> {
        fn engine<E: BuiltIn>(&mut self) {
            E::tables(self.0);
        }
    }
    each_built_in(&mut Each(tables));
}

/// One of each built-in engine.
pub fn built_in() -> Vec<Arc<dyn Engine>> {
    struct Make(Vec<Arc<dyn Engine>>);
    impl Visit for Make {
        fn engine<E: BuiltIn>(&mut self) {
            self.0.push(Arc::new(E::default()));
        }
    }
    let mut made = Make(Vec::new());
    each_built_in(&mut made);
    made.0
}

/// The ids of [`built_in`] (the config refuses them as command engine ids).
pub fn built_in_ids() -> Vec<String> {
    built_in().iter().map(|e| e.info().id.clone()).collect()
}

/// The engines of this process: the built-ins plus `[engines.<id>]`.
#[derive(Clone)]
pub struct Registry {
    engines: Vec<Arc<dyn Engine>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.ids()).finish()
    }
}

impl Registry {
    pub fn new(commands: &BTreeMap<String, CommandEngine>) -> Self {
        let mut engines = built_in();
        for (id, config) in commands {
            engines.push(Arc::new(command::Command::new(id, config.clone())));
        }
        Registry { engines }
    }

    pub fn list(&self) -> Vec<EngineInfo> {
        self.engines.iter().map(|e| e.info().clone()).collect()
    }

    pub fn get(&self, id: &str) -> Option<Arc<dyn Engine>> {
        self.engines.iter().find(|e| e.info().id == id).cloned()
    }

    pub fn ids(&self) -> Vec<&str> {
        self.engines.iter().map(|e| e.info().id.as_str()).collect()
    }
}

/// A page's work that needs no waiting, as [`PageWork::page`] returns it.
fn ready<'a>(outcome: Result<PageOutcome, String>) -> BoxFuture<'a, Result<PageOutcome, String>> {
    Box::pin(std::future::ready(outcome))
}

/// The source image of a page: its first `source` image node, else its
/// first image node.
pub fn page_image(page: &Page) -> Option<&quire_model::hash::BlobHash> {
    let images = page.nodes.iter().filter_map(|n| match &n.kind {
        NodeKind::Image { blob, role, .. } => Some((blob, *role)),
        _ => None,
    });
    let mut first = None;
    for (blob, role) in images {
        if role == ImageRole::Source {
            return Some(blob);
        }
        first.get_or_insert(blob);
    }
    first
}

/// What a translating engine's step knows of how to write: which
/// translations it may replace, and the font for a translated node that
/// names none.
struct Fill {
    overwrite: Overwrite,
    /// The pipeline's `nodes`: only these are written.
    nodes: Option<Vec<quire_model::ids::NodeId>>,
    default_font: Option<String>,
}

impl Fill {
    fn new(step: &Step<'_>) -> Fill {
        Fill {
            overwrite: step.overwrite,
            nodes: step.nodes.map(<[_]>::to_vec),
            default_font: step.default_font.map(str::to_owned),
        }
    }

    /// The text nodes of `page` with source text (not only blanks) whose
    /// translation the step may write, with that text.
    fn writable<'p>(&self, page: &'p Page) -> impl Iterator<Item = (&'p Node, &'p str)> {
        let overwrite = self.overwrite;
        page.nodes
            .iter()
            .filter(move |n| overwrite.allows(n))
            .filter(|n| self.nodes.as_ref().is_none_or(|only| only.contains(&n.id)))
            .filter_map(|n| match &n.kind {
                NodeKind::Text {
                    text: Some(text), ..
                } if !text.trim().is_empty() => Some((n, text.as_str())),
                _ => None,
            })
    }

    /// One op per writable text node that `translate` answers for, setting
    /// its translation (and, with a `score`, the match's similarity in its
    /// origin; the core records the engine and the time).
    fn ops(
        &self,
        page: &Page,
        translate: impl Fn(&str) -> Option<(String, Option<f64>)>,
    ) -> Vec<Op> {
        self.writable(page)
            .filter_map(|(node, text)| {
                let (translation, score) = translate(text)?;
                let mut op = self.translation_op(page, node, translation);
                if let Some(score) = score
                    && let Op::UpdateNode { patch, .. } = &mut op
                    && let Some(KindPatch::Text { origin, .. }) = &mut patch.kind
                {
                    *origin = Some(Some(Box::new(Origin {
                        by: Author::Engine,
                        engine: None,
                        client: None,
                        user: None,
                        at: String::new(),
                        score: Some((score * 1000.0).round() / 1000.0),
                        suggested_by: None,
                    })));
                }
                Some(op)
            })
            .collect()
    }

    /// Sets a node's translation, and its font family to the step's default
    /// when it names none, so translated text has a face to be set in.
    fn translation_op(&self, page: &Page, node: &Node, translation: String) -> Op {
        let has_font =
            matches!(&node.kind, NodeKind::Text { style: Some(s), .. } if s.font_family.is_some());
        let style = match self.default_font.as_deref() {
            Some(font) if !has_font => Some(StylePatch {
                font_family: Some(Some(font.to_owned())),
                ..StylePatch::default()
            }),
            _ => None,
        };
        let mut patch = NodePatch::text(Some(Some(translation)), None);
        if let Some(KindPatch::Text { style: s, .. }) = &mut patch.kind {
            *s = style;
        }
        Op::UpdateNode {
            page: page.id,
            id: node.id,
            patch,
            based_on: None,
        }
    }
}
