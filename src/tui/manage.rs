//! Managing pages and nodes from the command line: `/page rename NAME`,
//! `/page move N`, `/page delete`, `/box X Y W H [TEXT]` (a text box on
//! the page, in image pixels), `/node move N`, `/node delete`, and
//! `/unstage [NAME]`. Each builds one op for the shown page or node; undo
//! (`u`) takes it back.

use super::app::{App, Effect};
use quire_model::op::{NewNode, Op, PagePatch};
use quire_model::scene::{NodeKind, Page, Transform};

/// The shown session and page.
fn shown_page(app: &mut App) -> Option<(quire_model::ids::SessionId, Page)> {
    let Some(session) = app.shown_session() else {
        app.fail("open a session first");
        return None;
    };
    let page = app
        .desk
        .scene
        .as_ref()
        .and_then(|(_, s)| s.scene.pages.get(app.desk.page_selected))
        .map(|p| (**p).clone());
    if page.is_none() {
        app.fail("no page selected");
    }
    Some((session, page?))
}

/// `N` (from 1) as an index into `len` items.
fn position(app: &mut App, n: &str, len: usize) -> Option<usize> {
    match n.parse::<usize>() {
        Ok(n) if (1..=len).contains(&n) => Some(n - 1),
        _ => {
            app.fail(format!("give a position from 1 to {len}"));
            None
        }
    }
}

/// `order` with the item at `from` moved to `to`.
fn moved<T: Copy>(order: &[T], from: usize, to: usize) -> Vec<T> {
    let mut order = order.to_vec();
    let item = order.remove(from);
    order.insert(to, item);
    order
}

pub fn page(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    let (verb, arg) = rest.split_once(' ').unwrap_or((rest, ""));
    let arg = arg.trim();
    let Some((session, page)) = shown_page(app) else {
        return;
    };
    let (op, what) = match verb {
        "rename" if !arg.is_empty() => (
            Op::UpdatePage {
                id: page.id,
                patch: PagePatch {
                    name: Some(arg.to_owned()),
                    ..PagePatch::default()
                },
            },
            format!("page renamed to {arg}"),
        ),
        "move" => {
            let pages: Vec<_> = app
                .desk
                .scene
                .as_ref()
                .map(|(_, s)| s.scene.pages.iter().map(|p| p.id).collect())
                .unwrap_or_default();
            let Some(to) = position(app, arg, pages.len()) else {
                return;
            };
            let order = moved(&pages, app.desk.page_selected, to);
            app.desk.page_selected = to;
            (
                Op::ReorderPages { order },
                format!("page moved to {}", to + 1),
            )
        }
        "delete" => (
            Op::RemovePage { id: page.id },
            format!("page {} deleted · u undoes", page.name),
        ),
        _ => return app.fail("usage: /page rename NAME | /page move N | /page delete"),
    };
    fx.push(Effect::Apply { session, op, what });
}

pub fn node(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    let (verb, arg) = rest.split_once(' ').unwrap_or((rest, ""));
    let Some((session, page)) = shown_page(app) else {
        return;
    };
    let Some(node) = page.nodes.get(app.desk.node_selected) else {
        return app.fail("no node selected");
    };
    let (op, what) = match verb {
        "move" => {
            let nodes: Vec<_> = page.nodes.iter().map(|n| n.id).collect();
            let Some(to) = position(app, arg.trim(), nodes.len()) else {
                return;
            };
            let order = moved(&nodes, app.desk.node_selected, to);
            app.desk.node_selected = to;
            (
                Op::ReorderNodes {
                    page: page.id,
                    order,
                },
                format!("node moved to {}", to + 1),
            )
        }
        "delete" => (
            Op::RemoveNode {
                page: page.id,
                id: node.id,
            },
            "node deleted · u undoes".to_owned(),
        ),
        _ => return app.fail("usage: /node move N | /node delete"),
    };
    fx.push(Effect::Apply { session, op, what });
}

/// `/box X Y W H [TEXT]`: a text box at the end of the page, with TEXT as
/// its source. The box must lie on the page when its size is known.
pub fn add_box(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    let usage = "usage: /box X Y WIDTH HEIGHT [source text] (image pixels)";
    let mut words = rest.splitn(5, ' ');
    let numbers: Vec<f64> = words
        .by_ref()
        .take(4)
        .map_while(|w| w.parse::<f64>().ok().filter(|n| n.is_finite()))
        .collect();
    let [x, y, width, height] = numbers[..] else {
        return app.fail(usage);
    };
    let text = words.next().map(str::trim).filter(|t| !t.is_empty());
    if x < 0.0 || y < 0.0 || width <= 0.0 || height <= 0.0 {
        return app.fail("a box starts at 0 or more and has a width and height above 0");
    }
    let Some((session, page)) = shown_page(app) else {
        return;
    };
    if let (Some(w), Some(h)) = (page.width, page.height)
        && (x + width > f64::from(w) || y + height > f64::from(h))
    {
        return app.fail(format!("the page is {w}×{h}: the box must lie on it"));
    }
    let node = NewNode {
        id: None,
        transform: Transform {
            x,
            y,
            width,
            height,
            rotation: None,
        },
        visible: true,
        kind: NodeKind::source(text.map(str::to_owned)),
    };
    app.desk.node_selected = page.nodes.len();
    fx.push(Effect::Apply {
        session,
        op: Op::AddNode {
            page: page.id,
            node,
            at: None,
        },
        what: format!("text box added at {x},{y} ({width}×{height})"),
    });
}

/// `/unstage [NAME]`: drops one staged file (by name), or all.
pub fn unstage(app: &mut App, name: &str) {
    if app.editing.attachments.is_empty() {
        return app.fail("nothing is staged");
    }
    if name.is_empty() {
        app.editing.attachments.clear();
        return app.say("nothing staged now");
    }
    let before = app.editing.attachments.len();
    app.editing.attachments.retain(|a| a.name != name);
    if app.editing.attachments.len() == before {
        let names: Vec<_> = app
            .editing
            .attachments
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        return app.fail(format!(
            "{name} is not staged (staged: {})",
            names.join(", ")
        ));
    }
    app.say(format!("{name} unstaged"));
}
