//! Completions and man pages, generated from the clap definition.

use crate::harness::Sandbox;

#[test]
fn completions_for_every_shell() {
    let s = Sandbox::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = s
            .quire()
            .args(["completions", shell])
            .run()
            .success()
            .stdout();
        assert!(out.contains("quire"), "{shell}");
        assert!(
            out.contains("config"),
            "{shell} completion lacks subcommands"
        );
    }
    s.quire()
        .args(["completions", "tcsh"])
        .run()
        .fails(2, &["tcsh"]);
}

#[test]
fn man_page_names_every_subcommand() {
    let s = Sandbox::new();
    let page = s.quire().args(["man"]).run().success().stdout();
    assert!(
        page.starts_with(".ie") || page.contains(".TH quire"),
        "not roff:\n{page}"
    );
    for sub in [
        "attach",
        "mcp",
        "config",
        "modes",
        "projects",
        "engines",
        "completions",
        "man",
        "backup",
        "restore",
        "gc",
    ] {
        assert!(page.contains(sub), "man page lacks {sub}");
    }
    // What an operator looks for, in the main page and in `--out`'s.
    let sections = [
        ".SH FILES",
        ".SH ENVIRONMENT",
        ".SH SIGNALS",
        ".SH EXIT STATUS",
        ".SH RUNNING AS A SERVICE",
    ];
    let dir = s.path("man");
    s.quire()
        .args(["man", "--out", dir.to_str().unwrap()])
        .run()
        .success();
    let written = std::fs::read_to_string(dir.join("quire.1")).unwrap();
    for section in sections {
        assert!(page.contains(section), "man page lacks {section}");
        assert!(written.contains(section), "quire.1 lacks {section}");
    }
}

#[test]
fn man_out_writes_one_page_per_subcommand() {
    let s = Sandbox::new();
    let dir = s.path("man");
    let listed = s
        .quire()
        .args(["man", "--out", dir.to_str().unwrap()])
        .run()
        .success()
        .stdout();
    for page in [
        "quire.1",
        "quire-config.1",
        "quire-config-show.1",
        "quire-mcp-stdio.1",
    ] {
        assert!(dir.join(page).exists(), "{page} missing; listed:\n{listed}");
    }
}

#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    let s = Sandbox::new();
    for args in [
        &["completions", "bash"][..],
        &["man"],
        &["engines", "list"],
        &["modes", "list"],
        &["config", "show"],
        &["projects", "list"],
    ] {
        // The reader is gone before quire writes a byte: every write fails
        // with EPIPE, as in `quire man | head -1` once head has exited.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = s.command().args(args).stdout(writer).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} said: {stderr}");
    }
}
