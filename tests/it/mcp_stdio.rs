//! `quire mcp stdio` under hostile input: every frame that carries an id is
//! answered (too large, not UTF-8, not JSON, too deep, not a request, a
//! second `initialize`), and `outPath` never writes into a project.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::Sandbox;

mod eras;

/// A `quire mcp stdio` process spoken to in raw bytes.
pub struct RawMcp {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl RawMcp {
    pub fn start(s: &Sandbox) -> Self {
        Self::start_with(s, &["mcp", "stdio"], Stdio::null())
    }

    pub fn start_with(s: &Sandbox, args: &[&str], stderr: Stdio) -> Self {
        let mut mcp = Self::spawn(s, args, stderr);
        let init = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "raw", "version": "1" }
        });
        let reply =
            mcp.call(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init }));
        assert_eq!(reply["result"]["serverInfo"]["name"], "quire", "{reply}");
        mcp.send_bytes(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        mcp
    }

    /// `quire mcp stdio` with nothing sent yet (a 2026-07-28 client sends
    /// no handshake).
    pub fn start_stateless(s: &Sandbox) -> Self {
        Self::spawn(s, &["mcp", "stdio"], Stdio::null())
    }

    fn spawn(s: &Sandbox, args: &[&str], stderr: Stdio) -> Self {
        let mut child = s
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        RawMcp {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next frame on stdout (every line must be a JSON-RPC frame).
    pub fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("no answer within 30 s");
        self.seen.push(line.clone());
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        v
    }

    /// The answer with `id` (frames for other ids are kept in `seen`).
    pub fn answer(&mut self, id: &Value) -> Value {
        loop {
            let v = self.next();
            if v.get("id") == Some(id) {
                return v;
            }
        }
    }

    pub fn call(&mut self, request: Value) -> Value {
        let mut bytes = request.to_string().into_bytes();
        bytes.push(b'\n');
        self.send_bytes(&bytes);
        self.answer(&request["id"])
    }

    pub fn tool(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.call(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": name, "arguments": arguments }
        }))
    }
}

fn error_of(reply: &Value) -> (i64, String) {
    (
        reply["error"]["code"].as_i64().unwrap_or_default(),
        reply["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn every_frame_with_an_id_is_answered() {
    let s = Sandbox::new();
    let mut mcp = RawMcp::start(&s);

    // Not JSON, with a readable id.
    mcp.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\n");
    let (code, message) = error_of(&mcp.answer(&json!(5)));
    assert_eq!(code, -32700, "{message}");

    // Not JSON, no id: answered with id null.
    mcp.send_bytes(b"this is not json\n");
    let reply = mcp.answer(&Value::Null);
    assert_eq!(error_of(&reply).0, -32700);

    // Not UTF-8.
    mcp.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"x\":\"\xff\xfe\"}\n");
    let (code, message) = error_of(&mcp.answer(&json!(6)));
    assert_eq!(code, -32700);
    assert!(message.contains("UTF-8"), "{message}");

    // Nested past serde_json's recursion limit.
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{{\"x\":{}1{}}}}}\n",
        "[".repeat(300),
        "]".repeat(300)
    );
    mcp.send_bytes(deep.as_bytes());
    let (code, message) = error_of(&mcp.answer(&json!(7)));
    assert_eq!(code, -32700);
    assert!(message.contains("recursion"), "{message}");

    // Over 16 MiB, with the id at the end.
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}},\"id\":\"big\"}}\n",
        "x".repeat(17 << 20)
    );
    mcp.send_bytes(huge.as_bytes());
    let (code, message) = error_of(&mcp.answer(&json!("big")));
    assert_eq!(code, -32600);
    assert!(message.contains("16 MiB"), "{message}");

    // Well-formed JSON, not a request.
    mcp.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":9}\n");
    assert_eq!(error_of(&mcp.answer(&json!(9))).0, -32600);

    // A second initialize.
    let again = mcp.call(json!({
        "jsonrpc": "2.0", "id": 10, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "2" } }
    }));
    let (code, message) = error_of(&again);
    assert_eq!(code, -32600);
    assert!(message.contains("already initialized"), "{message}");

    // Still serving.
    let listed = mcp.call(json!({ "jsonrpc": "2.0", "id": 11, "method": "tools/list" }));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    drop(mcp.stdin);
    assert!(mcp.child.wait().unwrap().success());
}

#[test]
fn out_path_never_writes_into_a_project() {
    let s = Sandbox::new();
    let mut mcp = RawMcp::start(&s);
    let opened = mcp.tool(
        2,
        "quire_open_project",
        json!({ "path": "victim", "createName": "Victim" }),
    );
    let path = std::path::PathBuf::from(
        opened["result"]["structuredContent"]["path"]
            .as_str()
            .unwrap(),
    );
    let op = json!({ "type": "AddPage", "page": { "name": "kept" } });
    mcp.tool(3, "quire_apply", json!({ "op": op }));
    let scene = path.join("scene.json");
    let before = std::fs::read(&scene).unwrap();
    for (id, target) in [
        (4, scene.clone()),
        (5, path.join("blobs/export.zip")),
        (6, path.join("notes.md")),
    ] {
        let reply = mcp.tool(
            id,
            "quire_export",
            json!({ "format": "json", "outPath": target.display().to_string() }),
        );
        let error = crate::mcp::tool_error(&reply);
        let text = error["message"].as_str().unwrap();
        assert!(text.contains("inside the quire project"), "{text}");
        assert!(target == scene || !target.exists(), "{}", target.display());
    }
    assert_eq!(std::fs::read(&scene).unwrap(), before);
    // Outside any project it works.
    let out = s.path("exports/victim.json");
    let reply = mcp.tool(
        7,
        "quire_export",
        json!({ "format": "json", "outPath": out.display().to_string() }),
    );
    assert_eq!(
        reply["result"]["structuredContent"]["path"],
        out.display().to_string()
    );
    // Killed without closing, the project still opens with its page.
    mcp.child.kill().unwrap();
    mcp.child.wait().unwrap();
    let core = crate::core_base::core_at(
        &s.path("data/quire/projects"),
        crate::core_base::settings(quire_store::Durability::Fsync, 1000, 10),
    );
    let session = core.blocking().open_project(&path).unwrap();
    assert_eq!(session.epoch, 1);
}

#[test]
fn requests_before_initialize_are_answered_and_an_early_eof_is_a_clean_exit() {
    let s = Sandbox::new();
    let run = |input: &[u8]| {
        let mut child = s
            .command()
            .args(["mcp", "stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let out = run(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\nnot json\n");
    assert!(out.status.success());
    let frames: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |id: Value| frames.iter().find(|f| f["id"] == id).cloned().unwrap();
    assert_eq!(by_id(json!(1))["error"]["code"], -32600);
    assert_eq!(by_id(json!(2))["result"], json!({}));
    assert_eq!(by_id(Value::Null)["error"]["code"], -32700);
}

/// A mode with `mcp-stdio` and `http` runs both on one core: what the HTTP
/// API creates, the stdio client sees; stdout stays protocol frames only;
/// the process ends (saving) when the stdio client leaves.
/// `quire --mode agent` (a user mode of `mcp-stdio`, `http` and `mcp-http`
/// on port 0):
/// the initialized stdio connection and the server's URL.
fn stdio_and_http(s: &Sandbox) -> (RawMcp, String) {
    s.user_mode(
        "agent",
        "description = \"an agent with the API beside it\"\nfrontends = [\"mcp-stdio\", \"http\", \"mcp-http\"]\n[config]\nserver.port = 0\n",
    );
    let log = s.path("stderr.log");
    let stderr = std::fs::File::create(&log).unwrap();
    let mcp = RawMcp::start_with(s, &["--mode", "agent"], Stdio::from(stderr));
    let end = std::time::Instant::now() + Duration::from_secs(30);
    let url = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(at) = text.find("serving http://") {
            let rest = &text[at + "serving ".len()..];
            break rest.split_whitespace().next().unwrap().to_owned();
        }
        assert!(std::time::Instant::now() < end, "no serving line: {text}");
        std::thread::sleep(Duration::from_millis(10));
    };
    (mcp, url)
}

#[test]
fn a_mode_with_stdio_and_http_serves_both_on_one_core() {
    let s = Sandbox::new();
    let (mut mcp, url) = stdio_and_http(&s);
    let http = crate::harness::blocking_client();
    let created: Value = http
        .post(format!("{url}/api/v1/projects"))
        .json(&json!({ "name": "Both ways" }))
        .send()
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .unwrap();
    let reply = mcp.call(json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "quire_list_sessions", "arguments": {} }
    }));
    let sessions = &reply["result"]["structuredContent"]["sessions"];
    assert_eq!(sessions[0]["id"], created["id"], "{reply}");
    assert_eq!(sessions[0]["name"], "Both ways", "{reply}");
    drop(mcp.stdin);
    let status = mcp.child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(
        http.get(format!("{url}/healthz")).send().is_err(),
        "the API stopped with the client"
    );
}

/// `quire mcp stdio` answers `tools/list` itself, from the list built into
/// the binary (`tools::LIST_JSON`), once the handshake is done; what it
/// sends must be what rmcp's handler answers over `/mcp` to the letter.
/// Before `notifications/initialized`, and in the 2026-07-28 era for
/// metadata rmcp would refuse, the request still goes to rmcp.
#[test]
fn tools_list_over_stdio_is_what_the_handler_answers_over_mcp() {
    let s = Sandbox::new();
    let (mut mcp, url) = stdio_and_http(&s);
    let listed = mcp.call(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }));
    let raw = mcp.seen.last().unwrap().clone();
    assert!(
        raw.starts_with(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"#),
        "{raw:.80}"
    );

    let http = crate::harness::blocking_client();
    let post = |session: Option<&str>, frame: Value| {
        let mut request = http
            .post(format!("{url}/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .json(&frame);
        if let Some(id) = session {
            request = request.header("Mcp-Session-Id", id);
        }
        let reply = request.send().unwrap().error_for_status().unwrap();
        let session = reply
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned());
        let body = reply.text().unwrap();
        // One JSON body, or an event stream whose data line is the answer.
        let json = body
            .lines()
            .find_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
            .unwrap_or(&body)
            .to_owned();
        (session, json)
    };
    let (session, _) = post(
        None,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "raw", "version": "1" } } }),
    );
    let session = session.expect("a session id");
    post(
        Some(&session),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    );
    let (_, over_http) = post(
        Some(&session),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
    );
    // Every byte of it is in a model's context on every turn.
    let limit = 16 * 1024;
    assert!(
        raw.len() < limit,
        "tools/list over stdio: {} bytes",
        raw.len()
    );
    assert!(
        over_http.len() < limit,
        "tools/list over /mcp: {} bytes",
        over_http.len()
    );
    let stateless_over_http = http
        .post(format!("{url}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/list")
        .json(&json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": stateless_meta() }))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let stateless_over_http = stateless_over_http
        .lines()
        .find_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
        .unwrap_or(&stateless_over_http);
    assert!(
        stateless_over_http.len() < limit,
        "tools/list over /mcp in 2026-07-28: {} bytes",
        stateless_over_http.len()
    );
    let over_http: Value = serde_json::from_str(&over_http).unwrap();
    assert_eq!(listed["result"], over_http["result"]);
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 16);

    // The 2026-07-28 era's answer carries rmcp's cache fields.
    let s2 = Sandbox::new();
    let mut stateless = RawMcp::start_stateless(&s2);
    let listed = stateless.call(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": stateless_meta() }),
    );
    assert!(listed["result"]["ttlMs"].is_u64(), "{listed}");
    // Answered by the transport in both eras: what the handler answers
    // over /mcp, to the letter of its JSON.
    let stateless_http: Value = serde_json::from_str(stateless_over_http).unwrap();
    assert_eq!(listed["result"], stateless_http["result"]);
    // Metadata rmcp would refuse still reaches rmcp, which words the error.
    let refused = stateless.call(json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list",
        "params": { "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } }));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let raw = stateless.seen.last().unwrap();
    assert!(
        raw.len() < limit,
        "tools/list over stdio in 2026-07-28: {} bytes",
        raw.len()
    );
    assert_eq!(listed["result"]["tools"], over_http["result"]["tools"]);
    drop(stateless.stdin);
    assert!(stateless.child.wait().unwrap().success());
    drop(mcp.stdin);
    assert!(mcp.child.wait().unwrap().success());
}

#[test]
fn import_pages_refuses_what_it_cannot_take_and_changes_nothing() {
    let s = Sandbox::new();
    s.user_config("[server]\nmax_body_bytes = 1000\n");
    let mut mcp = RawMcp::start(&s);
    let opened = mcp.tool(
        2,
        "quire_open_project",
        json!({ "path": "imports", "createName": "Imports" }),
    );
    let project = std::path::PathBuf::from(
        opened["result"]["structuredContent"]["path"]
            .as_str()
            .unwrap(),
    );
    let big = s.write("big.txt", &"word ".repeat(400));
    let binary = s.path("blob.bin");
    std::fs::write(&binary, (0..=255u8).collect::<Vec<u8>>()).unwrap();
    let text_as_png = base64_of(b"plain text, not a picture");
    let cases = [
        (
            json!({ "items": [{ "name": "t", "text": "x".repeat(2000) }] }),
            "over the 1000-byte limit",
        ),
        (
            json!({ "files": [big.display().to_string()] }),
            "over the 1000-byte limit",
        ),
        (
            json!({ "files": [binary.display().to_string()] }),
            "blob.bin: not an image (PNG, JPEG, WebP), text",
        ),
        (
            json!({ "files": [s.path("missing.png").display().to_string()] }),
            "missing.png",
        ),
        (
            json!({ "items": [{ "name": "p.png", "mimeType": "image/png", "data": text_as_png }] }),
            "not an image",
        ),
        (
            json!({ "items": [{ "name": "ok", "text": "fine" }, { "name": "p.gif", "mimeType": "image/gif", "data": text_as_png }] }),
            "image/gif",
        ),
        (json!({}), "nothing to import"),
    ];
    for (i, (args, why)) in cases.into_iter().enumerate() {
        let reply = mcp.tool(10 + i as u64, "quire_import_pages", args.clone());
        let error = crate::mcp::tool_error(&reply);
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(why), "{args}: {message}");
    }
    let scene = mcp.tool(30, "quire_get_scene", json!({}));
    let scene = &scene["result"]["structuredContent"];
    assert_eq!(scene["epoch"], 0, "{scene}");
    assert_eq!(scene["scene"]["pages"], json!([]), "{scene}");
    let blobs = std::fs::read_dir(project.join("blobs"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(blobs, 0, "nothing was stored");
    drop(mcp.stdin);
    assert!(mcp.child.wait().unwrap().success());
}

/// An agent brings a translator's file: an XLIFF 1.2 from WorldServer
/// becomes a page of its segments (keys and inline codes as tags), a
/// translation set over MCP goes out in the same file, with its ids.
#[test]
fn an_agent_makes_a_page_of_a_cat_tools_xliff() {
    let test = "an_agent_makes_a_page_of_a_cat_tools_xliff";
    let Some(xlf) = crate::harness::testdata(test, "cat/okapi_test1_es.xlf") else {
        return;
    };
    // Named as an agent would: a plain absolute path.
    let xlf = std::fs::canonicalize(xlf).unwrap();
    let s = Sandbox::new();
    let mut mcp = RawMcp::start(&s);
    mcp.tool(
        2,
        "quire_open_project",
        json!({ "path": "web", "createName": "Web" }),
    );
    let reply = mcp.tool(
        3,
        "quire_import_pages",
        json!({ "files": [xlf.display().to_string()] }),
    );
    assert!(reply["result"]["isError"] != json!(true), "{reply}");
    let scene = mcp.tool(4, "quire_get_scene", json!({}));
    let page = scene["result"]["structuredContent"]["scene"]["pages"][0].clone();
    assert_eq!(page["name"], "okapi_test1_es", "{page}");
    let nodes = page["nodes"].as_array().unwrap();
    let coded = nodes
        .iter()
        .find(|n| n["kind"]["text"] == "All the info is <ph1/>here<ph2/>.")
        .expect("a segment with its codes as tags");
    let op = json!({ "type": "UpdateNode", "page": page["id"], "id": coded["id"],
        "patch": { "kind": { "type": "text", "translation": "Toda la información está <ph1/>aquí<ph2/>." } } });
    mcp.tool(5, "quire_apply", json!({ "op": op }));
    let out = s.path("out/test1_es.xlf");
    let reply = mcp.tool(
        6,
        "quire_export",
        json!({ "format": "xliff", "outPath": out.display().to_string() }),
    );
    assert_eq!(
        reply["result"]["structuredContent"]["path"],
        out.display().to_string(),
        "{reply}"
    );
    let written = std::fs::read_to_string(&out).unwrap();
    let original = std::fs::read_to_string(&xlf).unwrap();
    // The unit's codes as WorldServer wrote them, around the translation.
    let unit = &written[written
        .find(&format!(
            "id=\"{}\"",
            coded["kind"]["entry"]["key"]
                .as_str()
                .unwrap()
                .split_once('/')
                .unwrap()
                .1
        ))
        .unwrap()..];
    let target = &unit[unit.find("<target").unwrap()..unit.find("</target>").unwrap()];
    assert!(target.contains("Toda la información está <ph"), "{target}");
    assert!(target.contains(">aquí<ph"), "{target}");
    assert_eq!(
        written.matches("<trans-unit").count(),
        original.matches("<trans-unit").count()
    );
    drop(mcp.stdin);
    assert!(mcp.child.wait().unwrap().success());
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The glossary over MCP: terms set with an UpdateGlossary op, a CSV file
/// and inline TBX added through `quire_import_translations`, a bad CSV
/// refused naming its line with nothing changed, the terms in the scene.
#[test]
fn the_glossary_is_edited_and_imported_over_mcp() {
    let s = Sandbox::new();
    let mut mcp = RawMcp::start(&s);
    mcp.tool(
        2,
        "quire_open_project",
        json!({ "path": "terms", "createName": "Terms" }),
    );
    let set = json!({ "op": { "type": "UpdateGlossary", "set": [{ "source": "moon", "target": "lune" }] } });
    let applied = mcp.tool(3, "quire_apply", set);
    assert_eq!(
        applied["result"]["structuredContent"]["epoch"], 1,
        "{applied}"
    );
    let csv = s.write("terms.csv", "source,target,note\nsun,soleil,\nmoon,lune,\n");
    let report = mcp.tool(
        4,
        "quire_import_translations",
        json!({ "path": csv.display().to_string() }),
    );
    let report = &report["result"]["structuredContent"];
    assert_eq!(
        (report["added"].clone(), report["unchanged"].clone()),
        (json!(1), json!(1)),
        "{report}"
    );
    let tbx = r#"<martif type="TBX"><text><body><termEntry><langSet xml:lang="en"><tig><term>star</term></tig></langSet><langSet xml:lang="fr"><tig><term>étoile</term></tig></langSet></termEntry></body></text></martif>"#;
    let report = mcp.tool(5, "quire_import_translations", json!({ "content": tbx }));
    assert_eq!(
        report["result"]["structuredContent"]["added"], 1,
        "{report}"
    );
    let bad = mcp.tool(
        6,
        "quire_import_translations",
        json!({ "content": "source,target\nplanet\n" }),
    );
    let error = crate::mcp::tool_error(&bad);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("line 2: the `target` column is missing"),
        "{error}"
    );
    let scene = mcp.tool(7, "quire_get_scene", json!({}));
    let scene = &scene["result"]["structuredContent"];
    assert_eq!(
        scene["epoch"], 3,
        "the refused file changed nothing: {scene}"
    );
    let sources: Vec<&str> = scene["scene"]["project"]["glossary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["moon", "star", "sun"]);
    let undone = mcp.tool(8, "quire_undo", json!({}));
    assert_eq!(
        undone["result"]["structuredContent"]["label"], "import glossary · 1 term",
        "{undone}"
    );
}

/// `_meta` of a 2026-07-28 request.
fn stateless_meta() -> Value {
    json!({ "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": {} } })
}
