//! The branches as the index stores them (`branches`, schema 14): what the
//! last sync recorded of each (and whether a memory names one), for the core to compare with what the
//! repository shows now ([`crate::domain::branches`]), and the rows it
//! decided. [`super::staleness`] marks the memories of a gone, unmerged
//! branch `branch-deleted`.

use std::collections::BTreeMap;

use rusqlite::{Transaction, params};

use crate::domain::branches::{Recorded, Seen};
use crate::domain::staleness::Gone;

/// Writes a branch's row.
const UPSERT: &str = "INSERT INTO branches (workspace_id, name, tip, local, gone, merged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (workspace_id, name) DO UPDATE SET tip = excluded.tip, local = excluded.local,
               gone = excluded.gone, merged = excluded.merged";

/// The branches as the last sync recorded them, by name.
pub(super) fn recorded(
    tx: &Transaction<'_>,
    workspace_id: i64,
) -> rusqlite::Result<BTreeMap<String, Recorded>> {
    tx.prepare_cached("SELECT name, tip, local, gone, merged FROM branches WHERE workspace_id = ?1")
        .and_then(|mut statement| {
            statement
                .query_map(params![workspace_id], |row| {
                    Ok((
                        row.get(0)?,
                        Recorded {
                            tip: row.get(1)?,
                            local: row.get(2)?,
                            gone: row.get(3)?,
                            merged: row.get(4)?,
                        },
                    ))
                })?
                .collect()
        })
}

/// Whether a memory of the workspace names the branch `name`.
pub(super) fn named(tx: &Transaction<'_>, workspace_id: i64, name: &str) -> rusqlite::Result<bool> {
    tx.prepare_cached("SELECT 1 FROM memories WHERE workspace_id = ?1 AND branch = ?2 LIMIT 1")?
        .exists(params![workspace_id, name])
}

/// Writes what the sync decided of the branches.
pub(super) fn write(tx: &Transaction<'_>, workspace_id: i64, seen: &Seen) -> rusqlite::Result<()> {
    let mut upsert = tx.prepare_cached(UPSERT)?;
    for row in &seen.write {
        upsert.execute(params![
            workspace_id,
            row.name,
            row.tip,
            row.local,
            row.gone,
            row.merged
        ])?;
    }
    let mut forget =
        tx.prepare_cached("DELETE FROM branches WHERE workspace_id = ?1 AND name = ?2")?;
    for name in &seen.forget {
        forget.execute(params![workspace_id, name])?;
    }
    Ok(())
}

/// The gone branches judged unmerged, by name.
pub(super) fn unmerged(
    tx: &Transaction<'_>,
    workspace_id: i64,
) -> rusqlite::Result<BTreeMap<String, Gone>> {
    tx.prepare_cached(
        "SELECT name, tip, local FROM branches WHERE workspace_id = ?1 AND gone AND merged = 0",
    )?
    .query_map(params![workspace_id], |row| {
        Ok((
            row.get(0)?,
            Gone {
                tip: row.get(1)?,
                local: row.get(2)?,
            },
        ))
    })?
    .collect()
}
