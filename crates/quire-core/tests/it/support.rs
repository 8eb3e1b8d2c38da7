//! Helpers for tests of the core: a core over a temporary projects
//! directory (with command engines and providers when a test needs them),
//! op builders, following a job's events, and a deterministic op generator
//! shared by the crash test's child and parent. The binary's tests use
//! them too (its `tests/it/main.rs` includes this file as `core_base`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use quire_core::events::{Event, JobStatus, Subscription};
use quire_core::jobs::PipelineSpec;
use quire_core::settings::{CommandEngine, EngineInput, EngineOutput, Provider};
use quire_model::ids::JobId;

use quire_core::session::SessionSettings;
use quire_core::{Core, CoreConfig};
use quire_model::apply::apply;
use quire_model::hash::BlobHash;
use quire_model::history::{Entry, History, describe};
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{NewNode, NewPage, NodePatch, Op};
use quire_model::scene::{NodeKind, Scene, Transform};
use quire_model::workflow::{Writer, stamp};
use quire_store::Durability;
use tempfile::TempDir;

pub struct TestCore {
    pub dir: TempDir,
    pub core: Core,
}

pub fn settings(
    durability: Durability,
    snapshot_every_ops: u64,
    undo_limit: usize,
) -> SessionSettings {
    SessionSettings {
        durability,
        snapshot_every_ops,
        undo_limit,
        max_op_bytes: 32 << 20,
        history_max_bytes: 256 << 20,
    }
}

pub fn core_at(projects_dir: &Path, session: SessionSettings) -> Core {
    Core::new(CoreConfig::new(projects_dir.to_path_buf(), session, "test"))
}

impl TestCore {
    pub fn new() -> Self {
        Self::with(settings(Durability::Fsync, 1000, 500))
    }

    pub fn with(session: SessionSettings) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("quire-core-")
            .tempdir()
            .unwrap();
        let core = core_at(&dir.path().join("projects"), session);
        TestCore { dir, core }
    }

    /// A core whose `render` engine uses `render`.
    pub fn with_render(render: quire_render::RenderConfig) -> Self {
        Self::configured(|c| c.settings.set(render))
    }

    /// A core with the default settings, as `adjust` changes them.
    pub fn configured(adjust: impl FnOnce(&mut CoreConfig)) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("quire-core-")
            .tempdir()
            .unwrap();
        let mut config = CoreConfig::new(
            dir.path().join("projects"),
            settings(Durability::Fsync, 1000, 500),
            "test",
        );
        adjust(&mut config);
        TestCore {
            dir,
            core: Core::new(config),
        }
    }

    /// A new managed project, open and current.
    pub fn session(&self, name: &str) -> SessionId {
        self.core
            .blocking()
            .create_managed_project(name)
            .unwrap()
            .id
    }

    pub fn project_path(&self, id: SessionId) -> PathBuf {
        self.core.session(id).unwrap().path
    }
}

/// A project with `n` applied ops, left unclosed (as after a crash) so
/// they sit in `ops.log`: its temp dir and path.
pub async fn unclosed_project(n: usize) -> (tempfile::TempDir, PathBuf) {
    let t = TestCore::new();
    let id = t.session("Unclosed");
    for i in 0..n {
        t.core.apply(id, add_page(&format!("p{i}"))).await.unwrap();
    }
    let path = t.project_path(id);
    let TestCore { dir, core } = t;
    drop(core);
    (dir, path)
}

pub fn text_node(text: &str) -> NewNode {
    NewNode {
        id: None,
        transform: Transform {
            x: 10.0,
            y: 20.0,
            width: 100.0,
            height: 40.0,
            rotation: None,
        },
        visible: true,
        kind: NodeKind::source(Some(text.into())),
    }
}

/// A page of `width` × `height` whose one node is `blob` as its full-page
/// source image.
pub fn image_page(name: &str, blob: BlobHash, size: (u32, u32), id: Option<PageId>) -> Op {
    Op::AddPage {
        page: NewPage {
            id,
            name: name.into(),
            width: Some(size.0),
            height: Some(size.1),
            nodes: Some(vec![NewNode {
                id: None,
                transform: Transform {
                    x: 0.0,
                    y: 0.0,
                    width: f64::from(size.0),
                    height: f64::from(size.1),
                    rotation: None,
                },
                visible: true,
                kind: NodeKind::Image {
                    blob,
                    role: quire_model::scene::ImageRole::Source,
                    opacity: 1.0,
                    name: None,
                    rendered_from: None,
                },
            }]),
            document: None,
        },
        at: None,
    }
}

/// The session as a project archive (`.quire.zip`).
pub async fn archive_bytes(core: &Core, id: SessionId) -> Vec<u8> {
    core.export(
        id,
        quire_core::export::ExportSpec::of(quire_core::export::ExportFormat::Archive),
    )
    .await
    .unwrap()
    .bytes
}

pub fn add_page(name: &str) -> Op {
    Op::AddPage {
        page: NewPage {
            id: None,
            name: name.into(),
            width: Some(800),
            height: Some(1200),
            nodes: None,
            document: None,
        },
        at: None,
    }
}

pub fn translate(page: PageId, node: NodeId, text: &str) -> Op {
    Op::UpdateNode {
        page,
        id: node,
        patch: NodePatch::text(Some(Some(text.into())), None),
        based_on: None,
    }
}

/// A deterministic source of changes: the same seed gives the same actions
/// against the same scene, so a test can replay what a child process did.
pub struct Gen {
    state: u64,
}

/// One step of a generated run; each one advances the epoch by exactly one.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // short-lived test values
pub enum Action {
    Op(Op),
    Undo,
    Redo,
}

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen {
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    fn id128(&mut self) -> u128 {
        ((self.next_u64() as u128) << 64) | self.next_u64() as u128
    }

    fn page_id(&mut self) -> PageId {
        PageId(uuid::Uuid::from_u128(self.id128()))
    }

    fn node_id(&mut self) -> NodeId {
        NodeId(uuid::Uuid::from_u128(self.id128()))
    }

    /// The next action that applies to `scene` with `history`.
    pub fn action(&mut self, scene: &Scene, history: &History) -> Action {
        loop {
            let roll = self.below(100);
            if roll < 8 && history.undo_len() > 0 {
                return Action::Undo;
            }
            if roll < 12 && history.redo_len() > 0 {
                return Action::Redo;
            }
            let pages = &scene.pages;
            if pages.is_empty() || roll < 25 {
                let id = self.page_id();
                let nodes = (0..self.below(3))
                    .map(|i| NewNode {
                        id: Some(self.node_id()),
                        ..text_node(&format!("line {i}"))
                    })
                    .collect();
                return Action::Op(Op::AddPage {
                    page: NewPage {
                        id: Some(id),
                        name: format!("page {}", self.below(1000)),
                        width: Some(600),
                        height: Some(900),
                        nodes: Some(nodes),
                        document: None,
                    },
                    at: Some(self.below(pages.len() + 1)),
                });
            }
            let page = &pages[self.below(pages.len())];
            match roll {
                25..=44 => {
                    return Action::Op(Op::AddNode {
                        page: page.id,
                        node: NewNode {
                            id: Some(self.node_id()),
                            ..text_node(&format!("text {}", self.below(1000)))
                        },
                        at: Some(self.below(page.nodes.len() + 1)),
                    });
                }
                45..=74 if !page.nodes.is_empty() => {
                    let node = &page.nodes[self.below(page.nodes.len())];
                    let text = format!("translation {}", self.below(1000));
                    return Action::Op(translate(page.id, node.id, &text));
                }
                75..=84 if !page.nodes.is_empty() => {
                    let node = &page.nodes[self.below(page.nodes.len())];
                    return Action::Op(Op::RemoveNode {
                        page: page.id,
                        id: node.id,
                    });
                }
                85..=89 if pages.len() > 1 => {
                    let mut order: Vec<PageId> = pages.iter().map(|p| p.id).collect();
                    order.rotate_left(1);
                    return Action::Op(Op::ReorderPages { order });
                }
                90..=94 => {
                    return Action::Op(Op::RemovePage { id: page.id });
                }
                95..=99 => {
                    return Action::Op(renaming_batch(self.page_id()));
                }
                _ => continue,
            }
        }
    }
}

/// A batch that adds page `id` and renames it (one undo step).
fn renaming_batch(id: PageId) -> Op {
    Op::Batch {
        ops: vec![
            add_page_with(id, "batched"),
            Op::UpdatePage {
                id,
                patch: quire_model::op::PagePatch {
                    name: Some("batched and renamed".into()),
                    ..Default::default()
                },
            },
        ],
        label: Some("generated batch".into()),
    }
}

fn add_page_with(id: PageId, name: &str) -> Op {
    Op::AddPage {
        page: NewPage {
            id: Some(id),
            name: name.into(),
            width: None,
            height: None,
            nodes: None,
            document: None,
        },
        at: None,
    }
}

/// An in-memory replica: applies actions exactly as a session does.
pub struct Replica {
    pub scene: Scene,
    pub history: History,
    pub epoch: u64,
}

impl Replica {
    pub fn new(scene: Scene, undo_limit: usize) -> Self {
        Replica {
            scene,
            history: History::new(undo_limit, u64::MAX),
            epoch: 0,
        }
    }

    pub fn perform(&mut self, action: &Action) {
        let no_blobs = |_: &BlobHash| false;
        match action {
            Action::Op(op) => {
                // As a session does: a person's edit, stamped, then applied.
                let at = "2026-01-01T00:00:00Z";
                let stamped = stamp(&self.scene, op.clone(), &Writer::PERSON, at).unwrap();
                let applied = apply(&mut self.scene, stamped.op.unwrap(), &no_blobs).unwrap();
                self.history.push(Entry {
                    label: describe(&self.scene, &applied.op),
                    forward: applied.op,
                    inverse: applied.inverse,
                    group: None,
                    by: None,
                    agent: None,
                    session: None,
                    epoch: 0,
                });
            }
            Action::Undo => {
                let op = self.history.next_undo().unwrap().inverse.clone();
                apply(&mut self.scene, op, &no_blobs).unwrap();
                self.history.undone();
            }
            Action::Redo => {
                let op = self.history.next_redo().unwrap().forward.clone();
                apply(&mut self.scene, op, &no_blobs).unwrap();
                self.history.redone();
            }
        }
        self.epoch += 1;
    }
}

/// What a property test asks for, as data proptest can shrink: indices
/// pick pages and nodes (modulo how many there are) when the step runs, so
/// a shrunk sequence still means something.
#[derive(Debug, Clone)]
pub enum Intent {
    AddPage {
        nodes: usize,
        at: usize,
    },
    AddNode {
        page: usize,
        at: usize,
    },
    Translate {
        page: usize,
        node: usize,
        text: String,
    },
    RemoveNode {
        page: usize,
        node: usize,
    },
    RotatePages,
    RemovePage {
        page: usize,
    },
    /// A batch that adds a page and renames it (one undo step).
    RenamingBatch,
    Undo,
    Redo,
}

pub fn intent() -> impl proptest::strategy::Strategy<Value = Intent> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (0usize..3, any::<usize>()).prop_map(|(nodes, at)| Intent::AddPage { nodes, at }),
        4 => (any::<usize>(), any::<usize>()).prop_map(|(page, at)| Intent::AddNode { page, at }),
        6 => (any::<usize>(), any::<usize>(), "[a-zé日本 ]{0,12}")
            .prop_map(|(page, node, text)| Intent::Translate { page, node, text }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(page, node)| Intent::RemoveNode { page, node }),
        1 => Just(Intent::RotatePages),
        1 => any::<usize>().prop_map(|page| Intent::RemovePage { page }),
        1 => Just(Intent::RenamingBatch),
        2 => Just(Intent::Undo),
        1 => Just(Intent::Redo),
    ]
}

impl Intent {
    /// The action this intent is against `scene` and `history`; `None`
    /// when it has nothing to act on (no page, no node, nothing to undo).
    pub fn resolve(&self, scene: &Scene, history: &History) -> Option<Action> {
        let pages = &scene.pages;
        let page = |i: usize| (!pages.is_empty()).then(|| &pages[i % pages.len()]);
        Some(match self {
            Intent::Undo => (history.undo_len() > 0).then_some(Action::Undo)?,
            Intent::Redo => (history.redo_len() > 0).then_some(Action::Redo)?,
            // Ids are chosen here, so a replica and the core agree on them.
            Intent::AddPage { nodes, at } => Action::Op(Op::AddPage {
                page: NewPage {
                    id: Some(PageId::new()),
                    name: format!("page {}", pages.len()),
                    width: Some(600),
                    height: Some(900),
                    nodes: Some(
                        (0..*nodes)
                            .map(|i| NewNode {
                                id: Some(NodeId::new()),
                                ..text_node(&format!("line {i}"))
                            })
                            .collect(),
                    ),
                    document: None,
                },
                at: Some(at % (pages.len() + 1)),
            }),
            Intent::AddNode { page: p, at } => {
                let p = page(*p)?;
                Action::Op(Op::AddNode {
                    page: p.id,
                    node: NewNode {
                        id: Some(NodeId::new()),
                        ..text_node("added")
                    },
                    at: Some(at % (p.nodes.len() + 1)),
                })
            }
            Intent::Translate {
                page: p,
                node,
                text,
            } => {
                let p = page(*p)?;
                let n = p.nodes.get(node % p.nodes.len().max(1))?;
                Action::Op(translate(p.id, n.id, text))
            }
            Intent::RemoveNode { page: p, node } => {
                let p = page(*p)?;
                let n = p.nodes.get(node % p.nodes.len().max(1))?;
                Action::Op(Op::RemoveNode {
                    page: p.id,
                    id: n.id,
                })
            }
            Intent::RotatePages => {
                (pages.len() > 1).then_some(())?;
                let mut order: Vec<PageId> = pages.iter().map(|p| p.id).collect();
                order.rotate_left(1);
                Action::Op(Op::ReorderPages { order })
            }
            Intent::RemovePage { page: p } => Action::Op(Op::RemovePage { id: page(*p)?.id }),
            Intent::RenamingBatch => Action::Op(renaming_batch(PageId::new())),
        })
    }
}

/// A copy of a directory tree as it is on disk now (a project left open,
/// as a crash leaves it, or an old project kept as a fixture).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The page's stored image of `role` (its first), decoded.
pub async fn stored_image(
    t: &TestCore,
    id: SessionId,
    page: &quire_model::scene::Page,
    role: quire_model::scene::ImageRole,
) -> image::RgbaImage {
    let blob = page
        .nodes
        .iter()
        .find_map(|n| match &n.kind {
            NodeKind::Image { blob, role: r, .. } if *r == role => Some(*blob),
            _ => None,
        })
        .unwrap_or_else(|| panic!("page {} has no {role:?} image", page.name));
    let bytes = t.core.read_blob(id, blob).await.unwrap();
    image::load_from_memory(&bytes).unwrap().to_rgba8()
}

pub fn spec(steps: &[&str]) -> PipelineSpec {
    PipelineSpec {
        steps: steps.iter().map(|s| (*s).to_owned()).collect(),
        ..PipelineSpec::default()
    }
}

/// Events of job `id` until its JobFinished (with a deadline).
pub async fn follow(sub: &mut Subscription, id: JobId) -> Vec<Event> {
    every_event_until_finished(sub, id)
        .await
        .into_iter()
        .filter(|event| match event {
            Event::JobStarted { id: j, .. } | Event::JobFinished { id: j, .. } => *j == id,
            Event::JobProgress { job_id, .. } | Event::JobWarning { job_id, .. } => *job_id == id,
            _ => false,
        })
        .collect()
}

pub fn finished(events: &[Event]) -> (JobStatus, Option<String>) {
    match events.last() {
        Some(Event::JobFinished { status, error, .. }) => (*status, error.clone()),
        other => panic!("no JobFinished: {other:?}"),
    }
}

pub fn warnings(events: &[Event]) -> Vec<(usize, String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::JobWarning {
                page_index,
                step_id,
                finding,
                ..
            } => Some((*page_index, step_id.clone(), finding.message.clone())),
            _ => None,
        })
        .collect()
}

pub async fn text_pages(t: &TestCore, id: SessionId, n: usize) -> Vec<PageId> {
    let mut pages = Vec::new();
    for i in 0..n {
        let r = t
            .core
            .import_text(
                id,
                &format!("page {i}"),
                &format!("Hello {{0}} number {i}\n\nSecond %s"),
                Some("en"),
            )
            .await
            .unwrap();
        pages.push(PageId(r.created[0]));
    }
    pages
}

/// Command engines for [`with_engines`], by id; none may run unattended
/// unless the test says so.
#[derive(Default)]
pub struct Engines {
    pub allow_unattended: bool,
    pub commands: BTreeMap<String, CommandEngine>,
}

pub fn engines(list: &[(&str, CommandEngine)]) -> Engines {
    Engines {
        allow_unattended: false,
        commands: list
            .iter()
            .map(|(id, c)| ((*id).to_owned(), c.clone()))
            .collect(),
    }
}

pub async fn every_event_until_finished(sub: &mut Subscription, id: JobId) -> Vec<Event> {
    // A guard against a job that never ends, not a speed check: a debug
    // build's ONNX detection and recognition of a page took over 60 s
    // while another build held both cores.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
    let mut out = Vec::new();
    loop {
        let event = tokio::time::timeout_at(deadline, sub.next())
            .await
            .expect("job did not finish in time")
            .unwrap()
            .event
            .clone();
        let done = matches!(&event, Event::JobFinished { id: j, .. } if *j == id);
        out.push(event);
        if done {
            return out;
        }
    }
}

/// A command engine that runs `argv` (no approval needed unless asked).
pub fn command_engine(
    argv: &[&str],
    input: EngineInput,
    output: EngineOutput,
    timeout_secs: u64,
) -> CommandEngine {
    CommandEngine {
        stage: "test".into(),
        description: String::new(),
        command: argv.iter().map(|s| (*s).to_owned()).collect(),
        input,
        output,
        timeout_secs,
        max_output_bytes: 64 << 20,
        requires_approval: false,
    }
}

/// A core with these command engines and translation providers.
pub fn with_engines(engines: Engines, providers: BTreeMap<String, Provider>) -> TestCore {
    TestCore::configured(|c| {
        c.commands = engines.commands;
        c.allow_unattended = engines.allow_unattended;
        c.providers = providers;
    })
}

/// Whether a test that needs an outside tool (`tmux`, `tesseract`, the MCP
/// Python SDK as `mcp-sdk`) may run; the binary's tests use this rule too.
/// A missing tool fails the test, so a machine where `scripts/test` could
/// not install it cannot pass green; a machine that lacks it on purpose
/// opts out by naming it in `ALLOW_MISSING_TOOLS` (comma-separated, or
/// `all`), and the test is then skipped with a printed reason.
pub fn tool_available(tool: &str, test: &str, missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    if allowed_missing(std::env::var("ALLOW_MISSING_TOOLS").ok().as_deref(), tool) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: {why} (allowed by ALLOW_MISSING_TOOLS)"
        );
        return false;
    }
    panic!(
        "{test} needs {tool}: {why}. ./scripts/test installs it; to run without it, set ALLOW_MISSING_TOOLS={tool}"
    );
}

pub fn allowed_missing(list: Option<&str>, tool: &str) -> bool {
    list.unwrap_or_default()
        .split(',')
        .map(str::trim)
        .any(|t| t == tool || t == "all")
}

/// `None` if `program` runs with `arg`, else why not.
pub fn missing_program(program: &str, arg: &str) -> Option<String> {
    match std::process::Command::new(program).arg(arg).output() {
        Ok(_) => None,
        Err(e) => Some(format!("`{program}` cannot be run ({e})")),
    }
}
