//! The trust a sync stores: the policy in effect, and the id of a line
//! committed first given back to it (`retake_reused_ids`).

use super::*;

/// What a sync takes of the repository's config: what its records are
/// checked against ([`trust::check`]) and the trust policy to store.
pub(super) struct SyncConfig {
    pub(super) now: jiff::Timestamp,
    /// The repository's types; `None` when its config cannot be read or
    /// used.
    pub(super) kinds: Option<Kinds>,
    /// The repository's trust policy (`Some(None)`: it has none); `None`
    /// when its config cannot be read or used: the index keeps the policy
    /// it last stored.
    pub(super) policy: Option<Option<TrustPolicy>>,
    /// What the work tree's config says of the policy; `None` when it
    /// cannot be read.
    pub(super) raw: Option<Raw>,
}

impl SyncConfig {
    pub(super) fn of(read: &RepoConfigRead, options: SyncOptions) -> SyncConfig {
        let raw = read.as_ref().ok().map(|bytes| Raw::of(bytes.as_deref()));
        let config = RepoConfig::for_readers(read.as_ref().cloned()).ok();
        SyncConfig {
            now: options.now.unwrap_or_else(jiff::Timestamp::now),
            kinds: config.as_ref().map(|config| config.kinds.clone()),
            policy: config.map(|config| config.trust),
            raw,
        }
    }

    /// The policy to store (`None`: keep the stored one): the one in
    /// effect at HEAD by its history while the work tree's config says
    /// what HEAD's does (a change from outside the policy does not take
    /// effect by being pulled); the work tree's own when the local user
    /// changed it and has not committed it (or there is no commit).
    pub(super) fn in_effect(
        &self,
        tx: &Transaction<'_>,
        workspace: &Workspace,
        workspace_id: i64,
        head: Option<gix::ObjectId>,
        sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
    ) -> Result<Option<Option<TrustPolicy>>, SyncError> {
        if let Some(head) = head
            && self.raw.is_some()
            && self.raw.as_ref() == Some(&Policies::new(workspace).at(head)?)
            && let Some((effective, _)) =
                crate::adapters::index::provenance::history_policy(tx, workspace_id)
                    .map_err(sqlite)?
        {
            return Ok(Some(effective.policy));
        }
        Ok(self.policy.clone())
    }

    /// Stores the policy [in effect](SyncConfig::in_effect) when it differs from
    /// the one stored; says whether it did.
    pub(super) fn store_in_effect(
        &self,
        tx: &Transaction<'_>,
        workspace: &Workspace,
        workspace_id: i64,
        head: Option<gix::ObjectId>,
        sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
    ) -> Result<bool, SyncError> {
        match self.in_effect(tx, workspace, workspace_id, head, sqlite)? {
            Some(policy) => store_policy(tx, workspace_id, policy.as_ref()).map_err(sqlite),
            None => Ok(false),
        }
    }
}

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

/// Gives an id back to the line that was committed first: the plan indexes
/// an id from the first file by name, so a later line that reuses a
/// teammate's id in a file that sorts first (`2000-01-01.jsonl`) would
/// hold the row and the genuine line would wait, hidden, as its duplicate.
/// Where a waiting line of another text was committed before the row's
/// line (or the row's is not committed), the two trade places: the first
/// line is the memory, the reuser's waits as a duplicate (and `doctor`
/// names it). Returns whether it wrote anything.
pub(super) fn retake_reused_ids(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    workspace_id: i64,
    head: Option<gix::ObjectId>,
    sync_config: &SyncConfig,
    report: &mut SyncReport,
) -> rusqlite::Result<bool> {
    let swaps = ids_to_retake(tx, workspace_id)?;
    let mut wrote = false;
    for swap in swaps {
        // The row's own line, to wait in its turn: read where the row
        // says it is, and only if it still hashes as recorded.
        let Some(row_record) = line_of(workspace, head, &swap.row_file, swap.row_line)
            .filter(|record| sync_plan::record_hash(record).to_hex().as_str() == swap.row_hash)
        else {
            continue;
        };
        let Ok(Entry::Memory(first)) = Entry::parse(swap.first_record.as_bytes()) else {
            continue;
        };
        let flags =
            crate::domain::memory::trust::index_flags(&crate::domain::memory::trust::check(
                &first,
                sync_config.now,
                sync_config.kinds.as_ref(),
            ));
        tx.prepare_cached(
            "DELETE FROM duplicates WHERE workspace_id = ?1 AND id = ?2 AND file = ?3",
        )?
        .execute(params![workspace_id, swap.id, swap.first_file])?;
        tx.prepare_cached("DELETE FROM memories WHERE workspace_id = ?1 AND id = ?2")?
            .execute(params![workspace_id, swap.id])?;
        write_memory(
            tx,
            workspace_id,
            &swap.first_file,
            &first,
            swap.first_line,
            sync_plan::record_hash(&swap.first_record).to_hex().as_str(),
            &flags,
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
        report.problems.push(SyncProblem::line(
            &swap.row_file,
            swap.row_line,
            format!(
                "memory {}: its id is the one of a line committed earlier ({}:{}), which keeps it; this line waits as a duplicate (`goldfish doctor` names it)",
                swap.id, swap.first_file, swap.first_line
            ),
        ));
        wrote = true;
    }
    Ok(wrote)
}

/// A row's id that a waiting line of another text, committed before the
/// row's line, holds too: the row's place and the first line's.
struct Swap {
    id: String,
    row_file: String,
    row_line: i64,
    row_hash: String,
    first_file: String,
    first_line: i64,
    first_record: String,
}

/// Each id whose row a waiting line committed earlier should take: the
/// first such line of each id.
fn ids_to_retake(tx: &Transaction<'_>, workspace_id: i64) -> rusqlite::Result<Vec<Swap>> {
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

/// The canonical text of line `line` (from 1) of memory file `name`: the
/// work tree's, else HEAD's; `None` when it is not a memory record.
pub(super) fn line_of(
    workspace: &Workspace,
    head: Option<gix::ObjectId>,
    name: &str,
    line: i64,
) -> Option<String> {
    let bytes = match crate::adapters::memdir::read_regular(&workspace.memory_dir().join(name)) {
        Ok(bytes) => bytes,
        Err(_) => workspace.memory_file_at(head?, name)?,
    };
    let index = usize::try_from(line.checked_sub(1)?).ok()?;
    let text = bytes.split(|&b| b == b'\n').nth(index)?;
    match Entry::parse(text) {
        Ok(entry @ Entry::Memory(_)) => Some(entry.to_line()),
        _ => None,
    }
}
