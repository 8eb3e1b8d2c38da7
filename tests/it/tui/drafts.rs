//! Editing a translation: a draft until saved, what keys see right after
//! a save, and a save that fails.

use super::*;

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
            source_edit: None,
            suggestions: None,
            suggest: None,
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
