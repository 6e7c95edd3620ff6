//! Recall from the index: filters in SQL, BM25 ranking from FTS5.

use rusqlite::types::Value;
use serde::Serialize;

use super::{Index, IndexError};
use crate::recall::Request;

/// Which workspaces a recall searches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// These workspace ids.
    Workspaces(Vec<i64>),
    /// Every workspace in the index.
    All,
}

/// The commit that introduced a memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    pub commit: String,
    pub author: String,
    pub date: String,
}

/// One recalled memory, as stored in the index. Field names are stable
/// (`recall --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexedMemory {
    pub id: String,
    pub timestamp: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub content: String,
    pub source: Option<String>,
    pub tags: Vec<String>,
    pub author: Option<String>,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub files: Vec<String>,
    pub workspace: String,
    /// File inside the memory folder, and 1-based line.
    pub file: String,
    pub line: i64,
    /// The commit that introduced the memory; `null` while uncommitted.
    pub introduced: Option<Provenance>,
    /// Keyword relevance in [0, 1): BM25 mapped through x/(1+x); 1 without a query.
    pub score: f64,
}

impl Index {
    /// Runs `request` over `scope`.
    pub fn recall(
        &self,
        request: &Request,
        scope: &Scope,
    ) -> Result<Vec<IndexedMemory>, IndexError> {
        let mut conditions: Vec<String> = vec![
            "NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = m.workspace_id AND t.forgets = m.id)".into(),
        ];
        let mut values: Vec<Value> = Vec::new();
        let mut bind = |value: Value| {
            values.push(value);
            format!("?{}", values.len())
        };
        let match_query = request.query.as_deref().and_then(fts_query);
        let from = match &match_query {
            Some(query) => {
                let placeholder = bind(Value::Text(query.clone()));
                conditions.push(format!("memories_fts MATCH {placeholder}"));
                "memories_fts JOIN memories m ON m.rowid = memories_fts.rowid"
            }
            None => "memories m",
        };
        if request.query.is_some() && match_query.is_none() {
            return Ok(Vec::new());
        }
        if let Scope::Workspaces(ids) = scope {
            let list: Vec<String> = ids.iter().map(|id| bind(Value::Integer(*id))).collect();
            conditions.push(format!("m.workspace_id IN ({})", list.join(", ")));
        }
        if let Some(since) = request.since {
            conditions.push(format!(
                "m.ts_ms >= {}",
                bind(Value::Integer(since.as_millisecond()))
            ));
        }
        if let Some(until) = request.until {
            conditions.push(format!(
                "m.ts_ms <= {}",
                bind(Value::Integer(until.as_millisecond()))
            ));
        }
        if !request.kinds.is_empty() {
            let list: Vec<String> = request
                .kinds
                .iter()
                .map(|k| bind(Value::Text(k.clone())))
                .collect();
            conditions.push(format!("m.type IN ({})", list.join(", ")));
        }
        for tag in &request.tags {
            let placeholder = bind(Value::Text(tag.to_lowercase()));
            conditions.push(format!(
                "EXISTS (SELECT 1 FROM json_each(m.tags) WHERE lower(json_each.value) = {placeholder})"
            ));
        }
        if let Some(author) = &request.author {
            let placeholder = bind(Value::Text(format!("%{}%", author.to_lowercase())));
            conditions.push(format!(
                "(lower(coalesce(m.author, '')) LIKE {placeholder} OR lower(coalesce(p.author, '')) LIKE {placeholder})"
            ));
        }
        let (score, order) = if match_query.is_some() {
            (
                "bm25(memories_fts, 1.0, 2.0, 0.5)",
                "rank_value ASC, m.timestamp DESC, m.id DESC",
            )
        } else {
            ("0.0", "m.timestamp DESC, m.id DESC")
        };
        let limit = bind(Value::Integer(
            i64::try_from(request.limit).unwrap_or(i64::MAX),
        ));
        let sql = format!(
            "SELECT m.id, m.timestamp, m.type, m.content, m.source, m.tags, m.author, m.branch, m.commit_id,
                    m.files, w.name, m.file, m.line, p.commit_id, p.author, p.date, {score} AS rank_value
             FROM {from}
             JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN provenance p ON p.workspace_id = m.workspace_id AND p.id = m.id
             WHERE {}
             ORDER BY {order}
             LIMIT {limit}",
            conditions.join(" AND ")
        );
        let mut statement = self.conn.prepare(&sql).map_err(self.sqlite())?;
        let rows = statement
            .query_map(rusqlite::params_from_iter(values), |row| {
                let list = |index: usize| -> rusqlite::Result<Vec<String>> {
                    let text: String = row.get(index)?;
                    Ok(serde_json::from_str(&text).unwrap_or_default())
                };
                let introduced = match row.get::<_, Option<String>>(13)? {
                    Some(commit) => Some(Provenance {
                        commit,
                        author: row.get(14)?,
                        date: row.get(15)?,
                    }),
                    None => None,
                };
                let rank: f64 = row.get(16)?;
                let relevance = -rank;
                Ok(IndexedMemory {
                    id: row.get(0)?,
                    timestamp: row.get(1)?,
                    kind: row.get(2)?,
                    content: row.get(3)?,
                    source: row.get(4)?,
                    tags: list(5)?,
                    author: row.get(6)?,
                    branch: row.get(7)?,
                    commit: row.get(8)?,
                    files: list(9)?,
                    workspace: row.get(10)?,
                    file: row.get(11)?,
                    line: row.get(12)?,
                    introduced,
                    score: if match_query.is_some() {
                        relevance.max(0.0) / (1.0 + relevance.max(0.0))
                    } else {
                        1.0
                    },
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sqlite())?;
        Ok(rows)
    }
}

/// An FTS5 query matching any of the words of `text` (each quoted, so user
/// text never reads as FTS syntax). `None` when `text` has no words.
pub fn fts_query(text: &str) -> Option<String> {
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
    if words.is_empty() {
        return None;
    }
    Some(
        words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_queries_quote_every_word() {
        assert_eq!(fts_query("WAL mode, wal!").unwrap(), r#""wal" OR "mode""#);
        assert_eq!(
            fts_query("src/auth.rs NOT"),
            Some(r#""src" OR "auth" OR "rs" OR "not""#.into())
        );
        assert_eq!(fts_query(" -- "), None);
    }
}
