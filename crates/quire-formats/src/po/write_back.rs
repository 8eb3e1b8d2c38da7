//! A PO file written back: the translator's own file with quire's
//! translations in it, everything else as it came.

use super::*;

/// `original` written back with the translations `fill` gives: every
/// entry, comment, obsolete entry and header field as it was, but each
/// filled entry's `msgstr` (and `fuzzy`, set on a machine's translation
/// and cleared otherwise), the header's charset (the file is written in
/// UTF-8), its `X-Quire-Export`, and the project's languages in
/// `Language` (as a gettext locale, `pt_BR`) and Poedit's
/// `X-Source-Language`.
pub(crate) fn write_back(
    original: &str,
    fill: Fill<'_>,
    export: Option<&str>,
    languages: Languages<'_>,
) -> CoreResult<String> {
    let catalog = read(original)?;
    let nplurals = catalog.nplurals();
    let mut out = String::with_capacity(original.len() + original.len() / 4);
    if catalog.header().is_none() {
        write_header(&mut out, &Entry::default(), export, languages);
    }
    for (i, block) in catalog.blocks.iter().enumerate() {
        if i > 0 || catalog.header().is_none() {
            out.push('\n');
        }
        match block {
            Block::Kept(lines) => lines.iter().for_each(|l| {
                out.push_str(l);
                out.push('\n');
            }),
            Block::Entry(e) if e.is_header() => write_header(&mut out, e, export, languages),
            Block::Entry(e) => write_entry(&mut out, e, fill, nplurals),
        }
    }
    Ok(out)
}

/// The header entry with its fields brought up to date.
fn write_header(out: &mut String, header: &Entry, export: Option<&str>, languages: Languages<'_>) {
    // Each field as `Name` and what follows its colon, as written (a line
    // without one as it is).
    let mut fields: Vec<(String, Option<String>)> = header
        .strs
        .first()
        .map(|s| {
            s.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| match l.split_once(':') {
                    Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
                    None => (l.to_owned(), None),
                })
                .collect()
        })
        .unwrap_or_default();
    let set = |fields: &mut Vec<(String, Option<String>)>, name: &str, value: &str| match fields
        .iter_mut()
        .find(|(k, _)| k == name)
    {
        Some((_, v)) => *v = Some(format!(" {value}")),
        None => fields.push((name.to_owned(), Some(format!(" {value}")))),
    };
    set(&mut fields, "Content-Type", "text/plain; charset=UTF-8");
    if let Some(export) = export {
        set(&mut fields, EXPORT_HEADER, &one_line(export));
    }
    // A language the header already names is left as written.
    for (name, tag) in [
        ("Language", languages.target),
        (SOURCE_LANGUAGE_HEADER, languages.source),
    ] {
        let Some(tag) = tag else { continue };
        let says = fields
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.as_deref());
        if !says.is_some_and(|v| Languages::names(v, tag)) {
            set(&mut fields, name, &crate::units::gettext_locale(tag));
        }
    }
    for comment in &header.comments {
        out.push_str(comment);
        out.push('\n');
    }
    let text: String = fields
        .into_iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{k}:{v}\n"),
            None => format!("{k}\n"),
        })
        .collect();
    field(out, "msgid", "");
    field(out, "msgstr", &text);
}

/// An entry with what `fill` says of it; as it was when it says nothing.
fn write_entry(out: &mut String, e: &Entry, fill: Fill<'_>, nplurals: Option<usize>) {
    let key = e.key();
    let filled: Vec<Option<Filled>> = match &e.plural {
        Some(_) => (0..e.forms(nplurals))
            .map(|n| fill(&key, u32::try_from(n).ok()))
            .collect(),
        None => vec![fill(&key, None)],
    };
    let mut strs = e.strs.clone();
    let mut comments = e.comments.clone();
    if filled.iter().any(Option::is_some) {
        strs.resize(filled.len().max(strs.len()), String::new());
        for (s, f) in strs.iter_mut().zip(&filled) {
            if let Some(f) = f {
                *s = f.translation.clone().unwrap_or_default();
            }
        }
        let translated = strs.iter().any(|s| !s.is_empty());
        let machine = translated && filled.iter().flatten().any(|f| f.machine);
        let flags: Vec<&str> = std::iter::once("fuzzy")
            .filter(|_| machine)
            .chain(e.flags().filter(|f| *f != "fuzzy"))
            .collect();
        let line = (!flags.is_empty()).then(|| format!("#, {}", flags.join(", ")));
        let at = comments.iter().position(|c| c.starts_with("#,"));
        comments.retain(|c| !c.starts_with("#,"));
        if let Some(line) = line {
            let at = at
                .or_else(|| comments.iter().position(|c| c.starts_with("#|")))
                .unwrap_or(comments.len());
            comments.insert(at, line);
        }
        // The open suggestions as they are now, first among the comments
        // (translator comments come first); those of an earlier export go.
        comments.retain(|c| !is_suggestion_comment(c));
        let open = filled.first().and_then(Option::as_ref);
        let lines = open.map(|f| f.suggestions.iter().map(suggestion_comment));
        comments.splice(0..0, lines.into_iter().flatten());
    }
    if strs == e.strs && comments == e.comments {
        for line in &e.raw {
            out.push_str(line);
            out.push('\n');
        }
        return;
    }
    for comment in &comments {
        out.push_str(comment);
        out.push('\n');
    }
    if let Some(context) = &e.context {
        field(out, "msgctxt", context);
    }
    field(out, "msgid", e.id.as_deref().unwrap_or(""));
    match &e.plural {
        Some(plural) => {
            field(out, "msgid_plural", plural);
            for (n, s) in strs.iter().enumerate() {
                field(out, &format!("msgstr[{n}]"), s);
            }
        }
        None => field(out, "msgstr", strs.first().map_or("", String::as_str)),
    }
}
