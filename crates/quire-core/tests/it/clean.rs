//! The `clean` engine clears only what will be set over (spec 13,
//! "Untranslated text stays"): a block with no translation keeps its
//! pixels unless a person sets its `style.clean`.

use image::{GrayImage, Luma, Rgb, RgbImage, RgbaImage};
use quire_core::events::Event;
use quire_core::jobs::Approval;
use quire_model::finding::{Finding, Severity};
use quire_model::hash::BlobHash;
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::{NewNode, NodePatch, Op, StylePatch};
use quire_model::scene::{ImageRole, MaskRole, NodeKind, Transform};

use crate::support::{TestCore, follow, image_page, spec, stored_image, text_node, translate};

/// Left and right "balloons": a dark bar of glyphs on white in each.
const BARS: [(u32, u32); 2] = [(20, 60), (120, 160)];

fn png(image: impl Into<image::DynamicImage>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .into()
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

fn in_bar(x: u32, y: u32) -> bool {
    (40..50).contains(&y) && BARS.iter().any(|&(a, b)| (a..b).contains(&x))
}

/// A 200 × 100 page with the two bars, its text mask and one text node
/// over each bar (both read, neither translated); the page and the nodes.
async fn two_balloons(t: &TestCore, id: SessionId) -> (PageId, [NodeId; 2]) {
    let source = RgbImage::from_fn(200, 100, |x, y| {
        if in_bar(x, y) {
            Rgb([20, 20, 20])
        } else {
            Rgb([255, 255, 255])
        }
    });
    let mask = GrayImage::from_fn(200, 100, |x, y| Luma([if in_bar(x, y) { 255 } else { 0 }]));
    let source = t.core.put_blob(id, png(source)).await.unwrap();
    let mask = t.core.put_blob(id, png(mask)).await.unwrap();
    t.core
        .apply(id, image_page("p", source, (200, 100), None))
        .await
        .unwrap();
    let page = t.core.scene(id).await.unwrap().scene.pages[0].id;
    let node = |(a, b): (u32, u32), text: &str| {
        let mut node = text_node(text);
        node.transform = Transform {
            x: f64::from(a) - 10.0,
            y: 30.0,
            width: f64::from(b - a) + 20.0,
            height: 30.0,
            rotation: None,
        };
        Op::AddNode {
            page,
            node,
            at: None,
        }
    };
    let mask_node = Op::AddNode {
        page,
        node: NewNode {
            id: None,
            transform: Transform {
                x: 0.0,
                y: 0.0,
                width: 200.0,
                height: 100.0,
                rotation: None,
            },
            visible: false,
            kind: NodeKind::Mask {
                blob: mask,
                role: MaskRole::Text,
            },
        },
        at: None,
    };
    let ops = vec![node(BARS[0], "HELLO"), node(BARS[1], "THERE"), mask_node];
    t.core
        .apply(id, Op::Batch { ops, label: None })
        .await
        .unwrap();
    let scene = t.core.scene(id).await.unwrap().scene;
    let texts: Vec<NodeId> = scene.pages[0]
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Text { .. }))
        .map(|n| n.id)
        .collect();
    (page, [texts[0], texts[1]])
}

/// Runs `clean`; its notes and the cleaned image.
async fn clean(t: &TestCore, id: SessionId) -> (Vec<Finding>, RgbaImage) {
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["clean"]), Approval::Unattended)
        .await
        .unwrap();
    let events = follow(&mut sub, job).await;
    assert!(
        matches!(events.last(), Some(Event::JobFinished { error: None, .. })),
        "{events:?}"
    );
    let findings = events
        .into_iter()
        .filter_map(|e| match e {
            Event::JobWarning { finding, .. } => Some(finding),
            _ => None,
        })
        .collect();
    let scene = t.core.scene(id).await.unwrap().scene;
    let cleaned = stored_image(t, id, &scene.pages[0], ImageRole::Cleaned).await;
    (findings, cleaned)
}

/// How many of the bar `k`'s pixels are still dark.
fn dark(image: &RgbaImage, k: usize) -> usize {
    let (a, b) = BARS[k];
    (a..b)
        .flat_map(|x| (40..50).map(move |y| (x, y)))
        .filter(|&(x, y)| image.get_pixel(x, y)[0] < 128)
        .count()
}

fn set_clean(page: PageId, node: NodeId, clean: Option<bool>) -> Op {
    Op::UpdateNode {
        page,
        id: node,
        patch: NodePatch::style(StylePatch {
            clean: Some(clean),
            ..StylePatch::default()
        }),
        based_on: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn clean_clears_translated_blocks_and_keeps_the_others_unless_asked() {
    let t = TestCore::new();
    let id = t.session("clean");
    let (page, [left, right]) = two_balloons(&t, id).await;
    let full = 40 * 10;

    // Only the left block has a translation: only its text goes; the
    // right one keeps every pixel, and a note says so.
    t.core
        .apply(id, translate(page, left, "BONJOUR"))
        .await
        .unwrap();
    let (notes, cleaned) = clean(&t, id).await;
    assert_eq!((dark(&cleaned, 0), dark(&cleaned, 1)), (0, full));
    let source = stored_image(
        &t,
        id,
        &t.core.scene(id).await.unwrap().scene.pages[0],
        ImageRole::Source,
    )
    .await;
    for (x, y, p) in cleaned.enumerate_pixels() {
        if x >= 100 {
            assert_eq!(p, source.get_pixel(x, y), "({x}, {y}) changed");
        }
    }
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        (notes[0].rule.as_str(), notes[0].severity),
        ("kept-untranslated", Severity::Info)
    );
    assert!(notes[0].message.contains("1 text block kept"), "{notes:?}");
    let first = cleaned_blob(&t, id).await;

    // A translation arriving makes the cleaned image out of date: the
    // next clean clears that block too, with nothing left to note.
    t.core
        .apply(id, translate(page, right, "LÀ"))
        .await
        .unwrap();
    let (notes, cleaned) = clean(&t, id).await;
    assert_ne!(cleaned_blob(&t, id).await, first);
    assert_eq!((dark(&cleaned, 0), dark(&cleaned, 1)), (0, 0));
    assert!(notes.is_empty(), "{notes:?}");

    // `style.clean = false`: the block keeps its source even translated.
    t.core
        .apply(id, set_clean(page, right, Some(false)))
        .await
        .unwrap();
    let (notes, cleaned) = clean(&t, id).await;
    assert_eq!((dark(&cleaned, 0), dark(&cleaned, 1)), (0, full));
    assert!(
        notes.is_empty(),
        "kept as asked, nothing to note: {notes:?}"
    );

    // `style.clean = true` on a block with no translation: a person
    // asked, so it is cleared.
    t.core.apply(id, translate_none(page, left)).await.unwrap();
    t.core
        .apply(id, set_clean(page, left, Some(true)))
        .await
        .unwrap();
    let (notes, cleaned) = clean(&t, id).await;
    assert_eq!((dark(&cleaned, 0), dark(&cleaned, 1)), (0, full));
    assert!(notes.is_empty(), "{notes:?}");
}

fn translate_none(page: PageId, node: NodeId) -> Op {
    Op::UpdateNode {
        page,
        id: node,
        patch: NodePatch::text(Some(None), None),
        based_on: None,
    }
}

async fn cleaned_blob(t: &TestCore, id: SessionId) -> BlobHash {
    let scene = t.core.scene(id).await.unwrap().scene;
    scene.pages[0]
        .nodes
        .iter()
        .find_map(|n| match &n.kind {
            NodeKind::Image {
                blob,
                role: ImageRole::Cleaned,
                ..
            } => Some(*blob),
            _ => None,
        })
        .unwrap()
}
