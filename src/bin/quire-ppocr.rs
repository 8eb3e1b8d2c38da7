//! `quire-ppocr`: the helper process quire runs PP-OCR's models in (the
//! `onnx` backends of `detect` and `ocr`, and `quire models list`). It
//! speaks only to quire, over its stdin and stdout (see
//! `quire_ppocr::helper`); it is installed beside `quire`, or in
//! `/usr/libexec/quire/` by the packages.

fn main() -> std::process::ExitCode {
    die_with_parent();
    match quire_ppocr::serve(std::io::stdin().lock(), std::io::stdout().lock()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // quire went away mid-request: nothing is left to answer.
        Err(_) => std::process::ExitCode::FAILURE,
    }
}

/// Asks the kernel to kill this process when quire, its parent, ends, even
/// by SIGKILL and even while a model runs (when it would not read its
/// closed stdin): no helper outlives the server. Linux only; elsewhere the
/// closed stdin ends it once it is idle.
fn die_with_parent() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let parent = rustix::process::getppid();
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        // The parent ended before the request was made: end now.
        if rustix::process::getppid() != parent {
            std::process::exit(1);
        }
    }
}
