//! Pipeline engines: the registry and what each engine does to one page.
//!
//! An engine turns one page into ops (applied by the job as one labelled
//! `Batch`) and/or warnings. It never applies anything itself, so every
//! engine edit goes through the same history as a person's.

pub mod command;
pub mod llm;
pub mod pseudo;
pub mod qa;
pub mod tesseract;
pub mod text;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::config::schema::{CommandEngineConfig, ProviderConfig, QaConfig};
use crate::core::events::Finding;
use crate::core::op::{KindPatch, NodePatch, Op, StylePatch};
use crate::core::scene::{ImageRole, NodeKind, Page};
use crate::core::workflow::Overwrite;

/// Ids of the engines every quire has (the config refuses them as command
/// engine ids).
pub use crate::config::schema::BUILT_IN_ENGINES as BUILT_IN;

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

#[derive(Debug, Clone)]
pub enum EngineKind {
    PseudoTranslate,
    Qa,
    LlmTranslate,
    Tm,
    Render,
    Command(CommandEngineConfig),
}

#[derive(Debug, Clone)]
pub struct Engine {
    pub info: EngineInfo,
    pub kind: EngineKind,
}

/// The engines of this process: the built-ins plus `[engines.<id>]`.
#[derive(Debug, Clone)]
pub struct Registry {
    engines: Vec<Arc<Engine>>,
}

fn built_in(id: &str, stage: &str, description: &str, kind: EngineKind) -> Arc<Engine> {
    Arc::new(Engine {
        info: EngineInfo {
            id: id.to_owned(),
            stage: stage.to_owned(),
            description: description.to_owned(),
            requires_approval: false,
            built_in: true,
            command: None,
        },
        kind,
    })
}

impl Registry {
    pub fn new(commands: &BTreeMap<String, CommandEngineConfig>) -> Self {
        let mut engines = vec![
            built_in(
                "pseudo-translate",
                "translate",
                "Fills each text node's translation with an accented, ~30% longer form of its text, placeholders kept",
                EngineKind::PseudoTranslate,
            ),
            built_in(
                "qa",
                "check",
                "Checks each translation: missing, placeholders, too long for its box, whitespace, numbers, end punctuation, consistency across the project, glossary terms",
                EngineKind::Qa,
            ),
            built_in(
                "llm-translate",
                "translate",
                "Translates each page's text nodes with an OpenAI-compatible chat-completions provider",
                EngineKind::LlmTranslate,
            ),
            built_in(
                "tm",
                "translate",
                "Fills untranslated text nodes from the reviewed and final translations of the managed projects (translation memory; similarity at least tm.min_score, kept in the origin)",
                EngineKind::Tm,
            ),
            built_in(
                "render",
                "render",
                "Clears the source text from each image page and sets the translations in their boxes (shrunk to fit, vertical when style.vertical); stores the page's rendered image",
                EngineKind::Render,
            ),
        ];
        for (id, config) in commands {
            engines.push(Arc::new(Engine {
                info: EngineInfo {
                    id: id.clone(),
                    stage: config.stage.clone(),
                    description: config.description.clone(),
                    requires_approval: config.requires_approval,
                    built_in: false,
                    command: Some(command::command_line(config)),
                },
                kind: EngineKind::Command(config.clone()),
            }));
        }
        Registry { engines }
    }

    pub fn list(&self) -> Vec<EngineInfo> {
        self.engines.iter().map(|e| e.info.clone()).collect()
    }

    pub fn get(&self, id: &str) -> Option<Arc<Engine>> {
        self.engines.iter().find(|e| e.info.id == id).cloned()
    }

    pub fn ids(&self) -> Vec<&str> {
        self.engines.iter().map(|e| e.info.id.as_str()).collect()
    }
}

/// Everything an engine may use for one page.
pub struct PageInput<'a> {
    pub page: &'a Page,
    /// The page's source image bytes, read when the engine needs them.
    pub image: Option<&'a [u8]>,
    pub target_language: Option<&'a str>,
    pub system_prompt: Option<&'a str>,
    pub default_font: Option<&'a str>,
    pub http: &'a reqwest::Client,
    /// For `llm-translate`: the provider's id and settings.
    pub provider: Option<(&'a str, &'a ProviderConfig)>,
    /// Which translations a translation engine may replace; the engines
    /// skip the rest (and the core drops any edit that gets through).
    pub overwrite: Overwrite,
    /// For `qa`: the project's translated sources, built once per step.
    pub sources: Option<&'a qa::Sources>,
    /// For `qa`: which rules run, at what severity (`[qa]`).
    pub qa: &'a QaConfig,
    /// For `llm-translate`: the project's glossary, built once per step.
    pub glossary: Option<&'a crate::core::glossary::Matcher>,
    /// For `tm`: the memory, built once per step, and `tm.min_score`.
    pub memory: Option<&'a crate::core::tm::Memory>,
    pub min_score: f64,
    /// For `render`: the page's inpaint mask, the fonts and the settings.
    pub mask: Option<&'a [u8]>,
    pub render: Option<&'a RenderStep>,
}

/// What the `render` engine uses for a whole step.
pub struct RenderStep {
    pub fonts: std::sync::Arc<crate::core::render::fonts::Fonts>,
    pub settings: crate::core::render::Settings,
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

impl Engine {
    /// Whether the engine checks pages against the whole project (the job
    /// builds a [`qa::Sources`] for its step).
    pub fn needs_sources(&self) -> bool {
        matches!(self.kind, EngineKind::Qa)
    }

    /// Whether the engine sends each page's glossary terms (the job builds
    /// a glossary `Matcher` for its step).
    pub fn needs_glossary(&self) -> bool {
        matches!(self.kind, EngineKind::LlmTranslate)
    }

    /// Whether the job builds a translation memory for this engine's step.
    pub fn needs_memory(&self) -> bool {
        matches!(self.kind, EngineKind::Tm)
    }

    /// Whether the job must read the page's image for this engine.
    pub fn needs_image(&self) -> bool {
        matches!(self.kind, EngineKind::Render)
            || matches!(&self.kind, EngineKind::Command(c) if command::needs_image(c))
    }

    /// Whether the job reads the page's inpaint mask and fonts for it.
    pub fn renders(&self) -> bool {
        matches!(self.kind, EngineKind::Render)
    }

    /// Runs on one page. `Err` is the step failing on this page.
    pub async fn run(&self, input: &PageInput<'_>) -> Result<PageOutcome, String> {
        match &self.kind {
            EngineKind::PseudoTranslate => Ok(PageOutcome {
                ops: translations(input, |text| Some(pseudo::pseudo_translate(text))),
                ..PageOutcome::default()
            }),
            EngineKind::Qa => Ok(PageOutcome {
                warnings: qa::check_page(input.page, input.sources, input.qa),
                ..PageOutcome::default()
            }),
            EngineKind::Render => render_page(input).await,
            EngineKind::Tm => {
                let Some(memory) = input.memory else {
                    return Err("no translation memory was built for this step".into());
                };
                let ops = input
                    .page
                    .nodes
                    .iter()
                    .filter(|n| input.overwrite.allows(n))
                    .filter_map(|n| {
                        let NodeKind::Text {
                            text: Some(text), ..
                        } = &n.kind
                        else {
                            return None;
                        };
                        let hit = memory.lookup(text, input.min_score)?;
                        let mut op = translation_op(
                            input.page,
                            n,
                            hit.target.to_owned(),
                            input.default_font,
                        );
                        if let Op::UpdateNode { patch, .. } = &mut op
                            && let Some(KindPatch::Text { origin, .. }) = &mut patch.kind
                        {
                            // The core records the engine and the time.
                            *origin = Some(Some(Box::new(crate::core::scene::Origin {
                                by: crate::core::scene::Author::Engine,
                                engine: None,
                                client: None,
                                at: String::new(),
                                score: Some((hit.score * 1000.0).round() / 1000.0),
                            })));
                        }
                        Some(op)
                    })
                    .collect();
                Ok(PageOutcome {
                    ops,
                    ..PageOutcome::default()
                })
            }
            EngineKind::LlmTranslate => {
                let segments = llm::segments(input.page, input.overwrite);
                if segments.is_empty() {
                    return Ok(PageOutcome::default());
                }
                let (provider_id, provider) = input
                    .provider
                    .ok_or("no translation provider is configured")?;
                let target_language = input
                    .target_language
                    .ok_or("llm-translate needs targetLanguage")?;
                let glossary = input
                    .glossary
                    .map(|m| llm::page_terms(m, &segments))
                    .unwrap_or_default();
                let request = llm::Request {
                    provider_id,
                    provider,
                    target_language,
                    system_prompt: input.system_prompt,
                    segments: &segments,
                    glossary: &glossary,
                };
                let mut translated = llm::translate(input.http, &request).await?;
                let ops = input
                    .page
                    .nodes
                    .iter()
                    .filter_map(|n| {
                        let text = translated.remove(&n.id.to_string())?;
                        Some(translation_op(input.page, n, text, input.default_font))
                    })
                    .collect();
                Ok(PageOutcome {
                    ops,
                    ..PageOutcome::default()
                })
            }
            EngineKind::Command(config) => Ok(PageOutcome {
                ops: command::run(config, input.page, input.image, input.target_language).await?,
                ..PageOutcome::default()
            }),
        }
    }
}

/// Renders the page on the blocking pool (it is all CPU) and stores the
/// result as its rendered image.
async fn render_page(input: &PageInput<'_>) -> Result<PageOutcome, String> {
    let step = input
        .render
        .ok_or("no fonts were loaded for this render step")?;
    let page = input.page;
    let (Some(image), Some(digest)) = (
        input.image,
        crate::core::render::digest(page, &step.settings),
    ) else {
        let finding = Finding::new(
            "no-image",
            crate::core::events::Severity::Warning,
            format!("page `{}` has no source image to render", page.name),
        );
        return Ok(PageOutcome {
            warnings: vec![finding.on(page.id, None)],
            ..PageOutcome::default()
        });
    };
    let (owned, image, mask) = (page.clone(), image.to_vec(), input.mask.map(<[u8]>::to_vec));
    let (fonts, settings) = (step.fonts.clone(), step.settings.clone());
    let rendered = tokio::task::spawn_blocking(move || {
        crate::core::render::render(&owned, &image, mask.as_deref(), &fonts, &settings)
    })
    .await
    .map_err(|e| format!("the render failed: {e}"))??;
    let blob = crate::core::blobs::BlobHash::of(&rendered.png);
    Ok(PageOutcome {
        ops: crate::core::render::store_ops(page, blob, digest),
        warnings: rendered.warnings,
        blobs: vec![rendered.png],
    })
}

/// The source image of a page: its first `source` image node, else its
/// first image node.
pub fn page_image(page: &Page) -> Option<&crate::core::blobs::BlobHash> {
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

/// One `UpdateNode` per text node with text, setting the translation that
/// `translate` returns.
fn translations(input: &PageInput<'_>, translate: impl Fn(&str) -> Option<String>) -> Vec<Op> {
    let page = input.page;
    page.nodes
        .iter()
        .filter(|n| input.overwrite.allows(n))
        .filter_map(|n| match &n.kind {
            NodeKind::Text {
                text: Some(text), ..
            } if !text.trim().is_empty() => {
                translate(text).map(|t| translation_op(page, n, t, input.default_font))
            }
            _ => None,
        })
        .collect()
}

/// Sets a node's translation; with `default_font`, also its font family
/// when it has none, so translated text has a face to be set in.
fn translation_op(
    page: &Page,
    node: &crate::core::scene::Node,
    translation: String,
    default_font: Option<&str>,
) -> Op {
    let has_font =
        matches!(&node.kind, NodeKind::Text { style: Some(s), .. } if s.font_family.is_some());
    let style = match default_font {
        Some(font) if !has_font => Some(StylePatch {
            font_family: Some(Some(font.to_owned())),
            ..StylePatch::default()
        }),
        _ => None,
    };
    Op::UpdateNode {
        page: page.id,
        id: node.id,
        patch: NodePatch {
            kind: Some(KindPatch::Text {
                text: None,
                translation: Some(Some(translation)),
                source_lang: None,
                style,
                state: None,
                origin: None,
                timing: None,
            }),
            ..NodePatch::default()
        },
        based_on: None,
    }
}
