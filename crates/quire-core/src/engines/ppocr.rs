//! The `onnx` backends' models (PP-OCR's detector and recogniser, a box
//! detector, an inpainting model), run in the `quire-ppocr` helper
//! process. The model runtime (tract) was 40 % of
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
//! A job that works on several pages at once keeps a [`Helpers`], one
//! helper per page in flight.
//!
//! Every exchange (the request written, the answer read) has a deadline
//! ([`Deadline`]: `ocr.timeout_secs`, `detect.timeout_secs`): a watchdog
//! thread kills a helper that has not answered by then, and the call
//! fails naming the setting. [`Helper::kill`] ends it at once (the job
//! that owns it was cancelled or has ended); the helper program also asks
//! the kernel to kill it when quire exits, so none outlives the server.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use image::GrayImage;
use image::RgbImage;
use serde::{Deserialize, Serialize};
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

/// A box a box detector found, in the pixels of the image it was sent;
/// `label` is its class's index.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Found {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
    pub label: usize,
    pub score: f32,
}

/// The layouts of a box detector's outputs (`quire-ppocr`'s `boxes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoxFormat {
    /// YOLO (Ultralytics v8/11, or v5): letterboxed input, boxes in its
    /// pixels, overlaps suppressed.
    Yolo,
    /// RT-DETR: stretched input, boxes in 0..1, one query per object.
    Detr,
}

/// The models a helper loads; any may be left out.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Models {
    pub detector: Option<PathBuf>,
    pub recognizer: Option<PathBuf>,
    pub boxes: Option<BoxModel>,
    pub inpainter: Option<InpaintModel>,
}

/// A box detector as the helper loads it.
#[derive(Debug, Clone, Serialize)]
pub struct BoxModel {
    pub path: PathBuf,
    pub format: BoxFormat,
    /// Its square input's side, in pixels.
    pub size: u32,
    /// How many classes it scores.
    pub classes: usize,
}

/// An inpainting model as the helper loads it.
#[derive(Debug, Clone, Serialize)]
pub struct InpaintModel {
    pub path: PathBuf,
    pub size: u32,
    /// Its output is in 0..1 (else 0..255, as LaMa's).
    pub unit_output: bool,
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

/// The longest answer line read from the helper.
const MAX_ANSWER: u64 = 16 << 20;

/// The most image bytes an answer may carry (the helper's pixel limit, in
/// RGB).
const MAX_ANSWER_PIXELS: u64 = 3 * 128_000_000;

/// How long one exchange with the helper may take, and the setting that
/// says so (named when it is exceeded).
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub within: Duration,
    pub setting: &'static str,
}

/// A running helper with its models loaded.
pub struct Helper {
    program: PathBuf,
    load: Value,
    /// The recogniser's dictionary size, when one is loaded.
    characters: Option<usize>,
    deadline: Deadline,
    process: Mutex<Option<Process>>,
    /// The running process's id (0: none), to kill it while a call holds
    /// `process` (a deadline passed, the job ended).
    pid: AtomicU32,
    /// A deadline passed: the helper is not started again (a helper that
    /// hangs once would hang on every page, and the job must end).
    /// Shared by the helpers of one [`Helpers`]: a model that hangs in
    /// one hangs in all.
    gave_up: Arc<AtomicBool>,
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
    pub fn start(
        detector: Option<&Path>,
        recognizer: Option<&Path>,
        deadline: Deadline,
    ) -> Result<Helper, String> {
        let models = Models {
            detector: detector.map(Path::to_path_buf),
            recognizer: recognizer.map(Path::to_path_buf),
            ..Models::default()
        };
        Helper::start_program(program(), &models, deadline)
    }

    /// Starts the helper with `models` loaded.
    pub fn start_models(models: &Models, deadline: Deadline) -> Result<Helper, String> {
        Helper::start_program(program(), models, deadline)
    }

    /// A helper for `models` that starts at its first call.
    fn idle(program: PathBuf, models: &Models, deadline: Deadline) -> Helper {
        Helper {
            program,
            load: json!({ "load": models }),
            characters: None,
            deadline,
            process: Mutex::new(None),
            pid: AtomicU32::new(0),
            gave_up: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether a call holds it now.
    fn busy(&self) -> bool {
        self.process.try_lock().is_err()
    }

    fn start_program(
        program: PathBuf,
        models: &Models,
        deadline: Deadline,
    ) -> Result<Helper, String> {
        let mut helper = Helper::idle(program, models, deadline);
        let mut process = helper.spawn()?;
        let (answer, expired) = helper.exchange(&mut process, &helper.load, &[]);
        let answer = refused(answer?.0)?;
        helper.characters = answer["ok"]["characters"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok());
        if !expired {
            *helper
                .process
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner) = Some(process);
        }
        Ok(helper)
    }

    /// Kills the running helper now, whatever it is doing; a call in
    /// progress fails, the next starts another.
    pub fn kill(&self) {
        kill_pid(self.pid.load(Ordering::SeqCst));
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

    /// The box detector's boxes in `image` scoring at least `min_score`,
    /// best first.
    pub fn boxes(&self, image: &RgbImage, min_score: f32) -> Result<Vec<Found>, String> {
        let request = json!({ "boxes": {
            "width": image.width(), "height": image.height(), "min_score": min_score,
        } });
        let (answer, _) = self.send(&request, &[image.as_raw()])?;
        serde_json::from_value(answer["boxes"].clone())
            .map_err(|e| format!("the {PROGRAM} helper answered nonsense: {e}"))
    }

    /// `image` with the pixels `mask` marks filled by the inpainting
    /// model; the others as they were.
    pub fn inpaint(&self, image: &RgbImage, mask: &GrayImage) -> Result<RgbImage, String> {
        let request = json!({ "inpaint": { "width": image.width(), "height": image.height() } });
        let (_, bytes) = self.send(&request, &[image.as_raw(), mask.as_raw()])?;
        RgbImage::from_raw(image.width(), image.height(), bytes)
            .ok_or_else(|| format!("the {PROGRAM} helper's inpainted image has the wrong size"))
    }

    fn call(&self, what: &str, image: &RgbImage, scale: Option<f32>) -> Result<Value, String> {
        let request = json!({ what: {
            "width": image.width(), "height": image.height(), "scale": scale,
        } });
        self.send(&request, &[image.as_raw()])
            .map(|(answer, _)| answer)
    }

    /// Sends `request` and its `payload`; the answer and the bytes that
    /// follow it (an image), on a helper started (again) if need be.
    fn send(&self, request: &Value, payload: &[&[u8]]) -> Result<(Value, Vec<u8>), String> {
        let mut slot = self.process.lock().unwrap_or_else(PoisonError::into_inner);
        if self.gave_up.load(Ordering::SeqCst) {
            return Err(format!(
                "{}; it is not started again for this job",
                self.too_late()
            ));
        }
        let mut process = match slot.take() {
            Some(process) => process,
            None => {
                let mut process = self.spawn()?;
                let (loaded, expired) = self.exchange(&mut process, &self.load, &[]);
                refused(loaded?.0)?;
                if expired {
                    return Err(self.too_late());
                }
                process
            }
        };
        let (answer, expired) = self.exchange(&mut process, request, payload);
        // A process that failed is gone (a watchdog that fired as the
        // answer came has killed it too): the next call starts another.
        if answer.is_ok() && !expired {
            *slot = Some(process);
        }
        let (answer, bytes) = answer?;
        Ok((refused(answer)?, bytes))
    }

    fn too_late(&self) -> String {
        format!(
            "the {PROGRAM} helper did not answer within {} s ({}) and was killed",
            self.deadline.within.as_secs(),
            self.deadline.setting
        )
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
        self.pid.store(child.id(), Ordering::SeqCst);
        Ok(Process {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    /// Sends `request` (and `payload`) and reads its answer (and the bytes
    /// that follow it), within the deadline; whether the deadline passed
    /// (the process is then killed, even if its answer came). A broken
    /// pipe or an answer that is not JSON ends the process (killed,
    /// reaped) and says how it ended.
    fn exchange(
        &self,
        process: &mut Process,
        request: &Value,
        payload: &[&[u8]],
    ) -> (Result<(Value, Vec<u8>), String>, bool) {
        let watchdog = Watchdog::arm(process.child.id(), self.deadline.within);
        let answer = self.exchange_now(process, request, payload);
        let expired = watchdog.disarm();
        if expired {
            self.gave_up.store(true, Ordering::SeqCst);
        }
        match answer {
            Err(_) if expired => (Err(self.too_late()), true),
            answer => (answer, expired),
        }
    }

    fn exchange_now(
        &self,
        process: &mut Process,
        request: &Value,
        payload: &[&[u8]],
    ) -> Result<(Value, Vec<u8>), String> {
        let mut line = String::new();
        let sent = (|| {
            writeln!(process.stdin, "{request}")?;
            for part in payload {
                process.stdin.write_all(part)?;
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
        // An inpainted image follows its answer line.
        let answer = answer.and_then(|answer| {
            let n = answer.pointer("/inpainted/bytes").and_then(Value::as_u64);
            let mut bytes = Vec::new();
            match n {
                Some(n) if n > MAX_ANSWER_PIXELS => return None,
                Some(n) => {
                    bytes.resize(usize::try_from(n).ok()?, 0);
                    process.stdout.read_exact(&mut bytes).ok()?;
                }
                None => {}
            }
            Some((answer, bytes))
        });
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

/// Helpers of one set of models, one for each page a job works on at
/// once (tract runs a model on one core): a call goes to one that no
/// other call holds. The first is started (and its models checked) at
/// once, the others at their first call.
pub struct Helpers {
    helpers: Vec<Helper>,
    next: std::sync::atomic::AtomicUsize,
}

impl Helpers {
    pub fn start(models: &Models, deadline: Deadline) -> Result<Helpers, String> {
        let first = Helper::start_models(models, deadline)?;
        let program = first.program.clone();
        let gave_up = first.gave_up.clone();
        let mut helpers = vec![first];
        helpers.extend((1..super::pages_at_once()).map(|_| {
            let mut helper = Helper::idle(program.clone(), models, deadline);
            helper.gave_up = gave_up.clone();
            helper
        }));
        Ok(Helpers {
            helpers,
            next: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// A helper no call holds, else the next in turn.
    pub fn any(&self) -> &Helper {
        self.helpers.iter().find(|h| !h.busy()).unwrap_or_else(|| {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            &self.helpers[k % self.helpers.len()]
        })
    }

    /// Kills them all now (the job ended).
    pub fn kill(&self) {
        self.helpers.iter().for_each(Helper::kill);
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kills process `pid` (0: none). It is a child not yet reaped, so its id
/// cannot have been reused.
fn kill_pid(pid: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// A thread that kills a process unless it is disarmed in time.
struct Watchdog {
    disarm: Option<mpsc::Sender<()>>,
    fired: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn arm(pid: u32, within: Duration) -> Watchdog {
        let (disarm, armed) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let fire = fired.clone();
        let thread = std::thread::Builder::new()
            .name("ppocr-deadline".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = armed.recv_timeout(within) {
                    fire.store(true, Ordering::SeqCst);
                    kill_pid(pid);
                }
            })
            .ok();
        Watchdog {
            disarm: Some(disarm),
            fired,
            thread,
        }
    }

    /// Stops the watchdog; whether it had fired.
    fn disarm(mut self) -> bool {
        drop(self.disarm.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.fired.load(Ordering::SeqCst)
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

    const DEADLINE: Deadline = Deadline {
        within: Duration::from_secs(30),
        setting: "ocr.timeout_secs",
    };

    #[test]
    fn a_helper_that_dies_fails_its_call_and_is_started_again_for_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let helper = Helper::start_program(fake(dir.path()), &Models::default(), DEADLINE).unwrap();
        assert_eq!(helper.characters(), Some(7));
        let image = RgbImage::new(2, 1);
        let died = helper.lines(&image, None).unwrap_err();
        assert!(died.contains("helper stopped (exit status: 3)"), "{died}");
        assert_eq!(helper.lines(&image, None).unwrap(), []);
        assert_eq!(helper.lines(&image, None).unwrap(), []);
        let runs = std::fs::read_to_string(dir.path().join("runs")).unwrap();
        assert_eq!(runs.lines().count(), 2);
    }

    /// A helper that loads, then never answers an image: each call is
    /// failed at its deadline and the process killed (and reaped).
    #[test]
    fn a_helper_that_does_not_answer_is_killed_at_its_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("hung-ppocr");
        let pids = dir.path().join("pids");
        std::fs::write(
            &program,
            format!(
                "#!/bin/sh\necho $$ >> {}\nread line\necho '{{\"ok\":{{}}}}'\nexec sleep 600\n",
                pids.display()
            ),
        )
        .unwrap();
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&program)
            .status()
            .unwrap();
        let deadline = Deadline {
            within: Duration::from_millis(300),
            setting: "detect.timeout_secs",
        };
        let helper = Helper::start_program(program, &Models::default(), deadline).unwrap();
        let image = RgbImage::new(2, 1);
        let started = std::time::Instant::now();
        let e = helper.lines(&image, None).unwrap_err();
        assert!(
            e.starts_with("the quire-ppocr helper did not answer within ")
                && e.ends_with(" (detect.timeout_secs) and was killed"),
            "{e}"
        );
        assert!(started.elapsed() < Duration::from_secs(20));
        let first: i32 = std::fs::read_to_string(&pids)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // Killed and reaped: no such process any more.
        assert!(!std::path::Path::new(&format!("/proc/{first}")).exists());
        // The next call fails at once: no helper is started again.
        let again = std::time::Instant::now();
        let e = helper.lines(&image, None).unwrap_err();
        assert!(e.ends_with("it is not started again for this job"), "{e}");
        assert!(again.elapsed() < Duration::from_millis(250));
        assert_eq!(std::fs::read_to_string(&pids).unwrap().lines().count(), 1);
    }

    #[test]
    fn a_program_that_cannot_be_started_is_named() {
        let missing = PathBuf::from("/nonexistent/quire-ppocr");
        let Err(e) = Helper::start_program(missing, &Models::default(), DEADLINE) else {
            panic!("started")
        };
        assert!(
            e.contains("/nonexistent/quire-ppocr cannot be started"),
            "{e}"
        );
    }
}
