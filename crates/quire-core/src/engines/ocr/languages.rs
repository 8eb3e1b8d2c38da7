//! Which Tesseract data reads a block: the project's or node's language
//! by its BCP 47 tag, and the data for columns of Japanese or Chinese
//! when Tesseract has it.

/// The Tesseract data that reads vertical Japanese or Chinese columns
/// (`jpn_vert`, else `chi_tra_vert`, else `chi_sim_vert`) if `program`
/// has it, asked once per job with `--list-langs`.
pub(super) fn columns_data(program: &str) -> Option<String> {
    let out = std::process::Command::new(program)
        .arg("--list-langs")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let listed = String::from_utf8_lossy(&out.stdout);
    ["jpn_vert", "chi_tra_vert", "chi_sim_vert"]
        .into_iter()
        .find(|name| listed.lines().any(|l| l.trim() == *name))
        .map(str::to_owned)
}

/// Tesseract's name for the data of a BCP 47 language (its `_vert` data
/// for a vertical Chinese or Japanese region).
pub(super) fn tesseract_language(tag: &str, vertical: bool) -> Result<String, String> {
    let lower = tag.to_ascii_lowercase();
    let mut parts = lower.split(['-', '_']);
    let primary = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    let traditional = rest
        .iter()
        .any(|p| matches!(*p, "hant" | "tw" | "hk" | "mo"));
    let name = match primary {
        "en" => "eng",
        "fr" => "fra",
        "de" => "deu",
        "es" => "spa",
        "it" => "ita",
        "pt" => "por",
        "nl" => "nld",
        "pl" => "pol",
        "ru" => "rus",
        "uk" => "ukr",
        "tr" => "tur",
        "sv" => "swe",
        "da" => "dan",
        "fi" => "fin",
        "nb" | "no" | "nn" => "nor",
        "cs" => "ces",
        "hu" => "hun",
        "ro" => "ron",
        "el" => "ell",
        "ar" => "ara",
        "he" => "heb",
        "hi" => "hin",
        "th" => "tha",
        "vi" => "vie",
        "id" => "ind",
        "ko" => "kor",
        "ja" => "jpn",
        "zh" if traditional => "chi_tra",
        "zh" => "chi_sim",
        _ => {
            return Err(format!(
                "Tesseract has no language quire knows for `{tag}`; set the node's or project's source language"
            ));
        }
    };
    let vertical = vertical && matches!(primary, "ja" | "zh" | "ko");
    Ok(if vertical {
        format!("{name}_vert")
    } else {
        name.to_owned()
    })
}
