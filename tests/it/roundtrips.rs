//! Round trips through independent implementations, each a Python script
//! against a real `quire --headless` (see each for what it checks):
//! `tests/xliff/roundtrip.py` edits quire's XLIFF export with Translate
//! Toolkit's XLIFF 2.0 store, `tests/po/roundtrip.py` its PO export with
//! polib (checked by GNU `msgfmt --check`), and each imports it back over
//! HTTP; `tests/subtitles/roundtrip.py` reads subtitle exports with pysrt
//! and webvtt-py and imports a CBZ; `tests/tmx/roundtrip.py` reads a TMX
//! export with Translate Toolkit and brings `po2tmx`'s TMX into the memory;
//! `tests/interop/foreign.py` starts projects from translators' own PO and
//! XLIFF files and checks what goes back out with `msgcmp`, polib and
//! Translate Toolkit; `tests/markdown/cells.py` reads the Markdown export
//! with markdown-it-py.

use std::process::Command;

use crate::harness::{Sandbox, run_checker};
use crate::http_support::Binary;

/// Runs `tests/{script}` (with the server's URL and a work directory)
/// with a Python that has `modules`; it must print `{what} roundtrip: ok`.
fn roundtrip(test: &str, modules: &str, script: &str, what: &str) {
    let Some(python) = crate::mcp::python_with(test, modules) else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let mut cmd = Command::new(&python);
    cmd.arg(format!("{}/tests/{script}", env!("CARGO_MANIFEST_DIR")))
        .arg(&server.url)
        .arg(s.path(""));
    let out = run_checker(&s, &mut cmd, "ok");
    assert!(out.contains(&format!("{what} roundtrip: ok")), "{out}");
    assert!(server.terminate().success());
}

#[test]
fn an_export_edited_with_translate_toolkit_comes_back() {
    roundtrip(
        "an_export_edited_with_translate_toolkit_comes_back",
        "httpx, translate.storage.xliff2",
        "xliff/roundtrip.py",
        "xliff",
    );
}

#[test]
fn a_po_export_edited_with_polib_comes_back() {
    let test = "a_po_export_edited_with_polib_comes_back";
    let missing = crate::harness::missing_program("msgfmt", "--version");
    if crate::harness::tool_available("msgfmt", test, missing) {
        roundtrip(test, "httpx, polib", "po/roundtrip.py", "po");
    }
}

/// `tests/interop/foreign.py`: the testdata's PO files (Django, OmegaT)
/// and XLIFF made by `po2xliff` start projects and go back out as the
/// same files, checked by GNU `msgcmp`/`msgfmt`, polib and Translate
/// Toolkit.
#[test]
fn translators_own_files_go_out_as_they_came() {
    let test = "translators_own_files_go_out_as_they_came";
    let missing = crate::harness::missing_program("msgcmp", "--version");
    if !crate::harness::tool_available("msgcmp", test, missing) {
        return;
    }
    let Some(testdata) = crate::harness::testdata(test, "cat") else {
        return;
    };
    let Some(python) = crate::mcp::python_with(
        test,
        "httpx, polib, translate.storage.xliff, translate.storage.xliff2",
    ) else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let mut cmd = Command::new(&python);
    cmd.arg(format!(
        "{}/tests/interop/foreign.py",
        env!("CARGO_MANIFEST_DIR")
    ))
    .arg(&server.url)
    .arg(s.path(""))
    .arg(testdata.parent().unwrap());
    let out = run_checker(&s, &mut cmd, "ok");
    assert!(out.contains("foreign files roundtrip: ok"), "{out}");
    assert!(server.terminate().success());
}

#[test]
fn tmx_goes_out_to_translate_toolkit_and_po2tmx_comes_in() {
    roundtrip(
        "tmx_goes_out_to_translate_toolkit_and_po2tmx_comes_in",
        "httpx, polib, translate.storage.tmx",
        "tmx/roundtrip.py",
        "tmx",
    );
}

#[test]
fn subtitles_and_comics_go_in_and_out_through_pysrt_and_webvtt_py() {
    roundtrip(
        "subtitles_and_comics_go_in_and_out_through_pysrt_and_webvtt_py",
        "httpx, pysrt, webvtt",
        "subtitles/roundtrip.py",
        "subtitles",
    );
}

/// The Markdown export read by markdown-it-py (`tests/markdown/cells.py`):
/// each text arrives as it was written, none of its marks taken as
/// Markdown. (Not a `core_` test: it needs the Python environment.)
#[tokio::test]
async fn the_markdown_export_renders_each_text_as_it_is() {
    use quire_core::export::{ExportFormat, ExportSpec};
    let Some(python) = crate::mcp::python_with(
        "the_markdown_export_renders_each_text_as_it_is",
        "markdown_it",
    ) else {
        return;
    };
    let t = crate::core_base::TestCore::new();
    let id = t.session("Cells | *and* #marks");
    let tricky = [
        "*not bold* _nor this_ `code` [link](x) ~~strike~~ \\ back",
        "a | pipe <b>tag</b> &amp; entity #hash\nsecond line",
    ];
    let r = t
        .core
        .import_text(id, "p #1", &tricky.join("\n\n"), None)
        .await
        .unwrap();
    let page = quire_model::ids::PageId(r.created[0]);
    t.core
        .apply(
            id,
            crate::core_base::translate(page, quire_model::ids::NodeId(r.created[1]), tricky[1]),
        )
        .await
        .unwrap();
    let md = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Markdown))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("export.md");
    std::fs::write(&file, &md.bytes).unwrap();
    let out = std::process::Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/markdown/cells.py"
        ))
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        seen["headings"],
        serde_json::json!(["Cells | *and* #marks", "1. p #1"]),
        "{}",
        String::from_utf8_lossy(&md.bytes)
    );
    let rows = &seen["tables"][0];
    assert_eq!(
        rows[0],
        serde_json::json!(["1", tricky[0], tricky[1], "translated"])
    );
    assert_eq!(
        rows[1],
        serde_json::json!(["2", tricky[1], "(not translated)", "initial"])
    );
    // Only quire's own "(not translated)" is emphasis; none of the text is.
    assert_eq!(seen["emphasis"], serde_json::json!(["(not translated)"]));
}
