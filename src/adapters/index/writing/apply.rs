//! Apply: write a plan's rows, and the memory rows themselves.

use super::*;

/// Writes a plan in the sync's transaction: the files that left the log,
/// the memory rows in the plan's order, the duplicates that became the
/// indexed record, each file read (its tombstones, releases and duplicates
/// replaced, in name order), and the files' records.
pub(super) fn apply(
    tx: &Transaction<'_>,
    workspace_id: i64,
    plan: &SyncPlan<'_>,
) -> rusqlite::Result<()> {
    for name in &plan.files_removed {
        for statement in CLEAR_FILE {
            tx.prepare_cached(statement)?
                .execute(params![workspace_id, name])?;
        }
        tx.prepare_cached("DELETE FROM files WHERE workspace_id = ?1 AND name = ?2")?
            .execute(params![workspace_id, name])?;
    }
    write_rows(tx, workspace_id, &plan.rows)?;
    for (id, file) in &plan.duplicates_taken {
        tx.prepare_cached(
            "DELETE FROM duplicates WHERE workspace_id = ?1 AND id = ?2 AND file = ?3",
        )?
        .execute(params![workspace_id, id, file])?;
    }
    for read in &plan.files_read {
        write_file_read(tx, workspace_id, read)?;
    }
    for record in &plan.files_recorded {
        let stat = record.stat.unwrap_or(Stat {
            size: -1,
            mtime_ns: -1,
            ctime_ns: -1,
            inode: -1,
        });
        tx.prepare_cached(
            "INSERT INTO files (workspace_id, name, blob_id, size, mtime_ns, ctime_ns, inode, racy)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (workspace_id, name) DO UPDATE SET blob_id = excluded.blob_id,
               size = excluded.size, mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns,
               inode = excluded.inode, racy = excluded.racy",
        )?
        .execute(params![
            workspace_id,
            record.name,
            record.blob,
            stat.size,
            stat.mtime_ns,
            stat.ctime_ns,
            stat.inode,
            record.racy
        ])?;
    }
    Ok(())
}

/// What the index holds of a file besides its memories, cleared when the
/// file is read again or leaves the log.
const CLEAR_FILE: [&str; 3] = [
    "DELETE FROM duplicates WHERE workspace_id = ?1 AND file = ?2",
    "DELETE FROM tombstones WHERE workspace_id = ?1 AND file = ?2",
    "DELETE FROM releases WHERE workspace_id = ?1 AND file = ?2",
];

/// Writes the memory rows in the plan's order.
fn write_rows(
    tx: &Transaction<'_>,
    workspace_id: i64,
    rows: &[RowChange<'_>],
) -> rusqlite::Result<()> {
    for change in rows {
        match change {
            RowChange::Write {
                file,
                line,
                memory,
                record_hash,
                flags,
            } => {
                let record_hash = record_hash.to_hex();
                write_memory(tx, workspace_id, file, memory, *line, &record_hash, flags)?;
            }
            RowChange::MoveLine { id, line } => {
                tx.prepare_cached(
                    "UPDATE memories SET line = ?3 WHERE workspace_id = ?1 AND id = ?2",
                )?
                .execute(params![workspace_id, id, line])?;
            }
            RowChange::Remove { id } => {
                tx.prepare_cached("DELETE FROM memories WHERE workspace_id = ?1 AND id = ?2")?
                    .execute(params![workspace_id, id])?;
            }
        }
    }
    Ok(())
}

/// Replaces a file's tombstones, releases and duplicates with those read.
fn write_file_read(
    tx: &Transaction<'_>,
    workspace_id: i64,
    read: &sync_plan::FileRead<'_>,
) -> rusqlite::Result<()> {
    for statement in CLEAR_FILE {
        tx.prepare_cached(statement)?
            .execute(params![workspace_id, read.name])?;
    }
    for tombstone in &read.tombstones {
        let line = Entry::Tombstone((*tombstone).clone()).to_line();
        tx.prepare_cached(
            "INSERT OR IGNORE INTO tombstones (workspace_id, id, forgets, file, record_hash) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            workspace_id,
            tombstone.id,
            tombstone.forgets,
            read.name,
            sync_plan::record_hash(&line).to_hex().as_str()
        ])?;
    }
    for release in &read.releases {
        let line = Entry::Release((*release).clone()).to_line();
        tx.prepare_cached(
            "INSERT OR IGNORE INTO releases (workspace_id, id, releases, file, record_hash) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            workspace_id,
            release.id,
            release.releases,
            read.name,
            sync_plan::record_hash(&line).to_hex().as_str()
        ])?;
    }
    for duplicate in &read.duplicates {
        tx.prepare_cached(
            "INSERT INTO duplicates (workspace_id, id, file, line, record, record_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            workspace_id,
            duplicate.id,
            duplicate.file,
            duplicate.line,
            duplicate.record,
            sync_plan::record_hash(&duplicate.record).to_hex().as_str()
        ])?;
    }
    Ok(())
}

/// (file, line, id, supersedes) of every memory whose `supersedes` names
/// itself or an id no memory of the workspace has (forgotten ones count as
/// had: the link is right, the memory is gone).
pub(super) fn dangling_supersedes(
    tx: &Transaction<'_>,
    workspace_id: i64,
) -> rusqlite::Result<Vec<(String, i64, String, String)>> {
    let mut statement = tx.prepare_cached(
        // Through the few rows that replace another: without statistics
        // SQLite took `memories_by_file` for the order and read every row.
        "SELECT m.file, m.line, m.id, m.supersedes FROM memories m INDEXED BY memories_by_supersedes
         WHERE m.workspace_id = ?1 AND m.supersedes IS NOT NULL
           AND (m.supersedes = m.id OR NOT EXISTS (
                SELECT 1 FROM memories o WHERE o.workspace_id = m.workspace_id AND o.id = m.supersedes))
         ORDER BY m.file, m.line",
    )?;
    let rows = statement.query_map(params![workspace_id], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })?;
    rows.collect()
}

/// blake3 of the text that gets embedded: the key of the embeddings table.
pub fn content_hash(content: &str) -> String {
    blake3::hash(content.as_bytes()).to_hex().to_string()
}

fn timestamp_ms(timestamp: &str) -> Option<i64> {
    timestamp
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).expect("a list of strings serializes")
}

/// Inserts a memory, or rewrites the row of the same id, whatever file it
/// came from.
pub(super) fn write_memory(
    tx: &Transaction<'_>,
    workspace_id: i64,
    file: &str,
    m: &Memory,
    line: i64,
    record_hash: &str,
    flags: &str,
) -> rusqlite::Result<()> {
    tx
        .prepare_cached(
            "INSERT INTO memories (workspace_id, id, file, line, record_hash, content_hash, timestamp, ts_ms,
               type, content, source, tags, author, branch, commit_id, files, flags, imported, supersedes,
               session, cites)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
               ?20, ?21)
             ON CONFLICT (workspace_id, id) DO UPDATE SET line = excluded.line,
               record_hash = excluded.record_hash, content_hash = excluded.content_hash,
               timestamp = excluded.timestamp, ts_ms = excluded.ts_ms, type = excluded.type,
               content = excluded.content, source = excluded.source, tags = excluded.tags,
               author = excluded.author, branch = excluded.branch, commit_id = excluded.commit_id,
               files = excluded.files, flags = excluded.flags, file = excluded.file,
               imported = excluded.imported, supersedes = excluded.supersedes,
               session = excluded.session, cites = excluded.cites",
        )?
        .execute(params![
            workspace_id,
            m.id,
            file,
            line,
            record_hash,
            content_hash(&m.content),
            m.timestamp,
            timestamp_ms(&m.timestamp),
            m.kind,
            m.content,
            m.source,
            json_list(&m.tags),
            m.author,
            m.branch,
            m.commit,
            json_list(&m.files),
            flags,
            m.extra.contains_key(crate::domain::import::IMPORTED_FROM),
            m.supersedes,
            m.session,
            // The anchors read and checked; one the core cannot read is
            // left out (the record keeps it verbatim).
            crate::domain::citation::to_record(&crate::domain::citation::of_record(&m.extra).anchors)
                .to_string(),
        ])?;
    Ok(())
}
