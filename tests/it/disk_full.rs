//! A full disk, for real: the server's data directory on a small tmpfs
//! (mounting one needs root). Every op answered 200 is there after a
//! restart and none answered 500 is; `/healthz` names the project that
//! cannot be written while the disk is full; once space is freed, edits
//! and reads work again by themselves.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Sandbox, tool_available};
use crate::http_support::{Binary, json_post};

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(test: &str, size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        let missing = match &out {
            Ok(o) if o.status.success() => None,
            Ok(o) => Some(format!(
                "cannot mount a tmpfs (needs root): {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Some(format!("cannot run mount: {e}")),
        };
        tool_available("tmpfs", test, missing).then_some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Fills the file system of `dir` with `path` until a write fails.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![7u8; 64 << 10];
    loop {
        if file.write_all(&chunk).is_err() {
            break;
        }
    }
    // A byte at a time, so that not even a small write fits.
    while file.write_all(&[7]).is_ok() {}
    let _ = file.sync_all();
}

fn page_op(n: usize) -> Value {
    json!({ "type": "AddPage", "page": { "name": format!("p{n}"), "nodes": [
        { "transform": { "x": 0, "y": 0, "width": 10, "height": 10 }, "visible": true,
          "kind": { "type": "text", "text": "x".repeat(1500) } }] } })
}

fn page_names(scene: &Value) -> Vec<String> {
    scene["scene"]["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn after_a_full_disk_every_answer_was_true_and_work_resumes_by_itself() {
    const TEST: &str = "after_a_full_disk_every_answer_was_true_and_work_resumes_by_itself";
    let Some(fs) = Tmpfs::mount(TEST, "6m") else {
        return;
    };
    let s = Sandbox::new();
    let data = fs.path().join("data");
    let data_arg = data.display().to_string();
    // Snapshots every other op, so a snapshot hits the full disk in the
    // same step as a frame (0.2 then answered 500 for an op it had logged).
    let env = [("QUIRE_STORAGE__SNAPSHOT_EVERY_OPS", "2")];
    let args = ["--headless", "--port", "0", "--data-dir", &data_arg];
    let mut server = Binary::start(&s, &args, &env);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = crate::harness::http_client();
    let (status, session) = rt.block_on(json_post(
        &client,
        format!("{}/api/v1/projects", server.url),
        json!({ "name": "Full disk" }),
    ));
    assert_eq!(status, 200, "{session}");
    let id = session["id"].as_str().unwrap().to_owned();
    let apply = |url: &str, n: usize| {
        rt.block_on(json_post(
            &client,
            format!("{url}/api/v1/sessions/{id}/history/apply"),
            page_op(n),
        ))
    };
    let get = |url: String| {
        rt.block_on(async {
            let r = client.get(url).send().await.unwrap();
            let status = r.status().as_u16();
            (status, r.json::<Value>().await.unwrap_or(Value::Null))
        })
    };

    // Fill the disk but for a little room, then write until it is gone.
    let filler: PathBuf = fs.path().join("filler");
    fill(&filler);
    let len = std::fs::metadata(&filler).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len.saturating_sub(40 << 10))
        .unwrap();
    let (mut acknowledged, mut refused) = (Vec::new(), Vec::new());
    for n in 0..200 {
        match apply(&server.url, n) {
            (200, _) => acknowledged.push(format!("p{n}")),
            (500, body) => {
                assert_eq!(body["error"]["code"], "io", "{body}");
                refused.push(format!("p{n}"));
                if refused.len() >= 5 {
                    break;
                }
            }
            other => panic!("p{n}: {other:?}"),
        }
    }
    assert!(!refused.is_empty(), "the disk never filled up");
    assert!(server.alive());

    // Health says which project, without its path on the server.
    let (status, health) = get(format!("{}/healthz", server.url));
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["error"]["code"], "unwritable");
    let message = health["error"]["message"].as_str().unwrap();
    assert!(message.contains("Full disk"), "{message}");
    assert!(!message.contains(&data_arg), "{message}");
    // Reads go on while the disk is full, and show only what was saved.
    let (status, scene) = get(format!("{}/api/v1/sessions/{id}/scene.json", server.url));
    assert_eq!(status, 200, "{scene}");
    assert_eq!(page_names(&scene), acknowledged);

    // Space comes back: work resumes without a restart.
    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let next = acknowledged.len() + refused.len();
    loop {
        match apply(&server.url, next) {
            (200, _) => break,
            (500, _) if Instant::now() < deadline => {
                // The writer is reopened at most once a second.
                std::thread::sleep(Duration::from_millis(50));
            }
            other => panic!("no recovery: {other:?}"),
        }
    }
    acknowledged.push(format!("p{next}"));
    assert_eq!(get(format!("{}/healthz", server.url)).0, 200);

    // Every answer was true: after a restart, the acknowledged pages are
    // there and the refused ones are not.
    assert!(server.terminate().success());
    let server = Binary::start(&s, &args, &env);
    let projects = get(format!("{}/api/v1/projects", server.url)).1;
    let project = projects[0]["id"].clone();
    let opened = rt.block_on(async {
        client
            .put(format!("{}/api/v1/projects/current", server.url))
            .json(&json!({ "id": project }))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    });
    let (status, scene) = get(format!(
        "{}/api/v1/sessions/{}/scene.json",
        server.url,
        opened["id"].as_str().unwrap()
    ));
    assert_eq!(status, 200, "{scene}");
    assert_eq!(page_names(&scene), acknowledged, "refused: {refused:?}");
}
