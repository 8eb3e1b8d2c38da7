//! Project archives coming back in: from the CLI (`quire projects import`)
//! and HTTP, always as a new project with a new id; archives written by
//! Python's `zipfile` with escaping paths or symlinks are refused and leave
//! nothing behind.

use std::process::Command;

use serde_json::Value;

use crate::core_base::TestCore;
use crate::harness::Sandbox;
use crate::http_support::TestServer;

pub async fn archive_of_a_project() -> (Vec<u8>, quire_model::ids::ProjectId) {
    let t = TestCore::new();
    let id = t.session("Archived 第一話");
    t.core
        .import_text(id, "p1", "Hello", Some("en"))
        .await
        .unwrap();
    let project = t.core.session(id).unwrap().project_id;
    (crate::core_base::archive_bytes(&t.core, id).await, project)
}

#[tokio::test]
async fn the_cli_imports_an_archive_as_a_new_project_each_time() {
    let (bytes, original) = archive_of_a_project().await;
    let s = Sandbox::new();
    let file = s.root().join("ch1.quire.zip");
    std::fs::write(&file, &bytes).unwrap();
    for _ in 0..2 {
        let out = s
            .quire()
            .args(["projects", "import"])
            .args([&file])
            .run()
            .success();
        assert!(
            out.stdout().contains("imported `Archived 第一話`"),
            "{}",
            out.stdout()
        );
    }
    let list = s
        .quire()
        .args(["projects", "list", "--json"])
        .run()
        .success();
    let rows: Vec<Value> = serde_json::from_str(&list.stdout()).unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_ne!(ids[0], ids[1]);
    assert!(!ids.contains(&original.to_string().as_str()));
    // A file that is not an archive: a clear error, exit 1, nothing added.
    let junk = s.root().join("junk.zip");
    std::fs::write(&junk, b"not a zip").unwrap();
    let out = s.quire().args(["projects", "import"]).args([&junk]).run();
    assert_eq!(out.code(), 1);
    assert!(
        out.stderr().contains("not a quire archive"),
        "{}",
        out.stderr()
    );
    let list = s
        .quire()
        .args(["projects", "list", "--json"])
        .run()
        .success();
    assert_eq!(
        serde_json::from_str::<Vec<Value>>(&list.stdout())
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn archives_with_escaping_paths_or_symlinks_are_refused_over_http() {
    let Some(python) = crate::mcp::python_with(
        "archives_with_escaping_paths_or_symlinks_are_refused_over_http",
        "zipfile",
    ) else {
        return;
    };
    let (bytes, _) = archive_of_a_project().await;
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.zip");
    std::fs::write(&good, &bytes).unwrap();
    let out = Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/archive/bad_zips.py"
        ))
        .arg(dir.path())
        .arg(&good)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = TestServer::start().await;
    let projects_dir = s.core.projects_dir().to_path_buf();
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(&projects_dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let before = listing();
    for (file, expected) in [
        ("dotdot.zip", "unexpected entry `../escaped.txt`"),
        ("absolute.zip", "unexpected entry `/tmp/absolute.txt`"),
        ("nested-dotdot.zip", "unexpected entry `blobs/../../x`"),
        ("symlink.zip", "is a symbolic link"),
    ] {
        let body = std::fs::read(dir.path().join(file)).unwrap();
        let r = s
            .client
            .post(s.at("/api/v1/projects/import"))
            .header("content-type", "application/zip")
            .body(body)
            .send()
            .await
            .unwrap();
        let (status, reply) = crate::http_support::decode(r).await;
        assert_eq!(status, 422, "{file}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{file}: {message}");
        assert_eq!(listing(), before, "{file} left something behind");
        assert!(!dir.path().join("escaped.txt").exists());
    }
    // The good one comes in, under a new id.
    let r = s
        .client
        .post(s.at("/api/v1/projects/import"))
        .body(bytes)
        .send()
        .await
        .unwrap();
    let (status, session) = crate::http_support::decode(r).await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["name"], "Archived 第一話");
}

/// An import that a SIGKILL interrupted leaves its work directory; the
/// next start removes it (one of a process that still runs stays).
#[test]
fn a_start_removes_what_killed_imports_left() {
    let s = Sandbox::new();
    let projects = s.path("data/quire/projects");
    let gone = projects.join(".quire-import-4000000000-abc");
    let live = projects.join(format!(".quire-import-{}-abc", std::process::id()));
    for dir in [&gone, &live] {
        std::fs::create_dir_all(dir.join("unpacked/blobs")).unwrap();
        std::fs::write(dir.join("unpacked/scene.json"), "{}").unwrap();
    }
    let server = crate::http_support::Binary::start(&s, &["--headless", "--port", "0"], &[]);
    assert!(
        !gone.exists(),
        "the killed import's directory is still there"
    );
    assert!(live.exists(), "a running process's import was removed");
    assert!(server.terminate().success());
}
