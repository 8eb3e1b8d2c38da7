//! `llm-translate`: one chat-completions request per page, carrying all its
//! text nodes, to an OpenAI-compatible endpoint (`[providers.<id>]`).
//!
//! A provider with `images = true` also gets the page's picture (a JPEG,
//! its long side at most 1568 px) as an `image_url` content part.
//!
//! The model is asked for a JSON object `{"translations": [{"id", "translation"}]}`
//! with exactly one entry per segment; the answer is validated before
//! anything is written. An answer that leaves segments out is applied for
//! the ones it has, and each one left out is a warning naming it (a re-run
//! sends only those: the others are translated by then). 429 and 5xx answers, timeouts and connection
//! errors are retried with exponential backoff (honouring `Retry-After`).
//! The API key is sent in the `Authorization` header and nowhere else: it
//! is never logged and never part of an error message.

use std::collections::HashMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Engine, EngineInfo, Fill, Needs, PageInput, PageOutcome, PageWork, Pictures, Step};
use crate::glossary::Matcher;
use crate::settings::{ApiKey, Provider};
use quire_model::finding::{Finding, Severity};
use quire_model::scene::Page;

use super::settings::{Context, Invalid, Settings};

/// The rules every request carries, after the caller's own system prompt.
const FORMAT_RULES: &str = "You translate the text segments of one page. \
Answer with a JSON object {\"translations\": [{\"id\": \"<segment id>\", \"translation\": \"<text>\"}]} \
holding exactly one entry for every segment, with the same ids. Keep placeholders such as {0}, \
{{name}}, %s, %1$s, <b>, </b> and the two characters \\n exactly as they are. A segment's line \
breaks only show where its text was fitted to its space: do not copy them; break lines only \
where your translation needs it. Segments under `context` (the neighbouring pages) are there \
to be understood, not translated. Do not add notes.";

/// Added to the rules when the request carries the page's picture.
const IMAGE_RULE: &str = "The image is the page the segments were read from: use it to \
see who speaks to whom, what they point at, and how the scene reads, not to add segments.";

/// A page's picture is sent with its long side at most this (pixels);
/// providers scale larger images down anyway.
const IMAGE_LONG_SIDE: u32 = 1568;

/// Added to the rules when the request carries glossary terms.
const GLOSSARY_RULE: &str = "Translate every glossary term that occurs in a segment \
as its glossary entry says.";

/// The `llm-translate` engine.
pub struct LlmTranslate {
    info: EngineInfo,
}

impl Default for LlmTranslate {
    fn default() -> Self {
        LlmTranslate {
            info: EngineInfo::built_in(
                "llm-translate",
                "translate",
                "Translates each page's text nodes with an OpenAI-compatible chat-completions provider",
            ),
        }
    }
}

impl Engine for LlmTranslate {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn needs(&self) -> Needs {
        Needs {
            scene: true,
            provider: true,
            // Sent only to a provider whose model reads images.
            pictures: Pictures::Image,
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        let (provider_id, provider) = step
            .provider
            .ok_or("no translation provider is configured")?;
        Ok(Box::new(Work {
            fill: Fill::new(&step),
            http: step.http.ok_or("no HTTP client for the provider")?.clone(),
            gate: step
                .backends
                .gates
                .get(&format!("provider/{provider_id}"), provider.max_in_flight),
            provider_id: provider_id.to_owned(),
            provider: provider.clone(),
            target_language: step
                .target_language
                .ok_or("llm-translate needs targetLanguage")?
                .to_owned(),
            system_prompt: step.system_prompt.map(str::to_owned),
            glossary: step.scene.map(|s| Matcher::new(&s.project.glossary)),
            source_language: step.scene.and_then(|s| s.project.source_language.clone()),
            pages: step
                .scene
                .map(|s| {
                    s.pages
                        .iter()
                        .filter_map(|p| Some((p.id, ContextPage::of(p)?)))
                        .collect()
                })
                .unwrap_or_default(),
            context_pages: step.settings::<LlmSettings>().context_pages as usize,
            max_pixels: step.config.max_image_pixels,
        }))
    }
}

/// One step of `llm-translate`: the provider and what every request says.
struct Work {
    http: reqwest::Client,
    /// At most `max_in_flight` requests to the provider, across every
    /// job of the process.
    gate: std::sync::Arc<super::retry::Gate>,
    provider_id: String,
    provider: Provider,
    target_language: String,
    system_prompt: Option<String>,
    fill: Fill,
    /// The project's glossary, built once per step.
    glossary: Option<Matcher>,
    /// The project's source language.
    source_language: Option<String>,
    /// Every page's text as the step began, in page order, for the
    /// neighbours of the page being translated (`[llm] context_pages`).
    pages: Vec<(quire_model::ids::PageId, ContextPage)>,
    context_pages: usize,
    /// The largest page image decoded to be sent.
    max_pixels: u64,
}

/// A neighbouring page's text, sent as context.
#[derive(Debug, Clone, Serialize)]
pub struct ContextPage {
    pub page: String,
    pub segments: Vec<ContextSegment>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContextSegment {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation: Option<String>,
}

impl ContextPage {
    /// A page's text nodes with source text; `None` for a page with none.
    fn of(page: &Page) -> Option<ContextPage> {
        let segments: Vec<ContextSegment> = page
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                quire_model::scene::NodeKind::Text {
                    text: Some(text),
                    translation,
                    ..
                } if !text.trim().is_empty() => Some(ContextSegment {
                    text: text.clone(),
                    translation: translation.clone().filter(|t| !t.trim().is_empty()),
                }),
                _ => None,
            })
            .collect();
        (!segments.is_empty()).then(|| ContextPage {
            page: page.name.clone(),
            segments,
        })
    }
}

impl Work {
    /// The pages within `context_pages` of `page`, before and after it.
    fn context(&self, page: quire_model::ids::PageId) -> Vec<ContextPage> {
        let Some(at) = self.pages.iter().position(|(id, _)| *id == page) else {
            return Vec::new();
        };
        let from = at.saturating_sub(self.context_pages);
        let to = (at + self.context_pages + 1).min(self.pages.len());
        (from..to)
            .filter(|i| *i != at)
            .map(|i| self.pages[i].1.clone())
            .collect()
    }
}

impl PageWork for Work {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        Box::pin(async move {
            let page = input.page;
            let segments = segments(page, &self.fill);
            if segments.is_empty() {
                return Ok(PageOutcome::default());
            }
            let glossary = self
                .glossary
                .as_ref()
                .map(|m| page_terms(m, &segments))
                .unwrap_or_default();
            let mut warnings = Vec::new();
            let image = match input.image.filter(|_| self.provider.images) {
                Some(bytes) => {
                    let (bytes, max_pixels) = (bytes.to_vec(), self.max_pixels);
                    let made = tokio::task::spawn_blocking(move || picture(&bytes, max_pixels))
                        .await
                        .map_err(|e| format!("the page image could not be prepared: {e}"))?;
                    match made {
                        Ok(url) => Some(url),
                        Err(why) => {
                            let finding = Finding::new(
                                "page-image",
                                Severity::Warning,
                                format!("page `{}` went without its picture: {why}", page.name),
                            );
                            warnings.push(finding.on(page.id, None));
                            None
                        }
                    }
                }
                None => None,
            };
            let request = Request {
                provider_id: &self.provider_id,
                provider: &self.provider,
                target_language: &self.target_language,
                system_prompt: self.system_prompt.as_deref(),
                source_language: self.source_language.as_deref(),
                segments: &segments,
                glossary: &glossary,
                context: &self.context(page.id),
                image: image.as_deref(),
            };
            let permit = self
                .gate
                .permits
                .acquire()
                .await
                .map_err(|_| "the provider's gate is closed".to_owned())?;
            let mut translated = translate(&self.http, &request).await?;
            drop(permit);
            warnings.extend(left_out(page, &segments, &translated));
            let ops = page
                .nodes
                .iter()
                .filter_map(|n| {
                    let text = translated.remove(&n.id.to_string())?;
                    Some(self.fill.translation_op(page, n, text))
                })
                .collect();
            Ok(PageOutcome {
                ops,
                warnings,
                ..PageOutcome::default()
            })
        })
    }
}

/// A page image as a `data:` URL of a JPEG, its long side at most
/// [`IMAGE_LONG_SIDE`].
fn picture(bytes: &[u8], max_pixels: u64) -> Result<String, String> {
    use base64::Engine as _;
    let decoded = quire_formats::images::decode(bytes, max_pixels).map_err(|e| e.to_string())?;
    let (w, h) = (decoded.width(), decoded.height());
    let scale = f64::from(IMAGE_LONG_SIDE) / f64::from(w.max(h));
    let rgb = if scale < 1.0 {
        let size = |v: u32| ((f64::from(v) * scale).round() as u32).max(1);
        image::imageops::resize(
            &decoded.to_rgb8(),
            size(w),
            size(h),
            image::imageops::FilterType::Triangle,
        )
    } else {
        decoded.to_rgb8()
    };
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 80)
        .encode_image(&rgb)
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "data:image/jpeg;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&jpeg)
    ))
}

/// One text node to translate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Segment {
    pub id: String,
    pub text: String,
}

/// The text nodes of `page` that have source text and a translation
/// the step may write (`Fill::writable`), as segments to send.
fn segments(page: &Page, fill: &Fill) -> Vec<Segment> {
    fill.writable(page)
        .map(|(node, text)| Segment {
            id: node.id.to_string(),
            text: text.to_owned(),
        })
        .collect()
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    translations: Vec<Translated>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Translated {
    id: String,
    translation: String,
}

/// Checks the model's answer against the segments sent; returns the
/// translation of each segment id it answered. Segments it left out (or
/// answered blank) are simply absent: the caller names them. An answer
/// that is not the JSON asked for, names a segment that was not sent,
/// answers one twice or answers none is refused whole: its ids cannot be
/// trusted to line up.
pub fn parse_answer(content: &str, sent: &[Segment]) -> Result<HashMap<String, String>, String> {
    let answer: Answer = serde_json::from_str(content.trim())
        .map_err(|e| format!("the model's answer is not the expected JSON: {e}"))?;
    let mut out = HashMap::with_capacity(sent.len());
    for t in answer.translations {
        if !sent.iter().any(|s| s.id == t.id) {
            return Err(format!(
                "the model answered an unknown segment id `{}`",
                t.id
            ));
        }
        if out.contains_key(&t.id) {
            return Err(format!("the model answered segment `{}` twice", t.id));
        }
        if !t.translation.trim().is_empty() {
            out.insert(t.id, t.translation);
        }
    }
    if out.is_empty() {
        return Err(format!(
            "the model answered no translation for the {} segment{} sent",
            sent.len(),
            if sent.len() == 1 { "" } else { "s" }
        ));
    }
    Ok(out)
}

/// A warning for each segment sent that the answer left out, naming it
/// by its node and the start of its text.
fn left_out(page: &Page, sent: &[Segment], answered: &HashMap<String, String>) -> Vec<Finding> {
    let missing: Vec<&Segment> = sent
        .iter()
        .filter(|s| !answered.contains_key(&s.id))
        .collect();
    missing
        .iter()
        .map(|s| {
            let node = page.nodes.iter().find(|n| n.id.to_string() == s.id);
            Finding::new(
                "llm-missing",
                Severity::Warning,
                format!(
                    "page `{}`: the model left out segment `{}` (\"{}\"); {} of {} translated, run the step again for the rest",
                    page.name,
                    s.id,
                    clip_chars(&s.text, 40),
                    sent.len() - missing.len(),
                    sent.len()
                ),
            )
            .on(page.id, node.map(|n| n.id))
        })
        .collect()
}

/// The first `max` characters of `text`, with `…` when cut.
fn clip_chars(text: &str, max: usize) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// A glossary term as a request carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GlossaryEntry {
    pub source: String,
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The glossary terms that occur in `segments`, each once.
pub fn page_terms(glossary: &Matcher, segments: &[Segment]) -> Vec<GlossaryEntry> {
    if glossary.is_empty() {
        return Vec::new();
    }
    let mut seen = std::collections::HashSet::new();
    segments
        .iter()
        .flat_map(|s| glossary.found(&s.text))
        .filter(|t| seen.insert(t.source.clone()))
        .map(|t| GlossaryEntry {
            source: t.source.clone(),
            target: t.target.clone(),
            note: t.note.clone(),
        })
        .collect()
}

/// What to ask for.
pub struct Request<'a> {
    pub provider_id: &'a str,
    pub provider: &'a Provider,
    pub target_language: &'a str,
    pub system_prompt: Option<&'a str>,
    /// BCP 47, when the project names it.
    pub source_language: Option<&'a str>,
    pub segments: &'a [Segment],
    /// The glossary terms found in the segments.
    pub glossary: &'a [GlossaryEntry],
    /// The neighbouring pages' text, to be understood, not translated.
    pub context: &'a [ContextPage],
    /// The page's picture, a `data:` URL, for a provider that reads
    /// images.
    pub image: Option<&'a str>,
}

/// Sends one page's segments; returns their translations by segment id.
pub async fn translate(
    http: &reqwest::Client,
    req: &Request<'_>,
) -> Result<HashMap<String, String>, String> {
    let url = format!(
        "{}/chat/completions",
        req.provider.base_url.trim_end_matches('/')
    );
    let mut rules = FORMAT_RULES.to_owned();
    if !req.glossary.is_empty() {
        rules = format!("{rules} {GLOSSARY_RULE}");
    }
    if req.image.is_some() {
        rules = format!("{rules} {IMAGE_RULE}");
    }
    let system = match req.system_prompt {
        Some(prompt) if !prompt.trim().is_empty() => format!("{prompt}\n\n{rules}"),
        _ => rules,
    };
    let mut user = json!({
        "targetLanguage": req.target_language,
        "segments": req.segments,
    });
    if let Some(source) = req.source_language {
        user["sourceLanguage"] = json!(source);
    }
    if !req.glossary.is_empty() {
        user["glossary"] = json!(req.glossary);
    }
    if !req.context.is_empty() {
        user["context"] = json!(req.context);
    }
    // With a picture, the user message is the OpenAI content-part list:
    // the same text, then the image.
    let content = match req.image {
        None => json!(user.to_string()),
        Some(url) => json!([
            { "type": "text", "text": user.to_string() },
            { "type": "image_url", "image_url": { "url": url } },
        ]),
    };
    let body = json!({
        "model": req.provider.model,
        "messages": [
            { "role": "system", "content": system },
            { "role": "user", "content": content },
        ],
        "response_format": { "type": "json_object" },
        "temperature": 0,
    });
    let who = format!("provider `{}`", req.provider_id);
    let timeout = Duration::from_secs(req.provider.timeout_secs);
    let mut attempt = 0u32;
    loop {
        let mut call = http.post(&url).timeout(timeout).json(&body);
        if let ApiKey::Key(key) = &req.provider.api_key {
            call = call.bearer_auth(key);
        }
        let retry_in = match call.send().await {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    let completion: Completion = response
                        .json()
                        .await
                        .map_err(|e| format!("{who} answered malformed JSON: {}", describe(e)))?;
                    let content = completion
                        .choices
                        .into_iter()
                        .next()
                        .and_then(|c| c.message.content)
                        .ok_or_else(|| format!("{who} answered no message"))?;
                    return parse_answer(&content, req.segments).map_err(|e| format!("{who}: {e}"));
                }
                if status.as_u16() != 429 && !status.is_server_error() {
                    let text = response.text().await.unwrap_or_default();
                    return Err(format!(
                        "{who} refused the request: HTTP {status}: {}",
                        clip(&text)
                    ));
                }
                let after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .cloned();
                (format!("HTTP {status}"), after)
            }
            Err(e) if e.is_timeout() => (format!("no answer within {}s", timeout.as_secs()), None),
            Err(e) => (format!("cannot reach it: {}", describe(e)), None),
        };
        let (why, after) = retry_in;
        if attempt >= req.provider.max_retries {
            let tries = attempt + 1;
            return Err(format!(
                "{who} failed after {tries} attempt{}: {why}",
                if tries == 1 { "" } else { "s" }
            ));
        }
        tracing::debug!("{who}: {why}; retrying");
        tokio::time::sleep(super::retry::wait(attempt, after.as_ref())).await;
        attempt += 1;
    }
}

/// reqwest errors print the URL; keep messages short and free of queries.
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

fn clip(text: &str) -> String {
    let mut s: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        s.push('…');
    }
    s
}

/// The `llm-translate` engine's settings (`[llm]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// How many pages before and after the one being translated are sent
    /// with it as context (their source, and their translation when they
    /// have one); 0 sends none.
    pub context_pages: u32,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings { context_pages: 1 }
    }
}

impl Settings for LlmSettings {
    const TABLE: &'static str = "llm";

    fn check(&self, _context: &Context) -> Result<(), Invalid> {
        if self.context_pages > 5 {
            return Err(Invalid::new(
                "context_pages",
                format!(
                    "is {}; it must be from 0 to 5 (pages on each side)",
                    self.context_pages
                ),
            ));
        }
        Ok(())
    }
}

impl super::BuiltIn for LlmTranslate {
    fn tables<V: super::settings::Tables>(tables: &mut V) {
        tables.table::<LlmSettings>();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent() -> Vec<Segment> {
        vec![
            Segment {
                id: "a".into(),
                text: "Hello".into(),
            },
            Segment {
                id: "b".into(),
                text: "World".into(),
            },
        ]
    }

    #[test]
    fn a_complete_answer_is_accepted() {
        let got = parse_answer(
            r#"{"translations":[{"id":"b","translation":"Monde"},{"id":"a","translation":"Bonjour"}]}"#,
            &sent(),
        )
        .unwrap();
        assert_eq!(got["a"], "Bonjour");
        assert_eq!(got["b"], "Monde");
    }

    #[test]
    fn an_answer_that_leaves_segments_out_keeps_what_it_has() {
        let got = parse_answer(
            r#"{"translations":[{"id":"b","translation":"Monde"},{"id":"a","translation":""}]}"#,
            &sent(),
        )
        .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got["b"], "Monde");
        let page = Page {
            id: quire_model::ids::PageId::new(),
            name: "p1".into(),
            width: None,
            height: None,
            nodes: Vec::new(),
            document: None,
        };
        let warnings = left_out(&page, &sent(), &got);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let w = &warnings[0];
        assert_eq!(
            (w.rule.as_str(), w.severity),
            ("llm-missing", Severity::Warning)
        );
        assert!(
            w.message
                .contains("left out segment `a` (\"Hello\"); 1 of 2 translated"),
            "{}",
            w.message
        );
    }

    #[test]
    fn wrong_answers_are_refused_precisely() {
        let cases = [
            ("not json", "not the expected JSON"),
            (
                r#"{"translations":[]}"#,
                "no translation for the 2 segments",
            ),
            (
                r#"{"translations":[{"id":"a","translation":"  "}]}"#,
                "no translation for the 2 segments",
            ),
            (
                r#"{"translations":[{"id":"a","translation":"x"},{"id":"z","translation":"y"}]}"#,
                "unknown segment id `z`",
            ),
            (
                r#"{"translations":[{"id":"a","translation":"x"},{"id":"a","translation":"y"}]}"#,
                "segment `a` twice",
            ),
        ];
        for (content, expected) in cases {
            let err = parse_answer(content, &sent()).unwrap_err();
            assert!(err.contains(expected), "{content}: {err}");
        }
    }
}
