//! The trust verdict of every memory, stored on its row when a sync (or a
//! migration) changes what it depends on, so a recall that leaves
//! quarantined memories out filters on two columns instead of weighing
//! provenance and policy for every row it reads.
//!
//! The verdict is [`crate::domain::memory::verdict`]'s, the one `goldfish
//! review` applies too. What it depends on: the row (`author`, `imported`,
//! its `instruction-like` flag), its provenance, the releases that name it
//! and their own provenance, and the workspace's policy. Connection-local
//! (TEMP) triggers note the memories whose row, provenance or releases a
//! sync writes; [`apply`] weighs those again, or every memory of the
//! workspace when its policy changed.

use rusqlite::{Connection, Transaction, params};

use super::LINE_PROVENANCE;

use crate::domain::config::TrustPolicy;
use crate::domain::memory::verdict::{self, Claim, Origin};

/// Whether the line of memory row `m` (its provenance `p`, by id and line
/// hash) reuses the id of a line of another text that coexists with it (a
/// waiting duplicate) and came first: earlier in history's order
/// (`provenance.seq`), or committed while `m`'s line is not. A line has its own
/// provenance, never its id's.
pub(super) const REUSED: &str = "EXISTS (
    SELECT 1 FROM duplicates d
    JOIN provenance pd ON pd.workspace_id = d.workspace_id AND pd.id = d.id AND pd.record_hash = d.record_hash
    WHERE d.workspace_id = m.workspace_id AND d.id = m.id AND d.record_hash <> m.record_hash
      AND (p.seq IS NULL OR pd.seq < p.seq))";

/// The memories to weigh again: on this connection only (TEMP), created by
/// the first sync or migration that needs it.
pub(super) const DUE: &str = "
CREATE TEMP TABLE IF NOT EXISTS verdicts_due (
    workspace_id INTEGER NOT NULL,
    id           TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id)
) WITHOUT ROWID;
";

/// The triggers that note them: a memory's row written, its provenance
/// recorded, forgotten or placed elsewhere in history's order, a release of it found or gone (or the
/// provenance of a release of it). Each insert skips what is noted
/// already (`WHERE NOT EXISTS`), never relying on `OR IGNORE`: the
/// conflict policy of the statement that fires a trigger overrides the
/// trigger's own (an upsert that writes a row twice in one sync would
/// fail on the second note).
const TRIGGERS: &str = "
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_memory_insert AFTER INSERT ON main.memories BEGIN
    INSERT INTO verdicts_due SELECT new.workspace_id, new.id
    WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d WHERE d.workspace_id = new.workspace_id AND d.id = new.id);
END;
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_memory_update
AFTER UPDATE OF author, imported, flags ON main.memories BEGIN
    INSERT INTO verdicts_due SELECT new.workspace_id, new.id
    WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d WHERE d.workspace_id = new.workspace_id AND d.id = new.id);
END;
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_provenance_insert AFTER INSERT ON main.provenance BEGIN
    INSERT INTO verdicts_due
        SELECT DISTINCT workspace_id, target FROM (
            SELECT new.workspace_id AS workspace_id, new.id AS target
            UNION SELECT workspace_id, releases FROM main.releases
                  WHERE workspace_id = new.workspace_id AND id = new.id) AS due
        WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d
                          WHERE d.workspace_id = due.workspace_id AND d.id = due.target);
END;
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_provenance_delete AFTER DELETE ON main.provenance BEGIN
    INSERT INTO verdicts_due
        SELECT DISTINCT workspace_id, target FROM (
            SELECT old.workspace_id AS workspace_id, old.id AS target
            UNION SELECT workspace_id, releases FROM main.releases
                  WHERE workspace_id = old.workspace_id AND id = old.id) AS due
        WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d
                          WHERE d.workspace_id = due.workspace_id AND d.id = due.target);
END;
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_provenance_seq AFTER UPDATE OF seq ON main.provenance BEGIN
    INSERT INTO verdicts_due SELECT new.workspace_id, new.id
    WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d WHERE d.workspace_id = new.workspace_id AND d.id = new.id);
END;
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_duplicate_insert AFTER INSERT ON main.duplicates BEGIN
    INSERT INTO verdicts_due SELECT new.workspace_id, new.id
    WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d WHERE d.workspace_id = new.workspace_id AND d.id = new.id);
END;
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_duplicate_delete AFTER DELETE ON main.duplicates BEGIN
    INSERT INTO verdicts_due SELECT old.workspace_id, old.id
    WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d WHERE d.workspace_id = old.workspace_id AND d.id = old.id);
END;
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_release_insert AFTER INSERT ON main.releases BEGIN
    INSERT INTO verdicts_due SELECT new.workspace_id, new.releases
    WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d WHERE d.workspace_id = new.workspace_id AND d.id = new.releases);
END;
CREATE TEMP TRIGGER IF NOT EXISTS verdicts_due_release_delete AFTER DELETE ON main.releases BEGIN
    INSERT INTO verdicts_due SELECT old.workspace_id, old.releases
    WHERE NOT EXISTS (SELECT 1 FROM verdicts_due d WHERE d.workspace_id = old.workspace_id AND d.id = old.releases);
END;
";

/// Notes, from now on, the memories whose verdict a write on `conn` may
/// change (once per connection: later calls find the triggers). A sync
/// that will weigh every memory anyway (a workspace seen for the first
/// time) need not: it saves a write per row.
pub(super) fn track(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(DUE)?;
    conn.execute_batch(TRIGGERS)
}

/// Which memories the trust pass weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Those the triggers noted.
    Noted,
    /// Every memory of the workspace (its policy changed, or the index
    /// learned to store verdicts).
    All,
}

/// The policy a workspace's last sync stored: `None` without a `[trust]`
/// section.
pub(super) fn stored_policy(
    tx: &Transaction<'_>,
    workspace_id: i64,
) -> rusqlite::Result<Option<TrustPolicy>> {
    let (has, signed): (bool, bool) = tx.query_row(
        "SELECT trust_policy, trust_signed FROM workspaces WHERE id = ?1",
        params![workspace_id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    if !has {
        return Ok(None);
    }
    let authors = tx
        .prepare_cached("SELECT pattern FROM trust_authors WHERE workspace_id = ?1")?
        .query_map(params![workspace_id], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(TrustPolicy { authors, signed }))
}

/// A provenance row's columns, as [`Origin`] borrows them.
#[derive(Debug, Default)]
struct OriginRow {
    author: String,
    author_name: String,
    author_email: String,
    signature: String,
    signer: String,
    shallow: bool,
}

impl OriginRow {
    fn origin(&self) -> Origin<'_> {
        Origin {
            author: &self.author,
            author_name: &self.author_name,
            author_email: &self.author_email,
            signature: &self.signature,
            signer: &self.signer,
            shallow: self.shallow,
        }
    }

    /// Columns `first..first + 6` of `row` (author, name, email,
    /// signature, signer, shallow), `None` when the memory has no provenance (its
    /// commit column, `first - 1`, is NULL).
    fn read(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Option<OriginRow>> {
        if row.get::<_, Option<String>>(first - 1)?.is_none() {
            return Ok(None);
        }
        Ok(Some(OriginRow {
            author: row.get(first)?,
            author_name: row.get(first + 1)?,
            author_email: row.get(first + 2)?,
            signature: row.get(first + 3)?,
            signer: row.get(first + 4)?,
            shallow: row.get(first + 5)?,
        }))
    }
}

/// Weighs the memories of `workspace_id` that `due` names again and stores
/// what changed (`memories.quarantine`, `memories.released`); the noted
/// ones of the workspace are cleared. Returns how many rows changed.
pub(super) fn apply(tx: &Transaction<'_>, workspace_id: i64, due: Due) -> rusqlite::Result<usize> {
    tx.execute_batch(DUE)?;
    let policy = stored_policy(tx, workspace_id)?;
    let which = match due {
        Due::All => "",
        Due::Noted => {
            "AND m.id IN (SELECT id FROM temp.verdicts_due WHERE workspace_id = m.workspace_id)"
        }
    };
    let sql = format!(
        "SELECT m.rowid, m.id, m.author, m.imported, m.flags, m.quarantine, m.released,
                p.commit_id, p.author, p.author_name, p.author_email, p.signature, p.signer, p.shallow,
                EXISTS (SELECT 1 FROM releases r WHERE r.workspace_id = m.workspace_id AND r.releases = m.id),
                {REUSED}
         FROM memories m
         LEFT JOIN provenance p ON {LINE_PROVENANCE}
         WHERE m.workspace_id = ?1 {which}"
    );
    let mut releases = tx.prepare_cached(
        "SELECT p.commit_id, p.author, p.author_name, p.author_email, p.signature, p.signer, p.shallow
         FROM releases r
         LEFT JOIN provenance p ON p.workspace_id = r.workspace_id AND p.id = r.id
           AND (p.record_hash = r.record_hash OR p.record_hash = '')
         WHERE r.workspace_id = ?1 AND r.releases = ?2",
    )?;
    let mut update =
        tx.prepare_cached("UPDATE memories SET quarantine = ?2, released = ?3 WHERE rowid = ?1")?;
    let mut statement = tx.prepare(&sql)?;
    let mut rows = statement.query(params![workspace_id])?;
    let mut changed = 0;
    while let Some(row) = rows.next()? {
        let rowid: i64 = row.get(0)?;
        let id: String = row.get(1)?;
        let author: Option<String> = row.get(2)?;
        let flags: String = row.get(4)?;
        let claim = Claim {
            author: author.as_deref(),
            imported: row.get(3)?,
            instruction_like: flags
                .split(',')
                .any(|flag| flag == verdict::INSTRUCTION_LIKE),
        };
        // A line whose id a line of another text, still in the log, took
        // first: its own provenance is weighed, and it is quarantined.
        let reused: bool = row.get(15)?;
        let origin = OriginRow::read(row, 8)?;
        let mut reasons = verdict::quarantine(
            &claim,
            origin.as_ref().map(OriginRow::origin).as_ref(),
            policy.as_ref(),
        );
        if reused {
            reasons.push(verdict::ID_REUSED);
        }
        let reasons = reasons.join(",");
        let named: bool = row.get(14)?;
        let released = named && !reasons.is_empty() && {
            let origins = releases
                .query_map(params![workspace_id, id], |row| OriginRow::read(row, 1))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            origins.iter().any(|origin| {
                verdict::releases(
                    origin.as_ref().map(OriginRow::origin).as_ref(),
                    policy.as_ref(),
                )
            })
        };
        let (stored, was_released): (String, bool) = (row.get(5)?, row.get(6)?);
        if stored != reasons || was_released != released {
            update.execute(params![rowid, reasons, released])?;
            changed += 1;
        }
    }
    tx.execute(
        "DELETE FROM temp.verdicts_due WHERE workspace_id = ?1",
        params![workspace_id],
    )?;
    Ok(changed + weigh_tombstones(tx, workspace_id, policy.as_ref())?)
}

/// Whether each tombstone of the workspace forgets anything
/// ([`verdict::forgets`]: by its own line's commit), stored in
/// `tombstones.counts`; returns how many changed. Tombstones are few, and
/// each is weighed at every [`apply`].
fn weigh_tombstones(
    tx: &Transaction<'_>,
    workspace_id: i64,
    policy: Option<&TrustPolicy>,
) -> rusqlite::Result<usize> {
    let mut statement = tx.prepare_cached(
        "SELECT t.id, t.file, t.counts, p.commit_id, p.author, p.author_name, p.author_email, p.signature, p.signer, p.shallow
         FROM tombstones t
         LEFT JOIN provenance p ON p.workspace_id = t.workspace_id AND p.id = t.id
           AND (p.record_hash = t.record_hash OR p.record_hash = '')
         WHERE t.workspace_id = ?1",
    )?;
    let mut rows = statement.query(params![workspace_id])?;
    let mut changes: Vec<(String, String, bool)> = Vec::new();
    while let Some(row) = rows.next()? {
        let origin = OriginRow::read(row, 4)?;
        let counts = verdict::forgets(origin.as_ref().map(OriginRow::origin).as_ref(), policy);
        if row.get::<_, bool>(2)? != counts {
            changes.push((row.get(0)?, row.get(1)?, counts));
        }
    }
    let mut update = tx.prepare_cached(
        "UPDATE tombstones SET counts = ?4 WHERE workspace_id = ?1 AND id = ?2 AND file = ?3",
    )?;
    for (id, file, counts) in &changes {
        update.execute(params![workspace_id, id, file, counts])?;
    }
    Ok(changes.len())
}
