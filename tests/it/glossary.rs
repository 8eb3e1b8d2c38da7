//! The glossary from the command line: `quire glossary import` adds a CSV
//! or TBX file's terms to a managed project; a CSV row without its target
//! and a TBX file that is not XML are refused, naming the line or
//! position, and change nothing.

use serde_json::Value;

use crate::harness::Sandbox;

/// A managed project in `s`, imported from an archive; its name and path.
async fn project(s: &Sandbox) -> (String, std::path::PathBuf) {
    let (bytes, _) = crate::archive::archive_of_a_project().await;
    let file = s.root().join("p.quire.zip");
    std::fs::write(&file, &bytes).unwrap();
    s.quire()
        .args(["projects", "import"])
        .args([&file])
        .run()
        .success();
    let list = s
        .quire()
        .args(["projects", "list", "--json"])
        .run()
        .success();
    let rows: Vec<Value> = serde_json::from_str(&list.stdout()).unwrap();
    (
        rows[0]["name"].as_str().unwrap().to_owned(),
        rows[0]["path"].as_str().unwrap().into(),
    )
}

fn glossary_of(project: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(project.join("scene.json")).unwrap();
    let scene: Value = serde_json::from_str(&text).unwrap();
    scene["scene"]["project"]["glossary"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn the_cli_imports_a_glossary_and_refuses_bad_files() {
    let s = Sandbox::new();
    let (name, path) = project(&s).await;
    let bad_csv = s.write("bad.csv", "source,target\nmoon,lune\nsun\n");
    let bad_tbx = s.write("bad.tbx", "source,target\nmoon,lune\n");
    for (file, expected) in [
        (&bad_csv, "line 3: the `target` column is missing"),
        (&bad_tbx, "not well-formed XML"),
    ] {
        let out = s
            .quire()
            .args(["glossary", "import"])
            .args([file])
            .args(["--into", &name])
            .run();
        assert_eq!(out.code(), 1, "{}", out.stderr());
        assert!(out.stderr().contains(expected), "{}", out.stderr());
    }
    assert!(
        glossary_of(&path).is_empty(),
        "a refused file changed the glossary"
    );
    let good = s.write(
        "terms.csv",
        "Source,Target,Note,caseSensitive\nmoon,lune,at night,\nTokyo,Tōkyō,,yes\n",
    );
    let import = |file: &std::path::Path| {
        s.quire()
            .args(["glossary", "import"])
            .args([file])
            .args(["--into", &name])
            .run()
            .success()
            .stdout()
    };
    assert!(import(&good).contains("2 added, 0 updated, 0 unchanged"));
    assert!(import(&good).contains("0 added, 0 updated, 2 unchanged"));
    let terms = glossary_of(&path);
    assert_eq!(terms.len(), 2, "{terms:?}");
    assert_eq!(terms[0]["source"], "Tokyo");
    assert_eq!(terms[0]["caseSensitive"], true);
    assert_eq!(terms[1]["note"], "at night");
    let unknown = s
        .quire()
        .args(["glossary", "import"])
        .args([&good])
        .args(["--into", "no such project"])
        .run();
    assert_eq!(unknown.code(), 1);
    assert!(
        unknown.stderr().contains("unknown project"),
        "{}",
        unknown.stderr()
    );
}
