//! The user guide (`docs/guide/`) and the README show commands that work:
//! every `goldfish …` command line of their `sh`, `bash` and `console` code
//! blocks is accepted by the command-line parser as written, with no
//! placeholder left for the reader to fill in, and the command reference
//! names every command and option the parser has.

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use goldfish::front::cli::Cli;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The guide's chapters, in the order `SUMMARY.md` lists them.
fn chapters() -> Vec<PathBuf> {
    let guide = root().join("docs/guide");
    let summary = std::fs::read_to_string(guide.join("SUMMARY.md")).unwrap();
    summary
        .split("](")
        .skip(1)
        .map(|rest| guide.join(rest.split(')').next().unwrap()))
        .collect()
}

/// Shell words of one line, as `sh` splits them: quotes and backslashes
/// undone, a `#` that starts a word ends the line, and the operators `|`,
/// `||`, `&&`, `;` and `&` as words of their own.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.push(chars.next().unwrap());
                        }
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_with(String::new).push(next);
                }
            }
            '#' if word.is_none() => break,
            ' ' | '\t' => words.extend(word.take()),
            '|' | '&' | ';' => {
                words.extend(word.take());
                let mut operator = c.to_string();
                if chars.peek() == Some(&c) && c != ';' {
                    operator.push(chars.next().unwrap());
                }
                words.push(operator);
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// Every `goldfish` command of a markdown file's shell code blocks, with the
/// line it is on: each simple command of a line (`echo … | goldfish store -`
/// gives `goldfish store -`) whose first word is `goldfish`.
fn goldfish_commands(markdown: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let mut block: Option<String> = None;
    for (number, line) in markdown.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            block = match block {
                Some(_) => None,
                None => Some(info.trim().to_owned()),
            };
            continue;
        }
        let command = match block.as_deref() {
            Some("sh" | "bash") => trimmed,
            Some("console") => match trimmed.strip_prefix("$ ") {
                Some(command) => command,
                None => continue,
            },
            _ => continue,
        };
        let words = shell_words(command);
        for simple in words.split(|w| matches!(w.as_str(), "|" | "||" | "&&" | ";" | "&")) {
            if simple.first().is_some_and(|w| w == "goldfish") {
                found.push((number + 1, simple.to_vec()));
            }
        }
    }
    found
}

/// A word a reader would have to replace: `<id>`, `ID`, `FOLDER`, `…`.
fn placeholder(word: &str) -> bool {
    (word.starts_with('<') && word.ends_with('>'))
        || word.contains('…')
        || word.contains("...")
        || matches!(
            word,
            "ID" | "IDS" | "DIR" | "FOLDER" | "NAME" | "CONTENT" | "QUERY" | "TEXT" | "BASE" | "N"
        )
}

#[test]
fn the_shell_line_splitter_reads_as_sh_does() {
    assert_eq!(
        shell_words(r#"echo "a \"b\" c" | goldfish store -t bug-fix -   # comment"#),
        [
            "echo",
            r#"a "b" c"#,
            "|",
            "goldfish",
            "store",
            "-t",
            "bug-fix",
            "-"
        ]
    );
    assert_eq!(
        shell_words("git add x && goldfish recall 'it''s' a#b"),
        ["git", "add", "x", "&&", "goldfish", "recall", "its", "a#b"]
    );
    let commands = goldfish_commands(
        "```console\n$ goldfish recall x\nnothing relevant\n```\n```toml\ngoldfish = 1\n```\n```sh\n# goldfish init\ngoldfish sync\n```\n",
    );
    let words: Vec<_> = commands.iter().map(|(_, words)| words.join(" ")).collect();
    assert_eq!(words, ["goldfish recall x", "goldfish sync"]);
}

#[test]
fn every_chapter_of_the_guide_is_in_its_summary() {
    let listed = chapters();
    assert!(listed.len() >= 9, "{listed:?}");
    for chapter in &listed {
        assert!(chapter.is_file(), "SUMMARY.md lists {}", chapter.display());
    }
    for entry in std::fs::read_dir(root().join("docs/guide")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") && !path.ends_with("SUMMARY.md") {
            assert!(
                listed.contains(&path),
                "SUMMARY.md does not list {}",
                path.display()
            );
        }
    }
}

#[test]
fn every_goldfish_command_in_the_guide_and_the_readme_parses() {
    let mut files = chapters();
    files.push(root().join("README.md"));
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        for (line, words) in goldfish_commands(&text) {
            checked += 1;
            let shown = words.join(" ");
            if let Some(word) = words.iter().find(|w| placeholder(w)) {
                failures.push(format!(
                    "{name}:{line}: `{shown}`: placeholder {word:?}, write a value"
                ));
                continue;
            }
            if let Err(error) = Cli::try_parse_from(&words) {
                failures.push(format!("{name}:{line}: `{shown}`:\n{error}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 80, "only {checked} commands found");
}

#[test]
fn the_command_reference_names_every_command_and_option() {
    let reference = std::fs::read_to_string(root().join("docs/guide/reference.md")).unwrap();
    let mut missing = Vec::new();
    let mut stack = vec![(String::from("goldfish"), Cli::command())];
    while let Some((path, command)) = stack.pop() {
        for sub in command.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            stack.push((format!("{path} {}", sub.get_name()), sub.clone()));
        }
        if path == "goldfish" || command.has_subcommands() {
            continue;
        }
        if !reference.contains(&path) {
            missing.push(path.clone());
        }
        for arg in command.get_arguments() {
            if let Some(long) = arg.get_long().filter(|long| *long != "help")
                && !reference.contains(&format!("--{long}"))
            {
                missing.push(format!("{path} --{long}"));
            }
        }
    }
    assert!(missing.is_empty(), "reference.md lacks: {missing:?}");
}
