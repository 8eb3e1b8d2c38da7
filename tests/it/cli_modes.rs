//! Modes: listing, showing, user overrides and every invalid mode file.

use crate::harness::{Sandbox, origin_of, value_of};

#[test]
fn built_in_modes_are_listed() {
    let s = Sandbox::new();
    let out = s.quire().args(["modes", "list"]).run().success().stdout();
    for (name, frontends) in [
        ("headless", "http,mcp-http"),
        ("stdio", "mcp-stdio"),
        ("tui", "tui"),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{out}"));
        assert!(line.contains(frontends), "{line}");
        assert!(
            line.contains(&format!("built-in modes/{name}.toml")),
            "{line}"
        );
    }
    assert!(out.contains("tui (default)"), "{out}");
}

#[test]
fn user_mode_overrides_a_built_in() {
    let s = Sandbox::new();
    let file = s.user_mode(
        "headless",
        "description = \"my headless\"\nfrontends = [\"http\"]\n[config]\nserver.port = 7000\n",
    );
    let out = s.quire().args(["modes", "list"]).run().success().stdout();
    let line = out.lines().find(|l| l.starts_with("headless")).unwrap();
    assert!(line.contains(&file.display().to_string()), "{line}");
    assert!(line.contains("my headless"), "{line}");
    let shown = s
        .quire()
        .args(["--headless", "config", "show", "--origin"])
        .run()
        .success()
        .stdout();
    assert_eq!(value_of(&shown, "server.port"), "7000");
    assert_eq!(
        origin_of(&shown, "server.port"),
        format!("mode headless ({})", file.display())
    );
    s.quire()
        .args(["modes", "show", "headless"])
        .run()
        .success()
        .stdout_has("frontends:   http")
        .stdout_has("server.port = 7000");
}

#[test]
fn system_modes_are_found_and_user_modes_win() {
    let s = Sandbox::new();
    s.write(
        "etc/modes/ci.toml",
        "description = \"system ci\"\nfrontends = [\"http\"]\n",
    );
    let out = s.quire().args(["modes", "list"]).run().success().stdout();
    assert!(out.contains("system ci"), "{out}");
    s.user_mode("ci", "description = \"user ci\"\nfrontends = [\"http\"]\n");
    let out = s.quire().args(["modes", "list"]).run().success().stdout();
    assert!(
        out.contains("user ci") && !out.contains("system ci"),
        "{out}"
    );
}

#[test]
fn invalid_mode_files_are_named() {
    let cases = [
        (
            "description = \"x\"\nfrontends = []\n",
            "at least one frontend",
        ),
        (
            "frontends = [\"tui\", \"mcp-stdio\"]\n",
            "cannot be combined with `tui`",
        ),
        ("frontends = [\"mcp-http\"]\n", "`mcp-http` requires `http`"),
        ("frontends = [\"web\"]\n", "unknown variant `web`"),
        (
            "frontends = [\"tui\"]\n[config]\nserver.prot = 1\n",
            "unknown key `server.prot`",
        ),
    ];
    for (text, expected) in cases {
        let s = Sandbox::new();
        let file = s.user_mode("broken", text);
        let before = s.snapshot();
        s.quire()
            .args(["--mode", "broken", "config", "show"])
            .run()
            .fails(2, &[&file.display().to_string(), expected]);
        s.quire()
            .args(["config", "check"])
            .run()
            .fails(2, &[&file.display().to_string(), expected]);
        s.quire()
            .args(["--mode", "broken"])
            .run()
            .fails(2, &[&file.display().to_string(), expected]);
        assert_eq!(before, s.snapshot(), "{text}");
    }
}

#[test]
fn unknown_mode_is_a_usage_error_with_a_suggestion() {
    let s = Sandbox::new();
    s.quire().args(["--mode", "nosuch"]).run().fails(
        2,
        &["unknown mode `nosuch`", "available: headless, stdio, tui"],
    );
    s.quire()
        .args(["--mode", "headles", "config", "show"])
        .run()
        .fails(2, &["did you mean `headless`?"]);
    s.user_config("default_mode = \"gui\"\n");
    s.quire()
        .args(["config", "show"])
        .run()
        .fails(2, &["default_mode", "unknown mode `gui`"]);
}

#[test]
fn modes_show_prints_file_frontends_and_overlay() {
    let s = Sandbox::new();
    s.quire()
        .args(["modes", "show", "headless"])
        .run()
        .success()
        .stdout_has("file:        built-in modes/headless.toml (embedded in the binary)")
        .stdout_has("frontends:   http, mcp-http")
        .stdout_has("server.port = 4096");
    s.quire()
        .args(["modes", "show", "nope"])
        .run()
        .fails(2, &["unknown mode `nope`"]);
}
