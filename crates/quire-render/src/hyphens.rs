//! Where a word may break at a line's end: the target language's
//! Knuth-Liang patterns (TeX's hyph-utf8, as the `hyphenation` crate
//! embeds them), each language's loaded once and kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use hyphenation::{Hyphenator, Language, Load, Standard};

/// The character counts after which `word` may break with a hyphen in
/// `locale` (a BCP 47 tag); `None` when there are no patterns for it.
pub(crate) fn points(locale: &str, word: &str) -> Option<Vec<usize>> {
    let dictionary = dictionary(language(locale)?)?;
    let breaks = dictionary.hyphenate(word).breaks;
    Some(
        breaks
            .into_iter()
            .map(|byte| word[..byte].chars().count())
            .collect(),
    )
}

/// The patterns' language for a BCP 47 tag: the whole tag where they
/// have it, else its language with the spelling most use today.
fn language(locale: &str) -> Option<Language> {
    let tag = locale.trim().to_ascii_lowercase().replace('_', "-");
    let primary = tag.split('-').next().unwrap_or("");
    let region = tag.split('-').nth(1).unwrap_or("");
    let code = match (primary, region) {
        ("en", "gb" | "ie" | "au" | "nz" | "za" | "in") => "en-gb",
        ("en", _) => "en-us",
        ("de", "ch") => "de-ch-1901",
        ("de", _) => "de-1996",
        ("el", _) => "el-monoton",
        ("no", _) => "nb",
        ("sr", _) => "sr-cyrl",
        ("mn", _) => "mn-cyrl",
        _ => return Language::try_from_code(&tag).or_else(|| Language::try_from_code(primary)),
    };
    Language::try_from_code(code)
}

/// The language's patterns, loaded on first use; `None` when they
/// cannot be (kept, so they are not tried again).
fn dictionary(language: Language) -> Option<Arc<Standard>> {
    static LOADED: OnceLock<Mutex<HashMap<Language, Option<Arc<Standard>>>>> = OnceLock::new();
    let mut loaded = LOADED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loaded
        .entry(language)
        .or_insert_with(|| Standard::from_embedded(language).ok().map(Arc::new))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_break_where_the_language_allows() {
        // English and French patterns disagree on the same letters.
        assert_eq!(points("en", "hyphenation"), Some(vec![2, 6, 7]));
        assert_eq!(points("en-US", "CAPITAL"), Some(vec![3, 4]));
        let french = points("fr-FR", "extraordinaire").unwrap();
        assert!(
            !french.is_empty() && french.iter().all(|k| (2..=12).contains(k)),
            "{french:?}"
        );
        // Byte offsets become character counts.
        let german = points("de", "Übersetzungsbüro").unwrap();
        assert!(german.contains(&4) || german.contains(&3), "{german:?}");
    }

    #[test]
    fn a_language_without_patterns_has_no_points() {
        assert_eq!(points("ja", "こんにちは"), None);
        assert_eq!(points("", "word"), None);
    }
}
