//! The deployment examples in `deploy/` (spec 17, "Deployment examples,
//! shipped"): each Kubernetes manifest validates against the Kubernetes
//! schemas (PyPI's `kubernetes-validate`, strict: no unknown field), a
//! broken copy does not, the server's config in the ConfigMap passes
//! `quire config check`, and the Slurm array script runs `quire batch` on
//! the input its task stands for.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{BIN, Sandbox};

const DEPLOY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy");

fn validate(python: &Path, file: &Path) -> std::process::Output {
    Command::new(python)
        .args(["-m", "kubernetes_validate", "--strict"])
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn the_kubernetes_examples_validate_against_the_kubernetes_schemas() {
    let test = "the_kubernetes_examples_validate_against_the_kubernetes_schemas";
    let Some(python) = crate::mcp::python_with(test, "kubernetes_validate") else {
        return;
    };
    let s = Sandbox::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(format!("{DEPLOY}/kubernetes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    for file in &files {
        let out = validate(&python, file);
        let said = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}: {said}", file.display());
        assert!(said.contains("passed"), "{}: {said}", file.display());
    }
    // The validator can fail: a misspelt field is refused.
    let job = std::fs::read_to_string(format!("{DEPLOY}/kubernetes/batch-job.yaml")).unwrap();
    let broken = s.write(
        "broken.yaml",
        &job.replace("completionMode:", "completionMod:"),
    );
    assert!(!validate(&python, &broken).status.success());
    // The inference server is ready when MLServer says so (its
    // settings are the ones tests/it/pages/backends.rs starts MLServer
    // with), and its image carries the runtime the tests run.
    let inference =
        std::fs::read_to_string(format!("{DEPLOY}/kubernetes/inference-server.yaml")).unwrap();
    assert!(inference.contains("path: /v2/health/ready"));
    let dockerfile = std::fs::read_to_string(format!("{DEPLOY}/mlserver/Dockerfile")).unwrap();
    assert!(dockerfile.contains("COPY quire_onnx.py"));
    // The server's liveness asks only whether the process answers.
    let headless = std::fs::read_to_string(format!("{DEPLOY}/kubernetes/headless.yaml")).unwrap();
    let liveness = headless.split("livenessProbe:").nth(1).unwrap();
    assert!(
        liveness.trim_start().starts_with("tcpSocket:"),
        "{liveness}"
    );
    // The Job indexes a list, as `quire batch --inputs` reads it.
    assert!(job.contains("completionMode: Indexed") && job.contains("--inputs"));
    // The server's config, as the ConfigMap mounts it, is valid.
    let manifest = std::fs::read_to_string(format!("{DEPLOY}/kubernetes/headless.yaml")).unwrap();
    let config: String = manifest
        .split("config.toml: |\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("    "))
        .map(|l| format!("{}\n", &l[4..]))
        .collect();
    assert!(config.contains("[server]"), "{config}");
    let file = s.write("k8s-config.toml", &config);
    s.quire()
        .args(["config", "check"])
        .args([&file])
        .run()
        .success()
        .stdout_has("ok: configuration is valid");
}

#[test]
fn the_slurm_array_script_runs_quire_batch_on_its_task() {
    let s = Sandbox::new();
    let first = s.write("work/first.po", "msgid \"Hello\"\nmsgstr \"\"\n");
    let second = s.write("work/second.po", "msgid \"Bye\"\nmsgstr \"\"\n");
    let list = s.write(
        "work/chapters.txt",
        &format!("{}\n{}\n", first.display(), second.display()),
    );
    let out = s.path("out");
    let tmp = s.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = Command::new("sh");
    s.isolate(&mut cmd);
    let done = cmd
        .arg(format!("{DEPLOY}/slurm/batch-array.sh"))
        .env("QUIRE", BIN)
        .env("LIST", &list)
        .env("OUT", &out)
        .env("PRESET", "pseudo-translate")
        .env("TMPDIR", &tmp)
        .env("SLURM_ARRAY_JOB_ID", "41")
        .env("SLURM_ARRAY_TASK_ID", "3")
        .env("SLURM_ARRAY_TASK_MIN", "2")
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // Task 3 of an array from 2 is input 1.
    assert!(out.join("second/second.po").exists());
    assert!(!out.join("first").exists());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("second/report.json")).unwrap()).unwrap();
    assert_eq!(report["index"], 1);
    assert_eq!(report["status"], "done");
}

/// Spec 17's fleet, as `docs/operations.md` shows it: Caddy routes each
/// team's host to its own headless server; a request reaches only its
/// team's projects, and with one server stopped the other's host still
/// answers while the stopped one's gets the proxy's 502.
#[test]
fn the_fleet_example_routes_each_host_to_its_server_and_survives_one_down() {
    let test = "the_fleet_example_routes_each_host_to_its_server_and_survives_one_down";
    if !crate::harness::tool_available(
        "caddy",
        test,
        crate::harness::missing_program("caddy", "version"),
    ) {
        return;
    }
    let s = Sandbox::new();
    let token = "fleet-token-fleet-token";
    let server = |team: &str| {
        let config = format!(
            "[server]\ntoken = \"{token}\"\nallowed_hosts = [\"{team}.quire.example.org\"]\n"
        );
        let data = s.path(&format!("data-{team}"));
        let file = s.write(&format!("{team}.toml"), &config);
        crate::http_support::Binary::headless(
            &s,
            &file,
            &["--data-dir", data.to_str().unwrap()],
            &[],
        )
    };
    let a = server("team-a");
    let b = server("team-b");
    let proxy = crate::proxy_support::Caddy::start_fleet(&s, &a.url, &b.url);
    let http = crate::harness::blocking_client();
    let ask = |method: reqwest::Method, team: &str, path: &str, body: Option<serde_json::Value>| {
        let mut request = http
            .request(method, format!("{}{path}", proxy.url))
            .header("Host", format!("{team}.quire.example.org"))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().unwrap();
        let status = response.status().as_u16();
        (status, response.text().unwrap())
    };
    let (made, said) = ask(
        reqwest::Method::POST,
        "team-a",
        "/api/v1/projects",
        Some(serde_json::json!({ "name": "Only on A" })),
    );
    assert_eq!(made, 200, "{said}");
    let (_, on_a) = ask(reqwest::Method::GET, "team-a", "/api/v1/projects", None);
    let (_, on_b) = ask(reqwest::Method::GET, "team-b", "/api/v1/projects", None);
    assert!(on_a.contains("Only on A"), "{on_a}");
    assert!(!on_b.contains("Only on A"), "{on_b}");
    assert!(b.terminate().success());
    let (down, _) = ask(reqwest::Method::GET, "team-b", "/healthz", None);
    assert_eq!(down, 502);
    let (up, said) = ask(reqwest::Method::GET, "team-a", "/api/v1/projects", None);
    assert_eq!(up, 200, "{said}");
    assert!(said.contains("Only on A"), "{said}");
    assert!(a.terminate().success());
}

/// The configuration blocks of `docs/operations.md`'s "Models on an
/// inference server" and "Translation providers at scale" are valid as
/// written (`quire config check` asks no server).
#[test]
fn the_operations_guides_backend_and_provider_blocks_are_valid() {
    let guide = include_str!("../../docs/operations.md");
    let s = Sandbox::new();
    for section in [
        "## Models on an inference server",
        "## Translation providers at scale",
    ] {
        let block = guide
            .split(section)
            .nth(1)
            .and_then(|rest| rest.split("```toml\n").nth(1))
            .and_then(|rest| rest.split("```").next())
            .unwrap_or_else(|| panic!("a toml block under {section}"));
        let file = s.write("guide.toml", block);
        s.quire()
            .args(["config", "check"])
            .args([&file])
            .run()
            .success()
            .stdout_has("ok: configuration is valid");
    }
}
