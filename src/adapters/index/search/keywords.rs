//! The keyword stage: candidates from the keyword index (two stages,
//! exhaustive when unproven) joined to their rows, and the query's words.

use super::*;

/// Matches the two-stage keyword ranking fetches at least: enough
/// that filters leaving one in ten still fill a top 10.
pub(super) const KEYWORD_FETCH: usize = 100;

/// Beyond this many (a `--limit` over 1,000), the exhaustive query answers:
/// each fetched match is two bound values of one statement.
pub(super) const KEYWORD_FETCH_MAX: usize = 4_000;

/// A query for the keyword index: its words (stopwords left out) and the
/// workspaces it keeps to (`None`: every one).
pub(super) struct KeywordQuery {
    pub(super) words: Vec<String>,
    pub(super) workspaces: Option<Vec<i64>>,
}

/// What the keyword stage found: the ranked memories, and the BM25 score of
/// a memory of average length holding each of the query's words once
/// ([`crate::adapters::index::keyword::Matches::full`]; 0 when nothing matched).
#[derive(Debug, Default)]
pub(super) struct KeywordHits {
    pub(super) hits: Vec<IndexedMemory>,
    pub(super) full: f64,
}

/// Why a keyword search failed: reading the keyword index (a copy in
/// memory may answer instead) or the database.
#[derive(Debug)]
pub(super) enum KeywordError {
    Text(crate::adapters::index::keyword::TextError),
    Index(IndexError),
}

impl From<crate::adapters::index::keyword::TextError> for KeywordError {
    fn from(err: crate::adapters::index::keyword::TextError) -> Self {
        KeywordError::Text(err)
    }
}

impl From<IndexError> for KeywordError {
    fn from(err: IndexError) -> Self {
        KeywordError::Index(err)
    }
}

impl From<KeywordError> for IndexError {
    fn from(err: KeywordError) -> Self {
        match err {
            KeywordError::Text(err) => IndexError::Keyword(err),
            KeywordError::Index(err) => err,
        }
    }
}

impl Index {
    /// BM25 ranking of the query's words (FTS5's formula and weights) by
    /// the keyword index (`crate::adapters::index::keyword`, the one keyword engine), in two
    /// stages: it ranks its matches alone, and only the best few (4 ×
    /// `limit`, at least `KEYWORD_FETCH`) are joined with the memories for
    /// the filters and the row (`join_ranked`); 8 times more while they do
    /// not prove the top `limit`, and past `KEYWORD_FETCH_MAX` every match
    /// is sorted against the rows the filters pass (`keyword_exhaustive`).
    /// All give the same list.
    pub(super) fn keyword(
        &self,
        request: &Request,
        scope: &Scope,
        limit: usize,
    ) -> Result<KeywordHits, IndexError> {
        let Some(query) = self.keyword_query(request, scope)? else {
            return Ok(KeywordHits::default());
        };
        self.with_keyword_index(|index| {
            let mut fetch = (limit * 4).max(KEYWORD_FETCH);
            while fetch <= KEYWORD_FETCH_MAX {
                if let Some(hits) =
                    self.keyword_fetched(index, &query, request, scope, limit, fetch)?
                {
                    return Ok(hits);
                }
                if fetch == KEYWORD_FETCH_MAX {
                    break;
                }
                fetch = (fetch * 8).min(KEYWORD_FETCH_MAX);
            }
            self.keyword_exhaustive(index, &query, request, scope, limit)
        })
    }

    /// The query's words for the keyword index, and the workspaces it
    /// keeps to (`None`: every one; the scope is checked inside the keyword
    /// index, a fast field read per match, only when it leaves workspaces
    /// out). `None` when the query has no words.
    pub(super) fn keyword_query(
        &self,
        request: &Request,
        scope: &Scope,
    ) -> Result<Option<KeywordQuery>, IndexError> {
        let words = content_words(request.query.as_deref().unwrap_or_default());
        if words.is_empty() {
            return Ok(None);
        }
        let workspaces = match scope {
            Scope::All => None,
            Scope::Workspaces(ids) => {
                let known: i64 = self
                    .conn
                    .query_row("SELECT count(*) FROM workspaces", [], |row| row.get(0))
                    .map_err(self.sqlite())?;
                (usize::try_from(known).unwrap_or(usize::MAX) > ids.len()).then(|| ids.clone())
            }
        };
        Ok(Some(KeywordQuery { words, workspaces }))
    }

    /// The top `limit` from the keyword index's best `fetch` matches, or
    /// `None` when they may not hold it (too few pass the filters, or ties
    /// at the edge past what one statement binds).
    pub(super) fn keyword_fetched(
        &self,
        index: &crate::adapters::index::keyword::TextIndex,
        query: &KeywordQuery,
        request: &Request,
        scope: &Scope,
        limit: usize,
        fetch: usize,
    ) -> Result<Option<KeywordHits>, KeywordError> {
        let found = index.search(&query.words, query.workspaces.as_deref(), fetch)?;
        if found.rows.len() > 2 * KEYWORD_FETCH_MAX {
            return Ok(None);
        }
        // bm25()'s convention: lower ranks better.
        let ranked = found
            .rows
            .into_iter()
            .map(|(row, score)| (row, -score))
            .collect();
        Ok(self
            .join_ranked(request, scope, limit, fetch, ranked, true)?
            .map(|hits| KeywordHits {
                hits,
                full: found.full,
            }))
    }

    /// Runs `search` with the keyword index: the one on disk when it holds
    /// every row; else, after bringing it up to date (a connection that can
    /// write, once per connection: a catch-up that failed is not tried
    /// again);
    /// else (or when reading it fails: damage its checksums did not show) a
    /// copy in memory of every row ([`crate::adapters::index::keyword::TextIndex::in_memory`]),
    /// kept while nothing changes. Never a different ranking: only slower.
    pub(super) fn with_keyword_index<R>(
        &self,
        search: impl Fn(&crate::adapters::index::keyword::TextIndex) -> Result<R, KeywordError>,
    ) -> Result<R, IndexError> {
        let mut text = self.text.lock().unwrap_or_else(|p| p.into_inner());
        if self.keyword_index_ready(&mut text) {
            match search(text.as_ref().expect("ready")) {
                Err(KeywordError::Text(_)) => {}
                answer => return answer.map_err(IndexError::from),
            }
        }
        let copy = crate::adapters::index::keyword::TextIndex::in_memory(&self.conn, &self.path)?;
        let answer = search(&copy);
        *text = Some(copy);
        answer.map_err(IndexError::from)
    }

    /// Whether `text` holds a keyword index that holds every row (a copy
    /// in memory, or the one on disk), after opening the one on disk and,
    /// on a connection that can write, bringing it up to date (once per
    /// connection: a catch-up that failed is not tried again).
    pub(super) fn keyword_index_ready(
        &self,
        text: &mut Option<crate::adapters::index::keyword::TextIndex>,
    ) -> bool {
        use crate::adapters::index::keyword::{TextIndex, catch_up};
        use std::sync::atomic::Ordering::Relaxed;
        let fresh = |text: &Option<TextIndex>| {
            text.as_ref()
                .is_some_and(|index| index.fresh(&self.conn).unwrap_or(false))
        };
        if fresh(text) {
            return true;
        }
        // Unreadable is as good as absent.
        *text = TextIndex::open(&self.path).ok().flatten();
        if fresh(text)
            || self.conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(true)
            || self.keyword_catch_up_failed.load(Relaxed)
        {
            return fresh(text);
        }
        if catch_up(&self.conn, &self.path).is_err() {
            self.keyword_catch_up_failed.store(true, Relaxed);
        }
        *text = TextIndex::open(&self.path).ok().flatten();
        fresh(text)
    }

    /// The top `limit` of every match of the query that pass the filters
    /// and the scope, ordered as
    /// `join_ranked` orders them: the rows the filters pass are read
    /// (rowid, timestamp, id only), the matches among them sorted, the
    /// first `limit` joined.
    pub(super) fn keyword_exhaustive(
        &self,
        index: &crate::adapters::index::keyword::TextIndex,
        query: &KeywordQuery,
        request: &Request,
        scope: &Scope,
        limit: usize,
    ) -> Result<KeywordHits, KeywordError> {
        let found = index.search(&query.words, query.workspaces.as_deref(), usize::MAX)?;
        let full = found.full;
        let scores: std::collections::HashMap<i64, f64> = found.rows.into_iter().collect();
        let c = Conditions::filters(request, scope);
        let sql = format!(
            "SELECT m.rowid, m.timestamp, m.id FROM memories m
             JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN provenance p ON {LINE_PROVENANCE}
             WHERE {}",
            c.sql.join(" AND ")
        );
        register_unicode_lower(&self.conn).map_err(self.sqlite())?;
        let mut statement = self.conn.prepare(&sql).map_err(self.sqlite())?;
        let mut passing: Vec<(f64, String, String, i64)> = Vec::new();
        let mut rows = statement
            .query(rusqlite::params_from_iter(c.values))
            .map_err(self.sqlite())?;
        while let Some(row) = rows.next().map_err(self.sqlite())? {
            let rowid: i64 = row.get(0).map_err(self.sqlite())?;
            if let Some(score) = scores.get(&rowid) {
                passing.push((
                    *score,
                    row.get(1).map_err(self.sqlite())?,
                    row.get(2).map_err(self.sqlite())?,
                    rowid,
                ));
            }
        }
        drop(rows);
        // Best score first, then newer, then the greater id: the order of
        // `join_ranked`'s SQL (bytewise, as SQLite compares text).
        passing.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| b.1.cmp(&a.1))
                .then_with(|| b.2.cmp(&a.2))
        });
        passing.truncate(limit);
        let ranked = passing
            .into_iter()
            .map(|(score, _, _, rowid)| (rowid, -score))
            .collect();
        Ok(KeywordHits {
            hits: self
                .join_ranked(request, scope, limit, usize::MAX, ranked, true)?
                .expect("every passing match is there"),
            full,
        })
    }

    /// The top `limit` of `ranked` (the best `fetch` matches of every
    /// workspace as (rowid, rank), lower ranking better) that pass the
    /// filters and the scope, or `None` when they may not hold it. Exact
    /// when it answers: every match ranking strictly better than the
    /// `fetch`-th is among them, so a top `limit` whose last ranks strictly
    /// better than the `fetch`-th (or fewer than `fetch` matches in all)
    /// is the one a query over every match finds, ties broken the same
    /// way. With `ties` (`ranked` holds every match ranking as well as its
    /// last), whatever was not fetched ranks strictly worse than all that
    /// was, so a full top `limit` is proof enough.
    pub(super) fn join_ranked(
        &self,
        request: &Request,
        scope: &Scope,
        limit: usize,
        fetch: usize,
        ranked: Vec<(i64, f64)>,
        ties: bool,
    ) -> Result<Option<Vec<IndexedMemory>>, IndexError> {
        let complete = ranked.len() < fetch;
        let Some(&(_, edge)) = ranked.last() else {
            return Ok(Some(Vec::new()));
        };
        let mut c = Conditions::filters(request, scope);
        let rows: Vec<String> = ranked
            .iter()
            .map(|(rowid, rank)| {
                let rowid = c.bind(Value::Integer(*rowid));
                let rank = c.bind(Value::Real(*rank));
                format!("({rowid}, {rank})")
            })
            .collect();
        let limit_param = c.bind(Value::Integer(limit_value(limit)));
        let mut hits = self.select(
            c,
            &format!(
                "(SELECT column1 AS r, column2 AS s FROM (VALUES {})) k
                 JOIN memories m ON m.rowid = k.r",
                rows.join(", ")
            ),
            "k.s",
            &format!("rank_value ASC, m.timestamp DESC, m.id DESC LIMIT {limit_param}"),
        )?;
        // The relevance is monotone in the rank, so a last hit more relevant
        // than the edge ranks strictly before it.
        let proven = complete
            || (hits.len() == limit
                && (ties
                    || hits
                        .last()
                        .and_then(|hit| hit.keyword)
                        .is_some_and(|keyword| keyword > keyword_relevance(edge))));
        if !proven {
            return Ok(None);
        }
        for hit in &mut hits {
            hit.score = hit.keyword.unwrap_or(0.0);
        }
        Ok(Some(hits))
    }
}

/// bm25() is lower for better matches; its relevance (the negated rank)
/// mapped into [0, 1) by x/(1+x), monotone: a smaller rank, a relevance at
/// least as high.
pub(super) fn keyword_relevance(rank: f64) -> f64 {
    let relevance = (-rank).max(0.0);
    relevance / (1.0 + relevance)
}

/// BM25 relevance back from its mapping into [0, 1) by x/(1+x).
pub(super) fn bm25_of(keyword: f64) -> f64 {
    if keyword < 1.0 {
        keyword / (1.0 - keyword)
    } else {
        f64::MAX
    }
}

/// Words too common in questions to be keyword evidence ("what did we
/// decide about …"). A query made only of these still matches on them.
pub(super) const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "an", "and", "any", "are", "as", "at", "be", "been", "before",
    "but", "by", "can", "could", "did", "do", "does", "for", "from", "get", "got", "had", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "last", "made", "make", "me",
    "more", "my", "no", "not", "now", "of", "on", "or", "our", "out", "over", "should", "so",
    "some", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to",
    "up", "us", "use", "used", "was", "we", "were", "what", "when", "where", "which", "while",
    "who", "why", "will", "with", "would", "you", "your",
];

/// The lowercased words of `text` without repeats, stopwords left out unless
/// nothing else is left.
pub fn content_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
    {
        if !words.contains(&word) {
            words.push(word);
        }
    }
    if words.iter().all(|w| STOPWORDS.contains(&w.as_str())) {
        return words;
    }
    words.retain(|w| !STOPWORDS.contains(&w.as_str()));
    words
}
