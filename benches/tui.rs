//! TUI benchmark: one frame of a 1,000 pages × 50 nodes session drawn into
//! ratatui's TestBackend (target < 2 ms, spec/09-quality.md).
//! Run: `cargo bench --bench tui`.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use quire::tui::app::{App, Pane, Route};
use quire_core::events::SessionSummary;
use quire_core::session::SceneSnapshot;
use quire_model::ids::{NodeId, PageId, ProjectId, SessionId};
use quire_model::scene::{Node, NodeKind, Page, Scene, Transform};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn big_app() -> App {
    let mut scene = Scene::new("Big", "2026-01-01T00:00:00Z");
    for p in 0..1000 {
        let nodes = (0..50)
            .map(|n| Node {
                id: NodeId::new(),
                transform: Transform::default(),
                visible: true,
                kind: NodeKind::Text {
                    text: Some(format!(
                        "Line {n} of page {p}: the quick brown fox jumps over the lazy dog"
                    )),
                    translation: Some(format!(
                        "Ligne {n} de la page {p} : le renard brun saute par-dessus le chien"
                    )),
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
            })
            .collect();
        scene.pages.push(Arc::new(Page {
            id: PageId::new(),
            name: format!("page {p:04}"),
            width: Some(1200),
            height: Some(1800),
            nodes,
            document: None,
        }));
    }
    let id = SessionId::new();
    let mut app = App::new("this workspace".into(), false);
    app.start_overlay = None;
    app.link.loaded = true;
    app.link.connected = true;
    app.workspace.sessions = vec![SessionSummary {
        id,
        project_id: ProjectId::new(),
        name: "Big".into(),
        path: "/data/big".into(),
        epoch: 11_000,
        busy: false,
        current: true,
        opened_at: "2026-12-01T09:00:00.000Z".into(),
    }];
    app.route = Route::Session(id);
    app.desk.scene = Some((
        id,
        SceneSnapshot {
            epoch: 11_000,
            scene,
        },
    ));
    app.desk.page_selected = 500;
    app.desk.node_selected = 25;
    app.desk.focus = Pane::Nodes;
    app.width = 160;
    app.height = 48;
    app
}

fn render(c: &mut Criterion) {
    let app = big_app();
    let mut terminal = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    c.bench_function("tui frame, 1000 pages x 50 nodes, 160x48", |b| {
        b.iter(|| {
            terminal.draw(|f| quire::tui::view::view(&app, f)).unwrap();
        })
    });
}

criterion_group!(benches, render);
criterion_main!(benches);
