//! Undo is per person (spec 10, "Undo is per person"): each person's
//! undo takes back their own newest step still in effect, never a
//! colleague's; an agent's only its own; with nothing of theirs it says
//! so and changes nothing; a colleague's change since to the same field
//! refuses it (naming who), and a redo likewise; and an undo taken from
//! the middle of the stack replays the same after a restart.

use quire_model::error::CoreError;
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::scene::NodeKind;

use crate::support::{TestCore, translate};

async fn translations(t: &TestCore, id: SessionId) -> Vec<Option<String>> {
    let scene = t.core.scene(id).await.unwrap().scene;
    scene.pages[0]
        .nodes
        .iter()
        .map(|n| match &n.kind {
            NodeKind::Text { translation, .. } => translation.clone(),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn each_undo_takes_back_only_its_callers_own_steps() {
    let t = TestCore::new();
    let id = t.session("team");
    let created = t
        .core
        .import_text(id, "p1", "One\n\nTwo\n\nThree", Some("en"))
        .await
        .unwrap()
        .created;
    let page = PageId(created[0]);
    let node = |i: usize| NodeId(created[1 + i]);
    let ana = t.core.acting_for(Some("ana"));
    let bea = t.core.acting_for(Some("bea"));
    let agent = ana.as_agent(Some("claude-code 2.1.0"), Some("mcp-1"));
    let s = |v: &str| Some(v.to_owned());

    ana.apply(id, translate(page, node(0), "Um")).await.unwrap();
    bea.apply(id, translate(page, node(1), "Dois"))
        .await
        .unwrap();
    // ana's undo passes over bea's newer step.
    let undone = ana.undo(id).await.unwrap().expect("ana has a step");
    assert_eq!(undone.by.as_deref(), Some("ana"));
    assert_eq!(translations(&t, id).await, [None, s("Dois"), None]);
    // Nothing more of hers: nothing changes.
    let epoch = t.core.scene(id).await.unwrap().epoch;
    assert!(ana.undo(id).await.unwrap().is_none());
    assert_eq!(t.core.scene(id).await.unwrap().epoch, epoch);
    // Her redo brings hers back; bea's redo has nothing.
    assert!(bea.redo(id).await.unwrap().is_none());
    ana.redo(id).await.unwrap().expect("ana's redo");
    assert_eq!(translations(&t, id).await, [s("Um"), s("Dois"), None]);

    // Her agent's undo takes back only the agent's step; hers takes
    // back her newest, which may be her agent's.
    agent
        .apply(id, translate(page, node(2), "Três"))
        .await
        .unwrap();
    ana.apply(id, translate(page, node(0), "Um!"))
        .await
        .unwrap();
    agent.undo(id).await.unwrap().expect("the agent's step");
    assert_eq!(translations(&t, id).await, [s("Um!"), s("Dois"), None]);
    assert!(agent.undo(id).await.unwrap().is_none());
    // Redone, the agent's step is the newest again: hers first.
    agent.redo(id).await.unwrap().expect("the agent's redo");
    ana.undo(id)
        .await
        .unwrap()
        .expect("her agent's, the newest");
    assert_eq!(translations(&t, id).await, [s("Um!"), s("Dois"), None]);
    ana.undo(id).await.unwrap().expect("then her own");
    assert_eq!(translations(&t, id).await, [s("Um"), s("Dois"), None]);
    // Two conversations of one client are two agents: each undoes only
    // what it made through its own MCP session.
    let other = ana.as_agent(Some("claude-code 2.1.0"), Some("mcp-2"));
    other
        .apply(id, translate(page, node(2), "Tres"))
        .await
        .unwrap();
    assert!(agent.undo(id).await.unwrap().is_none(), "not the other's");
    assert_eq!(translations(&t, id).await, [s("Um"), s("Dois"), s("Tres")]);
    other.undo(id).await.unwrap().expect("its own");
    assert_eq!(translations(&t, id).await, [s("Um"), s("Dois"), None]);

    // bea changes what ana's step changed: ana's undo is refused, naming
    // bea, and nothing changes.
    bea.apply(id, translate(page, node(0), "Uno"))
        .await
        .unwrap();
    let epoch = t.core.scene(id).await.unwrap().epoch;
    let e = ana.undo(id).await.unwrap_err();
    assert!(
        matches!(&e, CoreError::UndoConflict(m) if m.contains("bea has changed")),
        "{e}"
    );
    assert_eq!(e.code(), "undo_conflict");
    assert_eq!(t.core.scene(id).await.unwrap().epoch, epoch);
    assert_eq!(translations(&t, id).await, [s("Uno"), s("Dois"), None]);
    // Once bea takes hers back, ana's undo goes through.
    bea.undo(id).await.unwrap().expect("bea's");
    ana.undo(id).await.unwrap().expect("ana's, free again");
    assert_eq!(translations(&t, id).await, [None, s("Dois"), None]);
    // bea's redo overwrites nothing of ana's once ana's redo has put back
    // what bea's change replaced; but after ana changes it again, bea's
    // redo is refused, naming ana.
    ana.redo(id).await.unwrap().expect("ana's redo");
    ana.apply(id, translate(page, node(0), "Um?"))
        .await
        .unwrap();
    let e = bea.redo(id).await.unwrap_err();
    assert!(
        matches!(&e, CoreError::UndoConflict(m) if m.contains("ana has changed")),
        "{e}"
    );
    assert_eq!(translations(&t, id).await, [s("Um?"), s("Dois"), None]);

    // The same after a restart: the stacks replay from the log.
    let path = t.project_path(id);
    t.core.close_session(id).await.unwrap();
    let id = t.core.open_project(&path).await.unwrap().id;
    assert_eq!(translations(&t, id).await, [s("Um?"), s("Dois"), None]);
    bea.undo(id).await.unwrap().expect("bea's first step");
    assert_eq!(translations(&t, id).await, [s("Um?"), None, None]);
    assert!(bea.undo(id).await.unwrap().is_none());
    ana.undo(id).await.unwrap().expect("ana's newest");
    assert_eq!(translations(&t, id).await, [s("Um"), None, None]);
}

/// The journal holds every change across snapshots (which empty
/// `ops.log`) and is caught up from `ops.log` when a crash left it behind.
#[tokio::test]
async fn the_journal_outlives_snapshots_and_catches_up_after_a_crash() {
    use quire_core::journal::HistoryQuery;
    use quire_store::Durability;
    let t = TestCore::with(crate::support::settings(Durability::Fsync, 3, 500));
    let id = t.session("journal");
    let created = t
        .core
        .import_text(id, "p1", "One\n\nTwo", Some("en"))
        .await
        .unwrap()
        .created;
    let page = PageId(created[0]);
    for i in 0..7 {
        let text = format!("v{i}");
        t.core
            .apply(id, translate(page, NodeId(created[1 + i % 2]), &text))
            .await
            .unwrap();
    }
    let project = t.core.session(id).unwrap().project_id;
    let everything = HistoryQuery {
        limit: Some(500),
        ..HistoryQuery::default()
    };
    let epochs = |page: quire_core::journal::HistoryPage| {
        page.entries.iter().map(|e| e.epoch).collect::<Vec<_>>()
    };
    let all = epochs(t.core.history(project, everything.clone()).await.unwrap());
    assert_eq!(all, (1..=8).rev().collect::<Vec<u64>>());

    // A crash after the log's last frames but before their journal lines:
    // the project as the disk holds it while open, the journal cut short.
    let copy = t.dir.path().join("copy");
    crate::support::copy_dir(&t.project_path(id), &copy);
    t.core.close_session(id).await.unwrap();
    let path = copy;
    let journal = path.join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let kept: Vec<&str> = text.lines().take(6).collect();
    std::fs::write(&journal, format!("{}\n", kept.join("\n"))).unwrap();
    let log = std::fs::read_to_string(path.join("ops.log")).unwrap();
    assert!(log.lines().count() >= 2, "the log holds the last frames");
    t.core.open_project(&path).await.unwrap();
    let back = epochs(t.core.history(project, everything).await.unwrap());
    assert_eq!(back, all);
}
