//! The screens as drawn at 80 by 24 and beside: home, a session, every modal
//! and overlay, CJK text.

use super::*;

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
