//! The keyword index (`$GOLDFISH_HOME/index.text/`, tantivy) when its files
//! are damaged or its folder cannot be written: recall answers as an intact
//! index would (from a copy in memory), `doctor` names the damage, the next
//! sync writes it again, and nothing waits.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::Value;

use crate::common::{TestEnv, render};

/// Questions whose words are in many memories (postings lists long enough
/// to have skip blocks) and in few.
const QUERIES: [&str; 5] = [
    "pool size",
    "deadlock in the wal",
    "cache eviction lru",
    "git hook branch",
    "schema journal segment",
];

/// A repository whose log holds `n` memories of a small vocabulary (one
/// day file written at once, then synced).
fn repo_with_memories(env: &TestEnv, n: u64) -> PathBuf {
    const WORDS: [&str; 32] = [
        "pool", "size", "eight", "wal", "deadlock", "cache", "eviction", "lru", "thread", "lock",
        "index", "query", "sqlite", "tantivy", "merge", "driver", "hook", "git", "branch",
        "commit", "memory", "store", "recall", "vector", "embed", "model", "token", "budget",
        "digest", "config", "schema", "journal",
    ];
    let repo = env.repo("r", "Ada");
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut lines = String::new();
    for i in 0..n {
        let words = 5 + next() % 20;
        let content: Vec<&str> = (0..words)
            .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
            .collect();
        lines.push_str(&format!(
            r#"{{"id":"01KAJ{i:021}","timestamp":"2026-11-20T10:00:00.000Z","type":"insight","content":"{} {i}"}}"#,
            content.join(" ")
        ));
        lines.push('\n');
    }
    fs::write(repo.join(".goldfish/memories/2026-11-20.jsonl"), lines).unwrap();
    env.ok(&repo, &["sync"]);
    repo
}

fn text_dir(env: &TestEnv) -> PathBuf {
    env.path().join("home/.goldfish/index.text")
}

/// The answer of `recall --mode keyword` to each of [`QUERIES`] (ids and
/// scores), asserting each exits 0 and nothing panicked.
fn answers(env: &TestEnv, repo: &Path) -> Vec<Vec<(String, String)>> {
    QUERIES
        .iter()
        .map(|query| {
            let output = env.goldfish(
                repo,
                &["recall", "--mode", "keyword", "--json", "-n", "10", query],
            );
            assert_eq!(
                output.status.code(),
                Some(0),
                "{query}: {}",
                render(&output)
            );
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!stderr.contains("panicked"), "{query}: {stderr}");
            crate::common::json_lines(&String::from_utf8(output.stdout).unwrap())
                .iter()
                .map(|m| (m["id"].as_str().unwrap().to_owned(), m["score"].to_string()))
                .collect()
        })
        .collect()
}

/// The keyword-index finding of `goldfish doctor --json`.
fn doctor_keyword_index(env: &TestEnv, repo: &Path) -> Value {
    let output = env.goldfish(repo, &["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}", render(&output)));
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "keyword-index")
        .unwrap_or_else(|| panic!("no keyword-index in {report}"))
        .clone()
}

/// The files of the keyword index's segments whose name ends with `.kind`.
fn files_of_kind(dir: &Path, kind: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .ends_with(&format!(".{kind}"))
        })
        .collect();
    files.sort();
    files
}

/// Writes pseudo-random bytes over the middle half of the body of `file`
/// (before tantivy's footer: its JSON, its length, a magic number; the
/// footer holds the body's checksum), in place as a stray write would:
/// damage that tantivy's reader does not notice by itself.
fn scribble(file: &Path, seed: u64) {
    use std::io::Write;
    let mut bytes = fs::read(file).unwrap();
    let len = bytes.len();
    let footer = u32::from_le_bytes(bytes[len - 8..len - 4].try_into().unwrap()) as usize;
    let body = len - 8 - footer;
    let before = bytes.clone();
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for byte in &mut bytes[body / 4..body * 3 / 4] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *byte = state as u8;
    }
    assert_ne!(bytes, before, "{} changed", file.display());
    let mut handle = fs::OpenOptions::new().write(true).open(file).unwrap();
    handle.write_all(&bytes).unwrap();
}

/// Makes the keyword index's writer lock unusable: a folder where the lock
/// file goes (the writer cannot open it, whoever runs the test).
fn block_the_writer(dir: &Path) {
    let lock = dir.join(".tantivy-writer.lock");
    let _ = fs::remove_file(&lock);
    fs::create_dir(&lock).unwrap();
}

fn unblock_the_writer(dir: &Path) {
    fs::remove_dir(dir.join(".tantivy-writer.lock")).unwrap();
}

/// Every file of the folder, with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .map(|path| {
            let bytes = fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// MEDIUM 2: random bytes in a file of the keyword index made `recall --mode
/// keyword` panic (`.idx`: exit 101) or silently change its ranking
/// (`.fast`), while `doctor` said "up to date" and `sync` left it as it was.
/// Now, for every kind of segment file: recall answers exactly as with an
/// intact index (from a copy of it in memory), even when nothing can write
/// the index again; `doctor` names the damaged file and changes nothing;
/// the next sync writes the index again and recall uses it.
#[test]
fn medium_2_a_corrupt_keyword_index_never_crashes_or_changes_recall() {
    let env = TestEnv::new();
    let repo = repo_with_memories(&env, 600);
    // A memory gone from the log (as a checkout of an older commit does
    // it): its row leaves a segment, which then has a deletion bitset
    // (`.del`).
    let day = repo.join(".goldfish/memories/2026-11-20.jsonl");
    let kept: Vec<String> = fs::read_to_string(&day)
        .unwrap()
        .lines()
        .filter(|line| !line.contains("01KAJ000000000000000000007"))
        .map(|line| format!("{line}\n"))
        .collect();
    fs::write(&day, kept.concat()).unwrap();
    env.ok(&repo, &["sync"]);
    let dir = text_dir(&env);
    let intact = answers(&env, &repo);
    assert!(intact.iter().all(|a| !a.is_empty()), "{intact:?}");
    assert_eq!(doctor_keyword_index(&env, &repo)["status"], "ok");
    // The same answers when the keyword index is gone and cannot be
    // written: a copy in memory's.
    let pristine = env.path().join("pristine.text");
    fs::rename(&dir, &pristine).unwrap();
    fs::create_dir(&dir).unwrap();
    block_the_writer(&dir);
    assert_eq!(
        answers(&env, &repo),
        intact,
        "a copy in memory ranks as the keyword index"
    );
    fs::remove_dir_all(&dir).unwrap();

    for kind in ["idx", "term", "pos", "store", "fast", "fieldnorm", "del"] {
        copy_dir(&pristine, &dir);
        let files = files_of_kind(&dir, kind);
        assert!(!files.is_empty(), "no .{kind} file in {}", dir.display());
        for (n, file) in files.iter().enumerate() {
            scribble(file, n as u64 + 7);
        }
        // Doctor names a damaged file and only reads.
        let before = snapshot(&dir);
        let found = doctor_keyword_index(&env, &repo);
        assert_eq!(found["status"], "warning", ".{kind}: {found}");
        let message = found["message"].as_str().unwrap();
        assert!(
            files
                .iter()
                .any(|file| message.contains(&file.display().to_string())),
            ".{kind}: {found}"
        );
        assert_eq!(found["fix"], "goldfish sync", ".{kind}: {found}");
        assert!(snapshot(&dir) == before, ".{kind}: doctor wrote nothing");

        // No sync can write it: recall falls back, with the same answers.
        block_the_writer(&dir);
        assert_eq!(answers(&env, &repo), intact, ".{kind}, writer blocked");
        unblock_the_writer(&dir);

        // The next sync writes it again; doctor agrees; recall uses it.
        env.ok(&repo, &["sync"]);
        let found = doctor_keyword_index(&env, &repo);
        assert_eq!(found["status"], "ok", ".{kind}: {found}");
        for file in &files {
            assert!(!file.exists(), ".{kind}: {} is gone", file.display());
        }
        assert_eq!(answers(&env, &repo), intact, ".{kind}, written again");
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// MEDIUM 2, through MCP: a recall over a damaged keyword index answered
/// -32603 "recall panicked"; it now answers as with an intact one.
#[test]
fn medium_2_mcp_recall_over_a_corrupt_keyword_index_answers() {
    let env = TestEnv::new();
    let repo = repo_with_memories(&env, 600);
    let dir = text_dir(&env);
    let recall = |env: &TestEnv| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let mut command = env.command(env!("CARGO_BIN_EXE_goldfish"), &repo);
                command.arg("mcp");
                let (transport, _) =
                    TokioChildProcess::builder(tokio::process::Command::from(command))
                        .stderr(Stdio::null())
                        .spawn()
                        .unwrap();
                let client = ().serve(transport).await.expect("initialize");
                let mut texts = Vec::new();
                for query in QUERIES {
                    let serde_json::Value::Object(arguments) =
                        serde_json::json!({"query": query, "mode": "keyword"})
                    else {
                        unreachable!()
                    };
                    let result = client
                        .call_tool(CallToolRequestParams::new("recall").with_arguments(arguments))
                        .await
                        .unwrap_or_else(|err| panic!("{query}: {err}"));
                    assert_eq!(result.is_error, Some(false), "{query}: {result:?}");
                    texts.push(
                        result
                            .content
                            .iter()
                            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    );
                }
                client.cancel().await.unwrap();
                texts
            })
    };
    let intact = recall(&env);
    for (n, file) in files_of_kind(&dir, "idx").iter().enumerate() {
        scribble(file, n as u64 + 3);
    }
    block_the_writer(&dir);
    assert_eq!(recall(&env), intact);
}

/// MEDIUM 3: with `index.text/` unwritable, every store, recall and git
/// command with a hook waited 30 s (the catch-up retried its writer's lock on any error, not only
/// while another process held it). Now the catch-up gives up at once: the
/// command finishes, a warning names the keyword index's folder, and recall
/// answers from a copy of the keyword index in memory. As root, whom permissions do not
/// stop, a folder where the lock file goes plays the unwritable folder.
#[test]
fn medium_3_an_unwritable_keyword_index_is_named_at_once() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "The pool holds eight connections"]);
    // A read writes the keyword index (a store leaves it to the next one).
    env.ok(&repo, &["recall", "pool"]);
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

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}
