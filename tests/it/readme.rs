//! The README's walkthrough works as written: the block between
//! `walkthrough:start` and `walkthrough:end` runs in bash against a fresh
//! `quire --headless` (its own, in place of the block's first line) and
//! says what the README says it does.

use std::process::Command;

use crate::harness::{Sandbox, tool_available};
use crate::http_support::Binary;

fn walkthrough() -> String {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("<!-- walkthrough:start -->")
        .expect("start marker");
    let end = readme.find("<!-- walkthrough:end -->").expect("end marker");
    let block = &readme[start..end];
    let body = block
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a sh block")
        .0;
    body.to_owned()
}

#[test]
fn the_translator_walkthrough_runs_as_written() {
    let missing = |tool: &str| {
        (!Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()))
        .then(|| format!("`{tool} --version` does not run"))
    };
    for tool in ["curl", "python3"] {
        if !tool_available(
            tool,
            "the_translator_walkthrough_runs_as_written",
            missing(tool),
        ) {
            return;
        }
    }
    let script = walkthrough();
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
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for said in [
        "\"by\":\"human\"\n\"by\":\"engine\"\n\"by\":\"engine\"",
        r#"{"epoch":5,"updated":2,"unchanged":1,"conflicts":[],"unmatched":[]}"#,
        r#"{"epoch":6,"label":"import XLIFF · 2 segments","ops":2}"#,
    ] {
        assert!(
            stdout.contains(said),
            "the README says {said:?}; it printed:\n{stdout}"
        );
    }
    assert!(server.terminate().success());
}
