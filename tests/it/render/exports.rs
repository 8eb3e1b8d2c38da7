//! Exports of rendered pages: CBZ, PNG and PDF in order, JPEG and WebP
//! pages with the book's ComicInfo, read back by poppler and comicapi.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn cbz_png_and_pdf_hold_the_rendered_pages_in_order() {
    let test = "cbz_png_and_pdf_hold_the_rendered_pages_in_order";
    let (Some(config), true) = (fonts(test), poppler(test)) else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("Chapter 3");
    t.core
        .apply(
            id,
            serde_json::from_value(
                serde_json::json!({ "type": "UpdateProject", "patch": { "targetLanguage": "fr" } }),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let out = out_dir("exports");
    let a = [(60.0, 60.0, 280.0, 120.0)];
    let (first, nodes) = page(
        &t,
        id,
        "p1.png",
        png(&comic(500, 700, &a)),
        &[plain(a[0], "一", "First page")],
    )
    .await;
    let (second, _) = page(
        &t,
        id,
        "p2.png",
        png(&comic(640, 480, &a)),
        &[plain(a[0], "二", "Second page")],
    )
    .await;
    t.core
        .import_text(
            id,
            "Afterword",
            "Thanks for reading.\n\nあとがき",
            Some("ja"),
        )
        .await
        .unwrap();
    assert_eq!(
        render(&t, id).await.0,
        JobStatus::CompletedWithErrors,
        "the text page has no image"
    );
    let epoch = t.core.scene(id).await.unwrap().epoch;

    // CBZ: the pages in order, then ComicInfo.xml.
    let cbz = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Cbz))
        .await
        .unwrap();
    assert_eq!(cbz.media_type, "application/vnd.comicbook+zip");
    assert!(cbz.file_name.ends_with(".cbz"), "{}", cbz.file_name);
    std::fs::write(out.join("chapter.cbz"), &cbz.bytes).unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(cbz.bytes.clone())).unwrap();
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().into_owned())
        .collect();
    assert_eq!(names, ["001.png", "002.png", "ComicInfo.xml"]);
    for (i, (page, size)) in [(first, (500, 700)), (second, (640, 480))]
        .into_iter()
        .enumerate()
    {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut zip.by_index(i).unwrap(), &mut bytes).unwrap();
        let image = image::load_from_memory(&bytes).unwrap().to_rgba8();
        assert_eq!(image.dimensions(), size);
        assert_eq!(
            image,
            rendered(&t, id, page).await,
            "the stored render, as it is"
        );
    }
    let mut info = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("ComicInfo.xml").unwrap(), &mut info).unwrap();
    let doc = roxmltree::Document::parse(&info).unwrap();
    let field = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name(name))
            .and_then(|n| n.text())
            .map(str::to_owned)
    };
    assert_eq!(field("Title").as_deref(), Some("Chapter 3"));
    assert_eq!(field("PageCount").as_deref(), Some("2"));
    assert_eq!(field("LanguageISO").as_deref(), Some("fr"));

    // PNG: the same images as 001.png, 002.png.
    let pngs = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Png))
        .await
        .unwrap();
    let zip = zip::ZipArchive::new(std::io::Cursor::new(pngs.bytes)).unwrap();
    assert_eq!(
        zip.file_names()
            .map(|n| n.unwrap().into_owned())
            .collect::<Vec<_>>(),
        ["001.png", "002.png"]
    );

    the_pdf_holds_each_page_at_its_size_then_the_text(&t, id, first, &out).await;

    // Exports change nothing; a stale page is rendered for the export.
    assert_eq!(t.core.scene(id).await.unwrap().epoch, epoch);
    t.core
        .apply(
            id,
            serde_json::from_value(
                serde_json::json!({ "type": "UpdateNode", "page": first, "id": nodes[0],
                "patch": { "kind": { "type": "text", "translation": "Changed since" } } }),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let cbz = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Cbz))
        .await
        .unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(cbz.bytes)).unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut zip.by_index(0).unwrap(), &mut bytes).unwrap();
    let fresh = image::load_from_memory(&bytes).unwrap().to_rgba8();
    assert_ne!(
        fresh,
        rendered(&t, id, first).await,
        "the stale render was not used"
    );
    assert_eq!(
        t.core.scene(id).await.unwrap().epoch,
        epoch + 1,
        "the export stored nothing"
    );
}

/// PDF: one page per rendered image at its size (the first as poppler
/// draws it, like the stored render), then the text page.
async fn the_pdf_holds_each_page_at_its_size_then_the_text(
    t: &TestCore,
    id: SessionId,
    first: PageId,
    out: &Path,
) {
    let pdf = t
        .core
        .export(id, ExportSpec::of(ExportFormat::Pdf))
        .await
        .unwrap();
    assert_eq!(pdf.media_type, "application/pdf");
    let path = out.join("chapter.pdf");
    std::fs::write(&path, &pdf.bytes).unwrap();
    let info = Command::new("pdfinfo")
        .args(["-f", "1", "-l", "3"])
        .arg(&path)
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    let info = info.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(info.contains("Pages: 3"), "{info}");
    assert!(info.contains("Page 1 size: 500 x 700 pts"), "{info}");
    assert!(info.contains("Page 2 size: 640 x 480 pts"), "{info}");
    assert!(info.contains("Page 3 size: 595 x 842 pts (A4)"), "{info}");
    let first_page = out.join("pdf-page");
    let ok = Command::new("pdftoppm")
        .args(["-r", "72", "-f", "1", "-l", "1", "-png", "-singlefile"])
        .arg(&path)
        .arg(&first_page)
        .status()
        .unwrap();
    assert!(ok.success());
    let from_pdf = image::open(out.join("pdf-page.png")).unwrap().to_rgba8();
    golden_like(&from_pdf, &rendered(t, id, first).await);
    let text = Command::new("pdftotext")
        .args(["-f", "3", "-l", "3"])
        .arg(&path)
        .arg("-")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Afterword")
            && text.contains("Thanks for reading.")
            && text.contains("あとがき"),
        "{text}"
    );
}

/// What a group publishes: the pages as JPEG or WebP at a quality, and a
/// ComicInfo.xml that names the series, the chapter, the translator, the
/// languages and the reading direction. A bad option is refused and
/// changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn pages_export_as_jpeg_or_webp_with_the_books_comicinfo() {
    let test = "pages_export_as_jpeg_or_webp_with_the_books_comicinfo";
    let (Some(config), true) = (fonts(test), poppler(test)) else {
        return;
    };
    let t = TestCore::with_render(config);
    let id = t.session("Chapter 12.5");
    let book = serde_json::json!({ "type": "UpdateProject", "patch": {
        "sourceLanguage": "ja", "targetLanguage": "fr",
        "series": "Contes <d'or> & d'argent", "number": "12.5", "translator": "Équipe Quire" } });
    t.core
        .apply(id, serde_json::from_value(book).unwrap())
        .await
        .unwrap();
    let a = [(60.0, 60.0, 280.0, 120.0)];
    let mut pages = Vec::new();
    for (name, size) in [("p1.png", (500, 700)), ("p2.png", (640, 480))] {
        let (page_id, _) = page(
            &t,
            id,
            name,
            png(&comic(size.0, size.1, &a)),
            &[plain(a[0], "一", "Une page")],
        )
        .await;
        pages.push(page_id);
    }
    assert_eq!(render(&t, id).await.0, JobStatus::Completed);
    let epoch = t.core.scene(id).await.unwrap().epoch;
    let out = out_dir("encoded");

    // CBZ of JPEGs: the same pages, within JPEG's tolerance.
    let cbz = t
        .core
        .export(
            id,
            export(ExportFormat::Cbz, Some(ImageFormat::Jpeg), Some(90)),
        )
        .await
        .unwrap();
    std::fs::write(out.join("jpeg.cbz"), &cbz.bytes).unwrap();
    let files = entries(cbz.bytes);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["001.jpg", "002.jpg", "ComicInfo.xml"]);
    for ((_, bytes), page_id) in files.iter().zip(&pages) {
        assert_eq!(
            image::guess_format(bytes).unwrap(),
            image::ImageFormat::Jpeg
        );
        let decoded = image::load_from_memory(bytes).unwrap().to_rgba8();
        golden_like(&decoded, &rendered(&t, id, *page_id).await);
    }
    let info = String::from_utf8(files[2].1.clone()).unwrap();
    let doc = roxmltree::Document::parse(&info).unwrap();
    let fields: Vec<(String, String)> = doc
        .root_element()
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() != "Pages")
        .map(|n| {
            (
                n.tag_name().name().to_owned(),
                n.text().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let expected = [
        ("Title", "Chapter 12.5"),
        ("Series", "Contes <d'or> & d'argent"),
        ("Number", "12.5"),
        ("Notes", "Translated from ja to fr."),
        ("Translator", "Équipe Quire"),
        ("PageCount", "2"),
        ("LanguageISO", "fr"),
        ("Manga", "YesAndRightToLeft"),
    ];
    assert_eq!(
        fields,
        expected.map(|(k, v)| (k.to_owned(), v.to_owned())),
        "the ComicInfo 2.1 elements, in the schema's order"
    );
    let sizes: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("Page"))
        .map(|n| n.attribute("ImageSize").unwrap().to_owned())
        .collect();
    assert_eq!(
        sizes,
        [files[0].1.len().to_string(), files[1].1.len().to_string()]
    );

    // A zip of lossy WebPs, alpha kept; the default quality.
    let webp = t
        .core
        .export(id, export(ExportFormat::Png, Some(ImageFormat::Webp), None))
        .await
        .unwrap();
    let files = entries(webp.bytes);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["001.webp", "002.webp"]);
    for ((_, bytes), page_id) in files.iter().zip(&pages) {
        assert_eq!(
            image::guess_format(bytes).unwrap(),
            image::ImageFormat::WebP
        );
        let decoded = image::load_from_memory(bytes).unwrap().to_rgba8();
        golden_like(&decoded, &rendered(&t, id, *page_id).await);
    }

    // A PDF of JPEG pages: poppler reads each at its size.
    let pdf = t
        .core
        .export(
            id,
            export(ExportFormat::Pdf, Some(ImageFormat::Jpeg), Some(70)),
        )
        .await
        .unwrap();
    let path = out.join("jpeg.pdf");
    std::fs::write(&path, &pdf.bytes).unwrap();
    let images = Command::new("pdfimages")
        .arg("-list")
        .arg(&path)
        .output()
        .unwrap();
    let images = String::from_utf8_lossy(&images.stdout);
    let kinds: Vec<&str> = images
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert_eq!(kinds, ["image", "image"], "{images}");
    assert!(
        images
            .lines()
            .skip(2)
            .all(|l| l.split_whitespace().nth(8) == Some("jpeg")),
        "embedded as JPEG: {images}"
    );

    bad_options_are_refused_and_change_nothing(&t, id, epoch).await;
    the_books_fields_clear_and_undo_brings_them_back(&t, id).await;
}

/// An export of `format` with its images as `image_format` at `quality`.
fn export(
    format: ExportFormat,
    image_format: Option<ImageFormat>,
    quality: Option<u8>,
) -> ExportSpec {
    ExportSpec {
        image_format,
        quality,
        ..ExportSpec::of(format)
    }
}

/// Bad export options and book fields: refused, named, nothing changed.
async fn bad_options_are_refused_and_change_nothing(t: &TestCore, id: SessionId, epoch: u64) {
    for (spec, says) in [
        (
            export(ExportFormat::Cbz, Some(ImageFormat::Jpeg), Some(0)),
            "quality 0 is out of range",
        ),
        (
            export(ExportFormat::Cbz, Some(ImageFormat::Webp), Some(101)),
            "quality 101 is out of range",
        ),
        (
            export(ExportFormat::Cbz, None, Some(80)),
            "quality applies to jpeg and webp",
        ),
        (
            export(ExportFormat::Cbz, Some(ImageFormat::Png), Some(80)),
            "quality applies to jpeg and webp",
        ),
        (
            export(ExportFormat::Xliff, Some(ImageFormat::Jpeg), None),
            "png, cbz and pdf exports only",
        ),
    ] {
        let e = t.core.export(id, spec.clone()).await.unwrap_err();
        assert_eq!(e.code(), "invalid_input", "{spec:?}");
        assert!(e.to_string().contains(says), "{spec:?}: {e}");
    }
    for patch in [
        serde_json::json!({ "series": "line\nbreak" }),
        serde_json::json!({ "translator": " " }),
        serde_json::json!({ "number": "9".repeat(201) }),
    ] {
        let op = serde_json::json!({ "type": "UpdateProject", "patch": patch });
        let e = t
            .core
            .apply(id, serde_json::from_value(op).unwrap())
            .await
            .unwrap_err();
        assert_eq!(e.code(), "invalid_op", "{patch}: {e}");
    }
    let scene = t.core.scene(id).await.unwrap();
    assert_eq!(scene.epoch, epoch);
    assert_eq!(
        scene.scene.project.translator.as_deref(),
        Some("Équipe Quire")
    );
}

/// The book's fields clear with null, and undo brings them back.
async fn the_books_fields_clear_and_undo_brings_them_back(t: &TestCore, id: SessionId) {
    let clear = serde_json::json!({ "type": "UpdateProject",
        "patch": { "series": null, "number": null, "translator": null } });
    t.core
        .apply(id, serde_json::from_value(clear).unwrap())
        .await
        .unwrap();
    let project = t.core.scene(id).await.unwrap().scene.project;
    assert_eq!(
        (project.series, project.number, project.translator),
        (None, None, None)
    );
    t.core.undo(id).await.unwrap();
    let project = t.core.scene(id).await.unwrap().scene.project;
    assert_eq!(project.number.as_deref(), Some("12.5"));
}

/// A zip's entries in order: each name and its bytes.
fn entries(bytes: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut file = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes).unwrap();
            (file.name().unwrap().into_owned(), bytes)
        })
        .collect()
}
