//! Correct refusals over HTTP: every error has the JSON body (405 and
//! unknown routes too), `Bearer` in any case, an array or scalar where an
//! object is expected is refused and never read as fields in order, limits
//! before logging, and managed projects never reached through a link that
//! leaves the projects directory.

use reqwest::Method;
use serde_json::json;

use crate::http_support::{TestServer, assert_error};

async fn with_page(s: &TestServer) -> String {
    let (status, _) = s
        .post("/api/v1/projects", json!({ "name": "Refusals" }))
        .await;
    assert_eq!(status, 200);
    let (status, applied) = s
        .post(
            "/api/v1/history/apply",
            json!({ "type": "AddPage", "page": { "name": "first" } }),
        )
        .await;
    assert_eq!(status, 200, "{applied}");
    applied["created"][0].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn wrong_methods_and_unknown_routes_answer_the_json_error_body() {
    let s = TestServer::start().await;
    for (method, path, status, code) in [
        (Method::DELETE, "/api/v1/meta", 405, "method_not_allowed"),
        (
            Method::PUT,
            "/api/v1/history/apply",
            405,
            "method_not_allowed",
        ),
        (
            Method::GET,
            "/api/v1/history/undo",
            405,
            "method_not_allowed",
        ),
        (Method::GET, "/api/v1/nope", 404, "not_found"),
        (Method::POST, "/nowhere", 404, "not_found"),
    ] {
        let got = s.send(method.clone(), path, None).await;
        assert_error(&got, status, code);
    }
    let r = s.client.delete(s.at("/api/v1/meta")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert!(
        r.headers().get("allow").is_some(),
        "405 names the allowed methods"
    );
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
}

#[tokio::test]
async fn the_bearer_scheme_is_matched_in_any_case() {
    let s = TestServer::with(
        |c| c.server.token = quire::config::secret::Secret::new("s3cret"),
        None,
    )
    .await;
    let cases = [
        ("Bearer s3cret", 200),
        ("bearer s3cret", 200),
        ("BEARER  s3cret", 200),
        ("BeArEr s3cret ", 200),
        ("Basic s3cret", 401),
        ("Bearer", 401),
        ("Bearers3cret", 401),
        ("Bearer s3cre", 401),
        ("s3cret", 401),
    ];
    for (header, status) in cases {
        let r = s
            .client
            .get(s.at("/api/v1/sessions"))
            .header("Authorization", header)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), status, "{header:?}");
    }
}

#[tokio::test]
async fn arrays_and_scalars_are_never_read_as_objects() {
    let s = TestServer::start().await;
    let page = with_page(&s).await;
    let before = s.scene().await;
    let bodies = [
        // 0.1.0 renamed the page: `["x"]` was read as `{ "name": "x" }`.
        json!({ "type": "UpdatePage", "id": page, "patch": ["x"] }),
        json!({ "type": "UpdateProject", "patch": ["renamed"] }),
        json!({ "type": "AddPage", "page": ["array page"] }),
        json!({ "type": "Batch", "ops": [["RemovePage", page]] }),
        json!({ "type": "Batch", "ops": [5] }),
        json!(["RemovePage", page]),
        json!("RemovePage"),
        json!(42),
    ];
    for body in bodies {
        let got = s.post("/api/v1/history/apply", body.clone()).await;
        assert!(got.0 == 400 || got.0 == 422, "{body}: {} {}", got.0, got.1);
        assert!(got.1["error"]["message"].is_string(), "{}", got.1);
    }
    let got = s.post("/api/v1/projects", json!(["Name"])).await;
    assert_error(&got, 400, "invalid_request");
    let got = s
        .post("/api/v1/pipelines", json!([["pseudo-translate"]]))
        .await;
    assert_error(&got, 400, "invalid_request");
    assert_eq!(s.scene().await, before, "nothing changed");
    assert_eq!(
        s.get("/api/v1/projects").await.1.as_array().unwrap().len(),
        1
    );
}

#[tokio::test]
async fn limits_are_refused_with_422_and_nothing_logged() {
    let s = TestServer::start().await;
    with_page(&s).await;
    let before = s.scene().await;
    let path = s.get("/api/v1/sessions").await.1[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let dir = s.core.session(path.parse().unwrap()).unwrap().path;
    let log = std::fs::read(dir.join("ops.log")).unwrap();
    let mut deep = json!({ "type": "AddPage", "page": { "name": "deep" } });
    for _ in 0..62 {
        deep = json!({ "type": "Batch", "ops": [deep] });
    }
    let long = "n".repeat(201);
    for body in [
        deep,
        json!({ "type": "UpdateProject", "patch": { "name": long } }),
        json!({ "type": "UpdateProject", "patch": { "name": "tab\there" } }),
        json!({ "type": "AddPage", "page": { "name": "" } }),
    ] {
        let got = s.post("/api/v1/history/apply", body).await;
        assert_error(&got, 422, "invalid_op");
    }
    let got = s
        .post("/api/v1/projects", json!({ "name": "bell\u{7}" }))
        .await;
    assert_error(&got, 422, "invalid_input");
    assert_eq!(s.scene().await, before);
    assert_eq!(
        std::fs::read(dir.join("ops.log")).unwrap(),
        log,
        "nothing logged"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_linked_project_outside_the_projects_directory_is_not_managed() {
    let s = TestServer::start().await;
    let (status, session) = s
        .post("/api/v1/projects", json!({ "name": "Inside" }))
        .await;
    assert_eq!(status, 200);
    // A real project elsewhere, linked into the projects directory.
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("secret-project");
    let other = s
        .core
        .blocking()
        .create_project(&target, "Outside")
        .unwrap();
    let other_project = other.project_id.to_string();
    s.core.blocking().close_session(other.id).unwrap();
    let projects_dir = s.core.projects_dir().to_path_buf();
    std::os::unix::fs::symlink(&target, projects_dir.join("linked")).unwrap();

    let (status, list) = s.get("/api/v1/projects").await;
    assert_eq!(status, 200);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Inside"], "{list}");
    let got = s
        .send(
            Method::PUT,
            "/api/v1/projects/current",
            Some(json!({ "id": other_project })),
        )
        .await;
    assert_error(&got, 404, "not_found");
    let (_, sessions) = s.get("/api/v1/sessions").await;
    assert_eq!(sessions.as_array().unwrap().len(), 1);
    assert_eq!(sessions[0]["id"], session["id"]);
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_client_that_stops_reading_is_cut_off() {
    use quire_core::events::Event;
    use quire_model::ids::SessionId;
    use tokio::io::AsyncWriteExt;

    let s = TestServer::with(
        |c| c.server.send_timeout_secs = std::num::NonZeroU64::MIN,
        None,
    )
    .await;
    let bus = s.core.events().clone();
    let wait_for = |want: usize, what: &'static str| {
        let bus = bus.clone();
        async move {
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
            while bus.subscribers() != want {
                assert!(tokio::time::Instant::now() < deadline, "{what}");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    };
    let base = bus.subscribers();
    // A reader that keeps up.
    let mut reader =
        crate::http_support::SseReader::connect(&s.client, &s.at("/api/v1/events"), None).await;
    assert_eq!(reader.next().await.event, "Snapshot");
    let keeping_up =
        tokio::spawn(async move { reader.until(|e| e.event == "ConfigChanged").await.len() });
    // A client with a tiny window that never reads.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let addr = s.url.trim_start_matches("http://").parse().unwrap();
    let mut stuck = socket.connect(addr).await.unwrap();
    stuck
        .write_all(b"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    wait_for(base + 2, "the stuck client never subscribed").await;
    // Events until the kernel gives up on the stuck client (its window
    // stays shut for longer than server.send_timeout_secs).
    let session = SessionId::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut epoch = 0;
    while bus.subscribers() > base + 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the stuck client was never cut off"
        );
        for _ in 0..200 {
            epoch += 1;
            bus.publish(Event::SceneAdvanced {
                session_id: session,
                epoch,
                name: "n".repeat(200),
                pages: None,
            });
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The reader that kept up was served throughout, and still is.
    assert_eq!(bus.subscribers(), base + 1);
    bus.publish(Event::ConfigChanged {});
    assert!(keeping_up.await.unwrap() > 1);
    drop(stuck);
}

/// Only this server's own origin (its scheme is `http`) and configured
/// ones: an `https://` page on the same host and port is another origin
/// (0.2 took it for its own).
#[tokio::test]
async fn an_https_origin_is_not_an_http_servers_own() {
    let s = TestServer::start().await;
    let authority = s.url.trim_start_matches("http://").to_owned();
    let with_origin = async |origin: String| {
        let r = s
            .client
            .get(s.at("/api/v1/meta"))
            .header("Origin", origin)
            .send()
            .await
            .unwrap();
        crate::http_support::decode(r).await
    };
    assert_eq!(with_origin(format!("http://{authority}")).await.0, 200);
    assert_error(
        &with_origin(format!("https://{authority}")).await,
        403,
        "forbidden_origin",
    );
    // Behind a TLS proxy, the operator names the browser's origin.
    let proxied = TestServer::with(
        |c| c.server.allowed_origins = vec!["https://quire.example.org".into()],
        None,
    )
    .await;
    let r = proxied
        .client
        .get(proxied.at("/api/v1/meta"))
        .header("Origin", "https://quire.example.org")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

/// Every answer says `nosniff`: data, errors, blobs and the workbench.
#[tokio::test]
async fn every_answer_says_nosniff() {
    let s = TestServer::start().await;
    with_page(&s).await;
    let (_, session) = s.get("/api/v1/sessions").await;
    let id = session[0]["id"].as_str().unwrap().to_owned();
    let blob = s
        .core
        .put_blob(id.parse().unwrap(), b"bytes".to_vec())
        .await
        .unwrap();
    for path in [
        "/api/v1/meta".to_owned(),
        "/api/v1/nowhere".to_owned(),
        "/healthz".to_owned(),
        "/".to_owned(),
        format!("/api/v1/sessions/{id}/blobs/{blob}"),
        "/api/v1/openapi.json".to_owned(),
    ] {
        let r = s.client.get(s.at(&path)).send().await.unwrap();
        assert_eq!(
            r.headers()
                .get("x-content-type-options")
                .map(|v| v.to_str().unwrap().to_owned()),
            Some("nosniff".to_owned()),
            "{path}"
        );
    }
}

/// `/mcp` answers what is not JSON-RPC with a JSON-RPC error body: a body
/// that is not JSON is a parse error (400, -32700), a wrong content type
/// keeps its 415 with an invalid-request error (0.2 answered both with 415
/// and plain text), a body over `server.max_body_bytes` its 413, and so do
/// the guard's refusals of `/mcp` requests.
#[test]
fn mcp_refusals_are_json_rpc_error_bodies() {
    let s = crate::harness::Sandbox::new();
    s.user_config("[server]\nmax_body_bytes = 4096\n");
    let server = crate::http_support::Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = crate::harness::http_client();
    let post = |content_type: &str, body: &'static str| {
        rt.block_on(async {
            let r = client
                .post(format!("{}/mcp", server.url))
                .header("Content-Type", content_type)
                .header("Accept", "application/json, text/event-stream")
                .body(body)
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let kind = r
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default();
            (status, kind, r.json::<serde_json::Value>().await.unwrap())
        })
    };
    let (status, kind, body) = post("application/json", "{bad json");
    assert_eq!((status, kind.as_str()), (400, "application/json"), "{body}");
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], serde_json::Value::Null);
    assert_eq!(body["error"]["code"], -32700, "{body}");
    let (status, _, body) = post("text/plain", "{}");
    assert_eq!(status, 415, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Content-Type"),
        "{body}"
    );
    // Sent in chunks (no Content-Length to refuse it by), it is read up
    // to the limit.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(5000)).into_bytes();
    let (status, body) = rt.block_on(async {
        let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(big)]);
        let r = client
            .post(format!("{}/mcp", server.url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(reqwest::Body::wrap_stream(chunks))
            .send()
            .await
            .unwrap();
        (
            r.status().as_u16(),
            r.json::<serde_json::Value>().await.unwrap(),
        )
    });
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("length limit exceeded"), "{body}");

    // Refused by the guard before `/mcp` reads it (by its Content-Length,
    // or by its Origin): the same JSON-RPC shape, quire's code as data;
    // the REST routes keep theirs.
    let send = |path: &str, origin: Option<&str>, body: Vec<u8>| {
        rt.block_on(async {
            let mut request = client
                .post(format!("{}{path}", server.url))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .body(body);
            if let Some(origin) = origin {
                request = request.header("Origin", origin);
            }
            let r = request.send().await.unwrap();
            (
                r.status().as_u16(),
                r.json::<serde_json::Value>().await.unwrap(),
            )
        })
    };
    let big = || format!("{{\"pad\":\"{}\"}}", "x".repeat(5000)).into_bytes();
    use crate::http_support::assert_refused;
    let got = send("/mcp", None, big());
    assert_refused("/mcp", &got, 413, "too_large");
    let message = got.1["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("server.max_body_bytes (4096 bytes)"),
        "{}",
        got.1
    );
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec();
    let got = send("/mcp", Some("http://evil.example"), ping);
    assert_refused("/mcp", &got, 403, "forbidden_origin");
    let got = send("/api/v1/projects", None, big());
    assert_refused("/api/v1/projects", &got, 413, "too_large");
    assert!(got.1.get("jsonrpc").is_none(), "{}", got.1);
}
