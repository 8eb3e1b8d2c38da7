//! A fake OpenAI-compatible provider (axum on 127.0.0.1:0) whose answer
//! depends on the path it is called at: a good answer, malformed JSON, the
//! wrong number of translations, 429 then success, persistent 500s, a hang
//! past the timeout, a refused key, an answer held a while (counting the
//! requests answered at once). It records what it was asked. Shared
//! with the binary's tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use quire_core::settings::{ApiKey, Provider};
use serde_json::{Value, json};

pub const KEY: &str = "sk-test-do-not-leak";

#[derive(Default)]
pub struct Fake {
    pub calls: AtomicUsize,
    /// Authorization headers seen.
    pub auth: std::sync::Mutex<Vec<String>>,
    /// The source texts of every segment asked for.
    pub asked: std::sync::Mutex<Vec<String>>,
    /// Each request's system prompt and glossary (null when it had none).
    pub glossaries: std::sync::Mutex<Vec<(String, Value)>>,
    /// Each request's user message, parsed.
    pub users: std::sync::Mutex<Vec<Value>>,
    /// The image URLs of the requests that carried one.
    pub images: std::sync::Mutex<Vec<String>>,
    /// Requests being answered now, and the most at once so far.
    pub in_flight: AtomicUsize,
    pub most_in_flight: AtomicUsize,
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
        // Held a while, so that requests sent together overlap here.
        "held" => {
            let now = fake.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            fake.most_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(300)).await;
            fake.in_flight.fetch_sub(1, Ordering::SeqCst);
            good(&body)
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Starts the fake; returns its base address and state.
pub async fn fake_provider() -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    let app = Router::new()
        .route("/{behaviour}/v1/chat/completions", post(chat))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), fake)
}

pub fn provider(base: &str, behaviour: &str, timeout_secs: u64, max_retries: u32) -> Provider {
    Provider {
        base_url: format!("{base}/{behaviour}/v1"),
        model: "fake-model".into(),
        api_key: ApiKey::Key(KEY.to_owned()),
        timeout_secs,
        max_retries,
        max_in_flight: 4,
        images: false,
    }
}
