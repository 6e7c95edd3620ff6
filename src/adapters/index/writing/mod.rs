//! What a sync writes: one SQLite transaction on one workspace's rows
//! ([`Writing`]), handed plain facts by the sync (`crate::adapters::sync`),
//! which reads git, history and the memory folder. Nothing here reads git.
//!
//! `files.rs` holds the workspace's row, the files the index knows and the
//! memory folder's last check; `rows.rs` the rows a plan is made against;
//! `apply.rs` the writing of a plan; `trust.rs` the policy stored and the
//! ids given back; `provenance.rs` what the walk of the history records;
//! `cites.rs` the citations checked.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::{Index, IndexError};
use crate::domain::config::TrustPolicy;
use crate::domain::memory::{Entry, Memory};
use crate::domain::sync_plan::{self, RecordedFile, Row, RowChange, Stat, SyncPlan, Waiting};

mod apply;
mod cites;
mod files;
mod provenance;
mod rows;
mod trust;

pub use apply::content_hash;
use apply::write_memory;
pub use cites::DueCite;
pub use files::{FOLDER_CHECK_FILES, FOLDER_RACY_NS, FOLDER_TRUSTED_NS, FolderScan, Registered};
pub use provenance::{Located, ProvenanceRow};
pub use trust::Swap;

pub use super::staleness::Due as StaleDue;
pub use super::verdicts::Due as VerdictsDue;

/// A sync's writing: one SQLite transaction (`BEGIN IMMEDIATE`) on the rows
/// of one workspace, found or registered when it began. Dropped without
/// [`Writing::commit`], it leaves the index as it was.
pub struct Writing<'i> {
    tx: Transaction<'i>,
    registered: Registered,
    path: PathBuf,
}

impl Index {
    /// Begins a sync of the workspace at `root`: opens the transaction and
    /// finds or creates the workspace's row; a known workspace's changes
    /// are tracked for the verdicts.
    pub fn begin_sync(&mut self, root: &Path) -> Result<Writing<'_>, IndexError> {
        let path = self.path.clone();
        let sqlite = |source| IndexError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let registered = files::register(&tx, root).map_err(sqlite)?;
        if !registered.new {
            super::verdicts::track(&tx).map_err(sqlite)?;
        }
        Ok(Writing {
            tx,
            registered,
            path,
        })
    }

    /// The files the index recorded for the workspace at `root` (none for
    /// a workspace it does not know), without their racy flag: doctor also
    /// reads indexes of older schemas, which lack it. Reads only.
    pub fn known_files(&self, root: &Path) -> Result<HashMap<String, RecordedFile>, IndexError> {
        let Some(row) = self.workspace_by_root(root)? else {
            return Ok(HashMap::new());
        };
        let tx = self.conn.unchecked_transaction().map_err(self.sqlite())?;
        files::known_files(&tx, row.id, false).map_err(self.sqlite())
    }

    /// Whether the keyword index holds everything the database's last
    /// commit wrote (`false` when that cannot be told).
    pub fn keyword_index_holds_everything(&self) -> bool {
        super::keyword::holds_everything(&self.conn, &self.path).unwrap_or(false)
    }

    /// Brings the keyword index up to date with the database's last
    /// commit. On failure, keyword recall ranks with a copy in memory and
    /// this connection does not try again.
    pub fn catch_up_keyword_index(&self) -> Result<(), super::keyword::TextError> {
        let caught_up = super::keyword::catch_up(&self.conn, &self.path);
        if caught_up.is_err() {
            self.keyword_catch_up_failed
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        caught_up.map(|_| ())
    }
}

impl Writing<'_> {
    fn sqlite(&self) -> impl Fn(rusqlite::Error) -> IndexError + '_ {
        |source| IndexError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// What the index remembered of the workspace when the sync began.
    pub fn registered(&self) -> &Registered {
        &self.registered
    }

    fn id(&self) -> i64 {
        self.registered.id
    }

    /// Commits everything written.
    pub fn commit(self) -> Result<(), IndexError> {
        let path = self.path;
        self.tx
            .commit()
            .map_err(|source| IndexError::Sqlite { path, source })
    }

    /// The files the index recorded for the workspace, with their racy
    /// flag.
    pub fn known_files(&self) -> Result<HashMap<String, RecordedFile>, IndexError> {
        files::known_files(&self.tx, self.id(), true).map_err(self.sqlite())
    }

    /// The last check of every file of the memory folder, as stored.
    pub fn folder_scan(&self) -> Result<Option<FolderScan>, IndexError> {
        FolderScan::read(&self.tx, self.id()).map_err(self.sqlite())
    }

    /// Stores the folder's check (`None`: forgets it, so the next sync
    /// checks every file).
    pub fn store_folder_scan(&self, scan: Option<&FolderScan>) -> Result<(), IndexError> {
        FolderScan::store(&self.tx, self.id(), scan).map_err(self.sqlite())
    }

    /// The rows indexed from `file`: id → (record hash, line, flags).
    pub fn file_rows(
        &self,
        file: &str,
    ) -> Result<HashMap<String, (String, i64, String)>, IndexError> {
        rows::file_rows(&self.tx, self.id(), file).map_err(self.sqlite())
    }

    /// The indexed record of `id`, if there is one.
    pub fn row_of(&self, id: &str) -> Result<Option<Row>, IndexError> {
        rows::row_of(&self.tx, self.id(), id).map_err(self.sqlite())
    }

    /// The ids indexed from `file` that also wait in a file sorting before
    /// it: rows a retake moved ([`Writing::retake`]).
    pub fn retaken_from(&self, file: &str) -> Result<HashSet<String>, IndexError> {
        rows::retaken_from(&self.tx, self.id(), file).map_err(self.sqlite())
    }

    /// The records of `id` waiting in `duplicates`.
    pub fn duplicates_of(&self, id: &str) -> Result<Vec<Waiting>, IndexError> {
        rows::duplicates_of(&self.tx, self.id(), id).map_err(self.sqlite())
    }

    /// Writes a plan.
    pub fn apply(&self, plan: &SyncPlan<'_>) -> Result<(), IndexError> {
        apply::apply(&self.tx, self.id(), plan).map_err(self.sqlite())
    }

    /// (file, line, id, supersedes) of every memory whose `supersedes`
    /// names itself or an id no memory of the workspace has (forgotten ones
    /// count as had: the link is right, the memory is gone).
    pub fn dangling_supersedes(&self) -> Result<Vec<(String, i64, String, String)>, IndexError> {
        apply::dangling_supersedes(&self.tx, self.id()).map_err(self.sqlite())
    }

    /// Stores the workspace's trust policy (what recall checks provenance
    /// against) when it differs from the one stored; says whether it did.
    pub fn store_policy(&self, policy: Option<&TrustPolicy>) -> Result<bool, IndexError> {
        trust::store_policy(&self.tx, self.id(), policy).map_err(self.sqlite())
    }

    /// The policy the workspace's last sync stored: `None` without a
    /// `[trust]` section.
    pub fn stored_policy(&self) -> Result<Option<TrustPolicy>, IndexError> {
        super::verdicts::stored_policy(&self.tx, self.id()).map_err(self.sqlite())
    }

    /// Each id whose row a waiting line committed earlier should take
    /// ([`Writing::retake`]): the first such line of each id.
    pub fn ids_to_retake(&self) -> Result<Vec<Swap>, IndexError> {
        trust::ids_to_retake(&self.tx, self.id()).map_err(self.sqlite())
    }

    /// Gives `swap.id` to the line committed first (`first`, with its
    /// flags): the row's own line (`row_record`) waits as a duplicate.
    pub fn retake(
        &self,
        swap: &Swap,
        first: &Memory,
        flags: &str,
        row_record: &str,
    ) -> Result<(), IndexError> {
        trust::retake(&self.tx, self.id(), swap, first, flags, row_record).map_err(self.sqlite())
    }

    /// The branches the index recorded.
    pub fn branches(
        &self,
    ) -> Result<std::collections::BTreeMap<String, crate::domain::branches::Recorded>, IndexError>
    {
        super::branches::recorded(&self.tx, self.id()).map_err(self.sqlite())
    }

    /// Whether a memory of the workspace was stored on branch `name`.
    pub fn branch_named(&self, name: &str) -> Result<bool, IndexError> {
        super::branches::named(&self.tx, self.id(), name).map_err(self.sqlite())
    }

    /// Writes the branches as the core settled them.
    pub fn write_branches(&self, seen: &crate::domain::branches::Seen) -> Result<(), IndexError> {
        super::branches::write(&self.tx, self.id(), seen).map_err(self.sqlite())
    }

    /// Notes what each walked commit (oldest first) deleted, renamed and
    /// reverted. Returns the commits the walked ones revert.
    pub fn record_changes(
        &self,
        commits: &[crate::domain::staleness::CommitChanges],
    ) -> Result<Vec<String>, IndexError> {
        super::staleness::record(&self.tx, self.id(), commits, &self.sqlite())
    }

    /// Judges the memories `due` names against HEAD (`code`; `None`, no
    /// commit yet: nothing is stale) and stores what changed.
    pub fn weigh_staleness(
        &self,
        code: Option<&mut dyn crate::domain::staleness::Code>,
        due: StaleDue,
        policy: Option<&TrustPolicy>,
    ) -> Result<(), IndexError> {
        super::staleness::weigh(&self.tx, self.id(), code, due, policy, &self.sqlite()).map(|_| ())
    }

    /// Weighs the trust verdicts of the memories `due` names.
    pub fn weigh_verdicts(&self, due: VerdictsDue) -> Result<(), IndexError> {
        super::verdicts::apply(&self.tx, self.id(), due)
            .map(|_| ())
            .map_err(self.sqlite())
    }

    /// Counts the live memories and records the sync on the workspace's
    /// row: HEAD (`head`) as synced and walked. Returns the count.
    pub fn record_synced(&self, head: Option<&str>) -> Result<u64, IndexError> {
        let memories = live_count(&self.tx, self.id()).map_err(self.sqlite())?;
        self.tx
            .execute(
                "UPDATE workspaces SET head_commit = ?2, history_commit = ?2, synced_at = ?3, live_memories = ?4
                 WHERE id = ?1",
                params![
                    self.id(),
                    head,
                    crate::domain::memory::format_timestamp(jiff::Timestamp::now()),
                    memories as i64
                ],
            )
            .map_err(self.sqlite())?;
        Ok(memories)
    }
}

/// Memories of a workspace that no tombstone forgets: the row count the
/// triggers keep, less the memories tombstones hide (tombstones are few).
pub(super) fn live_count(conn: &rusqlite::Connection, workspace_id: i64) -> rusqlite::Result<u64> {
    let all: i64 = conn
        .query_row(
            "SELECT memory_rows FROM workspaces WHERE id = ?1",
            params![workspace_id],
            |row| row.get(0),
        )
        .optional()?
        .unwrap_or(0);
    let forgotten: i64 = conn.query_row(
        "SELECT count(DISTINCT t.forgets) FROM tombstones t WHERE t.workspace_id = ?1 AND t.counts
           AND EXISTS (SELECT 1 FROM memories m WHERE m.workspace_id = t.workspace_id AND m.id = t.forgets)",
        params![workspace_id],
        |row| row.get(0),
    )?;
    Ok((all - forgotten).max(0) as u64)
}
