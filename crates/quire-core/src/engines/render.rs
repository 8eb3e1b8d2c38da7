//! `render`: clears the source text from each image page and sets the
//! translations in their boxes ([`quire_render`]), storing the
//! page's rendered image. The work is all CPU, so each page is rendered on
//! the blocking pool.

use std::sync::Arc;

use super::{Engine, EngineInfo, Needs, PageInput, PageOutcome, PageWork, Pictures, Step};
use quire_model::finding::Finding;
use quire_model::finding::Severity;
use quire_model::hash::BlobHash;
use quire_render::Settings;
use quire_render::fonts::Fonts;

use super::settings::{Context, Invalid, Settings as Table};

/// The `render` engine.
pub struct Render {
    info: EngineInfo,
}

impl Default for Render {
    fn default() -> Self {
        Render {
            info: EngineInfo::built_in(
                "render",
                "render",
                "Clears the source text from each image page and sets the translations in their boxes (shrunk to fit, vertical when style.vertical); stores the page's rendered image",
            ),
        }
    }
}

impl Engine for Render {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn needs(&self) -> Needs {
        Needs {
            pictures: Pictures::RenderSources,
            // The project's house style.
            scene: true,
            parallel: true,
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        Ok(Box::new(Work {
            fonts: step.fonts.clone(),
            settings: {
                let settings = Settings::new(
                    &step.settings::<quire_render::RenderConfig>(),
                    step.config.max_image_pixels,
                    step.target_language,
                );
                match step.scene {
                    Some(scene) => settings.for_project(&scene.project),
                    None => settings,
                }
            },
        }))
    }
}

struct Work {
    fonts: Arc<Fonts>,
    settings: Settings,
}

impl PageWork for Work {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        Box::pin(async move {
            let page = input.page;
            let (Some(image), Some(digest)) =
                (input.image, quire_render::digest(page, &self.settings))
            else {
                let finding = Finding::new(
                    "no-image",
                    Severity::Warning,
                    format!("page `{}` has no source image to render", page.name),
                );
                return Ok(PageOutcome {
                    warnings: vec![finding.on(page.id, None)],
                    ..PageOutcome::default()
                });
            };
            let (owned, image, mask) =
                (page.clone(), image.to_vec(), input.mask.map(<[u8]>::to_vec));
            let (fonts, settings) = (self.fonts.clone(), self.settings.clone());
            let rendered = tokio::task::spawn_blocking(move || {
                quire_render::render(&owned, &image, mask.as_deref(), &fonts, &settings)
            })
            .await
            .map_err(|e| format!("the render failed: {e}"))??;
            let blob = BlobHash::of(&rendered.png);
            Ok(PageOutcome {
                ops: quire_render::store_ops(page, blob, digest),
                warnings: rendered.warnings,
                blobs: vec![rendered.png],
            })
        })
    }
}

/// `[render]`: the render crate's settings, read as they are. The fonts
/// are loaded once, at start, so a changed table waits for a restart.
impl Table for quire_render::RenderConfig {
    const TABLE: &'static str = "render";
    const RELOADS: bool = false;

    fn check(&self, _context: &Context) -> Result<(), Invalid> {
        let size = self.min_font_size;
        if !(size.is_finite() && (1.0..=1000.0).contains(&size)) {
            return Err(Invalid::new(
                "min_font_size",
                format!("is {size}; it must be from 1 to 1000 (pixels)"),
            ));
        }
        for (i, font) in self.fonts.iter().enumerate() {
            if !font.is_file() {
                return Err(Invalid::new(
                    format!("fonts.{i}"),
                    format!("{} is not a font file", font.display()),
                ));
            }
        }
        Ok(())
    }
}

impl super::BuiltIn for Render {
    fn tables<V: super::settings::Tables>(tables: &mut V) {
        tables.table::<quire_render::RenderConfig>();
    }
}
