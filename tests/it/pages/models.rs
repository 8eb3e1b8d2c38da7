//! Model plug-ins (spec 13), with small models the tests build with the
//! `onnx` package (`tests/pages/models.py`): a box detector in YOLO's and
//! in RT-DETR's layout whose boxes are a generated page's truth, and an
//! inpainting model (normalised convolution). What `detect` and `clean`
//! make with them, a model of the wrong kind, and `quire models list`.

use quire_core::engines::clean::{CleanBackend, CleanSettings};
use quire_core::engines::detect::{BoxLabel, ModelFormat};

use quire_model::op::NodePatch;

use super::*;

/// The models built for `page` of the set in `dir`, in `dir/models`.
fn built(test: &str, dir: &Path, page: &str) -> Option<PathBuf> {
    let python = crate::mcp::python_with(test, "PIL, onnx")?;
    let out = dir.join("models");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pages/models.py");
    let done = Command::new(python)
        .arg(script)
        .arg(&out)
        .arg(dir.join("truth.json"))
        .arg(page)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    Some(out)
}

fn box_core(model: PathBuf, format: ModelFormat, labels: Vec<BoxLabel>) -> TestCore {
    TestCore::configured(move |c| {
        c.settings.update(|d: &mut DetectSettings| {
            d.backend = DetectBackend::Onnx;
            d.model = Some(ModelRef::File(model));
            d.model_format = format;
            d.labels = labels;
        });
    })
}

const LABELS: [BoxLabel; 4] = [
    BoxLabel::Bubble,
    BoxLabel::Text,
    BoxLabel::FreeText,
    BoxLabel::Ignore,
];

/// Either layout gives one node per balloon and per caption, each where
/// its truth is, balloons with their outline as region; the suppressed
/// copies, the ignored class and the weak box give none; a second run
/// changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_box_detector_in_either_layout_finds_each_balloon_once() {
    let test = "a_box_detector_in_either_layout_finds_each_balloon_once";
    let Some((dir, truth)) = page_set(test, "pages-box-models") else {
        return;
    };
    let Some(models) = built(test, &dir, "page-01") else {
        return;
    };
    let page = truth["pages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "page-01")
        .unwrap()
        .clone();
    let blocks = page["balloons"].as_array().unwrap();
    for (format, file) in [
        (ModelFormat::Yolo, "yolo.onnx"),
        (ModelFormat::Detr, "detr.onnx"),
    ] {
        let t = box_core(models.join(file), format, LABELS.to_vec());
        let id = page_set_session(&t, &dir, std::slice::from_ref(&page)).await;
        run(&t, id, &["detect"]).await;
        let scene = t.core.scene(id).await.unwrap().scene;
        let nodes = found(&scene.pages[0]);
        assert_eq!(nodes.len(), blocks.len(), "{format:?}: {nodes:?}");
        for block in blocks {
            let (outline, text) = (box4(&block["box"]), box4(&block["text_box"]));
            let matching: Vec<_> = nodes
                .iter()
                .filter(|(b, _, _)| iou(*b, text) >= 0.5)
                .collect();
            assert_eq!(matching.len(), 1, "{format:?}: {block} in {nodes:?}");
            if block["kind"] == "balloon" {
                let region = matching[0].1;
                assert!(
                    iou(region, outline) >= 0.6,
                    "{format:?}: region {region:?} for the balloon {outline:?}"
                );
            }
        }
        run(&t, id, &["detect"]).await;
        let again = t.core.scene(id).await.unwrap().scene;
        assert_eq!(
            scene, again,
            "{format:?}: detect run again changed the scene"
        );
    }
}

/// Model files of the wrong kind or layout: the job fails naming the
/// layout or the inputs, and nothing changes.
#[tokio::test(flavor = "multi_thread")]
async fn a_model_of_the_wrong_kind_is_named_and_changes_nothing() {
    let test = "a_model_of_the_wrong_kind_is_named_and_changes_nothing";
    let Some((dir, truth)) = page_set(test, "pages-wrong-models") else {
        return;
    };
    let Some(models) = built(test, &dir, "page-01") else {
        return;
    };
    let page = truth["pages"][0].clone();
    let three = LABELS[..3].to_vec();
    let cases = [
        // Four classes in the model, three in the labels.
        (
            box_core(models.join("yolo.onnx"), ModelFormat::Yolo, three),
            "detect",
            "are not the yolo layout for 3 classes",
        ),
        (
            box_core(
                models.join("inpaint.onnx"),
                ModelFormat::Detr,
                LABELS.to_vec(),
            ),
            "detect",
            "has 2 inputs; a box detector takes one",
        ),
        (
            inpaint_core(models.join("detr.onnx")),
            "clean",
            "has 1 input; an inpainting model takes two",
        ),
    ];
    for (t, step, want) in cases {
        let id = page_set_session(&t, &dir, std::slice::from_ref(&page)).await;
        let before = t.core.scene(id).await.unwrap();
        let mut sub = t.core.subscribe(None);
        let job = t
            .core
            .start_pipeline(id, spec(&[step]), Approval::Unattended)
            .await
            .unwrap();
        let events = follow(&mut sub, job).await;
        // A model that does not load fails the job; one that loads but
        // answers in another layout fails each page.
        let named = events.iter().any(|e| match e {
            Event::JobFinished {
                error: Some(message),
                ..
            } => message.contains(want),
            Event::JobWarning { finding, .. } => {
                finding.rule == "engine-failed" && finding.message.contains(want)
            }
            _ => false,
        });
        assert!(named, "{step}: {want:?} not in {events:?}");
        let after = t.core.scene(id).await.unwrap();
        assert_eq!((before.epoch, before.scene), (after.epoch, after.scene));
    }
}

fn inpaint_core(model: PathBuf) -> TestCore {
    TestCore::configured(move |c| {
        c.settings.update(|s: &mut CleanSettings| {
            s.backend = CleanBackend::Onnx;
            s.model = Some(model);
            s.input_size = 256;
        });
    })
}

/// The inpainting model fills the text on the art (the builtin's Telea
/// and patches not run), on the held-out set's hatching and screentone:
/// the cleaned pages differ from the builtin's only inside the masks, no
/// pixel outside them changes, no glyph ink is left.
#[tokio::test(flavor = "multi_thread")]
async fn an_inpainting_model_fills_the_text_on_the_art_and_nothing_else() {
    let test = "an_inpainting_model_fills_the_text_on_the_art_and_nothing_else";
    let Some((dir, truth)) = page_set_seeded(test, "pages-inpaint-model", Some(7)) else {
        return;
    };
    let Some(models) = built(test, &dir, "page-01") else {
        return;
    };
    let pages = truth["pages"].as_array().unwrap();
    let mut cleaned = Vec::new();
    // A mean of the art around is no LaMa: on hatching it leaves grey
    // where the strokes were, which the ink count takes in part for ink.
    for (t, most_ink) in [
        (inpaint_core(models.join("inpaint.onnx")), 0.05),
        (TestCore::new(), 0.01),
    ] {
        let id = page_set_session(&t, &dir, pages).await;
        run(&t, id, &["detect"]).await;
        // Every block found is given a source and a translation, so
        // clean clears them all.
        let scene = t.core.scene(id).await.unwrap().scene;
        let mut ops = Vec::new();
        for page in &scene.pages {
            for node in &page.nodes {
                if matches!(node.kind, NodeKind::Text { .. }) {
                    for patch in [
                        NodePatch::source(Some(Some("TEXT".into()))),
                        NodePatch::text(Some(Some("TEXTE".into())), None),
                    ] {
                        ops.push(Op::UpdateNode {
                            page: page.id,
                            id: node.id,
                            patch,
                            based_on: None,
                        });
                    }
                }
            }
        }
        t.core
            .apply(id, Op::Batch { ops, label: None })
            .await
            .unwrap();
        run(&t, id, &["clean"]).await;
        let scene = t.core.scene(id).await.unwrap().scene;
        let mut report = Report::default();
        let mut images = Vec::new();
        for page in &scene.pages {
            images.push(score_clean(&t, id, &dir, page, &mut report).await);
        }
        assert_eq!(report.changed_outside, 0, "{report:?}");
        let ink = report.ratios().ink;
        assert!(ink < most_ink, "ink left {ink:.4}: {report:?}");
        cleaned.push(images);
    }
    let differ: usize = cleaned[0]
        .iter()
        .zip(&cleaned[1])
        .map(|(a, b)| a.pixels().zip(b.pixels()).filter(|(p, q)| p != q).count())
        .sum();
    assert!(
        differ > 1000,
        "the model changed {differ} pixels of the builtin's"
    );
    for (page, image) in pages.iter().zip(&cleaned[0]) {
        let name = page["name"].as_str().unwrap();
        image.save(dir.join(format!("{name}.model.png"))).unwrap();
    }
}

/// `quire models list` loads each kind of model as its settings say, and
/// names what it is.
#[test]
fn models_list_names_box_detectors_and_inpainters() {
    let test = "models_list_names_box_detectors_and_inpainters";
    let Some((dir, _)) = page_set(test, "pages-list-models") else {
        return;
    };
    let Some(models) = built(test, &dir, "page-01") else {
        return;
    };
    let s = crate::harness::Sandbox::new();
    s.user_config(&format!(
        "[detect]\nbackend = \"onnx\"\nmodel = \"{}\"\nmodel_format = \"detr\"\n\
         labels = [\"bubble\", \"text\", \"free-text\", \"ignore\"]\n\
         [clean]\nbackend = \"onnx\"\nmodel = \"{}\"\ninput_size = 256\n",
        models.join("detr.onnx").display(),
        models.join("inpaint.onnx").display(),
    ));
    let done = s.quire().args(["models", "list", "--json"]).run();
    assert_eq!(done.code(), 0, "{}", done.stderr());
    let listed: Value = serde_json::from_str(&done.stdout()).unwrap();
    let rows: Vec<(&str, &str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["key"].as_str().unwrap(),
                m["kind"].as_str().unwrap(),
                m["loads"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("clean.model", "inpainting model", "ok"),
            ("detect.model", "box detector", "ok")
        ]
    );
}
