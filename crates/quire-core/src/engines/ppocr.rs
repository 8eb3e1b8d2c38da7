//! The `onnx` backends' models (PP-OCR's detector and recogniser), run in
//! the `quire-ppocr` helper process. The model runtime (tract) was 40 % of
//! the `quire` binary's code, paid by every start of every mode; in its
//! own process it is loaded only by a job that uses it, and its memory
//! goes when the job ends.
//!
//! A [`Helper`] starts the program, has it load the models, then sends it
//! one image at a time (the protocol is defined in the `quire-ppocr`
//! crate's `helper` module). Calls take turns; each blocks its thread
//! until the answer. A helper that dies is started again, models
//! reloaded, on the next call; the call it died in fails with how it
//! ended.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, PoisonError};

use image::RgbImage;
use serde::Deserialize;
use serde_json::{Value, json};

/// The helper's program name.
pub const PROGRAM: &str = "quire-ppocr";

/// The variable that names the helper program, for an install that keeps
/// it elsewhere (and for tests).
pub const HELPER_ENV: &str = "QUIRE_PPOCR_HELPER";

/// A text line the detector found, in the pixels of the image it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Line {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
}

/// One line (or a piece of one) of a block, read; `row` is its row (or
/// column) in reading order.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReadLine {
    pub line: Line,
    pub row: usize,
    pub text: String,
    pub confidence: f32,
}

/// The helper program: `QUIRE_PPOCR_HELPER` when set; else the first
/// `quire-ppocr` found beside the running program, in `../libexec/quire/`
/// from it (where the .deb and .rpm install it, as a program only quire
/// runs), in `../lib/quire/` (Arch's place for those), or one level up
/// from a `deps` directory (where cargo puts tests and benches); else
/// the name, looked up on `PATH`.
pub fn program() -> PathBuf {
    if let Some(path) = std::env::var_os(HELPER_ENV) {
        return PathBuf::from(path);
    }
    let found = std::env::current_exe().ok().and_then(|exe| {
        let dir = exe.parent()?;
        let places = [
            Some(dir.to_path_buf()),
            dir.parent().map(|up| up.join("libexec/quire")),
            dir.parent().map(|up| up.join("lib/quire")),
            dir.parent()
                .filter(|_| dir.ends_with("deps"))
                .map(Path::to_path_buf),
        ];
        places
            .into_iter()
            .flatten()
            .map(|d| d.join(PROGRAM))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| PathBuf::from(PROGRAM))
}

/// The longest answer read from the helper.
const MAX_ANSWER: u64 = 16 << 20;

/// A running helper with its models loaded.
pub struct Helper {
    program: PathBuf,
    load: Value,
    /// The recogniser's dictionary size, when one is loaded.
    characters: Option<usize>,
    process: Mutex<Option<Process>>,
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Helper {
    /// Starts the helper and loads `detector` and `recognizer` (either may
    /// be `None`); fails with the helper's word when a model does not load.
    pub fn start(detector: Option<&Path>, recognizer: Option<&Path>) -> Result<Helper, String> {
        Helper::start_program(program(), detector, recognizer)
    }

    fn start_program(
        program: PathBuf,
        detector: Option<&Path>,
        recognizer: Option<&Path>,
    ) -> Result<Helper, String> {
        let mut helper = Helper {
            program,
            load: json!({ "load": { "detector": detector, "recognizer": recognizer } }),
            characters: None,
            process: Mutex::new(None),
        };
        let mut process = helper.spawn()?;
        let answer = refused(helper.exchange(&mut process, &helper.load, None)?)?;
        helper.characters = answer["ok"]["characters"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok());
        *helper
            .process
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner) = Some(process);
        Ok(helper)
    }

    /// How many characters the recogniser's dictionary has.
    pub fn characters(&self) -> Option<usize> {
        self.characters
    }

    /// The detector's lines in `image`, in no order (`scale` as the
    /// detector takes it: `None` scales a page's short side to 736 px).
    pub fn lines(&self, image: &RgbImage, scale: Option<f32>) -> Result<Vec<Line>, String> {
        let answer = self.call("lines", image, scale)?;
        serde_json::from_value(answer["lines"].clone())
            .map_err(|e| format!("the {PROGRAM} helper answered nonsense: {e}"))
    }

    /// The lines of a text block, found and read, in reading order.
    pub fn read(&self, image: &RgbImage, scale: Option<f32>) -> Result<Vec<ReadLine>, String> {
        let answer = self.call("read", image, scale)?;
        serde_json::from_value(answer["read"].clone())
            .map_err(|e| format!("the {PROGRAM} helper answered nonsense: {e}"))
    }

    fn call(&self, what: &str, image: &RgbImage, scale: Option<f32>) -> Result<Value, String> {
        let request = json!({ what: {
            "width": image.width(), "height": image.height(), "scale": scale,
        } });
        let mut slot = self.process.lock().unwrap_or_else(PoisonError::into_inner);
        let mut process = match slot.take() {
            Some(process) => process,
            None => {
                let mut process = self.spawn()?;
                refused(self.exchange(&mut process, &self.load, None)?)?;
                process
            }
        };
        let answer = self.exchange(&mut process, &request, Some(image.as_raw()))?;
        *slot = Some(process);
        refused(answer)
    }

    fn spawn(&self) -> Result<Process, String> {
        let mut child = Command::new(&self.program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "the onnx backend runs its models in the {PROGRAM} helper, installed with \
                     quire; {} cannot be started: {e}",
                    self.program.display()
                )
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(format!("the {PROGRAM} helper has no pipes"));
        };
        Ok(Process {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    /// Sends `request` (and `pixels`) and reads its answer. A broken pipe
    /// or an answer that is not JSON ends the process (killed, reaped)
    /// and says how it ended.
    fn exchange(
        &self,
        process: &mut Process,
        request: &Value,
        pixels: Option<&[u8]>,
    ) -> Result<Value, String> {
        let mut line = String::new();
        let sent = (|| {
            writeln!(process.stdin, "{request}")?;
            if let Some(pixels) = pixels {
                process.stdin.write_all(pixels)?;
            }
            process.stdin.flush()?;
            // An answer is a line of JSON: a page's lines, a few
            // kilobytes; past this the helper is not answering.
            (&mut process.stdout).take(MAX_ANSWER).read_line(&mut line)
        })();
        let answer = match sent {
            Ok(n) if n > 0 => serde_json::from_str::<Value>(&line).ok(),
            _ => None,
        };
        let Some(answer) = answer else {
            let _ = process.child.kill();
            let ended = process
                .child
                .wait()
                .map_or_else(|e| e.to_string(), |status| status.to_string());
            return Err(format!("the {PROGRAM} helper stopped ({ended})"));
        };
        Ok(answer)
    }
}

/// The answer, or its `error` as this call's error.
fn refused(answer: Value) -> Result<Value, String> {
    match answer.get("error").and_then(Value::as_str) {
        Some(error) => Err(error.to_owned()),
        None => Ok(answer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in helper (a shell script): it loads anything, and its
    /// first run dies at the first image; later runs answer no lines.
    fn fake(dir: &Path) -> PathBuf {
        let program = dir.join("fake-ppocr");
        let runs = dir.join("runs");
        let script = format!(
            "#!/bin/sh\necho run >> {runs}\nread line\necho '{{\"ok\":{{\"characters\":7}}}}'\n\
             [ $(wc -l < {runs}) -eq 1 ] && exit 3\n\
             while read line; do head -c 6 > /dev/null; echo '{{\"lines\":[]}}'; done\n",
            runs = runs.display()
        );
        std::fs::write(&program, script).unwrap();
        std::process::Command::new("chmod")
            .args(["+x"])
            .arg(&program)
            .status()
            .unwrap();
        program
    }

    #[test]
    fn a_helper_that_dies_fails_its_call_and_is_started_again_for_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let helper = Helper::start_program(fake(dir.path()), None, None).unwrap();
        assert_eq!(helper.characters(), Some(7));
        let image = RgbImage::new(2, 1);
        let died = helper.lines(&image, None).unwrap_err();
        assert!(died.contains("helper stopped (exit status: 3)"), "{died}");
        assert_eq!(helper.lines(&image, None).unwrap(), []);
        assert_eq!(helper.lines(&image, None).unwrap(), []);
        let runs = std::fs::read_to_string(dir.path().join("runs")).unwrap();
        assert_eq!(runs.lines().count(), 2);
    }

    #[test]
    fn a_program_that_cannot_be_started_is_named() {
        let missing = PathBuf::from("/nonexistent/quire-ppocr");
        let Err(e) = Helper::start_program(missing, None, None) else {
            panic!("started")
        };
        assert!(
            e.contains("/nonexistent/quire-ppocr cannot be started"),
            "{e}"
        );
    }
}
