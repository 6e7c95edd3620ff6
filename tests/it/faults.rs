//! The fault and bad-input suite: input goldfish cannot read, and what it
//! does then. Every test checks that nothing stored is lost and that what
//! went wrong is named (file and line, or path).
//!
//! Covered elsewhere, not repeated: garbage and CRLF lines through a real
//! merge and a missing base (driver.rs).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use crate::common::TestEnv;

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

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whether this process runs as root, for whom permissions deny nothing.
fn running_as_root() -> bool {
    let probe = tempfile::NamedTempFile::new().unwrap();
    probe.as_file().metadata().unwrap().uid() == 0
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
