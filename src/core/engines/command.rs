//! Command engines: a program declared in config, run once per page.
//!
//! The program is spawned directly (never through a shell) in a fresh
//! temporary directory, with `{image}`, `{page_json}` and
//! `{target_language}` replaced in its arguments. It is killed at its
//! timeout; a non-zero exit becomes a warning carrying the end of its
//! stderr. Its output is parsed and checked completely (every op must
//! touch only its own page) before anything is applied.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::tesseract;
use crate::config::schema::{CommandEngineConfig, EngineInput, EngineOutput};
use crate::core::ids::PageId;
use crate::core::op::Op;
use crate::core::scene::Page;

/// How much of stderr a warning quotes.
const STDERR_TAIL: usize = 600;

/// The command line as a person reads it (for the approval prompt).
pub fn command_line(config: &CommandEngineConfig) -> String {
    shlex::try_join(config.command.iter().map(String::as_str))
        .unwrap_or_else(|_| config.command.join(" "))
}

fn uses(config: &CommandEngineConfig, placeholder: &str) -> bool {
    config.command.iter().any(|a| a.contains(placeholder))
}

/// Whether this engine needs the page's image.
pub fn needs_image(config: &CommandEngineConfig) -> bool {
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

/// Runs the engine on one page; returns the ops to apply.
pub async fn run(
    config: &CommandEngineConfig,
    page: &Page,
    image: Option<&[u8]>,
    target_language: Option<&str>,
) -> Result<Vec<Op>, String> {
    let dir = tempfile::Builder::new()
        .prefix("quire-engine-")
        .tempdir()
        .map_err(|e| format!("cannot create a work directory: {e}"))?;
    let page_json = serde_json::to_vec(page).map_err(|e| format!("cannot encode the page: {e}"))?;
    let json_path = dir.path().join("page.json");
    if uses(config, "{page_json}") {
        std::fs::write(&json_path, &page_json)
            .map_err(|e| format!("cannot write page.json: {e}"))?;
    }
    let mut image_path = None;
    if needs_image(config) {
        let bytes = image.ok_or("the page has no image to give the engine")?;
        let path = dir.path().join(format!("page.{}", extension(bytes)));
        std::fs::write(&path, bytes).map_err(|e| format!("cannot write the page image: {e}"))?;
        image_path = Some(path);
    }
    if uses(config, "{target_language}") && target_language.is_none() {
        return Err("the engine needs targetLanguage".into());
    }
    let args: Vec<String> = config
        .command
        .iter()
        .map(|arg| {
            let mut arg = arg.replace("{page_json}", &json_path.display().to_string());
            if let Some(p) = &image_path {
                arg = arg.replace("{image}", &p.display().to_string());
            }
            arg.replace("{target_language}", target_language.unwrap_or(""))
        })
        .collect();
    let Some((program, rest)) = args.split_first() else {
        return Err("the engine has no command".into());
    };
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .current_dir(dir.path())
        .stdin(if config.input == EngineInput::PageJson {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // Written concurrently with reading the output, so a program that
        // answers before it has read everything cannot deadlock us.
        tokio::spawn(async move {
            let _ = stdin.write_all(&page_json).await;
        });
    }
    let timeout = Duration::from_secs(config.timeout_secs);
    let output = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Err(format!("`{program}` failed: {e}")),
        // Dropping the child (kill_on_drop) kills it.
        Err(_) => {
            return Err(format!(
                "`{program}` did not finish within {}s and was killed",
                config.timeout_secs
            ));
        }
    };
    if !output.status.success() {
        let status = output.status.code().map_or_else(
            || "was killed by a signal".to_owned(),
            |c| format!("exited with status {c}"),
        );
        let stderr = tail(&output.stderr);
        return Err(if stderr.is_empty() {
            format!("`{program}` {status}")
        } else {
            format!("`{program}` {status}: {stderr}")
        });
    }
    let stdout = String::from_utf8(output.stdout)
        .map_err(|_| format!("`{program}` wrote output that is not UTF-8"))?;
    parse_output(config.output, &stdout, page.id)
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
        | Op::UpdateProject { .. } => false,
    }
}
