//! Model helpers under pressure: past their deadline, cancelled with their
//! job or their server, a page past the detection budget.

use super::*;

/// A helper past `detect.timeout_secs` is killed and the page fails with
/// a warning naming the timeout; no helper is started again, so the job
/// ends within the timeout and a few seconds, however many pages are
/// left. (The pages in flight at once, one per core, each had a helper
/// that hung: each is killed.)
#[test]
fn a_helper_past_its_deadline_is_killed_and_the_job_ends() {
    let s = Sandbox::new();
    let (server, prefix) = with_hung_detector(&s, 1, 3);
    let c = server.client();
    let started = Instant::now();
    let job = c.ok(
        "POST",
        &format!("{prefix}/pipelines"),
        "-",
        Some(json!({"steps": ["detect"]})),
    );
    let job = finished(&c, job["jobId"].as_str().unwrap());
    assert!(
        started.elapsed() < Duration::from_secs(1 + 5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(job["status"], "completedWithErrors", "{job}");
    let warnings = job["warnings"].to_string();
    assert!(
        warnings.contains(
            "the quire-ppocr helper did not answer within 1 s (detect.timeout_secs) and was killed"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains("not started again for this job"),
        "{warnings}"
    );
    let pids = helper_pids(&s.path("helper-pids"), 1);
    let at_once = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    assert!((1..=at_once.min(3)).contains(&pids.len()), "{pids:?}");
    assert!(pids.iter().all(|pid| gone(*pid)), "{pids:?}");
    assert!(server.terminate().success());
}

/// Cancelling a job kills its helper at once; stopping the server kills
/// the helper of a job still running: none outlives it.
#[test]
fn cancelling_the_job_or_stopping_the_server_kills_its_helper() {
    let s = Sandbox::new();
    let (server, prefix) = with_hung_detector(&s, 600, 1);
    let c = server.client();
    let job = c.ok(
        "POST",
        &format!("{prefix}/pipelines"),
        "-",
        Some(json!({"steps": ["detect"]})),
    );
    let id = job["jobId"].as_str().unwrap().to_owned();
    let first = helper_pids(&s.path("helper-pids"), 1)[0];
    c.ok("DELETE", &format!("/api/v1/operations/{id}"), "-", None);
    assert_eq!(finished(&c, &id)["status"], "cancelled");
    assert!(gone(first), "the helper of a cancelled job lives on");
    c.ok(
        "POST",
        &format!("{prefix}/pipelines"),
        "-",
        Some(json!({"steps": ["detect"]})),
    );
    let second = helper_pids(&s.path("helper-pids"), 2)[1];
    assert!(server.terminate().success());
    assert!(gone(second), "the helper outlived the server");
}

/// A page larger than `detect.max_pixels` is not read: the page fails
/// with a warning naming the setting, and the job goes on to the next.
#[test]
fn a_page_past_the_detection_budget_fails_by_name() {
    let s = Sandbox::new();
    let config = s.write("budget.toml", "[detect]\nmax_pixels = 1000000\n");
    let server = Binary::headless(&s, &config, &[], &[]);
    let c = server.client();
    let prefix = c.new_project("-", "Big");
    let page = |w: u32, h: u32| {
        // Dots a pixel wide all over: what costs a detector most.
        let image = image::GrayImage::from_fn(w, h, |x, y| {
            image::Luma([if (x % 3, y % 3) == (1, 1) { 0 } else { 255 }])
        });
        let mut png = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageLuma8(image)
            .write_to(&mut png, image::ImageFormat::Png)
            .unwrap();
        png.into_inner()
    };
    let files = vec![
        ("a-big.png".to_owned(), page(1500, 1000)),
        ("b-small.png".to_owned(), page(600, 400)),
    ];
    assert_eq!(c.upload(&prefix, files).0, 200);
    let job = c.ok(
        "POST",
        &format!("{prefix}/pipelines"),
        "-",
        Some(json!({"steps": ["detect"]})),
    );
    let job = finished(&c, job["jobId"].as_str().unwrap());
    let warnings = job["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{job}");
    assert_eq!(warnings[0]["pageIndex"], 0);
    assert_eq!(
        warnings[0]["message"],
        "the page is 1500 × 1000 pixels (1.5 megapixels); detection reads at most 1.0 \
         megapixels (detect.max_pixels): scale the page down, or raise it"
    );
    assert!(server.terminate().success());
}
