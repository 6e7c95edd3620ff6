//! Discarding a store (issue 29, point 10): `git restore` of the memory
//! file right after a store takes the line out and the journal leaves it
//! out (and says so); a line git took out otherwise is put back, with a
//! notice naming it, its file and `goldfish forget`; a line that only waited
//! in the journal is never taken for a discarded one.

use std::fs;
use std::path::Path;

use crate::common::{TestEnv, json_lines, stderr, today};

/// How many lines of today's file hold `id`.
fn copies(repo: &Path, id: &str) -> usize {
    fs::read_to_string(repo.join(today(repo)))
        .unwrap()
        .lines()
        .filter(|line| line.contains(&format!("\"id\":\"{id}\"")))
        .count()
}

/// Stores `text`, asserting it went into its file; returns its id.
fn store(env: &TestEnv, repo: &Path, text: &str) -> String {
    let output = env.goldfish(repo, &["store", "--json", text]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let id = json_lines(&String::from_utf8_lossy(&output.stdout))[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(copies(repo, &id), 1);
    id
}

/// A repository whose today's file is committed with one memory.
fn repo_with_a_committed_memory(env: &TestEnv) -> std::path::PathBuf {
    let repo = env.repo("r", "Ada");
    store(env, &repo, "Committed: the pool holds eight connections");
    env.commit_all(&repo, "a memory");
    repo
}

/// Recall's ids for `query` (keyword mode), as JSON lines.
fn recalled(env: &TestEnv, repo: &Path, query: &str) -> Vec<String> {
    let output = env.goldfish(repo, &["recall", "--mode", "keyword", "--json", query]);
    json_lines(&String::from_utf8_lossy(&output.stdout))
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_owned))
        .collect()
}

/// Regression: `git restore .goldfish/memories` right after a store put the
/// line back silently (the post-checkout hook that `git restore` runs, or
/// the next command, took it for a line lost to a git command racing the
/// store). It stays out, and the hook's report says so.
#[test]
fn git_restore_right_after_a_store_discards_it() {
    let env = TestEnv::new();
    let repo = repo_with_a_committed_memory(&env);
    let today = today(&repo);
    let id = store(&env, &repo, "Mistake: stored by accident, discarded");
    let restore = env
        .command("git", &repo)
        .env("GOLDFISH_HOOK_VERBOSE", "1")
        .args(["restore", ".goldfish/memories"])
        .output()
        .unwrap();
    assert!(restore.status.success(), "{}", stderr(&restore));
    assert!(
        stderr(&restore).contains(&format!(
            "note: memory {id} is left out of {today}: the file was restored to HEAD's version"
        )),
        "{}",
        stderr(&restore)
    );
    assert_eq!(copies(&repo, &id), 0);

    let sync = env.goldfish(&repo, &["sync"]);
    assert_eq!(sync.status.code(), Some(0), "{}", stderr(&sync));
    assert!(!stderr(&sync).contains(&id), "{}", stderr(&sync));
    assert_eq!(copies(&repo, &id), 0, "not put back");
    assert!(recalled(&env, &repo, "mistake accident").is_empty());
    let journal = fs::read_to_string(repo.join(".git/goldfish-journal.jsonl")).unwrap_or_default();
    assert!(!journal.contains(&id), "{journal}");
    assert!(
        env.git(&repo, &["status", "--porcelain", "--", ".goldfish"])
            .is_empty(),
        "the memory files are HEAD's"
    );
}

/// Without the hooks (a clone not set up yet), `git checkout -- FILE` is the
/// same discard, and the next command (here `status`, which drains the
/// journal without syncing) says so.
#[test]
fn git_checkout_of_the_file_discards_the_store_and_the_next_command_says_so() {
    let env = TestEnv::new();
    let repo = repo_with_a_committed_memory(&env);
    let today = today(&repo);
    let id = store(&env, &repo, "Another accidental store");
    env.git(
        &repo,
        &["-c", "core.hooksPath=/dev/null", "checkout", "--", &today],
    );
    assert_eq!(copies(&repo, &id), 0);
    let status = env.goldfish(&repo, &["status"]);
    assert!(
        stderr(&status).contains(&format!("memory {id} is left out of {today}")),
        "{}",
        stderr(&status)
    );
    assert_eq!(copies(&repo, &id), 0);
    let again = env.goldfish(&repo, &["status"]);
    assert!(!stderr(&again).contains(&id), "said once");
}

/// A git command that took the line out and is not a restore of the file
/// (here `git reset --hard`, which a stash and a merge's abort also run:
/// the reflog records it) gets it back, and the user is told which memory,
/// where, and how to discard it for good: `goldfish forget`, which then
/// hides it.
#[test]
fn a_line_git_took_out_otherwise_is_put_back_with_a_notice() {
    let env = TestEnv::new();
    let repo = repo_with_a_committed_memory(&env);
    let today = today(&repo);
    let id = store(&env, &repo, "Kept: the cache key includes the tenant");
    env.git(&repo, &["reset", "-q", "--hard"]);
    assert_eq!(copies(&repo, &id), 0);

    let recall = env.goldfish(&repo, &["recall", "--mode", "keyword", "tenant cache"]);
    let text = stderr(&recall);
    assert!(
        text.contains(&format!(
            "note: memory {id} is back in {today}: git rewrote the file without it"
        )) && text.contains(&format!("To discard it for good: `goldfish forget {id}`.")),
        "{text}"
    );
    assert_eq!(copies(&repo, &id), 1, "put back");
    assert_eq!(recalled(&env, &repo, "tenant cache"), vec![id.clone()]);
    // Said once: the line is in its file now.
    let again = env.goldfish(&repo, &["sync"]);
    assert!(!stderr(&again).contains(&id), "{}", stderr(&again));

    env.ok(&repo, &["forget", &id]);
    assert!(recalled(&env, &repo, "tenant cache").is_empty());
}

/// A line that only waited in the journal (git was busy at its store) was
/// never in its file, so a file equal to HEAD's version does not mean the
/// user discarded it: after a cherry-pick stopped on a conflict and quit
/// (no reflog entry, the memory file untouched), it goes into its file.
#[test]
fn a_journaled_line_is_never_taken_for_a_discarded_one() {
    let env = TestEnv::new();
    let repo = repo_with_a_committed_memory(&env);
    env.git(&repo, &["checkout", "-q", "-b", "side"]);
    fs::write(repo.join("README.md"), "side\n").unwrap();
    env.commit_all(&repo, "side");
    env.git(&repo, &["checkout", "-q", "main"]);
    fs::write(repo.join("README.md"), "main\n").unwrap();
    env.commit_all(&repo, "main");
    let pick = env
        .command("git", &repo)
        .args(["cherry-pick", "side"])
        .output()
        .unwrap();
    assert!(!pick.status.success(), "a conflict");

    let stored = env.goldfish(&repo, &["store", "--json", "Stored while git waits"]);
    assert_eq!(stored.status.code(), Some(0), "{}", stderr(&stored));
    assert!(
        stderr(&stored).contains("cherry-pick"),
        "{}",
        stderr(&stored)
    );
    let id = json_lines(&String::from_utf8_lossy(&stored.stdout))[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(copies(&repo, &id), 0, "waits in the journal");
    let reflog = env.git(&repo, &["reflog"]);
    env.git(&repo, &["cherry-pick", "--quit"]);
    assert_eq!(env.git(&repo, &["reflog"]), reflog);
    assert!(
        env.git(&repo, &["status", "--porcelain", "--", ".goldfish"])
            .is_empty(),
        "the memory file is HEAD's"
    );

    let sync = env.goldfish(&repo, &["sync"]);
    assert_eq!(sync.status.code(), Some(0), "{}", stderr(&sync));
    assert!(
        !stderr(&sync).contains("left out") && !stderr(&sync).contains("is back in"),
        "appended as the store said, not put back: {}",
        stderr(&sync)
    );
    assert_eq!(copies(&repo, &id), 1);
}
