//! Clones that never ran `goldfish init`: the committed `.gitattributes`
//! routes memory files to goldfish, but git copies neither the driver's
//! declaration nor the hooks. Any goldfish command sets the clone up, and
//! memory files a text merge left in conflict are merged again from git's
//! index stages. Real `git pull`s, with and without the driver.

use std::path::{Path, PathBuf};

use crate::common::{TestEnv, memory_lines, set_tag};

/// The day file every side writes: one tag for all, as branches of one
/// clone have (two clones never write the same file), so git's text merge
/// has one file to leave in conflict.
const TAG: &str = "shared";
const FILE: &str = ".goldfish/memories/2026-11-21-shared.jsonl";

/// A remote with goldfish committed (and Seed's memory of the day when
/// `seed_memory`, so the conflict is a content one, else add/add), Alice's
/// memory on main, Bob's on `bob-work` (stored on another machine), and
/// Bob's fresh clone of `bob-work` that never ran goldfish and has pulled
/// main: in conflict, with markers, since git ran its text merge.
fn conflicted_clone(env: &TestEnv, seed_memory: bool) -> PathBuf {
    let seed = env.repo("seed", "Seed");
    set_tag(&seed, TAG);
    if seed_memory {
        env.ok(&seed, &["store", "Seed's memory"]);
    }
    env.commit_all(&seed, "set up goldfish");
    let remote = env.path().join("remote.git");
    env.git(
        env.path(),
        &[
            "clone",
            "-q",
            "--bare",
            seed.to_str().unwrap(),
            remote.to_str().unwrap(),
        ],
    );
    let laptop = env.clone_of(&remote, "laptop");
    env.identify(&laptop, "Bob");
    env.ok(&laptop, &["init"]);
    set_tag(&laptop, TAG);
    env.ok(&laptop, &["store", "Bob's memory"]);
    env.commit_all(&laptop, "bob");
    env.git(
        &laptop,
        &["push", "-q", "origin", "HEAD:refs/heads/bob-work"],
    );
    let alice = env.clone_of(&remote, "alice");
    env.identify(&alice, "Alice");
    env.ok(&alice, &["init"]);
    set_tag(&alice, TAG);
    env.ok(&alice, &["store", "Alice's memory"]);
    env.commit_all(&alice, "alice");
    env.git(&alice, &["push", "-q"]);

    let bob = env.clone_of(&remote, "bob");
    env.identify(&bob, "Bob");
    env.git(&bob, &["checkout", "-q", "bob-work"]);
    let pull = env
        .command("git", &bob)
        .args(["pull", "-q", "--no-edit", "origin", "main"])
        .output()
        .unwrap();
    assert!(!pull.status.success(), "git records a conflict");
    let text = std::fs::read_to_string(bob.join(FILE)).unwrap();
    assert!(text.contains("<<<<<<<"), "a text merge: {text}");
    bob
}

/// Both sides' memories, once each, no markers, nothing left unmerged, and
/// the merge can be committed.
#[track_caller]
fn assert_merged(env: &TestEnv, repo: &Path, expected: &[&str]) {
    let text = std::fs::read_to_string(repo.join(FILE)).unwrap();
    assert!(
        !text.contains("<<<<<<<") && !text.contains("=======") && !text.contains(">>>>>>>"),
        "{text}"
    );
    let mut contents: Vec<String> = memory_lines(repo)
        .iter()
        .map(|line| line["content"].as_str().unwrap().to_owned())
        .collect();
    contents.sort();
    assert_eq!(contents, expected);
    assert_eq!(env.git(repo, &["ls-files", "-u"]), "");
    env.git(repo, &["commit", "-q", "--no-edit"]);
    assert_eq!(env.git(repo, &["status", "--porcelain"]), "");
}

#[test]
fn a_clone_without_init_declares_the_driver_at_its_first_store_and_pulls_without_conflict() {
    let env = TestEnv::new();
    let seed = env.repo("seed", "Seed");
    env.commit_all(&seed, "set up goldfish");
    let remote = env.path().join("remote.git");
    env.git(
        env.path(),
        &[
            "clone",
            "-q",
            "--bare",
            seed.to_str().unwrap(),
            remote.to_str().unwrap(),
        ],
    );
    let alice = env.clone_of(&remote, "alice");
    env.identify(&alice, "Alice");
    env.ok(&alice, &["init"]);
    set_tag(&alice, TAG);
    env.ok(&alice, &["store", "Alice's memory"]);
    env.commit_all(&alice, "alice");
    env.git(&alice, &["push", "-q"]);

    let bob = env.clone_of(&remote, "bob");
    env.identify(&bob, "Bob");
    // Bob's file is Alice's: the pull below needs the driver.
    set_tag(&bob, TAG);
    let first = env.goldfish(&bob, &["store", "Bob's memory"]);
    assert!(first.status.success());
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(
        stderr.matches("declared the merge driver").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("installed the post-merge"), "{stderr}");
    assert_eq!(
        env.git(&bob, &["config", "--local", "merge.goldfish.driver"]),
        "goldfish merge-driver %O %A %B %P\n"
    );
    let second = env.goldfish(&bob, &["status"]);
    assert!(
        !String::from_utf8_lossy(&second.stderr).contains("declared"),
        "said once"
    );
    env.commit_all(&bob, "bob");
    env.git(&bob, &["pull", "-q", "--no-edit"]);
    let mut contents: Vec<String> = memory_lines(&bob)
        .iter()
        .map(|line| line["content"].as_str().unwrap().to_owned())
        .collect();
    contents.sort();
    assert_eq!(contents, ["Alice's memory", "Bob's memory"]);
}

#[test]
fn heal_never_replaces_a_foreign_hook() {
    let env = TestEnv::new();
    let seed = env.repo("seed", "Seed");
    env.commit_all(&seed, "set up goldfish");
    let bob = env.clone_of(&seed, "bob");
    env.identify(&bob, "Bob");
    let hook = bob.join(".git/hooks/post-merge");
    std::fs::write(&hook, "#!/bin/sh\necho mine\n").unwrap();
    env.ok(&bob, &["status"]);
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    assert!(bob.join(".git/hooks/post-checkout").exists());
    assert!(!bob.join(".git/hooks/post-merge.legacy").exists());
}

#[test]
fn resolve_merges_an_add_add_conflict_from_the_index_stages() {
    let env = TestEnv::new();
    let bob = conflicted_clone(&env, false);
    let resolve = env.goldfish(&bob, &["resolve"]);
    assert!(
        resolve.status.success(),
        "{}",
        String::from_utf8_lossy(&resolve.stderr)
    );
    let stdout = String::from_utf8_lossy(&resolve.stdout);
    assert!(stdout.contains(&format!("merged {FILE} again")), "{stdout}");
    assert_merged(&env, &bob, &["Alice's memory", "Bob's memory"]);
}

#[test]
fn any_command_merges_a_content_conflict_from_the_index_stages() {
    let env = TestEnv::new();
    let bob = conflicted_clone(&env, true);
    let status = env.goldfish(&bob, &["status"]);
    assert!(status.status.success());
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(stderr.contains(&format!("merged {FILE} again")), "{stderr}");
    assert!(!stderr.contains("in conflict"), "{stderr}");
    assert_merged(
        &env,
        &bob,
        &["Alice's memory", "Bob's memory", "Seed's memory"],
    );
}

#[test]
fn init_during_a_conflicted_merge_merges_the_memory_files() {
    let env = TestEnv::new();
    let bob = conflicted_clone(&env, true);
    let init = env.goldfish(&bob, &["init"]);
    assert!(init.status.success());
    let stderr = String::from_utf8_lossy(&init.stderr);
    assert!(stderr.contains(&format!("merged {FILE} again")), "{stderr}");
    assert_merged(
        &env,
        &bob,
        &["Alice's memory", "Bob's memory", "Seed's memory"],
    );
}

/// Unmerged entries are read from git's index in process; a split index
/// (`core.splitIndex`, whose shared half gix does not read) is asked of git,
/// and merged the same.
#[test]
fn any_command_merges_a_conflict_recorded_in_a_split_index() {
    let env = TestEnv::new();
    let bob = conflicted_clone(&env, true);
    env.git(&bob, &["config", "core.splitIndex", "true"]);
    env.git(&bob, &["update-index", "--split-index"]);
    assert!(
        std::fs::read_dir(bob.join(".git"))
            .unwrap()
            .any(|entry| entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("sharedindex.")),
        "the index is split"
    );
    let status = env.goldfish(&bob, &["status"]);
    assert!(status.status.success());
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(stderr.contains(&format!("merged {FILE} again")), "{stderr}");
    assert_merged(
        &env,
        &bob,
        &["Alice's memory", "Bob's memory", "Seed's memory"],
    );
}
