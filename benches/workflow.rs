//! The translation workflow at size: XLIFF export and import of a project
//! of 1,000 pages × 50 text nodes (every target changed, so the import
//! updates 50,000 units in one history entry), `qa` over that project
//! (every rule, a 500-term glossary), the undo of a `pseudo-translate`
//! step over 600 pages (one entry of 600 page batches), and the
//! translation memory: index build over 100,000 segments and exact and
//! fuzzy lookups per second; a translator's 10,000-entry PO and
//! 10,000-unit XLIFF 1.2 made into projects, written back and merged
//! back; the translator's desk: `qa` with spelling (Debian's `en_US`
//! Hunspell dictionary) and the subtitle rules over 1,000 pages × 50 cues,
//! and a segment's memory matches over the 100,000-unit memory (the
//! latency the matches pane follows the cursor with).
//!
//! `cargo bench --bench workflow` (pin with `taskset -c 0` to compare builds).

#![allow(clippy::print_stdout)]

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use quire_core::Core;
use quire_core::events::JobStatus;
use quire_core::export::{ExportFormat, ExportSpec};
use quire_core::tm::Memory;
use quire_core::translations::TranslationImport;
use quire_formats::units::TranslationFormat;
use quire_model::glossary::Term;
use quire_model::ids::SessionId;
use quire_model::lang::Languages;
use quire_model::op::{NewNode, NewPage, Op};
use quire_model::scene::{NodeKind, Transform};
use quire_store::Durability;

const RUNS: usize = 3;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn page(p: usize, nodes: usize, translated: bool) -> Op {
    Op::AddPage {
        page: NewPage {
            id: None,
            name: format!("p{p:04}"),
            width: Some(1200),
            height: Some(1800),
            nodes: Some(
                (0..nodes)
                    .map(|n| NewNode {
                        id: None,
                        transform: Transform {
                            x: 10.0,
                            y: n as f64 * 30.0,
                            width: 400.0,
                            height: 28.0,
                            rotation: None,
                        },
                        visible: true,
                        kind: NodeKind::Text {
                            text: Some(format!("Line {n} of page {p}: \"quoted\" & <marked>")),
                            translation: translated
                                .then(|| format!("Ligne {n} de la page {p} : « citée »")),
                            source_lang: None,
                            style: None,
                            state: None,
                            origin: None,
                            timing: None,
                            region: None,
                            found_by: None,
                            source_edit: None,
                            entry: None,
                            suggestions: Vec::new(),
                        },
                    })
                    .collect(),
            ),
            document: None,
        },
        at: None,
    }
}

async fn project(
    core: &Core,
    name: &str,
    pages: usize,
    nodes: usize,
    translated: bool,
) -> SessionId {
    let languages = Languages {
        source_language: Some("en".into()),
        target_language: Some("fr".into()),
    };
    let id = core
        .create_managed_project_with(name, languages)
        .await
        .expect("project")
        .id;
    for chunk in (0..pages).collect::<Vec<_>>().chunks(50) {
        let ops = chunk.iter().map(|p| page(*p, nodes, translated)).collect();
        core.apply(id, Op::Batch { ops, label: None })
            .await
            .expect("pages");
    }
    id
}

/// The sizes measured: the real ones under `--bench`, small ones when
/// `cargo test --all-targets` runs this as a smoke test.
struct Sizes {
    pages: usize,
    job_pages: usize,
    segments: usize,
}

async fn xliff(core: &Core, sizes: &Sizes) {
    let id = project(core, "xliff", sizes.pages, 50, true).await;
    let units = sizes.pages * 50;
    let mut export = Vec::new();
    let mut bytes = Vec::new();
    let mut import = Vec::new();
    for run in 0..RUNS {
        let start = Instant::now();
        bytes = core
            .export(id, ExportSpec::of(ExportFormat::Xliff))
            .await
            .expect("export")
            .bytes;
        export.push(start.elapsed());
        // The reviewer changed every target since this export: 50,000
        // units merged three ways against its base (the words swap back
        // and forth from run to run).
        let (from, to) = if run % 2 == 0 {
            ("Ligne ", "Rangée ")
        } else {
            ("Rangée ", "Ligne ")
        };
        let content = String::from_utf8(bytes.clone())
            .expect("utf-8")
            .replace(from, to);
        let start = Instant::now();
        let report = core
            .import_translations(
                id,
                TranslationImport {
                    format: TranslationFormat::Xliff,
                    content,
                    force: false,
                    take: Vec::new(),
                },
            )
            .await
            .expect("import");
        import.push(start.elapsed());
        assert_eq!(report.updated, units, "{:?}", report.conflicts.first());
    }
    println!(
        "XLIFF {} pages × 50 nodes ({:.1} MiB): export {}, three-way import of {units} changed units {} (medians of {RUNS})",
        sizes.pages,
        bytes.len() as f64 / (1 << 20) as f64,
        ms(median(export)),
        ms(median(import)),
    );
    qa(core, id, sizes).await;
}

/// Runs `steps` on session `id` to the end; how long it took.
async fn run_job(core: &Core, id: SessionId, steps: &[&str]) -> Duration {
    let (took, status) = support::run_job(core, id, steps).await;
    assert!(matches!(
        status,
        JobStatus::Completed | JobStatus::CompletedWithErrors
    ));
    took
}

/// `qa` over the XLIFF project, with a glossary of 500 terms (one of
/// which, `page`, occurs in every node).
async fn qa(core: &Core, id: SessionId, sizes: &Sizes) {
    let mut set: Vec<Term> = (0..499)
        .map(|i| Term {
            source: format!("term{i:03}"),
            target: format!("terme{i:03}"),
            note: None,
            case_sensitive: false,
        })
        .collect();
    set.push(Term {
        source: "page".into(),
        target: "page".into(),
        note: None,
        case_sensitive: false,
    });
    core.apply(
        id,
        Op::UpdateGlossary {
            set,
            remove: Vec::new(),
        },
    )
    .await
    .expect("glossary");
    let mut times = Vec::new();
    for _ in 0..RUNS {
        times.push(run_job(core, id, &["qa"]).await);
    }
    println!(
        "qa over {} pages × 50 nodes (every rule, 500 glossary terms): {} (median of {RUNS})",
        sizes.pages,
        ms(median(times)),
    );
}

/// A page of `cues` subtitle cues of 2 s each, 500 ms apart, translated
/// into English prose with a misspelling in every tenth, and one cue in
/// twenty too long for a line.
fn cue_page(p: usize, cues: usize) -> Op {
    let nodes = (0..cues)
        .map(|n| {
            let start = ((p * cues + n) * 2500) as u64;
            let mut translation = format!("We will see the {n} doors of the old house tomorrow.");
            if n % 10 == 0 {
                translation = translation.replace("house", "hosue");
            }
            if n % 20 == 0 {
                translation.push_str(" And then we will walk back along the river.");
            }
            NewNode {
                id: None,
                transform: Transform {
                    x: 0.0,
                    y: 0.0,
                    width: 0.0,
                    height: 0.0,
                    rotation: None,
                },
                visible: true,
                kind: NodeKind::Text {
                    text: Some(format!("Line {n} of cue page {p}.")),
                    translation: Some(translation),
                    source_lang: None,
                    style: None,
                    state: None,
                    origin: None,
                    timing: Some(Box::new(quire_model::scene::Timing {
                        start,
                        end: start + 2000,
                        ..Default::default()
                    })),
                    region: None,
                    found_by: None,
                    source_edit: None,
                    entry: None,
                    suggestions: Vec::new(),
                },
            }
        })
        .collect();
    Op::AddPage {
        page: NewPage {
            id: None,
            name: format!("c{p:04}"),
            width: None,
            height: None,
            nodes: Some(nodes),
            document: None,
        },
        at: None,
    }
}

/// `qa` with spelling (en-US) and the subtitle rules over pages of cues.
async fn desk_qa(core: &Core, sizes: &Sizes) {
    let languages = Languages {
        source_language: Some("en".into()),
        target_language: Some("en-US".into()),
    };
    let id = core
        .create_managed_project_with("desk", languages)
        .await
        .expect("project")
        .id;
    for chunk in (0..sizes.pages).collect::<Vec<_>>().chunks(50) {
        let ops = chunk.iter().map(|p| cue_page(*p, 50)).collect();
        core.apply(id, Op::Batch { ops, label: None })
            .await
            .expect("pages");
    }
    let mut times = Vec::new();
    for _ in 0..RUNS {
        times.push(run_job(core, id, &["qa"]).await);
    }
    println!(
        "qa with spelling (en_US) and the subtitle rules over {} pages × 50 cues: {} (median of {RUNS})",
        sizes.pages,
        ms(median(times)),
    );
}

/// A deterministic sentence of 8 to 15 words.
fn sentence(seed: &mut u64) -> String {
    const WORDS: [&str; 48] = [
        "the",
        "cat",
        "dog",
        "moon",
        "city",
        "sword",
        "river",
        "night",
        "we",
        "you",
        "never",
        "always",
        "run",
        "hide",
        "fight",
        "remember",
        "forget",
        "tomorrow",
        "yesterday",
        "quietly",
        "before",
        "after",
        "under",
        "over",
        "red",
        "blue",
        "old",
        "young",
        "king",
        "girl",
        "boy",
        "ghost",
        "train",
        "school",
        "friend",
        "enemy",
        "promise",
        "secret",
        "window",
        "door",
        "fire",
        "rain",
        "summer",
        "winter",
        "letter",
        "dream",
        "shadow",
        "light",
    ];
    let mut next = || {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 33) as usize
    };
    let n = 8 + next() % 8;
    let words: Vec<&str> = (0..n).map(|_| WORDS[next() % WORDS.len()]).collect();
    format!("{} #{}", words.join(" "), next() % 100_000)
}

fn memory(sizes: &Sizes) {
    let mut seed = 7;
    let pairs: Vec<(String, String)> = (0..sizes.segments)
        .map(|i| (sentence(&mut seed), format!("traduction {i}")))
        .collect();
    let mut builds = Vec::new();
    let mut memory = Memory::default();
    for _ in 0..RUNS {
        let start = Instant::now();
        memory = Memory::new(pairs.iter().map(|(s, t)| (s.as_str(), t.as_str())));
        builds.push(start.elapsed());
    }
    let queries = 2000.min(sizes.segments);
    let exact: Vec<&str> = pairs
        .iter()
        .step_by(pairs.len() / queries)
        .map(|(s, _)| s.as_str())
        .collect();
    // One word changed: a near-identical source.
    let fuzzy: Vec<String> = exact.iter().map(|s| s.replacen(' ', " and ", 1)).collect();
    let per_second = |queries: &[&str]| {
        let start = Instant::now();
        let hits = queries
            .iter()
            .filter(|q| memory.lookup(q, 0.85).is_some())
            .count();
        (queries.len() as f64 / start.elapsed().as_secs_f64(), hits)
    };
    let (exact_rate, exact_hits) = per_second(&exact);
    let fuzzy_refs: Vec<&str> = fuzzy.iter().map(String::as_str).collect();
    let (fuzzy_rate, fuzzy_hits) = per_second(&fuzzy_refs);
    assert_eq!(exact_hits, exact.len());
    println!(
        "translation memory of {} segments: index build {} (median of {RUNS}); {:.0} exact lookups/s, {:.0} fuzzy lookups/s ({fuzzy_hits} of {} near-identical found)",
        memory.len(),
        ms(median(builds)),
        exact_rate,
        fuzzy_rate,
        fuzzy.len(),
    );
}

async fn undo_job(core: &Core, sizes: &Sizes) {
    let pages = sizes.job_pages;
    let id = project(core, "job", pages, 4, false).await;
    run_job(core, id, &["pseudo-translate"]).await;
    let (mut undo, mut redo) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let start = Instant::now();
        let step = core.undo(id).await.expect("undo").expect("an entry");
        undo.push(start.elapsed());
        assert_eq!(step.label, format!("pseudo-translate · {pages} pages"));
        let start = Instant::now();
        core.redo(id).await.expect("redo").expect("an entry");
        redo.push(start.elapsed());
    }
    println!(
        "undo of a {pages}-page pseudo-translate step ({} edits, one entry): undo {}, redo {} (medians of {RUNS})",
        pages * 4,
        ms(median(undo)),
        ms(median(redo)),
    );
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let core = support::core(dir.path(), Durability::Batch, 1_000_000, 500);
    let sizes = if std::env::args().any(|a| a == "--bench") {
        Sizes {
            pages: 1000,
            job_pages: 600,
            segments: 100_000,
        }
    } else {
        Sizes {
            pages: 10,
            job_pages: 12,
            segments: 1000,
        }
    };
    rt.block_on(async {
        xliff(&core, &sizes).await;
        desk_qa(&core, &sizes).await;
        undo_job(&core, &sizes).await;
        tmx(&core, &sizes).await;
        documents(&core, &sizes).await;
    });
    memory(&sizes);
}

/// A PO catalog of `n` entries as a translator gets one: a header with
/// plural forms, each entry with a comment, a reference, a flag and a
/// context, every tenth plural, half translated.
fn catalog(n: usize) -> String {
    let mut seed = 5;
    let mut out = String::from(
        "msgid \"\"\nmsgstr \"\"\n\"Language: fr\\n\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\
         \"Plural-Forms: nplurals=2; plural=(n > 1);\\n\"\n",
    );
    for i in 0..n {
        let text = sentence(&mut seed);
        let translated = if i % 2 == 0 {
            format!("traduction {i}")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "\n#. Shown in panel {i}\n#: src/panel.rs:{i}\n#, c-format\nmsgctxt \"panel {}\"\n",
            i % 7
        ));
        if i % 10 == 0 {
            out.push_str(&format!(
                "msgid \"{text}\"\nmsgid_plural \"{text}s\"\nmsgstr[0] \"{translated}\"\nmsgstr[1] \"{translated}\"\n"
            ));
        } else {
            out.push_str(&format!("msgid \"{text}\"\nmsgstr \"{translated}\"\n"));
        }
    }
    out
}

/// An XLIFF 1.2 file of `n` units, each with an inline code, half with a
/// target.
fn xliff_12(n: usize) -> String {
    let mut seed = 9;
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff version=\"1.2\" \
         xmlns=\"urn:oasis:names:tc:xliff:document:1.2\">\n<file original=\"app\" \
         source-language=\"en\" target-language=\"fr\" datatype=\"plaintext\"><body>\n",
    );
    for i in 0..n {
        let text = sentence(&mut seed);
        let target = if i % 2 == 0 {
            format!("<target state=\"translated\">traduction <g id=\"1\">{i}</g></target>")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "<trans-unit id=\"u{i}\"><source>{text} <g id=\"1\">{i}</g></source>{target}\
             <note>panel {i}</note></trans-unit>\n"
        ));
    }
    out.push_str("</body></file></xliff>\n");
    out
}

/// A translator's PO and XLIFF 1.2 of `sizes.segments / 10` entries each:
/// made into a new project, written back in their own format, and that
/// file merged back (nothing to change).
async fn documents(core: &Core, sizes: &Sizes) {
    let n = sizes.segments / 10;
    for (name, text, format, export) in [
        (
            "big.po",
            catalog(n),
            TranslationFormat::Po,
            ExportFormat::Po,
        ),
        (
            "big.xlf",
            xliff_12(n),
            TranslationFormat::Xliff,
            ExportFormat::Xliff,
        ),
    ] {
        let (mut imports, mut exports, mut merges) = (Vec::new(), Vec::new(), Vec::new());
        let mut segments = 0;
        for run in 0..RUNS {
            let file = quire_core::import::ImageFile {
                name: name.to_owned(),
                bytes: text.clone().into_bytes(),
            };
            let start = Instant::now();
            let (session, result) = core
                .create_project_from_files(
                    Some(&format!("{name} {run}")),
                    Languages::default(),
                    vec![file],
                )
                .await
                .expect("new project");
            imports.push(start.elapsed());
            segments = result.created.len() - 1;
            let spec = ExportSpec::of(export);
            let start = Instant::now();
            let out = core.export(session.id, spec).await.expect("export").bytes;
            exports.push(start.elapsed());
            let start = Instant::now();
            let report = core
                .import_translations(
                    session.id,
                    TranslationImport {
                        format,
                        content: String::from_utf8(out).expect("utf-8"),
                        force: false,
                        take: Vec::new(),
                    },
                )
                .await
                .expect("merge");
            merges.push(start.elapsed());
            assert_eq!((report.updated, report.unmatched.len()), (0, 0));
            core.close_session(session.id).await.expect("close");
        }
        println!(
            "{name}: {n} entries ({segments} segments, {:.1} MiB) into a new project {}, written back {}, merged back {} (medians of {RUNS})",
            text.len() as f64 / (1 << 20) as f64,
            ms(median(imports)),
            ms(median(exports)),
            ms(median(merges)),
        );
    }
}

/// A TMX file of `sizes.segments` units imported into the memory, the
/// memory a project into its languages then builds, and fuzzy lookups
/// over it.
async fn tmx(core: &Core, sizes: &Sizes) {
    let mut seed = 11;
    let units: Vec<quire_formats::tmx::Unit> = (0..sizes.segments)
        .map(|i| quire_formats::tmx::Unit {
            changed: Some("2026-12-01T00:00:00Z".into()),
            variants: vec![
                quire_formats::tmx::Variant {
                    lang: "en-US".into(),
                    text: sentence(&mut seed),
                },
                quire_formats::tmx::Variant {
                    lang: "fr-FR".into(),
                    text: format!("traduction {i}"),
                },
            ],
            ..quire_formats::tmx::Unit::default()
        })
        .collect();
    let file = quire_formats::tmx::write("en-US", &units).into_bytes();
    let mut imports = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let report = core.import_tmx("big.tmx", file.clone()).await.expect("tmx");
        imports.push(start.elapsed());
        assert_eq!(report.units, units.len());
    }
    let id = core
        .blocking()
        .create_managed_project("tmx")
        .expect("project")
        .id;
    let languages = Op::UpdateProject {
        patch: quire_model::op::ProjectPatch {
            source_language: Some(Some("en".into())),
            target_language: Some(Some("fr".into())),
            ..quire_model::op::ProjectPatch::default()
        },
    };
    core.apply(id, languages).await.expect("languages");
    let mut builds = Vec::new();
    let mut memory = Memory::default();
    for _ in 0..RUNS {
        let start = Instant::now();
        memory = core.memory(id, None).await.expect("memory");
        builds.push(start.elapsed());
    }
    assert_eq!(memory.len(), units.len());
    let queries: Vec<String> = units
        .iter()
        .step_by((units.len() / 2000).max(1))
        .map(|u| u.variants[0].text.replacen(' ', " and ", 1))
        .collect();
    let start = Instant::now();
    let hits = queries
        .iter()
        .filter(|q| memory.lookup(q, 0.85).is_some())
        .count();
    let rate = queries.len() as f64 / start.elapsed().as_secs_f64();
    println!(
        "TMX of {} units ({:.1} MiB): import {}, the memory a project builds from it {} (medians of {RUNS}); {rate:.0} fuzzy lookups/s ({hits} of {} found)",
        units.len(),
        file.len() as f64 / (1 << 20) as f64,
        ms(median(imports)),
        ms(median(builds)),
        queries.len(),
    );
    // The matches pane: a segment's matches as the cursor moves, over
    // segments near the memory's.
    let text: String = queries
        .iter()
        .take(200)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n\n");
    core.import_text(id, "episode", &text, Some("en"))
        .await
        .expect("page");
    let scene = core.scene(id).await.expect("scene").scene;
    let nodes: Vec<_> = scene.pages[0].nodes.iter().map(|n| n.id).collect();
    let start = Instant::now();
    core.matches(id, nodes[0]).await.expect("matches");
    let first = start.elapsed();
    let mut times = Vec::new();
    let mut found = 0;
    for node in &nodes {
        let start = Instant::now();
        found += usize::from(!core.matches(id, *node).await.expect("matches").is_empty());
        times.push(start.elapsed());
    }
    times.sort();
    let p95 = times[times.len() * 95 / 100];
    println!(
        "matches for a segment over {} units: median {}, 95th percentile {} over {} segments ({found} with matches); the first, which builds the memory, {}",
        units.len(),
        ms(median(times.clone())),
        ms(p95),
        nodes.len(),
        ms(first),
    );
}
