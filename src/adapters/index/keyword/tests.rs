//! The keyword index's tests: FTS5's scores on the same rows (with the
//! scope's statistics alone; blended with the background table, against
//! the blend computed here), catch-up, stamps and checksums, damage and the
//! copy in memory.

use super::*;
use crate::adapters::index::Index;

/// The lowercased words of `text` (goldfish's query words, stopwords
/// kept: more matches to compare).
fn query_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !words.contains(&word.to_lowercase()) {
            words.push(word.to_lowercase());
        }
    }
    words
}

fn index_with(memories: &[(i64, &str, &str, &str)]) -> (tempfile::TempDir, Index) {
    let (dir, index) = crate::adapters::index::two_workspaces();
    for (n, (workspace, content, tags, files)) in memories.iter().enumerate() {
        insert(&index, n, *workspace, content, tags, files);
    }
    (dir, index)
}

fn insert(index: &Index, n: usize, workspace: i64, content: &str, tags: &str, files: &str) {
    index
        .conn
        .execute(
            "INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash,
                timestamp, type, content, tags, files)
             VALUES (?1, ?2, 'f.jsonl', ?3, ?2, ?2, '2026-11-01T10:00:00.000Z', 'insight', ?4, ?5, ?6)",
            params![workspace, format!("01M{n:05}"), n as i64, content, tags, files],
        )
        .unwrap();
}

/// FTS5's scores of every match of `words`, by rowid: the oracle the
/// keyword index's scores are held to (the index itself has no FTS5
/// table since schema 10), an FTS5 table of the memories' texts as the
/// index had it, written anew for each question.
fn fts5(index: &Index, words: &[String]) -> Vec<(i64, f64)> {
    fts5_of(index, words, None)
}

/// [`fts5`] over the rows of `workspace` alone (`None`: every row).
fn fts5_of(index: &Index, words: &[String], workspace: Option<i64>) -> Vec<(i64, f64)> {
    index
        .conn
        .execute_batch(&format!(
            "DROP TABLE IF EXISTS temp.oracle;
             CREATE VIRTUAL TABLE temp.oracle USING fts5(
                 content, tags, files,
                 tokenize = 'porter unicode61 remove_diacritics 2'
             );
             INSERT INTO temp.oracle (rowid, content, tags, files)
                 SELECT rowid, content, tags, files FROM memories WHERE {};",
            workspace.map_or("1".to_owned(), |id| format!("workspace_id = {id}"))
        ))
        .unwrap();
    let query = words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(" OR ");
    let mut statement = index
        .conn
        .prepare(
            "SELECT rowid, -bm25(oracle, 1.0, 2.0, 0.5) FROM temp.oracle
             WHERE oracle MATCH ?1",
        )
        .unwrap();
    let mut scores: Vec<(i64, f64)> = statement
        .query_map([query], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    scores.sort_by_key(|(row, _)| *row);
    scores
}

/// Every match of `words`, by rowid, with the statistics of every row
/// alone (what [`fts5`] computes): what the index holds, checked exactly.
fn search_all(text: &TextIndex, words: &[String]) -> Vec<(i64, f64)> {
    search_with(text, words, None, score::Rarity::scope_only())
}

/// Every match of `words` in `workspaces`, by rowid, with `rarity`.
fn search_with(
    text: &TextIndex,
    words: &[String],
    workspaces: Option<&[i64]>,
    rarity: score::Rarity,
) -> Vec<(i64, f64)> {
    let searcher = text.readable_searcher().unwrap();
    let mut scores = text
        .search_with(&searcher, words, workspaces, 1_000_000, rarity)
        .unwrap()
        .rows;
    scores.sort_by_key(|(row, _)| *row);
    scores
}

/// fixtures/eval/'s memories as rows of workspace 1, with their tags and
/// files, and then (when `second`) again as rows of workspace 2 where
/// every third one is left out.
fn project_rows(second: bool) -> Vec<(i64, String, String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    let memories: Vec<serde_json::Value> = std::fs::read_to_string(root.join("memories.jsonl"))
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let row = |workspace: i64, m: &serde_json::Value| {
        (
            workspace,
            m["content"].as_str().unwrap().to_owned(),
            m.get("tags").map_or("[]".to_owned(), |t| t.to_string()),
            m.get("files").map_or("[]".to_owned(), |f| f.to_string()),
        )
    };
    let mut rows: Vec<_> = memories.iter().map(|m| row(1, m)).collect();
    if second {
        rows.extend(
            memories
                .iter()
                .enumerate()
                .filter(|(n, _)| n % 3 != 0)
                .map(|(_, m)| row(2, m)),
        );
    }
    rows
}

/// The keyword index of [`project_rows`], caught up and checked.
fn project_index(second: bool) -> (tempfile::TempDir, Index, TextIndex, usize) {
    let rows = project_rows(second);
    let borrowed: Vec<(i64, &str, &str, &str)> = rows
        .iter()
        .map(|(w, c, t, f)| (*w, c.as_str(), t.as_str(), f.as_str()))
        .collect();
    let (dir, index) = index_with(&borrowed);
    assert_eq!(
        catch_up(&index.conn, &index.path).unwrap(),
        CaughtUp::Rebuilt { rows: rows.len() }
    );
    let text = TextIndex::open(&index.path).unwrap().unwrap();
    assert!(text.fresh(&index.conn).unwrap());
    (dir, index, text, rows.len())
}

/// fixtures/eval/'s questions.
fn project_questions() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    let questions: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(root.join("questions.json")).unwrap())
            .unwrap();
    questions
        .iter()
        .map(|q| q["question"].as_str().unwrap().to_owned())
        .collect()
}

fn assert_same_scores(ours: &[(i64, f64)], fts5: &[(i64, f64)], what: &str) {
    assert_eq!(
        ours.iter().map(|(row, _)| *row).collect::<Vec<_>>(),
        fts5.iter().map(|(row, _)| *row).collect::<Vec<_>>(),
        "{what}: the same matches"
    );
    for ((row, a), (_, b)) in ours.iter().zip(fts5) {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "{what}: row {row} scores {a} here, {b} in FTS5"
        );
    }
}

/// With the scope's statistics alone, the keyword index scores every
/// match of every question of fixtures/eval/ as FTS5's bm25() does, over
/// the set's memories with their tags and files: over every row, and over
/// one workspace's rows while another workspace holds more.
#[test]
fn scores_are_fts5s_on_the_project_set() {
    let (_dir, index, text, _) = project_index(true);
    let mut matched = 0;
    for question in project_questions() {
        let words = query_words(&question);
        let ours = search_with(&text, &words, None, score::Rarity::scope_only());
        matched += ours.len();
        assert_same_scores(&ours, &fts5(&index, &words), &question);
        for workspace in [1, 2] {
            let ours = search_with(
                &text,
                &words,
                Some(&[workspace]),
                score::Rarity::scope_only(),
            );
            let theirs = fts5_of(&index, &words, Some(workspace));
            assert_same_scores(&ours, &theirs, &format!("{question} in {workspace}"));
        }
    }
    assert!(matched > 3000, "{matched} matches in all");
}

/// With the shipped rarity, a one-word question scores each match as FTS5
/// over the workspace's rows does, times the blended idf over FTS5's idf:
/// the word's rows in the workspace and the table's share (read here
/// line by line, not by bisection) give the blend, computed here.
#[test]
fn blended_scores_are_fts5s_with_the_blended_idf() {
    let (_dir, index, text, _) = project_index(true);
    let table: std::collections::HashMap<String, f64> = include_str!("rarity/wordfreq.tsv")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let (stem, count) = line.split_once('\t').unwrap();
            (stem.to_owned(), count.parse().unwrap())
        })
        .collect();
    let header = |key: &str| -> f64 {
        include_str!("rarity/wordfreq.tsv")
            .lines()
            .find_map(|line| line.strip_prefix(&format!("# {key}: ")))
            .unwrap()
            .parse()
            .unwrap()
    };
    let (documents, floor) = (header("documents"), header("floor"));
    let rows_in = |workspace: i64| -> f64 {
        index
            .conn
            .query_row(
                "SELECT count(*) FROM memories WHERE workspace_id = ?1",
                [workspace],
                |row| row.get::<_, i64>(0),
            )
            .unwrap() as f64
    };
    let mut words: Vec<String> = project_questions()
        .iter()
        .flat_map(|q| query_words(q))
        .collect();
    words.sort();
    words.dedup();
    let mut checked = 0;
    for word in &words {
        let one = std::slice::from_ref(word);
        let stem = text.terms_of(one);
        let [stem] = stem.as_slice() else { continue };
        for workspace in [1, 2] {
            let theirs = fts5_of(&index, one, Some(workspace));
            let ours = search_with(&text, one, Some(&[workspace]), score::Rarity::shipped());
            let (n, df) = (rows_in(workspace), theirs.len() as f64);
            if df == 0.0 {
                assert!(ours.is_empty(), "{word}");
                continue;
            }
            let fts5_idf = (((n - df + 0.5) / (df + 0.5)).ln()).max(1e-6);
            let share = table.get(stem).copied().unwrap_or(floor) / documents;
            let prior = rarity::PRIOR_ROWS;
            let blended = (((n + prior - df - prior * share + 0.5) / (df + prior * share + 0.5))
                .ln())
            .max(1e-6);
            let expected: Vec<(i64, f64)> = theirs
                .iter()
                .map(|&(row, score)| (row, score / fts5_idf * blended))
                .collect();
            assert_same_scores(&ours, &expected, &format!("{word} in {workspace}"));
            checked += 1;
        }
    }
    assert!(checked > 300, "{checked} words checked");
}

/// Rows inserted, changed and deleted reach the keyword index at the
/// next catch-up; until then it says it is not fresh. An index left
/// from another database is written again.
#[test]
fn the_journal_brings_changes_and_a_new_database_a_rebuild() {
    let (dir, index) = index_with(&[
        (1, "the pool size is eight", "[\"pool\"]", "[]"),
        (2, "a deadlock in the wal", "[]", "[\"src/wal.rs\"]"),
    ]);
    assert_eq!(
        standing(&index.conn, &index.path).unwrap(),
        Standing::Unwritten
    );
    assert_eq!(
        catch_up(&index.conn, &index.path).unwrap(),
        CaughtUp::Rebuilt { rows: 2 }
    );
    assert_eq!(catch_up(&index.conn, &index.path).unwrap(), CaughtUp::Fresh);
    assert_eq!(
        standing(&index.conn, &index.path).unwrap(),
        Standing::Fresh { rows: 2 }
    );
    let text = TextIndex::open(&index.path).unwrap().unwrap();
    assert!(text.fresh(&index.conn).unwrap());
    let words = query_words;
    assert_eq!(search_all(&text, &words("pool")).len(), 1);
    // Only in workspace 2.
    assert_eq!(
        text.search(&words("deadlock"), Some(&[1]), 10)
            .unwrap()
            .rows,
        vec![]
    );
    assert_eq!(
        text.search(&words("deadlock"), Some(&[2]), 10)
            .unwrap()
            .rows
            .len(),
        1
    );

    insert(&index, 7, 1, "another pool note", "[]", "[]");
    assert!(!text.fresh(&index.conn).unwrap(), "a row the index lacks");
    index
        .conn
        .execute(
            "UPDATE memories SET content = 'a livelock in the wal' WHERE id = '01M00001'",
            [],
        )
        .unwrap();
    index
        .conn
        .execute("DELETE FROM memories WHERE id = '01M00000'", [])
        .unwrap();
    assert_eq!(
        standing(&index.conn, &index.path).unwrap(),
        Standing::Behind { changes: 3 },
        "the new row, the changed one, the deleted one"
    );
    assert_eq!(
        catch_up(&index.conn, &index.path).unwrap(),
        CaughtUp::Applied { rows: 2 },
        "the new row and the changed one (the deleted one is only removed)"
    );
    assert!(text.fresh(&index.conn).unwrap());
    for query in ["pool", "deadlock", "livelock wal", "zebra"] {
        assert_same_scores(
            &search_all(&text, &words(query)),
            &fts5(&index, &words(query)),
            query,
        );
    }
    assert_eq!(search_all(&text, &words("deadlock")), vec![]);
    let journal: i64 = index
        .conn
        .query_row("SELECT count(*) FROM text_journal", [], |row| row.get(0))
        .unwrap();
    assert_eq!(journal, 0, "applied entries are pruned");

    // The database goes (it is derived) and comes back with one row:
    // the old keyword index is not taken for its.
    drop(text);
    drop(index);
    std::fs::remove_file(dir.path().join("index.db")).unwrap();
    let index = Index::open(&dir.path().join("index.db")).unwrap();
    index
        .conn
        .execute_batch("INSERT INTO workspaces (id, root, name) VALUES (1, '/a', 'a');")
        .unwrap();
    insert(&index, 0, 1, "a fresh start", "[]", "[]");
    let text = TextIndex::open(&index.path).unwrap().unwrap();
    assert!(
        !text.fresh(&index.conn).unwrap(),
        "written for another database"
    );
    assert_eq!(
        standing(&index.conn, &index.path).unwrap(),
        Standing::Unwritten
    );
    assert_eq!(
        catch_up(&index.conn, &index.path).unwrap(),
        CaughtUp::Rebuilt { rows: 1 }
    );
    assert!(text.fresh(&index.conn).unwrap());
    assert_eq!(search_all(&text, &words("livelock")), vec![]);
    assert_eq!(search_all(&text, &words("fresh start")).len(), 1);
}

/// 600 rows of a small vocabulary (postings lists long enough for
/// blocks), caught up; then one deleted and caught up again, so its
/// segment has a deletion bitset (`.del`).
fn busy_index() -> (tempfile::TempDir, Index) {
    const WORDS: [&str; 12] = [
        "pool", "size", "wal", "deadlock", "cache", "eviction", "lock", "index", "query", "merge",
        "hook", "branch",
    ];
    let (dir, index) = crate::adapters::index::two_workspaces();
    for n in 0..600 {
        let content: Vec<&str> = (0..8).map(|k| WORDS[(n * 7 + k * k * 5) % 12]).collect();
        insert(
            &index,
            n,
            1 + (n % 2) as i64,
            &content.join(" "),
            "[]",
            "[]",
        );
    }
    assert_eq!(
        catch_up(&index.conn, &index.path).unwrap(),
        CaughtUp::Rebuilt { rows: 600 }
    );
    index
        .conn
        .execute("DELETE FROM memories WHERE id = '01M00007'", [])
        .unwrap();
    assert_eq!(
        catch_up(&index.conn, &index.path).unwrap(),
        CaughtUp::Applied { rows: 0 }
    );
    (dir, index)
}

/// The files of the index's folder whose name ends with `.kind`.
fn files_of_kind(db: &Path, kind: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir_of(db))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(&format!(".{kind}")))
        .collect()
}

/// tantivy's CRC-32 (IEEE), for a forged footer.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Writes pseudo-random bytes over the middle half of the body of
/// `file` (before tantivy's footer: its JSON, its length, a magic
/// number), in place; `forge`: and writes the footer's checksum of the
/// new body, so only reading it shows the damage.
fn scribble(file: &Path, forge: bool) {
    let mut bytes = std::fs::read(file).unwrap();
    let len = bytes.len();
    let footer = u32::from_le_bytes(bytes[len - 8..len - 4].try_into().unwrap()) as usize;
    let body = len - 8 - footer;
    let before = bytes.clone();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for byte in &mut bytes[body / 4..body * 3 / 4] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *byte = state as u8;
    }
    assert_ne!(bytes, before, "{} changed", file.display());
    if forge {
        let mut json: serde_json::Value =
            serde_json::from_slice(&bytes[body..body + footer]).unwrap();
        json["crc"] = crc32(&bytes[..body]).into();
        let json = serde_json::to_vec(&json).unwrap();
        bytes.truncate(body);
        bytes.extend_from_slice(&json);
        bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&1337u32.to_le_bytes());
    }
    // Later than the catch-up that stamped it, on a kernel whose file
    // times are coarse as well.
    std::thread::sleep(Duration::from_millis(20));
    use std::io::Write;
    let mut handle = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    handle.write_all(&bytes).unwrap();
    handle.set_len(bytes.len() as u64).unwrap();
}

/// MEDIUM 2: a file of any kind of a segment with random bytes in it:
/// the keyword index is not fresh (recall uses FTS5), `standing` names
/// the file for doctor, a sync with nothing to write sees it lags, and
/// the catch-up writes every row again; then it scores as FTS5.
#[test]
fn medium_2_a_damaged_file_of_any_kind_is_found_and_written_again() {
    let words = query_words;
    for kind in ["idx", "term", "pos", "store", "fast", "fieldnorm", "del"] {
        let (_dir, index) = busy_index();
        let reader = TextIndex::open(&index.path).unwrap().unwrap();
        assert!(reader.fresh(&index.conn).unwrap(), ".{kind}");
        assert!(holds_everything(&index.conn, &index.path).unwrap());
        let files = files_of_kind(&index.path, kind);
        assert!(!files.is_empty(), "a .{kind} file");
        for file in &files {
            scribble(file, false);
        }
        // A reader open before, and one opened now.
        assert!(!reader.fresh(&index.conn).unwrap(), ".{kind}");
        let text = TextIndex::open(&index.path).unwrap().unwrap();
        assert!(!text.fresh(&index.conn).unwrap(), ".{kind}");
        match standing(&index.conn, &index.path).unwrap() {
            Standing::Damaged(damage) => {
                assert!(files.contains(&damage.file), ".{kind}: {damage:?}")
            }
            other => panic!(".{kind}: {other:?}"),
        }
        assert!(!holds_everything(&index.conn, &index.path).unwrap());
        assert_eq!(
            catch_up(&index.conn, &index.path).unwrap(),
            CaughtUp::Rebuilt { rows: 599 },
            ".{kind}"
        );
        assert_eq!(
            standing(&index.conn, &index.path).unwrap(),
            Standing::Fresh { rows: 599 }
        );
        assert!(holds_everything(&index.conn, &index.path).unwrap());
        for text in [&reader, &text] {
            assert!(text.fresh(&index.conn).unwrap(), ".{kind}");
            for query in ["pool size", "deadlock wal", "hook branch merge"] {
                assert_same_scores(
                    &search_all(text, &words(query)),
                    &fts5(&index, &words(query)),
                    query,
                );
            }
        }
    }
}

/// MEDIUM 2, the last resort: damage that the checksums do not show (a
/// forged footer) makes tantivy panic reading postings. The panic stays
/// inside: the search is an error (FTS5 answers), the index is used no
/// more, and the next catch-up writes every row again.
#[test]
fn medium_2_a_panic_in_tantivy_is_caught_and_the_index_written_again() {
    let (_dir, index) = busy_index();
    let words = query_words;
    for file in files_of_kind(&index.path, "idx") {
        scribble(&file, true);
    }
    let text = TextIndex::open(&index.path).unwrap().unwrap();
    assert!(text.fresh(&index.conn).unwrap(), "the checksums match");
    let searched = text.search(&words("pool size deadlock"), None, 10);
    assert!(
        matches!(searched, Err(TextError::Panicked { .. })),
        "{searched:?}"
    );
    assert!(!text.fresh(&index.conn).unwrap(), "used no more");
    assert!(!holds_everything(&index.conn, &index.path).unwrap());
    assert_eq!(
        catch_up(&index.conn, &index.path).unwrap(),
        CaughtUp::Rebuilt { rows: 599 }
    );
    let text = TextIndex::open(&index.path).unwrap().unwrap();
    assert!(text.fresh(&index.conn).unwrap());
    assert_same_scores(
        &search_all(&text, &words("pool size deadlock")),
        &fts5(&index, &words("pool size deadlock")),
        "written again",
    );
}

/// MEDIUM 3: a writer lock file that cannot be opened (an unwritable
/// folder) is an error naming it at once; it was retried for 30 s as
/// if another process held it.
#[test]
fn medium_3_a_lock_file_that_cannot_be_opened_fails_at_once() {
    let (_dir, index) = busy_index();
    let lock = dir_of(&index.path).join(".tantivy-writer.lock");
    std::fs::remove_file(&lock).unwrap();
    std::fs::create_dir(&lock).unwrap();
    insert(&index, 1000, 1, "one more pool", "[]", "[]");
    let started = Instant::now();
    let err = catch_up(&index.conn, &index.path).unwrap_err();
    assert!(
        started.elapsed() < WRITER_WAIT / 3,
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(&err, TextError::Io { path, .. } if *path == lock),
        "{err:?}"
    );
    assert!(err.to_string().contains(&lock.display().to_string()));
}
