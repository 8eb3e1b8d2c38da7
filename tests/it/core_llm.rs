//! `llm-translate` against a local fake OpenAI-compatible provider (axum on
//! 127.0.0.1:0): a good answer, malformed JSON, the wrong number of
//! translations, 429 then success, persistent 500s, and a hang past the
//! timeout. Also: the API key is sent as a bearer token and appears in no
//! warning, and a run asks only for the translations its `overwrite` lets
//! it replace (never a final one).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use quire::config::schema::{EnginesConfig, ProviderConfig};
use quire::config::secret::Secret;
use quire_core::events::{Event, JobStatus};
use quire_core::jobs::{Approval, PipelineSpec};
use quire_model::glossary::Term;
use quire_model::op::Op;
use quire_model::scene::NodeKind;
use serde_json::{Value, json};

use crate::core_support::TestCore;

const KEY: &str = "sk-test-do-not-leak";

#[derive(Default)]
pub(crate) struct Fake {
    calls: AtomicUsize,
    /// Authorization headers seen.
    auth: std::sync::Mutex<Vec<String>>,
    /// The source texts of every segment asked for.
    asked: std::sync::Mutex<Vec<String>>,
    /// Each request's system prompt and glossary (null when it had none).
    glossaries: std::sync::Mutex<Vec<(String, Value)>>,
    /// Each request's user message, parsed.
    users: std::sync::Mutex<Vec<Value>>,
    /// The image URLs of the requests that carried one.
    images: std::sync::Mutex<Vec<String>>,
}

/// The user message's text: the content itself, or its `text` part when
/// it is a list of parts (a request with the page's picture).
fn user_text(body: &Value) -> &str {
    let content = &body["messages"][1]["content"];
    match content.as_array() {
        Some(parts) => parts
            .iter()
            .find(|p| p["type"] == "text")
            .and_then(|p| p["text"].as_str())
            .unwrap(),
        None => content.as_str().unwrap(),
    }
}

/// The segments the request carried.
fn segments(body: &Value) -> Vec<(String, String)> {
    let user: Value = serde_json::from_str(user_text(body)).unwrap();
    user["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_owned(),
                s["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn completion(content: String) -> Response {
    Json(json!({ "choices": [{ "message": { "role": "assistant", "content": content } }] }))
        .into_response()
}

fn good(body: &Value) -> Response {
    let translations: Vec<Value> = segments(body)
        .into_iter()
        .map(|(id, text)| json!({ "id": id, "translation": format!("FR {text}") }))
        .collect();
    completion(json!({ "translations": translations }).to_string())
}

async fn chat(
    State(fake): State<Arc<Fake>>,
    Path(behaviour): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let call = fake.calls.fetch_add(1, Ordering::SeqCst);
    let content = &body["messages"][1]["content"];
    if let Some(parts) = content.as_array() {
        let images = parts.iter().filter(|p| p["type"] == "image_url");
        fake.images
            .lock()
            .unwrap()
            .extend(images.map(|p| p["image_url"]["url"].as_str().unwrap().to_owned()));
    }
    if content.is_string() || content.is_array() {
        let asked = segments(&body).into_iter().map(|(_, text)| text);
        fake.asked.lock().unwrap().extend(asked);
        let user: Value = serde_json::from_str(user_text(&body)).unwrap();
        let system = body["messages"][0]["content"].as_str().unwrap().to_owned();
        fake.glossaries
            .lock()
            .unwrap()
            .push((system, user["glossary"].clone()));
        fake.users.lock().unwrap().push(user);
    }
    if let Some(auth) = headers.get("authorization") {
        fake.auth
            .lock()
            .unwrap()
            .push(auth.to_str().unwrap().to_owned());
    }
    match behaviour.as_str() {
        "good" => good(&body),
        "malformed" => (StatusCode::OK, "{ this is not json").into_response(),
        "short" => {
            let first = &segments(&body)[0];
            completion(
                json!({ "translations": [{ "id": first.0, "translation": "seul" }] }).to_string(),
            )
        }
        "busy-once" if call == 0 => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "0")],
            "slow down",
        )
            .into_response(),
        "busy-once" => good(&body),
        "broken" => (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response(),
        "hang" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            good(&body)
        }
        "refuse" => (StatusCode::UNAUTHORIZED, "bad key").into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Starts the fake; returns its base address and state.
pub(crate) async fn fake_provider() -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    let app = Router::new()
        .route("/{behaviour}/v1/chat/completions", post(chat))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), fake)
}

pub(crate) fn provider(
    base: &str,
    behaviour: &str,
    timeout_secs: u64,
    max_retries: u32,
) -> ProviderConfig {
    ProviderConfig {
        base_url: format!("{base}/{behaviour}/v1"),
        model: "fake-model".into(),
        api_key: Secret::new(KEY),
        api_key_env: None,
        api_key_file: None,
        timeout_secs: std::num::NonZeroU64::new(timeout_secs).unwrap(),
        max_retries,
        images: false,
    }
}

type Ran = (
    JobStatus,
    Vec<String>,
    TestCore,
    quire_model::ids::SessionId,
);

/// Runs llm-translate over two text pages with `provider`, into French;
/// returns the final status, the warnings and the core.
async fn run(provider: ProviderConfig) -> Ran {
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
async fn run_with(provider: ProviderConfig, setup: Vec<Op>, pipeline: Option<&str>) -> Ran {
    let providers = BTreeMap::from([("fake".to_owned(), provider)]);
    let t = crate::core_support::with_engines(EnginesConfig::default(), providers);
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
async fn the_wrong_number_of_translations_is_refused() {
    let (base, _) = fake_provider().await;
    let (status, warnings, t, id) = run(provider(&base, "short", 5, 0)).await;
    assert_eq!(status, JobStatus::CompletedWithErrors);
    // Page one has two segments and gets one answer; page two is fine.
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("1 translations for 2 segments"),
        "{}",
        warnings[0]
    );
    assert_eq!(
        translations(&t, id).await,
        vec![None, None, Some("seul".into())]
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
async fn a_provider_whose_key_variable_is_unset_refuses_only_its_pipeline() {
    let mut p = provider("http://127.0.0.1:9", "ok", 5, 0);
    p.api_key = quire::config::secret::resolve(
        "providers.fake.api_key",
        &Secret::default(),
        Some("QUIRE_LLM_KEY_SURELY_UNSET"),
        None,
    )
    .unwrap();
    let providers = BTreeMap::from([("fake".to_owned(), p)]);
    let t = crate::core_support::with_engines(EnginesConfig::default(), providers);
    let id = t.session("No key");
    t.core.import_text(id, "one", "Hello", None).await.unwrap();
    let spec = |step: &str| PipelineSpec {
        steps: vec![step.into()],
        target_language: Some("fr".into()),
        ..PipelineSpec::default()
    };
    let err = t
        .core
        .start_pipeline(id, spec("llm-translate"), Approval::Unattended)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    let message = err.to_string();
    assert!(
        message.contains("provider `fake`")
            && message.contains("QUIRE_LLM_KEY_SURELY_UNSET is not set"),
        "{message}"
    );
    assert!(t.core.jobs().is_empty(), "no job was started");
    // Other engines are not affected.
    t.core
        .start_pipeline(id, spec("pseudo-translate"), Approval::Unattended)
        .await
        .unwrap();
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
        let events = crate::core_jobs::follow(&mut sub, job).await;
        let status = crate::core_jobs::finished(&events).0;
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
        let t = crate::core_support::with_engines(EnginesConfig::default(), providers);
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
        let events = crate::core_jobs::follow(&mut sub, job).await;
        assert_eq!(crate::core_jobs::finished(&events).0, JobStatus::Completed);
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
