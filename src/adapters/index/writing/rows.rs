//! The rows a plan is made against: those of a file, of an id, and the
//! records of an id waiting as duplicates.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, Transaction, params};

use crate::domain::sync_plan::{Duplicate, Row, Waiting};

/// The rows indexed from `file`: id → (record hash, line, flags).
pub(super) fn file_rows(
    tx: &Transaction<'_>,
    workspace_id: i64,
    file: &str,
) -> rusqlite::Result<HashMap<String, (String, i64, String)>> {
    let mut statement = tx.prepare_cached(
        "SELECT id, record_hash, line, flags FROM memories WHERE workspace_id = ?1 AND file = ?2",
    )?;
    let rows = statement.query_map(params![workspace_id, file], |row| {
        Ok((row.get(0)?, (row.get(1)?, row.get(2)?, row.get(3)?)))
    })?;
    rows.collect()
}

/// The indexed record of `id`, if there is one.
pub(super) fn row_of(
    tx: &Transaction<'_>,
    workspace_id: i64,
    id: &str,
) -> rusqlite::Result<Option<Row>> {
    tx.prepare_cached(
        "SELECT file, record_hash, line, flags FROM memories WHERE workspace_id = ?1 AND id = ?2",
    )?
    .query_row(params![workspace_id, id], |row| {
        Ok(Row {
            file: row.get(0)?,
            record_hash: row.get(1)?,
            line: row.get(2)?,
            flags: row.get(3)?,
        })
    })
    .optional()
}

/// The ids indexed from `file` that also wait in a file sorting before it:
/// rows a retake moved (`Writing::retake`).
pub(super) fn retaken_from(
    tx: &Transaction<'_>,
    workspace_id: i64,
    file: &str,
) -> rusqlite::Result<HashSet<String>> {
    let mut statement = tx.prepare_cached(
        "SELECT DISTINCT d.id FROM duplicates d
           JOIN memories m ON m.workspace_id = d.workspace_id AND m.id = d.id
          WHERE d.workspace_id = ?1 AND m.file = ?2 AND d.file < ?2",
    )?;
    let ids = statement.query_map(params![workspace_id, file], |row| row.get(0))?;
    ids.collect()
}

/// The records of `id` waiting in `duplicates`.
pub(super) fn duplicates_of(
    tx: &Transaction<'_>,
    workspace_id: i64,
    id: &str,
) -> rusqlite::Result<Vec<Waiting>> {
    let mut statement = tx.prepare_cached(
        "SELECT file, line, record FROM duplicates WHERE workspace_id = ?1 AND id = ?2",
    )?;
    let rows = statement.query_map(params![workspace_id, id], |row| {
        Ok(Waiting::parse(Duplicate {
            id: id.to_owned(),
            file: row.get(0)?,
            line: row.get(1)?,
            record: row.get(2)?,
        }))
    })?;
    rows.collect()
}
