//! Pipelines: validation before a job exists, the job lifecycle and its
//! events, cancellation, ordering, warnings, approval, engine edits in
//! history, command engines that fail in every way.

use std::collections::BTreeMap;
use std::time::Duration;

use quire_core::events::{Event, JobStatus};
use quire_core::export::{ExportFormat, ExportSpec};
use quire_core::jobs::Approval;
use quire_core::settings::{CommandEngine, EngineInput, EngineOutput};
use quire_model::ids::{JobId, PageId};
use quire_model::scene::NodeKind;

use crate::support::{
    TestCore, command_engine, engines, every_event_until_finished, finished, follow, spec,
    text_pages, warnings, with_engines,
};

#[tokio::test]
async fn text_import_pseudo_translate_qa_events_and_xliff() {
    let t = TestCore::new();
    let id = t.session("Flow");
    let pages = text_pages(&t, id, 3).await;
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["pseudo-translate", "qa"]), Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    assert!(
        matches!(&events[0], Event::JobStarted { id: j, total_pages: 3, steps, .. } if *j == job && steps.len() == 2)
    );
    assert_eq!(finished(&events), (JobStatus::Completed, None));
    let last_progress = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::JobProgress {
                overall_percent,
                step_index,
                page,
                ..
            } => Some((*overall_percent, *step_index, *page)),
            _ => None,
        })
        .unwrap();
    assert_eq!(last_progress, (100.0, 1, 3));
    // Translations are placeholder-safe pseudo-translations; qa is happy.
    let scene = t.core.scene(id).await.unwrap().scene;
    for page in &scene.pages {
        for node in &page.nodes {
            let NodeKind::Text {
                text, translation, ..
            } = &node.kind
            else {
                panic!()
            };
            let translation = translation.as_deref().unwrap();
            assert!(translation.starts_with('['), "{translation}");
            if text.as_deref().unwrap().contains("{0}") {
                assert!(translation.contains("{0}"));
            }
        }
    }
    let summary = t.core.job(job).unwrap();
    assert_eq!(summary.status, JobStatus::Completed);
    assert!(!t.core.session(id).unwrap().busy);
    // A step's edits to all its pages are one history entry: one undo.
    let undone = t.core.undo(id).await.unwrap().unwrap();
    assert_eq!(undone.label, "pseudo-translate · 3 pages");
    let after_undo = t.core.scene(id).await.unwrap().scene;
    let untranslated = |pid: PageId| {
        after_undo.page(pid).unwrap().nodes.iter().all(|n| {
            matches!(
                &n.kind,
                NodeKind::Text {
                    translation: None,
                    ..
                }
            )
        })
    };
    assert!(pages.iter().all(|p| untranslated(*p)));

    let export = t
        .core
        .export(
            id,
            ExportSpec {
                target_language: Some("fr".into()),
                ..ExportSpec::of(ExportFormat::Xliff)
            },
        )
        .await
        .unwrap();
    assert_eq!(export.media_type, "application/xliff+xml");
    let xml = String::from_utf8(export.bytes).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(
        doc.descendants().filter(|n| n.has_tag_name("unit")).count(),
        6
    );
}

#[tokio::test]
async fn unknown_steps_and_pages_are_refused_before_any_job_exists() {
    let t = TestCore::new();
    let id = t.session("Refuse");
    text_pages(&t, id, 1).await;
    let seq = t.core.events().seq();
    let err = t
        .core
        .start_pipeline(
            id,
            spec(&["pseudo-translate", "nope"]),
            Approval::Unattended,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(err.to_string().contains("unknown step `nope`"), "{err}");
    assert!(
        err.to_string()
            .contains("pseudo-translate, qa, llm-translate"),
        "{err}"
    );
    let ghost = PageId::new();
    let mut bad_page = spec(&["qa"]);
    bad_page.pages = Some(vec![ghost]);
    let err = t
        .core
        .start_pipeline(id, bad_page, Approval::Unattended)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("unknown page id {ghost}")),
        "{err}"
    );
    let err = t
        .core
        .start_pipeline(id, spec(&[]), Approval::Unattended)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("at least one step"), "{err}");
    let err = t
        .core
        .start_pipeline(id, spec(&["llm-translate"]), Approval::Unattended)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("needs targetLanguage"), "{err}");
    let mut llm = spec(&["llm-translate"]);
    llm.target_language = Some("fr".into());
    let err = t
        .core
        .start_pipeline(id, llm, Approval::Unattended)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("needs a provider"), "{err}");
    assert!(t.core.jobs().is_empty());
    assert_eq!(t.core.events().seq(), seq, "no event was published");
}

/// Every event (of any job) until `id` finishes, that one included.
/// A page-json engine that holds every page until the test releases it:
/// it marks `started` and waits for `release` (so job order is decided by
/// the test, not by how fast the machine is).
struct Gate {
    dir: tempfile::TempDir,
}

impl Gate {
    fn new() -> Self {
        Gate {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn engine(&self) -> CommandEngine {
        let dir = self.dir.path().display();
        let script = format!(
            "cat >/dev/null; touch '{dir}/started'; while [ ! -e '{dir}/release' ]; do sleep 0.01; done"
        );
        command_engine(
            &["sh", "-c", &script],
            EngineInput::PageJson,
            EngineOutput::Ops,
            60,
        )
    }

    /// Waits until a page is held.
    async fn started(&self) {
        let path = self.dir.path().join("started");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while !path.exists() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no page was started"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Lets every page through, now and later.
    fn release(&self) {
        std::fs::write(self.dir.path().join("release"), "").unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_page_in_progress_and_every_later_one() {
    let gate = Gate::new();
    let t = with_engines(engines(&[("held", gate.engine())]), BTreeMap::new());
    let id = t.session("Cancel");
    text_pages(&t, id, 5).await;
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["held"]), Approval::Unattended)
        .await
        .unwrap();
    // Cancel while the first page is being processed.
    gate.started().await;
    assert!(t.core.session(id).unwrap().busy);
    assert!(t.core.cancel_job(job).unwrap());
    gate.release();
    let events = follow(&mut sub, job).await;
    assert_eq!(finished(&events).0, JobStatus::Cancelled);
    let done = t.core.job(job).unwrap().progress.unwrap().page;
    assert_eq!(
        done, 0,
        "the page in progress is abandoned (its program stopped) and no later page runs"
    );
    assert!(
        !t.core.cancel_job(job).unwrap(),
        "a finished job cannot be cancelled"
    );
    assert_eq!(
        t.core.cancel_job(JobId::new()).unwrap_err().code(),
        "not_found"
    );
    assert!(!t.core.session(id).unwrap().busy);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_job_can_be_cancelled_before_it_runs() {
    let gate = Gate::new();
    let t = with_engines(engines(&[("held", gate.engine())]), BTreeMap::new());
    let id = t.session("Queue");
    text_pages(&t, id, 2).await;
    let mut sub = t.core.subscribe(None);
    let first = t
        .core
        .start_pipeline(id, spec(&["held"]), Approval::Unattended)
        .await
        .unwrap();
    let second = t
        .core
        .start_pipeline(id, spec(&["pseudo-translate"]), Approval::Unattended)
        .await
        .unwrap();
    assert_eq!(t.core.job(second).unwrap().status, JobStatus::Queued);
    assert!(t.core.cancel_job(second).unwrap());
    assert_eq!(t.core.job(second).unwrap().status, JobStatus::Cancelled);
    gate.release();
    let events = follow(&mut sub, first).await;
    assert_eq!(finished(&events).0, JobStatus::Completed);
    let scene = t.core.scene(id).await.unwrap().scene;
    assert!(scene.pages[0].nodes.iter().all(|n| matches!(
        &n.kind,
        NodeKind::Text {
            translation: None,
            ..
        }
    )));
}

/// A page-json engine that fails on pages named FAIL and renames the others.
fn renamer() -> CommandEngine {
    let script = r#"json=$(cat); case "$json" in *FAIL*) echo "cannot process this page" >&2; exit 3;; esac; printf '%s' "$json" | sed -n 's/^{"id":"\([^"]*\)".*/{"type":"UpdatePage","id":"\1","patch":{"name":"done"}}/p'"#;
    command_engine(
        &["sh", "-c", script],
        EngineInput::PageJson,
        EngineOutput::Ops,
        30,
    )
}

#[tokio::test]
async fn a_failing_page_is_a_warning_and_the_others_are_processed() {
    let t = with_engines(engines(&[("rename", renamer())]), BTreeMap::new());
    let id = t.session("Warn");
    t.core.import_text(id, "first", "a", None).await.unwrap();
    t.core
        .import_text(id, "FAIL here", "b", None)
        .await
        .unwrap();
    t.core.import_text(id, "third", "c", None).await.unwrap();
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["rename"]), Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    assert_eq!(finished(&events).0, JobStatus::CompletedWithErrors);
    let w = warnings(&events);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, 1);
    assert_eq!(w[0].1, "rename");
    assert!(
        w[0].2
            .contains("exited with status 3: cannot process this page"),
        "{}",
        w[0].2
    );
    let names: Vec<String> = t
        .core
        .scene(id)
        .await
        .unwrap()
        .scene
        .pages
        .iter()
        .map(|p| p.name.clone())
        .collect();
    assert_eq!(names, vec!["done", "FAIL here", "done"]);
    // Recent jobs keep their warnings.
    let summary = t.core.job(job).unwrap();
    assert_eq!(summary.warnings.len(), 1);
    assert_eq!(summary.warnings[0].page_index, 1);
}

#[tokio::test]
async fn command_engines_that_misbehave_become_warnings() {
    let cases: Vec<(&str, CommandEngine, &str)> = vec![
        (
            "garbage",
            command_engine(
                &["echo", "this is not an op"],
                EngineInput::PageJson,
                EngineOutput::Ops,
                30,
            ),
            "output line 1 is not an op",
        ),
        (
            "timeout",
            command_engine(
                &["sleep", "10"],
                EngineInput::PageJson,
                EngineOutput::Ops,
                1,
            ),
            "did not finish within 1s and was killed",
        ),
        (
            "missing",
            command_engine(
                &["/nonexistent/quire-engine"],
                EngineInput::PageJson,
                EngineOutput::Ops,
                30,
            ),
            "cannot start `/nonexistent/quire-engine`",
        ),
        (
            "elsewhere",
            command_engine(
                &[
                    "echo",
                    r#"{"type":"RemovePage","id":"0190d2a0-0000-7000-8000-000000000001"}"#,
                ],
                EngineInput::PageJson,
                EngineOutput::Ops,
                30,
            ),
            "may only change its own page",
        ),
        (
            "noimage",
            command_engine(
                &["cat", "{image}"],
                EngineInput::PageImage,
                EngineOutput::TesseractTsv,
                30,
            ),
            "the page has no image",
        ),
        (
            "tsv",
            command_engine(
                &["echo", "hello"],
                EngineInput::PageJson,
                EngineOutput::TesseractTsv,
                30,
            ),
            "not a Tesseract TSV header",
        ),
    ];
    let list: Vec<(&str, CommandEngine)> =
        cases.iter().map(|(id, c, _)| (*id, c.clone())).collect();
    let t = with_engines(engines(&list), BTreeMap::new());
    let id = t.session("Misbehave");
    text_pages(&t, id, 1).await;
    let before = t.core.scene(id).await.unwrap();
    for (engine, _, expected) in &cases {
        let mut sub = t.core.subscribe(None);
        let job = t
            .core
            .start_pipeline(id, spec(&[engine]), Approval::Unattended)
            .await
            .unwrap();
        let events = follow(&mut sub, job).await;
        assert_eq!(
            finished(&events).0,
            JobStatus::CompletedWithErrors,
            "{engine}"
        );
        let w = warnings(&events);
        assert_eq!(w.len(), 1, "{engine}: {w:?}");
        assert!(w[0].2.contains(expected), "{engine}: {}", w[0].2);
    }
    let after = t.core.scene(id).await.unwrap();
    assert_eq!(after.epoch, before.epoch, "nothing was applied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_of_one_session_run_in_order_and_sessions_run_concurrently() {
    let gate = Gate::new();
    let t = with_engines(engines(&[("held", gate.engine())]), BTreeMap::new());
    let a = t.session("A");
    text_pages(&t, a, 2).await;
    let b = t.session("B");
    text_pages(&t, b, 2).await;
    let mut sub = t.core.subscribe(None);
    let a1 = t
        .core
        .start_pipeline(a, spec(&["held"]), Approval::Unattended)
        .await
        .unwrap();
    let a2 = t
        .core
        .start_pipeline(a, spec(&["pseudo-translate"]), Approval::Unattended)
        .await
        .unwrap();
    gate.started().await;
    // While a1 is held, b's job runs to its end: sessions do not wait for
    // each other.
    let b1 = t
        .core
        .start_pipeline(b, spec(&["pseudo-translate"]), Approval::Unattended)
        .await
        .unwrap();
    let events = every_event_until_finished(&mut sub, b1).await;
    // ...but a2 waits for a1, in its queue.
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::JobProgress { job_id, .. } if *job_id == a2)),
        "a2 ran while a1 was held"
    );
    assert_eq!(t.core.job(a2).unwrap().status, JobStatus::Queued);
    gate.release();
    let events = every_event_until_finished(&mut sub, a2).await;
    assert_eq!(t.core.job(a2).unwrap().status, JobStatus::Completed);
    let first = |job: JobId, progress: bool| {
        events
            .iter()
            .position(|e| match e {
                Event::JobProgress { job_id, .. } => progress && *job_id == job,
                Event::JobFinished { id, .. } => !progress && *id == job,
                _ => false,
            })
            .unwrap()
    };
    assert!(first(a1, false) < first(a2, true), "a2 ran before a1 ended");
}

#[tokio::test]
async fn engines_needing_approval_are_refused_unattended() {
    let mut ocr = command_engine(&["true"], EngineInput::PageJson, EngineOutput::Ops, 30);
    ocr.requires_approval = true;
    let t = with_engines(engines(&[("needs-ok", ocr.clone())]), BTreeMap::new());
    let id = t.session("Approval");
    text_pages(&t, id, 1).await;
    let err = t
        .core
        .start_pipeline(id, spec(&["needs-ok"]), Approval::Unattended)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "approval_required");
    assert!(
        err.to_string().contains("engine `needs-ok` runs `true`"),
        "{err}"
    );
    assert!(t.core.jobs().is_empty());
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["needs-ok"]), Approval::Person)
        .await
        .unwrap();
    assert_eq!(
        finished(&follow(&mut sub, job).await).0,
        JobStatus::Completed
    );

    let mut allow = engines(&[("needs-ok", ocr)]);
    allow.allow_unattended = true;
    let t = with_engines(allow, BTreeMap::new());
    let id = t.session("Allowed");
    t.core
        .start_pipeline(id, spec(&["needs-ok"]), Approval::Unattended)
        .await
        .unwrap();
}

#[tokio::test]
async fn qa_reports_each_problem_as_a_warning() {
    let t = TestCore::new();
    let id = t.session("QA");
    text_pages(&t, id, 2).await;
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["qa"]), Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    let w = warnings(&events);
    assert_eq!(w.len(), 4, "two untranslated nodes per page: {w:?}");
    assert!(
        w.iter()
            .all(|(_, step, m)| step == "qa" && m.starts_with("missing translation"))
    );
    assert_eq!(finished(&events).0, JobStatus::CompletedWithErrors);
}

#[test]
fn tesseract_tsv_fixture_parses_into_paragraph_nodes() {
    let tsv = include_str!("../fixtures/tesseract.tsv");
    let nodes = quire_core::engines::tesseract::parse(tsv).unwrap();
    assert_eq!(nodes.len(), 2);
    let NodeKind::Text { text, .. } = &nodes[0].kind else {
        panic!()
    };
    assert_eq!(text.as_deref(), Some("Hello there, traveller!"));
    assert_eq!((nodes[0].transform.x, nodes[0].transform.y), (44.0, 49.0));
    assert_eq!(
        (nodes[0].transform.width, nodes[0].transform.height),
        (421.0, 36.0)
    );
    let NodeKind::Text { text, .. } = &nodes[1].kind else {
        panic!()
    };
    assert_eq!(text.as_deref(), Some("Where are you going?"));
    let err = quire_core::engines::tesseract::parse("level\tx\n").unwrap_err();
    assert!(err.contains("line 1"), "{err}");
}

#[tokio::test]
async fn tesseract_end_to_end() {
    let missing = crate::support::missing_program("tesseract", "--version");
    if !crate::support::tool_available("tesseract", "tesseract_end_to_end", missing) {
        return;
    }
    let ocr = command_engine(
        &["tesseract", "{image}", "-", "tsv"],
        EngineInput::PageImage,
        EngineOutput::TesseractTsv,
        120,
    );
    let t = with_engines(engines(&[("ocr-tesseract", ocr)]), BTreeMap::new());
    let id = t.session("OCR");
    let png = include_bytes!("../fixtures/ocr.png").to_vec();
    t.core
        .import_files(
            id,
            vec![quire_core::import::ImageFile {
                name: "ocr.png".into(),
                bytes: png,
            }],
        )
        .await
        .unwrap();
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["ocr-tesseract"]), Approval::Person)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    assert_eq!(
        finished(&events),
        (JobStatus::Completed, None),
        "{:?}",
        warnings(&events)
    );
    let scene = t.core.scene(id).await.unwrap().scene;
    let texts: Vec<String> = scene.pages[0]
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Text { text, .. } => text.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        vec!["Hello there, traveller!", "Where are you going?"]
    );
}

#[cfg(target_os = "linux")] // reads /proc
/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // "pid (comm) S ...": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[cfg(target_os = "linux")] // reads /proc
/// Waits (with a deadline) until `path` holds a pid, and returns it.
async fn pid_in(path: &std::path::Path) -> u32 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no pid in {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(target_os = "linux")] // reads /proc
async fn until_ended(pid: u32) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !ended(pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "process {pid} lives on"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(target_os = "linux")] // reads /proc
/// An engine whose program starts a background grandchild, writes its
/// pid to `pidfile`, and waits (forever, or until `sleep` ends).
fn forker(pidfile: &std::path::Path, timeout_secs: u64) -> CommandEngine {
    let script = format!("sleep 300 & echo $! > {}; wait", pidfile.display());
    command_engine(
        &["sh", "-c", &script],
        EngineInput::PageJson,
        EngineOutput::Ops,
        timeout_secs,
    )
}

/// A job of the forker engine on `pages` pages, once its grandchild runs:
/// the core (with its temp dir), the job's events and the grandchild's pid.
#[cfg(target_os = "linux")]
async fn forker_job(
    timeout_secs: u64,
    pages: usize,
) -> (
    TestCore,
    quire_model::ids::SessionId,
    quire_core::events::Subscription,
    JobId,
    u32,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    let t = with_engines(
        engines(&[("forker", forker(&pidfile, timeout_secs))]),
        BTreeMap::new(),
    );
    let id = t.session("Forker");
    text_pages(&t, id, pages).await;
    let sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["forker"]), Approval::Unattended)
        .await
        .unwrap();
    let grandchild = pid_in(&pidfile).await;
    (t, id, sub, job, grandchild, dir)
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_ends_the_whole_process_group() {
    let (_t, _, mut sub, job, grandchild, _dir) = forker_job(1, 1).await;
    let events = follow(&mut sub, job).await;
    let w = warnings(&events);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].2.contains("did not finish within 1s"), "{w:?}");
    until_ended(grandchild).await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_running_engine_and_what_it_started() {
    let (t, id, mut sub, job, grandchild, _dir) = forker_job(600, 3).await;
    assert!(t.core.cancel_job(job).unwrap());
    let events = follow(&mut sub, job).await;
    assert_eq!(finished(&events).0, JobStatus::Cancelled);
    until_ended(grandchild).await;
    assert!(!t.core.session(id).unwrap().busy);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_past_max_output_bytes_fails_the_step() {
    let mut flood = command_engine(&["yes"], EngineInput::PageJson, EngineOutput::Ops, 600);
    flood.max_output_bytes = 1 << 20;
    let t = with_engines(engines(&[("flood", flood)]), BTreeMap::new());
    let id = t.session("Flood");
    text_pages(&t, id, 1).await;
    let before = t.core.scene(id).await.unwrap();
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["flood"]), Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    let w = warnings(&events);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].2.contains("more than 1048576 bytes"), "{w:?}");
    assert_eq!(t.core.scene(id).await.unwrap().epoch, before.epoch);
}

#[tokio::test]
async fn target_language_must_be_a_language_tag_before_it_reaches_a_program() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("said");
    // A config that hands the tag to a shell: only a real tag may get there.
    let script = format!("printf '%s' {{target_language}} > {}", out.display());
    let echo = command_engine(
        &["sh", "-c", &script],
        EngineInput::PageJson,
        EngineOutput::Ops,
        30,
    );
    let t = with_engines(engines(&[("echo", echo)]), BTreeMap::new());
    let id = t.session("Tags");
    text_pages(&t, id, 1).await;
    let seq = t.core.events().seq();
    for bad in ["--output=/etc/passwd", "fr; touch pwned", "$(id)", "-x", ""] {
        let mut s = spec(&["echo"]);
        s.target_language = Some(bad.into());
        let err = t
            .core
            .start_pipeline(id, s, Approval::Unattended)
            .await
            .unwrap_err();
        assert_eq!(err.code(), "invalid_input", "{bad:?}");
        assert!(err.to_string().contains("BCP 47"), "{err}");
    }
    assert_eq!(t.core.events().seq(), seq, "no job, no event");
    assert!(!out.exists());
    let mut sub = t.core.subscribe(None);
    let mut s = spec(&["echo"]);
    s.target_language = Some("pt-BR".into());
    let job = t
        .core
        .start_pipeline(id, s, Approval::Unattended)
        .await
        .unwrap();
    follow(&mut sub, job).await;
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "pt-BR");
}
