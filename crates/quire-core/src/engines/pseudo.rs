//! `pseudo-translate`: a readable, visibly foreign, ~30% longer form of
//! each text node's source, with placeholders kept exactly. The standard
//! way to test layouts before real translation.

use super::text::{Piece, pieces};
use super::{Engine, EngineInfo, Fill, PageInput, PageOutcome, PageWork, Step, ready};

/// The `pseudo-translate` engine.
pub struct PseudoTranslate {
    info: EngineInfo,
}

impl Default for PseudoTranslate {
    fn default() -> Self {
        PseudoTranslate {
            info: EngineInfo::built_in(
                "pseudo-translate",
                "translate",
                "Fills each text node's translation with an accented, ~30% longer form of its text, placeholders kept",
            ),
        }
    }
}

impl Engine for PseudoTranslate {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        Ok(Box::new(Work(Fill::new(&step))))
    }
}

struct Work(Fill);

impl PageWork for Work {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        ready(Ok(PageOutcome {
            ops: self
                .0
                .ops(input.page, |text| Some((pseudo_translate(text), None))),
            ..PageOutcome::default()
        }))
    }
}

/// Accented look-alikes for ASCII letters.
fn accent(c: char) -> char {
    match c {
        'a' => 'á',
        'b' => 'ƀ',
        'c' => 'ç',
        'd' => 'ð',
        'e' => 'é',
        'f' => 'ƒ',
        'g' => 'ĝ',
        'h' => 'ĥ',
        'i' => 'í',
        'j' => 'ĵ',
        'k' => 'ķ',
        'l' => 'ļ',
        'm' => 'ɱ',
        'n' => 'ñ',
        'o' => 'ö',
        'p' => 'þ',
        'q' => 'ǫ',
        'r' => 'ŕ',
        's' => 'š',
        't' => 'ţ',
        'u' => 'ü',
        'v' => 'ṽ',
        'w' => 'ŵ',
        'x' => 'ẋ',
        'y' => 'ý',
        'z' => 'ž',
        'A' => 'Å',
        'B' => 'Ɓ',
        'C' => 'Ç',
        'D' => 'Ð',
        'E' => 'É',
        'F' => 'Ƒ',
        'G' => 'Ĝ',
        'H' => 'Ĥ',
        'I' => 'Í',
        'J' => 'Ĵ',
        'K' => 'Ķ',
        'L' => 'Ļ',
        'M' => 'Ṁ',
        'N' => 'Ñ',
        'O' => 'Ö',
        'P' => 'Þ',
        'Q' => 'Ǫ',
        'R' => 'Ŕ',
        'S' => 'Š',
        'T' => 'Ţ',
        'U' => 'Ü',
        'V' => 'Ṽ',
        'W' => 'Ŵ',
        'X' => 'Ẋ',
        'Y' => 'Ý',
        'Z' => 'Ž',
        other => other,
    }
}

/// `[Ĥéļļö {0} ŵöŕļð ~~~~]`: accented letters, placeholders untouched,
/// about 30% longer (counting the brackets), in brackets so truncation
/// shows.
pub fn pseudo_translate(text: &str) -> String {
    let mut out = String::from("[");
    let mut letters = 0usize;
    for piece in pieces(text) {
        match piece {
            Piece::Placeholder(p) => out.push_str(p),
            Piece::Plain(plain) => {
                for c in plain.chars() {
                    if c.is_alphanumeric() {
                        letters += 1;
                    }
                    out.push(accent(c));
                }
            }
        }
    }
    let source_len = text.chars().count();
    // 30% longer in all, brackets included; at least one filler mark when
    // there is any text at all.
    let target = (source_len * 13).div_ceil(10);
    let filler = target
        .saturating_sub(source_len + 2)
        .max(usize::from(letters > 0));
    if filler > 0 {
        out.push(' ');
        out.extend(std::iter::repeat_n('~', filler.saturating_sub(1).max(1)));
    }
    out.push(']');
    out
}

impl super::BuiltIn for PseudoTranslate {}

#[cfg(test)]
mod tests {
    use super::super::text::placeholders;
    use super::*;

    #[test]
    fn placeholders_survive_untouched() {
        let source = "Hello {0}, you have %d new {{kind}} in %1$s: <b>read</b> now\\n";
        let out = pseudo_translate(source);
        assert_eq!(placeholders(&out), placeholders(source));
        assert!(out.contains("{0}") && out.contains("{{kind}}") && out.contains("<b>"));
        assert!(out.starts_with("[Ĥéļļö") && out.ends_with(']'), "{out}");
    }

    #[test]
    fn about_thirty_percent_longer() {
        let source = "The quick brown fox jumps over the lazy dog";
        let out = pseudo_translate(source);
        let ratio = out.chars().count() as f64 / source.chars().count() as f64;
        assert!((1.25..=1.40).contains(&ratio), "{ratio}: {out}");
    }

    #[test]
    fn empty_stays_short() {
        assert_eq!(pseudo_translate(""), "[]");
    }
}
