//! Nothing silent on disk: a deleted `.lock` does not free a project, a log
//! written behind the writer's back stops it, a missing `ops.log` or a
//! changed byte in `scene.json` is refused, temporary files left by a crash
//! go at the next open, and every project file is owner-only.

use std::path::{Path, PathBuf};

use quire_core::Core;
use quire_store::Durability;

use crate::support::{TestCore, add_page, core_at, settings, unclosed_project};

/// Every file and directory of a project, with its content (files) or
/// `None` (directories), sorted.
fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.push((path.clone(), None));
                stack.push(path);
            } else {
                out.push((path.clone(), Some(std::fs::read(&path).unwrap())));
            }
        }
    }
    out.sort();
    out
}

fn reopen_core(dir: &Path) -> Core {
    core_at(
        &dir.join("projects"),
        settings(Durability::Fsync, 1000, 500),
    )
}

#[tokio::test]
async fn a_deleted_lock_file_does_not_let_a_second_core_in() {
    let t = TestCore::new();
    let id = t.session("Held");
    t.core.apply(id, add_page("one")).await.unwrap();
    let path = t.project_path(id);
    std::fs::remove_file(path.join(".lock")).unwrap();

    let other = reopen_core(t.dir.path());
    let before = tree(&path);
    let err = other.blocking().open_project(&path).unwrap_err();
    assert_eq!(err.code(), "locked", "{err}");
    assert!(err.to_string().contains("open in another"), "{err}");
    assert_eq!(tree(&path), before, "the refused open wrote nothing");

    // The holder goes on and closes; then the project opens elsewhere with
    // everything in it.
    t.core.apply(id, add_page("two")).await.unwrap();
    t.core.blocking().close_session(id).unwrap();
    let s = other.blocking().open_project(&path).unwrap();
    assert_eq!(s.epoch, 2);
}

#[tokio::test]
async fn the_writer_refuses_a_log_that_changed_behind_it() {
    let t = TestCore::new();
    let id = t.session("Shared log");
    t.core.apply(id, add_page("one")).await.unwrap();
    let log = t.project_path(id).join("ops.log");
    // What a second writer (one that got past the lock) would have done.
    let mut bytes = std::fs::read(&log).unwrap();
    let foreign = bytes.clone();
    bytes.extend_from_slice(&foreign);
    std::fs::write(&log, &bytes).unwrap();

    let err = t.core.apply(id, add_page("two")).await.unwrap_err();
    assert_eq!(err.code(), "io", "{err}");
    assert!(err.to_string().contains("changed behind"), "{err}");
    assert_eq!(
        std::fs::read(&log).unwrap(),
        bytes,
        "nothing was appended to the foreign log"
    );
    let again = t.core.apply(id, add_page("three")).await.unwrap_err();
    assert!(again.to_string().contains("cannot be saved"), "{again}");
}

#[tokio::test]
async fn a_missing_ops_log_with_a_later_recorded_epoch_is_refused() {
    let (dir, path) = unclosed_project(3).await;
    let toml = std::fs::read_to_string(path.join("project.toml")).unwrap();
    assert!(toml.contains("epoch = "), "{toml}");
    std::fs::remove_file(path.join("ops.log")).unwrap();
    let before = tree(&path);
    let core = reopen_core(dir.path());
    let err = core.blocking().open_project(&path).unwrap_err();
    assert_eq!(err.code(), "corrupt", "{err}");
    let message = err.to_string();
    assert!(message.contains("ops.log is missing"), "{message}");
    assert!(message.contains("reach only epoch 0"), "{message}");
    assert_eq!(tree(&path), before, "nothing changed on disk");

    // Emptied instead of deleted: refused too.
    std::fs::write(path.join("ops.log"), b"").unwrap();
    let err = core.blocking().open_project(&path).unwrap_err();
    assert!(err.to_string().contains("ops.log has lost frames"), "{err}");
}

#[tokio::test]
async fn after_a_clean_close_a_missing_ops_log_loses_nothing() {
    let t = TestCore::new();
    let id = t.session("Clean");
    t.core.apply(id, add_page("one")).await.unwrap();
    let path = t.project_path(id);
    t.core.blocking().close_session(id).unwrap();
    std::fs::remove_file(path.join("ops.log")).unwrap();
    let s = t.core.blocking().open_project(&path).unwrap();
    assert_eq!(s.epoch, 1);
    assert!(path.join("ops.log").is_file(), "recreated");
}

#[tokio::test]
async fn a_changed_byte_in_scene_json_is_refused() {
    let t = TestCore::new();
    let id = t.session("Checksummed");
    t.core.apply(id, add_page("Chapter one")).await.unwrap();
    let path = t.project_path(id);
    t.core.blocking().close_session(id).unwrap();
    let scene = path.join("scene.json");
    let text = std::fs::read_to_string(&scene).unwrap();
    assert!(text.contains("\"sum\":"), "{text}");
    // Still valid JSON, still a valid scene: only the checksum can tell.
    std::fs::write(&scene, text.replace("Chapter one", "Chapter 0ne")).unwrap();
    let before = tree(&path);
    let err = t.core.blocking().open_project(&path).unwrap_err();
    assert_eq!(err.code(), "corrupt", "{err}");
    assert!(err.to_string().contains("scene.json"), "{err}");
    assert!(err.to_string().contains("checksum mismatch"), "{err}");
    assert_eq!(tree(&path), before);
}

#[tokio::test]
async fn temporary_files_left_by_a_crash_are_removed_at_open() {
    let (dir, path) = unclosed_project(1).await;
    let shard = path.join("blobs/ab");
    std::fs::create_dir_all(&shard).unwrap();
    let leftovers = [
        path.join(".quire-tmp-Xy12ab"),
        path.join(".tmpA1b2C3"),
        shard.join(".quire-tmp-Qq99zz"),
    ];
    for file in &leftovers {
        std::fs::write(file, vec![0u8; 4096]).unwrap();
    }
    let keep = path.join("notes.txt");
    std::fs::write(&keep, "mine").unwrap();
    let core = reopen_core(dir.path());
    core.blocking().open_project(&path).unwrap();
    for file in &leftovers {
        assert!(!file.exists(), "{} was left", file.display());
    }
    assert!(keep.exists(), "other files are not touched");
}

#[cfg(unix)]
#[tokio::test]
async fn every_project_file_is_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let t = TestCore::new();
    let id = t.session("Private");
    t.core
        .blocking()
        .put_blob(id, b"\x89PNG not really")
        .unwrap();
    t.core.apply(id, add_page("one")).await.unwrap();
    let path = t.project_path(id);
    let check = |path: &Path| {
        let mut checked = 0;
        for (entry, content) in tree(path) {
            let mode = std::fs::metadata(&entry).unwrap().permissions().mode() & 0o777;
            let want = if content.is_some() { 0o600 } else { 0o700 };
            assert_eq!(mode, want, "{} is {mode:o}", entry.display());
            checked += 1;
        }
        let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "the project directory");
        checked
    };
    assert!(
        check(&path) >= 6,
        "project.toml, scene.json, ops.log, .lock, blobs"
    );

    // A project written by 0.1.0 (0644 files) is tightened when opened.
    t.core.blocking().close_session(id).unwrap();
    for name in ["ops.log", ".lock", "scene.json", "project.toml"] {
        std::fs::set_permissions(path.join(name), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.core.blocking().open_project(&path).unwrap();
    check(&path);
}

#[tokio::test]
async fn a_project_written_by_0_1_0_opens_and_is_upgraded() {
    let t = TestCore::new();
    let id = t.session("Old");
    t.core.apply(id, add_page("kept")).await.unwrap();
    let path = t.project_path(id);
    t.core.blocking().close_session(id).unwrap();
    // Rewrite the files as 0.1.0 wrote them: no checksum, no epoch,
    // format version 1.
    let scene: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path.join("scene.json")).unwrap()).unwrap();
    let old_scene = serde_json::json!({ "epoch": scene["epoch"], "scene": scene["scene"] });
    std::fs::write(path.join("scene.json"), old_scene.to_string()).unwrap();
    let toml = std::fs::read_to_string(path.join("project.toml")).unwrap();
    let old_toml: String = toml
        .lines()
        .filter(|l| !l.starts_with("epoch"))
        .map(|l| {
            if l.starts_with("formatVersion") {
                "formatVersion = 1\n".to_owned()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(path.join("project.toml"), old_toml).unwrap();

    let s = t.core.blocking().open_project(&path).unwrap();
    assert_eq!(s.epoch, 1);
    let scene = t.core.scene(s.id).await.unwrap().scene;
    assert_eq!(scene.pages[0].name, "kept");
    t.core.apply(s.id, add_page("new")).await.unwrap();
    t.core.blocking().close_session(s.id).unwrap();
    let toml = std::fs::read_to_string(path.join("project.toml")).unwrap();
    assert!(toml.contains("formatVersion = 2"), "{toml}");
    let text = std::fs::read_to_string(path.join("scene.json")).unwrap();
    assert!(text.contains("\"sum\":"), "{text}");
}

/// An OS error keeps its kind and the path it is about, so frontends and
/// logs can tell a full disk from a wrong path.
#[tokio::test]
async fn an_io_error_keeps_its_kind_and_path() {
    let t = TestCore::new();
    let file = t.dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let err = t
        .core
        .blocking()
        .create_project(&file.join("project"), "Nope")
        .unwrap_err();
    assert_eq!(err.code(), "io", "{err}");
    // An owner-only mkdir -p through a file: ENOTDIR on Linux.
    assert_eq!(
        err.io_kind(),
        Some(std::io::ErrorKind::NotADirectory),
        "{err}"
    );
    match &err {
        quire_model::error::CoreError::Io {
            path: Some(path), ..
        } => {
            assert!(path.starts_with(&file), "{}", path.display())
        }
        other => panic!("no path in {other:?}"),
    }
    assert!(err.to_string().contains("a-file"), "{err}");
}
