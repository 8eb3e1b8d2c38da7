//! The server as a whole: readiness, a panicking handler, the OpenAPI
//! document against the routes, load, projects and sessions.

use super::*;

#[tokio::test]
async fn routes_answer_503_until_the_core_is_ready() {
    let s = TestServer::build(|_| {}, None, false).await;
    assert_error(&s.get("/api/v1/sessions").await, 503, "starting");
    assert_error(
        &s.post("/api/v1/projects", json!({ "name": "x" })).await,
        503,
        "starting",
    );
    assert_eq!(s.get("/healthz").await.0, 200);
    assert_eq!(s.get("/api/v1/meta").await.0, 200);
    let r = s.client.get(s.at("/api/v1/events")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    s.state.set_ready();
    assert_eq!(s.get("/api/v1/sessions").await.0, 200);
}

#[tokio::test]
async fn a_panicking_handler_becomes_a_500_with_a_body() {
    async fn boom() -> &'static str {
        panic!("deliberate test panic")
    }
    let extra = axum::Router::new().route("/boom", axum::routing::get(boom));
    let s = TestServer::with(|_| {}, Some(extra)).await;
    assert_error(&s.get("/boom").await, 500, "internal");
    // The server is still up.
    assert_eq!(s.get("/healthz").await.0, 200);
}

#[tokio::test]
async fn openapi_lists_every_route_and_every_listed_route_answers() {
    let s = TestServer::start().await;
    let (status, doc) = s.get("/api/v1/openapi.json").await;
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented = BTreeSet::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            documented.insert(format!("{} {path}", method.to_uppercase()));
        }
    }
    // The route table of spec/04-http-api.md, and its session-addressed twins.
    let spec = [
        "GET /healthz",
        "GET /api/v1/meta",
        "GET /api/v1/engines",
        "GET /api/v1/projects",
        "POST /api/v1/projects",
        "PUT /api/v1/projects/current",
        "DELETE /api/v1/projects/current",
        "POST /api/v1/projects/current/export",
        "POST /api/v1/projects/current/import",
        "POST /api/v1/projects/import",
        "POST /api/v1/memory",
        "GET /api/v1/sessions",
        "GET /api/v1/sessions/{sessionId}",
        "PUT /api/v1/sessions/current",
        "DELETE /api/v1/sessions/{sessionId}",
        "POST /api/v1/pages",
        "GET /api/v1/scene.json",
        "GET /api/v1/blobs/{hash}",
        "POST /api/v1/history/apply",
        "POST /api/v1/history/undo",
        "POST /api/v1/history/redo",
        "POST /api/v1/pipelines",
        "GET /api/v1/operations",
        "DELETE /api/v1/operations/{jobId}",
        "GET /api/v1/config",
        "GET /api/v1/events",
        "GET /api/v1/openapi.json",
        "POST /api/v1/sessions/{sessionId}/pages",
        "GET /api/v1/sessions/{sessionId}/scene.json",
        "GET /api/v1/sessions/{sessionId}/blobs/{hash}",
        "POST /api/v1/sessions/{sessionId}/history/apply",
        "POST /api/v1/sessions/{sessionId}/history/undo",
        "POST /api/v1/sessions/{sessionId}/history/redo",
        "POST /api/v1/sessions/{sessionId}/pipelines",
        "POST /api/v1/sessions/{sessionId}/export",
        "POST /api/v1/sessions/{sessionId}/import",
        // The glossary (10-translation-workflow.md asks for it over the
        // API; the route table does not name it).
        "GET /api/v1/projects/current/glossary",
        "POST /api/v1/projects/current/glossary/import",
        "GET /api/v1/sessions/{sessionId}/glossary",
        "POST /api/v1/sessions/{sessionId}/glossary/import",
        // Opening without becoming current (05-mcp's "which session a call
        // acts on", over HTTP: how the web workbench opens a project).
        "POST /api/v1/sessions",
        // Whether a page's cleaned and rendered images are current
        // (13-page-understanding: views that say when they are stale).
        "GET /api/v1/pages/{pageId}/views",
        "GET /api/v1/sessions/{sessionId}/pages/{pageId}/views",
        // The desk's matches and concordance (15-translator-desk: "over
        // HTTP/MCP where it is data"), on a named session only.
        "GET /api/v1/sessions/{sessionId}/nodes/{nodeId}/matches",
        "GET /api/v1/sessions/{sessionId}/concordance",
        // Who did what (10-translation-workflow, "Who did what: the
        // history"), by project, open or not.
        "GET /api/v1/projects/{projectId}/history",
        // A segment's suggestions (10-translation-workflow,
        // "Suggestions"), in the current session and in a named one.
        "GET /api/v1/nodes/{nodeId}/suggestions",
        "POST /api/v1/nodes/{nodeId}/suggestions",
        "POST /api/v1/nodes/{nodeId}/suggestions/{suggestionId}/vote",
        "POST /api/v1/nodes/{nodeId}/suggestions/{suggestionId}/accept",
        "POST /api/v1/nodes/{nodeId}/suggestions/{suggestionId}/reject",
        "GET /api/v1/sessions/{sessionId}/nodes/{nodeId}/suggestions",
        "POST /api/v1/sessions/{sessionId}/nodes/{nodeId}/suggestions",
        "POST /api/v1/sessions/{sessionId}/nodes/{nodeId}/suggestions/{suggestionId}/vote",
        "POST /api/v1/sessions/{sessionId}/nodes/{nodeId}/suggestions/{suggestionId}/accept",
        "POST /api/v1/sessions/{sessionId}/nodes/{nodeId}/suggestions/{suggestionId}/reject",
    ];
    let spec: BTreeSet<String> = spec.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(
        documented, spec,
        "documented routes differ from the specification"
    );
    // Every documented route is routed (whatever it answers, it is not the
    // fallback's "no route" nor 405).
    for entry in &documented {
        let (method, path) = entry.split_once(' ').unwrap();
        let path = path
            .replace("{sessionId}", &uuid())
            .replace("{jobId}", &uuid())
            .replace("{hash}", &"0".repeat(64));
        if path.ends_with("/events") {
            continue;
        }
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let r = s.client.request(method, s.at(&path)).send().await.unwrap();
        let status = r.status().as_u16();
        let body = r.text().await.unwrap();
        assert_ne!(status, 405, "{entry}");
        assert!(!body.contains("no route"), "{entry}: {body}");
    }
    // Schemas referenced by operations exist.
    assert!(doc["components"]["schemas"]["Op"].is_object());
    assert!(doc["components"]["schemas"]["PipelineSpec"].is_object());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_8_clients_500_requests_each() {
    let s = TestServer::with(
        |c| c.storage.durability = quire_store::Durability::Batch,
        None,
    )
    .await;
    with_project(&s).await;
    let start = s.scene().await["epoch"].as_u64().unwrap();
    let mut tasks = Vec::new();
    for w in 0..8 {
        let client = s.client.clone();
        let url = s.at("/api/v1/history/apply");
        tasks.push(tokio::spawn(async move {
            let mut errors = 0;
            for i in 0..500 {
                let op =
                    json!({ "type": "UpdateProject", "patch": { "name": format!("w{w}-{i}") } });
                match client.post(&url).json(&op).send().await {
                    Ok(r) if r.status() == 200 => {}
                    _ => errors += 1,
                }
            }
            errors
        }));
    }
    let mut errors = 0;
    for t in tasks {
        errors += t.await.unwrap();
    }
    assert_eq!(errors, 0);
    let end = s.scene().await["epoch"].as_u64().unwrap();
    assert_eq!(end, start + 4000);
    let (_, sessions) = s.get("/api/v1/sessions").await;
    assert_eq!(sessions[0]["epoch"], end);
}

#[tokio::test]
async fn a_project_is_created_with_its_languages_or_not_at_all() {
    let s = TestServer::start().await;
    let (status, created) = s
        .post(
            "/api/v1/projects",
            json!({ "name": "Langs", "sourceLanguage": "ja", "targetLanguage": "pt-BR" }),
        )
        .await;
    assert_eq!(status, 200, "{created}");
    let scene = s.scene().await;
    assert_eq!(scene["scene"]["project"]["sourceLanguage"], "ja");
    assert_eq!(scene["scene"]["project"]["targetLanguage"], "pt-BR");
    // Nothing to undo: the languages are the project's from the start.
    assert_eq!(
        s.post("/api/v1/history/undo", json!(null)).await.1,
        json!({ "epoch": null, "ops": 0, "message": "nothing of yours to undo" })
    );
    let projects = s.get("/api/v1/projects").await.1;
    let bad = s
        .post(
            "/api/v1/projects",
            json!({ "name": "Bad", "targetLanguage": "--output=x" }),
        )
        .await;
    assert_error(&bad, 422, "invalid_input");
    assert!(
        bad.1["error"]["message"]
            .as_str()
            .unwrap()
            .contains("targetLanguage")
    );
    assert_eq!(
        s.get("/api/v1/projects").await.1,
        projects,
        "a refused create left a project"
    );
}

/// `POST /api/v1/sessions` (how the web workbench opens a project) opens
/// a project without moving what `current` routes act on.
#[tokio::test]
async fn opening_a_session_by_id_leaves_the_current_one() {
    let s = TestServer::start().await;
    let (_, first) = s.post("/api/v1/projects", json!({ "name": "First" })).await;
    let (_, second) = s
        .post("/api/v1/projects", json!({ "name": "Second" }))
        .await;
    let second_project = second["projectId"].as_str().unwrap().to_owned();
    let r = s
        .client
        .delete(s.at(&format!(
            "/api/v1/sessions/{}",
            second["id"].as_str().unwrap()
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let current = || async {
        let (_, sessions) = s.get("/api/v1/sessions").await;
        sessions
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["current"] == true)
            .map(|x| x["id"].clone())
    };
    assert_eq!(current().await, Some(first["id"].clone()));

    let (status, opened) = s
        .post("/api/v1/sessions", json!({ "id": second_project }))
        .await;
    assert_eq!(status, 200, "{opened}");
    assert_eq!(opened["projectId"], second_project.as_str());
    assert_eq!(opened["current"], false, "{opened}");
    assert_eq!(current().await, Some(first["id"].clone()));
    // Asked again: the same session, still not current.
    let (_, again) = s
        .post("/api/v1/sessions", json!({ "id": second_project }))
        .await;
    assert_eq!(again["id"], opened["id"]);
    assert_eq!(current().await, Some(first["id"].clone()));

    // Bad input changes nothing.
    let before = s.get("/api/v1/sessions").await.1;
    let (status, body) = s.post("/api/v1/sessions", json!({ "id": uuid() })).await;
    assert_error(&(status, body), 404, "not_found");
    let (status, body) = s.post("/api/v1/sessions", json!({ "name": "x" })).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(s.get("/api/v1/sessions").await.1, before);
}

/// The OpenAPI document says a token is needed exactly while one is: a
/// reload that adds one adds the security scheme, `/healthz` stays open.
#[tokio::test]
async fn openapi_names_the_token_once_a_reload_adds_one() {
    let s = TestServer::start().await;
    let (_, open) = s.get("/api/v1/openapi.json").await;
    assert!(open["components"]["securitySchemes"].is_null(), "{open}");
    assert!(open["paths"]["/api/v1/meta"]["get"]["security"].is_null());
    let mut config = (*s.state.config()).clone();
    config.server.token = quire::config::secret::Secret::new("s3cret");
    s.state.reload(config);
    let r = s.client.get(s.at("/api/v1/openapi.json")).send().await;
    assert_eq!(r.unwrap().status(), 401);
    let doc: Value = s
        .client
        .get(s.at("/api/v1/openapi.json"))
        .bearer_auth("s3cret")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer",
        "{}",
        doc["components"]
    );
    let meta = &doc["paths"]["/api/v1/meta"]["get"];
    assert_eq!(meta["security"], json!([{ "bearer": [] }]));
    assert!(meta["responses"]["401"].is_object(), "{meta}");
    assert!(doc["paths"]["/healthz"]["get"]["security"].is_null());
}
