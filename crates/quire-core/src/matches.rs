//! What the translator's desk reaches for on a segment: the memory's best
//! matches for its source (score, origin, date, the words that differ)
//! and concordance, the remembered segments holding some words.
//!
//! The memory behind them is kept between calls in two parts, so that a
//! pane following the cursor costs a lookup, not a build: the imported
//! TMX files' units (built again when a file in the memory directory
//! changes) and the projects' reviewed and final translations (built
//! again when an open session's epoch or a closed project changes).

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Core;
use super::tm::{Hit, Memory, MemoryParts, memory_languages};
use quire_model::error::{CoreError, CoreResult};
use quire_model::ids::{NodeId, SessionId};
use quire_model::scene::NodeKind;

/// How similar a remembered source must be to be offered as a match.
pub const MIN_SCORE: f64 = 0.5;
/// The most matches offered for a segment.
pub const MATCHES: usize = 3;
/// The most words, and bytes, a concordance search looks for.
pub const MAX_WORDS: usize = 20;
pub const MAX_QUERY_BYTES: usize = 500;

/// A remembered translation offered for a segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    pub source: String,
    pub target: String,
    /// 0 to 1 (identical); concordance results have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// A project's name, or `tmx NAME`.
    pub origin: String,
    /// When it was last changed (RFC 3339), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<String>,
    /// The remembered source word by word against the segment's: what
    /// both have, what only the memory has (`removed`), what only the
    /// segment has (`added`). Empty for concordance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<DiffPart>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffPart {
    pub text: String,
    pub change: Change,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Change {
    Same,
    /// In the remembered source only.
    Removed,
    /// In the segment's source only.
    Added,
}

impl Match {
    fn of(hit: &Hit<'_>, segment: Option<&str>) -> Match {
        Match {
            source: hit.source.to_owned(),
            target: hit.target.to_owned(),
            score: segment.map(|_| (hit.score * 100.0).round() / 100.0),
            origin: hit.origin.to_owned(),
            changed: (!hit.changed.is_empty()).then(|| hit.changed.to_owned()),
            diff: segment.map_or_else(Vec::new, |s| diff(hit.source, s)),
        }
    }
}

/// The words of `remembered` against those of `segment` (a longest common
/// subsequence of words), runs of one kind joined.
pub fn diff(remembered: &str, segment: &str) -> Vec<DiffPart> {
    let a: Vec<&str> = remembered.split_whitespace().collect();
    let b: Vec<&str> = segment.split_whitespace().collect();
    // Segments are sentences: the table stays small; past that, no diff.
    if a.len() * b.len() > 40_000 {
        return Vec::new();
    }
    // Words alike but for case and the punctuation around them.
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let same = |x: &str, y: &str| bare(x) == bare(y);
    let mut table = vec![vec![0u16; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            table[i][j] = if same(a[i], b[j]) {
                table[i + 1][j + 1] + 1
            } else {
                table[i + 1][j].max(table[i][j + 1])
            };
        }
    }
    let mut out: Vec<DiffPart> = Vec::new();
    let mut push = |text: &str, change: Change| match out.last_mut() {
        Some(last) if last.change == change => {
            last.text.push(' ');
            last.text.push_str(text);
        }
        _ => out.push(DiffPart {
            text: text.to_owned(),
            change,
        }),
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && same(a[i], b[j]) {
            push(b[j], Change::Same);
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || table[i][j + 1] >= table[i + 1][j]) {
            push(b[j], Change::Added);
            j += 1;
        } else {
            push(a[i], Change::Removed);
            i += 1;
        }
    }
    out
}

/// The two parts of the memory kept between calls, each with what it was
/// built from.
#[derive(Default)]
pub(crate) struct Cache {
    files: Option<(FilesKey, Arc<Memory>)>,
    projects: HashMap<SessionId, (ProjectsKey, Arc<Memory>)>,
}

/// The memory directory's files (name, size, modified) and the languages.
type FilesKey = (
    Vec<(String, u64, Option<std::time::SystemTime>)>,
    String,
    String,
);
/// Open sessions' epochs, closed projects' update times, the target.
type ProjectsKey = (Vec<(String, u64)>, Option<String>);

impl Core {
    /// The memory's two parts for `session`, built only when what they are
    /// made of changed since the last call.
    async fn desk_memory(&self, session: SessionId) -> CoreResult<[Arc<Memory>; 2]> {
        let mut signature: Vec<(String, u64)> = Vec::new();
        let open = self.sessions();
        for s in &open {
            signature.push((s.id.to_string(), self.scene(s.id).await?.epoch));
        }
        // A closed session's memory goes with it.
        self.desk_cache()
            .projects
            .retain(|id, _| open.iter().any(|s| s.id == *id));
        for p in self.list_projects().await? {
            if p.session_id.is_none() {
                signature.push((p.id.to_string(), p.updated_at_ms));
            }
        }
        let own = self.scene(session).await?.scene;
        let (source, target) = memory_languages(&own, None);
        let projects_key: ProjectsKey = (signature, target.clone());
        let cached = self.desk_cache().projects.get(&session).cloned();
        let projects = match cached {
            Some((key, memory)) if key == projects_key => memory,
            _ => {
                let parts = self.memory_parts(session, None).await?;
                let memory =
                    Arc::new(super::blocking(move || Ok(Memory::of(parts.projects))).await?);
                self.desk_cache()
                    .projects
                    .insert(session, (projects_key, memory.clone()));
                memory
            }
        };
        let (Some(source), Some(target)) = (source, target) else {
            // Without both languages a TMX unit's sides cannot be told.
            return Ok([Arc::new(Memory::default()), projects]);
        };
        let dir = self.memory_dir().to_path_buf();
        let listed = super::blocking({
            let dir = dir.clone();
            move || Ok(listing(&dir))
        })
        .await?;
        let key: FilesKey = (listed, source.clone(), target.clone());
        let cached = self.desk_cache().files.clone();
        let files = match cached {
            Some((k, memory)) if k == key => memory,
            _ => {
                let parts = MemoryParts {
                    source: Some(source),
                    target: Some(target),
                    projects: Vec::new(),
                };
                let memory =
                    Arc::new(super::blocking(move || Ok(Memory::of(parts.files(&dir)?))).await?);
                self.desk_cache().files = Some((key, memory.clone()));
                memory
            }
        };
        Ok([files, projects])
    }

    fn desk_cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.inner
            .desk
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The best (up to three) remembered translations for the source of
    /// text node `node`, from the TMX files and the projects, best first.
    pub async fn matches(&self, session: SessionId, node: NodeId) -> CoreResult<Vec<Match>> {
        let snapshot = self.scene(session).await?;
        let source = snapshot
            .scene
            .pages
            .iter()
            .flat_map(|p| &p.nodes)
            .find(|n| n.id == node)
            .ok_or_else(|| CoreError::NotFound {
                what: "node",
                id: node.to_string(),
            })
            .and_then(|n| match &n.kind {
                NodeKind::Text { text, .. } => Ok(text.clone().unwrap_or_default()),
                _ => Err(CoreError::InvalidInput(format!(
                    "node {node} is not a text node"
                ))),
            })?;
        let memories = self.desk_memory(session).await?;
        let mut hits: Vec<Hit<'_>> = memories
            .iter()
            .flat_map(|m| m.lookup_top(&source, MIN_SCORE, MATCHES))
            // The segment's own translation is not a match for itself.
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        let mut out: Vec<Match> = Vec::new();
        for hit in &hits {
            if out
                .iter()
                .any(|m| m.source == hit.source && m.target == hit.target)
            {
                continue;
            }
            out.push(Match::of(hit, Some(&source)));
            if out.len() == MATCHES {
                break;
            }
        }
        Ok(out)
    }

    /// Remembered segments whose source or translation holds every word
    /// of `query` (at most `limit`).
    pub async fn concordance(
        &self,
        session: SessionId,
        query: &str,
        limit: usize,
    ) -> CoreResult<Vec<Match>> {
        let words = query.split_whitespace().count();
        if words == 0 {
            return Err(CoreError::InvalidInput(
                "give one or more words to look for".into(),
            ));
        }
        // Each word is looked for in every remembered segment: a bounded
        // query keeps a search a scan, not a multiple of one.
        if words > MAX_WORDS || query.len() > MAX_QUERY_BYTES {
            return Err(CoreError::InvalidInput(format!(
                "look for at most {MAX_WORDS} words ({MAX_QUERY_BYTES} bytes)"
            )));
        }
        let memories = self.desk_memory(session).await?;
        let mut out: Vec<Match> = Vec::new();
        // The projects' first: a team's own reviewed work before old files.
        for memory in memories.iter().rev() {
            for hit in memory.concordance(query, limit) {
                if out.len() < limit {
                    out.push(Match::of(&hit, None));
                }
            }
        }
        Ok(out)
    }
}

/// The memory directory's files, as its cache key.
fn listing(dir: &std::path::Path) -> Vec<(String, u64, Option<std::time::SystemTime>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                meta.len(),
                meta.modified().ok(),
            ))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_that_differ() {
        let parts = diff("Where are you going tonight?", "where are we going?");
        let said: Vec<(&str, Change)> = parts.iter().map(|p| (p.text.as_str(), p.change)).collect();
        assert_eq!(
            said,
            [
                ("where are", Change::Same),
                ("we", Change::Added),
                ("you", Change::Removed),
                ("going?", Change::Same),
                ("tonight?", Change::Removed),
            ]
        );
    }
}
