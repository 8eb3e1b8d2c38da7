//! `llm-translate` against a local fake OpenAI-compatible provider (axum on
//! 127.0.0.1:0): a good answer, malformed JSON, the wrong number of
//! translations, 429 then success, persistent 500s, and a hang past the
//! timeout. Also: the API key is sent as a bearer token and appears in no
//! warning, and a run asks only for the translations its `overwrite` lets
//! it replace (never a final one).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use quire_core::events::{Event, JobStatus};
use quire_core::jobs::{Approval, PipelineSpec};
use quire_model::glossary::Term;
use quire_model::op::Op;
use quire_model::scene::NodeKind;
use serde_json::{Value, json};

use crate::fake_llm::{KEY, fake_provider, provider};
use crate::support::{Engines, TestCore, finished, follow, with_engines};
use quire_core::settings::Provider;

type Ran = (
    JobStatus,
    Vec<String>,
    TestCore,
    quire_model::ids::SessionId,
);

/// Runs llm-translate over two text pages with `provider`, into French;
/// returns the final status, the warnings and the core.
async fn run(provider: Provider) -> Ran {
    run_with(provider, vec![], Some("fr")).await
}

/// The op that sets the project's target language.
fn project_language(tag: &str) -> Op {
    Op::UpdateProject {
        patch: quire_model::op::ProjectPatch {
            target_language: Some(Some(tag.to_owned())),
            ..Default::default()
        },
    }
}

/// [`run`], with `setup` applied to the project first and the pipeline's
/// target language `pipeline`.
async fn run_with(provider: Provider, setup: Vec<Op>, pipeline: Option<&str>) -> Ran {
    let providers = BTreeMap::from([("fake".to_owned(), provider)]);
    let t = with_engines(Engines::default(), providers);
    let id = t.session("LLM");
    for op in setup {
        t.core.apply(id, op).await.unwrap();
    }
    t.core
        .import_text(id, "one", "Hello {0}\n\nGood night", Some("en"))
        .await
        .unwrap();
    t.core
        .import_text(id, "two", "See you", Some("en"))
        .await
        .unwrap();
    let mut sub = t.core.subscribe(None);
    let spec = PipelineSpec {
        steps: vec!["llm-translate".into()],
        target_language: pipeline.map(str::to_owned),
        system_prompt: Some("You translate manga dialogue.".into()),
        ..PipelineSpec::default()
    };
    let job = t
        .core
        .start_pipeline(id, spec, Approval::Unattended)
        .await
        .unwrap();
    let mut warnings = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let e = tokio::time::timeout_at(deadline, sub.next())
            .await
            .unwrap()
            .unwrap();
        match &e.event {
            Event::JobWarning {
                job_id, finding, ..
            } if *job_id == job => warnings.push(finding.message.clone()),
            Event::JobFinished { id: j, status, .. } if *j == job => {
                return (*status, warnings, t, id);
            }
            _ => {}
        }
    }
}

async fn translations(t: &TestCore, id: quire_model::ids::SessionId) -> Vec<Option<String>> {
    t.core
        .scene(id)
        .await
        .unwrap()
        .scene
        .pages
        .iter()
        .flat_map(|p| p.nodes.iter())
        .map(|n| match &n.kind {
            NodeKind::Text { translation, .. } => translation.clone(),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_good_provider_translates_every_page_and_gets_the_key() {
    let (base, fake) = fake_provider().await;
    let (status, warnings, t, id) = run(provider(&base, "good", 5, 0)).await;
    assert_eq!(status, JobStatus::Completed, "{warnings:?}");
    assert_eq!(
        translations(&t, id).await,
        vec![
            Some("FR Hello {0}".into()),
            Some("FR Good night".into()),
            Some("FR See you".into())
        ]
    );
    assert_eq!(fake.calls.load(Ordering::SeqCst), 2, "one request per page");
    assert!(
        fake.auth
            .lock()
            .unwrap()
            .iter()
            .all(|a| a == &format!("Bearer {KEY}"))
    );
}

#[tokio::test]
async fn each_page_goes_with_its_neighbours_and_the_source_language() {
    let (base, fake) = fake_provider().await;
    let source = Op::UpdateProject {
        patch: quire_model::op::ProjectPatch {
            source_language: Some(Some("en".to_owned())),
            ..Default::default()
        },
    };
    let (status, warnings, _t, _id) =
        run_with(provider(&base, "good", 5, 0), vec![source], Some("fr")).await;
    assert_eq!(status, JobStatus::Completed, "{warnings:?}");
    let users = fake.users.lock().unwrap().clone();
    assert_eq!(users.len(), 2);
    assert_eq!(users[0]["sourceLanguage"], "en");
    assert_eq!(
        users[0]["context"],
        json!([{ "page": "two", "segments": [{ "text": "See you" }] }])
    );
    assert_eq!(
        users[1]["context"],
        json!([{ "page": "one", "segments": [{ "text": "Hello {0}" }, { "text": "Good night" }] }])
    );
    let system = fake.glossaries.lock().unwrap()[0].0.clone();
    assert!(system.contains("do not copy them"), "{system}");
}

#[tokio::test]
async fn the_projects_target_language_is_the_default() {
    let (base, _) = fake_provider().await;
    let (status, warnings, t, id) = run_with(
        provider(&base, "good", 5, 0),
        vec![project_language("fr")],
        None,
    )
    .await;
    assert_eq!(status, JobStatus::Completed, "{warnings:?}");
    assert_eq!(
        translations(&t, id).await[0].as_deref(),
        Some("FR Hello {0}")
    );
}

#[tokio::test]
async fn each_page_is_sent_the_glossary_terms_it_has() {
    let (base, fake) = fake_provider().await;
    let term = |source: &str, target: &str, note: Option<&str>| Term {
        source: source.into(),
        target: target.into(),
        note: note.map(str::to_owned),
        case_sensitive: false,
    };
    let glossary = Op::UpdateGlossary {
        set: vec![
            term("good night", "bonne nuit", Some("a farewell")),
            term("moon", "lune", None),
        ],
        remove: vec![],
    };
    let (status, warnings, _t, _id) =
        run_with(provider(&base, "good", 5, 0), vec![glossary], Some("fr")).await;
    assert_eq!(status, JobStatus::Completed, "{warnings:?}");
    let sent = fake.glossaries.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0].1,
        json!([{ "source": "good night", "target": "bonne nuit", "note": "a farewell" }]),
        "page one has `Good night`"
    );
    assert!(sent[0].0.contains("glossary term"), "{}", sent[0].0);
    assert_eq!(sent[1].1, Value::Null, "page two has no term");
    assert!(!sent[1].0.contains("glossary"), "{}", sent[1].0);
}

#[tokio::test]
async fn malformed_json_is_a_warning_per_page() {
    let (base, _) = fake_provider().await;
    let (status, warnings, t, id) = run(provider(&base, "malformed", 5, 0)).await;
    assert_eq!(status, JobStatus::CompletedWithErrors);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("provider `fake` answered malformed JSON"),
        "{}",
        warnings[0]
    );
    assert!(
        translations(&t, id).await.iter().all(Option::is_none),
        "nothing written"
    );
}

#[tokio::test]
async fn an_answer_that_leaves_segments_out_is_applied_and_names_them() {
    let (base, _) = fake_provider().await;
    let (status, warnings, t, id) = run(provider(&base, "short", 5, 0)).await;
    assert_eq!(status, JobStatus::CompletedWithErrors);
    // Page one has two segments and gets one answer: that one is written,
    // the other named; page two is fine.
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("the model left out segment")
            && warnings[0].contains("(\"Good night\"); 1 of 2 translated"),
        "{}",
        warnings[0]
    );
    assert_eq!(
        translations(&t, id).await,
        vec![Some("seul".into()), None, Some("seul".into())]
    );
}

#[tokio::test]
async fn a_429_is_retried_and_then_succeeds() {
    let (base, fake) = fake_provider().await;
    let (status, warnings, _, _) = run(provider(&base, "busy-once", 5, 2)).await;
    assert_eq!(status, JobStatus::Completed, "{warnings:?}");
    assert_eq!(
        fake.calls.load(Ordering::SeqCst),
        3,
        "one retry, then one request for page two"
    );
}

#[tokio::test]
async fn persistent_5xx_gives_up_after_max_retries() {
    let (base, fake) = fake_provider().await;
    let (status, warnings, _, _) = run(provider(&base, "broken", 5, 1)).await;
    assert_eq!(status, JobStatus::CompletedWithErrors);
    assert_eq!(warnings.len(), 2);
    assert!(
        warnings[0].contains("failed after 2 attempts: HTTP 500"),
        "{}",
        warnings[0]
    );
    assert_eq!(fake.calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_hang_past_the_timeout_is_a_warning() {
    let (base, _) = fake_provider().await;
    let (status, warnings, _, _) = run(provider(&base, "hang", 1, 0)).await;
    assert_eq!(status, JobStatus::CompletedWithErrors);
    assert_eq!(warnings.len(), 2);
    assert!(
        warnings[0].contains("no answer within 1s"),
        "{}",
        warnings[0]
    );
}

#[tokio::test]
async fn a_refusal_is_not_retried_and_the_key_never_appears() {
    let (base, fake) = fake_provider().await;
    let (status, warnings, t, _) = run(provider(&base, "refuse", 5, 3)).await;
    assert_eq!(status, JobStatus::CompletedWithErrors);
    assert!(
        warnings[0].contains("refused the request: HTTP 401"),
        "{}",
        warnings[0]
    );
    assert_eq!(
        fake.calls.load(Ordering::SeqCst),
        2,
        "4xx other than 429 is not retried"
    );
    for w in &warnings {
        assert!(!w.contains(KEY), "{w}");
    }
    let jobs = serde_json::to_string(&t.core.jobs()).unwrap();
    assert!(!jobs.contains(KEY));
}

#[tokio::test]
async fn a_second_run_asks_only_for_what_the_policy_lets_it_replace() {
    use quire_model::op::{NodePatch, Op};
    use quire_model::scene::TextState;
    use quire_model::workflow::Overwrite;
    let (base, fake) = fake_provider().await;
    let (status, _, t, id) = run(provider(&base, "good", 10, 0)).await;
    assert_eq!(status, JobStatus::Completed);
    let scene = t.core.scene(id).await.unwrap().scene;
    let one = &scene.pages[0];
    // A person locks the first line and rewrites the second.
    let patch = |node: usize, patch: NodePatch| Op::UpdateNode {
        page: one.id,
        id: one.nodes[node].id,
        patch,
        based_on: None,
    };
    t.core
        .apply(id, patch(0, NodePatch::text(None, Some(TextState::Final))))
        .await
        .unwrap();
    t.core
        .apply(
            id,
            patch(1, NodePatch::text(Some(Some("Bonne nuit".into())), None)),
        )
        .await
        .unwrap();
    for (overwrite, asked) in [
        (Overwrite::Untranslated, vec![]),
        (Overwrite::Machine, vec!["See you"]),
        (Overwrite::All, vec!["Good night", "See you"]),
    ] {
        fake.asked.lock().unwrap().clear();
        let mut sub = t.core.subscribe(None);
        let spec = PipelineSpec {
            steps: vec!["llm-translate".into()],
            target_language: Some("fr".into()),
            overwrite: Some(overwrite),
            ..PipelineSpec::default()
        };
        let job = t
            .core
            .start_pipeline(id, spec, Approval::Unattended)
            .await
            .unwrap();
        let events = follow(&mut sub, job).await;
        let status = finished(&events).0;
        assert_eq!(status, JobStatus::Completed, "{overwrite:?}");
        let mut got = fake.asked.lock().unwrap().clone();
        got.sort();
        assert_eq!(got, asked, "{overwrite:?}");
        // The final line is the person's, whatever the mode.
        let now = t.core.scene(id).await.unwrap().scene;
        let NodeKind::Text {
            translation, state, ..
        } = &now.pages[0].nodes[0].kind
        else {
            panic!()
        };
        assert_eq!(translation.as_deref(), Some("FR Hello {0}"));
        assert_eq!(*state, Some(TextState::Final));
    }
}

/// A provider whose model reads images gets each image page's picture
/// with its text: an OpenAI `image_url` part holding a JPEG no larger
/// than 1568 px on its long side, and the system prompt says what it is
/// for. Text pages, and a provider without `images`, get text only.
#[tokio::test]
async fn a_provider_that_reads_images_gets_the_page_picture() {
    use base64::Engine as _;
    use quire_core::import::ImageFile;
    use quire_model::op::NewNode;
    use quire_model::scene::Transform;
    for images in [true, false] {
        let (base, fake) = fake_provider().await;
        let mut config = provider(&base, "good", 10, 0);
        config.images = images;
        let providers = BTreeMap::from([("fake".to_owned(), config)]);
        let t = with_engines(Engines::default(), providers);
        let id = t.session("pictures");
        let page = image::RgbImage::from_pixel(2000, 3000, image::Rgb([250, 250, 250]));
        let mut png = Vec::new();
        page.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        t.core
            .import_files(
                id,
                vec![ImageFile {
                    name: "p1.png".into(),
                    bytes: png,
                }],
            )
            .await
            .unwrap();
        t.core
            .import_text(id, "notes", "A note", Some("en"))
            .await
            .unwrap();
        let scene = t.core.scene(id).await.unwrap().scene;
        let node = NewNode {
            id: None,
            transform: Transform {
                x: 100.0,
                y: 100.0,
                width: 400.0,
                height: 200.0,
                rotation: None,
            },
            visible: true,
            kind: NodeKind::source(Some("Where are we?".into())),
        };
        t.core
            .apply(
                id,
                Op::AddNode {
                    page: scene.pages[0].id,
                    node,
                    at: None,
                },
            )
            .await
            .unwrap();
        let mut sub = t.core.subscribe(None);
        let spec = PipelineSpec {
            steps: vec!["llm-translate".into()],
            target_language: Some("fr".into()),
            ..PipelineSpec::default()
        };
        let job = t
            .core
            .start_pipeline(id, spec, Approval::Unattended)
            .await
            .unwrap();
        let events = follow(&mut sub, job).await;
        assert_eq!(finished(&events).0, JobStatus::Completed);
        assert_eq!(fake.calls.load(Ordering::SeqCst), 2, "one request per page");
        let sent = fake.images.lock().unwrap().clone();
        let systems: Vec<String> = fake
            .glossaries
            .lock()
            .unwrap()
            .iter()
            .map(|g| g.0.clone())
            .collect();
        if !images {
            assert!(sent.is_empty(), "no picture without `images`");
            assert!(systems.iter().all(|s| !s.contains("The image is the page")));
            continue;
        }
        assert_eq!(sent.len(), 1, "the image page only");
        let data = sent[0]
            .strip_prefix("data:image/jpeg;base64,")
            .expect("a JPEG data URL");
        let jpeg = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        let picture = image::load_from_memory_with_format(&jpeg, image::ImageFormat::Jpeg).unwrap();
        assert_eq!((picture.width(), picture.height()), (1045, 1568));
        assert_eq!(
            systems
                .iter()
                .filter(|s| s.contains("The image is the page"))
                .count(),
            1
        );
        assert_eq!(translations(&t, id).await.into_iter().flatten().count(), 2);
    }
}

/// Spec 17, rule 13: `max_in_flight` holds across every job of the
/// process. Three projects translated at once send one request at a
/// time to a provider that allows one; with four allowed they overlap.
#[tokio::test(flavor = "multi_thread")]
async fn a_providers_in_flight_limit_holds_across_jobs() {
    for (limit, most) in [(1, 1), (4, 3)] {
        let (base, fake) = fake_provider().await;
        let mut held = provider(&base, "held", 10, 0);
        held.max_in_flight = limit;
        let providers = BTreeMap::from([("fake".to_owned(), held)]);
        let t = with_engines(Engines::default(), providers);
        let mut sub = t.core.subscribe(None);
        let mut jobs = Vec::new();
        for n in 0..3 {
            let id = t.session(&format!("LLM {n}"));
            t.core
                .import_text(id, "one", "Hello", Some("en"))
                .await
                .unwrap();
            let spec = PipelineSpec {
                steps: vec!["llm-translate".into()],
                target_language: Some("fr".into()),
                ..PipelineSpec::default()
            };
            jobs.push(
                t.core
                    .start_pipeline(id, spec, Approval::Unattended)
                    .await
                    .unwrap(),
            );
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while !jobs.is_empty() {
            let e = tokio::time::timeout_at(deadline, sub.next())
                .await
                .unwrap()
                .unwrap();
            if let Event::JobFinished {
                id, status, error, ..
            } = &e.event
                && let Some(at) = jobs.iter().position(|j| j == id)
            {
                assert_eq!(*status, JobStatus::Completed, "{error:?}");
                jobs.remove(at);
            }
        }
        assert_eq!(fake.calls.load(Ordering::SeqCst), 3);
        assert_eq!(
            fake.most_in_flight.load(Ordering::SeqCst),
            most,
            "max_in_flight = {limit}"
        );
    }
}
