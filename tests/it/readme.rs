//! The guide's walkthroughs (`docs/translators.md`) work as written: each
//! block between `<name>:start` and `<name>:end` runs in bash against a
//! fresh `quire --headless` (its own, in place of the block's first line)
//! and says what the page says it does.

use std::process::Command;

use crate::harness::{Sandbox, tool_available};
use crate::http_support::Binary;

/// The `sh` block between the markers `<!-- {name}:start -->` and
/// `<!-- {name}:end -->`.
fn block(name: &str) -> String {
    let readme = include_str!("../../docs/translators.md");
    let start = readme
        .find(&format!("<!-- {name}:start -->"))
        .expect("start marker");
    let end = readme
        .find(&format!("<!-- {name}:end -->"))
        .expect("end marker");
    let block = &readme[start..end];
    let body = block
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a sh block")
        .0;
    body.to_owned()
}

/// Runs block `name` against a fresh server; its stdout, or `None` when a
/// tool it needs is missing and allowed to be.
fn run(name: &str, test: &str) -> Option<String> {
    let missing = |tool: &str| {
        (!Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()))
        .then(|| format!("`{tool} --version` does not run"))
    };
    for tool in ["curl", "python3"] {
        if !tool_available(tool, test, missing(tool)) {
            return None;
        }
    }
    let script = block(name);
    let (first, rest) = script.split_once('\n').unwrap();
    assert_eq!(first, "quire --headless --port 4096 &", "{script}");
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let host = server.url.trim_start_matches("http://").to_owned();
    let script = rest.replace("localhost:4096", &host);
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(s.root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(server.terminate().success());
    Some(stdout)
}

fn says(stdout: &str, said: &[&str]) {
    for said in said {
        assert!(
            stdout.contains(said),
            "docs/translators.md says {said:?}; it printed:\n{stdout}"
        );
    }
}

#[test]
fn the_translator_walkthrough_runs_as_written() {
    let Some(stdout) = run("walkthrough", "the_translator_walkthrough_runs_as_written") else {
        return;
    };
    says(
        &stdout,
        &[
            "\"by\":\"human\"\n\"by\":\"engine\"\n\"by\":\"engine\"",
            r#"{"epoch":5,"updated":2,"unchanged":1,"kept":0,"conflicts":[],"unmatched":[],"base":"01"#,
            r#"{"epoch":6,"label":"import XLIFF · 2 segments","ops":2}"#,
        ],
    );
}

#[test]
fn the_formats_walkthrough_runs_as_written() {
    let Some(stdout) = run("formats", "the_formats_walkthrough_runs_as_written") else {
        return;
    };
    says(
        &stdout,
        &[
            r#"{"epoch":2,"updated":2,"unchanged":0,"kept":0,"conflicts":[],"unmatched":[],"base":"01"#,
            r#"{"epoch":3,"added":1,"updated":0,"unchanged":0}"#,
            "terminology: \"Home, to the moon.\" has the glossary term \"moon\", to be translated \"lune\", but the translation does not have it",
            "1\n00:00:01,000 --> 00:00:02,500\nOù vas-tu ?\n\n2\n00:00:03,000 --> 00:00:04,200\nÀ la maison, vers la lune.\n",
            "\"score\":0.952\n\"score\":1.0",
            "WEBVTT\n\n00:00:05.000 --> 00:00:06.000\nOù vas-tu ?\n\n00:00:07.000 --> 00:00:08.000\nÀ la maison, vers la lune.\n\n00:00:09.000 --> 00:00:10.000\nGood night.\n",
        ],
    );
}
