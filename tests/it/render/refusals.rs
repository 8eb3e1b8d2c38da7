//! What the render refuses or warns about: bad inputs change nothing else;
//! text no font has, and text past its box, are named, not shaped.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn bad_inputs_warn_or_fail_and_change_nothing_else() {
    let Some(mut config) = fonts("bad_inputs_warn_or_fail_and_change_nothing_else") else {
        return;
    };
    // No CJK font: Japanese text has no glyphs.
    config.fonts = vec![DEJAVU.into()];
    let t = TestCore::with_render(config);
    let id = t.session("Bad");
    let a = [
        (40.0, 40.0, 200.0, 80.0),
        (40.0, 200.0, 0.0, 60.0),
        (40.0, 300.0, 200.0, 80.0),
        (40.0, 420.0, 200.0, 80.0),
    ];
    let (good, nodes) = page(
        &t,
        id,
        "good.png",
        png(&comic(400, 560, &[a[0], a[2], a[3]])),
        &[
            plain(a[0], "x", "Fine"),
            plain(a[1], "x", "No room"),
            Box {
                at: a[2],
                text: "x",
                translation: Some("Unknown face"),
                style: Some(Style {
                    font_family: Some("No Such Font Family".into()),
                    ..Style::default()
                }),
            },
            plain(a[3], "x", "日本語"),
        ],
    )
    .await;
    t.core
        .import_text(id, "notes", "A text page.", None)
        .await
        .unwrap();
    // A PNG whose header is right and whose data is not (the import
    // refuses it now; an older project may hold one).
    let mut corrupt = png(&RgbImage::new(300, 200));
    corrupt.truncate(40);
    corrupt.extend_from_slice(b"not image data at all");
    let (broken, _) = raw_page(&t, id, "broken", corrupt, &[plain(a[0], "x", "Never set")]).await;
    let before = t.core.scene(id).await.unwrap();

    let (status, findings) = render(&t, id).await;
    assert_eq!(status, JobStatus::CompletedWithErrors);
    let rules: Vec<(&str, Option<NodeId>)> = findings
        .iter()
        .map(|f| (f.rule.as_str(), f.node_id))
        .collect();
    let notes = before.scene.pages[1].id;
    assert!(
        rules.contains(&("empty-box", Some(nodes[1]))),
        "{findings:?}"
    );
    assert!(
        rules.contains(&("missing-font", Some(nodes[2]))),
        "{findings:?}"
    );
    assert!(
        rules.contains(&("missing-glyphs", Some(nodes[3]))),
        "{findings:?}"
    );
    assert!(
        findings
            .iter()
            .any(|f| f.rule == "no-image" && f.page_id == Some(notes)),
        "{findings:?}"
    );
    assert!(
        findings.iter().any(|f| f.rule == "engine-failed"
            && f.page_id == Some(broken)
            && f.message.contains("cannot be read")),
        "{findings:?}"
    );
    // The good page is rendered; nothing else changed.
    let after = t.core.scene(id).await.unwrap();
    assert_eq!(
        after.epoch,
        before.epoch + 1,
        "one page's render, nothing more"
    );
    for page in &after.scene.pages {
        let old = before.scene.page(page.id).unwrap();
        if page.id == good {
            assert_eq!(page.nodes.len(), old.nodes.len() + 1);
            assert_eq!(&page.nodes[..1], &old.nodes[..1]);
        } else {
            assert_eq!(**page, *old, "page {}", page.name);
        }
    }
    // An export that needs the broken page's render fails, naming it, and
    // changes nothing.
    let e = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Cbz))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("`broken`") && e.to_string().contains("cannot be read"),
        "{e}"
    );
    assert_eq!(t.core.scene(id).await.unwrap().epoch, after.epoch);
}

/// Text no installed font has is not shaped (0.2 looked for each such
/// character through every font file, 14 s for 5,000 of them): the page
/// renders with a warning naming the characters; a 1 MiB translation sets
/// what its box can show and warns that the rest is clipped.
#[tokio::test]
async fn text_no_font_has_and_text_past_the_box_are_named_not_shaped() {
    let Some(mut config) = fonts("text_no_font_has_and_text_past_the_box_are_named_not_shaped")
    else {
        return;
    };
    config.fonts = vec![DEJAVU.into()];
    let t = TestCore::with_render(config);
    let id = t.session("Unshaped");
    let private: String = (0xE000u32..0xE000 + 5000)
        .filter_map(char::from_u32)
        .collect();
    let private: &'static str = String::leak(format!("Hi {private}"));
    let huge: &'static str = String::leak("word ".repeat((1 << 20) / 5 - 1));
    let boxes = [(40.0, 40.0, 300.0, 120.0), (40.0, 240.0, 300.0, 120.0)];
    let (_, nodes) = page(
        &t,
        id,
        "page.png",
        png(&comic(400, 420, &boxes)),
        &[plain(boxes[0], "x", private), plain(boxes[1], "x", huge)],
    )
    .await;
    let (status, findings) = render(&t, id).await;
    assert_eq!(status, JobStatus::CompletedWithErrors, "{findings:?}");
    let missing = findings
        .iter()
        .find(|f| f.rule == "missing-glyphs" && f.node_id == Some(nodes[0]))
        .unwrap_or_else(|| panic!("{findings:?}"));
    assert!(missing.message.contains("\\u{e000}"), "{}", missing.message);
    assert!(
        findings
            .iter()
            .any(|f| f.rule == "overflow" && f.node_id == Some(nodes[1])),
        "{findings:?}"
    );
    assert!(
        !findings.iter().any(|f| f.rule == "engine-failed"),
        "{findings:?}"
    );
}
