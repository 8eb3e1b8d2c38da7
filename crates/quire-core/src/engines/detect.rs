//! `detect`: finds the text of each image page, one text node per balloon
//! (or block of text outside balloons), each with its box and its
//! `region`, and stores the page's `text` mask: `quire-vision`'s `detect`
//! (the `builtin` backend), or its `detect_lines` around the lines a
//! model finds (`onnx`: PP-OCR's DB detector in the `quire-ppocr` helper
//! process, the page seen at the model's scale), or its `detect_found`
//! around the boxes of a box detector (`onnx` with `model_format = "yolo"`
//! or `"detr"`: RT-DETR or YOLO exports, their classes mapped to balloon,
//! text and free text by `labels`).
//!
//! It never duplicates a node or moves a person's box: with
//! `existing = "merge"` a found block that overlaps a text node gives that
//! node its region (when it has none) instead of a second node, so running
//! it again changes nothing; with `"skip"` a page that has text nodes is
//! left alone; with `"replace"` the nodes it placed earlier that no one
//! has changed since (`found_by`, cleared by the core on a person's or an
//! agent's edit) are found again: kept when a found block is exactly
//! theirs, removed otherwise. The mask is replaced only when it differs.

use std::sync::Arc;

use quire_vision::detect::{self as vision, Detection};

use super::{Engine, EngineInfo, Needs, PageInput, PageOutcome, PageWork, Pictures, Step, ready};
use std::path::Path;

use super::models::PageModels;
use quire_model::finding::Finding;
use quire_model::finding::Severity;
use quire_model::hash::BlobHash;
use quire_model::op::{NewNode, NodePatch, Op};
use quire_model::scene::{MaskRole, Node, NodeKind, Page, Point, ReadingDirection, Transform};
use serde::{Deserialize, Serialize};

use super::settings::{Context, Invalid, Settings};

/// The `detect` engine.
pub struct Detect {
    info: EngineInfo,
}

impl Default for Detect {
    fn default() -> Self {
        Detect {
            info: EngineInfo::built_in(
                "detect",
                "detect",
                "Finds the text of each image page: one text node per balloon (lines together, in reading order) with its box and region, and the page's text mask; never duplicates or moves a node (detect.existing)",
            ),
        }
    }
}

impl Engine for Detect {
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
        let rtl = step
            .scene
            .is_some_and(|s| s.project.reading() == ReadingDirection::Rtl);
        let settings = DetectSettings::clone(&step.settings());
        let model = match settings.backend {
            DetectBackend::Builtin => None,
            DetectBackend::Onnx => {
                let model = settings.model.as_ref().ok_or_else(|| {
                    "detect.backend = \"onnx\" needs detect.model (a text detection model file, or { backend = \"NAME\" })"
                        .to_owned()
                })?;
                let deadline = super::ppocr::Deadline {
                    within: std::time::Duration::from_secs(settings.timeout_secs),
                    setting: "detect.timeout_secs",
                };
                let path = model.file().map(Path::to_path_buf).unwrap_or_default();
                let files = || match settings.box_model() {
                    Some((format, size, classes)) => super::ppocr::Models {
                        boxes: Some(super::ppocr::BoxModel {
                            path,
                            format,
                            size,
                            classes,
                        }),
                        ..super::ppocr::Models::default()
                    },
                    None => super::ppocr::Models {
                        detector: Some(path),
                        ..super::ppocr::Models::default()
                    },
                };
                let detector = Some(("detect.model", model));
                Some(Arc::new(PageModels::start(
                    detector,
                    None,
                    &step.places(),
                    deadline,
                    files,
                )?))
            }
        };
        Ok(Box::new(Work {
            settings,
            model,
            rtl,
            max_pixels: step.config.max_image_pixels,
        }))
    }
}

struct Work {
    settings: DetectSettings,
    /// The `onnx` backend's model, loaded once per job (in the helpers,
    /// or asked of its backend).
    model: Option<Arc<PageModels>>,
    rtl: bool,
    max_pixels: u64,
}

impl Drop for Work {
    /// The job ended (done, failed or cancelled): its helper goes now,
    /// even while a page it was reading is still waiting on it.
    fn drop(&mut self) {
        if let Some(model) = &self.model {
            model.kill();
        }
    }
}

impl PageWork for Work {
    fn at_once(&self) -> Option<usize> {
        self.model.as_ref().and_then(|m| m.at_once())
    }

    fn fatal(&self) -> Option<String> {
        self.model.as_ref().and_then(|m| m.fatal())
    }

    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        let page = input.page;
        if self.settings.existing == Existing::Skip && text_nodes(page).next().is_some() {
            return ready(Ok(PageOutcome::default()));
        }
        let Some(image) = input.image else {
            return ready(Ok(no_image(page)));
        };
        let image = image.to_vec();
        let settings = vision::Settings {
            min_text_height: self.settings.min_text_height,
            max_text_height: self.settings.max_text_height,
            right_to_left: self.rtl,
            drop_page_numbers: self.settings.drop_page_numbers,
            ..vision::Settings::default()
        };
        let max_pixels = self.max_pixels;
        let budget = self.settings.max_pixels;
        let model = self.model.clone();
        let boxes = (self.settings.model_format != ModelFormat::Lines)
            .then(|| (self.settings.labels.clone(), self.settings.min_score));
        let existing = self.settings.existing;
        let within = std::time::Duration::from_secs(self.settings.timeout_secs);
        Box::pin(async move {
            if let Some(model) = &model {
                model.ready().await?;
            }
            // A page is costed by its header before anything decodes it.
            if let Ok(size) = imagesize::blob_size(&image) {
                let pixels = (size.width as u64).saturating_mul(size.height as u64);
                if pixels > budget {
                    return Err(format!(
                        "the page is {} × {} pixels ({:.1} megapixels); detection reads at \
                         most {:.1} megapixels (detect.max_pixels): scale the page down, or \
                         raise it",
                        size.width,
                        size.height,
                        pixels as f64 / 1e6,
                        budget as f64 / 1e6
                    ));
                }
            }
            let found = tokio::task::spawn_blocking(move || {
                let decoded = quire_formats::images::decode(&image, max_pixels)
                    .map_err(|e| format!("the page image cannot be read: {e}"))?;
                let gray = decoded.to_luma8();
                let (w, h) = gray.dimensions();
                let detection = match (model, &boxes) {
                    (None, _) => vision::detect(&gray, &settings),
                    (Some(model), None) => {
                        let lines = model.lines(&decoded.to_rgb8(), None)?;
                        let bounds: Vec<vision::Bounds> = lines
                            .iter()
                            .map(|l| bounds_in(l.x, l.y, l.width, l.height, w, h))
                            .collect();
                        vision::detect_lines(&gray, &bounds, &settings)
                    }
                    (Some(model), Some((labels, min_score))) => {
                        let found = model.boxes(&decoded.to_rgb8(), *min_score)?;
                        let found: Vec<vision::Found> = found
                            .iter()
                            .filter_map(|f| {
                                let kind = match labels.get(f.label)? {
                                    BoxLabel::Bubble => vision::FoundKind::Bubble,
                                    BoxLabel::Text => vision::FoundKind::Text,
                                    BoxLabel::FreeText => vision::FoundKind::FreeText,
                                    BoxLabel::Ignore => return None,
                                };
                                let bounds = bounds_in(f.x, f.y, f.width, f.height, w, h);
                                Some(vision::Found { bounds, kind })
                            })
                            .collect();
                        vision::detect_found(&gray, &found, &settings)
                    }
                };
                let mask = png(&detection.mask)?;
                Ok::<_, String>((detection, mask))
            });
            let found = tokio::time::timeout(within, found)
                .await
                .map_err(|_| {
                    format!(
                        "detection did not finish within {} s (detect.timeout_secs)",
                        within.as_secs()
                    )
                })?
                .map_err(|e| format!("the detector failed: {e}"))??;
            Ok(outcome(page, existing, found.0, found.1))
        })
    }
}

/// A model's box (a line's, or a box detector's) as pixel bounds inside a
/// `width` × `height` page.
fn bounds_in(x: f32, y: f32, w: f32, h: f32, width: u32, height: u32) -> vision::Bounds {
    let clamp = |v: f32, most: u32| (v.max(0.0) as u32).min(most - 1);
    vision::Bounds {
        left: clamp(x.floor(), width),
        top: clamp(y.floor(), height),
        right: clamp((x + w).ceil() - 1.0, width),
        bottom: clamp((y + h).ceil() - 1.0, height),
    }
}

/// A page without an image: nothing to find there.
pub(super) fn no_image(page: &Page) -> PageOutcome {
    let finding = Finding::new(
        "no-image",
        Severity::Warning,
        format!("page `{}` has no image to read", page.name),
    );
    PageOutcome {
        warnings: vec![finding.on(page.id, None)],
        ..PageOutcome::default()
    }
}

/// The text nodes of a page.
fn text_nodes(page: &Page) -> impl Iterator<Item = &Node> {
    page.nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Text { .. }))
}

/// Whether `node` is one this engine placed that no one has changed.
fn placed_here(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Text { found_by: Some(by), .. } if by == ENGINE)
}

/// The engine's id, recorded in the nodes it places.
const ENGINE: &str = "detect";

/// The ops that record what was found on `page`: see the module doc.
fn outcome(page: &Page, policy: Existing, detection: Detection, mask_png: Vec<u8>) -> PageOutcome {
    let (width, height) = detection.mask.dimensions();
    let unit = 1.0 / quire_render::pixels_per_unit(page, width);
    let mut ops = Vec::new();
    // Each found block in page units: its box and its region.
    let found: Vec<(Transform, Vec<Point>)> = detection
        .blocks
        .iter()
        .map(|block| {
            let b = block.bounds;
            let bounds = Transform {
                x: f64::from(b.left) * unit,
                y: f64::from(b.top) * unit,
                width: f64::from(b.width()) * unit,
                height: f64::from(b.height()) * unit,
                rotation: None,
            };
            let region = block
                .region
                .iter()
                .map(|p| [round(p[0] * unit), round(p[1] * unit)])
                .collect();
            (bounds, region)
        })
        .collect();
    // `replace`: this engine's untouched nodes that are found again
    // exactly stay; the rest of them go.
    let same = |n: &Node, (bounds, region): &(Transform, Vec<Point>)| {
        n.transform == *bounds
            && matches!(&n.kind, NodeKind::Text { region: Some(r), .. } if r == region)
    };
    let gone: Vec<&Node> = match policy {
        Existing::Replace => text_nodes(page)
            .filter(|n| placed_here(n) && !found.iter().any(|f| same(n, f)))
            .collect(),
        Existing::Merge | Existing::Skip => Vec::new(),
    };
    ops.extend(gone.iter().map(|n| Op::RemoveNode {
        page: page.id,
        id: n.id,
    }));
    // What each remaining text node covers: its region's box, else its box.
    let existing: Vec<(&Node, Transform, bool)> = text_nodes(page)
        .filter(|n| !gone.iter().any(|g| g.id == n.id))
        .map(|n| match &n.kind {
            NodeKind::Text {
                region: Some(region),
                ..
            } => (n, bounding(region), true),
            _ => (n, n.transform, false),
        })
        .collect();
    let mut given = Vec::new();
    for (bounds, region) in found {
        let region_box = bounding(&region);
        let overlapping: Vec<&(&Node, Transform, bool)> = existing
            .iter()
            .filter(|(_, covers, _)| overlaps(covers, &bounds) || overlaps(covers, &region_box))
            .collect();
        if overlapping.is_empty() {
            ops.push(Op::AddNode {
                page: page.id,
                node: NewNode {
                    id: None,
                    transform: bounds,
                    visible: true,
                    kind: NodeKind::found(region, ENGINE),
                },
                at: None,
            });
            continue;
        }
        for (node, _, has_region) in overlapping {
            if *has_region || given.contains(&node.id) {
                continue;
            }
            given.push(node.id);
            ops.push(Op::UpdateNode {
                page: page.id,
                id: node.id,
                patch: NodePatch::region(Some(Some(region.clone()))),
                based_on: None,
            });
        }
    }
    let blob = BlobHash::of(&mask_png);
    let masks: Vec<&Node> = page
        .nodes
        .iter()
        .filter(|n| {
            matches!(
                n.kind,
                NodeKind::Mask {
                    role: MaskRole::Text,
                    ..
                }
            )
        })
        .collect();
    let current = masks
        .iter()
        .any(|n| matches!(&n.kind, NodeKind::Mask { blob: b, .. } if *b == blob));
    let mut blobs = Vec::new();
    if !current && !detection.blocks.is_empty() {
        ops.extend(masks.iter().map(|n| Op::RemoveNode {
            page: page.id,
            id: n.id,
        }));
        ops.push(Op::AddNode {
            page: page.id,
            node: NewNode {
                id: None,
                transform: Transform {
                    x: 0.0,
                    y: 0.0,
                    width: f64::from(width) * unit,
                    height: f64::from(height) * unit,
                    rotation: None,
                },
                // An overlay a person turns on; nothing draws it by default.
                visible: false,
                kind: NodeKind::Mask {
                    blob,
                    role: MaskRole::Text,
                },
            },
            at: None,
        });
        blobs.push(mask_png);
    }
    PageOutcome {
        ops,
        warnings: Vec::new(),
        blobs,
    }
}

/// Two boxes share at least a third of the smaller one's area.
fn overlaps(a: &Transform, b: &Transform) -> bool {
    let w = (a.x + a.width).min(b.x + b.width) - a.x.max(b.x);
    let h = (a.y + a.height).min(b.y + b.height) - a.y.max(b.y);
    if w <= 0.0 || h <= 0.0 {
        return false;
    }
    let smaller = (a.width * a.height).min(b.width * b.height);
    smaller > 0.0 && w * h * 3.0 >= smaller
}

/// The box around a region's points.
pub(super) fn bounding(points: &[Point]) -> Transform {
    let (mut x0, mut y0) = (f64::INFINITY, f64::INFINITY);
    let (mut x1, mut y1) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for [x, y] in points {
        x0 = x0.min(*x);
        y0 = y0.min(*y);
        x1 = x1.max(*x);
        y1 = y1.max(*y);
    }
    if points.is_empty() {
        return Transform::default();
    }
    Transform {
        x: x0,
        y: y0,
        width: x1 - x0,
        height: y1 - y0,
        rotation: None,
    }
}

/// Page units to a hundredth, so a region reads cleanly in JSON.
fn round(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// A grey mask as PNG.
pub(super) fn png(mask: &image::GrayImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    mask.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .map_err(|e| format!("cannot encode the text mask: {e}"))?;
    Ok(out)
}

/// What `detect` does on a page that already has text nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Existing {
    /// A found region that overlaps a text node gives that node its
    /// region (when it has none); only what overlaps nothing is added.
    #[default]
    Merge,
    /// Pages with any text node are left alone.
    Skip,
    /// The text nodes this engine placed that no one has changed since
    /// are found again: those that match a found block stay as they are,
    /// the others go; a person's or agent's node is kept as with `merge`.
    Replace,
}

impl Existing {
    pub fn as_str(self) -> &'static str {
        match self {
            Existing::Merge => "merge",
            Existing::Skip => "skip",
            Existing::Replace => "replace",
        }
    }
}

/// What the `detect` engine finds text with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DetectBackend {
    /// Classical image analysis, no model files (`quire-vision`).
    #[default]
    Builtin,
    /// A text-line detection model, run by the `quire-ppocr` helper; the
    /// balloons, regions and mask are then found around its lines.
    Onnx,
}

/// What a detection model's outputs are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelFormat {
    /// A text probability map (DB, as PP-OCR's detector): lines.
    #[default]
    Lines,
    /// Boxes with class scores, YOLO's layout.
    Yolo,
    /// Boxes with class scores, RT-DETR's layout.
    Detr,
}

/// What a box detector's class is to quire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BoxLabel {
    /// A balloon: the text in it is one block, its box closes its outline.
    Bubble,
    /// Text in a balloon.
    Text,
    /// Text outside balloons.
    FreeText,
    /// Anything else the model finds (faces, panels): left alone.
    Ignore,
}

impl DetectSettings {
    /// A box detector's format, input size and class count, when the
    /// model is one.
    fn box_model(&self) -> Option<(super::ppocr::BoxFormat, u32, usize)> {
        let format = match self.model_format {
            ModelFormat::Lines => return None,
            ModelFormat::Yolo => super::ppocr::BoxFormat::Yolo,
            ModelFormat::Detr => super::ppocr::BoxFormat::Detr,
        };
        Some((format, self.input_size, self.labels.len()))
    }
}

/// The `detect` engine's settings (`[detect]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetectSettings {
    /// What finds the text.
    #[serde(default)]
    pub backend: DetectBackend,
    /// `onnx`: the detection model: a text-line model (a DB model such
    /// as PP-OCR's detector), or a box detector (`model_format`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<super::settings::ModelRef>,
    /// What the model's outputs are: `lines` (a DB model's text
    /// probability map), `yolo` or `detr` (boxes with class scores).
    #[serde(default)]
    pub model_format: ModelFormat,
    /// A box detector's classes, in its order: each `bubble`, `text`
    /// (text in a balloon), `free-text` or `ignore`.
    pub labels: Vec<BoxLabel>,
    /// A box detector's square input, in pixels.
    pub input_size: u32,
    /// The lowest score of a box that is kept.
    pub min_score: f32,
    /// What to do on pages that already have text nodes.
    pub existing: Existing,
    /// The shortest glyph in pixels; smaller marks are noise.
    pub min_text_height: u32,
    /// The tallest glyph in pixels; taller shapes are art.
    pub max_text_height: u32,
    /// Whether page numbers (a short line in the top or bottom margin)
    /// are dropped.
    pub drop_page_numbers: bool,
    /// How long one page may take, in seconds (for `onnx`, each exchange
    /// with the helper).
    pub timeout_secs: u64,
    /// The largest page (width × height) detection reads; a larger one
    /// fails with a warning naming this setting.
    pub max_pixels: u64,
}

impl Default for DetectSettings {
    fn default() -> Self {
        DetectSettings {
            backend: DetectBackend::default(),
            model: None,
            model_format: ModelFormat::default(),
            // The order of the comic text-and-bubble detectors scanlation
            // tools ship (bubble, text_bubble, text_free).
            labels: vec![BoxLabel::Bubble, BoxLabel::Text, BoxLabel::FreeText],
            input_size: 640,
            min_score: 0.4,
            existing: Existing::Merge,
            min_text_height: 6,
            max_text_height: 120,
            drop_page_numbers: true,
            timeout_secs: 60,
            max_pixels: 32_000_000,
        }
    }
}

impl Settings for DetectSettings {
    const TABLE: &'static str = "detect";

    fn check(&self, context: &Context) -> Result<(), Invalid> {
        let onnx = (self.backend == DetectBackend::Onnx).then_some("detect.backend = \"onnx\"");
        let what = "a text detection model file, or { backend = \"NAME\" }";
        Invalid::model_ref("model", self.model.as_ref(), onnx, what, context)?;
        if self.model_format != ModelFormat::Lines {
            if matches!(self.model, Some(super::settings::ModelRef::Backend(_))) {
                return Err(Invalid::new(
                    "model",
                    "names a backend: a box detector (model_format) runs from a model file",
                ));
            }
            if !self
                .labels
                .iter()
                .any(|l| matches!(l, BoxLabel::Text | BoxLabel::FreeText))
            {
                return Err(Invalid::new(
                    "labels",
                    "names no `text` or `free-text` class: a box detector must find some text",
                ));
            }
            Invalid::outside("input_size", self.input_size, 32..=4096, "pixels")?;
            Invalid::outside("min_score", self.min_score, 0.0..=1.0, "a score")?;
        }
        Invalid::outside("timeout_secs", self.timeout_secs, 1..=3600, "seconds")?;
        let budget = self.max_pixels;
        if !(1_000_000..=context.max_image_pixels).contains(&budget) {
            return Err(Invalid::new(
                "max_pixels",
                format!(
                    "is {budget}; it must be from 1000000 to limits.max_image_pixels ({})",
                    context.max_image_pixels
                ),
            ));
        }
        if self.min_text_height == 0 || self.min_text_height > self.max_text_height {
            return Err(Invalid::new(
                "min_text_height",
                format!(
                    "is {}; it must be at least 1 and at most detect.max_text_height ({})",
                    self.min_text_height, self.max_text_height
                ),
            ));
        }
        Ok(())
    }

    fn models(&self) -> Vec<super::settings::ModelFile> {
        let role = match self.box_model() {
            Some((format, size, classes)) => super::settings::ModelRole::Boxes {
                format,
                size,
                classes,
            },
            None => super::settings::ModelRole::Detector,
        };
        self.model
            .iter()
            .map(|source| super::settings::ModelFile {
                key: "model",
                source: source.clone(),
                role,
            })
            .collect()
    }
}

impl super::BuiltIn for Detect {
    fn tables<V: super::settings::Tables>(tables: &mut V) {
        tables.table::<DetectSettings>();
    }
}
