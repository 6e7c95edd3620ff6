//! Several processes storing at once never interleave or tear lines.

use std::collections::HashSet;

use crate::common::{TestEnv, memory_files};

#[test]
fn eight_writers_two_hundred_stores_each() {
    const WRITERS: usize = 8;
    const STORES: usize = 200;
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    // Each writer is a shell loop of real `goldfish store` processes.
    let script = format!(
        "i=0; while [ $i -lt {STORES} ]; do goldfish store \"writer $W memory $i: $(printf '%0200d' 0)\" >/dev/null || exit 1; i=$((i+1)); done"
    );
    let children: Vec<_> = (0..WRITERS)
        .map(|writer| {
            env.command("sh", &repo)
                .args(["-c", &script])
                .env("W", writer.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let files = memory_files(&repo);
    assert_eq!(files.len(), 1);
    let text = String::from_utf8(files[0].1.clone()).unwrap();
    assert!(text.ends_with('\n'));
    let mut seen = HashSet::new();
    for line in text.lines() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("torn line ({e}): {line}"));
        assert!(seen.insert(value["content"].as_str().unwrap().to_owned()));
    }
    assert_eq!(seen.len(), WRITERS * STORES);
}
