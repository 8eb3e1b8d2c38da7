//! XLIFF 2.0 round trips through an independent implementation:
//! `tests/xliff/roundtrip.py` edits quire's export with Translate
//! Toolkit's XLIFF 2.0 store and imports it back over HTTP (see there).

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
