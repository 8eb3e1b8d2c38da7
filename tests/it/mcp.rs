//! MCP: interop with the official Python SDK over stdio and `/mcp`, stdout
//! purity of `quire mcp stdio`, clean exit on closed stdin, and one core
//! behind `/mcp` and the HTTP API.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{BIN, Sandbox};
use crate::http_support::{Binary, SseReader, TestServer};

/// The Python with the `mcp` SDK that scripts/test prepared, or why not.
fn python() -> Result<PathBuf, String> {
    let path = std::env::var_os("MCP_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.venv/bin/python")));
    let ok = Command::new(&path)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Ok(path)
    } else {
        Err(format!(
            "{} has no `mcp` package (./scripts/test creates it)",
            path.display()
        ))
    }
}

/// The SDK's Python, or `None` when it is missing and the machine opted
/// out (`ALLOW_MISSING_TOOLS=mcp-sdk`); missing otherwise fails the test.
pub fn python_or_skip(test: &str) -> Option<PathBuf> {
    match python() {
        Ok(p) => Some(p),
        Err(why) => {
            crate::harness::tool_available("mcp-sdk", test, Some(why));
            None
        }
    }
}

fn interop(sandbox: &Sandbox, python: &PathBuf, args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_interop/interop.py");
    crate::harness::run_checker(sandbox, Command::new(python).arg(script).args(args), ": ok");
}

/// The SDK's Python, if it can also import `modules` (scripts/test
/// installs them into .venv); missing fails the test unless opted out.
pub fn python_with(test: &str, modules: &str) -> Option<PathBuf> {
    let python = python_or_skip(test)?;
    let ok = Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = (!ok).then(|| {
        format!(
            "{} cannot import {modules} (./scripts/test installs them)",
            python.display()
        )
    });
    crate::harness::tool_available("mcp-sdk", test, missing).then_some(python)
}

#[test]
fn python_sdk_over_stdio() {
    let Some(python) = python_or_skip("python_sdk_over_stdio") else {
        return;
    };
    let s = Sandbox::new();
    interop(&s, &python, &["stdio", BIN]);
}

#[test]
fn python_sdk_over_http() {
    let Some(python) = python_or_skip("python_sdk_over_http") else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    interop(&s, &python, &["http", &format!("{}/mcp", server.url)]);
    assert!(server.terminate().success());
}

fn eras(sandbox: &Sandbox, python: &PathBuf, args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_interop/eras.py");
    crate::harness::run_checker(sandbox, Command::new(python).arg(script).args(args), ": ok");
}

/// The SDK's `Client` pinned to 2026-07-28 and probing (`server/discover`
/// before anything else) over stdio: a full flow each, edits recorded as
/// the agent's.
#[test]
fn python_sdk_stateless_era_over_stdio() {
    let Some(python) = python_or_skip("python_sdk_stateless_era_over_stdio") else {
        return;
    };
    let s = Sandbox::new();
    eras(&s, &python, &["stdio", BIN]);
}

/// Over `/mcp`: two probing clients at once never reach each other's
/// project, `subscriptions/listen` and a per-request log level work, an
/// engine that needs approval is asked about through the client, and a
/// `mode="legacy"` client runs the same flow.
#[test]
fn python_sdk_both_eras_over_http() {
    let Some(python) = python_or_skip("python_sdk_both_eras_over_http") else {
        return;
    };
    let s = Sandbox::new();
    // An engine that needs a person's approval, for the input-required
    // round (it prints no ops).
    s.user_config(
        "[engines.gated]\ncommand = [\"true\"]\ninput = \"page-json\"\noutput = \"ops\"\n",
    );
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    eras(&s, &python, &["http", &format!("{}/mcp", server.url)]);
    assert!(server.terminate().success());
}

/// The tasks extension over `/mcp` in the stateless era: a client that
/// declares it gets `quire_start_pipeline` as a task and follows it with
/// `tasks/get` to the job's result.
#[test]
fn start_pipeline_is_a_task_for_a_client_that_declares_the_extension() {
    let Some(python) =
        python_or_skip("start_pipeline_is_a_task_for_a_client_that_declares_the_extension")
    else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_interop/tasks.py");
    let url = format!("{}/mcp", server.url);
    crate::harness::run_checker(&s, Command::new(&python).arg(script).arg(&url), ": ok");
    assert!(server.terminate().success());
}

/// pydantic-ai's MCPToolset with FastMCP's tasks extension (the client
/// declares it) runs an agent's calls over `/mcp`; `wait: true` answers
/// with the finished job, not a task.
#[test]
fn pydantic_ai_with_tasks_gets_the_finished_job_for_wait() {
    let python = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.venv-pydantic-ai/bin/python"
    ));
    let missing = (!python.exists()).then(|| {
        format!(
            "{} is missing (./scripts/test creates it)",
            python.display()
        )
    });
    if !crate::harness::tool_available(
        "pydantic-ai",
        "pydantic_ai_with_tasks_gets_the_finished_job_for_wait",
        missing,
    ) {
        return;
    }
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp_pydantic_ai/agent.py"
    );
    let url = format!("{}/mcp", server.url);
    crate::harness::run_checker(
        &s,
        Command::new(python).arg(script).arg(&url),
        "pydantic-ai: ok",
    );
    assert!(server.terminate().success());
}

/// The `{ code, message, ... }` of a tool execution error: `isError`, no
/// structured content (see `src/mcp/reply.rs`), the message as the text
/// block's first line and the JSON envelope as its second.
pub fn tool_error(reply: &Value) -> Value {
    let result = &reply["result"];
    assert_eq!(result["isError"], true, "{reply}");
    assert!(result.get("structuredContent").is_none(), "{reply}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    let (first, envelope) = text.split_once('\n').expect("two lines");
    let envelope: Value = serde_json::from_str(envelope).expect("a JSON envelope");
    assert_eq!(
        envelope["error"]["message"]
            .as_str()
            .map(|m| m.replace('\n', " "))
            .as_deref(),
        Some(first)
    );
    envelope["error"].clone()
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

const INIT: &str = r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"quire-test","version":"1"}}"#;

#[test]
fn stdio_writes_only_protocol_frames_and_exits_cleanly_on_eof() {
    let s = Sandbox::new();
    let mut child = s
        .command()
        .args(["--log-level", "trace", "mcp", "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    // One request at a time, each answered before the next is sent.
    let mut ask = |msg: String, id: Option<u64>| {
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        let Some(id) = id else { return Value::Null };
        loop {
            let line = rx.recv_timeout(Duration::from_secs(30)).expect("no answer");
            lines.push(line.clone());
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout: {line:?}: {e}"));
            if v["id"] == id {
                return v;
            }
        }
    };
    let init: Value = serde_json::from_str(INIT).unwrap();
    assert_eq!(
        ask(request(1, "initialize", init), Some(1))["result"]["serverInfo"]["name"],
        "quire"
    );
    ask(
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(),
        None,
    );
    let listed = ask(request(2, "tools/list", json!({})), Some(2));
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 16);
    let none = ask(
        request(
            3,
            "tools/call",
            json!({ "name": "quire_undo", "arguments": {} }),
        ),
        Some(3),
    );
    let none = tool_error(&none);
    assert_eq!(none["code"], "no_session");
    assert_eq!(none["message"], "no project is open");
    let opened = ask(
        request(
            4,
            "tools/call",
            json!({ "name": "quire_open_project", "arguments": { "path": "eof", "createName": "EOF" } }),
        ),
        Some(4),
    );
    let path = PathBuf::from(
        opened["result"]["structuredContent"]["path"]
            .as_str()
            .unwrap(),
    );
    for i in 0..3 {
        let op = json!({ "type": "AddPage", "page": { "name": format!("p{i}") } });
        let r = ask(
            request(
                10 + i,
                "tools/call",
                json!({ "name": "quire_apply", "arguments": { "op": op } }),
            ),
            Some(10 + i),
        );
        assert_eq!(r["result"]["structuredContent"]["epoch"], i + 1);
    }
    let bad = ask(
        request(
            20,
            "tools/call",
            json!({ "name": "quire_apply", "arguments": { "op": 5 } }),
        ),
        Some(20),
    );
    let bad = tool_error(&bad);
    assert_eq!(bad["code"], "invalid_arguments", "{bad}");
    assert_eq!(bad["field"], "op", "{bad}");
    // Inside the tagged `Op` union the field is named in full, through a
    // Batch too.
    let deep = [
        (
            json!({ "type": "AddPage", "page": { "name": "x", "width": "wide" } }),
            "op.page.width",
        ),
        (
            json!({ "type": "Batch", "ops": [{ "type": "AddPage", "page": { "name": "x", "width": -1 } }] }),
            "op.ops[0].page.width",
        ),
        (json!({ "type": "Teleport" }), "op.type"),
    ];
    for (i, (op, field)) in deep.into_iter().enumerate() {
        let id = 30 + i as u64;
        let args = json!({ "name": "quire_apply", "arguments": { "op": op } });
        let bad = tool_error(&ask(request(id, "tools/call", args), Some(id)));
        assert_eq!(bad["field"], field, "{bad}");
        assert!(bad["message"].as_str().unwrap().contains(field), "{bad}");
    }
    drop(stdin);
    let end = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < end,
            "did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    lines.extend(rx.try_iter());
    for line in &lines {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a frame: {line:?}: {e}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("TRACE") || stderr.contains("DEBUG"),
        "trace logs go to stderr"
    );
    // Flushed: a final snapshot holds the pages, the log is empty.
    let snapshot: Value =
        serde_json::from_slice(&std::fs::read(path.join("scene.json")).unwrap()).unwrap();
    assert_eq!(snapshot["epoch"], 3);
    assert_eq!(snapshot["scene"]["pages"].as_array().unwrap().len(), 3);
    assert!(std::fs::read(path.join("ops.log")).unwrap().is_empty());
}

/// A JSON-RPC request over streamable HTTP; returns the session id header
/// and the response message (from JSON or from the SSE stream).
async fn mcp_post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> (Option<String>, Value) {
    let mut r = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2025-06-18");
    if let Some(id) = session {
        r = r.header("Mcp-Session-Id", id);
    }
    let response = r.json(&body).send().await.unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let is_sse = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    if text.trim().is_empty() {
        return (session, Value::Null);
    }
    let message = if is_sse {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(Value::Null)
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (session, message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_over_mcp_is_seen_by_the_http_api_and_its_events() {
    let stop = tokio_util::sync::CancellationToken::new();
    let s = TestServer::start().await;
    // A second app over the same core, with /mcp, on its own port.
    let config = std::sync::Arc::new(crate::http_support::config(std::path::Path::new(
        "/nonexistent",
    )));
    let (mcp, _) = quire::mcp::http_router(s.core.clone(), &config, stop.clone());
    let app = quire::http::app(s.core.clone(), config, "headless", Some(mcp));
    app.state.set_ready();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mcp_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(quire::http::serve(
        listener,
        app.router,
        app.shutdown,
        std::future::pending(),
        Duration::from_secs(1),
        Duration::from_secs(60),
    ));

    let mut events = SseReader::connect(&s.client, &s.at("/api/v1/events"), None).await;
    assert_eq!(events.next().await.event, "Snapshot");
    let client = crate::harness::http_client();
    let (session, init) = mcp_post(
        &client,
        &mcp_url,
        None,
        serde_json::from_str(&request(
            1,
            "initialize",
            serde_json::from_str(INIT).unwrap(),
        ))
        .unwrap(),
    )
    .await;
    assert_eq!(init["result"]["serverInfo"]["name"], "quire", "{init}");
    let session = session.expect("a session id");
    mcp_post(
        &client,
        &mcp_url,
        Some(&session),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    )
    .await;
    let call = |id: u64, name: &str, arguments: Value| json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    let (_, opened) = mcp_post(
        &client,
        &mcp_url,
        Some(&session),
        call(
            2,
            "quire_open_project",
            json!({ "path": "shared", "createName": "Shared" }),
        ),
    )
    .await;
    assert!(opened["result"]["isError"] != json!(true), "{opened}");
    let (_, applied) = mcp_post(
        &client,
        &mcp_url,
        Some(&session),
        call(
            3,
            "quire_apply",
            json!({ "op": { "type": "AddPage", "page": { "name": "from mcp" } } }),
        ),
    )
    .await;
    assert_eq!(
        applied["result"]["structuredContent"]["epoch"], 1,
        "{applied}"
    );
    // The HTTP API (the other listener, same core) sees it at once.
    let scene = s.scene().await;
    assert_eq!(scene["scene"]["pages"][0]["name"], "from mcp");
    let seen = events.until(|e| e.event == "SceneAdvanced").await;
    assert_eq!(seen.last().unwrap().data["epoch"], 1);
    // And a foreign Host is refused on /mcp too.
    let r = client
        .post(&mcp_url)
        .header("Host", "evil.example")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    stop.cancel();
}
