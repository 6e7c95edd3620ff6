//! Recall's tests: keyword, hybrid and semantic ranking, filters, scope
//! and trust, on seeded indexes.

use super::*;

#[test]
fn query_words_leave_stopwords_out_unless_nothing_else_is_left() {
    assert_eq!(content_words("WAL mode, wal!"), ["wal", "mode"]);
    assert_eq!(content_words("what is the pool size"), ["pool", "size"]);
    assert_eq!(content_words("what is it"), ["what", "is", "it"]);
    assert_eq!(
        content_words("src/auth.rs NEAR"),
        ["src", "auth", "rs", "near"]
    );
    assert!(content_words(" -- ").is_empty());
}

/// An index of 300 memories over two workspaces, with repeated texts
/// (ties in BM25), types and days to filter on.
fn seeded() -> (tempfile::TempDir, Index) {
    let (dir, index) = crate::adapters::index::two_workspaces();
    let words = [
        "pool", "size", "deadlock", "sqlite", "wal", "retry", "cache", "auth", "token", "merge",
    ];
    let kinds = ["decision", "bug-fix", "insight"];
    for n in 0..300_usize {
        // Texts repeat every 37 memories: the same text scores the same.
        let k = n % 37;
        let content = format!(
            "{} {} {} note {}",
            words[k % words.len()],
            words[(k * 3 + 1) % words.len()],
            if k % 4 == 0 {
                words[(k + 5) % words.len()]
            } else {
                "and more words here"
            },
            if k % 2 == 0 { "pool pool" } else { "" },
        );
        index
            .conn
            .execute(
                "INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash,
                    timestamp, ts_ms, type, content)
                 VALUES (?1, ?2, 'f.jsonl', ?3, ?2, ?4, ?5, ?6, ?7, ?8)",
                rusqlite::params![
                    1 + (n % 3 == 0) as i64,
                    format!("01M{n:05}"),
                    n as i64,
                    format!("c{k}"),
                    format!("2026-11-{:02}T10:00:00.000Z", 1 + n % 20),
                    1_793_000_000_000_i64 + (n % 20) as i64 * 86_400_000,
                    kinds[n % kinds.len()],
                    content,
                ],
            )
            .unwrap();
    }
    (dir, index)
}

/// The superseder probe is an index search on `supersedes`, never a
/// scan of a time range (quadratic: 1.3 s for 3,000 memories).
#[test]
fn the_superseder_probe_searches_by_supersedes() {
    let (_dir, index) = seeded();
    let now: jiff::Timestamp = "2026-11-21T09:30:00Z".parse().unwrap();
    let sql = format!(
        "EXPLAIN QUERY PLAN SELECT m.id, (SELECT s.id {0} ORDER BY s.timestamp DESC, s.id DESC LIMIT 1) FROM memories m
         WHERE NOT EXISTS (SELECT 1 {0}) ORDER BY m.timestamp DESC LIMIT 10",
        superseder(now)
    );
    let plan: Vec<String> = index
        .conn
        .prepare(&sql)
        .unwrap()
        .query_map([], |row| row.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let probes: Vec<&String> = plan
        .iter()
        .filter(|step| step.contains("SEARCH s "))
        .collect();
    assert_eq!(probes.len(), 2, "{plan:?}");
    assert!(
        probes
            .iter()
            .all(|step| step.contains("memories_by_supersedes")),
        "{plan:?}"
    );
}

fn ids(hits: &[IndexedMemory]) -> Vec<(String, f64)> {
    hits.iter().map(|hit| (hit.id.clone(), hit.score)).collect()
}

/// A hybrid recall gives the same list whether its keyword stage runs
/// on the second connection beside the vector stage or before it on
/// this one; the second connection is kept for the next recall.
#[test]
fn hybrid_stages_at_once_rank_as_one_after_the_other() {
    let (_dir, mut index) = seeded();
    let mut seed = 7_u64;
    let mut unit = |dims: usize| -> Vec<f32> {
        let mut v: Vec<f32> = (0..dims)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        crate::adapters::embed::normalize(&mut v);
        v
    };
    let vectors: Vec<(String, Vec<f32>)> = (0..37).map(|k| (format!("c{k}"), unit(16))).collect();
    index
        .insert_embeddings("m", vectors.iter().map(|(h, v)| (h.as_str(), v.as_slice())))
        .unwrap();
    let query = unit(16);
    for (text, scope) in [
        ("pool size", Scope::All),
        ("deadlock sqlite wal", Scope::Workspaces(vec![1])),
        ("zebra", Scope::All),
    ] {
        let request = Request {
            query: Some(text.to_owned()),
            limit: 10,
            ..Request::default()
        };
        let mut run = |parallel: bool| {
            index.set_parallel(parallel);
            let vector = QueryVector {
                model: "m",
                vector: &query,
            };
            index
                .recall(&request, &scope, Mode::Hybrid, Some(vector))
                .unwrap()
        };
        let apart = run(false);
        let together = run(true);
        assert!(!apart.is_empty(), "{text}");
        assert_eq!(ids(&together), ids(&apart), "{text}");
        assert_eq!(
            together.iter().map(|h| h.ranking).collect::<Vec<_>>(),
            apart.iter().map(|h| h.ranking).collect::<Vec<_>>(),
            "{text}"
        );
        assert!(index.side.lock().unwrap().is_some(), "kept for the next");
    }
}

/// The two-stage keyword ranking answers exactly what the exhaustive
/// ranking answers, whatever it fetches, or declines (and `keyword` then
/// asks for more): with filters, another workspace, ties at the edge;
/// and a copy of the keyword index in memory answers as the one on disk.
#[test]
fn the_two_stage_keyword_ranking_is_the_exhaustive_one_or_declines() {
    let (_dir, index) = seeded();
    let requests = [
        ("pool size", vec![], Scope::All),
        ("deadlock sqlite wal", vec![], Scope::Workspaces(vec![1])),
        (
            "pool",
            vec!["bug-fix".to_owned()],
            Scope::Workspaces(vec![2]),
        ),
        ("token merge cache", vec!["insight".to_owned()], Scope::All),
        ("zebra", vec![], Scope::All),
    ];
    let on_disk = {
        let mut text = None;
        assert!(index.keyword_index_ready(&mut text));
        let text = text.unwrap();
        assert!(!text.is_in_memory());
        text
    };
    let in_memory = super::super::keyword::TextIndex::in_memory(&index.conn, &index.path).unwrap();
    assert!(in_memory.is_in_memory() && in_memory.fresh(&index.conn).unwrap());
    let (mut answered, mut declined) = (0, 0);
    for (query, kinds, scope) in &requests {
        let request = Request {
            query: Some((*query).to_owned()),
            kinds: kinds.clone(),
            ..Request::default()
        };
        let words = index.keyword_query(&request, scope).unwrap().unwrap();
        for limit in [1, 5, 10, 50] {
            let exhaustive = index
                .keyword_exhaustive(&on_disk, &words, &request, scope, limit)
                .unwrap();
            let keyword = index.keyword(&request, scope, limit).unwrap();
            assert_eq!(
                ids(&keyword.hits),
                ids(&exhaustive.hits),
                "{query} {kinds:?} {scope:?} limit {limit}"
            );
            // One whole-question score, however the matches were found.
            assert_eq!(keyword.full, exhaustive.full);
            assert_eq!(
                ids(&index
                    .keyword_exhaustive(&in_memory, &words, &request, scope, limit)
                    .unwrap()
                    .hits),
                ids(&exhaustive.hits),
                "in memory: {query} {kinds:?} {scope:?} limit {limit}"
            );
            for fetch in [limit, limit + 3, 2 * limit, 120, 1000] {
                match index
                    .keyword_fetched(&on_disk, &words, &request, scope, limit, fetch)
                    .unwrap()
                {
                    Some(found) => {
                        answered += 1;
                        assert_eq!(found.full, exhaustive.full);
                        assert_eq!(
                            ids(&found.hits),
                            ids(&exhaustive.hits),
                            "{query} {kinds:?} {scope:?} limit {limit} fetch {fetch}"
                        );
                    }
                    None => declined += 1,
                }
            }
        }
    }
    assert!(answered > 20 && declined > 5, "{answered} {declined}");
}
