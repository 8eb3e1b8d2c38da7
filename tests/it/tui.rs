//! The TUI without a terminal: screens of every route, modal and overlay
//! (insta snapshots of TestBackend), `update` for every action, and the
//! view context agreeing with what the screen shows.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use quire::tui::app::{
    App, Attachment, AttachmentKind, Effect, Loaded, Modal, Msg, Pane, Route, ShareBar,
};
use quire::tui::backend::BackendEvent;
use quire::tui::context::{RECENT_INPUT, recent_input_left, view_state};
use quire::tui::update::update;
use quire_core::events::{Event, JobStatus};
use quire_core::export::{ExportFormat, ImageFormat};
use quire_core::import::ImportResult;
use quire_core::jobs::{Approval, PipelineSpec};
use quire_formats::comic::Skipped;
use quire_formats::units::TranslationFormat;
use quire_model::op::{KindPatch, Op};

use crate::tui_support::*;

mod command_line;
mod drafts;
mod screens;
mod state;

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

/// The effects but the page picture's load (which the first update of a
/// session showing its image node asks for).
fn without_pictures(fx: Vec<Effect>) -> Vec<Effect> {
    fx.into_iter()
        .filter(|e| !matches!(e, Effect::LoadPicture { .. }))
        .collect()
}

fn typed(app: &mut App, text: &str) -> Vec<Effect> {
    let mut fx = Vec::new();
    for c in text.chars() {
        fx.extend(update(app, key(KeyCode::Char(c)), Instant::now()));
    }
    fx
}

fn command(app: &mut App, line: &str) -> Vec<Effect> {
    update(app, key(KeyCode::Char(':')), Instant::now());
    typed(app, line);
    update(app, key(KeyCode::Enter), Instant::now())
}

// ---- screens --------------------------------------------------------------

#[test]
fn screen_start_overlay() {
    let app = App::new("http://127.0.0.1:4096".into(), true);
    insta::assert_snapshot!(at_three_sizes(&app));
}

/// A session whose nodes are Japanese, with a long source, a two-line
/// translation and a warning, the jobs pane idle.
fn cjk_app() -> App {
    use quire_model::scene::NodeKind;
    let mut app = session_app();
    let (_, snapshot) = app.desk.scene.as_mut().unwrap();
    let page = std::sync::Arc::make_mut(&mut snapshot.scene.pages[0]);
    let texts = [
        (
            "今日は本当にいい天気ですね。散歩に行きましょうか。川の近くまで歩いて、それから駅前の喫茶店でコーヒーを飲みましょう。",
            Some("Il fait vraiment beau.\nOn va se promener ?"),
        ),
        ("ありがとう", None),
        ("「待って！」", Some("« Attends ! »")),
    ];
    for (node, (text, translation)) in page.nodes.iter_mut().skip(1).zip(texts) {
        if let NodeKind::Text {
            text: t,
            translation: tr,
            ..
        } = &mut node.kind
        {
            *t = Some(text.to_owned());
            *tr = translation.map(str::to_owned);
        }
    }
    let warned = page.nodes[2].id;
    let mut qa = job(sid(1), JobStatus::CompletedWithErrors, 100.0, 1);
    qa.warnings[0].finding.node_id = Some(warned);
    app.workspace.jobs = vec![qa];
    app.desk.focus = Pane::Nodes;
    app.desk.node_selected = 1;
    app
}

#[test]
fn a_warning_jumps_to_its_node_by_key_and_by_click() {
    let mut app = session_app();
    let (_, snapshot) = app.desk.scene.as_ref().unwrap();
    let (page, node) = (
        snapshot.scene.pages[2].id,
        snapshot.scene.pages[2].nodes[3].id,
    );
    let mut qa = job(sid(1), JobStatus::CompletedWithErrors, 100.0, 2);
    qa.warnings[1].finding.page_id = Some(page);
    qa.warnings[1].finding.node_id = Some(node);
    app.workspace.jobs = vec![qa];
    // Idle: one line, which Tab (twice, past the nodes) opens.
    assert!(draw(&app).contains("Jobs pseudo-translate"));
    update(&mut app, key(KeyCode::Tab), Instant::now());
    update(&mut app, key(KeyCode::Tab), Instant::now());
    assert_eq!(app.desk.focus, Pane::Jobs);
    let screen = draw(&app);
    assert!(screen.contains("Enter shows the node"), "{screen}");
    // In the order the job found them: the second warning is the second
    // row.
    update(&mut app, key(KeyCode::Down), Instant::now());
    update(&mut app, key(KeyCode::Enter), Instant::now());
    assert_eq!(
        (
            app.desk.focus,
            app.desk.page_selected,
            app.desk.node_selected
        ),
        (Pane::Nodes, 2, 3)
    );
    assert!(
        app.status
            .as_ref()
            .unwrap()
            .text
            .contains("missing-translation")
    );
    // A click on the other warning jumps to its page (it names no node).
    update(&mut app, key(KeyCode::Tab), Instant::now());
    let screen = draw(&app);
    let row = screen
        .lines()
        .position(|l| l.contains("line 0"))
        .expect("the warning row") as u16;
    let click = Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 10,
        row,
        modifiers: KeyModifiers::NONE,
    });
    update(&mut app, click, Instant::now());
    assert_eq!(
        (
            app.desk.focus,
            app.desk.page_selected,
            app.desk.node_selected
        ),
        (Pane::Nodes, 0, 0)
    );
    // w hides the pane, and Tab then skips it.
    update(&mut app, key(KeyCode::Char('w')), Instant::now());
    assert!(!draw(&app).contains("Jobs"));
    update(&mut app, key(KeyCode::Tab), Instant::now());
    assert_eq!(app.desk.focus, Pane::Pages);
    update(&mut app, key(KeyCode::Tab), Instant::now());
    update(&mut app, key(KeyCode::Tab), Instant::now());
    assert_eq!(app.desk.focus, Pane::Pages);
}

#[test]
fn moving_by_page_number_ends_work_and_find() {
    let mut app = session_app();
    // Pages: 5, 4, 4 nodes; on page 1 node 0 is an image, odd text nodes
    // are untranslated.
    command(&mut app, "3");
    assert_eq!((app.desk.page_selected, app.desk.node_selected), (2, 0));
    command(&mut app, "9");
    assert!(app.status.as_ref().unwrap().error);
    update(&mut app, key(KeyCode::Char('g')), Instant::now());
    assert_eq!(app.desk.page_selected, 0);
    update(&mut app, key(KeyCode::End), Instant::now());
    assert_eq!(app.desk.page_selected, 2);
    update(&mut app, key(KeyCode::Home), Instant::now());
    update(&mut app, key(KeyCode::Tab), Instant::now());
    update(&mut app, key(KeyCode::Char('G')), Instant::now());
    assert_eq!(app.desk.node_selected, 4);
    // n: the next node without a translation, across pages, wrapping.
    let mut seen = Vec::new();
    for _ in 0..4 {
        update(&mut app, key(KeyCode::Char('n')), Instant::now());
        seen.push((app.desk.page_selected, app.desk.node_selected));
    }
    let needs = |app: &App, (p, n): (usize, usize)| {
        let node = &app.desk.scene.as_ref().unwrap().1.scene.pages[p].nodes[n];
        matches!(
            &node.kind,
            quire_model::scene::NodeKind::Text {
                translation: None,
                ..
            }
        )
    };
    assert!(seen.iter().all(|&place| needs(&app, place)), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] != w[1]), "{seen:?}");
    update(&mut app, key(KeyCode::Char('N')), Instant::now());
    assert_eq!((app.desk.page_selected, app.desk.node_selected), seen[2]);
    // Ctrl-f opens `find `; n/N then go to its matches; /find clears.
    update(&mut app, ctrl('f'), Instant::now());
    assert_eq!(app.command.input.as_ref().unwrap().text, "find ");
    typed(&mut app, "PAGE 3");
    update(&mut app, key(KeyCode::Enter), Instant::now());
    assert_eq!(app.desk.page_selected, 2);
    let first = app.desk.node_selected;
    update(&mut app, key(KeyCode::Char('n')), Instant::now());
    assert_eq!(app.desk.page_selected, 2);
    assert_ne!(app.desk.node_selected, first);
    command(&mut app, "find nowhere to be found");
    assert!(app.status.as_ref().unwrap().error);
    command(&mut app, "find");
    assert_eq!(app.desk.find, None);
}

#[test]
fn the_node_list_filters_by_state() {
    let mut app = session_app();
    update(&mut app, key(KeyCode::Tab), Instant::now());
    // Page 1: an image, then texts 0..4 with the even ones translated.
    command(&mut app, "filter untranslated");
    let screen = draw(&app);
    assert!(screen.contains("2 of 5 nodes untranslated"), "{screen}");
    assert!(screen.contains("Hello number 1") && screen.contains("Hello number 3"));
    assert!(!screen.contains("Hello number 0"), "{screen}");
    assert_eq!(
        app.desk.node_selected, 2,
        "the selection moved to a shown node"
    );
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert_eq!(app.desk.node_selected, 4, "moving skips the hidden");
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert_eq!(app.desk.node_selected, 4);
    // A click on the first row is the first shown node.
    let row = draw(&app)
        .lines()
        .position(|l| l.contains("Hello number 1"))
        .unwrap() as u16;
    let click = Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 40,
        row,
        modifiers: KeyModifiers::NONE,
    });
    update(&mut app, click, Instant::now());
    assert_eq!(app.desk.node_selected, 2);
    command(&mut app, "filter final");
    assert!(draw(&app).contains("passes the filter"));
    command(&mut app, "filter sparkly");
    assert!(app.status.as_ref().unwrap().error);
    assert_eq!(
        app.desk.filter,
        Some(quire::tui::navigate::Filter::Final),
        "a bad name changes nothing"
    );
    command(&mut app, "filter all");
    assert_eq!(app.desk.filter, None);
    assert!(draw(&app).contains("Hello number 0"));
}

#[test]
fn the_command_line_remembers_and_completes() {
    let mut app = session_app();
    command(&mut app, "2");
    command(&mut app, "find hello");
    update(&mut app, key(KeyCode::Char(':')), Instant::now());
    update(&mut app, key(KeyCode::Up), Instant::now());
    assert_eq!(app.command.input.as_ref().unwrap().text, "find hello");
    update(&mut app, key(KeyCode::Up), Instant::now());
    assert_eq!(app.command.input.as_ref().unwrap().text, "2");
    update(&mut app, key(KeyCode::Down), Instant::now());
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert_eq!(app.command.input.as_ref().unwrap().text, "");
    // Tab: a command, then an engine; several choices are listed.
    typed(&mut app, "ru");
    update(&mut app, key(KeyCode::Tab), Instant::now());
    assert_eq!(app.command.input.as_ref().unwrap().text, "run ");
    update(&mut app, key(KeyCode::Tab), Instant::now());
    assert!(app.command.choices.len() > 1, "{:?}", app.command.choices);
    assert!(draw(&app).contains("pseudo-translate"));
    typed(&mut app, "ps");
    update(&mut app, key(KeyCode::Tab), Instant::now());
    assert_eq!(
        app.command.input.as_ref().unwrap().text,
        "run pseudo-translate "
    );
    // A path: the runtime lists the directory, the answer completes it.
    typed(&mut app, "x");
    update(&mut app, key(KeyCode::Esc), Instant::now());
    update(&mut app, key(KeyCode::Char(':')), Instant::now());
    typed(&mut app, "attach pa");
    let fx = update(&mut app, key(KeyCode::Tab), Instant::now());
    let [Effect::ListDir { dir, line }] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(dir, "");
    let entries = vec![("pages".to_owned(), true), ("notes.txt".to_owned(), false)];
    update(
        &mut app,
        Msg::Loaded(Loaded::Listed(line.clone(), entries)),
        Instant::now(),
    );
    assert_eq!(app.command.input.as_ref().unwrap().text, "attach pages/");
}

/// The one op a command line asked for (besides the memory's matches
/// for a newly selected node).
fn one_op(fx: Vec<Effect>) -> Op {
    let fx: Vec<Effect> = fx
        .into_iter()
        .filter(|e| !matches!(e, Effect::LoadMatches { .. }))
        .collect();
    match <[Effect; 1]>::try_from(fx) {
        Ok([Effect::Apply { op, .. }]) => op,
        other => panic!("{other:?}"),
    }
}

#[test]
fn pages_and_nodes_are_managed_from_the_command_line() {
    let mut app = session_app();
    let pages: Vec<_> = app
        .desk
        .scene
        .as_ref()
        .unwrap()
        .1
        .scene
        .pages
        .iter()
        .map(|p| p.id)
        .collect();
    let Op::UpdatePage { id, patch } = one_op(command(&mut app, "page rename Cover")) else {
        panic!()
    };
    assert_eq!((id, patch.name.as_deref()), (pages[0], Some("Cover")));
    let Op::ReorderPages { order } = one_op(command(&mut app, "page move 3")) else {
        panic!()
    };
    assert_eq!(order, [pages[1], pages[2], pages[0]]);
    assert_eq!(app.desk.page_selected, 2, "the selection follows the page");
    // (No backend here: the scene is as before the move.)
    app.desk.page_selected = 0;
    assert!(
        matches!(one_op(command(&mut app, "page delete")), Op::RemovePage { id } if id == pages[0])
    );
    // A box on the page, in image pixels, with its source text.
    let Op::AddNode { page, node, .. } = one_op(command(&mut app, "box 10 20 300 80 「待って！」"))
    else {
        panic!()
    };
    assert_eq!(page, pages[0]);
    assert_eq!(
        (
            node.transform.x,
            node.transform.y,
            node.transform.width,
            node.transform.height
        ),
        (10.0, 20.0, 300.0, 80.0)
    );
    assert!(
        matches!(&node.kind, quire_model::scene::NodeKind::Text { text: Some(t), .. } if t == "「待って！」")
    );
    app.desk.node_selected = 1;
    let nodes: Vec<_> = app.desk.scene.as_ref().unwrap().1.scene.pages[0]
        .nodes
        .iter()
        .map(|n| n.id)
        .collect();
    let Op::ReorderNodes { order, .. } = one_op(command(&mut app, "node move 1")) else {
        panic!()
    };
    assert_eq!(order[0], nodes[1]);
    assert!(
        matches!(one_op(command(&mut app, "node delete")), Op::RemoveNode { id, .. } if id == nodes[0])
    );
    // Bad input: a clear error, no op.
    for bad in [
        "box 10 20 300",
        "box 10 20 0 80",
        "box -1 0 10 10",
        "box 10 20 NaN 80",
        "box 0 0 5000 10",
        "page move 9",
        "page move x",
        "page rename",
        "page frobnicate",
        "node move 0",
        "node",
        "unstage nothing.png",
    ] {
        app.status = None;
        let fx = command(&mut app, bad);
        assert!(fx.is_empty(), "{bad}: {fx:?}");
        assert!(
            app.status.as_ref().is_some_and(|s| s.error),
            "{bad}: {:?}",
            app.status
        );
    }
}

#[test]
fn staged_files_are_unstaged_and_new_refuses_a_taken_name() {
    let mut app = session_app();
    app.editing.attachments = ["p1.png", "p2.png"]
        .map(|name| Attachment {
            path: format!("/tmp/{name}").into(),
            name: name.into(),
            kind: AttachmentKind::Image,
        })
        .to_vec();
    command(&mut app, "unstage p1.png");
    assert_eq!(app.editing.attachments.len(), 1);
    command(&mut app, "unstage");
    assert!(app.editing.attachments.is_empty());
    app.workspace.projects = vec![project(5, "Archive")];
    let fx = command(&mut app, "new archive");
    assert!(fx.is_empty(), "{fx:?}");
    let status = app.status.as_ref().unwrap();
    assert!(
        status.error && status.text.contains("/open Archive"),
        "{status:?}"
    );
}

#[test]
fn the_home_selection_stays_on_its_project_when_the_list_resorts() {
    let mut app = home_app();
    app.workspace.projects = vec![project(1, "A"), project(2, "B"), project(3, "C")];
    app.workspace.home_selected = 1;
    // B was edited elsewhere: it now comes first.
    let resorted = vec![project(2, "B"), project(1, "A"), project(3, "C")];
    update(
        &mut app,
        Msg::Loaded(Loaded::Projects(Ok(resorted))),
        Instant::now(),
    );
    assert_eq!(app.workspace.home_selected, 0);
    let fx = update(&mut app, key(KeyCode::Enter), Instant::now());
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Open(t) if *t == project(2, "B").id.to_string())),
        "{fx:?}"
    );
    // A row that went away leaves the selection in range.
    update(
        &mut app,
        Msg::Loaded(Loaded::Projects(Ok(vec![project(1, "A")]))),
        Instant::now(),
    );
    assert_eq!(app.workspace.home_selected, 0);
}

#[test]
fn a_401_says_to_pass_a_token() {
    let mut app = session_app();
    app.link.attached = true;
    app.link.connected = true;
    let why = "the server answered HTTP 401 Unauthorized".to_owned();
    update(
        &mut app,
        Msg::Backend(BackendEvent::Disconnected(why)),
        Instant::now(),
    );
    let status = app.status.as_ref().unwrap();
    assert!(status.text.contains("--token"), "{status:?}");
}

#[test]
fn node_rows_are_coloured_by_state() {
    use quire_model::scene::{NodeKind, TextState};
    use ratatui::style::Color;
    let mut app = session_app();
    let (_, snapshot) = app.desk.scene.as_mut().unwrap();
    let page = std::sync::Arc::make_mut(&mut snapshot.scene.pages[0]);
    for (node, state) in page.nodes.iter_mut().skip(1).zip([
        TextState::Reviewed,
        TextState::Initial,
        TextState::Final,
    ]) {
        if let NodeKind::Text { state: s, .. } = &mut node.kind {
            *s = Some(state);
        }
    }
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
    terminal.draw(|f| quire::tui::view::view(&app, f)).unwrap();
    let buffer = terminal.backend().buffer();
    let colour_of = |needle: &str| {
        let y = (0..buffer.area.height)
            .find(|&y| {
                let row: String = (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect();
                row.contains(needle)
            })
            .expect(needle);
        let x = (0..buffer.area.width)
            .find(|&x| buffer[(x, y)].symbol() == "T")
            .unwrap();
        buffer[(x, y)].fg
    };
    assert_eq!(colour_of("Hello number 0 on page 1  "), Color::Green);
    assert_eq!(colour_of("Hello number 1 on page 1 → ·"), Color::Reset);
    assert_eq!(colour_of("Hello number 2 on page 1  "), Color::Blue);
}

#[test]
fn an_image_page_is_previewed_with_its_boxes() {
    use ratatui::style::Color;
    let mut app = session_app();
    app.desk.focus = Pane::Nodes;
    // Selecting the image node asks for its picture, once.
    let fx = update(&mut app, key(KeyCode::Char('g')), Instant::now());
    let [Effect::LoadPicture { session, blob }] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert!(draw(&app).contains("loading the picture"));
    assert!(update(&mut app, key(KeyCode::Char('g')), Instant::now()).is_empty());
    // A 400×600 picture of the 800×1200 page; node 1's box is 0,0 100×40.
    let picture = image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
        400,
        600,
        image::Rgb([250, 250, 250]),
    ));
    let (_, snapshot) = app.desk.scene.as_mut().unwrap();
    let page = std::sync::Arc::make_mut(&mut snapshot.scene.pages[0]);
    page.nodes[1].transform = quire_model::scene::Transform {
        x: 0.0,
        y: 0.0,
        width: 400.0,
        height: 600.0,
        rotation: None,
    };
    let loaded = Loaded::Picture(*session, *blob, Ok(std::sync::Arc::new(picture)));
    update(&mut app, Msg::Loaded(loaded), Instant::now());
    let preview = app.desk.preview.as_ref().unwrap();
    assert!(preview.protocol.is_some(), "{preview:?}");
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(app.width, app.height)).unwrap();
    terminal.draw(|f| quire::tui::view::view(&app, f)).unwrap();
    let buffer = terminal.backend().buffer();
    let cells: Vec<_> = buffer.content().iter().collect();
    assert!(
        cells.iter().any(|c| c.symbol() == "▀" || c.symbol() == "▄"),
        "half-blocks drawn"
    );
    // Node 1 is translated by a person: its box is drawn in cyan-blue.
    // (Half-blocks average what falls in a cell: near the colour is enough.)
    let near = |c: Color, to: (u8, u8, u8)| match c {
        Color::Rgb(r, g, b) => {
            r.abs_diff(to.0) < 40 && g.abs_diff(to.1) < 40 && b.abs_diff(to.2) < 40
        }
        _ => false,
    };
    assert!(
        cells
            .iter()
            .any(|c| near(c.fg, (0, 160, 200)) || near(c.bg, (0, 160, 200))),
        "the box is drawn"
    );
    let page_colour = Color::Rgb(250, 250, 250);
    assert!(
        cells
            .iter()
            .any(|c| c.fg == page_colour || c.bg == page_colour),
        "the page is drawn"
    );
    // A text node shows no picture; an unreadable image says why.
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert!(!draw(&app).contains('▀'));
    update(&mut app, key(KeyCode::Up), Instant::now());
    let bad = Loaded::Picture(
        *session,
        *blob,
        Err("the page image cannot be read: bad PNG".into()),
    );
    if let Some(p) = app.desk.preview.as_mut() {
        p.protocol = None;
    }
    update(&mut app, Msg::Loaded(bad), Instant::now());
    assert!(draw(&app).contains("cannot be read"));
}

#[test]
fn screen_disconnected_in_attach_mode() {
    let mut app = session_app();
    app.link.attached = true;
    app.link.backend_name = "http://127.0.0.1:4096".into();
    update(
        &mut app,
        Msg::Backend(BackendEvent::Disconnected("connection refused".into())),
        Instant::now(),
    );
    let screen = draw(&app);
    assert!(screen.contains("disconnected"));
    insta::assert_snapshot!(at_three_sizes(&app));
}

// ---- update ---------------------------------------------------------------

#[test]
fn navigation_on_home_opens_sessions_and_projects() {
    let mut app = home_app();
    app.workspace.sessions = vec![session(1, "Comic", 12, true)];
    app.workspace.projects = vec![project(1, "Archive")];
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert_eq!(app.workspace.home_selected, 1);
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert_eq!(app.workspace.home_selected, 1, "stays on the last row");
    let fx = update(&mut app, key(KeyCode::Enter), Instant::now());
    assert_eq!(fx, vec![Effect::Open(project(1, "Archive").id.to_string())]);
    update(&mut app, key(KeyCode::Char('k')), Instant::now());
    let fx = update(&mut app, key(KeyCode::Enter), Instant::now());
    assert_eq!(app.route, Route::Session(sid(1)));
    assert_eq!(fx, vec![Effect::LoadScene(sid(1))]);
    // Esc goes home.
    update(&mut app, key(KeyCode::Esc), Instant::now());
    assert_eq!(app.route, Route::Home);
}

#[test]
fn session_keys_move_switch_panes_undo_and_redo() {
    let mut app = session_app();
    update(&mut app, key(KeyCode::Char('j')), Instant::now());
    assert_eq!(app.desk.page_selected, 1);
    update(&mut app, key(KeyCode::Tab), Instant::now());
    assert_eq!(app.desk.focus, Pane::Nodes);
    update(&mut app, key(KeyCode::Down), Instant::now());
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert_eq!(app.desk.node_selected, 2);
    update(&mut app, key(KeyCode::Tab), Instant::now());
    update(&mut app, key(KeyCode::Up), Instant::now());
    assert_eq!(
        (app.desk.page_selected, app.desk.node_selected),
        (0, 0),
        "changing page resets the node"
    );
    assert_eq!(
        update(&mut app, key(KeyCode::Char('u')), Instant::now()),
        vec![Effect::Undo(sid(1))]
    );
    assert_eq!(
        update(&mut app, ctrl('r'), Instant::now()),
        vec![Effect::Redo(sid(1))]
    );
}

#[test]
fn mouse_clicks_select_and_the_wheel_scrolls() {
    let mut app = session_app();
    // The nodes list starts right of the pages pane, below the title.
    let click = |col, row| {
        Msg::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: col,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    update(&mut app, click(3, 3), Instant::now());
    assert_eq!((app.desk.focus, app.desk.page_selected), (Pane::Pages, 1));
    update(&mut app, click(40, 4), Instant::now());
    assert_eq!((app.desk.focus, app.desk.node_selected), (Pane::Nodes, 2));
    let wheel = Msg::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: 40,
        row: 4,
        modifiers: KeyModifiers::NONE,
    });
    update(&mut app, wheel, Instant::now());
    assert_eq!(app.desk.node_selected, 0);
}

/// Ctrl-a, Ctrl-k: the editor's start of line, then delete to its end.
fn clear_draft(app: &mut App) {
    update(app, ctrl('a'), Instant::now());
    update(app, ctrl('k'), Instant::now());
}

fn alt_enter() -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT))
}

/// The translation of the selected node as the shown scene has it.
fn shown_translation(app: &App) -> Option<String> {
    let (_, snapshot) = app.desk.scene.as_ref()?;
    let node = &snapshot.scene.pages[app.desk.page_selected].nodes[app.desk.node_selected];
    match &node.kind {
        quire_model::scene::NodeKind::Text { translation, .. } => translation.clone(),
        _ => None,
    }
}

/// Runs `:attach PATH` and carries out the file check it asks for.
fn attach(app: &mut App, path: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for effect in command(app, &format!("attach {path}")) {
        let Effect::Locate { path, kind } = effect else {
            panic!("unexpected effect {effect:?}");
        };
        let located = runtime.block_on(quire::tui::run::locate(&path, kind));
        update(app, Msg::Loaded(Loaded::Located(located)), Instant::now());
    }
}

#[test]
fn attachments_are_staged_shown_and_imported() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page1.txt");
    std::fs::write(&page, "Hello").unwrap();
    let odd = dir.path().join("notes.pdf");
    std::fs::write(&odd, "%PDF").unwrap();
    let mut app = session_app();
    attach(&mut app, &page.display().to_string());
    assert_eq!(app.editing.attachments.len(), 1);
    assert!(view_state(&app).attachments);
    assert!(draw(&app).contains("page1.txt"));
    attach(&mut app, &page.display().to_string());
    assert_eq!(app.editing.attachments.len(), 1, "a file is staged once");
    assert!(app.status.as_ref().unwrap().text.contains("already staged"));
    attach(&mut app, &odd.display().to_string());
    assert_eq!(
        app.editing.attachments.len(),
        1,
        "unsupported kinds are refused"
    );
    attach(&mut app, "/nonexistent/file.png");
    assert!(app.status.as_ref().unwrap().text.contains("no such file"));
    let fx = command(&mut app, "import");
    assert!(matches!(fx.as_slice(), [Effect::Import { files, .. }] if files.len() == 1));
    let imported = |skipped: Vec<Skipped>| ImportResult {
        epoch: 1,
        created: Vec::new(),
        skipped,
    };
    update(
        &mut app,
        Msg::Loaded(Loaded::Imported(Ok((1, imported(Vec::new()))))),
        Instant::now(),
    );
    assert!(app.editing.attachments.is_empty());
    assert!(!view_state(&app).attachments);
    assert!(!draw(&app).contains("staged:"));
    // A comic archive's broken page is named where the person looks.
    update(
        &mut app,
        Msg::Loaded(Loaded::Imported(Ok((
            1,
            imported(vec![Skipped {
                name: "vol1.cbz/p07.jpg".into(),
                reason: "truncated JPEG: the file ends before the image does".into(),
            }]),
        )))),
        Instant::now(),
    );
    let status = app.status.as_ref().unwrap();
    assert!(status.error, "a skipped page is not good news");
    assert!(
        status.text.contains("vol1.cbz/p07.jpg (truncated JPEG"),
        "{}",
        status.text
    );
}
