//! `ocr`: reads the source text of text nodes from the page's pixels, with
//! the system's Tesseract (the `tesseract` backend) or PP-OCR's models run
//! by the `quire-ppocr` helper process (the `onnx` backend,
//! [`super::ppocr`]: the lines of each cut found by the detector, each
//! read by the recogniser, columns turned).
//!
//! The nodes read are those with no source text (with `overwrite: all`,
//! also those with text but no translation); a final node is never read.
//! Each node's box (within its region) is cut from the page, the pixels
//! outside its region whitened, scaled so its letters are about
//! [`LETTER_HEIGHT`] pixels tall, and the cuts of one page are stacked into
//! one image, so Tesseract starts once per page and language, not once per
//! balloon. Each word goes back to the cut its centre lies in. Lines are
//! joined as the language wants: a space in scripts that space words, none
//! in Chinese and Japanese, and a word broken by a hyphen at a line's end
//! joined again. Vertical Japanese and Chinese regions (taller than wide)
//! are read with Tesseract's `_vert` data.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use image::{GrayImage, Luma};
use tokio::io::AsyncWriteExt;

use super::detect::{bounding, no_image};
use super::tesseract::{self, Word};
use super::{Engine, EngineInfo, Needs, PageInput, PageOutcome, PageWork, Pictures, Step, ready};
use quire_model::finding::Finding;
use quire_model::finding::Severity;
use quire_model::ids::NodeId;
use quire_model::op::{Basis, KindPatch, NodePatch, Op};
use quire_model::scene::{Node, NodeKind, Page, Point, TextState};
use quire_model::workflow::Overwrite;

use super::settings::ModelRef;
use serde::{Deserialize, Serialize};

use super::settings::{Context, Invalid, Settings};

mod cuts;
mod languages;
use cuts::{Cut, Target, batches, cut_all, stack};
use languages::{columns_data, tesseract_language};

/// The letter height, in pixels, cuts are scaled to (Tesseract reads
/// letters of 20 to 40 pixels best).
pub const LETTER_HEIGHT: f64 = 32.0;

/// The most TSV read from Tesseract for one stacked image (a full page
/// of words is well under a megabyte).
const MAX_TSV_BYTES: u64 = 16 << 20;

/// The most pixels one cut may have once scaled, and one stacked image:
/// a huge box on a huge page is read at a smaller scale, and many cuts
/// in several stacks, rather than allocating gigabytes.
const MAX_CUT_PIXELS: f64 = 16e6;
const MAX_STACK_PIXELS: u64 = 48_000_000;

/// White between two cuts of the stacked image.
const GAP: u32 = 48;

/// The `ocr` engine.
pub struct Ocr {
    info: EngineInfo,
}

impl Default for Ocr {
    fn default() -> Self {
        Ocr {
            info: EngineInfo::built_in(
                "ocr",
                "ocr",
                "Reads the source text of text nodes that have none (all untranslated ones with overwrite: all) from their region with the system's Tesseract or PP-OCR's models (ocr.backend), lines joined as the language wants",
            ),
        }
    }
}

impl Engine for Ocr {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn needs(&self) -> Needs {
        Needs {
            scene: true,
            pictures: Pictures::Image,
            parallel: true,
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        let language = step
            .scene
            .and_then(|s| s.project.source_language.clone())
            .unwrap_or_else(|| "en".to_owned());
        let settings = OcrSettings::clone(&step.settings());
        let (models, columns) = match settings.backend {
            OcrBackend::Tesseract => {
                // Refused now rather than on every page.
                tesseract_language(&language, false)?;
                (None, columns_data(&settings.tesseract))
            }
            OcrBackend::Onnx => (Some(Arc::new(Models::load(&settings, &step)?)), None),
        };
        Ok(Box::new(Work {
            settings,
            models,
            columns,
            language,
            overwrite: step.overwrite,
            nodes: step.nodes.map(<[_]>::to_vec),
            max_pixels: step.config.max_image_pixels,
        }))
    }
}

/// The `onnx` backend's models, loaded once per job in helper processes
/// (their plans, made for each input size, are kept with them there), or
/// on backends.
struct Models {
    models: super::models::PageModels,
}

impl Models {
    fn load(settings: &OcrSettings, step: &Step<'_>) -> Result<Models, String> {
        let model = |p: &Option<ModelRef>, key: &str| {
            p.clone().ok_or_else(|| {
                format!("ocr.backend = \"onnx\" needs {key} (a PP-OCR model file, or {{ backend = \"NAME\" }})")
            })
        };
        let detector = model(&settings.detector, "ocr.detector")?;
        let recognizer = model(&settings.model, "ocr.model")?;
        let deadline = super::ppocr::Deadline {
            within: std::time::Duration::from_secs(settings.timeout_secs),
            setting: "ocr.timeout_secs",
        };
        let files = || super::ppocr::Models {
            detector: detector.file().map(std::path::Path::to_path_buf),
            recognizer: recognizer.file().map(std::path::Path::to_path_buf),
            ..super::ppocr::Models::default()
        };
        let models = super::models::PageModels::start(
            Some(("ocr.detector", &detector)),
            Some(("ocr.model", &recognizer)),
            &step.places(),
            deadline,
            files,
        )?;
        Ok(Models { models })
    }

    /// One cut's lines as words, one per piece of line, in reading order
    /// (a row's pieces share its `line`; `top` is the row's rank).
    fn read(&self, cut: &GrayImage) -> Result<Vec<Word>, String> {
        // On a white margin, so a line at the cut's edge is found whole.
        let margin = 16;
        let mut rgb = image::RgbImage::from_pixel(
            cut.width() + 2 * margin,
            cut.height() + 2 * margin,
            image::Rgb([255, 255, 255]),
        );
        for (x, y, p) in cut.enumerate_pixels() {
            rgb.put_pixel(x + margin, y + margin, image::Rgb([p[0]; 3]));
        }
        // The detector sees the cut as it is, letters about LETTER_HEIGHT
        // (32 px) tall: on the generated vertical Japanese, smaller
        // (0.75×) or larger (1.25×) made it join two columns' characters
        // into rows.
        let lines = self.models.read(&rgb, Some(1.0))?;
        Ok(lines
            .into_iter()
            .map(|l| Word {
                paragraph: (1, 1, 1),
                line: l.row as u32,
                left: f64::from(l.line.x),
                top: l.row as f64,
                width: f64::from(l.line.width),
                height: f64::from(l.line.height),
                confidence: f64::from(l.confidence) * 100.0,
                text: l.text,
            })
            .collect())
    }
}

struct Work {
    settings: OcrSettings,
    models: Option<Arc<Models>>,
    /// With Tesseract: the data it reads vertical Japanese or Chinese
    /// columns with (`jpn_vert`, …), if it has any.
    columns: Option<String>,
    /// The project's source language (English when it has none).
    language: String,
    overwrite: Overwrite,
    /// The pipeline's `nodes`: only these are read.
    nodes: Option<Vec<quire_model::ids::NodeId>>,
    max_pixels: u64,
}

impl Drop for Work {
    /// The job ended (done, failed or cancelled): its helper goes now,
    /// even while a page it was reading is still waiting on it.
    fn drop(&mut self) {
        if let Some(models) = &self.models {
            models.models.kill();
        }
    }
}

impl PageWork for Work {
    fn at_once(&self) -> Option<usize> {
        self.models.as_ref().and_then(|m| m.models.at_once())
    }

    fn fatal(&self) -> Option<String> {
        self.models.as_ref().and_then(|m| m.models.fatal())
    }

    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        let page = input.page;
        let targets: Vec<Target> = page.nodes.iter().filter_map(|n| self.target(n)).collect();
        if targets.is_empty() {
            return ready(Ok(PageOutcome::default()));
        }
        let Some(image) = input.image else {
            return ready(Ok(no_image(page)));
        };
        let (image, max_pixels, page_copy) = (image.to_vec(), self.max_pixels, page.clone());
        let backend = self.settings.backend;
        Box::pin(async move {
            let columns = self.columns.clone();
            let (cuts, unreadable) = tokio::task::spawn_blocking(move || {
                let decoded = quire_formats::images::decode(&image, max_pixels)
                    .map_err(|e| format!("the page image cannot be read: {e}"))?
                    .to_luma8();
                Ok::<_, String>(cut_all(
                    &page_copy,
                    &decoded,
                    targets,
                    backend,
                    columns.as_deref(),
                ))
            })
            .await
            .map_err(|e| format!("cutting the page failed: {e}"))??;
            let mut outcome = PageOutcome::default();
            outcome.warnings.extend(unreadable.into_iter().map(|id| {
                Finding::new(
                    "script",
                    Severity::Warning,
                    "this block is a column, as vertical Japanese or Chinese is written, and Tesseract has no data for such columns: install tesseract-ocr-jpn-vert (Debian), set the block's sourceLang, or read with ocr.backend = \"onnx\"; left unread",
                )
                .on(page.id, Some(id))
            }));
            let mut by_language: BTreeMap<String, Vec<Cut>> = BTreeMap::new();
            for cut in cuts {
                by_language
                    .entry(cut.language.clone())
                    .or_default()
                    .push(cut);
            }
            if let Some(models) = &self.models {
                models.models.ready().await?;
                let models = models.clone();
                let read = tokio::task::spawn_blocking(move || {
                    cuts_read(&models, by_language.into_values().flatten().collect())
                })
                .await
                .map_err(|e| format!("reading the page failed: {e}"))??;
                for (cut, words) in read {
                    self.record(page, &cut, &words, &mut outcome);
                }
                return Ok(outcome);
            }
            for (language, cuts) in by_language {
                for cuts in batches(cuts) {
                    self.read(page, &language, &cuts, &mut outcome).await?;
                }
            }
            Ok(outcome)
        })
    }
}

impl Work {
    /// Reads one stack of cuts into `outcome`.
    async fn read(
        &self,
        page: &Page,
        language: &str,
        cuts: &[Cut],
        outcome: &mut PageOutcome,
    ) -> Result<(), String> {
        let (stacked, tops) = stack(cuts);
        let tsv = self.run(language, stacked).await?;
        let words = tesseract::words(&tsv)
            .map_err(|e| format!("Tesseract's output cannot be read: {e}"))?;
        let mut read: Vec<Vec<Word>> = vec![Vec::new(); cuts.len()];
        for word in words.into_iter().filter(|w| !is_debris(&w.text)) {
            let centre = word.top + word.height / 2.0;
            if let Some(k) = tops.iter().rposition(|top| f64::from(*top) <= centre) {
                read[k].push(word);
            }
        }
        for (cut, words) in cuts.iter().zip(read) {
            self.record(page, cut, &words, outcome);
        }
        Ok(())
    }

    /// Whether `node` is read, and how.
    fn target(&self, node: &Node) -> Option<Target> {
        let NodeKind::Text {
            text,
            translation,
            source_lang,
            state,
            region,
            ..
        } = &node.kind
        else {
            return None;
        };
        let has_text = text.as_deref().is_some_and(|t| !t.trim().is_empty());
        let translated = translation.as_deref().is_some_and(|t| !t.trim().is_empty());
        let wanted = !has_text || (self.overwrite == Overwrite::All && !translated);
        let named = self
            .nodes
            .as_ref()
            .is_none_or(|only| only.contains(&node.id));
        if !wanted || !named || *state == Some(TextState::Final) || !node.visible {
            return None;
        }
        let t = &node.transform;
        let region = region.clone().unwrap_or_else(|| {
            vec![
                [t.x, t.y],
                [t.x + t.width, t.y],
                [t.x + t.width, t.y + t.height],
                [t.x, t.y + t.height],
            ]
        });
        Some(Target {
            id: node.id,
            text: text.clone(),
            area: *t,
            region,
            language: source_lang.clone().unwrap_or_else(|| self.language.clone()),
        })
    }

    /// Runs Tesseract on one stacked image; its TSV.
    async fn run(&self, language: &str, image: GrayImage) -> Result<String, String> {
        let mut png = Vec::new();
        image
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .map_err(|e| format!("cannot encode the cuts: {e}"))?;
        let program = &self.settings.tesseract;
        let mut command = tokio::process::Command::new(program);
        command
            .args(["stdin", "stdout", "-l", language, "--psm", "6", "tsv"])
            // One thread: Tesseract's OpenMP threads cost more than they
            // give on a stack of small cuts (0.59 s -> 0.33 s for a page's
            // stack on a 2-core machine).
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| {
            format!("cannot start `{program}` ({e}); install Tesseract (Debian: tesseract-ocr) or set ocr.tesseract")
        })?;
        if let Some(mut stdin) = child.stdin.take() {
            tokio::spawn(async move {
                let _ = stdin.write_all(&png).await;
            });
        }
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(format!("`{program}` has no output pipes"));
        };
        let finished = async {
            let (out, err) = tokio::join!(
                super::command::read_capped(stdout, MAX_TSV_BYTES),
                super::command::read_tail(stderr)
            );
            (out, err, child.wait().await)
        };
        let timeout = Duration::from_secs(self.settings.timeout_secs);
        // On a timeout, dropping the child kills it.
        let (stdout, stderr, status) =
            tokio::time::timeout(timeout, finished).await.map_err(|_| {
                format!(
                    "`{program}` did not finish within {}s (ocr.timeout_secs) and was killed",
                    self.settings.timeout_secs
                )
            })?;
        // Over the limit, the program was cut off: that, not its status.
        let stdout = stdout.ok_or_else(|| {
            format!("`{program}` wrote more than {MAX_TSV_BYTES} bytes for one page")
        })?;
        let status = status.map_err(|e| format!("`{program}` failed: {e}"))?;
        if !status.success() {
            let stderr = String::from_utf8_lossy(&stderr);
            if stderr.contains("Failed loading language") {
                return Err(format!(
                    "Tesseract has no `{language}` data: install it (Debian: tesseract-ocr-{})",
                    language.replace('_', "-")
                ));
            }
            return Err(format!("`{program}` failed: {}", stderr.trim()));
        }
        String::from_utf8(stdout).map_err(|_| format!("`{program}` wrote output that is not UTF-8"))
    }

    /// The op and warnings for what was read in one cut.
    fn record(&self, page: &Page, cut: &Cut, words: &[Word], outcome: &mut PageOutcome) {
        let warn = |rule: &str, message: String| {
            Finding::new(rule, Severity::Warning, message).on(page.id, Some(cut.id))
        };
        let text = join(words, &cut.language);
        if text.is_empty() {
            outcome
                .warnings
                .push(warn("unread", "nothing was read in this region".into()));
            return;
        }
        let confidence =
            words.iter().map(|w| w.confidence).sum::<f64>() / words.len() as f64 / 100.0;
        if confidence < self.settings.min_confidence && !looks_like_words(&text) {
            // A ring read as `O`, hatching as `/`: art, not lettering. The
            // node stays unread, so nothing is translated, cleaned or set
            // there; a person can still type or read it.
            outcome.warnings.push(
                Finding::new(
                    "not-text",
                    Severity::Info,
                    format!(
                        "read only {text:?} with {:.0} % confidence: left unread, as art rather than lettering",
                        confidence * 100.0
                    ),
                )
                .on(page.id, Some(cut.id)),
            );
            return;
        }
        if confidence < self.settings.min_confidence {
            outcome.warnings.push(warn(
                "low-confidence",
                format!(
                    "read with {:.0} % confidence (ocr.min_confidence is {:.0} %): check the source text",
                    confidence * 100.0,
                    self.settings.min_confidence * 100.0
                ),
            ));
        }
        let mut patch = NodePatch::source(Some(Some(text)));
        // Read as another script than the project's: the block says so.
        if let (Some(tag), Some(KindPatch::Text { source_lang, .. })) = (&cut.tag, &mut patch.kind)
        {
            *source_lang = Some(Some(tag.clone()));
        }
        outcome.ops.push(Op::UpdateNode {
            page: page.id,
            id: cut.id,
            patch,
            // Dropped if a person typed a source meanwhile.
            based_on: Some(Basis {
                text: Some(cut.basis.clone()),
                translation: None,
            }),
        });
    }
}

/// Each cut read by the `onnx` backend.
fn cuts_read(models: &Models, cuts: Vec<Cut>) -> Result<Vec<(Cut, Vec<Word>)>, String> {
    cuts.into_iter()
        .map(|cut| {
            let words = models.read(&cut.image)?;
            Ok((cut, words))
        })
        .collect()
}

/// Tesseract's page, block and paragraph numbers.
type Paragraph = (u32, u32, u32);

/// Whether Tesseract's word is only the marks a balloon's edge or a
/// speck reads as (`|`, `_`, `—`, a lone dot): not text.
fn is_debris(word: &str) -> bool {
    word.chars().all(|c| {
        matches!(
            c,
            '|' | '_'
                | '-'
                | '—'
                | '–'
                | '~'
                | '.'
                | ','
                | '\''
                | '"'
                | '`'
                | '‘'
                | '’'
                | '“'
                | '”'
        )
    }) && !matches!(word, "..." | "…")
}

/// Whether `text` holds a word: two letters or digits in a row, or one
/// character of a script that writes words with one (Han, kana, Hangul).
/// A lone `O`, `@` or `/` read with little confidence is art.
fn looks_like_words(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        if matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}')
        {
            return true;
        }
        run = if c.is_alphanumeric() { run + 1 } else { 0 };
        if run >= 2 {
            return true;
        }
    }
    false
}

/// Whether a language writes without spaces between words.
fn unspaced(language: &str) -> bool {
    let primary = language.split(['-', '_']).next().unwrap_or("");
    matches!(primary, "ja" | "zh" | "jpn" | "chi")
}

/// One cut's words as text: words by lines (Tesseract's own lines, in
/// order from the top), lines joined as the language wants.
pub fn join(words: &[Word], language: &str) -> String {
    // Keyed by Tesseract's paragraph and line.
    let mut lines: BTreeMap<(Paragraph, u32), Vec<&Word>> = BTreeMap::new();
    for w in words {
        lines.entry((w.paragraph, w.line)).or_default().push(w);
    }
    let mut lines: Vec<Vec<&Word>> = lines.into_values().collect();
    lines.sort_by(|a, b| a[0].top.total_cmp(&b[0].top));
    let space = if unspaced(language) { "" } else { " " };
    let mut text = String::new();
    for line in lines {
        let line: Vec<&str> = line.iter().map(|w| w.text.as_str()).collect();
        let line = line.join(space);
        if text.is_empty() {
            text = line;
            continue;
        }
        // A word a hyphen broke at the line's end is one word again.
        let broken = text.ends_with('-')
            && text[..text.len() - 1].ends_with(char::is_alphabetic)
            && line.starts_with(char::is_alphabetic);
        if broken {
            text.pop();
        } else {
            text.push_str(space);
        }
        text.push_str(&line);
    }
    text
}

/// The `ocr` engine's settings (`[ocr]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OcrSettings {
    /// What reads the text.
    #[serde(default)]
    pub backend: OcrBackend,
    /// The Tesseract program (a name on `PATH` or a path).
    pub tesseract: String,
    /// `onnx`: the recognition model (PP-OCR's, its dictionary in its
    /// `character` metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// `onnx`: the text-line detector run inside each node's cut
    /// (PP-OCR's DB model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detector: Option<ModelRef>,
    /// Below this confidence (0 to 1) a node read gets a
    /// `low-confidence` warning.
    pub min_confidence: f64,
    /// How long one page may take, in seconds.
    pub timeout_secs: u64,
}

impl Default for OcrSettings {
    fn default() -> Self {
        OcrSettings {
            backend: OcrBackend::default(),
            tesseract: "tesseract".into(),
            model: None,
            detector: None,
            min_confidence: 0.6,
            timeout_secs: 60,
        }
    }
}

/// What the `ocr` engine reads with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OcrBackend {
    /// The system's Tesseract, one run per page and language.
    #[default]
    Tesseract,
    /// PP-OCR's models (`ocr.model`, `ocr.detector`), run in process by
    /// tract: Japanese, Chinese and English, horizontal and vertical.
    Onnx,
}

impl Settings for OcrSettings {
    const TABLE: &'static str = "ocr";

    fn check(&self, context: &Context) -> Result<(), Invalid> {
        let onnx = (self.backend == OcrBackend::Onnx).then_some("ocr.backend = \"onnx\"");
        let what = "a PP-OCR model file, or { backend = \"NAME\" }";
        Invalid::model_ref("model", self.model.as_ref(), onnx, what, context)?;
        Invalid::model_ref("detector", self.detector.as_ref(), onnx, what, context)?;
        let confidence = self.min_confidence;
        if !(confidence.is_finite() && (0.0..=1.0).contains(&confidence)) {
            return Err(Invalid::new(
                "min_confidence",
                format!("is {confidence}; it must be from 0 to 1"),
            ));
        }
        if !(1..=3600).contains(&self.timeout_secs) {
            return Err(Invalid::new(
                "timeout_secs",
                format!(
                    "is {}; it must be from 1 to 3600 (seconds)",
                    self.timeout_secs
                ),
            ));
        }
        Ok(())
    }

    fn models(&self) -> Vec<super::settings::ModelFile> {
        use super::settings::{ModelFile, ModelRole};
        [
            ("detector", &self.detector, ModelRole::Detector),
            ("model", &self.model, ModelRole::Recognizer),
        ]
        .into_iter()
        .filter_map(|(key, source, role)| {
            let source = source.clone()?;
            Some(ModelFile { key, source, role })
        })
        .collect()
    }
}

impl super::BuiltIn for Ocr {
    fn tables<V: super::settings::Tables>(tables: &mut V) {
        tables.table::<OcrSettings>();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(line: u32, top: f64, text: &str) -> Word {
        Word {
            paragraph: (1, 1, 1),
            line,
            left: 0.0,
            top,
            width: 10.0,
            height: 10.0,
            confidence: 90.0,
            text: text.into(),
        }
    }

    #[test]
    fn lines_join_as_the_language_wants() {
        let words = [
            word(1, 0.0, "I"),
            word(1, 0.0, "CAUSED"),
            word(2, 20.0, "THIS"),
            word(2, 20.0, "EARTH-"),
            word(3, 40.0, "QUAKE!"),
        ];
        assert_eq!(join(&words, "en"), "I CAUSED THIS EARTHQUAKE!");
        let words = [word(2, 20.0, "ですか"), word(1, 0.0, "なんで")];
        assert_eq!(join(&words, "ja"), "なんでですか");
        assert_eq!(
            join(&[word(1, 0.0, "HO-HO"), word(2, 9.0, "-HA")], "en"),
            "HO-HO -HA"
        );
        assert!(is_debris("|") && is_debris("--") && is_debris(".") && is_debris("_"));
        assert!(!is_debris("...") && !is_debris("I") && !is_debris("!"));
    }

    #[test]
    fn cuts_are_stacked_within_a_pixel_budget() {
        let cut = |w, h| Cut {
            id: NodeId::new(),
            basis: None,
            language: "eng".into(),
            tag: None,
            image: GrayImage::new(w, h),
        };
        let stacks = batches(vec![
            cut(4000, 4000),
            cut(4000, 4000),
            cut(4000, 4000),
            cut(9, 9),
        ]);
        let sizes: Vec<usize> = stacks.iter().map(Vec::len).collect();
        assert_eq!(sizes, [2, 2]);
        let (stacked, tops) = stack(&stacks[1]);
        assert_eq!(tops, [GAP / 2, GAP + 4000 + GAP / 2]);
        assert_eq!(stacked.dimensions(), (4000 + 2 * GAP, 4000 + 9 + 3 * GAP));
    }

    #[test]
    fn a_lone_mark_is_not_a_word() {
        for art in ["O", "@", "/ /", "o .", "(I)"] {
            assert!(!looks_like_words(art), "{art}");
        }
        for words in ["OK", "I AM", "42", "あ", "漢", "한", "no!"] {
            assert!(looks_like_words(words), "{words}");
        }
    }

    #[test]
    fn languages_map_to_tesseract_data() {
        assert_eq!(tesseract_language("en-US", false).unwrap(), "eng");
        assert_eq!(tesseract_language("ja", true).unwrap(), "jpn_vert");
        assert_eq!(tesseract_language("zh-Hant", false).unwrap(), "chi_tra");
        assert_eq!(tesseract_language("fr", true).unwrap(), "fra");
        assert!(
            tesseract_language("tlh", false)
                .unwrap_err()
                .contains("tlh")
        );
    }
}
