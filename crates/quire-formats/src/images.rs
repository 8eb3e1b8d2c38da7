//! Image files as quire takes them in and decodes them: PNG, JPEG and WebP,
//! their size read from the header and held to `limits.max_image_pixels`
//! before anything is decoded or allocated.
//!
//! [`check`] is what an import runs on every page image: the header, then
//! the whole file. The stream must reach its end marker (JPEG decoders
//! fill a truncated scan with grey without a word, so that is checked by
//! walking the markers), the file must be no bigger than its pixels can
//! need, and it must decode. [`decode`] is what everything that draws a
//! blob uses (thumbnails, pictures for agents, render).

use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// The default of `limits.max_image_pixels`: 100 megapixels (a 10,000 ×
/// 10,000 page; a scanned double spread at 600 dpi is about 60).
pub const DEFAULT_MAX_PIXELS: u64 = 100_000_000;

/// Bytes an image file may hold besides its pixels (ICC profiles, EXIF,
/// XMP, a phone's preview images after a JPEG's end).
const METADATA_BYTES: u64 = 16 << 20;

/// The most bytes per pixel a file can need: 16-bit RGBA, uncompressed.
const BYTES_PER_PIXEL: u64 = 8;

/// The image formats quire takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Png,
    Jpeg,
    Webp,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Png => "PNG",
            Kind::Jpeg => "JPEG",
            Kind::Webp => "WebP",
        }
    }

    fn format(self) -> ImageFormat {
        match self {
            Kind::Png => ImageFormat::Png,
            Kind::Jpeg => ImageFormat::Jpeg,
            Kind::Webp => ImageFormat::WebP,
        }
    }
}

/// What the header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub width: u32,
    pub height: u32,
}

impl Header {
    fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// The most bytes a file of this image can reasonably hold.
    pub fn max_file_bytes(&self) -> u64 {
        self.pixels() * BYTES_PER_PIXEL + METADATA_BYTES
    }
}

/// The kind and size of an image from its first bytes, refused when it is
/// not PNG, JPEG or WebP, says a zero size, or is over `max_pixels`.
/// Nothing is decoded. The error does not name the file; callers do.
pub fn header(bytes: &[u8], max_pixels: u64) -> Result<Header, String> {
    use imagesize::ImageType;
    let kind = match imagesize::image_type(bytes) {
        Ok(ImageType::Png) => Kind::Png,
        Ok(ImageType::Jpeg) => Kind::Jpeg,
        Ok(ImageType::Webp) => Kind::Webp,
        Ok(other) => {
            return Err(format!(
                "unsupported image format {other:?} (use PNG, JPEG or WebP)"
            ));
        }
        Err(_) => return Err("not an image (use PNG, JPEG or WebP)".into()),
    };
    let size = imagesize::blob_size(bytes)
        .map_err(|e| format!("corrupt or truncated {} ({e})", kind.name()))?;
    let (Ok(width), Ok(height)) = (u32::try_from(size.width), u32::try_from(size.height)) else {
        return Err(format!(
            "corrupt {} (size {} × {})",
            kind.name(),
            size.width,
            size.height
        ));
    };
    if width == 0 || height == 0 {
        return Err(format!("corrupt {} (size {width} × {height})", kind.name()));
    }
    let header = Header {
        kind,
        width,
        height,
    };
    if header.pixels() > max_pixels {
        return Err(format!(
            "{width} × {height} pixels is {:.1} megapixels; at most {:.1} are allowed \
             (limits.max_image_pixels)",
            header.pixels() as f64 / 1e6,
            max_pixels as f64 / 1e6
        ));
    }
    Ok(header)
}

/// The whole file checked: [`header`], a stream that reaches its end, no
/// more bytes than its pixels can need, and a full decode.
pub fn check(bytes: &[u8], max_pixels: u64) -> Result<Header, String> {
    let header = header(bytes, max_pixels)?;
    let len = bytes.len() as u64;
    if len > header.max_file_bytes() {
        return Err(format!(
            "the file is {len} bytes, more than a {} × {} image can need ({} bytes)",
            header.width,
            header.height,
            header.max_file_bytes()
        ));
    }
    let end = match header.kind {
        Kind::Png => png_end(bytes),
        Kind::Jpeg => jpeg_end(bytes),
        Kind::Webp => webp_end(bytes),
    };
    if end.is_none() {
        return Err(format!(
            "truncated {}: the file ends before the image does",
            header.kind.name()
        ));
    }
    decode_as(bytes, header, max_pixels)?;
    Ok(header)
}

/// Decodes an image for drawing: its header first (refused past
/// `max_pixels` before anything is allocated), then the pixels, the
/// decoder held to what that size needs.
pub fn decode(bytes: &[u8], max_pixels: u64) -> Result<DynamicImage, String> {
    let header = header(bytes, max_pixels)?;
    decode_as(bytes, header, max_pixels)
}

fn decode_as(bytes: &[u8], header: Header, max_pixels: u64) -> Result<DynamicImage, String> {
    let mut reader = ImageReader::with_format(std::io::Cursor::new(bytes), header.kind.format());
    let mut limits = Limits::default();
    limits.max_image_width = Some(header.width);
    limits.max_image_height = Some(header.height);
    // What the largest allowed image needs, whatever the decoder asks for.
    limits.max_alloc = Some(max_pixels.saturating_mul(BYTES_PER_PIXEL).max(64 << 20));
    reader.limits(limits);
    reader
        .decode()
        .map_err(|e| format!("the {} cannot be decoded ({e})", header.kind.name()))
}

fn u32_be(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// Where a PNG's `IEND` chunk ends, walking the chunks by their lengths.
fn png_end(bytes: &[u8]) -> Option<usize> {
    let mut at = 8;
    loop {
        let len = usize::try_from(u32_be(bytes, at)?).ok()?;
        let kind = bytes.get(at + 4..at + 8)?;
        let end = at.checked_add(12)?.checked_add(len)?;
        if end > bytes.len() {
            return None;
        }
        if kind == b"IEND" {
            return Some(end);
        }
        at = end;
    }
}

/// Where a JPEG's `EOI` marker ends: segments skipped by their lengths,
/// entropy-coded data scanned for the next marker (`FF` followed by
/// neither `00`, a stuffed byte, nor a restart marker).
fn jpeg_end(bytes: &[u8]) -> Option<usize> {
    let mut at = 2;
    loop {
        if *bytes.get(at)? != 0xFF {
            return None;
        }
        // Fill bytes before a marker.
        while *bytes.get(at + 1)? == 0xFF {
            at += 1;
        }
        let marker = *bytes.get(at + 1)?;
        at += 2;
        match marker {
            0xD9 => return Some(at),
            0x01 | 0xD0..=0xD7 => continue,
            _ => {}
        }
        let len = usize::from(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]));
        at += len;
        if at > bytes.len() {
            return None;
        }
        if marker == 0xDA {
            // The scan runs to the next marker.
            loop {
                let ff = at + bytes.get(at..)?.iter().position(|b| *b == 0xFF)?;
                match *bytes.get(ff + 1)? {
                    0x00 | 0xD0..=0xD7 | 0xFF => at = ff + 1,
                    _ => {
                        at = ff;
                        break;
                    }
                }
            }
        }
    }
}

/// Where a WebP's RIFF container ends, as its header says.
fn webp_end(bytes: &[u8]) -> Option<usize> {
    let size = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?);
    let end = 8usize.checked_add(usize::try_from(size).ok()?)?;
    (end <= bytes.len()).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage};

    fn encoded(format: ImageFormat, w: u32, h: u32) -> Vec<u8> {
        let image = RgbImage::from_fn(w, h, |x, y| Rgb([(x * 7) as u8, (y * 3) as u8, 90]));
        let mut out = std::io::Cursor::new(Vec::new());
        DynamicImage::ImageRgb8(image)
            .write_to(&mut out, format)
            .expect("encodes");
        out.into_inner()
    }

    #[test]
    fn whole_images_pass_and_their_end_is_found() {
        for format in [ImageFormat::Png, ImageFormat::Jpeg, ImageFormat::WebP] {
            let bytes = encoded(format, 40, 30);
            let header = check(&bytes, DEFAULT_MAX_PIXELS).expect("a whole image passes");
            assert_eq!((header.width, header.height), (40, 30), "{format:?}");
            let end = match header.kind {
                Kind::Png => png_end(&bytes),
                Kind::Jpeg => jpeg_end(&bytes),
                Kind::Webp => webp_end(&bytes),
            };
            assert_eq!(end, Some(bytes.len()), "{format:?}");
        }
    }

    #[test]
    fn a_truncated_image_is_refused_by_what_is_wrong() {
        for format in [ImageFormat::Png, ImageFormat::Jpeg, ImageFormat::WebP] {
            let bytes = encoded(format, 64, 64);
            let cut = &bytes[..bytes.len() * 2 / 3];
            let e = check(cut, DEFAULT_MAX_PIXELS).expect_err("truncated");
            assert!(e.contains("truncated"), "{format:?}: {e}");
        }
    }

    #[test]
    fn the_pixel_limit_is_read_from_the_header() {
        let bytes = encoded(ImageFormat::Png, 100, 100);
        let e = header(&bytes, 9_999).expect_err("over the limit");
        assert!(e.contains("limits.max_image_pixels"), "{e}");
        assert!(decode(&bytes, 9_999).is_err());
        assert!(decode(&bytes, 10_000).is_ok());
    }

    #[test]
    fn a_file_bigger_than_its_pixels_need_is_refused() {
        let mut bytes = encoded(ImageFormat::Png, 4, 4);
        bytes.resize(bytes.len() + (17 << 20), 0);
        let e = check(&bytes, DEFAULT_MAX_PIXELS).expect_err("padded");
        assert!(e.contains("more than a 4 × 4 image can need"), "{e}");
    }
}
