//! Page import (text and images) and export (json, markdown, xliff,
//! archive with its round trip), including every refused input.

use std::io::Write;

use quire_core::export::{ExportFormat, ExportSpec};
use quire_core::import::ImageFile;
use quire_model::ids::{PageId, SessionId};
use quire_model::op::Op;
use quire_model::scene::{ImageRole, NodeKind};

use crate::support::{TestCore, translate};

fn fixture(name: &str) -> ImageFile {
    let bytes = std::fs::read(format!(
        "{}/../../tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    ImageFile {
        name: name.to_owned(),
        bytes,
    }
}

fn renamed(name: &str, from: &str) -> ImageFile {
    ImageFile {
        name: name.to_owned(),
        ..fixture(from)
    }
}

fn blob_files(t: &TestCore, id: SessionId) -> usize {
    let dir = t.project_path(id).join("blobs");
    std::fs::read_dir(&dir)
        .map(|shards| {
            shards
                .flatten()
                .map(|s| std::fs::read_dir(s.path()).unwrap().count())
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn text_import_makes_one_node_per_paragraph() {
    let t = TestCore::new();
    let id = t.session("Text");
    let r = t
        .core
        .import_text(
            id,
            "Chapter 1",
            "First line\nstill first\n\n\nSecond\n\n",
            Some("en"),
        )
        .await
        .unwrap();
    assert_eq!(r.created.len(), 3, "a page and two nodes");
    let scene = t.core.scene(id).await.unwrap().scene;
    let page = &scene.pages[0];
    assert_eq!(page.name, "Chapter 1");
    let texts: Vec<_> = page
        .nodes
        .iter()
        .map(|n| match &n.kind {
            NodeKind::Text {
                text, source_lang, ..
            } => (text.clone().unwrap(), source_lang.clone()),
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        texts,
        vec![
            ("First line\nstill first".into(), Some("en".into())),
            ("Second".into(), Some("en".into()))
        ]
    );
    let before = t.core.scene(id).await.unwrap();
    for (name, text, expected) in [
        ("", "x", "page name must not be empty"),
        ("Blank", " \n\n ", "no text to import"),
    ] {
        let err = t.core.import_text(id, name, text, None).await.unwrap_err();
        assert!(err.to_string().contains(expected), "{err}");
    }
    assert_eq!(t.core.scene(id).await.unwrap().epoch, before.epoch);
}

#[tokio::test]
async fn images_import_in_natural_order_as_one_undoable_batch() {
    let t = TestCore::new();
    let id = t.session("Images");
    let files = vec![
        renamed("p10.png", "tiny.png"),
        renamed("p2.jpg", "tiny.jpg"),
        renamed("p1.webp", "tiny.webp"),
    ];
    let r = t.core.import_files(id, files).await.unwrap();
    assert_eq!(r.epoch, 1);
    let scene = t.core.scene(id).await.unwrap().scene;
    let pages: Vec<(String, Option<u32>, Option<u32>)> = scene
        .pages
        .iter()
        .map(|p| (p.name.clone(), p.width, p.height))
        .collect();
    assert_eq!(
        pages,
        vec![
            ("p1".into(), Some(60), Some(70)),
            ("p2".into(), Some(40), Some(50)),
            ("p10".into(), Some(30), Some(20))
        ]
    );
    let NodeKind::Image { blob, role, .. } = &scene.pages[2].nodes[0].kind else {
        panic!()
    };
    assert_eq!(*role, ImageRole::Source);
    assert_eq!(
        t.core.blocking().get_blob(id, blob).unwrap(),
        fixture("tiny.png").bytes
    );
    t.core.undo(id).await.unwrap();
    assert!(t.core.scene(id).await.unwrap().scene.pages.is_empty());
}

#[tokio::test]
async fn a_bad_file_is_named_and_nothing_is_imported() {
    let t = TestCore::new();
    let id = t.session("Bad");
    let png = fixture("tiny.png");
    let truncated = ImageFile {
        name: "cut.png".into(),
        bytes: png.bytes[..20].to_vec(),
    };
    let gif = ImageFile {
        name: "anim.gif".into(),
        bytes: b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec(),
    };
    let text = ImageFile {
        name: "notes.docx".into(),
        bytes: b"hello".to_vec(),
    };
    let binary = ImageFile {
        name: "notes.txt".into(),
        bytes: vec![0xff, 0xfe, 0],
    };
    for (bad, expected) in [
        (truncated, "cut.png: corrupt or truncated PNG"),
        (gif, "anim.gif: unsupported image format"),
        (text, "notes.docx: not an image"),
        (binary, "notes.txt: not UTF-8"),
    ] {
        let err = t
            .core
            .import_files(id, vec![png.clone(), bad])
            .await
            .unwrap_err();
        assert_eq!(err.code(), "invalid_input");
        assert!(err.to_string().contains(expected), "{err}");
    }
    assert_eq!(t.core.scene(id).await.unwrap().epoch, 0);
    assert_eq!(blob_files(&t, id), 0, "no blob was stored");
    let err = t.core.import_files(id, vec![]).await.unwrap_err();
    assert!(err.to_string().contains("no files"));
}

async fn translated_project(t: &TestCore) -> (SessionId, Vec<PageId>) {
    let id = t.session("Export me");
    let a = t
        .core
        .import_text(
            id,
            "Intro",
            "Hello <b>{0}</b> & \"friends\"\n\nBye",
            Some("en"),
        )
        .await
        .unwrap();
    let page = PageId(a.created[0]);
    let node = quire_model::ids::NodeId(a.created[1]);
    t.core
        .apply(id, translate(page, node, "Bonjour <b>{0}</b> & « amis »"))
        .await
        .unwrap();
    let b = t
        .core
        .import_files(id, vec![fixture("tiny.png")])
        .await
        .unwrap();
    (id, vec![page, PageId(b.created[0])])
}

fn spec(format: ExportFormat, pages: Option<Vec<PageId>>) -> ExportSpec {
    ExportSpec {
        pages,
        target_language: Some("fr".into()),
        ..ExportSpec::of(format)
    }
}

#[tokio::test]
async fn json_and_markdown_exports() {
    let t = TestCore::new();
    let (id, pages) = translated_project(&t).await;
    let json = t
        .core
        .export(id, spec(ExportFormat::Json, None))
        .await
        .unwrap();
    assert_eq!(json.media_type, "application/json");
    assert_eq!(json.file_name, "export-me.json");
    let v: serde_json::Value = serde_json::from_slice(&json.bytes).unwrap();
    assert_eq!(v["epoch"], 3);
    assert_eq!(v["scene"]["pages"].as_array().unwrap().len(), 2);
    let only = t
        .core
        .export(id, spec(ExportFormat::Json, Some(vec![pages[1]])))
        .await
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&only.bytes).unwrap();
    assert_eq!(v["scene"]["pages"][0]["name"], "tiny");
    let md = t
        .core
        .export(id, spec(ExportFormat::Markdown, None))
        .await
        .unwrap();
    assert_eq!(md.media_type, "text/markdown; charset=utf-8");
    let md = String::from_utf8(md.bytes).unwrap();
    assert!(md.starts_with("# Export me\n"), "{md}");
    assert!(md.contains("## 1. Intro"), "{md}");
    assert!(md.contains("| # | Source | Translation | State |"), "{md}");
    assert!(
        md.contains("| 2 | Bye | *(not translated)* | initial |"),
        "{md}"
    );
    assert!(md.contains("## 2. tiny\n\n*(no text)*"), "{md}");
    let ghost = PageId::new();
    let err = t
        .core
        .export(id, spec(ExportFormat::Json, Some(vec![ghost])))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("unknown page id {ghost}"))
    );
}

#[tokio::test]
async fn xliff_is_well_formed_xliff_2() {
    let t = TestCore::new();
    let (id, pages) = translated_project(&t).await;
    let x = t
        .core
        .export(id, spec(ExportFormat::Xliff, None))
        .await
        .unwrap();
    let xml = String::from_utf8(x.bytes).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let ns = "urn:oasis:names:tc:xliff:document:2.0";
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "xliff");
    assert_eq!(root.tag_name().namespace(), Some(ns));
    assert_eq!(root.attribute("version"), Some("2.0"));
    assert_eq!(root.attribute("srcLang"), Some("en"));
    assert_eq!(root.attribute("trgLang"), Some("fr"));
    let file = root.first_element_child().unwrap();
    assert_eq!(file.tag_name().name(), "file");
    assert!(file.attribute("id").is_some());
    let units: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name((ns, "unit")))
        .collect();
    assert_eq!(units.len(), 2, "one unit per text node");
    let mut ids = std::collections::HashSet::new();
    for unit in &units {
        assert!(
            ids.insert(unit.attribute("id").unwrap()),
            "unit ids are unique"
        );
        let group = unit.parent_element().unwrap();
        assert!(group.has_tag_name((ns, "group")));
        assert_eq!(
            group.attribute("id"),
            Some(format!("p{}", pages[0]).as_str())
        );
        let children: Vec<&str> = unit
            .children()
            .filter(|c| c.is_element())
            .map(|c| c.tag_name().name())
            .collect();
        assert_eq!(children, vec!["notes", "segment"]);
        let segment = unit
            .children()
            .find(|c| c.has_tag_name((ns, "segment")))
            .unwrap();
        let source = segment
            .children()
            .find(|c| c.has_tag_name((ns, "source")))
            .unwrap();
        assert!(source.text().is_some());
    }
    let first = units[0]
        .descendants()
        .find(|c| c.has_tag_name((ns, "target")))
        .unwrap();
    assert_eq!(
        first.text(),
        Some("Bonjour <b>{0}</b> & « amis »"),
        "text is escaped, not markup"
    );
    assert!(
        units[1]
            .descendants()
            .all(|c| !c.has_tag_name((ns, "target"))),
        "no target when untranslated"
    );
    let notes: Vec<&str> = units[0]
        .descendants()
        .filter(|c| c.has_tag_name((ns, "note")))
        .filter_map(|c| c.text())
        .collect();
    assert_eq!(notes[0], pages[0].to_string());
}

#[tokio::test]
async fn archive_round_trip() {
    let t = TestCore::new();
    let (id, _) = translated_project(&t).await;
    let archive = t
        .core
        .export(id, spec(ExportFormat::Archive, None))
        .await
        .unwrap();
    assert_eq!(archive.media_type, "application/zip");
    assert_eq!(archive.file_name, "export-me.quire.zip");
    let original = t.core.scene(id).await.unwrap();
    let dest = t.dir.path().join("imported");
    let copy = t
        .core
        .blocking()
        .import_archive(&archive.bytes, &dest)
        .unwrap();
    assert_ne!(
        copy.project_id,
        t.core.session(id).unwrap().project_id,
        "a copy gets its own id"
    );
    let copied = t.core.scene(copy.id).await.unwrap();
    assert_eq!(copied.epoch, original.epoch);
    assert_eq!(copied.scene, original.scene);
    let NodeKind::Image { blob, .. } = &copied.scene.pages[1].nodes[0].kind else {
        panic!()
    };
    assert_eq!(
        t.core.blocking().get_blob(copy.id, blob).unwrap(),
        fixture("tiny.png").bytes
    );
    // The copy is a working project.
    t.core
        .apply(
            copy.id,
            Op::RemovePage {
                id: copied.scene.pages[0].id,
            },
        )
        .await
        .unwrap();
}

fn zip_with(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

#[tokio::test]
async fn bad_archives_are_refused_and_leave_nothing() {
    let t = TestCore::new();
    let (id, _) = translated_project(&t).await;
    let good = t
        .core
        .export(id, spec(ExportFormat::Archive, None))
        .await
        .unwrap()
        .bytes;
    let mut tampered = zip::ZipArchive::new(std::io::Cursor::new(good.clone())).unwrap();
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..tampered.len() {
        let mut f = tampered.by_index(i).unwrap();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).unwrap();
        entries.push((f.name().unwrap().into_owned(), bytes));
    }
    let blob_entry = entries
        .iter()
        .position(|(n, _)| n.starts_with("blobs/"))
        .unwrap();
    entries[blob_entry].1 = b"not the image".to_vec();
    let tampered: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not a zip".to_vec(), "not a quire archive"),
        (zip_with(&[("../evil", b"x")]), "unexpected entry `../evil`"),
        (zip_with(&[("scene.json", b"{}")]), "project.toml"),
        (zip_with(&tampered), "does not match its hash"),
    ];
    for (i, (bytes, expected)) in cases.into_iter().enumerate() {
        let dest = t.dir.path().join(format!("refused-{i}"));
        let err = t.core.blocking().import_archive(&bytes, &dest).unwrap_err();
        assert!(err.to_string().contains(expected), "case {i}: {err}");
        assert!(!dest.exists(), "case {i}: destination created");
        let leftovers: Vec<_> = std::fs::read_dir(t.dir.path())
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".quire-import-")
            })
            .collect();
        assert!(leftovers.is_empty(), "case {i}: work directory left behind");
    }
    let occupied = t.dir.path().join("occupied");
    std::fs::create_dir_all(&occupied).unwrap();
    std::fs::write(occupied.join("mine"), "x").unwrap();
    let err = t
        .core
        .blocking()
        .import_archive(&good, &occupied)
        .unwrap_err();
    assert_eq!(err.code(), "conflict");
}

/// The text of an XLIFF `<source>`/`<target>`, with `<cp hex>` read back.
fn xliff_text(node: roxmltree::Node<'_, '_>) -> String {
    let mut out = String::new();
    for child in node.children() {
        if child.is_text() {
            out.push_str(child.text().unwrap());
        } else if child.tag_name().name() == "cp" {
            let hex = child.attribute("hex").unwrap();
            out.push(char::from_u32(u32::from_str_radix(hex, 16).unwrap()).unwrap());
        }
    }
    out
}

#[tokio::test]
async fn xliff_stays_well_formed_with_control_characters() {
    let t = TestCore::new();
    let id = t.session("Controls");
    let text = "bell \u{7} esc \u{1b}[0m nul \u{0} crlf \r\n tab \t end \u{FFFE} <b>&amp;</b>";
    let translation = "C1 \u{85} fine, vertical tab \u{b} not";
    t.core
        .import_text(id, "p", "placeholder", None)
        .await
        .unwrap();
    let scene = t.core.scene(id).await.unwrap().scene;
    let (page, node) = (scene.pages[0].id, scene.pages[0].nodes[0].id);
    let set = quire_model::op::Op::UpdateNode {
        page,
        id: node,
        patch: quire_model::op::NodePatch {
            kind: Some(quire_model::op::KindPatch::Text {
                text: Some(Some(text.into())),
                translation: Some(Some(translation.into())),
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
            }),
            ..Default::default()
        },
        based_on: None,
    };
    t.core.apply(id, set).await.unwrap();
    // A page name with line breaks and a control character, as 0.1.0 let
    // UpdatePage write: open the project from such a snapshot.
    let path = t.project_path(id);
    t.core.blocking().close_session(id).unwrap();
    let file = path.join("scene.json");
    let mut stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    stored["scene"]["pages"][0]["name"] = "two\nlines\tand \u{1} bell".into();
    let old = serde_json::json!({ "epoch": stored["epoch"], "scene": stored["scene"] });
    std::fs::write(&file, old.to_string()).unwrap();
    let id = t.core.blocking().open_project(&path).unwrap().id;

    let x = t
        .core
        .export(id, spec(ExportFormat::Xliff, None))
        .await
        .unwrap();
    let xml = String::from_utf8(x.bytes).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let ns = "urn:oasis:names:tc:xliff:document:2.0";
    let find = |tag: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name((ns, tag)))
            .unwrap()
    };
    assert_eq!(
        xliff_text(find("source")),
        text,
        "escaped, and back exactly"
    );
    assert_eq!(xliff_text(find("target")), translation);
    assert!(xml.contains("<cp hex=\"0007\"/>") && xml.contains("<cp hex=\"FFFE\"/>"));
    // Attributes keep line breaks; what XML cannot carry becomes U+FFFD.
    assert_eq!(
        find("group").attribute("name"),
        Some("two\nlines\tand \u{FFFD} bell")
    );
}
