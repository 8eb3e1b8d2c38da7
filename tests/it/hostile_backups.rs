//! `quire restore` against hostile backups (`16-operations.md`, "Under
//! attack", rule 8): a symbolic or hard link, a device or FIFO, a path
//! that climbs out or is absolute, an entry twice, a manifest naming a
//! project the archive lacks, a truncated or non-tar file are each refused
//! naming the entry, and the data directory is byte for byte as before,
//! with nothing written outside it. A restore killed half way leaves the
//! projects as they were, and the next one removes what it left.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::Sandbox;

/// A data directory with one project (`page`), and its backup as a tar.
fn backed_up(s: &Sandbox) -> (PathBuf, PathBuf) {
    let data = s.path("data-a");
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(8, 6, image::Rgb([9, 80, 200])))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let page = s.path("page.png");
    std::fs::write(&page, png.into_inner()).unwrap();
    s.quire()
        .args([
            "--data-dir",
            data.to_str().unwrap(),
            "projects",
            "import",
            page.to_str().unwrap(),
        ])
        .run()
        .success();
    let tar = s.path("backup.tar");
    backup(s, &data, &tar);
    (data, tar)
}

/// `quire --data-dir DATA backup --out TO`, which must succeed.
fn backup(s: &Sandbox, data: &Path, to: &Path) {
    s.quire()
        .args([
            "--data-dir",
            data.to_str().unwrap(),
            "backup",
            "--out",
            to.to_str().unwrap(),
        ])
        .run()
        .success();
}

/// A tar entry: its header and bytes.
type Entry = (tar::Header, Vec<u8>);

/// The entries of a tar, in order.
fn entries(tar: &Path) -> Vec<Entry> {
    use std::io::Read;
    let mut archive = tar::Archive::new(std::fs::File::open(tar).unwrap());
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            (e.header().clone(), bytes)
        })
        .collect()
}

/// A tar of `entries`, each written as its header says (paths included,
/// as the `tar` crate would refuse to write some of them).
fn write_tar(path: &Path, entries: &[Entry]) {
    let mut builder = tar::Builder::new(std::fs::File::create(path).unwrap());
    for (header, bytes) in entries {
        builder.append(header, bytes.as_slice()).unwrap();
    }
    builder.finish().unwrap();
}

/// A header of `kind` at `path` (written raw: `..` and `/` kept).
fn header(kind: tar::EntryType, path: &str, size: u64, link: Option<&str>) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(0o600);
    h.set_size(size);
    let name = &mut h.as_old_mut().name;
    name.fill(0);
    name[..path.len()].copy_from_slice(path.as_bytes());
    if let Some(link) = link {
        let target = &mut h.as_old_mut().linkname;
        target[..link.len()].copy_from_slice(link.as_bytes());
    }
    h.set_cksum();
    h
}

/// Every file under `dir` with its bytes (directories as empty).
fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    fn walk(dir: &Path, out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in read.flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.insert(path.clone(), Vec::new());
                walk(&path, out);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    walk(dir, &mut out);
    out
}

/// Entries no backup of quire's holds, each put before a good backup's
/// entries, with what the refusal must say: links, paths that leave the
/// data directory (`outside` is a directory beside it), a second
/// manifest (one of `good_entries`), and the like.
fn hostile_entries(
    good_entries: &[Entry],
    outside: &str,
) -> Vec<(&'static str, Vec<Entry>, &'static str)> {
    vec![
        (
            "symlink",
            vec![(
                header(tar::EntryType::Symlink, "./memory/evil", 0, Some(outside)),
                Vec::new(),
            )],
            "`./memory/evil`, a symbolic link",
        ),
        (
            "hardlink",
            vec![(
                header(
                    tar::EntryType::Link,
                    "./memory/passwd",
                    0,
                    Some("/etc/passwd"),
                ),
                Vec::new(),
            )],
            "`./memory/passwd`, a hard link",
        ),
        (
            "fifo",
            vec![(
                header(tar::EntryType::Fifo, "./memory/pipe", 0, None),
                Vec::new(),
            )],
            "`./memory/pipe`, a FIFO",
        ),
        (
            "device",
            vec![(
                header(tar::EntryType::Char, "./memory/null", 0, None),
                Vec::new(),
            )],
            "`./memory/null`, a device",
        ),
        (
            "climbs",
            vec![(
                header(
                    tar::EntryType::Regular,
                    "./memory/../../../outside/x",
                    2,
                    None,
                ),
                b"hi".to_vec(),
            )],
            "a path that leaves the data directory",
        ),
        (
            "absolute",
            vec![(
                header(tar::EntryType::Regular, &format!("{outside}/y"), 2, None),
                b"hi".to_vec(),
            )],
            "a path that leaves the data directory",
        ),
        (
            "twice",
            vec![
                good_entries
                    .iter()
                    .find(|(h, _)| h.path().unwrap().ends_with("quire-backup.json"))
                    .cloned()
                    .unwrap(),
            ],
            "quire-backup.json`, twice",
        ),
    ]
}

#[test]
fn a_hostile_backup_is_refused_whole_naming_the_entry_and_nothing_changes() {
    let s = Sandbox::new();
    let (_, good) = backed_up(&s);
    let good_entries = entries(&good);
    let outside = s.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // A data directory that holds a project already, and one not there yet.
    let other = Sandbox::new();
    let (existing, _) = backed_up(&other);
    let target = s.path("data-b");
    let copy = |from: &Path, to: &Path| {
        Command::new("cp")
            .args(["-a", from.to_str().unwrap(), to.to_str().unwrap()])
            .status()
            .unwrap();
    };
    copy(&existing, &target);
    let fresh = s.path("data-new");
    let outside_str = outside.to_str().unwrap().to_owned();
    let hostile = hostile_entries(&good_entries, &outside_str);
    let mut cases: Vec<(String, PathBuf, String)> = Vec::new();
    for (name, extra, says) in hostile {
        let mut all = good_entries.clone();
        // The hostile entry first, then the good ones.
        all.splice(0..0, extra);
        let path = s.path(&format!("{name}.tar"));
        write_tar(&path, &all);
        cases.push((name.to_owned(), path, says.to_owned()));
    }
    // The manifest names a project the archive lacks.
    {
        let mut all = good_entries.clone();
        let (h, bytes) = all
            .iter_mut()
            .find(|(h, _)| h.path().unwrap().ends_with("quire-backup.json"))
            .unwrap();
        let mut manifest: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        manifest["projects"].as_array_mut().unwrap().push(
            serde_json::json!({"id": "0190f2a8-0000-7000-8000-000000000001",
                "name": "Ghost", "dir": "ghost", "epoch": 3}),
        );
        *bytes = serde_json::to_vec(&manifest).unwrap();
        h.set_size(bytes.len() as u64);
        h.set_cksum();
        let path = s.path("ghost.tar");
        write_tar(&path, &all);
        cases.push((
            "ghost".into(),
            path,
            "the project Ghost (directory ghost), which the archive lacks".into(),
        ));
    }
    // Cut short: inside an entry, and between two entries.
    let bytes = std::fs::read(&good).unwrap();
    let mid = s.path("cut-mid.tar");
    std::fs::write(&mid, &bytes[..bytes.len() / 2 + 100]).unwrap();
    cases.push(("cut-mid".into(), mid, "is not a whole tar archive".into()));
    // The first entry's header and data, nothing after: a tar that reads
    // as one entry.
    let first_len = 512 + good_entries[0].1.len().div_ceil(512) * 512;
    let boundary = s.path("cut-boundary.tar");
    std::fs::write(&boundary, &bytes[..first_len]).unwrap();
    cases.push((
        "cut-boundary".into(),
        boundary,
        "is not a whole tar archive".into(),
    ));
    let junk = s.path("junk.tar");
    std::fs::write(&junk, b"PK\x03\x04 this is no tar at all".repeat(40)).unwrap();
    cases.push(("junk".into(), junk, "is not a whole tar archive".into()));

    for (name, path, says) in &cases {
        for into in [&target, &fresh] {
            let before = tree(s.root());
            let done = s
                .quire()
                .args([
                    "--data-dir",
                    into.to_str().unwrap(),
                    "restore",
                    path.to_str().unwrap(),
                ])
                .run();
            assert_eq!(done.code(), 2, "{name}: {}", done.stderr());
            assert!(
                done.stderr().contains(says.as_str()),
                "{name}: {}",
                done.stderr()
            );
            assert!(
                done.stderr().starts_with("quire: error: nothing restored")
                    || done.stderr().contains("is not a whole tar"),
                "{name}: {}",
                done.stderr()
            );
            assert_eq!(before, tree(s.root()), "{name} into {}", into.display());
        }
    }
    assert!(!fresh.exists());
    assert!(tree(&outside).is_empty());

    // The good backup goes into both.
    for into in [&target, &fresh] {
        let done = s
            .quire()
            .args([
                "--data-dir",
                into.to_str().unwrap(),
                "restore",
                good.to_str().unwrap(),
            ])
            .run();
        // The target holds a project of the same directory: refused too.
        if into == &target {
            assert_eq!(done.code(), 2, "{}", done.stderr());
            assert!(done.stderr().contains("already in"), "{}", done.stderr());
        } else {
            let done = done.success();
            assert!(
                done.stdout().contains("restored 1 projects"),
                "{}",
                done.stdout()
            );
        }
    }
    assert!(fresh.join("projects/page/project.toml").is_file());
    let staged: Vec<_> = std::fs::read_dir(s.root())
        .unwrap()
        .chain(std::fs::read_dir(&fresh).unwrap())
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".quire-"))
        .collect();
    assert!(staged.is_empty(), "{staged:?}");
}

/// A backup directory (not a tar) with a symbolic link or a second hard
/// link inside is refused the same way.
#[test]
fn a_backup_directory_with_a_link_is_refused() {
    let s = Sandbox::new();
    let (data, _) = backed_up(&s);
    let dir = s.path("nightly");
    backup(&s, &data, &dir);
    let secret = s.write("secret.txt", "not for the backup");
    #[cfg(unix)]
    {
        let link = dir.join("memory/leak.tmx");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let into = s.path("data-c");
        let before = tree(s.root());
        s.quire()
            .args([
                "--data-dir",
                into.to_str().unwrap(),
                "restore",
                dir.to_str().unwrap(),
            ])
            .run()
            .fails(2, &["memory/leak.tmx", "a symbolic link"]);
        assert_eq!(before, tree(s.root()));
        std::fs::remove_file(&link).unwrap();
        std::fs::hard_link(&secret, &link).unwrap();
        s.quire()
            .args([
                "--data-dir",
                into.to_str().unwrap(),
                "restore",
                dir.to_str().unwrap(),
            ])
            .run()
            .fails(2, &["memory/leak.tmx", "another hard link"]);
        assert!(!into.exists());
    }
}

/// A restore killed while it unpacks leaves the projects as they were;
/// the next restore removes what it left and succeeds.
#[test]
fn a_killed_restore_leaves_the_projects_and_the_next_one_cleans_up() {
    let s = Sandbox::new();
    let (_, good) = backed_up(&s);
    // A backup made long by a big memory file.
    let mut all = entries(&good);
    let big = vec![b'x'; 96 << 20];
    all.push((
        header(
            tar::EntryType::Regular,
            "./memory/big.tmx",
            big.len() as u64,
            None,
        ),
        big,
    ));
    let long = s.path("long.tar");
    write_tar(&long, &all);
    let into = s.path("data-d");
    std::fs::create_dir_all(into.join("projects")).unwrap();
    let before = tree(&into);
    let mut child = s
        .command()
        .args([
            "--data-dir",
            into.to_str().unwrap(),
            "restore",
            long.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let staging = into.join(format!(".quire-restore-{}", child.id()));
    let end = Instant::now() + Duration::from_secs(30);
    while !staging.exists() {
        assert!(Instant::now() < end, "no staging directory");
        assert!(child.try_wait().unwrap().is_none(), "it finished first");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let mut after = tree(&into);
    after.retain(|p, _| !p.starts_with(&staging));
    assert_eq!(before, after, "the projects changed");
    s.quire()
        .args([
            "--data-dir",
            into.to_str().unwrap(),
            "restore",
            good.to_str().unwrap(),
        ])
        .run()
        .success();
    assert!(!staging.exists());
    assert!(into.join("projects/page/project.toml").is_file());
}
