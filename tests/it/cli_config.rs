//! Layered configuration through the real binary: precedence, origins,
//! environment nesting, secrets and every bad input.

use crate::harness::{Sandbox, origin_of, value_of};

#[test]
fn each_layer_overrides_the_one_below_and_origin_names_it() {
    let s = Sandbox::new();
    let show = |s: &Sandbox, extra: &[&str], env: Option<(&str, &str)>| {
        let mut run = s.quire();
        if let Some((k, v)) = env {
            run = run.env(k, v);
        }
        run.args(extra)
            .args(["config", "show", "--origin"])
            .run()
            .success()
            .stdout()
    };

    let out = show(&s, &[], None);
    assert_eq!(value_of(&out, "server.port"), "4096");
    assert_eq!(
        origin_of(&out, "server.port"),
        "default config/default.toml"
    );

    let system = s.system_config("[server]\nport = 5001\n");
    let out = show(&s, &[], None);
    assert_eq!(value_of(&out, "server.port"), "5001");
    assert_eq!(
        origin_of(&out, "server.port"),
        format!("system {}", system.display())
    );

    let user = s.user_config("[server]\nport = 5002\n");
    let out = show(&s, &[], None);
    assert_eq!(value_of(&out, "server.port"), "5002");
    assert_eq!(
        origin_of(&out, "server.port"),
        format!("user {}", user.display())
    );

    let extra = s.write("extra.toml", "[server]\nport = 5003\n");
    let extra_arg = extra.to_str().unwrap();
    let out = show(&s, &["--config", extra_arg], None);
    assert_eq!(value_of(&out, "server.port"), "5003");
    assert_eq!(
        origin_of(&out, "server.port"),
        format!("--config {extra_arg}")
    );

    let mode = s.user_mode(
        "desk",
        "description = \"test\"\nfrontends = [\"tui\"]\n[config]\nserver.port = 5004\n",
    );
    let with_mode = ["--config", extra_arg, "--mode", "desk"];
    let out = show(&s, &with_mode, None);
    assert_eq!(value_of(&out, "server.port"), "5004");
    assert_eq!(
        origin_of(&out, "server.port"),
        format!("mode desk ({})", mode.display())
    );

    let env = Some(("QUIRE_SERVER__PORT", "5005"));
    let out = show(&s, &with_mode, env);
    assert_eq!(value_of(&out, "server.port"), "5005");
    assert_eq!(origin_of(&out, "server.port"), "env QUIRE_SERVER__PORT");

    let with_flag = ["--config", extra_arg, "--mode", "desk", "--port", "5006"];
    let out = show(&s, &with_flag, env);
    assert_eq!(value_of(&out, "server.port"), "5006");
    assert_eq!(origin_of(&out, "server.port"), "flag --port");
    // Keys no layer touched still come from the defaults.
    assert_eq!(
        origin_of(&out, "history.undo_limit"),
        "default config/default.toml"
    );
}

#[test]
fn env_variables_nest_with_double_underscore() {
    let s = Sandbox::new();
    s.user_config(
        "[providers.p]\nbase_url = \"http://127.0.0.1:9\"\nmodel = \"m\"\napi_key_env = \"QUIRE_MY_API_KEY\"\n",
    );
    let out = s
        .quire()
        .env("QUIRE_STORAGE__DURABILITY", "batch")
        .env("QUIRE_SERVER__ALLOWED_HOSTS", "[quire.lan, example.org]")
        .env("QUIRE_DEFAULT_MODE", "headless")
        // Not a config key, but the secret a `*_env` key names.
        .env("QUIRE_MY_API_KEY", "sk-test")
        .args(["config", "show", "--origin"])
        .run()
        .success()
        .stdout();
    assert_eq!(value_of(&out, "storage.durability"), "\"batch\"");
    assert_eq!(
        origin_of(&out, "storage.durability"),
        "env QUIRE_STORAGE__DURABILITY"
    );
    assert_eq!(
        value_of(&out, "server.allowed_hosts"),
        "[\"quire.lan\", \"example.org\"]"
    );
    assert_eq!(value_of(&out, "default_mode"), "\"headless\"");
    // The default mode's overlay applies when no --mode is given.
    assert_eq!(
        origin_of(&out, "server.port"),
        "mode headless (built-in modes/headless.toml)"
    );
}

#[test]
fn repeated_config_files_apply_in_order() {
    let s = Sandbox::new();
    let a = s.write(
        "a.toml",
        "[history]\nundo_limit = 10\n[tui]\nmouse = false\n",
    );
    let b = s.write("b.toml", "[history]\nundo_limit = 20\n");
    let out = s
        .quire()
        .args([
            "--config",
            a.to_str().unwrap(),
            "--config",
            b.to_str().unwrap(),
        ])
        .args(["config", "show", "--origin"])
        .run()
        .success()
        .stdout();
    assert_eq!(value_of(&out, "history.undo_limit"), "20");
    assert_eq!(
        origin_of(&out, "history.undo_limit"),
        format!("--config {}", b.display())
    );
    assert_eq!(value_of(&out, "tui.mouse"), "false");
    assert_eq!(
        origin_of(&out, "tui.mouse"),
        format!("--config {}", a.display())
    );
}

#[test]
fn json_format_and_origins() {
    let s = Sandbox::new();
    let out = s
        .quire()
        .args(["config", "show", "--format", "json"])
        .run()
        .success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["server"]["port"], 4096);
    let out = s
        .quire()
        .args([
            "config", "show", "--format", "json", "--origin", "--port", "9",
        ])
        .run()
        .success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["server.port"]["value"], 9);
    assert_eq!(v["server.port"]["origin"], "flag --port");
}

#[test]
fn xdg_config_home_is_honoured() {
    let s = Sandbox::new();
    s.user_config("[tui]\ntheme = \"dark\"\n");
    let out = s.quire().args(["config", "paths"]).run().success().stdout();
    let expected = s.user_config_dir().join("config.toml");
    let line = out.lines().find(|l| l.starts_with("user config")).unwrap();
    assert!(line.contains("exists"), "{line}");
    assert!(line.ends_with(&expected.display().to_string()), "{line}");
    let data_line = out.lines().find(|l| l.starts_with("data dir")).unwrap();
    assert!(
        data_line.ends_with(&s.data_dir().display().to_string()),
        "{data_line}"
    );
    let shown = s
        .quire()
        .args(["config", "show", "--origin"])
        .run()
        .success()
        .stdout();
    assert_eq!(value_of(&shown, "tui.theme"), "\"dark\"");
}

#[test]
fn secrets_are_redacted_in_every_format() {
    let s = Sandbox::new();
    s.user_config("[server]\ntoken = \"hunter2-secret\"\n[providers.local]\nbase_url = \"http://127.0.0.1:1\"\nmodel = \"m\"\napi_key_env = \"MY_KEY\"\n");
    for args in [
        vec!["config", "show"],
        vec!["config", "show", "--origin"],
        vec!["config", "show", "--format", "json"],
        vec!["config", "show", "--format", "json", "--origin"],
    ] {
        let out = s
            .quire()
            .env("MY_KEY", "sk-very-secret")
            .args(&args)
            .run()
            .success()
            .stdout();
        assert!(!out.contains("hunter2-secret"), "{args:?}:\n{out}");
        assert!(!out.contains("sk-very-secret"), "{args:?}:\n{out}");
        assert!(out.contains("[redacted]"), "{args:?}:\n{out}");
    }
    let out = s
        .quire()
        .env("MY_KEY", "sk-very-secret")
        .args(["config", "show", "--origin"])
        .run()
        .stdout();
    assert!(
        origin_of(&out, "providers.local.api_key").starts_with("via providers.local.api_key_env"),
        "{out}"
    );
}

#[test]
fn secret_file_readable_by_others_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let s = Sandbox::new();
    let token = s.write("token", "s3cret\n");
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cfg = s.user_config(&format!("[server]\ntoken_file = \"{}\"\n", token.display()));
    let before = s.snapshot();
    s.quire().args(["config", "check"]).run().fails(
        2,
        &[
            &format!("{}:2:14", cfg.display()),
            "server.token_file",
            "readable by group or others",
            "chmod 600",
        ],
    );
    assert_eq!(before, s.snapshot());

    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = s
        .quire()
        .args(["config", "show", "--origin"])
        .run()
        .success()
        .stdout();
    assert_eq!(value_of(&out, "server.token"), "\"[redacted]\"");
}

/// The packaged unit's credential without `/etc/quire/token` is a file of
/// one line break (`SetCredential=token:\n`): no token, so loopback serves and a public address is refused; a
/// missing file still refuses to serve. Run as root, `config check` warns
/// about a token file only root can read (the unit's dynamic user could
/// not), which 0.2 called `ok`.
#[test]
fn an_empty_token_file_is_no_token_and_a_root_only_one_is_warned_about() {
    let s = Sandbox::new();
    let token = s.write("token", "\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let env = token.display().to_string();
    s.quire()
        .env("QUIRE_SERVER__TOKEN_FILE", &env)
        .args(["--headless", "--host", "0.0.0.0", "--port", "0"])
        .run()
        .fails(2, &["refusing to serve on 0.0.0.0 without a token"]);
    let server = crate::http_support::Binary::start(
        &s,
        &["--headless", "--port", "0"],
        &[("QUIRE_SERVER__TOKEN_FILE", &env)],
    );
    let status = crate::harness::blocking_client()
        .get(format!("{}/api/v1/meta", server.url))
        .send()
        .unwrap()
        .status();
    assert_eq!(status, 200);
    assert!(server.terminate().success());
    s.quire()
        .env(
            "QUIRE_SERVER__TOKEN_FILE",
            s.path("missing").display().to_string(),
        )
        .args(["--headless", "--port", "0"])
        .run()
        .fails(2, &["server.token_file", "cannot read"]);

    let check = s
        .quire()
        .env("QUIRE_SERVER__TOKEN_FILE", &env)
        .args(["config", "check"])
        .run()
        .success();
    assert!(
        check.stderr().contains("is empty: no secret is set"),
        "{}",
        check.stderr()
    );
    std::fs::write(&token, "s3cret\n").unwrap();
    if rustix::process::geteuid().is_root() {
        let check = s
            .quire()
            .env("QUIRE_SERVER__TOKEN_FILE", &env)
            .args(["config", "check"])
            .run()
            .success();
        assert!(
            check.stderr().contains("only root can read")
                && check.stderr().contains("LoadCredential="),
            "{}",
            check.stderr()
        );
    }
}

#[test]
fn an_unset_secret_variable_fails_only_where_it_is_used() {
    let s = Sandbox::new();
    s.user_config(
        "[attach]\ntoken_env = \"QUIRE_TEST_NOPE\"\n\
         [providers.p]\nbase_url = \"http://127.0.0.1:9\"\nmodel = \"m\"\napi_key_env = \"MY_KEY_NOPE\"\n",
    );
    let before = s.snapshot();
    // Everything that does not need the secret works.
    let out = s
        .quire()
        .args(["config", "show", "--origin"])
        .run()
        .success()
        .stdout();
    assert_eq!(value_of(&out, "providers.p.api_key"), "\"[unset]\"");
    assert_eq!(value_of(&out, "attach.token"), "\"[unset]\"");
    s.quire().args(["projects", "list"]).run().success();
    s.quire().args(["engines", "list"]).run().success();
    let check = s.quire().args(["config", "check"]).run().success();
    let warnings = check.stderr();
    assert!(
        warnings.contains("providers.p.api_key_env: environment variable MY_KEY_NOPE is not set"),
        "{warnings}"
    );
    assert!(
        warnings.contains("QUIRE_TEST_NOPE is not set"),
        "{warnings}"
    );
    // What needs it fails, naming the variable.
    s.quire()
        .args(["attach", "http://127.0.0.1:9"])
        .run()
        .fails(2, &["attach.token_env", "QUIRE_TEST_NOPE is not set"]);
    // Nothing written but the TUI's log file.
    let mut after = s.snapshot();
    after.retain(|path, _| !path.to_string_lossy().contains("/data/quire"));
    assert_eq!(before, after);
}

#[test]
fn a_server_token_variable_that_is_unset_or_blank_refuses_to_serve() {
    let s = Sandbox::new();
    s.user_config("[server]\ntoken_env = \"QUIRE_TOKEN_NOPE\"\n");
    s.quire()
        .args(["--headless", "--port", "0"])
        .run()
        .fails(2, &["server.token_env", "QUIRE_TOKEN_NOPE is not set"]);
    s.quire()
        .env("QUIRE_TOKEN_NOPE", "   ")
        .args(["--headless", "--port", "0"])
        .run()
        .fails(2, &["QUIRE_TOKEN_NOPE holds only whitespace"]);
    s.user_config("");
    s.quire()
        .env("QUIRE_SERVER__TOKEN", "   ")
        .args(["--headless", "--port", "0"])
        .run()
        .fails(2, &["env QUIRE_SERVER__TOKEN", "must not be blank"]);
    s.user_config("[server]\ntoken = \" \\t \"\n");
    s.quire()
        .args(["--headless", "--port", "0"])
        .run()
        .fails(2, &["server.token", "must not be blank"]);
}

#[test]
fn an_unknown_top_level_variable_is_an_error_like_an_unknown_key() {
    let s = Sandbox::new();
    let before = s.snapshot();
    s.quire()
        .env("QUIRE_DEFAULTMODE", "headless")
        .args(["config", "show"])
        .run()
        .fails(
            2,
            &[
                "env QUIRE_DEFAULTMODE",
                "did you mean `QUIRE_DEFAULT_MODE`?",
            ],
        );
    s.quire()
        .env("QUIRE_SERVER", "x")
        .args(["projects", "list"])
        .run()
        .fails(2, &["unknown variable `QUIRE_SERVER`", "use `__`"]);
    assert_eq!(before, s.snapshot());
}

#[test]
fn syntax_error_names_file_line_and_column() {
    let s = Sandbox::new();
    let cfg = s.user_config("[server]\nport = 4096\nhost = 127.0.0.1\n");
    let before = s.snapshot();
    s.quire()
        .args(["config", "show"])
        .run()
        .fails(2, &[&format!("{}:3:", cfg.display()), "invalid TOML"]);
    assert_eq!(before, s.snapshot());
}

/// Config files are read straight into figment's tree; one nested past
/// the TOML parser's depth is refused like any syntax error, not a crash.
#[test]
fn a_config_nested_too_deep_is_refused_by_line_and_column() {
    let s = Sandbox::new();
    let depth = 100_000;
    let cfg = s.user_config(&format!("x = {}{}\n", "[".repeat(depth), "]".repeat(depth)));
    let before = s.snapshot();
    s.quire().args(["config", "show"]).run().fails(
        2,
        &[
            &format!("{}:1:", cfg.display()),
            "invalid TOML",
            "recursion",
        ],
    );
    assert_eq!(before, s.snapshot());
}

#[test]
fn unknown_key_suggests_the_near_one() {
    let s = Sandbox::new();
    let cfg = s.user_config("[server]\nport = 1\nalowed_hosts = []\n");
    let before = s.snapshot();
    s.quire().args(["config", "check"]).run().fails(
        2,
        &[
            &format!("{}:3:1", cfg.display()),
            "unknown key `server.alowed_hosts`",
            "did you mean `server.allowed_hosts`?",
        ],
    );
    assert_eq!(before, s.snapshot());
}

#[test]
fn unknown_env_key_names_the_variable() {
    let s = Sandbox::new();
    s.quire()
        .env("QUIRE_SERVER__PROT", "1")
        .args(["config", "show"])
        .run()
        .fails(
            2,
            &["env QUIRE_SERVER__PROT", "did you mean `server.port`?"],
        );
}

#[test]
fn wrong_type_names_key_and_expected_type() {
    let s = Sandbox::new();
    let cfg = s.user_config("[history]\nundo_limit = \"many\"\n");
    let before = s.snapshot();
    s.quire().args(["config", "show"]).run().fails(
        2,
        &[
            &format!("{}:2:14", cfg.display()),
            "key `history.undo_limit`",
            "invalid type",
        ],
    );
    assert_eq!(before, s.snapshot());
    s.quire()
        .args(["config", "show", "--port", "99999"])
        .run()
        .fails(2, &["99999"]);
}

#[test]
fn invalid_value_is_refused() {
    let s = Sandbox::new();
    s.user_config("[storage]\ndurability = \"sometimes\"\n");
    s.quire().args(["config", "show"]).run().fails(
        2,
        &[
            "storage.durability",
            "unknown value `sometimes`, expected one of: fsync, batch",
        ],
    );
}

#[test]
fn no_config_key_or_variable_enables_sharing() {
    let s = Sandbox::new();
    for text in [
        "[tui]\nmcp = true\n",
        "tui_mcp = true\n",
        "[share]\nenabled = true\n",
    ] {
        s.user_config(text);
        s.quire()
            .args(["config", "check"])
            .run()
            .fails(2, &["unknown key"]);
    }
    std::fs::remove_file(s.user_config_dir().join("config.toml")).unwrap();
    s.quire()
        .env("QUIRE_TUI__MCP", "true")
        .args(["config", "check"])
        .run()
        .fails(2, &["env QUIRE_TUI__MCP", "unknown key `tui.mcp`"]);
}

#[test]
fn missing_config_file_argument_is_an_error() {
    let s = Sandbox::new();
    s.quire()
        .args(["--config", "nope.toml", "config", "show"])
        .run()
        .fails(2, &["nope.toml", "no such file"]);
}

#[test]
fn config_check_validates_a_given_file() {
    let s = Sandbox::new();
    let good = s.write("good.toml", "[server]\nport = 1234\n");
    s.quire()
        .args(["config", "check", good.to_str().unwrap()])
        .run()
        .success()
        .stdout_has("ok: configuration is valid")
        .stdout_has(good.to_str().unwrap());
    let bad = s.write("bad.toml", "[server]\nport = -1\n");
    s.quire()
        .args(["config", "check", bad.to_str().unwrap()])
        .run()
        .fails(2, &[&format!("{}:2:8", bad.display()), "server.port"]);
}

#[test]
fn config_check_refuses_a_default_mode_that_does_not_exist() {
    let s = Sandbox::new();
    let file = s.write("modes.toml", "default_mode = \"headles\"\n");
    let before = s.snapshot();
    s.quire()
        .args(["config", "check", file.to_str().unwrap()])
        .run()
        .fails(
            2,
            &[
                "default_mode",
                "unknown mode `headles`",
                "did you mean `headless`?",
            ],
        );
    assert_eq!(before, s.snapshot());
    // A user mode of that name makes it valid.
    s.user_mode("headles", "description = \"x\"\nfrontends = [\"http\"]\n");
    s.quire()
        .args(["config", "check", file.to_str().unwrap()])
        .run()
        .success();
}

#[test]
fn tui_mcp_is_refused_for_modes_without_tui() {
    let s = Sandbox::new();
    let before = s.snapshot();
    s.quire()
        .args(["--tui-mcp", "--mode", "headless"])
        .run()
        .fails(2, &["--tui-mcp", "mode `headless`"]);
    s.quire()
        .args(["--tui-mcp", "--headless"])
        .run()
        .fails(2, &["--tui-mcp", "mode `headless`"]);
    s.quire()
        .args(["--tui-mcp", "config", "show"])
        .run()
        .fails(2, &["--tui-mcp"]);
    assert_eq!(before, s.snapshot());
}

#[test]
fn usage_errors_exit_2_with_our_prefix() {
    let s = Sandbox::new();
    s.quire()
        .args(["--frobnicate"])
        .run()
        .fails(2, &["--frobnicate"]);
    s.quire()
        .args(["--headless", "--mode", "tui"])
        .run()
        .fails(2, &["--mode"]);
    let out = s.quire().args(["--version"]).run().success();
    assert_eq!(
        out.stdout().trim(),
        format!("quire {}", env!("CARGO_PKG_VERSION"))
    );
    s.quire()
        .args(["--help"])
        .run()
        .success()
        .stdout_has("config show --origin");
}

#[test]
fn logs_go_to_stderr_at_the_requested_level() {
    let s = Sandbox::new();
    let quiet = s
        .quire()
        .args(["config", "show", "--format", "json"])
        .run()
        .success();
    assert!(
        !quiet.stderr().contains("configuration loaded"),
        "{}",
        quiet.stderr()
    );
    for (flag, env) in [
        (Some("-v"), None),
        (Some("--log-level=debug"), None),
        (None, Some(("RUST_LOG", "quire=debug"))),
        (None, Some(("QUIRE_LOG__LEVEL", "debug"))),
    ] {
        let mut run = s.quire();
        if let Some((k, v)) = env {
            run = run.env(k, v);
        }
        let out = run
            .args(flag)
            .args(["config", "show", "--format", "json"])
            .run()
            .success();
        // stdout stays pure JSON; the log line is on stderr.
        serde_json::from_str::<serde_json::Value>(&out.stdout()).unwrap();
        assert!(
            out.stderr().contains("configuration loaded"),
            "{flag:?} {env:?}"
        );
    }
    // The flag beats RUST_LOG.
    let out = s
        .quire()
        .env("RUST_LOG", "debug")
        .args(["--log-level", "error", "config", "show"])
        .run()
        .success();
    assert!(!out.stderr().contains("configuration loaded"));
}

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
    let done = s.quire().args(["models", "list", "--json"]).run();
    assert_eq!(done.code(), 0, "{}", done.stderr());
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
    assert_eq!(table.code(), 0, "{}", table.stderr());
    assert!(table.stdout().contains(&sha(&det)), "{}", table.stdout());
    // The models load in the quire-ppocr helper; without it, each says
    // which program could not be started.
    let missing = s
        .quire()
        .env("QUIRE_PPOCR_HELPER", "/nonexistent/quire-ppocr")
        .args(["models", "list", "--json"])
        .run();
    assert_eq!(missing.code(), 0, "{}", missing.stderr());
    let listed: serde_json::Value = serde_json::from_str(&missing.stdout()).unwrap();
    let why = listed[0]["loads"].as_str().unwrap();
    assert!(
        why.contains("/nonexistent/quire-ppocr cannot be started"),
        "{why}"
    );
    assert_eq!(listed[0]["sha256"], sha(&det).as_str());
}
