//! The TUI against live backends: attach mode through a real headless
//! server that dies and comes back, and the real binary in a
//! pseudo-terminal (tmux), driven by keys and read from the screen.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use quire::config::secret::Secret;
use quire::tui::app::{App, Msg, Route};
use quire::tui::remote::Remote;
use quire::tui::run::Runner;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use crate::harness::{BIN, Sandbox};
use crate::http_support::{Binary, json_post};

mod keyboard;

pub fn screen(runner: &Runner<TestBackend>) -> String {
    let buffer = runner.terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_mode_survives_a_server_restart() {
    let s = Sandbox::new();
    let port = crate::http_support::free_port();
    let Attached {
        server,
        mut runner,
        path,
        ..
    } = Attached::start(&s, &port, (100, 30)).await;
    runner.apply(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a.desk.scene.is_some())
            .await
    );
    runner.draw();
    assert!(screen(&runner).contains("● connected"));
    assert!(screen(&runner).contains("Hello"));

    // The server dies.
    let url = server.url.clone();
    assert!(server.terminate().success());
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| !a.link.connected)
            .await,
        "no disconnect seen"
    );
    runner.draw();
    assert!(
        screen(&runner).contains("disconnected"),
        "{}",
        screen(&runner)
    );

    // It comes back on the same port with the same project.
    let again = Binary::start(
        &s,
        &["--headless", "--port", &port, "--project", &path],
        &[],
    );
    assert_eq!(again.url, url);
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a.link.connected
                && matches!(a.route, Route::Session(id) if a.desk.scene.as_ref().is_some_and(|(s, _)| *s == id)))
            .await,
        "the view did not recover"
    );
    runner.draw();
    let shown = screen(&runner);
    assert!(
        shown.contains("● connected") && shown.contains("Remote comic") && shown.contains("Hello"),
        "{shown}"
    );
    // And it works: an undo goes through the new connection.
    assert!(again.terminate().success());
}

/// A headless server on `port` with one project ("Remote comic", a text
/// page "Hello" / "Bye"), and a TUI of `size` attached to it that has
/// loaded the workspace.
pub struct Attached {
    pub server: Binary,
    pub runner: Runner<TestBackend>,
    pub client: reqwest::Client,
    /// The project's directory.
    pub path: String,
}

impl Attached {
    pub async fn start(s: &Sandbox, port: &str, size: (u16, u16)) -> Attached {
        let server = Binary::start(s, &["--headless", "--port", port], &[]);
        let client = crate::harness::http_client();
        let url = format!("{}/api/v1/projects", server.url);
        let (status, session) = json_post(&client, url, json!({ "name": "Remote comic" })).await;
        assert_eq!(status, 200, "{session}");
        let path = session["path"].as_str().unwrap().to_owned();
        let url = format!("{}/api/v1/pages", server.url);
        let page = json!({ "name": "p1", "text": "Hello\n\nBye" });
        let (status, body) = json_post(&client, url, page).await;
        assert_eq!(status, 200, "{body}");
        let remote = Remote::new(&server.url, Secret::default()).unwrap();
        let app = App::new(server.url.clone(), true);
        let terminal = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
        let mut runner = Runner::new(terminal, Arc::new(remote), app);
        assert!(
            runner
                .run_until(Duration::from_secs(30), |a| a.link.loaded
                    && a.link.connected
                    && !a.workspace.sessions.is_empty())
                .await,
            "never connected"
        );
        Attached {
            server,
            runner,
            client,
            path,
        }
    }
}

pub fn press(runner: &mut Runner<TestBackend>, code: KeyCode, modifiers: KeyModifiers) {
    runner.apply(Msg::Key(KeyEvent::new(code, modifiers)));
}

pub fn type_text(runner: &mut Runner<TestBackend>, text: &str) {
    for c in text.chars() {
        press(runner, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

/// The server comes back without the project: the TUI opens it again and
/// shows it, and a draft whose save failed meanwhile is still there and
/// saves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_mode_reopens_its_project_and_keeps_a_draft_across_a_restart() {
    let s = Sandbox::new();
    let port = crate::http_support::free_port();
    let Attached {
        server,
        mut runner,
        client,
        ..
    } = Attached::start(&s, &port, (80, 24)).await;
    press(&mut runner, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a.desk.scene.is_some())
            .await
    );
    let (project, before) = (
        runner.app.workspace.sessions[0].project_id,
        runner.app.workspace.sessions[0].id,
    );

    assert!(server.terminate().success());
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| !a.link.connected)
            .await
    );
    // A translation typed and saved while the server is down.
    press(&mut runner, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut runner, KeyCode::Char('e'), KeyModifiers::NONE);
    type_text(&mut runner, "Salut");
    press(&mut runner, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a.editing.edit.is_some()
                && a.status
                    .as_ref()
                    .is_some_and(|s| s.error && s.text.contains("not saved")))
            .await,
        "the failed save did not keep the draft: {:?}",
        runner.app.status
    );

    // Back on the same port, but with nothing open.
    let again = Binary::start(&s, &["--headless", "--port", &port], &[]);
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a.link.connected
                && matches!(a.route, Route::Session(id)
                    if id != before
                        && a.session(id).is_some_and(|s| s.project_id == project)
                        && a.desk.scene.as_ref().is_some_and(|(s, _)| *s == id)))
            .await,
        "the project was not reopened: {:?}, {:?}",
        runner.app.route,
        runner.app.status
    );
    let edit = runner
        .app
        .editing
        .edit
        .as_ref()
        .expect("the draft survived");
    assert_eq!(edit.draft().text, "Salut");
    press(&mut runner, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a
                .status
                .as_ref()
                .is_some_and(|s| s.text == "translation saved"))
            .await,
        "{:?}",
        runner.app.status
    );
    let scene: serde_json::Value = client
        .get(format!("{}/api/v1/scene.json", again.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let node = &scene["scene"]["pages"][0]["nodes"][0]["kind"];
    assert_eq!(node["translation"], "Salut", "{scene}");
    assert!(again.terminate().success());
}

/// A server that wants a token, attached without one: the TUI says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_mode_without_the_token_says_to_pass_it() {
    let s = Sandbox::new();
    let server = Binary::start(
        &s,
        &["--headless", "--port", "0"],
        &[("QUIRE_SERVER__TOKEN", "open-sesame")],
    );
    let remote = Remote::new(&server.url, Secret::default()).unwrap();
    let app = App::new(server.url.clone(), true);
    let mut runner = Runner::new(
        Terminal::new(TestBackend::new(80, 24)).unwrap(),
        Arc::new(remote),
        app,
    );
    assert!(
        runner
            .run_until(Duration::from_secs(30), |a| a
                .status
                .as_ref()
                .is_some_and(|s| s.error && s.text.contains("pass --token")))
            .await,
        "{:?}",
        runner.app.status
    );
    assert!(!runner.app.link.connected);
    assert!(server.terminate().success());
}

/// A tmux command on the server of session `name` alone: each session has
/// its own server (socket), so tests that start theirs at once never race
/// to start one shared server (seen to fail on a fresh machine).
fn tmux_on(name: &str) -> Command {
    let mut command = Command::new("tmux");
    command.args(["-L", name]);
    command
}

/// A tmux session running quire, read by polling the screen with a deadline.
pub(crate) struct Tmux {
    name: String,
    /// The pane's process: quire itself (`exec`).
    pid: Option<u32>,
}

impl Tmux {
    fn start(s: &Sandbox, name: &str) -> Option<Tmux> {
        Self::start_with(s, name, "")
    }

    pub(crate) fn start_with(s: &Sandbox, name: &str, args: &str) -> Option<Tmux> {
        Self::start_sized(s, name, args, (120, 36))
    }

    fn start_sized(s: &Sandbox, name: &str, args: &str, size: (u16, u16)) -> Option<Tmux> {
        let missing = crate::harness::missing_program("tmux", "-V");
        if !crate::harness::tool_available("tmux", name, missing) {
            return None;
        }
        let env = format!(
            "exec env -i PATH={} HOME={} XDG_CONFIG_HOME={} XDG_DATA_HOME={} QUIRE_SYSTEM_CONFIG_DIR={} TERM=xterm-256color {BIN} {args}",
            std::env::var("PATH").unwrap_or_default(),
            s.path("home").display(),
            s.path("config").display(),
            s.path("data").display(),
            s.path("etc").display(),
        );
        let ok = tmux_on(name)
            .args([
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                &size.0.to_string(),
                "-y",
                &size.1.to_string(),
                &env,
            ])
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux did not start");
        let pid = tmux_on(name)
            .args(["display-message", "-p", "-t", name, "#{pane_pid}"])
            .output()
            .ok()
            .and_then(|out| String::from_utf8_lossy(&out.stdout).trim().parse().ok());
        Some(Tmux {
            name: name.to_owned(),
            pid,
        })
    }

    fn screen(&self) -> String {
        let out = tmux_on(&self.name)
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend_from_slice(keys);
        assert!(tmux_on(&self.name).args(&args).status().unwrap().success());
    }

    fn type_line(&self, text: &str) {
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    /// Waits until the screen no longer contains `text` (a dialog closed):
    /// what is typed next must not follow an Escape so closely that the
    /// terminal reads the two as one Alt key.
    pub(crate) fn wait_gone(&self, text: &str) {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if !screen.contains(text) {
                return;
            }
            assert!(Instant::now() < end, "{text:?} stayed; screen:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the screen contains `text`.
    pub(crate) fn wait_for(&self, text: &str) -> String {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < end,
                "never saw {text:?}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `q`, waits for quire to end, and reads the managed project
    /// `dir`'s saved scene.
    fn quit_and_read(&self, s: &Sandbox, dir: &str) -> serde_json::Value {
        self.keys(&["q"]);
        let end = Instant::now() + Duration::from_secs(30);
        while self.alive() {
            assert!(Instant::now() < end, "quire did not quit");
            std::thread::sleep(Duration::from_millis(50));
        }
        let path = s.data_dir().join(format!("projects/{dir}/scene.json"));
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    /// A tmux format (`#{pane_pid}`, …) of the pane.
    fn pane(&self, format: &str) -> String {
        let out = tmux_on(&self.name)
            .args(["display-message", "-p", "-t", &self.name, format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn alive(&self) -> bool {
        tmux_on(&self.name)
            .args(["has-session", "-t", &self.name])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = tmux_on(&self.name)
            .args(["kill-session", "-t", &self.name])
            .stderr(std::process::Stdio::null())
            .status();
        // Its terminal gone, quire gets SIGHUP and ends. A shared TUI
        // with a server beside it was once seen to hang there instead,
        // one thread spinning on the closed terminal; it has not been
        // seen again (tried with an agent on the share polling every
        // 100 ms, an event stream open, both). Should it happen, it is
        // named and killed here rather than left running on the machine.
        let Some(pid) = self.pid else { return };
        let alive = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| !stat.contains(") Z "))
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while alive() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if alive() {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "{}: quire (pid {pid}) did not end 10 s after its terminal closed; killed",
                self.name
            );
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

#[test]
fn an_agent_moves_a_shared_tui_through_the_python_sdk() {
    // With the providers' schema converters, which it runs on the
    // adapter's tools.
    let Some(python) = crate::mcp::python_with(
        "an_agent_moves_a_shared_tui_through_the_python_sdk",
        "agents.strict_schema, google.genai",
    ) else {
        return;
    };
    let s = Sandbox::new();
    // The TUI with the API beside it, so the test can create a session.
    s.user_mode(
        "desk",
        "description = \"TUI and API\"\nfrontends = [\"tui\", \"http\", \"mcp-http\"]\n[config]\nserver.port = 0\n",
    );
    let name = format!("quire-share-{}", std::process::id());
    let Some(tmux) = Tmux::start_with(&s, &name, "--mode desk --tui-mcp") else {
        return;
    };
    let screen = tmux.wait_for("navigations");
    let endpoint = screen
        .split_whitespace()
        .find(|w| w.ends_with("/endpoint.json"))
        .expect("endpoint path on the sharing bar")
        .to_owned();
    let screen = tmux.wait_for("serving http://");
    let url = screen
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_owned();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (status, session) = rt.block_on(json_post(
        &crate::harness::http_client(),
        format!("{url}/api/v1/projects"),
        json!({ "name": "Alpha" }),
    ));
    assert_eq!(status, 200, "{session}");
    let id = session["id"].as_str().unwrap().to_owned();
    tmux.wait_for("● Alpha");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp_interop/tui_share.py"
    );
    let out = Command::new(&python)
        .args([script, BIN, &endpoint, &id])
        .env("XDG_CONFIG_HOME", s.path("config"))
        .env("XDG_DATA_HOME", s.path("data"))
        .env("QUIRE_SYSTEM_CONFIG_DIR", s.path("etc"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The person sees the session now, and the bar counts two navigations.
    tmux.wait_for("Alpha · epoch 0");
    tmux.wait_for("2/128 navigations");
    // Revoking from the TUI removes the endpoint.
    tmux.type_line("/tui-mcp-revoke");
    tmux.wait_for("sharing revoked");
    assert!(!std::path::Path::new(&endpoint).exists());
    tmux.keys(&["q"]);
}

/// The wait status of process `pid` if it has exited and is not reaped
/// yet (the last field of `/proc/<pid>/stat`, Linux 3.5 and later).
fn zombie_status(pid: &str) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name in parentheses: state is the first field.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    (fields.first() == Some(&"Z")).then(|| fields.last()?.parse().ok())?
}

#[test]
fn a_signal_quits_cleanly_saving_projects_and_the_terminal() {
    let s = Sandbox::new();
    let name = format!("quire-sig-{}", std::process::id());
    let Some(tmux) = Tmux::start(&s, &name) else {
        return;
    };
    // Keep the pane after quire exits, to read the terminal it left.
    assert!(
        tmux_on(&name)
            .args(["set-option", "-t", &name, "remain-on-exit", "on"])
            .status()
            .unwrap()
            .success()
    );
    tmux.wait_for("There are no projects yet.");
    tmux.type_line("/new Signal comic");
    tmux.wait_for("Signal comic · epoch 0");
    let page = s.write("page1.txt", "One.\n\nTwo.\n");
    tmux.type_line(&format!("/attach {}", page.display()));
    tmux.wait_for("staged:");
    tmux.type_line("/import");
    tmux.wait_for(" 0/2");
    assert_eq!(
        tmux.pane("#{alternate_on}"),
        "1",
        "the TUI uses the alternate screen"
    );
    let pid = tmux.pane("#{pane_pid}");
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let end = Instant::now() + Duration::from_secs(30);
    // tmux may see the pty close before it has reaped the process (on a
    // busy machine it was seen to leave it a zombie for longer than the
    // deadline): the wait status is tmux's once it has one, else the
    // zombie's own, from /proc.
    let status = loop {
        match tmux.pane("#{pane_dead_status}#{pane_dead_signal}").as_str() {
            "" => {}
            "0" => break 0,
            other => panic!("not a clean exit: {other}"),
        }
        if let Some(status) = zombie_status(&pid) {
            break status;
        }
        assert!(Instant::now() < end, "quire did not exit on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status, 0, "a clean exit, not wait status {status}");
    assert_eq!(
        tmux.pane("#{alternate_on}"),
        "0",
        "the terminal left the alternate screen"
    );
    // The project was closed properly: its snapshot holds the page.
    let scene: serde_json::Value = serde_json::from_slice(
        &std::fs::read(s.data_dir().join("projects/signal-comic/scene.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(scene["epoch"], 1, "{scene}");
    assert_eq!(scene["scene"]["pages"].as_array().unwrap().len(), 1);
}

/// A subtitler's episode at the desk, 80×24, in a real terminal: the
/// languages set, a memory match inserted, a cue too long caught by `qa`
/// and its warning read whole, fixed (its mark gone at once), a range
/// marked reviewed in one op, a replacement previewed and made, `Esc`
/// asking before a draft goes, and a draft back after the TUI is killed.
#[test]
fn an_episode_at_the_desk_at_80_by_24() {
    let s = Sandbox::new();
    let tmx = s.write(
        "episode1.tmx",
        r#"<tmx version="1.4"><header srclang="en"/><body>
<tu changedate="20261102T101500Z"><tuv xml:lang="en"><seg>Where are you going?</seg></tuv><tuv xml:lang="pt-BR"><seg>Aonde você vai?</seg></tuv></tu>
</body></tmx>"#,
    );
    s.quire()
        .args(["tm", "import", &tmx.display().to_string()])
        .run()
        .success();
    let srt = s.write(
        "episode2.srt",
        "1\n00:00:01,000 --> 00:00:03,000\nWhere are you going?\n\n\
         2\n00:00:03,500 --> 00:00:06,000\nI told you a hundred times.\n\n\
         3\n00:00:06,500 --> 00:00:09,000\nSee you tomorrow.\n\n\
         4\n00:00:09,500 --> 00:00:12,000\nGoodbye, my friend.\n",
    );
    let name = format!("quire-desk-{}", std::process::id());
    let Some(tmux) = Tmux::start_sized(&s, &name, "", (80, 24)) else {
        return;
    };
    tmux.wait_for("There are no projects yet.");
    tmux.type_line(&format!("/new Episode {}", srt.display()));
    tmux.wait_for("Episode · epoch");
    tmux.type_line("/lang from=en to=pt-BR");
    tmux.wait_for("en → pt-BR");
    // A children's programme: the project's own subtitle profile.
    tmux.type_line("/profile netflix-children");
    tmux.wait_for("subtitle profile: netflix-children");
    // Cue 1: the memory's match, inserted with one key.
    tmux.keys(&["Tab"]);
    tmux.wait_for("1 100% Aonde você vai? · tmx episode1");
    tmux.keys(&["1"]);
    tmux.wait_for("match 1 inserted");
    tmux.keys(&["Enter"]);
    tmux.wait_for("translation saved");
    // Cue 2: too long for one line; the counts say so while it is typed.
    tmux.keys(&["j", "e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&[
        "-l",
        "Eu já te disse cem vezes que não quero ver você aqui de novo",
    ]);
    tmux.wait_for("over 42 chars/line, 13 cps");
    tmux.keys(&["Enter"]);
    tmux.wait_for("translation saved");
    tmux.keys(&["j", "e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&["-l", "Até amanhã."]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("translation saved");
    tmux.type_line("/run qa");
    tmux.wait_for("qa: done");
    // The warnings in cue order; the selected one read whole, wrapped.
    tmux.keys(&["Tab"]);
    let screen = tmux.wait_for("line length: cue 2: line 1 has 60 characters, over 42");
    assert!(screen.contains("⚠ p1 · line length: cue 2"), "{screen}");
    let desk = screen.clone();
    // Enter shows its cue; fixed, its mark goes at once, before qa runs
    // again.
    tmux.keys(&["Enter"]);
    tmux.wait_for("Source · cue 2");
    tmux.keys(&["e", "C-a", "C-k"]);
    tmux.keys(&["-l", "Já te disse cem vezes."]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("translation saved");
    tmux.wait_gone("line length: cue 2");
    // Cues 1-3 marked reviewed in one op, then undone in one step.
    tmux.keys(&["g", "v", "j", "j", "r"]);
    tmux.wait_for("marked 3 nodes reviewed");
    tmux.keys(&["u"]);
    tmux.wait_for("undone: marked 3 nodes reviewed");
    // A replacement, previewed first.
    tmux.type_line("/replace você => tu -w");
    let preview = tmux.wait_for("Aonde tu vai?");
    assert!(preview.contains("1 match in 1 segment"), "{preview}");
    tmux.keys(&["y"]);
    tmux.wait_for("replace `você` with `tu`");
    tmux.type_line("/find tu -w");
    tmux.wait_for("`tu`: 1 match in 1 segment");
    // Esc asks before a changed draft goes; the draft outlives a kill.
    tmux.keys(&["G", "e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&["-l", "Adeus, meu amigo"]);
    tmux.keys(&["Escape"]);
    tmux.wait_for("Drop this draft?");
    tmux.keys(&["n"]);
    tmux.wait_gone("Drop this draft?");
    tmux.wait_for("Adeus, meu amigo");
    let drafts = s.data_dir().join("drafts");
    let end = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_dir(&drafts).is_ok_and(|d| {
        d.flatten().any(|f| {
            std::fs::read_to_string(f.path()).is_ok_and(|t| t.contains("Adeus, meu amigo"))
        })
    }) {
        assert!(Instant::now() < end, "the draft was never kept");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = tmux.pane("#{pane_pid}");
    assert!(
        Command::new("kill")
            .args(["-9", &pid])
            .status()
            .unwrap()
            .success()
    );
    drop(tmux);
    let Some(tmux) = Tmux::start_sized(&s, &name, "", (80, 24)) else {
        return;
    };
    tmux.wait_for("Episode");
    tmux.keys(&["Enter"]);
    tmux.wait_for("en → pt-BR");
    tmux.keys(&["Tab", "G", "e"]);
    tmux.wait_for("your unsaved draft is back");
    tmux.wait_for("Adeus, meu amigo");
    std::fs::write(s.path("desk-80x24.txt"), &desk).unwrap();
    if let Ok(out) = std::env::var("QUIRE_DESK_SCREEN") {
        std::fs::write(out, &desk).unwrap();
    }
}

/// A TUI attached with bea's token names who wrote each translation: ana's
/// (made over HTTP), then bea's own, and whose change an undo undid.
#[test]
fn an_attached_tui_names_each_translations_author() {
    let s = Sandbox::new();
    let config = s.write(
        "team.toml",
        "[server]\ntoken = \"tui-owner-1\"\n\n[[server.users]]\nname = \"ana\"\ntoken = \"tui-ana-2\"\n\n\
         [[server.users]]\nname = \"bea\"\ntoken = \"tui-bea-3\"\n",
    );
    let server = Binary::headless(&s, &config, &[], &[]);
    let c = server.client();
    let session = c.ok(
        "POST",
        "/api/v1/projects",
        "tui-owner-1",
        Some(serde_json::json!({"name": "Team"})),
    );
    let prefix = format!("/api/v1/sessions/{}", session["id"].as_str().unwrap());
    let created = c.ok(
        "POST",
        &format!("{prefix}/pages"),
        "tui-ana-2",
        Some(serde_json::json!({"name": "p1", "text": "One.\n\nTwo."})),
    );
    let ids = created["created"].as_array().unwrap();
    c.ok(
        "POST",
        &format!("{prefix}/history/apply"),
        "tui-ana-2",
        Some(
            serde_json::json!({"type": "UpdateNode", "page": ids[0], "id": ids[1],
               "patch": {"kind": {"type": "text", "translation": "Um."}}}),
        ),
    );
    let name = format!("quire-team-{}", std::process::id());
    let args = format!("attach {} --token tui-bea-3", server.url);
    let Some(tmux) = Tmux::start_sized(&s, &name, &args, (100, 30)) else {
        return;
    };
    tmux.wait_for("Team");
    tmux.keys(&["Enter"]);
    tmux.wait_for("translated · by ana");
    tmux.keys(&["Tab", "j"]);
    tmux.wait_for("not translated · e to edit");
    tmux.keys(&["e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&["-l", "Dois."]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("translated · by bea");
    tmux.keys(&["u"]);
    tmux.wait_for("(bea's)");
    tmux.keys(&["q"]);
    assert!(server.terminate().success());
}
