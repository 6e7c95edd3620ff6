//! The merge driver as git runs it: bad lines kept, unreadable input handed to
//! git's own merge.

use std::fs;

use crate::common::{TestEnv, memory_files};

const A: &str = r#"{"id":"01KAJ0000000000000000000AA","timestamp":"2026-11-20T10:00:00.000Z","type":"decision","content":"base"}"#;
const B: &str = r#"{"id":"01KAJ0000000000000000000BB","timestamp":"2026-11-21T10:00:00.000Z","type":"insight","content":"ours"}"#;
const C: &str = r#"{"id":"01KAJ0000000000000000000CC","timestamp":"2026-11-21T11:00:00.000Z","type":"insight","content":"theirs"}"#;

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
        &["merge-driver", "missing-base", "ours", "theirs", "m.jsonl"],
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
        .args(["merge-driver", "base", "ours", "theirs", "m.jsonl"])
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
    let output = env.goldfish(dir, &["merge-driver", "base", "ours", "theirs", "m.jsonl"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    assert_eq!(
        fs::read_to_string(dir.join("ours")).unwrap(),
        format!("{A}\n{B}\n{C}\n")
    );
}
