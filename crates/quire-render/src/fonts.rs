//! The fonts text is set in: the comic face quire ships
//! ([`DEFAULT_FAMILY`]), the system's (fontconfig's directories, through
//! `fontdb`) and the files `render.fonts` names, read once per
//! process on first use. Shaping needs a mutable `FontSystem`, so each
//! rendering thread borrows one from a pool (one per language: fallback
//! order depends on it, e.g. Japanese before Chinese forms of a Han
//! character), all made from the one database.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cosmic_text::{FontSystem, SwashCache, fontdb};

use crate::RenderConfig;

/// The face text is set in when neither the node nor the config names
/// one: Comic Neue (SIL Open Font License 1.1, `fonts/OFL.txt`), shipped
/// inside quire in its four styles so a page renders the same on any
/// machine.
pub const DEFAULT_FAMILY: &str = "Comic Neue";

const SHIPPED: [&[u8]; 4] = [
    include_bytes!("../fonts/ComicNeue-Regular.otf"),
    include_bytes!("../fonts/ComicNeue-Bold.otf"),
    include_bytes!("../fonts/ComicNeue-Italic.otf"),
    include_bytes!("../fonts/ComicNeue-BoldItalic.otf"),
];

/// A font system and its glyph cache, borrowed for one page.
pub struct Shaper {
    pub system: FontSystem,
    pub cache: SwashCache,
    locale: String,
}

/// The process's fonts.
pub struct Fonts {
    config: RenderConfig,
    database: OnceLock<Result<Arc<fontdb::Database>, String>>,
    /// The characters some font has, read on first use.
    coverage: OnceLock<Coverage>,
    idle: Mutex<HashMap<String, Vec<Shaper>>>,
}

/// One bit per Unicode scalar value: whether any font maps it to a glyph.
struct Coverage(Vec<u64>);

impl Coverage {
    /// Every face's Unicode character maps, read once from the font files
    /// (tens of milliseconds for a system with CJK fonts; no face is
    /// loaded for shaping).
    fn of(db: &fontdb::Database) -> Coverage {
        let mut bits = vec![0u64; (u32::from(char::MAX) as usize >> 6) + 1];
        for face in db.faces() {
            db.with_face_data(face.id, |data, index| {
                let Ok(parsed) = ttf_parser::Face::parse(data, index) else {
                    return;
                };
                let Some(cmap) = parsed.tables().cmap else {
                    return;
                };
                for table in cmap.subtables.into_iter().filter(|t| t.is_unicode()) {
                    table.codepoints(|c| {
                        if let Some(word) = bits.get_mut(c as usize >> 6) {
                            *word |= 1 << (c & 63);
                        }
                    });
                }
            });
        }
        Coverage(bits)
    }

    fn has(&self, c: char) -> bool {
        let c = u32::from(c) as usize;
        self.0[c >> 6] & (1 << (c & 63)) != 0
    }
}

/// Characters set without a glyph of their own: white space, controls,
/// joiners and variation selectors, which character maps seldom list.
fn needs_no_glyph(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{2060}' | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

impl Fonts {
    pub fn new(config: RenderConfig) -> Fonts {
        Fonts {
            config,
            database: OnceLock::new(),
            coverage: OnceLock::new(),
            idle: Mutex::new(HashMap::new()),
        }
    }

    /// `text` without the characters no font has, and those characters
    /// (each once, in order). A shaper looks for such a character through
    /// every font file, once per character and per size tried: 5,000 of
    /// them took 14 s to render; without them, the rest sets as usual.
    pub fn covered<'t>(&self, shaper: &mut Shaper, text: &'t str) -> (Cow<'t, str>, Vec<char>) {
        let coverage = self
            .coverage
            .get_or_init(|| Coverage::of(shaper.system.db()));
        let known = |c: char| coverage.has(c) || needs_no_glyph(c);
        if text.chars().all(known) {
            return (Cow::Borrowed(text), Vec::new());
        }
        let mut missing: Vec<char> = Vec::new();
        let kept = text
            .chars()
            .filter(|c| {
                let ok = known(*c);
                if !ok && !missing.contains(c) && missing.len() < 64 {
                    missing.push(*c);
                }
                ok
            })
            .collect();
        (Cow::Owned(kept), missing)
    }

    /// The database, read on first use (a blocking call: it reads every
    /// font file's tables of names).
    fn database(&self) -> Result<Arc<fontdb::Database>, String> {
        self.database
            .get_or_init(|| load(&self.config).map(Arc::new))
            .clone()
    }

    /// A shaper for text in `locale` (a BCP 47 tag, e.g. `ja`), made when
    /// none is idle. Give it back with [`Fonts::give_back`].
    pub fn take(&self, locale: &str) -> Result<Shaper, String> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(locale)
            .and_then(Vec::pop);
        if let Some(shaper) = idle {
            return Ok(shaper);
        }
        let db = (*self.database()?).clone();
        Ok(Shaper {
            system: FontSystem::new_with_locale_and_db(locale.to_owned(), db),
            cache: SwashCache::new(),
            locale: locale.to_owned(),
        })
    }

    pub fn give_back(&self, shaper: Shaper) {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(shaper.locale.clone())
            .or_default()
            .push(shaper);
    }
}

/// Whether the database has a face of `family` (case-insensitive).
pub fn has_family(db: &fontdb::Database, family: &str) -> bool {
    db.faces().any(|face| {
        face.families
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case(family))
    })
}

fn load(config: &RenderConfig) -> Result<fontdb::Database, String> {
    let mut db = fontdb::Database::new();
    for face in SHIPPED {
        db.load_font_data(face.to_vec());
    }
    if config.system_fonts {
        db.load_system_fonts();
    }
    for path in &config.fonts {
        db.load_font_file(path)
            .map_err(|e| format!("cannot read the font file {}: {e}", path.display()))?;
    }
    let family = if config.font_family.is_empty() {
        DEFAULT_FAMILY
    } else {
        &config.font_family
    };
    db.set_sans_serif_family(family);
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped face is there with no system fonts at all, in its
    /// four styles, and is the default family.
    #[test]
    fn the_comic_face_ships_inside_quire() {
        let config = RenderConfig {
            system_fonts: false,
            ..RenderConfig::default()
        };
        let db = load(&config).unwrap();
        assert!(has_family(&db, DEFAULT_FAMILY));
        let styles: Vec<(u16, bool)> = db
            .faces()
            .map(|f| (f.weight.0, f.style == fontdb::Style::Italic))
            .collect();
        for want in [(400, false), (700, false), (400, true), (700, true)] {
            assert!(styles.contains(&want), "{want:?} in {styles:?}");
        }
        let query = fontdb::Query {
            families: &[fontdb::Family::SansSerif],
            ..fontdb::Query::default()
        };
        let id = db.query(&query).expect("a sans-serif face");
        assert_eq!(db.face(id).unwrap().families[0].0, DEFAULT_FAMILY);
    }
}
