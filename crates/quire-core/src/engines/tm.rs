//! `tm`: fills untranslated text nodes from the translation memory, the
//! reviewed and final translations of the managed projects
//! ([`crate::tm`]), keeping the match's similarity in the origin. A
//! project without a source language fills nothing, and the step says
//! so once: the memory cannot tell which of its sides is the source.

use super::{Engine, EngineInfo, Fill, Needs, PageInput, PageOutcome, PageWork, Step, ready};
use crate::tm::Memory;
use serde::{Deserialize, Serialize};

use super::settings::{Context, Invalid, Settings};

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
            scene: true,
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        let fill = Fill::new(&step);
        let min_score = step.settings::<TmSettings>().min_score;
        let no_source = step
            .scene
            .is_some_and(|s| crate::tm::memory_languages(s, None).0.is_none());
        Ok(Box::new(Work {
            no_source,
            memory: step
                .memory
                .ok_or("no translation memory was built for this step")?,
            min_score,
            fill,
            scores: std::sync::Mutex::new(Scores::default()),
        }))
    }
}

struct Work {
    /// The project has no source language: nothing is looked up.
    no_source: bool,
    memory: Memory,
    min_score: f64,
    fill: Fill,
    scores: std::sync::Mutex<Scores>,
}

/// What the step found, for its summary: the score of each segment it
/// filled, and how many it looked up without a match.
#[derive(Default)]
struct Scores {
    filled: Vec<f64>,
    missed: usize,
}

impl Scores {
    /// `filled 5 of 7 segments from the memory (3 at 100 %, 2 at
    /// 90–94 %); 2 had no match of at least 85 %`.
    fn say(&self, min_score: f64) -> Option<String> {
        let looked = self.filled.len() + self.missed;
        if looked == 0 {
            return None;
        }
        let percent = |s: f64| (s * 100.0).floor() as u32;
        let mut bands: Vec<(String, usize)> = Vec::new();
        for &score in &self.filled {
            let p = percent(score);
            let band = match p {
                100 => "100 %".to_owned(),
                95..=99 => "95–99 %".to_owned(),
                _ => {
                    let low = (p / 5) * 5;
                    format!("{low}–{} %", low + 4)
                }
            };
            match bands.iter_mut().find(|(b, _)| *b == band) {
                Some((_, n)) => *n += 1,
                None => bands.push((band, 1)),
            }
        }
        // Best first: 100 %, then the bands by their lower bound.
        bands.sort_by_key(|(b, _)| {
            std::cmp::Reverse(
                b.split(['–', ' '])
                    .next()
                    .and_then(|n| n.parse::<u32>().ok()),
            )
        });
        let mut said = format!(
            "filled {} of {looked} segments from the memory",
            self.filled.len()
        );
        if !bands.is_empty() {
            let each: Vec<String> = bands.iter().map(|(b, n)| format!("{n} at {b}")).collect();
            said.push_str(&format!(" ({})", each.join(", ")));
        }
        if self.missed > 0 {
            said.push_str(&format!(
                "; {} had no match of at least {} %",
                self.missed,
                percent(min_score)
            ));
        }
        Some(said)
    }
}

impl PageWork for Work {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        if self.no_source {
            return ready(Ok(PageOutcome::default()));
        }
        let ops = self.fill.ops(input.page, |text| {
            let hit = self.memory.lookup(text, self.min_score);
            if let Ok(mut scores) = self.scores.lock() {
                match &hit {
                    Some(hit) => scores.filled.push(hit.score),
                    None => scores.missed += 1,
                }
            }
            let hit = hit?;
            Some((hit.target.to_owned(), Some(hit.score)))
        });
        ready(Ok(PageOutcome {
            ops,
            ..PageOutcome::default()
        }))
    }

    fn summary(&self) -> Option<String> {
        self.scores.lock().ok()?.say(self.min_score)
    }

    fn before(&self) -> Option<quire_model::finding::Finding> {
        self.no_source.then(no_source_language)
    }
}

/// What a memory step says of a project without a source language.
pub(crate) fn no_source_language() -> quire_model::finding::Finding {
    quire_model::finding::Finding::new(
        "no-source-language",
        quire_model::finding::Severity::Warning,
        "no source language: set the project's sourceLanguage to use the memory",
    )
}

/// The translation memory the `tm` engine fills from (`[tm]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TmSettings {
    /// How similar a remembered source must be to be used, from 0 (any)
    /// to 1 (identical only).
    pub min_score: f64,
}

impl Default for TmSettings {
    fn default() -> Self {
        TmSettings { min_score: 0.85 }
    }
}

impl Settings for TmSettings {
    const TABLE: &'static str = "tm";

    fn check(&self, _context: &Context) -> Result<(), Invalid> {
        let score = self.min_score;
        if !(score.is_finite() && (0.0..=1.0).contains(&score)) {
            return Err(Invalid::new(
                "min_score",
                format!(
                    "is {score}; it must be from 0 to 1 (0.85: close matches, 1: identical only)"
                ),
            ));
        }
        Ok(())
    }
}

impl super::BuiltIn for Tm {
    fn tables<V: super::settings::Tables>(tables: &mut V) {
        tables.table::<TmSettings>();
    }
}

#[cfg(test)]
mod tests {
    use super::Scores;

    #[test]
    fn the_summary_counts_fills_by_score() {
        let scores = Scores {
            filled: vec![1.0, 1.0, 0.99, 0.934, 0.87],
            missed: 2,
        };
        assert_eq!(
            scores.say(0.85).as_deref(),
            Some(
                "filled 5 of 7 segments from the memory (2 at 100 %, 1 at 95–99 %, 1 at 90–94 %, \
                 1 at 85–89 %); 2 had no match of at least 85 %"
            )
        );
        assert_eq!(Scores::default().say(0.85), None);
    }
}
