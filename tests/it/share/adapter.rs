//! The adapter (`quire mcp tui`) against a TUI that does not answer, is
//! gone, is shared with a second adapter, or is fed junk.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_reply_by_the_deadline_is_timeout_unknown_and_never_retried() {
    let (ep, _root, seen) = fake_tui(false).await;
    let r = adapter_select(&ep.file).await;
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["structuredContent"]["ok"], false);
    assert_eq!(r["structuredContent"]["code"], "timeout_unknown", "{r}");
    assert!(
        r["structuredContent"]["message"]
            .as_str()
            .unwrap()
            .contains("get_view_context")
    );
    assert_eq!(
        seen.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "sent once, no retry"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_lost_after_sending_is_outcome_unknown() {
    let (ep, _root, seen) = fake_tui(true).await;
    let r = adapter_select(&ep.file).await;
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["structuredContent"]["code"], "outcome_unknown", "{r}");
    assert_eq!(
        seen.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "sent once, no retry"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_adapters_share_one_endpoint() {
    let h = shared_tui().await;
    let (mut a, mut b) = tokio::join!(
        AdapterProc::start(&h.endpoint_path, 5000),
        AdapterProc::start(&h.endpoint_path, 5000)
    );
    // Both read at the same time and see the same view.
    let (ra, rb) = tokio::join!(
        a.call("get_view_context", json!({})),
        b.call("get_view_context", json!({}))
    );
    assert_eq!(ra["isError"], false, "{ra}");
    assert_eq!(
        ra["structuredContent"]["context"], rb["structuredContent"]["context"],
        "one TUI, one view"
    );
    // One navigates; the other sees it and navigates from there.
    let ctx = ra["structuredContent"]["context"].clone();
    let moved = a.select(&ctx, h.sessions[0]).await;
    assert_eq!(moved["isError"], false, "{moved}");
    // B waits, as an agent should, until the view has loaded (loading
    // moves the revision).
    let end = Instant::now() + Duration::from_secs(30);
    let ctx = loop {
        let seen = b.call("get_view_context", json!({})).await;
        let ctx = seen["structuredContent"]["context"].clone();
        assert_eq!(ctx["sessionId"], h.sessions[0].to_string(), "{seen}");
        if ctx["ready"] == true && ctx["retryAfterMs"].is_null() {
            break ctx;
        }
        assert!(Instant::now() < end, "the view never became ready: {seen}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(ctx["navigationsUsed"], 1);
    let moved = b.select(&ctx, h.sessions[1]).await;
    assert_eq!(moved["isError"], false, "{moved}");
    h.wait(|app| app.route == Route::Session(h.sessions[1]))
        .await;
    // A's view is stale now: refused, with the current context attached.
    let stale = a.select(&ctx, h.sessions[0]).await;
    assert_eq!(stale["isError"], true);
    assert_eq!(
        stale["structuredContent"]["code"], "stale_revision",
        "{stale}"
    );
    assert_eq!(
        stale["structuredContent"]["context"]["sessionId"],
        h.sessions[1].to_string()
    );
}

#[test]
fn an_adapter_for_a_crashed_tui_fails_at_start() {
    let s = crate::harness::Sandbox::new();
    // What a crashed TUI leaves behind: its private directory, the
    // endpoint file, and a socket file that no one listens on.
    let root = tempfile::Builder::new()
        .prefix("qc")
        .tempdir_in("/tmp")
        .unwrap();
    let ep = quire::share::endpoint::Endpoint::create(root.path()).unwrap();
    drop(std::os::unix::net::UnixListener::bind(&ep.socket).unwrap());
    assert!(ep.socket.exists());
    let endpoint = ep.file.to_str().unwrap();
    s.quire()
        .args(["mcp", "tui", "--endpoint", endpoint])
        .run()
        .fails(1, &["cannot reach the shared TUI", "still running"]);
    // The socket file gone as well.
    std::fs::remove_file(&ep.socket).unwrap();
    s.quire()
        .args(["mcp", "tui", "--endpoint", endpoint])
        .run()
        .fails(1, &["cannot reach the shared TUI"]);
    assert!(ep.file.exists(), "the adapter deletes nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adapter_outlives_its_tui_and_says_nothing_happened() {
    let h = shared_tui().await;
    let mut a = AdapterProc::start(&h.endpoint_path, 5000).await;
    let r = a.call("get_view_context", json!({})).await;
    assert_eq!(r["isError"], false, "{r}");
    let ctx = r["structuredContent"]["context"].clone();
    h.revoke().await;
    assert!(!h.endpoint_path.exists());
    // The read fails as a tool result, not a crash of the adapter.
    let r = a.call("get_view_context", json!({})).await;
    assert_eq!(r["isError"], true, "{r}");
    let code = r["structuredContent"]["code"].as_str().unwrap();
    assert!(code == "not_connected" || code == "connection_lost", "{r}");
    // A navigation cannot be sent: definitive, nothing happened.
    let r = a.select(&ctx, h.sessions[0]).await;
    assert_eq!(r["structuredContent"]["code"], "not_connected", "{r}");
    assert!(
        r["structuredContent"]["message"]
            .as_str()
            .unwrap()
            .contains("nothing happened")
    );
    assert_eq!(h.state.lock().unwrap().route, Route::Home);
    // Still a working MCP server.
    let tools = a.rpc("tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 2);
    drop(a.stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), a.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "closing stdin ends the adapter: {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_bytes_and_huge_frames_never_hurt_the_tui() {
    let h = shared_tui().await;
    let mut good = h.connect().await;
    let before = good.context().await;
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    // Before the greeting: garbage of every size, with and without a line
    // end. The TUI closes each connection without a word.
    let mut strangers = Vec::new();
    for i in 0..24 {
        let mut stream = UnixStream::connect(&h.endpoint.socket).await.unwrap();
        let len = match i % 4 {
            0 => noise.below(64),
            1 => noise.below(4096),
            2 => 64 * 1024 + noise.below(64 * 1024),
            _ => 1 + noise.below(16),
        };
        let mut bytes = noise.bytes(len);
        if i % 3 != 2 {
            bytes.push(b'\n');
        }
        // The TUI may hang up before reading it all.
        let _ = stream.write_all(&bytes).await;
        strangers.push(stream);
    }
    // Meanwhile the good client keeps being answered.
    assert_eq!(good.context().await["revision"], before["revision"]);
    for mut stream in strangers {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut rest))
            .await
            .expect("an unauthenticated connection is closed in time");
        assert!(
            read.is_err() || rest.is_empty(),
            "an unauthenticated connection got {:?}",
            String::from_utf8_lossy(&rest)
        );
    }
    // After the greeting: every random line gets exactly one error reply
    // and the connection lives on.
    let mut greeted = h.connect().await;
    for _ in 0..20 {
        let lines = 1 + noise.below(5);
        let mut bytes = Vec::new();
        for _ in 0..lines {
            let len = match noise.below(10) {
                0 => 64 * 1024 + 1 + noise.below(256 * 1024),
                _ => noise.below(2048),
            };
            bytes.extend(noise.bytes(len));
            bytes.push(b'\n');
        }
        greeted.writer.write_all(&bytes).await.unwrap();
        for _ in 0..lines {
            let reply = greeted.read().await.expect("the connection stays open");
            let code = reply["error"]["code"].as_str().unwrap_or_default();
            assert!(
                code == "bad_request" || code == "frame_too_large",
                "{reply}"
            );
        }
        assert_eq!(greeted.context().await["route"], "home");
    }
    // Nothing moved, and both clients (and a new one) are still served.
    let after = good.context().await;
    assert_eq!(after["revision"], before["revision"], "{after}");
    assert_eq!(after["navigationsUsed"], 0);
    assert_eq!(h.connect().await.context().await["route"], "home");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_attach_tui_validates_through_its_server_and_keeps_its_token() {
    const TOKEN: &str = "attach-secret-5f1e0c9a";
    let s = crate::harness::Sandbox::new();
    let port = crate::http_support::free_port();
    let env = [("QUIRE_SERVER__TOKEN", TOKEN)];
    let server = Binary::start(&s, &["--headless", "--port", &port], &env);
    let mut auth = reqwest::header::HeaderMap::new();
    auth.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {TOKEN}").parse().unwrap(),
    );
    quire_core::install_tls_provider();
    let http = reqwest::Client::builder()
        .default_headers(auth)
        .build()
        .unwrap();
    let mut paths = Vec::new();
    for name in ["Alpha", "Beta"] {
        let url = format!("{}/api/v1/projects", server.url);
        let (status, session) = json_post(&http, url, json!({ "name": name })).await;
        assert_eq!(status, 200, "{session}");
        paths.push(session["path"].as_str().unwrap().to_owned());
    }
    let tmp = tempfile::Builder::new()
        .prefix("qa")
        .tempdir_in("/tmp")
        .unwrap();
    let remote = Remote::new(&server.url, Secret::new(TOKEN)).unwrap();
    let live = share_live(
        Arc::new(remote),
        App::new(server.url.clone(), true),
        tmp.path(),
    );
    let idle = live.idle.clone();
    wait_state(&live.state, |app| {
        app.link.loaded
            && app.link.connected
            && app.workspace.sessions.len() == 2
            && idle.load(std::sync::atomic::Ordering::SeqCst)
    })
    .await;
    let file = std::fs::read_to_string(&live.endpoint_path).unwrap();
    assert!(!file.contains(TOKEN), "the server token is not in {file}");

    let mut c = Client::raw(&live.endpoint.socket).await;
    let hello = json!({ "token": token(&live.endpoint), "client": "test", "protocol": 1 });
    c.request("hello", hello.clone()).await.expect("greeted");
    let ctx = quiet_context(&mut c, &live.clock).await;
    assert_eq!(ctx["ready"], true, "{ctx}");
    // A session the server does not know is refused by the server.
    let r = c.select(&ctx, SessionId::new(), Uuid::new_v4()).await;
    assert_eq!(r["code"], "unknown_session", "{r}");
    // That rejection moved the bar's count, and so the revision.
    let ctx = quiet_context(&mut c, &live.clock).await;
    let target: SessionId = live.state.lock().unwrap().workspace.sessions[1].id;
    let r = c.select(&ctx, target, Uuid::new_v4()).await;
    assert_eq!(r["ok"], true, "{r}");
    assert!(!r.to_string().contains(TOKEN));
    wait_state(&live.state, |app| app.route == Route::Session(target)).await;

    // The server goes away: the view says so and navigation waits.
    assert!(server.terminate().success());
    wait_state(&live.state, |app| !app.link.connected).await;
    let down = quiet_context(&mut c, &live.clock).await;
    assert_eq!(down["ready"], false, "{down}");
    assert!(
        down["blockedReasons"]
            .as_array()
            .unwrap()
            .contains(&json!("backend_disconnected")),
        "{down}"
    );
    let r = c.select(&down, target, Uuid::new_v4()).await;
    assert_eq!(r["code"], "navigation_blocked", "{r}");

    // It comes back: a new backend generation, so old contexts are stale.
    let path = paths[0].clone();
    let _again = Binary::start(
        &s,
        &["--headless", "--port", &port, "--project", &path],
        &env,
    );
    wait_state(&live.state, |app| app.link.connected && app.link.loaded).await;
    let up = quiet_context(&mut c, &live.clock).await;
    assert_eq!(
        up["generation"].as_u64().unwrap(),
        down["generation"].as_u64().unwrap() + 1,
        "{up}"
    );
    assert_eq!(up["instance"], ctx["instance"], "same endpoint");
    let r = c.select(&down, target, Uuid::new_v4()).await;
    assert_eq!(r["code"], "stale_identity", "{r}");
}
