//! Open suggestions go out in the files other tools read (spec 10,
//! "Suggestions"): a PO translator comment, an XLIFF 1.2 `<alt-trans>`, an
//! XLIFF 2.0 note. Real files from other tools carry them out and back:
//! the file still passes `msgfmt --check`, merging it back changes
//! nothing and takes no suggestion for a translation or a note, and the
//! next export carries the same ones, not twice as many.

use quire_core::export::ExportFormat;
use quire_core::suggestions::Action;
use quire_core::translations::TranslationImport;
use quire_formats::units::TranslationFormat;
use quire_model::ids::{NodeId, SessionId};
use quire_model::scene::{NodeKind, Page};

use super::{export, format_of, project_of};
use crate::core_base::TestCore;

/// The first text node that has a source, and its translation.
fn first_text(page: &Page) -> (NodeId, Option<String>) {
    page.nodes
        .iter()
        .find_map(|n| match &n.kind {
            NodeKind::Text {
                text: Some(t),
                translation,
                ..
            } if !t.is_empty() => Some((n.id, translation.clone())),
            _ => None,
        })
        .unwrap()
}

async fn act(t: &TestCore, who: &str, id: SessionId, node: NodeId, action: Action) -> String {
    let core = t.core.acting_for(Some(who));
    let done = core.suggest(id, node, action).await.unwrap();
    done.suggestion.map(|s| s.id).unwrap_or_default()
}

/// What the export says of each open suggestion, as the format writes it.
fn carried(name: &str, exported: &str) -> Vec<String> {
    let (mark, _) = format_of(name);
    match (
        mark,
        exported.contains("urn:oasis:names:tc:xliff:document:2.0"),
    ) {
        (TranslationFormat::Po, _) => exported
            .lines()
            .filter(|l| l.starts_with("# suggestion by "))
            .map(str::to_owned)
            .collect(),
        (_, true) => exported
            .match_indices("<note category=\"suggestion\"")
            .map(|(at, _)| exported[at..].split("</note>").next().unwrap().to_owned())
            .collect(),
        (_, false) => exported
            .match_indices("<alt-trans origin=\"suggestion\">")
            .map(|(at, _)| {
                exported[at..]
                    .split("</alt-trans>")
                    .next()
                    .unwrap()
                    .to_owned()
            })
            .collect(),
    }
}

/// Merges `content` back into session `id`: nothing to update, no
/// conflict.
async fn merges_with_nothing_to_do(
    t: &TestCore,
    id: SessionId,
    format: TranslationFormat,
    content: String,
    name: &str,
) {
    let import = TranslationImport {
        format,
        content,
        force: false,
        take: Vec::new(),
    };
    let report = t
        .core
        .import_translations(id, import)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        (report.updated, report.conflicts.len()),
        (0, 0),
        "{name}: {report:?}"
    );
}

#[tokio::test]
async fn open_suggestions_go_out_in_real_files_and_never_come_back_as_translations() {
    let test = "open_suggestions_go_out_in_real_files_and_never_come_back_as_translations";
    let names = [
        "cat/django-5.2.19_contrib_admin_locale_ja_djangojs.po",
        "cat/okapi_MQ-12-Test01.xlf",
        "cat/omegat_xliff2_ex.9.5.xlf",
    ];
    let t = TestCore::new();
    let work = tempfile::tempdir().unwrap();
    for rel in names {
        let Some(path) = crate::harness::testdata(test, rel) else {
            return;
        };
        let name = rel.trim_start_matches("cat/");
        let (format, out) = format_of(name);
        let (id, page) = project_of(&t, name, &std::fs::read(&path).unwrap()).await;
        let (node, translation) = first_text(&page);
        let one = act(
            &t,
            "sid",
            id,
            node,
            Action::Add {
                text: "Première <idée> & co".into(),
            },
        )
        .await;
        let two = act(
            &t,
            "ana",
            id,
            node,
            Action::Add {
                text: "Deuxième".into(),
            },
        )
        .await;
        for voter in ["ana", "vera"] {
            let vote = Action::Vote {
                id: one.clone(),
                value: 1,
            };
            act(&t, voter, id, node, vote).await;
        }
        let (_, first) = export(&t, id, out).await;
        let said = carried(name, &first);
        assert_eq!(said.len(), 2, "{name}: {said:?}");
        assert!(
            said[0].contains("sid") && said[0].contains('2'),
            "{name}: {said:?}"
        );
        assert!(
            said[0].contains("Première &lt;idée&gt; &amp; co")
                || said[0].contains("Première <idée> & co"),
            "{name}: {said:?}"
        );
        assert!(
            said[1].contains("ana") && said[1].contains("Deuxième"),
            "{name}: {said:?}"
        );
        // Sent out fresh in the other format, they go too.
        let (other, mark) = match format {
            TranslationFormat::Po => (ExportFormat::Xliff, "<note category=\"suggestion\""),
            _ => (ExportFormat::Po, "\n# suggestion by "),
        };
        let (_, fresh) = export(&t, id, other).await;
        assert_eq!(
            fresh.matches(mark).count(),
            2,
            "{name} as {other:?}: {fresh}"
        );
        if format == TranslationFormat::Po {
            let file = work.path().join(name);
            std::fs::write(&file, &first).unwrap();
            crate::harness::msgfmt_checks(test, &file);
        }
        // Back in: nothing changes, no suggestion is a translation or a note.
        merges_with_nothing_to_do(&t, id, format, first.clone(), name).await;
        let scene = t.core.scene(id).await.unwrap().scene;
        let kind = &scene.pages[0].nodes[scene.pages[0].node_index(node).unwrap()].kind;
        let NodeKind::Text {
            translation: now,
            entry,
            suggestions,
            ..
        } = kind
        else {
            panic!()
        };
        assert_eq!(*now, translation, "{name}");
        assert_eq!(suggestions.len(), 2, "{name}");
        let notes = entry
            .as_ref()
            .map(|e| e.notes.join("\n"))
            .unwrap_or_default();
        assert!(!notes.contains("Deuxième"), "{name}: {notes}");
        // The next export says the same, once.
        let (_, again) = export(&t, id, out).await;
        assert_eq!(carried(name, &again), said, "{name}");
        // Rejected and accepted, they leave the file.
        act(&t, "ana", id, node, Action::Reject { id: two }).await;
        act(&t, "ana", id, node, Action::Accept { id: one }).await;
        let (_, done) = export(&t, id, out).await;
        assert!(carried(name, &done).is_empty(), "{name}: {done}");
        assert!(done.contains("Premi"), "{name}");
        merges_with_nothing_to_do(&t, id, format, done, name).await;
    }
}
