//! The page exports: `png` (a zip of the rendered pages, `001.png`, …),
//! `cbz` (the same in a comic book archive with a `ComicInfo.xml`) and
//! `pdf` (one page per rendered image at its pixel size, text pages as
//! typeset text). A page whose stored render is current is used as it is;
//! one that is stale or was never rendered is rendered for the export (in
//! memory: an export changes nothing in the project). Renders are stored
//! as PNG; an export may [`Encoding`] them as JPEG or WebP at a quality,
//! which is what a group publishes (a chapter of JPEG scans is a tenth
//! the size as JPEG than as PNG).

use std::collections::HashMap;
use std::io::{Cursor, Write};

use cosmic_text::{Align, Attrs, Buffer, Family, Metrics, Shaping, Wrap, fontdb};
use krilla::geom::{Point, Size};
use krilla::page::PageSettings;
use krilla::text::{Font, GlyphId, KrillaGlyph};
use zip::write::SimpleFileOptions;

use super::fonts::Fonts;
use quire_model::scene::{NodeKind, Page};

/// One page of an export.
pub enum Sheet {
    /// A rendered image page (PNG bytes).
    Picture {
        png: Vec<u8>,
        width: u32,
        height: u32,
    },
    /// A page without an image: its text, set as text in the PDF.
    Text(Page),
}

/// How an export's page images are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// The stored render, as it is (lossless).
    #[default]
    Png,
    /// Baseline JPEG at this quality (1–100), on white where the render
    /// has transparency.
    Jpeg(u8),
    /// Lossy WebP (libwebp) at this quality (1–100), alpha kept.
    Webp(u8),
}

impl Encoding {
    pub fn extension(self) -> &'static str {
        match self {
            Encoding::Png => "png",
            Encoding::Jpeg(_) => "jpg",
            Encoding::Webp(_) => "webp",
        }
    }

    /// A render (PNG bytes) in this encoding.
    pub fn encode(self, png: Vec<u8>) -> Result<Vec<u8>, String> {
        let quality = match self {
            Encoding::Png => return Ok(png),
            Encoding::Jpeg(q) | Encoding::Webp(q) => q.clamp(1, 100),
        };
        let image = image::load_from_memory_with_format(&png, image::ImageFormat::Png)
            .map_err(|e| format!("cannot read a rendered page: {e}"))?;
        let (width, height) = (image.width(), image.height());
        let mut out = Vec::new();
        match self {
            Encoding::Jpeg(_) => {
                let mut rgb = image::RgbImage::new(width, height);
                for (to, from) in rgb.pixels_mut().zip(image.to_rgba8().pixels()) {
                    // Over white: the page a reader shows it on.
                    let a = u16::from(from[3]);
                    let over = |c: u8| ((u16::from(c) * a + 255 * (255 - a) + 127) / 255) as u8;
                    *to = image::Rgb([over(from[0]), over(from[1]), over(from[2])]);
                }
                image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
                    .encode_image(&rgb)
                    .map_err(|e| format!("cannot write a JPEG page: {e}"))?;
            }
            _ => {
                let rgba = image.to_rgba8();
                let encoded = webp::Encoder::from_rgba(rgba.as_raw(), width, height)
                    .encode_simple(false, f32::from(quality))
                    .map_err(|e| format!("cannot write a WebP page: {e:?}"))?;
                out.extend_from_slice(&encoded);
            }
        }
        Ok(out)
    }
}

/// A picture page as it goes into an export: its bytes, width and height.
pub type Picture = (Vec<u8>, u32, u32);

fn encode_all(pictures: Vec<Picture>, encoding: Encoding) -> Result<Vec<Picture>, String> {
    pictures
        .into_iter()
        .map(|(png, w, h)| Ok((encoding.encode(png)?, w, h)))
        .collect()
}

/// `001.png`, `002.png`, …: at least three digits, more when there are more
/// pages, so that any reader sorts them in order.
fn names(count: usize, extension: &'static str) -> impl Iterator<Item = String> {
    let width = count.to_string().len().max(3);
    (1..=count).map(move |i| format!("{i:0width$}.{extension}"))
}

fn zip_of(files: impl IntoIterator<Item = (String, Vec<u8>, bool)>) -> Result<Vec<u8>, String> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let fail = |e: &dyn std::fmt::Display| format!("cannot write the zip: {e}");
    for (name, bytes, compress) in files {
        // PNGs are compressed already; readers open stored entries fastest.
        let method = if compress {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        zip.start_file(
            name,
            SimpleFileOptions::default().compression_method(method),
        )
        .map_err(|e| fail(&e))?;
        zip.write_all(&bytes).map_err(|e| fail(&e))?;
    }
    Ok(zip.finish().map_err(|e| fail(&e))?.into_inner())
}

/// The rendered pages as `001.png`, … (or `.jpg`, `.webp`) in a zip.
pub fn png_zip(pictures: Vec<Picture>, encoding: Encoding) -> Result<Vec<u8>, String> {
    let count = pictures.len();
    let pictures = encode_all(pictures, encoding)?;
    zip_of(
        names(count, encoding.extension())
            .zip(pictures)
            .map(|(name, (bytes, _, _))| (name, bytes, false)),
    )
}

/// What `ComicInfo.xml` says about the book.
#[derive(Debug, Default)]
pub struct ComicInfo<'a> {
    pub title: &'a str,
    pub series: Option<&'a str>,
    /// The chapter or issue number, as written.
    pub number: Option<&'a str>,
    pub translator: Option<&'a str>,
    /// BCP 47 (`LanguageISO`): the language the pages are now in.
    pub language: Option<&'a str>,
    /// The language it was translated from (named in `Notes`: ComicInfo
    /// has no field for it).
    pub source_language: Option<&'a str>,
    /// Read right to left (`Manga` is `YesAndRightToLeft`, else `No`).
    pub right_to_left: bool,
}

/// The rendered pages in a CBZ: the images in order, then `ComicInfo.xml`
/// (the ComicInfo 2.1 schema's elements, in its order: title, series,
/// number, notes, translator, page count, language, manga, and a `Page`
/// entry with each image's size).
pub fn cbz(
    pictures: Vec<Picture>,
    encoding: Encoding,
    info: &ComicInfo<'_>,
) -> Result<Vec<u8>, String> {
    let count = pictures.len();
    let pictures = encode_all(pictures, encoding)?;
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComicInfo xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n",
    );
    let mut element = |name: &str, value: Option<&str>| {
        if let Some(value) = value {
            xml.push_str(&format!("  <{name}>{}</{name}>\n", escape(value)));
        }
    };
    let notes = match (info.source_language, info.language) {
        (Some(from), Some(to)) => Some(format!("Translated from {from} to {to}.")),
        (Some(from), None) => Some(format!("Translated from {from}.")),
        _ => None,
    };
    let count_text = count.to_string();
    element("Title", Some(info.title));
    element("Series", info.series);
    element("Number", info.number);
    element("Notes", notes.as_deref());
    element("Translator", info.translator);
    element("PageCount", Some(&count_text));
    element("LanguageISO", info.language);
    element(
        "Manga",
        Some(if info.right_to_left {
            "YesAndRightToLeft"
        } else {
            "No"
        }),
    );
    xml.push_str("  <Pages>\n");
    for (i, (bytes, width, height)) in pictures.iter().enumerate() {
        let kind = if i == 0 { " Type=\"FrontCover\"" } else { "" };
        xml.push_str(&format!(
            "    <Page Image=\"{i}\"{kind} ImageSize=\"{}\" ImageWidth=\"{width}\" ImageHeight=\"{height}\" />\n",
            bytes.len()
        ));
    }
    xml.push_str("  </Pages>\n</ComicInfo>\n");
    let images = names(count, encoding.extension())
        .zip(pictures)
        .map(|(name, (bytes, _, _))| (name, bytes, false));
    zip_of(images.chain([("ComicInfo.xml".to_owned(), xml.into_bytes(), true)]))
}

fn escape(text: &str) -> String {
    quick_xml::escape::escape(text).into_owned()
}

/// Text pages are A4, with margins of 2 cm, in points.
const A4: (f32, f32) = (595.0, 842.0);
const MARGIN: f32 = 56.0;
const TEXT_SIZE: f32 = 11.0;
const TITLE_SIZE: f32 = 16.0;

/// A PDF: each picture a page of its pixel size (one pixel a point), each
/// text page its name and its text nodes' translations (or, where there
/// is none, their source in grey) set in the render fonts, on as many A4
/// pages as they take.
pub fn pdf(
    sheets: Vec<Sheet>,
    encoding: Encoding,
    title: &str,
    fonts: &Fonts,
    locale: &str,
) -> Result<Vec<u8>, String> {
    let mut document = krilla::Document::new();
    document.set_metadata(krilla::metadata::Metadata::new().title(title.to_owned()));
    let mut shaper = fonts.take(locale)?;
    let mut embedded: HashMap<fontdb::ID, Font> = HashMap::new();
    for sheet in sheets {
        match sheet {
            Sheet::Picture { png, width, height } => {
                let bytes = encoding.encode(png)?.into();
                let image = match encoding {
                    Encoding::Png => krilla::image::Image::from_png(bytes, true),
                    Encoding::Jpeg(_) => krilla::image::Image::from_jpeg(bytes, true),
                    Encoding::Webp(_) => krilla::image::Image::from_webp(bytes, true),
                }
                .map_err(|e| format!("cannot embed a rendered page: {e}"))?;
                let size = Size::from_wh(width as f32, height as f32)
                    .ok_or("a rendered page has no size")?;
                let settings = PageSettings::from_wh(width as f32, height as f32)
                    .ok_or("a rendered page has no size")?;
                let mut page = document.start_page_with(settings);
                let mut surface = page.surface();
                surface.draw_image(image, size);
                surface.finish();
                page.finish();
            }
            Sheet::Text(text_page) => {
                let mut lines = Vec::new();
                set_paragraph(
                    &mut shaper,
                    &mut embedded,
                    &text_page.name,
                    TITLE_SIZE,
                    false,
                    &mut lines,
                )?;
                for node in &text_page.nodes {
                    let NodeKind::Text {
                        text, translation, ..
                    } = &node.kind
                    else {
                        continue;
                    };
                    match (translation.as_deref(), text.as_deref()) {
                        (Some(t), _) if !t.trim().is_empty() => {
                            set_paragraph(
                                &mut shaper,
                                &mut embedded,
                                t,
                                TEXT_SIZE,
                                false,
                                &mut lines,
                            )?;
                        }
                        (_, Some(s)) if !s.trim().is_empty() => {
                            set_paragraph(
                                &mut shaper,
                                &mut embedded,
                                s,
                                TEXT_SIZE,
                                true,
                                &mut lines,
                            )?;
                        }
                        _ => {}
                    }
                }
                write_lines(&mut document, lines)?;
            }
        }
    }
    fonts.give_back(shaper);
    document
        .finish()
        .map_err(|e| format!("cannot write the PDF: {e:?}"))
}

/// A line of text, laid out: its runs of one font each.
struct Line {
    /// Its height, and the space after it (between paragraphs).
    height: f32,
    after: f32,
    size: f32,
    grey: bool,
    /// The line's text, which the glyphs' ranges point into.
    text: String,
    runs: Vec<(Font, f32, Vec<KrillaGlyph>)>,
}

/// Lays `text` out in lines the width of an A4 page's text block; each
/// run of glyphs from one font becomes one run of the line, with the font
/// to embed.
fn set_paragraph(
    shaper: &mut super::fonts::Shaper,
    embedded: &mut HashMap<fontdb::ID, Font>,
    text: &str,
    size: f32,
    grey: bool,
    lines: &mut Vec<Line>,
) -> Result<(), String> {
    let line_height = size * 1.35;
    let mut buffer = Buffer::new(&mut shaper.system, Metrics::new(size, line_height));
    buffer.set_size(Some(A4.0 - 2.0 * MARGIN), None);
    buffer.set_wrap(Wrap::WordOrGlyph);
    buffer.set_text(
        text,
        &Attrs::new().family(Family::SansSerif),
        Shaping::Advanced,
        Some(Align::Left),
    );
    buffer.shape_until_scroll(&mut shaper.system, false);
    let first = lines.len();
    for run in buffer.layout_runs() {
        let mut runs = Vec::new();
        let mut start = 0;
        while start < run.glyphs.len() {
            let font_id = run.glyphs[start].font_id;
            let end = run.glyphs[start..]
                .iter()
                .position(|g| g.font_id != font_id)
                .map_or(run.glyphs.len(), |n| start + n);
            let font = match embedded.get(&font_id) {
                Some(f) => f.clone(),
                None => {
                    let loaded = shaper
                        .system
                        .db()
                        .with_face_data(font_id, |data, index| {
                            Font::new(data.to_vec().into(), index)
                        })
                        .flatten()
                        .ok_or("a font cannot be embedded in the PDF")?;
                    embedded.insert(font_id, loaded.clone());
                    loaded
                }
            };
            let glyphs: Vec<KrillaGlyph> = run.glyphs[start..end]
                .iter()
                .map(|g| KrillaGlyph {
                    glyph_id: GlyphId::new(u32::from(g.glyph_id)),
                    text_range: g.start..g.end,
                    x_advance: g.w / size,
                    x_offset: 0.0,
                    y_offset: 0.0,
                    y_advance: 0.0,
                    location: None,
                })
                .collect();
            runs.push((font, run.glyphs[start].x, glyphs));
            start = end;
        }
        lines.push(Line {
            height: line_height,
            after: 0.0,
            size,
            grey,
            text: run.text.to_owned(),
            runs,
        });
    }
    if let Some(last) = lines.get_mut(first..).and_then(<[Line]>::last_mut) {
        last.after = size * 0.6;
    }
    Ok(())
}

/// Puts the lines on A4 pages, a new page whenever one is full.
fn write_lines(document: &mut krilla::Document, lines: Vec<Line>) -> Result<(), String> {
    let settings = || PageSettings::from_wh(A4.0, A4.1).ok_or("A4 has a size");
    let mut pages: Vec<Vec<(f32, Line)>> = vec![Vec::new()];
    let mut y = MARGIN;
    for line in lines {
        if y + line.height > A4.1 - MARGIN && pages.last().is_some_and(|p| !p.is_empty()) {
            pages.push(Vec::new());
            y = MARGIN;
        }
        let (height, after) = (line.height, line.after);
        if let Some(page) = pages.last_mut() {
            page.push((y, line));
        }
        y += height + after;
    }
    for lines in pages {
        let mut page = document.start_page_with(settings()?);
        let mut surface = page.surface();
        for (y, line) in &lines {
            let grey = krilla::color::rgb::Color::new(110, 110, 110);
            let black = krilla::color::rgb::Color::new(0, 0, 0);
            surface.set_fill(Some(krilla::paint::Fill {
                paint: (if line.grey { grey } else { black }).into(),
                ..Default::default()
            }));
            for (font, x, glyphs) in &line.runs {
                let baseline = Point::from_xy(MARGIN + x, y + line.size);
                surface.draw_glyphs(baseline, glyphs, font.clone(), &line.text, line.size, false);
            }
        }
        surface.finish();
        page.finish();
    }
    Ok(())
}
