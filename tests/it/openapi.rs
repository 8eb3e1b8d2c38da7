//! The OpenAPI document is true to the server, checked by independent
//! code: `tests/openapi/check.py` calls every documented operation and
//! validates each reply against the document (`jsonschema`), with and
//! without a token; `tests/openapi/generated.py` generates a client with
//! `openapi-python-client` and makes the apply call with it.

use std::path::PathBuf;
use std::process::Command;

use crate::harness::{Sandbox, run_checker};
use crate::http_support::Binary;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/openapi");

/// The .venv Python with jsonschema, httpx and openapi-python-client.
fn python(test: &str) -> Option<PathBuf> {
    crate::mcp::python_with(
        test,
        "jsonschema, referencing, httpx, openapi_python_client",
    )
}

fn run(sandbox: &Sandbox, python: &PathBuf, script: &str, args: &[&str]) -> String {
    let mut cmd = Command::new(python);
    cmd.arg(format!("{DIR}/{script}")).args(args);
    run_checker(sandbox, &mut cmd, "ok")
}

#[test]
fn every_documented_operation_answers_as_documented() {
    let Some(python) = python("every_documented_operation_answers_as_documented") else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let out = run(&s, &python, "check.py", &[&server.url]);
    assert!(out.contains("openapi: ok (56 operations)"), "{out}");
    assert!(server.terminate().success());
}

#[test]
fn with_a_token_every_operation_but_healthz_declares_it() {
    let Some(python) = python("with_a_token_every_operation_but_healthz_declares_it") else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(
        &s,
        &["--headless", "--port", "0"],
        &[("QUIRE_SERVER__TOKEN", "open-sesame")],
    );
    let out = run(&s, &python, "check.py", &[&server.url, "open-sesame"]);
    assert!(out.contains("openapi: ok"), "{out}");
    assert!(server.terminate().success());
}

#[test]
fn a_generated_python_client_applies_ops() {
    let Some(python) = python("a_generated_python_client_applies_ops") else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let work = s.path("generated");
    std::fs::create_dir_all(&work).unwrap();
    let out = run(
        &s,
        &python,
        "generated.py",
        &[&server.url, &work.display().to_string()],
    );
    assert!(out.contains("generated client: ok"), "{out}");
    assert!(server.terminate().success());
}
