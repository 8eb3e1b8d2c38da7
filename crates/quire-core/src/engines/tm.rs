//! `tm`: fills untranslated text nodes from the translation memory, the
//! reviewed and final translations of the managed projects
//! ([`crate::tm`]), keeping the match's similarity in the origin.

use super::{Engine, EngineInfo, Fill, Needs, PageInput, PageOutcome, PageWork, Step, ready};
use crate::tm::Memory;

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
        let fill = Fill::new(&step);
        Ok(Box::new(Work {
            memory: step
                .memory
                .ok_or("no translation memory was built for this step")?,
            min_score: step.config.tm.min_score,
            fill,
        }))
    }
}

struct Work {
    memory: Memory,
    min_score: f64,
    fill: Fill,
}

impl PageWork for Work {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        let ops = self.fill.ops(input.page, |text| {
            let hit = self.memory.lookup(text, self.min_score)?;
            Some((hit.target.to_owned(), Some(hit.score)))
        });
        ready(Ok(PageOutcome {
            ops,
            ..PageOutcome::default()
        }))
    }
}
