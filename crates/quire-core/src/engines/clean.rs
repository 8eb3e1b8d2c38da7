//! `clean`: removes the source text of the translated blocks of each
//! image page into its `cleaned` image (`quire-render`'s `cleaned`, over `quire-vision`'s
//! `clean`): inside balloons the text mask is filled with the balloon's
//! own background, elsewhere inpainted; pixels outside the dilated masks
//! never change. Blocks with no translation keep their text (a note says
//! how many), unless a person set their `style.clean`. Render starts from the cleaned image while it is
//! current. The work is all CPU, so each page runs on the blocking pool.
//! With `backend = "onnx"`, an inpainting model (LaMa-style, in the
//! `quire-ppocr` helper process) fills what the builtin inpaints.

use std::sync::Arc;

use super::{Engine, EngineInfo, Needs, PageInput, PageOutcome, PageWork, Pictures, Step, ready};
use quire_model::finding::Finding;
use quire_model::finding::Severity;
use quire_model::hash::BlobHash;
use quire_render::cleaned;
use serde::{Deserialize, Serialize};

use super::settings::{Context, Invalid, Settings};

/// The `clean` engine.
pub struct Clean {
    info: EngineInfo,
}

impl Default for Clean {
    fn default() -> Self {
        Clean {
            info: EngineInfo::built_in(
                "clean",
                "clean",
                "Removes the source text of the translated blocks of each image page (its text mask, from detect) into the page's cleaned image: balloons filled with their own background, text on art inpainted; render starts from it",
            ),
        }
    }
}

impl Engine for Clean {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn needs(&self) -> Needs {
        Needs {
            pictures: Pictures::CleanSources,
            parallel: true,
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        let settings = CleanSettings::clone(&step.settings());
        let model = match (settings.backend, &settings.model) {
            (CleanBackend::Builtin, _) => None,
            (CleanBackend::Onnx, None) => {
                return Err(
                    "clean.backend = \"onnx\" needs clean.model (an inpainting model file)".into(),
                );
            }
            (CleanBackend::Onnx, Some(path)) => {
                let deadline = super::ppocr::Deadline {
                    within: std::time::Duration::from_secs(settings.timeout_secs),
                    setting: "clean.timeout_secs",
                };
                let models = settings.role().models(path);
                Some(Arc::new(Model(super::ppocr::Helpers::start(
                    &models, deadline,
                )?)))
            }
        };
        Ok(Box::new(Work {
            dilate: settings.dilate,
            max_pixels: step.config.max_image_pixels,
            model,
        }))
    }
}

/// The inpainting model, in its helpers.
struct Model(super::ppocr::Helpers);

impl quire_vision::clean::Inpaint for Model {
    fn inpaint(
        &self,
        image: &image::RgbImage,
        mask: &image::GrayImage,
    ) -> Result<image::RgbImage, String> {
        self.0.any().inpaint(image, mask)
    }
}

struct Work {
    dilate: u32,
    max_pixels: u64,
    model: Option<Arc<Model>>,
}

impl Drop for Work {
    /// The job ended: its helper goes now.
    fn drop(&mut self) {
        if let Some(model) = &self.model {
            model.0.kill();
        }
    }
}

impl PageWork for Work {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        let page = input.page;
        let warn = |rule: &str, message: String| PageOutcome {
            warnings: vec![Finding::new(rule, Severity::Warning, message).on(page.id, None)],
            ..PageOutcome::default()
        };
        let (Some(source), Some(digest)) = (input.image, cleaned::digest(page)) else {
            return ready(Ok(match input.image {
                None => warn(
                    "no-image",
                    format!("page `{}` has no source image to clean", page.name),
                ),
                Some(_) => warn(
                    "no-text-mask",
                    format!("page `{}` has no text mask: run detect first", page.name),
                ),
            }));
        };
        let kept = kept_note(page);
        if cleaned::current(page).is_some() {
            return ready(Ok(PageOutcome {
                warnings: kept.into_iter().collect(),
                ..PageOutcome::default()
            }));
        }
        let Some(text) = input.text_mask else {
            return ready(Ok(warn(
                "no-text-mask",
                format!("page `{}` has no text mask: run detect first", page.name),
            )));
        };
        let (owned, source, text, inpaint) = (
            page.clone(),
            source.to_vec(),
            text.to_vec(),
            input.mask.map(<[u8]>::to_vec),
        );
        let (dilate, max_pixels) = (self.dilate, self.max_pixels);
        let model = self.model.clone();
        Box::pin(async move {
            let (png, _) = tokio::task::spawn_blocking(move || {
                let model = model
                    .as_deref()
                    .map(|m| m as &dyn quire_vision::clean::Inpaint);
                cleaned::clean(
                    &owned,
                    &source,
                    &text,
                    inpaint.as_deref(),
                    dilate,
                    max_pixels,
                    model,
                )
            })
            .await
            .map_err(|e| format!("the clean failed: {e}"))??;
            let blob = BlobHash::of(&png);
            Ok(PageOutcome {
                ops: cleaned::store_ops(page, blob, digest),
                warnings: kept.into_iter().collect(),
                blobs: vec![png],
            })
        })
    }
}

/// A note of the text blocks left as they are because nothing will be
/// set over them (spec 13, "Untranslated text stays").
fn kept_note(page: &quire_model::scene::Page) -> Option<Finding> {
    let kept = cleaned::cleared(page).1;
    let blocks = if kept == 1 { "block" } else { "blocks" };
    (kept > 0).then(|| {
        Finding::new(
            "kept-untranslated",
            Severity::Info,
            format!(
                "page `{}`: {kept} text {blocks} kept as they are, with no translation yet \
                 (a block's `style.clean = true` cleans it anyway)",
                page.name
            ),
        )
        .on(page.id, None)
    })
}

/// The `clean` engine's settings (`[clean]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CleanSettings {
    /// How many pixels the text mask grows before it is cleared, to take
    /// the soft edges of letters.
    pub dilate: u32,
    /// What inpaints text on art: the built-in methods, or a model.
    #[serde(default)]
    pub backend: CleanBackend,
    /// `onnx`: the inpainting model (LaMa-style: image and mask in, the
    /// image filled out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<std::path::PathBuf>,
    /// The model's square input, in pixels (LaMa's exports: 512).
    pub input_size: u32,
    /// The model's output is in 0..1 (LaMa's is in 0..255).
    pub unit_output: bool,
    /// How long one window may take the model, in seconds.
    pub timeout_secs: u64,
}

impl Default for CleanSettings {
    fn default() -> Self {
        CleanSettings {
            dilate: 3,
            backend: CleanBackend::default(),
            model: None,
            input_size: 512,
            unit_output: false,
            timeout_secs: 120,
        }
    }
}

impl CleanSettings {
    fn role(&self) -> super::settings::ModelRole {
        super::settings::ModelRole::Inpainter {
            size: self.input_size,
            unit_output: self.unit_output,
        }
    }
}

/// What inpaints text on art.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CleanBackend {
    /// Telea's method, and patches where the art is textured.
    #[default]
    Builtin,
    /// An inpainting model, run by the `quire-ppocr` helper.
    Onnx,
}

impl Settings for CleanSettings {
    const TABLE: &'static str = "clean";

    fn check(&self, context: &Context) -> Result<(), Invalid> {
        Invalid::outside("dilate", self.dilate, 0..=32, "pixels")?;
        let onnx = (self.backend == CleanBackend::Onnx).then_some("clean.backend = \"onnx\"");
        let model = self.model.clone().map(super::settings::ModelRef::File);
        Invalid::model_ref(
            "model",
            model.as_ref(),
            onnx,
            "an inpainting model file",
            context,
        )?;
        Invalid::outside("input_size", self.input_size, 32..=4096, "pixels")?;
        Invalid::outside("timeout_secs", self.timeout_secs, 1..=3600, "seconds")?;
        Ok(())
    }

    fn models(&self) -> Vec<super::settings::ModelFile> {
        self.model
            .iter()
            .map(|path| super::settings::ModelFile {
                key: "model",
                source: super::settings::ModelRef::File(path.clone()),
                role: self.role(),
            })
            .collect()
    }
}

impl super::BuiltIn for Clean {
    fn tables<V: super::settings::Tables>(tables: &mut V) {
        tables.table::<CleanSettings>();
    }
}
