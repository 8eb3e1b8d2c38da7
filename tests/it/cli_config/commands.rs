//! The helper commands that read the configuration: projects, engines and
//! models lists, and the engine checks behind them.

use super::*;

#[test]
fn projects_list_reads_the_data_directory() {
    let s = Sandbox::new();
    s.quire()
        .args(["projects", "list"])
        .run()
        .success()
        .stdout_has("no projects in")
        .stdout_has(&s.data_dir().join("projects").display().to_string());
    let project = s.data_dir().join("projects/demo");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("project.toml"),
        "id = \"0190d2a0-0000-7000-8000-000000000001\"\nname = \"Demo\"\ncreatedAt = \"2026-01-01T00:00:00Z\"\nformatVersion = 1\n",
    )
    .unwrap();
    s.quire()
        .args(["projects", "list"])
        .run()
        .success()
        .stdout_has("Demo")
        .stdout_has("closed");
    let json = s
        .quire()
        .args(["projects", "list", "--json"])
        .run()
        .success()
        .stdout();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["name"], "Demo");
    assert_eq!(v[0]["id"], "0190d2a0-0000-7000-8000-000000000001");
}

#[test]
fn engines_list_shows_built_in_and_configured_engines() {
    let s = Sandbox::new();
    let example = format!(
        "{}/config/examples/ocr-tesseract.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    s.quire()
        .args(["config", "check", &example])
        .run()
        .success();
    let out = s
        .quire()
        .args(["--config", &example, "engines", "list"])
        .run()
        .success()
        .stdout();
    for id in ["pseudo-translate", "qa", "llm-translate", "ocr-tesseract"] {
        assert!(out.contains(id), "{id} missing:\n{out}");
    }
    assert!(out.contains("command, needs approval"), "{out}");
    let json = s
        .quire()
        .args(["--config", &example, "engines", "list", "--json"])
        .run()
        .success()
        .stdout();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ocr = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "ocr-tesseract")
        .unwrap();
    assert_eq!(ocr["requiresApproval"], true);
    assert_eq!(ocr["builtIn"], false);
    assert_eq!(ocr["stage"], "ocr");
    // The named pipelines are listed too: the built-in chapter.
    let chapter = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "chapter")
        .unwrap();
    assert_eq!(chapter["stage"], "pipeline");
    assert_eq!(chapter["builtIn"], true);
    assert!(
        chapter["description"]
            .as_str()
            .unwrap()
            .contains("detect → ocr"),
        "{chapter}"
    );
    assert!(out.contains("built-in pipeline"), "{out}");
}

#[test]
fn a_command_engine_may_not_take_a_built_in_id_or_run_nothing() {
    let s = Sandbox::new();
    let json = s
        .quire()
        .args(["engines", "list", "--json"])
        .run()
        .success()
        .stdout();
    let engines: serde_json::Value = serde_json::from_str(&json).unwrap();
    let built_in: Vec<&str> = engines
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["builtIn"] == true)
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert!(built_in.len() >= 5, "{json}");
    for id in built_in {
        s.user_config(&format!(
            "[engines.{id}]\ncommand = [\"true\"]\ninput = \"page-json\"\noutput = \"ops\"\n"
        ));
        let why = if engines
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["id"] == id && e["stage"] == "pipeline")
        {
            "is a named pipeline"
        } else {
            "is a built-in engine"
        };
        s.quire()
            .args(["engines", "list"])
            .run()
            .fails(2, &[&format!("engines.{id}"), why]);
    }
    s.user_config("[engines.x]\ncommand = []\ninput = \"page-json\"\noutput = \"ops\"\n");
    s.quire()
        .args(["engines", "list"])
        .run()
        .fails(2, &["engines.x.command", "must name a program"]);
    s.user_config("[engines.x]\ncommand = [\"a\"]\ninput = \"page-json\"\noutput = \"html\"\n");
    s.quire().args(["engines", "list"]).run().fails(
        2,
        &["engines.x.output", "expected one of: ops, tesseract-tsv"],
    );
}

/// Counts and durations that must be positive are typed so (`NonZero`): a
/// zero is refused at load, naming the key and the file, and nothing runs
/// (a provider's `timeout_secs = 0` was silently clamped to 1 before).
#[test]
fn zero_where_a_positive_number_is_needed_is_refused_with_its_key() {
    let s = Sandbox::new();
    let cases = [
        ("[server]\nmax_body_bytes = 0\n", "server.max_body_bytes"),
        (
            "[server]\nsend_timeout_secs = 0\n",
            "server.send_timeout_secs",
        ),
        (
            "[storage]\nsnapshot_every_ops = 0\n",
            "storage.snapshot_every_ops",
        ),
        ("[history]\nundo_limit = 0\n", "history.undo_limit"),
        (
            "[engines.ocr2]\ncommand = [\"x\"]\ninput = \"page-image\"\noutput = \"ops\"\ntimeout_secs = 0\n",
            "engines.ocr2.timeout_secs",
        ),
        (
            "[engines.ocr2]\ncommand = [\"x\"]\ninput = \"page-image\"\noutput = \"ops\"\nmax_output_bytes = 0\n",
            "engines.ocr2.max_output_bytes",
        ),
        (
            "[providers.p]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\ntimeout_secs = 0\n",
            "providers.p.timeout_secs",
        ),
    ];
    for (text, key) in cases {
        let file = s.user_config(text);
        let before = s.snapshot();
        let done = s.quire().args(["config", "show"]).run();
        assert_eq!(done.code(), 2, "{text}: {}", done.stderr());
        let err = done.stderr();
        assert!(err.contains(key), "{text}: {err}");
        assert!(err.contains(&file.display().to_string()), "{text}: {err}");
        assert!(err.contains("nonzero"), "{text}: {err}");
        assert_eq!(s.snapshot(), before, "{text}: nothing written");
    }
}

/// The onnx OCR and detect backends without their model files, or with
/// a path that is no file: refused at start, the key named, nothing
/// written.
#[test]
fn an_onnx_ocr_backend_without_its_models_is_refused_with_its_key() {
    let s = Sandbox::new();
    let cases = [
        ("[ocr]\nbackend = \"onnx\"\n", "ocr.model", "is needed by"),
        (
            "[ocr]\nbackend = \"onnx\"\nmodel = \"/nonexistent/rec.onnx\"\n",
            "ocr.model",
            "is not a file",
        ),
        (
            "[ocr]\nbackend = \"onnx\"\nmodel = \"/etc/hostname\"\n",
            "ocr.detector",
            "is needed by",
        ),
        (
            "[ocr]\nbackend = \"paddle\"\n",
            "ocr.backend",
            "expected one of: tesseract, onnx",
        ),
        (
            "[detect]\nbackend = \"onnx\"\n",
            "detect.model",
            "is needed by",
        ),
        (
            "[detect]\nbackend = \"onnx\"\nmodel = \"/nonexistent/det.onnx\"\n",
            "detect.model",
            "is not a file",
        ),
        (
            "[detect]\nbackend = \"yolo\"\n",
            "detect.backend",
            "expected one of: builtin, onnx",
        ),
    ];
    for (text, key, why) in cases {
        s.user_config(text);
        let before = s.snapshot();
        let done = s.quire().args(["config", "show"]).run();
        assert_eq!(done.code(), 2, "{text}: {}", done.stderr());
        let err = done.stderr();
        assert!(err.contains(key), "{text}: {err}");
        assert!(err.contains(why), "{text}: {err}");
        assert_eq!(s.snapshot(), before, "{text}: nothing written");
    }
}

/// `quire models list`: each configured model file with its size, its
/// sha256 (as coreutils' `sha256sum` computes it) and whether it loads; a
/// file that is no model says why.
#[test]
fn models_list_names_each_model_its_digest_and_whether_it_loads() {
    let test = "models_list_names_each_model_its_digest_and_whether_it_loads";
    let Some((det, _)) = crate::pages::ppocr_models(test) else {
        return;
    };
    let s = Sandbox::new();
    let junk = s.root().join("junk.onnx");
    std::fs::write(&junk, b"not a model").unwrap();
    s.user_config(&format!(
        "[detect]\nbackend = \"onnx\"\nmodel = \"{}\"\n[ocr]\nbackend = \"onnx\"\ndetector = \"{}\"\nmodel = \"{}\"\n",
        det.display(),
        det.display(),
        junk.display()
    ));
    // The junk file is named, and makes the command exit 1.
    let done = s.quire().args(["models", "list", "--json"]).run();
    assert_eq!(done.code(), 1, "{}", done.stderr());
    assert!(
        done.stderr().contains("1 model cannot be used"),
        "{}",
        done.stderr()
    );
    let listed: serde_json::Value = serde_json::from_str(&done.stdout()).unwrap();
    let sha = |path: &std::path::Path| {
        let out = std::process::Command::new("sha256sum")
            .arg(path)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()[..64].to_owned()
    };
    let keys: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["detect.model", "ocr.detector", "ocr.model"]);
    for detector in &listed.as_array().unwrap()[..2] {
        assert_eq!(detector["sha256"], sha(&det).as_str());
        assert_eq!(detector["bytes"], std::fs::metadata(&det).unwrap().len());
        assert_eq!(detector["loads"], "ok");
    }
    assert_eq!(listed[2]["sha256"], sha(&junk).as_str());
    let why = listed[2]["loads"].as_str().unwrap();
    assert!(why.contains("cannot be read as an ONNX model"), "{why}");
    // The table says the same.
    let table = s.quire().args(["models", "list"]).run();
    assert_eq!(table.code(), 1, "{}", table.stderr());
    assert!(table.stdout().contains(&sha(&det)), "{}", table.stdout());
    // The models load in the quire-ppocr helper; without it, each says
    // which program could not be started.
    let missing = s
        .quire()
        .env("QUIRE_PPOCR_HELPER", "/nonexistent/quire-ppocr")
        .args(["models", "list", "--json"])
        .run();
    assert_eq!(missing.code(), 1, "{}", missing.stderr());
    let listed: serde_json::Value = serde_json::from_str(&missing.stdout()).unwrap();
    let why = listed[0]["loads"].as_str().unwrap();
    assert!(
        why.contains("/nonexistent/quire-ppocr cannot be started"),
        "{why}"
    );
    assert_eq!(listed[0]["sha256"], sha(&det).as_str());
}
