//! House rules checked on the source tree itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

/// The workspace's root: two levels above this crate.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

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
    rust_files(&root().join("src"), &mut files);
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
    let root = root();
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
    let root = root().join("src");
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
    let root = root().join("src");
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
/// `file.rs`, or a directory it is in, `dir/`), and every `.rs` file or
/// directory the map names exists.
#[test]
fn the_code_map_names_every_module_and_only_real_ones() {
    let root = root();
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
        // A folder named (`qa/`) covers every file in it: the map names
        // what a part is for, not each file of it.
        let dir = &parts[..parts.len() - 1];
        for end in 1..=dir.len() {
            accepted.extend((0..end).map(|i| format!("{}/", dir[i..end].join("/"))));
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
    let root = root();
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

/// Each member's manifest with its directory, the root package first.
fn manifests() -> Vec<(PathBuf, toml::Table)> {
    let root = root();
    let mut dirs = vec![root.to_path_buf()];
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        dirs.push(krate.unwrap().path());
    }
    dirs.into_iter()
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            (dir, text.parse::<toml::Table>().unwrap())
        })
        .collect()
}

/// A manifest's dependency tables by kind (`dependencies`,
/// `dev-dependencies`, `build-dependencies`), the per-target ones folded in.
fn dependency_tables(manifest: &toml::Table) -> Vec<(&'static str, &toml::Table)> {
    let mut tables = Vec::new();
    let mut scopes = vec![manifest];
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        scopes.extend(targets.values().filter_map(toml::Value::as_table));
    }
    for scope in scopes {
        for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(table) = scope.get(kind).and_then(toml::Value::as_table) {
                tables.push((kind, table));
            }
        }
    }
    tables
}

/// A crate two or more members use is written once, in
/// `[workspace.dependencies]`; members say `workspace = true`.
#[test]
fn shared_crates_are_declared_once_for_the_workspace() {
    let manifests = manifests();
    let mut users: std::collections::BTreeMap<&str, Vec<&Path>> = Default::default();
    for (dir, manifest) in &manifests {
        for (_, table) in dependency_tables(manifest) {
            for name in table.keys() {
                let seen = users.entry(name.as_str()).or_default();
                if !seen.contains(&dir.as_path()) {
                    seen.push(dir);
                }
            }
        }
    }
    let mut problems = Vec::new();
    for (dir, manifest) in &manifests {
        for (kind, table) in dependency_tables(manifest) {
            for (name, spec) in table {
                let inherited = spec
                    .as_table()
                    .and_then(|t| t.get("workspace"))
                    .and_then(toml::Value::as_bool)
                    == Some(true);
                if users[name.as_str()].len() >= 2 && !inherited {
                    problems.push(format!(
                        "{}: {kind} `{name}` is used by several members: \
                         declare it in [workspace.dependencies]",
                        dir.display()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every crate a member depends on is named by its code: `src/` for a
/// dependency, `build.rs` for a build dependency, its tests, benches or
/// examples (or `src/`) for a dev-dependency; and nothing a member already
/// depends on is listed again as a dev-dependency, unless for features
/// only the tests use.
#[test]
fn members_depend_only_on_crates_they_name() {
    fn names(dir: &Path, ident: &str) -> bool {
        let mut files = Vec::new();
        if dir.is_dir() {
            rust_files(dir, &mut files);
        } else if dir.is_file() {
            files.push(dir.to_path_buf());
        }
        files.iter().any(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.match_indices(ident).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + ident.len()..].chars().next();
                let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !word(before) && !word(after)
            })
        })
    }
    // Crates whose library is named otherwise than the package.
    let library = |package: &str| match package {
        "tui-textarea-2" => "tui_textarea".to_owned(),
        other => other.replace('-', "_"),
    };
    let mut problems = Vec::new();
    for (dir, manifest) in manifests() {
        let normal: Vec<&String> = dependency_tables(&manifest)
            .into_iter()
            .filter(|(kind, _)| *kind == "dependencies")
            .flat_map(|(_, table)| table.keys())
            .collect();
        for (kind, table) in dependency_tables(&manifest) {
            let places: &[&str] = match kind {
                "dependencies" => &["src"],
                "build-dependencies" => &["build.rs"],
                _ => &["tests", "benches", "examples", "src"],
            };
            for (name, spec) in table {
                let ident = library(name);
                if !places.iter().any(|p| names(&dir.join(p), &ident)) {
                    problems.push(format!("{}: {kind} `{name}` is never named", dir.display()));
                }
                let adds_features = spec.get("features").is_some();
                if kind == "dev-dependencies" && normal.contains(&name) && !adds_features {
                    problems.push(format!(
                        "{}: `{name}` is already a dependency",
                        dir.display()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The config is read before anything starts and imports nothing that
/// starts things: no launcher, command or frontend (so no loop between
/// `config` and `launch`).
#[test]
fn the_config_imports_no_launcher_command_or_frontend() {
    let root = root().join("src");
    let mut files = Vec::new();
    rust_files(&root.join("config"), &mut files);
    assert!(files.len() > 5);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for module in ["launch", "app", "commands", "http", "mcp", "tui", "share"] {
                assert!(
                    !code.contains(&format!("crate::{module}")),
                    "{}:{}: config must not use {module}",
                    file.display(),
                    i + 1
                );
            }
        }
    }
}

/// No crate passes another's items off as its own: each crate is named
/// where it is used (`quire_model::scene::Scene`, never a core path to
/// it), so a reader sees which layer a type lives in.
#[test]
fn no_crate_re_exports_another_workspace_crate() {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            let exported = ["pub use ", "pub(crate) use "]
                .iter()
                .find_map(|p| code.strip_prefix(p));
            if exported.is_some_and(|path| path.starts_with("quire_")) {
                problems.push(format!("{}:{}: {code}", file.display(), i + 1));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The README is a guide and ARCHITECTURE.md a map: short enough to read,
/// with the reference in `docs/`, every page of which the README links.
#[test]
fn the_guide_and_the_map_stay_short_and_the_docs_are_linked() {
    let root = root();
    let lines = |name: &str| {
        std::fs::read_to_string(root.join(name))
            .unwrap()
            .lines()
            .count()
    };
    assert!(
        lines("README.md") <= 600,
        "README.md: {}",
        lines("README.md")
    );
    assert!(
        lines("ARCHITECTURE.md") <= 500,
        "ARCHITECTURE.md: {}",
        lines("ARCHITECTURE.md")
    );
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for page in std::fs::read_dir(root.join("docs")).unwrap() {
        let name = page.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            assert!(
                readme.contains(&format!("(docs/{name})")),
                "the README does not link docs/{name}"
            );
        }
    }
}

/// The code with its comments, strings and character literals blanked
/// out (newlines kept), so that braces and `fn` are only code's.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && {
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                j += 1;
            }
            chars.get(j) == Some(&'"') && (i == 0 || !chars[i - 1].is_alphanumeric())
        } {
            let mut hashes = 0;
            i += 1;
            while chars[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            out.push_str(&" ".repeat(hashes + 2));
            while i < chars.len() {
                if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                    out.push_str(&" ".repeat(hashes + 1));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{..}'.
            out.push_str("  ");
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push_str("   ");
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// No file of the workspace's code (`src/`, each crate's sources and
/// tests, the binary's tests, benches and examples) is longer than 800
/// lines, and no function longer than 150: a reader holds a function in
/// mind whole, and a file in a few sittings.
#[test]
fn files_and_functions_stay_short() {
    let root = root();
    let files = workspace_code(&root);
    let mut problems = Vec::new();
    for file in files {
        let name = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = text.lines().count();
        if lines > 800 {
            problems.push(format!("{name}: {lines} lines (at most 800)"));
        }
        let code: Vec<String> = code_only(&text).lines().map(str::to_owned).collect();
        for (start, line) in code.iter().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some(at) = words.iter().position(|w| *w == "fn") else {
                continue;
            };
            let before_ok = words[..at].iter().all(|w| {
                w.starts_with("pub") || matches!(*w, "async" | "const" | "unsafe" | "extern")
            });
            if !before_ok {
                continue;
            }
            let (mut depth, mut opened) = (0i32, false);
            for (end, body) in code.iter().enumerate().skip(start) {
                for c in body.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if !opened && body.trim_end().ends_with(';') {
                    break;
                }
                if opened && depth == 0 {
                    let length = end - start + 1;
                    if length > 150 {
                        problems.push(format!(
                            "{name}:{}: a function of {length} lines (at most 150)",
                            start + 1
                        ));
                    }
                    break;
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every Rust file of the workspace's own code: `src/`, `crates/`,
/// `tests/`, `benches/`, `examples/` (no installed packages).
fn workspace_code(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["src", "crates", "tests", "benches", "examples"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "node_modules"));
    files
}

/// No struct holds more than 20 fields: state that grows past that is
/// grouped by what uses it (the TUI's `App` by screen), so a reader sees
/// which part of the program a field belongs to.
#[test]
fn no_struct_has_more_than_twenty_fields() {
    let root = root();
    let mut problems = Vec::new();
    for file in workspace_code(&root) {
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        let lines: Vec<&str> = code.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some(i) = words.iter().position(|w| *w == "struct") else {
                continue;
            };
            if !line.trim_end().ends_with('{') || !words[..i].iter().all(|w| w.starts_with("pub")) {
                continue;
            }
            let indent = line.len() - line.trim_start().len();
            let fields = lines[at + 1..]
                .iter()
                .take_while(|l| {
                    let trimmed = l.trim_start();
                    !(trimmed.starts_with('}') && l.len() - trimmed.len() == indent)
                })
                .filter(|l| {
                    let trimmed = l.trim_start();
                    let field = trimmed
                        .strip_prefix("pub(crate) ")
                        .or_else(|| trimmed.strip_prefix("pub "))
                        .unwrap_or(trimmed);
                    l.len() - trimmed.len() == indent + 4
                        && field.split_once(':').is_some_and(|(name, _)| {
                            !name.is_empty()
                                && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                        })
                })
                .count();
            if fields > 20 {
                let name = file.strip_prefix(&root).unwrap().display();
                problems.push(format!(
                    "{name}:{}: `{}` has {fields} fields (at most 20)",
                    at + 1,
                    words[i + 1]
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
