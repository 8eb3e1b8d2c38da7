//! The HTTP API in process over real TCP: the typical flow with its events,
//! the error contract (every bad input leaves scene and epoch alone), SSE
//! resume, auth, Host/Origin protection, limits, readiness, panics, the
//! OpenAPI document, and a bounded load test.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{Value, json};

use crate::http_support::{SseReader, TestServer, assert_error};

mod server;

async fn with_project(s: &TestServer) -> Value {
    let (status, session) = s.post("/api/v1/projects", json!({ "name": "Comic" })).await;
    assert_eq!(status, 200, "{session}");
    let (status, _) = s
        .post(
            "/api/v1/pages",
            json!({ "name": "p1", "text": "Hello {0}\n\nGood night" }),
        )
        .await;
    assert_eq!(status, 200);
    session
}

#[tokio::test]
async fn typical_flow_with_events_and_xliff_export() {
    let s = TestServer::start().await;
    let mut events = SseReader::connect(&s.client, &s.at("/api/v1/events"), None).await;
    let first = events.next().await;
    assert_eq!(first.event, "Snapshot");
    with_project(&s).await;
    let (status, started) = s
        .post(
            "/api/v1/pipelines",
            json!({ "steps": ["pseudo-translate", "qa"] }),
        )
        .await;
    assert_eq!(status, 200, "{started}");
    let job = started["jobId"].as_str().unwrap().to_owned();
    let seen = events
        .until(|e| e.event == "JobFinished" && e.data["id"] == job.as_str())
        .await;
    let mine: Vec<&str> = seen
        .iter()
        .filter(|e| e.data["id"] == job.as_str() || e.data["jobId"] == job.as_str())
        .map(|e| e.event.as_str())
        .collect();
    assert_eq!(mine.first(), Some(&"JobStarted"));
    assert_eq!(mine.last(), Some(&"JobFinished"));
    assert!(mine.contains(&"JobProgress"));
    assert_eq!(seen.last().unwrap().data["status"], "completed");
    // SSE ids are the events' seq, increasing.
    let ids: Vec<u64> = seen.iter().map(|e| e.id.unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[1] > w[0]), "{ids:?}");
    assert!(seen.iter().all(|e| e.data["seq"] == e.id.unwrap()));

    let r = s
        .client
        .post(s.at("/api/v1/projects/current/export"))
        .json(&json!({ "format": "xliff" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/xliff+xml");
    assert!(
        r.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .contains("comic.xlf")
    );
    let xml = r.text().await.unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("target"))
            .count(),
        2
    );
}

#[tokio::test]
async fn every_bad_input_is_refused_and_changes_nothing() {
    let s = TestServer::with(
        |c| c.server.max_body_bytes = std::num::NonZeroU64::new(4096).unwrap(),
        None,
    )
    .await;
    let none = s
        .post(
            "/api/v1/history/apply",
            json!({ "type": "RemovePage", "id": uuid() }),
        )
        .await;
    assert_error(&none, 409, "no_session");
    assert_error(&s.get("/api/v1/scene.json").await, 409, "no_session");
    with_project(&s).await;
    let before = s.scene().await;
    let mut cases = bad_bodies(&s).await;
    cases.extend(bad_requests(&s).await);
    for (i, (got, status, code)) in cases.iter().enumerate() {
        assert_eq!(got.0, *status, "case {i}: {}", got.1);
        assert_error(got, *status, code);
    }
    // A chunked body past the limit (no Content-Length) is refused too.
    let big = "x".repeat(10_000);
    let stream = futures_util::stream::iter(vec![Ok::<_, std::io::Error>(format!(
        "{{\"type\":\"UpdateProject\",\"patch\":{{\"name\":\"{big}\"}}}}"
    ))]);
    let r = s
        .client
        .post(s.at("/api/v1/history/apply"))
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
        .unwrap();
    assert_error(&crate::http_support::decode(r).await, 413, "too_large");
    assert_eq!(s.scene().await, before, "scene and epoch unchanged");
}

/// A reply, and the status and error code it must have.
type Refused = ((u16, Value), u16, &'static str);

/// Edits the server cannot take: malformed JSON, unknown or invalid ops,
/// a node or a session that is not there.
async fn bad_bodies(s: &TestServer) -> Vec<Refused> {
    vec![
        (
            s.post_raw("/api/v1/history/apply", "{not json").await,
            400,
            "malformed_json",
        ),
        (
            s.post_raw("/api/v1/history/apply", "").await,
            400,
            "malformed_json",
        ),
        (
            s.post("/api/v1/history/apply", json!({ "type": "Teleport" }))
                .await,
            400,
            "invalid_request",
        ),
        (
            s.post(
                "/api/v1/history/apply",
                json!({ "type": "RemovePage", "id": uuid() }),
            )
            .await,
            422,
            "invalid_op",
        ),
        (
            s.post(
                "/api/v1/history/apply",
                json!({ "type": "Batch", "ops": [
                    { "type": "AddPage", "page": { "name": "x" } },
                    { "type": "RemovePage", "id": uuid() }
                ]}),
            )
            .await,
            422,
            "invalid_op",
        ),
        (
            s.post(
                &format!("/api/v1/sessions/{}/history/apply", uuid()),
                json!({ "type": "RemovePage", "id": uuid() }),
            )
            .await,
            404,
            "not_found",
        ),
        (
            s.post("/api/v1/sessions/not-an-id/history/undo", json!({}))
                .await,
            404,
            "not_found",
        ),
    ]
}

/// Pipelines, exports, pages and sizes that are refused, and addresses of
/// what is not there.
async fn bad_requests(s: &TestServer) -> Vec<Refused> {
    vec![
        (
            s.post("/api/v1/pipelines", json!({ "steps": ["nope"] }))
                .await,
            422,
            "invalid_input",
        ),
        (
            s.post(
                "/api/v1/pipelines",
                json!({ "steps": ["qa"], "pages": [uuid()] }),
            )
            .await,
            422,
            "invalid_input",
        ),
        (
            s.post("/api/v1/pipelines", json!({ "steps": ["qa"], "speed": 3 }))
                .await,
            400,
            "invalid_request",
        ),
        (
            s.post(
                "/api/v1/projects/current/export",
                json!({ "format": "docx" }),
            )
            .await,
            400,
            "invalid_request",
        ),
        (
            s.post("/api/v1/pages", json!({ "name": "empty", "text": "  " }))
                .await,
            422,
            "invalid_input",
        ),
        (
            s.post(
                "/api/v1/history/apply",
                json!({ "type": "UpdateProject", "patch": { "name": "x".repeat(5000) } }),
            )
            .await,
            413,
            "too_large",
        ),
        (
            s.get(&format!("/api/v1/blobs/{}", "0".repeat(64))).await,
            404,
            "not_found",
        ),
        (s.get("/api/v1/blobs/nothex").await, 404, "not_found"),
        (
            s.send(
                Method::DELETE,
                &format!("/api/v1/operations/{}", uuid()),
                None,
            )
            .await,
            404,
            "not_found",
        ),
        (
            s.get(&format!("/api/v1/sessions/{}", uuid())).await,
            404,
            "not_found",
        ),
        (
            s.send(
                Method::PUT,
                "/api/v1/sessions/current",
                Some(json!({ "id": uuid() })),
            )
            .await,
            404,
            "not_found",
        ),
        (
            s.send(
                Method::PUT,
                "/api/v1/projects/current",
                Some(json!({ "id": uuid() })),
            )
            .await,
            404,
            "not_found",
        ),
        (
            s.post("/api/v1/projects", json!({ "name": "" })).await,
            422,
            "invalid_input",
        ),
        (s.get("/api/v1/nowhere").await, 404, "not_found"),
    ]
}

fn uuid() -> String {
    quire_model::ids::PageId::new().to_string()
}

#[tokio::test]
async fn apply_undo_redo_and_addressed_routes() {
    let s = TestServer::start().await;
    let session = with_project(&s).await;
    let id = session["id"].as_str().unwrap();
    let (status, applied) = s
        .post(
            &format!("/api/v1/sessions/{id}/history/apply"),
            json!({ "type": "AddPage", "page": { "name": "p2" } }),
        )
        .await;
    assert_eq!(status, 200, "{applied}");
    assert_eq!(applied["epoch"], 2);
    assert_eq!(applied["created"].as_array().unwrap().len(), 1);
    // A route without a session in its path names the one it acted on (a
    // second project, opened since, is now the current one); an addressed
    // route needs no such header.
    let (_, other) = s.post("/api/v1/projects", json!({ "name": "Other" })).await;
    let named = |r: &reqwest::Response| {
        r.headers()
            .get("quire-session-id")
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let r = s
        .client
        .get(s.at("/api/v1/scene.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(named(&r).as_deref(), other["id"].as_str());
    let r = s
        .client
        .get(s.at(&format!("/api/v1/sessions/{id}/scene.json")))
        .send()
        .await
        .unwrap();
    assert_eq!(named(&r), None);
    let other = other["id"].as_str().unwrap();
    let r = s
        .client
        .delete(s.at(&format!("/api/v1/sessions/{other}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        s.post("/api/v1/history/undo", json!(null)).await.1,
        json!({ "epoch": 3, "label": "add page p2", "ops": 1 })
    );
    assert_eq!(
        s.post(&format!("/api/v1/sessions/{id}/history/undo"), json!(null))
            .await
            .1,
        json!({ "epoch": 4, "label": "import text p1", "ops": 1 })
    );
    assert_eq!(
        s.post("/api/v1/history/undo", json!(null)).await.1,
        json!({ "epoch": null, "ops": 0, "message": "nothing of yours to undo" })
    );
    assert_eq!(
        s.post("/api/v1/history/redo", json!(null)).await.1,
        json!({ "epoch": 5, "label": "import text p1", "ops": 1 })
    );
    let (_, one) = s.get(&format!("/api/v1/sessions/{id}")).await;
    assert_eq!(one["epoch"], 5);
    assert_eq!(one["current"], true);
    let (_, list) = s.get("/api/v1/sessions").await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    // Every listing says when the session was opened (RFC 3339).
    let opened_at = one["openedAt"].as_str().expect("openedAt");
    assert!(humantime::parse_rfc3339(opened_at).is_ok(), "{opened_at}");
    assert_eq!(list[0]["openedAt"], opened_at);
    let (_, scene) = s.get(&format!("/api/v1/sessions/{id}/scene.json")).await;
    assert_eq!(scene["epoch"], 5);
    let (status, closed) = s
        .send(Method::DELETE, "/api/v1/projects/current", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(closed["closed"], id);
    assert_error(
        &s.send(Method::DELETE, "/api/v1/projects/current", None)
            .await,
        409,
        "no_session",
    );
    // Reopen by project id.
    let (_, projects) = s.get("/api/v1/projects").await;
    let project = projects[0]["id"].clone();
    let (status, reopened) = s
        .send(
            Method::PUT,
            "/api/v1/projects/current",
            Some(json!({ "id": project })),
        )
        .await;
    assert_eq!(status, 200, "{reopened}");
    assert_eq!(reopened["epoch"], 5);
}

#[tokio::test]
async fn images_upload_and_blobs_are_served_immutable() {
    let s = TestServer::start().await;
    with_project(&s).await;
    let png = std::fs::read(format!(
        "{}/tests/fixtures/tiny.png",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let jpg = std::fs::read(format!(
        "{}/tests/fixtures/tiny.jpg",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(png.clone()).file_name("page10.png"),
        )
        .part(
            "file",
            reqwest::multipart::Part::bytes(jpg).file_name("page2.jpg"),
        );
    let r = s
        .client
        .post(s.at("/api/v1/pages"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    let (status, body) = crate::http_support::decode(r).await;
    assert_eq!(status, 200, "{body}");
    let scene = s.scene().await;
    let names: Vec<&str> = scene["scene"]["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["p1", "page2", "page10"]);
    let blob = scene["scene"]["pages"][2]["nodes"][0]["kind"]["blob"]
        .as_str()
        .unwrap();
    let r = s
        .client
        .get(s.at(&format!("/api/v1/blobs/{blob}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert!(
        r.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    assert_eq!(r.bytes().await.unwrap().to_vec(), png);
    // A bad file imports nothing.
    let epoch = scene["epoch"].clone();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"GIF89a....".to_vec()).file_name("x.gif"),
    );
    let r = s
        .client
        .post(s.at("/api/v1/pages"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    let got = crate::http_support::decode(r).await;
    assert_error(&got, 422, "invalid_input");
    assert!(
        got.1["error"]["message"]
            .as_str()
            .unwrap()
            .contains("x.gif")
    );
    assert_eq!(s.scene().await["epoch"], epoch);
}

#[tokio::test]
async fn sse_resumes_after_last_event_id_or_sends_a_snapshot() {
    let s = TestServer::start().await;
    with_project(&s).await;
    let mut first = SseReader::connect(&s.client, &s.at("/api/v1/events"), None).await;
    let snapshot = first.next().await;
    assert_eq!(snapshot.event, "Snapshot");
    let seen = snapshot.id.unwrap();
    drop(first);
    for i in 0..5 {
        s.post(
            "/api/v1/history/apply",
            json!({ "type": "AddPage", "page": { "name": format!("m{i}") } }),
        )
        .await;
    }
    let mut resumed = SseReader::connect(&s.client, &s.at("/api/v1/events"), Some(seen)).await;
    let missed: Vec<(u64, String, Value)> = {
        let mut out = Vec::new();
        for _ in 0..5 {
            let e = resumed.next().await;
            out.push((e.id.unwrap(), e.event, e.data["epoch"].clone()));
        }
        out
    };
    let ids: Vec<u64> = missed.iter().map(|m| m.0).collect();
    assert_eq!(ids, (seen + 1..=seen + 5).collect::<Vec<_>>());
    assert!(missed.iter().all(|m| m.1 == "SceneAdvanced"));
    assert_eq!(missed.last().unwrap().2, 6);
    // Nothing else was missed: the next event is new.
    s.post("/api/v1/history/undo", json!(null)).await;
    let next = resumed.next().await;
    assert_eq!(next.id, Some(seen + 6));
    drop(resumed);
    // An id that fell out of the ring gets a snapshot.
    let session = s.core.current_session().unwrap();
    let mut last = None;
    for i in 0..1100 {
        let op = quire_model::op::Op::UpdateProject {
            patch: quire_model::op::ProjectPatch {
                name: Some(format!("n{i}")),
                ..Default::default()
            },
        };
        last = Some(s.core.blocking().submit(session, op).unwrap());
    }
    last.unwrap().durable().await.unwrap();
    let mut old = SseReader::connect(&s.client, &s.at("/api/v1/events"), Some(seen)).await;
    let e = old.next().await;
    assert_eq!(e.event, "Snapshot");
    assert_eq!(e.data["sessions"][0]["epoch"], 1107);
    assert_eq!(e.data["sessions"][0]["name"], "n1099");
}

#[tokio::test]
async fn bearer_token_is_required_except_for_healthz() {
    let s = TestServer::with(
        |c| c.server.token = quire::config::secret::Secret::new("s3cret"),
        None,
    )
    .await;
    assert_eq!(
        s.client
            .get(s.at("/healthz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    for path in [
        "/api/v1/meta",
        "/api/v1/sessions",
        "/api/v1/events",
        "/api/v1/openapi.json",
    ] {
        let r = s.client.get(s.at(path)).send().await.unwrap();
        assert_eq!(r.status(), 401, "{path}");
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
        let r = s
            .client
            .get(s.at(path))
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap();
        assert_error(&crate::http_support::decode(r).await, 401, "unauthorized");
    }
    let r = s
        .client
        .get(s.at("/api/v1/meta"))
        .bearer_auth("s3cret")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // The config endpoint never shows the token.
    let r = s
        .client
        .get(s.at("/api/v1/config"))
        .bearer_auth("s3cret")
        .send()
        .await
        .unwrap();
    let text = r.text().await.unwrap();
    assert!(
        !text.contains("s3cret") && text.contains("[redacted]"),
        "{text}"
    );
}

#[tokio::test]
async fn foreign_host_and_origin_are_refused_everywhere() {
    let s = TestServer::with(
        |c| {
            c.server.allowed_origins = vec!["https://app.example".into()];
            c.server.allowed_hosts = vec!["quire.lan".into()];
        },
        None,
    )
    .await;
    let get_with = async |path: &str, header: &str, value: &str| {
        let r = s
            .client
            .get(s.at(path))
            .header(header, value)
            .send()
            .await
            .unwrap();
        crate::http_support::decode(r).await
    };
    for path in ["/api/v1/meta", "/api/v1/events", "/mcp", "/healthz"] {
        let r = get_with(path, "Host", "evil.example").await;
        crate::http_support::assert_refused(path, &r, 403, "forbidden_host");
        let r = get_with(path, "Origin", "https://evil.example").await;
        crate::http_support::assert_refused(path, &r, 403, "forbidden_origin");
    }
    let r = s
        .client
        .post(s.at("/api/v1/projects"))
        .header("Host", "evil.example")
        .json(&json!({"name": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(s.core.sessions().is_empty(), "nothing was created");
    for (header, value) in [
        ("Origin", "https://app.example"),
        ("Host", "quire.lan:4096"),
        ("Host", "localhost:1234"),
    ] {
        let (status, _) = get_with("/api/v1/meta", header, value).await;
        assert_eq!(status, 200, "{header}: {value}");
    }
}
