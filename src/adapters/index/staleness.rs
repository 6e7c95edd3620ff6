//! Staleness from the code: a memory whose `files` names a path deleted
//! since it was stored (and not there again at HEAD), whose commit was
//! reverted, or whose branch was deleted without being merged
//! ([`super::branches`]) is `stale`; a path renamed since is followed
//! instead.
//!
//! Computed by sync from the commits it walks anyway (never a history walk
//! per command): [`record`] stores what history found each walked commit
//! did (the paths it deleted, with the path it renamed one to; the commit
//! it reverts). [`weigh`] then has the core judge
//! ([`crate::domain::staleness`]), with what this index recorded and what
//! history answers of the code at HEAD, the memories that may have changed: those the
//! sync wrote or whose provenance it recorded (the trust verdicts' notes),
//! those naming a path that differs between the last HEAD walked and the
//! new one, those a new revert names, those of a branch that went, came
//! back or was judged anew, and every memory with `files` when
//! the history was walked from the start or the policy changed. The verdict
//! is stored on the row (`memories.stale`, schema 11): readers filter on
//! columns.

use std::collections::BTreeSet;

use rusqlite::{OptionalExtension, Transaction, params};

use super::{IndexError, LINE_PROVENANCE};
use crate::domain::config::TrustPolicy;
use crate::domain::staleness::{
    self as judging, Code, CommitChanges, Event, Gone, Judged, Records,
};

pub use crate::domain::staleness::BRANCH_DELETED;

/// Notes what each walked commit (oldest first) deleted, renamed and
/// reverted (history found it: [`CommitChanges`]). Returns the commits the
/// walked ones revert.
pub(super) fn record(
    tx: &Transaction<'_>,
    workspace_id: i64,
    commits: &[CommitChanges],
    sqlite: &dyn Fn(rusqlite::Error) -> IndexError,
) -> Result<Vec<String>, IndexError> {
    let mut insert = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO path_changes (workspace_id, path, commit_id, renamed_to, author, author_name, author_email)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(sqlite)?;
    let mut revert = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO reverts (workspace_id, reverted, commit_id, author, author_name, author_email)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(sqlite)?;
    let mut reverted = Vec::new();
    for commit in commits {
        if let Some(target) = &commit.reverts {
            revert
                .execute(params![
                    workspace_id,
                    target,
                    commit.commit,
                    commit.author,
                    commit.author_name,
                    commit.author_email
                ])
                .map_err(sqlite)?;
            reverted.push(target.clone());
        }
        for (path, renamed_to) in &commit.deleted {
            insert
                .execute(params![
                    workspace_id,
                    path,
                    commit.commit,
                    renamed_to,
                    commit.author,
                    commit.author_name,
                    commit.author_email
                ])
                .map_err(sqlite)?;
        }
    }
    Ok(reverted)
}

/// Which memories the staleness pass judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// Every memory that names files, is stale, that a revert may name, or
    /// of a branch deleted unmerged.
    All,
    /// Those the trust verdicts' triggers noted, those naming a path in
    /// `deleted` (deleted between the last HEAD walked and this one), those
    /// the commits in `reverted` (reverted by the commits just walked) may
    /// name, those stored on one of `branches`, and those whose citations'
    /// verdicts just changed (`cited`).
    Changed {
        deleted: Vec<String>,
        reverted: Vec<String>,
        branches: Vec<String>,
        cited: Vec<String>,
    },
}

/// A memory's verdict as its row stores it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Verdict {
    stale: String,
    file: Option<String>,
    commit: Option<String>,
    outside: bool,
    moved: String,
}

/// Judges the memories `due` names against HEAD (`code`: what history
/// answers of it; `None`, no commit yet: nothing is stale) and stores what
/// changed. Returns how many rows changed.
pub(super) fn weigh(
    tx: &Transaction<'_>,
    workspace_id: i64,
    mut code: Option<&mut dyn Code>,
    due: Due,
    policy: Option<&TrustPolicy>,
    sqlite: &dyn Fn(rusqlite::Error) -> IndexError,
) -> Result<usize, IndexError> {
    let ids = due_ids(tx, workspace_id, &due, sqlite)?;
    if ids.is_empty() {
        return Ok(0);
    }
    let mut recorded = Recorded {
        tx,
        workspace_id,
        unmerged: match code {
            Some(_) => super::branches::unmerged(tx, workspace_id).map_err(sqlite)?,
            None => std::collections::BTreeMap::new(),
        },
    };
    let mut row = tx
        .prepare_cached(&format!(
            "SELECT m.rowid, m.files, m.commit_id, p.commit_id,
                    m.stale, m.stale_file, m.stale_commit, m.stale_outside, m.moved, m.branch,
                    {cites}
             FROM memories m
             LEFT JOIN provenance p ON {LINE_PROVENANCE}
             WHERE m.workspace_id = ?1 AND m.id = ?2",
            cites = super::cites::JUDGED
        ))
        .map_err(sqlite)?;
    let mut update = tx
        .prepare_cached(
            "UPDATE memories SET stale = ?2, stale_file = ?3, stale_commit = ?4,
               stale_outside = ?5, moved = ?6 WHERE rowid = ?1",
        )
        .map_err(sqlite)?;
    let mut changed = 0;
    for id in ids {
        let Some(judged) = row
            .query_row(params![workspace_id, id], JudgedRow::of)
            .optional()
            .map_err(sqlite)?
        else {
            continue;
        };
        let files: Vec<String> = serde_json::from_str(&judged.files).unwrap_or_default();
        let cites = judged
            .cites
            .as_deref()
            .map(super::cites::of)
            .unwrap_or_default();
        let verdict = match code.as_deref_mut() {
            Some(code) => {
                let memory = Judged {
                    files: &files,
                    cites: &cites,
                    commit_field: judged.commit_field.as_deref(),
                    introduced: judged.introduced.as_deref(),
                    branch: judged.branch.as_deref(),
                };
                let verdict = judging::judge(memory, code, &mut recorded, policy);
                Verdict::of(verdict.map_err(sqlite)?)
            }
            None => Verdict::of(judging::Verdict::default()),
        };
        if verdict != judged.stored {
            update
                .execute(params![
                    judged.rowid,
                    verdict.stale,
                    verdict.file,
                    verdict.commit,
                    verdict.outside,
                    verdict.moved
                ])
                .map_err(sqlite)?;
            changed += 1;
        }
    }
    Ok(changed)
}

impl Verdict {
    /// The core's verdict as the row stores it (`moved` as JSON pairs).
    fn of(verdict: judging::Verdict) -> Verdict {
        Verdict {
            stale: verdict.stale,
            file: verdict.file,
            commit: verdict.commit,
            outside: verdict.outside,
            moved: serde_json::to_string(&verdict.moved).expect("pairs of strings serialize"),
        }
    }
}

/// What judging a memory reads of its row, and the verdict it stores.
struct JudgedRow {
    rowid: i64,
    /// The files it names, as JSON.
    files: String,
    commit_field: Option<String>,
    introduced: Option<String>,
    stored: Verdict,
    branch: Option<String>,
    /// Its citations as the last check judged them ([`super::cites::JUDGED`]).
    cites: Option<String>,
}

impl JudgedRow {
    fn of(row: &rusqlite::Row<'_>) -> rusqlite::Result<JudgedRow> {
        Ok(JudgedRow {
            rowid: row.get(0)?,
            files: row.get(1)?,
            commit_field: row.get(2)?,
            introduced: row.get(3)?,
            stored: Verdict {
                stale: row.get(4)?,
                file: row.get(5)?,
                commit: row.get(6)?,
                outside: row.get(7)?,
                moved: row.get(8)?,
            },
            branch: row.get(9)?,
            cites: row.get(10)?,
        })
    }
}

/// The ids of the memories to judge.
fn due_ids(
    tx: &Transaction<'_>,
    workspace_id: i64,
    due: &Due,
    sqlite: &dyn Fn(rusqlite::Error) -> IndexError,
) -> Result<BTreeSet<String>, IndexError> {
    let rows = Rows {
        tx,
        workspace_id,
        sqlite,
    };
    let mut ids = BTreeSet::new();
    // Judged again whenever HEAD may have moved: few (a partial index).
    ids.extend(rows.ids(
        "SELECT id FROM memories WHERE workspace_id = ?1 AND (stale <> '' OR moved <> '[]') AND ?2",
        &true,
    )?);
    let reverted: Vec<String> = match due {
        Due::All => {
            // Only a path some commit deleted can make a memory stale or
            // moved: the others' verdict is the default, which they hold
            // unless they are stale or moved already (above).
            ids.extend(rows.ids(
                "SELECT DISTINCT f.id FROM memory_files f
                 WHERE f.workspace_id = ?1 AND ?2
                   AND EXISTS (SELECT 1 FROM path_changes c
                               WHERE c.workspace_id = f.workspace_id AND c.path = f.path)",
                &true,
            )?);
            ids.extend(rows.ids(
                "SELECT DISTINCT id FROM memory_cites
                 WHERE workspace_id = ?1 AND ?2 AND verdict IN ('changed', 'gone')",
                &true,
            )?);
            ids.extend(rows.ids(
                "SELECT m.id FROM branches b JOIN memories m
                   ON m.workspace_id = b.workspace_id AND m.branch = b.name
                 WHERE b.workspace_id = ?1 AND b.gone AND b.merged = 0 AND ?2",
                &true,
            )?);
            rows.ids(
                "SELECT DISTINCT reverted FROM reverts WHERE workspace_id = ?1 AND ?2",
                &true,
            )?
        }
        Due::Changed {
            deleted,
            reverted,
            branches,
            cited,
        } => {
            ids.extend(cited.iter().cloned());
            changed_ids(&rows, deleted, reverted, branches, &mut ids)?
        }
    };
    if !reverted.is_empty() {
        naming_reverted(&rows, &reverted, &mut ids)?;
    }
    Ok(ids)
}

/// The index's rows of one workspace, in the sync's transaction.
struct Rows<'a, 't> {
    tx: &'a Transaction<'t>,
    workspace_id: i64,
    sqlite: &'a dyn Fn(rusqlite::Error) -> IndexError,
}

impl Rows<'_, '_> {
    /// The first column of what `sql` selects, with the workspace's id as
    /// `?1` and `value` as `?2`.
    fn ids(&self, sql: &str, value: &dyn rusqlite::ToSql) -> Result<Vec<String>, IndexError> {
        self.tx
            .prepare_cached(sql)
            .and_then(|mut statement| {
                statement
                    .query_map(params![self.workspace_id, value], |row| row.get(0))?
                    .collect()
            })
            .map_err(self.sqlite)
    }
}

/// Under [`Due::Changed`]: the memories stored on the branches given, those
/// the trust verdicts' triggers noted, and those naming a path deleted
/// between the two HEADs. Returns the commits reverted, with those a revert
/// of a revert changes.
fn changed_ids(
    rows: &Rows<'_, '_>,
    deleted: &[String],
    reverted: &[String],
    branches: &[String],
    ids: &mut BTreeSet<String>,
) -> Result<Vec<String>, IndexError> {
    for branch in branches {
        ids.extend(rows.ids(
            "SELECT id FROM memories WHERE workspace_id = ?1 AND branch = ?2",
            branch,
        )?);
    }
    rows.tx
        .execute_batch(super::verdicts::DUE)
        .map_err(rows.sqlite)?;
    ids.extend(rows.ids(
        "SELECT id FROM temp.verdicts_due WHERE workspace_id = ?1 AND ?2",
        &true,
    )?);
    // A path added back concerns the memories it made stale, judged
    // above; one deleted, those that name it.
    for path in deleted {
        ids.extend(rows.ids(
            "SELECT id FROM memory_files WHERE workspace_id = ?1 AND path = ?2",
            path,
        )?);
    }
    // A revert of a revert changes what the first one reverted.
    let mut targets = reverted.to_vec();
    for target in reverted {
        targets.extend(rows.ids(
            "SELECT reverted FROM reverts WHERE workspace_id = ?1 AND commit_id = ?2",
            target,
        )?);
    }
    Ok(targets)
}

/// One pass over the workspace's memories for every reverted commit:
/// those whose introducing commit is one, or whose `commit` field
/// (abbreviated or not) starts like one. Judging says exactly.
fn naming_reverted(
    rows: &Rows<'_, '_>,
    reverted: &[String],
    ids: &mut BTreeSet<String>,
) -> Result<(), IndexError> {
    let sqlite = rows.sqlite;
    let full: std::collections::HashSet<&str> = reverted.iter().map(String::as_str).collect();
    let prefixes: std::collections::HashSet<&str> =
        reverted.iter().filter_map(|sha| sha.get(..7)).collect();
    let mut statement = rows
        .tx
        .prepare_cached(&format!(
            "SELECT m.id, lower(m.commit_id), p.commit_id FROM memories m
                 LEFT JOIN provenance p ON {LINE_PROVENANCE}
                 WHERE m.workspace_id = ?1 AND (m.commit_id IS NOT NULL OR p.commit_id IS NOT NULL)"
        ))
        .map_err(sqlite)?;
    let mut found = statement
        .query(params![rows.workspace_id])
        .map_err(sqlite)?;
    while let Some(row) = found.next().map_err(sqlite)? {
        let field: Option<String> = row.get(1).map_err(sqlite)?;
        let introduced: Option<String> = row.get(2).map_err(sqlite)?;
        let named = introduced.as_deref().is_some_and(|c| full.contains(c))
            || field
                .as_deref()
                .and_then(|field| field.get(..7))
                .is_some_and(|prefix| prefixes.contains(prefix));
        if named {
            ids.insert(row.get(0).map_err(sqlite)?);
        }
    }
    Ok(())
}

/// What judging memories reads of this index: the deletions, reverts and
/// gone branches recorded.
struct Recorded<'a, 't> {
    tx: &'a Transaction<'t>,
    workspace_id: i64,
    /// The branches deleted without being merged.
    unmerged: std::collections::BTreeMap<String, Gone>,
}

impl Records for Recorded<'_, '_> {
    type Error = rusqlite::Error;

    fn deletion(&mut self, path: &str) -> rusqlite::Result<Option<Event>> {
        self.tx
            .prepare_cached(
                "SELECT commit_id, renamed_to, author, author_name, author_email FROM path_changes
                 WHERE workspace_id = ?1 AND path = ?2 ORDER BY seq DESC LIMIT 1",
            )?
            .query_row(params![self.workspace_id, path], |row| {
                Ok(Event {
                    commit: row.get(0)?,
                    renamed_to: row.get(1)?,
                    author: row.get(2)?,
                    author_name: row.get(3)?,
                    author_email: row.get(4)?,
                })
            })
            .optional()
    }

    fn reverts(
        &mut self,
        commit_field: Option<&str>,
        introduced: Option<&str>,
    ) -> rusqlite::Result<Vec<Event>> {
        let field = commit_field
            .map(str::to_ascii_lowercase)
            .filter(|field| field.len() >= 7 && field.bytes().all(|b| b.is_ascii_hexdigit()));
        self.tx
            .prepare_cached(
                "SELECT r.commit_id, r.author, r.author_name, r.author_email FROM reverts r
                 WHERE r.workspace_id = ?1
                   AND (r.reverted = ?2 OR (?3 IS NOT NULL AND substr(r.reverted, 1, length(?3)) = ?3))
                   AND NOT EXISTS (SELECT 1 FROM reverts again
                                   WHERE again.workspace_id = r.workspace_id AND again.reverted = r.commit_id)
                 ORDER BY r.commit_id",
            )?
            .query_map(params![self.workspace_id, introduced, field], |row| {
                Ok(Event {
                    commit: row.get(0)?,
                    renamed_to: None,
                    author: row.get(1)?,
                    author_name: row.get(2)?,
                    author_email: row.get(3)?,
                })
            })?
            .collect()
    }

    fn gone_unmerged(&self, name: &str) -> Option<Gone> {
        self.unmerged.get(name).cloned()
    }
}
