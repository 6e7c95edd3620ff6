//! What the index knows of a workspace's trust: quarantined and stale
//! counts, policy changes, reused ids, the policy in effect.

use super::*;

impl Index {
    /// How many live memories of a workspace are quarantined
    /// ([`Trust::Untrusted`]).
    pub fn quarantined(&self, workspace_id: i64) -> Result<u64, IndexError> {
        let sql = format!(
            "SELECT count(*) FROM memories m
             JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN provenance p ON {LINE_PROVENANCE}
             WHERE m.workspace_id = ?1
               AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = m.workspace_id AND t.forgets = m.id AND t.counts)
               AND {UNTRUSTED_REASONS} <> '' AND NOT {RELEASED}"
        );
        self.conn
            .query_row(&sql, rusqlite::params![workspace_id], |row| {
                row.get::<_, i64>(0)
            })
            .map(|count| count as u64)
            .map_err(self.sqlite())
    }

    /// How many live memories of a workspace are quarantined `shallow`:
    /// their line is in a shallow clone's boundary commit.
    pub fn shallow_count(&self, workspace_id: i64) -> Result<u64, IndexError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM memories m
                 WHERE m.workspace_id = ?1 AND ',' || m.quarantine || ',' LIKE '%,shallow,%'",
                rusqlite::params![workspace_id],
                |row| row.get::<_, i64>(0),
            )
            .map(|count| count as u64)
            .map_err(self.sqlite())
    }

    /// How many live memories of a workspace are stale (a file they name
    /// deleted since, their commit reverted).
    pub fn stale_count(&self, workspace_id: i64) -> Result<u64, IndexError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM memories m
                 WHERE m.workspace_id = ?1 AND m.stale <> ''
                   AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = m.workspace_id AND t.forgets = m.id AND t.counts)",
                rusqlite::params![workspace_id],
                |row| row.get::<_, i64>(0),
            )
            .map(|count| count as u64)
            .map_err(self.sqlite())
    }

    /// A workspace's citations of live memories by verdict (`holds`,
    /// `moved`, `changed`, `gone`; `""` not checked yet), each with how
    /// many, and how many memories cite code at all.
    pub fn cite_counts(&self, workspace_id: i64) -> Result<(u64, Vec<(String, u64)>), IndexError> {
        let live = "NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = c.workspace_id AND t.forgets = c.id AND t.counts)";
        let memories = self
            .conn
            .query_row(
                &format!(
                    "SELECT count(DISTINCT c.id) FROM memory_cites c WHERE c.workspace_id = ?1 AND {live}"
                ),
                rusqlite::params![workspace_id],
                |row| row.get::<_, i64>(0),
            )
            .map_err(self.sqlite())?;
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT coalesce(c.verdict, ''), count(*) FROM memory_cites c
                 WHERE c.workspace_id = ?1 AND {live}
                 GROUP BY 1 ORDER BY 1"
            ))
            .map_err(self.sqlite())?;
        let counts = statement
            .query_map(rusqlite::params![workspace_id], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)? as u64))
            })
            .map_err(self.sqlite())?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.sqlite())?;
        Ok((memories as u64, counts))
    }

    /// The commits that changed a workspace's trust policy while their
    /// author was outside the policy before them, oldest first.
    pub fn refused_policy_changes(
        &self,
        workspace_id: i64,
    ) -> Result<Vec<RefusedPolicyChange>, IndexError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT commit_id, author, date, why FROM policy_changes WHERE workspace_id = ?1
                 ORDER BY date, commit_id",
            )
            .map_err(self.sqlite())?;
        statement
            .query_map(rusqlite::params![workspace_id], |row| {
                Ok(RefusedPolicyChange {
                    commit: row.get(0)?,
                    author: row.get(1)?,
                    date: row.get(2)?,
                    why: row.get(3)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(self.sqlite())
    }

    /// The lines of a workspace that reuse the id of a memory a line of
    /// another text introduced first: waiting as duplicates behind it (sync
    /// gives the row to the first line), or indexed and quarantined
    /// `id-reused` (the first line could not be read back); at most
    /// `limit`, by file and line.
    pub fn reused_ids(&self, workspace_id: i64, limit: usize) -> Result<Vec<ReusedId>, IndexError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT id, file, line, commit_id, author FROM (
                   SELECT m.id, m.file, m.line, pd.commit_id, pd.author, pd.seq FROM memories m
                   JOIN duplicates d ON d.workspace_id = m.workspace_id AND d.id = m.id
                   JOIN provenance pd ON pd.workspace_id = d.workspace_id AND pd.id = d.id
                     AND pd.record_hash = d.record_hash
                   WHERE m.workspace_id = ?1 AND ',' || m.quarantine || ',' LIKE '%,id-reused,%'
                   GROUP BY m.id HAVING pd.seq = min(pd.seq)
                   UNION ALL
                   SELECT d.id, d.file, d.line, p.commit_id, p.author, p.seq FROM duplicates d
                   JOIN memories m ON m.workspace_id = d.workspace_id AND m.id = d.id
                     AND m.record_hash <> d.record_hash
                   JOIN provenance p ON p.workspace_id = m.workspace_id AND p.id = m.id
                     AND p.record_hash = m.record_hash
                   LEFT JOIN provenance pd ON pd.workspace_id = d.workspace_id AND pd.id = d.id
                     AND pd.record_hash = d.record_hash
                   WHERE d.workspace_id = ?1 AND (pd.seq IS NULL OR p.seq < pd.seq))
                 ORDER BY file, line LIMIT ?2",
            )
            .map_err(self.sqlite())?;
        statement
            .query_map(rusqlite::params![workspace_id, limit as i64], |row| {
                Ok(ReusedId {
                    id: row.get(0)?,
                    file: row.get(1)?,
                    line: row.get(2)?,
                    original_commit: row.get(3)?,
                    original_author: row.get(4)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(self.sqlite())
    }

    /// The trust policy the last sync of a workspace stored (`None`: none,
    /// every author trusted).
    pub fn policy_in_effect(&self, workspace_id: i64) -> Result<Option<TrustPolicy>, IndexError> {
        let (has, signed): (bool, bool) = self
            .conn
            .query_row(
                "SELECT trust_policy, trust_signed FROM workspaces WHERE id = ?1",
                rusqlite::params![workspace_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(self.sqlite())?;
        if !has {
            return Ok(None);
        }
        let mut authors: Vec<String> = self
            .conn
            .prepare("SELECT pattern FROM trust_authors WHERE workspace_id = ?1")
            .and_then(|mut statement| {
                statement
                    .query_map(rusqlite::params![workspace_id], |row| row.get(0))?
                    .collect()
            })
            .map_err(self.sqlite())?;
        authors.sort();
        Ok(Some(TrustPolicy { authors, signed }))
    }
}
