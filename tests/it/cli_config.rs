//! Layered configuration through the real binary: precedence, origins,
//! environment nesting, secrets and every bad input.

use crate::harness::{Sandbox, origin_of, value_of};

mod commands;

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
