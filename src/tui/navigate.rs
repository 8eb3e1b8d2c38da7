//! Moving in a session: to a page by number, to the next node that needs
//! work (no translation yet, or named by a warning), and to the next node
//! whose source or translation holds a text. Pure: they read the state and
//! say where to go.

use std::collections::HashSet;

use super::app::App;
use quire_model::ids::NodeId;
use quire_model::scene::{Node, NodeKind};

/// A node's place: page index, node index.
pub type Place = (usize, usize);

/// Whether a node needs work: a text node without a translation, one a
/// warning names, or (with `machine`) a machine's translation no person
/// has looked at.
pub fn needs_work(node: &Node, warned: &HashSet<NodeId>, machine: bool) -> bool {
    matches!(
        &node.kind,
        NodeKind::Text {
            translation: None,
            ..
        }
    ) || warned.contains(&node.id)
        || (machine
            && node.kind.is_machine_work()
            && node.kind.state() == Some(quire_model::scene::TextState::Translated))
}

/// Whether a text node's source or translation holds what `pattern`
/// looks for.
pub fn holds(node: &Node, pattern: &quire_core::find::Pattern) -> bool {
    let NodeKind::Text {
        text, translation, ..
    } = &node.kind
    else {
        return false;
    };
    [text, translation]
        .into_iter()
        .flatten()
        .any(|t| pattern.is_match(t))
}

/// The node ids the shown session's warnings name.
pub fn warned(app: &App) -> HashSet<NodeId> {
    app.shown_session()
        .map(|id| app.warnings_of(id))
        .unwrap_or_default()
        .iter()
        .filter_map(|w| w.finding.node_id)
        .collect()
}

/// The first node after the selection (before it, when `back`) for which
/// `wanted` holds, in reading order across pages, wrapping around; the
/// selected node itself comes last.
pub fn next_where(app: &App, back: bool, wanted: impl Fn(&Node) -> bool) -> Option<Place> {
    let (_, snapshot) = app.desk.scene.as_ref()?;
    let places: Vec<Place> = snapshot
        .scene
        .pages
        .iter()
        .enumerate()
        .flat_map(|(p, page)| (0..page.nodes.len()).map(move |n| (p, n)))
        .collect();
    if places.is_empty() {
        return None;
    }
    let here = places
        .iter()
        .position(|&place| place == (app.desk.page_selected, app.desk.node_selected))
        .unwrap_or(0);
    let len = places.len();
    (1..=len)
        .map(|step| {
            if back {
                (here + len - step % len) % len
            } else {
                (here + step) % len
            }
        })
        .map(|i| places[i])
        .find(|&(p, n)| wanted(&snapshot.scene.pages[p].nodes[n]))
}

/// `/filter`: which nodes the node list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Text nodes without a translation.
    Untranslated,
    /// Translated by an engine, not yet looked at.
    Machine,
    Translated,
    Reviewed,
    Final,
    /// Named by a warning.
    Warned,
}

impl Filter {
    pub const NAMES: &[&str] = &[
        "untranslated",
        "machine",
        "translated",
        "reviewed",
        "final",
        "warned",
    ];

    pub fn parse(name: &str) -> Option<Filter> {
        Some(match name {
            "untranslated" => Filter::Untranslated,
            "machine" => Filter::Machine,
            "translated" => Filter::Translated,
            "reviewed" => Filter::Reviewed,
            "final" => Filter::Final,
            "warned" => Filter::Warned,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Filter::NAMES[self as usize]
    }

    pub fn keeps(self, node: &Node, warned: &HashSet<NodeId>) -> bool {
        use quire_model::scene::TextState;
        let NodeKind::Text { translation, .. } = &node.kind else {
            return self == Filter::Warned && warned.contains(&node.id);
        };
        match self {
            Filter::Untranslated => translation.is_none(),
            Filter::Machine => node.kind.is_machine_work(),
            Filter::Translated => node.kind.state() == Some(TextState::Translated),
            Filter::Reviewed => node.kind.state() == Some(TextState::Reviewed),
            Filter::Final => node.kind.state() == Some(TextState::Final),
            Filter::Warned => warned.contains(&node.id),
        }
    }
}

/// The indices of the selected page's nodes the node list shows (all of
/// them without a filter).
pub fn shown_nodes(app: &App) -> Vec<usize> {
    let Some(page) = app
        .desk
        .scene
        .as_ref()
        .and_then(|(_, s)| s.scene.pages.get(app.desk.page_selected))
    else {
        return Vec::new();
    };
    match app.desk.filter {
        None => (0..page.nodes.len()).collect(),
        Some(filter) => {
            let warned = warned(app);
            (0..page.nodes.len())
                .filter(|&i| filter.keeps(&page.nodes[i], &warned))
                .collect()
        }
    }
}

/// With a filter, keeps the selection on a shown node.
pub fn keep_selection_shown(app: &mut App) {
    if app.desk.filter.is_none() {
        return;
    }
    let shown = shown_nodes(app);
    if !shown.is_empty() && !shown.contains(&app.desk.node_selected) {
        app.desk.node_selected = shown[0];
    }
}
