//! Crash safety with real processes: a child applies ops and prints each
//! acknowledged epoch; the parent kills it with SIGKILL at random moments
//! and checks that every acknowledged op survived, that the recovered
//! scene equals an in-memory replay of the same ops, and that undo goes
//! back through the same history. Also: the project lock
//! between two processes.
//!
//! The child is this same test binary, re-run on the ignored test
//! `crash::child` with its task in an environment variable.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use quire_model::op::Op;
use quire_model::scene::Scene;
use quire_store::Durability;

use crate::support::{Action, Gen, Replica, core_at, settings};

const TASK_ENV: &str = "QUIRE_TEST_CHILD_TASK";
const UNDO_LIMIT: usize = 50;

/// Runs in the child process only (see the module docs).
#[test]
#[ignore = "run by other tests as a child process"]
fn child() {
    let Ok(task) = std::env::var(TASK_ENV) else {
        return;
    };
    let parts: Vec<&str> = task.split('|').collect();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        match parts[0] {
            "crash" => crash_child(&parts[1..]).await,
            "hold" => hold_child(Path::new(parts[1])).await,
            "largest" => largest_child(Path::new(parts[1])).await,
            other => panic!("unknown task {other}"),
        }
    });
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

async fn crash_child(args: &[&str]) {
    let path = PathBuf::from(args[0]);
    let seed: u64 = args[1].parse().unwrap();
    let durability = if args[2] == "batch" {
        Durability::Batch
    } else {
        Durability::Fsync
    };
    let every: u64 = args[3].parse().unwrap();
    let core = core_at(&path.join(".."), settings(durability, every, UNDO_LIMIT));
    let id = core.blocking().open_project(&path).unwrap().id;
    let initial = core.scene(id).await.unwrap().scene;
    let mut replica = Replica::new(initial, UNDO_LIMIT);
    let mut generator = Gen::new(seed);
    for _ in 0..100_000 {
        let action = generator.action(&replica.scene, &replica.history);
        let epoch = match &action {
            Action::Op(op) => core.apply(id, op.clone()).await.unwrap().epoch,
            Action::Undo => core.undo(id).await.unwrap().unwrap().epoch,
            Action::Redo => core.redo(id).await.unwrap().unwrap().epoch,
        };
        replica.perform(&action);
        assert_eq!(epoch, replica.epoch);
        say(&format!("ACK {epoch}"));
    }
}

/// The largest batch the limits allow, then small ops until killed.
async fn largest_child(path: &Path) {
    let core = core_at(&path.join(".."), settings(Durability::Fsync, 1000, 10));
    let id = core.blocking().open_project(path).unwrap().id;
    let page = core.apply(id, crate::support::add_page("big")).await;
    let page = quire_model::ids::PageId(page.unwrap().created[0]);
    let batch = Op::Batch {
        ops: (0..quire_model::limits::MAX_BATCH_OPS)
            .map(|i| Op::AddNode {
                page,
                node: crate::support::text_node(&format!("n{i}")),
                at: None,
            })
            .collect(),
        label: Some("largest".into()),
    };
    let epoch = core.apply(id, batch).await.unwrap().epoch;
    say(&format!("ACK {epoch}"));
    for i in 0.. {
        let op = crate::support::add_page(&format!("after {i}"));
        say(&format!("ACK {}", core.apply(id, op).await.unwrap().epoch));
    }
}

async fn hold_child(path: &Path) {
    let core = core_at(&path.join(".."), settings(Durability::Fsync, 1000, 10));
    let id = core.blocking().open_project(path).unwrap().id;
    say("OPEN");
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).unwrap() > 0 {
        if line.trim() == "close" {
            core.blocking().close_session(id).unwrap();
            say("CLOSED");
        }
        line.clear();
    }
}

/// A child with its stdout read on a thread, so the parent can wait for a
/// line with a deadline.
struct ChildProc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl ChildProc {
    fn spawn(task: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "crash::child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(TASK_ENV, task)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        ChildProc { child, lines }
    }

    /// The next line the child itself wrote, from `prefix` on (the test
    /// harness's own output is skipped, and may share the first line),
    /// waiting at most `deadline`.
    fn expect(&self, prefix: &str, deadline: Duration) -> String {
        let end = Instant::now() + deadline;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => match line.find(prefix) {
                    Some(i) => return line[i..].to_owned(),
                    None => continue,
                },
                Err(e) => panic!("no {prefix:?} line from the child: {e}"),
            }
        }
    }

    /// Kills the child with SIGKILL; returns the lines it wrote that were
    /// not read yet.
    fn kill(mut self) -> Vec<String> {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        // The reader thread ends at EOF, which closes the channel.
        self.lines.iter().collect()
    }
}

fn new_project(root: &Path, name: &str) -> (PathBuf, Scene) {
    let core = core_at(root, settings(Durability::Fsync, 1000, 10));
    let s = core.blocking().create_managed_project(name).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let scene = runtime.block_on(core.scene(s.id)).unwrap().scene;
    core.blocking().close_session(s.id).unwrap();
    (s.path, scene)
}

#[test]
fn every_acknowledged_op_survives_sigkill() {
    const KILLS: u64 = 60;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    let mut picker = Gen::new(0xC0FFEE);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for round in 0..KILLS {
        let (path, initial) = new_project(&root, &format!("crash {round}"));
        let durability = if round % 2 == 0 { "fsync" } else { "batch" };
        let every = 3 + round % 7;
        let task = format!("crash|{}|{round}|{durability}|{every}", path.display());
        let child = ChildProc::spawn(&task);
        // Kill after a random number of acknowledgements: sometimes at
        // once, sometimes deep into snapshots and truncations.
        let wait_for = 1 + picker.next_u64() % 80;
        let mut last_ack = 0u64;
        for _ in 0..wait_for {
            let line = child.expect("ACK ", Duration::from_secs(30));
            last_ack = line[4..].parse().unwrap();
        }
        // Every acknowledgement the child printed before it died counts.
        for line in child.kill() {
            if let Some(i) = line.find("ACK ") {
                last_ack = line[i + 4..].parse().unwrap();
            }
        }
        let core = core_at(&root, settings(Durability::Fsync, 1000, UNDO_LIMIT));
        let session = core.blocking().open_project(&path).unwrap();
        let recovered = runtime.block_on(core.scene(session.id)).unwrap();
        assert!(
            recovered.epoch >= last_ack,
            "round {round}: acknowledged epoch {last_ack} lost (recovered {})",
            recovered.epoch
        );
        let mut replica = Replica::new(initial, UNDO_LIMIT);
        let mut generator = Gen::new(round);
        while replica.epoch < recovered.epoch {
            let action = generator.action(&replica.scene, &replica.history);
            replica.perform(&action);
        }
        assert!(
            replica.scene.same_content(&recovered.scene),
            "round {round} ({durability}, snapshot every {every}): recovered scene at epoch {} differs from the replay",
            recovered.epoch
        );
        // History came back too (history.json at the last snapshot, the
        // log on top): the same undos as the replay, to its bottom or 8.
        for step in 0..8 {
            let undone = runtime.block_on(core.undo(session.id)).unwrap();
            assert_eq!(
                undone.is_some(),
                replica.history.next_undo().is_some(),
                "round {round}: undo {step} after recovery"
            );
            if undone.is_none() {
                break;
            }
            replica.perform(&Action::Undo);
            let scene = runtime.block_on(core.scene(session.id)).unwrap().scene;
            assert!(
                replica.scene.same_content(&scene),
                "round {round}: undo {step} after recovery differs from the replay"
            );
        }
        core.blocking().close_session(session.id).unwrap();
    }
}

#[test]
fn the_lock_names_the_other_process_and_is_released_on_close_and_exit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    let (path, _) = new_project(&root, "shared");
    let core = core_at(&root, settings(Durability::Fsync, 1000, 10));

    let mut holder = ChildProc::spawn(&format!("hold|{}", path.display()));
    holder.expect("OPEN", Duration::from_secs(30));
    let err = core.blocking().open_project(&path).unwrap_err();
    assert_eq!(err.code(), "locked");
    let message = err.to_string();
    assert!(
        message.contains(&format!("pid {}", holder.child.id())),
        "{message}"
    );
    assert!(message.contains("mode test"), "{message}");
    // Released on close while the holder keeps running.
    let stdin = holder.child.stdin.as_mut().unwrap();
    writeln!(stdin, "close").unwrap();
    stdin.flush().unwrap();
    holder.expect("CLOSED", Duration::from_secs(30));
    let s = core.blocking().open_project(&path).unwrap();
    core.blocking().close_session(s.id).unwrap();
    let _ = holder.kill();

    // Released when the holder dies without closing.
    let holder = ChildProc::spawn(&format!("hold|{}", path.display()));
    holder.expect("OPEN", Duration::from_secs(30));
    assert_eq!(
        core.blocking().open_project(&path).unwrap_err().code(),
        "locked"
    );
    let _ = holder.kill();
    core.blocking().open_project(&path).unwrap();
}

#[test]
fn a_deleted_lock_file_keeps_another_process_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    let (path, _) = new_project(&root, "held");
    let holder = ChildProc::spawn(&format!("hold|{}", path.display()));
    holder.expect("OPEN", Duration::from_secs(30));
    std::fs::remove_file(path.join(".lock")).unwrap();
    let core = core_at(&root, settings(Durability::Fsync, 1000, 10));
    let err = core.blocking().open_project(&path).unwrap_err();
    assert_eq!(err.code(), "locked", "{err}");
    let _ = holder.kill();
    core.blocking().open_project(&path).unwrap();
}

#[test]
fn the_largest_allowed_batch_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    let (path, _) = new_project(&root, "largest");
    let child = ChildProc::spawn(&format!("largest|{}", path.display()));
    let line = child.expect("ACK ", Duration::from_secs(300));
    assert_eq!(line, "ACK 2", "the batch is one epoch");
    let mut last: u64 = 2;
    // Kill while small ops follow it in the log.
    for _ in 0..3 {
        last = child.expect("ACK ", Duration::from_secs(30))[4..]
            .parse()
            .unwrap();
    }
    for line in child.kill() {
        if let Some(i) = line.find("ACK ") {
            last = line[i + 4..].parse().unwrap();
        }
    }
    let core = core_at(&root, settings(Durability::Fsync, 1000, 100_000));
    let session = core.blocking().open_project(&path).unwrap();
    assert!(
        session.epoch >= last,
        "acknowledged {last}, recovered {}",
        session.epoch
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let scene = runtime.block_on(core.scene(session.id)).unwrap().scene;
    assert_eq!(
        scene.pages[0].nodes.len(),
        quire_model::limits::MAX_BATCH_OPS
    );
    assert_eq!(scene.pages.len() as u64, session.epoch - 1);
    // History was rebuilt from the log: undoing the small ops and then the
    // batch (one step) empties the page.
    for _ in 2..=session.epoch {
        runtime.block_on(core.undo(session.id)).unwrap().unwrap();
    }
    let scene = runtime.block_on(core.scene(session.id)).unwrap().scene;
    assert_eq!(scene.pages.len(), 1);
    assert!(scene.pages[0].nodes.is_empty());
}
