//! Fixtures for TUI tests: app states with fixed ids and text, drawn into
//! ratatui's TestBackend.

use std::path::PathBuf;
use std::sync::Arc;

use quire::tui::app::{App, Route};
use quire_core::ProjectEntry;
use quire_core::engines::EngineInfo;
use quire_core::events::{JobProgress, JobStatus, JobSummary, JobWarningInfo, SessionSummary};
use quire_core::session::SceneSnapshot;
use quire_model::hash::BlobHash;
use quire_model::ids::{JobId, NodeId, PageId, ProjectId, SessionId};
use quire_model::scene::{ImageRole, Node, NodeKind, Page, Scene, Transform};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use uuid::Uuid;

pub fn sid(n: u128) -> SessionId {
    SessionId(Uuid::from_u128(n))
}

pub fn session(n: u128, name: &str, epoch: u64, current: bool) -> SessionSummary {
    SessionSummary {
        id: sid(n),
        project_id: ProjectId(Uuid::from_u128(1000 + n)),
        name: name.into(),
        path: PathBuf::from(format!("/data/projects/{}", name.to_lowercase())),
        epoch,
        busy: false,
        current,
        opened_at: "2026-12-01T09:00:00.000Z".into(),
    }
}

pub fn project(n: u128, name: &str) -> ProjectEntry {
    ProjectEntry {
        id: ProjectId(Uuid::from_u128(2000 + n)),
        name: name.into(),
        path: PathBuf::from(format!("/data/projects/{}", name.to_lowercase())),
        updated_at_ms: 0,
        session_id: None,
    }
}

fn text(n: u128, source: &str, translation: Option<&str>) -> Node {
    Node {
        id: NodeId(Uuid::from_u128(5000 + n)),
        transform: Transform::default(),
        visible: true,
        kind: NodeKind::Text {
            text: Some(source.into()),
            translation: translation.map(Into::into),
            source_lang: Some("en".into()),
            style: None,
            state: None,
            origin: None,
            timing: None,
            region: None,
            found_by: None,
            source_edit: None,
            entry: None,
            suggestions: Vec::new(),
        },
    }
}

/// A scene of `pages` pages with `nodes` nodes each (the first page has an
/// image node too).
pub fn scene(pages: usize, nodes: usize) -> SceneSnapshot {
    let mut out = Scene::new("Comic", "2026-01-01T00:00:00Z");
    for p in 0..pages {
        let mut list = Vec::new();
        if p == 0 {
            list.push(Node {
                id: NodeId(Uuid::from_u128(9000)),
                transform: Transform::default(),
                visible: true,
                kind: NodeKind::Image {
                    blob: BlobHash::of(b"page one"),
                    role: ImageRole::Source,
                    opacity: 1.0,
                    name: Some("p001.png".into()),
                    rendered_from: None,
                },
            });
        }
        for n in 0..nodes {
            let translated = (n % 2 == 0).then(|| format!("Bonjour n°{n} de la page {}", p + 1));
            list.push(text(
                (p * 1000 + n) as u128,
                &format!("Hello number {n} on page {}", p + 1),
                translated.as_deref(),
            ));
        }
        out.pages.push(Arc::new(Page {
            id: PageId(Uuid::from_u128(7000 + p as u128)),
            name: format!("p{:03}", p + 1),
            width: Some(800),
            height: Some(1200),
            nodes: list,
            document: None,
        }));
    }
    SceneSnapshot {
        epoch: 12,
        scene: out,
    }
}

pub fn engines() -> Vec<EngineInfo> {
    let e = |id: &str, approval: bool, command: Option<&str>| EngineInfo {
        id: id.into(),
        stage: "translate".into(),
        description: format!("the {id} engine"),
        requires_approval: approval,
        built_in: command.is_none(),
        command: command.map(Into::into),
    };
    vec![
        e("pseudo-translate", false, None),
        e("qa", false, None),
        e("ocr", true, Some("tesseract {image} - tsv")),
    ]
}

/// A loaded, connected app on the home route.
pub fn home_app() -> App {
    let mut app = App::new("this workspace".into(), false);
    app.start_overlay = None;
    app.link.loaded = true;
    app.link.connected = true;
    app.workspace.engines = engines();
    app.width = 100;
    app.height = 30;
    app
}

/// An app showing session 1 ("Comic") with a small scene.
pub fn session_app() -> App {
    let mut app = home_app();
    app.workspace.sessions = vec![
        session(1, "Comic", 12, true),
        session(2, "Slides", 3, false),
    ];
    app.route = Route::Session(sid(1));
    app.desk.scene = Some((sid(1), scene(3, 4)));
    app
}

pub fn job(session: SessionId, status: JobStatus, percent: f64, warnings: usize) -> JobSummary {
    JobSummary {
        id: JobId(Uuid::from_u128(8000)),
        session_id: session,
        steps: vec!["pseudo-translate".into(), "qa".into()],
        total_pages: 3,
        started_by: Default::default(),
        status,
        progress: Some(JobProgress {
            step: "qa".into(),
            step_index: 1,
            total_steps: 2,
            page: 1,
            total_pages: 3,
            overall_percent: percent,
        }),
        warnings: (0..warnings)
            .map(|i| JobWarningInfo {
                page_index: i,
                total_pages: 3,
                step_id: "qa".into(),
                finding: quire_model::finding::Finding::new(
                    "missing-translation",
                    quire_model::finding::Severity::Warning,
                    format!("missing translation: \"line {i}\""),
                ),
            })
            .collect(),
        warnings_omitted: 0,
        error: None,
    }
}

/// The screen of `app` at 80×24, 100×30 and 160×45, one after the other.
pub fn at_three_sizes(app: &App) -> String {
    [(80, 24), (100, 30), (160, 45)]
        .into_iter()
        .map(|(width, height)| {
            let mut sized = app.clone();
            sized.width = width;
            sized.height = height;
            format!("── {width}×{height} ──\n{}", draw(&sized))
        })
        .collect()
}

/// The screen of `app` as text.
pub fn draw(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    terminal.draw(|f| quire::tui::view::view(app, f)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        let mut x = 0;
        while x < buffer.area.width {
            let symbol = buffer[(x, y)].symbol();
            line.push_str(symbol);
            // A wide character covers the next cell too.
            x += unicode_width::UnicodeWidthStr::width(symbol).max(1) as u16;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
