//! `clean`: removes the source text of the translated blocks of each
//! image page into its `cleaned` image (`quire-render`'s `cleaned`, over `quire-vision`'s
//! `clean`): inside balloons the text mask is filled with the balloon's
//! own background, elsewhere inpainted; pixels outside the dilated masks
//! never change. Blocks with no translation keep their text (a note says
//! how many), unless a person set their `style.clean`. Render starts from the cleaned image while it is
//! current. The work is all CPU, so each page runs on the blocking pool.

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
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        Ok(Box::new(Work {
            dilate: step.settings::<CleanSettings>().dilate,
            max_pixels: step.config.max_image_pixels,
        }))
    }
}

struct Work {
    dilate: u32,
    max_pixels: u64,
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
        Box::pin(async move {
            let (png, _) = tokio::task::spawn_blocking(move || {
                cleaned::clean(
                    &owned,
                    &source,
                    &text,
                    inpaint.as_deref(),
                    dilate,
                    max_pixels,
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
}

impl Default for CleanSettings {
    fn default() -> Self {
        CleanSettings { dilate: 3 }
    }
}

impl Settings for CleanSettings {
    const TABLE: &'static str = "clean";

    fn check(&self, _context: &Context) -> Result<(), Invalid> {
        if self.dilate > 32 {
            return Err(Invalid::new(
                "dilate",
                format!("is {}; it must be from 0 to 32 (pixels)", self.dilate),
            ));
        }
        Ok(())
    }
}

impl super::BuiltIn for Clean {
    fn tables<V: super::settings::Tables>(tables: &mut V) {
        tables.table::<CleanSettings>();
    }
}
