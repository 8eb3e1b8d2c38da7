//! What the state holds as the workspace and the terminal change: modals
//! and overlays, quitting, events, reconnects, input time, sharing and the
//! glossary.

use super::*;

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
            started_by: Default::default(),
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
