//! Whole tasks by keyboard in a real terminal (tmux): the flow, a chapter,
//! a translator's PO file, a render and a CBZ.

use super::*;

#[test]
fn the_whole_flow_by_keyboard_in_a_real_terminal() {
    let s = Sandbox::new();
    let name = format!("quire-e2e-{}", std::process::id());
    let Some(tmux) = Tmux::start(&s, &name) else {
        return;
    };
    tmux.wait_for("There are no projects yet.");
    tmux.type_line("/new Demo comic");
    tmux.wait_for("Demo comic · epoch 0");
    let page = s.write("page1.txt", "Hello {0}, welcome!\n\nSee you tomorrow.\n");
    tmux.type_line(&format!("/attach {}", page.display()));
    tmux.wait_for("staged:");
    tmux.type_line("/import");
    tmux.wait_for(" 0/2");
    tmux.keys(&["?"]);
    tmux.wait_for("Commands");
    tmux.keys(&["Escape"]);
    tmux.wait_gone("Commands");
    tmux.type_line("/run pseudo-translate");
    let screen = tmux.wait_for("[Ĥéļļö {0}, ŵéļçöɱé!");
    assert!(
        screen.contains("pseudo-translate: done") || screen.contains("done"),
        "{screen}"
    );
    // Quitting saves the project.
    let scene = tmux.quit_and_read(&s, "demo-comic");
    let node = &scene["scene"]["pages"][0]["nodes"][0]["kind"];
    assert!(
        node["translation"].as_str().unwrap().starts_with("[Ĥéļļö"),
        "{node}"
    );
}

#[test]
fn enter_then_e_in_one_burst_reopens_the_saved_two_line_translation_at_80_by_24() {
    let s = Sandbox::new();
    let name = format!("quire-burst-{}", std::process::id());
    let Some(tmux) = Tmux::start_sized(&s, &name, "", (80, 24)) else {
        return;
    };
    tmux.wait_for("There are no projects yet.");
    tmux.type_line("/new Burst");
    tmux.wait_for("Burst · epoch 0");
    let page = s.write("page1.txt", "Hello there\n\nSee you\n");
    tmux.type_line(&format!("/attach {}", page.display()));
    tmux.wait_for("staged:");
    tmux.type_line("/import");
    tmux.wait_for(" 0/2");
    tmux.keys(&["Tab", "e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&["-l", "Salut"]);
    tmux.keys(&["M-Enter"]);
    tmux.keys(&["-l", "ça va"]);
    tmux.wait_for("ça va");
    // Save and open again in one write: the box must hold what was saved.
    tmux.keys(&["Enter", "e"]);
    let screen = tmux.wait_for("Translation (draft)");
    assert!(
        screen.contains("│Salut") && screen.contains("│ça va"),
        "{screen}"
    );
    // The save's answer may come after the box reopened; its word must
    // not be taken for (or overwrite) the one Esc gives.
    tmux.wait_for("translation saved");
    tmux.keys(&["Escape"]);
    tmux.wait_for("edit closed, nothing changed");
    // Quitting saves the project.
    let scene = tmux.quit_and_read(&s, "burst");
    let node = &scene["scene"]["pages"][0]["nodes"][0]["kind"];
    assert_eq!(node["translation"], "Salut\nça va", "{node}");
}

/// A day's work at 80×24 in a real terminal: a chapter of a text page and
/// an image page comes in, a box goes onto the image page, its translation
/// is typed over two lines and marked reviewed, `qa` finds the untranslated
/// lines and a warning is followed to its node, and XLIFF goes out to a
/// directory that did not exist.
#[test]
fn a_chapter_by_keyboard_at_80_by_24() {
    let s = Sandbox::new();
    let name = format!("quire-day-{}", std::process::id());
    let Some(tmux) = Tmux::start_sized(&s, &name, "", (80, 24)) else {
        return;
    };
    tmux.wait_for("There are no projects yet.");
    tmux.type_line("/new Chapter from=en to=fr");
    tmux.wait_for("en → fr");
    let text = s.write("p1.txt", "Hello there\n\nSee you\n");
    let image = s.path("p2.png");
    image::RgbImage::from_pixel(400, 300, image::Rgb([250, 250, 250]))
        .save(&image)
        .unwrap();
    tmux.type_line(&format!("/attach {}", text.display()));
    tmux.wait_for("p1.txt");
    tmux.type_line(&format!("/attach {}", image.display()));
    tmux.wait_for("p2.png");
    tmux.type_line("/import");
    tmux.wait_for("imported 2 file(s)");
    tmux.type_line("/2");
    tmux.type_line("/box 20 30 200 60 Welcome!");
    tmux.wait_for("text box added");
    tmux.keys(&["Tab", "G", "e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&["-l", "Bienvenue"]);
    tmux.keys(&["M-Enter"]);
    tmux.keys(&["-l", "à bord !"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("translation saved");
    tmux.keys(&["r"]);
    tmux.wait_for("reviewed");
    tmux.type_line("/run qa");
    tmux.wait_for("2 warnings");
    // Tab from the nodes to the jobs pane, Enter on the newest warning.
    tmux.keys(&["Tab"]);
    tmux.wait_for("Enter shows the node");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("missing-translation:");
    assert!(
        screen.contains("Hello there") || screen.contains("See you"),
        "{screen}"
    );
    let out = s.path("out/new/chapter.xlf");
    tmux.type_line(&format!("/export xliff {}", out.display()));
    tmux.wait_for("wrote ");
    let xliff = std::fs::read_to_string(&out).unwrap();
    assert!(
        xliff.contains("Bienvenue") && xliff.contains("à bord !"),
        "{xliff}"
    );
    // Quitting saves the project.
    let scene = tmux.quit_and_read(&s, "chapter");
    let page = &scene["scene"]["pages"][1];
    let added = page["nodes"].as_array().unwrap().last().unwrap();
    assert_eq!(added["transform"]["width"], 200.0, "{added}");
    assert_eq!(added["kind"]["text"], "Welcome!", "{added}");
    assert_eq!(
        added["kind"]["translation"], "Bienvenue\nà bord !",
        "{added}"
    );
    assert_eq!(added["kind"]["state"], "reviewed", "{added}");
}

/// A translator's own PO at 80 × 24: `/new NAME FILE` makes the project
/// (its language from the file's header), the entry's flags show beside
/// its source, a translation typed here goes out in the same file.
#[test]
fn a_translators_po_file_by_keyboard() {
    let test = "a_translators_po_file_by_keyboard";
    let Some(po) =
        crate::harness::testdata(test, "cat/django-5.2.19_contrib_admin_locale_ja_django.po")
    else {
        return;
    };
    let s = Sandbox::new();
    let name = format!("quire-po-{}", std::process::id());
    let Some(tmux) = Tmux::start_sized(&s, &name, "", (80, 24)) else {
        return;
    };
    tmux.wait_for("There are no projects yet.");
    tmux.type_line(&format!("/new Admin {}", po.display()));
    tmux.wait_for("→ ja");
    tmux.wait_for("flags: python-format");
    tmux.keys(&["Tab", "e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&["-l", "（確認）"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("translation saved");
    let out = s.path("out/django.po");
    tmux.type_line(&format!("/export po {}", out.display()));
    tmux.wait_for("wrote ");
    let exported = std::fs::read_to_string(&out).unwrap();
    let original = std::fs::read_to_string(&po).unwrap();
    assert!(exported.contains("X-Quire-Export: "), "{exported}");
    assert!(
        exported.contains("msgstr \"選択された %(verbose_name_plural)s の削除（確認）\""),
        "{exported}"
    );
    let msgids = |t: &str| t.lines().filter(|l| l.starts_with("msgid ")).count();
    assert_eq!(msgids(&exported), msgids(&original));
    tmux.quit_and_read(&s, "admin");
}

/// A scanlator's last step by keyboard: a page, its box and translation,
/// `render`, the rendered page shown, and a CBZ written.
#[test]
fn render_and_a_cbz_by_keyboard() {
    let s = Sandbox::new();
    let name = format!("quire-render-{}", std::process::id());
    let Some(tmux) = Tmux::start_sized(&s, &name, "", (100, 30)) else {
        return;
    };
    tmux.wait_for("There are no projects yet.");
    tmux.type_line("/new Scan to=fr");
    tmux.wait_for("→ fr");
    let image = s.path("p1.png");
    image::RgbImage::from_pixel(400, 300, image::Rgb([250, 250, 250]))
        .save(&image)
        .unwrap();
    tmux.type_line(&format!("/import {}", image.display()));
    tmux.wait_for("imported 1 file(s)");
    tmux.type_line("/box 40 40 300 80 Hello");
    tmux.wait_for("text box added");
    tmux.keys(&["Tab", "G", "e"]);
    tmux.wait_for("Translation (draft)");
    tmux.keys(&["-l", "Bonjour"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("translation saved");
    tmux.type_line("/run render");
    tmux.wait_for("render: done");
    let out = s.path("out/scan.cbz");
    tmux.type_line(&format!("/export cbz {}", out.display()));
    tmux.wait_for("wrote ");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
    let names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    assert_eq!(names, ["001.png", "ComicInfo.xml"]);
    let mut info = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("ComicInfo.xml").unwrap(), &mut info).unwrap();
    assert!(
        info.contains("<Title>Scan</Title>") && info.contains("<LanguageISO>fr</LanguageISO>"),
        "{info}"
    );
    // The rendered image is a node after the source; selecting it shows it.
    let scene = tmux.quit_and_read(&s, "scan");
    let roles: Vec<&str> = scene["scene"]["pages"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["kind"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["source", "rendered"]);
}
