//! A team's data kept safe: a backup under load, an archive with its
//! history on another server, gc.

use super::*;

/// `quire backup` while a client keeps writing (and snapshots keep
/// truncating the log), restored into a fresh data directory: the same
/// project id, every op acknowledged before the backup began, and the
/// whole undo history, step by step.
#[test]
fn a_backup_under_load_restores_every_acknowledged_op_and_its_undo() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    let s = Sandbox::new();
    let config = s.write(
        "small-snapshots.toml",
        "[storage]\nsnapshot_every_ops = 25\n",
    );
    let config = config.to_str().unwrap().to_owned();
    let data = s.path("data1");
    let data = data.to_str().unwrap().to_owned();
    let server = Binary::start(
        &s,
        &[
            "--config",
            &config,
            "--data-dir",
            &data,
            "--headless",
            "--port",
            "0",
        ],
        &[],
    );
    let c = Arc::new(server.client());
    let (_, session) = c.call(
        "POST",
        "/api/v1/projects",
        "-",
        Some(json!({"name": "Ch 1"})),
    );
    let id = session["id"].as_str().unwrap().to_owned();
    let project = session["projectId"].as_str().unwrap().to_owned();
    let prefix = format!("/api/v1/sessions/{id}");
    let text: Vec<String> = (0..40).map(|i| format!("Line {i}.")).collect();
    let (status, _) = c.call(
        "POST",
        &format!("{prefix}/pages"),
        "-",
        Some(json!({"name": "p1", "text": text.join("\n\n")})),
    );
    assert_eq!(status, 200);
    let (_, scene) = c.call("GET", &format!("{prefix}/scene.json"), "-", None);
    let (page, nodes) = first_page(&scene);
    // The writer: each acknowledged op's epoch, as it is acknowledged.
    let acked = Arc::new(AtomicU64::new(0));
    let log = Arc::new(Mutex::new(Vec::new()));
    let writer = {
        let (c, acked, log, prefix) = (c.clone(), acked.clone(), log.clone(), prefix.clone());
        std::thread::spawn(move || {
            for i in 0..300 {
                let node = &nodes[i % nodes.len()];
                let (status, body) = c.call(
                    "POST",
                    &format!("{prefix}/history/apply"),
                    "-",
                    Some(translate(&page, node, &format!("t{i}"))),
                );
                assert_eq!(status, 200, "{body}");
                let epoch = body["epoch"].as_u64().unwrap();
                log.lock()
                    .unwrap()
                    .push((node.clone(), format!("t{i}"), epoch));
                acked.store(epoch, Ordering::SeqCst);
            }
        })
    };
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while acked.load(Ordering::SeqCst) < 80 {
        assert!(std::time::Instant::now() < end, "the writer stalled");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let before = acked.load(Ordering::SeqCst);
    let tar = s.path("nightly.tar");
    let backup = s
        .quire()
        .args([
            "--data-dir",
            &data,
            "backup",
            "--out",
            tar.to_str().unwrap(),
        ])
        .run()
        .success();
    assert!(
        backup.stdout().contains("Ch 1: epoch"),
        "{}",
        backup.stdout()
    );
    writer.join().unwrap();
    assert!(server.terminate().success());

    // Restored into a fresh data directory.
    let fresh = s.path("data2");
    let fresh = fresh.to_str().unwrap().to_owned();
    let restored = s
        .quire()
        .args(["--data-dir", &fresh, "restore", tar.to_str().unwrap()])
        .run()
        .success();
    assert!(
        restored.stdout().contains("restored 1 projects"),
        "{}",
        restored.stdout()
    );
    restored_files_are_the_owners_only_and_a_second_restore_is_refused(&s, &tar, &fresh);

    let server = Binary::start(
        &s,
        &["--data-dir", &fresh, "--headless", "--port", "0"],
        &[],
    );
    let c = server.client();
    let (status, session) = c.call(
        "POST",
        "/api/v1/sessions",
        "-",
        Some(json!({"id": project})),
    );
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["projectId"], project.as_str());
    let id = session["id"].as_str().unwrap().to_owned();
    let prefix = format!("/api/v1/sessions/{id}");
    let (_, scene) = c.call("GET", &format!("{prefix}/scene.json"), "-", None);
    let epoch = scene["epoch"].as_u64().unwrap();
    assert!(
        epoch >= before,
        "restored at epoch {epoch}, before the backup {before} were acknowledged"
    );
    the_scene_is_the_one_at_its_epoch(&scene, &log.lock().unwrap(), epoch);
    assert_eq!(
        undo_to_the_start(&c, &prefix),
        epoch,
        "undo steps after the restore"
    );
    assert!(server.terminate().success());
}

/// What quire made is its owner's only: the data and projects directories
/// it created, each project, and the backup. Restoring twice is refused,
/// and changes nothing.
fn restored_files_are_the_owners_only_and_a_second_restore_is_refused(
    s: &Sandbox,
    tar: &std::path::Path,
    fresh: &str,
) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        for dir in [
            "data1",
            "data1/projects",
            "data2",
            "data2/projects",
            "data2/projects/ch-1",
        ] {
            assert_eq!(mode(&s.path(dir)), 0o700, "{dir}");
        }
        assert_eq!(mode(tar), 0o600);
    }
    let before_again = s.snapshot();
    s.quire()
        .args(["--data-dir", fresh, "restore", tar.to_str().unwrap()])
        .run()
        .fails(2, &["nothing restored", "Ch 1 (directory ch-1)"]);
    assert_eq!(before_again, s.snapshot());
}

/// The scene is the one at its epoch: each node's last translation by
/// then, of what the writer logged (node, text, epoch acknowledged).
fn the_scene_is_the_one_at_its_epoch(scene: &Value, written: &[(String, String, u64)], epoch: u64) {
    for node in scene["scene"]["pages"][0]["nodes"].as_array().unwrap() {
        let expected = written
            .iter()
            .rfind(|(n, _, e)| n == node["id"].as_str().unwrap() && *e <= epoch)
            .map(|(_, t, _)| t.clone());
        assert_eq!(
            node["kind"]["translation"].as_str().map(str::to_owned),
            expected
        );
    }
}

/// Undoes every change in the session at `prefix`, back to the empty
/// project; how many steps that took.
fn undo_to_the_start(c: &Client, prefix: &str) -> u64 {
    let mut undone = 0;
    loop {
        let (status, step) = c.call("POST", &format!("{prefix}/history/undo"), "-", None);
        assert_eq!(status, 200, "{step}");
        if step["epoch"].is_null() {
            break;
        }
        undone += 1;
    }
    undone
}

/// An archive exported with `history: true` and imported on another
/// server keeps its undo, step by step; without it there is nothing to
/// undo; asking for history on another format is refused.
#[test]
fn an_archive_with_its_history_keeps_its_undo_on_another_server() {
    let s = Sandbox::new();
    let start = |dir: &str| {
        let data = s.path(dir);
        Binary::start(
            &s,
            &[
                "--data-dir",
                data.to_str().unwrap(),
                "--headless",
                "--port",
                "0",
            ],
            &[],
        )
    };
    let first = start("first");
    let c = first.client();
    let (_, session) = c.call(
        "POST",
        "/api/v1/projects",
        "-",
        Some(json!({"name": "Moved"})),
    );
    let prefix = format!("/api/v1/sessions/{}", session["id"].as_str().unwrap());
    c.call(
        "POST",
        &format!("{prefix}/pages"),
        "-",
        Some(json!({"name": "p1", "text": "One.\n\nTwo.\n\nThree."})),
    );
    let (_, scene) = c.call("GET", &format!("{prefix}/scene.json"), "-", None);
    let page = scene["scene"]["pages"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for (i, node) in scene["scene"]["pages"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let op = translate(&page, node["id"].as_str().unwrap(), &format!("t{i}"));
        assert_eq!(
            c.call("POST", &format!("{prefix}/history/apply"), "-", Some(op))
                .0,
            200
        );
    }
    let (status, body) = c.call(
        "POST",
        &format!("{prefix}/export"),
        "-",
        Some(json!({"format": "markdown", "history": true})),
    );
    assert_eq!(status, 422, "{body}");
    let export = |history: bool| {
        c.http
            .post(format!("{}{prefix}/export", c.url))
            .json(&json!({"format": "archive", "history": history}))
            .send()
            .unwrap()
            .bytes()
            .unwrap()
            .to_vec()
    };
    let (with, without) = (export(true), export(false));
    assert!(first.terminate().success());

    let second = start("second");
    let c = second.client();
    let import = |bytes: Vec<u8>| {
        let response = c
            .http
            .post(format!("{}/api/v1/projects/import", c.url))
            .header("content-type", "application/zip")
            .body(bytes)
            .send()
            .unwrap();
        assert_eq!(response.status(), 200);
        let session: Value = response.json().unwrap();
        format!("/api/v1/sessions/{}", session["id"].as_str().unwrap())
    };
    let kept = import(with);
    let labels: Vec<String> = std::iter::from_fn(|| {
        let (_, step) = c.call("POST", &format!("{kept}/history/undo"), "-", None);
        step["label"].as_str().map(str::to_owned)
    })
    .collect();
    assert_eq!(labels.len(), 4, "{labels:?}");
    assert!(labels[3].starts_with("import text p1"), "{labels:?}");
    let (_, scene) = c.call("GET", &format!("{kept}/scene.json"), "-", None);
    assert_eq!(
        scene["scene"]["pages"].as_array().unwrap().len(),
        0,
        "{scene}"
    );
    let bare = import(without);
    let (_, step) = c.call("POST", &format!("{bare}/history/undo"), "-", None);
    assert!(step["epoch"].is_null(), "{step}");
    assert!(second.terminate().success());
}

/// `quire gc` removes the blobs nothing refers to (what an aborted import
/// left) and keeps every one the scene or its history uses; a project open
/// in a server is left alone.
#[test]
fn gc_removes_only_blobs_nothing_refers_to() {
    let s = Sandbox::new();
    let data = s.path("data");
    let data = data.to_str().unwrap().to_owned();
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(8, 6, image::Rgb([9, 80, 200])))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let page = s.path("page.png");
    std::fs::write(&page, png.into_inner()).unwrap();
    s.quire()
        .args([
            "--data-dir",
            &data,
            "projects",
            "import",
            page.to_str().unwrap(),
        ])
        .run()
        .success();
    let blobs = s.path("data/projects/page/blobs");
    let list = || {
        let mut found: Vec<String> = walk(&blobs);
        found.sort();
        found
    };
    let used = list();
    assert_eq!(used.len(), 1, "{used:?}");
    // What an import killed before its op was applied leaves behind.
    let orphan = |n: char| {
        let path = blobs.join("ab").join(n.to_string().repeat(62));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"never used").unwrap();
        path
    };
    let first = orphan('c');
    let done = s.quire().args(["--data-dir", &data, "gc"]).run().success();
    assert!(
        done.stdout()
            .contains("page: removed 1 unreferenced blobs (10 bytes)"),
        "{}",
        done.stdout()
    );
    assert!(!first.exists());
    assert_eq!(list(), used);
    // Opening the project removes them too.
    let second = orphan('d');
    let mut server = Binary::start(&s, &["--data-dir", &data, "--headless", "--port", "0"], &[]);
    let c = server.client();
    let (_, projects) = c.call("GET", "/api/v1/projects", "-", None);
    let id = projects[0]["id"].clone();
    assert_eq!(
        c.call("POST", "/api/v1/sessions", "-", Some(json!({"id": id})))
            .0,
        200
    );
    server.wait_for_log("removed 1 blobs (10 bytes) nothing in");
    assert!(!second.exists());
    // An open project is its server's.
    let third = orphan('e');
    let busy = s.quire().args(["--data-dir", &data, "gc"]).run().success();
    assert!(
        busy.stdout().contains("page: open elsewhere; left alone"),
        "{}",
        busy.stdout()
    );
    assert!(third.exists());
    assert!(server.terminate().success());
    let mut kept = list();
    kept.retain(|p| !p.ends_with(&"e".repeat(62)));
    assert_eq!(kept, used);
}
