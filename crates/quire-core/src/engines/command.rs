//! Command engines: a program declared in config, run once per page.
//!
//! The program is spawned directly (never through a shell) in a fresh
//! temporary directory and its own process group, with `{image}`,
//! `{page_json}` and `{target_language}` (a checked BCP 47 tag) replaced
//! in its arguments. Its whole group is killed at its timeout, on a
//! cancel, and when it is done; its stdout is read up to
//! `max_output_bytes`. A non-zero exit becomes a warning carrying the end
//! of its stderr. Its output is parsed and checked completely (every op
//! must touch only its own page) before anything is applied.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::{
    Engine, EngineInfo, Needs, PageInput, PageOutcome, PageWork, Pictures, Step, tesseract,
};
use crate::settings::{CommandEngine, EngineInput, EngineOutput};
use quire_model::ids::PageId;
use quire_model::op::Op;
use quire_model::scene::Page;

/// A command engine: `[engines.<id>]`.
pub struct Command {
    info: EngineInfo,
    config: Arc<CommandEngine>,
}

impl Command {
    pub fn new(id: &str, config: CommandEngine) -> Self {
        Command {
            info: EngineInfo {
                id: id.to_owned(),
                stage: config.stage.clone(),
                description: config.description.clone(),
                requires_approval: config.requires_approval,
                built_in: false,
                command: Some(command_line(&config)),
            },
            config: Arc::new(config),
        }
    }
}

impl Engine for Command {
    fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn needs(&self) -> Needs {
        Needs {
            pictures: if needs_image(&self.config) {
                Pictures::Image
            } else {
                Pictures::None
            },
            ..Needs::default()
        }
    }

    fn prepare(&self, step: Step<'_>) -> Result<Box<dyn PageWork>, String> {
        Ok(Box::new(Prepared {
            config: self.config.clone(),
            target_language: step.target_language.map(str::to_owned),
        }))
    }
}

/// A command engine's step.
struct Prepared {
    config: Arc<CommandEngine>,
    target_language: Option<String>,
}

impl PageWork for Prepared {
    fn page<'a>(
        &'a self,
        input: PageInput<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<PageOutcome, String>> {
        Box::pin(async move {
            let ops = run(
                &self.config,
                input.page,
                input.image,
                self.target_language.as_deref(),
            )
            .await?;
            Ok(PageOutcome {
                ops,
                ..PageOutcome::default()
            })
        })
    }
}

/// How much of stderr a warning quotes.
const STDERR_TAIL: usize = 600;

/// The command line as a person reads it (for the approval prompt).
pub fn command_line(config: &CommandEngine) -> String {
    shlex::try_join(config.command.iter().map(String::as_str))
        .unwrap_or_else(|_| config.command.join(" "))
}

fn uses(config: &CommandEngine, placeholder: &str) -> bool {
    config.command.iter().any(|a| a.contains(placeholder))
}

/// Whether this engine needs the page's image.
pub fn needs_image(config: &CommandEngine) -> bool {
    config.input == EngineInput::PageImage || uses(config, "{image}")
}

fn extension(bytes: &[u8]) -> &'static str {
    match imagesize::image_type(bytes) {
        Ok(imagesize::ImageType::Png) => "png",
        Ok(imagesize::ImageType::Jpeg) => "jpg",
        Ok(imagesize::ImageType::Webp) => "webp",
        _ => "img",
    }
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let count = text.chars().count();
    if count <= STDERR_TAIL {
        return text.to_owned();
    }
    let skip = count - STDERR_TAIL;
    format!("…{}", text.chars().skip(skip).collect::<String>())
}

/// Most of stderr kept (its end) while a program runs.
const STDERR_KEEP: usize = 64 << 10;

/// Runs the engine on one page; returns the ops to apply.
///
/// The program runs in its own process group; when this future ends, for
/// any reason (done, failed, timed out, or dropped because the job was
/// cancelled), the whole group is killed, so nothing it started lives on.
pub async fn run(
    config: &CommandEngine,
    page: &Page,
    image: Option<&[u8]>,
    target_language: Option<&str>,
) -> Result<Vec<Op>, String> {
    if uses(config, "{target_language}") {
        let tag = target_language.ok_or("the engine needs targetLanguage")?;
        quire_model::lang::check_tag("targetLanguage", tag).map_err(|e| e.to_string())?;
    }
    let page_json = serde_json::to_vec(page).map_err(|e| format!("cannot encode the page: {e}"))?;
    let image = match needs_image(config) {
        true => Some(
            image
                .ok_or("the page has no image to give the engine")?
                .to_vec(),
        ),
        false => None,
    };
    let wants_json = uses(config, "{page_json}");
    let json_for_file = page_json.clone();
    let work = tokio::task::spawn_blocking(move || prepare(wants_json, &json_for_file, image))
        .await
        .map_err(|e| format!("cannot prepare the work directory: {e}"))??;
    let args: Vec<String> = config
        .command
        .iter()
        .map(|arg| {
            let mut arg = arg.replace("{page_json}", &work.json.display().to_string());
            if let Some(p) = &work.image {
                arg = arg.replace("{image}", &p.display().to_string());
            }
            arg.replace("{target_language}", target_language.unwrap_or(""))
        })
        .collect();
    let Some((program, rest)) = args.split_first() else {
        return Err("the engine has no command".into());
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(rest)
        .current_dir(work.dir.path())
        .stdin(if config.input == EngineInput::PageJson {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    let group = Group(child.id());
    if let Some(mut stdin) = child.stdin.take() {
        // Written concurrently with reading the output, so a program that
        // answers before it has read everything cannot deadlock us.
        tokio::spawn(async move {
            let _ = stdin.write_all(&page_json).await;
        });
    }
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(format!("`{program}` has no output pipes"));
    };
    let limit = config.max_output_bytes;
    let finished = async {
        let out = async {
            let out = read_capped(stdout, limit).await;
            if out.is_none() {
                // Over the limit: stop it now rather than at its timeout.
                group.kill();
            }
            out
        };
        let (out, err) = tokio::join!(out, read_tail(stderr));
        let status = child.wait().await;
        (out, err, status)
    };
    let timeout = Duration::from_secs(config.timeout_secs);
    let (stdout, stderr, status) = match tokio::time::timeout(timeout, finished).await {
        Ok(done) => done,
        // Dropping the child and the group guard kills them all.
        Err(_) => {
            return Err(format!(
                "`{program}` did not finish within {}s and was killed",
                config.timeout_secs
            ));
        }
    };
    let Some(stdout) = stdout else {
        return Err(format!(
            "`{program}` wrote more than {limit} bytes of output (engines.<id>.max_output_bytes) and was stopped"
        ));
    };
    let status = status.map_err(|e| format!("`{program}` failed: {e}"))?;
    if !status.success() {
        let status = status.code().map_or_else(
            || "was killed by a signal".to_owned(),
            |c| format!("exited with status {c}"),
        );
        let stderr = tail(&stderr);
        return Err(if stderr.is_empty() {
            format!("`{program}` {status}")
        } else {
            format!("`{program}` {status}: {stderr}")
        });
    }
    let stdout = String::from_utf8(stdout)
        .map_err(|_| format!("`{program}` wrote output that is not UTF-8"))?;
    parse_output(config.output, &stdout, page.id)
}

/// The temporary directory a program runs in, and the files given to it.
struct Work {
    dir: tempfile::TempDir,
    json: std::path::PathBuf,
    image: Option<std::path::PathBuf>,
}

/// Writes the page's JSON and image into a fresh temporary directory
/// (blocking: run off the async workers).
fn prepare(json: bool, page_json: &[u8], image: Option<Vec<u8>>) -> Result<Work, String> {
    let dir = tempfile::Builder::new()
        .prefix("quire-engine-")
        .tempdir()
        .map_err(|e| format!("cannot create a work directory: {e}"))?;
    let json_path = dir.path().join("page.json");
    if json {
        std::fs::write(&json_path, page_json)
            .map_err(|e| format!("cannot write page.json: {e}"))?;
    }
    let image = match image {
        Some(bytes) => {
            let path = dir.path().join(format!("page.{}", extension(&bytes)));
            std::fs::write(&path, &bytes)
                .map_err(|e| format!("cannot write the page image: {e}"))?;
            Some(path)
        }
        None => None,
    };
    Ok(Work {
        dir,
        json: json_path,
        image,
    })
}

/// All of `reader` up to `limit` bytes; `None` once it offers more.
pub(super) async fn read_capped(reader: impl AsyncRead + Unpin, limit: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut capped = reader.take(limit.saturating_add(1));
    capped.read_to_end(&mut out).await.ok()?;
    (out.len() as u64 <= limit).then_some(out)
}

/// The last [`STDERR_KEEP`] bytes of `reader`, read to its end so that the
/// program never blocks on a full pipe.
pub(super) async fn read_tail(mut reader: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut chunk = vec![0u8; 8192];
    while let Ok(n) = reader.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&chunk[..n]);
        if kept.len() > 2 * STDERR_KEEP {
            kept.drain(..kept.len() - STDERR_KEEP);
        }
    }
    kept
}

/// The process group of a running program; dropping it kills the group.
struct Group(Option<u32>);

impl Group {
    fn kill(&self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .0
            .and_then(|p| i32::try_from(p).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            // ESRCH (the group is gone) is the usual, quiet case.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Parses and checks an engine's output for page `page`.
pub fn parse_output(kind: EngineOutput, stdout: &str, page: PageId) -> Result<Vec<Op>, String> {
    match kind {
        EngineOutput::TesseractTsv => Ok(tesseract::parse(stdout)
            .map_err(|e| format!("output is not Tesseract TSV: {e}"))?
            .into_iter()
            .map(|node| Op::AddNode {
                page,
                node,
                at: None,
            })
            .collect()),
        EngineOutput::Ops => {
            let mut ops = Vec::new();
            for (i, line) in stdout.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let op: Op = serde_json::from_str(line)
                    .map_err(|e| format!("output line {} is not an op: {e}", i + 1))?;
                if !touches_only(&op, page) {
                    return Err(format!(
                        "output line {}: {} may only change its own page {page}",
                        i + 1,
                        op.type_name()
                    ));
                }
                ops.push(op);
            }
            Ok(ops)
        }
    }
}

/// Whether `op` changes nothing but page `page` and its nodes.
fn touches_only(op: &Op, page: PageId) -> bool {
    match op {
        Op::AddNode { page: p, .. }
        | Op::RemoveNode { page: p, .. }
        | Op::UpdateNode { page: p, .. }
        | Op::ReorderNodes { page: p, .. } => *p == page,
        Op::UpdatePage { id, .. } => *id == page,
        Op::Batch { ops, .. } => ops.iter().all(|o| touches_only(o, page)),
        Op::AddPage { .. }
        | Op::RemovePage { .. }
        | Op::ReorderPages { .. }
        | Op::UpdateProject { .. }
        | Op::UpdateGlossary { .. } => false,
    }
}
