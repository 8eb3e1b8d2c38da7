//! Language tags (BCP 47, RFC 5646), checked with `oxilangtag`.
//!
//! A tag names a language to engines and formats (`targetLanguage`, XLIFF
//! `trgLang`), and it is substituted into command lines as
//! `{target_language}`: a well-formed tag is letters, digits and `-`,
//! never starting with `-`, so it can be neither an option (`--output=…`)
//! nor a shell word (`; rm -rf ~`) to a program that gets it.

use super::error::{CoreError, CoreResult};

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
}
