//! Language tags (BCP 47, RFC 5646), checked with `oxilangtag`.
//!
//! A tag names a language to engines and formats (`targetLanguage`, XLIFF
//! `trgLang`), and it is substituted into command lines as
//! `{target_language}`: a well-formed tag is letters, digits and `-`,
//! never starting with `-`, so it can be neither an option (`--output=…`)
//! nor a shell word (`; rm -rf ~`) to a program that gets it.

use crate::error::{CoreError, CoreResult};

/// RFC 5646's well-formed tag as a JSON Schema `pattern` (ECMA-262): a
/// language (with up to three extended subtags, or 4-8 letters), script,
/// region, variants, extensions and private use; or private use alone.
/// Every string it matches passes [`check_tag`] (a unit test checks), so a
/// client that follows the schema is never refused; the grandfathered
/// tags (`i-klingon`) and repeated variants are the parser's alone.
pub const TAG_PATTERN: &str = concat!(
    "^(?:(?:[A-Za-z]{2,3}(?:-[A-Za-z]{3}){0,3}|[A-Za-z]{4,8})",
    "(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?",
    "(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*",
    "(?:-[0-9A-WY-Za-wy-z](?:-[A-Za-z0-9]{2,8})+)*",
    "(?:-[xX](?:-[A-Za-z0-9]{1,8})+)?|[xX](?:-[A-Za-z0-9]{1,8})+)$"
);

/// Checks that `tag` is a well-formed BCP 47 language tag; `what` names it
/// in the error (e.g. `targetLanguage`).
pub fn check_tag(what: &str, tag: &str) -> CoreResult<()> {
    match oxilangtag::LanguageTag::parse(tag) {
        Ok(_) => Ok(()),
        Err(e) => Err(CoreError::InvalidInput(format!(
            "{what} `{}` is not a BCP 47 language tag such as `pt-BR` or `ja` ({e})",
            tag.escape_debug()
        ))),
    }
}

/// A project's languages, as given when it is created.
#[derive(
    Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct Languages {
    /// BCP 47, e.g. `ja`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_language: Option<String>,
    /// BCP 47, e.g. `pt-BR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_language: Option<String>,
}

impl Languages {
    pub fn check(&self) -> CoreResult<()> {
        for (what, tag) in [
            ("sourceLanguage", &self.source_language),
            ("targetLanguage", &self.target_language),
        ] {
            if let Some(tag) = tag {
                check_tag(what, tag)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_well_formed_and_nothing_else() {
        for good in [
            "en",
            "pt-BR",
            "zh-Hant-TW",
            "sr-Latn",
            "es-419",
            "x-klingon",
            "de-CH-1996",
        ] {
            check_tag("targetLanguage", good).unwrap();
        }
        for bad in [
            "",
            "-fr",
            "--output=/etc/passwd",
            "fr; rm -rf ~",
            "fr$(id)",
            "en_US",
            "fr fr",
            "français",
        ] {
            assert!(check_tag("targetLanguage", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_schema_pattern_admits_only_what_the_parser_accepts() {
        let pattern = regex::Regex::new(TAG_PATTERN).unwrap();
        let good = [
            "ja",
            "pt-BR",
            "zh-Hans",
            "zh-Hant-TW",
            "es-419",
            "sr-Latn-RS",
            "de-CH-1996",
            "ca-valencia",
            "zh-yue-HK",
            "en-a-bbb-x-private",
            "x-whatever",
            "tlh",
        ];
        for tag in good {
            assert!(pattern.is_match(tag), "{tag}");
            assert!(check_tag("t", tag).is_ok(), "{tag}");
        }
        for tag in [
            "",
            "-en",
            "en-",
            "en--US",
            "e",
            "en_US",
            "toolongtag",
            "en-x",
            "; rm -rf ~",
        ] {
            assert!(!pattern.is_match(tag), "{tag}");
        }
        // Anything the pattern matches, the parser accepts: subtags of
        // every kind, in every order the pattern allows.
        let parts = [
            "en", "abc", "Latn", "US", "419", "1996", "valencia", "a-bb", "x-y1",
        ];
        for a in parts {
            for b in parts {
                for c in parts {
                    let tag = format!("{a}-{b}-{c}");
                    if pattern.is_match(&tag) {
                        assert!(check_tag("t", &tag).is_ok(), "{tag}");
                    }
                }
            }
        }
    }
}
