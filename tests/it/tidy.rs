//! House rules checked on the source tree itself.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_says_what_it_is_for() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 40);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with("//! "),
            "{} does not open with a `//!` line",
            file.display()
        );
    }
}

#[test]
fn main_stays_thin_and_nothing_prints_to_stdout_by_macro() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let main = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
    assert!(main.lines().count() <= 40, "src/main.rs grew past 40 lines");
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains("println!(") && !code.contains("print!("),
                "{}:{}: stdout is written through an explicit writer, not print!",
                file.display(),
                i + 1
            );
        }
    }
}

/// Frontends reach the core's blocking work only through its async
/// methods: none calls `Core::blocking`, so none can put an fsync, a lock
/// wait or a thread join on a runtime worker.
#[test]
fn frontends_do_not_block_the_runtime() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for frontend in ["http", "mcp", "tui", "share"] {
        rust_files(&root.join(frontend), &mut files);
    }
    assert!(files.len() > 20);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains(".blocking()"),
                "{}:{}: call the core's async API instead",
                file.display(),
                i + 1
            );
        }
    }
}

/// The dependency direction of ARCHITECTURE.md: frontends call the core and
/// never each other; the share wire and the core import no frontend.
#[test]
fn frontends_never_call_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let frontends = ["http", "mcp", "tui"];
    for module in ["http", "mcp", "tui", "share", "core"] {
        let mut files = Vec::new();
        rust_files(&root.join(module), &mut files);
        assert!(!files.is_empty(), "src/{module} is gone");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for other in frontends.iter().filter(|f| **f != module) {
                    assert!(
                        !code.contains(&format!("crate::{other}::")),
                        "{}:{}: {module} must not use {other}",
                        file.display(),
                        i + 1
                    );
                }
            }
        }
    }
}
