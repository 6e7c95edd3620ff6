//! Two teammates, one remote: real `git pull`, `git merge` and
//! `git pull --rebase` running the merge driver and the hooks.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::{TestEnv, json_lines, memory_files, memory_lines};

fn store_many(env: &TestEnv, repo: &Path, who: &str, count: usize) {
    for i in 0..count {
        env.ok(
            repo,
            &[
                "store",
                "-t",
                "insight",
                &format!("{who} learned thing {i} about the sync engine"),
            ],
        );
    }
}

#[test]
fn concurrent_appends_merge_without_conflict_both_ways() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    store_many(&env, &alice, "alice", 50);
    store_many(&env, &bob, "bob", 50);
    env.commit_all(&alice, "alice's memories");
    env.commit_all(&bob, "bob's memories");
    // Bob's unmerged work is also on the remote, so Alice can merge it
    // herself: merging in both directions must give the same bytes.
    env.git(&bob, &["push", "-q", "origin", "HEAD:refs/heads/bob-work"]);
    env.git(&alice, &["push", "-q", "origin", "main"]);

    env.git(&bob, &["pull", "-q", "--no-edit", "origin", "main"]);
    assert_eq!(memory_lines(&bob).len(), 100);
    assert!(env.git(&bob, &["status", "--porcelain"]).is_empty());
    let recalled = json_lines(&env.ok(&bob, &["recall", "--json", "-n", "1000"]));
    assert_eq!(recalled.len(), 100);

    let alice_side = env.clone_of(&alice, "alice-merges");
    env.identify(&alice_side, "Alice");
    env.ok(&alice_side, &["init"]);
    env.git(
        &alice_side,
        &[
            "fetch",
            "-q",
            env.path().join("remote.git").to_str().unwrap(),
            "bob-work",
        ],
    );
    env.git(&alice_side, &["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    assert_eq!(
        memory_files(&alice_side),
        memory_files(&bob),
        "merge is commutative"
    );

    env.git(&bob, &["push", "-q", "origin", "main"]);
    env.git(&alice, &["pull", "-q", "--no-edit"]);
    assert_eq!(memory_files(&alice), memory_files(&bob));
}

#[test]
fn a_forget_survives_the_merge() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    let id = json_lines(&env.ok(
        &alice,
        &["store", "--json", "Use port 5433 for the test database"],
    ))[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.commit_all(&alice, "memory");
    env.git(&alice, &["push", "-q"]);
    env.git(&bob, &["pull", "-q"]);
    env.ok(&bob, &["forget", &id]);
    env.commit_all(&bob, "forget");
    env.ok(&alice, &["store", "Port 5433 clashes with the CI cache"]);
    env.commit_all(&alice, "another");
    env.git(&alice, &["push", "-q"]);
    env.git(&bob, &["pull", "-q", "--no-edit"]);
    let recalled = json_lines(&env.ok(&bob, &["recall", "--json"]));
    let contents: Vec<_> = recalled
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["Port 5433 clashes with the CI cache"]);
    assert_eq!(
        memory_lines(&bob).len(),
        3,
        "memory, tombstone and the new memory are all kept"
    );
}

#[test]
fn pull_rebase_replays_memories_through_the_driver() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    store_many(&env, &alice, "alice", 5);
    env.commit_all(&alice, "alice");
    env.git(&alice, &["push", "-q"]);
    store_many(&env, &bob, "bob", 5);
    env.commit_all(&bob, "bob");
    env.git(&bob, &["pull", "-q", "--rebase"]);
    assert_eq!(memory_lines(&bob).len(), 10);
    let log = env.git(&bob, &["log", "--format=%s"]);
    assert_eq!(
        log.lines().take(2).collect::<Vec<_>>(),
        ["bob", "alice"],
        "linear history"
    );
}

#[test]
fn a_pre_existing_hook_still_runs_on_pull() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    let hook = bob.join(".git/hooks/post-merge.legacy");
    // The team() clone already ran init; install a foreign hook the usual way:
    // remove ours, add theirs, init again.
    fs::remove_file(bob.join(".git/hooks/post-merge")).unwrap();
    fs::write(
        bob.join(".git/hooks/post-merge"),
        "#!/bin/sh\ntouch \"$(git rev-parse --git-dir)/post-merge-ran\"\n",
    )
    .unwrap();
    fs::set_permissions(
        bob.join(".git/hooks/post-merge"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    env.ok(&bob, &["init"]);
    assert!(hook.is_file());
    env.ok(&alice, &["store", "Something to pull"]);
    env.commit_all(&alice, "m");
    env.git(&alice, &["push", "-q"]);
    env.git(&bob, &["pull", "-q"]);
    assert!(bob.join(".git/post-merge-ran").exists());
}

#[test]
fn pull_succeeds_without_goldfish_on_path() {
    let mut env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    env.ok(&alice, &["store", "Something to pull"]);
    env.commit_all(&alice, "m");
    env.git(&alice, &["push", "-q"]);
    env.goldfish_on_path = false;
    let output = env
        .command("git", &bob)
        .args(["pull", "-q"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "hooks print nothing: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(memory_lines(&bob).len(), 1);
}

/// When git cannot run the driver (`goldfish` not on its PATH), it records a
/// conflict but leaves the memory file as ours, with no markers: doctor says
/// so, with `goldfish resolve`, and the next goldfish command merges it again
/// from git's index.
#[test]
fn a_merge_without_goldfish_on_path_is_reported_and_can_be_redone() {
    let mut env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    env.ok(&alice, &["store", "Alice's memory"]);
    env.commit_all(&alice, "alice");
    env.git(&alice, &["push", "-q"]);
    // Bob's file is Alice's, as on two branches of one clone: the pull
    // needs the driver.
    crate::common::share_tag(&alice, &bob);
    env.ok(&bob, &["store", "Bob's memory"]);
    env.commit_all(&bob, "bob");

    env.goldfish_on_path = false;
    let pull = env
        .command("git", &bob)
        .args(["pull", "-q"])
        .output()
        .unwrap();
    assert!(!pull.status.success(), "git records a conflict");
    let file = crate::common::today(&bob);
    let text = std::fs::read_to_string(bob.join(&file)).unwrap();
    assert!(
        text.contains("Bob's memory") && !text.contains("Alice's memory"),
        "{text}"
    );
    assert!(!text.contains("<<<<<<<"), "no markers: {text}");
    env.goldfish_on_path = true;

    let doctor = env.goldfish(&bob, &["doctor", "--json"]);
    assert_eq!(doctor.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let finding = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "memory-conflicts")
        .unwrap_or_else(|| panic!("{report}"))
        .clone();
    assert_eq!(finding["status"], "problem", "{finding}");
    assert!(
        finding["fix"]
            .as_str()
            .unwrap()
            .starts_with("goldfish resolve"),
        "{finding}"
    );

    let status = env.goldfish(&bob, &["status"]);
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(stderr.contains(&format!("merged {file} again")), "{stderr}");
    assert!(!stderr.contains("in conflict"), "{stderr}");
    let text = std::fs::read_to_string(bob.join(file)).unwrap();
    assert!(
        text.contains("Bob's memory") && text.contains("Alice's memory"),
        "{text}"
    );
    assert_eq!(env.git(&bob, &["ls-files", "-u"]), "");
}
