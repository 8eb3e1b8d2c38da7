//! The one interface the TUI uses for everything it reads or changes: the
//! in-process core ([`Local`]) or a headless server over HTTP and SSE
//! ([`super::remote::Remote`]). The TUI never touches the core otherwise.

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use quire_core::engines::EngineInfo;
use quire_core::events::{Event, JobSummary, SessionSummary};
use quire_core::export::ExportSpec;
use quire_core::glossary::{GlossaryImport, GlossaryReport};
use quire_core::import::{ImageFile, ImportResult};
use quire_core::jobs::{Approval, PipelineSpec};
use quire_core::journal::{HistoryPage, HistoryQuery};
use quire_core::matches::Match;
use quire_core::session::SceneSnapshot;
use quire_core::suggestions::Action;
use quire_core::translations::{ImportReport, TranslationImport};
use quire_core::{ApplyResult, Core, ProjectEntry, StepResult};
use quire_model::error::CoreError;
use quire_model::hash::BlobHash;
use quire_model::ids::{JobId, NodeId, SessionId};
use quire_model::lang::Languages;
use quire_model::op::Op;

/// Why a backend call failed, as the person will read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendError {
    pub code: String,
    pub message: String,
    /// For an edit made from a value someone changed meanwhile: what the
    /// node says now (`Some(None)`: nothing).
    pub theirs: Option<Option<String>>,
}

impl BackendError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        BackendError {
            code: code.to_owned(),
            message: message.into(),
            theirs: None,
        }
    }

    pub fn disconnected(message: impl Into<String>) -> Self {
        Self::new("disconnected", message)
    }
}

impl From<CoreError> for BackendError {
    fn from(e: CoreError) -> Self {
        BackendError {
            code: e.code().to_owned(),
            message: e.to_string(),
            theirs: match e {
                CoreError::Stale(stale) => Some(stale.current),
                _ => None,
            },
        }
    }
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Reply<'a, T> = BoxFuture<'a, Result<T, BackendError>>;

/// What the backend tells the TUI without being asked.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendEvent {
    /// An event of the workspace's event bus.
    Event(Event),
    /// The event stream is (again) up: reload everything.
    Connected,
    /// The connection is down; the backend keeps retrying.
    Disconnected(String),
}

pub trait Backend: Send + Sync {
    /// "this workspace" or the server's URL (never its token).
    fn describe(&self) -> String;
    fn sessions(&self) -> Reply<'_, Vec<SessionSummary>>;
    fn projects(&self) -> Reply<'_, Vec<ProjectEntry>>;
    fn engines(&self) -> Reply<'_, Vec<EngineInfo>>;
    fn jobs(&self) -> Reply<'_, Vec<JobSummary>>;
    fn create_project(&self, name: String, languages: Languages) -> Reply<'_, SessionSummary>;
    /// Opens a project: a path (in-process only), or a managed project by
    /// name or id.
    fn open_project(&self, target: String) -> Reply<'_, SessionSummary>;
    fn close_session(&self, id: SessionId) -> Reply<'_, ()>;
    fn scene(&self, id: SessionId) -> Reply<'_, SceneSnapshot>;
    fn apply(&self, id: SessionId, op: Op) -> Reply<'_, ApplyResult>;
    fn undo(&self, id: SessionId) -> Reply<'_, Option<StepResult>>;
    fn redo(&self, id: SessionId) -> Reply<'_, Option<StepResult>>;
    fn start_pipeline(
        &self,
        id: SessionId,
        spec: PipelineSpec,
        approval: Approval,
    ) -> Reply<'_, JobId>;
    fn cancel_job(&self, id: JobId) -> Reply<'_, bool>;
    fn import_text(&self, id: SessionId, name: String, text: String) -> Reply<'_, ApplyResult>;
    fn import_files(&self, id: SessionId, files: Vec<ImageFile>) -> Reply<'_, ImportResult>;
    /// A new project made from a file (a translator's PO or XLIFF,
    /// subtitles, pages), opened.
    fn create_project_from(
        &self,
        name: Option<String>,
        languages: Languages,
        file: ImageFile,
    ) -> Reply<'_, SessionSummary>;
    fn export(&self, id: SessionId, spec: ExportSpec) -> Reply<'_, Exported>;
    fn import_translations(
        &self,
        id: SessionId,
        import: TranslationImport,
    ) -> Reply<'_, ImportReport>;
    /// Terms from a CSV or TBX file into the glossary.
    fn import_glossary(&self, id: SessionId, import: GlossaryImport) -> Reply<'_, GlossaryReport>;
    /// A project archive, as a new project, opened.
    fn import_archive(&self, bytes: Vec<u8>) -> Reply<'_, SessionSummary>;
    /// An image blob scaled down so its long side is at most `max_side`,
    /// encoded (PNG or JPEG): a page for the preview. The core decodes it
    /// under `limits.max_image_pixels`, so the TUI never holds a full page.
    fn picture(&self, id: SessionId, hash: BlobHash, max_side: u32) -> Reply<'_, Vec<u8>>;
    /// The memory's best matches for a text node's source.
    fn matches(&self, id: SessionId, node: NodeId) -> Reply<'_, Vec<Match>>;
    /// Remembered segments holding every word of `query`.
    fn concordance(&self, id: SessionId, query: String) -> Reply<'_, Vec<Match>>;
    /// Who did what in the session's project; `query` as the HTTP route
    /// takes it (`user=ana&node=…`).
    fn history(&self, id: SessionId, query: String) -> Reply<'_, HistoryPage>;
    /// Adds, votes on, accepts or rejects a suggestion for a text node.
    fn suggest(&self, id: SessionId, node: NodeId, action: Action) -> Reply<'_, ()>;
    /// Starts delivering events; the receiver gets `Connected` first.
    fn events(&self) -> mpsc::UnboundedReceiver<BackendEvent>;
}

/// An export's bytes, and what it says of untranslated segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub bytes: Vec<u8>,
    pub untranslated: Option<String>,
}

/// How many concordance results the TUI asks for.
pub const CONCORDANCE: usize = 50;

/// The in-process core.
pub struct Local {
    core: Core,
}

impl Local {
    pub fn new(core: Core) -> Self {
        Local { core }
    }
}

impl Backend for Local {
    fn describe(&self) -> String {
        "this workspace".into()
    }

    fn sessions(&self) -> Reply<'_, Vec<SessionSummary>> {
        Box::pin(async move { Ok(self.core.sessions()) })
    }

    fn projects(&self) -> Reply<'_, Vec<ProjectEntry>> {
        Box::pin(async move { Ok(self.core.list_projects().await?) })
    }

    fn engines(&self) -> Reply<'_, Vec<EngineInfo>> {
        Box::pin(async move { Ok(self.core.engines()) })
    }

    fn jobs(&self) -> Reply<'_, Vec<JobSummary>> {
        Box::pin(async move { Ok(self.core.jobs()) })
    }

    fn create_project(&self, name: String, languages: Languages) -> Reply<'_, SessionSummary> {
        Box::pin(async move {
            Ok(self
                .core
                .create_managed_project_with(&name, languages)
                .await?)
        })
    }

    fn open_project(&self, target: String) -> Reply<'_, SessionSummary> {
        Box::pin(async move {
            let path = std::path::Path::new(&target);
            if tokio::fs::metadata(path).await.is_ok_and(|m| m.is_dir()) {
                return Ok(self.core.open_project(path).await?);
            }
            let projects = self.core.list_projects().await?;
            match ProjectEntry::find(&projects, &target) {
                Some(id) => Ok(self.core.open_managed_project(id).await?),
                None => Err(CoreError::not_found("project", &target).into()),
            }
        })
    }

    fn close_session(&self, id: SessionId) -> Reply<'_, ()> {
        Box::pin(async move { Ok(self.core.close_session(id).await?) })
    }

    fn scene(&self, id: SessionId) -> Reply<'_, SceneSnapshot> {
        Box::pin(async move { Ok(self.core.scene(id).await?) })
    }

    fn matches(&self, id: SessionId, node: NodeId) -> Reply<'_, Vec<Match>> {
        Box::pin(async move { Ok(self.core.matches(id, node).await?) })
    }

    fn concordance(&self, id: SessionId, query: String) -> Reply<'_, Vec<Match>> {
        Box::pin(async move { Ok(self.core.concordance(id, &query, CONCORDANCE).await?) })
    }

    fn history(&self, id: SessionId, query: String) -> Reply<'_, HistoryPage> {
        Box::pin(async move {
            let project = self.core.session(id)?.project_id;
            let pairs: Vec<(&str, &str)> = query
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| p.split_once('=').unwrap_or((p, "")))
                .collect();
            let query = HistoryQuery::parse(pairs)?;
            Ok(self.core.history(project, query).await?)
        })
    }

    fn apply(&self, id: SessionId, op: Op) -> Reply<'_, ApplyResult> {
        Box::pin(async move { Ok(self.core.apply(id, op).await?) })
    }

    fn suggest(&self, id: SessionId, node: NodeId, action: Action) -> Reply<'_, ()> {
        Box::pin(async move { Ok(self.core.suggest(id, node, action).await.map(|_| ())?) })
    }

    fn undo(&self, id: SessionId) -> Reply<'_, Option<StepResult>> {
        Box::pin(async move { Ok(self.core.undo(id).await?) })
    }

    fn redo(&self, id: SessionId) -> Reply<'_, Option<StepResult>> {
        Box::pin(async move { Ok(self.core.redo(id).await?) })
    }

    fn start_pipeline(
        &self,
        id: SessionId,
        spec: PipelineSpec,
        approval: Approval,
    ) -> Reply<'_, JobId> {
        Box::pin(async move { Ok(self.core.start_pipeline(id, spec, approval).await?) })
    }

    fn cancel_job(&self, id: JobId) -> Reply<'_, bool> {
        Box::pin(async move { Ok(self.core.cancel_job(id)?) })
    }

    fn import_text(&self, id: SessionId, name: String, text: String) -> Reply<'_, ApplyResult> {
        Box::pin(async move { Ok(self.core.import_text(id, &name, &text, None).await?) })
    }

    fn import_files(&self, id: SessionId, files: Vec<ImageFile>) -> Reply<'_, ImportResult> {
        Box::pin(async move { Ok(self.core.import_files(id, files).await?) })
    }

    fn create_project_from(
        &self,
        name: Option<String>,
        languages: Languages,
        file: ImageFile,
    ) -> Reply<'_, SessionSummary> {
        Box::pin(async move {
            let (session, _) = self
                .core
                .create_project_from_files(name.as_deref(), languages, vec![file])
                .await?;
            Ok(session)
        })
    }

    fn export(&self, id: SessionId, spec: ExportSpec) -> Reply<'_, Exported> {
        Box::pin(async move {
            let export = self.core.export(id, spec).await?;
            Ok(Exported {
                untranslated: export.untranslated.map(|u| u.said()),
                bytes: export.bytes,
            })
        })
    }

    fn import_translations(
        &self,
        id: SessionId,
        import: TranslationImport,
    ) -> Reply<'_, ImportReport> {
        Box::pin(async move { Ok(self.core.import_translations(id, import).await?) })
    }

    fn import_glossary(&self, id: SessionId, import: GlossaryImport) -> Reply<'_, GlossaryReport> {
        Box::pin(async move { Ok(self.core.import_glossary(id, import).await?) })
    }

    fn import_archive(&self, bytes: Vec<u8>) -> Reply<'_, SessionSummary> {
        Box::pin(async move { Ok(self.core.import_managed_archive(bytes).await?) })
    }

    fn picture(&self, id: SessionId, hash: BlobHash, max_side: u32) -> Reply<'_, Vec<u8>> {
        Box::pin(async move {
            let picture = self.core.blob_picture(id, hash, max_side).await?;
            Ok(picture.bytes.clone())
        })
    }

    fn events(&self) -> mpsc::UnboundedReceiver<BackendEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut sub = self.core.subscribe(None);
        let _ = tx.send(BackendEvent::Connected);
        tokio::spawn(async move {
            while let Some(envelope) = sub.next().await {
                if tx
                    .send(BackendEvent::Event(envelope.event.clone()))
                    .is_err()
                {
                    break;
                }
            }
        });
        rx
    }
}
