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
    /// How a finding names it: its source, quoted and shortened.
    pub what: String,
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
            what: format!("\"{}\"", short(source)),
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
    let mut out = Vec::new();
    for cue in crate::cues::cues(page) {
        let Some(translation) = cue.translation else {
            continue;
        };
        let measured = crate::cues::measure(translation, cue.duration_ms());
        for message in over(&measured, context.limits) {
            out.push((cue.node, format!("cue {}: {message}", cue.number)));
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
        Ok(Box::new(Work {
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

struct Work {
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
mod tests {
    use super::RuleLevel;
    use super::*;
    use quire_model::finding::Severity;
    use quire_model::ids::{NodeId, PageId};
    use quire_model::scene::{Node, Transform};

    /// The text rules' findings (no subtitle limits past the defaults, no
    /// speller).
    fn check_page(page: &Page, sources: Option<&Sources>, levels: &QaLevels) -> Vec<Finding> {
        let limits = SubtitleSettings::default().limits(None);
        let context = Context {
            sources,
            limits: &limits,
            speller: None,
        };
        check(page, &context, levels)
    }

    /// `[qa]` reads a key per rule and `subtitles`; a key no rule has is
    /// refused with the keys there are; a rule not named keeps its default.
    #[test]
    fn the_levels_are_a_map_of_the_rules_keys() {
        let levels: QaLevels =
            toml::from_str("too_long = \"error\"\n[subtitles]\nprofile = \"netflix\"\n").unwrap();
        assert_eq!(levels.level("too-long"), RuleLevel::Error);
        assert_eq!(
            levels.level("placeholders"),
            RuleLevel::Error,
            "its default"
        );
        assert_eq!(levels.level("numbers"), RuleLevel::Warning);
        let wrong = toml::from_str::<QaLevels>("too_lng = \"error\"\n").unwrap_err();
        assert!(wrong.to_string().contains("too_long"), "{wrong}");
        let back: toml::Table = toml::from_str(&toml::to_string(&levels).unwrap()).unwrap();
        let keys: Vec<&str> = back.keys().map(String::as_str).collect();
        assert_eq!(keys.len(), RULES.len() + 1, "{keys:?}");
        for rule in &RULES {
            assert_eq!(rule.key, rule.id.replace('-', "_"));
            assert!(keys.contains(&rule.key), "{keys:?}");
        }
    }

    fn node(text: &str, translation: Option<&str>, w: f64, h: f64) -> Node {
        Node {
            id: NodeId::new(),
            transform: Transform {
                x: 0.0,
                y: 0.0,
                width: w,
                height: h,
                rotation: None,
            },
            visible: true,
            kind: NodeKind::Text {
                text: Some(text.into()),
                translation: translation.map(Into::into),
                source_lang: None,
                style: None,
                state: None,
                origin: None,
                timing: None,
                region: None,
                found_by: None,
                source_edit: None,
                entry: None,
            },
        }
    }

    #[test]
    fn reports_each_kind_of_problem() {
        let page = Page {
            id: PageId::new(),
            name: "p".into(),
            width: None,
            height: None,
            nodes: vec![
                node("Hello", None, 0.0, 0.0),
                node("Hi {0}", Some("Salut"), 0.0, 0.0),
                node(
                    "Hi",
                    Some("Une traduction beaucoup trop longue"),
                    30.0,
                    20.0,
                ),
                node("Hi ", Some("Salut"), 0.0, 0.0),
                node("Fine {0}", Some("Bien {0}"), 500.0, 100.0),
            ],
            document: None,
        };
        let problems = check_page(&page, None, &QaLevels::default());
        let rules: Vec<&str> = problems.iter().map(|p| p.rule.as_str()).collect();
        assert_eq!(
            rules,
            [
                "missing-translation",
                "placeholders",
                "too-long",
                "whitespace"
            ],
            "{problems:#?}"
        );
        for (p, node) in problems.iter().zip(&page.nodes) {
            assert_eq!((p.page_id, p.node_id), (Some(page.id), Some(node.id)));
            // The ids travel as fields; the message is for people.
            assert!(!p.message.contains(&node.id.to_string()), "{}", p.message);
        }
        assert!(problems[1].message.contains("[{0}]"));
        assert_eq!(problems[1].severity, Severity::Error);
    }

    fn page_of(nodes: Vec<Node>) -> Page {
        Page {
            id: PageId::new(),
            name: "p".into(),
            width: None,
            height: None,
            nodes,
            document: None,
        }
    }

    fn rules(page: &Page, sources: Option<&Sources>) -> Vec<String> {
        check_page(page, sources, &QaLevels::default())
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn numbers_must_match_whatever_their_separators() {
        let bad = page_of(vec![node(
            "Wait 10 min for 1,000 pages",
            Some("Attendez 15 min pour 1 000 pages"),
            0.0,
            0.0,
        )]);
        assert_eq!(rules(&bad, None), ["numbers"]);
        let good = page_of(vec![node(
            "1,000 pages in 3.5 s",
            Some("1 000 pages en 3,5 s"),
            0.0,
            0.0,
        )]);
        assert!(
            rules(&good, None).is_empty(),
            "{:?}",
            check_page(&good, None, &QaLevels::default())
        );
        let wide = page_of(vec![node("第３話", Some("Episode 3"), 0.0, 0.0)]);
        assert!(rules(&wide, None).is_empty());
    }

    #[test]
    fn a_question_stays_a_question() {
        let bad = page_of(vec![
            node("Are you there?", Some("Tu es là."), 0.0, 0.0),
            node("本当に！", Some("Vraiment"), 0.0, 0.0),
            node("Well...", Some("Bon."), 0.0, 0.0),
        ]);
        assert_eq!(rules(&bad, None), ["end-punctuation"; 3]);
        let good = page_of(vec![
            node("本当？", Some("Vraiment ?"), 0.0, 0.0),
            node("「行くぞ！」", Some("« On y va ! »"), 0.0, 0.0),
            node("Well…", Some("Bon..."), 0.0, 0.0),
            node("Fine.", Some("Bien"), 0.0, 0.0),
        ]);
        assert!(
            rules(&good, None).is_empty(),
            "{:?}",
            check_page(&good, None, &QaLevels::default())
        );
    }

    #[test]
    fn the_same_source_translated_two_ways_is_inconsistent() {
        let one = page_of(vec![node("Yes", Some("Oui"), 0.0, 0.0)]);
        let two = page_of(vec![
            node("Yes", Some("Ouais"), 0.0, 0.0),
            node("No", Some("Non"), 0.0, 0.0),
        ]);
        let scene = Scene {
            project: Scene::new("p", "2026-12-01T00:00:00Z").project,
            pages: vec![
                std::sync::Arc::new(one.clone()),
                std::sync::Arc::new(two.clone()),
            ],
        };
        let sources = Sources::of(&scene);
        let found = check_page(&two, Some(&sources), &QaLevels::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "inconsistent");
        assert_eq!(found[0].node_id, Some(two.nodes[0].id));
        assert!(
            found[0].message.contains("\"Oui\" on page 1"),
            "{}",
            found[0].message
        );
        // The same translation everywhere is fine.
        assert!(
            check_page(
                &one,
                Some(&Sources::of(&Scene {
                    project: scene.project.clone(),
                    pages: vec![std::sync::Arc::new(one.clone())],
                })),
                &QaLevels::default()
            )
            .is_empty()
        );
    }

    #[test]
    fn a_glossary_term_must_be_translated_as_the_glossary_says() {
        let mut project = Scene::new("p", "2026-12-01T00:00:00Z").project;
        project.glossary = vec![quire_model::glossary::Term {
            source: "Shinigami".into(),
            target: "dieu de la mort".into(),
            note: None,
            case_sensitive: false,
        }];
        let page = page_of(vec![
            node("The shinigami laughs", Some("Le démon rit"), 0.0, 0.0),
            node("A Shinigami!", Some("Un Dieu de la mort !"), 0.0, 0.0),
            node("Shinigamis", Some("Des démons"), 0.0, 0.0),
        ]);
        let scene = Scene {
            project,
            pages: vec![std::sync::Arc::new(page.clone())],
        };
        let found = check_page(&page, Some(&Sources::of(&scene)), &QaLevels::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "terminology");
        assert_eq!(found[0].node_id, Some(page.nodes[0].id));
        assert!(
            found[0].message.contains("\"dieu de la mort\""),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn each_rule_is_off_or_at_the_severity_configured() {
        let page = page_of(vec![
            node("Hello", None, 0.0, 0.0),
            node("Hi {0} 5?", Some("Salut 6"), 0.0, 0.0),
        ]);
        let mut levels = QaLevels::default();
        assert!(levels.set("missing-translation", RuleLevel::Off));
        assert!(levels.set("numbers", RuleLevel::Error));
        assert!(levels.set("end-punctuation", RuleLevel::Info));
        assert!(!levels.set("no-such-rule", RuleLevel::Info));
        let got: Vec<(String, Severity)> = check_page(&page, None, &levels)
            .into_iter()
            .map(|f| (f.rule, f.severity))
            .collect();
        assert_eq!(
            got,
            [
                ("placeholders".to_owned(), Severity::Error),
                ("numbers".to_owned(), Severity::Error),
                ("end-punctuation".to_owned(), Severity::Info),
            ]
        );
    }

    #[test]
    fn capacity_grows_with_the_box() {
        assert_eq!(box_capacity(0.0, 100.0, 16.0), 0);
        assert!(box_capacity(200.0, 100.0, 16.0) > box_capacity(100.0, 100.0, 16.0));
    }
}
