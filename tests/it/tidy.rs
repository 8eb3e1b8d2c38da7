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

/// The dependency direction of ARCHITECTURE.md inside the binary crate:
/// frontends call the core and never each other; the share wire imports no
/// frontend. (The core is the crate `quire-core`, which cargo keeps from
/// naming the binary crate at all.)
#[test]
fn frontends_never_call_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let frontends = ["http", "mcp", "tui"];
    for module in ["http", "mcp", "tui", "share", "wire"] {
        let mut files = Vec::new();
        if root.join(module).is_dir() {
            rust_files(&root.join(module), &mut files);
        } else {
            files.push(root.join(format!("{module}.rs")));
        }
        assert!(files.iter().all(|f| f.exists()), "src/{module} is gone");
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

/// ARCHITECTURE.md's code map stays honest: every module under `src/` is
/// named in the bullet of its top-level module (as `dir/file.rs`,
/// `file.rs`, or its directory `dir/`), and every `.rs` file or directory
/// the map names exists.
#[test]
fn the_code_map_names_every_module_and_only_real_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let map = doc
        .split("## Code map")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a Code map section");
    // Top-level bullets: "- `name` — …", continued by indented lines.
    let mut bullets: Vec<(String, String)> = Vec::new();
    for line in map.lines() {
        if let Some(rest) = line.strip_prefix("- `") {
            let name = rest.split('`').next().unwrap().to_owned();
            bullets.push((name, line.to_owned()));
        } else if let Some((_, text)) = bullets.last_mut() {
            text.push('\n');
            text.push_str(line);
        }
    }
    let ticked = |text: &str| -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    };
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut rel: Vec<String> = files
        .iter()
        .map(|f| {
            f.strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    // A workspace crate's modules are named in the crate's bullet: the
    // files of crates/quire-model/src as `quire-model/…`.
    let crates = root.join("crates");
    for krate in std::fs::read_dir(&crates).unwrap() {
        let krate = krate.unwrap().path();
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        let mut files = Vec::new();
        rust_files(&krate.join("src"), &mut files);
        rel.extend(files.iter().map(|f| {
            let inner = f.strip_prefix(krate.join("src")).unwrap();
            format!("{name}/{}", inner.to_string_lossy().replace('\\', "/"))
        }));
    }
    let mut problems = Vec::new();
    for module in &rel {
        if module == "main.rs" || (module.ends_with("lib.rs") && module.matches('/').count() <= 1) {
            continue;
        }
        let top = module.split(['/', '.']).next().unwrap();
        let Some((_, text)) = bullets.iter().find(|(name, _)| name == top) else {
            problems.push(format!("no bullet for `{top}` ({module})"));
            continue;
        };
        let names = ticked(text);
        let parts: Vec<&str> = module.split('/').collect();
        let mut accepted: Vec<String> = (0..parts.len()).map(|i| parts[i..].join("/")).collect();
        if module.ends_with("/mod.rs") {
            let dir = &parts[..parts.len() - 1];
            accepted.extend((0..dir.len()).map(|i| format!("{}/", dir[i..].join("/"))));
        }
        if !module.contains('/') || *module == format!("{top}/mod.rs") {
            accepted.push(top.to_owned());
        }
        if !names.iter().any(|n| accepted.contains(n)) {
            problems.push(format!(
                "{module} is not named (write one of {accepted:?} in the `{top}` bullet)"
            ));
        }
    }
    for (top, text) in &bullets {
        if !(src.join(format!("{top}.rs")).exists()
            || src.join(top).is_dir()
            || crates.join(top).is_dir())
        {
            problems.push(format!("`{top}` is not a module"));
        }
        for name in ticked(text) {
            let is_path = name.ends_with(".rs") || (name.ends_with('/') && !name.contains(' '));
            if !is_path {
                continue;
            }
            let exists = rel.iter().any(|r| {
                r.ends_with(&name) || r.starts_with(&name) || r.contains(&format!("/{name}"))
            });
            if !exists {
                problems.push(format!("`{name}` (in `{top}`) does not exist"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md's code map:\n{}",
        problems.join("\n")
    );
}

/// The model runtime (tract, through `quire-ppocr`) stays out of the
/// `quire` binary: only the helper program names the crate, and no
/// other crate of the workspace depends on it.
#[test]
fn only_the_helper_uses_the_model_runtime() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let krate = krate.unwrap().path();
        if krate.ends_with("quire-ppocr") {
            continue;
        }
        let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
        assert!(
            !manifest.contains("quire-ppocr") && !manifest.contains("tract"),
            "{} depends on the model runtime",
            krate.display()
        );
        rust_files(&krate.join("src"), &mut files);
    }
    let helper = root.join("src/bin/quire-ppocr.rs");
    assert!(helper.is_file());
    for file in files.iter().filter(|f| **f != helper) {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            !["quire_ppocr::", "tract_onnx::", "tract_core::"]
                .iter()
                .any(|name| text.contains(name)),
            "{} uses the model runtime: only the quire-ppocr helper may",
            file.display()
        );
    }
}
