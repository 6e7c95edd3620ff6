//! The keyword index (`$GOLDFISH_HOME/index.text/`, tantivy) when its
//! folder cannot be written: nothing waits, and recall answers from SQLite's
//! full-text search.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{TestEnv, render};

fn text_dir(env: &TestEnv) -> PathBuf {
    env.path().join("home/.goldfish/index.text")
}

/// Makes the keyword index's writer lock unusable: a folder where the lock
/// file goes (the writer cannot open it, whoever runs the test).
fn block_the_writer(dir: &Path) {
    let lock = dir.join(".tantivy-writer.lock");
    let _ = fs::remove_file(&lock);
    fs::create_dir(&lock).unwrap();
}

/// MEDIUM 3: with `index.text/` unwritable, every store, recall and git
/// command with a hook waited 30 s (the catch-up retried its writer's lock on any error, not only
/// while another process held it). Now the catch-up gives up at once: the
/// command finishes, a warning names the keyword index's folder, and recall
/// answers from SQLite's full-text search. As root, whom permissions do not
/// stop, a folder where the lock file goes plays the unwritable folder.
#[test]
fn medium_3_an_unwritable_keyword_index_is_named_at_once() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "The pool holds eight connections"]);
    let dir = text_dir(&env);
    let as_root = {
        use std::os::unix::fs::MetadataExt;
        let probe = tempfile::NamedTempFile::new().unwrap();
        probe.as_file().metadata().unwrap().uid() == 0
    };
    if as_root {
        block_the_writer(&dir);
    } else {
        use std::os::unix::fs::PermissionsExt;
        fs::remove_file(dir.join(".tantivy-writer.lock")).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    }
    // Generous: the catch-up used to wait 30 s; a debug build on a busy
    // machine takes well under 10 s for a store.
    let started = Instant::now();
    let stored = env.goldfish(&repo, &["store", "Connections time out after 30 s"]);
    let took = started.elapsed();
    assert_eq!(stored.status.code(), Some(0), "{}", render(&stored));
    assert!(took < Duration::from_secs(10), "store took {took:?}");
    let started = Instant::now();
    let recalled = env.goldfish(&repo, &["recall", "--mode", "keyword", "connections"]);
    let took = started.elapsed();
    assert_eq!(recalled.status.code(), Some(0), "{}", render(&recalled));
    assert!(took < Duration::from_secs(10), "recall took {took:?}");
    let stderr = String::from_utf8_lossy(&recalled.stderr);
    assert!(
        stderr.contains(&format!("keyword index {}", dir.display())),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&recalled.stdout);
    assert!(
        stdout.contains("time out after 30 s") && stdout.contains("holds eight"),
        "{stdout}"
    );
    // The post-checkout hook syncs: git no longer waits for it.
    let started = Instant::now();
    env.git(&repo, &["checkout", "-q", "-b", "topic"]);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "checkout took {took:?}");
    if !as_root {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    }
}
