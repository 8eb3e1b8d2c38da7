//! The onnx backends (PP-OCR's models in the helper): what they read and
//! find, and a model file that is wrong.

use super::*;

/// The `onnx` backend of `ocr` (PP-OCRv6 in tract) on the generated page
/// set, balloons found by the built-in `detect`: the English pages and
/// the page of vertical Japanese, each in a project of its language.
#[tokio::test(flavor = "multi_thread")]
async fn the_onnx_backend_reads_english_and_vertical_japanese() {
    let test = "the_onnx_backend_reads_english_and_vertical_japanese";
    let Some((det, rec)) = ppocr_models(test) else {
        return;
    };
    let Some((dir, truth)) = page_set(test, "pages-onnx") else {
        return;
    };
    let t = onnx_core(&det, &rec);
    let pages = truth["pages"].as_array().unwrap();
    let mut scores = BTreeMap::new();
    for language in ["en", "ja"] {
        let id = t.session(language);
        let chosen: Vec<&Value> = pages
            .iter()
            .filter(|p| {
                let ja = p["balloons"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|b| b["lang"] == "ja");
                ja == (language == "ja")
            })
            .collect();
        let files = chosen
            .iter()
            .map(|p| {
                let name = format!("{}.png", p["name"].as_str().unwrap());
                ImageFile {
                    bytes: std::fs::read(dir.join(&name)).unwrap(),
                    name,
                }
            })
            .collect();
        t.core.import_files(id, files).await.unwrap();
        let patch = ProjectPatch {
            source_language: Some(Some(language.into())),
            ..ProjectPatch::default()
        };
        t.core.apply(id, Op::UpdateProject { patch }).await.unwrap();
        run(&t, id, &["detect", "ocr"]).await;
        let scene = t.core.scene(id).await.unwrap().scene;
        let (mut balloons, mut exact, mut chars, mut errors) = (0, 0, 0, 0);
        for (truth, page) in chosen.iter().zip(&scene.pages) {
            let nodes = found(page);
            for balloon in truth["balloons"].as_array().unwrap() {
                if balloon["lang"] != language {
                    continue;
                }
                let (outline, text_box) = (box4(&balloon["box"]), box4(&balloon["text_box"]));
                let want = normal(balloon["text"].as_str().unwrap());
                let got = nodes
                    .iter()
                    .find(|(b, r, _)| iou(*r, outline) >= 0.5 || iou(*b, text_box) >= 0.5)
                    .map_or_else(String::new, |(_, _, text)| normal(text));
                balloons += 1;
                exact += usize::from(got == want);
                chars += want.chars().count();
                errors += strsim::levenshtein(&got, &want);
                if got != want {
                    eprintln!("onnx {language}: read {got:?} for {want:?}");
                }
            }
        }
        let accuracy = 1.0 - errors as f64 / chars.max(1) as f64;
        eprintln!(
            "onnx {language}: {exact} of {balloons} balloons exact, characters {:.1} %",
            accuracy * 100.0
        );
        scores.insert(language, (balloons, exact, accuracy));
    }
    // Spec 13: Japanese (onnx) at least 90 % of characters; English as
    // well as Tesseract's targets.
    let (balloons, _, japanese) = scores["ja"];
    assert!(balloons >= 3, "{scores:?}");
    assert!(
        japanese >= 0.90,
        "Japanese characters {japanese:.3}: {scores:?}"
    );
    let (balloons, exact, english) = scores["en"];
    assert!(
        english >= 0.97,
        "English characters {english:.3}: {scores:?}"
    );
    assert!(exact as f64 >= 0.90 * balloons as f64, "{scores:?}");
}

/// Model files that are not what `ocr.backend = "onnx"` needs: the job
/// fails naming the file and why, and nothing changes.
#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_model_file_is_named_and_changes_nothing() {
    let test = "a_wrong_model_file_is_named_and_changes_nothing";
    let Some((det, _)) = ppocr_models(test) else {
        return;
    };
    let junk = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(junk.path(), b"not a model").unwrap();
    let cases = [
        // The detector where the recogniser goes: no dictionary.
        (det.clone(), det.clone(), "has no `character` metadata"),
        (
            det.clone(),
            junk.path().to_path_buf(),
            "cannot be read as an ONNX model",
        ),
        (
            junk.path().to_path_buf(),
            det.clone(),
            "cannot be loaded as an ONNX model",
        ),
    ];
    for (detector, model, want) in cases {
        let t = onnx_core(&detector, &model);
        let id = t.session("wrong");
        let page_id = blank_page(&t, id).await;
        let add = serde_json::json!({ "type": "AddNode", "page": page_id, "node": {
            "transform": { "x": 10, "y": 10, "width": 100, "height": 40 }, "kind": { "type": "text" } } });
        t.core
            .apply(id, serde_json::from_value(add).unwrap())
            .await
            .unwrap();
        let before = t.core.scene(id).await.unwrap();
        let mut sub = t.core.subscribe(None);
        let job = t
            .core
            .start_pipeline(id, spec(&["ocr"]), Approval::Unattended)
            .await
            .unwrap();
        let events = follow(&mut sub, job).await;
        let Some(Event::JobFinished {
            error: Some(message),
            ..
        }) = events.last()
        else {
            panic!("{events:?}")
        };
        assert!(message.contains(want), "{message}");
        let after = t.core.scene(id).await.unwrap();
        assert_eq!((before.epoch, before.scene), (after.epoch, after.scene));
    }
}
