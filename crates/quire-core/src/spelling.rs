//! The `spelling` rule's dictionaries and words: Hunspell `.dic`/`.aff`
//! pairs found by language (the `[spell]` paths first, then the system's),
//! read by `spellbook` once per process, and the words of a translation
//! worth checking — never its placeholders, tags, numbers, URLs or e-mail
//! addresses, the glossary's terms or the project's own word list.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use spellbook::Dictionary;

use crate::engines::qa::SpellSettings;
use crate::engines::text::{Piece, pieces};
use quire_model::glossary::Term;

/// Where distributions install Hunspell dictionaries, looked in after
/// `[spell] dictionaries`.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/share/hunspell",
    "/usr/share/myspell",
    "/usr/share/myspell/dicts",
    "/usr/local/share/hunspell",
    "/opt/homebrew/share/hunspell",
];

/// Dictionaries read so far, by `.dic` path: reading one takes a while
/// (Debian's `pt_BR` is 4 MB), checking with it takes microseconds.
static LOADED: LazyLock<Mutex<HashMap<PathBuf, Arc<Dictionary>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The `.dic` file for `language` (BCP 47): `pt-BR` takes `pt_BR.dic`,
/// else `pt.dic`, else the first `pt_*.dic` by name.
pub fn find(language: &str, settings: &SpellSettings) -> Option<PathBuf> {
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for path in &settings.dictionaries {
        if path.is_dir() {
            dirs.push(path.clone());
        } else {
            files.push(path.clone());
        }
    }
    dirs.extend(SYSTEM_DIRS.iter().map(PathBuf::from));
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "dic"))
            .collect();
        found.sort();
        files.extend(found);
    }
    let stem = |p: &PathBuf| {
        p.file_stem()
            .and_then(|s| s.to_str())
            .map(|s| s.replace('-', "_").to_ascii_lowercase())
    };
    let wanted = language.replace('-', "_").to_ascii_lowercase();
    let primary = wanted.split('_').next().unwrap_or_default().to_owned();
    let prefix = format!("{primary}_");
    files
        .iter()
        .find(|p| stem(p).as_deref() == Some(wanted.as_str()))
        .or_else(|| {
            files
                .iter()
                .find(|p| stem(p).as_deref() == Some(primary.as_str()))
        })
        .or_else(|| {
            files
                .iter()
                .find(|p| stem(p).is_some_and(|s| s.starts_with(&prefix)))
        })
        .cloned()
}

/// The text of a dictionary file: UTF-8 (a byte order mark dropped), or
/// in the encoding its `.aff` names with `SET`.
fn read_text(path: &Path, set: Option<&str>) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(text.to_owned());
    }
    let encoding = set
        .and_then(|s| encoding_rs::Encoding::for_label(s.as_bytes()))
        .ok_or_else(|| {
            format!(
                "{} is not UTF-8 and names no encoding quire knows ({})",
                path.display(),
                set.unwrap_or("no SET line")
            )
        })?;
    Ok(encoding.decode(bytes).0.into_owned())
}

/// The dictionary whose `.dic` is `dic` (its `.aff` beside it), read
/// once per process.
pub fn load(dic: &Path) -> Result<Arc<Dictionary>, String> {
    if let Some(loaded) = LOADED.lock().ok().and_then(|l| l.get(dic).cloned()) {
        return Ok(loaded);
    }
    let aff_path = dic.with_extension("aff");
    let aff_bytes =
        std::fs::read(&aff_path).map_err(|e| format!("cannot read {}: {e}", aff_path.display()))?;
    let set = String::from_utf8_lossy(&aff_bytes)
        .lines()
        .find_map(|l| l.trim().strip_prefix("SET ").map(|s| s.trim().to_owned()));
    let aff = read_text(&aff_path, set.as_deref())?;
    let words = read_text(dic, set.as_deref())?;
    let dictionary = Arc::new(
        Dictionary::new(&aff, &words)
            .map_err(|e| format!("cannot read the dictionary {}: {e}", dic.display()))?,
    );
    if let Ok(mut loaded) = LOADED.lock() {
        loaded.insert(dic.to_owned(), dictionary.clone());
    }
    Ok(dictionary)
}

/// A word of a translation, by its byte range there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word<'a> {
    pub start: usize,
    pub text: &'a str,
}

/// Whether a whitespace-separated token is an address, not prose.
fn is_address(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_alphanumeric());
    token.contains("://")
        || t.starts_with("www.")
        || (t.contains('@') && t.contains('.'))
        || token.contains('\\')
        || token.starts_with('/')
        || token.starts_with("~/")
        || (token.contains('/') && token.contains('.'))
}

/// The words of `text` worth checking: letters with any `'` `’` or `-`
/// inside them; placeholders and tags, tokens that are addresses or
/// paths, and words with digits in them are left out.
pub fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let base = text.as_ptr() as usize;
    for piece in pieces(text) {
        let Piece::Plain(plain) = piece else {
            continue;
        };
        for token in plain.split_whitespace() {
            if is_address(token) {
                continue;
            }
            let joiner = |c: char| matches!(c, '\'' | '’' | '-' | '‐');
            let at = token.as_ptr() as usize - base;
            let mut start = None;
            let bytes: Vec<(usize, char)> = token.char_indices().collect();
            for (k, &(i, c)) in bytes.iter().enumerate() {
                let next_is_word = bytes.get(k + 1).is_some_and(|&(_, n)| n.is_alphanumeric());
                let inside = c.is_alphanumeric()
                    || (joiner(c) && start.is_some() && next_is_word)
                    || (start.is_some() && is_mark(c));
                match (inside, start) {
                    (true, None) => start = Some(i),
                    (false, Some(s)) => {
                        push_word(&mut out, at + s, &token[s..i]);
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(s) = start {
                push_word(&mut out, at + s, &token[s..]);
            }
        }
    }
    out
}

fn is_mark(c: char) -> bool {
    // Combining marks (a decomposed accent) belong to their letter.
    matches!(c, '\u{0300}'..='\u{036F}' | '\u{1AB0}'..='\u{1AFF}' | '\u{20D0}'..='\u{20FF}')
}

fn push_word<'a>(out: &mut Vec<Word<'a>>, start: usize, text: &'a str) {
    if text.chars().any(|c| c.is_numeric()) || !text.chars().any(char::is_alphabetic) {
        return;
    }
    out.push(Word { start, text });
}

/// A word the dictionary does not know, with its suggestions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misspelling {
    pub word: String,
    pub suggestions: Vec<String>,
}

/// Checks translations in one language against a dictionary, the
/// glossary's words and a project's word list.
pub struct Speller {
    dictionary: Arc<Dictionary>,
    /// Accepted as they are, lowercased: the word list and every word of
    /// the glossary's terms.
    known: HashSet<String>,
    /// Suggestions already worked out, by word; `None` past the cap.
    suggested: Mutex<HashMap<String, Vec<String>>>,
}

/// The most distinct words a speller works out suggestions for: a
/// suggestion takes milliseconds, a project can misspell thousands.
const MAX_SUGGESTED: usize = 2_000;

impl Speller {
    pub fn new(dictionary: Arc<Dictionary>, glossary: &[Term], words: &[String]) -> Speller {
        let mut known: HashSet<String> = words.iter().map(|w| w.to_lowercase()).collect();
        for term in glossary {
            for text in [&term.source, &term.target] {
                known.insert(text.trim().to_lowercase());
                known.extend(words_of(text).map(|w| w.to_lowercase()));
            }
        }
        Speller {
            dictionary,
            known,
            suggested: Mutex::new(HashMap::new()),
        }
    }

    fn accepts(&self, word: &str) -> bool {
        let lower = word.to_lowercase();
        let bare = lower
            .strip_suffix("'s")
            .or_else(|| lower.strip_suffix("’s"))
            .unwrap_or(&lower);
        if self.known.contains(&lower) || self.known.contains(bare) {
            return true;
        }
        let word = word.replace('’', "'");
        if self.dictionary.check(&word) {
            return true;
        }
        // A compound the dictionary has no entry for, made of words it has.
        word.contains(['-', '‐'])
            && word
                .split(['-', '‐'])
                .all(|part| part.is_empty() || self.accepts(part))
    }

    /// The words of `text` neither the dictionary nor the project knows,
    /// each once, in order.
    pub fn check(&self, text: &str) -> Vec<Misspelling> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for word in words(text) {
            if self.accepts(word.text) || !seen.insert(word.text) {
                continue;
            }
            out.push(Misspelling {
                word: word.text.to_owned(),
                suggestions: self.suggest(word.text),
            });
        }
        out
    }

    fn suggest(&self, word: &str) -> Vec<String> {
        if let Some(known) = self
            .suggested
            .lock()
            .ok()
            .and_then(|s| s.get(word).cloned())
        {
            return known;
        }
        let full = self
            .suggested
            .lock()
            .is_ok_and(|s| s.len() >= MAX_SUGGESTED);
        if full {
            return Vec::new();
        }
        let mut found = Vec::new();
        self.dictionary.suggest(&word.replace('’', "'"), &mut found);
        // Hunspell pads its list with word splits ("Com un" for "Comun")
        // and stray spaces ("Comum "). A split is offered only where each
        // part is a word, after the whole words, and once (not again with
        // a hyphen).
        let mut seen = HashSet::new();
        let (mut whole, mut splits): (Vec<String>, Vec<String>) = found
            .into_iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty() && seen.insert(s.clone()))
            .partition(|s| !s.contains([' ', '-']));
        splits.retain(|s| s.split([' ', '-']).all(|part| self.accepts(part)));
        // "a swell" before "as-well": the space is the usual fix.
        splits.sort_by_key(|s| !s.contains(' '));
        whole.extend(splits.into_iter().take(1));
        let mut found = whole;
        found.truncate(3);
        if let Ok(mut s) = self.suggested.lock() {
            s.insert(word.to_owned(), found.clone());
        }
        found
    }
}

fn words_of(text: &str) -> impl Iterator<Item = &str> {
    words(text).into_iter().map(|w| w.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        words(text).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn words_leave_out_what_is_not_prose() {
        assert_eq!(
            texts(
                "Don't go, {name}! <i>Visit</i> https://example.com/x or a@b.org at 10:30, R2-D2 and well-known 3rd"
            ),
            ["Don't", "go", "Visit", "or", "at", "and", "well-known"]
        );
        assert_eq!(
            texts("«Olá», disse-me ele… %s %1$d"),
            ["Olá", "disse-me", "ele"]
        );
        assert_eq!(texts("C:\\path\\file.txt and /usr/share"), ["and"]);
        let text = "Je t’aime";
        let found = words(text);
        assert_eq!(&text[found[1].start..][..found[1].text.len()], "t’aime");
    }

    #[test]
    fn a_dictionary_is_found_by_language() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for name in ["pt_PT.dic", "pt_BR.dic", "en.dic", "de_DE_frami.dic"] {
            std::fs::write(dir.path().join(name), "").unwrap_or_else(|e| panic!("{e}"));
        }
        let settings = SpellSettings {
            dictionaries: vec![dir.path().to_owned()],
        };
        let name = |lang: &str| {
            find(lang, &settings)
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        };
        assert_eq!(name("pt-BR").as_deref(), Some("pt_BR.dic"));
        assert_eq!(name("en-GB").as_deref(), Some("en.dic"));
        assert_eq!(name("de").as_deref(), Some("de_DE_frami.dic"));
        assert_eq!(name("pt").as_deref(), Some("pt_BR.dic"));
    }
}
