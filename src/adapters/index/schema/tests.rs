//! Migrations of the index schema (the steps the table of `super::migrate`
//! runs), checked from the version before each.

use super::steps::*;
use super::*;

#[test]
fn version_3_adds_flags_and_has_every_file_read_again() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(V1).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    conn.execute_batch(
        "INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');
         INSERT INTO files (workspace_id, name, blob_id) VALUES (1, '2026-11-21.jsonl', 'abc');
         INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp, type, content)
           VALUES (1, '01A', '2026-11-21.jsonl', 1, 'r', 'c', '2026-11-21T10:00:00.000Z', 'decision', 'x');",
    )
    .unwrap();
    migrate(&mut conn).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, VERSION);
    let (flags, record_hash): (String, String) = conn
        .query_row("SELECT flags, record_hash FROM memories", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!((flags.as_str(), record_hash.as_str()), ("", ""));
    let blob: String = conn
        .query_row("SELECT blob_id FROM files", [], |row| row.get(0))
        .unwrap();
    assert_eq!(blob, "", "the next sync reads the file again");
    migrate(&mut conn).unwrap();
}

#[test]
fn version_6_has_every_file_read_again() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4, V5] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 5).unwrap();
    conn.execute_batch(
        "INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');
         INSERT INTO files (workspace_id, name, blob_id) VALUES (1, 'f.jsonl', 'abc');
         INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp, type, content, flags)
           VALUES (1, '01A', 'f.jsonl', 1, 'r', 'c', 't', 'decision', 'x', 'secret');",
    )
    .unwrap();
    migrate(&mut conn).unwrap();
    let (flags, record_hash, blob): (String, String, String) = conn
        .query_row(
            "SELECT flags, record_hash, blob_id FROM memories, files",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (flags.as_str(), record_hash.as_str(), blob.as_str()),
        ("secret", "", ""),
        "flags stay until the next sync reads the file again"
    );
}

#[test]
fn version_7_has_every_history_walked_again() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4, V5, V6] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 6).unwrap();
    conn.execute_batch(
        "INSERT INTO workspaces (id, root, name, head_commit, history_commit) VALUES (1, '/repo', 'repo', 'abc', 'abc');
         INSERT INTO provenance (workspace_id, id, commit_id, author, date) VALUES (1, '01A', 'abc', 'A <a@x>', 'd');",
    )
    .unwrap();
    migrate(&mut conn).unwrap();
    let (history, policy): (Option<String>, i64) = conn
        .query_row(
            "SELECT history_commit, trust_policy FROM workspaces",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!((history, policy), (None, 0), "the next sync walks it all");
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM provenance", [], |row| row.get(0))
        .unwrap();
    assert_eq!(rows, 0);
}

#[test]
fn version_8_weighs_every_memory_at_once() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4, V5, V6, V7] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 7).unwrap();
    conn.execute_batch(
        "INSERT INTO workspaces (id, root, name, trust_policy) VALUES (1, '/repo', 'repo', 1);
         INSERT INTO trust_authors (workspace_id, pattern) VALUES (1, '*@example.com');
         INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp, type, content, author)
           VALUES (1, 'inside', 'f.jsonl', 1, 'r', 'c', 't', 'decision', 'x', 'Ann'),
                  (1, 'outside', 'f.jsonl', 2, 'r', 'c', 't', 'decision', 'x', NULL),
                  (1, 'forged', 'f.jsonl', 3, 'r', 'c', 't', 'decision', 'x', 'Bob'),
                  (1, 'released', 'f.jsonl', 4, 'r', 'c', 't', 'decision', 'x', NULL),
                  (1, 'local', 'f.jsonl', 5, 'r', 'c', 't', 'decision', 'x', 'Mallory');
         INSERT INTO provenance (workspace_id, id, commit_id, author, date, author_name, author_email)
           VALUES (1, 'inside', 'c1', 'Ann <ann@example.com>', 'd', 'Ann', 'ann@example.com'),
                  (1, 'outside', 'c2', 'Eve <eve@evil.test>', 'd', 'Eve', 'eve@evil.test'),
                  (1, 'forged', 'c1', 'Ann <ann@example.com>', 'd', 'Ann', 'ann@example.com'),
                  (1, 'released', 'c2', 'Eve <eve@evil.test>', 'd', 'Eve', 'eve@evil.test'),
                  (1, 'release', 'c1', 'Ann <ann@example.com>', 'd', 'Ann', 'ann@example.com');
         INSERT INTO releases (workspace_id, id, releases, file) VALUES (1, 'release', 'released', 'f.jsonl');",
    )
    .unwrap();
    migrate(&mut conn).unwrap();
    let verdicts: Vec<(String, String, bool)> = conn
        .prepare("SELECT id, quarantine, released FROM memories ORDER BY line")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected = [
        ("inside", "", false),
        ("outside", "author-outside-policy", false),
        ("forged", "author-mismatch", false),
        ("released", "author-outside-policy", true),
        ("local", "", false),
    ];
    let verdicts: Vec<(&str, &str, bool)> = verdicts
        .iter()
        .map(|(id, reasons, released)| (id.as_str(), reasons.as_str(), *released))
        .collect();
    assert_eq!(verdicts, expected);
}

#[test]
fn version_9_adds_supersedes_and_has_every_file_read_again() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4, V5, V6, V7, V8] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 8).unwrap();
    conn.execute_batch(
        "INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');
         INSERT INTO files (workspace_id, name, blob_id) VALUES (1, 'f.jsonl', 'abc');
         INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp, type, content)
           VALUES (1, '01A', 'f.jsonl', 1, 'r', 'c', 't', 'decision', 'x');",
    )
    .unwrap();
    migrate(&mut conn).unwrap();
    let (supersedes, record_hash, blob): (Option<String>, String, String) = conn
        .query_row(
            "SELECT supersedes, record_hash, blob_id FROM memories, files",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (supersedes, record_hash.as_str(), blob.as_str()),
        (None, "", ""),
        "the next sync reads the file again and fills the column"
    );
}

/// Version 10 drops FTS5 and its triggers and keeps every row; the
/// journal still notes each change for the keyword index.
#[test]
fn version_10_drops_fts5_and_keeps_the_rows_and_the_journal() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4, V5, V6, V7, V8, V9] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 9).unwrap();
    conn.execute_batch(
        "INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');
         INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp, type, content)
           VALUES (1, '01A', 'f.jsonl', 1, 'r', 'c', 't', 'decision', 'the pool size');",
    )
    .unwrap();
    let fts = |conn: &Connection| -> i64 {
        conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'memories_fts%'",
            [],
            |row| row.get(0),
        )
        .unwrap()
    };
    assert!(
        fts(&conn) > 3,
        "version 9 has the table, its shadows and triggers"
    );
    migrate(&mut conn).unwrap();
    assert_eq!(fts(&conn), 0);
    conn.execute(
        "UPDATE memories SET content = 'the pool holds eight' WHERE id = '01A'",
        [],
    )
    .unwrap();
    let (memories, journal): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM text_journal)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!((memories, journal), (1, 2), "the insert and the update");
}

#[test]
fn version_5_drops_the_stored_future_flag_and_keeps_the_others() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 4).unwrap();
    conn.execute(
        "INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo')",
        [],
    )
    .unwrap();
    let stored = [
        "future-timestamp",
        "future-timestamp,secret",
        "future-timestamp,secret,unknown-type",
        "secret,unknown-type",
        "bad-timestamp",
        "",
    ];
    for (n, flags) in stored.iter().enumerate() {
        conn.execute(
            "INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp, type, content, flags)
             VALUES (1, ?1, 'f.jsonl', ?2, 'r', 'c', 't', 'decision', 'x', ?3)",
            rusqlite::params![format!("0{n}"), n as i64 + 1, flags],
        )
        .unwrap();
    }
    migrate(&mut conn).unwrap();
    let flags: Vec<String> = conn
        .prepare("SELECT flags FROM memories ORDER BY line")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        flags,
        [
            "",
            "secret",
            "secret,unknown-type",
            "secret,unknown-type",
            "bad-timestamp",
            ""
        ]
    );
}

/// Version 14 adds the branches, empty: the next sync records them.
#[test]
fn version_14_adds_an_empty_branch_table() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V13] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 13).unwrap();
    conn.execute_batch("INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');")
        .unwrap();
    migrate(&mut conn).unwrap();
    conn.execute(
        "INSERT INTO branches (workspace_id, name, tip) VALUES (1, 'spike', 'abc')",
        [],
    )
    .unwrap();
    let (gone, merged): (bool, Option<bool>) = conn
        .query_row("SELECT gone, merged FROM branches", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!((gone, merged), (false, None));
    // Removing a workspace removes its branches.
    conn.execute_batch("PRAGMA foreign_keys = ON; DELETE FROM workspaces;")
        .unwrap();
    let left: i64 = conn
        .query_row("SELECT count(*) FROM branches", [], |row| row.get(0))
        .unwrap();
    assert_eq!(left, 0);
}

/// Version 13 forgets the recorded path changes and has every history
/// walked again (renames with edits are recorded then).
#[test]
fn version_13_has_every_history_walked_again() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 12).unwrap();
    conn.execute_batch(
        "INSERT INTO workspaces (id, root, name, history_commit) VALUES (1, '/repo', 'repo', 'abc');
         INSERT INTO path_changes (workspace_id, path, commit_id, author, author_name, author_email) VALUES (1, 'src/a.rs', 'def', 'A <a@x>', 'A', 'a@x');",
    )
    .unwrap();
    migrate(&mut conn).unwrap();
    let (changes, walked): (i64, Option<String>) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM path_changes), history_commit FROM workspaces",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!((changes, walked), (0, None));
}

/// Version 12 turns every stored f32 vector (more than one read batch
/// of them) into a byte a dimension, same direction, same sign bits.
#[test]
fn version_12_compacts_every_vector_and_keeps_its_direction() {
    let mut conn = Connection::open_in_memory().unwrap();
    for batch in [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11] {
        conn.execute_batch(batch).unwrap();
    }
    conn.pragma_update(None, "user_version", 11).unwrap();
    let vector = |n: usize| -> Vec<f32> {
        let mut v: Vec<f32> = (0..384)
            .map(|i| ((i * 31 + n * 7) % 97) as f32 - 48.0)
            .collect();
        crate::adapters::embed::normalize(&mut v);
        v
    };
    let rows = 2_500;
    for n in 0..rows {
        conn.execute(
            "INSERT INTO embeddings (content_hash, model, vector, code) VALUES (?1, 'm', ?2, x'01')",
            rusqlite::params![
                format!("h{n}"),
                super::super::vectors::to_blob(&vector(n))
            ],
        )
        .unwrap();
    }
    migrate(&mut conn).unwrap();
    let stored: Vec<(String, Vec<u8>, Vec<u8>)> = conn
        .prepare("SELECT content_hash, vector, code FROM embeddings ORDER BY rowid")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stored.len(), rows);
    for (n, (hash, blob, code)) in stored.iter().enumerate() {
        assert_eq!(hash, &format!("h{n}"));
        assert_eq!(blob.len(), 384, "a byte a dimension");
        assert_eq!(code, &[1]);
        let back = super::super::vectors::from_compact(blob);
        let similarity = crate::adapters::embed::cosine(&vector(n), &back);
        assert!(similarity > 0.9999, "row {n}: {similarity}");
    }
}

/// Version 19 adds `memories.session` and has every file read again, so
/// the next sync fills it from the lines.
#[test]
fn version_19_adds_the_session_and_has_every_file_read_again() {
    let mut conn = Connection::open_in_memory().unwrap();
    migrate(&mut conn).unwrap();
    conn.execute_batch(&format!(
        "{UNDO_20}
         ALTER TABLE memories DROP COLUMN session;
         INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');
         INSERT INTO files (workspace_id, name, blob_id, racy) VALUES (1, 'f.jsonl', 'abc', 0);"
    ))
    .unwrap();
    conn.pragma_update(None, "user_version", 18).unwrap();
    migrate(&mut conn).unwrap();
    assert_every_file_read_again(&conn);
    let session: Option<String> = conn
        .query_row("SELECT session FROM memories", [], |row| row.get(0))
        .unwrap_or(None);
    assert_eq!(session, None, "the column exists");
}

/// What version 20 adds, taken away: an index as version 19 left it.
const UNDO_20: &str = "
    DROP TRIGGER memory_cites_insert;
    DROP TRIGGER memory_cites_update;
    DROP TRIGGER memory_cites_delete;
    DROP TABLE memory_cites;
    ALTER TABLE memories DROP COLUMN cites;";

/// Version 20 adds the citations (`memories.cites`, `memory_cites` kept
/// by triggers) and has every file read again, so the next sync fills
/// them from the lines.
#[test]
fn version_20_adds_the_citations_and_has_every_file_read_again() {
    let mut conn = Connection::open_in_memory().unwrap();
    migrate(&mut conn).unwrap();
    conn.execute_batch(&format!(
        "{UNDO_20}
         INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');
         INSERT INTO files (workspace_id, name, blob_id, racy) VALUES (1, 'f.jsonl', 'abc', 0);"
    ))
    .unwrap();
    conn.pragma_update(None, "user_version", 19).unwrap();
    migrate(&mut conn).unwrap();
    assert_every_file_read_again(&conn);
    // The triggers keep one row per anchor, and none for what is not one.
    conn.execute_batch(
        r#"INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp,
             ts_ms, type, content, tags, files, flags, cites)
           VALUES (1, 'm1', 'f.jsonl', 1, 'r', 'c', 't', 0, 'decision', 'x', '[]', '[]', '',
             '[{"path":"src/a.rs","lines":[1,2]},{"path":"src/b.rs","lines":[3,4]},"src/c.rs:1"]');"#,
    )
    .unwrap();
    let paths = |conn: &Connection| -> Vec<String> {
        conn.prepare("SELECT path FROM memory_cites ORDER BY n")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(paths(&conn), ["src/a.rs", "src/b.rs"]);
    conn.execute_batch(
        r#"UPDATE memories SET cites = '[{"path":"src/d.rs","lines":[1,1]}]' WHERE id = 'm1';"#,
    )
    .unwrap();
    assert_eq!(paths(&conn), ["src/d.rs"]);
    conn.execute_batch("DELETE FROM memories WHERE id = 'm1';")
        .unwrap();
    assert!(paths(&conn).is_empty());
}

/// Version 21 adds `memory_cites.now_path` (where a rename took a cited
/// file) and keeps every verdict: no file read again.
#[test]
fn version_21_adds_the_renamed_path_and_keeps_the_verdicts() {
    let mut conn = Connection::open_in_memory().unwrap();
    migrate(&mut conn).unwrap();
    conn.execute_batch(
        r#"DROP INDEX memory_cites_now_path;
           ALTER TABLE memory_cites DROP COLUMN now_path;
           INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');
           INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp,
             ts_ms, type, content, tags, files, flags, cites)
           VALUES (1, 'm1', 'f.jsonl', 1, 'r', 'c', 't', 0, 'decision', 'x', '[]', '[]', '',
             '[{"path":"src/a.rs","lines":[1,2]}]');
           UPDATE memory_cites SET verdict = 'holds';"#,
    )
    .unwrap();
    conn.pragma_update(None, "user_version", 20).unwrap();
    migrate(&mut conn).unwrap();
    let (verdict, now_path): (String, Option<String>) = conn
        .query_row("SELECT verdict, now_path FROM memory_cites", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!((verdict.as_str(), now_path), ("holds", None));
}

/// Version 22 adds the index the newest-first list (the viewer's
/// timeline) reads its pages from, and keeps every row: no file read again.
#[test]
fn version_22_indexes_the_memories_newest_first() {
    let mut conn = Connection::open_in_memory().unwrap();
    migrate(&mut conn).unwrap();
    conn.execute_batch(
        "DROP INDEX memories_newest;
         INSERT INTO workspaces (id, root, name) VALUES (1, '/repo', 'repo');
         INSERT INTO files (workspace_id, name, blob_id, racy) VALUES (1, 'f.jsonl', 'abc', 0);",
    )
    .unwrap();
    conn.pragma_update(None, "user_version", 21).unwrap();
    migrate(&mut conn).unwrap();
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_index_info('memories_newest') ORDER BY seqno")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(columns, ["workspace_id", "timestamp", "id"]);
    let (blob, racy): (String, bool) = conn
        .query_row("SELECT blob_id, racy FROM files", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!((blob.as_str(), racy), ("abc", false), "nothing read again");
}

/// The next sync reads every file again: no blob id kept, each racy.
#[track_caller]
fn assert_every_file_read_again(conn: &Connection) {
    let (blob, racy): (String, bool) = conn
        .query_row("SELECT blob_id, racy FROM files", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!((blob.as_str(), racy), ("", true));
}
