//! Files as an attacker (or a broken disk) makes them: an XLIFF nested
//! 10,000 deep, truncated and oversized images, a PNG header over a sea of
//! zeros inside a CBZ. Each is refused by name or skipped and named, the
//! server stays up, nothing is stored, and memory stays near one page
//! (read from the server's `VmHWM`).

use std::io::{Cursor, Write};

use quire_core::import::{ImageFile, PageSource};
use quire_core::jobs::Approval;
use quire_core::translations::TranslationImport;
use quire_formats::units::TranslationFormat;
use quire_model::ids::{NodeId, PageId, SessionId};
use quire_model::op::Op;
use quire_model::scene::ImageRole;
use serde_json::{Value, json};

use crate::core_base::{TestCore, add_page, text_node};
use crate::core_base::{follow, spec, warnings};
use crate::harness::Sandbox;
use crate::http_support::{Binary, json_post};
use crate::mcp_stdio::RawMcp;

fn jpeg(w: u32, h: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([
            (x * 13 % 251) as u8,
            (y * 7 % 253) as u8,
            ((x ^ y) % 255) as u8,
        ])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut out, image::ImageFormat::Jpeg)
        .unwrap();
    out.into_inner()
}

fn png(w: u32, h: u32) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
        w,
        h,
        image::Rgb([250, 250, 240]),
    ))
    .write_to(&mut out, image::ImageFormat::Png)
    .unwrap();
    out.into_inner()
}

/// CRC-32 (IEEE), for a PNG chunk forged in place.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for b in bytes {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A small PNG whose header says `w` × `h` (its IHDR rewritten, checksum
/// and all): what a decompression bomb looks like from its first bytes.
fn png_declaring(w: u32, h: u32) -> Vec<u8> {
    let mut bytes = png(4, 4);
    bytes[16..20].copy_from_slice(&w.to_be_bytes());
    bytes[20..24].copy_from_slice(&h.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    bytes
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        zip.start_file(*name, deflated).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn file(name: &str, bytes: Vec<u8>) -> ImageFile {
    ImageFile {
        name: name.to_owned(),
        bytes,
    }
}

fn blob_count(t: &TestCore, id: SessionId) -> usize {
    walk(&t.project_path(id).join("blobs"))
}

fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| {
                    if e.path().is_dir() {
                        walk(&e.path())
                    } else {
                        1
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn a_truncated_jpeg_is_refused_by_name_and_in_a_cbz_it_is_skipped_and_named() {
    let t = TestCore::new();
    let id = t.session("Broken");
    let whole = jpeg(240, 360);
    let cut = whole[..whole.len() * 2 / 3].to_vec();
    let err = t
        .core
        .import_files(
            id,
            vec![file("p1.jpg", whole.clone()), file("p2.jpg", cut.clone())],
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(err.to_string().contains("p2.jpg: truncated JPEG"), "{err}");
    assert_eq!(t.core.scene(id).await.unwrap().epoch, 0);
    assert_eq!(blob_count(&t, id), 0, "nothing stored");

    let cbz = zip_of(&[
        ("p1.jpg", &whole),
        ("p2.jpg", &cut),
        ("p3.jpg", &jpeg(240, 361)),
    ]);
    let result = t
        .core
        .import_files(id, vec![file("vol1.cbz", cbz)])
        .await
        .unwrap();
    assert_eq!(result.skipped.len(), 1, "{result:?}");
    assert_eq!(result.skipped[0].name, "vol1.cbz/p2.jpg");
    assert!(
        result.skipped[0].reason.contains("truncated JPEG"),
        "{result:?}"
    );
    let scene = t.core.scene(id).await.unwrap().scene;
    let names: Vec<&str> = scene.pages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["p1", "p3"]);
    assert_eq!(blob_count(&t, id), 2);
}

#[tokio::test]
async fn real_comic_pages_pass_the_whole_image_check_and_fail_it_cut() {
    let Some(dir) = crate::harness::testdata("real_comic_pages_pass", "comics") else {
        return;
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.ends_with(".jpg") || name.ends_with(".png")) {
            continue;
        }
        let header =
            quire_formats::images::check(&bytes, quire_formats::images::DEFAULT_MAX_PIXELS)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(header.width > 0, "{name}");
        let cut = &bytes[..bytes.len() / 2];
        let e = quire_formats::images::check(cut, quire_formats::images::DEFAULT_MAX_PIXELS)
            .expect_err(&name);
        assert!(e.contains("truncated"), "{name}: {e}");
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} pages");
}

#[tokio::test]
async fn an_image_over_the_pixel_limit_is_refused_from_its_header_wherever_it_is_decoded() {
    let t = TestCore::new();
    let id = t.session("Huge");
    let bomb = png_declaring(20_000, 20_000);
    assert!(bomb.len() < 1024);
    let err = t
        .core
        .import_files(id, vec![file("bomb.png", bomb.clone())])
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("bomb.png: 20000 × 20000 pixels is 400.0 megapixels")
            && err.to_string().contains("limits.max_image_pixels"),
        "{err}"
    );
    assert_eq!(blob_count(&t, id), 0);

    // A blob that got in some other way (an older quire, a command
    // engine): thumbnails, pictures for agents and render refuse it too.
    let blob = t.core.put_blob(id, bomb).await.unwrap();
    let err = t.core.blob_picture(id, blob, 256).await.unwrap_err();
    assert!(err.to_string().contains("limits.max_image_pixels"), "{err}");
    let page = PageId::new();
    let op = crate::core_base::image_page("huge", blob, (20_000, 20_000), Some(page));
    t.core.apply(id, op).await.unwrap();
    let err = t
        .core
        .page_picture(id, page, ImageRole::Source, 1024, false)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("limits.max_image_pixels"), "{err}");
    let mut sub = t.core.subscribe(None);
    let job = t
        .core
        .start_pipeline(id, spec(&["render"]), Approval::Unattended)
        .await
        .unwrap();
    let found = warnings(&follow(&mut sub, job).await);
    assert!(
        found
            .iter()
            .any(|(_, _, w)| w.contains("limits.max_image_pixels")),
        "{found:?}"
    );
}

/// The translation unit of `node` whose target nests `depth` inline
/// elements around its text.
fn xliff_nested(node: NodeId, depth: usize) -> String {
    format!(
        "<xliff xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" version=\"2.0\" srcLang=\"en\" \
         trgLang=\"fr\"><file id=\"f\"><unit id=\"n{node}\"><segment><source>Hello</source>\
         <target>{}Bonjour{}</target></segment></unit></file></xliff>",
        "<pc id=\"p\">".repeat(depth),
        "</pc>".repeat(depth)
    )
}

/// An XLIFF nested 10,000 deep (which aborted 0.2 with a stack overflow,
/// every session with it) is refused naming the limit over HTTP and MCP;
/// the process answers on; 3,000 deep still merges.
#[test]
fn an_xliff_nested_past_the_limit_is_refused_over_http_and_mcp_and_the_server_lives() {
    let s = Sandbox::new();
    let mut server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = crate::harness::http_client();
    let post = |path: String, body: Value| rt.block_on(json_post(&client, path, body));
    let (status, session) = post(
        format!("{}/api/v1/projects", server.url),
        json!({ "name": "Deep" }),
    );
    assert_eq!(status, 200, "{session}");
    let id = session["id"].as_str().unwrap().to_owned();
    let url = server.url.clone();
    let at = |rest: &str| format!("{url}/api/v1/sessions/{id}{rest}");
    let (_, page) = post(at("/pages"), json!({ "name": "p", "text": "Hello" }));
    let node = NodeId(page["created"][1].as_str().unwrap().parse().unwrap());
    let import = |depth: usize| json!({ "format": "xliff", "content": xliff_nested(node, depth) });
    let (status, body) = post(at("/import"), import(10_000));
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "invalid_input");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("more than 4096 deep"), "{message}");
    assert!(server.alive(), "the server died");
    let (status, scene) = rt.block_on(async {
        let r = client.get(at("/scene.json")).send().await.unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    });
    assert_eq!(
        (status, scene["epoch"].clone()),
        (200, json!(1)),
        "nothing changed"
    );
    let (status, report) = post(at("/import"), import(3_000));
    assert_eq!(
        (status, report["updated"].clone()),
        (200, json!(1)),
        "{report}"
    );
    drop(server);

    // The same over MCP (stdio), where 0.2 died the same way.
    let mut mcp = RawMcp::start(&s);
    let opened = mcp.tool(
        2,
        "quire_open_project",
        json!({ "path": "deep-mcp", "createName": "Deep" }),
    );
    assert!(opened["result"]["isError"] != json!(true), "{opened}");
    let added = mcp.tool(
        3,
        "quire_import_pages",
        json!({ "items": [{ "name": "p", "text": "Hello" }] }),
    );
    let node = added["result"]["structuredContent"]["created"][1]
        .as_str()
        .unwrap()
        .parse()
        .map(NodeId)
        .unwrap();
    let refused = mcp.tool(
        4,
        "quire_import_translations",
        json!({ "content": xliff_nested(node, 10_000) }),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("more than 4096 deep"), "{text}");
    let merged = mcp.tool(
        5,
        "quire_import_translations",
        json!({ "content": xliff_nested(node, 3_000) }),
    );
    assert_eq!(
        merged["result"]["structuredContent"]["updated"], 1,
        "{merged}"
    );
}

#[tokio::test]
async fn an_xliff_for_another_source_language_or_naming_a_node_twice_changes_nothing() {
    let t = TestCore::new();
    let id = t.session("Langs");
    let mut op = add_page("p");
    if let Op::AddPage { page, .. } = &mut op {
        page.nodes = Some(vec![text_node("Hello")]);
    }
    let created = t.core.apply(id, op).await.unwrap().created;
    t.core
        .apply(
            id,
            Op::UpdateProject {
                patch: quire_model::op::ProjectPatch {
                    source_language: Some(Some("en".into())),
                    ..Default::default()
                },
            },
        )
        .await
        .unwrap();
    let node = NodeId(created[1]);
    let unit = |target: &str| {
        format!(
            "<unit id=\"n{node}\"><segment><source>Hello</source><target>{target}</target></segment></unit>"
        )
    };
    let xliff = |src: &str, units: String| TranslationImport {
        format: TranslationFormat::Xliff,
        content: format!(
            "<xliff xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" version=\"2.0\" \
             srcLang=\"{src}\" trgLang=\"fr\"><file id=\"f\">{units}</file></xliff>"
        ),
        force: false,
        take: Vec::new(),
    };
    let err = t
        .core
        .import_translations(id, xliff("de", unit("Bonjour")))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("translates from `de` but the project from `en`"),
        "{err}"
    );
    let report = t
        .core
        .import_translations(id, xliff("en", unit("Bonjour") + &unit("Salut")))
        .await
        .unwrap();
    assert_eq!(report.updated, 0, "{report:?}");
    assert_eq!(report.conflicts.len(), 2, "{report:?}");
    assert!(
        report
            .conflicts
            .iter()
            .all(|c| c.message.contains("2 units for this text") && !c.applied),
        "{report:?}"
    );
    assert_eq!(t.core.scene(id).await.unwrap().epoch, 2, "nothing applied");
}

/// A CBZ whose entries inflate to hundreds of MiB (a PNG header over
/// 512 MiB of zeros; zeros under an image name) is read one page at a
/// time: the good page comes in, the others are skipped by name, and the
/// server's peak memory stays far below what the entries inflate to.
#[test]
fn a_cbz_bomb_is_skipped_by_name_with_memory_near_one_page() {
    let s = Sandbox::new();
    let mut server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let mut bomb = png(1000, 1000);
    bomb.truncate(33);
    bomb.resize(512 << 20, 0);
    let zeros = vec![0u8; 256 << 20];
    let good = jpeg(300, 450);
    let cbz = zip_of(&[("p1.jpg", &good), ("p2.png", &bomb), ("p3.jpg", &zeros)]);
    drop((bomb, zeros));
    assert!(cbz.len() < 4 << 20, "{} bytes", cbz.len());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = crate::harness::http_client();
    let (status, session) = rt.block_on(json_post(
        &client,
        format!("{}/api/v1/projects", server.url),
        json!({ "name": "Bomb" }),
    ));
    assert_eq!(status, 200, "{session}");
    let before = server.peak_rss_mib();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(cbz).file_name("vol1.cbz"),
    );
    let (status, body) = rt.block_on(async {
        let r = client
            .post(format!(
                "{}/api/v1/sessions/{}/pages",
                server.url,
                session["id"].as_str().unwrap()
            ))
            .multipart(form)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    });
    assert_eq!(status, 200, "{body}");
    let skipped: Vec<&str> = body["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["vol1.cbz/p2.png", "vol1.cbz/p3.jpg"], "{body}");
    let peak = server.peak_rss_mib();
    assert!(
        peak - before < 100.0,
        "the upload took the server from {before:.0} to {peak:.0} MiB"
    );
    assert!(server.alive());
}

#[tokio::test]
async fn inline_sources_name_a_bad_image_and_store_nothing() {
    let t = TestCore::new();
    let id = t.session("Inline");
    let mut padded = png(4, 4);
    padded.resize(padded.len() + (17 << 20), 0);
    let err = t
        .core
        .import_pages(
            id,
            vec![
                PageSource::Image(file("ok.png", png(4, 4))),
                PageSource::Image(file("padded.png", padded)),
            ],
            None,
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("padded.png: the file is") && err.to_string().contains("can need"),
        "{err}"
    );
    assert_eq!(blob_count(&t, id), 0);
}

/// A TBX nested past the XML bound is refused by name like an XLIFF.
#[tokio::test]
async fn a_tbx_nested_past_the_limit_is_refused_and_changes_nothing() {
    let t = TestCore::new();
    let id = t.session("Terms");
    let deep = format!(
        "<martif type=\"TBX\"><text><body>{}<termEntry><langSet xml:lang=\"en\"><tig><term>sun</term></tig></langSet>\
         <langSet xml:lang=\"fr\"><tig><term>soleil</term></tig></langSet></termEntry>{}</body></text></martif>",
        "<note>".repeat(10_000),
        "</note>".repeat(10_000)
    );
    let err = t
        .core
        .import_glossary(
            id,
            quire_core::glossary::GlossaryImport {
                format: quire_formats::glossary::GlossaryFormat::Tbx,
                content: deep,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(err.to_string().contains("more than 4096 deep"), "{err}");
    assert_eq!(t.core.scene(id).await.unwrap().epoch, 0);
}

/// A DTD in an XLIFF, TMX or TBX file is refused with 422 naming it,
/// however the DOCTYPE is written, and nothing of the file is stored; an
/// XLIFF of another version and a subtitle time past 2^53 ms are refused
/// by name too (`16-operations.md`, "Under attack", rules 13 and 17).
#[test]
fn a_dtd_another_xliff_version_or_an_impossible_time_is_refused_over_http() {
    let s = Sandbox::new();
    let server = Binary::start(&s, &["--headless", "--port", "0"], &[]);
    let c = server.client();
    let prefix = c.new_project("-", "Ch 1");
    let scene = c.text_page(&prefix, "-", "Hello");
    let node = scene["scene"]["pages"][0]["nodes"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let memory = s.data_dir().join("memory");
    let stored = || {
        (
            walk(&memory),
            c.ok("GET", &format!("{prefix}/scene.json"), "-", None),
        )
    };
    let before = stored();
    let entity = "<!ENTITY boom \"Bonjour\">";
    let doctypes = [
        format!("<!DOCTYPE xliff [{entity}]>"),
        format!("<!-- <!DOCTYPE xliff SYSTEM \"x.dtd\"> --><!DOCTYPE xliff [{entity}]>"),
        format!("<!DOCTYPE xliff SYSTEM \"a>b.dtd\" [{entity}]>"),
    ];
    for doctype in &doctypes {
        let xliff = format!(
            "<?xml version=\"1.0\"?>{doctype}<xliff xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" \
             version=\"2.0\" srcLang=\"en\" trgLang=\"fr\"><file id=\"f\"><unit id=\"n{node}\">\
             <segment><source>Hello</source><target>&boom;</target></segment></unit></file></xliff>"
        );
        let tmx = format!(
            "<?xml version=\"1.0\"?>{}<tmx version=\"1.4\"><header srclang=\"en\"/><body><tu>\
             <tuv xml:lang=\"en\"><seg>Hello</seg></tuv><tuv xml:lang=\"fr\"><seg>&boom;</seg></tuv>\
             </tu></body></tmx>",
            doctype.replace("xliff", "tmx")
        );
        let tbx = format!(
            "<?xml version=\"1.0\"?>{}<martif type=\"TBX\"><text><body><termEntry>\
             <langSet xml:lang=\"en\"><tig><term>Hello</term></tig></langSet>\
             <langSet xml:lang=\"fr\"><tig><term>&boom;</term></tig></langSet>\
             </termEntry></body></text></martif>",
            doctype.replace("xliff", "martif")
        );
        for (route, body) in [
            (
                format!("{prefix}/import"),
                json!({"format": "xliff", "content": xliff}),
            ),
            (
                "/api/v1/memory".to_owned(),
                json!({"name": "boom.tmx", "content": tmx}),
            ),
            (
                format!("{prefix}/glossary/import"),
                json!({"format": "tbx", "content": tbx}),
            ),
        ] {
            let (status, body) = c.call("POST", &route, "-", Some(body));
            assert_eq!(status, 422, "{route}: {body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains("it declares a DTD"), "{route}: {message}");
        }
    }
    assert_eq!(before, stored());
    // A bare external DOCTYPE is still read (and never fetched).
    let external = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE xliff SYSTEM \"http://192.0.2.1/x.dtd\">\
         <xliff xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" version=\"2.0\" srcLang=\"en\" \
         trgLang=\"fr\"><file id=\"f\"><unit id=\"n{node}\"><segment><source>Hello</source>\
         <target>Bonjour</target></segment></unit></file></xliff>"
    );
    for (version, ns) in [
        ("3.0", "urn:oasis:names:tc:xliff:document:2.0"),
        ("1.5", "urn:oasis:names:tc:xliff:document:1.2"),
        ("2.0", "urn:oasis:names:tc:xliff:document:1.2"),
    ] {
        let other = external
            .replace(
                "version=\"2.0\" srcLang",
                &format!("version=\"{version}\" srcLang"),
            )
            .replace("urn:oasis:names:tc:xliff:document:2.0", ns);
        let (status, body) = c.call(
            "POST",
            &format!("{prefix}/import"),
            "-",
            Some(json!({"format": "xliff", "content": other})),
        );
        assert_eq!(status, 422, "{version}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("XLIFF version `{version}`")),
            "{message}"
        );
    }
    assert_eq!(before, stored());
    let (status, body) = c.call(
        "POST",
        &format!("{prefix}/import"),
        "-",
        Some(json!({"format": "xliff", "content": external})),
    );
    assert_eq!((status, body["updated"].as_u64()), (200, Some(1)), "{body}");
    // A cue at 2^53 ms is kept; one a millisecond later is refused.
    let srt = |end: &str| format!("1\n00:00:01,000 --> {end}\nHello\n");
    let upload =
        |name: &str, text: String| c.upload(&prefix, vec![(name.to_owned(), text.into_bytes())]);
    // 2^53 ms = 2501999792:59:00.992.
    let (status, body) = upload("late.srt", srt("2501999792:59:00,993"));
    assert_eq!(status, 422, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`2501999792:59:00,993` is later than quire can hold exactly"),
        "{message}"
    );
    let (status, body) = upload("huge.srt", srt("99999999999999999999:00:00,000"));
    assert_eq!(status, 422, "{body}");
    let (status, body) = upload("edge.srt", srt("2501999792:59:00,992"));
    assert_eq!(status, 200, "{body}");
    assert!(server.terminate().success());
}

/// Replaces every `from` in `bytes` by `to` (of the same length).
fn patched(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to);
        }
        i += 1;
    }
    bytes
}

/// A CBZ with two entries of one name (the second page's name rewritten
/// in place, as no zip writer makes it) is refused, and nothing is stored.
#[tokio::test]
async fn a_cbz_with_one_name_twice_is_refused() {
    let t = TestCore::new();
    let id = t.session("Twice");
    let cbz = patched(
        zip_of(&[("p1.png", &png(4, 4)), ("p2.png", &png(5, 5))]),
        b"p2.png",
        b"p1.png",
    );
    let err = t
        .core
        .import_pages(id, vec![PageSource::Comic(file("twice.cbz", cbz))], None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(
        err.to_string()
            .contains("twice.cbz: two of its entries have one name"),
        "{err}"
    );
    assert_eq!(t.core.scene(id).await.unwrap().epoch, 0);
    assert_eq!(blob_count(&t, id), 0);
}

/// A PO file whose plural entries would make a page larger than
/// `server.max_body_bytes` as an op is refused (422, naming the limit)
/// before the page is built, and nothing is stored.
#[test]
fn a_po_file_that_would_make_a_page_past_the_limit_is_refused_by_its_cost() {
    let s = Sandbox::new();
    let config = s.write("small.toml", "[server]\nmax_body_bytes = 1048576\n");
    let server = Binary::headless(&s, &config, &[], &[]);
    let c = server.client();
    let prefix = c.new_project("-", "Plural");
    let mut po = String::from(
        "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\
         \"Plural-Forms: nplurals=16; plural=(n%16);\\n\"\n\n",
    );
    for i in 0..4_000 {
        po.push_str(&format!(
            "msgid \"f{i}\"\nmsgid_plural \"fs{i}\"\nmsgstr[0] \"\"\n\n"
        ));
    }
    assert!(po.len() < 200_000);
    let before = c.ok("GET", &format!("{prefix}/scene.json"), "-", None);
    let blobs = walk(&s.data_dir().join("projects"));
    let (status, body) = c.upload(&prefix, vec![("plural.po".to_owned(), po.into_bytes())]);
    assert_eq!(status, 422, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("plural.po: its entries make a page of more than")
            && message.contains("server.max_body_bytes (1048576 bytes)"),
        "{message}"
    );
    assert_eq!(
        before,
        c.ok("GET", &format!("{prefix}/scene.json"), "-", None)
    );
    assert_eq!(blobs, walk(&s.data_dir().join("projects")));
    assert!(server.terminate().success());
}
