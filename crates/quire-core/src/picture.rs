//! A page as a picture, for clients that look at it (a multimodal model
//! over MCP): the page's source, cleaned or rendered image scaled down so
//! its long side fits, its regions outlined when asked,
//! encoded for sending, with the factor that maps page units to its pixels.
//! And which made images a page has (cleaned, rendered) and whether each
//! is still current, for views that must say when they are out of date.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use image::{DynamicImage, ImageFormat};
use schemars::JsonSchema;
use serde::Serialize;

use super::engines::page_image;
use super::{Core, blocking};
use quire_model::error::{CoreError, CoreResult};
use quire_model::hash::BlobHash;
use quire_model::ids::{PageId, SessionId};
use quire_model::scene::{ImageRole, NodeKind, Page, Point};

/// The long side a picture may be asked for, in pixels.
pub const MAX_SIDE: std::ops::RangeInclusive<u32> = 16..=8192;

/// A page's made images: what a view shows besides the source.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageViews {
    /// The page with its text cleared (`clean`), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleaned: Option<MadeImage>,
    /// The page as rendered (`render`), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered: Option<MadeImage>,
}

/// An image an engine made from the page.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MadeImage {
    pub blob: BlobHash,
    /// False when the page changed since (its text, boxes, regions, masks
    /// or, for a render, the render settings): running the engine again
    /// would make another image.
    pub current: bool,
}

/// A page's image, ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// `image/png` when the image has transparency, else `image/jpeg`.
    pub mime_type: &'static str,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// Picture pixels per page unit (node boxes are in page units).
    pub scale: f64,
}

/// Decodes `bytes`, scales the image down (never up) so that its long
/// side is at most `max_side`, and encodes it. `page_width` is the page's
/// width in page units (the image's own width when the page has none).
/// An image over `max_pixels` is refused from its header, before anything
/// is decoded.
pub fn picture(
    bytes: &[u8],
    max_side: u32,
    page_width: Option<u32>,
    max_pixels: u64,
) -> CoreResult<Picture> {
    let image = quire_formats::images::decode(bytes, max_pixels)
        .map_err(|e| CoreError::InvalidInput(format!("the page image cannot be read: {e}")))?;
    let page_width = page_width
        .filter(|w| *w > 0)
        .map_or(f64::from(image.width()), f64::from);
    let long = image.width().max(image.height());
    // Area averaging: the right filter for scaling down, and fast.
    let image = if long > max_side {
        image.thumbnail(max_side, max_side)
    } else {
        image
    };
    let (mime_type, encoded) = encode(&image)?;
    Ok(Picture {
        mime_type,
        width: image.width(),
        height: image.height(),
        scale: f64::from(image.width()) / page_width,
        bytes: encoded,
    })
}

fn encode(image: &DynamicImage) -> CoreResult<(&'static str, Vec<u8>)> {
    let mut out = std::io::Cursor::new(Vec::new());
    let failed =
        |e: image::ImageError| CoreError::internal(format!("cannot encode the picture: {e}"));
    if image.color().has_alpha() {
        image.write_to(&mut out, ImageFormat::Png).map_err(failed)?;
        return Ok(("image/png", out.into_inner()));
    }
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
    rgb.write_with_encoder(encoder).map_err(failed)?;
    Ok(("image/jpeg", out.into_inner()))
}

/// How many pictures of pages are kept (each a few hundred KiB).
pub(crate) const RECENT_PAGES: usize = 8;

/// How many thumbnails are kept (a few KiB each at 256 px): every page of
/// a long chapter's strip.
pub(crate) const RECENT_THUMBNAILS: usize = 1024;

/// The last pictures made, by what they were made from, oldest first.
pub(crate) struct Recent {
    made: Mutex<VecDeque<(Key, Arc<Picture>)>>,
    capacity: usize,
}

type Key = (BlobHash, u32, Option<u32>);

impl Recent {
    pub(crate) fn new(capacity: usize) -> Recent {
        Recent {
            made: Mutex::new(VecDeque::new()),
            capacity,
        }
    }

    fn get(&self, key: &Key) -> Option<Arc<Picture>> {
        let recent = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        recent
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, p)| p.clone())
    }

    fn put(&self, key: Key, picture: Arc<Picture>) {
        let mut recent = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        recent.retain(|(k, _)| *k != key);
        if recent.len() >= self.capacity {
            recent.pop_front();
        }
        recent.push_back((key, picture));
    }
}

impl Core {
    /// `page` of the session and its image of `role` (its source, or the
    /// cleaned or rendered image an engine made) as a [`Picture`] whose
    /// long side is at most `max_side`, with its text nodes' regions
    /// outlined when `regions`. A page without that image (a text page,
    /// a page not yet cleaned or rendered) is refused, saying why.
    pub async fn page_picture(
        &self,
        session: SessionId,
        page: PageId,
        role: ImageRole,
        max_side: u32,
        regions: bool,
    ) -> CoreResult<(Page, Arc<Picture>)> {
        check_max_side(max_side)?;
        let snapshot = self.scene(session).await?;
        let page = snapshot
            .scene
            .page(page)
            .cloned()
            .ok_or_else(|| CoreError::not_found("page", page))?;
        let blob = match role {
            ImageRole::Source => page_image(&page).copied().ok_or_else(|| {
                CoreError::InvalidInput(format!(
                    "page `{}` has no image (it is a text page; read its text with the scene)",
                    page.name
                ))
            })?,
            ImageRole::Cleaned | ImageRole::Rendered => made(&page, role).ok_or_else(|| {
                let (what, engine) = if role == ImageRole::Cleaned {
                    ("cleaned", "clean")
                } else {
                    ("rendered", "render")
                };
                CoreError::InvalidInput(format!(
                    "page `{}` has no {what} image yet (run {engine})",
                    page.name
                ))
            })?,
            ImageRole::Custom => {
                return Err(CoreError::InvalidInput(
                    "a page is seen as its source, cleaned or rendered image".into(),
                ));
            }
        };
        let key = (blob, max_side, page.width);
        let made = match self.inner.pictures.get(&key) {
            Some(made) => made,
            None => {
                let made = self.make_picture(session, key).await?;
                self.inner.pictures.put(key, made.clone());
                made
            }
        };
        if !regions {
            return Ok((page, made));
        }
        let outlines: Vec<Vec<Point>> = page
            .nodes
            .iter()
            .filter(|n| n.visible)
            .filter_map(|n| match &n.kind {
                NodeKind::Text {
                    region: Some(r), ..
                } => Some(r.clone()),
                _ => None,
            })
            .collect();
        let _permit = self.decode_permit().await?;
        let drawn = blocking(move || outlined(&made, &outlines)).await?;
        Ok((page, Arc::new(drawn)))
    }

    /// The cleaned and rendered images of `page`, each with whether it is
    /// current (the render judged with the project's target language, as
    /// an export would render it).
    pub async fn page_views(&self, session: SessionId, page: PageId) -> CoreResult<PageViews> {
        let snapshot = self.scene(session).await?;
        let scene = snapshot.scene;
        let page = scene
            .page(page)
            .ok_or_else(|| CoreError::not_found("page", page))?;
        let made = |role: ImageRole| made(page, role);
        let settings = quire_render::Settings::new(
            &self.config().settings.get::<quire_render::RenderConfig>(),
            self.config().max_image_pixels,
            scene.project.target_language.as_deref(),
        )
        .for_project(&scene.project);
        Ok(PageViews {
            cleaned: made(ImageRole::Cleaned).map(|blob| MadeImage {
                blob,
                current: quire_render::cleaned::current(page) == Some(&blob),
            }),
            rendered: made(ImageRole::Rendered).map(|blob| MadeImage {
                blob,
                current: !quire_render::stale(page, &settings),
            }),
        })
    }

    /// The image blob `blob` scaled down so that its long side is at most
    /// `max_side` (a thumbnail). A blob that is not an image is refused.
    pub async fn blob_picture(
        &self,
        session: SessionId,
        blob: BlobHash,
        max_side: u32,
    ) -> CoreResult<Arc<Picture>> {
        check_max_side(max_side)?;
        let key = (blob, max_side, None);
        if let Some(made) = self.inner.thumbnails.get(&key) {
            return Ok(made);
        }
        let made = self.make_picture(session, key).await?;
        self.inner.thumbnails.put(key, made.clone());
        Ok(made)
    }

    /// A permit to decode an image: as many at once as there are cores.
    pub(crate) async fn decode_permit(&self) -> CoreResult<tokio::sync::SemaphorePermit<'_>> {
        self.inner
            .decoding
            .get_or_init(|| {
                let cores = std::thread::available_parallelism().map_or(2, usize::from);
                tokio::sync::Semaphore::new(cores)
            })
            .acquire()
            .await
            .map_err(|e| CoreError::internal(format!("decoding closed: {e}")))
    }

    /// Decodes and scales on the blocking pool, as many at a time as there
    /// are cores: a strip asking for a hundred thumbnails at once must not
    /// hold a hundred decoded pages in memory.
    async fn make_picture(
        &self,
        session: SessionId,
        (blob, max_side, width): Key,
    ) -> CoreResult<Arc<Picture>> {
        let bytes = self.read_blob(session, blob).await?;
        let _permit = self.decode_permit().await?;
        let max_pixels = self.config().max_image_pixels;
        Ok(Arc::new(
            blocking(move || picture(&bytes, max_side, width, max_pixels)).await?,
        ))
    }
}

/// The page's image of `role` that an engine made (cleaned, rendered).
fn made(page: &Page, role: ImageRole) -> Option<BlobHash> {
    page.nodes.iter().find_map(|n| match &n.kind {
        NodeKind::Image { blob, role: r, .. } if *r == role => Some(*blob),
        _ => None,
    })
}

/// `picture` with each region (in page units) outlined, 2 px wide, in a
/// magenta no page is likely to be printed in.
fn outlined(picture: &Picture, regions: &[Vec<Point>]) -> CoreResult<Picture> {
    let mut image = image::load_from_memory(&picture.bytes)
        .map_err(|e| CoreError::internal(format!("cannot read the picture back: {e}")))?
        .to_rgba8();
    for region in regions {
        draw_outline(&mut image, region, picture.scale, 2, [230, 0, 130]);
    }
    let image = if picture.mime_type == "image/png" {
        DynamicImage::ImageRgba8(image)
    } else {
        DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(image).to_rgb8())
    };
    let (mime_type, bytes) = encode(&image)?;
    Ok(Picture {
        mime_type,
        bytes,
        ..picture.clone()
    })
}

/// Draws the closed outline of `points` (in page units, `scale` image
/// pixels each) onto `image`, `thick` pixels wide, in `colour`; what
/// falls outside the image is left out.
pub fn draw_outline(
    image: &mut image::RgbaImage,
    points: &[Point],
    scale: f64,
    thick: u32,
    colour: [u8; 3],
) {
    let (w, h) = (i64::from(image.width()), i64::from(image.height()));
    let ink = image::Rgba([colour[0], colour[1], colour[2], 255]);
    for (k, a) in points.iter().enumerate() {
        let b = points[(k + 1) % points.len()];
        let (x0, y0) = (a[0] * scale, a[1] * scale);
        let (dx, dy) = (b[0] * scale - x0, b[1] * scale - y0);
        let steps = dx.abs().max(dy.abs()).ceil().max(1.0);
        // A segment's length in pixels: a small integer.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        for i in 0..=(steps as u32) {
            let t = f64::from(i) / steps;
            #[allow(clippy::cast_possible_truncation)]
            let (x, y) = ((x0 + dx * t).round() as i64, (y0 + dy * t).round() as i64);
            for ox in 0..i64::from(thick.max(1)) {
                for oy in 0..i64::from(thick.max(1)) {
                    let (px, py) = (x + ox, y + oy);
                    if (0..w).contains(&px) && (0..h).contains(&py) {
                        // Inside the image: the casts cannot truncate.
                        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
                        image.put_pixel(px as u32, py as u32, ink);
                    }
                }
            }
        }
    }
}

fn check_max_side(max_side: u32) -> CoreResult<()> {
    if MAX_SIDE.contains(&max_side) {
        return Ok(());
    }
    Err(CoreError::InvalidInput(format!(
        "maxSide {max_side} is outside {}..={}",
        MAX_SIDE.start(),
        MAX_SIDE.end()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX_PIXELS: u64 = quire_formats::images::DEFAULT_MAX_PIXELS;

    fn png(width: u32, height: u32, alpha: bool) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let image = if alpha {
            DynamicImage::ImageRgba8(image::RgbaImage::from_pixel(
                width,
                height,
                image::Rgba([10, 20, 30, 128]),
            ))
        } else {
            DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
                width,
                height,
                image::Rgb([200, 100, 50]),
            ))
        };
        image.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn a_large_page_is_scaled_down_to_its_long_side_and_keeps_its_shape() {
        let p = picture(&png(1200, 1800, false), 900, Some(1200), MAX_PIXELS).unwrap();
        assert_eq!((p.width, p.height), (600, 900));
        assert_eq!(p.mime_type, "image/jpeg");
        assert!((p.scale - 0.5).abs() < 1e-9, "{}", p.scale);
        let decoded = image::load_from_memory(&p.bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (600, 900));
    }

    #[test]
    fn a_small_page_is_not_scaled_up_and_transparency_stays_png() {
        let p = picture(&png(40, 30, true), 1568, None, MAX_PIXELS).unwrap();
        assert_eq!((p.width, p.height, p.mime_type), (40, 30, "image/png"));
        assert!((p.scale - 1.0).abs() < 1e-9);
    }

    #[test]
    fn bytes_that_are_no_image_are_refused() {
        let e = picture(b"not an image", 100, None, MAX_PIXELS).unwrap_err();
        assert_eq!(e.code(), "invalid_input");
    }
}
