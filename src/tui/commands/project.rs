//! The command line's project commands: `/term` (the glossary, one term
//! at a time), `/lang` (the project's languages), `/profile` (the
//! subtitle profile it is checked against), `/word` (the spelling word
//! list) and `/glossary` (the terms, to read).

use super::*;

/// `/term SOURCE = TARGET [# NOTE]` sets a glossary term, `/term -SOURCE`
/// removes one.
pub(super) fn term(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    let Some(session) = app.shown_session() else {
        return app.fail("no session is shown");
    };
    let (op, what) = if let Some(source) = rest.strip_prefix('-') {
        let source = source.trim().to_owned();
        let what = format!("glossary: removed {source}");
        let op = Op::UpdateGlossary {
            set: Vec::new(),
            remove: vec![source],
        };
        (op, what)
    } else {
        let Some((source, target)) = rest.split_once('=') else {
            return app.fail("usage: /term SOURCE = TARGET [# note], or /term -SOURCE");
        };
        let (target, note) = match target.split_once('#') {
            Some((t, n)) => (t, Some(n.trim().to_owned()).filter(|n| !n.is_empty())),
            None => (target, None),
        };
        let (source, target) = (source.trim().to_owned(), target.trim().to_owned());
        if source.is_empty() || target.is_empty() {
            return app.fail("usage: /term SOURCE = TARGET [# note], or /term -SOURCE");
        }
        let what = format!("glossary: {source} → {target}");
        let op = Op::UpdateGlossary {
            set: vec![Term {
                source,
                target,
                note,
                case_sensitive: false,
            }],
            remove: Vec::new(),
        };
        (op, what)
    };
    fx.push(Effect::Apply { session, op, what });
}

/// `/lang from=en to=pt-BR`: sets (or, with nothing after `=`, clears)
/// the project's languages.
pub(super) fn languages(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    const USAGE: &str = "usage: /lang from=LANG to=LANG (either one; to= clears it)";
    let Some(session) = app.shown_session() else {
        return app.fail("no session is shown");
    };
    let mut patch = quire_model::op::ProjectPatch::default();
    let mut said = Vec::new();
    for word in rest.split_whitespace() {
        let Some((key, tag)) = word.split_once('=') else {
            return app.fail(USAGE);
        };
        let value = (!tag.is_empty()).then(|| tag.to_owned());
        if let Some(tag) = &value
            && let Err(e) = quire_model::lang::check_tag(key, tag)
        {
            return app.fail(e.to_string());
        }
        said.push(format!("{key} {}", value.as_deref().unwrap_or("unset")));
        match key {
            "from" | "source" => patch.source_language = Some(value),
            "to" | "target" => patch.target_language = Some(value),
            _ => return app.fail(USAGE),
        }
    }
    if said.is_empty() {
        let (from, to) = match &app.desk.scene {
            Some((id, s)) if *id == session => (
                s.scene.project.source_language.clone(),
                s.scene.project.target_language.clone(),
            ),
            _ => (None, None),
        };
        let unset = || "unset".to_owned();
        return app.say(format!(
            "from {} to {} · {USAGE}",
            from.unwrap_or_else(unset),
            to.unwrap_or_else(unset)
        ));
    }
    fx.push(Effect::Apply {
        session,
        op: Op::UpdateProject { patch },
        what: format!("languages: {}", said.join(", ")),
    });
}

/// `/profile netflix-children`: the subtitle limits this project's cues
/// are checked against (`default` goes back to the config's).
pub(super) fn profile(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    use quire_model::scene::SubtitleProfile;
    let Some(session) = app.shown_session() else {
        return app.fail("no session is shown");
    };
    let names: Vec<&str> = SubtitleProfile::ALL.iter().map(|p| p.name()).collect();
    let usage = format!("usage: /profile {} or default", names.join(", "));
    let value = match rest {
        "" => {
            let set = app
                .desk
                .scene
                .as_ref()
                .filter(|(id, _)| *id == session)
                .and_then(|(_, s)| s.scene.project.subtitle_profile);
            let limits = app.prefs.subtitles.limits(set);
            let said = match set {
                Some(p) => p.name().to_owned(),
                None => format!("{} (the config's)", app.prefs.subtitles.profile.name()),
            };
            return app.say(format!(
                "subtitle profile {said}: {} chars a line, {} lines, {} cps · {usage}",
                limits.line_length, limits.lines, limits.reading_speed
            ));
        }
        "default" => None,
        name => match SubtitleProfile::ALL.into_iter().find(|p| p.name() == name) {
            Some(p) => Some(p),
            None => return app.fail(format!("no subtitle profile `{name}` · {usage}")),
        },
    };
    let patch = quire_model::op::ProjectPatch {
        subtitle_profile: Some(value),
        ..Default::default()
    };
    fx.push(Effect::Apply {
        session,
        op: Op::UpdateProject { patch },
        what: format!(
            "subtitle profile: {}",
            value.map_or("the config's", |p| p.name())
        ),
    });
}

/// `/word add WORD` and `/word remove WORD`: the project's word list,
/// which the `spelling` rule accepts.
pub(super) fn word(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    const USAGE: &str = "usage: /word add WORD, /word remove WORD";
    let Some(session) = app.shown_session() else {
        return app.fail("no session is shown");
    };
    let mut patch = quire_model::op::ProjectPatch::default();
    let what = match rest.split_once(char::is_whitespace) {
        Some(("add", w)) if !w.trim().is_empty() => {
            patch.add_words.push(w.trim().to_owned());
            format!("word list: added {}", w.trim())
        }
        Some(("remove", w)) if !w.trim().is_empty() => {
            patch.remove_words.push(w.trim().to_owned());
            format!("word list: removed {}", w.trim())
        }
        _ => return app.fail(USAGE),
    };
    fx.push(Effect::Apply {
        session,
        op: Op::UpdateProject { patch },
        what,
    });
}

/// `/glossary`: the shown project's terms, a scrollable list.
pub(super) fn glossary(app: &mut App) {
    let Some(session) = app.shown_session() else {
        return app.fail("no session is shown");
    };
    let terms = match &app.desk.scene {
        Some((id, s)) if *id == session => &s.scene.project.glossary,
        _ => return app.fail("the scene is still loading"),
    };
    if terms.is_empty() {
        return app.say("the glossary is empty (/term SOURCE = TARGET, or /import FILE.csv)");
    }
    let lines = terms
        .iter()
        .map(|t| {
            let note = t
                .note
                .as_deref()
                .map(|n| format!("  ({n})"))
                .unwrap_or_default();
            format!("{} → {}{note}", t.source, t.target)
        })
        .collect();
    app.help_scroll = 0;
    app.modal = Some(Modal::Reading {
        title: format!("Glossary · {} terms", terms.len()),
        lines,
    });
}
