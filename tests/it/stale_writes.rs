//! No stale write is silently accepted: an edit that says what it was based
//! on is refused with a conflict carrying both values when the node has
//! changed since, in the core, over HTTP and MCP; the TUI (in process and
//! attached to a server) asks keep mine / use theirs.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use quire::tui::app::{Effect, Loaded, Modal, Msg};
use quire::tui::backend::BackendError;
use quire::tui::update::update;
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{Basis, Op};
use serde_json::{Value, json};

use crate::core_base::{TestCore, add_page, text_node, translate};
use crate::harness::Sandbox;
use crate::http_support::{TestServer, assert_error};
use crate::mcp_stdio::RawMcp;
use crate::tui_live::{Attached, press, screen, type_text};
use crate::tui_support::session_app;

/// A translation edit of `node` made from `based_on`.
fn edit_from(page: PageId, node: NodeId, text: &str, based_on: Option<&str>) -> Op {
    let mut op = translate(page, node, text);
    if let Op::UpdateNode {
        based_on: basis, ..
    } = &mut op
    {
        *basis = Some(Basis {
            translation: Some(based_on.map(str::to_owned)),
            ..Basis::default()
        });
    }
    op
}

async fn one_node(t: &TestCore) -> (SessionId, PageId, NodeId) {
    let id = t.session("Stale");
    let mut op = add_page("p");
    if let Op::AddPage { page, .. } = &mut op {
        page.nodes = Some(vec![text_node("Hello")]);
    }
    let created = t.core.apply(id, op).await.unwrap().created;
    (id, PageId(created[0]), NodeId(created[1]))
}

#[tokio::test]
async fn an_edit_made_from_an_old_value_is_refused_with_both_values_and_changes_nothing() {
    let t = TestCore::new();
    let (id, page, node) = one_node(&t).await;
    // Mine starts from nothing; theirs lands first.
    t.core
        .apply(id, edit_from(page, node, "Bonjour", None))
        .await
        .unwrap();
    let before = t.core.scene(id).await.unwrap();
    let err = t
        .core
        .apply(id, edit_from(page, node, "Salut", None))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "conflict");
    let quire_model::error::CoreError::Stale(stale) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (
            stale.field,
            stale.based_on.as_deref(),
            stale.current.as_deref()
        ),
        ("translation", None, Some("Bonjour"))
    );
    assert!(err.to_string().contains("\"Bonjour\""), "{err}");
    let after = t.core.scene(id).await.unwrap();
    assert_eq!(after.epoch, before.epoch, "nothing applied");
    assert_eq!(after.scene, before.scene);

    // In a batch, the whole batch is refused.
    let batch = Op::Batch {
        ops: vec![add_page("q"), edit_from(page, node, "Salut", Some("Hi"))],
        label: None,
    };
    assert_eq!(
        t.core.apply(id, batch).await.unwrap_err().code(),
        "conflict"
    );
    assert_eq!(t.core.scene(id).await.unwrap().epoch, before.epoch);

    // Made from what the node says, it applies; the log keeps no basis.
    t.core
        .apply(id, edit_from(page, node, "Salut", Some("Bonjour")))
        .await
        .unwrap();
    let log = std::fs::read_to_string(t.project_path(id).join("ops.log")).unwrap();
    assert!(log.contains("Salut") && !log.contains("basedOn"), "{log}");
}

#[tokio::test]
async fn http_answers_a_stale_edit_with_409_and_both_values() {
    let s = TestServer::start().await;
    let (_, session) = s.post("/api/v1/projects", json!({ "name": "Stale" })).await;
    let id = session["id"].as_str().unwrap();
    let (_, page) = s
        .post("/api/v1/pages", json!({ "name": "p", "text": "Hello" }))
        .await;
    let (page, node) = (&page["created"][0], &page["created"][1]);
    let edit = |text: &str, based_on: Value| {
        json!({ "type": "UpdateNode", "page": page, "id": node,
            "patch": { "kind": { "type": "text", "translation": text } },
            "basedOn": { "translation": based_on } })
    };
    let path = format!("/api/v1/sessions/{id}/history/apply");
    assert_eq!(s.post(&path, edit("Theirs", Value::Null)).await.0, 200);
    let refused = s.post(&path, edit("Mine", Value::Null)).await;
    assert_error(&refused, 409, "conflict");
    let stale = &refused.1["error"]["stale"];
    assert_eq!(
        (
            stale["field"].clone(),
            stale["basedOn"].clone(),
            stale["current"].clone()
        ),
        (json!("translation"), Value::Null, json!("Theirs")),
        "{refused:?}"
    );
    assert_eq!(stale["nodeId"], *node);
    let scene = s.scene().await;
    assert_eq!(
        scene["scene"]["pages"][0]["nodes"][0]["kind"]["translation"],
        "Theirs"
    );
    // An unknown basis field is refused (400, the body does not fit), not ignored.
    let mut odd = edit("Mine", json!("Theirs"));
    odd["basedOn"]["colour"] = json!("red");
    assert_eq!(s.post(&path, odd).await.0, 400);
}

#[test]
fn mcp_refuses_a_stale_edit_with_a_tool_error_carrying_both_values() {
    let s = Sandbox::new();
    let mut mcp = RawMcp::start(&s);
    mcp.tool(
        2,
        "quire_open_project",
        json!({ "path": "stale", "createName": "Stale" }),
    );
    let added = mcp.tool(
        3,
        "quire_import_pages",
        json!({ "items": [{ "name": "p", "text": "Hello" }] }),
    );
    let created = &added["result"]["structuredContent"]["created"];
    let edit = |text: &str, based_on: Value| {
        json!({ "op": { "type": "UpdateNode", "page": created[0], "id": created[1],
            "patch": { "kind": { "type": "text", "translation": text } },
            "basedOn": { "translation": based_on } } })
    };
    let first = mcp.tool(4, "quire_apply", edit("Theirs", Value::Null));
    assert!(first["result"]["isError"] != json!(true), "{first}");
    let refused = mcp.tool(5, "quire_apply", edit("Mine", Value::Null));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    let envelope: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(envelope["error"]["code"], "conflict");
    assert_eq!(
        envelope["error"]["stale"]["current"], "Theirs",
        "{envelope}"
    );
    let kept = mcp.tool(6, "quire_apply", edit("Mine", json!("Theirs")));
    assert!(kept["result"]["isError"] != json!(true), "{kept}");
}

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// The TUI saves with a basis; refused, it shows theirs and mine and the
/// person chooses: keep mine saves over theirs, use theirs drops the
/// draft, edit goes back to the draft.
#[test]
fn the_tui_asks_keep_mine_or_use_theirs_when_a_save_is_refused_as_stale() {
    let mut app = session_app();
    update(&mut app, key(KeyCode::Tab), Instant::now());
    update(&mut app, key(KeyCode::Down), Instant::now());
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    for c in "Mine".chars() {
        update(&mut app, key(KeyCode::Char(c)), Instant::now());
    }
    let fx = update(&mut app, key(KeyCode::Enter), Instant::now());
    let [Effect::Save { draft, op }] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    let Op::UpdateNode {
        based_on: Some(basis),
        ..
    } = op
    else {
        panic!("a save says what it was based on: {op:?}")
    };
    assert_eq!(basis.translation, Some(draft.based_on.clone()));
    let stale = BackendError {
        theirs: Some(Some("Theirs".into())),
        ..BackendError::new("conflict", "node changed since this edit was made")
    };
    let conflict = |app: &mut quire::tui::app::App| {
        update(
            app,
            Msg::Loaded(Loaded::Saved(draft.clone(), Err(stale.clone()))),
            Instant::now(),
        )
    };
    conflict(&mut app);
    assert!(matches!(&app.modal, Some(Modal::Conflict { theirs: Some(t), .. }) if t == "Theirs"));
    let shown = crate::tui_support::draw(&app);
    assert!(
        shown.contains("Theirs") && shown.contains("keep mine") && shown.contains("use theirs"),
        "{shown}"
    );
    // Keep mine: saved again, now based on theirs.
    let fx = update(&mut app, key(KeyCode::Char('k')), Instant::now());
    let [Effect::Save { draft: again, op }] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(again.text, draft.text);
    assert!(matches!(op, Op::UpdateNode { based_on: Some(b), .. }
        if b.translation == Some(Some("Theirs".into()))));
    assert!(app.modal.is_none());
    // Use theirs: the draft is dropped, nothing is sent.
    conflict(&mut app);
    let fx = update(&mut app, key(KeyCode::Char('t')), Instant::now());
    assert!(
        fx.iter().all(|e| !matches!(e, Effect::Save { .. })),
        "{fx:?}"
    );
    assert!(app.modal.is_none() && app.editing.edit.is_none());
    // Edit: back to my draft, to merge by hand.
    conflict(&mut app);
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    assert_eq!(app.editing.edit.as_ref().unwrap().draft().text, draft.text);
}

async fn scene_of(client: &reqwest::Client, url: &str) -> Value {
    client
        .get(format!("{url}/api/v1/scene.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `quire attach` against a real server: a translation saved by another
/// client while the TUI's draft is open is not replaced on Enter; the
/// TUI shows theirs, and keep mine then saves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_mode_never_replaces_a_translation_saved_meanwhile() {
    let s = Sandbox::new();
    let port = crate::http_support::free_port();
    let Attached {
        server,
        mut runner,
        client,
        ..
    } = Attached::start(&s, &port, (100, 30)).await;
    press(&mut runner, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a.desk.scene.is_some())
            .await
    );
    press(&mut runner, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut runner, KeyCode::Char('e'), KeyModifiers::NONE);
    type_text(&mut runner, "Mine");
    // Another client saves the same node.
    let scene = scene_of(&client, &server.url).await;
    let page = &scene["scene"]["pages"][0];
    let op = json!({ "type": "UpdateNode", "page": page["id"], "id": page["nodes"][0]["id"],
        "patch": { "kind": { "type": "text", "translation": "Theirs" } } });
    let (status, _) =
        crate::http_support::json_post(&client, format!("{}/api/v1/history/apply", server.url), op)
            .await;
    assert_eq!(status, 200);
    let epoch = scene["epoch"].as_u64().unwrap() + 1;
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a
                .desk
                .scene
                .as_ref()
                .is_some_and(|(_, s)| s.epoch >= epoch))
            .await
    );
    press(&mut runner, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| matches!(
                a.modal,
                Some(Modal::Conflict { .. })
            ))
            .await,
        "no conflict shown: {:?}",
        runner.app.status
    );
    runner.draw();
    let shown = screen(&runner);
    assert!(
        shown.contains("Theirs") && shown.contains("Mine"),
        "{shown}"
    );
    let translation =
        |scene: &Value| scene["scene"]["pages"][0]["nodes"][0]["kind"]["translation"].clone();
    let now = scene_of(&client, &server.url).await;
    assert_eq!(translation(&now), "Theirs", "theirs is still there");
    press(&mut runner, KeyCode::Char('k'), KeyModifiers::NONE);
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a
                .status
                .as_ref()
                .is_some_and(|s| s.text == "translation saved"))
            .await,
        "{:?}",
        runner.app.status
    );
    let now = scene_of(&client, &server.url).await;
    assert_eq!(translation(&now), "Mine");
    assert!(server.terminate().success());
}
