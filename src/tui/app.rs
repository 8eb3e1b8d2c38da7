//! The TUI's state, messages and effects. `update` (in `update.rs`)
//! changes the state and returns effects; `view` only draws it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent};

use super::backend::{BackendError, BackendEvent};
use quire_core::ProjectEntry;
use quire_core::engines::EngineInfo;
use quire_core::events::{JobStatus, JobSummary, JobWarningInfo, SessionSummary};
use quire_core::import::ImportResult;
use quire_core::jobs::{Approval, PipelineSpec};
use quire_core::matches::Match;
use quire_core::session::SceneSnapshot;
use quire_model::hash::BlobHash;
use quire_model::ids::{JobId, NodeId, PageId, ProjectId, SessionId};
use quire_model::lang::Languages;
use quire_model::op::Op;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Home,
    Session(SessionId),
}

/// The focused list of the session route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Pages,
    Nodes,
    /// The jobs pane and its warnings.
    Jobs,
}

/// Editing a text node's translation: a draft until saved or dropped.
#[derive(Debug, Clone)]
pub struct EditBox {
    pub session: SessionId,
    pub page: PageId,
    pub node: NodeId,
    /// The draft in a multi-line editor (word motions, its own undo).
    pub area: tui_textarea::TextArea<'static>,
    /// The translation was final and the person chose to edit it anyway.
    pub unlock: bool,
    /// The translation the draft started from (what a save says it is
    /// based on).
    pub based_on: Option<String>,
}

impl EditBox {
    pub fn new(draft: Draft) -> Self {
        let lines: Vec<String> = draft.text.split('\n').map(str::to_owned).collect();
        let mut area = tui_textarea::TextArea::new(lines);
        area.set_wrap_mode(tui_textarea::WrapMode::Word);
        area.set_cursor_line_style(ratatui::style::Style::default());
        area.move_cursor(tui_textarea::CursorMove::Bottom);
        area.move_cursor(tui_textarea::CursorMove::End);
        EditBox {
            session: draft.session,
            page: draft.page,
            node: draft.node,
            area,
            unlock: draft.unlock,
            based_on: draft.based_on,
        }
    }

    pub fn draft(&self) -> Draft {
        Draft {
            session: self.session,
            page: self.page,
            node: self.node,
            text: self.area.lines().join("\n"),
            unlock: self.unlock,
            based_on: self.based_on.clone(),
        }
    }
}

/// What an edit box holds, as text: what a save sends, and what comes back
/// into a box when the save fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub session: SessionId,
    pub page: PageId,
    pub node: NodeId,
    pub text: String,
    pub unlock: bool,
    /// The node's translation when the draft started: the core refuses the
    /// save if someone changed it since.
    pub based_on: Option<String>,
}

/// A saved translation shown before the core's scene has it, so that keys
/// typed right after the save see it (`epoch` once the save is applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSave {
    pub draft: Draft,
    pub epoch: Option<u64>,
}

/// The `:` / `/` command line: a draft until run or dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputLine {
    pub text: String,
    pub cursor: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachmentKind {
    Image,
    Text,
    /// A `.srt` or `.vtt` file: a page of timed cues.
    Subtitles,
    /// A `.cbz` or `.zip` of images: a page each.
    Comic,
}

/// A file staged by `/attach`, imported as pages by `/import`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub path: PathBuf,
    pub name: String,
    pub kind: AttachmentKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConfirmAction {
    CloseSession(SessionId),
    /// Edit the selected node's final translation (saving makes it
    /// `translated` again).
    EditFinal(SessionId),
    /// Run this export again, replacing the file that is there.
    Overwrite(Box<Effect>),
    /// Close the edit box, dropping what was typed.
    DropDraft,
    /// Carry this out (a replacement the person has seen the preview of).
    Run(Box<Effect>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Modal {
    Help,
    /// Text to read at any width, wrapped and scrolled as help is: a
    /// warning whole, the glossary, a replacement's preview, concordance.
    Reading {
        title: String,
        lines: Vec<String>,
    },
    Confirm {
        message: String,
        action: ConfirmAction,
    },
    /// Engines that run programs: the person sees each engine and its exact
    /// command line, and only the person can answer.
    Approval {
        session: SessionId,
        spec: PipelineSpec,
        engines: Vec<(String, String)>,
    },
    /// A save refused because someone changed the translation after the
    /// draft started: keep mine (save it over theirs) or use theirs.
    Conflict {
        draft: Draft,
        theirs: Option<String>,
    },
    /// The conflicts a merged translation file left, one selected: keep
    /// quire's side or take the file's, each.
    Merge {
        merge: Merge,
        at: usize,
    },
}

/// A merged translation file and its conflicts, each with what was
/// decided (`None`: as it is here, undecided).
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    pub session: SessionId,
    pub path: PathBuf,
    pub format: quire_formats::units::TranslationFormat,
    pub rows: Vec<(quire_core::translations::Conflict, Option<Side>)>,
}

/// Which side of a conflict stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Mine,
    Theirs,
}

/// The memory's matches for a node as of a scene epoch, or why there are
/// none.
pub type ShownMatches = ((NodeId, u64), Result<Vec<Match>, String>);

/// The step whose warnings mark nodes until it runs again.
pub const QA_STEP: &str = "qa";

impl Modal {
    pub fn kind(&self) -> &'static str {
        match self {
            Modal::Help => "help",
            Modal::Reading { .. } => "reading",
            Modal::Confirm { .. } => "confirm",
            Modal::Approval { .. } => "approval",
            Modal::Conflict { .. } => "conflict",
            Modal::Merge { .. } => "merge",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

/// The sharing bar (set while a TUI is shared with an MCP client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareBar {
    pub endpoint: String,
    pub used: usize,
    pub limit: usize,
}

/// Everything the TUI shows, grouped by the screen or part that uses it.
#[derive(Debug, Clone)]
pub struct App {
    pub route: Route,
    pub workspace: Workspace,
    pub link: Link,
    pub desk: Desk,
    pub editing: Editing,
    pub command: CommandLine,
    pub prefs: Prefs,
    pub modal: Option<Modal>,
    /// Shown while the workspace loads or the first connection is made.
    pub start_overlay: Option<String>,
    /// Asks to confirm quitting while a job runs.
    pub exit_overlay: bool,
    pub status: Option<Status>,
    pub last_input: Option<Instant>,
    /// Advances on every change of UI or workspace state.
    pub revision: u64,
    pub share: Option<ShareBar>,
    pub quit: bool,
    /// Terminal size, for layout and mouse hit-testing.
    pub width: u16,
    pub height: u16,
    /// How far the help modal is scrolled.
    pub help_scroll: u16,
}

/// What the backend lists, shown on the home screen and in the jobs pane.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub sessions: Vec<SessionSummary>,
    pub projects: Vec<ProjectEntry>,
    pub engines: Vec<EngineInfo>,
    pub jobs: Vec<JobSummary>,
    /// When the session list shown was asked for.
    pub sessions_asked: Option<Instant>,
    pub home_selected: usize,
}

/// The backend and the connection to it.
#[derive(Debug, Clone)]
pub struct Link {
    pub backend_name: String,
    pub attached: bool,
    pub connected: bool,
    /// The first full load after (re)connecting is done.
    pub loaded: bool,
    /// Advances whenever the backend's connection is replaced.
    pub generation: u64,
    /// Attach mode, after a disconnect: the projects that were open (to
    /// reopen if the server came back without them) and the one shown.
    pub reopen: Vec<ProjectId>,
    pub reopen_shown: Option<ProjectId>,
    /// A session to show once the first load is done (`--project`).
    pub pending_show: Option<SessionId>,
}

/// The project screen: the shown scene and what is selected, found and filtered in it.
#[derive(Debug, Clone)]
pub struct Desk {
    /// The shown session's scene, once loaded.
    pub scene: Option<(SessionId, SceneSnapshot)>,
    pub scene_loading: bool,
    /// A newer scene exists than the one being loaded.
    pub scene_stale: bool,
    pub focus: Pane,
    pub page_selected: usize,
    pub node_selected: usize,
    /// The selected warning of the jobs pane (newest first).
    pub warning_selected: usize,
    /// `w` hides the jobs pane.
    pub jobs_hidden: bool,
    /// The text of the last `/find` (Ctrl-f): `n`/`N` go to its matches.
    pub find: Option<(String, quire_core::find::FindOptions)>,
    /// `/filter STATE`: the node list shows only those nodes.
    pub filter: Option<super::navigate::Filter>,
    /// Visual mode's anchor: the node index a selection started at, on
    /// the selected page.
    pub visual: Option<usize>,
    /// The memory's matches for a text node (the selected one, or the
    /// one they are loading for), as of a scene epoch (a change of
    /// languages or a newly reviewed segment changes them).
    pub matches: Option<ShownMatches>,
    /// Text nodes whose source or translation changed since the last `qa`
    /// run finished: their marks from that run no longer hold.
    pub changed_since_qa: std::collections::HashSet<quire_model::ids::NodeId>,
    /// The selected image page's picture.
    pub preview: Option<super::preview::Preview>,
    /// The shown project's glossary as a matcher: built when a scene
    /// with a different glossary loads, not for every frame.
    pub glossary: Option<Arc<quire_core::glossary::Matcher>>,
}

/// What is being typed into a node and where it goes: the edit box, saves on their way, drafts kept on disk, staged files.
#[derive(Debug, Clone)]
pub struct Editing {
    pub edit: Option<EditBox>,
    /// Saves sent and not yet in a loaded scene.
    pub saving: Vec<PendingSave>,
    /// The shown project's drafts kept on disk (`drafts.rs`), once read.
    pub kept: Option<(quire_model::ids::ProjectId, super::drafts::Kept)>,
    /// How many draft writes were asked for: the order they must land in.
    pub draft_seq: u64,
    pub attachments: Vec<Attachment>,
}

/// The command line and what it remembers.
#[derive(Debug, Clone)]
pub struct CommandLine {
    pub input: Option<InputLine>,
    /// Command lines run, oldest first (Up/Down on the command line).
    pub history: Vec<String>,
    /// Where Up/Down are in `history` while browsing it.
    pub history_at: Option<usize>,
    /// What Tab could complete to, shown under the command line.
    pub choices: Vec<String>,
}

/// Settings read at start: the configuration's and the terminal's.
#[derive(Debug, Clone)]
pub struct Prefs {
    /// Colours (config `tui.theme`).
    pub theme: crate::config::schema::Theme,
    /// Whether `n` stops at machine translations too.
    pub next_stops_at_machine: bool,
    /// What a cue's line lengths and reading speed are measured against.
    pub subtitles: quire_core::engines::qa::SubtitleSettings,
    /// The terminal's graphics protocol, found at start (half-blocks when
    /// none, and in tests).
    pub picker: Option<ratatui_image::picker::Picker>,
}

impl App {
    pub fn new(backend_name: String, attached: bool) -> Self {
        let connecting = if attached {
            format!("Connecting to {backend_name}…")
        } else {
            "Loading the workspace…".to_owned()
        };
        App {
            route: Route::Home,
            workspace: Workspace {
                sessions: Vec::new(),
                projects: Vec::new(),
                engines: Vec::new(),
                jobs: Vec::new(),
                sessions_asked: None,
                home_selected: 0,
            },
            link: Link {
                backend_name,
                attached,
                connected: false,
                loaded: false,
                generation: 0,
                reopen: Vec::new(),
                reopen_shown: None,
                pending_show: None,
            },
            desk: Desk {
                scene: None,
                scene_loading: false,
                scene_stale: false,
                focus: Pane::Pages,
                page_selected: 0,
                node_selected: 0,
                warning_selected: 0,
                jobs_hidden: false,
                find: None,
                filter: None,
                visual: None,
                matches: None,
                changed_since_qa: std::collections::HashSet::new(),
                preview: None,
                glossary: None,
            },
            editing: Editing {
                edit: None,
                saving: Vec::new(),
                kept: None,
                draft_seq: 0,
                attachments: Vec::new(),
            },
            command: CommandLine {
                input: None,
                history: Vec::new(),
                history_at: None,
                choices: Vec::new(),
            },
            prefs: Prefs {
                theme: crate::config::schema::Theme::Auto,
                next_stops_at_machine: true,
                subtitles: quire_core::engines::qa::SubtitleSettings::default(),
                picker: None,
            },
            modal: None,
            start_overlay: Some(connecting),
            exit_overlay: false,
            status: None,
            last_input: None,
            revision: 0,
            share: None,
            quit: false,
            width: 80,
            height: 24,
            help_scroll: 0,
        }
    }

    pub fn shown_session(&self) -> Option<SessionId> {
        match self.route {
            Route::Session(id) => Some(id),
            Route::Home => None,
        }
    }

    pub fn session(&self, id: SessionId) -> Option<&SessionSummary> {
        self.workspace.sessions.iter().find(|s| s.id == id)
    }

    /// Whether a job of `id` is queued or running.
    pub fn is_busy(&self, id: SessionId) -> bool {
        self.workspace
            .jobs
            .iter()
            .any(|j| j.session_id == id && !j.status.is_finished())
            || self.session(id).is_some_and(|s| s.busy)
    }

    pub fn any_busy(&self) -> bool {
        self.workspace.jobs.iter().any(|j| !j.status.is_finished())
    }

    /// The jobs of a session, newest last.
    pub fn jobs_of(&self, id: SessionId) -> impl Iterator<Item = &JobSummary> {
        self.workspace
            .jobs
            .iter()
            .filter(move |j| j.session_id == id)
    }

    /// The warnings of a session's jobs, the newest job's first (what the
    /// jobs pane lists). The `qa` step's come from its latest run only, without the
    /// nodes changed since: a new run replaces the last one's marks, and a
    /// fixed segment loses its mark at once.
    pub fn warnings_of(&self, id: SessionId) -> Vec<&JobWarningInfo> {
        let jobs: Vec<_> = self.jobs_of(id).collect();
        let latest_qa = jobs
            .iter()
            .rposition(|j| j.steps.iter().any(|s| s == QA_STEP));
        jobs.into_iter()
            .enumerate()
            .rev()
            // A job's own in the order it found them (page, then node).
            .flat_map(|(i, j)| j.warnings.iter().map(move |w| (i, w)))
            .filter(|(i, w)| {
                w.step_id != QA_STEP
                    || (Some(*i) == latest_qa
                        && w.finding
                            .node_id
                            .is_none_or(|n| !self.desk.changed_since_qa.contains(&n)))
            })
            .map(|(_, w)| w)
            // A step's summary is shown on its job's line.
            .filter(|w| w.finding.rule != "summary")
            .collect()
    }

    /// The latest queued or running job of a session.
    pub fn live_job(&self, id: SessionId) -> Option<&JobSummary> {
        self.jobs_of(id)
            .filter(|j| matches!(j.status, JobStatus::Queued | JobStatus::Running))
            .last()
    }

    /// Home rows: open sessions, then managed projects not open.
    pub fn home_rows(&self) -> Vec<HomeRow> {
        let mut rows: Vec<HomeRow> = self
            .workspace
            .sessions
            .iter()
            .map(|s| HomeRow::Session(s.id))
            .collect();
        rows.extend(
            self.workspace
                .projects
                .iter()
                .filter(|p| {
                    p.session_id.is_none()
                        && !self.workspace.sessions.iter().any(|s| s.project_id == p.id)
                })
                .map(|p| HomeRow::Project(p.id.to_string())),
        );
        rows
    }

    /// Whether a draft (command line or edit box) holds text.
    pub fn has_draft(&self) -> bool {
        self.command
            .input
            .as_ref()
            .is_some_and(|i| !i.text.is_empty())
            || self.editing.edit.is_some()
    }

    pub fn say(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            error: false,
        });
    }

    pub fn fail(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            error: true,
        });
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HomeRow {
    Session(SessionId),
    /// A managed project that is not open, by id.
    Project(String),
}

/// Everything that can happen to the TUI.
#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize(u16, u16),
    Backend(BackendEvent),
    Loaded(Loaded),
    /// The redraw/recent-input clock.
    Tick,
    /// The OS asked the process to stop (SIGTERM, SIGHUP, SIGINT): quit at
    /// once, without asking, saving projects and restoring the terminal.
    Terminate,
    /// From TUI sharing (`tui/share`), when this TUI is shared.
    Share(ShareEvent),
}

/// What TUI sharing asks `update` to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareEvent {
    /// Sharing runs; the bar shows this. Not a change of the view an agent
    /// reasons about, so the revision stays.
    Bar(ShareBar),
    /// A navigation passed every check: show this session.
    Navigate(SessionId),
    /// Sharing ended; the endpoint is gone.
    Revoked,
}

/// Results of effects.
#[derive(Debug)]
pub enum Loaded {
    Matches(quire_model::ids::NodeId, Result<Vec<Match>, BackendError>),
    Concordance(String, Result<Vec<Match>, BackendError>),
    History(Result<quire_core::journal::HistoryPage, BackendError>),
    /// A project's drafts kept on disk.
    Drafts(quire_model::ids::ProjectId, super::drafts::Kept),
    /// The open sessions, as of the moment they were asked for (answers
    /// can overtake each other: an older list is not applied over a newer
    /// one).
    Sessions(Instant, Result<Vec<SessionSummary>, BackendError>),
    Projects(Result<Vec<ProjectEntry>, BackendError>),
    Engines(Result<Vec<EngineInfo>, BackendError>),
    Jobs(Result<Vec<JobSummary>, BackendError>),
    Scene(SessionId, Result<SceneSnapshot, BackendError>),
    /// A project was created or opened: show it.
    Opened(Result<SessionSummary, BackendError>),
    /// A project open before a server restart is open again, as of
    /// `Instant`.
    Reopened(ProjectId, Instant, Result<SessionSummary, BackendError>),
    /// Something finished: what to tell the person.
    Done(Result<String, BackendError>),
    /// A translation file was merged: what to say, and the merge (for
    /// the conflicts it names).
    Merged(Result<(String, Merge), BackendError>),
    /// A translation save: its epoch, or why not (the draft comes back).
    Saved(Draft, Result<u64, BackendError>),
    /// An import succeeded: clear the staged files.
    /// How many files came in, and what the import said.
    Imported(Result<(usize, ImportResult), BackendError>),
    /// A directory's entries (name, is a directory) for completing `line`.
    Listed(InputLine, Vec<(String, bool)>),
    /// A page image, decoded and scaled, or why not.
    Picture(
        SessionId,
        BlobHash,
        Result<std::sync::Arc<image::DynamicImage>, String>,
    ),
    /// `/attach`: the file exists (its absolute path), or why not.
    Located(Result<Attachment, BackendError>),
    /// An export found its file there already: ask, then run this.
    Exists {
        path: PathBuf,
        retry: Box<Effect>,
    },
}

/// What `update` asks the runtime to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Keep (or with `None` forget) a node's draft on disk, in `seq` order.
    KeepDraft {
        seq: u64,
        project: quire_model::ids::ProjectId,
        node: quire_model::ids::NodeId,
        draft: Option<super::drafts::KeptDraft>,
    },
    /// Read a project's kept drafts.
    LoadDrafts(quire_model::ids::ProjectId),
    LoadMatches {
        session: SessionId,
        node: quire_model::ids::NodeId,
    },
    Concordance {
        session: SessionId,
        query: String,
    },
    /// `/suggest`, `/vote`, `/accept`, `/reject` on a text node; `what`
    /// is said when it is done.
    Suggest {
        session: SessionId,
        node: quire_model::ids::NodeId,
        action: quire_core::suggestions::Action,
        what: String,
    },
    /// `/history`: the project's history with this query string.
    History {
        session: SessionId,
        query: String,
    },
    LoadSessions,
    LoadProjects,
    LoadEngines,
    LoadJobs,
    LoadScene(SessionId),
    Apply {
        session: SessionId,
        op: Op,
        what: String,
    },
    /// Save an edit box's translation.
    Save {
        draft: Draft,
        op: Op,
    },
    Undo(SessionId),
    Redo(SessionId),
    Create(String, Languages),
    /// A new project made from a file, named or after the file.
    CreateFrom {
        name: Option<String>,
        languages: Languages,
        path: PathBuf,
    },
    Open(String),
    /// Open again a project that was open before the server restarted.
    Reopen(ProjectId),
    Close(SessionId),
    Run {
        session: SessionId,
        spec: PipelineSpec,
        approval: Approval,
    },
    Cancel(JobId),
    /// `/import FILE.xlf|FILE.po [force]`: translations merged back;
    /// `take`: the conflicts whose file side to take (the merge modal).
    ImportTranslations {
        session: SessionId,
        path: PathBuf,
        format: quire_formats::units::TranslationFormat,
        force: bool,
        take: Vec<String>,
    },
    /// `/import FILE.csv|FILE.tbx`: glossary terms.
    ImportGlossary {
        session: SessionId,
        path: PathBuf,
        format: quire_formats::glossary::GlossaryFormat,
    },
    /// `/import FILE.zip`: a project archive, opened as a new project.
    ImportArchive(PathBuf),
    Import {
        session: SessionId,
        files: Vec<Attachment>,
    },
    Export {
        session: SessionId,
        spec: quire_core::export::ExportSpec,
        path: PathBuf,
        /// Replace the file if it exists (after the person said so).
        overwrite: bool,
    },
    /// Tab on a path: list `dir` (as typed; empty is the working
    /// directory) to complete `line`.
    ListDir {
        dir: String,
        line: InputLine,
    },
    /// Read and decode a page image for the preview.
    LoadPicture {
        session: SessionId,
        blob: BlobHash,
    },
    /// `/attach`: check that the file (as typed) exists, and stage it.
    Locate {
        path: String,
        kind: AttachmentKind,
    },
    /// Stop sharing the TUI (the share module acts on it).
    Revoke,
}
