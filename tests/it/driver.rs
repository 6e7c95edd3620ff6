//! The merge driver as git runs it: bad lines kept, unreadable input handed to
//! git's own merge.

use std::fs;

use crate::common::{TestEnv, memory_files};

const A: &str = r#"{"id":"01KAJ0000000000000000000AA","timestamp":"2026-11-20T10:00:00.000Z","type":"decision","content":"base"}"#;
const B: &str = r#"{"id":"01KAJ0000000000000000000BB","timestamp":"2026-11-21T10:00:00.000Z","type":"insight","content":"ours"}"#;
const C: &str = r#"{"id":"01KAJ0000000000000000000CC","timestamp":"2026-11-21T11:00:00.000Z","type":"insight","content":"theirs"}"#;
/// `%P` of a memory file, as git passes it.
const MEMORY_FILE: &str = ".goldfish/memories/2026-11-21.jsonl";

#[test]
fn garbage_and_crlf_lines_survive_a_real_merge() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    let file = ".goldfish/memories/2026-11-21.jsonl";
    fs::write(
        alice.join(file),
        format!("{A}\r\n{B}\r\nnot json at all\r\n"),
    )
    .unwrap();
    env.commit_all(&alice, "a");
    env.git(&alice, &["push", "-q"]);
    fs::write(bob.join(file), format!("{A}\n{C}\n<<<<<<< HEAD\n")).unwrap();
    env.commit_all(&bob, "b");
    let pull = env
        .command("git", &bob)
        .args(["pull", "--no-edit"])
        .output()
        .unwrap();
    assert!(
        pull.status.success(),
        "{}",
        String::from_utf8_lossy(&pull.stderr)
    );
    let stderr = String::from_utf8_lossy(&pull.stderr);
    assert!(
        stderr.contains("is not a memory record"),
        "notices reach the user: {stderr}"
    );
    let merged = String::from_utf8(fs::read(bob.join(file)).unwrap()).unwrap();
    assert_eq!(
        merged,
        format!("{A}\n{B}\n{C}\n<<<<<<< HEAD\nnot json at all\n")
    );
    assert_eq!(memory_files(&bob).len(), 1);
}

#[test]
fn unreadable_input_falls_back_to_git_merge_file() {
    let env = TestEnv::new();
    let dir = env.path();
    fs::write(dir.join("ours"), format!("{A}\n{B}\n")).unwrap();
    fs::write(dir.join("theirs"), format!("{A}\n{C}\n")).unwrap();
    // %O missing: the driver cannot three-way merge, so git merge-file runs
    // (here it reports a conflict and leaves both sides in the file).
    let output = env.goldfish(
        dir,
        &[
            "merge-driver",
            "missing-base",
            "ours",
            "theirs",
            MEMORY_FILE,
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "a conflict, never a crash code"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("falling back to git merge-file"),
        "{stderr}"
    );
    let ours = fs::read_to_string(dir.join("ours")).unwrap();
    assert!(ours.contains(B) && ours.contains(C), "nothing lost: {ours}");

    // GOLDFISH=0 also hands the merge to git.
    fs::write(dir.join("base"), format!("{A}\n")).unwrap();
    fs::write(dir.join("ours"), format!("{A}\n{B}\n")).unwrap();
    let output = env
        .command(env!("CARGO_BIN_EXE_goldfish"), dir)
        .env("GOLDFISH", "0")
        .args(["merge-driver", "base", "ours", "theirs", MEMORY_FILE])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("GOLDFISH=0"));
    assert!(output.status.code().unwrap() <= 128);
}

#[test]
fn driver_merges_files_given_by_path() {
    let env = TestEnv::new();
    let dir = env.path();
    fs::write(dir.join("base"), format!("{A}\n")).unwrap();
    fs::write(dir.join("ours"), format!("{A}\n{C}\n")).unwrap();
    fs::write(dir.join("theirs"), format!("{B}\n{A}\n")).unwrap();
    let output = env.goldfish(
        dir,
        &["merge-driver", "base", "ours", "theirs", MEMORY_FILE],
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    assert_eq!(
        fs::read_to_string(dir.join("ours")).unwrap(),
        format!("{A}\n{B}\n{C}\n")
    );
}

/// Eight lines of Python whose `x` and `y` lines are far enough apart for
/// git's text merge to take an edit of each without a conflict.
const APP_PY: &str = "import sys\nx = 1\n\n\ndef main():\n    print(x, y)\n\ny = 2\n";

/// `git merge-file -p` of three texts: what git makes of a file without a
/// driver (exit status and merged text).
fn merge_file(env: &TestEnv, base: &str, ours: &str, theirs: &str) -> (Option<i32>, String) {
    let dir = env.path().join("merge-file");
    fs::create_dir_all(&dir).unwrap();
    for (name, text) in [("base", base), ("ours", ours), ("theirs", theirs)] {
        fs::write(dir.join(name), text).unwrap();
    }
    let output = env
        .command("git", &dir)
        .args(["merge-file", "-p", "ours", "base", "theirs"])
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// Regression (HIGH): a committed `.gitattributes` that also routed `*.py`
/// to `merge=goldfish` had the driver, once any goldfish command declared it
/// in a fresh clone, merge `app.py` as a memory log: lines sorted by bytes,
/// blank lines dropped, `git merge` exiting 0, doctor healthy. The driver
/// merges memory files only and leaves any other path to `git merge-file`,
/// and doctor names the line that routes `*.py`.
#[test]
fn a_committed_gitattributes_routing_source_files_to_goldfish_leaves_them_to_git() {
    let env = TestEnv::new();
    let seed = env.repo("seed", "Seed");
    let attributes = fs::read_to_string(seed.join(".gitattributes")).unwrap();
    fs::write(
        seed.join(".gitattributes"),
        format!("{attributes}*.py merge=goldfish\n"),
    )
    .unwrap();
    fs::write(seed.join("app.py"), APP_PY).unwrap();
    env.commit_all(&seed, "goldfish and app.py");
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
    let clone = env.clone_of(&remote, "teammate");
    env.identify(&clone, "Teammate");
    let status = env.goldfish(&clone, &["status"]);
    assert!(status.status.success());
    assert_eq!(
        env.git(&clone, &["config", "--local", "merge.goldfish.driver"]),
        "goldfish merge-driver %O %A %B %P\n",
        "heal declared the driver"
    );

    // Edits on different lines: git's own merge takes both.
    let ours = APP_PY.replace("y = 2", "y = 20");
    let theirs = APP_PY.replace("x = 1", "x = 10");
    env.git(&clone, &["checkout", "-q", "-b", "feature"]);
    fs::write(clone.join("app.py"), &theirs).unwrap();
    env.commit_all(&clone, "x = 10");
    env.git(&clone, &["checkout", "-q", "main"]);
    fs::write(clone.join("app.py"), &ours).unwrap();
    env.commit_all(&clone, "y = 20");
    let merge = env
        .command("git", &clone)
        .args(["merge", "--no-edit", "feature"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&merge.stderr);
    assert!(merge.status.success(), "{stderr}");
    let merged = fs::read_to_string(clone.join("app.py")).unwrap();
    assert_eq!(
        (Some(0), merged.clone()),
        merge_file(&env, APP_PY, &ours, &theirs)
    );
    assert_eq!(
        merged,
        "import sys\nx = 10\n\n\ndef main():\n    print(x, y)\n\ny = 20\n"
    );
    assert_eq!(
        stderr.matches("app.py: not a memory file").count(),
        1,
        "said once: {stderr}"
    );
    let healed = String::from_utf8_lossy(&status.stderr);
    assert!(healed.contains("`*.py`"), "heal says so: {healed}");

    // Edits of one line: a real conflict, with markers, as git leaves it.
    env.git(&clone, &["checkout", "-q", "-b", "other", "HEAD~1"]);
    let other = APP_PY.replace("x = 1", "x = 11");
    fs::write(clone.join("app.py"), &other).unwrap();
    env.commit_all(&clone, "x = 11");
    let merge = env
        .command("git", &clone)
        .args(["merge", "--no-edit", "feature"])
        .output()
        .unwrap();
    assert!(!merge.status.success(), "a conflict");
    let conflicted = fs::read_to_string(clone.join("app.py")).unwrap();
    assert!(
        conflicted.contains("<<<<<<<")
            && conflicted.contains("x = 11\n=======\nx = 10\n>>>>>>>")
            && conflicted.starts_with("import sys\n")
            && conflicted.ends_with("\n\ndef main():\n    print(x, y)\n\ny = 2\n"),
        "{conflicted}"
    );
    assert_eq!(
        env.git(&clone, &["ls-files", "-u", "--", "app.py"])
            .lines()
            .count(),
        3
    );
    env.git(&clone, &["merge", "--abort"]);

    // Doctor names the line and how to fix it.
    let doctor = env.goldfish(&clone, &["doctor", "--json"]);
    assert_eq!(doctor.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let finding = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "gitattributes")
        .unwrap();
    assert_eq!(finding["status"], "problem", "{finding}");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("line 2") && message.contains("`*.py`"),
        "{message}"
    );
    assert!(
        finding["fix"].as_str().unwrap().contains("remove"),
        "{finding}"
    );
}

/// Without `%P` (a declaration `goldfish init` never wrote: its command has
/// always passed it) the driver cannot tell a memory file from source code:
/// git's own text merge runs, and says why.
#[test]
fn a_driver_declared_without_the_path_merges_as_text() {
    let env = TestEnv::new();
    let dir = env.path();
    fs::write(dir.join("base"), APP_PY).unwrap();
    fs::write(dir.join("ours"), APP_PY.replace("y = 2", "y = 20")).unwrap();
    fs::write(dir.join("theirs"), APP_PY.replace("x = 1", "x = 10")).unwrap();
    let output = env.goldfish(dir, &["merge-driver", "base", "ours", "theirs"]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("%P") && stderr.contains("goldfish init"),
        "{stderr}"
    );
    assert_eq!(
        fs::read_to_string(dir.join("ours")).unwrap(),
        "import sys\nx = 10\n\n\ndef main():\n    print(x, y)\n\ny = 20\n"
    );
}

/// Issue 56, version skew: a merge driver a newer goldfish declared, with
/// an argument after `%O %A %B %P` this goldfish does not take, still
/// merges (the usage error's exit 2 would leave the file in conflict).
#[test]
fn issue_56_a_driver_declared_with_more_arguments_still_merges() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    fs::create_dir_all(alice.join(".goldfish/memories")).unwrap();
    fs::write(alice.join(MEMORY_FILE), format!("{A}\n{B}\n")).unwrap();
    env.commit_all(&alice, "a");
    env.git(&alice, &["push", "-q"]);
    fs::create_dir_all(bob.join(".goldfish/memories")).unwrap();
    fs::write(bob.join(MEMORY_FILE), format!("{A}\n{C}\n")).unwrap();
    env.commit_all(&bob, "b");
    env.git(
        &bob,
        &[
            "config",
            "merge.goldfish.driver",
            "goldfish merge-driver %O %A %B %P --marker-size %L",
        ],
    );
    let pull = env
        .command("git", &bob)
        .args(["pull", "--no-edit"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&pull.stderr);
    assert!(pull.status.success(), "{stderr}");
    assert!(
        stderr.contains("cannot read `goldfish merge-driver")
            && stderr.contains("merging with the first four"),
        "{stderr}"
    );
    assert_eq!(
        fs::read_to_string(bob.join(MEMORY_FILE)).unwrap(),
        format!("{A}\n{B}\n{C}\n")
    );
}
