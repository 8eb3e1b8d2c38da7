//! The command line's suggestion commands (spec 10, "Suggestions"), on
//! the selected text node: `/suggest TEXT` proposes a translation,
//! `/vote N [up|down|none]` votes on its suggestion N, `/accept [N]`
//! makes suggestion N (the first without one) its translation, and
//! `/reject N` drops it. N counts as the node pane lists them: most
//! votes first.

use super::*;
use quire_core::suggestions::Action;
use quire_model::ids::{NodeId, SessionId};
use quire_model::scene::NodeKind;
use quire_model::suggestion::{Suggestion, ranked};

/// The shown session, the selected text node and its open suggestions as
/// listed; `None` (after saying why) when no text node is selected.
fn selected(app: &mut App) -> Option<(SessionId, NodeId, Vec<Suggestion>)> {
    let Some(session) = app.shown_session() else {
        app.fail("no session is shown");
        return None;
    };
    let found = app.desk.scene.as_ref().and_then(|(_, snapshot)| {
        let page = snapshot.scene.pages.get(app.desk.page_selected)?;
        let node = page.nodes.get(app.desk.node_selected)?;
        match &node.kind {
            NodeKind::Text { suggestions, .. } => {
                Some((node.id, ranked(suggestions).into_iter().cloned().collect()))
            }
            _ => None,
        }
    });
    match found {
        Some((node, open)) => Some((session, node, open)),
        None => {
            app.fail("select a text node first");
            None
        }
    }
}

/// Suggestion `word` (1-based) of `open`, or why there is none.
fn pick<'a>(open: &'a [Suggestion], word: Option<&str>) -> Result<&'a Suggestion, String> {
    let n = match word {
        None => 1,
        Some(w) => w
            .parse::<usize>()
            .map_err(|_| format!("`{w}` is not a suggestion's number"))?,
    };
    match open.get(n.wrapping_sub(1)) {
        Some(s) => Ok(s),
        None if open.is_empty() => Err("this node has no open suggestion".into()),
        None => Err(format!(
            "there is no suggestion {n}; this node has {}",
            open.len()
        )),
    }
}

/// `/suggest TEXT`, `/vote N [up|down|none]`, `/accept [N]`, `/reject N`.
pub(super) fn suggestion(app: &mut App, command: &str, rest: &str, fx: &mut Vec<Effect>) {
    let Some((session, node, open)) = selected(app) else {
        return;
    };
    let mut words = rest.split_whitespace();
    let (action, what) = match command {
        "suggest" if rest.is_empty() => return app.fail("usage: /suggest TEXT"),
        "suggest" => (
            Action::Add {
                text: rest.to_owned(),
            },
            format!("suggested \"{rest}\""),
        ),
        "vote" => {
            let Some(number) = words.next() else {
                return app.fail("usage: /vote N [up|down|none]");
            };
            let value = match words.next().unwrap_or("up") {
                "up" | "+" | "+1" => 1,
                "down" | "-" | "-1" => -1,
                "none" | "0" => 0,
                other => return app.fail(format!("a vote is up, down or none, not `{other}`")),
            };
            let s = match pick(&open, Some(number)) {
                Ok(s) => s,
                Err(why) => return app.fail(why),
            };
            let id = s.id.clone();
            (
                Action::Vote { id, value },
                format!("voted on \"{}\"", s.text),
            )
        }
        _ => {
            let s = match pick(&open, words.next()) {
                Ok(s) => s,
                Err(why) => return app.fail(why),
            };
            let id = s.id.clone();
            match command {
                "accept" => (Action::Accept { id }, format!("accepted \"{}\"", s.text)),
                _ => (Action::Reject { id }, format!("rejected \"{}\"", s.text)),
            }
        }
    };
    fx.push(Effect::Suggest {
        session,
        node,
        action,
        what,
    });
}
