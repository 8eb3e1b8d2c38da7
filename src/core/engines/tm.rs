//! `tm`: fills untranslated text nodes from the translation memory, the
//! reviewed and final translations of the managed projects
//! ([`crate::core::tm`]), keeping the match's similarity in the origin.

use super::{
    Engine, EngineInfo, Needs, PageInput, PageOutcome, PageWork, Step, ready, translation_op,
    writable_texts,
};
use crate::core::op::{KindPatch, Op};
use crate::core::scene::{Author, Origin};
use crate::core::tm::Memory;
use crate::core::workflow::Overwrite;

/// The `tm` engine.
pub struct Tm {
    info: EngineInfo,
}

impl Default for Tm {
    fn default() -> Self {
        Tm {
            info: EngineInfo::built_in(
                "tm",
                "translate",
                "Fills untranslated text nodes from the reviewed and final translations of the managed projects (translation memory; similarity at least tm.min_score, kept in the origin)",
            ),
        }
    }
}

impl Engine for Tm {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn needs(&self) -> Needs {
        Needs {
            memory: true,
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        Ok(Box::new(Work {
            memory: step
                .memory
                .ok_or("no translation memory was built for this step")?,
            min_score: step.config.tm.min_score,
            overwrite: step.overwrite,
            default_font: step.default_font.map(str::to_owned),
        }))
    }
}

struct Work {
    memory: Memory,
    min_score: f64,
    overwrite: Overwrite,
    default_font: Option<String>,
}

impl PageWork for Work {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        let page = input.page;
        let ops = writable_texts(page, self.overwrite)
            .filter_map(|(node, text)| {
                let hit = self.memory.lookup(text, self.min_score)?;
                let mut op = translation_op(
                    page,
                    node,
                    hit.target.to_owned(),
                    self.default_font.as_deref(),
                );
                if let Op::UpdateNode { patch, .. } = &mut op
                    && let Some(KindPatch::Text { origin, .. }) = &mut patch.kind
                {
                    // The core records the engine and the time.
                    *origin = Some(Some(Box::new(Origin {
                        by: Author::Engine,
                        engine: None,
                        client: None,
                        at: String::new(),
                        score: Some((hit.score * 1000.0).round() / 1000.0),
                    })));
                }
                Some(op)
            })
            .collect();
        ready(Ok(PageOutcome {
            ops,
            ..PageOutcome::default()
        }))
    }
}
