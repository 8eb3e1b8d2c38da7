//! Translation memory: the `reviewed` and `final` translations of the
//! managed projects and the imported TMX files ([`super::memories`]),
//! looked up by source for the `tm` engine.
//!
//! A [`Memory`] holds one entry per distinct source (of two translations
//! of the same source, a `final` one beats a `reviewed` one, then the
//! newer beats the older) and two indexes: the normalised source
//! (identical text, case and spacing aside) and a character-trigram index.
//! A fuzzy lookup counts the trigrams each entry shares with the query
//! through the posting lists (the rare ones only, when the query has
//! enough: a common word's trigrams are in most entries), scores the few
//! best candidates by edit distance (`strsim`'s normalised Levenshtein over
//! characters) and keeps the best at or above the minimum score: no scan of
//! the memory per node.
//!
//! The memory is built per `tm` step from the projects as they are then
//! (open sessions live, closed ones from their snapshot), so a segment
//! reviewed a moment ago is already in it.

use std::collections::HashMap;

use super::Core;
use quire_model::error::CoreResult;
use quire_model::ids::SessionId;
use quire_model::scene::{NodeKind, Scene, TextState};
use quire_store::storage::{ProjectFiles, SnapshotFile};

/// A translation the memory offers for a source, and how similar the
/// stored source is (1.0: identical).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    pub source: &'a str,
    pub target: &'a str,
    pub score: f64,
    /// Where it comes from: a project's name, or `tmx NAME`.
    pub origin: &'a str,
    /// When it was last changed (RFC 3339; empty: not known).
    pub changed: &'a str,
}

/// A translation to remember, with what ranks it against another of the
/// same source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Remembered {
    pub source: String,
    pub target: String,
    /// A `final` translation (else `reviewed`, or from a TMX file).
    pub locked: bool,
    /// RFC 3339 (empty: not known, older than any).
    pub changed: String,
    /// Where it comes from: a project's name, or `tmx NAME`.
    pub origin: String,
}

impl Remembered {
    /// Which of two translations of one source the memory keeps: `final`
    /// first, then the newer.
    fn rank(&self) -> (bool, &str) {
        (self.locked, &self.changed)
    }
}

struct Entry {
    kept: Remembered,
    /// The source normalised, as lookups compare it.
    key: String,
    /// How many distinct trigrams the source has.
    grams: u32,
}

/// How many candidates (by shared trigrams) are scored by edit distance.
const CANDIDATES: usize = 16;

/// The most rare posting lists a lookup counts.
const RARE_LISTS: usize = 8;

thread_local! {
    /// [`Memory::lookup`]'s per-entry counters, all zero between lookups.
    static SHARED: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[derive(Default)]
pub struct Memory {
    entries: Vec<Entry>,
    exact: HashMap<String, u32>,
    grams: HashMap<u64, Vec<u32>>,
}

/// Lower-cased, with runs of whitespace as one space and none at the ends.
fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The distinct character trigrams of a normalised text (padded, so short
/// texts have some), as hashes.
fn trigrams(normalised: &str) -> Vec<u64> {
    let chars: Vec<char> = std::iter::once(' ')
        .chain(normalised.chars())
        .chain(std::iter::once(' '))
        .collect();
    let mut out: Vec<u64> = chars
        .windows(3)
        .map(|w| {
            (u64::from(u32::from(w[0])) << 42)
                | (u64::from(u32::from(w[1])) << 21)
                | u64::from(u32::from(w[2]))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

impl Memory {
    /// A memory of `(source, target)` pairs, all of one rank: a later pair
    /// with the same normalised source replaces an earlier one.
    pub fn new<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Memory {
        Memory::of(pairs.into_iter().map(|(source, target)| Remembered {
            source: source.to_owned(),
            target: target.to_owned(),
            ..Remembered::default()
        }))
    }

    /// A memory of these translations; of two with the same normalised
    /// source it keeps the higher ranked (`final`, then newer), the later
    /// one when they rank the same.
    pub fn of(translations: impl IntoIterator<Item = Remembered>) -> Memory {
        let mut memory = Memory::default();
        for t in translations {
            memory.insert(t);
        }
        memory
    }

    fn insert(&mut self, t: Remembered) {
        let key = normalise(&t.source);
        if key.is_empty() || t.target.trim().is_empty() {
            return;
        }
        if let Some(&i) = self.exact.get(&key) {
            let entry = &mut self.entries[i as usize];
            if t.rank() >= entry.kept.rank() {
                entry.kept = t;
                entry.key.clone_from(&key);
            }
            return;
        }
        let Ok(id) = u32::try_from(self.entries.len()) else {
            return;
        };
        let grams = trigrams(&key);
        for g in &grams {
            self.grams.entry(*g).or_default().push(id);
        }
        self.entries.push(Entry {
            kept: t,
            key: key.clone(),
            grams: u32::try_from(grams.len()).unwrap_or(u32::MAX),
        });
        self.exact.insert(key, id);
    }

    fn hit(&self, id: u32, score: f64) -> Hit<'_> {
        let kept = &self.entries[id as usize].kept;
        Hit {
            source: &kept.source,
            target: &kept.target,
            score,
            origin: &kept.origin,
            changed: &kept.changed,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The best translation for `source` scoring at least `min_score`.
    pub fn lookup(&self, source: &str, min_score: f64) -> Option<Hit<'_>> {
        self.lookup_top(source, min_score, 1).into_iter().next()
    }

    /// The `n` best translations for `source` scoring at least
    /// `min_score`, best first (of equal scores, the higher ranked).
    pub fn lookup_top(&self, source: &str, min_score: f64, n: usize) -> Vec<Hit<'_>> {
        let key = normalise(source);
        if key.is_empty() || n == 0 {
            return Vec::new();
        }
        let mut found = Vec::new();
        let exact = self.exact.get(&key).copied();
        if let Some(i) = exact {
            let e = &self.entries[i as usize];
            let score = if e.kept.source.trim() == source.trim() {
                1.0
            } else {
                // Case or spacing differs: as close as it gets, not equal.
                0.99
            };
            if score >= min_score {
                found.push(self.hit(i, score));
            }
            if n == 1 {
                return found;
            }
        }
        let grams = trigrams(&key);
        // The query's posting lists, rarest first. Lists longer than a
        // twentieth of the memory (trigrams of common words) are left out
        // when at least three rarer ones remain: they cost the most and
        // tell the least.
        let mut lists: Vec<&Vec<u32>> = grams.iter().filter_map(|g| self.grams.get(g)).collect();
        lists.sort_by_key(|l| l.len());
        let common = (self.entries.len() / 20).max(1000);
        let rare = lists.iter().take_while(|l| l.len() <= common).count();
        let all = rare < 3 || rare == lists.len();
        // Of the rare ones, the rarest eight: a near-identical source has
        // almost all of them, and the longer ones cost the most to count.
        let used = if all {
            &lists[..]
        } else {
            &lists[..rare.min(RARE_LISTS)]
        };
        // Shared trigrams per entry, counted through the posting lists in
        // this thread's counters (as long as the memory, kept between
        // lookups: a fresh one per lookup costs more than the counting),
        // which are zeroed again on the way out.
        let query = grams.len() as f64;
        let mut candidates: Vec<(u32, f64)> = SHARED.with_borrow_mut(|shared| {
            if shared.len() < self.entries.len() {
                shared.resize(self.entries.len(), 0);
            }
            let mut touched = Vec::new();
            for list in used {
                for &id in list.iter() {
                    let n = &mut shared[id as usize];
                    if *n == 0 {
                        touched.push(id);
                    }
                    *n = n.saturating_add(1);
                }
            }
            // Dice over trigrams bounds how alike two texts can be: with
            // every list counted, skip entries that share too few to reach
            // the score; with the rare ones only, rank by what they share.
            touched
                .into_iter()
                .filter_map(|id| {
                    let n = f64::from(std::mem::take(&mut shared[id as usize]));
                    let rank = if all {
                        2.0 * n / (query + f64::from(self.entries[id as usize].grams))
                    } else {
                        n / used.len() as f64
                    };
                    (rank >= min_score * 0.5).then_some((id, rank))
                })
                .collect()
        });
        candidates.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        // The most similar by edit distance; of equally similar ones, the
        // higher ranked. A distance past what `min_score` (or the best so
        // far) allows is not worked out to its end.
        let query: Vec<char> = key.chars().collect();
        let mut stored: Vec<char> = Vec::new();
        let wanted = n - found.len();
        // The best so far, best first: (entry, distance, longest).
        let mut best: Vec<(u32, usize, usize)> = Vec::new();
        // Whether (id, d, l) goes before (b, e, m): a smaller distance
        // relative to length, exactly, then the higher ranked.
        let before = |(id, d, l): (u32, usize, usize), (b, e, m): (u32, usize, usize)| {
            let (ours, theirs) = (d * m, e * l);
            ours < theirs
                || ours == theirs
                    && self.entries[id as usize].kept.rank() > self.entries[b as usize].kept.rank()
        };
        for (id, _) in candidates.into_iter().take(CANDIDATES) {
            if Some(id) == exact {
                continue;
            }
            stored.clear();
            stored.extend(self.entries[id as usize].key.chars());
            let longest = query.len().max(stored.len());
            // score = 1 - distance / longest ≥ min_score.
            let mut limit = ((1.0 - min_score) * longest as f64 + 1e-9).floor() as usize;
            if best.len() == wanted
                && let Some(&(_, d, l)) = best.last()
            {
                // No worse than the last kept (d / l), so ties are ranked.
                limit = limit.min(d * longest / l);
            }
            let Some(distance) = distance_within(&query, &stored, limit) else {
                continue;
            };
            let this = (id, distance, longest);
            let at = best
                .iter()
                .position(|&other| before(this, other))
                .unwrap_or(best.len());
            if at < wanted {
                best.insert(at, this);
                best.truncate(wanted);
            }
        }
        found.extend(
            best.into_iter()
                .map(|(id, d, l)| self.hit(id, 1.0 - d as f64 / l as f64))
                .filter(|hit| hit.score >= min_score),
        );
        found
    }

    /// Up to `limit` remembered segments whose source (or target) holds
    /// every word of `query`, case and spacing aside; best ranked first.
    pub fn concordance(&self, query: &str, limit: usize) -> Vec<Hit<'_>> {
        let words: Vec<String> = normalise(query)
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<u32> = (0..self.entries.len() as u32)
            .filter(|&i| {
                let e = &self.entries[i as usize];
                let target = normalise(&e.kept.target);
                words
                    .iter()
                    .all(|w| e.key.contains(w.as_str()) || target.contains(w.as_str()))
            })
            .collect();
        found.sort_by(|&a, &b| {
            let (a, b) = (&self.entries[a as usize], &self.entries[b as usize]);
            b.kept.rank().cmp(&a.kept.rank())
        });
        found
            .into_iter()
            .take(limit)
            .map(|i| self.hit(i, 1.0))
            .collect()
    }
}

/// The edit distance (Levenshtein, in characters) between `a` and `b` if
/// it is at most `limit`, else `None`: only a band of `2 × limit + 1`
/// diagonals is computed, and the work stops once no cell in a row is
/// within the limit.
fn distance_within(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    let (n, m) = (a.len(), b.len());
    if n.abs_diff(m) > limit {
        return None;
    }
    if n == 0 || m == 0 {
        return Some(n.max(m));
    }
    const FAR: usize = usize::MAX / 2;
    let mut prev: Vec<usize> = (0..=m).map(|j| if j <= limit { j } else { FAR }).collect();
    let mut cur = vec![FAR; m + 1];
    for i in 1..=n {
        let lo = i.saturating_sub(limit).max(1);
        let hi = (i + limit).min(m);
        cur[0] = if i <= limit { i } else { FAR };
        cur[lo - 1] = if lo == 1 { cur[0] } else { FAR };
        let mut least = cur[0];
        for j in lo..=hi {
            let v = (prev[j - 1] + usize::from(a[i - 1] != b[j - 1]))
                .min(prev[j] + 1)
                .min(cur[j - 1] + 1);
            cur[j] = v;
            least = least.min(v);
        }
        if hi < m {
            cur[hi + 1] = FAR;
        }
        if least > limit {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[m] <= limit).then_some(prev[m])
}

/// Whether two optional language tags can be the same language: equal
/// (case aside), or one of them unknown.
fn same_language(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => true,
    }
}

/// What a scene adds to a memory: its reviewed and final text nodes,
/// each dated by its translation's origin.
pub fn remembered(scene: &Scene) -> Vec<Remembered> {
    remembered_nodes(scene)
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

/// [`remembered`], each with its node.
pub fn remembered_nodes(scene: &Scene) -> Vec<(&quire_model::scene::Node, Remembered)> {
    scene
        .pages
        .iter()
        .flat_map(|p| p.nodes.iter())
        .filter(|n| matches!(n.kind.state(), Some(TextState::Reviewed | TextState::Final)))
        .filter_map(|n| match &n.kind {
            NodeKind::Text {
                text: Some(text),
                translation: Some(translation),
                origin,
                ..
            } if !text.trim().is_empty() && !translation.trim().is_empty() => Some((
                n,
                Remembered {
                    source: text.clone(),
                    target: translation.clone(),
                    locked: n.kind.state() == Some(TextState::Final),
                    changed: origin.as_ref().map(|o| o.at.clone()).unwrap_or_default(),
                    origin: scene.project.name.clone(),
                },
            )),
            _ => None,
        })
        .collect()
}

impl Core {
    /// The translation memory for `session` translating into `target`:
    /// the reviewed and final translations of the managed projects and
    /// open sessions whose languages can match this project's, this
    /// session's own last (it wins a tie), and the imported TMX files'
    /// units in both languages. Closed projects are read from their
    /// snapshots.
    pub async fn memory(&self, session: SessionId, target: Option<&str>) -> CoreResult<Memory> {
        let parts = self.memory_parts(session, target).await?;
        let dir = self.memory_dir().to_path_buf();
        super::blocking(move || {
            let files = parts.files(&dir)?;
            Ok(Memory::of(files.into_iter().chain(parts.projects)))
        })
        .await
    }

    /// The languages of a memory for `session` and what the projects
    /// give it, lowest ranked first (its own last).
    pub(crate) async fn memory_parts(
        &self,
        session: SessionId,
        target: Option<&str>,
    ) -> CoreResult<MemoryParts> {
        let own = self.scene(session).await?;
        let (source, target) = memory_languages(&own.scene, target);
        let fits = |scene: &Scene| {
            same_language(scene.project.source_language.as_deref(), source.as_deref())
                && same_language(scene.project.target_language.as_deref(), target.as_deref())
        };
        let mut scenes: Vec<(u64, Vec<Remembered>)> = Vec::new();
        for open in self.sessions() {
            if open.id == session {
                continue;
            }
            if let Ok(s) = self.scene(open.id).await
                && fits(&s.scene)
            {
                scenes.push((0, remembered(&s.scene)));
            }
        }
        let closed: Vec<_> = self
            .list_projects()
            .await?
            .into_iter()
            .filter(|p| p.session_id.is_none())
            .collect();
        let from_disk = super::blocking(move || {
            Ok(closed
                .into_iter()
                .filter_map(|p| {
                    let file = ProjectFiles::new(p.path).scene_json();
                    // A project that cannot be read adds nothing.
                    let snapshot = SnapshotFile::read(&file).ok().flatten()?;
                    Some((p.updated_at_ms, snapshot.scene))
                })
                .collect::<Vec<_>>())
        })
        .await?;
        for (updated, scene) in from_disk {
            if fits(&scene) {
                scenes.push((updated, remembered(&scene)));
            }
        }
        scenes.sort_by_key(|(updated, _)| *updated);
        scenes.push((u64::MAX, remembered(&own.scene)));
        Ok(MemoryParts {
            source,
            target,
            projects: scenes.into_iter().flat_map(|(_, r)| r).collect(),
        })
    }
}

/// The languages a memory for `scene` is in: the project's source
/// language (else what its text says it is) and `target` (else the
/// project's).
pub(crate) fn memory_languages(
    scene: &Scene,
    target: Option<&str>,
) -> (Option<String>, Option<String>) {
    let source = scene.project.source_language.clone().or_else(|| {
        scene
            .pages
            .iter()
            .flat_map(|p| &p.nodes)
            .find_map(|n| match &n.kind {
                NodeKind::Text { source_lang, .. } => source_lang.clone(),
                _ => None,
            })
    });
    let target = target
        .map(str::to_owned)
        .or_else(|| scene.project.target_language.clone());
    (source, target)
}

/// A memory's languages and the projects' translations for it.
pub(crate) struct MemoryParts {
    pub source: Option<String>,
    pub target: Option<String>,
    pub projects: Vec<Remembered>,
}

impl MemoryParts {
    /// The imported TMX files' units in these languages (blocking).
    pub(crate) fn files(&self, dir: &std::path::Path) -> CoreResult<Vec<Remembered>> {
        match (self.source.as_deref(), self.target.as_deref()) {
            (Some(source), Some(target)) => super::memories::remembered(dir, source, target),
            // Without both languages a TMX unit's sides cannot be told.
            _ => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The banded distance is strsim's Levenshtein within the limit,
        /// and nothing past it.
        #[test]
        fn the_banded_distance_is_levenshteins(
            a in "[abc é]{0,12}",
            b in "[abc é]{0,12}",
            limit in 0usize..14,
        ) {
            let full = strsim::levenshtein(&a, &b);
            let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
            prop_assert_eq!(distance_within(&a, &b, limit), (full <= limit).then_some(full));
        }
    }

    #[test]
    fn identical_near_and_dissimilar_sources() {
        let m = Memory::new([
            ("Where are you going?", "Où vas-tu ?"),
            (
                "The cat sleeps on the red sofa.",
                "Le chat dort sur le canapé rouge.",
            ),
            ("Hello", "Bonjour"),
        ]);
        let hit = m.lookup("Where are you going?", 0.85).expect("identical");
        assert_eq!((hit.target, hit.score), ("Où vas-tu ?", 1.0));
        let hit = m
            .lookup("where are  you going?", 0.85)
            .expect("case and spacing");
        assert!(hit.score < 1.0 && hit.score > 0.98);
        let hit = m
            .lookup("The cat sleeps on the red sofas.", 0.85)
            .expect("near");
        assert_eq!(hit.target, "Le chat dort sur le canapé rouge.");
        assert!(hit.score >= 0.85 && hit.score < 1.0, "{}", hit.score);
        assert_eq!(m.lookup("The dog runs in the green park.", 0.85), None);
        assert_eq!(m.lookup("Hello there, old friend", 0.85), None);
        assert_eq!(m.lookup("   ", 0.85), None);
    }

    #[test]
    fn a_later_translation_of_the_same_source_wins() {
        let m = Memory::new([("Yes", "Oui"), ("yes", "Ouais")]);
        assert_eq!(m.len(), 1);
        assert_eq!(m.lookup("Yes", 0.85).map(|h| h.target), Some("Ouais"));
    }
}
