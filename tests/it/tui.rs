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

#[test]
fn screen_home_welcome_for_a_newcomer() {
    let app = home_app();
    let screen = draw(&app);
    assert!(screen.contains("There are no projects yet."));
    assert!(screen.contains("/new My comic"));
    insta::assert_snapshot!(at_three_sizes(&app));
}

#[test]
fn screen_home_with_sessions_and_projects() {
    let mut app = home_app();
    app.workspace.sessions = vec![
        session(1, "Comic", 12, true),
        session(2, "Slides", 3, false),
    ];
    app.workspace.projects = vec![project(1, "Archive")];
    app.workspace.home_selected = 1;
    insta::assert_snapshot!(at_three_sizes(&app));
}

#[test]
fn screen_session_with_pages_nodes_and_detail() {
    let mut app = session_app();
    app.desk.focus = Pane::Nodes;
    app.desk.node_selected = 1;
    insta::assert_snapshot!(at_three_sizes(&app));
}

#[test]
fn screen_session_with_jobs_and_warnings() {
    let mut app = session_app();
    app.workspace.jobs = vec![job(sid(1), JobStatus::Running, 42.0, 2)];
    insta::assert_snapshot!(at_three_sizes(&app));
}

#[test]
fn screen_help_modal() {
    let mut app = session_app();
    app.height = 40;
    app.modal = Some(Modal::Help);
    insta::assert_snapshot!(at_three_sizes(&app));
}

/// At 80×24 help does not fit: it scrolls, and its end (the engines, how
/// to close it) is reachable.
#[test]
fn help_scrolls_to_its_end_at_80_by_24() {
    let mut app = session_app();
    app.width = 80;
    app.height = 24;
    update(&mut app, key(KeyCode::Char('?')), Instant::now());
    let top = draw(&app);
    assert!(top.contains("Keys"), "{top}");
    assert!(!top.contains("Esc closes this help"), "{top}");
    update(&mut app, key(KeyCode::End), Instant::now());
    let end = draw(&app);
    assert!(end.contains("Esc closes this help"), "{end}");
    assert!(end.contains("Engines"), "{end}");
    insta::assert_snapshot!(end);
    // Past the end is the end; Home is the top again.
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert_eq!(draw(&app), end);
    update(&mut app, key(KeyCode::Home), Instant::now());
    assert_eq!(draw(&app), top);
    update(&mut app, key(KeyCode::PageDown), Instant::now());
    assert_ne!(draw(&app), top);
    update(&mut app, key(KeyCode::Esc), Instant::now());
    assert_eq!(app.modal, None);
    assert_eq!(app.help_scroll, 0, "help opens at its top next time");
}

/// A merged file's conflicts: listed with both sides at 80 columns;
/// `m` keeps quire's, `t` asks for the file's side of one (the answer
/// marks it), Esc leaves the rest as here.
#[test]
fn the_merge_modal_lists_conflicts_and_resolves_each() {
    use quire::tui::app::{Merge, Side};
    use quire_core::translations::Conflict;
    let mut app = session_app();
    let scene = app.desk.scene.clone().unwrap().1.scene;
    let page = &scene.pages[0];
    let conflict = |i: usize, mine: &str, theirs: &str| Conflict {
        unit: format!("n{}", page.nodes[i].id),
        page_id: page.id,
        page: 1,
        node_id: page.nodes[i].id,
        mine: Some(mine.into()),
        theirs: Some(theirs.into()),
        message: "changed here and in the file since the export".into(),
        applied: false,
    };
    let rows = vec![
        (conflict(1, "Bonjour à tous", "Salut tout le monde"), None),
        (conflict(2, "Deux lignes\nici", "Deux lignes\nlà"), None),
    ];
    let merge = Merge {
        session: sid(1),
        path: "/tmp/review.xlf".into(),
        format: TranslationFormat::Xliff,
        rows,
    };
    let said = "XLIFF: 1 updated, 0 unchanged, 2 conflicts (2 as here)".to_owned();
    update(
        &mut app,
        Msg::Loaded(Loaded::Merged(Ok((said, merge.clone())))),
        Instant::now(),
    );
    assert!(matches!(app.modal, Some(Modal::Merge { at: 0, .. })));
    insta::assert_snapshot!(at_three_sizes(&app));

    // Keep mine on the first: no request, the cursor moves on.
    assert!(update(&mut app, key(KeyCode::Char('m')), Instant::now()).is_empty());
    let Some(Modal::Merge { merge: open, at }) = &app.modal else {
        panic!("{:?}", app.modal)
    };
    assert_eq!((open.rows[0].1, *at), (Some(Side::Mine), 1));
    // Take theirs on the second: the same file again, naming its unit.
    let fx = update(&mut app, key(KeyCode::Char('t')), Instant::now());
    assert_eq!(
        fx,
        vec![Effect::ImportTranslations {
            session: sid(1),
            path: "/tmp/review.xlf".into(),
            format: TranslationFormat::Xliff,
            force: false,
            take: vec![merge.rows[1].0.unit.clone()],
        }]
    );
    let mut answer = merge.clone();
    answer.rows[1].1 = Some(Side::Theirs);
    answer.rows[0].1 = None;
    let said = "XLIFF: 1 updated, 0 unchanged, 2 conflicts (1 as here)".to_owned();
    update(
        &mut app,
        Msg::Loaded(Loaded::Merged(Ok((said, answer)))),
        Instant::now(),
    );
    let Some(Modal::Merge { merge: open, .. }) = &app.modal else {
        panic!("{:?}", app.modal)
    };
    let sides: Vec<_> = open.rows.iter().map(|(_, s)| *s).collect();
    assert_eq!(sides, [Some(Side::Mine), Some(Side::Theirs)]);
    assert!(draw(&app).contains("the file's taken"), "{}", draw(&app));
    update(&mut app, key(KeyCode::Esc), Instant::now());
    assert_eq!(app.modal, None);
}

#[test]
fn screen_confirm_modal() {
    let mut app = session_app();
    quire::tui::update::confirm_close(&mut app, sid(1));
    insta::assert_snapshot!(at_three_sizes(&app));
}

#[test]
fn screen_approval_modal_names_engine_and_command() {
    let mut app = session_app();
    command(&mut app, "run ocr");
    let screen = draw(&app);
    assert!(screen.contains("ocr"));
    assert!(screen.contains("tesseract {image} - tsv"));
    insta::assert_snapshot!(at_three_sizes(&app));
}

#[test]
fn screen_exit_overlay() {
    let mut app = session_app();
    app.workspace.jobs = vec![job(sid(1), JobStatus::Running, 10.0, 0)];
    update(&mut app, key(KeyCode::Char('q')), Instant::now());
    insta::assert_snapshot!(at_three_sizes(&app));
}

#[test]
fn screen_edit_box_input_line_chips_and_sharing_bar() {
    let mut app = session_app();
    app.editing.attachments = vec![Attachment {
        path: "/tmp/p2.png".into(),
        name: "p2.png".into(),
        kind: AttachmentKind::Image,
    }];
    app.share = Some(ShareBar {
        endpoint: "/tmp/quire-x/endpoint.json".into(),
        used: 3,
        limit: 128,
    });
    app.desk.focus = Pane::Nodes;
    app.desk.node_selected = 1;
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    typed(&mut app, "!");
    insta::assert_snapshot!("edit_box", at_three_sizes(&app));
    update(&mut app, key(KeyCode::Esc), Instant::now());
    update(&mut app, key(KeyCode::Char(':')), Instant::now());
    typed(&mut app, "run pseudo");
    insta::assert_snapshot!("input_line", at_three_sizes(&app));
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
fn screen_session_with_cjk_text_and_idle_jobs() {
    let app = cjk_app();
    let screen = draw(&app);
    assert!(
        screen.contains("On va se promener ?"),
        "the translation shows:\n{screen}"
    );
    assert!(screen.contains("Jobs "), "one line of jobs:\n{screen}");
    insta::assert_snapshot!(at_three_sizes(&app));
}

#[test]
fn screen_jobs_pane_focused() {
    let mut app = cjk_app();
    update(&mut app, key(KeyCode::Tab), Instant::now());
    assert_eq!(app.desk.focus, Pane::Jobs);
    insta::assert_snapshot!(at_three_sizes(&app));
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

#[test]
fn editing_a_translation_is_a_draft_until_saved() {
    let mut app = session_app();
    update(&mut app, key(KeyCode::Tab), Instant::now());
    update(&mut app, key(KeyCode::Down), Instant::now());
    assert!(!view_state(&app).draft);
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    assert!(app.editing.edit.is_some());
    assert!(view_state(&app).draft);
    assert!(draw(&app).contains("Translation (draft)"));
    clear_draft(&mut app);
    typed(&mut app, "Salut");
    let fx = update(&mut app, key(KeyCode::Enter), Instant::now());
    assert!(app.editing.edit.is_none());
    assert!(!view_state(&app).draft);
    assert!(!draw(&app).contains("Translation (draft)"));
    let [
        Effect::Save {
            op: Op::UpdateNode { patch, .. },
            ..
        },
    ] = fx.as_slice()
    else {
        panic!("{fx:?}")
    };
    assert_eq!(
        patch.kind,
        Some(KindPatch::Text {
            text: None,
            translation: Some(Some("Salut".into())),
            source_lang: None,
            style: None,
            state: None,
            origin: None,
            timing: None,
            region: None,
            found_by: None,
        })
    );
    // Esc asks before a changed draft is dropped: n goes back to it, y
    // drops it (and forgets any copy kept on disk).
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    typed(&mut app, "x");
    assert!(update(&mut app, key(KeyCode::Esc), Instant::now()).is_empty());
    assert!(
        matches!(app.modal, Some(Modal::Confirm { .. })),
        "{:?}",
        app.modal
    );
    update(&mut app, key(KeyCode::Char('n')), Instant::now());
    assert!(app.modal.is_none() && app.editing.edit.is_some());
    update(&mut app, key(KeyCode::Esc), Instant::now());
    let fx = update(&mut app, key(KeyCode::Char('y')), Instant::now());
    assert!(app.editing.edit.is_none());
    assert!(
        matches!(fx.as_slice(), [Effect::KeepDraft { draft: None, .. }]),
        "{fx:?}"
    );
    // Only text nodes are editable.
    update(&mut app, key(KeyCode::Up), Instant::now());
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    assert!(app.editing.edit.is_none());
    assert!(app.status.as_ref().unwrap().error);
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

#[test]
fn keys_right_after_a_save_see_the_saved_value() {
    let mut app = session_app();
    update(&mut app, key(KeyCode::Tab), Instant::now());
    update(&mut app, key(KeyCode::Down), Instant::now());
    // One burst: e, clear, type, Enter, e — no effect has been carried out
    // between the keys.
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    clear_draft(&mut app);
    typed(&mut app, "Bonjour");
    let fx = update(&mut app, key(KeyCode::Enter), Instant::now());
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    let edit = app.editing.edit.as_ref().expect("the box opened again");
    assert_eq!(edit.draft().text, "Bonjour");
    assert_eq!(shown_translation(&app).as_deref(), Some("Bonjour"));
    // A scene loaded before the save was applied does not take it back.
    let Effect::Save { draft, .. } = &fx[0] else {
        panic!("{fx:?}")
    };
    let old = app.desk.scene.clone().unwrap();
    let mut stale = old.1.clone();
    if let quire_model::scene::NodeKind::Text { translation, .. } =
        &mut std::sync::Arc::make_mut(&mut stale.scene.pages[0]).nodes[1].kind
    {
        *translation = Some("old".into());
    }
    update(
        &mut app,
        Msg::Loaded(Loaded::Scene(old.0, Ok(stale.clone()))),
        Instant::now(),
    );
    assert_eq!(shown_translation(&app).as_deref(), Some("Bonjour"));
    // Applied at the next epoch; a scene of that epoch is the truth again.
    let applied = old.1.epoch + 1;
    let saved = Loaded::Saved(draft.clone(), Ok(applied));
    update(&mut app, Msg::Loaded(saved), Instant::now());
    assert!(
        !app.editing.saving.is_empty(),
        "kept until a scene has the save"
    );
    stale.epoch = applied;
    update(
        &mut app,
        Msg::Loaded(Loaded::Scene(old.0, Ok(stale))),
        Instant::now(),
    );
    assert!(app.editing.saving.is_empty());
    assert_eq!(shown_translation(&app).as_deref(), Some("old"));
}

#[test]
fn a_failed_save_keeps_the_draft_open_with_the_error() {
    let mut app = session_app();
    update(&mut app, key(KeyCode::Tab), Instant::now());
    update(&mut app, key(KeyCode::Down), Instant::now());
    update(&mut app, key(KeyCode::Char('e')), Instant::now());
    clear_draft(&mut app);
    typed(&mut app, "Line one");
    update(&mut app, alt_enter(), Instant::now());
    typed(&mut app, "line two");
    update(&mut app, ctrl('j'), Instant::now());
    typed(&mut app, "三");
    let fx = update(&mut app, key(KeyCode::Enter), Instant::now());
    let [Effect::Save { draft, .. }] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(draft.text, "Line one\nline two\n三");
    let down = quire::tui::backend::BackendError::disconnected("connection refused");
    let fx = update(
        &mut app,
        Msg::Loaded(Loaded::Saved(draft.clone(), Err(down))),
        Instant::now(),
    );
    let edit = app.editing.edit.as_ref().expect("the draft is open again");
    assert_eq!(edit.draft().text, "Line one\nline two\n三");
    let status = app.status.as_ref().unwrap();
    assert!(
        status.error && status.text.contains("connection refused"),
        "{status:?}"
    );
    assert!(app.editing.saving.is_empty());
    assert!(
        fx.iter().any(|e| matches!(e, Effect::LoadScene(_))),
        "{fx:?}"
    );
    // Enter tries again.
    let fx = update(&mut app, key(KeyCode::Enter), Instant::now());
    assert!(matches!(fx.as_slice(), [Effect::Save { .. }]), "{fx:?}");
}

#[test]
fn the_command_line_is_a_draft_and_runs_undo_new_run_and_export() {
    let mut app = session_app();
    update(&mut app, key(KeyCode::Char('/')), Instant::now());
    assert!(!view_state(&app).draft, "an empty line is no draft");
    typed(&mut app, "undo");
    assert!(view_state(&app).draft);
    assert!(draw(&app).contains(":undo"));
    assert_eq!(
        update(&mut app, key(KeyCode::Enter), Instant::now()),
        vec![Effect::Undo(sid(1))]
    );
    assert!(!view_state(&app).draft);
    assert_eq!(command(&mut app, "redo"), vec![Effect::Redo(sid(1))]);
    assert_eq!(
        command(&mut app, "new Fresh start"),
        vec![Effect::Create("Fresh start".into(), Default::default())]
    );
    assert_eq!(
        command(&mut app, "new Chapter 2 from=ja to=pt-BR"),
        vec![Effect::Create(
            "Chapter 2".into(),
            quire_model::lang::Languages {
                source_language: Some("ja".into()),
                target_language: Some("pt-BR".into()),
            }
        )]
    );
    assert!(command(&mut app, "new Bad to=--output=x").is_empty());
    assert!(
        app.status
            .as_ref()
            .unwrap()
            .text
            .contains("not a BCP 47 language tag")
    );
    assert_eq!(
        command(&mut app, "/open /tmp/p"),
        vec![Effect::Open("/tmp/p".into())]
    );
    assert_eq!(
        command(&mut app, "run pseudo-translate qa lang=fr"),
        vec![Effect::Run {
            session: sid(1),
            spec: PipelineSpec {
                steps: vec!["pseudo-translate".into(), "qa".into()],
                target_language: Some("fr".into()),
                ..PipelineSpec::default()
            },
            approval: Approval::Person,
        }]
    );
    assert!(command(&mut app, "run nope").is_empty());
    assert!(
        app.status
            .as_ref()
            .unwrap()
            .text
            .contains("unknown step `nope`")
    );
    // The page images' format and quality ride on the format word.
    match command(&mut app, "export cbz:jpeg:90 /tmp/out dir/c.cbz").as_slice() {
        [Effect::Export { spec, path, .. }] => {
            assert_eq!(
                (spec.format, spec.image_format, spec.quality),
                (ExportFormat::Cbz, Some(ImageFormat::Jpeg), Some(90))
            );
            assert_eq!(path, std::path::Path::new("/tmp/out dir/c.cbz"));
        }
        other => panic!("{other:?}"),
    }
    for (bad, says) in [
        ("export cbz:gif /tmp/c.cbz", "unknown image format `gif`"),
        ("export cbz:jpeg:high /tmp/c.cbz", "usage: /export"),
        ("export cbz:jpeg:90:1 /tmp/c.cbz", "usage: /export"),
    ] {
        assert!(command(&mut app, bad).is_empty(), "{bad}");
        let status = app.status.as_ref().unwrap().text.clone();
        assert!(status.contains(says), "{bad}: {status}");
    }
    let fx = command(&mut app, "export markdown /tmp/out.md");
    assert!(matches!(
        fx.as_slice(),
        [Effect::Export {
            overwrite: false,
            ..
        }]
    ));
    // The file was there: the person is asked, and only yes overwrites.
    let Effect::Export {
        session,
        spec,
        path,
        ..
    } = fx[0].clone()
    else {
        unreachable!()
    };
    let retry = Effect::Export {
        session,
        spec,
        path: path.clone(),
        overwrite: true,
    };
    let exists = || {
        Msg::Loaded(Loaded::Exists {
            path: path.clone(),
            retry: Box::new(retry.clone()),
        })
    };
    update(&mut app, exists(), Instant::now());
    assert!(draw(&app).contains("/tmp/out.md exists. Overwrite it?"));
    assert!(update(&mut app, key(KeyCode::Char('n')), Instant::now()).is_empty());
    update(&mut app, exists(), Instant::now());
    assert_eq!(
        update(&mut app, key(KeyCode::Char('y')), Instant::now()),
        vec![retry.clone()]
    );
    assert_eq!(
        command(&mut app, "run qa overwrite=machine"),
        vec![Effect::Run {
            session: sid(1),
            spec: PipelineSpec {
                steps: vec!["qa".into()],
                overwrite: Some(quire_model::workflow::Overwrite::Machine),
                ..PipelineSpec::default()
            },
            approval: Approval::Person,
        }]
    );
    assert!(command(&mut app, "run qa overwrite=everything").is_empty());
}

/// `/import`, `/term`, `/cancel`, `/close`, `/tui-mcp-revoke` and what is
/// no command.
#[test]
fn the_command_line_imports_sets_terms_and_ends_work() {
    let mut app = session_app();
    // /import FILE: the format from the extension.
    assert_eq!(
        command(&mut app, "import /tmp/review.XLF force"),
        vec![Effect::ImportTranslations {
            session: sid(1),
            path: "/tmp/review.XLF".into(),
            format: TranslationFormat::Xliff,
            force: true,
            take: Vec::new(),
        }]
    );
    assert_eq!(
        command(&mut app, "import ~/fr.po"),
        vec![Effect::ImportTranslations {
            session: sid(1),
            path: quire::tui::commands::expand("~/fr.po").into(),
            format: TranslationFormat::Po,
            force: false,
            take: Vec::new(),
        }]
    );
    assert_eq!(
        command(&mut app, "import /tmp/terms.TBX"),
        vec![Effect::ImportGlossary {
            session: sid(1),
            path: "/tmp/terms.TBX".into(),
            format: quire_formats::glossary::GlossaryFormat::Tbx,
        }]
    );
    // /term sets and removes glossary terms, as ops.
    let moon = quire_model::glossary::Term {
        source: "moon".into(),
        target: "lune".into(),
        note: Some("at night".into()),
        case_sensitive: false,
    };
    assert_eq!(
        command(&mut app, "term moon = lune # at night"),
        vec![Effect::Apply {
            session: sid(1),
            op: Op::UpdateGlossary {
                set: vec![moon],
                remove: vec![],
            },
            what: "glossary: moon → lune".into(),
        }]
    );
    assert_eq!(
        command(&mut app, "term -moon"),
        vec![Effect::Apply {
            session: sid(1),
            op: Op::UpdateGlossary {
                set: vec![],
                remove: vec!["moon".into()],
            },
            what: "glossary: removed moon".into(),
        }]
    );
    assert!(command(&mut app, "term moon").is_empty());
    // A page file goes in directly, with whatever is staged.
    assert_eq!(
        command(&mut app, "import /tmp/ep1.SRT"),
        vec![Effect::Import {
            session: sid(1),
            files: vec![quire::tui::app::Attachment {
                path: "/tmp/ep1.SRT".into(),
                name: "ep1.SRT".into(),
                kind: quire::tui::app::AttachmentKind::Subtitles,
            }],
        }]
    );
    assert_eq!(
        command(&mut app, "import /tmp/ch1.quire.zip"),
        vec![Effect::ImportArchive("/tmp/ch1.quire.zip".into())]
    );
    assert!(command(&mut app, "import /tmp/notes.docx").is_empty());
    assert!(
        app.status
            .as_ref()
            .unwrap()
            .text
            .contains("/import takes pages (png")
    );
    assert!(command(&mut app, "cancel").is_empty(), "no job to cancel");
    app.workspace.jobs = vec![job(sid(1), JobStatus::Running, 5.0, 0)];
    assert!(matches!(
        command(&mut app, "cancel").as_slice(),
        [Effect::Cancel(_)]
    ));
    assert!(command(&mut app, "close").is_empty());
    assert!(matches!(app.modal, Some(Modal::Confirm { .. })));
    assert_eq!(
        update(&mut app, key(KeyCode::Char('y')), Instant::now()),
        vec![Effect::Close(sid(1))]
    );
    assert!(command(&mut app, "tui-mcp-revoke").is_empty(), "not shared");
    app.share = Some(ShareBar {
        endpoint: "x".into(),
        used: 0,
        limit: 128,
    });
    assert_eq!(command(&mut app, "tui-mcp-revoke"), vec![Effect::Revoke]);
    assert!(command(&mut app, "frobnicate").is_empty());
    assert!(
        app.status
            .as_ref()
            .unwrap()
            .text
            .contains("unknown command")
    );
    command(&mut app, "help");
    assert_eq!(app.modal, Some(Modal::Help));
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

#[test]
fn modals_and_overlays_are_in_the_state_exactly_when_shown() {
    let mut app = session_app();
    let shown = |app: &App, marker: &str| draw(app).contains(marker);
    assert!(view_state(&app).modal.is_none());
    update(&mut app, key(KeyCode::Char('?')), Instant::now());
    assert_eq!(view_state(&app).modal, Some("help"));
    assert!(shown(&app, "Help"));
    update(&mut app, key(KeyCode::Esc), Instant::now());
    assert_eq!(view_state(&app).modal, None);
    assert!(!shown(&app, "─ Help"));

    command(&mut app, "run ocr");
    let state = view_state(&app);
    assert_eq!(state.modal, Some("approval"));
    assert!(state.approval_pending);
    assert!(shown(&app, "Approve engines"));
    let fx = update(&mut app, key(KeyCode::Char('y')), Instant::now());
    assert!(matches!(
        fx.as_slice(),
        [Effect::Run {
            approval: Approval::Person,
            ..
        }]
    ));
    assert!(!view_state(&app).approval_pending);
    assert!(!shown(&app, "Approve engines"));
    command(&mut app, "run ocr");
    assert!(
        update(&mut app, key(KeyCode::Char('n')), Instant::now()).is_empty(),
        "declined: nothing runs"
    );

    app.workspace.jobs = vec![job(sid(1), JobStatus::Running, 5.0, 0)];
    update(&mut app, key(KeyCode::Char('q')), Instant::now());
    assert!(view_state(&app).exit_overlay && !app.quit);
    assert!(shown(&app, "Quit?"));
    update(&mut app, key(KeyCode::Char('n')), Instant::now());
    assert!(!view_state(&app).exit_overlay && !shown(&app, "Quit?"));
    update(&mut app, ctrl('c'), Instant::now());
    update(&mut app, key(KeyCode::Char('y')), Instant::now());
    assert!(app.quit);

    let mut fresh = App::new("this workspace".into(), false);
    assert!(view_state(&fresh).start_overlay);
    assert!(draw(&fresh).contains("Loading the workspace"));
    update(
        &mut fresh,
        Msg::Backend(BackendEvent::Connected),
        Instant::now(),
    );
    update(
        &mut fresh,
        Msg::Loaded(Loaded::Sessions(Instant::now(), Ok(vec![]))),
        Instant::now(),
    );
    assert!(!view_state(&fresh).start_overlay);
    assert!(view_state(&fresh).ready);
    assert!(!draw(&fresh).contains("Loading the workspace"));
}

#[test]
fn q_quits_at_once_when_nothing_runs() {
    let mut app = session_app();
    update(&mut app, key(KeyCode::Char('q')), Instant::now());
    assert!(app.quit && !app.exit_overlay);
}

#[test]
fn a_signal_quits_without_asking_even_while_a_job_runs() {
    let mut app = session_app();
    app.workspace.jobs = vec![job(sid(1), JobStatus::Running, 5.0, 0)];
    update(&mut app, key(KeyCode::Char('q')), Instant::now());
    assert!(app.exit_overlay && !app.quit, "a person is asked");
    update(&mut app, Msg::Terminate, Instant::now());
    assert!(app.quit && !app.exit_overlay, "the OS is not");
}

#[test]
fn workspace_events_update_the_view() {
    let mut app = session_app();
    let fx = update(
        &mut app,
        Msg::Backend(BackendEvent::Event(Event::SceneAdvanced {
            session_id: sid(1),
            epoch: 13,
            name: "Comic".into(),
            pages: None,
        })),
        Instant::now(),
    );
    assert_eq!(without_pictures(fx), vec![Effect::LoadScene(sid(1))]);
    assert_eq!(app.session(sid(1)).unwrap().epoch, 13);
    // A second change while loading is coalesced into one more load later.
    let fx = update(
        &mut app,
        Msg::Backend(BackendEvent::Event(Event::SceneAdvanced {
            session_id: sid(1),
            epoch: 14,
            name: "Comic".into(),
            pages: None,
        })),
        Instant::now(),
    );
    assert!(fx.is_empty());
    let fx = update(
        &mut app,
        Msg::Loaded(Loaded::Scene(sid(1), Ok(scene(3, 4)))),
        Instant::now(),
    );
    // The project's kept drafts are read once, with its first scene.
    let project = app.session(sid(1)).unwrap().project_id;
    assert_eq!(
        fx,
        vec![Effect::LoadDrafts(project), Effect::LoadScene(sid(1))]
    );
    // Jobs follow their events.
    let job_id = job(sid(1), JobStatus::Running, 0.0, 0).id;
    update(
        &mut app,
        Msg::Backend(BackendEvent::Event(Event::JobStarted {
            id: job_id,
            session_id: sid(1),
            steps: vec!["qa".into()],
            total_pages: 3,
        })),
        Instant::now(),
    );
    assert!(app.is_busy(sid(1)) && view_state(&app).busy);
    update(
        &mut app,
        Msg::Backend(BackendEvent::Event(Event::JobWarning {
            job_id,
            page_index: 0,
            total_pages: 3,
            step_id: "qa".into(),
            finding: quire_model::finding::Finding::new(
                "missing-translation",
                quire_model::finding::Severity::Warning,
                "missing",
            ),
        })),
        Instant::now(),
    );
    update(
        &mut app,
        Msg::Backend(BackendEvent::Event(Event::JobFinished {
            id: job_id,
            status: JobStatus::CompletedWithErrors,
            error: None,
        })),
        Instant::now(),
    );
    assert!(!app.is_busy(sid(1)));
    assert!(app.status.as_ref().unwrap().text.contains("1 warning"));
    // The shown session closed elsewhere: back home.
    update(
        &mut app,
        Msg::Loaded(Loaded::Sessions(
            Instant::now(),
            Ok(vec![session(2, "Slides", 3, true)]),
        )),
        Instant::now(),
    );
    assert_eq!(app.route, Route::Home);
}

#[test]
fn disconnect_and_reconnect_reload_the_view() {
    let mut app = session_app();
    app.link.attached = true;
    update(
        &mut app,
        Msg::Backend(BackendEvent::Disconnected("refused".into())),
        Instant::now(),
    );
    assert!(!app.link.connected && !view_state(&app).ready);
    let generation = app.link.generation;
    let fx = update(
        &mut app,
        Msg::Backend(BackendEvent::Connected),
        Instant::now(),
    );
    assert!(app.link.connected);
    assert_eq!(app.link.generation, generation + 1);
    assert!(fx.contains(&Effect::LoadSessions) && fx.contains(&Effect::LoadScene(sid(1))));
}

#[test]
fn input_time_and_revision_are_tracked() {
    let mut app = session_app();
    let t0 = Instant::now();
    let r0 = app.revision;
    update(&mut app, key(KeyCode::Down), t0);
    assert_eq!(app.last_input, Some(t0));
    assert!(app.revision > r0);
    let state = view_state(&app);
    assert!(recent_input_left(&state, t0 + Duration::from_millis(1499)).is_some());
    assert_eq!(recent_input_left(&state, t0 + RECENT_INPUT), None);
    let r1 = app.revision;
    update(&mut app, Msg::Tick, t0);
    assert_eq!(app.revision, r1, "ticks change nothing");
}

#[test]
fn clicking_revoke_on_the_sharing_bar_revokes() {
    let mut app = session_app();
    app.share = Some(ShareBar {
        endpoint: "/tmp/quire-x/endpoint.json".into(),
        used: 0,
        limit: 128,
    });
    // [Revoke] sits at the right end of the bar, on row 1.
    let col = app.width - 5;
    let fx = update(
        &mut app,
        Msg::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: col,
            row: 1,
            modifiers: KeyModifiers::NONE,
        }),
        Instant::now(),
    );
    assert_eq!(without_pictures(fx), vec![Effect::Revoke]);
}

/// The selected segment's glossary hits come from the loaded scene's
/// glossary: shown once it loads, and the new terms after it changes.
#[test]
fn glossary_hits_follow_the_loaded_glossary() {
    let term = |source: &str, target: &str| quire_model::glossary::Term {
        source: source.into(),
        target: target.into(),
        note: None,
        case_sensitive: false,
    };
    let with = |terms: Vec<quire_model::glossary::Term>| {
        let mut snapshot = scene(3, 4);
        snapshot.scene.project.glossary = terms;
        snapshot
    };
    let mut app = session_app();
    app.desk.focus = Pane::Nodes;
    app.desk.node_selected = 1;
    let load = |app: &mut App, snapshot| {
        update(
            app,
            Msg::Loaded(Loaded::Scene(sid(1), Ok(snapshot))),
            Instant::now(),
        );
    };
    load(&mut app, with(vec![term("number", "numéro")]));
    let screen = draw(&app);
    assert!(screen.contains("≡ number → numéro"), "{screen}");
    load(&mut app, with(vec![term("page", "feuille")]));
    let screen = draw(&app);
    assert!(screen.contains("≡ page → feuille"), "{screen}");
    assert!(!screen.contains("numéro"), "{screen}");
    load(&mut app, with(Vec::new()));
    assert!(!draw(&app).contains('≡'));
}
