//! `qa`: checks each text node and reports every problem as one finding
//! naming its page and node: a missing translation, a source changed
//! since its translation, a placeholder set
//! that differs, a translation too long for its box, leading or trailing
//! whitespace that differs, numbers that differ, end punctuation (`?`,
//! `!`, `…`) that differs, and the same source translated differently
//! elsewhere in the project (against a [`Sources`] index built once per
//! job step, so a page costs its own nodes, not the project's); a
//! subtitle's lines, reading speed, duration and gaps ([`crate::cues`]);
//! words the target language's dictionary does not know
//! ([`crate::spelling`]).

mod duration;
mod end_punctuation;
mod gap;
mod inconsistent;
mod line_length;
mod lines;
mod missing_translation;
mod numbers;
mod overlap;
mod placeholders;
mod reading_speed;
mod source_changed;
mod spelling;
mod terminology;
mod too_long;
mod whitespace;

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use super::{Engine, EngineInfo, Needs, PageInput, PageOutcome, PageWork, Step, ready};
use crate::cues::Cue;
use crate::glossary::Matcher;
use crate::spelling::Speller;
use quire_model::finding::Finding;
use quire_model::ids::{NodeId, PageId};
use quire_model::scene::{Node, NodeKind, Page, Scene};

pub use too_long::box_capacity;

/// Every rule, in the order a node's findings are listed. Adding one: its
/// file in this folder, and a line here.
pub const RULES: [Rule; 16] = [
    missing_translation::RULE,
    source_changed::RULE,
    placeholders::RULE,
    too_long::RULE,
    whitespace::RULE,
    numbers::RULE,
    end_punctuation::RULE,
    inconsistent::RULE,
    terminology::RULE,
    line_length::RULE,
    lines::RULE,
    reading_speed::RULE,
    duration::RULE,
    gap::RULE,
    overlap::RULE,
    spelling::RULE,
];

/// One QA rule: what its findings are called, its key in `[qa]`, its
/// level when the configuration names none, and what it finds on a page.
#[derive(Clone, Copy)]
pub struct Rule {
    /// The findings' rule (`too-long`).
    pub id: &'static str,
    /// Its key in `[qa]` (`too_long`).
    pub key: &'static str,
    pub default: RuleLevel,
    /// Each node of the page it finds a problem on, and the problem.
    pub check: fn(&Page, &Context<'_>) -> Vec<(NodeId, String)>,
}

/// What a rule may read besides the page, made once per step.
pub struct Context<'a> {
    /// The project's translations and glossary (the `inconsistent` and
    /// `terminology` rules), when the step has the scene.
    pub sources: Option<&'a Sources>,
    /// The subtitle rules' limits.
    pub limits: &'a SubtitleLimits,
    /// The target language's speller (the `spelling` rule), when there is
    /// one.
    pub speller: Option<&'a Speller>,
    /// The page's translated cues measured, once for the three rules
    /// that read the measures (a context is made for one page).
    pub measured: std::cell::OnceCell<Vec<(NodeId, usize, crate::cues::Measure)>>,
}

/// The findings of every rule that is on for `page`, a node's together in
/// the page's order, each node's in [`RULES`] order.
pub fn check(page: &Page, context: &Context<'_>, levels: &QaLevels) -> Vec<Finding> {
    let mut findings = Vec::new();
    for rule in &RULES {
        let Some(severity) = levels.level(rule.id).severity() else {
            continue;
        };
        for (node, message) in (rule.check)(page, context) {
            findings.push(Finding::new(rule.id, severity, message).on(page.id, Some(node)));
        }
    }
    let order: HashMap<NodeId, usize> = page
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id, i))
        .collect();
    findings.sort_by_key(|f| f.node_id.and_then(|n| order.get(&n).copied()));
    findings
}

/// A text node with source text, as the text rules read it.
pub struct Text<'a> {
    pub node: &'a Node,
    pub source: &'a str,
    /// Its translation, when it has one that is not blank.
    pub translation: Option<&'a str>,
}

impl Text<'_> {
    /// How a finding names it: its source, quoted and shortened. Made
    /// only for a finding: sixteen rules walk every node.
    pub fn what(&self) -> String {
        format!("\"{}\"", short(self.source))
    }
}

/// The text nodes of `page` with source text that is not blank.
pub fn texts(page: &Page) -> impl Iterator<Item = Text<'_>> {
    page.nodes.iter().filter_map(|node| {
        let NodeKind::Text {
            text, translation, ..
        } = &node.kind
        else {
            return None;
        };
        let source = text.as_deref().filter(|t| !t.trim().is_empty())?;
        Some(Text {
            node,
            source,
            translation: translation.as_deref().filter(|t| !t.trim().is_empty()),
        })
    })
}

/// [`texts`] that have a translation, with it.
pub fn translated(page: &Page) -> impl Iterator<Item = (Text<'_>, &str)> {
    texts(page).filter_map(|t| t.translation.map(|tr| (Text { ..t }, tr)))
}

/// What one measure of each translated cue (`over`: its lines, its
/// length, its speed against the limits) finds, each message named by
/// its cue: the walk the `line-length`, `lines` and `reading-speed` rules
/// share.
fn each_cue_measured(
    page: &Page,
    context: &Context<'_>,
    over: fn(&crate::cues::Measure, &SubtitleLimits) -> Vec<String>,
) -> Vec<(NodeId, String)> {
    let measured = context.measured.get_or_init(|| {
        crate::cues::cues(page)
            .into_iter()
            .filter_map(|cue| {
                let translation = cue.translation?;
                let measure = crate::cues::measure(translation, cue.duration_ms());
                Some((cue.node, cue.number, measure))
            })
            .collect()
    });
    let mut out = Vec::new();
    for (node, number, measure) in measured {
        for message in over(measure, context.limits) {
            out.push((*node, format!("cue {number}: {message}")));
        }
    }
    out
}

/// The page's cues by start time (then number): what `gap` and `overlap`
/// compare.
fn by_start(page: &Page) -> Vec<Cue<'_>> {
    let mut cues = crate::cues::cues(page);
    cues.sort_by_key(|c| (c.timing.start, c.number));
    cues
}

fn short(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    s
}
use quire_model::scene::{SubtitleLimits, SubtitleProfile};
use serde::{Deserialize, Serialize};

use super::settings::Settings;
use quire_model::finding::Severity;

/// The `qa` engine.
pub struct Qa {
    info: EngineInfo,
}

impl Default for Qa {
    fn default() -> Self {
        Qa {
            info: EngineInfo::built_in(
                "qa",
                "check",
                "Checks each translation: missing, placeholders, too long for its box, whitespace, numbers, end punctuation, consistency across the project, glossary terms, spelling, and subtitles' line length, lines, reading speed, duration, gaps and overlaps",
            ),
        }
    }
}

impl Engine for Qa {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn needs(&self) -> Needs {
        Needs {
            scene: true,
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        let levels = QaLevels::clone(&step.settings());
        let (speller, no_speller) = if levels.level("spelling") == RuleLevel::Off {
            (None, None)
        } else {
            speller(&step)
        };
        let no_source = step.scene.is_some_and(|s| {
            crate::tm::memory_languages(s, None).0.is_none() && has_source_text(s)
        });
        Ok(Box::new(Work {
            no_source,
            sources: step.scene.map(Sources::of),
            limits: levels
                .subtitles
                .limits(step.scene.and_then(|s| s.project.subtitle_profile)),
            levels,
            speller,
            no_speller,
        }))
    }
}

/// The target language's speller, or why there is none.
fn speller(step: &Step<'_>) -> (Option<Speller>, Option<String>) {
    let Some(language) = step.target_language else {
        // Nothing to check against until the project says its language.
        return (None, None);
    };
    let Some(dic) = crate::spelling::find(language, &step.settings::<SpellSettings>()) else {
        return (
            None,
            Some(format!(
                "spelling not checked: no Hunspell dictionary for {language} (looked in [spell] dictionaries and /usr/share/hunspell; Debian: apt install hunspell-{})",
                language.to_ascii_lowercase()
            )),
        );
    };
    match crate::spelling::load(&dic) {
        Ok(dictionary) => {
            let (glossary, words) = step
                .scene
                .map(|s| (&s.project.glossary[..], &s.project.words[..]))
                .unwrap_or_default();
            (Some(Speller::new(dictionary, glossary, words)), None)
        }
        Err(why) => (None, Some(format!("spelling not checked: {why}"))),
    }
}

/// Whether any text node of `scene` has source text (a project of images
/// not read yet has nothing whose language matters).
fn has_source_text(scene: &quire_model::scene::Scene) -> bool {
    scene.pages.iter().flat_map(|p| &p.nodes).any(|n| {
        matches!(&n.kind, quire_model::scene::NodeKind::Text { text: Some(t), .. } if !t.trim().is_empty())
    })
}

struct Work {
    /// The project has text but no source language: said once.
    no_source: bool,
    sources: Option<Sources>,
    levels: QaLevels,
    limits: SubtitleLimits,
    speller: Option<Speller>,
    /// Why no word was checked, said as the step's summary.
    no_speller: Option<String>,
}

impl PageWork for Work {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        let context = Context {
            sources: self.sources.as_ref(),
            limits: &self.limits,
            speller: self.speller.as_ref(),
            measured: std::cell::OnceCell::new(),
        };
        let warnings = check(input.page, &context, &self.levels);
        ready(Ok(PageOutcome {
            warnings,
            ..PageOutcome::default()
        }))
    }

    fn summary(&self) -> Option<String> {
        self.no_speller.clone()
    }

    fn before(&self) -> Option<quire_model::finding::Finding> {
        self.no_source.then(|| {
            let mut said = super::tm::no_source_language();
            said.severity = quire_model::finding::Severity::Info;
            said.message = "no source language: set the project's sourceLanguage; until then \
                            the memory fills nothing for this project"
                .into();
            said
        })
    }
}

/// What the project-wide rules check against, built once per step: every
/// translated source of the project (its translations and where) and the
/// glossary's terms.
pub struct Sources {
    by_source: HashMap<String, Vec<(String, PageId, NodeId)>>,
    page_numbers: HashMap<PageId, usize>,
    pub glossary: Matcher,
}

impl Sources {
    pub fn of(scene: &Scene) -> Sources {
        let mut sources = Sources {
            by_source: HashMap::new(),
            page_numbers: HashMap::new(),
            glossary: Matcher::new(&scene.project.glossary),
        };
        for (i, page) in scene.pages.iter().enumerate() {
            sources.page_numbers.insert(page.id, i + 1);
            for node in &page.nodes {
                if let NodeKind::Text {
                    text: Some(text),
                    translation: Some(translation),
                    ..
                } = &node.kind
                    && !text.trim().is_empty()
                    && !translation.trim().is_empty()
                {
                    sources
                        .by_source
                        .entry(text.trim().to_owned())
                        .or_default()
                        .push((translation.trim().to_owned(), page.id, node.id));
                }
            }
        }
        sources
    }

    /// Another translation of `source` than `translation`: which, and the
    /// page number it is on.
    fn other(&self, source: &str, translation: &str, node: NodeId) -> Option<(&str, usize)> {
        self.by_source
            .get(source.trim())?
            .iter()
            .find(|(t, _, n)| *n != node && t != translation.trim())
            .map(|(t, page, _)| {
                (
                    t.as_str(),
                    self.page_numbers.get(page).copied().unwrap_or(0),
                )
            })
    }
}

/// How much a QA rule's findings matter, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleLevel {
    Off,
    Info,
    Warning,
    Error,
}

impl RuleLevel {
    /// The severity its findings get; `None` when the rule is off.
    pub fn severity(self) -> Option<Severity> {
        match self {
            RuleLevel::Off => None,
            RuleLevel::Info => Some(Severity::Info),
            RuleLevel::Warning => Some(Severity::Warning),
            RuleLevel::Error => Some(Severity::Error),
        }
    }
}

/// Each rule's level (`[qa]`: a key per rule, its id with `_` for `-`),
/// and the subtitle rules' limits (`[qa.subtitles]`). A rule the table
/// does not name keeps its default level.
#[derive(Debug, Clone, PartialEq)]
pub struct QaLevels {
    /// By rule id (`too-long`); every rule of [`RULES`].
    levels: BTreeMap<&'static str, RuleLevel>,
    pub subtitles: SubtitleSettings,
}

impl Default for QaLevels {
    fn default() -> Self {
        QaLevels {
            levels: RULES.iter().map(|r| (r.id, r.default)).collect(),
            subtitles: SubtitleSettings::default(),
        }
    }
}

impl QaLevels {
    /// The level of a rule by its id (`too-long`).
    pub fn level(&self, rule: &str) -> RuleLevel {
        self.levels.get(rule).copied().unwrap_or(RuleLevel::Warning)
    }

    /// Sets the level of rule `id`; `false` when no rule has that id.
    pub fn set(&mut self, id: &str, level: RuleLevel) -> bool {
        match RULES.iter().find(|r| r.id == id) {
            Some(rule) => {
                self.levels.insert(rule.id, level);
                true
            }
            None => false,
        }
    }
}

/// The keys `[qa]` takes: each rule's, then `subtitles`.
static KEYS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|r| r.key)
        .chain(std::iter::once("subtitles"))
        .collect()
});

impl Serialize for QaLevels {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(RULES.len() + 1))?;
        for rule in &RULES {
            map.serialize_entry(rule.key, &self.level(rule.id))?;
        }
        map.serialize_entry("subtitles", &self.subtitles)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for QaLevels {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Levels;
        impl<'de> serde::de::Visitor<'de> for Levels {
            type Value = QaLevels;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of QA rule levels")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<QaLevels, A::Error> {
                let mut levels = QaLevels::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "subtitles" {
                        levels.subtitles = map.next_value()?;
                        continue;
                    }
                    let Some(rule) = RULES.iter().find(|r| r.key == key) else {
                        return Err(serde::de::Error::unknown_field(&key, &KEYS));
                    };
                    levels.levels.insert(rule.id, map.next_value()?);
                }
                Ok(levels)
            }
        }
        deserializer.deserialize_map(Levels)
    }
}

/// `[qa.subtitles]`: a profile, and any of its limits set otherwise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubtitleSettings {
    pub profile: SubtitleProfile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_length: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading_speed: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_gap_ms: Option<u64>,
}

impl SubtitleSettings {
    /// The profile's limits (the project's profile when it names one),
    /// with the ones set here instead.
    pub fn limits(&self, project: Option<SubtitleProfile>) -> SubtitleLimits {
        let base = project.unwrap_or(self.profile).limits();
        SubtitleLimits {
            line_length: self.line_length.unwrap_or(base.line_length),
            lines: self.lines.unwrap_or(base.lines),
            reading_speed: self.reading_speed.unwrap_or(base.reading_speed),
            min_duration_ms: self.min_duration_ms.unwrap_or(base.min_duration_ms),
            max_duration_ms: self.max_duration_ms.unwrap_or(base.max_duration_ms),
            min_gap_ms: self.min_gap_ms.unwrap_or(base.min_gap_ms),
        }
    }
}

/// Where the `spelling` rule finds Hunspell dictionaries (`[spell]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpellSettings {
    /// `.dic` files (each beside its `.aff`) or directories of them,
    /// looked in before the system's (`/usr/share/hunspell`, …).
    pub dictionaries: Vec<std::path::PathBuf>,
}

impl Settings for QaLevels {
    const TABLE: &'static str = "qa";
}

impl Settings for SpellSettings {
    const TABLE: &'static str = "spell";
}

impl super::BuiltIn for Qa {
    fn tables<V: super::settings::Tables>(tables: &mut V) {
        tables.table::<QaLevels>();
        tables.table::<SpellSettings>();
    }
}

#[cfg(test)]
mod tests;
