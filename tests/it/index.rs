//! The personal index: synced by hooks after real pulls, incremental by blob,
//! crash-safe, isolated per workspace, rebuildable from git.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{TestEnv, json_lines};

fn status(env: &TestEnv, repo: &Path) -> Value {
    serde_json::from_str(&env.ok(repo, &["status", "--json"])).unwrap()
}

fn sync_report(env: &TestEnv, repo: &Path) -> Value {
    serde_json::from_str(&env.ok(repo, &["sync", "--json"])).unwrap()
}

#[test]
fn a_pull_indexes_teammates_memories_through_the_hook() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    env.ok(
        &alice,
        &[
            "store",
            "-t",
            "decision",
            "Payments retry with exponential backoff capped at 5 minutes",
        ],
    );
    env.commit_all(&alice, "alice: memory");
    env.git(&alice, &["push", "-q"]);

    env.git(&bob, &["pull", "-q"]);
    // `status` never syncs: what it shows is what the post-merge hook did.
    let status = status(&env, &bob);
    assert_eq!(status["memories_in_index"], 1, "{status}");
    assert_eq!(status["stale"], false, "{status}");

    let recalled = json_lines(&env.ok(&bob, &["recall", "backoff", "--json"]));
    assert_eq!(recalled.len(), 1);
    let introduced = &recalled[0]["introduced"];
    assert_eq!(introduced["author"], "Alice <alice@example.com>");
    let alice_head = env.git(&alice, &["rev-parse", "HEAD"]);
    assert_eq!(introduced["commit"], alice_head.trim());
    assert_eq!(introduced["date"], "2026-11-21T10:00:00Z");
    // --author matches the commit author too.
    assert_eq!(
        json_lines(&env.ok(&bob, &["recall", "--author", "alice@example", "--json"])).len(),
        1
    );
}

/// Writes `count` memories spread over `days` files directly (as a teammate's
/// history would bring them), ids and timestamps in order.
pub fn write_log(repo: &Path, count: usize, days: usize) {
    let dir = repo.join(".goldfish/memories");
    let mut files: Vec<String> = vec![String::new(); days];
    for i in 0..count {
        let day = i % days;
        let line = format!(
            r#"{{"id":"01KA{i:022}","timestamp":"2026-10-{:02}T10:{:02}:{:02}.000Z","type":"insight","content":"Memory {i} about module m{} and the cache layer"}}"#,
            day + 1,
            (i / 60) % 60,
            i % 60,
            i % 97
        );
        files[day].push_str(&line);
        files[day].push('\n');
    }
    for (day, text) in files.iter().enumerate() {
        fs::write(dir.join(format!("2026-10-{:02}.jsonl", day + 1)), text).unwrap();
    }
}

#[test]
fn sync_reads_only_changed_files() {
    let env = TestEnv::new();
    let repo = env.repo("big", "Ada");
    write_log(&repo, 5000, 25);
    env.commit_all(&repo, "5000 memories");

    let first = sync_report(&env, &repo);
    assert_eq!(first["memories"], 5000, "{first}");
    assert_eq!(first["files_read"], 25);
    assert_eq!(first["memories_added"], 5000);

    let noop = sync_report(&env, &repo);
    assert_eq!(
        noop["files_read"], 0,
        "a sync with nothing new reads nothing: {noop}"
    );
    assert_eq!(noop["commits_walked"], 0);

    // One new memory, appended the way another tool would.
    let file = repo.join(".goldfish/memories/2026-10-07.jsonl");
    let mut text = fs::read_to_string(&file).unwrap();
    text.push_str(
        r#"{"id":"01KB0000000000000000000001","timestamp":"2026-10-07T12:00:00.000Z","type":"decision","content":"Evict the cache layer on deploy","author":"Ada"}"#,
    );
    text.push('\n');
    fs::write(&file, text).unwrap();
    let one = sync_report(&env, &repo);
    assert_eq!(one["files_read"], 1, "{one}");
    assert_eq!(one["memories_added"], 1);
    assert_eq!(one["memories"], 5001);

    // Committing it changes HEAD but no blob: nothing to read, one commit walked.
    env.commit_all(&repo, "one more");
    let after_commit = sync_report(&env, &repo);
    assert_eq!(after_commit["files_read"], 0, "{after_commit}");
    assert_eq!(after_commit["commits_walked"], 1);
    let recalled = json_lines(&env.ok(&repo, &["recall", "evict", "deploy", "--json"]));
    assert_eq!(recalled[0]["id"], "01KB0000000000000000000001");
    assert_eq!(recalled[0]["introduced"]["author"], "Ada <ada@example.com>");
}

#[test]
fn a_forget_pulled_from_a_teammate_hides_the_memory() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    let id = json_lines(&env.ok(
        &alice,
        &["store", "--json", "Staging DB lives on port 5433"],
    ))[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.commit_all(&alice, "m");
    env.git(&alice, &["push", "-q"]);
    env.git(&bob, &["pull", "-q"]);
    assert_eq!(
        json_lines(&env.ok(&bob, &["recall", "staging", "--json"])).len(),
        1
    );

    env.ok(&alice, &["forget", &id]);
    env.commit_all(&alice, "forget");
    env.git(&alice, &["push", "-q"]);
    env.git(&bob, &["pull", "-q"]);
    assert_eq!(status(&env, &bob)["memories_in_index"], 0);
    let output = env.goldfish(&bob, &["recall", "staging"]);
    assert_eq!(output.status.code(), Some(1), "gone from recall");
}

#[test]
fn a_sync_killed_midway_leaves_the_previous_index() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "First memory"]);
    assert_eq!(status(&env, &repo)["memories_in_index"], 1);

    // Append without indexing (as a pull with hooks missing would), then crash
    // a sync after it wrote everything but before it committed.
    write_log(&repo, 300, 3);
    let crashed = env
        .command(env!("CARGO_BIN_EXE_goldfish"), &repo)
        .env("GOLDFISH_FAULT", "sync-abort")
        .args(["sync", "--json"])
        .output()
        .unwrap();
    assert!(!crashed.status.success(), "the fault aborts the process");
    let after_crash = status(&env, &repo);
    assert_eq!(
        after_crash["memories_in_index"], 1,
        "no half sync: {after_crash}"
    );

    let report = sync_report(&env, &repo);
    assert_eq!(report["memories"], 301, "{report}");
    assert_eq!(report["memories_added"], 300);
}

#[test]
fn workspaces_are_isolated_unless_asked() {
    let env = TestEnv::new();
    let api = env.repo("api", "Ada");
    let web = env.repo("web", "Ada");
    env.ok(
        &api,
        &["store", "Rate limiter uses a token bucket per API key"],
    );
    env.ok(
        &web,
        &["store", "The web app debounces search input by 300 ms"],
    );

    let contents = |repo: &Path, args: &[&str]| -> Vec<String> {
        let mut all = vec!["recall", "--json"];
        all.extend_from_slice(args);
        json_lines(&env.ok(repo, &all))
            .iter()
            .map(|m| {
                format!(
                    "{}: {}",
                    m["workspace"].as_str().unwrap(),
                    m["content"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        contents(&api, &[]),
        ["api: Rate limiter uses a token bucket per API key"]
    );
    assert_eq!(
        contents(&web, &[]),
        ["web: The web app debounces search input by 300 ms"]
    );
    let mut both = contents(&api, &["--workspace", "all"]);
    both.sort();
    assert_eq!(both.len(), 2);
    assert_eq!(
        contents(&api, &["--workspace", "web"]),
        ["web: The web app debounces search input by 300 ms"]
    );
    // The standup across projects works from anywhere.
    let anywhere = json_lines(&env.ok(
        env.path(),
        &["recall", "--since", "24h", "--workspace", "all", "--json"],
    ));
    assert_eq!(anywhere.len(), 2);
    let unknown = env.goldfish(&api, &["recall", "--workspace", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
}

/// A clone whose committed `.gitattributes` routes memory files to goldfish
/// is set up by status itself; a repository that never had goldfish is
/// reported, with the fix.
#[test]
fn status_sets_up_a_clone_without_init_and_reports_a_repository_without_goldfish() {
    let env = TestEnv::new();
    let (remote, _alice, _bob) = env.team();
    let fresh = env.clone_of(&remote, "fresh");
    let output = env.goldfish(&fresh, &["status", "--json"]);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("declared the merge driver"), "{stderr}");
    let healthy: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        healthy["health"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["ok"] == true),
        "{healthy}"
    );

    let plain = env.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    env.git(&plain, &["init", "-q", "-b", "main"]);
    let status = status(&env, &plain);
    let health = status["health"].as_array().unwrap();
    for check in ["merge-driver", "gitattributes", "hooks"] {
        let found = health.iter().find(|c| c["check"] == check).unwrap();
        assert_eq!(found["ok"], false, "{found}");
        assert_eq!(found["fix"], "goldfish init", "{found}");
    }
    let text = env.ok(&plain, &["status"]);
    assert!(text.contains("fix: goldfish init"), "{text}");
    assert!(
        !env.git(&plain, &["config", "--local", "--list"])
            .contains("merge.goldfish")
    );
}

#[test]
fn deleting_or_corrupting_the_index_loses_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    for i in 0..5 {
        env.ok(
            &repo,
            &["store", &format!("Memory number {i} about retries")],
        );
    }
    env.commit_all(&repo, "m");
    let before = env.ok(&repo, &["recall", "retries", "--json", "-n", "100"]);
    let index = env.path().join("home/.goldfish/index.db");

    fs::remove_file(&index).unwrap();
    let _ = fs::remove_file(index.with_extension("db-wal"));
    env.ok(&repo, &["sync"]);
    assert_eq!(
        env.ok(&repo, &["recall", "retries", "--json", "-n", "100"]),
        before
    );

    fs::write(&index, b"this is not a database, it is garbage").unwrap();
    let _ = fs::remove_file(index.with_extension("db-wal"));
    let _ = fs::remove_file(index.with_extension("db-shm"));
    assert_eq!(
        env.ok(&repo, &["recall", "retries", "--json", "-n", "100"]),
        before
    );

    let rebuilt = json_lines(&env.ok(&repo, &["reindex", "--json"]));
    assert_eq!(rebuilt[0]["memories"], 5);
    assert_eq!(
        env.ok(&repo, &["recall", "retries", "--json", "-n", "100"]),
        before
    );
}

#[test]
fn a_large_pull_syncs_in_the_background() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    write_log(&alice, 2000, 4);
    env.commit_all(&alice, "a lot of memories");
    env.git(&alice, &["push", "-q"]);
    // Every change counts as large here, so the hook hands the sync to a
    // detached process and the pull returns without waiting for it.
    let pull = env
        .command("git", &bob)
        .env("GOLDFISH_HOOK_BACKGROUND_BYTES", "0")
        .args(["pull", "-q"])
        .output()
        .unwrap();
    assert!(pull.status.success());
    // The detached sync logs when it is done, after its commit (and the
    // keyword index's catch-up): wait for both.
    let log_file = env.path().join("home/.goldfish/logs/sync.log");
    let (mut synced, mut log) = (Value::Null, String::new());
    for _ in 0..400 {
        synced = status(&env, &bob);
        log = fs::read_to_string(&log_file).unwrap_or_default();
        if synced["memories_in_index"] == 2000 && log.contains("synced bob") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(synced["memories_in_index"], 2000, "{synced}");
    assert!(log.contains("synced bob: 2000 memories"), "{log}");
}

#[test]
fn committed_memories_come_from_head_when_the_work_tree_lacks_them() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    write_log(&repo, 30, 3);
    env.commit_all(&repo, "memories");
    assert_eq!(sync_report(&env, &repo)["memories"], 30);
    // Deleted from the work tree but still committed: HEAD's blob still counts.
    fs::remove_file(repo.join(".goldfish/memories/2026-10-01.jsonl")).unwrap();
    let report = sync_report(&env, &repo);
    assert_eq!(report["memories"], 30, "{report}");
    assert_eq!(report["files"], 3);
    // Once the deletion is committed, its memories leave the index.
    env.git(&repo, &["commit", "-q", "-am", "drop a day"]);
    let report = sync_report(&env, &repo);
    assert_eq!(report["memories"], 20, "{report}");
    assert_eq!(report["files_removed"], 1);
}

#[test]
fn a_record_rewritten_in_place_is_updated_not_duplicated() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    write_log(&repo, 3, 1);
    assert_eq!(sync_report(&env, &repo)["memories_added"], 3);
    let file = repo.join(".goldfish/memories/2026-10-01.jsonl");
    let text = fs::read_to_string(&file)
        .unwrap()
        .replace("Memory 1 about", "Memory one, rewritten, about");
    fs::write(&file, text).unwrap();
    let report = sync_report(&env, &repo);
    assert_eq!(report["memories_updated"], 1, "{report}");
    assert_eq!(report["memories_added"], 0);
    assert_eq!(report["memories"], 3);
    let recalled = json_lines(&env.ok(&repo, &["recall", "rewritten", "--json"]));
    assert_eq!(recalled.len(), 1);
    assert_eq!(recalled[0]["id"], "01KA0000000000000000000001");

    // The same id in another file is reported and never overwrites the first.
    let copy = fs::read_to_string(&file)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .replace("rewritten", "copied");
    fs::write(
        repo.join(".goldfish/memories/2026-10-02.jsonl"),
        format!("{copy}\n"),
    )
    .unwrap();
    let report = sync_report(&env, &repo);
    assert_eq!(report["memories"], 3, "{report}");
    let problem = report["problems"][0].as_str().unwrap();
    assert!(
        problem.contains("already indexed from another file"),
        "{problem}"
    );
    assert_eq!(
        json_lines(&env.ok(&repo, &["recall", "rewritten", "--json"])).len(),
        1
    );
}

/// The memory file of a repository with one day of memories.
fn only_memory_file(repo: &Path) -> std::path::PathBuf {
    let files = crate::common::memory_files(repo);
    assert_eq!(files.len(), 1, "{files:?}");
    repo.join(".goldfish/memories").join(&files[0].0)
}

fn recalled_contents(env: &TestEnv, repo: &Path, query: &str) -> Vec<String> {
    json_lines(&env.ok(repo, &["recall", "--mode", "keyword", query, "--json"]))
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_branch_switch_without_a_model_keeps_sync_and_recall_working() {
    // Issue 15, item 3: content that comes back into a memory (here the
    // checkout of main after an edit on a branch) while it is still queued
    // for an embedding, as it stays without a model.
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    let home = env.path().join("home/.goldfish");
    env.ok(
        &repo,
        &["store", "-t", "decision", "Cache eviction uses LRU"],
    );
    env.commit_all(&repo, "memory");
    env.git(&repo, &["checkout", "-q", "-b", "lfu"]);
    let file = only_memory_file(&repo);
    let edited = fs::read_to_string(&file)
        .unwrap()
        .replace("uses LRU", "uses LFU since the load test");
    fs::write(&file, edited).unwrap();
    env.commit_all(&repo, "edit in place");
    env.ok(&repo, &["sync"]);
    for _ in 0..3 {
        env.git(&repo, &["checkout", "-q", "main"]);
        assert_eq!(
            recalled_contents(&env, &repo, "eviction"),
            ["Cache eviction uses LRU"]
        );
        env.ok(&repo, &["sync"]);
        let brief = env.ok(&repo, &["brief"]);
        assert!(brief.contains("Cache eviction uses LRU"), "{brief}");
        env.git(&repo, &["checkout", "-q", "lfu"]);
        assert_eq!(
            recalled_contents(&env, &repo, "eviction"),
            ["Cache eviction uses LFU since the load test"]
        );
    }
    // Each content hash queued once, and only what a memory has.
    assert_eq!(
        crate::sync_history::queued_hashes(&home),
        crate::sync_history::memory_hashes(&home)
    );
}

#[test]
fn a_revert_of_an_edit_without_a_model_keeps_sync_and_recall_working() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "Cache eviction uses LRU"]);
    env.commit_all(&repo, "memory");
    let file = only_memory_file(&repo);
    let edited = fs::read_to_string(&file)
        .unwrap()
        .replace("uses LRU", "uses LFU");
    fs::write(&file, edited).unwrap();
    env.commit_all(&repo, "edit in place");
    env.ok(&repo, &["sync"]);
    env.git(&repo, &["revert", "--no-edit", "HEAD"]);
    assert_eq!(
        recalled_contents(&env, &repo, "eviction"),
        ["Cache eviction uses LRU"]
    );
    env.ok(&repo, &["sync"]);
}

#[test]
fn without_a_model_the_embedding_queue_stays_as_small_as_the_memories() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    let home = env.path().join("home/.goldfish");
    env.ok(&repo, &["store", "Version 0 of the retry policy"]);
    env.ok(&repo, &["store", "The pool holds 20 connections"]);
    env.commit_all(&repo, "memories");
    let file = only_memory_file(&repo);
    for i in 1..=20 {
        let text = fs::read_to_string(&file)
            .unwrap()
            .replace(&format!("Version {} of", i - 1), &format!("Version {i} of"));
        fs::write(&file, text).unwrap();
        env.commit_all(&repo, &format!("edit {i}"));
        env.ok(&repo, &["sync"]);
        if i % 5 == 0 {
            env.git(&repo, &["checkout", "-q", "HEAD~3"]);
            env.git(&repo, &["checkout", "-q", "main"]);
        }
    }
    let queued = crate::sync_history::queued_hashes(&home);
    assert_eq!(queued.len(), 2, "one per memory: {queued:?}");
    assert_eq!(queued, crate::sync_history::memory_hashes(&home));
    assert_eq!(
        recalled_contents(&env, &repo, "retry"),
        ["Version 20 of the retry policy"]
    );
}
