//! The protocol eras and sessions over stdio: methods the stateless era
//! removed, listing tools, a session taken up by the next process, and
//! langchain's process per call.

use super::*;

/// The five methods MCP 2026-07-28 removed are "method not found" in that
/// era (over HTTP a 404 with the JSON-RPC error and the request's id, over
/// stdio the error), saying what replaces them; a handshake-era
/// connection still has them all.
#[test]
fn methods_the_stateless_era_removed_are_not_found_there_and_work_before() {
    const REMOVED: [&str; 5] = [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ];
    let s = Sandbox::new();
    let (mut legacy, url) = stdio_and_http(&s);
    let created = legacy.tool(
        2,
        "quire_open_project",
        json!({ "path": "removed", "createName": "Removed" }),
    );
    let session = created["result"]["structuredContent"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let uri = format!("quire://sessions/{session}/scene");
    let params = |method: &str| {
        let mut p = stateless_meta();
        match method {
            "logging/setLevel" => p["level"] = json!("debug"),
            "resources/subscribe" | "resources/unsubscribe" => p["uri"] = json!(uri),
            "initialize" => {
                p["protocolVersion"] = json!("2026-07-28");
                p["capabilities"] = json!({});
                p["clientInfo"] = json!({ "name": "raw", "version": "1" });
            }
            _ => {}
        }
        p
    };

    let http = crate::harness::blocking_client();
    let mut stateless = RawMcp::start_stateless(&s);
    for (n, method) in REMOVED.iter().enumerate() {
        let id = 10 + n as u64;
        let frame =
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params(method) });
        let reply = http
            .post(format!("{url}/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", *method)
            .json(&frame)
            .send()
            .unwrap();
        assert_eq!(reply.status(), 404, "{method} over HTTP");
        let body: Value = reply.json().unwrap();
        assert_eq!(body["id"], id, "{body}");
        assert_eq!(body["error"]["code"], -32601, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("{method} is not part of MCP 2026-07-28")),
            "{message}"
        );

        let reply = stateless.call(frame);
        assert_eq!(
            reply["error"]["code"], -32601,
            "{method} over stdio: {reply}"
        );
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not part of MCP 2026-07-28"),
            "{reply}"
        );
    }
    // The last word on them: the stateless connection still works.
    let listed = stateless.call(
        json!({ "jsonrpc": "2.0", "id": 30, "method": "tools/list", "params": stateless_meta() }),
    );
    assert_eq!(
        listed["result"]["tools"].as_array().map(Vec::len),
        Some(16),
        "{listed}"
    );

    // The handshake era keeps them (after `initialize`, which `start` sent).
    for (n, method) in REMOVED.iter().skip(1).enumerate() {
        let mut p = params(method);
        p.as_object_mut().unwrap().remove("_meta");
        let reply = legacy
            .call(json!({ "jsonrpc": "2.0", "id": 40 + n as u64, "method": method, "params": p }));
        assert_eq!(
            reply["result"],
            json!({}),
            "{method} in the handshake era: {reply}"
        );
    }
    drop(stateless.stdin);
    assert!(stateless.child.wait().unwrap().success());
    drop(legacy.stdin);
    assert!(legacy.child.wait().unwrap().success());
}

/// The listing tools take one optional `filter` (so that their schema
/// declares a property: see `ListArgs`): a name or id holding it, in any
/// case; any other argument is refused by name.
#[test]
fn listing_tools_filter_by_name_and_refuse_other_arguments() {
    let s = Sandbox::new();
    let mut mcp = RawMcp::start(&s);
    for (id, name) in [(2, "Chapter One"), (3, "Episode Two")] {
        let reply = mcp.tool(
            id,
            "quire_open_project",
            json!({ "path": name.replace(' ', "-"), "createName": name }),
        );
        assert!(
            reply["result"]["structuredContent"]["sessionId"].is_string(),
            "{reply}"
        );
    }
    let names = |reply: &Value| -> Vec<String> {
        reply["result"]["structuredContent"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = mcp.tool(4, "quire_list_sessions", json!({}));
    assert_eq!(names(&all).len(), 2, "{all}");
    let some = mcp.tool(5, "quire_list_sessions", json!({ "filter": "CHAPTER" }));
    assert_eq!(names(&some), ["Chapter One"], "{some}");
    let null = mcp.tool(6, "quire_list_sessions", json!({ "filter": null }));
    assert_eq!(names(&null).len(), 2, "{null}");

    let engines = mcp.tool(7, "quire_list_engines", json!({ "filter": "ocr" }));
    let ids: Vec<&str> = engines["result"]["structuredContent"]["engines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert!(
        !ids.is_empty() && ids.iter().all(|id| id.contains("ocr")),
        "{ids:?}"
    );

    let stray = mcp.tool(8, "quire_list_engines", json!({ "kind": "ocr" }));
    let error = crate::mcp::tool_error(&stray);
    assert_eq!(error["code"], "invalid_arguments", "{stray}");
    assert!(
        error["message"].as_str().unwrap().contains("kind"),
        "{stray}"
    );
}

/// A `sessionId` outlives its `quire mcp stdio` process (`05-mcp.md`): a
/// later process on the same data dir takes it up with its edits, while a
/// live process holds the project the call is refused as before, and once
/// closed (or never given out here) the id is `unknown_session`, naming
/// `quire_open_project`.
#[test]
fn a_session_id_is_taken_up_by_the_next_stdio_process_until_closed() {
    let s = Sandbox::new();
    let mut first = RawMcp::start(&s);
    let opened = first.tool(
        2,
        "quire_open_project",
        json!({ "path": "lasting", "createName": "Lasting" }),
    );
    let sid = opened["result"]["structuredContent"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let page = json!({ "type": "AddPage", "page": { "name": "kept" } });
    let applied = first.tool(3, "quire_apply", json!({ "op": page, "sessionId": sid }));
    assert!(
        applied["result"]["structuredContent"]["epoch"].is_u64(),
        "{applied}"
    );

    // While the first process lives, it holds the project.
    let mut second = RawMcp::start(&s);
    let held = second.tool(2, "quire_get_scene", json!({ "sessionId": sid }));
    let error = crate::mcp::tool_error(&held);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("another quire process"),
        "{held}"
    );
    drop(second.stdin);
    assert!(second.child.wait().unwrap().success());

    drop(first.stdin);
    assert!(first.child.wait().unwrap().success());

    // The next process takes the id up: same id, same project, the edit kept.
    let mut third = RawMcp::start(&s);
    let scene = third.tool(2, "quire_get_scene", json!({ "sessionId": sid }));
    let pages = &scene["result"]["structuredContent"]["scene"]["pages"];
    assert_eq!(pages[0]["name"], "kept", "{scene}");
    let listed = third.tool(3, "quire_list_sessions", json!({}));
    assert_eq!(
        listed["result"]["structuredContent"]["sessions"][0]["id"],
        sid.as_str(),
        "{listed}"
    );
    let closed = third.tool(4, "quire_close_project", json!({ "sessionId": sid }));
    assert_eq!(
        closed["result"]["structuredContent"]["closed"],
        sid.as_str(),
        "{closed}"
    );
    drop(third.stdin);
    assert!(third.child.wait().unwrap().success());

    // Closed: unknown from then on, and the message says what to do.
    let mut fourth = RawMcp::start(&s);
    for (n, id) in [sid.as_str(), "01a24d97-ca85-720c-be3a-dc1e28577ef7"]
        .into_iter()
        .enumerate()
    {
        let gone = fourth.tool(2 + n as u64, "quire_get_scene", json!({ "sessionId": id }));
        let error = crate::mcp::tool_error(&gone);
        assert_eq!(error["code"], "unknown_session", "{gone}");
        assert_eq!(error["id"], id, "{gone}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("this data dir") && message.contains("quire_open_project"),
            "{message}"
        );
    }
    drop(fourth.stdin);
    assert!(fourth.child.wait().unwrap().success());
}

/// langchain-mcp-adapters in its default mode (a new `quire mcp stdio`
/// per tool call) runs the whole flow: open, apply, read, a pipeline with
/// `wait`, export, close; the closed id is unknown to the next process.
#[test]
fn langchain_adapters_with_a_process_per_call_run_the_whole_flow() {
    let python = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.venv-langchain/bin/python"
    ));
    let missing = (!python.exists()).then(|| {
        format!(
            "{} is missing (./scripts/test creates it)",
            python.display()
        )
    });
    if !crate::harness::tool_available(
        "langchain",
        "langchain_adapters_with_a_process_per_call_run_the_whole_flow",
        missing,
    ) {
        return;
    }
    let s = Sandbox::new();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_langchain/flow.py");
    let stdout = crate::harness::run_checker(
        &s,
        std::process::Command::new(python)
            .arg(script)
            .arg(crate::harness::BIN)
            .arg("chain"),
        "langchain: ok",
    );
    assert!(stdout.contains("(7 calls"), "{stdout}");
}
