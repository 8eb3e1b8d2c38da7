//! The command line (`:` or `/`): `/open PATH`, `/new NAME [FILE]`, `/close`,
//! `/run STEP… [lang=L] [overwrite=O] [font=F] [provider=P]`, `/cancel`, `/undo`,
//! `/redo`, `/attach PATH`, `/import`, `/export FORMAT PATH`,
//! `/tui-mcp-revoke`, `/help`, `/quit`; `/N`, `/find`; pages, nodes and
//! staged files in `manage`.

use std::path::PathBuf;

use super::app::{App, Attachment, AttachmentKind, Effect, Modal};
use super::manage;
use super::update::{confirm_close, go_to_page, next_node, request_quit};
use quire_core::export::{ExportSpec, Untranslated};
use quire_core::jobs::{Approval, PipelineSpec};
use quire_formats::glossary::GlossaryFormat;
use quire_formats::units::TranslationFormat;
use quire_model::glossary::Term;
use quire_model::lang::Languages;
use quire_model::op::Op;
use quire_model::workflow::Overwrite;

mod project;
mod suggest;
use project::{glossary, languages, profile, term, word};

/// Command names and their one-line help, for `?` and completion hints.
pub const COMMANDS: &[(&str, &str)] = &[
    (
        "/new NAME [FILE]",
        "create a project (from a .po/.xlf/.srt/… FILE) and open it; from=ja to=fr",
    ),
    (
        "/open PATH",
        "open a project directory (or a managed project by name)",
    ),
    ("/close", "save and close the shown session"),
    (
        "/attach PATH",
        "stage images, text (txt, md), subtitles (srt, vtt), a cbz",
    ),
    (
        "/import [FILE]",
        "staged files, or FILE.xlf/.po (translations), FILE.zip",
    ),
    (
        "/run STEP…",
        "run engines: pseudo-translate qa lang=fr overwrite=machine",
    ),
    ("/cancel", "cancel the shown session's running job"),
    (
        "/box X Y W H [TEXT]",
        "add a text box to the page (image pixels), TEXT its source",
    ),
    (
        "/page rename NAME",
        "rename the page (/page move N, /page delete)",
    ),
    ("/node move N", "move the node to position N (/node delete)"),
    (
        "/style KEY=VALUE…",
        "the block's lettering: face size weight italic align color stroke vertical clean (/style project …: the project's)",
    ),
    ("/unstage [NAME]", "drop a staged file (all without NAME)"),
    ("/N", "go to page N (also :N)"),
    (
        "/filter STATE",
        "show untranslated, machine, translated, reviewed, final or warned nodes (all)",
    ),
    (
        "/find TEXT",
        "count and go to TEXT in sources and translations (Ctrl-f); -w whole words, -r regex, -c case",
    ),
    (
        "/lang from=L to=L",
        "set the project's source and target languages (to= clears one)",
    ),
    (
        "/profile NAME",
        "check this project's cues against netflix or netflix-children (/profile default: the config's)",
    ),
    (
        "/concordance WORDS",
        "remembered segments holding the words (1-3 insert the selected segment's matches)",
    ),
    (
        "/word add WORD",
        "accept WORD in this project's spelling (/word remove WORD)",
    ),
    (
        "/replace OLD => NEW",
        "replace in the translations, with a preview, as one undo step; -w -r -c as /find",
    ),
    (
        "/term SRC = TGT",
        "set a glossary term (/term -SRC removes it, /glossary lists)",
    ),
    (
        "/undo, /redo",
        "undo or redo your own last change (also u, Ctrl-r)",
    ),
    (
        "/suggest TEXT",
        "suggest a translation for the selected node without changing it",
    ),
    (
        "/accept [N], /reject N",
        "make the node's suggestion N (1: most votes) its translation, or drop it; /vote N [up|down|none]",
    ),
    (
        "/history [node]",
        "who did what in the project (or to the selected node), newest first; user=NAME filters",
    ),
    (
        "/export FORMAT PATH",
        "write markdown, xliff, po, srt, vtt, json, archive, or the rendered pages as png, cbz or pdf; untranslated=source|empty|refuse; history=yes (archive)",
    ),
    ("/tui-mcp-revoke", "stop sharing this TUI"),
    ("/quit", "quit (also q, Ctrl-c)"),
];

/// Runs one command line (with or without its leading `/`).
pub fn run(app: &mut App, line: &str, fx: &mut Vec<Effect>) {
    let line = line.trim();
    let line = line.strip_prefix('/').unwrap_or(line);
    if line.is_empty() {
        return;
    }
    let (name, rest) = match line.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (line, ""),
    };
    if let Ok(page) = line.parse::<usize>() {
        return go_to_page(app, page);
    }
    match name {
        "find" if rest.is_empty() => {
            app.desk.find = None;
            app.say("find cleared: n/N go to nodes that need work");
        }
        "find" => find(app, rest),
        "replace" => replace(app, rest),
        "filter" => filter(app, rest),
        "new" => new_project(app, rest, fx),
        "open" => {
            if rest.is_empty() {
                return app.fail("usage: /open PATH");
            }
            app.say(format!("opening {rest}…"));
            fx.push(Effect::Open(expand(rest)));
        }
        "close" => match app.shown_session() {
            Some(id) => confirm_close(app, id),
            None => app.fail("no session is shown; open one first"),
        },
        "undo" | "redo" => match app.shown_session() {
            Some(id) if name == "undo" => fx.push(Effect::Undo(id)),
            Some(id) => fx.push(Effect::Redo(id)),
            None => app.fail("no session is shown"),
        },
        "attach" => attach(app, rest, fx),
        "import" if !rest.is_empty() => import_file(app, rest, fx),
        "import" => import_staged(app, fx),
        "run" => run_steps(app, rest, fx),
        "page" => manage::page(app, rest, fx),
        "node" => manage::node(app, rest, fx),
        "style" => super::style::style(app, rest, fx),
        "box" => manage::add_box(app, rest, fx),
        "unstage" => manage::unstage(app, rest),
        "term" => term(app, rest, fx),
        "lang" => languages(app, rest, fx),
        "profile" => profile(app, rest, fx),
        "concordance" | "conc" => match app.shown_session() {
            Some(session) if !rest.is_empty() => {
                app.say(format!("looking for \"{rest}\" in the memory…"));
                fx.push(Effect::Concordance {
                    session,
                    query: rest.to_owned(),
                });
            }
            Some(_) => app.fail("usage: /concordance WORDS"),
            None => app.fail("no session is shown"),
        },
        "history" => history(app, rest, fx),
        "suggest" | "vote" | "accept" | "reject" => suggest::suggestion(app, name, rest, fx),
        "word" => word(app, rest, fx),
        "glossary" => glossary(app),
        "cancel" => {
            let Some(id) = app.shown_session() else {
                return app.fail("no session is shown");
            };
            match app.live_job(id) {
                Some(job) => {
                    let job = job.id;
                    app.say("cancelling…");
                    fx.push(Effect::Cancel(job));
                }
                None => app.fail("no job is running in this session"),
            }
        }
        "export" => export(app, rest, fx),
        "tui-mcp-revoke" => {
            if app.share.is_some() {
                fx.push(Effect::Revoke);
            } else {
                app.fail("this TUI is not shared");
            }
        }
        "help" => app.modal = Some(Modal::Help),
        "quit" | "q" => request_quit(app),
        other => app.fail(format!("unknown command `/{other}` (press ? for help)")),
    }
}

/// `/new NAME [FILE] [from=LANG] [to=LANG]`: a project, made of FILE
/// when one is named.
fn new_project(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    // `from=ja to=fr` at the end set the languages.
    let mut words: Vec<&str> = rest.split_whitespace().collect();
    let mut languages = Languages::default();
    while let Some((key, tag)) = words.last().and_then(|w| w.split_once('=')) {
        match key {
            "from" => languages.source_language = Some(tag.to_owned()),
            "to" => languages.target_language = Some(tag.to_owned()),
            _ => break,
        }
        words.pop();
    }
    // A last word that names a file pages are made of: the project
    // is made from it.
    let file = words
        .last()
        .filter(|w| {
            let lower = w.to_ascii_lowercase();
            TranslationFormat::from_path(&lower).is_some() || page_kind(&lower).is_some()
        })
        .map(|w| PathBuf::from(expand(w)));
    if file.is_some() {
        words.pop();
    }
    if words.is_empty() && file.is_none() {
        return app.fail("usage: /new NAME [FILE] [from=LANG] [to=LANG]");
    }
    if let Err(e) = languages.check() {
        return app.fail(e.to_string());
    }
    let name = words.join(" ");
    let exists = app
        .workspace
        .projects
        .iter()
        .map(|p| &p.name)
        .chain(app.workspace.sessions.iter().map(|s| &s.name));
    if let Some(taken) = exists
        .into_iter()
        .find(|n| !name.is_empty() && n.eq_ignore_ascii_case(&name))
    {
        return app.fail(format!(
            "a project named {taken} exists: /open {taken} opens it"
        ));
    }
    if let Some(path) = file {
        app.say(format!("making a project of {}…", path.display()));
        fx.push(Effect::CreateFrom {
            name: (!name.is_empty()).then_some(name),
            languages,
            path,
        });
        return;
    }
    app.say(format!("creating {name}…"));
    fx.push(Effect::Create(name, languages));
}

/// `/import`: the staged files as pages of the shown session.
fn import_staged(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(id) = app.shown_session() else {
        return app.fail("open a session to import into");
    };
    if app.editing.attachments.is_empty() {
        return app.fail("nothing staged: /attach PATH first (or /import FILE.xlf, FILE.zip)");
    }
    app.say("importing…");
    fx.push(Effect::Import {
        session: id,
        files: app.editing.attachments.clone(),
    });
}

/// `/filter STATE`: the node list shows only nodes in that state
/// (`all`: every node).
fn filter(app: &mut App, rest: &str) {
    match rest {
        "" | "all" => {
            app.desk.filter = None;
            app.say("every node shown");
        }
        name => match super::navigate::Filter::parse(name) {
            Some(filter) => {
                app.desk.filter = Some(filter);
                app.say(format!(
                    "showing {name} nodes · /filter all shows every node"
                ));
            }
            None => app.fail(format!(
                "filter by {} (or all)",
                super::navigate::Filter::NAMES.join(", ")
            )),
        },
    }
}

/// `~/x` → `$HOME/x`.
pub fn expand(path: &str) -> String {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest).display().to_string(),
        _ => path.to_owned(),
    }
}

/// What kind of pages a file makes, by its extension.
fn page_kind(path: &str) -> Option<AttachmentKind> {
    let ext = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    Some(match ext.as_str() {
        "png" | "jpg" | "jpeg" | "webp" => AttachmentKind::Image,
        "txt" | "md" | "text" => AttachmentKind::Text,
        "srt" | "vtt" => AttachmentKind::Subtitles,
        "cbz" | "zip" => AttachmentKind::Comic,
        _ => return None,
    })
}

/// `/attach PATH`: the kind comes from the name; whether the file exists
/// is checked by the `Locate` effect, which answers with [`stage`].
fn attach(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    if rest.is_empty() {
        return app.fail("usage: /attach PATH");
    }
    let Some(kind) = page_kind(rest) else {
        return app.fail(format!(
            "{rest}: attach png, jpg, webp (image pages), txt, md (text pages), \
             srt, vtt (subtitles) or cbz, zip (a comic's images)"
        ));
    };
    fx.push(Effect::Locate {
        path: rest.to_owned(),
        kind,
    });
}

/// Stages a located file, once.
pub fn stage(app: &mut App, file: Attachment) {
    if app.editing.attachments.iter().any(|a| a.path == file.path) {
        return app.fail(format!("{} is already staged", file.path.display()));
    }
    app.say(format!("staged {}; /import to add it", file.name));
    app.editing.attachments.push(file);
}

fn run_steps(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    let Some(session) = app.shown_session() else {
        return app.fail("open a session to run engines on");
    };
    let mut spec = PipelineSpec::default();
    for word in rest.split_whitespace() {
        let word = word.strip_prefix("--").unwrap_or(word);
        match word.split_once('=') {
            Some(("lang" | "to" | "language", v)) => spec.target_language = Some(v.to_owned()),
            Some(("overwrite", v)) => match Overwrite::parse(v) {
                Some(o) => spec.overwrite = Some(o),
                None => {
                    return app.fail(format!("overwrite={v}: say untranslated, machine or all"));
                }
            },
            Some(("font", v)) => spec.default_font = Some(v.to_owned()),
            Some(("provider", v)) => spec.provider = Some(v.to_owned()),
            Some((k, _)) => {
                return app.fail(format!(
                    "unknown option `{k}` (lang=, overwrite=, font=, provider=)"
                ));
            }
            None => spec.steps.push(word.to_owned()),
        }
    }
    if spec.steps.is_empty() {
        return app.fail("usage: /run STEP… (see the engines in ?)");
    }
    if !app.workspace.engines.is_empty()
        && let Some(unknown) = spec
            .steps
            .iter()
            .find(|s| !app.workspace.engines.iter().any(|e| &e.id == *s))
    {
        let known: Vec<&str> = app
            .workspace
            .engines
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        return app.fail(format!(
            "unknown step `{unknown}` (engines: {})",
            known.join(", ")
        ));
    }
    let needs_approval: Vec<(String, String)> = spec
        .steps
        .iter()
        .filter_map(|s| app.workspace.engines.iter().find(|e| &e.id == s))
        .filter(|e| e.requires_approval)
        .map(|e| (e.id.clone(), e.command.clone().unwrap_or_default()))
        .collect();
    if !needs_approval.is_empty() {
        app.modal = Some(Modal::Approval {
            session,
            spec,
            engines: needs_approval,
        });
        return;
    }
    app.say(format!("starting {}", spec.steps.join(" → ")));
    fx.push(Effect::Run {
        session,
        spec,
        approval: Approval::Person,
    });
}

/// `/import PATH [force]`: the format from the extension — pages (images,
/// text, subtitles, a .cbz) added with what is staged, XLIFF or PO merged
/// into the shown session, a `.zip` archive opened as a new project.
fn import_file(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    let (typed, force) = match rest.trim().rsplit_once(char::is_whitespace) {
        Some((path, "force" | "--force")) => (path.trim(), true),
        _ => (rest.trim(), false),
    };
    let path = PathBuf::from(expand(typed));
    let lower = typed.to_ascii_lowercase();
    if let Some(format) = TranslationFormat::from_path(&lower) {
        let Some(session) = app.shown_session() else {
            return app.fail("open the session to merge the translations into");
        };
        app.say("importing translations…");
        fx.push(Effect::ImportTranslations {
            session,
            path,
            format,
            force,
            take: Vec::new(),
        });
    } else if let Some(format) = GlossaryFormat::from_path(&lower) {
        let Some(session) = app.shown_session() else {
            return app.fail("open the session whose glossary to add to");
        };
        app.say("importing glossary terms…");
        fx.push(Effect::ImportGlossary {
            session,
            path,
            format,
        });
    } else if lower.ends_with(".zip") {
        app.say("importing the archive as a new project…");
        fx.push(Effect::ImportArchive(path));
    } else if let Some(kind) = page_kind(&lower) {
        // A page file: imported with whatever is staged, as one entry.
        let Some(session) = app.shown_session() else {
            return app.fail("open a session to import into");
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut files = app.editing.attachments.clone();
        files.push(Attachment { path, name, kind });
        app.say("importing…");
        fx.push(Effect::Import { session, files });
    } else {
        app.fail(format!(
            "`{typed}`: /import takes pages (png, jpg, webp, txt, md, srt, vtt, cbz), \
             translations (xlf, po), a glossary (csv, tbx) or a project (zip)"
        ));
    }
}

/// `TEXT -w -r -c`: the text and the flags after it (whole words, regular
/// expression, match case).
fn search_flags(rest: &str) -> (String, quire_core::find::FindOptions) {
    let mut options = quire_core::find::FindOptions::default();
    let mut words: Vec<&str> = rest.split(' ').collect();
    while let Some(flag) = words.last() {
        match *flag {
            "-w" => options.whole_words = true,
            "-r" => options.regex = true,
            "-c" => options.match_case = true,
            _ => break,
        }
        words.pop();
    }
    (words.join(" "), options)
}

/// `/find TEXT [-w] [-r] [-c]`: how often the project holds it, and the
/// next node that does.
fn find(app: &mut App, rest: &str) {
    let (text, options) = search_flags(rest);
    let pattern = match quire_core::find::Pattern::new(&text, options) {
        Ok(p) => p,
        Err(e) => return app.fail(e),
    };
    let found = match &app.desk.scene {
        Some((_, s)) => quire_core::find::count(&s.scene, &pattern),
        None => return app.fail("the scene is still loading"),
    };
    if found.matches == 0 {
        app.desk.find = None;
        return app.fail(format!("`{text}` is nowhere in this project"));
    }
    app.desk.find = Some((text.clone(), options));
    next_node(app, false);
    app.say(format!(
        "`{text}`: {} in {} · n/N next/previous · /find clears",
        plural(found.matches, "match", "matches"),
        plural(found.segments, "segment", "segments")
    ));
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `/replace OLD => NEW [-w] [-r] [-c]`: in the shown project's
/// translations (final ones left alone), after a preview, as one op.
fn replace(app: &mut App, rest: &str) {
    const USAGE: &str = "usage: /replace OLD => NEW [-w whole words] [-r regex] [-c case]";
    let Some(session) = app.shown_session() else {
        return app.fail("no session is shown");
    };
    let Some((old, new)) = rest.split_once(" => ") else {
        return app.fail(USAGE);
    };
    let (new, options) = search_flags(new);
    let pattern = match quire_core::find::Pattern::new(old, options) {
        Ok(p) => p,
        Err(e) => return app.fail(e),
    };
    let Some((_, snapshot)) = &app.desk.scene else {
        return app.fail("the scene is still loading");
    };
    let (changes, locked) = quire_core::find::replacements(&snapshot.scene, &pattern, &new);
    if changes.is_empty() {
        return app.fail(format!(
            "no translation holds `{old}`{}",
            if locked > 0 {
                format!(" but {} final one(s), left alone", locked)
            } else {
                String::new()
            }
        ));
    }
    let matches: usize = changes.iter().map(|c| c.matches).sum();
    let what = format!(
        "replace `{old}` with `{new}`: {} in {}",
        plural(matches, "match", "matches"),
        plural(changes.len(), "segment", "segments")
    );
    let mut message = format!("{what}?");
    if locked > 0 {
        message.push_str(&format!("\n{locked} final translation(s) left alone."));
    }
    for c in changes.iter().take(6) {
        message.push_str(&format!(
            "\n  {}\n  → {}",
            c.before.replace('\n', " ⏎ "),
            c.after.replace('\n', " ⏎ ")
        ));
    }
    if changes.len() > 6 {
        message.push_str(&format!("\n  … and {} more", changes.len() - 6));
    }
    let op = quire_core::find::op(&changes, what.clone());
    app.modal = Some(Modal::Confirm {
        message,
        action: crate::tui::app::ConfirmAction::Run(Box::new(Effect::Apply { session, op, what })),
    });
}

/// `/export FORMAT[:IMAGES[:QUALITY]] PATH`, e.g. `/export cbz:jpeg:90
/// ch12.cbz`: the page exports may write their images as jpeg or webp.
fn export(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    const USAGE: &str = "usage: /export markdown|xliff|po|srt|vtt|json|archive|png|cbz|pdf PATH \
                         (png, cbz, pdf: FORMAT:jpeg or FORMAT:webp, and :QUALITY 1-100)";
    let Some(session) = app.shown_session() else {
        return app.fail("no session is shown");
    };
    let mut words = rest.splitn(2, char::is_whitespace);
    let (Some(format), Some(path)) = (words.next(), words.next()) else {
        return app.fail(USAGE);
    };
    let mut spec = match ExportSpec::parse(format) {
        Ok(spec) => spec,
        Err(why) => return app.fail(why),
    };
    // `untranslated=source|empty|refuse` and (archives) `history=yes`
    // before or after the path.
    let mut kept = Vec::new();
    for word in path.split_whitespace() {
        if word == "history=yes" {
            spec.history = true;
            continue;
        }
        match word.strip_prefix("untranslated=") {
            Some("source") => spec.untranslated = Some(Untranslated::Source),
            Some("empty") => spec.untranslated = Some(Untranslated::Empty),
            Some("refuse") => spec.untranslated = Some(Untranslated::Refuse),
            Some(other) => {
                return app.fail(format!("untranslated={other}: say source, empty or refuse"));
            }
            None => kept.push(word),
        }
    }
    if kept.is_empty() {
        return app.fail(USAGE);
    }
    let path = PathBuf::from(expand(&kept.join(" ")));
    app.say("exporting…");
    fx.push(Effect::Export {
        session,
        spec,
        path,
        overwrite: false,
    });
}

/// `/history [node] [user=NAME] [agent=…] [engine=…]`: who did what in
/// the shown project (or to the selected node), newest first.
fn history(app: &mut App, rest: &str, fx: &mut Vec<Effect>) {
    let Some(session) = app.shown_session() else {
        app.fail("no session is shown");
        return;
    };
    let mut query = vec!["limit=200".to_owned()];
    for word in rest.split_whitespace() {
        match word.split_once('=') {
            Some((key @ ("user" | "agent" | "engine"), value)) if !value.is_empty() => {
                query.push(format!("{key}={}", encoded(value)));
            }
            None if word == "node" => {
                let node = app.desk.scene.as_ref().and_then(|(_, snapshot)| {
                    let page = snapshot.scene.pages.get(app.desk.page_selected)?;
                    Some(page.nodes.get(app.desk.node_selected)?.id)
                });
                let Some(node) = node else {
                    app.fail("no node selected");
                    return;
                };
                query.push(format!("node={node}"));
            }
            _ => {
                app.fail("usage: /history [node] [user=NAME] [agent=CLIENT] [engine=ID]");
                return;
            }
        }
    }
    app.say("reading the history…");
    fx.push(Effect::History {
        session,
        query: query.join("&"),
    });
}

/// Every byte but letters, digits and `-._~` percent-encoded.
fn encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
