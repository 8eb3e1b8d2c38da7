//! `quire batch` (spec 17, "Batch runs"): a preset over one input with
//! no server, its exports and report under `DIR/NAME/`, the exit codes
//! (0 done, 3 partial, 1 failed, 2 usage), a list's input picked by the
//! index a Kubernetes Indexed Job or a Slurm array gives, a done run that
//! changes nothing when run again, and a changed input refused unless
//! restarted. Inputs are real files other people made.

use std::io::{Cursor, Write};
use std::path::Path;

use serde_json::Value;

use crate::harness::{Sandbox, testdata};

/// Exit `code`, stdout empty, and a last stderr line `quire: error: …`
/// holding every one of `parts` (progress lines come before it).
#[track_caller]
fn ends(done: crate::harness::Done, code: i32, parts: &[&str]) {
    let stderr = done.stderr();
    assert_eq!(done.code(), code, "exit code; stderr:\n{stderr}");
    assert!(done.output.stdout.is_empty(), "stdout: {}", done.stdout());
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("quire: error: "), "last line: {last:?}");
    for part in parts {
        assert!(last.contains(part), "missing {part:?} in {last:?}");
    }
}

fn report(dir: &Path) -> Value {
    let text = std::fs::read(dir.join("report.json")).unwrap();
    serde_json::from_slice(&text).unwrap()
}

#[test]
fn a_po_goes_through_a_preset_and_a_done_run_changes_nothing() {
    let test = "a_po_goes_through_a_preset_and_a_done_run_changes_nothing";
    let Some(po) = testdata(
        test,
        "cat/django-5.2.19_contrib_admin_locale_ja_djangojs.po",
    ) else {
        return;
    };
    let s = Sandbox::new();
    let out = s.path("out");
    let done = s
        .quire()
        .args(["batch", "--preset", "pseudo-translate", "--out"])
        .args([&out])
        .args([&po])
        .run()
        .success();
    assert!(done.output.stdout.is_empty(), "stdout: {}", done.stdout());
    assert!(
        done.stderr().contains("pseudo-translate: completed"),
        "{}",
        done.stderr()
    );
    let dir = out.join("django-5.2.19_contrib_admin_locale_ja_djangojs");
    let r = report(&dir);
    assert_eq!(r["status"], "done", "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["resumed"], false);
    assert_eq!(r["steps"][0]["step"], "pseudo-translate");
    assert_eq!(r["steps"][0]["status"], "done");
    assert_eq!(r["steps"][0]["pages"], 1);
    let name = "django-5.2.19_contrib_admin_locale_ja_djangojs.po";
    assert_eq!(r["outputs"], serde_json::json!([name]));
    assert!(dir.join("project/project.toml").exists());
    let written = std::fs::read_to_string(dir.join(name)).unwrap();
    assert!(
        written.contains("msgid \"Available %s\""),
        "the file went back whole"
    );
    crate::harness::msgfmt_checks(test, &dir.join(name));
    // Again: done before, nothing changes.
    let before = s.snapshot();
    let again = s
        .quire()
        .args(["batch", "--preset", "pseudo-translate", "--out"])
        .args([&out])
        .args([&po])
        .run()
        .success();
    assert!(again.stderr().contains("done before"), "{}", again.stderr());
    assert_eq!(s.snapshot(), before, "a done run changed files");
}

/// A list's input is picked by `--index`, `JOB_COMPLETION_INDEX` or the
/// Slurm array's task id less its minimum; each writes only its folder.
#[test]
fn a_list_task_takes_its_input_from_the_index_it_is_given() {
    let test = "a_list_task_takes_its_input_from_the_index_it_is_given";
    let (Some(srt), Some(vtt)) = (
        testdata(test, "subtitles/pysrt_capability_tester.srt"),
        testdata(test, "subtitles/pysubs2_vtt_example.vtt"),
    ) else {
        return;
    };
    let s = Sandbox::new();
    let list = s.write(
        "work/inputs.txt",
        &format!("# the episode\n{}\n\n{}\n", srt.display(), vtt.display()),
    );
    let out = s.path("out");
    let run = |env: &[(&str, &str)]| {
        let mut run = s
            .quire()
            .args(["batch", "--preset", "pseudo-translate", "--out"])
            .args([&out])
            .args(["--inputs"])
            .args([&list]);
        for (k, v) in env {
            run = run.env(k, v);
        }
        run.run()
    };
    run(&[("JOB_COMPLETION_INDEX", "1")]).success();
    assert!(
        out.join("pysubs2_vtt_example/pysubs2_vtt_example.vtt")
            .exists()
    );
    assert!(!out.join("pysrt_capability_tester").exists());
    assert_eq!(report(&out.join("pysubs2_vtt_example"))["index"], 1);
    run(&[("SLURM_ARRAY_TASK_ID", "7"), ("SLURM_ARRAY_TASK_MIN", "7")]).success();
    let srt_out = out.join("pysrt_capability_tester/pysrt_capability_tester.srt");
    let written = std::fs::read_to_string(srt_out).unwrap();
    assert!(written.contains("-->"), "{written}");
}

/// Usage errors exit 2, name the problem, and write nothing; an input
/// it cannot read fails (1) with a report saying why.
#[test]
fn usage_errors_name_the_problem_and_write_nothing() {
    let s = Sandbox::new();
    let po = s.write("work/app.po", "msgid \"Hello\"\nmsgstr \"\"\n");
    let twice = s.write("work/twice.txt", "a/app.po\nb/app.po\n");
    let one = s.write("work/one.txt", "app.po\n");
    let out = s.path("out");
    let before = s.snapshot();
    let batch = |args: &[&str]| {
        s.quire()
            .args(["batch", "--out"])
            .args([&out])
            .args(args)
            .run()
    };
    let po = po.to_str().unwrap();
    let (twice, one) = (twice.to_str().unwrap(), one.to_str().unwrap());
    batch(&["--preset", "no-such-thing", po]).fails(2, &["unknown preset `no-such-thing`"]);
    batch(&["--preset", "qa", "--export", "docx", po])
        .fails(2, &["--export docx", "unknown format"]);
    batch(&["--preset", "qa", "--inputs", twice, "--index", "0"])
        .fails(2, &["twice.txt", "lines 1 and 2", "app/"]);
    batch(&["--preset", "qa", "--inputs", one, "--index", "1"])
        .fails(2, &["index 1 is past the end", "one.txt"]);
    batch(&["--preset", "qa", "--inputs", one]).fails(2, &["needs --index N"]);
    batch(&["--preset", "qa", "--source-language", "not a tag", po])
        .fails(2, &["--source-language"]);
    assert_eq!(s.snapshot(), before, "a usage error wrote something");

    // An input it cannot read fails (1), the report saying why.
    let notes = s.write("work/notes.docx", "not a translation file");
    let notes = notes.to_str().unwrap();
    batch(&["--preset", "qa", notes]).fails(1, &["notes.docx", "not an input quire batch reads"]);
    let r = report(&out.join("notes"));
    assert_eq!(
        (&r["status"], &r["exitCode"]),
        (&Value::from("failed"), &Value::from(1)),
        "{r}"
    );
    assert!(r["error"].as_str().unwrap().contains("not an input"), "{r}");

    // An input over the upload limit is not read: failed, named.
    let big = s.write("work/big.po", &"# padding\n".repeat(300));
    s.quire()
        .args(["batch", "--out"])
        .args([&out])
        .args(["--preset", "qa"])
        .args([&big])
        .env("QUIRE_SERVER__MAX_BODY_BYTES", "1000")
        .run()
        .fails(1, &["big.po", "over the 1000-byte limit"]);
    assert!(
        !out.join("big/project").exists(),
        "a refused input made a project"
    );
}

fn png() -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
        64,
        96,
        image::Rgb([250, 250, 240]),
    ))
    .write_to(&mut out, image::ImageFormat::Png)
    .unwrap();
    out.into_inner()
}

/// A comic archive with a page that does not decode: the rest goes
/// through and out as CBZ, the page is named as skipped, exit 3. Then the
/// archive changes: refused (1) naming it, until `--restart`.
#[test]
fn a_skipped_page_is_partial_and_a_changed_input_needs_a_restart() {
    let s = Sandbox::new();
    let cbz = |pages: &[(&str, Vec<u8>)]| {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data) in pages {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap().into_inner()
    };
    let chapter = s.path("work/ch1.cbz");
    std::fs::create_dir_all(chapter.parent().unwrap()).unwrap();
    std::fs::write(
        &chapter,
        cbz(&[("p1.png", png()), ("p2.png", b"not a png".to_vec())]),
    )
    .unwrap();
    let out = s.path("out");
    let batch = |restart: bool| {
        let mut run = s
            .quire()
            .args(["batch", "--preset", "qa", "--out"])
            .args([&out])
            .args([&chapter]);
        if restart {
            run = run.args(["--restart"]);
        }
        run.run()
    };
    ends(batch(false), 3, &["ch1.cbz", "partial", "p2.png"]);
    let dir = out.join("ch1");
    let r = report(&dir);
    assert_eq!(
        (&r["status"], &r["exitCode"]),
        (&Value::from("partial"), &Value::from(3))
    );
    assert_eq!(r["skipped"][0]["entry"], "ch1.cbz/p2.png", "{r}");
    assert_eq!(r["outputs"], serde_json::json!(["ch1.cbz"]));
    assert!(dir.join("ch1.cbz").exists());

    std::fs::write(&chapter, cbz(&[("p1.png", png()), ("p2.png", png())])).unwrap();
    let before = s.snapshot();
    ends(
        batch(false),
        1,
        &["ch1.cbz", "changed since the earlier run", "--restart"],
    );
    assert_eq!(s.snapshot(), before, "a refused run changed files");
    batch(true).success();
    let r = report(&dir);
    assert_eq!(
        (&r["status"], &r["resumed"]),
        (&Value::from("done"), &Value::from(false))
    );
    assert_eq!(r["skipped"], serde_json::json!([]));
}

/// A step that fails as a whole (a command engine nobody may approve
/// here) fails the run, with no export, keeping what the steps before it
/// did; once allowed, the same command line goes on: the first step is
/// `done-before`, the report says `resumed`, and the page the engine
/// could not do is named.
#[test]
fn a_failed_run_goes_on_where_it_stopped() {
    let s = Sandbox::new();
    s.write(
        "config/quire/config.toml",
        r#"
[engines.ocr-tesseract]
stage = "ocr"
command = ["tesseract", "{image}", "-", "tsv"]
input = "page-image"
output = "tesseract-tsv"
requires_approval = true

[pipelines.twice]
steps = ["pseudo-translate", "ocr-tesseract"]
"#,
    );
    let po = s.write(
        "work/app.po",
        "msgid \"Hello\"\nmsgstr \"\"\n\nmsgid \"Bye\"\nmsgstr \"\"\n",
    );
    let out = s.path("out");
    let batch = |allowed: bool| {
        let mut run = s
            .quire()
            .args(["batch", "--preset", "twice", "--out"])
            .args([&out, &po]);
        if allowed {
            run = run.env("QUIRE_ENGINES__ALLOW_UNATTENDED", "true");
        }
        run.run()
    };
    ends(batch(false), 1, &["app.po", "ocr-tesseract"]);
    let dir = out.join("app");
    let r = report(&dir);
    assert_eq!(
        (&r["status"], &r["exitCode"]),
        (&Value::from("failed"), &Value::from(1)),
        "{r}"
    );
    assert_eq!(r["steps"][0]["status"], "done", "{r}");
    assert_eq!(r["outputs"], serde_json::json!([]));
    assert!(!dir.join("app.po").exists(), "a failed run wrote an export");
    // Allowed, it goes on; OCR finds no image on a PO's text page, so
    // that page fails the step: partial, named, the export written.
    ends(
        batch(true),
        3,
        &["app.po", "partial", "ocr-tesseract: page 1"],
    );
    let r = report(&dir);
    assert_eq!(r["resumed"], true, "{r}");
    assert_eq!(r["steps"][0]["status"], "done-before", "{r}");
    assert_eq!(r["steps"][1]["step"], "ocr-tesseract", "{r}");
    assert_eq!(
        r["steps"][1]["failed"].as_array().map(Vec::len),
        Some(1),
        "{r}"
    );
    assert_eq!(r["status"], "partial", "{r}");
    let written = std::fs::read_to_string(dir.join("app.po")).unwrap();
    assert!(written.contains("msgid \"Bye\""), "{written}");
}
