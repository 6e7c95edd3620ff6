//! Several processes storing at once never interleave or tear lines. With
//! syncs and recalls running alongside too: faults.rs.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Stdio};

use crate::common::{TestEnv, memory_files};

/// Starts `writers` shell loops, each running `stores` real `goldfish store`
/// processes ("writer W memory I: " and 200 digits); `stderr(W)` gets writer
/// W's stderr.
pub fn spawn_writers(
    env: &TestEnv,
    repo: &Path,
    writers: usize,
    stores: usize,
    stderr: impl Fn(usize) -> Stdio,
) -> Vec<Child> {
    let script = format!(
        "i=0; while [ $i -lt {stores} ]; do goldfish store \"writer $W memory $i: $(printf '%0200d' 0)\" >/dev/null || exit 1; i=$((i+1)); done"
    );
    (0..writers)
        .map(|writer| {
            env.command("sh", repo)
                .args(["-c", &script])
                .env("W", writer.to_string())
                .stderr(stderr(writer))
                .spawn()
                .unwrap()
        })
        .collect()
}

/// Asserts the log is one file of `count` whole records, all different.
pub fn assert_whole_lines(repo: &Path, count: usize) {
    let files = memory_files(repo);
    assert_eq!(files.len(), 1);
    let text = String::from_utf8(files[0].1.clone()).unwrap();
    assert!(text.ends_with('\n'));
    let mut seen = HashSet::new();
    for line in text.lines() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("torn line ({e}): {line}"));
        assert!(seen.insert(value["content"].as_str().unwrap().to_owned()));
    }
    assert_eq!(seen.len(), count);
}

/// Eight writers at once, each appending 50 times: every append of one
/// races seven others (200 each took 3 minutes of the suite, for the same
/// races repeated; faults.rs runs writers alongside syncs and recalls).
#[test]
fn eight_writers_fifty_stores_each() {
    const WRITERS: usize = 8;
    const STORES: usize = 50;
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    for mut child in spawn_writers(&env, &repo, WRITERS, STORES, |_| Stdio::inherit()) {
        assert!(child.wait().unwrap().success());
    }
    assert_whole_lines(&repo, WRITERS * STORES);
}
