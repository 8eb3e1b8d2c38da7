//! The command line: a draft of its own, and every command it runs.

use super::*;

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
        (
            "export cbz:jpeg:high /tmp/c.cbz",
            "quality `high` is not a whole number from 1 to 100",
        ),
        (
            "export cbz:jpeg:90:1 /tmp/c.cbz",
            "FORMAT, FORMAT:IMAGE or FORMAT:IMAGE:QUALITY",
        ),
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

/// `/history` asks for the project's (or the selected node's) history,
/// filtered by person, and shows each entry with who, when and what.
#[test]
fn history_shows_who_did_what() {
    let mut app = session_app();
    let effects = command(&mut app, "history user=ana node");
    let [Effect::History { session, query }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(*session, sid(1));
    assert!(
        query.starts_with("limit=200&user=ana&node=") && query.len() > 30,
        "{query}"
    );
    assert!(command(&mut app, "history colour=red").is_empty());
    assert!(
        app.status
            .as_ref()
            .unwrap()
            .text
            .contains("usage: /history")
    );

    let page: quire_core::journal::HistoryPage = serde_json::from_value(serde_json::json!({
        "entries": [{
            "epoch": 7,
            "at": "2026-12-07T10:02:03.456Z",
            "label": "edit translation · page 1",
            "by": { "by": "agent", "user": "ana", "client": "Claude Code 2.1" },
            "changes": [{ "page": null, "node": null, "field": "translation",
                          "before": null, "after": "Olá" }]
        }],
        "next": null
    }))
    .unwrap();
    update(
        &mut app,
        Msg::Loaded(Loaded::History(Ok(page))),
        Instant::now(),
    );
    let shown = draw(&app);
    assert!(shown.contains("History · 1 entries"), "{shown}");
    assert!(
        shown.contains("2026-12-07 10:02  ana's agent Claude Code 2.1: edit translation"),
        "{shown}"
    );
    assert!(shown.contains("translation: — → \"Olá\""), "{shown}");
}

fn offered(id: &str, text: &str, user: &str, votes: i8) -> quire_model::suggestion::Suggestion {
    quire_model::suggestion::Suggestion {
        id: id.into(),
        text: text.into(),
        user: Some(user.into()),
        client: None,
        at: format!("2026-12-07T10:00:0{}Z", id.len()),
        votes: (0..votes)
            .map(|i| quire_model::suggestion::Vote {
                voter: Some(format!("v{i}")),
                value: 1,
            })
            .collect(),
    }
}

/// The selected node's suggestions show under its translation, most
/// votes first; `/suggest`, `/vote`, `/accept` and `/reject` act on them
/// by that number, and a number it does not have is named.
#[test]
fn suggestions_show_beside_the_translation_and_commands_act_on_them() {
    use quire_core::suggestions::Action;
    let mut app = session_app();
    app.width = 160;
    app.height = 45;
    // The first page's second node: its first text.
    app.desk.node_selected = 1;
    {
        let (_, snapshot) = app.desk.scene.as_mut().unwrap();
        let page = std::sync::Arc::make_mut(&mut snapshot.scene.pages[app.desk.page_selected]);
        let quire_model::scene::NodeKind::Text { suggestions, .. } =
            &mut page.nodes[app.desk.node_selected].kind
        else {
            panic!("the second node is text")
        };
        *suggestions = vec![
            offered("a", "Bonjour", "ana", 0),
            offered("bb", "Salut", "rui", 2),
        ];
    }
    let shown = draw(&app);
    assert!(shown.contains("Suggestions (2)"), "{shown}");
    assert!(shown.contains("✎1 Salut · rui · 2 votes"), "{shown}");
    assert!(shown.contains("✎2 Bonjour · ana · 0 votes"), "{shown}");
    let acted = |app: &mut App, line: &str| match command(app, line).as_slice() {
        [Effect::Suggest { action, .. }] => action.clone(),
        other => panic!("{line}: {other:?}"),
    };
    assert_eq!(
        acted(&mut app, "accept"),
        Action::Accept { id: "bb".into() }
    );
    assert_eq!(
        acted(&mut app, "reject 2"),
        Action::Reject { id: "a".into() }
    );
    assert_eq!(
        acted(&mut app, "vote 2 down"),
        Action::Vote {
            id: "a".into(),
            value: -1
        }
    );
    assert_eq!(
        acted(&mut app, "suggest Coucou toi"),
        Action::Add {
            text: "Coucou toi".into()
        }
    );
    for (line, said) in [
        ("accept 3", "there is no suggestion 3; this node has 2"),
        (
            "vote 1 sideways",
            "a vote is up, down or none, not `sideways`",
        ),
        ("suggest", "usage: /suggest TEXT"),
    ] {
        assert!(command(&mut app, line).is_empty(), "{line}");
        assert_eq!(app.status.as_ref().unwrap().text, said, "{line}");
    }
}
