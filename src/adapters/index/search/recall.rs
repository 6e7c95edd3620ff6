//! The entry points of a search: recall, "nothing relevant", the newest
//! memories and a memory by id prefix.

use super::*;

impl Index {
    /// Runs `request` over `scope`, ranked by `mode`. Semantic and hybrid
    /// modes need `query_vector` (keyword ranking is used without one).
    pub fn recall(
        &self,
        request: &Request,
        scope: &Scope,
        mode: Mode,
        query_vector: Option<QueryVector<'_>>,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let has_query = request
            .query
            .as_deref()
            .is_some_and(|q| !content_words(q).is_empty());
        let mut hits = match (mode, query_vector) {
            _ if request.query.is_none() => self.newest(request, scope)?,
            (Mode::Semantic, Some(vector)) => {
                self.semantic(request, scope, vector, request.limit)?
            }
            (Mode::Hybrid, vector) if has_query || vector.is_some() => {
                self.hybrid(request, scope, vector)?
            }
            _ if !has_query => Vec::new(),
            _ => self.keyword(request, scope, request.limit)?.hits,
        };
        if let (Some(floor), Mode::Semantic | Mode::Hybrid) = (request.floor, mode) {
            hits.retain(|hit| floor.keeps(hit.similarity, hit.keyword.is_some()));
        }
        if let Some(min) = request.min_score {
            hits.retain(|hit| hit.score >= min);
        }
        hits.truncate(request.limit);
        Ok(hits)
    }

    /// Whether `question` is about anything the log of `scope` holds
    /// ([`crate::domain::relevance`]): which of its words the keyword index
    /// finds in the scope's memories (a prefix look-up per word), and, only
    /// when few enough of them are found to refuse the question, the log's
    /// distinct words, read memory by memory from the database until there
    /// are enough (a few hundred memories in a log of varied text; every
    /// memory of a smaller or repetitive one). The memories of
    /// the scope count whatever the request's filters: the question is
    /// judged against the log, not the part a filter keeps.
    pub fn relevance(&self, question: &str, scope: &Scope) -> Result<Judgement, IndexError> {
        use crate::domain::relevance::{Asked, Vocabulary, judge, needs_vocabulary, words};
        let asked = words(question);
        if asked.is_empty() {
            return Ok(judge(Vec::new(), None));
        }
        let workspaces = match scope {
            Scope::All => None,
            Scope::Workspaces(ids) => Some(ids.as_slice()),
        };
        let held = self.with_keyword_index(|index| Ok(index.holds(&asked, workspaces)?))?;
        let asked: Vec<Asked> = asked
            .into_iter()
            .zip(held)
            .map(|(word, in_log)| Asked { word, in_log })
            .collect();
        if !needs_vocabulary(&asked) {
            return Ok(judge(asked, None));
        }
        let mut vocabulary = Vocabulary::default();
        let (sql, values) = match scope {
            Scope::All => ("SELECT content, tags FROM memories".to_owned(), Vec::new()),
            Scope::Workspaces(ids) => (
                format!(
                    "SELECT content, tags FROM memories WHERE workspace_id IN ({})",
                    vec!["?"; ids.len()].join(", ")
                ),
                ids.clone(),
            ),
        };
        let mut statement = self.conn.prepare(&sql).map_err(self.sqlite())?;
        let mut rows = statement
            .query(rusqlite::params_from_iter(values))
            .map_err(self.sqlite())?;
        while let Some(row) = rows.next().map_err(self.sqlite())? {
            let content: String = row.get(0).map_err(self.sqlite())?;
            let tags: String = row.get(1).map_err(self.sqlite())?;
            if vocabulary.add(&content) || vocabulary.add(&tags) {
                break;
            }
        }
        Ok(judge(asked, Some(vocabulary.size())))
    }

    /// The live memories of `scope` whose id starts with `prefix` (ASCII
    /// case ignored), at most `limit`, by id, flagged as of `now`.
    pub fn by_id_prefix(
        &self,
        scope: &Scope,
        prefix: &str,
        limit: usize,
        now: jiff::Timestamp,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let request = Request {
            now: Some(now),
            ..Request::default()
        };
        let mut c = Conditions::filters(&request, scope);
        let p = c.bind(Value::Text(prefix.to_ascii_uppercase()));
        c.sql
            .push(format!("upper(substr(m.id, 1, length({p}))) = {p}"));
        let limit = c.bind(Value::Integer(limit_value(limit)));
        self.select(c, "memories m", "NULL", &format!("m.id LIMIT {limit}"))
    }

    /// Newest first, filters only. The rows of the page are picked first by
    /// their sort keys alone: sorting every row that passes with all its
    /// columns (provenance, citations) took 60 ms at 10k memories and grew
    /// with the log; the page's columns are then read for its rows only.
    pub(super) fn newest(
        &self,
        request: &Request,
        scope: &Scope,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let mut c = Conditions::filters(request, scope);
        let limit = c.bind(Value::Integer(limit_value(request.limit)));
        let order = format!("m.timestamp DESC, m.id DESC LIMIT {limit}");
        let page = format!(
            "m.rowid IN (SELECT m.rowid FROM memories m LEFT JOIN provenance p ON {LINE_PROVENANCE}
                         WHERE {} ORDER BY {order})",
            c.sql.join(" AND ")
        );
        c.sql = vec![page];
        self.select(c, "memories m", "NULL", &order)
    }
}
