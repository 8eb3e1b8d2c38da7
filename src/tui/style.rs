//! `/style KEY=VALUE…` sets the lettering of the selected block, and
//! `/style project KEY=VALUE…` the project's house style (what every
//! block that names none of its own is set in). The keys: `face`, `size`,
//! `weight` (100-900, or `regular`, `bold`), `italic` (`on`/`off`),
//! `align` (`left`, `center`, `right`), `color` and `stroke` (`#rrggbb`),
//! `vertical` (`on`/`off`), `clean` (`on`/`off`, a block only); `auto`
//! (or `none`) clears a key, so the project's or quire's default holds.
//! A face with spaces is written with underscores (`face=Comic_Neue`).
//! One op per command; undo (`u`) takes it back.

use super::app::{App, Effect};
use quire_model::op::{Clearable, NodePatch, Op, ProjectPatch, StylePatch};
use quire_model::scene::{NodeKind, TextAlign};

pub const USAGE: &str = "usage: /style [project] KEY=VALUE… (face size weight italic align color stroke vertical clean; auto clears)";

/// `/style …` for the selected node or, with `project`, the project.
pub fn style(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    let (project, assignments) = match rest.trim().strip_prefix("project") {
        Some(after) if after.is_empty() || after.starts_with(' ') => (true, after),
        _ => (false, rest),
    };
    let patch = match parse(assignments, project) {
        Ok(patch) => patch,
        Err(why) => return app.fail(why),
    };
    let Some(session) = app.shown_session() else {
        return app.fail("open a session first");
    };
    if project {
        let op = Op::UpdateProject {
            patch: ProjectPatch {
                style: Some(patch),
                ..ProjectPatch::default()
            },
        };
        let what = "the project's lettering set · u undoes".to_owned();
        return fx.push(Effect::Apply { session, op, what });
    }
    let page = app
        .desk
        .scene
        .as_ref()
        .and_then(|(_, s)| s.scene.pages.get(app.desk.page_selected));
    let Some(page) = page else {
        return app.fail("no page selected");
    };
    let Some(node) = page.nodes.get(app.desk.node_selected) else {
        return app.fail("no node selected");
    };
    if !matches!(node.kind, NodeKind::Text { .. }) {
        return app.fail("the selected node is not a text block");
    }
    let op = Op::UpdateNode {
        page: page.id,
        id: node.id,
        patch: NodePatch::style(patch),
        based_on: None,
    };
    let what = "the block's lettering set · u undoes".to_owned();
    fx.push(Effect::Apply { session, op, what });
}

/// The style patch `KEY=VALUE…` says; an error naming the first word it
/// cannot take.
pub fn parse(assignments: &str, project: bool) -> Result<StylePatch, String> {
    let mut patch = StylePatch::default();
    for word in assignments.split_whitespace() {
        let Some((key, value)) = word.split_once('=') else {
            return Err(format!("`{word}` is not KEY=VALUE; {USAGE}"));
        };
        let cleared = matches!(value, "auto" | "none" | "");
        let on_off = |v: &str| match v {
            "on" | "yes" | "true" => Some(true),
            "off" | "no" | "false" => Some(false),
            _ => None,
        };
        let colour = |v: &str| {
            let hex = v.strip_prefix('#')?;
            (hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| v.to_owned())
        };
        let ok = match key {
            "face" | "font" => set(
                &mut patch.font_family,
                cleared,
                Some(value.replace('_', " ")),
            ),
            "size" => set(
                &mut patch.font_size,
                cleared,
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0),
            ),
            "weight" => set(
                &mut patch.font_weight,
                cleared,
                match value {
                    "regular" | "normal" => Some(400),
                    "bold" => Some(700),
                    _ => value
                        .parse::<u16>()
                        .ok()
                        .filter(|w| (100..=900).contains(w)),
                },
            ),
            "italic" => set(&mut patch.italic, cleared, on_off(value)),
            "align" => set(&mut patch.align, cleared, TextAlign::parse(value)),
            "color" | "colour" => set(&mut patch.color, cleared, colour(value)),
            "stroke" | "outline" => set(&mut patch.stroke, cleared, colour(value)),
            "vertical" => set(&mut patch.vertical, cleared, on_off(value)),
            "clean" if !project => set(&mut patch.clean, cleared, on_off(value)),
            "clean" => {
                return Err("`clean` is a block's own: select the block and /style clean=…".into());
            }
            _ => return Err(format!("`{key}` is not a style key; {USAGE}")),
        };
        if !ok {
            return Err(format!("`{word}`: {}", what_it_takes(key)));
        }
    }
    if patch == StylePatch::default() {
        return Err(USAGE.into());
    }
    Ok(patch)
}

/// Sets `field` to `value`, or clears it; false when `value` is not one
/// the key takes.
fn set<T>(field: &mut Clearable<T>, cleared: bool, value: Option<T>) -> bool {
    match (cleared, value) {
        (true, _) => *field = Some(None),
        (false, Some(v)) => *field = Some(Some(v)),
        (false, None) => return false,
    }
    true
}

fn what_it_takes(key: &str) -> &'static str {
    match key {
        "size" => "a size is a number of pixels above 0",
        "weight" => "a weight is 100 to 900, regular or bold",
        "italic" | "vertical" | "clean" => "on or off (auto clears it)",
        "align" => "left, center or right",
        _ => "a colour is #rrggbb",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_become_one_patch_and_bad_words_are_named() {
        let patch = parse(
            "face=Comic_Neue size=28 weight=bold italic=on align=left color=#101010 stroke=auto",
            false,
        )
        .unwrap();
        assert_eq!(patch.font_family, Some(Some("Comic Neue".into())));
        assert_eq!(patch.font_size, Some(Some(28.0)));
        assert_eq!(patch.font_weight, Some(Some(700)));
        assert_eq!(patch.italic, Some(Some(true)));
        assert_eq!(patch.align, Some(Some(TextAlign::Left)));
        assert_eq!(patch.color, Some(Some("#101010".into())));
        assert_eq!(patch.stroke, Some(None), "auto clears");
        assert_eq!(patch.vertical, None, "not named: unchanged");
        for (bad, says) in [
            ("size=big", "a number of pixels"),
            ("weight=950", "100 to 900"),
            ("align=justify", "left, center or right"),
            ("color=red", "#rrggbb"),
            ("colour", "not KEY=VALUE"),
            ("kerning=2", "not a style key"),
            ("", "usage"),
        ] {
            let err = parse(bad, false).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(
            parse("clean=on", true)
                .unwrap_err()
                .contains("a block's own")
        );
        assert_eq!(parse("clean=off", false).unwrap().clean, Some(Some(false)));
    }
}
