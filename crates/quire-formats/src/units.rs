//! Translation files as units: what [`crate::xliff`] and [`crate::po`]
//! read a file into, for the core to merge into a project (matching units
//! to nodes, conflicts, states: `Core::import_translations`); a file read
//! whole to start a page from ([`Document`], [`read_document`]); and the
//! same file written back with a page's translations in it
//! ([`write_back`]).

use quire_model::error::CoreResult;
use quire_model::ids::NodeId;
use quire_model::scene::TextState;
use quire_model::suggestion::Suggestion;
use serde::{Deserialize, Serialize};

/// The formats translations come back in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TranslationFormat {
    Xliff,
    Po,
}

impl TranslationFormat {
    /// From a file name's extension.
    pub fn from_path(path: &str) -> Option<TranslationFormat> {
        let lower = path.to_ascii_lowercase();
        // `.poxliff`: translate-toolkit's PO-flavoured XLIFF (po2xliff).
        if lower.ends_with(".xlf") || lower.ends_with(".xliff") || lower.ends_with(".poxliff") {
            Some(TranslationFormat::Xliff)
        } else if lower.ends_with(".po") || lower.ends_with(".pot") {
            Some(TranslationFormat::Po)
        } else {
            None
        }
    }

    /// From a file's text, when there is no name to go by: XML is XLIFF,
    /// anything else is taken for PO.
    pub fn sniff(content: &str) -> TranslationFormat {
        if content
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with('<')
        {
            TranslationFormat::Xliff
        } else {
            TranslationFormat::Po
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TranslationFormat::Xliff => "XLIFF",
            TranslationFormat::Po => "PO",
        }
    }
}

/// One translation unit as a parser read it.
#[derive(Debug, Default, PartialEq)]
pub struct Unit {
    /// The id as the file has it (reports quote it).
    pub id: String,
    /// The node it names, when the id is one of ours.
    pub node: Option<NodeId>,
    pub source: String,
    /// `None`: the file says nothing; `Some("")`: no translation.
    pub target: Option<String>,
    /// The state the file gives (XLIFF); PO has none.
    pub state: Option<TextState>,
    /// Whether the file marks the translation as a machine's (PO `fuzzy`),
    /// when the format can say so.
    pub machine: Option<bool>,
    /// Why the unit cannot be merged as it is (PO plural forms).
    pub unmergeable: Option<&'static str>,
    /// Its key in the file, for a page made from a file like it
    /// ([`quire_model::scene::Entry`]): the key and the form.
    pub key: Option<(String, Option<u32>)>,
}

/// A translation file read whole, to make a page of: a [`DocUnit`] per
/// translatable segment, with what the file declares.
#[derive(Debug, Default)]
pub struct Document {
    pub units: Vec<DocUnit>,
    /// The language the file translates into, as a BCP 47 tag when it
    /// names one (PO `Language: pt_BR` is `pt-BR`).
    pub language: Option<String>,
    pub source_language: Option<String>,
    /// Units the file says not to translate (XLIFF `translate="no"`):
    /// kept in the file as they are, not made nodes.
    pub locked: usize,
    /// What the file is, for messages: `PO`, `XLIFF 1.2`, `XLIFF 2.0`.
    pub kind: &'static str,
}

/// One segment of a [`Document`].
#[derive(Debug, Default, PartialEq)]
pub struct DocUnit {
    pub entry: quire_model::scene::Entry,
    pub source: String,
    pub target: Option<String>,
    pub state: Option<TextState>,
    /// The file marks the translation as needing review (PO `fuzzy`,
    /// XLIFF 1.2 `needs-review-*`): a machine's.
    pub machine: bool,
}

/// What a page says of one segment, for [`write_back`].
#[derive(Debug, Clone, PartialEq)]
pub struct Filled {
    /// `None`: not translated.
    pub translation: Option<String>,
    pub state: TextState,
    /// A translation to check: a machine's that nobody has reviewed, or
    /// one whose source a person changed since (PO `fuzzy`, XLIFF
    /// `needs-review-translation`).
    pub machine: bool,
    /// The open suggestions, most votes first, on the entry's first form
    /// or segment only: PO translator comments, XLIFF 1.2 `<alt-trans>`,
    /// XLIFF 2.0 notes (spec 10, "Suggestions").
    pub suggestions: Vec<Suggestion>,
}

/// A page's segment by its entry's key and form; `None` leaves the
/// file's as it is (a node removed from the page).
pub type Fill<'a> = &'a dyn Fn(&str, Option<u32>) -> Option<Filled>;

/// A file's text read whole as a [`Document`].
pub fn read_document(format: TranslationFormat, content: &str) -> CoreResult<Document> {
    read_document_within(format, content, u64::MAX)
}

/// [`read_document`], refused as soon as the page it makes would hold
/// more than `max_bytes` as an op (costed while it is read, before the
/// units are all made): a PO file's plural entries each become
/// `nplurals` units, so a small file can ask for a page hundreds of times
/// its size.
pub fn read_document_within(
    format: TranslationFormat,
    content: &str,
    max_bytes: u64,
) -> CoreResult<Document> {
    match format {
        TranslationFormat::Xliff => crate::xliff::document(content),
        TranslationFormat::Po => crate::po::document(content, max_bytes),
    }
}

/// What one unit costs a page's op at least, beyond its strings: its
/// node's ids, kind, state and geometry as JSON (measured: a unit with
/// 40 bytes of strings logs as 250).
pub const UNIT_BYTES: u64 = 200;

/// The project's languages (BCP 47), which a written-back file says it
/// translates from and into, whatever the file said when it came: quire
/// takes its own export back without an override.
#[derive(Debug, Clone, Copy, Default)]
pub struct Languages<'a> {
    pub source: Option<&'a str>,
    pub target: Option<&'a str>,
}

impl Languages<'_> {
    /// Whether a language the file names (`file`, as written) is already
    /// `tag`: the same tag in any case, or the same locale (`pt_BR.UTF-8`
    /// is `pt-BR`), left as written.
    pub fn names(file: &str, tag: &str) -> bool {
        locale_tag(file).is_some_and(|f| f.eq_ignore_ascii_case(tag))
    }
}

/// `original` (a file's text, as [`read_document`] read it) written back
/// with the translations `fill` gives, `export` as the export id and the
/// project's `languages` in place of the file's. Everything else in it
/// stays as it was.
pub fn write_back(
    format: TranslationFormat,
    original: &str,
    fill: Fill<'_>,
    export: Option<&str>,
    languages: Languages<'_>,
) -> CoreResult<String> {
    match format {
        TranslationFormat::Xliff => crate::xliff::write_back(original, fill, export, languages),
        TranslationFormat::Po => crate::po::write_back(original, fill, export, languages),
    }
}

/// A BCP 47 tag as a gettext locale name, for a PO header: `pt-BR` is
/// `pt_BR`; a tag with a script or variant keeps its hyphens past the
/// region (`sr-Latn` stays, gettext has no place for it but `@`).
pub fn gettext_locale(tag: &str) -> String {
    let mut parts = tag.split('-');
    let language = parts.next().unwrap_or("");
    match (parts.next(), parts.next()) {
        (Some(region), None)
            if region.len() == 2
                || region.len() == 3 && region.chars().all(|c| c.is_ascii_digit()) =>
        {
            format!("{language}_{region}")
        }
        _ => tag.to_owned(),
    }
}

/// A gettext or POSIX locale name as a BCP 47 tag: `pt_BR` is `pt-BR`,
/// `sr@latin` is `sr`, `de_DE.UTF-8` is `de-DE`; `None` when empty.
pub fn locale_tag(locale: &str) -> Option<String> {
    let base = locale.trim().split(['.', '@']).next().unwrap_or("");
    (!base.is_empty()).then(|| base.replace('_', "-"))
}

/// A parsed file: its units and the target language it declares.
#[derive(Debug, Default)]
pub struct Parsed {
    pub units: Vec<Unit>,
    /// The language the file translates into (XLIFF `trgLang`, PO
    /// `Language`).
    pub language: Option<String>,
    /// The language the file translates from (XLIFF `srcLang`).
    pub source_language: Option<String>,
    /// The quire export the file came from (PO `X-Quire-Export`, XLIFF
    /// `quire:export`), whose base it is merged against.
    pub export: Option<String>,
}

/// The text of a translation file named `name`: XLIFF in the encoding
/// its byte order mark or declaration names, PO in the charset its header
/// declares (`Content-Type: text/plain; charset=ISO-8859-1`), UTF-8
/// otherwise. Bytes that are not text in it are refused.
pub fn decode(format: TranslationFormat, name: &str, bytes: &[u8]) -> CoreResult<String> {
    let bad = |why: String| quire_model::error::CoreError::InvalidInput(format!("{name}: {why}"));
    match format {
        TranslationFormat::Xliff => crate::xml::decode(bytes).map_err(bad),
        TranslationFormat::Po => {
            // The header comes first; its charset is ASCII in any of them.
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
            let declared = head.split("charset=").nth(1).map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
                    .collect::<String>()
            });
            let named = declared.filter(|c| !c.is_empty() && c != "CHARSET");
            crate::text::decode(name, bytes, named.as_deref()).map(|d| d.text)
        }
    }
}

/// The units of a file in `format`.
pub fn parse(format: TranslationFormat, content: &str) -> CoreResult<Parsed> {
    match format {
        TranslationFormat::Xliff => crate::xliff::parse(content),
        TranslationFormat::Po => crate::po::parse(content),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_po_file_is_read_in_the_charset_it_declares() {
        let po = b"msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=ISO-8859-1\\n\"\n\n\
                   msgctxt \"a\"\nmsgid \"x\"\nmsgstr \"caf\xe9\"\n";
        let text = decode(TranslationFormat::Po, "f.po", po).unwrap();
        assert!(text.ends_with("msgstr \"café\"\n"), "{text}");
        // A template's placeholder names no charset: UTF-8.
        let pot = "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=CHARSET\\n\"\n";
        assert_eq!(
            decode(TranslationFormat::Po, "f.pot", pot.as_bytes()).unwrap(),
            pot
        );
        let e = decode(TranslationFormat::Po, "f.po", b"msgstr \"charset=klingon\"").unwrap_err();
        assert!(e.to_string().contains("klingon"), "{e}");
    }
}
