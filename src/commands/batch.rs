//! `quire batch`: one preset over one input, with no server and no
//! terminal (spec 17, "Batch runs"). The input is imported into an
//! ordinary project at `DIR/NAME/project/`, each step of the preset runs
//! as its own job, the exports and `report.json` go to `DIR/NAME/`, and
//! the exit code says how it went: 0 done, 3 partial, 1 failed, 2 usage.
//!
//! Run again with the same arguments, it goes on from where it was:
//! the project keeps every acknowledged edit, and a step the report says
//! is done is not run again (`done-before`). A done run exits 0 at once;
//! an input whose bytes changed since is refused unless `--restart`.
//! Progress goes to stderr, a line per step and page (on a terminal, a
//! bar a step); stdout stays empty.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::cli::BatchArgs;
use crate::config::Loaded;
use crate::error::Failure;
use quire_core::Core;
use quire_core::events::{Event, JobProgress, JobStatus};
use quire_core::export::{ExportFormat, ExportSpec};
use quire_core::import::ImageFile;
use quire_core::jobs::{Approval, PipelineSpec};
use quire_model::finding::Severity;
use quire_model::ids::SessionId;
use quire_model::op::Op;

/// What `report.json` says (spec 17, rule 19), plus the digest of the
/// input it was made from: what a later run compares.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub input: String,
    pub index: Option<usize>,
    pub preset: String,
    /// `running` while it runs, then `done`, `partial` or `failed`.
    pub status: String,
    pub exit_code: Option<u8>,
    pub steps: Vec<StepReport>,
    pub outputs: Vec<String>,
    pub skipped: Vec<Skipped>,
    pub error: Option<String>,
    pub resumed: bool,
    pub started: String,
    pub finished: Option<String>,
    pub input_digest: String,
    /// The exports asked for, as given (`po`, `cbz:jpeg:90`).
    pub exports: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepReport {
    pub step: String,
    /// `done`, `done-before` or `failed`.
    pub status: String,
    pub pages: usize,
    pub seconds: f64,
    pub warnings: usize,
    /// The pages that failed in it, `page N: why` (a partial run's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Skipped {
    pub entry: String,
    pub why: String,
}

/// What an input is, by its name: the importer it goes through and the
/// format it comes back in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Images,
    Po,
    Xliff,
    Srt,
    Vtt,
}

impl Kind {
    fn of(path: &Path) -> Option<Kind> {
        if path.is_dir() {
            return Some(Kind::Images);
        }
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "cbz" | "zip" => Kind::Images,
            "po" | "pot" => Kind::Po,
            "xlf" | "xliff" | "poxliff" | "sdlxliff" | "mqxliff" => Kind::Xliff,
            "srt" => Kind::Srt,
            "vtt" => Kind::Vtt,
            _ => return None,
        })
    }

    /// The input's own format, for a run without `--export`.
    fn own(self) -> ExportFormat {
        match self {
            Kind::Images => ExportFormat::Cbz,
            Kind::Po => ExportFormat::Po,
            Kind::Xliff => ExportFormat::Xliff,
            Kind::Srt => ExportFormat::Srt,
            Kind::Vtt => ExportFormat::Vtt,
        }
    }
}

/// The input of this task and its index in the list: the one given, or
/// line N of `--inputs` (N from `--index`, `JOB_COMPLETION_INDEX`, or
/// `SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`). Every problem is a
/// usage error naming the list and the line.
pub fn chosen(
    args: &BatchArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(PathBuf, Option<usize>), Failure> {
    let list = match (&args.input, &args.inputs) {
        (Some(input), None) => return Ok((input.clone(), None)),
        (None, Some(list)) => list,
        _ => return Err(Failure::usage("give one INPUT or --inputs LIST")),
    };
    let text = std::fs::read_to_string(list)
        .map_err(|e| Failure::usage(format!("cannot read the list {}: {e}", list.display())))?;
    let base = list.parent().unwrap_or(Path::new("."));
    let entries: Vec<(usize, PathBuf)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(n, l)| (n, base.join(l)))
        .collect();
    let mut names: HashMap<String, usize> = HashMap::new();
    for (line, path) in &entries {
        if let Some(first) = names.insert(name_of(path), *line) {
            return Err(Failure::usage(format!(
                "{}: lines {first} and {line} would both write {}/",
                list.display(),
                name_of(path)
            )));
        }
    }
    let index = match args.index {
        Some(n) => n.to_string(),
        None => match env("JOB_COMPLETION_INDEX") {
            Some(n) => n,
            None => match env("SLURM_ARRAY_TASK_ID") {
                Some(id) => {
                    let id = whole(&id, "SLURM_ARRAY_TASK_ID")?;
                    let min = match env("SLURM_ARRAY_TASK_MIN") {
                        Some(min) => whole(&min, "SLURM_ARRAY_TASK_MIN")?,
                        None => 0,
                    };
                    id.checked_sub(min)
                        .ok_or_else(|| {
                            Failure::usage("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN")
                        })?
                        .to_string()
                }
                None => {
                    return Err(Failure::usage(format!(
                        "--inputs {} needs --index N, or JOB_COMPLETION_INDEX or \
                         SLURM_ARRAY_TASK_ID in the environment",
                        list.display()
                    )));
                }
            },
        },
    };
    let n = whole(&index, "the index")?;
    match entries.get(n) {
        Some((_, path)) => Ok((path.clone(), Some(n))),
        None => Err(Failure::usage(format!(
            "index {n} is past the end of {} ({} inputs, from 0)",
            list.display(),
            entries.len()
        ))),
    }
}

fn whole(text: &str, what: &str) -> Result<usize, Failure> {
    text.trim()
        .parse()
        .map_err(|_| Failure::usage(format!("{what} `{text}` is not a whole number")))
}

/// An input's results folder name: its file name without the extension
/// (a folder's name).
fn name_of(path: &Path) -> String {
    let name = if path.is_dir() {
        path.file_name()
    } else {
        path.file_stem()
    };
    name.map_or_else(|| "input".into(), |n| n.to_string_lossy().into_owned())
}

/// Whether a progress bar is on stderr's last line, unfinished.
static BAR_OPEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A progress line on stderr (stdout stays empty), below a bar that was
/// drawn before.
fn say(line: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    if BAR_OPEN.swap(false, std::sync::atomic::Ordering::Relaxed) {
        let _ = writeln!(err);
    }
    let _ = writeln!(err, "quire batch: {line}");
}

/// A step's progress: on a terminal one bar, redrawn in place; else a
/// line a page, which a log keeps.
fn progress(step: &str, page: usize, total: usize) {
    use std::io::{IsTerminal as _, Write as _};
    let mut err = std::io::stderr().lock();
    if !err.is_terminal() {
        let _ = writeln!(err, "quire batch: {step}: page {page} of {total}");
        return;
    }
    const WIDTH: usize = 30;
    let filled = (page * WIDTH)
        .checked_div(total)
        .unwrap_or(WIDTH)
        .min(WIDTH);
    let _ = write!(
        err,
        "\r\x1b[2Kquire batch: {step} [{}{}] {page}/{total}",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled)
    );
    let _ = err.flush();
    BAR_OPEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// The input's files, as the importers take them: a folder's files in
/// name order (the importer orders them naturally), else the file; none
/// of more than `limit` bytes (`server.max_body_bytes`, what an upload
/// may be), and not more than that together.
fn read_input(path: &Path, limit: u64) -> std::io::Result<Vec<ImageFile>> {
    let mut total = 0u64;
    let mut read = |p: &Path| -> std::io::Result<ImageFile> {
        total += std::fs::metadata(p)?.len();
        if total > limit {
            return Err(std::io::Error::other(format!(
                "it is over the {limit}-byte limit (server.max_body_bytes)"
            )));
        }
        Ok(ImageFile {
            name: p
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            bytes: std::fs::read(p)?,
        })
    };
    if !path.is_dir() {
        return Ok(vec![read(path)?]);
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths.iter().map(|p| read(p)).collect()
}

/// A digest of the input: each file's name and BLAKE3, in order.
fn digest(files: &[ImageFile]) -> String {
    use quire_model::hash::BlobHash;
    let listed: String = files
        .iter()
        .map(|f| format!("{}\0{}\n", f.name, BlobHash::of(&f.bytes).to_hex()))
        .collect();
    BlobHash::of(listed.as_bytes()).to_hex()
}

/// Writes `report` to `DIR/NAME/report.json` (a temporary file, renamed).
fn save(dir: &Path, report: &Report) -> Result<(), Failure> {
    let text = serde_json::to_vec_pretty(report).map_err(|e| Failure::Runtime(e.into()))?;
    let temporary = dir.join("report.json.tmp");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, dir.join("report.json")))
        .map_err(|e| Failure::Runtime(anyhow::anyhow!("cannot write {}: {e}", dir.display())))
}

/// The steps a preset stands for: a `[pipelines.NAME]` pipeline's (the
/// built-in `chapter` among them), or one engine; `None` when it is
/// neither.
fn steps_of(core: &Core, preset: &str) -> Option<Vec<String>> {
    // The engine list carries the pipelines too (stage `pipeline`); an
    // engine's id wins over a pipeline's name, as a job's steps do.
    let engines = core.engines();
    if engines
        .iter()
        .any(|e| e.id == preset && e.stage != "pipeline")
    {
        return Some(vec![preset.to_owned()]);
    }
    core.config().pipelines.get(preset).map(|p| p.steps.clone())
}

/// Runs the batch task the arguments name; see the module doc.
pub fn batch(loaded: &Loaded, args: &BatchArgs) -> Result<(), Failure> {
    let env = |name: &str| std::env::var(name).ok();
    let (input, index) = chosen(args, &env)?;
    let specs: Vec<ExportSpec> = args
        .export
        .iter()
        .map(|e| ExportSpec::parse(e).map_err(|why| Failure::usage(format!("--export {e}: {why}"))))
        .collect::<Result<_, _>>()?;
    let (core, rt) = super::glossary::in_process(loaded)?;
    let Some(steps) = steps_of(&core, &args.preset) else {
        // The engine list names the pipelines too.
        let known: Vec<String> = core.engines().into_iter().map(|e| e.id).collect();
        return Err(Failure::usage(format!(
            "unknown preset `{}` (pipelines and engines: {})",
            args.preset,
            known.join(", ")
        )));
    };
    for (flag, tag) in [
        ("--source-language", &args.source_language),
        ("--target-language", &args.target_language),
    ] {
        if let Some(tag) = tag {
            quire_model::lang::check_tag(flag, tag).map_err(|e| Failure::usage(e.to_string()))?;
        }
    }
    let shown = input.display().to_string();
    let failed = |why: String| Failure::Runtime(anyhow::anyhow!("{shown}: {why}"));
    let name = name_of(&input);
    let dir = args.out.join(&name);
    // An input that cannot be read fails with a report saying why.
    let unread = |why: String| {
        let report = Report {
            input: shown.clone(),
            index,
            preset: args.preset.clone(),
            status: "failed".into(),
            exit_code: Some(1),
            steps: Vec::new(),
            outputs: Vec::new(),
            skipped: Vec::new(),
            error: Some(why.clone()),
            resumed: false,
            started: now(),
            finished: Some(now()),
            input_digest: String::new(),
            exports: args.export.clone(),
        };
        match std::fs::create_dir_all(&dir).map_err(|e| failed(e.to_string())) {
            Ok(()) => save(&dir, &report).err().unwrap_or_else(|| failed(why)),
            Err(e) => e,
        }
    };
    let Some(kind) = Kind::of(&input) else {
        return Err(unread(
            "not an input quire batch reads (a CBZ or ZIP of images, a folder of images, PO, \
             XLIFF, SRT or VTT)"
                .into(),
        ));
    };
    let limit = loaded.config.server.max_body_bytes.get();
    let files = read_input(&input, limit).map_err(|e| unread(format!("cannot be read: {e}")))?;
    let digest = digest(&files);
    let exports: Vec<String> = args.export.clone();
    let earlier: Option<Report> = std::fs::read(dir.join("report.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if let Some(earlier) = &earlier {
        if earlier.input_digest != digest && !args.restart {
            return Err(failed(format!(
                "it changed since the earlier run in {} (--restart starts afresh)",
                dir.display()
            )));
        }
        if earlier.input_digest == digest
            && earlier.status == "done"
            && earlier.exports == exports
            && earlier.preset == args.preset
            && !args.restart
        {
            say(&format!("{shown}: done before; nothing to do"));
            return Ok(());
        }
    }
    if args.restart && dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| failed(format!("cannot clear {}: {e}", dir.display())))?;
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| failed(format!("cannot make {}: {e}", dir.display())))?;
    let earlier = earlier.filter(|_| !args.restart);
    let mut report = Report {
        input: shown.clone(),
        index,
        preset: args.preset.clone(),
        status: "running".into(),
        exit_code: None,
        steps: Vec::new(),
        outputs: Vec::new(),
        skipped: Vec::new(),
        error: None,
        resumed: earlier.is_some(),
        started: now(),
        finished: None,
        input_digest: digest,
        exports,
    };
    // What the earlier run skipped at import stays skipped.
    if let Some(earlier) = &earlier {
        report.skipped.clone_from(&earlier.skipped);
    }
    let run = Run {
        core: &core,
        dir: &dir,
        name: &name,
        kind,
        specs,
        own_extension: (kind != Kind::Images)
            .then(|| {
                input
                    .extension()
                    .map(|e| e.to_string_lossy().to_ascii_lowercase())
            })
            .flatten(),
        earlier: earlier.as_ref(),
        args,
    };
    let outcome = rt.block_on(run.go(files, steps, &mut report));
    let _ = rt.block_on(core.close_all());
    let (status, code) = match &outcome {
        Ok(true) => ("done", 0),
        Ok(false) => ("partial", 3),
        Err(_) => ("failed", 1),
    };
    report.status = status.into();
    report.exit_code = Some(code);
    report.error = outcome.as_ref().err().cloned();
    report.finished = Some(now());
    save(&dir, &report)?;
    match outcome {
        Ok(true) => Ok(()),
        Ok(false) => Err(Failure::Partial(format!(
            "{shown}: partial: {}",
            partial_why(&report)
        ))),
        Err(why) => Err(failed(why)),
    }
}

/// What made a run partial, for its one line on stderr.
fn partial_why(report: &Report) -> String {
    let mut why: Vec<String> = report
        .skipped
        .iter()
        .map(|s| format!("{} skipped ({})", s.entry, s.why))
        .collect();
    for step in &report.steps {
        why.extend(step.failed.iter().map(|f| format!("{}: {f}", step.step)));
    }
    if why.is_empty() {
        why.push("a page failed in a step".into());
    }
    why.join("; ")
}

/// One task under way.
struct Run<'a> {
    core: &'a Core,
    dir: &'a Path,
    name: &'a str,
    kind: Kind,
    specs: Vec<ExportSpec>,
    /// A translation file's own extension (`xliff`, `pot`): its own
    /// format goes back under it.
    own_extension: Option<String>,
    earlier: Option<&'a Report>,
    args: &'a BatchArgs,
}

impl Run<'_> {
    /// Imports (or reopens), runs each step, writes the exports; whether
    /// every page went through (`false`: partial), or why it failed.
    async fn go(
        &self,
        files: Vec<ImageFile>,
        steps: Vec<String>,
        report: &mut Report,
    ) -> Result<bool, String> {
        let project = self.dir.join("project");
        let session = self.open(&project, files, report).await?;
        save(self.dir, report).map_err(|e| e.to_string())?;
        let mut whole = report.skipped.is_empty();
        for step in steps {
            let before = self.earlier.and_then(|e| {
                e.steps
                    .iter()
                    .find(|s| s.step == step && s.status != "failed")
            });
            if let Some(before) = before {
                report.steps.push(StepReport {
                    status: "done-before".into(),
                    ..before.clone()
                });
                continue;
            }
            let (done, every_page) = self.step(session, &step).await?;
            whole &= every_page;
            report.steps.push(done);
            save(self.dir, report).map_err(|e| e.to_string())?;
        }
        let specs = if self.specs.is_empty() {
            vec![ExportSpec::of(self.kind.own())]
        } else {
            self.specs.clone()
        };
        for spec in specs {
            let format = spec.format;
            let export = self
                .core
                .export(session, spec)
                .await
                .map_err(|e| format!("the {format:?} export: {e}"))?;
            let extension = match &self.own_extension {
                Some(own) if format == self.kind.own() => own.clone(),
                _ => format.extension().to_owned(),
            };
            let file = format!("{}.{extension}", self.name);
            std::fs::write(self.dir.join(&file), &export.bytes)
                .map_err(|e| format!("cannot write {file}: {e}"))?;
            report.outputs.push(file);
        }
        Ok(whole)
    }

    /// The project, opened where an earlier run left it, or made and the
    /// input imported into it.
    async fn open(
        &self,
        project: &Path,
        files: Vec<ImageFile>,
        report: &mut Report,
    ) -> Result<SessionId, String> {
        if project.join("project.toml").exists() {
            let opened = self
                .core
                .open_project(project)
                .await
                .map_err(|e| format!("cannot open {}: {e}", project.display()))?;
            return Ok(opened.id);
        }
        let made = self
            .core
            .create_project(project, self.name)
            .await
            .map_err(|e| format!("cannot make {}: {e}", project.display()))?;
        let languages = serde_json::json!({
            "type": "UpdateProject",
            "patch": {
                "sourceLanguage": self.args.source_language,
                "targetLanguage": self.args.target_language,
            }
        });
        let imported = self
            .core
            .import_files(made.id, files)
            .await
            .map_err(|e| format!("cannot be read: {e}"))?;
        report.skipped = imported
            .skipped
            .into_iter()
            .map(|s| Skipped {
                entry: s.name,
                why: s.reason,
            })
            .collect();
        for s in &report.skipped {
            say(&format!("{}: skipped: {}", s.entry, s.why));
        }
        if self.args.source_language.is_some() || self.args.target_language.is_some() {
            let op: Op = serde_json::from_value(languages).map_err(|e| e.to_string())?;
            self.core
                .apply(made.id, op)
                .await
                .map_err(|e| format!("cannot set the languages: {e}"))?;
        }
        Ok(made.id)
    }

    /// One step as its own job, waited for, and whether every page went
    /// through it (a job completed with errors: one did not); progress on
    /// stderr.
    async fn step(&self, session: SessionId, step: &str) -> Result<(StepReport, bool), String> {
        let started = Instant::now();
        let mut events = self.core.subscribe(None);
        let spec = PipelineSpec {
            steps: vec![step.to_owned()],
            ..PipelineSpec::default()
        };
        let job = self
            .core
            .start_pipeline(session, spec, Approval::Unattended)
            .await
            .map_err(|e| format!("step {step}: {e}"))?;
        say(&format!("{step}: started"));
        while let Some(envelope) = events.next().await {
            if let Some(p) = JobProgress::of(&envelope.event, job) {
                progress(step, p.page, p.total_pages);
                continue;
            }
            match &envelope.event {
                Event::JobFinished { id, .. } if *id == job => break,
                Event::Snapshot { .. }
                    if self.core.job(job).is_ok_and(|j| j.status.is_finished()) =>
                {
                    break;
                }
                _ => {}
            }
        }
        let summary = self.core.job(job).map_err(|e| e.to_string())?;
        let warnings = summary.warnings.len() + summary.warnings_omitted;
        let said = match summary.status {
            JobStatus::Completed => "completed",
            JobStatus::CompletedWithErrors => "completed with errors",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Failed => "failed",
            JobStatus::Queued | JobStatus::Running => "unfinished",
        };
        say(&format!(
            "{step}: {said} ({} pages, {warnings} warnings)",
            summary.total_pages,
        ));
        let every_page = match summary.status {
            JobStatus::Completed => true,
            JobStatus::CompletedWithErrors => false,
            _ => {
                let why = summary.error.unwrap_or_else(|| said.into());
                return Err(format!("step {step} failed: {why}"));
            }
        };
        let failed: Vec<String> = summary
            .warnings
            .iter()
            .filter(|w| w.finding.severity == Severity::Error)
            .map(|w| format!("page {}: {}", w.page_index + 1, w.finding.message))
            .collect();
        for line in &failed {
            say(&format!("{step}: {line}"));
        }
        let done = StepReport {
            step: step.to_owned(),
            status: "done".into(),
            pages: summary.total_pages,
            seconds: (started.elapsed().as_secs_f64() * 100.0).round() / 100.0,
            warnings,
            failed,
        };
        Ok((done, every_page))
    }
}
