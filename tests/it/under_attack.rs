//! A team server under attack (`16-operations.md`, "Under attack"): what a
//! flood of junk costs the metrics, the memory and the log; the fail2ban
//! filter of `docs/operations.md` against the real log lines; throttling that never keeps
//! a right token out; a reload that revokes a user ends their streams and
//! sessions, and a reload that would weaken authentication is refused; no
//! open server behind a proxy.

use std::io::{BufRead, BufReader};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Sandbox, tool_available};
use crate::http_support::Binary;

mod helpers;
mod reloads;

const OWNER: &str = "owner-token-8d1f20";
const ANA: &str = "ana-token-2b9e71";
const BEA: &str = "bea-token-c04a5e";
const BEA_NEW: &str = "bea-token-new-77d3f1";

/// The series of an OpenMetrics body: its sample lines.
fn series(body: &str) -> usize {
    body.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .count()
}

/// 3,000 requests to distinct unmatched paths with made-up methods, most
/// without a token and some with the owner's: `/metrics` gains at most 10
/// series and less than a tenth of its size, the server less than 8 MiB,
/// and the log less than 256 KiB in fewer than 1,000 lines, the refusals
/// past the first few summarised in one line that counts them all.
#[test]
fn junk_requests_leave_metrics_memory_and_the_log_bounded() {
    let s = Sandbox::new();
    let config = s.write("owner.toml", &format!("[server]\ntoken = \"{OWNER}\"\n"));
    let mut server = Binary::headless(&s, &config, &[], &[]);
    let c = server.client();
    let scrape = || match c.call("GET", "/metrics", OWNER, None) {
        (200, Value::String(body)) => body,
        other => panic!("/metrics: {other:?}"),
    };
    // What a server has answered once a person has worked on it: a
    // project made, text imported, read, edited, undone and exported.
    let prefix = c.new_project(OWNER, "Ch 1");
    let scene = c.text_page(&prefix, OWNER, "One.\n\nTwo.");
    let page = &scene["scene"]["pages"][0];
    c.ok(
        "POST",
        &format!("{prefix}/history/apply"),
        OWNER,
        Some(
            json!({ "type": "UpdateNode", "page": page["id"], "id": page["nodes"][0]["id"],
            "patch": { "kind": { "type": "text", "translation": "Um." } } }),
        ),
    );
    c.ok("POST", &format!("{prefix}/history/undo"), OWNER, None);
    for route in [
        "/api/v1/meta",
        "/api/v1/sessions",
        "/api/v1/projects",
        "/api/v1/engines",
    ] {
        c.ok("GET", route, OWNER, None);
    }
    c.call("GET", "/api/v1/sessions/nonexistent", OWNER, None);
    c.call("GET", "/api/v1/meta", "a-wrong-token", None);
    scrape();
    let before = scrape();
    let rss_before = server.rss_mib();
    let lines_before = server.log().len();
    let http = crate::harness::blocking_client();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..3_000 {
        let method = match i % 3 {
            0 => format!("JUNK{i}"),
            1 => "PROPFIND".to_owned(),
            _ => format!("X-{i}"),
        };
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = http.request(method, format!("{}/junk/{i}/{}", server.url, i * 7919));
        if i % 4 == 0 {
            request = request.bearer_auth(OWNER);
        }
        let response = request.send().unwrap();
        *statuses.entry(response.status().as_u16()).or_default() += 1;
    }
    assert_eq!(statuses.values().sum::<usize>(), 3_000);
    assert!(
        statuses.keys().all(|s| [401, 404, 405].contains(s)),
        "{statuses:?}"
    );
    let after = scrape();
    let added = series(&after) as i64 - series(&before) as i64;
    assert!(added <= 10, "{added} series added:\n{after}");
    assert!(
        after.contains("route=\"unmatched\"") && after.contains("method=\"other\""),
        "{after}"
    );
    assert!(
        (after.len() as f64) < before.len() as f64 * 1.10,
        "/metrics grew from {} to {} bytes",
        before.len(),
        after.len()
    );
    let grew = server.rss_mib() - rss_before;
    assert!(grew < 8.0, "the server grew by {grew:.1} MiB");
    let (status, log) = server.finish();
    assert!(status.success());
    let junk = &log[lines_before..];
    let bytes: usize = junk.iter().map(|l| l.len() + 1).sum();
    assert!(
        junk.len() < 1_000 && bytes < 256 << 10,
        "{} lines, {bytes} bytes:\n{}",
        junk.len(),
        junk.join("\n")
    );
    // The refusals not written one by one are counted in a summary.
    let summary = junk
        .iter()
        .find(|l| l.contains("refused ") && l.contains(" requests from 127.0.0.1 in the last"))
        .unwrap_or_else(|| panic!("no summary in:\n{}", junk.join("\n")));
    let written = junk
        .iter()
        .filter(|l| l.contains("route=unmatched"))
        .count();
    let held: usize = summary
        .split("refused ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert_eq!(written + held, 3_000, "{summary}");
    assert!(summary.contains("401: "), "{summary}");
}

/// The fail2ban filter of `docs/operations.md` (its `failregex`), as a file.
fn readme_fail2ban_filter() -> String {
    let readme = include_str!("../../docs/operations.md");
    let start = readme
        .find("# /etc/fail2ban/filter.d/quire.conf")
        .expect("the fail2ban filter of docs/operations.md");
    let block = &readme[start..];
    let end = block.find("```").expect("the end of the filter's block");
    block[..end]
        .lines()
        .map(str::trim_start)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `fail2ban-regex LOG FILTER`: how many lines matched.
fn fail2ban_matches(s: &Sandbox, name: &str, lines: &[&String]) -> usize {
    let log = s.write(
        &format!("{name}.log"),
        &lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    );
    let filter = s.write("quire-filter.conf", &readme_fail2ban_filter());
    let out = Command::new("fail2ban-regex")
        .args([log.to_str().unwrap(), filter.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "Lines: 14 lines, 0 ignored, 11 matched, 3 missed"
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("Lines: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    summary
        .split(", ")
        .find_map(|part| part.strip_suffix(" matched"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{summary}"))
}

/// Wrong tokens against a server with users: a right token is answered at
/// once whatever its address has done, a success does not clear the
/// count, the eleventh failure is refused (429), and requests without an
/// `Authorization` header (a browser's first look) are neither counted
/// nor logged as failures. The fail2ban filter of `docs/operations.md` matches every
/// failure line, single and summarised, and nothing else.
#[test]
fn failures_are_throttled_without_keeping_a_right_token_out_and_fail2ban_reads_them() {
    let test = "failures_are_throttled_without_keeping_a_right_token_out_and_fail2ban_reads_them";
    let missing = (!Command::new("fail2ban-regex")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success()))
    .then(|| "`fail2ban-regex --version` does not run".to_owned());
    let fail2ban = tool_available("fail2ban", test, missing);
    let s = Sandbox::new();
    let config = s.write(
        "team.toml",
        &format!(
            "[[server.users]]\nname = \"ana\"\ntoken = \"{ANA}\"\nrole = \"edit\"\n\n\
             [[server.users]]\nname = \"bea\"\ntoken = \"{BEA}\"\nrole = \"read\"\n"
        ),
    );
    let server = Binary::headless(&s, &config, &[], &[]);
    let c = server.client();
    let http = crate::harness::blocking_client();
    // No header at all, as a fresh tab asks: 401, not a failure.
    for _ in 0..30 {
        let r = http
            .get(format!("{}/api/v1/sessions", server.url))
            .send()
            .unwrap();
        assert_eq!(r.status(), 401);
    }
    // Guesses mixed with a right token: the right one always passes, and
    // does not clear the guesses.
    for i in 1..=10 {
        let (status, _) = c.call("GET", "/api/v1/sessions", &format!("guess-{i}"), None);
        assert_eq!(status, 401, "guess {i}");
        let started = Instant::now();
        assert_eq!(c.call("GET", "/api/v1/sessions", BEA, None).0, 200);
        // Not held back like a failure (whose delay reaches 1.6 s).
        assert!(started.elapsed() < Duration::from_millis(1_000));
    }
    let refused = http
        .get(format!("{}/api/v1/sessions", server.url))
        .bearer_auth("guess-11")
        .send()
        .unwrap();
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "60");
    let body: Value = refused.json().unwrap();
    assert_eq!(body["error"]["code"], "too_many_failures");
    assert_eq!(c.call("GET", "/api/v1/sessions", ANA, None).0, 200);
    // A guesser who keeps going: refused at once, summarised in the log.
    for i in 12..500 {
        assert_eq!(
            c.call("GET", "/api/v1/sessions", &format!("guess-{i}"), None)
                .0,
            429
        );
    }
    let (status, log) = server.finish();
    assert!(status.success());
    let failures: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("authentication failed from"))
        .collect();
    // The 30 requests without a header are not among them; the first ten
    // guesses are (each on its own line), and the rest in a summary.
    assert!(
        failures
            .iter()
            .all(|l| l.contains("127.0.0.1") && !l.contains("no bearer token")),
        "{failures:#?}"
    );
    assert!(
        failures.iter().any(|l| l.contains(
            "authentication failed from 127.0.0.1: a wrong token (failure 10, answered after 1600 ms; its next failures are refused for 60 s)"
        )),
        "{failures:#?}"
    );
    let summarised = failures
        .iter()
        .find(|l| l.contains("more wrong tokens in the last"))
        .unwrap_or_else(|| panic!("no summary: {log:#?}"));
    assert!(
        summarised.contains("authentication failed from 127.0.0.1: "),
        "{summarised}"
    );
    if fail2ban {
        let all: Vec<&String> = log.iter().collect();
        assert_eq!(fail2ban_matches(&s, "all", &all), failures.len());
        assert!(
            failures.len() >= 5,
            "fail2ban's maxretry is 5: {failures:#?}"
        );
        assert_eq!(fail2ban_matches(&s, "summary", &[summarised]), 1);
    }
}

/// A server's event stream of one user, line by line, on a thread: the
/// lines as they come, and the end of the stream as the channel's end.
fn follow_events(url: &str, token: &str) -> mpsc::Receiver<String> {
    let response = crate::harness::blocking_client()
        .get(format!("{url}/api/v1/events"))
        .bearer_auth(token)
        .send()
        .unwrap();
    follow(response)
}

/// An open stream's lines, read on a thread, as [`follow_events`] says.
fn follow(response: reqwest::blocking::Response) -> mpsc::Receiver<String> {
    assert_eq!(response.status(), 200);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(response).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for `rx`'s stream to end within `within`; every line it sent.
fn ended_within(rx: &mpsc::Receiver<String>, within: Duration) -> Result<Vec<String>, Vec<String>> {
    let end = Instant::now() + within;
    let mut lines = Vec::new();
    loop {
        match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(line) => lines.push(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(lines),
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(lines),
        }
    }
}

/// A POST of `frame` to `/mcp` with `token`, in `session` when given.
fn mcp_post(
    url: &str,
    token: &str,
    session: Option<&str>,
    frame: Value,
) -> reqwest::blocking::Response {
    let mut request = crate::harness::blocking_client()
        .post(format!("{url}/mcp"))
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .json(&frame);
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("Mcp-Protocol-Version", "2025-11-25");
    }
    request.send().unwrap()
}

/// An MCP session of the handshake era over `/mcp`: its id.
fn mcp_session(url: &str, token: &str) -> String {
    let response = mcp_post(
        url,
        token,
        None,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "revoked-test", "version": "1" } } }),
    );
    assert!(response.status().is_success(), "{}", response.status());
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = response.text();
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let done = mcp_post(url, token, Some(&id), initialized);
    assert!(done.status().is_success(), "{}", done.status());
    id
}

/// A session's standalone `/mcp` GET stream, as [`follow_events`].
fn follow_mcp(url: &str, token: &str, session: &str) -> mpsc::Receiver<String> {
    let response = crate::harness::blocking_client()
        .get(format!("{url}/mcp"))
        .bearer_auth(token)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", session)
        .header("Mcp-Protocol-Version", "2025-11-25")
        .send()
        .unwrap();
    follow(response)
}

fn team(s: &Sandbox, bea_token: &str, bea_role: &str) -> std::path::PathBuf {
    s.write(
        "team.toml",
        &format!(
            "[[server.users]]\nname = \"ana\"\ntoken = \"{ANA}\"\nrole = \"admin\"\n\n\
             [[server.users]]\nname = \"bea\"\ntoken = \"{bea_token}\"\nrole = \"{bea_role}\"\n"
        ),
    )
}

/// The messages a service manager would get on `NOTIFY_SOCKET`.
struct Notified {
    socket: std::os::unix::net::UnixDatagram,
    path: std::path::PathBuf,
}

impl Notified {
    fn bind(s: &Sandbox) -> Notified {
        let path = s.path("notify.sock");
        let socket = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        Notified { socket, path }
    }

    /// The next message holding `part`.
    fn wait_for(&self, part: &str) -> String {
        let mut buf = vec![0u8; 4096];
        loop {
            let n = self.socket.recv(&mut buf).expect("a notification");
            let message = String::from_utf8_lossy(&buf[..n]).into_owned();
            if message.contains(part) {
                return message;
            }
        }
    }
}

/// A server with no token and no users serves this machine only: it does
/// not start behind trusted proxies or with a non-loopback allowed host,
/// and says why.
#[test]
fn no_open_server_behind_a_proxy() {
    let s = Sandbox::new();
    for (config, says) in [
        (
            "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n",
            "server.trusted_proxies is set but there is no token and no user",
        ),
        (
            "[server]\nallowed_hosts = [\"quire.example.org\"]\n",
            "server.allowed_hosts names `quire.example.org`, which is not this machine",
        ),
    ] {
        let path = s.write("open.toml", config);
        let before = s.snapshot();
        s.quire()
            .args([
                "--config",
                path.to_str().unwrap(),
                "--headless",
                "--port",
                "0",
            ])
            .run()
            .fails(2, &["refusing to serve without a token", says]);
        assert_eq!(before, s.snapshot());
    }
    // With a token, the same settings serve.
    let path = s.write(
        "open.toml",
        &format!(
            "[server]\ntoken = \"{OWNER}\"\ntrusted_proxies = [\"127.0.0.1\"]\nallowed_hosts = [\"quire.example.org\"]\n"
        ),
    );
    let server = Binary::headless(&s, &path, &[], &[]);
    assert!(server.terminate().success());
}

/// Below admin, `GET /api/v1/config` names no path, no token location and
/// no other user; an admin sees them all. An MCP refusal over `/mcp`
/// names the path the caller sent, never the projects directory.
#[test]
fn non_admins_see_no_server_paths_and_no_one_else() {
    let s = Sandbox::new();
    let ana_file = s.write("secrets/ana", &format!("{ANA}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ana_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let config = s.write(
        "team.toml",
        &format!(
            "[[server.users]]\nname = \"ana\"\ntoken_file = \"{}\"\nrole = \"admin\"\n\n\
             [[server.users]]\nname = \"bea\"\ntoken_env = \"BEA_TOKEN\"\nrole = \"edit\"\n",
            ana_file.display()
        ),
    );
    let server = Binary::headless(&s, &config, &[], &[("BEA_TOKEN", BEA)]);
    let c = server.client();
    let root = s.root().display().to_string();
    let seen = c.ok("GET", "/api/v1/config", BEA, None).to_string();
    for secret in [
        root.as_str(),
        "token_file",
        "token_env",
        "BEA_TOKEN",
        "\"ana\"",
    ] {
        assert!(!seen.contains(secret), "{secret} in {seen}");
    }
    assert!(seen.contains("\"bea\""), "{seen}");
    let all = c.ok("GET", "/api/v1/config", ANA, None).to_string();
    for shown in [
        root.as_str(),
        "token_file",
        "BEA_TOKEN",
        "\"ana\"",
        "\"bea\"",
    ] {
        assert!(all.contains(shown), "{shown} not in {all}");
    }
    // Over /mcp: a path outside the projects directory is refused by the
    // name it was given.
    let session = mcp_session(&server.url, BEA);
    let answer = mcp_post(
        &server.url,
        BEA,
        Some(&session),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "quire_open_project", "arguments": { "path": "../../../etc/quire" } } }),
    )
    .text()
    .unwrap();
    assert!(answer.contains("../../../etc/quire"), "{answer}");
    assert!(answer.contains("isError"), "{answer}");
    assert!(!answer.contains(&root), "{answer}");
    let opened = mcp_post(
        &server.url,
        BEA,
        Some(&session),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "quire_open_project", "arguments": { "path": "no-such-project" } } }),
    )
    .text()
    .unwrap();
    assert!(
        opened.contains("no-such-project") && opened.contains("isError"),
        "{opened}"
    );
    assert!(!opened.contains(&root), "{opened}");
    assert!(server.terminate().success());
}

/// Two users with the same token, from two files alike: `quire config
/// check`, a start and a reload refuse it, naming both.
#[test]
fn a_token_two_users_share_is_refused_naming_both() {
    let s = Sandbox::new();
    let mut files = Vec::new();
    for who in ["ana", "bea"] {
        let path = s.write(&format!("secrets/{who}"), "the-same-token-0f0f\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        files.push(path);
    }
    let shared = s.write(
        "shared.toml",
        &format!(
            "[[server.users]]\nname = \"ana\"\ntoken_file = \"{}\"\n\n\
             [[server.users]]\nname = \"bea\"\ntoken_file = \"{}\"\nrole = \"read\"\n",
            files[0].display(),
            files[1].display()
        ),
    );
    let shared = shared.to_str().unwrap();
    let both = ["`ana` and `bea` have the same token"];
    s.quire()
        .args(["--config", shared, "config", "check"])
        .run()
        .fails(2, &both);
    s.quire()
        .args(["--config", shared, "--headless", "--port", "0"])
        .run()
        .fails(2, &both);
    // A running server keeps its users when a reload brings the clash.
    std::fs::write(&files[1], "bea-own-token-7e7e\n").unwrap();
    let mut server = Binary::start(&s, &["--config", shared, "--headless", "--port", "0"], &[]);
    std::fs::write(&files[1], "the-same-token-0f0f\n").unwrap();
    s.quire()
        .args(["reload", &server.pid().to_string()])
        .run()
        .fails(1, &both);
    server.wait_for_log("SIGHUP: the config does not load, nothing changed");
    let c = server.client();
    assert_eq!(
        c.call("GET", "/api/v1/sessions", "bea-own-token-7e7e", None)
            .0,
        200
    );
    assert!(server.terminate().success());
}

/// A merge's `take` names units of the file: an id that is not one is
/// refused by name and changes nothing; a list of 1,500,000 ids costs
/// linear time (benches/attack.sh measures it).
#[test]
fn a_take_list_names_units_of_the_file_or_is_refused() {
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let c = server.client();
    let prefix = c.new_project("-", "Ch 1");
    c.text_page(&prefix, "-", "One.\n\nTwo.");
    let exported = c
        .http
        .post(format!("{}{prefix}/export", c.url))
        .json(&json!({"format": "xliff"}))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let scene = c.ok("GET", &format!("{prefix}/scene.json"), "-", None);
    let page = &scene["scene"]["pages"][0];
    // Both sides translate the first node since the export: a conflict.
    c.ok(
        "POST",
        &format!("{prefix}/history/apply"),
        "-",
        Some(
            json!({ "type": "UpdateNode", "page": page["id"], "id": page["nodes"][0]["id"],
            "patch": { "kind": { "type": "text", "translation": "Um (aqui)." } } }),
        ),
    );
    let theirs = exported.replacen("<target/>", "<target>Um (no ficheiro).</target>", 1);
    let theirs = if theirs == exported {
        exported.replacen(
            "</source>",
            "</source><target>Um (no ficheiro).</target>",
            1,
        )
    } else {
        theirs
    };
    let import = |take: Vec<String>| {
        c.call(
            "POST",
            &format!("{prefix}/import"),
            "-",
            Some(json!({"format": "xliff", "content": theirs, "take": take})),
        )
    };
    let (status, report) = import(Vec::new());
    assert_eq!(status, 200, "{report}");
    let unit = report["conflicts"][0]["unit"].as_str().unwrap().to_owned();
    let before = c.ok("GET", &format!("{prefix}/scene.json"), "-", None);
    let mut take: Vec<String> = (0..1_500_000).map(|i| format!("n{i}")).collect();
    take.push(unit.clone());
    let (status, body) = import(take);
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("take names `n0`, which is not a unit of this file"),
        "{body}"
    );
    assert_eq!(
        before,
        c.ok("GET", &format!("{prefix}/scene.json"), "-", None)
    );
    let (status, report) = import(vec![unit]);
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["conflicts"][0]["applied"], true, "{report}");
    let after = c.ok("GET", &format!("{prefix}/scene.json"), "-", None);
    assert_eq!(
        after["scene"]["pages"][0]["nodes"][0]["kind"]["translation"],
        "Um (no ficheiro)."
    );
    assert!(server.terminate().success());
}

/// A stand-in for the `quire-ppocr` helper that loads anything, writes
/// its process id to `pids`, then never answers an image.
fn hung_helper(s: &Sandbox) -> (std::path::PathBuf, std::path::PathBuf) {
    let pids = s.path("helper-pids");
    let program = s.write(
        "hung-ppocr",
        &format!(
            "#!/bin/sh\necho $$ >> {}\nread line\necho '{{\"ok\":{{}}}}'\nexec sleep 600\n",
            pids.display()
        ),
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (program, pids)
}

/// The process ids the helper wrote, once there are `n`.
fn helper_pids(pids: &std::path::Path, n: usize) -> Vec<u32> {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let found: Vec<u32> = std::fs::read_to_string(pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if found.len() >= n {
            return found;
        }
        assert!(Instant::now() < end, "no helper started");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether process `pid` has gone (killed and reaped), within 10 s.
fn gone(pid: u32) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// A server with an onnx `detect` whose helper hangs, and a project of
/// `pages` image pages; the session's route prefix.
fn with_hung_detector(s: &Sandbox, timeout: u64, pages: usize) -> (Binary, String) {
    let (program, _) = hung_helper(s);
    let model = s.write("det.onnx", "not read by the stand-in");
    let config = s.write(
        "detect.toml",
        &format!(
            "[detect]\nbackend = \"onnx\"\nmodel = \"{}\"\ntimeout_secs = {timeout}\n",
            model.display()
        ),
    );
    let server = Binary::headless(
        s,
        &config,
        &[],
        &[("QUIRE_PPOCR_HELPER", program.to_str().unwrap())],
    );
    let c = server.client();
    let prefix = c.new_project("-", "Hung");
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(64, 48, image::Rgb([250; 3])))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let files = (0..pages)
        .map(|i| (format!("p{i}.png"), png.get_ref().clone()))
        .collect();
    assert_eq!(c.upload(&prefix, files).0, 200);
    (server, prefix)
}

/// The job's summary once it has finished (within 60 s).
fn finished(c: &crate::http_support::Client, job: &str) -> Value {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let jobs = c.ok("GET", "/api/v1/operations", "-", None);
        if let Some(j) =
            jobs.as_array().unwrap().iter().find(|j| {
                j["id"] == job && !matches!(j["status"].as_str(), Some("queued" | "running"))
            })
        {
            return j.clone();
        }
        assert!(Instant::now() < end, "the job did not finish: {jobs}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
