//! The secret rules ([`goldfish_core::memory::secrets::scan`], what `store`
//! refuses with) on labelled sets split in two by source: the tuning half,
//! the only one the rules were changed from, and the held-out half, read
//! only to score them.
//!
//! - Tuning: our sets (`fixtures/secrets/`), detect-secrets' and
//!   secretlint's labelled cases (`fixtures/secrets-public/`), and prose
//!   that holds no secret: `fixtures/injection/engineering.txt`, public
//!   projects' commit messages (`fixtures/injection-public/benign-commits.tsv`),
//!   half of botocore's service documentation (`fixtures/secrets-prose/`).
//! - Held out: CredSweeper's labelled cases, and prose: CHANGELOG entries
//!   (`benign-changelog.tsv`), the other half of botocore's documentation,
//!   Python docstrings (the standard library and twelve packages), agents'
//!   answers in the public sessions of `fixtures/capture-sessions/`, and
//!   the LongMemEval sample's conversations.
//!
//! ```text
//! cargo run --release -p goldfish-core --example secrets_table [-- --misses | --held-out-misses]
//! ```
//!
//! `--misses` prints the tuning half's missed secrets and false alarms;
//! `--held-out-misses` the held-out half's (for the report, not to tune on).

use std::path::{Path, PathBuf};

use goldfish_core::memory::secrets;

/// One row: its name and text.
type Row = (String, String);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `\u{XXXX}` escapes decoded.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\u{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 3..];
        match after.find('}').and_then(|end| {
            let code = u32::from_str_radix(&after[..end], 16).ok()?;
            Some((char::from_u32(code)?, end))
        }) {
            Some((c, end)) => {
                out.push(c);
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("\\u{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A `name<TAB>text` file: `\n` a line break; in the labelled sets also
/// `\u{…}` escapes and `⁞` removed (fixtures/secrets/README.md).
fn rows(path: &str, labelled: bool) -> Vec<Row> {
    let path = root().join(path);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    text.lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(name, text)| {
            let text = text.replace("\\n", "\n");
            let text = if labelled {
                unescape(&text.replace('⁞', ""))
            } else {
                text
            };
            (name.to_owned(), text)
        })
        .collect()
}

/// Each text part of the agents' messages in the public sessions.
fn agent_answers() -> Vec<Row> {
    let dir = root().join("fixtures/capture-sessions");
    let mut sessions: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the sessions")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.join("transcript.jsonl").is_file())
        .collect();
    sessions.sort();
    let mut found = Vec::new();
    for session in sessions {
        let name = session.file_name().unwrap().to_string_lossy().into_owned();
        let transcript = std::fs::read_to_string(session.join("transcript.jsonl")).unwrap();
        for line in transcript.lines() {
            let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if entry["message"]["role"] != "assistant" {
                continue;
            }
            for part in entry["message"]["content"].as_array().into_iter().flatten() {
                if part["type"] == "text"
                    && let Some(text) = part["text"].as_str().filter(|t| !t.trim().is_empty())
                {
                    found.push((format!("answer/{name}"), text.to_owned()));
                }
            }
        }
    }
    found
}

/// The LongMemEval sample's memories (conversations people had).
fn longmemeval() -> Vec<Row> {
    let dir = root().join("fixtures/longmemeval-sample/memories");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the sample")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    files.sort();
    let mut found = Vec::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            if let Ok(memory) = serde_json::from_str::<serde_json::Value>(line)
                && let Some(content) = memory["content"].as_str()
            {
                found.push(("longmemeval".to_owned(), content.to_owned()));
            }
        }
    }
    found
}

struct Set {
    name: &'static str,
    secrets: bool,
    rows: Vec<Row>,
}

fn set(name: &'static str, secrets: bool, rows: Vec<Row>) -> Set {
    Set {
        name,
        secrets,
        rows,
    }
}

fn tuning() -> Vec<Set> {
    let ours = |files: &[&str]| {
        files
            .iter()
            .flat_map(|file| rows(&format!("fixtures/secrets/{file}"), true))
            .collect()
    };
    vec![
        set(
            "ours (fixtures/secrets/)",
            true,
            ours(&["secrets.txt", "stated.txt"]),
        ),
        set(
            "detect-secrets",
            true,
            rows("fixtures/secrets-public/detect-secrets.secrets.txt", true),
        ),
        set(
            "secretlint",
            true,
            rows("fixtures/secrets-public/secretlint.secrets.txt", true),
        ),
        set(
            "ours, innocent",
            false,
            ours(&["innocent.txt", "stated-innocent.txt"]),
        ),
        set(
            "detect-secrets, innocent",
            false,
            rows("fixtures/secrets-public/detect-secrets.innocent.txt", true),
        ),
        set(
            "secretlint, innocent",
            false,
            rows("fixtures/secrets-public/secretlint.innocent.txt", true),
        ),
        set(
            "engineering memories (fixtures/injection/)",
            false,
            rows("fixtures/injection/engineering.txt", false),
        ),
        set(
            "commit messages (bat, fd)",
            false,
            rows("fixtures/injection-public/benign-commits.tsv", false),
        ),
        set(
            "botocore docs, tuning services",
            false,
            rows("fixtures/secrets-prose/botocore-tune.txt", false),
        ),
    ]
}

fn held_out() -> Vec<Set> {
    vec![
        set(
            "credsweeper",
            true,
            rows("fixtures/secrets-public/credsweeper.secrets.txt", true),
        ),
        set(
            "credsweeper, innocent",
            false,
            rows("fixtures/secrets-public/credsweeper.innocent.txt", true),
        ),
        set(
            "CHANGELOG entries (bat, fd)",
            false,
            rows("fixtures/injection-public/benign-changelog.tsv", false),
        ),
        set(
            "botocore docs, held-out services",
            false,
            rows("fixtures/secrets-prose/botocore-held-out.txt", false),
        ),
        set(
            "Python docstrings",
            false,
            rows("fixtures/secrets-prose/python-docs-held-out.txt", false),
        ),
        set("agents' answers (capture-sessions)", false, agent_answers()),
        set("LongMemEval conversations", false, longmemeval()),
    ]
}

fn table(half: &str, sets: &[Set], misses: bool) {
    println!("\n{half}\n");
    println!("| set | rows | flagged | share |");
    println!("| --- | ---: | ---: | ---: |");
    for set in sets {
        let flagged: Vec<&Row> = set
            .rows
            .iter()
            .filter(|(_, text)| secrets::scan(text).is_some())
            .collect();
        let label = if set.secrets {
            "secrets caught"
        } else {
            "false alarms"
        };
        println!(
            "| {} ({label}) | {} | {} | {:.3} |",
            set.name,
            set.rows.len(),
            flagged.len(),
            flagged.len() as f64 / set.rows.len().max(1) as f64
        );
        if !misses {
            continue;
        }
        for (name, text) in &set.rows {
            let finding = secrets::scan(text);
            if finding.is_some() == set.secrets {
                continue;
            }
            let shown: String = text.chars().take(200).collect();
            match finding {
                Some(finding) => eprintln!("FALSE {name} [{}] {shown:?}", finding.rule),
                None => eprintln!("MISS {name} {shown:?}"),
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wants = |flag: &str| args.iter().any(|arg| arg == flag);
    table("Tuning half", &tuning(), wants("--misses"));
    table("Held-out half", &held_out(), wants("--held-out-misses"));
}
