//! The files quire reads and writes, as functions between bytes and model
//! values: page images ([`images`]), comic archives ([`comic`]), subtitle
//! files ([`subtitles`]), XLIFF and PO ([`xliff`], [`po`], read into
//! [`units`]), glossary files ([`glossary`]), translation memories
//! ([`tmx`]), and text in whatever encoding it came in ([`text`]).
//! Nothing here opens a file,
//! holds a project or knows the core: a reader takes bytes or text and
//! returns values or a [`CoreError::InvalidInput`] that says what is wrong
//! and where; a writer takes a scene and returns the file.
//!
//! [`CoreError::InvalidInput`]: quire_model::error::CoreError::InvalidInput

pub mod comic;
pub mod glossary;
pub mod images;
mod inline;
pub mod po;
pub mod subtitles;
pub mod text;
pub mod tmx;
pub mod units;
pub mod xliff;
pub mod xml;

/// What a ZIP archive may hold, read as it inflates whatever its entries
/// declare: content bytes and entry count (zip bombs).
pub struct ArchiveLimits {
    pub bytes: u64,
    pub entries: usize,
}

/// The limits of every archive quire unpacks: a comic or a project.
pub const ARCHIVE_LIMITS: ArchiveLimits = ArchiveLimits {
    // 8 GiB of content.
    bytes: 8 << 30,
    // Each entry is a file written (a project) or a page read (a comic).
    entries: 200_000,
};
