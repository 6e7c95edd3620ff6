//! The citations a sync checks (`crate::adapters::sync`'s check hands
//! the verdicts): the rows due, and each verdict stored on its row
//! (`memory_cites`, kept from `memories.cites` by triggers).

use rusqlite::params;

use super::{IndexError, Writing};
use crate::adapters::index::LINE_PROVENANCE;
use crate::domain::citation::{self, Anchor, Change, Location};

/// A citation to check: its memory, its place, its anchor and what the
/// last check stored.
#[derive(Debug, Clone)]
pub struct DueCite {
    pub id: String,
    pub n: i64,
    pub anchor: Anchor,
    /// The verdict stored (`None`: never checked).
    pub verdict: Option<String>,
    /// The blob of the file it was judged against (`''`: no file).
    pub checked_blob: Option<String>,
    /// The commit stored as having changed it.
    pub commit: Option<String>,
    /// The path a rename moved its file to, as the last check found.
    pub now_path: Option<String>,
    /// Whether its memory's line is committed (the walk recorded it).
    pub committed: bool,
}

impl Writing<'_> {
    /// Whether any memory of the workspace cites code.
    pub fn cites_any(&self) -> Result<bool, IndexError> {
        self.tx
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM memory_cites WHERE workspace_id = ?1)")
            .and_then(|mut statement| statement.query_row(params![self.id()], |row| row.get(0)))
            .map_err(self.sqlite())
    }

    /// The citations to check: every one (`all`), else those never checked
    /// or not intact at the last check, and those of a path in `paths`.
    pub fn cites_due(&self, paths: &[String], all: bool) -> Result<Vec<DueCite>, IndexError> {
        // `{by}`: the index each read goes through (without it, SQLite
        // reads every citation of the workspace for each).
        let select = |by: &str| {
            format!(
                "SELECT c.id, c.n, c.anchor, c.verdict, c.checked_blob, c.commit_id,
                        EXISTS (SELECT 1 FROM provenance p WHERE {LINE_PROVENANCE}), c.now_path
                 FROM memory_cites c {by}
                 JOIN memories m ON m.workspace_id = c.workspace_id AND m.id = c.id
                 WHERE c.workspace_id = ?1"
            )
        };
        let mut due: std::collections::BTreeMap<(String, i64), DueCite> = Default::default();
        let mut read = |sql: &str, path: Option<&str>| -> rusqlite::Result<()> {
            let mut statement = self.tx.prepare_cached(sql)?;
            let mut rows = match path {
                Some(path) => statement.query(params![self.id(), path])?,
                None => statement.query(params![self.id()])?,
            };
            while let Some(row) = rows.next()? {
                let anchor: String = row.get(2)?;
                // Written by the index from anchors the core read: one
                // that does not read back is left unchecked.
                let Some(anchor) = serde_json::from_str(&anchor)
                    .ok()
                    .and_then(|value| Anchor::from_value(&value).ok())
                else {
                    continue;
                };
                let cite = DueCite {
                    id: row.get(0)?,
                    n: row.get(1)?,
                    anchor,
                    verdict: row.get(3)?,
                    checked_blob: row.get(4)?,
                    commit: row.get(5)?,
                    committed: row.get(6)?,
                    now_path: row.get(7)?,
                };
                due.insert((cite.id.clone(), cite.n), cite);
            }
            Ok(())
        };
        if all {
            read(&select(""), None).map_err(self.sqlite())?;
        } else {
            read(
                &format!(
                    "{} AND (c.verdict IS NULL OR c.verdict NOT IN ('{}', '{}'))",
                    select("INDEXED BY memory_cites_due"),
                    citation::HOLDS,
                    citation::MOVED
                ),
                None,
            )
            .map_err(self.sqlite())?;
            let by_path = format!("{} AND c.path = ?2", select("INDEXED BY memory_cites_path"));
            let by_now_path = format!(
                "{} AND c.now_path = ?2",
                select("INDEXED BY memory_cites_now_path")
            );
            for path in paths {
                read(&by_path, Some(path)).map_err(self.sqlite())?;
                read(&by_now_path, Some(path)).map_err(self.sqlite())?;
            }
        }
        Ok(due.into_values().collect())
    }

    /// Stores a citation's verdict: what the check found at HEAD, in the
    /// file's blob `blob` (`''`: no file) at `now_path` (`None`: its cited
    /// path), and who changed it. Returns whether the row changed.
    pub fn store_cite(
        &self,
        id: &str,
        n: i64,
        anchor: &Anchor,
        found: &Location,
        (blob, now_path): (&str, Option<&str>),
        change: Option<&Change>,
    ) -> Result<bool, IndexError> {
        let lines = found.lines(anchor);
        let change = change.filter(|_| !found.intact());
        self.tx
            .prepare_cached(
                "UPDATE memory_cites SET verdict = ?4, now_start = ?5, now_end = ?6,
                   checked_blob = ?7, commit_id = ?8, author = ?9, author_name = ?10,
                   author_email = ?11, date = ?12, now_path = ?13
                 WHERE workspace_id = ?1 AND id = ?2 AND n = ?3
                   AND (verdict IS NOT ?4 OR now_start IS NOT ?5 OR now_end IS NOT ?6
                        OR checked_blob IS NOT ?7 OR commit_id IS NOT ?8 OR now_path IS NOT ?13)",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    self.id(),
                    id,
                    n,
                    found.name(),
                    lines.map(|l| l.0),
                    lines.map(|l| l.1),
                    blob,
                    change.map(|c| &c.commit),
                    change.map(|c| &c.author),
                    change.map(|c| &c.author_name),
                    change.map(|c| &c.author_email),
                    change.map(|c| &c.date),
                    now_path,
                ])
            })
            .map(|changed| changed > 0)
            .map_err(self.sqlite())
    }

    /// Takes a citation's verdict back (its memory is not committed any
    /// more: judged again once it is). Returns whether the row changed.
    pub fn unjudge_cite(&self, id: &str, n: i64) -> Result<bool, IndexError> {
        self.tx
            .prepare_cached(
                "UPDATE memory_cites SET verdict = NULL, now_start = NULL, now_end = NULL,
                   checked_blob = NULL, commit_id = NULL, author = NULL, author_name = NULL,
                   author_email = NULL, date = NULL, now_path = NULL
                 WHERE workspace_id = ?1 AND id = ?2 AND n = ?3 AND verdict IS NOT NULL",
            )
            .and_then(|mut statement| statement.execute(params![self.id(), id, n]))
            .map(|changed| changed > 0)
            .map_err(self.sqlite())
    }
}
