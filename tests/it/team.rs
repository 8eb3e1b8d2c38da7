//! Running quire for a team: each person's token and role, every edit
//! signed with its author, a user removed by a reload, failed tokens
//! logged and throttled, and no token in any log line.

use std::process::Command;

use serde_json::{Value, json};

use crate::harness::{Sandbox, run_checker};
use crate::http_support::{Binary, Client, first_page};

mod backups;
mod review;
mod suggestions;

const OWNER: &str = "owner-token-3c9d1e";
const ANA: &str = "ana-token-77f0aa";
const BEA: &str = "bea-token-51c2b9";
const RUI: &str = "rui-token-e0d413";

/// The team's config: the owner (server.token), two editors (one token
/// in a file, one in the environment) and a reader; `rui` left out when
/// he has gone.
fn team_config(s: &Sandbox, with_rui: bool) -> std::path::PathBuf {
    let ana = s.write("secrets/ana", &format!("{ANA}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ana, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let rui = if with_rui {
        format!("[[server.users]]\nname = \"rui\"\ntoken = \"{RUI}\"\nrole = \"read\"\n")
    } else {
        String::new()
    };
    s.write(
        "team.toml",
        &format!(
            "[server]\ntoken = \"{OWNER}\"\n\n\
             [[server.users]]\nname = \"ana\"\ntoken_file = \"{}\"\nrole = \"edit\"\n\n\
             [[server.users]]\nname = \"bea\"\ntoken_env = \"BEA_TOKEN\"\n\n{rui}",
            ana.display()
        ),
    )
}

fn translate(page: &str, node: &str, text: &str) -> Value {
    json!({ "type": "UpdateNode", "page": page, "id": node,
            "patch": { "kind": { "type": "text", "translation": text } } })
}

/// Two editors and a reader against a real server: each edit carries its
/// author (a person's, an agent's, and a job's), undo says whose change it
/// undid, the reader is refused every write route and every MCP tool that
/// writes, a removed user is refused after SIGHUP while the others are
/// not, and failed tokens are logged with the address, held back, then
/// refused; no token appears in any log line.
#[test]
fn a_team_signs_its_edits_and_each_role_is_held_to() {
    let s = Sandbox::new();
    let config = team_config(&s, true);
    let config = config.to_str().unwrap();
    let mut server = Binary::start(
        &s,
        &["--config", config, "--headless", "--port", "0"],
        &[("BEA_TOKEN", BEA)],
    );
    let c = server.client();
    // Only an admin creates a project; the editors then work in it.
    let (status, body) = c.call(
        "POST",
        "/api/v1/projects",
        ANA,
        Some(json!({"name": "Ch 1"})),
    );
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["message"],
        "creating a project needs the admin role; ana has edit"
    );
    let (status, session) = c.call(
        "POST",
        "/api/v1/projects",
        OWNER,
        Some(json!({"name": "Ch 1"})),
    );
    assert_eq!(status, 200, "{session}");
    let id = session["id"].as_str().unwrap().to_owned();
    let prefix = format!("/api/v1/sessions/{id}");
    let (status, body) = c.call(
        "POST",
        &format!("{prefix}/pages"),
        ANA,
        Some(json!({"name": "p1", "text": "One.\n\nTwo.\n\nThree.\n\nFour."})),
    );
    assert_eq!(status, 200, "{body}");
    let (_, scene) = c.call("GET", &format!("{prefix}/scene.json"), RUI, None);
    let (page, nodes) = first_page(&scene);
    for (token, node, text) in [(ANA, &nodes[0], "Um."), (BEA, &nodes[1], "Dois.")] {
        let (status, body) = c.call(
            "POST",
            &format!("{prefix}/history/apply"),
            token,
            Some(translate(&page, node, text)),
        );
        assert_eq!(status, 200, "{body}");
    }
    each_is_told_their_role_and_only_an_admin_sees_paths(&c);
    // The glossary is an admin's.
    let glossary = json!({"type": "UpdateGlossary", "set": [{"source": "One", "target": "Um"}]});
    let (status, body) = c.call(
        "POST",
        &format!("{prefix}/history/apply"),
        ANA,
        Some(glossary),
    );
    assert_eq!(status, 403, "{body}");

    // The reader is refused every route that changes something: each
    // operation of the server's own OpenAPI document but reads and
    // opening a project to read it.
    a_reader_is_refused_every_write_route(&c, &id, &nodes[0]);
    let (_, after) = c.call("GET", &format!("{prefix}/scene.json"), RUI, None);
    assert_eq!(after["epoch"], scene["epoch"].as_u64().unwrap() + 2);

    // Over MCP, with the official Python SDK: the reader's agent is
    // refused every writing tool; ana's agent writes node 3.
    if let Some(python) =
        crate::mcp::python_with("a_team_signs_its_edits_and_each_role_is_held_to", "mcp")
    {
        let mut cmd = Command::new(python);
        cmd.arg(format!(
            "{}/tests/team/roles.py",
            env!("CARGO_MANIFEST_DIR")
        ))
        .args([&format!("{}/mcp", c.url), RUI, ANA, &id, &page, &nodes[2]]);
        let out = run_checker(&s, &mut cmd, "ok");
        assert!(out.contains("roles: ok"), "{out}");
    }
    // A job ana starts signs its engine's edits with her name.
    run_to_the_end(
        &c,
        &prefix,
        ANA,
        json!({"steps": ["pseudo-translate"], "overwrite": "untranslated"}),
    );

    // The job names who started it.
    let (_, operations) = c.call("GET", "/api/v1/operations", RUI, None);
    let jobs = operations
        .as_array()
        .unwrap_or_else(|| panic!("{operations}"));
    assert!(
        jobs.iter()
            .any(|j| j["startedBy"] == json!({"by": "human", "user": "ana"})),
        "{operations}"
    );

    // Each translation names its author.
    let origin =
        |scene: &Value, i: usize| scene["scene"]["pages"][0]["nodes"][i]["kind"]["origin"].clone();
    let (_, scene) = c.call("GET", &format!("{prefix}/scene.json"), RUI, None);
    assert_eq!(origin(&scene, 0)["user"], "ana", "{scene}");
    assert_eq!(origin(&scene, 0)["by"], "human");
    assert_eq!(origin(&scene, 1)["user"], "bea");
    assert_eq!(origin(&scene, 2)["by"], "agent");
    assert_eq!(origin(&scene, 2)["client"], "team-agent 1.0");
    assert_eq!(origin(&scene, 2)["user"], "ana");
    assert_eq!(origin(&scene, 3)["engine"], "pseudo-translate");
    assert_eq!(origin(&scene, 3)["user"], "ana");
    // Undo is per person, and says whose change it undid: ana's takes
    // back the job she started, bea's her own edit.
    for (token, who) in [(ANA, "ana"), (BEA, "bea")] {
        let (status, undone) = c.call("POST", &format!("{prefix}/history/undo"), token, None);
        assert_eq!(status, 200, "{undone}");
        assert_eq!(undone["by"], who, "{undone}");
    }
    let (_, scene) = c.call("GET", &format!("{prefix}/scene.json"), RUI, None);
    let translation =
        |i: usize| scene["scene"]["pages"][0]["nodes"][i]["kind"]["translation"].clone();
    assert_eq!(
        (translation(0), translation(1), translation(3)),
        (json!("Um."), Value::Null, Value::Null)
    );

    // rui leaves: after a reload he is refused, the others are not.
    team_config(&s, false);
    server.signal("HUP");
    server.wait_for_log("SIGHUP: reloaded the users (owner, ana, bea)");
    // His old token is now a wrong one: the first failure from here.
    assert_eq!(c.call("GET", "/api/v1/sessions", RUI, None).0, 401);
    assert_eq!(c.call("GET", "/api/v1/sessions", ANA, None).0, 200);
    assert_eq!(c.call("GET", "/api/v1/sessions", BEA, None).0, 200);

    wrong_tokens_are_held_back_without_keeping_a_right_one_out(&c, &mut server);
    assert!(server.terminate().success());
}

/// Each one is told who they are and what they may do; the server's
/// paths are an admin's to see (in lists, the config and the events).
fn each_is_told_their_role_and_only_an_admin_sees_paths(c: &Client) {
    for (token, user, role) in [
        (RUI, "rui", "read"),
        (ANA, "ana", "edit"),
        (OWNER, "owner", "admin"),
    ] {
        let (_, meta) = c.call("GET", "/api/v1/meta", token, None);
        assert_eq!(
            (meta["user"].as_str(), meta["role"].as_str()),
            (Some(user), Some(role)),
            "{meta}"
        );
    }
    // The server's paths are an admin's to see.
    let (_, listed) = c.call("GET", "/api/v1/projects", RUI, None);
    assert!(listed[0].get("path").is_none(), "{listed}");
    let (_, listed) = c.call("GET", "/api/v1/projects", OWNER, None);
    assert!(listed[0]["path"].is_string(), "{listed}");
    let (_, sessions) = c.call("GET", "/api/v1/sessions", ANA, None);
    assert!(sessions[0].get("path").is_none(), "{sessions}");
    let (_, config) = c.call("GET", "/api/v1/config", RUI, None);
    assert!(
        config.get("paths").is_none() && config["qa"].is_object(),
        "{config}"
    );
    let events = c
        .http
        .get(format!("{}/api/v1/events", c.url))
        .bearer_auth(RUI)
        .send()
        .unwrap();
    let mut first = String::new();
    let mut reader = std::io::BufReader::new(events);
    while !first.starts_with("data:") {
        first.clear();
        std::io::BufRead::read_line(&mut reader, &mut first).unwrap();
    }
    assert!(
        first.contains("\"sessions\"") && !first.contains("\"path\""),
        "{first}"
    );
    drop(reader);
}

/// The reader is refused every route that changes something: each
/// operation of the server's own OpenAPI document but reads and opening a
/// project to read it.
fn a_reader_is_refused_every_write_route(c: &Client, id: &str, node: &str) {
    let (_, openapi) = c.call("GET", "/api/v1/openapi.json", RUI, None);
    let mut refused = 0;
    for (path, operations) in openapi["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            let opening = matches!(
                (method.as_str(), path.as_str()),
                ("put", "/api/v1/projects/current")
                    | ("put", "/api/v1/sessions/current")
                    | ("post", "/api/v1/sessions")
            );
            if method == "get" || opening {
                continue;
            }
            let concrete = path
                .replace("{sessionId}", id)
                .replace("{jobId}", id)
                .replace("{nodeId}", node);
            let (status, body) = c.call(&method.to_uppercase(), &concrete, RUI, Some(json!({})));
            assert_eq!(status, 403, "{method} {path}: {body}");
            assert_eq!(body["error"]["code"], "forbidden_role", "{method} {path}");
            refused += 1;
        }
    }
    assert!(refused >= 20, "only {refused} write routes found");
}

/// Starts `pipeline` in the session at `prefix` as `token` and waits for
/// its job to complete.
fn run_to_the_end(c: &Client, prefix: &str, token: &str, pipeline: Value) {
    let (status, job) = c.call(
        "POST",
        &format!("{prefix}/pipelines"),
        token,
        Some(pipeline),
    );
    assert_eq!(status, 200, "{job}");
    let job = job["jobId"].as_str().unwrap().to_owned();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (_, jobs) = c.call("GET", "/api/v1/operations", RUI, None);
        let done = jobs
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["id"] == job.as_str() && j["status"] == "completed");
        if done {
            break;
        }
        assert!(
            std::time::Instant::now() < end,
            "the job did not finish: {jobs}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Wrong tokens: logged with the address, held back, then refused; the
/// successes between do not wipe the count, and while the address's
/// failures are refused, a right token is answered at once.
fn wrong_tokens_are_held_back_without_keeping_a_right_one_out(c: &Client, server: &mut Binary) {
    let statuses: Vec<u16> = (0..11)
        .map(|i| {
            c.call("GET", "/api/v1/sessions", &format!("guess-{i}"), None)
                .0
        })
        .collect();
    assert_eq!(statuses[..9], [401; 9]);
    assert_eq!(statuses[9..], [429; 2]);
    server.wait_for_log("authentication failed from 127.0.0.1: a wrong token (failure 10, answered after 1600 ms; its next failures are refused for 60 s)");
    server.wait_for_log("(failure 4, answered after 100 ms)");
    assert_eq!(c.call("GET", "/api/v1/sessions", ANA, None).0, 200);
    assert_eq!(c.call("GET", "/api/v1/sessions", "guess-12", None).0, 429);
}

/// No log line holds a token, at the most talkative level.
#[test]
fn no_token_reaches_the_log() {
    let s = Sandbox::new();
    let config = team_config(&s, true);
    let mut server = Binary::headless(
        &s,
        &config,
        &["--log-level", "trace"],
        &[("BEA_TOKEN", BEA)],
    );
    let c = server.client();
    for (i, token) in [OWNER, ANA, BEA, RUI, "a-wrong-token-9f"]
        .iter()
        .enumerate()
    {
        c.call("GET", "/api/v1/sessions", token, None);
        c.call(
            "POST",
            "/api/v1/projects",
            token,
            Some(json!({"name": format!("p{i}")})),
        );
    }
    // The access log has a line per request, each naming its user.
    server.wait_for_log("user=rui");
    let log = server.log();
    assert!(
        log.iter()
            .any(|l| l.contains("route=/api/v1/projects status=403 user=ana")),
        "{log:#?}"
    );
    for token in [OWNER, ANA, BEA, RUI] {
        assert!(
            !log.iter().any(|l| l.contains(token)),
            "{token} in the log:\n{log:#?}"
        );
    }
    assert!(server.terminate().success());
}

/// The access log writes a change at `info` and a read at `debug`; a
/// POST to `/mcp` is a read unless it calls a tool that changes the
/// workspace (its `readOnlyHint`).
#[test]
fn an_mcp_call_that_only_reads_is_logged_as_a_read() {
    let s = Sandbox::new();
    let config = s.write("owner.toml", &format!("[server]\ntoken = \"{OWNER}\"\n"));
    let mut server = Binary::headless(&s, &config, &[], &[]);
    let client = crate::harness::blocking_client();
    let mut session = None;
    let mut post = |body: Value| {
        let mut request = client
            .post(format!("{}/mcp", server.url))
            .bearer_auth(OWNER)
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Protocol-Version", "2025-11-25")
            .json(&body);
        if let Some(id) = &session {
            request = request.header("Mcp-Session-Id", id);
        }
        let response = request.send().unwrap();
        assert!(response.status().is_success(), "{body}");
        if let Some(id) = response.headers().get("mcp-session-id") {
            session = Some(id.to_str().unwrap().to_owned());
        }
        response.text().unwrap()
    };
    post(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "log-test", "version": "1" } } }),
    );
    post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let call = |id: u64, name: &str, arguments: Value| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": name, "arguments": arguments } })
    };
    let listed = post(call(2, "quire_list_sessions", json!({})));
    assert!(listed.contains("sessions"), "{listed}");
    let opened = post(call(
        3,
        "quire_open_project",
        json!({ "path": "logged", "createName": "Logged" }),
    ));
    assert!(opened.contains("sessionId"), "{opened}");
    // A change by REST after them: once its line is there, theirs are.
    let c = server.client();
    c.ok(
        "POST",
        "/api/v1/projects",
        OWNER,
        Some(json!({ "name": "Fence" })),
    );
    server.wait_for_log("route=/api/v1/projects status=200");
    let log = server.log();
    let mcp: Vec<&String> = log.iter().filter(|l| l.contains("route=/mcp")).collect();
    assert_eq!(mcp.len(), 1, "only the open project call: {mcp:#?}");
    assert!(mcp[0].contains("INFO"), "{mcp:#?}");
    assert!(server.terminate().success());
}

/// `/metrics` read by the Prometheus client's OpenMetrics parser, its
/// counters checked against the requests made (tests/team/metrics.py).
#[test]
fn metrics_count_what_was_asked_of_the_server() {
    let test = "metrics_count_what_was_asked_of_the_server";
    let Some(python) = crate::mcp::python_with(test, "httpx, prometheus_client") else {
        return;
    };
    let s = Sandbox::new();
    let config = s.write("metrics.toml", &format!("[server]\ntoken = \"{OWNER}\"\n"));
    let server = Binary::headless(&s, &config, &[], &[]);
    let mut cmd = Command::new(python);
    cmd.arg(format!(
        "{}/tests/team/metrics.py",
        env!("CARGO_MANIFEST_DIR")
    ))
    .args([&server.url, OWNER]);
    let out = run_checker(&s, &mut cmd, "ok");
    assert!(out.contains("metrics: ok"), "{out}");
    assert!(server.terminate().success());
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path.display().to_string());
        }
    }
    out
}

/// The Caddy example of `docs/operations.md` in front of quire passes what the web
/// workbench and an agent need (see `check_through_proxy`).
#[test]
fn the_readmes_caddy_example_passes_events_mcp_and_big_uploads() {
    let test = "the_readmes_caddy_example_passes_events_mcp_and_big_uploads";
    if !crate::harness::tool_available(
        "caddy",
        test,
        crate::harness::missing_program("caddy", "version"),
    ) {
        return;
    }
    let s = Sandbox::new();
    let server = Binary::start(
        &s,
        &["--headless", "--port", "0"],
        &[("QUIRE_SERVER__TOKEN", OWNER)],
    );
    let proxy = crate::proxy_support::Caddy::start(&s, &server.url);
    crate::proxy_support::check_through_proxy(&proxy.url, OWNER);
    assert!(server.terminate().success());
}

/// SIGHUP puts in effect a new host name, log level and engine without a
/// restart, and names the change that must wait for one.
#[test]
fn a_reload_takes_hosts_the_log_level_and_engines_and_names_what_waits() {
    let s = Sandbox::new();
    // A token: a server open to its machine may not name another host
    // (its reload would be refused).
    let config = s.write(
        "ops.toml",
        &format!("[server]\ntoken = \"{OWNER}\"\n\n[log]\nlevel = \"info\"\n"),
    );
    let mut server = Binary::headless(&s, &config, &[], &[]);
    let http = crate::harness::blocking_client();
    let url = server.url.clone();
    let get = |path: &str, host: Option<&str>| {
        let mut request = http.get(format!("{url}{path}")).bearer_auth(OWNER);
        if let Some(host) = host {
            request = request.header("Host", host);
        }
        let response = request.send().unwrap();
        let status = response.status().as_u16();
        (status, response.text().unwrap())
    };
    assert_eq!(get("/api/v1/meta", Some("quire.example")).0, 403);
    let (status, engines) = get("/api/v1/engines", None);
    assert_eq!(status, 200);
    assert!(!engines.contains("\"shout\""), "{engines}");
    s.write(
        "ops.toml",
        &format!("[server]\ntoken = \"{OWNER}\"\nallowed_hosts = [\"quire.example\"]\n\n[history]\nundo_limit = 7\n\n\
         [engines.shout]\ncommand = [\"true\"]\ninput = \"page-json\"\noutput = \"ops\"\n\n\
         [log]\nlevel = \"debug\"\n"),
    );
    server.signal("HUP");
    let said = server.wait_for_log("SIGHUP: reloaded");
    assert!(said.contains("log level debug"), "{said}");
    assert!(
        said.contains("changed: server.allowed_hosts, log.level, engines"),
        "{said}"
    );
    server.wait_for_log("SIGHUP: changed but not applied until a restart: history");
    assert_eq!(get("/api/v1/meta", Some("quire.example")).0, 200);
    // `/mcp` too: the guard's hosts are the reloaded ones, and no fixed
    // list of the start second-guesses them.
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "reload-test", "version": "1" } } });
    let mcp = http
        .post(format!("{url}/mcp"))
        .bearer_auth(OWNER)
        .header("Host", "quire.example")
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .unwrap();
    assert_eq!(mcp.status(), 200, "{}", mcp.text().unwrap());
    let (_, engines) = get("/api/v1/engines", None);
    assert!(engines.contains("\"shout\""), "{engines}");
    // Reads are logged at debug: the one after the reload is, the one
    // before it (at info) was not.
    server.wait_for_log("route=/api/v1/engines status=200");
    let log = server.log();
    assert_eq!(
        log.iter()
            .filter(|l| l.contains("route=/api/v1/engines"))
            .count(),
        1,
        "{log:#?}"
    );
    // The running config says what is in effect: the new hosts, the old
    // undo limit.
    let (_, shown) = get("/api/v1/config", None);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["server"]["allowed_hosts"], json!(["quire.example"]));
    assert_ne!(shown["history"]["undo_limit"], 7);
    assert!(server.terminate().success());
}
