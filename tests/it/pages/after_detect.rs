//! What happens to a page after detection: OCR of the nodes a pipeline
//! names, Tesseract reading the typeset translations, and a new detection
//! replacing only what the last one placed.

use super::*;

/// "Read" on one box: `ocr` with `nodes` reads only the nodes named (on
/// their page, the pipeline's default), and a node id that is not a text
/// node of the scene is refused before anything runs.
#[tokio::test(flavor = "multi_thread")]
async fn ocr_reads_only_the_nodes_a_pipeline_names() {
    let test = "ocr_reads_only_the_nodes_a_pipeline_names";
    let Some((dir, truth)) = page_set(test, "pages-nodes") else {
        return;
    };
    if !tesseract(test) {
        return;
    }
    let t = TestCore::new();
    let pages = truth["pages"].as_array().unwrap();
    let id = page_set_session(&t, &dir, &pages[..2]).await;
    run(&t, id, &["detect"]).await;
    let scene = t.core.scene(id).await.unwrap().scene;
    let texts = |page: &Page| {
        page.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Text { text, .. } => Some((n.id, text.clone())),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let chosen = texts(&scene.pages[1])[0].0;

    let refused = quire_core::jobs::PipelineSpec {
        nodes: Some(vec![quire_model::ids::NodeId::new()]),
        ..spec(&["ocr"])
    };
    let err = t
        .core
        .start_pipeline(id, refused, Approval::Unattended)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown text node id"), "{err}");
    assert_eq!(t.core.scene(id).await.unwrap().scene, scene);

    let mut sub = t.core.subscribe(None);
    let one = quire_core::jobs::PipelineSpec {
        nodes: Some(vec![chosen]),
        ..spec(&["ocr"])
    };
    let job = t
        .core
        .start_pipeline(id, one, Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    let started = events.iter().find_map(|e| match e {
        Event::JobStarted { total_pages, .. } => Some(*total_pages),
        _ => None,
    });
    assert_eq!(started, Some(1), "the named node's page only");
    let after = t.core.scene(id).await.unwrap().scene;
    for page in &after.pages {
        for (node, text) in texts(page) {
            let read = text.is_some_and(|t| !t.trim().is_empty());
            assert_eq!(read, node == chosen, "{node}: {:?}", texts(page));
        }
    }
}

/// The whole page path on generated pages: `detect` and `ocr`, a
/// translation given to every balloon read, `clean` and `render`; then Tesseract reads
/// each balloon of the rendered page: the translation is there (set in
/// the balloon's shape) and the source words are not.
#[tokio::test(flavor = "multi_thread")]
async fn tesseract_reads_the_translations_on_detected_cleaned_rendered_pages() {
    use quire_model::op::NodePatch;
    let test = "tesseract_reads_the_translations_on_detected_cleaned_rendered_pages";
    let Some((dir, truth)) = page_set(test, "pages-rendered") else {
        return;
    };
    if !tesseract(test) {
        return;
    }
    let t = TestCore::new();
    let pages = truth["pages"].as_array().unwrap();
    let id = page_set_session(&t, &dir, &pages[..2]).await;
    run(&t, id, &["detect", "ocr"]).await;
    let scene = t.core.scene(id).await.unwrap().scene;
    // Words that are not in the page set's English.
    let words = [
        "MAISON", "SOLEIL", "JARDIN", "FROMAGE", "CHATEAU", "VOITURE", "PLAGE", "MONTAGNE",
        "CUISINE", "FENETRE", "BATEAU", "ORANGE", "CHEVAL", "LAPIN", "FORET", "NUAGE",
    ];
    let mut given = Vec::new();
    let mut ops = Vec::new();
    for page in &scene.pages {
        for node in &page.nodes {
            let NodeKind::Text {
                text: Some(text), ..
            } = &node.kind
            else {
                continue;
            };
            let k = given.len() * 2;
            let translation = format!(
                "{} {}",
                words[k % words.len()],
                words[(k + 1) % words.len()]
            );
            ops.push(Op::UpdateNode {
                page: page.id,
                id: node.id,
                patch: NodePatch::text(Some(Some(translation.clone())), None),
                based_on: None,
            });
            given.push((page.id, node.id, normal(text), translation));
        }
    }
    t.core
        .apply(id, Op::Batch { ops, label: None })
        .await
        .unwrap();
    let findings = run(&t, id, &["clean", "render"]).await;
    // A block OCR could not read has no translation and keeps its text:
    // a note, never a warning.
    assert!(
        findings.iter().all(|f| f.rule == "kept-untranslated"),
        "{findings:?}"
    );
    let scene = t.core.scene(id).await.unwrap().scene;
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pages-rendered");
    let (mut read, mut sources_left) = (0, Vec::new());
    for (k, (page_id, node_id, source, translation)) in given.iter().enumerate() {
        let page = scene.page(*page_id).unwrap();
        let rendered = stored_image(&t, id, page, ImageRole::Rendered).await;
        let node = page.nodes.iter().find(|n| n.id == *node_id).unwrap();
        let (_, r, _) = found(page)
            .into_iter()
            .find(|(b, _, _)| (b[0], b[1]) == (node.transform.x, node.transform.y))
            .unwrap();
        let (x, y) = (r[0].max(0.0) as u32, r[1].max(0.0) as u32);
        let w = (r[2] as u32).min(rendered.width() - x);
        let h = (r[3] as u32).min(rendered.height() - y);
        // The balloon's interior alone (spec 12, "Legible"): what is
        // outside its region, or within 6 px of its edge (where the
        // outline runs), whitened.
        let NodeKind::Text {
            region: Some(region),
            ..
        } = &node.kind
        else {
            panic!("balloon {k} has no region");
        };
        let local: Vec<[f64; 2]> = region
            .iter()
            .map(|p| [p[0] - f64::from(x), p[1] - f64::from(y)])
            .collect();
        let outside: Vec<bool> = quire_vision::clean::polygon(&local, w, h)
            .into_iter()
            .enumerate()
            .map(|(i, inside)| {
                let (px, py) = (i as u32 % w, i as u32 / w);
                !inside || px == 0 || py == 0 || px + 1 == w || py + 1 == h
            })
            .collect();
        let near_edge = quire_vision::clean::grow(&outside, w, h, 6);
        let inside: Vec<bool> = near_edge.into_iter().map(|n| !n).collect();
        let mut cut = image::imageops::crop_imm(&rendered, x, y, w, h).to_image();
        for (i, p) in cut.pixels_mut().enumerate() {
            if !inside[i] {
                *p = image::Rgba([255; 4]);
            }
        }
        let path = out.join(format!("balloon-{k}.png"));
        cut.save(&path).unwrap();
        let said = Command::new("tesseract")
            .arg(&path)
            .args(["-", "--psm", "6"])
            .output()
            .unwrap();
        let said = normal(&String::from_utf8_lossy(&said.stdout));
        let seen: Vec<&str> = said.split(' ').collect();
        if translation.split(' ').all(|w| seen.contains(&w)) {
            read += 1;
        } else {
            eprintln!("balloon {k}: read {said:?} for {translation:?}");
        }
        sources_left.extend(
            source
                .split(' ')
                .filter(|w| w.len() >= 4 && seen.contains(w))
                .map(|w| format!("{k}: {w}")),
        );
    }
    eprintln!(
        "rendered: {read} of {} balloons read back; source words left: {sources_left:?}",
        given.len()
    );
    // Spec 12, "Legible": at least 95 % read back exactly.
    assert!(read * 100 >= given.len() * 95, "{read} of {}", given.len());
    assert!(sources_left.is_empty(), "{sources_left:?}");
}

/// `[detect] existing = "replace"`: the nodes an earlier `detect` placed
/// that no one has changed are found again — kept as they are when a
/// found block is exactly theirs, removed when not — while a person's box
/// and a detected node a person or an agent has since changed stay; the
/// run is one undo step, and running it again changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn replace_removes_only_what_detect_placed_and_no_one_changed() {
    use quire_model::op::{NewNode, NodePatch, TransformPatch};
    use quire_model::scene::Transform;
    use quire_model::workflow::{Overwrite, Writer};

    let t = TestCore::configured(|c| {
        c.settings
            .update(|detect: &mut DetectSettings| detect.existing = Existing::Replace);
    });
    let id = t.session("replace");
    let page = import_the_ocr_fixture(&t, id).await;
    // Three boxes on blank paper, each where no text is.
    let at = |x: f64| Transform {
        x,
        y: 240.0,
        width: 60.0,
        height: 30.0,
        rotation: None,
    };
    let square = |x: f64| vec![[x, 240.0], [x + 60.0, 240.0], [x + 60.0, 270.0], [x, 270.0]];
    let add = |transform: Transform, kind: NodeKind| Op::AddNode {
        page,
        node: NewNode {
            id: None,
            transform,
            visible: true,
            kind,
        },
        at: None,
    };
    let detector = Writer::Engine {
        id: "detect".into(),
        overwrite: Overwrite::Untranslated,
        user: None,
        client: None,
        session: None,
    };
    // A person's box; a person cannot mark a node as detect's.
    let mine = t
        .core
        .apply(id, add(at(600.0), NodeKind::found(square(600.0), "detect")))
        .await
        .unwrap();
    // What an earlier, worse detection left: one untouched, one a person
    // moved, one an agent read.
    let mut left = Vec::new();
    for x in [700.0, 780.0, 840.0] {
        let op = add(at(x), NodeKind::found(square(x), "detect"));
        left.push(t.core.apply_as(id, op, detector.clone()).await.unwrap());
    }
    let node_of = |r: &quire_core::ApplyResult| quire_model::ids::NodeId(r.created[0]);
    let moved = TransformPatch {
        y: Some(238.0),
        ..TransformPatch::default()
    };
    t.core
        .apply(
            id,
            Op::UpdateNode {
                page,
                id: node_of(&left[1]),
                patch: NodePatch {
                    transform: Some(moved),
                    ..NodePatch::default()
                },
                based_on: None,
            },
        )
        .await
        .unwrap();
    let mut read = NodePatch::text(None, None);
    if let Some(quire_model::op::KindPatch::Text { text, .. }) = &mut read.kind {
        *text = Some(Some("noise".into()));
    }
    let agent = Writer::Agent {
        client: "test 1".into(),
        user: None,
        below_review: None,
        session: None,
    };
    let op = Op::UpdateNode {
        page,
        id: node_of(&left[2]),
        patch: read,
        based_on: None,
    };
    t.core.apply_as(id, op, agent).await.unwrap();
    let before = t.core.scene(id).await.unwrap().scene;
    let found_by = |p: &Page, node| {
        let n = p.nodes.iter().find(|n| n.id == node)?;
        match &n.kind {
            NodeKind::Text { found_by, .. } => Some(found_by.clone()),
            _ => None,
        }
    };
    assert_eq!(found_by(&before.pages[0], node_of(&mine)), Some(None));
    assert_eq!(
        found_by(&before.pages[0], node_of(&left[0])),
        Some(Some("detect".into()))
    );
    assert_eq!(found_by(&before.pages[0], node_of(&left[1])), Some(None));
    assert_eq!(found_by(&before.pages[0], node_of(&left[2])), Some(None));

    run(&t, id, &["detect"]).await;
    let once = t.core.scene(id).await.unwrap().scene;
    let page_now = &once.pages[0];
    let texts: Vec<_> = text_nodes(page_now).collect();
    assert!(
        found_by(page_now, node_of(&left[0])).is_none(),
        "the untouched stale node stays"
    );
    for kept in [&mine, &left[1], &left[2]] {
        let was = before.pages[0].nodes.iter().find(|n| n.id == node_of(kept));
        let now = page_now.nodes.iter().find(|n| n.id == node_of(kept));
        assert_eq!(now, was, "a node someone made or changed was touched");
    }
    let detected: Vec<_> = texts
        .iter()
        .filter(|n| matches!(&n.kind, NodeKind::Text { found_by: Some(b), .. } if b == "detect"))
        .collect();
    // The fixture's two lines, and nothing on the blank paper below.
    for line in [(40.0, 90.0), (160.0, 210.0)] {
        assert!(
            detected
                .iter()
                .any(|n| n.transform.y <= line.1 && n.transform.y + n.transform.height >= line.0),
            "no node on the line at {line:?}: {texts:#?}"
        );
    }
    assert!(
        detected
            .iter()
            .all(|n| n.transform.y + n.transform.height < 230.0),
        "{texts:#?}"
    );

    run(&t, id, &["detect"]).await;
    assert_eq!(
        once,
        t.core.scene(id).await.unwrap().scene,
        "detect run again changed the scene"
    );
    // One undo step takes the whole run back, the stale node with it.
    t.core.undo(id).await.unwrap();
    assert_eq!(before.pages, t.core.scene(id).await.unwrap().scene.pages);
}

/// Imports the two-line fixture page (`ocr.png`) into session `id`.
async fn import_the_ocr_fixture(t: &TestCore, id: SessionId) -> quire_model::ids::PageId {
    let bytes = std::fs::read(fixture("ocr.png")).unwrap();
    t.core
        .import_files(
            id,
            vec![ImageFile {
                name: "ocr.png".into(),
                bytes,
            }],
        )
        .await
        .unwrap();
    t.core.scene(id).await.unwrap().scene.pages[0].id
}
