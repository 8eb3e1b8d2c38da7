//! Reloads under attack: a reload that revokes a user ends their streams
//! and sessions; none weakens authentication.

use super::*;

/// A reload that changes bea's token ends her event stream and her MCP
/// session's stream within 2 s, and what is published after it never
/// reaches her; ana's stream goes on. Lowering a role does the same; the
/// same config again ends nothing.
#[test]
fn a_reload_that_revokes_a_user_ends_their_streams_and_sessions() {
    let s = Sandbox::new();
    let config = team(&s, BEA, "edit");
    let mut server = Binary::headless(&s, &config, &[], &[]);
    let c = server.client();
    let prefix = c.new_project(ANA, "Ch 1");
    let scene = c.text_page(&prefix, ANA, "One.\n\nTwo.");
    let page = scene["scene"]["pages"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let node = scene["scene"]["pages"][0]["nodes"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // An edit, and what marks its event on a stream: its epoch.
    let translate = |token: &str, text: &str| {
        let done = c.ok(
            "POST",
            &format!("{prefix}/history/apply"),
            token,
            Some(json!({ "type": "UpdateNode", "page": page, "id": node,
                "patch": { "kind": { "type": "text", "translation": text } } })),
        );
        format!("\"epoch\":{}", done["epoch"])
    };
    let bea_events = follow_events(&server.url, BEA);
    let ana_events = follow_events(&server.url, ANA);
    let bea_mcp = mcp_session(&server.url, BEA);
    let bea_stream = follow_mcp(&server.url, BEA, &bea_mcp);
    let ana_mcp = mcp_session(&server.url, ANA);
    // Both see what happens before the reload.
    let before = translate(ANA, "before the reload");
    for rx in [&bea_events, &ana_events] {
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            let line = rx
                .recv_timeout(end.saturating_duration_since(Instant::now()))
                .expect("the edit before the reload");
            if line.contains(&before) {
                break;
            }
        }
    }
    // The same config again revokes no one: bea still sees what follows.
    server.signal("HUP");
    server.wait_for_log("SIGHUP: reloaded the users (ana, bea)");
    let same = translate(ANA, "after the same config");
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let line = bea_events
            .recv_timeout(end.saturating_duration_since(Instant::now()))
            .expect("bea's stream after a reload that changed nothing");
        if line.contains(&same) {
            break;
        }
    }

    team(&s, BEA_NEW, "edit");
    server.signal("HUP");
    server.wait_for_log("SIGHUP: revoked bea");
    let reloaded = Instant::now();
    let after = translate(ANA, "after the reload");
    let seen = ended_within(&bea_events, Duration::from_secs(2))
        .unwrap_or_else(|lines| panic!("bea's event stream is still open: {lines:#?}"));
    assert!(!seen.iter().any(|l| l.contains(&after)), "{seen:#?}");
    let seen = ended_within(&bea_stream, Duration::from_secs(2))
        .unwrap_or_else(|lines| panic!("bea's MCP stream is still open: {lines:#?}"));
    assert!(!seen.iter().any(|l| l.contains(&after)), "{seen:#?}");
    assert!(reloaded.elapsed() < Duration::from_secs(2) + Duration::from_millis(500));
    // Her session is gone, even with her new token; ana's goes on, and
    // so does her event stream.
    let url = server.url.clone();
    server.wait_for_log("SIGHUP: ended 1 MCP sessions of users it revoked");
    let ping = |token: &str, session: &str| {
        let frame = json!({ "jsonrpc": "2.0", "id": 7, "method": "ping" });
        mcp_post(&url, token, Some(session), frame)
            .status()
            .as_u16()
    };
    assert_eq!(ping(BEA, &bea_mcp), 401);
    assert_eq!(ping(BEA_NEW, &bea_mcp), 404);
    assert_eq!(ping(ANA, &ana_mcp), 200);
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let line = ana_events
            .recv_timeout(end.saturating_duration_since(Instant::now()))
            .expect("ana's stream goes on");
        if line.contains(&after) {
            break;
        }
    }
    // Lowering her role ends her new stream too.
    let bea_events = follow_events(&server.url, BEA_NEW);
    team(&s, BEA_NEW, "read");
    server.signal("HUP");
    server.wait_for_log("SIGHUP: revoked bea");
    ended_within(&bea_events, Duration::from_secs(2))
        .unwrap_or_else(|lines| panic!("bea's event stream is still open: {lines:#?}"));
    assert!(server.terminate().success());
}

/// `quire reload PID` (what the packaged unit's `ExecReload=` runs) on a
/// server with users: a config without them, or with a user whose token
/// file is missing, is refused (exit 1, the old tokens stay in force, the
/// log and systemd's STATUS say why); a config that adds a user is taken,
/// and the new user is let in at once.
#[test]
fn a_reload_never_weakens_authentication_and_says_so_to_systemd() {
    let s = Sandbox::new();
    let config = team(&s, BEA, "edit");
    let notified = Notified::bind(&s);
    let notify = notified.path.to_str().unwrap().to_owned();
    let mut server = Binary::headless(&s, &config, &[], &[("NOTIFY_SOCKET", &notify)]);
    notified.wait_for("READY=1");
    let c = server.client();
    let pid = server.pid().to_string();
    let reload = || s.quire().args(["reload", &pid]).run();

    // No users at all: refused.
    s.write("team.toml", "[log]\nlevel = \"info\"\n");
    let refused = reload().fails(
        1,
        &["the server refused the reload", "a reload never opens"],
    );
    drop(refused);
    server
        .wait_for_log("SIGHUP: the config does not load, nothing changed: it has no server.token");
    let status = notified.wait_for("STATUS=");
    assert!(
        status.contains("STATUS=SIGHUP: the config does not load, nothing changed: it has no"),
        "{status}"
    );
    let http = crate::harness::blocking_client();
    let anonymous = http
        .get(format!("{}/api/v1/sessions", server.url))
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(c.call("GET", "/api/v1/sessions", BEA, None).0, 200);

    // A user whose token file has gone: refused, naming her and the file.
    let gone = s.path("secrets/eva");
    s.write(
        "team.toml",
        &format!(
            "[[server.users]]\nname = \"ana\"\ntoken = \"{ANA}\"\nrole = \"admin\"\n\n\
             [[server.users]]\nname = \"eva\"\ntoken_file = \"{}\"\n",
            gone.display()
        ),
    );
    reload().fails(1, &["user `eva` has no token", &gone.display().to_string()]);
    assert_eq!(c.call("GET", "/api/v1/sessions", BEA, None).0, 200);
    assert_eq!(c.call("GET", "/api/v1/sessions", "eva", None).0, 401);

    // The file appears: the reload takes it, eva is in at once, bea is out.
    s.write("secrets/eva", "eva-token-5a5a5a\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gone, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let done = reload().success();
    assert!(
        done.stdout().contains("reloaded the users (ana, eva)"),
        "{}",
        done.stdout()
    );
    notified.wait_for("STATUS=SIGHUP: reloaded the users (ana, eva)");
    assert_eq!(
        c.call("GET", "/api/v1/sessions", "eva-token-5a5a5a", None)
            .0,
        200
    );
    assert_eq!(c.call("GET", "/api/v1/sessions", BEA, None).0, 401);
    assert!(server.terminate().success());
}
