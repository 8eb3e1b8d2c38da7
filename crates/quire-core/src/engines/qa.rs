//! `qa`: checks each text node and reports every problem as one finding
//! naming its page and node: a missing translation, a placeholder set
//! that differs, a translation too long for its box, leading or trailing
//! whitespace that differs, numbers that differ, end punctuation (`?`,
//! `!`, `…`) that differs, and the same source translated differently
//! elsewhere in the project (against a [`Sources`] index built once per
//! job step, so a page costs its own nodes, not the project's); a
//! subtitle's lines, reading speed, duration and gaps ([`crate::cues`]);
//! words the target language's dictionary does not know
//! ([`crate::spelling`]).

use std::collections::HashMap;

use super::text::{Piece, pieces, placeholders};
use super::{Engine, EngineInfo, Needs, PageInput, PageOutcome, PageWork, Step, ready};
use crate::events::Finding;
use crate::glossary::{Matcher, rendered};
use crate::ids::{NodeId, PageId};
use crate::scene::{NodeKind, Page, Scene};
use crate::spelling::Speller;
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
        let (speller, no_speller) = if levels.spelling == RuleLevel::Off {
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
        let page = input.page;
        let mut warnings = check_page(page, self.sources.as_ref(), &self.levels);
        warnings.extend(cue_problems(page, &self.limits, &self.levels));
        if let Some(speller) = &self.speller {
            warnings.extend(spelling(page, speller, &self.levels));
        }
        // One node's findings together, in the page's order.
        let order: HashMap<NodeId, usize> = page
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id, i))
            .collect();
        warnings.sort_by_key(|w| w.node_id.and_then(|n| order.get(&n).copied()));
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

/// The numbers in `text` outside its placeholders (`{0}` is the
/// placeholder rule's), digits only (`1,000`, `1 000` and `1000` are one
/// number; full-width digits count), sorted.
fn numbers(text: &str) -> Vec<String> {
    let plain: String = pieces(text)
        .into_iter()
        .map(|p| match p {
            Piece::Plain(s) => s,
            Piece::Placeholder(_) => " ",
        })
        .collect();
    let text = plain.as_str();
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let digit = match c {
            '0'..='9' => Some(c),
            '０'..='９' => char::from_u32(u32::from(c) - 0xFF10 + u32::from('0')),
            _ => None,
        };
        match digit {
            Some(d) => current.push(d),
            // A separator inside a number (`1,000`, `3.5`, `1 000`).
            None if !current.is_empty()
                && matches!(c, ',' | '.' | ' ' | '\u{202F}' | '\u{A0}')
                && chars.peek().is_some_and(char::is_ascii_digit) => {}
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.sort();
    out
}

/// The kind of end punctuation a text closes with: `?`, `!` or `…`
/// (fullwidth and `...` forms counted as those), else none.
fn end_mark(text: &str) -> Option<char> {
    let text = text.trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '」' | '』' | '”' | '’' | ')' | '）' | '»')
    });
    if text.ends_with("...") || text.ends_with('…') || text.ends_with('⋯') {
        return Some('…');
    }
    match text.chars().last()? {
        '?' | '？' | '¿' => Some('?'),
        '!' | '！' | '¡' => Some('!'),
        _ => None,
    }
}

/// Font size assumed when a node has none.
const DEFAULT_FONT_SIZE: f64 = 16.0;
/// Average glyph width as a fraction of the font size; line height 1.2.
const GLYPH_WIDTH: f64 = 0.55;
const LINE_HEIGHT: f64 = 1.2;

/// How many characters fit in a `width × height` box at `font_size`.
pub fn box_capacity(width: f64, height: f64, font_size: f64) -> usize {
    let per_line = (width / (font_size * GLYPH_WIDTH)).floor().max(0.0);
    let lines = (height / (font_size * LINE_HEIGHT)).floor().max(0.0);
    (per_line * lines) as usize
}

fn short(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    s
}

fn edges(s: &str) -> (&str, &str) {
    let start = &s[..s.len() - s.trim_start().len()];
    let end = &s[s.trim_end().len()..];
    (start, end)
}

/// The problems of every text node of `page`, one finding each;
/// `sources` (the project's, when given) finds inconsistencies.
pub fn check_page(page: &Page, sources: Option<&Sources>, levels: &QaLevels) -> Vec<Finding> {
    let mut problems = Vec::new();
    for node in &page.nodes {
        let NodeKind::Text {
            text,
            translation,
            style,
            ..
        } = &node.kind
        else {
            continue;
        };
        let Some(text) = text.as_deref().filter(|t| !t.trim().is_empty()) else {
            continue;
        };
        let what = format!("\"{}\"", short(text));
        let mut found = |rule: &str, message: String| {
            let Some(severity) = levels.level(rule).severity() else {
                return;
            };
            problems.push(Finding::new(rule, severity, message).on(page.id, Some(node.id)));
        };
        let Some(translation) = translation.as_deref().filter(|t| !t.trim().is_empty()) else {
            found(
                "missing-translation",
                format!("missing translation: {what}"),
            );
            continue;
        };
        let (want, got) = (placeholders(text), placeholders(translation));
        if want != got {
            found(
                "placeholders",
                format!(
                    "placeholders differ: {what} has [{}] but the translation has [{}]",
                    want.join(" "),
                    got.join(" ")
                ),
            );
        }
        let t = &node.transform;
        if t.width > 0.0 && t.height > 0.0 {
            let size = style
                .as_ref()
                .and_then(|s| s.font_size)
                .unwrap_or(DEFAULT_FONT_SIZE);
            let capacity = box_capacity(t.width, t.height, size);
            let length = translation.chars().count();
            if length > capacity {
                found(
                    "too-long",
                    format!(
                        "translation too long: {what}: {length} characters, the {}×{} box holds about {capacity} at font size {size}",
                        t.width, t.height
                    ),
                );
            }
        }
        if edges(text) != edges(translation) {
            found(
                "whitespace",
                format!("leading or trailing whitespace differs: {what}"),
            );
        }
        let (want, got) = (numbers(text), numbers(translation));
        if want != got {
            found(
                "numbers",
                format!(
                    "numbers differ: {what} has [{}] but the translation has [{}]",
                    want.join(" "),
                    got.join(" ")
                ),
            );
        }
        let (want, got) = (end_mark(text), end_mark(translation));
        if want.is_some() && want != got {
            let mark =
                |m: Option<char>| m.map_or_else(|| "no mark".to_owned(), |c| format!("`{c}`"));
            found(
                "end-punctuation",
                format!(
                    "end punctuation differs: {what} ends with {} but the translation with {}",
                    mark(want),
                    mark(got)
                ),
            );
        }
        if let Some((other, page_number)) =
            sources.and_then(|s| s.other(text, translation, node.id))
        {
            found(
                "inconsistent",
                format!(
                    "inconsistent: {what} is translated \"{}\" here and \"{}\" on page {page_number}",
                    short(translation.trim()),
                    short(other)
                ),
            );
        }
        for term in sources.map_or_else(Vec::new, |s| s.glossary.found(text)) {
            if !rendered(term, translation) {
                found(
                    "terminology",
                    format!(
                        "terminology: {what} has the glossary term \"{}\", to be translated \"{}\", but the translation does not have it",
                        term.source, term.target
                    ),
                );
            }
        }
    }
    problems
}

/// The subtitle rules' findings on `page`'s cues.
pub fn cue_problems(page: &Page, limits: &SubtitleLimits, levels: &QaLevels) -> Vec<Finding> {
    crate::cues::problems(page, limits)
        .into_iter()
        .filter_map(|(rule, node, message)| {
            let severity = levels.level(rule).severity()?;
            Some(Finding::new(rule, severity, message).on(page.id, Some(node)))
        })
        .collect()
}

/// One finding per translation with words the speller does not know,
/// naming them and their suggestions.
pub fn spelling(page: &Page, speller: &Speller, levels: &QaLevels) -> Vec<Finding> {
    let Some(severity) = levels.level("spelling").severity() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for node in &page.nodes {
        let NodeKind::Text {
            translation: Some(translation),
            ..
        } = &node.kind
        else {
            continue;
        };
        let wrong = speller.check(translation);
        if wrong.is_empty() {
            continue;
        }
        let said: Vec<String> = wrong
            .iter()
            .map(|m| match m.suggestions.as_slice() {
                [] => format!("\"{}\" (no suggestion)", m.word),
                s => format!("\"{}\" (maybe {})", m.word, s.join(", ")),
            })
            .collect();
        out.push(
            Finding::new(
                "spelling",
                severity,
                format!("spelling: {}", said.join("; ")),
            )
            .on(page.id, Some(node.id)),
        );
    }
    out
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

/// Each rule of the `qa` engine, on (at a severity) or off (`[qa]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QaLevels {
    pub missing_translation: RuleLevel,
    pub placeholders: RuleLevel,
    pub too_long: RuleLevel,
    pub whitespace: RuleLevel,
    pub numbers: RuleLevel,
    pub end_punctuation: RuleLevel,
    pub inconsistent: RuleLevel,
    pub terminology: RuleLevel,
    /// The subtitle rules, on cues (text with timing).
    pub line_length: RuleLevel,
    pub lines: RuleLevel,
    pub reading_speed: RuleLevel,
    pub duration: RuleLevel,
    pub gap: RuleLevel,
    pub overlap: RuleLevel,
    pub spelling: RuleLevel,
    /// The subtitle rules' limits (`[qa.subtitles]`).
    pub subtitles: SubtitleSettings,
}

impl Default for QaLevels {
    fn default() -> Self {
        QaLevels {
            missing_translation: RuleLevel::Warning,
            placeholders: RuleLevel::Error,
            too_long: RuleLevel::Warning,
            whitespace: RuleLevel::Warning,
            numbers: RuleLevel::Warning,
            end_punctuation: RuleLevel::Warning,
            inconsistent: RuleLevel::Warning,
            terminology: RuleLevel::Warning,
            line_length: RuleLevel::Warning,
            lines: RuleLevel::Warning,
            reading_speed: RuleLevel::Warning,
            duration: RuleLevel::Warning,
            gap: RuleLevel::Warning,
            overlap: RuleLevel::Warning,
            spelling: RuleLevel::Warning,
            subtitles: SubtitleSettings::default(),
        }
    }
}

impl QaLevels {
    /// The level of a rule by its finding name (`too-long`).
    pub fn level(&self, rule: &str) -> RuleLevel {
        match rule {
            "missing-translation" => self.missing_translation,
            "placeholders" => self.placeholders,
            "too-long" => self.too_long,
            "whitespace" => self.whitespace,
            "numbers" => self.numbers,
            "end-punctuation" => self.end_punctuation,
            "inconsistent" => self.inconsistent,
            "terminology" => self.terminology,
            "line-length" => self.line_length,
            "lines" => self.lines,
            "reading-speed" => self.reading_speed,
            "duration" => self.duration,
            "gap" => self.gap,
            "overlap" => self.overlap,
            "spelling" => self.spelling,
            _ => RuleLevel::Warning,
        }
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
    use crate::events::Severity;
    use crate::ids::{NodeId, PageId};
    use crate::scene::{Node, Transform};

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
        project.glossary = vec![crate::glossary::Term {
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
        let levels = QaLevels {
            missing_translation: RuleLevel::Off,
            numbers: RuleLevel::Error,
            end_punctuation: RuleLevel::Info,
            ..QaLevels::default()
        };
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
