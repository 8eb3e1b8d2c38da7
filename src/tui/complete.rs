//! Tab completion of the command line: command names, then what each
//! command takes (engine ids for `/run`, formats for `/export`, paths for
//! the commands that take a file). Pure: paths come from a directory
//! listing that the runtime reads (`Effect::ListDir`) and hands back.

use super::app::{App, InputLine};
use super::commands::COMMANDS;

/// Formats `/export` writes.
pub const EXPORT_FORMATS: &[&str] = &[
    "markdown", "xliff", "po", "srt", "vtt", "json", "archive", "png", "cbz", "pdf",
];

/// Commands whose argument is a path.
const PATH_COMMANDS: &[&str] = &["open", "attach", "import"];

/// What Tab does to the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// The line becomes this; `choices` lists the candidates when more
    /// than one remains.
    Line {
        input: InputLine,
        choices: Vec<String>,
    },
    /// The word is a path: list this directory, then call [`paths`].
    ListDir { dir: String },
    /// Nothing completes the word.
    None,
}

/// The word being completed: its start (in chars) and text.
fn last_word(text: &str, cursor: usize) -> (usize, String, Vec<String>) {
    let before: String = text.chars().take(cursor).collect();
    let start = before
        .rfind(' ')
        .map_or(0, |i| before[..=i].chars().count());
    let word: String = before.chars().skip(start).collect();
    let earlier = before
        .chars()
        .take(start)
        .collect::<String>()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    (start, word, earlier)
}

/// The line with the word at `start` replaced by `with`.
fn replaced(input: &InputLine, start: usize, with: &str) -> InputLine {
    let head: String = input.text.chars().take(start).collect();
    let tail: String = input.text.chars().skip(input.cursor).collect();
    let text = format!("{head}{with}{tail}");
    InputLine {
        cursor: head.chars().count() + with.chars().count(),
        text,
    }
}

/// The longest prefix all `words` share.
fn common_prefix(words: &[String]) -> String {
    let Some(first) = words.first() else {
        return String::new();
    };
    let mut prefix: Vec<char> = first.chars().collect();
    for w in &words[1..] {
        let same = prefix
            .iter()
            .zip(w.chars())
            .take_while(|(a, b)| **a == *b)
            .count();
        prefix.truncate(same);
    }
    prefix.into_iter().collect()
}

/// Completes `word` (at `start`) from `candidates`; `done` is appended when
/// one candidate is left (a space after a name, nothing after a directory).
fn choose(
    input: &InputLine,
    start: usize,
    word: &str,
    candidates: Vec<(String, &str)>,
) -> Completion {
    let matching: Vec<(String, &str)> = candidates
        .into_iter()
        .filter(|(c, _)| c.starts_with(word))
        .collect();
    match matching.as_slice() {
        [] => Completion::None,
        [(only, done)] => Completion::Line {
            input: replaced(input, start, &format!("{only}{done}")),
            choices: Vec::new(),
        },
        many => {
            let names: Vec<String> = many.iter().map(|(c, _)| c.clone()).collect();
            Completion::Line {
                input: replaced(input, start, &common_prefix(&names)),
                choices: names,
            }
        }
    }
}

/// The command names, as typed (without `/`).
fn command_names() -> Vec<String> {
    let mut names: Vec<String> = COMMANDS
        .iter()
        .flat_map(|(usage, _)| usage.split(", "))
        .filter_map(|u| u.trim_start_matches('/').split(' ').next())
        .filter(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .map(str::to_owned)
        .collect();
    names.extend(["glossary", "help"].map(str::to_owned));
    names.sort();
    names.dedup();
    names
}

/// What Tab does to the app's command line.
pub fn complete(app: &App, input: &InputLine) -> Completion {
    let (start, word, earlier) = last_word(&input.text, input.cursor);
    let word = word.trim_start_matches('/').to_owned();
    let start = if input.text.starts_with('/') && earlier.is_empty() {
        start + 1
    } else {
        start
    };
    let named = |names: Vec<String>| names.into_iter().map(|n| (n, " ")).collect();
    match earlier.first().map(|c| c.trim_start_matches('/')) {
        None => choose(input, start, &word, named(command_names())),
        Some("run") => choose(
            input,
            start,
            &word,
            named(app.workspace.engines.iter().map(|e| e.id.clone()).collect()),
        ),
        Some("filter") => choose(
            input,
            start,
            &word,
            named(
                super::navigate::Filter::NAMES
                    .iter()
                    .chain(&["all"])
                    .map(|f| (*f).to_owned())
                    .collect(),
            ),
        ),
        Some("export") if earlier.len() == 1 => choose(
            input,
            start,
            &word,
            named(EXPORT_FORMATS.iter().map(|f| (*f).to_owned()).collect()),
        ),
        Some(command) if PATH_COMMANDS.contains(&command) || command == "export" => {
            let dir = match word.rfind('/') {
                Some(i) => word[..=i].to_owned(),
                None => String::new(),
            };
            Completion::ListDir { dir }
        }
        Some(_) => Completion::None,
    }
}

/// Completes the path word of `input` from the entries of its directory
/// (names, and whether each is a directory).
pub fn paths(input: &InputLine, entries: &[(String, bool)]) -> Completion {
    let (start, word, _) = last_word(&input.text, input.cursor);
    let (dir, stem) = match word.rfind('/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => ("", word.as_str()),
    };
    let hidden_ok = stem.starts_with('.');
    let candidates = entries
        .iter()
        .filter(|(name, _)| hidden_ok || !name.starts_with('.'))
        .map(|(name, is_dir)| (format!("{dir}{name}"), if *is_dir { "/" } else { " " }))
        .collect();
    choose(input, start, &word, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> InputLine {
        InputLine {
            text: text.into(),
            cursor: text.chars().count(),
        }
    }

    fn app() -> App {
        let mut app = App::new("local".into(), false);
        app.workspace.engines = ["pseudo-translate", "qa", "tm"]
            .map(|id| quire_core::engines::EngineInfo {
                id: id.into(),
                stage: "translate".into(),
                description: String::new(),
                requires_approval: false,
                built_in: true,
                command: None,
            })
            .to_vec();
        app
    }

    fn text(c: Completion) -> (String, Vec<String>) {
        match c {
            Completion::Line { input, choices } => (input.text, choices),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn commands_engines_and_formats_complete() {
        let app = app();
        assert_eq!(text(complete(&app, &line("ex"))).0, "export ");
        assert_eq!(text(complete(&app, &line("/ex"))).0, "/export ");
        let (t, choices) = text(complete(&app, &line("/im")));
        assert_eq!(t, "/import ");
        assert!(choices.is_empty());
        assert_eq!(
            text(complete(&app, &line("run pseudo-translate q"))).0,
            "run pseudo-translate qa "
        );
        let (t, choices) = text(complete(&app, &line("run p")));
        assert_eq!((t.as_str(), choices.len()), ("run pseudo-translate ", 0));
        assert_eq!(text(complete(&app, &line("export x"))).0, "export xliff ");
        assert_eq!(
            complete(&app, &line("export xliff ou")),
            Completion::ListDir { dir: String::new() }
        );
        assert_eq!(
            complete(&app, &line("attach ~/pages/p")),
            Completion::ListDir {
                dir: "~/pages/".into()
            }
        );
        assert_eq!(complete(&app, &line("zzz")), Completion::None);
    }

    #[test]
    fn paths_complete_to_a_file_or_a_common_prefix() {
        let entries = [
            ("p1.png".to_owned(), false),
            ("p2.png".to_owned(), false),
            ("ch1".to_owned(), true),
            (".hidden".to_owned(), false),
        ];
        assert_eq!(
            text(paths(&line("attach pages/c"), &entries)).0,
            "attach pages/ch1/"
        );
        let (t, choices) = text(paths(&line("attach pages/p"), &entries));
        assert_eq!(t, "attach pages/p");
        assert_eq!(choices, ["pages/p1.png", "pages/p2.png"]);
        assert_eq!(
            text(paths(&line("attach p1"), &entries)).0,
            "attach p1.png "
        );
        assert_eq!(paths(&line("attach q"), &entries), Completion::None);
    }
}
