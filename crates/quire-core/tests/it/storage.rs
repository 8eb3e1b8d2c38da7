//! Storage: reopen, snapshots, recovery from torn and corrupt logs, missing
//! or damaged files, the project lock, blobs.

use std::path::Path;

use quire_model::error::CoreError;
use quire_model::hash::BlobHash;
use quire_model::op::Op;
use quire_store::Durability;

use crate::support::{TestCore, add_page, copy_dir, core_at, settings, unclosed_project};

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["project.toml", "scene.json", "ops.log"]
        .iter()
        .map(|f| {
            (
                f.to_string(),
                std::fs::read(dir.join(f)).unwrap_or_default(),
            )
        })
        .collect()
}

fn log_lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("ops.log"))
        .unwrap()
        .lines()
        .count()
}

#[tokio::test]
async fn close_snapshots_and_reopen_restores_scene_and_epoch() {
    let t = TestCore::new();
    let id = t.session("Reopen");
    for i in 0..4 {
        t.core.apply(id, add_page(&format!("p{i}"))).await.unwrap();
    }
    let before = t.core.scene(id).await.unwrap();
    let path = t.project_path(id);
    assert_eq!(log_lines(&path), 4);
    t.core.blocking().close_session(id).unwrap();
    assert_eq!(
        log_lines(&path),
        0,
        "close writes a snapshot and truncates the log"
    );
    assert_eq!(t.core.current_session(), None);
    let again = t.core.blocking().open_project(&path).unwrap();
    assert_ne!(again.id, id, "a new session per open");
    assert_eq!(again.epoch, 4);
    let after = t.core.scene(again.id).await.unwrap();
    assert_eq!(after.epoch, before.epoch);
    assert_eq!(after.scene, before.scene);
}

#[tokio::test]
async fn snapshot_every_n_ops_truncates_the_log() {
    let t = TestCore::with(settings(Durability::Fsync, 5, 500));
    let id = t.session("Snap");
    for i in 0..12 {
        t.core.apply(id, add_page(&format!("p{i}"))).await.unwrap();
    }
    let path = t.project_path(id);
    // The writer handles a snapshot before any later frame is acknowledged.
    let snap: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path.join("scene.json")).unwrap()).unwrap();
    assert_eq!(snap["epoch"], 10);
    assert_eq!(log_lines(&path), 2);
}

#[tokio::test]
async fn replay_after_an_unclean_stop_keeps_scene_and_history() {
    let t = TestCore::with(settings(Durability::Batch, 1000, 500));
    let id = t.session("Unclean");
    for i in 0..3 {
        t.core.apply(id, add_page(&format!("p{i}"))).await.unwrap();
    }
    t.core.undo(id).await.unwrap();
    let path = t.project_path(id);
    let expected = t.core.scene(id).await.unwrap();
    // Drop the core without closing: no final snapshot, as after a crash.
    let TestCore { dir, core } = t;
    drop(core);
    let core = core_at(
        &dir.path().join("projects"),
        settings(Durability::Fsync, 1000, 500),
    );
    let s = core.blocking().open_project(&path).unwrap();
    assert_eq!(s.epoch, 4);
    let got = core.scene(s.id).await.unwrap();
    assert_eq!(got.scene, expected.scene);
    // History was rebuilt from the log: redo and undo still work.
    assert_eq!(core.redo(s.id).await.unwrap().map(|s| s.epoch), Some(5));
    assert_eq!(core.scene(s.id).await.unwrap().scene.pages.len(), 3);
    assert_eq!(core.undo(s.id).await.unwrap().map(|s| s.epoch), Some(6));
    assert_eq!(core.undo(s.id).await.unwrap().map(|s| s.epoch), Some(7));
}

fn reopen(dir: &Path, path: &Path) -> Result<quire_core::events::SessionSummary, CoreError> {
    let core = core_at(
        &dir.join("projects"),
        settings(Durability::Fsync, 1000, 500),
    );
    let r = core.blocking().open_project(path);
    if let Ok(s) = &r {
        core.blocking().close_session(s.id).unwrap();
    }
    r
}

#[tokio::test]
async fn a_torn_last_frame_is_dropped_and_trimmed() {
    let (dir, path) = unclosed_project(3).await;
    let log = path.join("ops.log");
    let intact = std::fs::read(&log).unwrap();
    let mut torn = intact.clone();
    torn.extend_from_slice(b"{\"epoch\":4,\"sum\":\"00\",\"frame\":{\"kind\":\"ap");
    std::fs::write(&log, &torn).unwrap();
    let core = core_at(
        &dir.path().join("projects"),
        settings(Durability::Fsync, 1000, 500),
    );
    let s = core.blocking().open_project(&path).unwrap();
    assert_eq!(s.epoch, 3);
    assert_eq!(
        std::fs::read(&log).unwrap(),
        intact,
        "the torn tail is cut off"
    );
    // New ops append cleanly after the trimmed log.
    core.apply(s.id, add_page("after")).await.unwrap();
    core.blocking().close_session(s.id).unwrap();
    assert_eq!(reopen(dir.path(), &path).unwrap().epoch, 4);
}

#[tokio::test]
async fn a_corrupt_middle_frame_is_an_error_that_changes_nothing() {
    let (dir, path) = unclosed_project(4).await;
    let log = path.join("ops.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let damaged: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 1 {
                l.replacen("p1", "pX", 1)
            } else {
                l.to_owned()
            }
        })
        .collect();
    std::fs::write(&log, damaged.join("\n") + "\n").unwrap();
    let before = files(&path);
    let err = reopen(dir.path(), &path).unwrap_err();
    assert_eq!(err.code(), "corrupt");
    let message = err.to_string();
    assert!(
        message.contains(&format!("{}:2", log.display())),
        "{message}"
    );
    assert!(message.contains("checksum mismatch"), "{message}");
    assert_eq!(files(&path), before);
}

#[tokio::test]
async fn missing_scene_json_is_rebuilt_only_from_a_complete_log() {
    // Never snapshotted: the log holds everything since creation.
    let (dir, path) = unclosed_project(2).await;
    std::fs::remove_file(path.join("scene.json")).unwrap();
    assert_eq!(reopen(dir.path(), &path).unwrap().epoch, 2);

    // After a snapshot the log alone cannot rebuild the scene.
    std::fs::remove_file(path.join("scene.json")).unwrap();
    let before = files(&path);
    let err = reopen(dir.path(), &path).unwrap_err();
    assert_eq!(err.code(), "corrupt");
    let message = err.to_string();
    assert!(message.contains("scene.json: missing"), "{message}");
    assert_eq!(files(&path), before);
}

#[tokio::test]
async fn an_unreadable_project_toml_is_an_error_naming_it() {
    let (dir, path) = unclosed_project(1).await;
    std::fs::write(path.join("project.toml"), "id = \"nope\"\nname = 3\n").unwrap();
    let before = files(&path);
    let err = reopen(dir.path(), &path).unwrap_err();
    assert_eq!(err.code(), "corrupt");
    let message = err.to_string();
    assert!(message.contains("project.toml:1"), "{message}");
    assert_eq!(files(&path), before);

    std::fs::remove_file(path.join("project.toml")).unwrap();
    let err = reopen(dir.path(), &path).unwrap_err();
    assert!(err.to_string().contains("is not a quire project"), "{err}");
}

#[tokio::test]
async fn a_second_core_is_refused_until_the_first_closes() {
    let t = TestCore::new();
    let id = t.session("Locked");
    let path = t.project_path(id);
    let other = core_at(
        &t.dir.path().join("projects"),
        settings(Durability::Fsync, 1000, 500),
    );
    let err = other.blocking().open_project(&path).unwrap_err();
    assert_eq!(err.code(), "locked");
    let message = err.to_string();
    assert!(
        message.contains(&format!("pid {}", std::process::id())),
        "{message}"
    );
    assert!(message.contains("mode test"), "{message}");
    t.core.blocking().close_session(id).unwrap();
    other.blocking().open_project(&path).unwrap();
}

#[tokio::test]
async fn opening_an_open_project_returns_its_session() {
    let t = TestCore::new();
    let a = t.session("A");
    let b = t.session("B");
    assert_eq!(t.core.current_session(), Some(b));
    let again = t.core.blocking().open_project(&t.project_path(a)).unwrap();
    assert_eq!(again.id, a);
    assert_eq!(t.core.current_session(), Some(a));
    assert_eq!(t.core.sessions().len(), 2);
    // Closing the current session falls back to the most recent other one.
    t.core.blocking().close_session(a).unwrap();
    assert_eq!(t.core.current_session(), Some(b));
}

#[tokio::test]
async fn create_refuses_a_non_empty_directory() {
    let t = TestCore::new();
    let target = t.dir.path().join("elsewhere");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("keep.txt"), "mine").unwrap();
    let err = t.core.blocking().create_project(&target, "X").unwrap_err();
    assert_eq!(err.code(), "conflict");
    assert!(err.to_string().contains("already exists and is not empty"));
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 1);
    let err = t
        .core
        .blocking()
        .create_project(&t.dir.path().join("new"), " \n")
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(!t.dir.path().join("new").exists());
}

#[tokio::test]
async fn managed_projects_are_listed_with_their_session() {
    let t = TestCore::new();
    let a = t.session("Alpha");
    t.session("Alpha");
    let list = t.core.blocking().list_projects().unwrap();
    assert_eq!(list.len(), 2);
    let dirs: Vec<String> = list
        .iter()
        .map(|p| p.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(dirs.contains(&"alpha".to_owned()) && dirs.contains(&"alpha-2".to_owned()));
    let entry = list.iter().find(|p| p.session_id == Some(a)).unwrap();
    assert_eq!(entry.name, "Alpha");
    t.core
        .apply(
            a,
            Op::UpdateProject {
                patch: quire_model::op::ProjectPatch {
                    name: Some("Alpha prime".into()),
                    ..Default::default()
                },
            },
        )
        .await
        .unwrap();
    t.core.blocking().close_session(a).unwrap();
    let list = t.core.blocking().list_projects().unwrap();
    let entry = list.iter().find(|p| p.id == entry.id).unwrap();
    assert_eq!(
        entry.name, "Alpha prime",
        "project.toml follows the scene's name"
    );
    assert_eq!(entry.session_id, None);
    let reopened = t.core.blocking().open_managed_project(entry.id).unwrap();
    assert_eq!(reopened.name, "Alpha prime");
}

#[tokio::test]
async fn updated_at_moves_with_changes() {
    let t = TestCore::new();
    let id = t.session("Times");
    let first = t.core.scene(id).await.unwrap().scene.project;
    t.core.apply(id, add_page("p")).await.unwrap();
    let second = t.core.scene(id).await.unwrap().scene.project;
    assert_eq!(first.created_at, second.created_at);
    assert!(second.updated_at >= first.updated_at);
}

#[tokio::test]
async fn blobs_round_trip_through_the_core() {
    let t = TestCore::new();
    let id = t.session("Blobs");
    let hash = t.core.blocking().put_blob(id, b"\x89PNG fake").unwrap();
    assert_eq!(
        t.core.blocking().get_blob(id, &hash).unwrap(),
        b"\x89PNG fake"
    );
    let err = t
        .core
        .blocking()
        .get_blob(id, &BlobHash::of(b"other"))
        .unwrap_err();
    assert_eq!(err.code(), "not_found");
    let hex = hash.to_hex();
    let on_disk = t
        .project_path(id)
        .join("blobs")
        .join(&hex[..2])
        .join(&hex[2..]);
    assert!(on_disk.is_file());
}

/// The on-disk format is pinned: a project written by quire 0.1.0 (ops
/// through HTTP, an image page, a batch, an undo, a pseudo-translate job,
/// then SIGKILL, so everything sits in `ops.log`) opens, replays to the
/// scene 0.1.0 served, and keeps its history.
#[tokio::test]
async fn a_project_written_by_0_1_0_opens_with_its_scene() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let t = TestCore::new();
    let path = t.dir.path().join("old");
    copy_dir(&fixtures.join("project-0.1.0"), &path);
    let opened = t.core.blocking().open_project(&path).unwrap();
    assert_eq!(opened.epoch, 10);
    let scene = t.core.scene(opened.id).await.unwrap();
    let mut expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixtures.join("project-0.1.0.scene.json")).unwrap())
            .unwrap();
    // 0.1.0 had no translation states: a text node opens `translated` when
    // it has a translation, else `initial`.
    for page in expected["scene"]["pages"].as_array_mut().unwrap() {
        for node in page["nodes"].as_array_mut().unwrap() {
            let kind = node["kind"].as_object_mut().unwrap();
            if kind["type"] == "text" {
                let state = match kind.get("translation") {
                    Some(_) => "translated",
                    None => "initial",
                };
                kind.insert("state".into(), state.into());
            }
        }
    }
    assert_eq!(scene.epoch, 10);
    assert_eq!(
        serde_json::to_value(&scene.scene).unwrap(),
        expected["scene"]
    );
    let blob = expected["scene"]["pages"][0]["nodes"][0]["kind"]["blob"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        t.core.blocking().get_blob(opened.id, &blob).unwrap(),
        std::fs::read(
            path.join("blobs/a7/331edb27ea31d25c7bdb620bb1dcee2097897cc99fe9345adcdb9ff43c216d")
        )
        .unwrap()
    );
    // The history replayed too: the last change (a translation) undoes.
    assert_eq!(
        t.core.undo(opened.id).await.unwrap().map(|s| s.epoch),
        Some(11)
    );
    t.core.blocking().close_session(opened.id).unwrap();
    // Saved in today's format, it opens again at the same place.
    let again = t.core.blocking().open_project(&path).unwrap();
    assert_eq!(again.epoch, 11);
}
