//! Text files in the encoding someone's tool wrote: a byte order mark
//! (UTF-8, UTF-16, UTF-32), else UTF-8 when the bytes are UTF-8, else the
//! legacy encoding `chardetng` judges most likely (windows-1252, cp1251,
//! Shift_JIS, …), or the one the person names. Bytes that are not text in
//! that encoding are refused, never replaced.

use encoding_rs::Encoding;
use quire_model::error::{CoreError, CoreResult};

/// A file's text and how it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub text: String,
    /// The encoding's name (`UTF-8`, `UTF-16LE`, `windows-1252`, …).
    pub encoding: &'static str,
    /// Whether the encoding was guessed (no mark, not UTF-8, not named).
    pub guessed: bool,
}

/// The text of `bytes`; `named`: an encoding label the person gave
/// (`windows-1252`, `latin1`, `shift_jis`).
pub fn decode(name: &str, bytes: &[u8], named: Option<&str>) -> CoreResult<Decoded> {
    let refuse = |encoding: &str| {
        CoreError::InvalidInput(format!(
            "{name}: the file is not {encoding} text (name its encoding with `encoding=`)"
        ))
    };
    if let Some(label) = named {
        let encoding = Encoding::for_label(label.trim().as_bytes()).ok_or_else(|| {
            CoreError::InvalidInput(format!("{name}: `{label}` is not an encoding quire knows"))
        })?;
        return strict(encoding, bytes, false).ok_or_else(|| refuse(encoding.name()));
    }
    if let Some((text, encoding)) = utf32(bytes) {
        return text
            .map(|text| Decoded {
                text,
                encoding,
                guessed: false,
            })
            .ok_or_else(|| refuse(encoding));
    }
    if let Some((encoding, bom)) = Encoding::for_bom(bytes) {
        return strict(encoding, &bytes[bom..], false).ok_or_else(|| refuse(encoding.name()));
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(Decoded {
            text: text.to_owned(),
            encoding: "UTF-8",
            guessed: false,
        });
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(bytes, true);
    let encoding = detector.guess(None, true);
    strict(encoding, bytes, true).ok_or_else(|| refuse(encoding.name()))
}

fn strict(encoding: &'static Encoding, bytes: &[u8], guessed: bool) -> Option<Decoded> {
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    (!had_errors).then(|| Decoded {
        text: text.into_owned(),
        encoding: encoding.name(),
        guessed,
    })
}

/// UTF-32 with a byte order mark (which `encoding_rs` does not read): the
/// text, or `None` inside when a unit is not a character.
fn utf32(bytes: &[u8]) -> Option<(Option<String>, &'static str)> {
    let (little, name) = match bytes.get(..4)? {
        [0xFF, 0xFE, 0, 0] => (true, "UTF-32LE"),
        [0, 0, 0xFE, 0xFF] => (false, "UTF-32BE"),
        _ => return None,
    };
    let body = &bytes[4..];
    if !body.len().is_multiple_of(4) {
        return Some((None, name));
    }
    let text = body
        .chunks_exact(4)
        .map(|c| {
            let unit = [c[0], c[1], c[2], c[3]];
            char::from_u32(if little {
                u32::from_le_bytes(unit)
            } else {
                u32::from_be_bytes(unit)
            })
        })
        .collect::<Option<String>>();
    Some((text, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_marks_utf8_legacy_and_named_encodings() {
        let text = "Où vas-tu ? Ça va.";
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let utf32: Vec<u8> = [0, 0, 0xFE, 0xFF]
            .into_iter()
            .chain(text.chars().flat_map(|c| u32::from(c).to_be_bytes()))
            .collect();
        let (cp1252, ..) = encoding_rs::WINDOWS_1252.encode(text);
        for (bytes, encoding, guessed) in [
            (text.as_bytes().to_vec(), "UTF-8", false),
            (utf16, "UTF-16LE", false),
            (utf32, "UTF-32BE", false),
            (cp1252.into_owned(), "windows-1252", true),
        ] {
            let got = decode("f.srt", &bytes, None).expect(encoding);
            assert_eq!(
                (got.text.as_str(), got.encoding, got.guessed),
                (text, encoding, guessed)
            );
        }
        let named = decode("f.srt", b"caf\xe9", Some("latin1")).unwrap();
        assert_eq!(named.text, "café");
    }

    #[test]
    fn what_is_not_text_is_refused_by_name() {
        let e = decode("f.srt", &[0xFF, 0xFE, 0x00, 0xD8], None).unwrap_err();
        assert!(e.to_string().contains("not UTF-16LE text"), "{e}");
        let e = decode("f.srt", b"x", Some("klingon")).unwrap_err();
        assert!(
            e.to_string().contains("`klingon` is not an encoding"),
            "{e}"
        );
        let e = decode("f.srt", &[0, 0, 0xFE, 0xFF, 0, 0x11, 0, 0], None).unwrap_err();
        assert!(e.to_string().contains("UTF-32BE"), "{e}");
    }
}
