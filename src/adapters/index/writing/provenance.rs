//! What the walk of the history records (`crate::adapters::sync`'s walk
//! hands it the facts): for each memory line (its id and the hash of its
//! text) the commit that introduced it, its author, committer, date and
//! signature; the changes of the trust policy that did not take effect;
//! the policy in effect where the walk stopped; the shallow boundary seen.

use rusqlite::{OptionalExtension, params};

use super::{IndexError, Writing};
use crate::domain::config::TrustPolicy;
use crate::domain::policy_history::Effective;

/// The provenance of one memory line, as the walk found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvenanceRow<'a> {
    /// The line's memory id.
    pub id: &'a str,
    /// The hash of the line's canonical text.
    pub record_hash: &'a str,
    pub commit_id: String,
    /// The commit's author as `Name <email>`.
    pub author: &'a str,
    pub date: &'a str,
    pub author_name: &'a str,
    pub author_email: &'a str,
    pub committer: &'a str,
    /// The signature's state, by name.
    pub signature: &'static str,
    /// An SSH principal, or the email of a GPG user id: what the policy's
    /// author patterns are matched against.
    pub signer: String,
    /// Where history shows the line: what tells which of two lines of one
    /// id came first.
    pub seq: i64,
    /// The commit is a shallow clone's boundary.
    pub shallow: bool,
}

/// Where the index holds a line now: its file and line number.
pub type Located = (String, i64);

impl Writing<'_> {
    /// The policy in effect at the commit the last walk reached, with the
    /// path of the signers file it followed; `None` before any walk.
    pub fn history_policy(&self) -> Result<Option<(Effective, Option<String>)>, IndexError> {
        history_policy(&self.tx, self.id()).map_err(self.sqlite())
    }

    /// Stores the policy in effect where the walk stopped.
    pub fn store_history_policy(
        &self,
        effective: &Effective,
        signers_path: Option<&str>,
    ) -> Result<(), IndexError> {
        store_history_policy(&self.tx, self.id(), effective, signers_path).map_err(self.sqlite())
    }

    /// Every commit whose work the index recorded (an introduced line, a
    /// policy change, a path changed, a revert).
    pub fn commits_recorded(&self) -> Result<Vec<String>, IndexError> {
        let recorded = BY_COMMIT
            .map(|table| format!("SELECT commit_id FROM {table} WHERE workspace_id = ?1"))
            .join(" UNION ");
        self.tx
            .prepare_cached(&recorded)
            .and_then(|mut statement| {
                statement
                    .query_map(params![self.id()], |row| row.get(0))?
                    .collect()
            })
            .map_err(self.sqlite())
    }

    /// Forgets what `commit` introduced, changed, deleted or reverted.
    pub fn forget_commit(&self, commit: &str) -> Result<(), IndexError> {
        for table in BY_COMMIT {
            self.tx
                .prepare_cached(&format!(
                    "DELETE FROM {table} WHERE workspace_id = ?1 AND commit_id = ?2"
                ))
                .and_then(|mut statement| statement.execute(params![self.id(), commit]))
                .map_err(self.sqlite())?;
        }
        Ok(())
    }

    /// Forgets every line's provenance (a walk from the start finds it
    /// again).
    pub fn clear_provenance(&self) -> Result<(), IndexError> {
        self.tx
            .execute(
                "DELETE FROM provenance WHERE workspace_id = ?1",
                params![self.id()],
            )
            .map(|_| ())
            .map_err(self.sqlite())
    }

    /// The place in history's order after every one recorded.
    pub fn next_seq(&self) -> Result<i64, IndexError> {
        self.tx
            .query_row(
                "SELECT coalesce(max(seq), 0) + 1 FROM provenance WHERE workspace_id = ?1",
                params![self.id()],
                |row| row.get(0),
            )
            .map_err(self.sqlite())
    }

    /// Renumbers the lines each recorded commit introduced by its place
    /// `position_of` gives (by commit id); a commit it has no place for
    /// keeps its number.
    pub fn renumber(&self, position_of: impl Fn(&str) -> Option<i64>) -> Result<(), IndexError> {
        let recorded: Vec<String> = self
            .tx
            .prepare_cached("SELECT DISTINCT commit_id FROM provenance WHERE workspace_id = ?1")
            .and_then(|mut statement| {
                statement
                    .query_map(params![self.id()], |row| row.get(0))?
                    .collect()
            })
            .map_err(self.sqlite())?;
        let mut renumber = self
            .tx
            .prepare_cached(
                "UPDATE provenance SET seq = ?3 WHERE workspace_id = ?1 AND commit_id = ?2",
            )
            .map_err(self.sqlite())?;
        for commit in recorded {
            if let Some(at) = position_of(&commit) {
                renumber
                    .execute(params![self.id(), commit, at])
                    .map_err(self.sqlite())?;
            }
        }
        Ok(())
    }

    /// For each line (id, record hash): the commit recorded as introducing
    /// it and its place in history's order, if any.
    pub fn recorded_provenance<'l>(
        &self,
        lines: impl IntoIterator<Item = (&'l str, &'l str)>,
    ) -> Result<Vec<Option<(String, i64)>>, IndexError> {
        self.by_line(
            "SELECT commit_id, seq FROM provenance WHERE workspace_id = ?1 AND id = ?2 AND record_hash = ?3",
            lines,
        )
    }

    /// Asks `sql` (two columns, of the workspace ?1, id ?2 and record hash
    /// ?3) of each line, in order.
    fn by_line<'l, A: rusqlite::types::FromSql, B: rusqlite::types::FromSql>(
        &self,
        sql: &str,
        lines: impl IntoIterator<Item = (&'l str, &'l str)>,
    ) -> Result<Vec<Option<(A, B)>>, IndexError> {
        let mut statement = self.tx.prepare_cached(sql).map_err(self.sqlite())?;
        lines
            .into_iter()
            .map(|(id, hash)| {
                statement
                    .query_row(params![self.id(), id, hash], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })
                    .optional()
                    .map_err(self.sqlite())
            })
            .collect()
    }

    /// Records the provenance of each line.
    pub fn record_provenance<'r>(
        &self,
        rows: impl IntoIterator<Item = ProvenanceRow<'r>>,
    ) -> Result<(), IndexError> {
        let mut statement = self
            .tx
            .prepare_cached(
                "INSERT OR REPLACE INTO provenance (workspace_id, id, commit_id, author, date,
                   author_name, author_email, committer, signature, signer, record_hash, seq, shallow)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .map_err(self.sqlite())?;
        for row in rows {
            statement
                .execute(params![
                    self.id(),
                    row.id,
                    row.commit_id,
                    row.author,
                    row.date,
                    row.author_name,
                    row.author_email,
                    row.committer,
                    row.signature,
                    row.signer,
                    row.record_hash,
                    row.seq,
                    row.shallow,
                ])
                .map_err(self.sqlite())?;
        }
        Ok(())
    }

    /// Where the index holds each line (id, record hash) now, if it does.
    pub fn located<'l>(
        &self,
        lines: impl IntoIterator<Item = (&'l str, &'l str)>,
    ) -> Result<Vec<Option<Located>>, IndexError> {
        self.by_line(
            "SELECT file, line FROM memories WHERE workspace_id = ?1 AND id = ?2 AND record_hash = ?3",
            lines,
        )
    }

    /// Records a change of the trust policy that did not take effect, and
    /// why.
    pub fn record_policy_change(
        &self,
        commit_id: &str,
        author: &str,
        date: &str,
        why: &str,
    ) -> Result<(), IndexError> {
        self.tx
            .prepare_cached(
                "INSERT OR REPLACE INTO policy_changes (workspace_id, commit_id, author, date, why) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut statement| {
                statement.execute(params![self.id(), commit_id, author, date, why])
            })
            .map(|_| ())
            .map_err(self.sqlite())
    }

    /// The shallow boundary the last walk saw, as
    /// `workspaces.shallow_boundary` keeps it: the sorted commit ids, one
    /// per line; empty in a complete clone.
    pub fn shallow_boundary(&self) -> Result<String, IndexError> {
        self.tx
            .query_row(
                "SELECT shallow_boundary FROM workspaces WHERE id = ?1",
                params![self.id()],
                |row| row.get(0),
            )
            .map_err(self.sqlite())
    }

    /// Stores the shallow boundary this walk saw.
    pub fn store_shallow_boundary(&self, boundary: &str) -> Result<(), IndexError> {
        self.tx
            .execute(
                "UPDATE workspaces SET shallow_boundary = ?2 WHERE id = ?1",
                params![self.id(), boundary],
            )
            .map(|_| ())
            .map_err(self.sqlite())
    }
}

/// The policy in effect at the commit the last walk reached
/// (`workspaces.history_trust`), with the path of the signers file it
/// followed; `None` before any walk.
pub(super) fn history_policy(
    tx: &rusqlite::Connection,
    workspace_id: i64,
) -> rusqlite::Result<Option<(Effective, Option<String>)>> {
    let stored: Option<String> = tx.query_row(
        "SELECT history_trust FROM workspaces WHERE id = ?1",
        params![workspace_id],
        |row| row.get(0),
    )?;
    Ok(stored.and_then(|json| {
        let value: serde_json::Value = serde_json::from_str(&json).ok()?;
        let policy = match value.get("policy") {
            Some(serde_json::Value::Object(policy)) => Some(TrustPolicy {
                authors: policy
                    .get("authors")?
                    .as_array()?
                    .iter()
                    .map(|author| author.as_str().map(str::to_owned))
                    .collect::<Option<_>>()?,
                signed: policy.get("signed")?.as_bool()?,
            }),
            _ => None,
        };
        let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        Some((
            Effective {
                policy,
                root: value.get("root")?.as_str().map(str::to_owned),
                signers: text("signers"),
            },
            text("signers_path"),
        ))
    }))
}

pub(super) fn store_history_policy(
    tx: &rusqlite::Connection,
    workspace_id: i64,
    effective: &Effective,
    signers_path: Option<&str>,
) -> rusqlite::Result<()> {
    let json = serde_json::json!({
        "policy": effective.policy.as_ref().map(|policy| serde_json::json!({
            "authors": policy.authors,
            "signed": policy.signed,
        })),
        "root": effective.root,
        "signers": effective.signers,
        "signers_path": signers_path,
    });
    tx.execute(
        "UPDATE workspaces SET history_trust = ?2 WHERE id = ?1",
        params![workspace_id, json.to_string()],
    )?;
    Ok(())
}

/// The tables that record what a walked commit did, by `commit_id`: who
/// introduced a memory, a change of the trust policy, a path deleted or
/// renamed, a revert.
const BY_COMMIT: [&str; 4] = ["provenance", "policy_changes", "path_changes", "reverts"];
