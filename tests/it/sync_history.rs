//! Incremental sync gives the index a rebuild gives: for generated histories
//! of appends, edits in place, ids copied into other files, deleted lines,
//! tombstones, commits, branches, checkouts of older commits and uncommitted
//! work, the index after each sync equals a fresh sync's in another home.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::common::TestEnv;

/// What the index holds of one workspace, as recall and sync can see it:
/// memories with their file and line, tombstones, records waiting in other
/// files, the commit that introduced each memory, the files' blob ids, the
/// counts, and the embedding queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexState {
    /// id → (file, line, record hash, content).
    pub memories: BTreeMap<String, (String, i64, String, String)>,
    /// (id, forgets, file).
    pub tombstones: Vec<(String, String, String)>,
    /// (id, file, line, record).
    pub duplicates: Vec<(String, String, i64, String)>,
    /// id → (commit, author), for indexed memories.
    pub provenance: BTreeMap<String, (String, String)>,
    /// id → the stored trust verdict (reasons to quarantine, released).
    pub verdicts: BTreeMap<String, (String, i64)>,
    /// name → blob id.
    pub files: BTreeMap<String, String>,
    /// id → the stored staleness (reason, file, commit, outside the
    /// policy, moved paths).
    pub stale: BTreeMap<String, (String, String, String, i64, String)>,
    /// (id, n) → the citation's verdict, its lines at HEAD and the commit
    /// that changed it, as the last check judged them.
    pub cites: BTreeMap<(String, i64), (String, i64, i64, String)>,
    /// (live memories, memory rows, head).
    pub counts: (i64, i64, Option<String>),
    /// The whole home's embedding queue.
    pub queued: Vec<String>,
}

fn open(home: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(
        home.join("index.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap()
}

fn rows<T: rusqlite::types::FromSql>(
    conn: &rusqlite::Connection,
    sql: &str,
    id: i64,
) -> Vec<Vec<T>> {
    let mut statement = conn.prepare(sql).unwrap();
    let n = statement.column_count();
    statement
        .query_map([id], |row| (0..n).map(|i| row.get(i)).collect())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The first column of every row `sql` gives, on the index in `home`.
fn strings(home: &Path, sql: &str) -> Vec<String> {
    let conn = open(home);
    let mut statement = conn.prepare(sql).unwrap();
    statement
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The content hashes in the embedding queue of the index in `home`.
pub fn queued_hashes(home: &Path) -> Vec<String> {
    strings(
        home,
        "SELECT content_hash FROM embed_queue ORDER BY content_hash",
    )
}

/// The distinct content hashes of every memory row of the index in `home`.
pub fn memory_hashes(home: &Path) -> Vec<String> {
    strings(
        home,
        "SELECT DISTINCT content_hash FROM memories ORDER BY content_hash",
    )
}

/// Turns the index at `path` into what goldfish wrote before schemas 2 and 3 (its
/// queue triggers, no `duplicates`, no `files.racy`, no `memories.flags`, no
/// provenance identities or trust policy of schema 7, no line hashes or
/// policy history of schema 15, no `memories.session` of schema 19), then
/// runs `extra`.
pub fn downgrade_to_schema_1(path: &Path, extra: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(&format!(
        "DROP TABLE branches;
         DROP TRIGGER memory_files_insert;
         DROP TRIGGER memory_files_update;
         DROP TRIGGER memory_files_delete;
         DROP TABLE memory_files;
         DROP TABLE path_changes;
         DROP TABLE reverts;
         DROP TRIGGER memories_text_insert;
         DROP TRIGGER memories_text_update;
         DROP TRIGGER memories_text_delete;
         DROP TABLE text_journal;
         DROP INDEX memories_stale;
         ALTER TABLE memories DROP COLUMN stale;
         ALTER TABLE memories DROP COLUMN stale_file;
         ALTER TABLE memories DROP COLUMN stale_commit;
         ALTER TABLE memories DROP COLUMN stale_outside;
         ALTER TABLE memories DROP COLUMN moved;
         DROP TABLE duplicates;
         ALTER TABLE files DROP COLUMN racy;
         ALTER TABLE memories DROP COLUMN flags;
         ALTER TABLE memories DROP COLUMN imported;
         ALTER TABLE memories DROP COLUMN quarantine;
         ALTER TABLE memories DROP COLUMN released;
         DROP INDEX memories_by_supersedes;
         ALTER TABLE memories DROP COLUMN supersedes;
         ALTER TABLE memories DROP COLUMN session;
         DROP TRIGGER memory_cites_insert;
         DROP TRIGGER memory_cites_update;
         DROP TRIGGER memory_cites_delete;
         DROP TABLE memory_cites;
         ALTER TABLE memories DROP COLUMN cites;
         DROP TABLE provenance;
         CREATE TABLE provenance (
             workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
             id           TEXT NOT NULL,
             commit_id    TEXT NOT NULL,
             author       TEXT NOT NULL,
             date         TEXT NOT NULL,
             PRIMARY KEY (workspace_id, id)
         ) WITHOUT ROWID;
         ALTER TABLE workspaces DROP COLUMN history_trust;
         ALTER TABLE workspaces DROP COLUMN folder_scan;
         ALTER TABLE workspaces DROP COLUMN shallow_boundary;
         ALTER TABLE workspaces DROP COLUMN trust_policy;
         ALTER TABLE workspaces DROP COLUMN trust_signed;
         DROP TABLE trust_authors;
         DROP TABLE releases;
         DROP TABLE policy_changes;
         DROP TRIGGER memories_queue_insert;
         DROP TRIGGER memories_queue_update;
         DROP TRIGGER memories_queue_delete;
         CREATE TRIGGER memories_queue_insert AFTER INSERT ON memories BEGIN
             INSERT OR IGNORE INTO embed_queue (content_hash) VALUES (new.content_hash);
         END;
         CREATE TRIGGER memories_queue_update AFTER UPDATE OF content_hash ON memories BEGIN
             INSERT OR IGNORE INTO embed_queue (content_hash) VALUES (new.content_hash);
         END;
         {extra}
         PRAGMA user_version = 1;"
    ))
    .unwrap();
}

/// What the index in `home` holds of the workspace at `root`.
pub fn index_state(home: &Path, root: &Path) -> IndexState {
    let conn = open(home);
    let (id, live, rows_count, head): (i64, i64, i64, Option<String>) = conn
        .query_row(
            "SELECT id, live_memories, memory_rows, head_commit FROM workspaces WHERE root = ?1",
            [root.to_string_lossy()],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .unwrap();
    let text = |row: &Vec<rusqlite::types::Value>, i: usize| match &row[i] {
        rusqlite::types::Value::Text(text) => text.clone(),
        other => panic!("not text: {other:?}"),
    };
    let int = |row: &Vec<rusqlite::types::Value>, i: usize| match &row[i] {
        rusqlite::types::Value::Integer(n) => *n,
        other => panic!("not an integer: {other:?}"),
    };
    let memories = rows(
        &conn,
        "SELECT id, file, line, record_hash, content FROM memories WHERE workspace_id = ?1",
        id,
    )
    .iter()
    .map(|r| (text(r, 0), (text(r, 1), int(r, 2), text(r, 3), text(r, 4))))
    .collect();
    let tombstones = rows(
        &conn,
        "SELECT id, forgets, file FROM tombstones WHERE workspace_id = ?1 ORDER BY id, file",
        id,
    )
    .iter()
    .map(|r| (text(r, 0), text(r, 1), text(r, 2)))
    .collect();
    let duplicates = rows(
        &conn,
        "SELECT id, file, line, record FROM duplicates WHERE workspace_id = ?1 ORDER BY id, file",
        id,
    )
    .iter()
    .map(|r| (text(r, 0), text(r, 1), int(r, 2), text(r, 3)))
    .collect();
    let provenance = rows(
        &conn,
        "SELECT p.id, p.commit_id, p.author FROM provenance p
          WHERE p.workspace_id = ?1
            AND EXISTS (SELECT 1 FROM memories m WHERE m.workspace_id = p.workspace_id AND m.id = p.id)",
        id,
    )
    .iter()
    .map(|r| (text(r, 0), (text(r, 1), text(r, 2))))
    .collect();
    let verdicts = rows(
        &conn,
        "SELECT id, quarantine, released FROM memories WHERE workspace_id = ?1",
        id,
    )
    .iter()
    .map(|r| (text(r, 0), (text(r, 1), int(r, 2))))
    .collect();
    let files = rows(
        &conn,
        "SELECT name, blob_id FROM files WHERE workspace_id = ?1",
        id,
    )
    .iter()
    .map(|r| (text(r, 0), text(r, 1)))
    .collect();
    let stale = rows(
        &conn,
        "SELECT id, stale, coalesce(stale_file, ''), coalesce(stale_commit, ''), stale_outside, moved
         FROM memories WHERE workspace_id = ?1",
        id,
    )
    .iter()
    .map(|r| {
        // A rebuild sees the branches that exist: one deleted before it is
        // not known to have existed (the one verdict it may not give).
        let deleted = text(r, 1) == "branch-deleted";
        let (stale, commit) = if deleted {
            (String::new(), String::new())
        } else {
            (text(r, 1), text(r, 3))
        };
        (text(r, 0), (stale, text(r, 2), commit, int(r, 4), text(r, 5)))
    })
    .collect();
    let cites = rows(
        &conn,
        "SELECT id, n, coalesce(verdict, ''), coalesce(now_start, 0), coalesce(now_end, 0),
                coalesce(commit_id, '')
         FROM memory_cites WHERE workspace_id = ?1",
        id,
    )
    .iter()
    .map(|r| {
        (
            (text(r, 0), int(r, 1)),
            (text(r, 2), int(r, 3), int(r, 4), text(r, 5)),
        )
    })
    .collect();
    IndexState {
        memories,
        tombstones,
        duplicates,
        provenance,
        verdicts,
        files,
        stale,
        cites,
        counts: (live, rows_count, head),
        queued: queued_hashes(home),
    }
}

/// One step of a generated history.
#[derive(Debug, Clone)]
enum Op {
    /// A new memory at the end of day file `day`.
    Append {
        day: usize,
    },
    /// The content of the `pick`-th memory line changed in place.
    Edit {
        pick: usize,
    },
    /// The `pick`-th memory line copied, content changed, to day file `day`.
    Copy {
        pick: usize,
        day: usize,
    },
    /// The `pick`-th line removed.
    Delete {
        pick: usize,
    },
    /// A tombstone for the `pick`-th memory line's id, in day file `day`.
    Forget {
        pick: usize,
        day: usize,
    },
    Commit,
    /// `git checkout -b bN`, or a checkout of it if it exists.
    Branch {
        n: usize,
    },
    /// `git branch -D bN` (nothing when it is checked out or absent).
    DropBranch {
        n: usize,
    },
    /// `git checkout main`.
    Main,
    /// `git checkout HEAD~back` (detached).
    Older {
        back: usize,
    },
    /// Code file `src/fK.rs` created when absent, else deleted (the
    /// memories name these files: staleness).
    Code {
        k: usize,
    },
    /// `git merge bN` into what is checked out (the memory files through
    /// the merge driver); a merge git refuses or that conflicts is aborted.
    Merge {
        n: usize,
    },
    /// `git merge main` into what is checked out (main as a second parent:
    /// the first-parent line is the branch's).
    MergeMain,
    /// Code file `src/fK.rs`, when there, edited: a line put above its
    /// functions (they move), the line `b()` returns changed, or a
    /// function added at its end.
    Touch {
        k: usize,
        how: usize,
    },
    /// `src/fA.rs` renamed to `src/fB.rs` when one is and the other is not.
    Rename {
        a: usize,
        b: usize,
    },
    /// `goldfish sync`, then the comparison with a fresh sync.
    Sync,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize).prop_map(|day| Op::Append { day }),
        2 => any::<usize>().prop_map(|pick| Op::Edit { pick }),
        2 => (any::<usize>(), 0..3usize).prop_map(|(pick, day)| Op::Copy { pick, day }),
        2 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        1 => (any::<usize>(), 0..3usize).prop_map(|(pick, day)| Op::Forget { pick, day }),
        3 => Just(Op::Commit),
        1 => (0..2usize).prop_map(|n| Op::Branch { n }),
        1 => (0..2usize).prop_map(|n| Op::DropBranch { n }),
        1 => Just(Op::Main),
        1 => (1..3usize).prop_map(|back| Op::Older { back }),
        2 => (0..3usize).prop_map(|k| Op::Code { k }),
        2 => (0..3usize, 0..3usize).prop_map(|(k, how)| Op::Touch { k, how }),
        1 => (0..3usize, 0..3usize).prop_map(|(a, b)| Op::Rename { a, b }),
        2 => (0..2usize).prop_map(|n| Op::Merge { n }),
        1 => Just(Op::MergeMain),
        3 => Just(Op::Sync),
    ]
}

fn day_file(repo: &Path, day: usize) -> PathBuf {
    repo.join(format!(".goldfish/memories/2026-11-0{}.jsonl", day + 1))
}

/// Every line of the memory files: (file, index in the file, line).
fn lines(repo: &Path) -> Vec<(PathBuf, usize, String)> {
    (0..3)
        .map(|day| day_file(repo, day))
        .filter(|path| path.is_file())
        .flat_map(|path| {
            fs::read_to_string(&path)
                .unwrap()
                .lines()
                .enumerate()
                .map(|(i, line)| (path.clone(), i, line.to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn rewrite(path: &Path, f: impl FnOnce(&mut Vec<String>)) {
    let mut lines: Vec<String> = fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    f(&mut lines);
    let mut text = lines.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn append(path: &Path, line: &str) {
    rewrite(path, |lines| lines.push(line.to_owned()));
}

/// Memory `n`'s line; one of four (2, 6, 10, …) cites the lines of `b()`
/// in its code file, anchored in the file as [`Op::Code`] writes it.
fn memory(n: u64, day: usize, content: &str) -> String {
    let k = (n % 3) as usize;
    let cites = if n % 4 == 2 {
        use goldfish::domain::citation;
        let text = code_text(k, 0);
        let span = citation::Span {
            path: format!("src/f{k}.rs"),
            start: 5,
            end: 7,
        };
        let blob = goldfish::adapters::git::blob_id(text.as_bytes()).to_string();
        let anchor = citation::anchor(&span, &text, blob).unwrap();
        format!(r#","cites":{}"#, citation::to_record(&[anchor]))
    } else {
        String::new()
    };
    format!(
        r#"{{"id":"01KAJ{n:021}","timestamp":"2026-11-0{}T10:00:00.000Z","type":"insight","content":"{content}","branch":"b{}","files":["src/f{k}.rs"]{cites}}}"#,
        day + 1,
        n % 2,
    )
}

/// Code file `k` as [`Op::Code`] writes it at step `n`: two functions,
/// `b()` at lines 5-7.
fn code_text(k: usize, n: u64) -> String {
    format!("// {k} {n}\nfn a() {{\n    1\n}}\nfn b() {{\n    2\n}}\n")
}

fn code_file(repo: &Path, k: usize) -> PathBuf {
    repo.join(format!("src/f{k}.rs"))
}

/// A history played on a real repository, with the index compared to a
/// fresh sync's after every sync.
struct Play {
    env: TestEnv,
    repo: PathBuf,
    fresh: PathBuf,
    next: u64,
}

/// `ops` played in a new repository, each step checked, then the index
/// compared with a rebuild's; the play, for what a test checks after.
fn play(ops: &[Op]) -> Result<Play, TestCaseError> {
    let mut play = Play::new();
    for op in ops {
        play.step(op)?;
    }
    play.compare()?;
    Ok(play)
}

impl Play {
    fn new() -> Play {
        let env = TestEnv::new();
        let repo = env.repo("r", "Ada");
        env.commit_all(&repo, "set up goldfish");
        let fresh = env.path().join("fresh");
        Play {
            env,
            repo,
            fresh,
            next: 0,
        }
    }

    fn memory_lines(&self) -> Vec<(PathBuf, usize, String)> {
        lines(&self.repo)
            .into_iter()
            .filter(|(_, _, line)| line.contains(r#""type":"insight""#))
            .collect()
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        self.next += 1;
        let n = self.next;
        match op {
            Op::Append { day } => append(
                &day_file(&self.repo, *day),
                &memory(n, *day, &format!("memory {n} about the cache")),
            ),
            Op::Edit { pick } => {
                let found = self.memory_lines();
                if let Some((path, i, line)) = found.get(pick % found.len().max(1)) {
                    let edited =
                        line.replace(r#"","content":""#, &format!(r#"","content":"edit {n} "#));
                    rewrite(path, |lines| lines[*i] = edited);
                }
            }
            Op::Copy { pick, day } => {
                let found = self.memory_lines();
                if let Some((_, _, line)) = found.get(pick % found.len().max(1)) {
                    let copied =
                        line.replace(r#"","content":""#, &format!(r#"","content":"copy {n} "#));
                    append(&day_file(&self.repo, *day), &copied);
                }
            }
            Op::Delete { pick } => {
                let found = lines(&self.repo);
                if let Some((path, i, _)) = found.get(pick % found.len().max(1)) {
                    rewrite(path, |lines| {
                        lines.remove(*i);
                    });
                }
            }
            Op::Forget { pick, day } => {
                let found = self.memory_lines();
                if let Some((_, _, line)) = found.get(pick % found.len().max(1)) {
                    let id = &line[r#"{"id":""#.len()..r#"{"id":""#.len() + 26];
                    append(
                        &day_file(&self.repo, *day),
                        &format!(
                            r#"{{"id":"01KAK{n:021}","timestamp":"2026-11-0{}T11:00:00.000Z","type":"tombstone","forgets":"{id}"}}"#,
                            day + 1
                        ),
                    );
                }
            }
            Op::Commit => {
                self.env.git(&self.repo, &["add", "-A"]);
                // Nothing to commit is not a failure of the history.
                self.try_git(&["commit", "-q", "-m", &format!("step {n}")]);
            }
            Op::Branch { n: branch } => {
                let name = format!("b{branch}");
                if !self.try_git(&["checkout", "-q", &name]) {
                    self.try_git(&["checkout", "-q", "-b", &name]);
                }
            }
            // Nothing when it is checked out or absent.
            Op::DropBranch { n: branch } => {
                self.try_git(&["branch", "-q", "-D", &format!("b{branch}")]);
            }
            Op::Main => {
                self.try_git(&["checkout", "-q", "main"]);
            }
            Op::Older { back } => {
                self.try_git(&["checkout", "-q", &format!("HEAD~{back}")]);
            }
            Op::Code { k } => {
                let path = code_file(&self.repo, *k);
                if path.exists() {
                    fs::remove_file(path).unwrap();
                } else {
                    fs::create_dir_all(path.parent().unwrap()).unwrap();
                    fs::write(path, code_text(*k, n)).unwrap();
                }
            }
            Op::Touch { k, how } => {
                let path = code_file(&self.repo, *k);
                if let Ok(text) = fs::read_to_string(&path) {
                    let touched = match how {
                        0 => text.replacen('\n', &format!("\n// moved {n}\n"), 1),
                        1 => text.replacen("    2\n", &format!("    2 + {n}\n"), 1),
                        _ => format!("{text}fn c{n}() {{}}\n"),
                    };
                    fs::write(path, touched).unwrap();
                }
            }
            Op::Rename { a, b } => {
                let (from, to) = (code_file(&self.repo, *a), code_file(&self.repo, *b));
                if from.exists() && !to.exists() {
                    fs::rename(from, to).unwrap();
                }
            }
            Op::Merge { n: branch } => self.merge(&format!("b{branch}"), n),
            Op::MergeMain => self.merge("main", n),
            Op::Sync => self.compare()?,
        }
        Ok(())
    }

    /// `git checkout` (the hooks sync); refused checkouts (local changes in
    /// the way, no such commit) leave everything as it was.
    /// Runs git in the repository; whether it succeeded (a step git
    /// refuses, such as a checkout over conflicting changes, is part of
    /// the history).
    fn try_git(&self, args: &[&str]) -> bool {
        self.env
            .command("git", &self.repo)
            .args(args)
            .output()
            .unwrap()
            .status
            .success()
    }

    /// `git merge --no-ff` of `branch`; aborted when git stops (a code
    /// conflict, local changes in the way).
    fn merge(&self, branch: &str, n: u64) {
        let message = format!("merge {n}");
        if !self.try_git(&["merge", "-q", "--no-ff", "-m", &message, branch]) {
            self.try_git(&["merge", "--abort"]);
        }
    }

    /// Syncs, then compares the index with a fresh sync in another home.
    fn compare(&self) -> Result<(), TestCaseError> {
        let synced = self.env.goldfish(&self.repo, &["sync", "--quiet"]);
        prop_assert!(
            synced.status.success(),
            "sync failed: {}",
            String::from_utf8_lossy(&synced.stderr)
        );
        let _ = fs::remove_dir_all(&self.fresh);
        let rebuilt = self
            .env
            .command(env!("CARGO_BIN_EXE_goldfish"), &self.repo)
            .env("GOLDFISH_HOME", &self.fresh)
            .args(["sync", "--quiet"])
            .output()
            .unwrap();
        prop_assert!(rebuilt.status.success());
        let home = self.env.path().join("home/.goldfish");
        let root = fs::canonicalize(&self.repo).unwrap();
        let incremental = index_state(&home, &root);
        let fresh = index_state(&self.fresh, &root);
        prop_assert_eq!(incremental, fresh);
        Ok(())
    }
}

#[test]
fn incremental_sync_equals_a_rebuild_for_any_history() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40)
        .min(200);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let history = proptest::collection::vec(op(), 1..14);
    runner
        .run(&history, |ops| play(&ops).map(drop))
        .unwrap_or_else(|err| panic!("{err}"));
}

/// A history the property found: HEAD moved back to before the commit that
/// introduced a memory still in the work tree (as a copy in another file).
/// A rebuild walks HEAD's history only, so the incremental sync must forget
/// what commits outside it introduced.
#[test]
fn a_checkout_of_an_older_commit_forgets_provenance_outside_its_history() {
    play(&[
        Op::Append { day: 1 },
        Op::Commit,
        Op::Copy { pick: 0, day: 0 },
        Op::Branch { n: 0 },
        Op::Append { day: 2 },
        Op::Older { back: 1 },
    ])
    .unwrap();
}

/// A history the property found: a line committed first took its id back
/// from an uncommitted copy in a file that sorts first, then was edited.
/// Edited, it is committed no longer, so the id goes back to the first
/// file by name, as a rebuild gives it (and the retake decides again).
#[test]
fn an_id_taken_back_by_a_committed_line_returns_when_that_line_is_edited() {
    play(&[
        Op::Append { day: 1 },
        Op::Copy { pick: 0, day: 0 },
        Op::Commit,
        Op::Delete { pick: 0 },
        Op::Copy { pick: 0, day: 0 },
        Op::Sync,
        Op::Edit { pick: 1 },
    ])
    .unwrap();
}

/// A history the property found: an id copied into a second file, then
/// edited, so one sync writes the same row twice: the trigger that notes a
/// memory's verdict as due failed on the second note (an upsert's conflict
/// policy overrides the trigger's `OR IGNORE`).
#[test]
fn a_row_written_twice_in_one_sync_is_weighed_once() {
    play(&[
        Op::Append { day: 0 },
        Op::Copy { pick: 0, day: 1 },
        Op::Branch { n: 0 },
        Op::Delete {
            pick: 978_694_294_407_825_902,
        },
        Op::Edit { pick: 0 },
    ])
    .unwrap();
}

/// The history of issue 6, written out: the same id in two files, the
/// second edited; the line removed from the first and committed.
#[test]
fn an_id_left_in_a_later_file_comes_back_when_the_first_loses_it() {
    let mut play = Play::new();
    let first = day_file(&play.repo, 0);
    let second = day_file(&play.repo, 1);
    append(&first, &memory(1, 0, "pool size is 20"));
    append(&first, &memory(2, 0, "another memory"));
    play.step(&Op::Commit).unwrap();
    play.compare().unwrap();
    append(
        &second,
        &memory(1, 0, "pool size is 40 since the load test"),
    );
    play.step(&Op::Commit).unwrap();
    let report = play.env.ok(&play.repo, &["sync", "--json"]);
    assert!(
        report.contains("already indexed from another file"),
        "{report}"
    );
    play.compare().unwrap();
    rewrite(&first, |lines| {
        lines.remove(0);
    });
    play.step(&Op::Commit).unwrap();
    play.compare().unwrap();
    let recalled = play.env.ok(&play.repo, &["recall", "pool", "--json"]);
    assert!(recalled.contains("pool size is 40"), "{recalled}");
}

#[test]
fn an_index_of_schema_1_is_upgraded_to_what_a_rebuild_gives() {
    let mut play = Play::new();
    let first = day_file(&play.repo, 0);
    let second = day_file(&play.repo, 1);
    append(&second, &memory(1, 1, "pool size is 20"));
    play.step(&Op::Commit).unwrap();
    play.env.ok(&play.repo, &["sync"]);
    // Arrives in a file before the one indexed: schema 1 kept the second.
    append(&first, &memory(1, 0, "pool size is 40 since the load test"));
    play.step(&Op::Commit).unwrap();
    play.env.ok(&play.repo, &["sync"]);
    let index = play.env.path().join("home/.goldfish/index.db");
    downgrade_to_schema_1(
        &index,
        "UPDATE memories SET file = '2026-11-02.jsonl', line = 1, content = 'pool size is 20';",
    );
    play.compare().unwrap();
}

/// Staleness through a history: a memory's file deleted, HEAD moved back
/// before the deletion and forward again, the file renamed and re-created;
/// after every sync the stale columns equal a rebuild's, and they were
/// set along the way.
#[test]
fn staleness_of_incremental_syncs_equals_a_rebuilds() {
    let mut play = Play::new();
    let home = play.env.path().join("home/.goldfish");
    let root = fs::canonicalize(&play.repo).unwrap();
    let stale_of = || -> Vec<(String, String, String)> {
        index_state(&home, &root)
            .stale
            .into_values()
            .map(|(reason, file, _, _, moved)| (reason, file, moved))
            .collect()
    };
    // n = 1: src/f1.rs; n = 4: a memory naming src/f1.rs (4 % 3).
    for op in [
        Op::Code { k: 1 },
        Op::Commit,
        Op::Sync,
        Op::Append { day: 0 },
        Op::Commit,
        Op::Sync,
        Op::Code { k: 1 },
        Op::Commit,
        Op::Sync,
    ] {
        play.step(&op).unwrap();
    }
    let deleted = (
        "file-deleted".to_owned(),
        "src/f1.rs".to_owned(),
        "[]".to_owned(),
    );
    assert_eq!(stale_of(), std::slice::from_ref(&deleted));
    for op in [Op::Older { back: 1 }, Op::Sync] {
        play.step(&op).unwrap();
    }
    assert_eq!(stale_of()[0].0, "");
    for op in [Op::Main, Op::Sync] {
        play.step(&op).unwrap();
    }
    assert_eq!(stale_of(), [deleted]);
    // Back (n = 14: src/f1.rs again), then renamed to src/f2.rs.
    for op in [
        Op::Code { k: 1 },
        Op::Commit,
        Op::Sync,
        Op::Rename { a: 1, b: 2 },
        Op::Commit,
        Op::Sync,
    ] {
        play.step(&op).unwrap();
    }
    assert_eq!(
        stale_of(),
        [(
            String::new(),
            String::new(),
            r#"[["src/f1.rs","src/f2.rs"]]"#.to_owned()
        )]
    );
}

/// A branch deleted unmerged: the incremental index marks the memories
/// that name it `branch-deleted`, which a rebuild, never having seen the
/// branch, cannot give; everything else is the same as a rebuild's.
#[test]
fn a_branch_deleted_unmerged_is_the_one_verdict_a_rebuild_does_not_give() {
    let play = play(&[
        Op::Sync,
        Op::Branch { n: 0 },
        Op::Code { k: 1 },
        Op::Commit,
        Op::Sync,
        Op::Main,
        // Memories 7 and 8: `branch` b1 and b0.
        Op::Append { day: 0 },
        Op::Append { day: 0 },
        Op::Commit,
        Op::DropBranch { n: 0 },
    ])
    .unwrap();
    let stale = |home: &Path| -> Vec<(String, String)> {
        let conn = rusqlite::Connection::open(home.join("index.db")).unwrap();
        let mut statement = conn
            .prepare("SELECT content, stale FROM memories ORDER BY content")
            .unwrap();
        statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let verdict = |content: &str, stale: &str| (content.to_owned(), stale.to_owned());
    assert_eq!(
        stale(&play.env.path().join("home/.goldfish")),
        [
            verdict("memory 7 about the cache", ""),
            verdict("memory 8 about the cache", "branch-deleted"),
        ]
    );
    assert_eq!(
        stale(&play.fresh),
        [
            verdict("memory 7 about the cache", ""),
            verdict("memory 8 about the cache", ""),
        ]
    );
}

/// Citations in a history: a cited function changed, moved, the commit
/// checked out again before it and after; the verdicts each sync stores
/// are a rebuild's (and the property's random histories cover more).
#[test]
fn citations_judged_incrementally_equal_a_rebuilds() {
    let play = play(&[
        Op::Code { k: 2 },
        Op::Append { day: 0 },
        Op::Commit,
        Op::Sync,
        Op::Touch { k: 2, how: 1 },
        Op::Commit,
        Op::Sync,
        Op::Touch { k: 2, how: 0 },
        Op::Commit,
        Op::Older { back: 1 },
        Op::Sync,
        Op::Main,
    ])
    .unwrap();
    let home = play.env.path().join("home/.goldfish");
    let root = fs::canonicalize(&play.repo).unwrap();
    let cites = index_state(&home, &root).cites;
    let verdicts: Vec<&str> = cites.values().map(|(v, ..)| v.as_str()).collect();
    assert_eq!(verdicts, ["changed"], "{cites:?}");
    let (_, start, end, commit) = cites.values().next().unwrap();
    assert_eq!((*start, *end), (6, 8), "moved down a line: {cites:?}");
    assert!(!commit.is_empty(), "{cites:?}");
}
