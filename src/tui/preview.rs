//! The page preview of the detail pane: an image page's picture with its
//! text boxes (and their regions, the balloons) drawn on it in their
//! state's colour, shown through the
//! terminal's graphics protocol (kitty, iTerm2, sixel) or half-blocks
//! (`ratatui-image`). The runtime reads and decodes the image
//! (`Effect::LoadPicture`); `refresh` (called after every update) asks for
//! it when the selection needs it and builds the protocol for the pane's
//! size; the view only draws what is built.

use std::sync::Arc;

use image::{DynamicImage, Rgba, RgbaImage};
use ratatui::layout::Size;
use ratatui_image::Resize;
use ratatui_image::picker::Picker;
use ratatui_image::protocol::Protocol;

use super::app::{App, Effect, Route};
use super::layout::{areas, inner, session_areas};
use quire_core::picture::draw_outline;
use quire_model::hash::BlobHash;
use quire_model::ids::{PageId, SessionId};
use quire_model::scene::{NodeKind, Page, Point, TextState, Transform};

/// The long side the runtime scales a page image down to before it is
/// kept (plenty for any terminal pane, small to draw boxes on).
pub const MAX_SIDE: u32 = 1024;

/// A text box, its region (its balloon) when it has one, and its colour,
/// as drawn.
type Drawn = (Transform, Option<Vec<Point>>, [u8; 3]);

/// A page picture and what was built from it.
#[derive(Clone)]
pub struct Preview {
    pub session: SessionId,
    pub page: PageId,
    pub blob: BlobHash,
    /// The decoded, scaled image, or why it could not be read.
    pub image: Result<Arc<DynamicImage>, String>,
    /// The page width in page units (node boxes are in them).
    pub page_width: Option<u32>,
    /// What the protocol was built for: boxes and cell size.
    built: Option<(Vec<Drawn>, Size)>,
    pub protocol: Option<Protocol>,
}

impl std::fmt::Debug for Preview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preview")
            .field("page", &self.page)
            .field("blob", &self.blob)
            .field("built", &self.built)
            .finish_non_exhaustive()
    }
}

impl Preview {
    pub fn new(
        session: SessionId,
        page: PageId,
        blob: BlobHash,
        image: Result<Arc<DynamicImage>, String>,
    ) -> Self {
        Preview {
            session,
            page,
            blob,
            image,
            page_width: None,
            built: None,
            protocol: None,
        }
    }
}

/// The graphics protocol of this terminal, from its environment: kitty's
/// own, iTerm2's (iTerm2, WezTerm), sixel (foot, mlterm), else
/// half-blocks, which every terminal shows. It is not asked on stdin: a terminal that does not answer would
/// leave the query reading, and eating, the keys typed next.
pub fn picker() -> Picker {
    use ratatui_image::picker::ProtocolType;
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let in_tmux = !env("TMUX").is_empty();
    let protocol = if in_tmux {
        ProtocolType::Halfblocks
    } else if !env("KITTY_WINDOW_ID").is_empty() || env("TERM").contains("kitty") {
        ProtocolType::Kitty
    } else if matches!(env("TERM_PROGRAM").as_str(), "iTerm.app" | "WezTerm") {
        ProtocolType::Iterm2
    } else if env("TERM").starts_with("foot") || env("TERM").starts_with("mlterm") {
        ProtocolType::Sixel
    } else {
        ProtocolType::Halfblocks
    };
    // Cells are taken as 10×20 pixels (what the crate assumes without a
    // query); the image keeps its proportions within that.
    let mut picker = Picker::halfblocks();
    picker.set_protocol_type(protocol);
    picker
}

/// A box's colour: as the node list colours its state.
fn colour(kind: &NodeKind) -> [u8; 3] {
    match kind.state() {
        Some(TextState::Translated) if kind.is_machine_work() => [200, 0, 200],
        Some(TextState::Translated) => [0, 160, 200],
        Some(TextState::Reviewed) => [0, 170, 0],
        Some(TextState::Final) => [30, 60, 230],
        _ => [230, 40, 40],
    }
}

/// The text boxes of a page, with their regions and colours.
fn boxes(page: &Page) -> Vec<Drawn> {
    page.nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Text { region, .. } => Some((n.transform, region.clone(), colour(&n.kind))),
            _ => None,
        })
        .collect()
}

/// Draws each box's outline, `thick` pixels wide, and its region's
/// outline, half as wide, onto `image`; `scale` maps page units to its
/// pixels.
pub fn draw_boxes(image: &mut RgbaImage, boxes: &[Drawn], scale: f64, thick: u32) {
    let (w, h) = image.dimensions();
    if w == 0 || h == 0 {
        return;
    }
    for (_, region, colour) in boxes {
        if let Some(points) = region {
            draw_outline(image, points, scale, (thick / 2).max(1), *colour);
        }
    }
    let px = |v: f64, max: u32| ((v * scale).round().max(0.0) as u32).min(max - 1);
    for (t, _, [r, g, b]) in boxes {
        if t.width <= 0.0 || t.height <= 0.0 {
            continue;
        }
        let (x0, y0) = (px(t.x, w), px(t.y, h));
        let (x1, y1) = (px(t.x + t.width, w), px(t.y + t.height, h));
        let colour = Rgba([*r, *g, *b, 255]);
        for d in 0..thick.max(1) {
            for x in x0..=x1 {
                image.put_pixel(x, (y0 + d).min(h - 1), colour);
                image.put_pixel(x, y1.saturating_sub(d), colour);
            }
            for y in y0..=y1 {
                image.put_pixel((x0 + d).min(w - 1), y, colour);
                image.put_pixel(x1.saturating_sub(d), y, colour);
            }
        }
    }
}

/// Where the picture goes: the detail pane, under its heading line.
fn picture_area(app: &App) -> Option<Size> {
    let screen = ratatui::layout::Rect::new(0, 0, app.width, app.height);
    let detail = inner(session_areas(app, areas(app, screen).body).detail);
    (detail.height > 2 && detail.width > 2).then(|| Size::new(detail.width, detail.height - 1))
}

/// After every update: asks for the selected image page's picture when it
/// is not there, and builds the protocol when the boxes or the pane's size
/// changed.
pub fn refresh(app: &mut App, fx: &mut Vec<Effect>) {
    let Route::Session(session) = app.route else {
        return;
    };
    let Some(page) = app
        .desk
        .scene
        .as_ref()
        .and_then(|(_, s)| s.scene.pages.get(app.desk.page_selected))
    else {
        return;
    };
    // An image node shows its own picture: the source, or the page as the
    // `render` engine set it (the node after the source).
    let Some(blob) = page
        .nodes
        .get(app.desk.node_selected)
        .and_then(|n| match &n.kind {
            NodeKind::Image { blob, .. } => Some(*blob),
            _ => None,
        })
    else {
        return;
    };
    let (page_id, page_width, page_boxes) = (page.id, page.width, boxes(page));
    let current = app
        .desk
        .preview
        .as_ref()
        .is_some_and(|p| p.session == session && p.blob == blob);
    if !current {
        app.desk.preview = Some(Preview::new(
            session,
            page_id,
            blob,
            Err("loading the picture…".into()),
        ));
        fx.push(Effect::LoadPicture { session, blob });
        return;
    }
    let Some(size) = picture_area(app) else {
        return;
    };
    let picker = app.prefs.picker.clone().unwrap_or_else(Picker::halfblocks);
    let Some(preview) = app.desk.preview.as_mut() else {
        return;
    };
    let wanted = (page_boxes, size);
    if preview.built.as_ref() == Some(&wanted) || preview.image.is_err() {
        return;
    }
    let Ok(image) = &preview.image else { return };
    let mut drawn = image.to_rgba8();
    let units = page_width
        .filter(|w| *w > 0)
        .map_or(f64::from(image.width()), f64::from);
    let scale = f64::from(drawn.width()) / units;
    // At least one cell's worth of pixels (a half cell down), so that the
    // lines survive the scaling to the pane.
    let thick = (drawn.width() / u32::from(size.width.max(1)))
        .max(drawn.height() / (2 * u32::from(size.height.max(1))))
        .max(2);
    draw_boxes(&mut drawn, &wanted.0, scale, thick);
    preview.protocol = picker
        .new_protocol(DynamicImage::ImageRgba8(drawn), size, Resize::Fit(None))
        .ok();
    preview.page = page_id;
    preview.page_width = page_width;
    preview.built = Some(wanted);
}

/// Decodes a page's picture (already scaled down to [`MAX_SIDE`] by the
/// core), for the runtime, off the loop.
pub fn decode(bytes: &[u8]) -> Result<Arc<DynamicImage>, String> {
    let side = u64::from(MAX_SIDE);
    let image = quire_formats::images::decode(bytes, side * side)
        .map_err(|e| format!("the page image cannot be read: {e}"))?;
    Ok(Arc::new(image))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_are_drawn_scaled_and_clamped() {
        let mut image = RgbaImage::from_pixel(100, 50, Rgba([255, 255, 255, 255]));
        let t = Transform {
            x: 20.0,
            y: 10.0,
            width: 100.0,
            height: 40.0,
            rotation: None,
        };
        // The page is 200 units wide: half scale; the box runs off the right.
        draw_boxes(&mut image, &[(t, None, [0, 170, 0])], 0.5, 2);
        assert_eq!(image.get_pixel(10, 5).0, [0, 170, 0, 255]);
        assert_eq!(image.get_pixel(30, 25).0, [0, 170, 0, 255]);
        assert_eq!(
            image.get_pixel(30, 15).0,
            [255, 255, 255, 255],
            "inside stays"
        );
        assert_eq!(
            image.get_pixel(5, 5).0,
            [255, 255, 255, 255],
            "outside stays"
        );
    }

    #[test]
    fn a_region_is_drawn_around_its_box() {
        let mut image = RgbaImage::from_pixel(100, 100, Rgba([255, 255, 255, 255]));
        let t = Transform {
            x: 40.0,
            y: 40.0,
            width: 20.0,
            height: 20.0,
            rotation: None,
        };
        let region = vec![[10.0, 10.0], [90.0, 10.0], [90.0, 90.0], [10.0, 90.0]];
        draw_boxes(&mut image, &[(t, Some(region), [200, 0, 200])], 1.0, 2);
        assert_eq!(
            image.get_pixel(50, 10).0,
            [200, 0, 200, 255],
            "the region's top"
        );
        assert_eq!(
            image.get_pixel(50, 40).0,
            [200, 0, 200, 255],
            "the box's top"
        );
        assert_eq!(image.get_pixel(50, 25).0, [255, 255, 255, 255], "between");
    }
}
