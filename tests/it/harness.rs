//! A sandbox per test (its own config, data and system directories) and a
//! small fluent builder over the real binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_quire");

/// An isolated home: nothing from the machine's own config leaks in.
pub struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("quire-it-")
            .tempdir()
            .unwrap();
        for sub in ["home", "config/quire", "data", "etc"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Sandbox { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn user_config_dir(&self) -> PathBuf {
        self.path("config/quire")
    }

    pub fn data_dir(&self) -> PathBuf {
        self.path("data/quire")
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn user_config(&self, text: &str) -> PathBuf {
        self.write("config/quire/config.toml", text)
    }

    pub fn system_config(&self, text: &str) -> PathBuf {
        self.write("etc/config.toml", text)
    }

    pub fn user_mode(&self, name: &str, text: &str) -> PathBuf {
        self.write(&format!("config/quire/modes/{name}.toml"), text)
    }

    /// Every file under the sandbox with its bytes: compare before and
    /// after a failing command to prove it wrote nothing.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    out.insert(path.clone(), Vec::new());
                    walk(&path, out);
                } else {
                    out.insert(path.clone(), std::fs::read(&path).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(self.root(), &mut out);
        out
    }

    /// Gives `cmd` this sandbox's environment and nothing else: its own
    /// home, config, data and system directories.
    pub fn isolate<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("QUIRE_SYSTEM_CONFIG_DIR", self.path("etc"))
    }

    /// The quire binary as a plain `Command` in this sandbox.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(BIN);
        self.isolate(&mut cmd);
        cmd
    }

    pub fn quire(&self) -> Run {
        let mut cmd = self.command();
        cmd.env("NO_COLOR", "1").current_dir(self.root());
        Run { cmd }
    }
}

pub struct Run {
    cmd: Command,
}

impl Run {
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.cmd.env(key, value);
        self
    }

    pub fn run(mut self) -> Done {
        let output = self.cmd.output().expect("run quire");
        Done { output }
    }
}

pub struct Done {
    pub output: Output,
}

impl Done {
    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    #[track_caller]
    pub fn success(self) -> Self {
        assert_eq!(
            self.code(),
            0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout(),
            self.stderr()
        );
        self
    }

    /// Exit code `code`, and stderr whose first line is `quire: error: …`
    /// containing every one of `parts`.
    #[track_caller]
    pub fn fails(self, code: i32, parts: &[&str]) -> Self {
        let stderr = self.stderr();
        assert_eq!(self.code(), code, "exit code; stderr:\n{stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(first.starts_with("quire: error: "), "first line: {first:?}");
        for part in parts {
            assert!(first.contains(part), "missing {part:?} in {first:?}");
        }
        assert!(self.output.stdout.is_empty(), "stdout: {}", self.stdout());
        self
    }

    #[track_caller]
    pub fn stdout_has(self, part: &str) -> Self {
        let out = self.stdout();
        assert!(out.contains(part), "missing {part:?} in stdout:\n{out}");
        self
    }
}

/// The `# origin` comment of `key` in `config show --origin` output.
pub fn origin_of(show: &str, key: &str) -> String {
    let prefix = format!("{key} = ");
    let line = show
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {key} in:\n{show}"));
    line.rsplit_once(" # ").unwrap().1.trim().to_owned()
}

/// The value of `key` in `config show --origin` output, as written.
pub fn value_of(show: &str, key: &str) -> String {
    let prefix = format!("{key} = ");
    let line = show.lines().find(|l| l.starts_with(&prefix)).unwrap();
    let rest = &line[prefix.len()..];
    rest.rsplit_once(" # ").unwrap().0.trim().to_owned()
}

// Whether a test that needs an outside tool may run, and why a program
// cannot: the core's test support has the rule, and these tests use it.
pub use crate::core_base::{allowed_missing, missing_program, tool_available};

/// GNU gettext's `msgfmt --check` passes on `file`; a missing `msgfmt`
/// fails `test` unless `ALLOW_MISSING_TOOLS` names it.
#[track_caller]
pub fn msgfmt_checks(test: &str, file: &Path) {
    if !tool_available("msgfmt", test, missing_program("msgfmt", "--version")) {
        return;
    }
    let check = std::process::Command::new("msgfmt")
        .args(["--check", "-o", "/dev/null"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "msgfmt --check {}: {}",
        file.display(),
        String::from_utf8_lossy(&check.stderr)
    );
}

/// `../shared/testdata/<rel>` (real files other people made; the folder
/// sits beside the project, not in it), or `None` when it is not there:
/// the test is then reported by name as skipped. `QUIRE_TESTDATA` names
/// another place for the folder.
pub fn testdata(test: &str, rel: &str) -> Option<PathBuf> {
    let root = std::env::var_os("QUIRE_TESTDATA").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/testdata"),
        PathBuf::from,
    );
    let path = root.join(rel);
    if path.exists() {
        return Some(path);
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: {} is not there (QUIRE_TESTDATA names the testdata folder)",
        path.display()
    );
    None
}

/// Runs `cmd` in `sandbox`, asserts that it succeeded and printed `ok`
/// (the interop scripts' last line), and returns its stdout.
pub fn run_checker(sandbox: &Sandbox, cmd: &mut Command, ok: &str) -> String {
    let shown = format!("{cmd:?}");
    let out = sandbox.isolate(cmd).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{shown} failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains(ok),
        "{shown}: no `{ok}` in\n{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    stdout
}

#[test]
fn the_opt_out_names_tools_exactly() {
    assert!(allowed_missing(Some("tmux, tesseract"), "tesseract"));
    assert!(allowed_missing(Some("all"), "mcp-sdk"));
    assert!(!allowed_missing(Some("tmuxx"), "tmux"));
    assert!(!allowed_missing(None, "tmux"));
    assert!(tool_available("tmux", "t", None));
}

/// An HTTP client for talking to a test server. quire's reqwest has no TLS
/// provider of its own, so every client is built after the one quire
/// installs (`quire_core::install_tls_provider`).
pub fn http_client() -> reqwest::Client {
    quire_core::install_tls_provider();
    reqwest::Client::new()
}

/// The blocking twin of [`http_client`].
pub fn blocking_client() -> reqwest::blocking::Client {
    quire_core::install_tls_provider();
    reqwest::blocking::Client::new()
}
