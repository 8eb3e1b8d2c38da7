//! `quire-ppocr`: the helper process quire runs PP-OCR's models in (the
//! `onnx` backends of `detect` and `ocr`, and `quire models list`). It
//! speaks only to quire, over its stdin and stdout (see
//! `quire_ppocr::helper`); it is installed beside `quire`, or in
//! `/usr/libexec/quire/` by the packages.

fn main() -> std::process::ExitCode {
    match quire_ppocr::serve(std::io::stdin().lock(), std::io::stdout().lock()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // quire went away mid-request: nothing is left to answer.
        Err(_) => std::process::ExitCode::FAILURE,
    }
}
