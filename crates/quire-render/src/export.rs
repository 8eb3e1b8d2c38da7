//! The page exports: `png` (a zip of the rendered pages, `001.png`, …),
//! `cbz` (the same in a comic book archive with a `ComicInfo.xml`) and
//! `pdf` (one page per rendered image at its pixel size, text pages as
//! typeset text). A page whose stored render is current is used as it is;
//! one that is stale or was never rendered is rendered for the export (in
//! memory: an export changes nothing in the project).

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

/// `001.png`, `002.png`, …: at least three digits, more when there are more
/// pages, so that any reader sorts them in order.
fn names(count: usize) -> impl Iterator<Item = String> {
    let width = count.to_string().len().max(3);
    (1..=count).map(move |i| format!("{i:0width$}.png"))
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

/// The rendered pages as `001.png`, … in a zip.
pub fn png_zip(pictures: Vec<(Vec<u8>, u32, u32)>) -> Result<Vec<u8>, String> {
    let count = pictures.len();
    zip_of(
        names(count)
            .zip(pictures)
            .map(|(name, (png, _, _))| (name, png, false)),
    )
}

/// What `ComicInfo.xml` says about the book.
pub struct ComicInfo<'a> {
    pub title: &'a str,
    /// BCP 47 (`LanguageISO`), when the project has a target language.
    pub language: Option<&'a str>,
}

/// The rendered pages in a CBZ: the images in order, then `ComicInfo.xml`
/// (the ComicInfo 2.0 schema: title, page count, language, and a `Page`
/// entry with each image's size).
pub fn cbz(pictures: Vec<(Vec<u8>, u32, u32)>, info: &ComicInfo<'_>) -> Result<Vec<u8>, String> {
    let count = pictures.len();
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComicInfo xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n",
    );
    xml.push_str(&format!("  <Title>{}</Title>\n", escape(info.title)));
    xml.push_str(&format!("  <PageCount>{count}</PageCount>\n"));
    if let Some(language) = info.language {
        xml.push_str(&format!(
            "  <LanguageISO>{}</LanguageISO>\n",
            escape(language)
        ));
    }
    xml.push_str("  <Pages>\n");
    for (i, (png, width, height)) in pictures.iter().enumerate() {
        let kind = if i == 0 { " Type=\"FrontCover\"" } else { "" };
        xml.push_str(&format!(
            "    <Page Image=\"{i}\"{kind} ImageSize=\"{}\" ImageWidth=\"{width}\" ImageHeight=\"{height}\" />\n",
            png.len()
        ));
    }
    xml.push_str("  </Pages>\n</ComicInfo>\n");
    let images = names(count)
        .zip(pictures)
        .map(|(name, (png, _, _))| (name, png, false));
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
                let image = krilla::image::Image::from_png(png.into(), true)
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
