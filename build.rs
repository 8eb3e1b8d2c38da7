//! What the `quire` binary is built with besides its sources: the MCP
//! tool list in its compact form, and link options.
//!
//! `src/mcp/tools.json` is kept indented for review; the binary embeds it
//! without the whitespace (`$OUT_DIR/tools.json`), the bytes `quire mcp
//! stdio` answers `tools/list` with.
//!
//! `config/default.toml`, the lowest config layer, is read here and
//! written out as the Rust that builds its values
//! (`$OUT_DIR/default_config.rs`): parsing the 7 KB of TOML took about
//! 460,000 instructions of every start, a seventh of `quire mcp stdio`'s.
//! The binary still embeds the text, to point at a line.
//!
//! On GNU/Linux the binary's relative relocations are packed (`DT_RELR`,
//! glibc 2.36 and binutils 2.38 or later): about 105,000 of them took a
//! 2.5 MB table that the dynamic loader read at every start, and that
//! stayed resident; packed, the table is a few kilobytes.
//!
//! On x86-64 GNU/Linux, where rustc links with its own lld, an optimised
//! build places first the functions that starting `quire mcp stdio` or
//! `quire --headless` runs, as `packaging/start-order.txt` lists them
//! (written by `scripts/start-order`): a start then maps about 2.5 MB of
//! code instead of touching pages all over the 27 MB. Symbol names carry
//! hashes of the cargo profile and the rustc version, so the file holds a
//! list per profile, and this warns when a build has none that fits (the
//! binary is then laid out as before: correct, slower to start). Only
//! where rustc links with its own lld (1.90 and later, no other linker
//! chosen in RUSTFLAGS or cargo's config): GNU ld has no such option.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    compact_tools();
    default_config();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os != "linux" || env != "gnu" {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    if arch == "x86_64" && std::env::var("PROFILE").as_deref() == Ok("release") && links_with_lld()
    {
        start_order();
    }
}

/// The package's directory as cargo names it to this run. Not `env!`: that
/// is where the script was compiled, and cargo reuses a compiled script
/// for another checkout that shares the target directory.
fn manifest_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

fn out_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
}

/// Writes `src/mcp/tools.json` without the whitespace between its tokens.
fn compact_tools() {
    println!("cargo:rerun-if-changed=src/mcp/tools.json");
    let source = manifest_dir().join("src/mcp/tools.json");
    let text = std::fs::read_to_string(&source).expect("src/mcp/tools.json is readable");
    let mut compact = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            compact.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if !c.is_whitespace() {
            in_string = c == '"';
            compact.push(c);
        }
    }
    std::fs::write(out_dir().join("tools.json"), compact).expect("OUT_DIR is writable");
}

/// Writes `config/default.toml` as one Rust expression of type
/// `figment::value::Dict` (`src/config/load.rs` includes it). A unit test
/// there checks it against the text parsed at run time.
fn default_config() {
    println!("cargo:rerun-if-changed=config/default.toml");
    let source = manifest_dir().join("config/default.toml");
    let text = std::fs::read_to_string(&source).expect("config/default.toml is readable");
    let table: toml::Table = text.parse().expect("config/default.toml is valid TOML");
    let mut code = String::from("// Written by build.rs from config/default.toml.\n");
    write_dict(&mut code, &table);
    std::fs::write(out_dir().join("default_config.rs"), code).expect("OUT_DIR is writable");
}

fn write_dict(code: &mut String, table: &toml::Table) {
    if table.is_empty() {
        code.push_str("Dict::new()");
        return;
    }
    code.push_str("{ let mut d = Dict::new();\n");
    for (key, value) in table {
        code.push_str(&format!("d.insert({key:?}.to_owned(), "));
        write_value(code, value);
        code.push_str(");\n");
    }
    code.push_str("d }");
}

fn write_value(code: &mut String, value: &toml::Value) {
    use toml::Value as V;
    match value {
        V::String(s) => code.push_str(&format!("Value::from({s:?})")),
        V::Integer(i) => code.push_str(&format!("Value::from({i}_i64)")),
        V::Float(f) => code.push_str(&format!("Value::from({f:?}_f64)")),
        V::Boolean(b) => code.push_str(&format!("Value::from({b})")),
        V::Array(items) => {
            code.push_str("Value::Array(Tag::Default, vec![");
            for item in items {
                write_value(code, item);
                code.push_str(", ");
            }
            code.push_str("])");
        }
        V::Table(t) => {
            code.push_str("Value::Dict(Tag::Default, ");
            write_dict(code, t);
            code.push(')');
        }
        V::Datetime(_) => panic!("config/default.toml holds no dates"),
    }
}

/// rustc's version line, e.g. `rustc 1.95.0 (59807616e 2026-04-14)`.
fn rustc_version() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Whether the binary is linked by rustc's own lld: the default on
/// x86-64 GNU/Linux since 1.90, unless a linker is chosen.
fn links_with_lld() -> bool {
    let version = rustc_version();
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let chosen = flags.contains("linker") || std::env::var_os("RUSTC_LINKER").is_some();
    minor.is_some_and(|m| m >= 90) && !chosen
}

/// Passes the start-up order to the linker, and says when the file was
/// made for another profile or toolchain than this build's.
fn start_order() {
    let order = manifest_dir().join("packaging/start-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    let Ok(text) = std::fs::read_to_string(&order) else {
        return;
    };
    println!(
        "cargo:rustc-link-arg-bin=quire=-Wl,--symbol-ordering-file={}",
        order.display()
    );
    println!("cargo:rustc-link-arg-bin=quire=-Wl,--no-warn-symbol-ordering");

    // OUT_DIR is <target>/[<triple>/]<profile>/build/quire-<hash>/out.
    let out = std::env::var("OUT_DIR").unwrap_or_default();
    let profile = Path::new(&out)
        .ancestors()
        .nth(3)
        .and_then(Path::file_name)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !text.lines().any(|l| l == format!("# profile: {profile}")) {
        println!(
            "cargo:warning=packaging/start-order.txt has no list for the `{profile}` \
             profile: run scripts/start-order --profile {profile}"
        );
    }
    let version = rustc_version();
    if text.lines().next() != Some(format!("# {version}").as_str()) {
        println!(
            "cargo:warning=packaging/start-order.txt was made by another rustc than \
             {version}: run scripts/start-order"
        );
    }
}
