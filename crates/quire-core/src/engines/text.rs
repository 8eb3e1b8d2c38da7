//! Placeholders in translatable text: the parts a translation must keep
//! exactly (`{0}`, `{{name}}`, `%s`, `%1$s`, `<b>`, `</b>`, a literal `\n`).

use std::sync::LazyLock;

use regex::Regex;

static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    // Order matters: `{{name}}` before `{0}`; `%%` is an escaped percent.
    // printf's space flag is left out: "100% sure" is prose, not `% s`.
    Regex::new(concat!(
        r"\{\{[^{}]*\}\}",
        r"|\{[^{}\s]*\}",
        r"|%(?:\d+\$)?[-+0#]*(?:\d+|\*)?(?:\.\d+)?(?:hh|h|ll|l|L|z|j|t)?[sdifuxXoeEgGcp@%]",
        r"|</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>",
        r"|\\n",
    ))
    .unwrap_or_else(|e| panic!("placeholder pattern: {e}"))
});

/// A piece of text: either a placeholder to keep or plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    Placeholder(&'a str),
    Plain(&'a str),
}

/// Splits `text` into placeholders and the plain text between them.
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut last = 0;
    for m in PLACEHOLDER.find_iter(text) {
        if m.start() > last {
            out.push(Piece::Plain(&text[last..m.start()]));
        }
        out.push(Piece::Placeholder(m.as_str()));
        last = m.end();
    }
    if last < text.len() {
        out.push(Piece::Plain(&text[last..]));
    }
    out
}

/// The placeholders of `text`, sorted (a multiset, for comparison).
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = PLACEHOLDER.find_iter(text).map(|m| m.as_str()).collect();
    found.sort_unstable();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_kind() {
        let text = "Hi {0}, {{name}} has %s and %1$s <b>bold</b>\\n%%";
        assert_eq!(
            placeholders(text),
            vec!["%%", "%1$s", "%s", "</b>", "<b>", "\\n", "{0}", "{{name}}"]
        );
    }

    #[test]
    fn plain_text_is_not_a_placeholder() {
        assert!(placeholders("100% sure, a < b > c, {not closed").is_empty());
    }
}
