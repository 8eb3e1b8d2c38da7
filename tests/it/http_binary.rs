//! `quire --headless` as a real process: start-up, refusal to bind a
//! public address without a token, systemd readiness, the project lock's
//! attach hint, and SIGTERM under load with every acknowledged op on disk.

use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::Sandbox;
use crate::http_support::{Binary, SseReader, json_post};

#[test]
fn a_public_bind_without_a_token_is_refused() {
    let s = Sandbox::new();
    let before = s.snapshot();
    s.quire()
        .args(["--headless", "--host", "0.0.0.0", "--port", "0"])
        .run()
        .fails(
            2,
            &[
                "refusing to serve on 0.0.0.0 without a token",
                "server.token",
            ],
        );
    assert_eq!(before, s.snapshot());
}

/// A socket standing in for systemd's notification socket.
struct Notify {
    socket: UnixDatagram,
    path: String,
}

impl Notify {
    fn bind(s: &Sandbox) -> Notify {
        let path = s.path("notify.sock");
        let socket = UnixDatagram::bind(&path).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let path = path.to_str().unwrap().to_owned();
        Notify { socket, path }
    }

    /// The next notification (within 30 s).
    fn next(&self) -> String {
        let mut buf = [0u8; 256];
        let n = self.socket.recv(&mut buf).expect("no notification");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

#[test]
fn readiness_is_notified_to_systemd() {
    let s = Sandbox::new();
    let notify = Notify::bind(&s);
    let server = Binary::start(
        &s,
        &["--headless", "--port", "0"],
        &[("NOTIFY_SOCKET", &notify.path)],
    );
    assert!(notify.next().contains("READY=1"));
    // SIGHUP reloads: systemd is told it is reloading, then ready again.
    server.signal("HUP");
    assert!(notify.next().contains("RELOADING=1"));
    assert!(notify.next().contains("READY=1"));
    server.signal("TERM");
    assert!(notify.next().contains("STOPPING=1"));
    assert!(server.terminate().success());
}

#[test]
fn the_watchdog_is_fed_when_systemd_asks_for_it() {
    let s = Sandbox::new();
    let notify = Notify::bind(&s);
    // WatchdogSec=200ms: a ping at least every 100 ms.
    let server = Binary::start(
        &s,
        &["--headless", "--port", "0"],
        &[("NOTIFY_SOCKET", &notify.path), ("WATCHDOG_USEC", "200000")],
    );
    assert!(notify.next().contains("READY=1"));
    for _ in 0..3 {
        assert!(notify.next().contains("WATCHDOG=1"));
    }
    assert!(server.terminate().success());
}

#[test]
fn a_stop_signal_right_after_the_serving_line_is_graceful() {
    // The signal handlers exist before the serving line is printed, so a
    // service manager may stop quire the moment it is up. A server takes
    // SIGHUP as "reload" (and goes on serving).
    let s = Sandbox::new();
    for signal in ["TERM", "INT"].repeat(4) {
        let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
        let status = server.stop_with(signal);
        assert!(status.success(), "SIG{signal}: {status}");
    }
    let mut server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    server.signal("HUP");
    server.wait_for_log("SIGHUP: reloaded the users (none: open to this machine)");
    assert!(server.alive());
    assert!(server.terminate().success());
}

#[test]
fn a_second_process_is_told_whom_to_attach_to() {
    let s = Sandbox::new();
    let first = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = crate::harness::http_client();
    let (status, session) = rt.block_on(json_post(
        &client,
        format!("{}/api/v1/projects", first.url),
        json!({ "name": "Shared" }),
    ));
    assert_eq!(status, 200, "{session}");
    let path = session["path"].as_str().unwrap().to_owned();
    let second = s
        .quire()
        .args(["--headless", "--port", "0", "--project", &path])
        .run();
    assert_eq!(second.code(), 1, "{}", second.stderr());
    let first_line = second
        .stderr()
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(
        first_line.starts_with("quire: error: cannot open --project"),
        "{first_line}"
    );
    assert!(first_line.contains("mode headless"), "{first_line}");
    assert!(
        first_line.contains(&format!("quire attach {}", first.url)),
        "{first_line}"
    );
    // `quire mcp stdio`, spawned by an MCP client, is refused the same way
    // and told where the holder serves MCP.
    let stdio = s.quire().args(["mcp", "stdio", "--project", &path]).run();
    assert_ne!(stdio.code(), 0, "{}", stdio.stderr());
    assert!(
        stdio
            .stderr()
            .contains(&format!("MCP client at {}/mcp", first.url)),
        "{}",
        stdio.stderr()
    );
    assert!(first.terminate().success());
    // Released at exit: now it opens.
    let again = Binary::start(&s, &["--headless", "--port", "0", "--project", &path], &[]);
    let (status, sessions) = rt.block_on(async {
        let r = client
            .get(format!("{}/api/v1/sessions", again.url))
            .send()
            .await
            .unwrap();
        crate::http_support::decode(r).await
    });
    assert_eq!(status, 200);
    assert_eq!(sessions[0]["name"], "Shared");
    assert!(again.terminate().success());
}

#[test]
fn sigterm_under_load_exits_0_and_keeps_every_acknowledged_op() {
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let client = crate::harness::http_client();
    let url = server.url.clone();
    let (status, session) = rt.block_on(json_post(
        &client,
        format!("{url}/api/v1/projects"),
        json!({ "name": "Load" }),
    ));
    assert_eq!(status, 200);
    let path = session["path"].as_str().unwrap().to_owned();
    // Writers record every page whose creation was acknowledged.
    let acked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let count = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for w in 0..4 {
        let client = client.clone();
        let url = format!("{url}/api/v1/history/apply");
        let acked = acked.clone();
        let count = count.clone();
        writers.push(rt.spawn(async move {
            for i in 0..100_000 {
                let op = json!({ "type": "AddPage", "page": { "name": format!("w{w}-{i}") } });
                let Ok(r) = client.post(&url).json(&op).send().await else {
                    break;
                };
                if r.status() != 200 {
                    break;
                }
                let Ok(body) = r.json::<Value>().await else {
                    break;
                };
                acked
                    .lock()
                    .unwrap()
                    .push(body["created"][0].as_str().unwrap().to_owned());
                count.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    // Terminate once a good number of ops went through.
    rt.block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while count.load(Ordering::SeqCst) < 200 {
            assert!(tokio::time::Instant::now() < deadline, "load did not start");
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let status = server.terminate();
    assert!(status.success(), "exit status {status:?}");
    for w in writers {
        rt.block_on(w).unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 200);
    // Restart on the same data and check every acknowledged page is there.
    let again = Binary::start(&s, &["--headless", "--port", "0", "--project", &path], &[]);
    let scene = rt.block_on(async {
        let r = client
            .get(format!("{}/api/v1/scene.json", again.url))
            .send()
            .await
            .unwrap();
        r.json::<Value>().await.unwrap()
    });
    let ids: std::collections::HashSet<&str> = scene["scene"]["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    let lost: Vec<&String> = acked
        .iter()
        .filter(|id| !ids.contains(id.as_str()))
        .collect();
    assert!(lost.is_empty(), "{} acknowledged pages lost", lost.len());
    assert!(again.terminate().success());
    // A clean shutdown snapshotted: the log is empty.
    let log = std::fs::read(std::path::Path::new(&path).join("ops.log")).unwrap();
    assert!(log.is_empty());
}

#[test]
fn the_servers_own_origin_is_accepted_on_every_route_and_others_are_not() {
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let own = server.url.clone();
    let port = own.rsplit(':').next().unwrap().to_owned();
    let client = crate::harness::blocking_client();
    let send = |method: reqwest::Method, path: &str, origin: &str| {
        let mut request = client
            .request(method.clone(), format!("{own}{path}"))
            .header("Origin", origin);
        if path == "/mcp" {
            request = request
                .header("Accept", "application/json, text/event-stream")
                .json(
                    &json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "same-origin", "version": "1" } } }),
                );
        } else if method == reqwest::Method::POST {
            request = request.json(&json!({ "name": "From the page" }));
        }
        request.send().unwrap()
    };
    let sessions = || -> usize {
        let r: Value = client
            .get(format!("{own}/api/v1/sessions"))
            .send()
            .unwrap()
            .json()
            .unwrap();
        r.as_array().unwrap().len()
    };
    for (method, path) in [
        (reqwest::Method::GET, "/api/v1/meta"),
        (reqwest::Method::GET, "/api/v1/sessions"),
        (reqwest::Method::GET, "/api/v1/openapi.json"),
        (reqwest::Method::POST, "/api/v1/projects"),
        (reqwest::Method::POST, "/mcp"),
    ] {
        let r = send(method.clone(), path, &own);
        assert!(
            r.status().is_success(),
            "{method} {path} from {own}: {}",
            r.status()
        );
    }
    assert_eq!(sessions(), 1, "the page's POST created the project");
    let other_port = if port == "1" { "2" } else { "1" };
    for origin in [
        "null".to_owned(),
        "https://evil.example".to_owned(),
        format!("http://127.0.0.1:{other_port}"),
        format!("http://evil.example:{port}"),
    ] {
        for (method, path) in [
            (reqwest::Method::GET, "/api/v1/meta"),
            (reqwest::Method::POST, "/api/v1/projects"),
            (reqwest::Method::POST, "/mcp"),
        ] {
            let r = send(method.clone(), path, &origin);
            let got = (r.status().as_u16(), r.json::<Value>().unwrap());
            crate::http_support::assert_refused(path, &got, 403, "forbidden_origin");
        }
    }
    assert_eq!(sessions(), 1, "no refused request created anything");
    assert!(server.terminate().success());
}

#[test]
fn event_ids_increase_across_a_restart_and_an_old_id_gets_a_fresh_snapshot() {
    let s = Sandbox::new();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = crate::harness::http_client();
    let last_of_first_run = {
        let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
        let url = server.url.clone();
        let last = rt.block_on(async {
            let mut events =
                SseReader::connect(&client, &format!("{url}/api/v1/events"), None).await;
            let snapshot = events.next().await;
            assert_eq!(snapshot.event, "Snapshot");
            let created = client
                .post(format!("{url}/api/v1/projects"))
                .json(&json!({ "name": "Before" }))
                .send()
                .await
                .unwrap();
            assert!(created.status().is_success());
            let seen = events.until(|e| e.event == "SessionOpened").await;
            seen.last().and_then(|e| e.id).unwrap()
        });
        assert!(server.terminate().success());
        last
    };
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let url = server.url.clone();
    rt.block_on(async {
        let mut events = SseReader::connect(
            &client,
            &format!("{url}/api/v1/events"),
            Some(last_of_first_run),
        )
        .await;
        let first = events.next().await;
        assert_eq!(first.event, "Snapshot", "{first:?}");
        assert!(
            first.id.unwrap() > last_of_first_run,
            "{first:?} after {last_of_first_run}"
        );
        let created = client
            .post(format!("{url}/api/v1/projects"))
            .json(&json!({ "name": "After" }))
            .send()
            .await
            .unwrap();
        assert!(created.status().is_success());
        let seen = events.until(|e| e.event == "SessionOpened").await;
        let ids: Vec<u64> = std::iter::once(first.id.unwrap())
            .chain(seen.iter().filter_map(|e| e.id))
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        // Beyond 2^53 a JavaScript client could not compare them exactly.
        assert!(ids.iter().all(|id| *id < 1 << 53), "{ids:?}");
    });
    assert!(server.terminate().success());
}

/// A server whose stderr is gone (a supervisor's log reader died,
/// `quire --headless 2>&1 | head`) drops its log lines and answers on:
/// 0.2 panicked the handler that logged, closing its client's connection
/// with no answer.
#[test]
fn a_closed_stderr_costs_no_request() {
    use std::io::{BufRead, BufReader};
    let s = Sandbox::new();
    let mut child = s
        .command()
        .args(["--headless", "--port", "0"])
        // Every change past the bound logs a line.
        .env("QUIRE_HISTORY__MAX_BYTES", "1000")
        .env("RUST_LOG", "debug")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "no serving line");
        if let Some(rest) = line.strip_prefix("quire: serving ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    drop(stderr);
    let client = crate::harness::blocking_client();
    let post = |path: &str, body: Value| {
        client
            .post(format!("{url}{path}"))
            .json(&body)
            .send()
            .map(|r| r.status().as_u16())
    };
    assert_eq!(
        post("/api/v1/projects", json!({ "name": "Quiet" })).unwrap(),
        200
    );
    for n in 0..5 {
        let status = post(
            "/api/v1/history/apply",
            json!({ "type": "AddPage", "page": { "name": format!("p{n}") } }),
        );
        assert_eq!(status.as_ref().ok(), Some(&200), "p{n}: {status:?}");
    }
    assert!(child.try_wait().unwrap().is_none(), "the server died");
    let _ = child.kill();
    let _ = child.wait();
}
