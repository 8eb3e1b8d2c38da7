//! Navigations an adapter asks for: bounded context, every reason one is
//! blocked, revocation and deadlines during validation, the per-connection
//! limit.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_is_bounded_and_a_navigation_commits() {
    let h = shared_tui().await;
    let mut c = h.connect().await;
    let ctx = c.context().await;
    assert_eq!(ctx["route"], "home");
    assert_eq!(ctx["navigationBlocked"], false, "{ctx}");
    assert_eq!(ctx["navigationsLimit"], NAVIGATION_LIMIT);
    let text = ctx.to_string();
    assert!(
        !text.contains("Alpha") && !text.contains("/tmp") && !text.contains(&token(&h.endpoint)),
        "{text}"
    );
    let request = Uuid::new_v4();
    let r = c.select(&ctx, h.sessions[0], request).await;
    assert_eq!(r["ok"], true, "{r}");
    let receipt = &r["receipt"];
    assert_eq!(receipt["requestId"], request.to_string());
    assert_eq!(receipt["route"], "session");
    assert!(receipt["revision"].as_u64().unwrap() > ctx["revision"].as_u64().unwrap());
    assert_eq!(receipt["context"]["sessionId"], h.sessions[0].to_string());
    h.wait(|app| app.route == Route::Session(h.sessions[0]))
        .await;
    // The identical repeat answers the original receipt, context included.
    let again = c.select(&ctx, h.sessions[0], request).await;
    assert_eq!(again, r);
    // Same id, other arguments.
    let conflict = c.select(&ctx, h.sessions[1], request).await;
    assert_eq!(conflict["code"], "request_id_conflict");
    assert_eq!(conflict["ok"], false);
    // The revision moved with the navigation: the old one is stale.
    let stale = c.select(&ctx, h.sessions[1], Uuid::new_v4()).await;
    assert_eq!(stale["code"], "stale_revision", "{stale}");
    assert!(stale["context"]["revision"].is_u64());
    let mut wrong = ctx.clone();
    wrong["instance"] = json!(Uuid::new_v4());
    let stale = c.select(&wrong, h.sessions[1], Uuid::new_v4()).await;
    assert_eq!(stale["code"], "stale_identity");
    let fresh = quiet_context(&mut c, &h.clock).await;
    let unknown = c.select(&fresh, SessionId::new(), Uuid::new_v4()).await;
    assert_eq!(unknown["code"], "unknown_session", "{unknown}");
    // The bar counts what reached the ledger.
    h.wait(|app| app.share.as_ref().is_some_and(|s| s.used == 4))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_blocked_reason_refuses_navigation() {
    let h = shared_tui().await;
    let mut c = h.connect().await;
    // recent_input: a key press blocks for 1.5 s, with retryAfterMs.
    h.key(KeyCode::Down);
    h.wait(|app| app.last_input.is_some()).await;
    let ctx = c.context().await;
    assert!(
        ctx["blockedReasons"]
            .as_array()
            .unwrap()
            .contains(&json!("recent_input")),
        "{ctx}"
    );
    let retry = ctx["retryAfterMs"].as_u64().unwrap();
    assert!(retry > 0 && retry <= 1500);
    let r = c.select(&ctx, h.sessions[0], Uuid::new_v4()).await;
    assert_eq!(r["code"], "navigation_blocked");
    // draft: the command line holds text.
    h.key(KeyCode::Char(':'));
    h.key(KeyCode::Char('x'));
    h.wait(|app| app.command.input.as_ref().is_some_and(|i| i.text == "x"))
        .await;
    let ctx = quiet_context(&mut c, &h.clock).await;
    assert_eq!(ctx["blockedReasons"], json!(["draft"]));
    let r = c.select(&ctx, h.sessions[0], Uuid::new_v4()).await;
    assert_eq!(r["code"], "navigation_blocked");
    assert!(r["message"].as_str().unwrap().contains("draft"));
    h.key(KeyCode::Esc);
    // modal: help.
    h.key(KeyCode::Char('?'));
    h.wait(|app| app.modal.is_some()).await;
    let ctx = quiet_context(&mut c, &h.clock).await;
    assert_eq!(ctx["blockedReasons"], json!(["modal"]));
    h.key(KeyCode::Esc);
    h.wait(|app| app.modal.is_none()).await;
    let ctx = quiet_context(&mut c, &h.clock).await;
    assert_eq!(ctx["navigationBlocked"], false, "{ctx}");
    // The others are covered on the pure decision function (decide.rs).
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoke_during_validation_fences_the_navigation() {
    let h = shared_tui().await;
    let mut c = h.connect().await;
    let ctx = c.context().await;
    h.gated.store(true, std::sync::atomic::Ordering::SeqCst);
    let frame = json!({ "id": 42, "method": "select_session", "params": {
        "instance": ctx["instance"], "generation": ctx["generation"], "revision": ctx["revision"],
        "sessionId": h.sessions[0], "requestId": Uuid::new_v4(), "deadlineMs": 10_000 } });
    c.send_line(frame.to_string().as_bytes()).await;
    // Typing bumps the revision, so wait until the request is past the
    // revision check and held at the gate before touching the keyboard.
    let end = Instant::now() + Duration::from_secs(30);
    while h.held.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < end,
            "the validation never reached the gate"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Revoke from the command line while the validation waits at the gate.
    h.revoke().await;
    h.gate.notify_waiters();
    h.gated.store(false, std::sync::atomic::Ordering::SeqCst);
    // Either a `revoked` answer or a closed connection: both are final.
    if let Some(reply) = c.read().await {
        assert_eq!(reply["result"]["code"], "revoked", "{reply}");
    }
    assert!(c.read().await.is_none(), "the connection is closed");
    assert_eq!(
        h.state.lock().unwrap().route,
        Route::Home,
        "the navigation did not happen"
    );
    assert!(!h.endpoint_path.exists(), "endpoint.json is deleted");
    assert!(!h.endpoint.socket.exists(), "the socket is deleted");
    assert!(UnixStream::connect(&h.endpoint.socket).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_passing_during_validation_is_definitive() {
    let h = shared_tui().await;
    let mut c = h.connect().await;
    let ctx = c.context().await;
    h.gated.store(true, std::sync::atomic::Ordering::SeqCst);
    let params = json!({
        "instance": ctx["instance"], "generation": ctx["generation"], "revision": ctx["revision"],
        "sessionId": h.sessions[0], "requestId": Uuid::new_v4(), "deadlineMs": 200 });
    let r = c.request("select_session", params).await.unwrap();
    assert_eq!(r["result"]["code"], "deadline_exceeded", "{r}");
    h.gated.store(false, std::sync::atomic::Ordering::SeqCst);
    h.gate.notify_waiters();
    assert_eq!(h.state.lock().unwrap().route, Route::Home);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_129th_navigation_is_refused_while_reads_and_repeats_work() {
    let h = shared_tui().await;
    let mut c = h.connect().await;
    let ctx = c.context().await;
    let mut first = None;
    for i in 0..NAVIGATION_LIMIT {
        let mut stale = ctx.clone();
        stale["revision"] = json!(0);
        let id = Uuid::from_u128(i as u128 + 1);
        let r = c.select(&stale, h.sessions[0], id).await;
        assert_eq!(r["code"], "stale_revision");
        first.get_or_insert((stale, id, r));
    }
    let fresh = c.context().await;
    assert_eq!(fresh["navigationsUsed"], NAVIGATION_LIMIT);
    let over = c.select(&fresh, h.sessions[0], Uuid::new_v4()).await;
    assert_eq!(over["code"], "limit_reached", "{over}");
    let (stale, id, original) = first.unwrap();
    assert_eq!(
        c.select(&stale, h.sessions[0], id).await,
        original,
        "repeats still answer"
    );
}
