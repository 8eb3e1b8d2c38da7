//! A page's `cleaned` image: its source with the source text removed
//! (`quire-vision`'s `clean`), made by the `clean` engine and used by
//! render as where it starts while it is current.
//!
//! Like a rendered image, the cleaned one records a digest of what it was
//! made from: the source image, the `text` and `inpaint` masks, and the
//! text nodes' regions. When any of them changes it is out of date, and
//! render goes back to the source.
//!
//! Only the text of nodes that [`clears`] is removed: a node with a
//! translation, or one a person asked to be cleaned. Lettering nobody has
//! read or translated keeps its pixels, so a page is never left with an
//! empty balloon where text was (spec 13, "Untranslated text stays").

use image::{GrayImage, RgbaImage};
use serde::Serialize;

use quire_model::hash::BlobHash;
use quire_model::ids::NodeId;
use quire_model::op::Op;
use quire_model::scene::{ImageRole, MaskRole, Node, NodeKind, Page, Point};

/// Changes whenever the same inputs would clean differently.
const CLEAN_VERSION: u32 = 2;

#[derive(Serialize)]
struct Inputs<'a> {
    version: u32,
    source: &'a BlobHash,
    text_mask: &'a BlobHash,
    inpaint_mask: Option<&'a BlobHash>,
    regions: Vec<(&'a NodeId, &'a [Point])>,
    cleared: Vec<&'a NodeId>,
}

/// Whether the source under a text node is cleared: `style.clean` when a
/// person set it, else whether the node has a translation to set there.
pub fn clears(node: &Node) -> bool {
    let NodeKind::Text {
        translation, style, ..
    } = &node.kind
    else {
        return false;
    };
    match style.as_ref().and_then(|s| s.clean) {
        Some(asked) => asked,
        None => translation.as_deref().is_some_and(|t| !t.trim().is_empty()),
    }
}

/// The visible text nodes whose source is cleared, and how many are left
/// as they are for want of a translation (not counting those a person
/// asked to keep).
pub fn cleared(page: &Page) -> (Vec<&Node>, usize) {
    let text = page
        .nodes
        .iter()
        .filter(|n| n.visible && matches!(n.kind, NodeKind::Text { .. }));
    let (cleared, kept): (Vec<&Node>, Vec<&Node>) = text.partition(|n| clears(n));
    let asked_to_keep = |n: &Node| matches!(&n.kind, NodeKind::Text { style: Some(s), .. } if s.clean == Some(false));
    let untranslated = kept.into_iter().filter(|n| !asked_to_keep(n)).count();
    (cleared, untranslated)
}

/// The page's text mask: its first `text` mask node's blob.
pub fn text_mask(page: &Page) -> Option<&BlobHash> {
    page.nodes.iter().find_map(|n| match &n.kind {
        NodeKind::Mask {
            blob,
            role: MaskRole::Text,
        } => Some(blob),
        _ => None,
    })
}

/// The regions of the page's text nodes, in page units.
pub fn regions(page: &Page) -> Vec<(&NodeId, &[Point])> {
    page.nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Text {
                region: Some(r), ..
            } => Some((&n.id, r.as_slice())),
            _ => None,
        })
        .collect()
}

/// A digest of what the page's cleaned image is made from; `None` when
/// the page has no source image or no text mask (nothing to clean).
pub fn digest(page: &Page) -> Option<String> {
    let (_, source) = crate::source(page)?;
    let inputs = Inputs {
        version: CLEAN_VERSION,
        source,
        text_mask: text_mask(page)?,
        inpaint_mask: crate::inpaint_mask(page),
        regions: regions(page),
        cleared: cleared(page).0.into_iter().map(|n| &n.id).collect(),
    };
    let json = serde_json::to_vec(&inputs).ok()?;
    Some(blake3::hash(&json).to_hex().to_string())
}

/// The page's cleaned image when it is current.
pub fn current(page: &Page) -> Option<&BlobHash> {
    let now = digest(page)?;
    page.nodes.iter().find_map(|n| match &n.kind {
        NodeKind::Image {
            blob,
            role: ImageRole::Cleaned,
            rendered_from: Some(from),
            ..
        } if *from == now => Some(blob),
        _ => None,
    })
}

/// The page cleaned: the source's bytes with the text mask's pixels (and
/// the inpaint mask's) removed inside the page's regions, of the nodes
/// that [`clears`] only; a PNG, and what was done. `model`, when given,
/// inpaints what the built-in methods would (`clean.backend = "onnx"`).
pub fn clean(
    page: &Page,
    source: &[u8],
    text: &[u8],
    inpaint: Option<&[u8]>,
    dilate: u32,
    max_pixels: u64,
    model: Option<&dyn quire_vision::clean::Inpaint>,
) -> Result<(Vec<u8>, quire_vision::clean::Cleaned), String> {
    let mut image: RgbaImage = quire_formats::images::decode(source, max_pixels)
        .map_err(|e| format!("the page image cannot be read: {e}"))?
        .to_rgba8();
    let mask = |bytes: &[u8], what: &str| -> Result<GrayImage, String> {
        Ok(quire_formats::images::decode(bytes, max_pixels)
            .map_err(|e| format!("the {what} mask cannot be read: {e}"))?
            .to_luma8())
    };
    let per_unit = crate::pixels_per_unit(page, image.width());
    let text = only_cleared(page, mask(text, "text")?, &image, per_unit, dilate);
    let inpaint = inpaint.map(|b| mask(b, "inpaint")).transpose()?;
    let regions: Vec<Vec<[f64; 2]>> = regions(page)
        .into_iter()
        .map(|(_, r)| {
            r.iter()
                .map(|p| [p[0] * per_unit, p[1] * per_unit])
                .collect()
        })
        .collect();
    let done = quire_vision::clean::clean_with(
        &mut image,
        &text,
        inpaint.as_ref(),
        &regions,
        dilate,
        model,
    )?;
    Ok((crate::encode(&image)?, done))
}

/// The text mask at the image's size with only the pixels of the nodes
/// that are cleared: inside a node's region, or, for a node without one,
/// its box grown by the dilation (a glyph's soft edge lies just outside).
fn only_cleared(
    page: &Page,
    text: GrayImage,
    image: &RgbaImage,
    per_unit: f64,
    dilate: u32,
) -> GrayImage {
    let (w, h) = image.dimensions();
    let mut text = if text.dimensions() == (w, h) {
        text
    } else {
        image::imageops::resize(&text, w, h, image::imageops::FilterType::Nearest)
    };
    let mut wanted = vec![false; w as usize * h as usize];
    for node in cleared(page).0 {
        match &node.kind {
            NodeKind::Text {
                region: Some(r), ..
            } => {
                let r: Vec<[f64; 2]> = r
                    .iter()
                    .map(|p| [p[0] * per_unit, p[1] * per_unit])
                    .collect();
                quire_vision::clean::each_inside(&r, w, h, |i| wanted[i] = true);
            }
            _ => {
                let t = &node.transform;
                let grow = f64::from(dilate) + 1.0;
                let corners = [
                    [t.x * per_unit - grow, t.y * per_unit - grow],
                    [(t.x + t.width) * per_unit + grow, t.y * per_unit - grow],
                    [
                        (t.x + t.width) * per_unit + grow,
                        (t.y + t.height) * per_unit + grow,
                    ],
                    [t.x * per_unit - grow, (t.y + t.height) * per_unit + grow],
                ];
                quire_vision::clean::each_inside(&corners, w, h, |i| wanted[i] = true);
            }
        }
    }
    for (p, keep) in text.pixels_mut().zip(wanted) {
        if !keep {
            p[0] = 0;
        }
    }
    text
}

/// The ops that make `blob` the page's cleaned image (replacing the one
/// it had), just above its source image and hidden: a view a person turns
/// to, which render starts from.
pub fn store_ops(page: &Page, blob: BlobHash, digest: String) -> Vec<Op> {
    crate::store_ops_as(page, ImageRole::Cleaned, blob, digest)
}
