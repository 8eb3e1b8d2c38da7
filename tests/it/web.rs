//! The web workbench at `/`: its files over HTTP (checked here), and the
//! workbench itself in a real browser: Debian's Chromium driven by
//! Playwright for Python (`tests/web/workbench.py`) against the real
//! binary, with and without a token, and axe-core's WCAG 2 rules on its
//! main screens. Screenshots land in
//! `target/tmp/web/` and are looked at by a person before a change to
//! the workbench is called done.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{Sandbox, run_checker, tool_available};
use serde_json::json;

use crate::http_support::{Binary, TestServer, assert_error};
use crate::tui_live::Tmux;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/web/workbench.py");
/// axe-core, the accessibility checker the script runs on the main screens.
const AXE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/web/node_modules/axe-core/axe.min.js"
);

/// The browser: `CHROMIUM`, else Debian's.
fn chromium() -> PathBuf {
    std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

/// The .venv Python with Playwright and the MCP SDK, and Chromium, or
/// `None` when missing and opted out (`ALLOW_MISSING_TOOLS=chromium`).
fn browser(test: &str) -> Option<PathBuf> {
    let python = crate::mcp::python_or_skip(test)?;
    let has_playwright = Command::new(&python)
        .args(["-c", "import playwright.sync_api"])
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = if !has_playwright {
        Some(format!(
            "{} cannot import playwright (./scripts/test installs it)",
            python.display()
        ))
    } else if !Path::new(AXE).exists() {
        Some(format!(
            "{AXE} is missing (./scripts/test runs npm ci in tests/web)"
        ))
    } else if !chromium().exists() {
        Some(format!(
            "{} is missing (./scripts/test installs Debian's chromium)",
            chromium().display()
        ))
    } else {
        None
    };
    tool_available("chromium", test, missing).then_some(python)
}

/// `workbench.py CHROMIUM SCENARIO TARGET OUT_DIR EXTRA…` (the URL, or the
/// binary for `restart`), not yet started.
fn scenario(python: &Path, scenario: &str, target: &str, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(python);
    cmd.arg(SCRIPT)
        .arg(chromium())
        .args([scenario, target])
        .arg(out)
        .args(extra);
    cmd
}

/// Runs a scenario to its end; it must print `web: ok`.
fn run_scenario(s: &Sandbox, python: &Path, name: &str, target: &str, out: &Path, extra: &[&str]) {
    run_checker(
        s,
        &mut scenario(python, name, target, out, extra),
        "web: ok",
    );
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("web")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A PNG screenshot of `width` × `height` (device pixels).
fn assert_screenshot(dir: &Path, name: &str, width: u32, height: u32) {
    let bytes = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let size = imagesize::blob_size(&bytes).unwrap();
    assert_eq!(
        (size.width, size.height),
        (width as usize, height as usize),
        "{name}"
    );
    assert!(
        bytes.len() > 10_000,
        "{name} is {} bytes: a blank page?",
        bytes.len()
    );
}

#[test]
fn the_workbench_in_chromium() {
    let Some(python) = browser("the_workbench_in_chromium") else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let out = out_dir("open");
    run_scenario(&s, &python, "open", &server.url, &out, &[]);
    for (name, w, h) in [
        ("home.png", 1280, 800),
        ("session.png", 1280, 800),
        ("editing.png", 1280, 800),
        ("conflict.png", 1280, 800),
        ("phone.png", 390, 844),
        ("phone-edit.png", 390, 844),
        ("readme.png", 1280, 800),
        ("rendered.png", 1280, 800),
    ] {
        assert_screenshot(&out, name, w, h);
    }
    assert!(
        std::fs::read_to_string(out.join("export.xlf"))
            .unwrap()
            .contains("<xliff")
    );
    assert!(server.terminate().success());
}

#[test]
fn the_workbench_asks_for_the_token() {
    let Some(python) = browser("the_workbench_asks_for_the_token") else {
        return;
    };
    let s = Sandbox::new();
    let token = "web-test-token-5b1f";
    let server = Binary::start(
        &s,
        &["--headless", "--port", "0"],
        &[("QUIRE_SERVER__TOKEN", token)],
    );
    let out = out_dir("token");
    run_scenario(&s, &python, "token", &server.url, &out, &[token]);
    assert_screenshot(&out, "login.png", 1280, 800);
    assert!(server.terminate().success());
}

#[test]
fn the_workbench_reconnects_after_a_restart() {
    let Some(python) = browser("the_workbench_reconnects_after_a_restart") else {
        return;
    };
    let s = Sandbox::new();
    let out = out_dir("restart");
    run_scenario(&s, &python, "restart", crate::harness::BIN, &out, &[]);
    assert_screenshot(&out, "offline.png", 1280, 800);
}

/// A command engine that needs approval: the run dialog shows its exact
/// command; it starts only when the server lets HTTP clients run it
/// (`engines.allow_unattended`) and the person ticks that they read it.
#[test]
fn an_engine_that_runs_a_program_shows_its_command_and_asks() {
    let Some(python) = browser("an_engine_that_runs_a_program_shows_its_command_and_asks") else {
        return;
    };
    for (allowed, answer) in [(false, "refused"), (true, "allowed")] {
        let s = Sandbox::new();
        s.user_config(&format!(
            "[engines]\nallow_unattended = {allowed}\n\n[engines.stamp]\nstage = \"check\"\n\
             description = \"Reads the page and changes nothing\"\ncommand = [\"sed\", \"-n\", \"d\"]\n\
             input = \"page-json\"\noutput = \"ops\"\nrequires_approval = true\n"
        ));
        let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
        let out = out_dir(&format!("approval-{answer}"));
        run_scenario(&s, &python, "approval", &server.url, &out, &[answer]);
        assert_screenshot(&out, "approval.png", 1280, 800);
        assert!(server.terminate().success());
    }
}

/// One project, three clients at once: the browser's edit shows in a TUI
/// attached to the same server (`quire attach`, in tmux) and to an MCP
/// client; the TUI's edit shows in the browser.
#[test]
fn the_browser_the_tui_and_an_agent_share_a_project() {
    let Some(python) = browser("the_browser_the_tui_and_an_agent_share_a_project") else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let client = crate::harness::blocking_client();
    let session: serde_json::Value = client
        .post(format!("{}/api/v1/projects", server.url))
        .json(&json!({ "name": "Shared" }))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let imported = client
        .post(format!("{}/api/v1/pages", server.url))
        .json(&json!({ "name": "script", "text": "First line.\n\nSecond line.\n" }))
        .send()
        .unwrap();
    assert_eq!(imported.status(), 200);
    let name = format!("quire-web-live-{}", std::process::id());
    let Some(tmux) = Tmux::start_with(&s, &name, &format!("attach {}", server.url)) else {
        return;
    };
    tmux.wait_for("Shared");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Second line.");
    let out = out_dir("live");
    let project = session["projectId"].as_str().unwrap();
    let mut cmd = scenario(&python, "live", &server.url, &out, &[project]);
    let mut browser = s
        .isolate(&mut cmd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The script says when the browser saved and an MCP client read it back.
    let mut lines = BufReader::new(browser.stdout.take().unwrap()).lines();
    let saved = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l == "web: saved");
    tmux.wait_for("Depuis le navigateur");
    assert!(saved, "the browser script ended before saving");
    tmux.keys(&["Tab", "G", "e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&["-l", "From the TUI"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("translation saved");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let done = browser.wait_with_output().unwrap();
    assert!(
        done.status.success() && rest.iter().any(|l| l == "web: ok"),
        "{rest:?}\n{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_screenshot(&out, "live.png", 1280, 800);
    assert!(server.terminate().success());
}

#[tokio::test]
async fn the_files_are_served_without_the_token_and_revalidated() {
    let server = TestServer::with(
        |c| c.server.token = quire::config::secret::Secret::new("t0ken"),
        None,
    )
    .await;
    let client = crate::harness::http_client();
    let page = client.get(server.at("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert!(page.text().await.unwrap().contains("/assets/js/main.js"));
    let etag = headers["etag"].clone();
    let again = client
        .get(server.at("/"))
        .header("If-None-Match", etag.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"], etag);
    let script = client
        .get(server.at("/assets/js/main.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(script.status(), 200);
    assert_eq!(
        script.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    // Data still needs the token; a missing file is the API's JSON 404.
    let data = client
        .get(server.at("/api/v1/projects"))
        .send()
        .await
        .unwrap();
    assert_eq!(data.status(), 401);
    let missing = client
        .get(server.at("/assets/nope.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let body: serde_json::Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");
    // The files pass the Host and Origin checks like every route.
    let foreign = client
        .get(server.at("/"))
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
}

/// A PNG of `width` × `height` drawn with the `image` crate.
fn png(width: u32, height: u32) -> Vec<u8> {
    let picture = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    picture.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test]
async fn thumbnails_are_scaled_immutable_and_revalidated() {
    let server = TestServer::start().await;
    let (status, _) = server
        .post("/api/v1/projects", json!({ "name": "thumbs" }))
        .await;
    assert_eq!(status, 200);
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(png(600, 900)).file_name("tall.png"),
    );
    let r = server
        .client
        .post(server.at("/api/v1/pages"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let scene = server.scene().await;
    let node = &scene["scene"]["pages"][0]["nodes"][0]["kind"];
    let hash = node["blob"].as_str().unwrap().to_owned();
    let epoch = scene["epoch"].clone();
    let path = format!("/api/v1/blobs/{hash}?maxSide=128");
    let thumb = server.client.get(server.at(&path)).send().await.unwrap();
    assert_eq!(thumb.status(), 200);
    let headers = thumb.headers().clone();
    assert_eq!(headers["content-type"], "image/jpeg");
    assert_eq!(
        headers["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(headers["etag"].to_str().unwrap(), format!("\"{hash}-128\""));
    let bytes = thumb.bytes().await.unwrap();
    let size = imagesize::blob_size(&bytes).unwrap();
    assert_eq!((size.width, size.height), (85, 128));
    let again = server
        .client
        .get(server.at(&path))
        .header("If-None-Match", headers["etag"].clone())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());
    // The original keeps its own ETag.
    let original = server
        .client
        .get(server.at(&format!("/api/v1/blobs/{hash}")))
        .send()
        .await
        .unwrap();
    assert_eq!(
        original.headers()["etag"].to_str().unwrap(),
        format!("\"{hash}\"")
    );
    assert_eq!(original.bytes().await.unwrap().len(), png(600, 900).len());
    // Bad sizes and unknown parameters are refused; nothing changes.
    for (query, status, code) in [
        ("maxSide=4", 422, "invalid_input"),
        ("maxSide=99999", 422, "invalid_input"),
        ("maxSide=big", 400, "bad_query"),
        ("width=10", 400, "bad_query"),
    ] {
        let got = server.get(&format!("/api/v1/blobs/{hash}?{query}")).await;
        assert_error(&got, status, code);
    }
    assert_eq!(server.scene().await["epoch"], epoch);
}

#[tokio::test]
async fn a_token_in_the_query_string_is_refused_and_changes_nothing() {
    let server = TestServer::with(
        |c| c.server.token = quire::config::secret::Secret::new("s3cret"),
        None,
    )
    .await;
    for query in ["access_token=s3cret", "token=s3cret", "TOKEN=s3cret&x=1"] {
        let r = server
            .client
            .post(server.at(&format!("/api/v1/projects?{query}")))
            .bearer_auth("s3cret")
            .json(&json!({ "name": "via-query" }))
            .send()
            .await
            .unwrap();
        let got = crate::http_support::decode(r).await;
        assert_error(&got, 400, "token_in_query");
    }
    let r = server
        .client
        .get(server.at("/api/v1/projects"))
        .bearer_auth("s3cret")
        .send()
        .await
        .unwrap();
    let (status, projects) = crate::http_support::decode(r).await;
    assert_eq!((status, projects), (200, json!([])));
}

/// What the workbench reads after a change: the stream names the pages an
/// op changed, and `scene.json?pages=` reads just those.
#[tokio::test]
async fn the_stream_names_changed_pages_and_the_scene_reads_just_those() {
    let server = TestServer::start().await;
    let (status, _) = server
        .post("/api/v1/projects", json!({ "name": "deltas" }))
        .await;
    assert_eq!(status, 200);
    for name in ["one", "two"] {
        let (status, _) = server
            .post(
                "/api/v1/pages",
                json!({ "name": name, "text": "Hello.\n\nBye." }),
            )
            .await;
        assert_eq!(status, 200);
    }
    let scene = server.scene().await;
    let pages = scene["scene"]["pages"].as_array().unwrap().clone();
    let (first, second) = (pages[0]["id"].clone(), pages[1]["id"].clone());
    let node = pages[1]["nodes"][0]["id"].clone();
    let epoch = scene["epoch"].as_u64().unwrap();
    let mut sse =
        crate::http_support::SseReader::connect(&server.client, &server.at("/api/v1/events"), None)
            .await;
    let (status, _) = server
        .post(
            "/api/v1/history/apply",
            json!({ "type": "UpdateNode", "page": second, "id": node,
                    "patch": { "kind": { "type": "text", "translation": "Salut." } } }),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = server
        .post(
            "/api/v1/history/apply",
            json!({ "type": "ReorderPages", "order": [second, first] }),
        )
        .await;
    assert_eq!(status, 200);
    let advanced: Vec<_> = sse
        .until(|e| e.event == "SceneAdvanced" && e.data["epoch"] == epoch + 2)
        .await
        .into_iter()
        .filter(|e| e.event == "SceneAdvanced")
        .collect();
    assert_eq!(
        advanced.len(),
        2,
        "{:?}",
        advanced.iter().map(|e| &e.data).collect::<Vec<_>>()
    );
    assert_eq!(advanced[0].data["pages"], json!([second]));
    assert!(
        advanced[1].data.get("pages").is_none(),
        "{}",
        advanced[1].data
    );

    let (status, just) = server
        .get(&format!(
            "/api/v1/scene.json?pages={}",
            second.as_str().unwrap()
        ))
        .await;
    assert_eq!(status, 200);
    assert_eq!(just["epoch"], epoch + 2);
    let kept = just["scene"]["pages"].as_array().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["nodes"][0]["kind"]["translation"], "Salut.");
    let (status, both) = server
        .get(&format!(
            "/api/v1/scene.json?pages={},{}",
            first.as_str().unwrap(),
            second.as_str().unwrap()
        ))
        .await;
    assert_eq!(status, 200);
    assert_eq!(both["scene"]["pages"][0]["id"], second, "scene order");
    // An unknown page, a malformed id, an unknown parameter: refused.
    let unknown = "0190d2a0-0000-7000-8000-000000000001";
    assert_error(
        &server
            .get(&format!("/api/v1/scene.json?pages={unknown}"))
            .await,
        404,
        "not_found",
    );
    assert_error(
        &server.get("/api/v1/scene.json?pages=nope").await,
        404,
        "not_found",
    );
    assert_error(
        &server.get("/api/v1/scene.json?page=x").await,
        400,
        "bad_query",
    );
}
