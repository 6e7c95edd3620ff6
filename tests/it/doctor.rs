//! `goldfish doctor`: every misconfiguration found and printed with its fix
//! (exit 1), a healthy clone exits 0 (warnings allowed), a fresh clone too
//! (what the next command sets up by itself is a note), and doctor never
//! changes anything, a corrupt index included.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{TestEnv, filters, render};

/// Runs `doctor --json`: exit code and the report.
fn doctor(env: &TestEnv, repo: &Path) -> (Option<i32>, Value) {
    let output = env.goldfish(repo, &["doctor", "--json"]);
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!("{err}: {}", render(&output));
    });
    (output.status.code(), report)
}

/// The finding of `check` in a report.
fn finding<'a>(report: &'a Value, check: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == check)
        .unwrap_or_else(|| panic!("no {check} in {report}"))
}

/// Asserts `check` is a problem fixed by `fix` whose message contains
/// `message`, and that doctor exits 1.
#[track_caller]
fn assert_problem(env: &TestEnv, repo: &Path, check: &str, message: &str, fix: &str) {
    let (code, report) = doctor(env, repo);
    let found = finding(&report, check);
    assert_eq!(found["status"], "problem", "{report}");
    assert!(
        found["message"].as_str().unwrap().contains(message),
        "{found}"
    );
    assert_eq!(found["fix"], fix, "{found}");
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["healthy"], false);
}

/// Asserts `check` is a note about what the next goldfish command sets up
/// by itself, whose message contains `message`, and that doctor exits 0.
#[track_caller]
fn assert_note(env: &TestEnv, repo: &Path, check: &str, message: &str) {
    let (code, report) = doctor(env, repo);
    let found = finding(&report, check);
    assert_eq!(found["status"], "note", "{report}");
    assert!(
        found["message"].as_str().unwrap().contains(message),
        "{found}"
    );
    assert!(
        found["fix"]
            .as_str()
            .unwrap()
            .starts_with("none needed: the next goldfish command does it by itself"),
        "{found}"
    );
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["healthy"], true);
}

#[track_caller]
fn assert_healthy(env: &TestEnv, repo: &Path) {
    let (code, report) = doctor(env, repo);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["healthy"], true);
    assert_eq!(report["problems"], 0);
}

/// Every file under `dirs` with its bytes.
fn files_under(dirs: &[&Path]) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, into: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, into);
            } else {
                into.insert(path.clone(), fs::read(&path).unwrap());
            }
        }
    }
    let mut files = BTreeMap::new();
    for dir in dirs {
        walk(dir, &mut files);
    }
    files
}

#[test]
fn doctor_on_a_healthy_clone_exits_0_and_changes_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "Chose SQLite in WAL mode"]);
    env.commit_all(&repo, "memory");
    env.ok(&repo, &["sync"]);
    let home = env.path().join("home");
    let before = files_under(&[&repo, &home]);

    let output = env.goldfish(&repo, &["doctor"]);
    assert_eq!(output.status.code(), Some(0), "{}", render(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.ends_with("healthy, 1 warning\n"), "{text}");
    assert!(text.contains("fix: goldfish model install"), "{text}");
    let (code, report) = doctor(&env, &repo);
    assert_eq!(code, Some(0));
    let checks: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert_eq!(
        checks,
        [
            "merge-driver",
            "gitattributes",
            "hooks",
            "repo-config",
            "goldfish-on-path",
            "memory-folder",
            "journal",
            "memory-conflicts",
            "log",
            "suspect-memories",
            "trust-policy",
            "index",
            "index-sync",
            "keyword-index",
            "quarantine",
            "model"
        ]
    );
    assert_eq!(
        report["warnings"], 1,
        "no model: keyword recall still works"
    );
    assert_eq!(finding(&report, "model")["status"], "warning");
    assert_eq!(
        files_under(&[&repo, &home]),
        before,
        "doctor writes nothing, not even SQLite's side files"
    );
}

/// Regression (issue 29, point 7): doctor on a fresh clone of a repository
/// that uses goldfish exited 1 with "3 problems" (driver, hooks, no index)
/// that the next command fixes by itself. It is healthy: notes say what the
/// next command sets up, and after one command they are gone.
#[test]
fn doctor_on_a_fresh_clone_is_healthy_with_notes() {
    let env = TestEnv::new();
    let (remote, _alice, _bob) = env.team();
    assert!(!env.path().join("home/.goldfish/index.db").exists());
    let fresh = env.clone_of(&remote, "fresh");
    let output = env.goldfish(&fresh, &["doctor"]);
    let filters = filters(&env);
    let filters: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({ filters => filters }, {
        insta::assert_snapshot!(render(&output));
    });
    assert_eq!(output.status.code(), Some(0), "{}", render(&output));
    assert_note(&env, &fresh, "merge-driver", "merge.goldfish.driver");
    assert_note(
        &env,
        &fresh,
        "hooks",
        "post-merge, post-checkout, post-rewrite are not installed in this clone yet",
    );
    assert_note(&env, &fresh, "index", "nothing was synced");
    let (_, report) = doctor(&env, &fresh);
    assert_eq!(report["problems"], 0, "{report}");
    assert_eq!(
        report["notes"], 4,
        "three for setup, one for trust: {report}"
    );
    assert!(
        !env.git(&fresh, &["config", "--list", "--local"])
            .contains("merge.goldfish"),
        "doctor sets nothing up"
    );
    assert!(!fresh.join(".git/hooks/post-merge").exists());

    // Any command sets the clone up and syncs: the notes are gone.
    let recall = env.goldfish(&fresh, &["recall", "anything"]);
    assert!(
        matches!(recall.status.code(), Some(0 | 1)),
        "{}",
        render(&recall)
    );
    let (code, report) = doctor(&env, &fresh);
    assert_eq!(code, Some(0), "{report}");
    for check in ["merge-driver", "hooks", "index", "index-sync"] {
        assert_eq!(finding(&report, check)["status"], "ok", "{report}");
    }
    assert_eq!(report["notes"], 1, "the trust policy: {report}");
    let text = String::from_utf8(env.goldfish(&fresh, &["doctor"]).stdout).unwrap();
    assert!(text.ends_with("healthy, 1 warning\n"), "{text}");
}

/// A clone in a home whose index other workspaces use: this one is not in
/// it yet, which its first command fixes by itself (a note, exit 0).
#[test]
fn doctor_on_a_fresh_clone_in_a_used_home_notes_the_first_sync() {
    let env = TestEnv::new();
    let (remote, alice, _bob) = env.team();
    env.ok(&alice, &["sync", "--quiet"]);
    let fresh = env.clone_of(&remote, "fresh");
    assert_note(&env, &fresh, "index-sync", "never synced");
    let (_, report) = doctor(&env, &fresh);
    assert_eq!(finding(&report, "index")["status"], "ok", "{report}");
    assert_eq!(report["problems"], 0, "{report}");
    env.ok(&fresh, &["sync", "--quiet"]);
    assert_healthy(&env, &fresh);
    let (_, report) = doctor(&env, &fresh);
    assert_eq!(finding(&report, "index-sync")["status"], "ok", "{report}");
}

/// What heal leaves alone stays a problem in a fresh clone: a hook that is
/// not goldfish's, a driver declared as something else, `.gitattributes`
/// that does not route memory files to goldfish (heal then does nothing),
/// and with `GOLDFISH=0` no command sets anything up.
#[test]
fn doctor_on_a_fresh_clone_keeps_what_no_command_fixes_a_problem() {
    let env = TestEnv::new();
    let (remote, _alice, _bob) = env.team();

    let foreign = env.clone_of(&remote, "foreign");
    fs::write(
        foreign.join(".git/hooks/post-merge"),
        "#!/bin/sh\necho mine\n",
    )
    .unwrap();
    fs::set_permissions(
        foreign.join(".git/hooks/post-merge"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    assert_problem(
        &env,
        &foreign,
        "hooks",
        "post-merge is not goldfish's",
        "goldfish init",
    );
    // The driver is still a note: the next command declares it.
    let (_, report) = doctor(&env, &foreign);
    assert_eq!(finding(&report, "merge-driver")["status"], "note");

    let routed = env.clone_of(&remote, "routed");
    env.git(&routed, &["config", "merge.goldfish.driver", "cat %A"]);
    assert_problem(
        &env,
        &routed,
        "merge-driver",
        "is `cat %A`",
        "goldfish init",
    );

    let unrouted = env.clone_of(&remote, "unrouted");
    fs::write(unrouted.join(".gitattributes"), "*.png binary\n").unwrap();
    assert_problem(
        &env,
        &unrouted,
        "merge-driver",
        "not declared",
        "goldfish init",
    );
    assert_problem(
        &env,
        &unrouted,
        "hooks",
        "post-merge is missing",
        "goldfish init",
    );

    let off = env.clone_of(&remote, "off");
    let output = env
        .command(env!("CARGO_BIN_EXE_goldfish"), &off)
        .env("GOLDFISH", "0")
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", render(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(finding(&report, "merge-driver")["status"], "problem");
    assert_eq!(finding(&report, "hooks")["status"], "problem");
}

/// Also a regression: `init` did not make a hook of its own executable again.
#[test]
fn doctor_finds_broken_hooks_and_setup_that_init_repairs() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["sync"]);
    assert_healthy(&env, &repo);
    let hooks = repo.join(".git/hooks");
    let repaired = |check: &str| {
        let out = env.ok(&repo, &["init"]);
        assert!(
            !out.starts_with("goldfish is already set up"),
            "{check}: {out}"
        );
        assert_healthy(&env, &repo);
    };

    fs::set_permissions(hooks.join("post-merge"), fs::Permissions::from_mode(0o644)).unwrap();
    assert_problem(
        &env,
        &repo,
        "hooks",
        "post-merge is not executable",
        "goldfish init",
    );
    repaired("not executable");

    fs::write(hooks.join("post-checkout"), "#!/bin/sh\nexit 0\n").unwrap();
    assert_problem(
        &env,
        &repo,
        "hooks",
        "post-checkout is not goldfish's",
        "goldfish init",
    );
    repaired("foreign");
    assert!(hooks.join("post-checkout.legacy").is_file());

    // A missing hook, and a hooks folder set to one inside the repository
    // with none in it yet: the next command installs them (notes); init too.
    fs::remove_file(hooks.join("post-rewrite")).unwrap();
    assert_note(
        &env,
        &repo,
        "hooks",
        "post-rewrite is not installed in this clone yet",
    );
    repaired("missing");

    env.git(&repo, &["config", "core.hooksPath", ".githooks"]);
    assert_note(
        &env,
        &repo,
        "hooks",
        "post-merge, post-checkout, post-rewrite are not installed",
    );
    repaired("core.hooksPath");
    assert!(repo.join(".githooks/post-merge").is_file());

    fs::write(repo.join(".gitattributes"), "*.png binary\n").unwrap();
    assert_problem(
        &env,
        &repo,
        "gitattributes",
        ".goldfish/memories/*.jsonl merge=goldfish",
        "goldfish init",
    );
    repaired("gitattributes");

    env.git(&repo, &["config", "--unset", "merge.goldfish.driver"]);
    assert_note(
        &env,
        &repo,
        "merge-driver",
        "not declared in this clone yet",
    );
    repaired("driver");

    fs::remove_dir_all(repo.join(".goldfish")).unwrap();
    assert_problem(
        &env,
        &repo,
        "memory-folder",
        "does not exist",
        "goldfish init",
    );
    repaired("memory folder");
}

#[test]
fn doctor_finds_goldfish_missing_from_path() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["sync"]);
    // Only git's folder on PATH.
    let system_path = std::env::var_os("PATH").unwrap();
    let git_dir = std::env::split_paths(&system_path)
        .find(|dir| dir.join("git").is_file())
        .unwrap();
    let output = env
        .command(env!("CARGO_BIN_EXE_goldfish"), &repo)
        .env("PATH", &git_dir)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let found = finding(&report, "goldfish-on-path");
    assert_eq!(found["status"], "problem", "{found}");
    assert!(found["fix"].as_str().unwrap().contains("PATH"), "{found}");
    assert_eq!(report["problems"], 1, "{report}");
}

#[test]
fn doctor_reports_the_keyword_index() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "Chose SQLite in WAL mode"]);
    env.ok(&repo, &["recall", "SQLite"]);
    // A store leaves the keyword index to the next read: behind it is not
    // a fault.
    env.ok(&repo, &["store", "The pool holds eight connections"]);
    let (_, report) = doctor(&env, &repo);
    let found = finding(&report, "keyword-index");
    assert_eq!(found["status"], "ok", "{found}");
    assert!(
        found["message"].as_str().unwrap().ends_with(
            "index.text: 1 memory stored since it was written; the next sync or recall writes them"
        ),
        "{found}"
    );
    env.ok(&repo, &["recall", "pool"]);
    let (_, report) = doctor(&env, &repo);
    let found = finding(&report, "keyword-index");
    assert_eq!(found["status"], "ok", "{found}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .ends_with("index.text: up to date (2 memories; word rarity wordfreq-3.1.1-en/1)"),
        "{found}"
    );
    // Gone (it is derived): recall writes it again, or ranks with a copy in
    // memory when it cannot; doctor says so and
    // writes nothing back; the next sync writes it again, even one that
    // finds no memory file changed.
    let dir = env.path().join("home/.goldfish/index.text");
    fs::remove_dir_all(&dir).unwrap();
    let (code, report) = doctor(&env, &repo);
    assert_eq!(code, Some(0), "a warning: keyword recall still works");
    let found = finding(&report, "keyword-index");
    assert_eq!(found["status"], "warning", "{found}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("not written for this index yet; the next sync or recall writes it"),
        "{found}"
    );
    assert_eq!(found["fix"], "goldfish sync", "{found}");
    assert!(!dir.exists(), "doctor only looks");
    env.ok(&repo, &["sync"]);
    let (_, report) = doctor(&env, &repo);
    assert_eq!(finding(&report, "keyword-index")["status"], "ok");
}

#[test]
fn doctor_finds_a_stale_index() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    assert_note(&env, &repo, "index", "nothing was synced");
    env.ok(&repo, &["store", "Stored and indexed at once"]);
    assert_healthy(&env, &repo);
    // A commit moves HEAD, and no hook runs on commit: the memories are
    // indexed, only the commit that introduced them is not (a warning).
    env.commit_all(&repo, "memory");
    assert_healthy(&env, &repo);
    let (_, report) = doctor(&env, &repo);
    let found = finding(&report, "index-sync");
    assert_eq!(found["status"], "warning", "{found}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("HEAD moved since the last sync"),
        "{found}"
    );
    env.ok(&repo, &["sync"]);
    assert_healthy(&env, &repo);
    // HEAD moved and the memory files changed with it (a checkout without
    // the hooks): a problem.
    env.git(&repo, &["checkout", "-q", "-b", "side"]);
    env.ok(&repo, &["store", "Only on the side branch"]);
    env.commit_all(&repo, "side branch");
    env.ok(&repo, &["sync"]);
    env.git(
        &repo,
        &["-c", "core.hooksPath=/dev/null", "checkout", "-q", "main"],
    );
    assert_problem(
        &env,
        &repo,
        "index-sync",
        "HEAD moved since the last sync",
        "goldfish sync",
    );
    env.ok(&repo, &["sync"]);
    assert_healthy(&env, &repo);
    // A line appended by another tool.
    let today = crate::common::today(&repo);
    let file = repo.join(&today);
    let mut text = fs::read_to_string(&file).unwrap();
    text.push_str(r#"{"id":"01KAJ0000000000000000000AA","timestamp":"2026-11-21T10:00:00.000Z","type":"insight","content":"appended"}"#);
    text.push('\n');
    fs::write(&file, text).unwrap();
    assert_problem(
        &env,
        &repo,
        "index-sync",
        &format!(
            "memory files changed since the last sync: {}",
            today.rsplit('/').next().unwrap()
        ),
        "goldfish sync",
    );
    // Another workspace's sync does not count for this one.
    let other = env.repo("other", "Ada");
    env.ok(&other, &["sync"]);
    assert_problem(
        &env,
        &repo,
        "index-sync",
        today.rsplit('/').next().unwrap(),
        "goldfish sync",
    );
    env.ok(&repo, &["recall", "appended"]);
    assert_healthy(&env, &repo);
}

#[test]
fn doctor_reports_a_corrupt_index_and_leaves_it_alone() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    for i in 0..200 {
        let line = format!(
            r#"{{"id":"01KAJ{i:021}","timestamp":"2026-11-20T10:00:00.000Z","type":"insight","content":"Memory {i} about the cache"}}"#
        );
        let path = repo.join(".goldfish/memories/2026-11-20.jsonl");
        let mut text = fs::read_to_string(&path).unwrap_or_default();
        text.push_str(&line);
        text.push('\n');
        fs::write(&path, text).unwrap();
    }
    env.ok(&repo, &["sync"]);
    let home = env.path().join("home/.goldfish");
    let index = home.join("index.db");
    let intact = fs::read(&index).unwrap();
    let damages: [(&str, Vec<u8>); 3] = [
        ("truncated to half", intact[..intact.len() / 2].to_vec()),
        ("truncated to 100 bytes", intact[..100].to_vec()),
        ("garbage", b"garbage, not SQLite".repeat(1000)),
    ];
    for (damage, bytes) in damages {
        fs::write(&index, &bytes).unwrap();
        let before = files_under(&[&home]);
        assert_problem(&env, &repo, "index", "is corrupt", "goldfish reindex");
        assert_eq!(
            files_under(&[&home]),
            before,
            "{damage}: not moved aside, not repaired, no side files"
        );
    }
    // The model check still runs when the index cannot be read.
    let (_, report) = doctor(&env, &repo);
    assert_eq!(finding(&report, "model")["status"], "warning");
    let rebuilt = env.ok(&repo, &["reindex"]);
    assert!(rebuilt.contains("rebuilt r: 200 memories"), "{rebuilt}");
    assert_healthy(&env, &repo);
}

#[test]
fn doctor_reports_the_model() {
    // Installed: ok, and memories indexed by keyword only are waiting.
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["sync"]);
    let (code, report) = doctor(&env, &repo);
    assert_eq!(code, Some(0), "{report}");
    let model = finding(&report, "model");
    assert_eq!(model["status"], "ok", "{model}");
    assert!(
        model["message"]
            .as_str()
            .unwrap()
            .starts_with("fake-words@"),
        "{model}"
    );
    fs::write(
        repo.join(".goldfish/memories/2026-11-21.jsonl"),
        r#"{"id":"01KAJ0000000000000000000AA","timestamp":"2026-11-21T10:00:00.000Z","type":"insight","content":"not embedded yet"}
"#,
    )
    .unwrap();
    env.ok(&repo, &["recall", "embedded", "--mode", "keyword"]);
    let (code, report) = doctor(&env, &repo);
    assert_eq!(code, Some(0), "a warning: {report}");
    let model = finding(&report, "model");
    assert_eq!(model["status"], "warning", "{model}");
    assert!(
        model["message"]
            .as_str()
            .unwrap()
            .contains("1 memory not embedded yet"),
        "{model}"
    );
    assert_eq!(model["fix"], "goldfish sync");

    // Installed but broken: a problem.
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["sync"]);
    let model_dir = env
        .path()
        .join("home/.goldfish/models")
        .join(goldfish::adapters::embed::DEFAULT_MODEL);
    fs::create_dir_all(&model_dir).unwrap();
    fs::write(model_dir.join("manifest.json"), "{ not json").unwrap();
    assert_problem(
        &env,
        &repo,
        "model",
        "installed but unusable",
        "goldfish model install",
    );
}

#[test]
fn doctor_finds_an_index_that_a_branch_switch_would_break() {
    // What goldfish wrote before schema 2 after an edit on a branch with no
    // model: the old content still queued though no memory has it, and
    // triggers that fail the sync that brings it back.
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "Cache eviction uses LRU"]);
    env.commit_all(&repo, "memory");
    env.git(&repo, &["checkout", "-q", "-b", "lfu"]);
    let file = repo.join(crate::common::today(&repo));
    let edited = fs::read_to_string(&file)
        .unwrap()
        .replace("uses LRU", "uses LFU");
    fs::write(&file, edited).unwrap();
    env.commit_all(&repo, "edit in place");
    env.ok(&repo, &["sync"]);
    assert_healthy(&env, &repo);
    let index = env.path().join("home/.goldfish/index.db");
    let downgrade = |stale: &str| crate::sync_history::downgrade_to_schema_1(&index, stale);
    downgrade("");
    let (code, report) = doctor(&env, &repo);
    assert_eq!(code, Some(0), "{report}");
    let found = finding(&report, "index");
    assert_eq!(found["status"], "warning", "{found}");
    let now = goldfish::adapters::index::Index::current_schema_version();
    assert!(
        found["message"].as_str().unwrap().contains(&format!(
            "written by an older goldfish (schema 1, now {now})"
        )),
        "{found}"
    );
    env.ok(&repo, &["sync"]);
    assert_healthy(&env, &repo);

    let old_content = goldfish::adapters::sync::content_hash("Cache eviction uses LRU");
    downgrade(&format!(
        "INSERT INTO embed_queue (content_hash) VALUES ('{old_content}');"
    ));
    assert_problem(
        &env,
        &repo,
        "index",
        "its embedding queue holds 1 texts no memory has",
        "goldfish sync (upgrades the index and repairs the queue)",
    );
    // Anything that opens the index upgrades it: the checkout's hook here.
    env.git(&repo, &["checkout", "-q", "main"]);
    let recalled = env.ok(&repo, &["recall", "--mode", "keyword", "eviction"]);
    assert!(recalled.contains("uses LRU"), "{recalled}");
    assert_healthy(&env, &repo);
}

/// Regression: doctor said healthy while every command failed, with
/// `.goldfish/config` a symbolic link, or the store journal
/// (`<git dir>/goldfish-journal.jsonl`) a folder, a link or immutable; and
/// the journal's error said "`git rm` it", though git does not track it.
#[test]
fn doctor_finds_a_linked_config_and_a_journal_that_commands_cannot_open() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "Chose SQLite in WAL mode"]);
    env.ok(&repo, &["sync"]);
    assert_healthy(&env, &repo);

    // The config, a link to a valid file outside the repository.
    let outside = env.path().join("outside.toml");
    fs::write(&outside, "[memory]\ntypes = [\"incident\"]\n").unwrap();
    let config = repo.join(".goldfish/config");
    fs::remove_file(&config).unwrap(); // init's commented example
    std::os::unix::fs::symlink(&outside, &config).unwrap();
    let (code, report) = doctor(&env, &repo);
    let found = finding(&report, "repo-config");
    assert_eq!(found["status"], "problem", "{report}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains(".goldfish/config is a symbolic link"),
        "{found}"
    );
    assert!(
        found["fix"].as_str().unwrap().contains("regular file"),
        "{found}"
    );
    assert_eq!(code, Some(1));
    fs::remove_file(&config).unwrap();
    fs::write(&config, "[memroy]\n").unwrap();
    assert_problem(
        &env,
        &repo,
        "repo-config",
        "unknown field `memroy`",
        "edit it (see README: `[memory] types = [...]`)",
    );
    fs::remove_file(&config).unwrap();
    assert_healthy(&env, &repo);

    // The journal: a folder, a link, then a file store cannot append to.
    let journal = repo.join(".git/goldfish-journal.jsonl");
    let journal_fails = |what: &str| {
        let (code, report) = doctor(&env, &repo);
        let found = finding(&report, "journal").clone();
        assert_eq!(found["status"], "problem", "{what}: {report}");
        assert_eq!(code, Some(1), "{what}");
        let message = found["message"].as_str().unwrap();
        assert!(
            message.contains(&journal.display().to_string()) && message.contains(what),
            "{found}"
        );
        let fix = found["fix"].as_str().unwrap();
        assert!(fix.contains("mv ") && !fix.contains("git rm"), "{found}");
        let store = env.goldfish(&repo, &["store", "Another memory"]);
        assert_eq!(store.status.code(), Some(3), "{what}: {}", render(&store));
        let stderr = String::from_utf8_lossy(&store.stderr);
        assert!(
            stderr.contains("not tracked by git") && !stderr.contains("git rm"),
            "{what}: {stderr}"
        );
    };
    // The store above left its line there for a minute; it is in its file.
    let _ = fs::remove_file(&journal);
    fs::create_dir(&journal).unwrap();
    journal_fails("is a directory");
    fs::remove_dir(&journal).unwrap();
    std::os::unix::fs::symlink(&outside, &journal).unwrap();
    journal_fails("is a symbolic link");
    fs::remove_file(&journal).unwrap();
    fs::write(&journal, "").unwrap();
    // Immutable when chattr works here (ext4 and the like, as root);
    // otherwise read-only, which stops everyone but root.
    let chattr = |flag: &str| {
        env.command("chattr", &repo)
            .args([flag, journal.to_str().unwrap()])
            .output()
            .is_ok_and(|output| output.status.success())
    };
    if chattr("+i") {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            journal_fails("cannot be opened for appending")
        }));
        assert!(chattr("-i"));
        if let Err(panic) = result {
            std::panic::resume_unwind(panic);
        }
    } else if !is_root() {
        fs::set_permissions(&journal, fs::Permissions::from_mode(0o444)).unwrap();
        journal_fails("cannot be opened for appending");
    } else {
        eprintln!(
            "neither chattr +i nor permissions stop root here: the immutable journal is not tested"
        );
    }
    fs::remove_file(&journal).unwrap();
    env.ok(&repo, &["sync"]);
    assert_healthy(&env, &repo);
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::NamedTempFile::new().unwrap();
    probe.as_file().metadata().unwrap().uid() == 0
}
