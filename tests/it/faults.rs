//! The fault and bad-input suite: a recall while another sync runs, odd
//! repository shapes, and input goldfish cannot read or places it cannot
//! write. Every test checks that nothing stored is lost and that what went
//! wrong is named (file and line, or path).
//!
//! Covered elsewhere, not repeated: init in a linked worktree, in a bare
//! repository and with `core.hooksPath` (init.rs); garbage and CRLF lines
//! through a real merge and a missing base (driver.rs).

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::common::{TestEnv, json_lines};

/// A memory id for test records: `01KAJ` and `n` in 21 digits.
fn id(n: u64) -> String {
    format!("01KAJ{n:021}")
}

/// A memory record line (no newline) of 2026-11-`day`.
fn record(n: u64, day: &str, content: &str) -> String {
    format!(
        r#"{{"id":"{}","timestamp":"2026-11-{day}T10:00:00.000Z","type":"insight","content":"{content}"}}"#,
        id(n)
    )
}

/// The ids `recall` lists (no query: every live memory).
fn recalled_ids(env: &TestEnv, repo: &Path) -> BTreeSet<String> {
    json_lines(&env.ok(repo, &["recall", "--json", "-n", "10000"]))
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whether this process runs as root, for whom permissions deny nothing.
fn running_as_root() -> bool {
    let probe = tempfile::NamedTempFile::new().unwrap();
    probe.as_file().metadata().unwrap().uid() == 0
}

/// Regression: a store whose sync found another sync running returned at
/// once (the running one takes its request), and a recall right after did
/// the same and read the index before the memory was in it: "no memories
/// match".
#[test]
fn a_recall_while_another_sync_runs_finds_what_was_just_stored() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    crate::index::write_log(&repo, 4000, 16);
    env.commit_all(&repo, "4000 memories");
    let locks = env.path().join("home/.goldfish/locks");
    let mut sync = env
        .command(env!("CARGO_BIN_EXE_goldfish"), &repo)
        .args(["sync", "--quiet"])
        .spawn()
        .unwrap();
    // Until the sync holds its lock: an exclusive flock on the lock file's
    // inode in /proc/locks (probing with a lock of our own could make the
    // sync find it taken).
    let started = Instant::now();
    let held = || {
        let locks_table = fs::read_to_string("/proc/locks").unwrap_or_default();
        fs::read_dir(&locks).is_ok_and(|entries| {
            entries.filter_map(Result::ok).any(|entry| {
                let inode = format!(":{}", entry.metadata().unwrap().ino());
                entry.file_name().to_string_lossy().ends_with(".lock")
                    && locks_table.lines().any(|line| {
                        let fields: Vec<&str> = line.split_whitespace().collect();
                        fields.get(1) == Some(&"FLOCK")
                            && fields.get(3) == Some(&"WRITE")
                            && fields.get(5).is_some_and(|id| id.ends_with(&inode))
                    })
            })
        })
    };
    while !held() {
        assert!(
            started.elapsed().as_secs() < 10,
            "the sync never took its lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let stored = env.goldfish(&repo, &["store", "Zebra crossings get their own memory"]);
    assert_eq!(stored.status.code(), Some(0));
    let recalled = env.goldfish(&repo, &["recall", "zebra", "--json"]);
    assert_eq!(recalled.status.code(), Some(0), "{}", stderr(&recalled));
    assert_eq!(
        json_lines(&String::from_utf8_lossy(&recalled.stdout)).len(),
        1
    );
    assert!(sync.wait().unwrap().success());
}

/// Regression: a shallow clone's boundary commit names parents the clone
/// does not have, and sync failed reading them ("could not read the memory
/// folder of commit …"), so recall failed and store could not index.
#[test]
fn a_shallow_clone_syncs_and_recalls() {
    let env = TestEnv::new();
    let seed = env.repo("seed", "Seed");
    for i in 0..3 {
        env.ok(&seed, &["store", &format!("Memory {i} of the seed")]);
        env.commit_all(&seed, &format!("memory {i}"));
    }
    let shallow = env.path().join("shallow");
    let url = format!("file://{}", seed.display());
    env.git(
        env.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    env.identify(&shallow, "Ada");
    env.ok(&shallow, &["init"]);
    let report: Value = serde_json::from_str(&env.ok(&shallow, &["sync", "--json"])).unwrap();
    assert_eq!(report["memories"], 3, "{report}");
    let head = env.git(&shallow, &["rev-parse", "HEAD"]).trim().to_owned();
    let recalled = json_lines(&env.ok(&shallow, &["recall", "seed", "--json"]));
    assert_eq!(recalled.len(), 3);
    for memory in &recalled {
        assert_eq!(
            memory["introduced"]["commit"], head,
            "the boundary commit introduces what the clone has"
        );
    }
    let stored = env.goldfish(&shallow, &["store", "Stored in a shallow clone"]);
    assert_eq!(stored.status.code(), Some(0));
    assert!(stored.stderr.is_empty(), "{}", stderr(&stored));
    assert_eq!(recalled_ids(&env, &shallow).len(), 4);
}

/// Regression: init wrote .gitattributes and the driver declaration before
/// finding out it could not install the hooks.
#[test]
fn init_with_an_unwritable_hooks_folder_fails_and_writes_nothing() {
    let env = TestEnv::new();
    let repo = env.path().join("r");
    fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q"]);
    let hooks = repo.join(".git/hooks");
    // Root writes through any permission: there, a file where the folder
    // should be makes it unwritable instead.
    let as_root = running_as_root();
    if as_root {
        fs::remove_dir_all(&hooks).unwrap();
        fs::write(&hooks, "not a folder").unwrap();
    } else {
        fs::set_permissions(&hooks, fs::Permissions::from_mode(0o555)).unwrap();
    }
    let config = fs::read(repo.join(".git/config")).unwrap();
    let output = env.goldfish(&repo, &["init"]);
    if !as_root {
        fs::set_permissions(&hooks, fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert_eq!(output.status.code(), Some(3));
    assert!(
        stderr(&output).contains(&format!("could not write in {}", hooks.display())),
        "{}",
        stderr(&output)
    );
    assert!(!repo.join(".gitattributes").exists());
    assert!(!repo.join(".goldfish").exists());
    assert_eq!(fs::read(repo.join(".git/config")).unwrap(), config);
}

/// Regression: with "theirs" missing or unreadable, the fallback merged it
/// as an empty file, which reads as "theirs deleted every line": when ours
/// equalled the base, git merge-file emptied ours and the driver reported a
/// clean merge.
#[test]
fn the_driver_leaves_ours_and_a_conflict_when_a_side_is_unreadable() {
    // A missing base: driver.rs.
    let env = TestEnv::new();
    let dir = env.path();
    let a = record(1, "20", "base");
    let b = record(2, "21", "ours");
    let c = record(3, "21", "theirs");
    let driver = |base: &str, ours: &str, theirs: &str| {
        env.goldfish(dir, &["merge-driver", base, ours, theirs, "m.jsonl"])
    };
    fs::write(dir.join("base"), format!("{a}\n")).unwrap();
    fs::create_dir(dir.join("folder")).unwrap();
    for (ours, theirs) in [
        (format!("{a}\n"), "missing"),
        (format!("{a}\n"), "folder"),
        (format!("{a}\n{b}\n"), "folder"),
    ] {
        fs::write(dir.join("ours"), &ours).unwrap();
        let output = driver("base", "ours", theirs);
        assert_eq!(output.status.code(), Some(1), "{theirs}: a conflict");
        assert_eq!(
            fs::read_to_string(dir.join("ours")).unwrap(),
            ours,
            "{theirs}"
        );
        assert!(
            stderr(&output).contains(&format!("cannot read {theirs}")),
            "{}",
            stderr(&output)
        );
    }
    // An unreadable base merges as empty: every line of both sides is kept.
    fs::write(dir.join("ours"), format!("{a}\n{b}\n")).unwrap();
    fs::write(dir.join("theirs"), format!("{a}\n{c}\n")).unwrap();
    let output = driver("folder", "ours", "theirs");
    assert_eq!(output.status.code(), Some(1));
    let merged = fs::read_to_string(dir.join("ours")).unwrap();
    assert!(
        merged.contains(&a) && merged.contains(&b) && merged.contains(&c),
        "{merged}"
    );

    // chmod 000: unreadable, unless we are root (who reads it anyway, and
    // gets a real merge; the folder above is the unreadable case then).
    fs::write(dir.join("ours"), format!("{a}\n")).unwrap();
    fs::set_permissions(dir.join("theirs"), fs::Permissions::from_mode(0o000)).unwrap();
    let output = driver("base", "ours", "theirs");
    fs::set_permissions(dir.join("theirs"), fs::Permissions::from_mode(0o644)).unwrap();
    let merged = fs::read_to_string(dir.join("ours")).unwrap();
    if running_as_root() {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(merged, format!("{a}\n{c}\n"));
    } else {
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert_eq!(merged, format!("{a}\n"));
    }
}
