//! Translations coming back: an XLIFF 2.0 or gettext PO file merged into a
//! session as one history entry ([`Core::import_translations`]).
//!
//! Each format's parser (`quire_formats::xliff`, `quire_formats::po`) reads its file
//! into `Unit`s that name a node; the merge is the same for both. A unit
//! sets its node's translation and state. One whose source differs from the
//! node's current text, or whose node is `final` here, is a conflict:
//! reported and left alone unless the import is forced. Units this project
//! does not have are reported as unmatched. A file that cannot be read, is
//! for another target language (unless forced), or matches nothing changes
//! nothing and says why.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::Core;
use super::error::{CoreError, CoreResult};
use super::ids::{NodeId, PageId, SessionId};
use super::op::{KindPatch, NodePatch, Op};
use super::scene::{Author, Node, NodeKind, Origin, TextState};
use super::storage::now_rfc3339;
pub use quire_formats::units::TranslationFormat;
use quire_formats::units::{Parsed, Unit, parse};

/// What an import of translations is asked for: the HTTP body and the MCP
/// tool's arguments.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TranslationImport {
    /// xliff (XLIFF 2.0) or po (gettext), as quire exports them.
    pub format: TranslationFormat,
    /// The file's text.
    pub content: String,
    /// Apply conflicting units too.
    #[serde(default)]
    pub force: bool,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The epoch after the import (unchanged when nothing was updated).
    pub epoch: u64,
    /// Units whose translation or state changed.
    pub updated: usize,
    /// Units that matched and already said the same.
    pub unchanged: usize,
    /// Units left alone (or, forced, applied anyway) and why.
    pub conflicts: Vec<Conflict>,
    /// Unit ids this project has no text node for.
    pub unmatched: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    pub unit: String,
    pub page_id: PageId,
    pub node_id: NodeId,
    pub message: String,
    /// Whether it was applied anyway (`force`).
    pub applied: bool,
}

/// The engine id a machine translation that came back in a file (PO
/// `fuzzy`) is recorded with.
const IMPORTED_ENGINE: &str = "import";

/// Whether `node`'s translation is a machine's nobody has reviewed.
fn is_machine(node: &Node) -> bool {
    node.kind.is_machine_work()
}

/// What a matched unit asks of its node: `None` when it says what the
/// node already says.
fn change(node: &Node, unit: &Unit) -> Option<NodePatch> {
    let NodeKind::Text { translation, .. } = &node.kind else {
        return None;
    };
    let current = node.kind.state().unwrap_or(TextState::Initial);
    let target = match &unit.target {
        Some(t) if t.is_empty() => Some(None),
        Some(t) => Some(Some(t.clone())),
        None => None,
    };
    let new_translation = target.clone().unwrap_or_else(|| translation.clone());
    let changed = new_translation != *translation;
    let has = new_translation.as_deref().is_some_and(|t| !t.is_empty());
    let mut state = match unit.state {
        Some(s) => s,
        None if changed => TextState::inferred(new_translation.as_deref()),
        // A PO entry that lost its `fuzzy` flag (or gained one) says who
        // the translation is now.
        None if has && unit.machine.is_some_and(|m| m != is_machine(node)) => TextState::Translated,
        None => current,
    };
    // A state says where a translation stands: none without one, at least
    // `translated` with one.
    if !has {
        state = TextState::Initial;
    } else if state == TextState::Initial {
        state = TextState::Translated;
    }
    let machine = unit.machine == Some(true) && has;
    let restamp = has && unit.machine.is_some_and(|m| m != is_machine(node));
    if !changed && state == current && !restamp {
        return None;
    }
    let mut patch = NodePatch::text((changed || restamp).then_some(new_translation), Some(state));
    if machine && let Some(KindPatch::Text { origin, .. }) = &mut patch.kind {
        *origin = Some(Some(Box::new(Origin {
            by: Author::Engine,
            engine: Some(IMPORTED_ENGINE.to_owned()),
            client: None,
            at: now_rfc3339(),
            score: None,
        })));
    }
    Some(patch)
}

impl Core {
    /// Merges translations from an XLIFF 2.0 or PO file into the session
    /// as one history entry; see the module doc.
    pub async fn import_translations(
        &self,
        session: SessionId,
        import: TranslationImport,
    ) -> CoreResult<ImportReport> {
        let TranslationImport {
            format,
            content,
            force,
        } = import;
        let Parsed {
            units,
            language,
            source_language,
        } = super::blocking(move || parse(format, &content)).await?;
        let snapshot = self.scene(session).await?;
        let scene = &snapshot.scene;
        let project = &scene.project;
        for (file, project, which) in [
            (&source_language, &project.source_language, "from"),
            (&language, &project.target_language, "into"),
        ] {
            if let (Some(file), Some(project)) = (file, project)
                && !file.eq_ignore_ascii_case(project)
                && !force
            {
                return Err(CoreError::InvalidInput(format!(
                    "the file translates {which} `{file}` but the project {which} `{project}`; \
                     import it with force to merge it anyway"
                )));
            }
        }
        // A node named by two units: which one is meant cannot be told, so
        // neither applies (not even forced) and both are reported.
        let mut named: HashMap<NodeId, usize> = HashMap::new();
        for node in units.iter().filter_map(|u| u.node) {
            *named.entry(node).or_default() += 1;
        }
        let nodes: HashMap<NodeId, (PageId, &Node)> = scene
            .pages
            .iter()
            .flat_map(|p| p.nodes.iter().map(move |n| (n.id, (p.id, n))))
            .collect();
        let mut report = ImportReport {
            epoch: snapshot.epoch,
            updated: 0,
            unchanged: 0,
            conflicts: Vec::new(),
            unmatched: Vec::new(),
        };
        let mut ops = Vec::new();
        for unit in &units {
            let found = unit
                .node
                .and_then(|id| nodes.get(&id))
                .filter(|(_, n)| matches!(n.kind, NodeKind::Text { .. }));
            let Some((page, node)) = found else {
                report.unmatched.push(unit.id.clone());
                continue;
            };
            let NodeKind::Text { text, .. } = &node.kind else {
                continue;
            };
            let twice =
                named.get(&node.id).copied().filter(|n| *n > 1).map(|n| {
                    format!("the file has {n} units for this text; none of them is applied")
                });
            if let Some(why) = twice.or_else(|| unit.unmergeable.map(str::to_owned)) {
                report.conflicts.push(Conflict {
                    unit: unit.id.clone(),
                    page_id: *page,
                    node_id: node.id,
                    message: why,
                    applied: false,
                });
                continue;
            }
            let Some(patch) = change(node, unit) else {
                report.unchanged += 1;
                continue;
            };
            let why = if text.as_deref().unwrap_or("") != unit.source {
                Some("its source changed since the export".to_owned())
            } else if node.kind.state() == Some(TextState::Final) {
                Some("it is final here".to_owned())
            } else {
                None
            };
            if let Some(message) = why {
                report.conflicts.push(Conflict {
                    unit: unit.id.clone(),
                    page_id: *page,
                    node_id: node.id,
                    message,
                    applied: force,
                });
                if !force {
                    continue;
                }
            }
            report.updated += 1;
            ops.push(Op::UpdateNode {
                page: *page,
                id: node.id,
                patch,
                based_on: None,
            });
        }
        if units.is_empty() {
            return Err(CoreError::InvalidInput(format!(
                "the {} file has no translation units",
                format.name()
            )));
        }
        if report.unmatched.len() == units.len() {
            return Err(CoreError::InvalidInput(format!(
                "none of the file's {} units is a text node of this project (was it exported from another one?)",
                units.len()
            )));
        }
        if !ops.is_empty() {
            let label = format!("import {} · {} segments", format.name(), ops.len());
            let batch = Op::Batch {
                ops,
                label: Some(label),
            };
            report.epoch = self.apply(session, batch).await?.epoch;
        }
        Ok(report)
    }
}
