//! Translators' own files (spec 14): every PO and XLIFF file in the
//! testdata, made by Django, OmegaT, Okapi, Angular and other tools, starts
//! a project with each segment as a text node keyed as the file keys it,
//! goes back out as the same file with the translations in it, and merges
//! back into the page it came from.

use std::collections::HashMap;

use quire_core::export::{ExportFormat, ExportSpec};
use quire_core::import::ImageFile;
use quire_core::translations::TranslationImport;
use quire_formats::units::TranslationFormat;
use quire_formats::units::{self, DocUnit};
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{NodePatch, Op};
use quire_model::scene::{NodeKind, Page, TextState};

use crate::core_base::TestCore;

mod suggestions;

/// The testdata files of `kind` (`po`, `xlf`/`xliff`), by name.
fn files(test: &str, extensions: &[&str]) -> Vec<(String, Vec<u8>)> {
    let Some(dir) = crate::harness::testdata(test, "cat") else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| extensions.contains(&e.to_str().unwrap()))
        })
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no {extensions:?} files in the testdata");
    out
}

/// A new project made from `file`; its one page.
async fn project_of(t: &TestCore, name: &str, bytes: &[u8]) -> (SessionId, Page) {
    let id = t.session(&format!("p-{}", t.core.sessions().len()));
    t.core
        .import_files(
            id,
            vec![ImageFile {
                name: name.to_owned(),
                bytes: bytes.to_vec(),
            }],
        )
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let scene = t.core.scene(id).await.unwrap().scene;
    assert_eq!(scene.pages.len(), 1, "{name}");
    (id, (*scene.pages[0]).clone())
}

async fn export(t: &TestCore, id: SessionId, format: ExportFormat) -> (String, String) {
    let e = t.core.export(id, ExportSpec::of(format)).await.unwrap();
    (e.file_name, String::from_utf8(e.bytes).unwrap())
}

/// What a document says of each segment, by key and form.
fn by_key(units: &[DocUnit]) -> HashMap<(String, Option<u32>), (String, Option<String>)> {
    units
        .iter()
        .map(|u| {
            (
                (u.entry.key.clone(), u.entry.form),
                (u.source.clone(), u.target.clone()),
            )
        })
        .collect()
}

fn format_of(name: &str) -> (TranslationFormat, ExportFormat) {
    if name.ends_with(".po") {
        (TranslationFormat::Po, ExportFormat::Po)
    } else {
        (TranslationFormat::Xliff, ExportFormat::Xliff)
    }
}

#[tokio::test]
async fn translation_files_from_other_tools_start_projects_and_go_back_whole() {
    let test = "translation_files_from_other_tools_start_projects_and_go_back_whole";
    let t = TestCore::new();
    let all = files(test, &["po", "xlf", "xliff"]);
    if all.is_empty() {
        return; // the testdata is not there (reported as skipped)
    }
    let mut reviewed_files = 0;
    for (name, bytes) in &all {
        let (format, export_format) = format_of(name);
        let text = units::decode(format, name, bytes).unwrap();
        let original = units::read_document(format, &text).unwrap();
        let (id, page) = project_of(&t, name, bytes).await;
        // A node per segment, keyed as the file keys it, with its notes.
        let texts: Vec<_> = page.nodes.iter().filter_map(entry_of).collect();
        assert_eq!(texts.len(), original.units.len(), "{name}");
        for (node, unit) in texts.iter().zip(&original.units) {
            assert_eq!(node.0, &unit.entry, "{name}");
            assert_eq!(node.1, Some(&unit.source), "{name}");
        }
        let document = page.document.as_ref().expect("the page keeps its file");
        assert_eq!(&document.name, name);

        // Out untouched: the same segments, the same translations, in the
        // file's own format and name.
        let (file_name, out) = export(&t, id, export_format).await;
        assert_eq!(&file_name, name);
        let back = units::read_document(format, &out).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(by_key(&back.units), by_key(&original.units), "{name}");

        // A translation made here goes out in it.
        let (node, _) = page
            .nodes
            .iter()
            .filter_map(|n| entry_of(n).map(|e| (n.id, e)))
            .next()
            .unwrap();
        set(&t, id, page.id, node, "Traduzido <aqui> & agora").await;
        let (_, out) = export(&t, id, export_format).await;
        let back = units::read_document(format, &out).unwrap();
        assert_eq!(
            back.units[0].target.as_deref(),
            Some("Traduzido <aqui> & agora"),
            "{name}"
        );
        // Every segment translated here goes out in its own place (a
        // target made, replaced or opened up; a Trados segment marker
        // added to its target).
        let ops = page
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| Op::UpdateNode {
                page: page.id,
                id: n.id,
                patch: NodePatch::text(Some(Some(format!("«{i}» ok"))), Some(TextState::Reviewed)),
                based_on: None,
            })
            .collect();
        t.core
            .apply(id, Op::Batch { ops, label: None })
            .await
            .unwrap();
        let (_, out) = export(&t, id, export_format).await;
        let back = units::read_document(format, &out).unwrap_or_else(|e| panic!("{name}: {e}"));
        let targets: Vec<_> = back.units.iter().map(|u| u.target.clone()).collect();
        let expected: Vec<_> = (0..page.nodes.len())
            .map(|i| Some(format!("«{i}» ok")))
            .collect();
        assert_eq!(targets, expected, "{name}");
        // Reviewed here, reviewed there (but where a Trados or OmegaT
        // unit is segmented: its state lives in the tool's own markup).
        assert!(
            back.units
                .iter()
                .all(|u| matches!(u.state, Some(TextState::Reviewed) | None)),
            "{name}"
        );
        if back.units.iter().any(|u| u.state.is_some()) {
            reviewed_files += 1;
        }
        // And the file merges back into the page: nothing to change.
        let report = t
            .core
            .import_translations(
                id,
                TranslationImport {
                    format,
                    content: out,
                    force: false,
                    take: Vec::new(),
                },
            )
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (
                report.updated,
                report.unmatched.len(),
                report.conflicts.len()
            ),
            (0, 0, 0),
            "{name}: {report:?}"
        );
    }
    // The XLIFF files say so in their states (PO says it by `fuzzy` only;
    // Trados's fully segmented file in its own markup).
    let xliff = all.iter().filter(|(n, _)| !n.ends_with(".po")).count();
    assert!(reviewed_files >= xliff - 1, "{reviewed_files} of {xliff}");
}

fn entry_of(
    node: &quire_model::scene::Node,
) -> Option<(&quire_model::scene::Entry, Option<&String>)> {
    match &node.kind {
        NodeKind::Text {
            entry: Some(entry),
            text,
            ..
        } => Some((entry, text.as_ref())),
        _ => None,
    }
}

async fn set(t: &TestCore, id: SessionId, page: PageId, node: NodeId, text: &str) {
    let op = Op::UpdateNode {
        page,
        id: node,
        patch: NodePatch::text(Some(Some(text.into())), Some(TextState::Translated)),
        based_on: None,
    };
    t.core.apply(id, op).await.unwrap();
}

/// What quire does not read is refused by name and makes no project:
/// the testdata's Aegisub ASS and Apple TTML subtitles.
#[tokio::test]
async fn subtitle_formats_quire_does_not_read_are_refused_by_name() {
    let test = "subtitle_formats_quire_does_not_read_are_refused_by_name";
    let Some(dir) = crate::harness::testdata(test, "subtitles") else {
        return;
    };
    let t = TestCore::new();
    for name in [
        "pysubs2_subtitle_with_attached_images_aegisub.ass",
        "pysubs2_ttml_example_apple.ttml",
    ] {
        let file = ImageFile {
            name: name.to_owned(),
            bytes: std::fs::read(dir.join(name)).unwrap(),
        };
        let e = t
            .core
            .create_project_from_files(None, Default::default(), vec![file])
            .await
            .expect_err(name)
            .to_string();
        assert!(
            e.contains(name) && e.contains("subtitles (.srt, .vtt)"),
            "{name}: {e}"
        );
    }
    assert!(t.core.list_projects().await.unwrap().is_empty());
}

/// memoQ's XLIFF 1.2 (en → fr) starts a pt-BR project: the export says
/// pt-BR, quire takes it back with no override and no conflict, and
/// `force` (the language override) never takes the file's side of a
/// conflict: only a unit named in `take` is taken.
#[tokio::test]
async fn the_language_override_and_the_conflict_override_are_separate() {
    let test = "the_language_override_and_the_conflict_override_are_separate";
    let Some(dir) = crate::harness::testdata(test, "cat") else {
        return;
    };
    let name = "okapi_MQ-12-Test01.xlf";
    let bytes = std::fs::read(dir.join(name)).unwrap();
    let t = TestCore::new();
    let languages = quire_model::lang::Languages {
        source_language: None,
        target_language: Some("pt-BR".into()),
    };
    let file = ImageFile {
        name: name.to_owned(),
        bytes: bytes.clone(),
    };
    let (summary, _) = t
        .core
        .create_project_from_files(None, languages, vec![file])
        .await
        .unwrap();
    let id = summary.id;
    let project = t.core.scene(id).await.unwrap().scene.project;
    assert_eq!(
        (
            project.source_language.as_deref(),
            project.target_language.as_deref()
        ),
        (Some("en"), Some("pt-BR"))
    );
    let page = (*t.core.scene(id).await.unwrap().scene.pages[0]).clone();
    let nodes: Vec<NodeId> = page
        .nodes
        .iter()
        .filter(|n| entry_of(n).is_some())
        .map(|n| n.id)
        .collect();
    set(&t, id, page.id, nodes[0], "Olá").await;
    let (_, out) = export(&t, id, ExportFormat::Xliff).await;
    assert!(
        out.contains("target-language=\"pt-BR\"") && !out.contains("target-language=\"fr\""),
        "{}",
        &out[..out.len().min(600)]
    );
    assert!(out.contains("source-language=\"en\""));
    // Its own export comes back with nothing to do and no override.
    let import = |content: &str, force: bool, take: Vec<String>| TranslationImport {
        format: TranslationFormat::Xliff,
        content: content.to_owned(),
        force,
        take,
    };
    let report = t
        .core
        .import_translations(id, import(&out, false, Vec::new()))
        .await
        .unwrap();
    assert_eq!(
        (report.updated, report.conflicts.len()),
        (0, 0),
        "{report:?}"
    );

    // A reviewer changes the unit in the file; here it changes too.
    let theirs = out.replacen(">Olá<", ">Oi<", 1);
    assert_ne!(theirs, out);
    set(&t, id, page.id, nodes[0], "Olá!").await;
    let unit_of = |content: &str| {
        units::parse(TranslationFormat::Xliff, content)
            .unwrap()
            .units[0]
            .id
            .clone()
    };
    let unit = unit_of(&theirs);
    // The same file said to be French: refused without force, and naming
    // both languages; nothing changes.
    let french = theirs.replace("target-language=\"pt-BR\"", "target-language=\"fr\"");
    let epoch = t.core.scene(id).await.unwrap().epoch;
    let e = t
        .core
        .import_translations(id, import(&french, false, Vec::new()))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("`fr`") && e.contains("`pt-BR`"), "{e}");
    assert_eq!(t.core.scene(id).await.unwrap().epoch, epoch);
    // Forced, the languages no longer matter, but the conflict stays ours.
    let report = t
        .core
        .import_translations(id, import(&french, true, Vec::new()))
        .await
        .unwrap();
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    assert!(!report.conflicts[0].applied);
    let translation = |scene: &quire_model::scene::Scene| match &scene.pages[0]
        .nodes
        .iter()
        .find(|n| n.id == nodes[0])
        .unwrap()
        .kind
    {
        NodeKind::Text { translation, .. } => translation.clone(),
        _ => None,
    };
    let scene = t.core.scene(id).await.unwrap().scene;
    assert_eq!(translation(&scene).as_deref(), Some("Olá!"));
    // Named in `take`, it is the file's.
    let report = t
        .core
        .import_translations(id, import(&french, true, vec![unit]))
        .await
        .unwrap();
    assert!(report.conflicts[0].applied, "{report:?}");
    let scene = t.core.scene(id).await.unwrap().scene;
    assert_eq!(translation(&scene).as_deref(), Some("Oi"));
}

/// A PO file in a legacy encoding (made here by `iconv`, as a Taiwanese,
/// Japanese, Russian or French team's tool saves it) starts a project,
/// goes out in UTF-8 (`msgfmt` and `msgcmp` accept it against the
/// original) and comes back, as does the original itself, with nothing to
/// change; a reviewer's edit to the export merges.
#[tokio::test]
async fn po_files_in_legacy_encodings_merge_their_own_exports() {
    let test = "po_files_in_legacy_encodings_merge_their_own_exports";
    let missing = crate::harness::missing_program("msgfmt", "--version");
    if !crate::harness::tool_available("msgfmt", test, missing) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let t = TestCore::new();
    for (charset, iconv, text) in [
        ("Big5", "BIG5", "開啟檔案"),
        ("Shift_JIS", "SHIFT_JIS", "ファイルを開く"),
        ("windows-1251", "CP1251", "Открыть файл"),
        ("windows-1252", "CP1252", "Ouvrir le fichier « café »"),
    ] {
        let utf8 = format!(
            "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset={charset}\\n\"\n\
             \"Content-Transfer-Encoding: 8bit\\n\"\n\"Language: xx\\n\"\n\n\
             #: ui.c:12\nmsgid \"Open the file\"\nmsgstr \"{text}\"\n\n\
             msgctxt \"menu\"\nmsgid \"Close\"\nmsgstr \"\"\n"
        );
        let original = work.path().join(format!("{iconv}.po"));
        let mut child = std::process::Command::new("iconv")
            .args(["-f", "UTF-8", "-t", iconv])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(utf8.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "iconv {iconv}");
        assert_ne!(out.stdout, utf8.as_bytes(), "{iconv} wrote UTF-8");
        std::fs::write(&original, &out.stdout).unwrap();

        let name = format!("{iconv}.po");
        let (id, page) = project_of(&t, &name, &out.stdout).await;
        let texts: Vec<_> = page
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Text { translation, .. } => Some(translation.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, vec![Some(text.to_owned()), None], "{iconv}");

        let (_, exported) = export(&t, id, ExportFormat::Po).await;
        assert!(exported.contains("charset=UTF-8"), "{iconv}");
        let path = work.path().join(format!("{iconv}-out.po"));
        std::fs::write(&path, &exported).unwrap();
        for args in [
            vec!["--check", "-o", "/dev/null", path.to_str().unwrap()],
            vec![],
        ] {
            let output = if args.is_empty() {
                std::process::Command::new("msgcmp")
                    .args(["--use-untranslated", path.to_str().unwrap()])
                    .arg(&original)
                    .output()
            } else {
                std::process::Command::new("msgfmt").args(&args).output()
            }
            .unwrap();
            assert!(
                output.status.success(),
                "{iconv}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }

        // Its own export, and the original, come back with nothing to do.
        let merge = |content: String| {
            let core = t.core.clone();
            async move {
                core.import_translations(
                    id,
                    TranslationImport {
                        format: TranslationFormat::Po,
                        content,
                        force: false,
                        take: Vec::new(),
                    },
                )
                .await
                .unwrap_or_else(|e| panic!("{e}"))
            }
        };
        let legacy = units::decode(TranslationFormat::Po, &name, &out.stdout).unwrap();
        for content in [exported.clone(), legacy] {
            let report = merge(content).await;
            assert_eq!(
                (
                    report.updated,
                    report.conflicts.len(),
                    report.unmatched.len()
                ),
                (0, 0, 0),
                "{iconv}: {report:?}"
            );
        }
        // A reviewer fills the other entry in the export.
        let reviewed = exported.replacen(
            "msgid \"Close\"\nmsgstr \"\"",
            &format!("msgid \"Close\"\nmsgstr \"{text}!\""),
            1,
        );
        assert_ne!(reviewed, exported, "{iconv}");
        let report = merge(reviewed).await;
        assert_eq!(
            (report.updated, report.conflicts.len()),
            (1, 0),
            "{iconv}: {report:?}"
        );
    }
}
