//! Translations coming back: an XLIFF (1.x or 2.0) or gettext PO file
//! merged into a session as one history entry
//! ([`Core::import_translations`]).
//!
//! Each format's parser (`quire_formats::xliff`, `quire_formats::po`)
//! reads its file into `Unit`s that name a node (by quire's id, or by the
//! key of the entry a page made from a file gave it: `resolve`); the
//! merge is the same for both, and
//! three-way: per segment, the **base** (what the export the file came
//! from said, [`super::bases`]), **mine** (the node now) and **theirs**
//! (the file). What only the file changed is taken; what only quire
//! changed is kept (a file never reverts later work); what both changed
//! alike is unchanged; what both changed differently, a changed source,
//! or a `final` node the file would change is a **conflict**: named in the
//! reply with both values and left alone, unless the import names its
//! unit in `take` (`force` overrides only the language check, never a
//! conflict). A file without a known base is
//! compared with the project only: a node without a translation, or with
//! the one its file came with and no change since, takes the file's; one
//! whose translation differs otherwise is a conflict. Units this project
//! does not have are reported as unmatched. A file that cannot be read, is
//! for other languages than the project's (unless forced), or matches
//! nothing changes nothing and says why.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::Core;
use quire_formats::units::TranslationFormat;
use quire_formats::units::{Parsed, Unit, parse};
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{KindPatch, NodePatch, Op};
use quire_model::scene::{Author, Node, NodeKind, Origin, Scene, TextState};
use quire_store::storage::now_rfc3339;

use super::bases::{Base, Segment};

/// What an import of translations is asked for: the HTTP body and the MCP
/// tool's arguments.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TranslationImport {
    /// xliff (XLIFF 1.x or 2.0) or po (gettext).
    pub format: TranslationFormat,
    /// The file's text.
    pub content: String,
    /// Merge a file that says it translates from or into other languages
    /// than the project's. It never takes the file's side of a conflict:
    /// only `take` does.
    #[serde(default)]
    pub force: bool,
    /// Units (by the reply's `unit`) whose conflict is resolved by taking
    /// the file's value; the other conflicts keep quire's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub take: Vec<String>,
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
    /// Units the file left as exported whose node changed here since:
    /// quire's value is kept.
    pub kept: usize,
    /// Units left alone (or taken, when `take` named them) and why.
    pub conflicts: Vec<Conflict>,
    /// Unit ids this project has no text node for.
    pub unmatched: Vec<String>,
    /// The export the file came from, when the project still knows it:
    /// the base of the merge. Without one, the file is compared with the
    /// project only.
    pub base: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    pub unit: String,
    pub page_id: PageId,
    /// Its page's place in the project, from 1.
    pub page: usize,
    pub node_id: NodeId,
    /// The translation here.
    pub mine: Option<String>,
    /// The file's.
    pub theirs: Option<String>,
    /// Why it is one.
    pub message: String,
    /// Whether the file's value was taken (its unit was in `take`).
    pub applied: bool,
}

/// The engine id a machine translation that came back in a file (PO
/// `fuzzy`) is recorded with.
pub(crate) const IMPORTED_ENGINE: &str = "import";

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
            user: None,
            at: now_rfc3339(),
            score: None,
            suggested_by: None,
        })));
    }
    Some(patch)
}

/// Brings `patch`'s state down to at most `translated`; whether it still
/// changes `node` (a reviewed state brought down to the `translated` the
/// node has changes nothing).
fn at_most_translated(node: &Node, patch: &mut NodePatch) -> bool {
    let Some(KindPatch::Text {
        translation: t,
        state: s,
        ..
    }) = &mut patch.kind
    else {
        return true;
    };
    if let Some(state) = s
        && *state > TextState::Translated
    {
        *state = TextState::Translated;
    }
    let NodeKind::Text {
        translation, state, ..
    } = &node.kind
    else {
        return true;
    };
    let same_translation = t.as_ref().is_none_or(|t| t == translation);
    let same_state = s.is_none_or(|s| Some(s) == *state);
    !(same_translation && same_state)
}

/// What the merge makes of a unit whose file value differs from the
/// node's.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// The file's value is applied.
    Take,
    /// The file left it as exported; the node changed since: kept.
    Keep,
    /// Left alone (unless taken), and why.
    Conflict(String),
}

/// The three-way merge of one segment whose file value differs from the
/// node's (`mine`): see the module doc. `source` is the node's text,
/// `exported` the base's segment when the file's export is known.
fn merge(mine: &Node, source: &str, theirs: &Unit, exported: Option<&Segment>) -> Verdict {
    let Some(base) = exported else {
        if theirs.source != source {
            return Verdict::Conflict("its source differs from the file's".to_owned());
        }
        if mine.kind.state() == Some(TextState::Final) {
            return Verdict::Conflict("it is final here".to_owned());
        }
        let NodeKind::Text { translation, .. } = &mine.kind else {
            return Verdict::Keep;
        };
        let untouched = matches!(
            &mine.kind,
            NodeKind::Text { origin: Some(o), .. } if o.engine.as_deref() == Some(IMPORTED_ENGINE)
        );
        return if translation.as_deref().is_none_or(str::is_empty) || untouched {
            Verdict::Take
        } else {
            Verdict::Conflict(
                "it is translated here and differently in the file, which is not from a \
                 known export of this project"
                    .to_owned(),
            )
        };
    };
    let target = theirs.target.as_deref().filter(|t| !t.is_empty());
    let theirs_changed = theirs.target.is_some() && target != base.translation.as_deref()
        || theirs.state.is_some_and(|s| s != base.state)
        || theirs.machine.is_some_and(|m| m != base.machine);
    if !theirs_changed {
        return Verdict::Keep;
    }
    if theirs.source != base.source || source != base.source {
        return Verdict::Conflict("its source changed since the export".to_owned());
    }
    if mine.kind.state() == Some(TextState::Final) {
        return Verdict::Conflict("it is final here".to_owned());
    }
    let NodeKind::Text { translation, .. } = &mine.kind else {
        return Verdict::Keep;
    };
    let mine_changed = translation.as_deref().filter(|t| !t.is_empty())
        != base.translation.as_deref()
        || mine.kind.state().unwrap_or(TextState::Initial) != base.state
        || is_machine(mine) != base.machine;
    if mine_changed {
        Verdict::Conflict("changed here and in the file since the export".to_owned())
    } else {
        Verdict::Take
    }
}

/// `units` with the node each names: its own (a quire export's ids), or
/// the node whose entry has its key (a page made from a file like it).
/// Keys are looked up on one page, the one that has most of them: two
/// pages made from like files (two catalogs of one program) share keys.
fn resolve(mut units: Vec<Unit>, scene: &Scene) -> Vec<Unit> {
    type Key = (String, Option<u32>);
    let mut pages: Vec<HashMap<&Key, NodeId>> = Vec::new();
    let keys: Vec<Option<Key>> = units
        .iter()
        .map(|u| u.key.clone().filter(|_| u.node.is_none()))
        .collect();
    for page in &scene.pages {
        let mut on_page = HashMap::new();
        for node in &page.nodes {
            if let NodeKind::Text {
                entry: Some(entry), ..
            } = &node.kind
            {
                on_page.insert((entry.key.clone(), entry.form), node.id);
            }
        }
        if on_page.is_empty() {
            continue;
        }
        let found: HashMap<&Key, NodeId> = keys
            .iter()
            .flatten()
            .filter_map(|k| on_page.get(k).map(|id| (k, *id)))
            .collect();
        pages.push(found);
    }
    let Some(best) = pages.into_iter().max_by_key(HashMap::len) else {
        return units;
    };
    let best: HashMap<Key, NodeId> = best.into_iter().map(|(k, v)| (k.clone(), v)).collect();
    for (unit, key) in units.iter_mut().zip(&keys) {
        if let Some(id) = key.as_ref().and_then(|k| best.get(k)) {
            unit.node = Some(*id);
        }
    }
    units
}

/// A file that translates from or into another language than the
/// project's is refused unless forced.
fn same_languages(
    (source, target): (Option<&str>, Option<&str>),
    project: &quire_model::scene::ProjectMeta,
) -> CoreResult<()> {
    for (file, project, which) in [
        (source, project.source_language.as_deref(), "from"),
        (target, project.target_language.as_deref(), "into"),
    ] {
        if let (Some(file), Some(project)) = (file, project)
            && !quire_formats::units::Languages::names(file, project)
        {
            return Err(CoreError::InvalidInput(format!(
                "the file translates {which} `{file}` but the project {which} `{project}`; \
                 import it with force to merge it anyway"
            )));
        }
    }
    Ok(())
}

/// The units `take` names, as a set (looked up once per conflict, so a
/// long list costs linear time). An id that is no unit of the file is a
/// mistake (a typo, another file's report), refused by name.
fn taken<'t>(take: &'t [String], units: &[Unit]) -> CoreResult<HashSet<&'t str>> {
    if !take.is_empty() {
        let ids: HashSet<&str> = units.iter().map(|u| u.id.as_str()).collect();
        if let Some(unknown) = take.iter().find(|id| !ids.contains(id.as_str())) {
            return Err(CoreError::InvalidInput(format!(
                "take names `{unknown}`, which is not a unit of this file (a conflict's \
                 `unit` from this file's import reply)"
            )));
        }
    }
    Ok(take.iter().map(String::as_str).collect())
}

impl Core {
    /// Merges translations from an XLIFF or PO file into the session
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
            take,
        } = import;
        let Parsed {
            units,
            language,
            source_language,
            export,
        } = super::blocking(move || parse(format, &content)).await?;
        let base = match &export {
            Some(id) => {
                let dir = self.open_session(session)?.exports_dir();
                let id = id.clone();
                super::blocking(move || Base::load(&dir, &id)).await?
            }
            None => None,
        };
        let snapshot = self.scene(session).await?;
        let scene = &snapshot.scene;
        if !force {
            same_languages(
                (source_language.as_deref(), language.as_deref()),
                &scene.project,
            )?;
        }
        let units = resolve(units, scene);
        let take = taken(&take, &units)?;
        // A node named by two units: which one is meant cannot be told, so
        // neither applies (not even taken) and both are reported.
        let mut named: HashMap<NodeId, usize> = HashMap::new();
        for node in units.iter().filter_map(|u| u.node) {
            *named.entry(node).or_default() += 1;
        }
        let nodes: HashMap<NodeId, (PageId, usize, &Node)> = scene
            .pages
            .iter()
            .enumerate()
            .flat_map(|(i, p)| p.nodes.iter().map(move |n| (n.id, (p.id, i + 1, n))))
            .collect();
        let mut report = ImportReport {
            epoch: snapshot.epoch,
            updated: 0,
            unchanged: 0,
            kept: 0,
            base: base.as_ref().map(|b| b.id.clone()),
            conflicts: Vec::new(),
            unmatched: Vec::new(),
        };
        let mut ops = Vec::new();
        for unit in &units {
            let found = unit
                .node
                .and_then(|id| nodes.get(&id))
                .filter(|(.., n)| matches!(n.kind, NodeKind::Text { .. }));
            let Some(&(page_id, page, node)) = found else {
                report.unmatched.push(unit.id.clone());
                continue;
            };
            let NodeKind::Text {
                text, translation, ..
            } = &node.kind
            else {
                continue;
            };
            let conflict = |message: String, applied: bool| Conflict {
                unit: unit.id.clone(),
                page_id,
                page,
                node_id: node.id,
                mine: translation.clone().filter(|t| !t.is_empty()),
                theirs: unit.target.clone().filter(|t| !t.is_empty()),
                message,
                applied,
            };
            let twice =
                named.get(&node.id).copied().filter(|n| *n > 1).map(|n| {
                    format!("the file has {n} units for this text; none of them is applied")
                });
            if let Some(why) = twice.or_else(|| unit.unmergeable.map(str::to_owned)) {
                report.conflicts.push(conflict(why, false));
                continue;
            }
            let Some(mut patch) = change(node, unit) else {
                report.unchanged += 1;
                continue;
            };
            // Someone below review brings a file's states down to at most
            // `translated` (spec 10, "Review states").
            if self.role_below_review().is_some() && !at_most_translated(node, &mut patch) {
                report.unchanged += 1;
                continue;
            }
            let exported = base.as_ref().and_then(|b| b.segments.get(&node.id));
            let source = text.as_deref().unwrap_or("");
            let verdict = merge(node, source, unit, exported);
            let why = match verdict {
                Verdict::Keep => {
                    report.kept += 1;
                    continue;
                }
                Verdict::Take => None,
                Verdict::Conflict(why) => Some(why),
            };
            if let Some(message) = why {
                let applied = take.contains(unit.id.as_str());
                report.conflicts.push(conflict(message, applied));
                if !applied {
                    continue;
                }
            }
            report.updated += 1;
            ops.push(Op::UpdateNode {
                page: page_id,
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

#[cfg(test)]
mod tests {
    use super::*;
    use quire_model::scene::Transform;

    fn node(translation: Option<&str>, state: TextState) -> Node {
        let mut kind = NodeKind::source(Some("Hello".into()));
        if let NodeKind::Text {
            translation: t,
            state: s,
            ..
        } = &mut kind
        {
            *t = translation.map(str::to_owned);
            *s = Some(state);
        }
        Node {
            id: NodeId(uuid::Uuid::nil()),
            transform: Transform::default(),
            visible: true,
            kind,
        }
    }

    fn unit(target: Option<&str>) -> Unit {
        Unit {
            source: "Hello".into(),
            target: target.map(str::to_owned),
            ..Unit::default()
        }
    }

    fn base(translation: Option<&str>) -> Segment {
        Segment {
            source: "Hello".into(),
            translation: translation.map(str::to_owned),
            state: TextState::inferred(translation),
            machine: false,
        }
    }

    fn conflict(verdict: Verdict, why: &str) {
        match verdict {
            Verdict::Conflict(message) => assert!(message.contains(why), "{message}"),
            other => panic!("{other:?}, not a conflict ({why})"),
        }
    }

    /// Spec 14's table, row by row (a unit whose file value equals the
    /// node's never reaches `merge`: "changed on both sides alike").
    #[test]
    fn the_three_way_table() {
        use TextState::{Final, Reviewed, Translated};
        let exported = base(Some("Bonjour"));
        // Only the file changed it: taken.
        let mine = node(Some("Bonjour"), Translated);
        let v = merge(&mine, "Hello", &unit(Some("Salut")), Some(&exported));
        assert_eq!(v, Verdict::Take);
        // Only quire changed it: kept, even though the file "differs".
        let mine = node(Some("Bonjour !"), Translated);
        let v = merge(&mine, "Hello", &unit(Some("Bonjour")), Some(&exported));
        assert_eq!(v, Verdict::Keep);
        // A file that says nothing of the target changed nothing.
        let v = merge(&mine, "Hello", &unit(None), Some(&exported));
        assert_eq!(v, Verdict::Keep);
        // Both changed, differently.
        let v = merge(&mine, "Hello", &unit(Some("Salut")), Some(&exported));
        conflict(v, "changed here and in the file");
        // A review in quire is a change too.
        let mine = node(Some("Bonjour"), Reviewed);
        let v = merge(&mine, "Hello", &unit(Some("Salut")), Some(&exported));
        conflict(v, "changed here and in the file");
        // The source changed, here or in the file.
        let mine = node(Some("Bonjour"), Translated);
        conflict(
            merge(&mine, "Hello!", &unit(Some("Salut")), Some(&exported)),
            "source changed",
        );
        let mut moved = unit(Some("Salut"));
        moved.source = "Hi".into();
        conflict(
            merge(&mine, "Hello", &moved, Some(&exported)),
            "source changed",
        );
        // Final here, untouched since the export: still not the file's.
        let mut final_base = base(Some("Bonjour"));
        final_base.state = Final;
        let mine = node(Some("Bonjour"), Final);
        conflict(
            merge(&mine, "Hello", &unit(Some("Salut")), Some(&final_base)),
            "final here",
        );
        // The file's reviewer removed `fuzzy` (a PO approval): taken.
        let mut approved = unit(Some("Bonjour"));
        approved.machine = Some(false);
        let mut machine_base = base(Some("Bonjour"));
        machine_base.machine = true;
        let mut mine = node(Some("Bonjour"), Translated);
        if let NodeKind::Text { origin, .. } = &mut mine.kind {
            *origin = Some(Box::new(Origin {
                by: Author::Engine,
                engine: Some("llm".into()),
                client: None,
                user: None,
                at: String::new(),
                score: None,
                suggested_by: None,
            }));
        }
        assert_eq!(
            merge(&mine, "Hello", &approved, Some(&machine_base)),
            Verdict::Take
        );
    }

    #[test]
    fn without_a_base_only_an_untranslated_node_takes_the_file() {
        let empty = node(None, TextState::Initial);
        assert_eq!(
            merge(&empty, "Hello", &unit(Some("Salut")), None),
            Verdict::Take
        );
        let mine = node(Some("Bonjour"), TextState::Translated);
        conflict(
            merge(&mine, "Hello", &unit(Some("Salut")), None),
            "not from a known export",
        );
        conflict(
            merge(&empty, "Hello there", &unit(Some("Salut")), None),
            "source differs",
        );
        let locked = node(Some("Bonjour"), TextState::Final);
        conflict(
            merge(&locked, "Hello", &unit(Some("Salut")), None),
            "final here",
        );
    }
}
