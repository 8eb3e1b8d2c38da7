//! The TUI's loop: take one message (terminal input, backend event, effect
//! result, share request), `update`, carry out the effects on the backend
//! in the background, and redraw at most ~60 times a second. A share
//! request is turned into messages by [`Share::handle`], which only reads
//! the state; `update` applies them like any other.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use tokio::sync::mpsc;

use super::app::{App, Attachment, AttachmentKind, Effect, Loaded, Msg};
use super::backend::{Backend, BackendError, BackendEvent};
use super::clock::Clock;
use super::share::{Share, ShareRequest};
use super::update::update;
use super::view::view;
use quire_core::export::ExportSpec;
use quire_core::import::{ImageFile, ImportResult};
use quire_model::ids::SessionId;

/// One frame per 16 ms at most.
const FRAME: Duration = Duration::from_millis(16);

pub struct Runner<B: ratatui::backend::Backend> {
    pub app: App,
    pub terminal: Terminal<B>,
    backend: Arc<dyn Backend>,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
    events: mpsc::UnboundedReceiver<BackendEvent>,
    share: Option<Share>,
    /// "Now" for `update` and sharing.
    clock: Clock,
    /// Keeps a replaced event channel open (so it is never ready).
    _events_keepalive: Option<mpsc::UnboundedSender<BackendEvent>>,
    last_draw: Option<Instant>,
    dirty: bool,
    /// Effects carried out whose result has not been applied yet.
    in_flight: usize,
    /// Where drafts are kept while typed; none: not kept.
    drafts: Option<super::drafts::Store>,
}

impl<B: ratatui::backend::Backend> Runner<B> {
    pub fn new(terminal: Terminal<B>, backend: Arc<dyn Backend>, mut app: App) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let events = backend.events();
        let clock = Clock::default();
        if let Ok(size) = terminal.size() {
            update(&mut app, Msg::Resize(size.width, size.height), clock.now());
        }
        Runner {
            app,
            terminal,
            backend,
            tx,
            rx,
            events,
            share: None,
            clock,
            _events_keepalive: None,
            last_draw: None,
            dirty: true,
            in_flight: 0,
            drafts: None,
        }
    }

    /// Keeps drafts on disk in `store` while they are typed.
    pub fn with_drafts(mut self, store: super::drafts::Store) -> Self {
        self.drafts = Some(store);
        self
    }

    /// Shares this TUI (`--tui-mcp`): the sharing bar shows from the start.
    pub fn with_share(mut self, share: Share) -> Self {
        let bar = Msg::Share(super::app::ShareEvent::Bar(share.bar()));
        self.clock = share.clock();
        self.share = Some(share);
        self.apply(bar);
        self
    }

    /// The loop's clock (a test moves it forward instead of sleeping).
    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// Where terminal input (or a test) sends messages.
    pub fn sender(&self) -> mpsc::UnboundedSender<Msg> {
        self.tx.clone()
    }

    /// No effect is running and no message waits: the state is settled
    /// until something new happens (tests wait for this).
    pub fn idle(&self) -> bool {
        self.in_flight == 0 && self.rx.is_empty()
    }

    /// Applies one message now (tests drive the TUI this way).
    pub fn apply(&mut self, msg: Msg) {
        let fx = update(&mut self.app, msg, self.clock.now());
        self.after(fx);
    }

    fn after(&mut self, fx: Vec<Effect>) {
        for effect in fx {
            self.execute(effect);
        }
        if let Some(share) = self.share.as_mut() {
            share.after_update(&self.app, self.clock.now());
        }
        self.dirty = true;
    }

    /// Waits for the next message and applies it; false once quitting.
    pub async fn step(&mut self) -> bool {
        if self.app.quit {
            return false;
        }
        enum Next {
            Msg(Msg),
            Request(ShareRequest),
            Redraw,
            Idle,
            EventsClosed,
        }
        let frame_due = self
            .last_draw
            .map_or(Duration::ZERO, |t| FRAME.saturating_sub(t.elapsed()));
        let dirty = self.dirty;
        let next = {
            let rx = &mut self.rx;
            let events = &mut self.events;
            let share = self.share.as_mut();
            let request = async move {
                match share {
                    Some(share) => share.requests().recv().await,
                    None => std::future::pending().await,
                }
            };
            let redraw = async move {
                if dirty {
                    tokio::time::sleep(frame_due).await;
                } else {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                biased;
                msg = rx.recv() => msg.map_or(Next::Idle, Next::Msg),
                event = events.recv() => match event {
                    Some(e) => Next::Msg(Msg::Backend(e)),
                    None => Next::EventsClosed,
                },
                Some(req) = request => Next::Request(req),
                () = redraw => Next::Redraw,
            }
        };
        match next {
            Next::Msg(msg) => {
                if matches!(msg, Msg::Loaded(_)) {
                    self.in_flight = self.in_flight.saturating_sub(1);
                }
                let fx = update(&mut self.app, msg, self.clock.now());
                self.after(fx);
            }
            Next::Request(req) => {
                let msgs = match self.share.as_mut() {
                    Some(share) => share.handle(&self.app, req, self.clock.now()),
                    None => Vec::new(),
                };
                for msg in msgs {
                    self.apply(msg);
                }
            }
            Next::Redraw => self.draw(),
            Next::Idle => {}
            Next::EventsClosed => {
                // The backend's event task ended: stop polling it.
                let (keep, rx) = mpsc::unbounded_channel();
                self.events = rx;
                self._events_keepalive = Some(keep);
            }
        }
        !self.app.quit
    }

    /// Draws now if anything changed.
    pub fn draw(&mut self) {
        if !self.dirty {
            return;
        }
        let app = &self.app;
        if let Err(e) = self.terminal.draw(|frame| view(app, frame)) {
            tracing::warn!("cannot draw: {e:?}");
        }
        self.dirty = false;
        self.last_draw = Some(Instant::now());
    }

    /// Runs until the person quits.
    pub async fn run(&mut self) {
        while self.step().await {}
        self.draw();
    }

    /// Steps until `done(app)` holds or `deadline` passes; true if it held.
    pub async fn run_until(
        &mut self,
        deadline: Duration,
        mut done: impl FnMut(&App) -> bool,
    ) -> bool {
        let end = tokio::time::Instant::now() + deadline;
        while !done(&self.app) {
            match tokio::time::timeout_at(end, self.step()).await {
                Ok(true) => {}
                Ok(false) | Err(_) => return done(&self.app),
            }
        }
        self.draw();
        true
    }

    fn execute(&mut self, effect: Effect) {
        if effect == Effect::Revoke {
            // Ends sharing now; `update` hears of it as the next message.
            if let Some(msg) = self.share.as_mut().and_then(Share::revoke) {
                let _ = self.tx.send(msg);
            }
            return;
        }
        match effect {
            Effect::KeepDraft {
                seq,
                project,
                node,
                draft,
            } => {
                let Some(store) = self.drafts.clone() else {
                    return;
                };
                tokio::task::spawn_blocking(move || {
                    if let Err(e) = store.put(seq, project, node, draft) {
                        tracing::warn!("cannot keep the draft: {e}");
                    }
                });
                return;
            }
            Effect::LoadDrafts(project) => {
                let Some(store) = self.drafts.clone() else {
                    return;
                };
                self.in_flight += 1;
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let kept = store.load(project);
                    let _ = tx.send(Msg::Loaded(Loaded::Drafts(project, kept)));
                });
                return;
            }
            _ => {}
        }
        self.in_flight += 1;
        let backend = self.backend.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let loaded = carry_out(backend.as_ref(), effect).await;
            if let Some(loaded) = loaded {
                let _ = tx.send(Msg::Loaded(loaded));
            }
        });
    }
}

async fn carry_out(backend: &dyn Backend, effect: Effect) -> Option<Loaded> {
    Some(match effect {
        // The time asked is taken before the answer is awaited.
        Effect::LoadSessions => Loaded::Sessions(Instant::now(), backend.sessions().await),
        Effect::LoadProjects => Loaded::Projects(backend.projects().await),
        Effect::LoadEngines => Loaded::Engines(backend.engines().await),
        Effect::LoadJobs => Loaded::Jobs(backend.jobs().await),
        Effect::LoadScene(id) => Loaded::Scene(id, backend.scene(id).await),
        Effect::LoadMatches { session, node } => {
            Loaded::Matches(node, backend.matches(session, node).await)
        }
        Effect::Suggest {
            session,
            node,
            action,
            what,
        } => Loaded::Done(backend.suggest(session, node, action).await.map(|()| what)),
        Effect::History { session, query } => {
            Loaded::History(backend.history(session, query).await)
        }
        Effect::Concordance { session, query } => {
            let found = backend.concordance(session, query.clone()).await;
            Loaded::Concordance(query, found)
        }
        Effect::Apply { session, op, what } => {
            Loaded::Done(backend.apply(session, op).await.map(|_| what))
        }
        Effect::Save { draft, op } => {
            let session = draft.session;
            Loaded::Saved(draft, backend.apply(session, op).await.map(|r| r.epoch))
        }
        Effect::Undo(id) => Loaded::Done(backend.undo(id).await.map(|e| match e {
            Some(step) => format!("undone: {}{}", step.label, whose(&step)),
            None => "nothing to undo".to_owned(),
        })),
        Effect::Redo(id) => Loaded::Done(backend.redo(id).await.map(|e| match e {
            Some(step) => format!("redone: {}{}", step.label, whose(&step)),
            None => "nothing to redo".to_owned(),
        })),
        Effect::Create(name, languages) => {
            Loaded::Opened(backend.create_project(name, languages).await)
        }
        Effect::CreateFrom {
            name,
            languages,
            path,
        } => Loaded::Opened(match read(&path).await {
            Ok(bytes) => {
                let file = ImageFile {
                    name: path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    bytes,
                };
                backend.create_project_from(name, languages, file).await
            }
            Err(e) => Err(e),
        }),
        Effect::Open(target) => Loaded::Opened(backend.open_project(target).await),
        Effect::Reopen(project) => {
            let opened = backend.open_project(project.to_string()).await;
            Loaded::Reopened(project, Instant::now(), opened)
        }
        Effect::Close(id) => Loaded::Done(
            backend
                .close_session(id)
                .await
                .map(|()| "session saved and closed".to_owned()),
        ),
        Effect::Run {
            session,
            spec,
            approval,
        } => {
            let steps = spec.steps.join(" → ");
            Loaded::Done(
                backend
                    .start_pipeline(session, spec, approval)
                    .await
                    .map(|_| format!("{steps}: started")),
            )
        }
        Effect::Cancel(job) => Loaded::Done(backend.cancel_job(job).await.map(|c| {
            if c {
                "cancelling after the current page"
            } else {
                "the job had already finished"
            }
            .to_owned()
        })),
        Effect::ImportTranslations {
            session,
            path,
            format,
            force,
            take,
        } => Loaded::Merged(import_translations(backend, session, path, format, force, take).await),
        Effect::ImportGlossary {
            session,
            path,
            format,
        } => Loaded::Done(import_glossary(backend, session, &path, format).await),
        Effect::ImportArchive(path) => Loaded::Opened(match read(&path).await {
            Ok(bytes) => backend.import_archive(bytes).await,
            Err(e) => Err(e),
        }),
        Effect::Import { session, files } => {
            Loaded::Imported(import(backend, session, files).await)
        }
        Effect::Export {
            session,
            spec,
            path,
            overwrite,
        } => export(backend, session, spec, path, overwrite).await,
        Effect::Locate { path, kind } => Loaded::Located(locate(&path, kind).await),
        Effect::ListDir { dir, line } => Loaded::Listed(line, list_dir(&dir).await),
        Effect::LoadPicture { session, blob } => {
            let image = match backend
                .picture(session, blob, super::preview::MAX_SIDE)
                .await
            {
                Ok(bytes) => tokio::task::spawn_blocking(move || super::preview::decode(&bytes))
                    .await
                    .unwrap_or_else(|e| Err(e.to_string())),
                Err(e) => Err(e.to_string()),
            };
            Loaded::Picture(session, blob, image)
        }
        Effect::Revoke | Effect::KeepDraft { .. } | Effect::LoadDrafts(_) => return None,
    })
}

/// `/export`: the export written to `path`; a file already there is
/// asked about first unless `overwrite`.
async fn export(
    backend: &dyn Backend,
    session: SessionId,
    spec: ExportSpec,
    path: PathBuf,
    overwrite: bool,
) -> Loaded {
    match backend.export(session, spec.clone()).await {
        Ok(exported) => match write_file(&path, &exported.bytes, overwrite).await {
            Ok(()) => Loaded::Done(Ok(format!(
                "wrote {} ({} bytes){}",
                path.display(),
                exported.bytes.len(),
                exported
                    .untranslated
                    .map(|u| format!(" · {u}"))
                    .unwrap_or_default()
            ))),
            Err(e) if e.code == "conflict" => Loaded::Exists {
                path: path.clone(),
                retry: Box::new(Effect::Export {
                    session,
                    spec,
                    path,
                    overwrite: true,
                }),
            },
            Err(e) => Loaded::Done(Err(e)),
        },
        Err(e) => Loaded::Done(Err(e)),
    }
}

/// The entries of a directory as typed (`~/` expanded, empty = the
/// working directory): names and whether each is a directory; at most
/// 1,000, none when it cannot be read.
async fn list_dir(typed: &str) -> Vec<(String, bool)> {
    let dir = if typed.is_empty() {
        ".".to_owned()
    } else {
        super::commands::expand(typed)
    };
    let mut entries = Vec::new();
    let Ok(mut read) = tokio::fs::read_dir(&dir).await else {
        return entries;
    };
    while let Ok(Some(entry)) = read.next_entry().await {
        if entries.len() == 1_000 {
            break;
        }
        // Links to directories count as directories.
        let is_dir = tokio::fs::metadata(entry.path())
            .await
            .is_ok_and(|m| m.is_dir());
        entries.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
    }
    entries.sort();
    entries
}

/// `/attach`: the typed path made absolute (`~/` expanded), if it names a
/// file.
pub async fn locate(typed: &str, kind: AttachmentKind) -> Result<Attachment, BackendError> {
    let path = std::path::PathBuf::from(super::commands::expand(typed));
    let path = std::path::absolute(&path).unwrap_or(path);
    let is_file = tokio::fs::metadata(&path).await.is_ok_and(|m| m.is_file());
    if !is_file {
        return Err(BackendError::new(
            "not_found",
            format!("{}: no such file", path.display()),
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Attachment { path, name, kind })
}

/// Writes an export under the output rule (never into a project).
async fn write_file(path: &Path, bytes: &[u8], overwrite: bool) -> Result<(), BackendError> {
    quire_core::paths::write_output_file(path.to_path_buf(), bytes.to_vec(), overwrite)
        .await
        .map_err(BackendError::from)
}

/// A file's bytes, or a clear error.
async fn read(path: &Path) -> Result<Vec<u8>, BackendError> {
    tokio::fs::read(path)
        .await
        .map_err(|e| BackendError::new("io", format!("cannot read {}: {e}", path.display())))
}

/// Merges an XLIFF or PO file; says what it did in one line.
async fn import_translations(
    backend: &dyn Backend,
    session: quire_model::ids::SessionId,
    path: PathBuf,
    format: quire_formats::units::TranslationFormat,
    force: bool,
    take: Vec<String>,
) -> Result<(String, crate::tui::app::Merge), BackendError> {
    let shown = path.display().to_string();
    let content = quire_formats::units::decode(format, &shown, &read(&path).await?)
        .map_err(|e| BackendError::new("invalid_input", e.to_string()))?;
    let import = quire_core::translations::TranslationImport {
        format,
        content,
        force,
        take,
    };
    let r = backend.import_translations(session, import).await?;
    let mut line = format!(
        "{}: {} updated, {} unchanged",
        format.name(),
        r.updated,
        r.unchanged
    );
    if r.kept > 0 {
        line.push_str(&format!(
            ", {} kept (changed here since the export)",
            r.kept
        ));
    }
    if !r.conflicts.is_empty() {
        let held = r.conflicts.iter().filter(|c| !c.applied).count();
        line.push_str(&format!(", {} conflicts", r.conflicts.len()));
        if held > 0 {
            line.push_str(&format!(" ({held} as here)"));
        }
    }
    if !r.unmatched.is_empty() {
        line.push_str(&format!(
            ", {} units not in this project",
            r.unmatched.len()
        ));
    }
    let rows = r
        .conflicts
        .into_iter()
        .map(|c| {
            let side = c.applied.then_some(crate::tui::app::Side::Theirs);
            (c, side)
        })
        .collect();
    let merge = crate::tui::app::Merge {
        session,
        path,
        format,
        rows,
    };
    Ok((line, merge))
}

/// Adds a glossary file's terms; says what it did in one line.
async fn import_glossary(
    backend: &dyn Backend,
    session: quire_model::ids::SessionId,
    path: &Path,
    format: quire_formats::glossary::GlossaryFormat,
) -> Result<String, BackendError> {
    let content = String::from_utf8(read(path).await?).map_err(|_| {
        BackendError::new("invalid_input", format!("{} is not UTF-8", path.display()))
    })?;
    let import = quire_core::glossary::GlossaryImport { format, content };
    let r = backend.import_glossary(session, import).await?;
    Ok(format!(
        "glossary: {} added, {} updated, {} unchanged",
        r.added, r.updated, r.unchanged
    ))
}

/// The staged files as pages, in one history entry.
async fn import(
    backend: &dyn Backend,
    session: quire_model::ids::SessionId,
    files: Vec<super::app::Attachment>,
) -> Result<(usize, ImportResult), BackendError> {
    let mut read = Vec::with_capacity(files.len());
    for file in &files {
        let bytes = tokio::fs::read(&file.path).await.map_err(|e| {
            BackendError::new("io", format!("cannot read {}: {e}", file.path.display()))
        })?;
        read.push(ImageFile {
            name: file.name.clone(),
            bytes,
        });
    }
    let result = backend.import_files(session, read).await?;
    Ok((files.len(), result))
}

/// ` (ana's)`: whose change an undo or redo stepped over, when the server
/// has users.
fn whose(step: &quire_core::StepResult) -> String {
    step.by
        .as_deref()
        .map(|user| format!(" ({user}'s)"))
        .unwrap_or_default()
}
