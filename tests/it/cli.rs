//! store / recall / forget from the command line, with snapshots of what a
//! user sees.

use crate::common::{TestEnv, filters, json_lines, memory_lines, render};

macro_rules! snapshot {
    ($env:expr, $value:expr) => {{
        let filters = filters($env);
        let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        insta::with_settings!({ filters => filters }, {
            insta::assert_snapshot!($value);
        });
    }};
}

#[test]
fn store_and_recall_text_and_json() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada Lovelace");
    let stored = env.goldfish(
        &repo,
        &[
            "store",
            "--type",
            "decision",
            "--tags",
            "db, wal",
            "--files",
            "src/index.rs",
            "--source",
            "agent",
            "Use SQLite WAL mode for the index; readers never block the writer.",
        ],
    );
    snapshot!(&env, render(&stored));
    env.set_now("2026-11-21T09:31:00Z");
    let stdin = env.goldfish_stdin(
        &repo,
        &["store", "-t", "bug-fix", "--json", "-"],
        "Fixed the WAL checkpoint stall\nin src/sync.rs (issue #42).\n".as_bytes(),
    );
    snapshot!(&env, render(&stdin));

    snapshot!(&env, render(&env.goldfish(&repo, &["recall"])));
    snapshot!(
        &env,
        render(&env.goldfish(&repo, &["recall", "wal", "index", "--json"]))
    );

    let lines = memory_lines(&repo);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["author"], "Ada Lovelace");
    assert_eq!(lines[0]["branch"], "main");
    assert_eq!(lines[0]["timestamp"], "2026-11-21T09:30:00.000Z");
}

#[test]
fn recall_filters() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    let store_at = |now: &str, args: &[&str]| {
        env.set_now(now);
        env.ok(&repo, &[&["store"], args].concat());
    };
    store_at(
        "2026-11-01T08:00:00Z",
        &["-t", "plan", "--tags", "q4", "Plan the index rewrite"],
    );
    store_at(
        "2026-11-20T08:00:00Z",
        &[
            "-t",
            "decision",
            "--tags",
            "db,q4",
            "Chose SQLite over Postgres",
        ],
    );
    store_at(
        "2026-11-21T08:00:00Z",
        &["-t", "checkpoint", "Index rewrite halfway: schema done"],
    );
    let contents = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["recall", "--json"];
        all.extend_from_slice(args);
        json_lines(&env.ok(&repo, &all))
            .iter()
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect()
    };
    env.set_now(crate::common::NOW);
    assert_eq!(contents(&["--since", "2d"]).len(), 2);
    assert_eq!(
        contents(&["--since", "3h"]),
        ["Index rewrite halfway: schema done"]
    );
    assert_eq!(
        contents(&["--until", "2026-11-02"]),
        ["Plan the index rewrite"]
    );
    assert_eq!(
        contents(&["--type", "decision"]),
        ["Chose SQLite over Postgres"]
    );
    assert_eq!(
        contents(&["--tag", "q4", "--tag", "DB"]),
        ["Chose SQLite over Postgres"]
    );
    assert_eq!(contents(&["--author", "ad"]).len(), 3);
    assert_eq!(
        contents(&["-n", "1"]),
        ["Index rewrite halfway: schema done"]
    );
    assert_eq!(
        contents(&["index", "rewrite"]),
        [
            "Index rewrite halfway: schema done",
            "Plan the index rewrite"
        ]
    );
    let none = env.goldfish(&repo, &["recall", "kubernetes"]);
    assert_eq!(none.status.code(), Some(1));
    let bad = env.goldfish(&repo, &["recall", "--since", "yesterday"]);
    snapshot!(&env, render(&bad));
}

#[test]
fn store_refuses_bad_input() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    let cases: Vec<(&str, Vec<&str>, &[u8])> = vec![
        ("empty", vec!["store", "-"], b"  \n"),
        ("not utf-8", vec!["store", "-"], b"caf\xe9 au lait"),
        ("unknown type", vec!["store", "-t", "idea", "x"], b""),
        (
            "secret",
            vec![
                "store",
                "deploy key ghp_9fT2kLmQ8xR4vW1zY6bN3cH7jD0sA5eG2uKp",
            ],
            b"",
        ),
    ];
    let mut rendered = String::new();
    for (name, args, stdin) in cases {
        let output = env.goldfish_stdin(&repo, &args, stdin);
        rendered.push_str(&format!("## {name}\n{}\n", render(&output)));
    }
    let long = "word ".repeat(2000);
    let output = env.goldfish(&repo, &["store", &long]);
    rendered.push_str(&format!("## too long\n{}\n", render(&output)));
    snapshot!(&env, rendered);
    assert!(
        crate::common::memory_files(&repo).is_empty(),
        "nothing may be written for refused input"
    );
    // The escape hatch for false positives.
    env.ok(
        &repo,
        &[
            "store",
            "--allow-secret",
            "password=Xk9#mQ2vLp7!wR is the public demo login",
        ],
    );
    assert_eq!(memory_lines(&repo).len(), 1);
}

#[test]
fn store_outside_an_initialized_repo() {
    let env = TestEnv::new();
    let plain = env.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let not_repo = env.goldfish(&plain, &["store", "x"]);
    assert_eq!(not_repo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_repo.stderr).contains("not inside a git repository"));
    env.git(&plain, &["init", "-q"]);
    let not_init = env.goldfish(&plain, &["store", "x"]);
    snapshot!(&env, render(&not_init));
}

#[test]
fn forget_appends_a_tombstone() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    let keep = json_lines(&env.ok(&repo, &["store", "--json", "Keep this"]))[0]["id"].clone();
    let drop = json_lines(&env.ok(&repo, &["store", "--json", "Forget this"]))[0]["id"].clone();
    let drop = drop.as_str().unwrap();
    let before = std::fs::read(repo.join(crate::common::today(&repo))).unwrap();

    let forgot = env.goldfish(&repo, &["forget", &drop[..20]]);
    snapshot!(&env, render(&forgot));
    let after = std::fs::read(repo.join(crate::common::today(&repo))).unwrap();
    assert!(
        after.starts_with(&before),
        "history is never rewritten in place"
    );
    let lines = memory_lines(&repo);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["type"], "tombstone");
    assert_eq!(lines[2]["forgets"], drop);

    let recalled = json_lines(&env.ok(&repo, &["recall", "--json"]));
    assert_eq!(recalled.len(), 1);
    assert_eq!(recalled[0]["id"], keep);

    let again = env.goldfish(&repo, &["forget", drop]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        memory_lines(&repo).len(),
        3,
        "forgetting twice adds nothing"
    );
    let unknown = env.goldfish(&repo, &["forget", "01ZZZZZZ"]);
    snapshot!(&env, render(&unknown));
}

#[test]
fn show_opens_whole_memories_by_id_or_unique_prefix() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    let long = "The export job streams ledger rows in batches of 500. It retries a batch three times before it gives up. See src/export/batch.rs.";
    let first = json_lines(&env.ok(&repo, &["store", "--json", "-t", "decision", long]))[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = json_lines(&env.ok(&repo, &["store", "--json", "Another note"]))[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // The whole memory, by id and by a unique prefix (any ASCII case).
    let text = env.ok(&repo, &["show", &first]);
    assert!(text.contains(&first), "{text}");
    assert!(text.contains("src/export/batch.rs."), "{text}");
    let shown = json_lines(&env.ok(
        &repo,
        &["show", "--json", &second, &first[..20].to_lowercase()],
    ));
    assert_eq!(shown.len(), 2);
    assert_eq!(shown[0]["id"], second, "in the order asked");
    assert_eq!(shown[1]["id"], first);
    assert_eq!(shown[1]["content"], long);
    assert_eq!(shown[1]["type"], "decision");

    // recall --index lists one line per memory, the same bytes each time,
    // and show opens a listed short id.
    let listed = env.ok(&repo, &["recall", "--index", "export batches"]);
    assert_eq!(
        listed,
        env.ok(&repo, &["recall", "--index", "export batches"])
    );
    let line = listed.lines().next().unwrap();
    assert_eq!(
        line,
        format!(
            "{}  decision  Ada  The export job streams ledger rows in batches …",
            &first[..12]
        )
    );
    let opened = json_lines(&env.ok(&repo, &["show", "--json", &first[..12]]));
    assert_eq!(opened[0]["id"], first);
    let both = env.goldfish(&repo, &["recall", "--index", "--budget", "50", "export"]);
    assert_eq!(both.status.code(), Some(2));

    // Unknown and ambiguous ids: a clear error naming them, exit 2.
    let unknown = env.goldfish(&repo, &["show", "01ZZZZZZ"]);
    assert_eq!(unknown.status.code(), Some(2));
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        err.contains("01ZZZZZZ") && err.contains("no memory"),
        "{err}"
    );
    let common: String = first
        .chars()
        .zip(second.chars())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a)
        .collect();
    assert!(!common.is_empty(), "both ids start with their time");
    let ambiguous = env.goldfish(&repo, &["show", &common]);
    assert_eq!(ambiguous.status.code(), Some(2));
    let err = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(
        err.contains("matches several memories") && err.contains(&first) && err.contains(&second),
        "{err}"
    );

    // A forgotten memory is not shown.
    env.ok(&repo, &["forget", &second]);
    let gone = env.goldfish(&repo, &["show", &second]);
    assert_eq!(gone.status.code(), Some(2));
}

#[test]
fn repository_types_from_config() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    std::fs::write(
        repo.join(".goldfish/config"),
        "[memory]\ntypes = [\"incident\"]\n",
    )
    .unwrap();
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "incident",
            "Prod DB failed over at 03:12 UTC",
        ],
    );
    assert_eq!(memory_lines(&repo)[0]["type"], "incident");
    std::fs::write(repo.join(".goldfish/config"), "[memory]\ntypes = 3\n").unwrap();
    let broken = env.goldfish(&repo, &["store", "x"]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&broken.stderr).contains(".goldfish/config is invalid"));
}

#[test]
fn recall_reports_bad_lines_and_keeps_going() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    env.ok(&repo, &["store", "A good memory"]);
    let file = repo.join(crate::common::today(&repo));
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(b"<<<<<<< HEAD\n{\"id\":\"half");
    std::fs::write(&file, bytes).unwrap();
    let output = env.goldfish(&repo, &["recall"]);
    snapshot!(&env, render(&output));
}

#[test]
fn help() {
    let env = TestEnv::new();
    snapshot!(&env, render(&env.goldfish(env.path(), &["--help"])));
    snapshot!(
        &env,
        render(&env.goldfish(env.path(), &["store", "--help"]))
    );
    snapshot!(
        &env,
        render(&env.goldfish(env.path(), &["recall", "--help"]))
    );
}

/// Whether `text` holds a character a terminal would act on: a control
/// other than newline and tab, or a bidi override, isolate or mark.
pub(crate) fn acts_on_terminal(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

/// A teammate's hand-written line whose content clears the screen, moves the
/// cursor back over what was printed and reverses text: every human output
/// shows it escaped, the JSON output keeps it exact. Its bidi override is
/// hidden text (`instruction-like`), so `brief` leaves it out; a second line
/// with the escapes and no bidi control is briefed, escaped.
#[test]
fn terminal_escapes_in_a_committed_memory_are_shown_escaped() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    let content =
        "Rotate keys\u{1b}[2J\u{1b}[31m now\rFAKE: all good\u{7} \u{9b}6n \u{202e}txt.exe";
    let line = serde_json::json!({
        "id": "01M808JSD5E063FV73QVNQJ5DD",
        "timestamp": "2026-11-21T09:14:03.512Z",
        "type": "decision",
        "content": content,
        "tags": ["ops\u{1b}]0;title\u{7}"],
        "author": "Mallory\u{1b}[8m",
        "files": ["src/\u{202e}sr.rs"],
    });
    let briefed = serde_json::json!({
        "id": "01M808JSD5E063FV73QVNQJ5DE",
        "timestamp": "2026-11-21T09:10:00.000Z",
        "type": "decision",
        "content": "Deploy notes\u{1b}[2J\u{1b}[31m now\rFAKE: all good\u{7} \u{9b}6n",
        "author": "Ada",
    });
    std::fs::write(
        repo.join(".goldfish/memories/2026-11-21.jsonl"),
        format!("{line}\n{briefed}\n"),
    )
    .unwrap();
    env.commit_all(&repo, "a teammate's memory");

    // The first is quarantined (hidden text; its author field is not its
    // committer's): recall shows it when asked, escaped too.
    for args in [
        &["recall", "--include-untrusted"][..],
        &[
            "recall",
            "rotate",
            "--mode",
            "keyword",
            "--include-untrusted",
        ],
        &[
            "recall",
            "rotate",
            "--mode",
            "keyword",
            "--budget",
            "100",
            "--include-untrusted",
        ],
        &["brief"],
        &["agent-hook", "session-start"],
    ] {
        let output = env.goldfish(&repo, args);
        let stdout = String::from_utf8(output.stdout).unwrap();
        let recall = args[0] == "recall";
        assert_eq!(stdout.contains("Rotate keys"), recall, "{args:?}: {stdout}");
        if !recall {
            assert!(stdout.contains("Deploy notes"), "{args:?}: {stdout}");
        }
        assert!(
            !acts_on_terminal(&stdout),
            "{args:?} printed a raw control: {stdout:?}"
        );
        assert!(stdout.contains("\\u001b[2J"), "{args:?}: {stdout}");
        assert!(!acts_on_terminal(&String::from_utf8_lossy(&output.stderr)));
    }

    let json = env.ok(
        &repo,
        &[
            "recall",
            "rotate",
            "--mode",
            "keyword",
            "--json",
            "--include-untrusted",
        ],
    );
    assert!(!acts_on_terminal(&json), "{json:?}");
    let memories = json_lines(&json);
    assert_eq!(memories[0]["content"], content);
    assert_eq!(memories[0]["files"][0], "src/\u{202e}sr.rs");
}

/// Memory file names a teammate committed with an escape sequence that
/// retitles the terminal (OSC 0, ended by BEL) and a C1 CSI: a link, a
/// folder and a file with a bad line, under `.goldfish/memories/`. Returns
/// the repository and the three names.
pub(crate) fn repo_with_escaping_file_names(env: &TestEnv) -> (std::path::PathBuf, [String; 3]) {
    let repo = env.repo("project", "Ada");
    env.ok(&repo, &["store", "-t", "decision", "Rotate keys monthly"]);
    let dir = repo.join(".goldfish/memories");
    let names = [
        "link\u{1b}]0;pwned\u{7}.jsonl".to_owned(),
        "folder\u{1b}]0;pwned\u{7}.jsonl".to_owned(),
        "bad\u{1b}]0;pwned\u{7}\u{9b}2J.jsonl".to_owned(),
    ];
    std::os::unix::fs::symlink("../../README.md", dir.join(&names[0])).unwrap();
    std::fs::create_dir(dir.join(&names[1])).unwrap();
    std::fs::write(dir.join(&names[1]).join("inner"), "not a memory file\n").unwrap();
    std::fs::write(dir.join(&names[2]), "not a memory record\n").unwrap();
    env.commit_all(&repo, "a teammate's memory files");
    (repo, names)
}

/// How a name is shown once escaped: as `TerminalSafe` writes it.
pub(crate) fn shown_escaped(name: &str) -> String {
    name.replace('\u{1b}', "\\u001b")
        .replace('\u{7}', "\\u0007")
        .replace('\u{9b}', "\\u009b")
}

/// Adversarial finding: escape sequences in committed file names under
/// `.goldfish/memories/` reached stderr raw from recall, sync and brief
/// (sync problems were printed as they came); every notice is escaped now,
/// and still names the file.
#[test]
fn escape_sequences_in_committed_file_names_reach_no_terminal() {
    let env = TestEnv::new();
    let (repo, names) = repo_with_escaping_file_names(&env);
    for args in [
        &["recall", "rotate", "--mode", "keyword"][..],
        &["recall", "rotate", "--mode", "keyword", "--json"],
        &["sync"],
        &["sync", "--json"],
        &["brief"],
        &["status"],
    ] {
        // A fresh index: the file with a bad line is read, and named, again.
        std::fs::remove_dir_all(env.path().join("home/.goldfish")).unwrap();
        let output = env.goldfish(&repo, args);
        let stdout = String::from_utf8(output.stdout.clone()).unwrap();
        let stderr = String::from_utf8(output.stderr.clone()).unwrap();
        assert!(
            !acts_on_terminal(&stdout) && !acts_on_terminal(&stderr),
            "{args:?} printed a raw control:\n{}",
            render(&output)
        );
        if args[0] == "status" {
            continue;
        }
        for name in &names {
            assert!(
                stderr.contains(&format!(".goldfish/memories/{}", shown_escaped(name))),
                "{args:?} does not name {name:?}:\n{}",
                render(&output)
            );
        }
    }
}

/// Adversarial finding: problems of a sync that are not about a memory file
/// were printed as if they were one, `.goldfish/memories/` before a message
/// that names its own path: `.goldfish/memories/keyword index /…` and
/// `.goldfish/memories//…/.goldfish/memories is a symbolic link`.
#[test]
fn sync_problems_about_no_memory_file_get_no_memory_folder_prefix() {
    let env = TestEnv::new();

    // The keyword index cannot be written: a file stands where its folder goes.
    let repo = env.repo("project", "Ada");
    env.ok(&repo, &["store", "Rotate keys monthly"]);
    let text_dir = env.path().join("home/.goldfish/index.text");
    // (A store leaves the keyword index to the next read: it may not be
    // there yet.)
    let _ = std::fs::remove_dir_all(&text_dir);
    std::fs::write(&text_dir, "not a folder\n").unwrap();
    let message = format!(
        "keyword index {}: Not a directory (os error 20); keyword recall ranks with a copy in memory until a sync writes it",
        text_dir.display()
    );
    assert_sync_warns_once(&env, &repo, &message, ".goldfish/memories/");

    // The memory folder is a link: its absolute path, once (another home,
    // whose keyword index is whole).
    let env = TestEnv::new();
    let repo = env.repo("linked", "Ada");
    let outside = env.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let folder = repo.join(".goldfish/memories");
    std::fs::remove_dir_all(&folder).unwrap();
    std::os::unix::fs::symlink(&outside, &folder).unwrap();
    let message = format!(
        "{} is a symbolic link: goldfish only uses real folders and regular files under .goldfish/ and never follows a link out of the repository; replace it (`git rm` it, then `goldfish init`)",
        folder.display()
    );
    assert_sync_warns_once(&env, &repo, &message, ".goldfish/memories//");
}

/// `sync` exits 0 and warns `message` on a line of its own, with no
/// `never` on stderr; `sync --json` lists `message` as its one problem.
fn assert_sync_warns_once(env: &TestEnv, repo: &std::path::Path, message: &str, never: &str) {
    let sync = env.goldfish(repo, &["sync"]);
    assert_eq!(sync.status.code(), Some(0), "{}", render(&sync));
    let stderr = String::from_utf8_lossy(&sync.stderr);
    assert!(
        stderr
            .lines()
            .any(|line| line == format!("warning: {message}")),
        "{}",
        render(&sync)
    );
    assert!(!stderr.contains(never), "{stderr}");
    let json = env.goldfish(repo, &["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let problems: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| problem.as_str().unwrap())
        .collect();
    assert_eq!(problems, [message]);
}

/// `--tag` matches whatever the case, in any script: SQLite's `lower()`
/// folds ASCII only.
#[test]
fn tags_match_without_regard_to_case_beyond_ascii() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    env.ok(
        &repo,
        &[
            "store",
            "--tags",
            "ünïcode,Ωmega",
            "Normalise names to NFC before hashing",
        ],
    );
    env.ok(&repo, &["store", "--tags", "ascii", "Plain tag"]);
    for tag in ["Ünïcode", "ÜNÏCODE", "ünïcode", "ωMEGA", "ΩMEGA"] {
        let output = env.ok(&repo, &["recall", "--tag", tag, "--json"]);
        let contents: Vec<_> = json_lines(&output)
            .iter()
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            contents,
            ["Normalise names to NFC before hashing"],
            "--tag {tag}"
        );
    }
    let missing = env.goldfish(&repo, &["recall", "--tag", "Ünïcodes"]);
    assert_eq!(missing.status.code(), Some(1));
}

/// Issue 14: a model whose manifest cannot be read stopped every command
/// with exit 3, `--mode keyword` too; keywords must always work.
#[test]
fn issue_14_keywords_work_when_the_installed_model_is_unusable() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    let model_dir = env
        .path()
        .join("home/.goldfish/models")
        .join(goldfish::adapters::embed::DEFAULT_MODEL);
    std::fs::create_dir_all(&model_dir).unwrap();
    std::fs::write(model_dir.join("manifest.json"), "{ not json").unwrap();

    let stored = env.goldfish(&repo, &["store", "The cache evicts with LRU"]);
    assert_eq!(stored.status.code(), Some(0), "{}", render(&stored));

    let keyword = env.goldfish(&repo, &["recall", "cache", "--mode", "keyword"]);
    assert_eq!(keyword.status.code(), Some(0), "{}", render(&keyword));
    assert!(String::from_utf8_lossy(&keyword.stdout).contains("evicts with LRU"));

    // The default ranking falls back to keywords and says why.
    let default = env.goldfish(&repo, &["recall", "cache"]);
    assert_eq!(default.status.code(), Some(0), "{}", render(&default));
    let stderr = String::from_utf8_lossy(&default.stderr);
    assert!(
        stderr.contains("installed but unusable") && stderr.contains("keywords only"),
        "{stderr}"
    );

    // Semantic ranking asked for by name cannot fall back: it says why.
    let semantic = env.goldfish(&repo, &["recall", "cache", "--mode", "semantic"]);
    assert_eq!(semantic.status.code(), Some(3), "{}", render(&semantic));
    assert!(String::from_utf8_lossy(&semantic.stderr).contains("installed but unusable"));
}

/// Regression (issue 29, point 6): with the model's tokenizer, the id and
/// the date took most of an index line's 25 tokens, so titles were three
/// words (`Date picker showed …`). The line now holds the short id, the
/// type, who committed it and a title that tells memories apart.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn index_titles_tell_memories_apart_within_the_line() {
    let env = TestEnv::new().with_model();
    let repo = env.repo("repo", "Alice");
    let contents = [
        "Date picker showed the wrong month after the DST switch: it built dates in local time.",
        "Date picker showed no days at all for locales starting the week on Saturday.",
        "Stripe webhooks were processed twice when the worker restarted mid-batch.",
    ];
    for content in contents {
        env.ok(&repo, &["store", "-t", "bug-fix", content]);
    }
    env.commit_all(&repo, "fixes");
    let listed = env.ok(&repo, &["recall", "--index", "-n", "10"]);
    let titles: Vec<&str> = listed
        .lines()
        .map(|line| {
            line.split("  Alice  ")
                .nth(1)
                .unwrap_or_else(|| panic!("{listed}"))
        })
        .collect();
    assert_eq!(titles.len(), 3, "{listed}");
    for title in &titles {
        assert!(
            title.split_whitespace().filter(|w| *w != "…").count() >= 6,
            "too short to choose from: {title}\n{listed}"
        );
    }
    let distinct: std::collections::HashSet<&str> = titles.iter().copied().collect();
    assert_eq!(distinct.len(), 3, "{listed}");
}
