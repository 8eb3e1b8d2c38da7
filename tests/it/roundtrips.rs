//! Translation round trips through independent implementations:
//! `tests/xliff/roundtrip.py` edits quire's XLIFF export with Translate
//! Toolkit's XLIFF 2.0 store, `tests/po/roundtrip.py` its PO export with
//! polib (checked by GNU `msgfmt --check`), and each imports it back over
//! HTTP (see there); `tests/subtitles/roundtrip.py` reads subtitle exports
//! with pysrt and webvtt-py and imports a CBZ.

use std::process::Command;

use crate::harness::{Sandbox, run_checker};
use crate::http_support::Binary;

#[test]
fn an_export_edited_with_translate_toolkit_comes_back() {
    let Some(python) = crate::mcp::python_with(
        "an_export_edited_with_translate_toolkit_comes_back",
        "httpx, translate.storage.xliff2",
    ) else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let mut cmd = Command::new(&python);
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/xliff/roundtrip.py"
    ))
    .arg(&server.url);
    let out = run_checker(&s, &mut cmd, "ok");
    assert!(out.contains("xliff roundtrip: ok"), "{out}");
    assert!(server.terminate().success());
}

#[test]
fn a_po_export_edited_with_polib_comes_back() {
    let Some(python) =
        crate::mcp::python_with("a_po_export_edited_with_polib_comes_back", "httpx, polib")
    else {
        return;
    };
    let missing = crate::harness::missing_program("msgfmt", "--version");
    if !crate::harness::tool_available(
        "msgfmt",
        "a_po_export_edited_with_polib_comes_back",
        missing,
    ) {
        return;
    }
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let mut cmd = Command::new(&python);
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/po/roundtrip.py"
    ))
    .arg(&server.url)
    .arg(s.path(""));
    let out = run_checker(&s, &mut cmd, "ok");
    assert!(out.contains("po roundtrip: ok"), "{out}");
    assert!(server.terminate().success());
}

#[test]
fn subtitles_and_comics_go_in_and_out_through_pysrt_and_webvtt_py() {
    let test = "subtitles_and_comics_go_in_and_out_through_pysrt_and_webvtt_py";
    let Some(python) = crate::mcp::python_with(test, "httpx, pysrt, webvtt") else {
        return;
    };
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let mut cmd = Command::new(&python);
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/subtitles/roundtrip.py"
    ))
    .arg(&server.url);
    let out = run_checker(&s, &mut cmd, "ok");
    assert!(out.contains("subtitles roundtrip: ok"), "{out}");
    assert!(server.terminate().success());
}
