//! Rendering a page: the source image with its text cleared and the
//! translations set in their boxes (the `render` engine, and the page
//! image exports).
//!
//! 1. Clear: a page whose `cleaned` image is current starts from it (the
//!    `clean` engine removed the text; see `cleaned`). Otherwise an
//!    `inpaint` mask's pixels are filled from their surroundings (Telea's
//!    method); without one, each translated node's box is filled with its
//!    paper's colour where it lies inside the node's region (the median
//!    there), or, for a node without a
//!    region, its box with the median of its edge (`crosses-art` when that
//!    edge is not flat).
//! 2. Set each visible translated text node in its box (`typeset.rs`),
//!    in `style.color`, else black or white, whichever contrasts with the
//!    cleared background, with `style.stroke` as an outline.
//! 3. Encode as PNG. The engine stores it as the page's `rendered` image
//!    (`ops`), recording a digest of everything it was made from
//!    (`digest`), so an export knows which rendered pages are current.
//!
//! Nodes without a translation are left as they are on the page, and so
//! is the source under a node whose `style.clean` is `false`. Nothing
//! here touches the network or the clock: the same page renders to the
//! same pixels.

pub mod cleaned;
pub mod export;
pub mod fonts;
mod hyphens;
mod interior;
mod paint;
mod typeset;

use std::path::PathBuf;

use image::{GrayImage, Rgba, RgbaImage};
use serde::Serialize;

use self::fonts::Fonts;
use self::paint::Rect;
use self::typeset::Text;
use quire_model::finding::{Finding, Severity};
use quire_model::hash::BlobHash;
use quire_model::ids::NodeId;
use quire_model::op::{NewNode, Op};
use quire_model::scene::{
    ImageRole, MaskRole, Node, NodeKind, Page, Point, Style, TextAlign, Transform,
};

/// Changes whenever the same inputs would render differently, so that
/// renders of an older quire count as stale.
const RENDER_VERSION: u32 = 3;

/// How pages are rendered in one job or export.
#[derive(Debug, Clone)]
pub struct Settings {
    pub config: RenderConfig,
    /// The language the text is in (BCP 47), which picks among fonts'
    /// forms of the same character.
    pub locale: String,
    /// The most pixels a page image (or mask) may have to be decoded
    /// (`limits.max_image_pixels`); it changes no pixel of a render.
    pub max_image_pixels: u64,
    /// The project's house style, under each node's own, field by field.
    pub style: Style,
}

impl Settings {
    /// How pages are rendered for text in `language` (a job's target
    /// language; English when there is none).
    pub fn new(config: &RenderConfig, max_image_pixels: u64, language: Option<&str>) -> Settings {
        Settings {
            config: config.clone(),
            locale: language.unwrap_or("en").to_owned(),
            max_image_pixels,
            style: Style::default(),
        }
    }

    /// These settings for `project`'s pages: its house style under each
    /// node's.
    pub fn for_project(mut self, project: &quire_model::scene::ProjectMeta) -> Settings {
        self.style = project.style.as_deref().cloned().unwrap_or_default();
        self
    }
}

/// A node's style over the project's, field by field (`clean` is the
/// node's alone: it says what happens to that block's source).
fn over(node: Option<&Style>, project: &Style) -> Style {
    let Some(node) = node else {
        return Style {
            clean: None,
            ..project.clone()
        };
    };
    let text = |mine: &Option<String>, theirs: &Option<String>| mine.clone().or(theirs.clone());
    Style {
        font_family: text(&node.font_family, &project.font_family),
        font_size: node.font_size.or(project.font_size),
        font_weight: node.font_weight.or(project.font_weight),
        italic: node.italic.or(project.italic),
        align: node.align.or(project.align),
        color: text(&node.color, &project.color),
        stroke: text(&node.stroke, &project.stroke),
        vertical: node.vertical.or(project.vertical),
        clean: node.clean,
    }
}

/// `[render]`: how the `render` engine sets translations on page images.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenderConfig {
    /// The smallest font size (px) text is shrunk to before it is clipped.
    pub min_font_size: f64,
    /// The font family of text nodes that name none; empty: Comic Neue,
    /// which quire ships.
    pub font_family: String,
    /// Font files (TrueType, OpenType, collections) used besides, or
    /// instead of, the system's.
    pub fonts: Vec<PathBuf>,
    /// Whether the system's fonts are used too (fontconfig's directories).
    pub system_fonts: bool,
}

impl Default for RenderConfig {
    fn default() -> Self {
        RenderConfig {
            min_font_size: 8.0,
            font_family: String::new(),
            fonts: Vec::new(),
            system_fonts: true,
        }
    }
}

/// A rendered page.
#[derive(Debug)]
pub struct Rendered {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub warnings: Vec<Finding>,
}

/// The nodes that are set: visible text nodes with a translation.
fn translated(page: &Page) -> impl Iterator<Item = (&Node, &str, Option<&Style>)> {
    page.nodes
        .iter()
        .filter(|n| n.visible)
        .filter_map(|n| match &n.kind {
            NodeKind::Text {
                translation: Some(t),
                style,
                ..
            } if !t.trim().is_empty() => Some((n, t.as_str(), style.as_ref())),
            _ => None,
        })
}

/// How many of the page image's pixels one page unit is: the image's
/// width over the page's (1 when either is unknown or zero). Boxes and
/// regions are in page units; engines work in pixels.
pub fn pixels_per_unit(page: &Page, image_width: u32) -> f64 {
    match page.width {
        Some(w) if w > 0 && image_width > 0 => f64::from(image_width) / f64::from(w),
        _ => 1.0,
    }
}

/// The page's source image node and blob (its first `source` image).
pub fn source(page: &Page) -> Option<(&Node, &BlobHash)> {
    page.nodes.iter().find_map(|n| match &n.kind {
        NodeKind::Image {
            blob,
            role: ImageRole::Source,
            ..
        } => Some((n, blob)),
        _ => None,
    })
}

/// The page's visible inpaint mask.
pub fn inpaint_mask(page: &Page) -> Option<&BlobHash> {
    page.nodes.iter().find_map(|n| match &n.kind {
        NodeKind::Mask {
            blob,
            role: MaskRole::Inpaint,
        } if n.visible => Some(blob),
        _ => None,
    })
}

/// What a render of the page starts from, with the source node: its
/// cleaned image while that is current (then no mask: the cleaning took
/// it in), else its source image and inpaint mask.
pub fn sources(page: &Page) -> Option<(&Node, &BlobHash, Option<&BlobHash>)> {
    let (node, source) = source(page)?;
    match cleaned::current(page) {
        Some(cleaned) => Some((node, cleaned, None)),
        None => Some((node, source, inpaint_mask(page))),
    }
}

/// The page's current rendered image, if any.
pub fn rendered(page: &Page) -> Option<(&BlobHash, Option<&str>)> {
    page.nodes.iter().find_map(|n| match &n.kind {
        NodeKind::Image {
            blob,
            role: ImageRole::Rendered,
            rendered_from,
            ..
        } => Some((blob, rendered_from.as_deref())),
        _ => None,
    })
}

/// A translated node as its render depends on it: id, box, translation,
/// style, region.
type TextInput<'a> = (
    &'a NodeId,
    &'a Transform,
    &'a str,
    Option<&'a Style>,
    Option<&'a [Point]>,
);

#[derive(Serialize)]
struct Inputs<'a> {
    version: u32,
    source: &'a BlobHash,
    mask: Option<&'a BlobHash>,
    width: Option<u32>,
    height: Option<u32>,
    source_box: &'a Transform,
    text: Vec<TextInput<'a>>,
    config: &'a RenderConfig,
    locale: &'a str,
    style: &'a Style,
}

/// A digest of everything the page's render depends on; `None` for a page
/// without a source image.
pub fn digest(page: &Page, settings: &Settings) -> Option<String> {
    let (source_node, source, mask) = sources(page)?;
    let inputs = Inputs {
        version: RENDER_VERSION,
        source,
        mask,
        width: page.width,
        height: page.height,
        source_box: &source_node.transform,
        text: translated(page)
            .map(|(n, t, s)| {
                let region = match &n.kind {
                    NodeKind::Text { region, .. } => region.as_deref(),
                    _ => None,
                };
                (&n.id, &n.transform, t, s, region)
            })
            .collect(),
        config: &settings.config,
        locale: &settings.locale,
        style: &settings.style,
    };
    let json = serde_json::to_vec(&inputs).ok()?;
    Some(blake3::hash(&json).to_hex().to_string())
}

/// Whether the page's rendered image is missing or was made from other
/// inputs than the page has now.
pub fn stale(page: &Page, settings: &Settings) -> bool {
    match (rendered(page), digest(page, settings)) {
        (Some((_, Some(made_from))), Some(now)) => made_from != now,
        _ => true,
    }
}

/// Renders `page` from its source image's bytes (and its inpaint mask's).
/// A source image that cannot be read is an error; every problem with a
/// node (an empty box, text that does not fit, a character no font has, a
/// font family that is not installed) is a warning naming it.
pub fn render(
    page: &Page,
    source: &[u8],
    mask: Option<&[u8]>,
    fonts: &Fonts,
    settings: &Settings,
) -> Result<Rendered, String> {
    let mut image: RgbaImage = quire_formats::images::decode(source, settings.max_image_pixels)
        .map_err(|e| format!("the page image cannot be read: {e}"))?
        .to_rgba8();
    let (width, height) = image.dimensions();
    let scale = pixels_per_unit(page, width);
    let mut warnings = Vec::new();
    let warn = |node: &Node, rule: &str, message: String| {
        Finding::new(rule, Severity::Warning, message).on(page.id, Some(node.id))
    };
    let mut boxes: Vec<(&Node, &str, Option<&Style>, Rect)> = Vec::new();
    for (node, text, style) in translated(page) {
        match Rect::of_box(&node.transform, scale, width, height) {
            Some(rect) => boxes.push((node, text, style, rect)),
            None => warnings.push(warn(
                node,
                "empty-box",
                format!(
                    "its box ({} × {} at {}, {}) has no pixels on the page; not rendered",
                    node.transform.width, node.transform.height, node.transform.x, node.transform.y
                ),
            )),
        }
    }
    // Clear: nothing where the page's cleaned image is the start (its
    // text is gone), the inpaint mask's pixels when there is one, else
    // each translated node's region (its balloon's paper) or its box.
    let from_cleaned = cleaned::current(page).is_some();
    let masked = match mask {
        Some(bytes) => {
            let mask: GrayImage = quire_formats::images::decode(bytes, settings.max_image_pixels)
                .map_err(|e| format!("the inpaint mask cannot be read: {e}"))?
                .to_luma8();
            paint::inpaint(&mut image, &mask);
            true
        }
        None => false,
    };
    let mut backgrounds: Vec<Rgba<u8>> = Vec::with_capacity(boxes.len());
    for (node, _, _, rect) in &boxes {
        let background = match region_pixels(node, scale) {
            _ if masked || !cleaned::clears(node) => paint::area_median(&image, *rect),
            Some(_) if from_cleaned => paint::area_median(&image, *rect),
            Some(region) => paint::fill_region(&mut image, *rect, &region),
            None => {
                let background = paint::edge_median(&image, *rect);
                if !paint::edge_is_flat(&image, *rect) {
                    warnings.push(warn(
                        node,
                        "crosses-art",
                        "its box is cleared as a flat rectangle over pixels that are not flat (art or a balloon's outline); give it a region, or run detect and clean".into(),
                    ));
                }
                paint::fill(&mut image, *rect, background);
                background
            }
        };
        backgrounds.push(background);
    }
    // Typeset.
    let mut shaper = fonts.take(&settings.locale)?;
    let min_size = settings.config.min_font_size as f32;
    for ((node, text, style, rect), background) in boxes.iter().zip(&backgrounds) {
        let style = over(*style, &settings.style);
        let family = style
            .font_family
            .as_deref()
            .filter(|f| !f.trim().is_empty());
        if let Some(family) = family
            && !fonts::has_family(shaper.system.db(), family)
        {
            warnings.push(warn(
                node,
                "missing-font",
                format!("the font family `{family}` is not installed; set in the default font"),
            ));
        }
        let (color, stroke) = colours(&style, *background, &mut |message| {
            warnings.push(warn(node, "bad-color", message));
        });
        let installed = family.filter(|f| fonts::has_family(shaper.system.db(), f));
        // What can show: characters some font has, as many as the box
        // holds at the smallest size. The rest would be clipped anyway, and
        // shaping it is what makes a render slow, so it is not shaped.
        let (content, missing) = fonts.covered(&mut shaper, text);
        let (content, cut) = within(&content, *rect, min_size);
        let text = Text {
            content,
            family: installed,
            size: style.font_size.map(|s| s as f32),
            color,
            stroke,
            vertical: style
                .vertical
                .unwrap_or_else(|| columns_by_default(&settings.locale, node, *rect, scale)),
            // Comics are lettered bold.
            weight: style.font_weight.unwrap_or(700),
            italic: style.italic.unwrap_or(false),
            align: align(style.align),
            locale: &settings.locale,
        };
        let shape = region_pixels(node, scale);
        let mut set = typeset::place(
            &mut shaper,
            &mut image,
            *rect,
            shape.as_deref(),
            &text,
            min_size,
        );
        set.fits &= !cut;
        for c in missing {
            if !set.missing.contains(&c) {
                set.missing.push(c);
            }
        }
        if !set.fits {
            warnings.push(warn(
                node,
                "overflow",
                format!(
                    "the translation does not fit its box even at {} px (render.min_font_size); it is clipped",
                    settings.config.min_font_size
                ),
            ));
        }
        if !set.missing.is_empty() {
            let chars: String = set.missing.iter().take(12).collect();
            warnings.push(warn(
                node,
                "missing-glyphs",
                format!("no installed font has {chars:?}; install one that covers them or name it in render.fonts"),
            ));
        }
    }
    fonts.give_back(shaper);
    Ok(Rendered {
        png: encode(&image)?,
        width,
        height,
        warnings,
    })
}

/// A node's text colour (its style's, else one that stands out on its
/// background) and its stroke's; a colour quire cannot read is said to
/// `bad` and left to the default.
fn colours(
    style: &Style,
    background: Rgba<u8>,
    bad: &mut dyn FnMut(String),
) -> (Rgba<u8>, Option<Rgba<u8>>) {
    let color = match style.color.as_deref() {
        None => paint::contrasting(background),
        Some(c) => paint::parse_color(c).unwrap_or_else(|| {
            bad(format!("`{c}` is not a colour quire reads (#rrggbb)"));
            paint::contrasting(background)
        }),
    };
    let stroke = style.stroke.as_deref().and_then(|c| {
        let parsed = paint::parse_color(c);
        if parsed.is_none() {
            bad(format!(
                "stroke `{c}` is not a colour quire reads (#rrggbb)"
            ));
        }
        parsed
    });
    (color, stroke)
}

/// How rows sit across their line; centred when the style says nothing.
fn align(align: Option<TextAlign>) -> cosmic_text::Align {
    match align {
        Some(TextAlign::Left) => cosmic_text::Align::Left,
        Some(TextAlign::Right) => cosmic_text::Align::Right,
        Some(TextAlign::Center) | None => cosmic_text::Align::Center,
    }
}

/// Whether a node whose style says nothing of `vertical` is set in
/// columns (spec 12, "Vertical CJK"): a Japanese or Chinese translation
/// in a balloon (its region, else its box) at least 1.5 times as tall as
/// it is wide.
fn columns_by_default(locale: &str, node: &Node, rect: paint::Rect, scale: f64) -> bool {
    let language = locale.split(['-', '_']).next().unwrap_or("");
    if !["ja", "zh"].contains(&language.to_ascii_lowercase().as_str()) {
        return false;
    }
    let (w, h) = match region_pixels(node, scale) {
        Some(r) if !r.is_empty() => {
            let span = |i: usize| {
                let (lo, hi) = r.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
                    (lo.min(p[i]), hi.max(p[i]))
                });
                hi - lo
            };
            (span(0), span(1))
        }
        _ => (f64::from(rect.w), f64::from(rect.h)),
    };
    w > 0.0 && h >= 1.5 * w
}

/// A text node's region in the image's pixels.
fn region_pixels(node: &Node, scale: f64) -> Option<Vec<[f64; 2]>> {
    match &node.kind {
        NodeKind::Text {
            region: Some(r), ..
        } => Some(r.iter().map(|p| [p[0] * scale, p[1] * scale]).collect()),
        _ => None,
    }
}

/// `text` cut to the most characters `rect` can show at `min_size` (a glyph
/// at least a quarter of the size wide, a line the size high), and whether
/// it was cut.
fn within(text: &str, rect: paint::Rect, min_size: f32) -> (&str, bool) {
    let size = min_size.max(1.0);
    let per_line = (rect.w as f32 / (size * 0.25)).ceil();
    let lines = (rect.h as f32 / size).ceil();
    let most = (per_line * lines) as usize + 64;
    match text.char_indices().nth(most) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

/// PNG, compressed for speed: a rendered page is written once per render
/// and read by exports, which recompress nothing.
pub(crate) fn encode(image: &RgbaImage) -> Result<Vec<u8>, String> {
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    let rgb = image::DynamicImage::ImageRgba8(image.clone()).to_rgb8();
    let mut out = Vec::new();
    let encoder =
        PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Adaptive);
    rgb.write_with_encoder(encoder)
        .map_err(|e| format!("cannot encode the rendered page: {e}"))?;
    Ok(out)
}

/// The ops that make `blob` the page's rendered image (replacing the one it
/// had), above its source image.
pub fn store_ops(page: &Page, blob: BlobHash, digest: String) -> Vec<Op> {
    store_ops_as(page, ImageRole::Rendered, blob, digest)
}

/// The ops that make `blob` the page's image of `role` (replacing the one
/// it had), just above its source image; a cleaned image is hidden.
fn store_ops_as(page: &Page, role: ImageRole, blob: BlobHash, digest: String) -> Vec<Op> {
    let is_role = |n: &&Node| matches!(n.kind, NodeKind::Image { role: r, .. } if r == role);
    let mut ops: Vec<Op> = page
        .nodes
        .iter()
        .filter(is_role)
        .map(|n| Op::RemoveNode {
            page: page.id,
            id: n.id,
        })
        .collect();
    let left: Vec<&Node> = page.nodes.iter().filter(|n| !is_role(n)).collect();
    let (transform, at) = match left.iter().position(|n| {
        matches!(
            n.kind,
            NodeKind::Image {
                role: ImageRole::Source,
                ..
            }
        )
    }) {
        Some(i) => (left[i].transform, i + 1),
        None => (
            Transform {
                x: 0.0,
                y: 0.0,
                width: f64::from(page.width.unwrap_or(0)),
                height: f64::from(page.height.unwrap_or(0)),
                rotation: None,
            },
            0,
        ),
    };
    ops.push(Op::AddNode {
        page: page.id,
        node: NewNode {
            id: None,
            transform,
            visible: role != ImageRole::Cleaned,
            kind: NodeKind::Image {
                blob,
                role,
                opacity: 1.0,
                name: Some(
                    if role == ImageRole::Cleaned {
                        "cleaned"
                    } else {
                        "rendered"
                    }
                    .into(),
                ),
                rendered_from: Some(digest),
            },
        },
        at: Some(at),
    });
    ops
}

/// The pages of an image export, in page order: each image page's stored
/// render when it is current, else rendered now (on as many threads as
/// there are cores); text pages too when `with_text` (the PDF). `blob`
/// reads a stored image by its hash (the project's blob store). A page
/// whose image cannot be read fails the export, naming the page.
pub fn sheets(
    scene: &quire_model::scene::Scene,
    blob: &(dyn Fn(&quire_model::hash::BlobHash) -> quire_model::error::CoreResult<Vec<u8>> + Sync),
    fonts: &Fonts,
    settings: &Settings,
    with_text: bool,
) -> quire_model::error::CoreResult<Vec<export::Sheet>> {
    use quire_model::error::CoreError;
    let one = |page: &Page| -> quire_model::error::CoreResult<Option<export::Sheet>> {
        let Some((_, source, mask)) = sources(page) else {
            return Ok(with_text.then(|| export::Sheet::Text(page.clone())));
        };
        let failed = |e: String| CoreError::InvalidInput(format!("page `{}`: {e}", page.name));
        let png = match rendered(page) {
            Some((stored, _)) if !stale(page, settings) => blob(stored)?,
            _ => {
                let source = blob(source)?;
                let mask = mask.map(blob).transpose()?;
                render(page, &source, mask.as_deref(), fonts, settings)
                    .map_err(failed)?
                    .png
            }
        };
        let size = imagesize::blob_size(&png)
            .map_err(|e| failed(format!("the rendered page cannot be read: {e}")))?;
        let (width, height) = (u32::try_from(size.width), u32::try_from(size.height));
        let (Ok(width), Ok(height)) = (width, height) else {
            return Err(failed("the rendered page is too large".into()));
        };
        Ok(Some(export::Sheet::Picture { png, width, height }))
    };
    let threads = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .min(scene.pages.len().max(1));
    let mut results: Vec<Option<quire_model::error::CoreResult<Option<export::Sheet>>>> =
        (0..scene.pages.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let chunks: Vec<_> = results
            .chunks_mut(scene.pages.len().div_ceil(threads).max(1))
            .zip(
                scene
                    .pages
                    .chunks(scene.pages.len().div_ceil(threads).max(1)),
            )
            .map(|(out, pages)| {
                scope.spawn(move || {
                    for (slot, page) in out.iter_mut().zip(pages) {
                        *slot = Some(one(page));
                    }
                })
            })
            .collect();
        for chunk in chunks {
            let _ = chunk.join();
        }
    });
    let mut sheets = Vec::new();
    for result in results {
        let result = result.ok_or_else(|| CoreError::internal("a render thread stopped"))?;
        sheets.extend(result?);
    }
    Ok(sheets)
}
