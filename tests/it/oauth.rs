//! `[server.oauth]`: quire as an OAuth resource server (`05-mcp.md`,
//! "Authorization"), with bearer JWTs signed by PyJWT (not by quire's own
//! code) and their keys served as a JWKS over HTTP, beside a static token.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::harness::Sandbox;
use crate::http_support::{Binary, Client};

const ISSUER: &str = "https://id.example.test/realms/team";
const AUDIENCE: &str = "http://quire.example.test/mcp";
const OWNER: &str = "owner-static-token-7c1e";

/// Serves `file` at any path on 127.0.0.1, counting requests; its URL.
fn serve_jwks(file: std::path::PathBuf, fetches: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/certs", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            fetches.fetch_add(1, Ordering::SeqCst);
            let body = std::fs::read(&file).unwrap();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    url
}

/// The tokens `tests/mcp_oauth/tokens.py` makes for `spec` (and the JWKS
/// it writes into `dir`).
fn tokens(dir: &Path, spec: &Value) -> Option<serde_json::Map<String, Value>> {
    let python = crate::mcp::python_with("oauth_tokens", "jwt, cryptography")?;
    let mut child = Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/mcp_oauth/tokens.py"
        ))
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "tokens.py failed");
    serde_json::from_slice(&out.stdout).ok()
}

fn token(alg: &str, kid: &str, claims: Value) -> Value {
    json!({ "alg": alg, "kid": kid, "claims": claims })
}

/// Every accepted algorithm signs in (the user and role from the claims),
/// the static token still works beside them, each bad token is `401
/// invalid_token` with a challenge naming the metadata and changes
/// nothing, a token without a role is `403 forbidden_role`, the metadata
/// answers without a token, and an edit names the token's user, over the
/// API and over `/mcp`.
#[test]
fn bearer_jwts_of_the_team_s_identity_provider_sign_in_and_bad_ones_change_nothing() {
    let s = Sandbox::new();
    let keys = s.path("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let spec = token_spec();
    let Some(tokens) = tokens(&keys, &spec) else {
        return;
    };
    let t = |name: &str| tokens[name].as_str().unwrap().to_owned();
    let fetches = Arc::new(AtomicUsize::new(0));
    let jwks_url = serve_jwks(keys.join("jwks.json"), fetches.clone());
    let mut server = Binary::headless_with_config(
        &s,
        "oauth.toml",
        &format!(
            "[server]\ntoken = \"{OWNER}\"\n\n[server.oauth]\nissuer = \"{ISSUER}\"\n\
             audience = \"{AUDIENCE}\"\njwks_url = \"{jwks_url}\"\n\
             user_claim = \"preferred_username\"\nrole_claim = \"quire_role\"\n"
        ),
    );
    let c = server.client();
    let authority = c.url.trim_start_matches("http://").to_owned();

    // The metadata, without a token, at both places.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let reply = c.http.get(format!("{}{path}", c.url)).send().unwrap();
        assert_eq!(reply.status(), 200, "{path}");
        let metadata: Value = reply.json().unwrap();
        assert_eq!(
            metadata,
            json!({ "resource": AUDIENCE, "authorization_servers": [ISSUER],
                    "bearer_methods_supported": ["header"] })
        );
    }
    // No credential: a 401 that says where to sign in (for /mcp, its own).
    for (path, metadata) in [
        ("/api/v1/sessions", "/.well-known/oauth-protected-resource"),
        ("/mcp", "/.well-known/oauth-protected-resource/mcp"),
    ] {
        let reply = c
            .http
            .post(format!("{}{path}", c.url))
            .header("Accept", "application/json, text/event-stream")
            .json(&json!({}))
            .send()
            .unwrap();
        assert_eq!(reply.status(), 401, "{path}");
        let challenge = reply.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            challenge,
            format!(r#"Bearer resource_metadata="http://{authority}{metadata}""#)
        );
    }

    // Each algorithm signs in as the claims say.
    for name in ["rs256", "ps256", "es256", "eddsa"] {
        let (status, meta) = c.call("GET", "/api/v1/meta", &t(name), None);
        assert_eq!(status, 200, "{name}: {meta}");
        assert_eq!(
            (meta["user"].as_str(), meta["role"].as_str()),
            (Some("ana"), Some("edit")),
            "{name}"
        );
    }
    let (_, meta) = c.call("GET", "/api/v1/meta", &t("admin"), None);
    assert_eq!(
        (meta["user"].as_str(), meta["role"].as_str()),
        (Some("bo"), Some("admin"))
    );
    let (_, meta) = c.call("GET", "/api/v1/meta", OWNER, None);
    assert_eq!(meta["user"], "owner", "the static token works beside them");
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        1,
        "the JWKS is fetched once"
    );

    // A valid token without a role is forbidden, not unauthorized.
    let (status, body) = c.call("GET", "/api/v1/meta", &t("no_role"), None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("forbidden_role")),
        "{body}"
    );

    bad_tokens_are_refused_and_change_nothing(&c, &t);
    // Within a minute of the last fetch, an unknown kid fetches nothing
    // (the rotation itself: `oauth::tests`).
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
    // Refusals are logged with their reason, never the token.
    let line = server.wait_for_log("an OAuth token refused: a wrong audience");
    assert!(line.contains("authentication failed"), "{line}");
    for line in server.log() {
        assert!(
            !line.contains(&t("wrong_audience")),
            "a token in the log: {line}"
        );
    }

    edits_name_the_tokens_user(&c, &t);
    assert!(server.terminate().success());
}

/// The tokens the test's identity provider signs: four algorithms as ana
/// (edit), bo as admin with roles quire does not know beside, one without
/// a role, and every way a token can be wrong.
fn token_spec() -> Value {
    let ana = json!({ "sub": "ana-uuid", "preferred_username": "ana", "quire_role": "edit" });
    let bo = json!({ "preferred_username": "bo", "quire_role": ["read", "admin", "astronaut"] });
    json!({ "issuer": ISSUER, "audience": AUDIENCE, "tokens": {
        "rs256": token("RS256", "rsa", ana.clone()),
        "ps256": token("PS256", "rsa", ana.clone()),
        "es256": token("ES256", "ec", ana.clone()),
        "eddsa": token("EdDSA", "ed", ana.clone()),
        "admin": token("EdDSA", "ed", bo),
        "no_role": token("ES256", "ec", json!({ "preferred_username": "cy" })),
        "wrong_audience": token("ES256", "ec", json!({ "aud": "https://other.example/mcp", "preferred_username": "ana", "quire_role": "admin" })),
        "wrong_issuer": token("ES256", "ec", json!({ "iss": "https://evil.example", "preferred_username": "ana", "quire_role": "admin" })),
        "expired": { "alg": "ES256", "kid": "ec", "exp_in": -3600, "claims": { "preferred_username": "ana", "quire_role": "admin" } },
        "alg_none": token("none", "ed", json!({ "preferred_username": "ana", "quire_role": "admin" })),
        "hmac": token("HS256", "ed", json!({ "preferred_username": "ana", "quire_role": "admin" })),
        "unknown_kid": token("EdDSA", "gone", json!({ "preferred_username": "ana", "quire_role": "admin" })),
        "bad_signature": { "alg": "RS256", "kid": "rsa", "tamper": true, "claims": { "preferred_username": "ana", "quire_role": "admin" } },
        "oversized": token("EdDSA", "ed", json!({ "preferred_username": "ana", "quire_role": "admin", "pad": 12000 })),
    }})
}

/// Every bad token: 401 invalid_token with its reason, never echoed, and
/// the project it asked for is not created.
fn bad_tokens_are_refused_and_change_nothing(c: &Client, t: &dyn Fn(&str) -> String) {
    let bad = [
        ("wrong_audience", "a wrong audience"),
        ("wrong_issuer", "a wrong issuer"),
        ("expired", "it has expired"),
        ("alg_none", "not a JWT quire accepts"),
        ("hmac", "signed with HS256"),
        ("unknown_kid", "its key `gone` is not in the JWKS"),
        ("bad_signature", "a bad signature"),
        ("oversized", "bytes (at most 8192)"),
        ("garbage", "missing or wrong bearer token"),
    ];
    for (name, why) in bad {
        let token = if name == "garbage" {
            "not-a-jwt-nor-a-token".to_owned()
        } else {
            t(name)
        };
        let reply = c
            .http
            .post(format!("{}/api/v1/projects", c.url))
            .bearer_auth(&token)
            .json(&json!({ "name": format!("made by {name}") }))
            .send()
            .unwrap();
        assert_eq!(reply.status(), 401, "{name}");
        let challenge = reply.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            challenge.ends_with(r#", error="invalid_token""#),
            "{name}: {challenge}"
        );
        let body: Value = reply.json().unwrap();
        assert_eq!(body["error"]["code"], "invalid_token", "{name}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{name}: {message}");
        assert!(
            !message.contains(&token),
            "{name}: the token is never echoed"
        );
    }
    let (_, projects) = c.call("GET", "/api/v1/projects", OWNER, None);
    assert_eq!(projects, json!([]), "no bad token created anything");
}

/// Edits name the token's user: over the API a person's, over /mcp an
/// agent's working for that user.
fn edits_name_the_tokens_user(c: &Client, t: &dyn Fn(&str) -> String) {
    let (status, session) = c.call(
        "POST",
        "/api/v1/projects",
        &t("admin"),
        Some(json!({"name": "Signed"})),
    );
    assert_eq!(status, 200, "{session}");
    let prefix = format!("/api/v1/sessions/{}", session["id"].as_str().unwrap());
    let (status, body) = c.call(
        "POST",
        &format!("{prefix}/pages"),
        &t("eddsa"),
        Some(json!({"name": "p1", "text": "One.\n\nTwo."})),
    );
    assert_eq!(status, 200, "{body}");
    let (_, scene) = c.call("GET", &format!("{prefix}/scene.json"), &t("eddsa"), None);
    let page = scene["scene"]["pages"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let node = |i: usize| {
        scene["scene"]["pages"][0]["nodes"][i]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let translate = |node: &str, text: &str| {
        json!({ "type": "UpdateNode", "page": page, "id": node,
                "patch": { "kind": { "type": "text", "translation": text } } })
    };
    let (status, body) = c.call(
        "POST",
        &format!("{prefix}/history/apply"),
        &t("es256"),
        Some(translate(&node(0), "Um.")),
    );
    assert_eq!(status, 200, "{body}");
    let mcp = |frame: Value, session: Option<&str>| {
        let mut request = c
            .http
            .post(format!("{}/mcp", c.url))
            .bearer_auth(t("rs256"))
            .header("Accept", "application/json, text/event-stream")
            .json(&frame);
        if let Some(id) = session {
            request = request
                .header("Mcp-Session-Id", id)
                .header("Mcp-Protocol-Version", "2025-11-25");
        }
        request.send().unwrap()
    };
    let opened = mcp(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "signed-agent", "version": "2.1" } } }),
        None,
    );
    assert_eq!(opened.status(), 200);
    let mcp_session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    mcp(
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        Some(&mcp_session),
    );
    let reply = mcp(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "quire_apply", "arguments": {
                "sessionId": session["id"], "op": translate(&node(1), "Dois.") } } }),
        Some(&mcp_session),
    );
    let text = reply.text().unwrap();
    assert!(text.contains("\"epoch\""), "{text}");
    let (_, scene) = c.call("GET", &format!("{prefix}/scene.json"), OWNER, None);
    let origin = |i: usize| scene["scene"]["pages"][0]["nodes"][i]["kind"]["origin"].clone();
    assert_eq!(
        (origin(0)["by"].as_str(), origin(0)["user"].as_str()),
        (Some("human"), Some("ana"))
    );
    assert_eq!(
        (
            origin(1)["by"].as_str(),
            origin(1)["user"].as_str(),
            origin(1)["client"].as_str()
        ),
        (Some("agent"), Some("ana"), Some("signed-agent 2.1"))
    );
}

/// Without `[server.oauth]` the metadata is not there and a 401 names no
/// metadata; a config that breaks rule 1 is refused naming its key.
#[test]
fn without_oauth_no_metadata_and_a_wrong_oauth_config_names_its_key() {
    let s = Sandbox::new();
    let server = Binary::headless_with_config(
        &s,
        "plain.toml",
        &format!("[server]\ntoken = \"{OWNER}\"\n"),
    );
    let c = server.client();
    let reply = c
        .http
        .get(format!("{}/.well-known/oauth-protected-resource", c.url))
        .send()
        .unwrap();
    assert_eq!(reply.status(), 404);
    let reply = c
        .http
        .get(format!("{}/api/v1/sessions", c.url))
        .send()
        .unwrap();
    assert_eq!(reply.status(), 401);
    assert_eq!(reply.headers()["www-authenticate"], "Bearer");
    assert!(server.terminate().success());

    let jwks = s.write("jwks.json", r#"{"keys": []}"#);
    let broken = s.write("broken.json", "{ not json");
    let base = format!("[server.oauth]\nissuer = \"{ISSUER}\"\naudience = \"{AUDIENCE}\"\n");
    for (extra, key) in [
        (String::new(), "server.oauth.jwks_url"),
        (
            format!(
                "jwks_url = \"https://id.example/certs\"\njwks_file = \"{}\"\n",
                jwks.display()
            ),
            "server.oauth.jwks_url",
        ),
        (
            "jwks_url = \"http://id.example/certs\"\n".to_owned(),
            "server.oauth.jwks_url",
        ),
        (
            format!("jwks_file = \"{}\"\n", broken.display()),
            "server.oauth.jwks_file",
        ),
        (
            format!("jwks_file = \"{}\"\nuser_claim = \"\"\n", jwks.display()),
            "server.oauth.user_claim",
        ),
    ] {
        let file = s.write("bad.toml", &format!("{base}{extra}"));
        s.quire()
            .args(["--config", file.to_str().unwrap(), "config", "check"])
            .run()
            .fails(2, &[key]);
    }
    let missing = s.write(
        "no-issuer.toml",
        &format!(
            "[server.oauth]\naudience = \"{AUDIENCE}\"\njwks_file = \"{}\"\n",
            jwks.display()
        ),
    );
    s.quire()
        .args(["--config", missing.to_str().unwrap(), "config", "check"])
        .run()
        .fails(2, &["issuer"]);
}
