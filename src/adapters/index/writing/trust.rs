//! The trust a sync stores: the policy in effect, and the id of a line
//! committed first given back to it (`retake`).

use rusqlite::{Transaction, params};

use super::write_memory;
use crate::domain::config::TrustPolicy;
use crate::domain::memory::Memory;
use crate::domain::sync_plan;

/// Stores the workspace's trust policy (what recall checks provenance
/// against) when it differs from the one stored; says whether it did.
pub(super) fn store_policy(
    tx: &Transaction<'_>,
    workspace_id: i64,
    policy: Option<&TrustPolicy>,
) -> rusqlite::Result<bool> {
    let (stored, signed): (bool, bool) = tx.query_row(
        "SELECT trust_policy, trust_signed FROM workspaces WHERE id = ?1",
        params![workspace_id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let mut patterns: Vec<String> = tx
        .prepare_cached("SELECT pattern FROM trust_authors WHERE workspace_id = ?1")?
        .query_map(params![workspace_id], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    patterns.sort();
    let wanted = policy.map(|policy| {
        let mut authors = policy.authors.clone();
        authors.sort();
        (authors, policy.signed)
    });
    let current = stored.then_some((patterns, signed));
    if wanted == current {
        return Ok(false);
    }
    tx.execute(
        "UPDATE workspaces SET trust_policy = ?2, trust_signed = ?3 WHERE id = ?1",
        params![
            workspace_id,
            policy.is_some(),
            policy.is_some_and(|policy| policy.signed)
        ],
    )?;
    tx.execute(
        "DELETE FROM trust_authors WHERE workspace_id = ?1",
        params![workspace_id],
    )?;
    for pattern in policy.iter().flat_map(|policy| &policy.authors) {
        tx.execute(
            "INSERT OR IGNORE INTO trust_authors (workspace_id, pattern) VALUES (?1, ?2)",
            params![workspace_id, pattern],
        )?;
    }
    Ok(true)
}

/// Gives `swap.id` to the line committed first (`first`, flagged
/// `flags`): its duplicate row goes, its memory row replaces the row's,
/// and the row's own line (`row_record`) waits as a duplicate.
pub(super) fn retake(
    tx: &Transaction<'_>,
    workspace_id: i64,
    swap: &Swap,
    first: &Memory,
    flags: &str,
    row_record: &str,
) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM duplicates WHERE workspace_id = ?1 AND id = ?2 AND file = ?3")?
        .execute(params![workspace_id, swap.id, swap.first_file])?;
    tx.prepare_cached("DELETE FROM memories WHERE workspace_id = ?1 AND id = ?2")?
        .execute(params![workspace_id, swap.id])?;
    write_memory(
        tx,
        workspace_id,
        &swap.first_file,
        first,
        swap.first_line,
        sync_plan::record_hash(&swap.first_record).to_hex().as_str(),
        flags,
    )?;
    tx.prepare_cached(
        "INSERT OR REPLACE INTO duplicates (workspace_id, id, file, line, record, record_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        workspace_id,
        swap.id,
        swap.row_file,
        swap.row_line,
        row_record,
        swap.row_hash
    ])?;
    Ok(())
}

/// A row's id that a waiting line of another text, committed before the
/// row's line, holds too: the row's place and the first line's.
pub struct Swap {
    pub id: String,
    pub row_file: String,
    pub row_line: i64,
    pub row_hash: String,
    pub first_file: String,
    pub first_line: i64,
    pub first_record: String,
}

/// Each id whose row a waiting line committed earlier should take: the
/// first such line of each id.
pub(super) fn ids_to_retake(
    tx: &Transaction<'_>,
    workspace_id: i64,
) -> rusqlite::Result<Vec<Swap>> {
    let mut swaps: Vec<Swap> = Vec::new();
    let mut statement = tx.prepare_cached(
        "SELECT m.id, m.file, m.line, m.record_hash, d.file, d.line, d.record
         FROM memories m
         JOIN duplicates d ON d.workspace_id = m.workspace_id AND d.id = m.id
            AND d.record_hash <> m.record_hash
         JOIN provenance pd ON pd.workspace_id = d.workspace_id AND pd.id = d.id
            AND pd.record_hash = d.record_hash
         LEFT JOIN provenance p ON p.workspace_id = m.workspace_id AND p.id = m.id
            AND p.record_hash = m.record_hash
         WHERE m.workspace_id = ?1 AND (p.seq IS NULL OR pd.seq < p.seq)
         ORDER BY m.id, pd.seq, d.file",
    )?;
    let rows = statement.query_map(params![workspace_id], |row| {
        Ok(Swap {
            id: row.get(0)?,
            row_file: row.get(1)?,
            row_line: row.get(2)?,
            row_hash: row.get(3)?,
            first_file: row.get(4)?,
            first_line: row.get(5)?,
            first_record: row.get(6)?,
        })
    })?;
    for swap in rows {
        let swap = swap?;
        if swaps.last().is_none_or(|last| last.id != swap.id) {
            swaps.push(swap);
        }
    }
    Ok(swaps)
}
