//! A project archive is input, not trusted state: forged `scene.json` and
//! `ops.log` contents, duplicate entries and missing blobs are refused and
//! create nothing; a project zipped with its log replays to the scene it
//! had; a property test over valid and corrupted archives checks that
//! every accepted one reopens equal to its replay and every refused one
//! leaves nothing.

use std::io::{Cursor, Read, Write};
use std::path::Path;

use proptest::prelude::*;
use quire_model::apply::apply;
use quire_model::hash::BlobHash;
use quire_model::ids::{NodeId, PageId};
use quire_model::op::Op;
use quire_model::scene::Scene;
use quire_store::storage::SnapshotFile;
use quire_store::storage::log::{self, FrameKind};
use serde_json::{Value, json};

use crate::core_base::{TestCore, add_page, archive_bytes, image_page, text_node, translate};

/// An archive's entries: name and bytes, in order.
type Entries = Vec<(String, Vec<u8>)>;

/// The entries of a zip, in order.
fn entries_of(bytes: &[u8]) -> Entries {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).unwrap();
            let mut data = Vec::new();
            f.read_to_end(&mut data).unwrap();
            (f.name().unwrap().into_owned(), data)
        })
        .collect()
}

/// A zip of `entries`, names written as given (twice, if given twice: the
/// writer refuses that, so the second is written under a stand-in name of
/// the same length, renamed in the bytes afterwards, as a forger would).
fn zip_of(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let mut seen = std::collections::HashSet::new();
    let mut renames = Vec::new();
    for (name, data) in entries {
        let written = if seen.insert(name.clone()) || name.is_empty() {
            name.clone()
        } else {
            let stand_in = format!("{}#", &name[..name.len() - 1]);
            renames.push((stand_in.clone(), name.clone()));
            stand_in
        };
        zip.start_file(written.as_str(), zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(data).unwrap();
    }
    let mut bytes = zip.finish().unwrap().into_inner();
    for (from, to) in renames {
        let (from, to) = (from.as_bytes(), to.as_bytes());
        let mut i = 0;
        while i + from.len() <= bytes.len() {
            if &bytes[i..i + from.len()] == from {
                bytes[i..i + from.len()].copy_from_slice(to);
                i += from.len();
            } else {
                i += 1;
            }
        }
    }
    bytes
}

/// A page with one text node.
fn text_page(name: &str, text: &str) -> Op {
    let mut op = add_page(name);
    if let Op::AddPage { page, .. } = &mut op {
        page.nodes = Some(vec![text_node(text)]);
    }
    op
}

fn png() -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(8, 6, image::Rgb([9, 80, 200])))
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

fn blob_entry(bytes: &[u8]) -> (String, Vec<u8>) {
    let hex = BlobHash::of(bytes).to_hex();
    (format!("blobs/{}/{}", &hex[..2], &hex[2..]), bytes.to_vec())
}

/// A project with text and an image page, as `export` writes it.
async fn exported() -> (TestCore, Entries) {
    let t = TestCore::new();
    let id = t.session("Forged");
    let blob = t.core.put_blob(id, png()).await.unwrap();
    let page = t
        .core
        .apply(id, text_page("one", "Hello"))
        .await
        .unwrap()
        .created;
    t.core
        .apply(id, translate(PageId(page[0]), NodeId(page[1]), "Bonjour"))
        .await
        .unwrap();
    t.core
        .apply(id, image_page("art", blob, (8, 6), None))
        .await
        .unwrap();
    let bytes = archive_bytes(&t.core, id).await;
    (t, entries_of(&bytes))
}

fn scene_of(entries: &[(String, Vec<u8>)]) -> Value {
    let (_, bytes) = entries.iter().find(|(n, _)| n == "scene.json").unwrap();
    serde_json::from_slice(bytes).unwrap()
}

/// `entries` with `scene.json` replaced by `scene` (no checksum: anyone can
/// write one, so it proves nothing either way).
fn with_scene(entries: &[(String, Vec<u8>)], scene: &Value) -> Entries {
    let mut scene = scene.clone();
    scene.as_object_mut().unwrap().remove("sum");
    entries
        .iter()
        .map(|(n, b)| match n.as_str() {
            "scene.json" => (n.clone(), serde_json::to_vec(&scene).unwrap()),
            _ => (n.clone(), b.clone()),
        })
        .collect()
}

fn with_log(entries: &[(String, Vec<u8>)], log: Vec<u8>) -> Entries {
    entries
        .iter()
        .map(|(n, b)| match n.as_str() {
            "ops.log" => (n.clone(), log.clone()),
            _ => (n.clone(), b.clone()),
        })
        .collect()
}

/// Everything in `dir`, to show that a refusal created nothing.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A frame of `op` applied at `epoch` to `scene`, as the log holds it.
fn frame(scene: &mut Scene, epoch: u64, op: Op, blobs: &[BlobHash]) -> Vec<u8> {
    let applied = apply(scene, op, &|h| blobs.contains(h)).unwrap();
    line(epoch, &applied.op, &applied.inverse)
}

/// A log line as quire writes it (checksummed).
fn line(epoch: u64, op: &Op, inverse: &Op) -> Vec<u8> {
    log::encode_parts(
        epoch,
        &log::Parts {
            kind: FrameKind::Apply,
            at: "2026-12-02T10:00:00.000Z",
            op,
            inverse,
            group: None,
            by: None,
            agent: None,
            mcp_session: None,
            undoes: None,
        },
    )
    .unwrap()
    .bytes
}

/// A frame whose op is a batch nested past the limit: well formed,
/// checksummed, and refused as a live op would be.
fn a_frame_nested_too_deep(good: &Entries, scene: &Value) -> (&'static str, Entries, &'static str) {
    let mut deep = Op::Batch {
        ops: vec![Op::UpdateProject {
            patch: quire_model::op::ProjectPatch {
                name: Some("deep".into()),
                ..Default::default()
            },
        }],
        label: None,
    };
    for _ in 0..9 {
        deep = Op::Batch {
            ops: vec![deep],
            label: None,
        };
    }
    let snapshot: SnapshotFile = SnapshotFile {
        epoch: scene["epoch"].as_u64().unwrap(),
        scene: serde_json::from_value(scene["scene"].clone()).unwrap(),
    };
    let mut replayed = snapshot.scene.clone();
    let line = frame(&mut replayed, snapshot.epoch + 1, deep, &[]);
    (
        "a frame nested 10 deep",
        with_log(good, line),
        "nest at most 8",
    )
}

#[tokio::test]
async fn forged_archives_are_refused_by_what_is_wrong_and_create_nothing() {
    let (t, good) = exported().await;
    let scene = scene_of(&good);
    let pages = scene["scene"]["pages"].as_array().unwrap().clone();
    let mut cases: Vec<(&str, Entries, &str)> = Vec::new();

    let mut long = scene.clone();
    long["scene"]["pages"][0]["name"] = json!("x".repeat(500));
    cases.push((
        "a name over the limit",
        with_scene(&good, &long),
        "500 characters",
    ));

    let mut twice = scene.clone();
    twice["scene"]["pages"][1]["id"] = pages[0]["id"].clone();
    cases.push((
        "a page id twice",
        with_scene(&good, &twice),
        "already exists",
    ));

    let mut node_twice = scene.clone();
    node_twice["scene"]["pages"][1]["nodes"][0]["id"] = pages[0]["nodes"][0]["id"].clone();
    cases.push((
        "a node id twice",
        with_scene(&good, &node_twice),
        "appears twice",
    ));

    let without_blob: Entries = good
        .iter()
        .filter(|(n, _)| !n.starts_with("blobs/"))
        .cloned()
        .collect();
    cases.push(("a missing blob", without_blob, "blob"));

    let mut text = scene.clone();
    text["scene"]["pages"][0]["nodes"][0]["kind"]["translation"] =
        json!("é".repeat((1 << 20) / 2 + 1));
    cases.push((
        "a translation over 1 MiB",
        with_scene(&good, &text),
        "1 MiB",
    ));

    let mut duplicated = good.clone();
    duplicated.push(
        good.iter()
            .find(|(n, _)| n == "scene.json")
            .unwrap()
            .clone(),
    );
    cases.push(("scene.json twice", duplicated, "twice"));

    cases.push((
        "a bad line in the log",
        with_log(&good, b"{\"not\":\"a frame\"}\n".to_vec()),
        "ops.log",
    ));

    cases.push(a_frame_nested_too_deep(&good, &scene));

    // An undo history of another epoch than the scene's, and one whose
    // checksum does not hold.
    let history = |epoch: u64| {
        let stacks = quire_model::history::Stacks {
            undo: Vec::new(),
            redo: Vec::new(),
        };
        quire_store::storage::HistoryFile { epoch, stacks }
            .encode()
            .unwrap()
    };
    let epoch = scene["epoch"].as_u64().unwrap();
    let mut stale = good.clone();
    stale.push(("history.json".into(), history(epoch + 3)));
    cases.push((
        "a history of another epoch",
        stale,
        "history.json is of epoch",
    ));
    let mut forged = good.clone();
    let mut bytes = history(epoch);
    let at = bytes.len() - 3;
    bytes[at] = b'x';
    forged.push(("history.json".into(), bytes));
    cases.push(("a forged history", forged, "history.json"));

    // project.toml says another epoch than its scene and log reach.
    let declared: Entries = good
        .iter()
        .map(|(n, b)| match n.as_str() {
            "project.toml" => {
                let text = String::from_utf8(b.clone()).unwrap();
                let said = text
                    .lines()
                    .map(|l| {
                        if l.starts_with("epoch") {
                            format!("epoch = {}", epoch + 5)
                        } else {
                            l.to_owned()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                assert_ne!(said, text, "project.toml has no epoch: {text}");
                (n.clone(), said.into_bytes())
            }
            _ => (n.clone(), b.clone()),
        })
        .collect();
    cases.push((
        "an epoch its log does not reach",
        declared,
        "project.toml says epoch",
    ));

    for (what, entries, expected) in cases {
        let before = listing(t.dir.path());
        let dest = t.dir.path().join("imported");
        let err = t
            .core
            .blocking()
            .import_archive(&zip_of(&entries), &dest)
            .expect_err(what);
        assert_eq!(err.code(), "invalid_input", "{what}: {err}");
        assert!(
            err.to_string().contains("not a quire archive") && err.to_string().contains(expected),
            "{what}: {err}"
        );
        assert_eq!(listing(t.dir.path()), before, "{what}: something was left");
    }
}

#[tokio::test]
async fn a_project_zipped_with_its_log_replays_to_the_scene_it_had() {
    let t = TestCore::new();
    let id = t.session("Zipped");
    for n in 0..5 {
        t.core.apply(id, add_page(&format!("p{n}"))).await.unwrap();
    }
    let live = t.core.scene(id).await.unwrap();
    let dir = t.project_path(id);
    let mut entries = Vec::new();
    for name in ["project.toml", "scene.json", "ops.log"] {
        entries.push((name.to_owned(), std::fs::read(dir.join(name)).unwrap()));
    }
    assert!(!entries[2].1.is_empty(), "the log holds the changes");
    let dest = t.dir.path().join("copy");
    let opened = t
        .core
        .blocking()
        .import_archive(&zip_of(&entries), &dest)
        .unwrap();
    assert_ne!(opened.project_id, t.core.session(id).unwrap().project_id);
    let copy = t.core.scene(opened.id).await.unwrap();
    assert_eq!(copy.epoch, live.epoch);
    assert_eq!(copy.scene.pages, live.scene.pages);
    assert_eq!(copy.scene.project.name, live.scene.project.name);
}

/// What a test archive can be made to say.
#[derive(Debug, Clone)]
enum Corruption {
    None,
    FlipByte { entry: usize, at: usize, bit: u8 },
    DropEntry(usize),
    DuplicateEntry(usize),
    TruncateLog(usize),
    ExtraEntry(String),
    LogFrame(Box<Op>),
    RenamePage(String),
}

fn corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![
        Just(Corruption::None),
        (0usize..8, 0usize..4096, 0u8..8).prop_map(|(entry, at, bit)| Corruption::FlipByte {
            entry,
            at,
            bit
        }),
        (0usize..8).prop_map(Corruption::DropEntry),
        (0usize..8).prop_map(Corruption::DuplicateEntry),
        (0usize..512).prop_map(Corruption::TruncateLog),
        "[a-z./]{1,12}".prop_map(Corruption::ExtraEntry),
        prop_oneof![
            Just(add_page("added")),
            Just(Op::RemovePage { id: PageId::new() }),
            "[a-z]{0,3}".prop_map(|n| add_page(&n)),
            Just(Op::UpdateProject {
                patch: quire_model::op::ProjectPatch {
                    target_language: Some(Some("not a tag!".into())),
                    ..Default::default()
                },
            }),
        ]
        .prop_map(|op| Corruption::LogFrame(Box::new(op))),
        prop_oneof!["[a-z]{1,8}", "\\PC{190,210}", Just("\u{7}bell".to_owned())]
            .prop_map(Corruption::RenamePage),
    ]
}

/// A small valid archive: two pages (one an image) and a log frame.
fn base_archive() -> (Entries, Scene, Vec<BlobHash>) {
    let png = png();
    let blob = BlobHash::of(&png);
    let mut scene = Scene::new("Prop", "2026-12-01T00:00:00.000Z");
    apply(&mut scene, text_page("text", "Hello"), &|_| false).unwrap();
    apply(&mut scene, image_page("art", blob, (8, 6), None), &|h| {
        *h == blob
    })
    .unwrap();
    let snapshot = SnapshotFile {
        epoch: 2,
        scene: scene.clone(),
    };
    let mut after = scene.clone();
    let line = frame(&mut after, 3, add_page("logged"), &[blob]);
    let toml = format!(
        "id = \"{}\"\nname = \"Prop\"\ncreatedAt = \"2026-12-01T00:00:00.000Z\"\nformatVersion = {}\nepoch = 3\n",
        uuid::Uuid::now_v7(),
        quire_store::storage::FORMAT_VERSION
    );
    let entries = vec![
        ("project.toml".to_owned(), toml.into_bytes()),
        ("scene.json".to_owned(), snapshot.encode().unwrap()),
        ("ops.log".to_owned(), line),
        blob_entry(&png),
    ];
    (entries, after, vec![blob])
}

fn corrupt(entries: &mut Entries, scene: &Scene, how: &Corruption) {
    let n = entries.len();
    match how {
        Corruption::None => {}
        Corruption::FlipByte { entry, at, bit } => {
            let data = &mut entries[entry % n].1;
            if !data.is_empty() {
                let i = at % data.len();
                data[i] ^= 1 << bit;
            }
        }
        Corruption::DropEntry(i) => {
            entries.remove(i % n);
        }
        Corruption::DuplicateEntry(i) => {
            let copy = entries[i % n].clone();
            entries.push(copy);
        }
        Corruption::TruncateLog(at) => {
            if let Some((_, log)) = entries.iter_mut().find(|(name, _)| name == "ops.log") {
                log.truncate(*at.min(&log.len()));
            }
        }
        Corruption::ExtraEntry(name) => entries.push((name.clone(), b"x".to_vec())),
        Corruption::LogFrame(op) => {
            let mut after = scene.clone();
            let applied = apply(&mut after, (**op).clone(), &|_| true);
            let (op, inverse) = match applied {
                Ok(a) => (a.op, a.inverse),
                // An op that does not apply is written as given: a forger
                // need not have applied it.
                Err(_) => ((**op).clone(), (**op).clone()),
            };
            if let Some((_, log)) = entries.iter_mut().find(|(name, _)| name == "ops.log") {
                log.extend(line(4, &op, &inverse));
            }
        }
        Corruption::RenamePage(name) => {
            let (_, bytes) = entries.iter_mut().find(|(n, _)| n == "scene.json").unwrap();
            let mut scene: Value = serde_json::from_slice(bytes).unwrap();
            scene.as_object_mut().unwrap().remove("sum");
            scene["scene"]["pages"][0]["name"] = json!(name);
            *bytes = serde_json::to_vec(&scene).unwrap();
        }
    }
}

/// The scene an archive says, replayed in memory: its snapshot, then its
/// log's frames, each through `apply`.
fn replay(entries: &[(String, Vec<u8>)], blobs: &[BlobHash]) -> Option<(u64, Scene)> {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in entries {
        if name == "scene.json" || name == "ops.log" {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
    }
    let snapshot = SnapshotFile::read(&dir.path().join("scene.json")).ok()??;
    let recovered = log::read(&dir.path().join("ops.log"), snapshot.epoch).ok()?;
    let (mut scene, mut epoch) = (snapshot.scene, snapshot.epoch);
    for (_, e, frame) in recovered.frames {
        apply(&mut scene, frame.op, &|h| blobs.contains(h)).ok()?;
        epoch = e;
    }
    Some((epoch, scene))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_accepted_archive_reopens_as_its_replay_and_every_refused_one_creates_nothing(
        how in corruption()
    ) {
        let (mut entries, scene, blobs) = base_archive();
        corrupt(&mut entries, &scene, &how);
        let bytes = zip_of(&entries);
        let t = TestCore::new();
        let before = listing(t.dir.path());
        let dest = t.dir.path().join("imported");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        match t.core.blocking().import_archive(&bytes, &dest) {
            Ok(opened) => {
                let (epoch, expected) = replay(&entries, &blobs)
                    .expect("an accepted archive replays");
                let got = rt.block_on(t.core.scene(opened.id)).unwrap();
                prop_assert_eq!(got.epoch, epoch);
                prop_assert_eq!(&got.scene.pages, &expected.pages);
                // And it reopens as it was.
                t.core.blocking().close_session(opened.id).unwrap();
                let again = t.core.blocking().open_project(&dest).unwrap();
                let reopened = rt.block_on(t.core.scene(again.id)).unwrap();
                prop_assert_eq!(reopened.epoch, epoch);
                prop_assert_eq!(&reopened.scene.pages, &expected.pages);
            }
            Err(e) => {
                prop_assert_eq!(listing(t.dir.path()), before, "{:?} left something: {}", how, e);
                prop_assert!(
                    ["invalid_input", "conflict"].contains(&e.code()),
                    "{:?}: {} ({})", how, e, e.code()
                );
            }
        }
    }
}
