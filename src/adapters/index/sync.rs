//! Sync: git → index, incrementally, in three parts: gather, plan, apply.
//!
//! 1. Gather (`Gathered`): list the memory files of HEAD's tree (gix) and
//!    of the work tree. A work-tree file whose stat data (size, mtime,
//!    ctime, inode) matches what the last sync recorded keeps its recorded
//!    blob id unread; others are read and hashed as git would. A file only
//!    in HEAD (sparse or deleted work tree) is read from its blob. A file
//!    changed within 2 s of being read is hashed again next time (file
//!    times are too coarse to tell a same-size write in the same tick).
//!    Files whose blob changed are parsed, and the index's rows of them
//!    (and of the ids they hold) loaded.
//! 2. Plan ([`sync_plan::plan`], in the core, pure): files whose blob id is
//!    unchanged are skipped; changed files are diffed against the index by
//!    record id, in name order; bad lines are reported with file and line
//!    and skipped. An id in several files is indexed from the first by
//!    name; its other records wait in `duplicates`. A plan that needs a file
//!    read again (it lost an id to an earlier file) asks for it, and the
//!    gathering reads it.
//! 3. Apply (`apply`): write the plan.
//! 4. Commits new since the last sync are walked to find the commit that
//!    introduced each memory (provenance); the trust policy is stored and
//!    the verdicts weighed.
//!
//! Whatever the order of commits, checkouts and edits, the result is the
//! index a sync into an empty one gives.
//!
//! All of it is one SQLite transaction: a sync killed halfway leaves the
//! previous state, and the next sync redoes the work.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;

use super::provenance::walk_provenance;
use super::{Index, IndexError, SyncError};
use crate::adapters::git::{Workspace, blob_id};
use crate::adapters::history::Policies;
use crate::adapters::memdir::RepoConfigRead;
use crate::domain::config::{RepoConfig, TrustPolicy};
use crate::domain::memory::kinds::Kinds;
use crate::domain::memory::{Entry, Memory};
use crate::domain::policy_history::Raw;
use crate::domain::sync_plan::{
    self, Content, Duplicate, FileProblem, FileState, Found, Planned, Recorded, RecordedFile, Row,
    RowChange, Stat, SyncPlan, Waiting,
};

/// What a sync did. Field names are stable (`sync --json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyncReport {
    pub workspace: String,
    pub head: Option<String>,
    /// Memory files considered (work tree and HEAD).
    pub files: usize,
    /// Files whose content was read and parsed because their blob changed.
    pub files_read: usize,
    /// Files that left the log since the last sync.
    pub files_removed: usize,
    pub memories_added: usize,
    pub memories_updated: usize,
    pub memories_removed: usize,
    /// Commits walked for provenance.
    pub commits_walked: usize,
    /// Live memories of the workspace in the index afterwards.
    pub memories: u64,
    /// What the sync skipped or could not do: `file:line: reason` (or
    /// `file: reason`) for a memory file, inside the memory folder; else
    /// a message that names what it is about.
    pub problems: Vec<SyncProblem>,
    /// Texts embedded after the keyword part (0 without a model).
    pub embedded: usize,
    /// Content hashes still waiting for an embedding; `null` without a model.
    pub pending_embeddings: Option<u64>,
    /// A background embedder runs for the home (started by this read, or
    /// already running): the pending ones are being embedded.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub embedding_in_background: bool,
    /// The memory folder was not checked file by file: a large folder
    /// whose stat and HEAD are as the last check of every file found them,
    /// within [`FOLDER_TRUSTED_NS`] of it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub folder_unchanged: bool,
}

/// Something a sync skipped or could not do, and what it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncProblem {
    /// A file of the memory folder (its name there), or one of its lines.
    MemoryFile {
        file: String,
        line: Option<i64>,
        reason: String,
    },
    /// Anything else (the memory folder itself, the keyword index): the
    /// message names it.
    Other(String),
}

impl SyncProblem {
    fn file(file: &str, reason: impl Into<String>) -> SyncProblem {
        SyncProblem::MemoryFile {
            file: file.to_owned(),
            line: None,
            reason: reason.into(),
        }
    }

    fn line(file: &str, line: i64, reason: impl Into<String>) -> SyncProblem {
        SyncProblem::MemoryFile {
            file: file.to_owned(),
            line: Some(line),
            reason: reason.into(),
        }
    }

    /// As `sync --json` lists it: a memory file by its name in the memory
    /// folder.
    pub fn relative(&self) -> String {
        match self {
            SyncProblem::MemoryFile {
                file,
                line: Some(line),
                reason,
            } => format!("{file}:{line}: {reason}"),
            SyncProblem::MemoryFile {
                file,
                line: None,
                reason,
            } => format!("{file}: {reason}"),
            SyncProblem::Other(message) => message.clone(),
        }
    }
}

impl From<FileProblem> for SyncProblem {
    fn from(problem: FileProblem) -> SyncProblem {
        SyncProblem::MemoryFile {
            file: problem.file,
            line: problem.line,
            reason: problem.reason,
        }
    }
}

/// As a warning says it: a memory file by its path in the repository.
impl std::fmt::Display for SyncProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SyncProblem::MemoryFile { .. } => {
                write!(
                    f,
                    "{}/{}",
                    crate::adapters::git::MEMORY_DIR,
                    self.relative()
                )
            }
            SyncProblem::Other(message) => f.write_str(message),
        }
    }
}

impl Serialize for SyncProblem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.relative())
    }
}

/// Memories with a mismatching `author` field a sync names one by one.
const LISTED_MISMATCHES: usize = 10;

/// Knobs for tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncOptions {
    /// Abort the process after writing, before committing (crash tests).
    pub abort_before_commit: bool,
    /// "Now" for the future-timestamp check of the problems it reports
    /// (`GOLDFISH_NOW`; the clock's when `None`); the index never stores
    /// that flag.
    pub now: Option<jiff::Timestamp>,
    /// Check every memory file's stat, even in a large folder whose own
    /// stat says nothing changed (`FolderScan`): what an explicit sync
    /// does.
    pub every_file: bool,
}

/// A memory folder of at least this many files is checked file by file
/// only when its own stat changed, HEAD moved, or [`FOLDER_TRUSTED_NS`]
/// passed since the last such check; a smaller one always is (its check
/// costs a few milliseconds).
pub const FOLDER_CHECK_FILES: usize = 1_000;

/// How long after a check of every file a large folder's unchanged stat
/// stands for its files: an edit in place by another program (an editor
/// writing into a memory file) changes the file, not the folder, and is
/// seen by the first sync after this (or by `goldfish sync` at once).
/// goldfish's own appends mark the folder changed (`memdir`).
pub const FOLDER_TRUSTED_NS: i64 = 60 * 1_000_000_000;

/// A folder stat this close to the moment the files were checked is not
/// trusted: a change within the file system's timestamp granularity could
/// leave it as it was.
const FOLDER_RACY_NS: i64 = 1_000_000_000;

/// What the last check of every file of a large memory folder saw
/// (`workspaces.folder_scan`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FolderScan {
    /// The folder's stat (mtime, ctime, inode) before its files were
    /// listed.
    folder: (i64, i64, i64),
    /// When the check began.
    at_ns: i64,
    /// HEAD then.
    head: Option<String>,
    /// Memory files found.
    files: usize,
}

impl FolderScan {
    fn read(tx: &Transaction<'_>, workspace_id: i64) -> rusqlite::Result<Option<FolderScan>> {
        let json: Option<String> = tx.query_row(
            "SELECT folder_scan FROM workspaces WHERE id = ?1",
            params![workspace_id],
            |row| row.get(0),
        )?;
        Ok(json.and_then(|json| {
            let value: serde_json::Value = serde_json::from_str(&json).ok()?;
            let folder = value.get("folder")?.as_array()?;
            let number = |index: usize| folder.get(index)?.as_i64();
            Some(FolderScan {
                folder: (number(0)?, number(1)?, number(2)?),
                at_ns: value.get("at_ns")?.as_i64()?,
                head: value.get("head")?.as_str().map(str::to_owned),
                files: usize::try_from(value.get("files")?.as_u64()?).ok()?,
            })
        }))
    }

    /// Stores it (`None`: forgets it, so the next sync checks every file).
    fn store(
        tx: &Transaction<'_>,
        workspace_id: i64,
        scan: Option<&FolderScan>,
    ) -> rusqlite::Result<()> {
        let json = scan.map(|scan| {
            serde_json::json!({
                "folder": [scan.folder.0, scan.folder.1, scan.folder.2],
                "at_ns": scan.at_ns,
                "head": scan.head,
                "files": scan.files,
            })
            .to_string()
        });
        tx.execute(
            "UPDATE workspaces SET folder_scan = ?2 WHERE id = ?1",
            params![workspace_id, json],
        )?;
        Ok(())
    }

    /// The folder's stat now; `None` when it cannot be read (no folder).
    fn folder_stat(dir: &Path) -> Option<(i64, i64, i64)> {
        let stat = stat_of(&fs::symlink_metadata(dir).ok()?);
        Some((stat.mtime_ns, stat.ctime_ns, stat.inode))
    }

    /// Whether this check still stands for the folder at `now_ns`, HEAD
    /// being `head` and its stat `folder`.
    fn stands(&self, folder: Option<(i64, i64, i64)>, head: Option<&str>, now_ns: i64) -> bool {
        self.files >= FOLDER_CHECK_FILES
            && folder == Some(self.folder)
            && head == self.head.as_deref()
            && (0..FOLDER_TRUSTED_NS).contains(&(now_ns - self.at_ns))
    }

    /// What a check of every file that began at `at_ns`, the folder's stat
    /// then `folder`, leaves for the next syncs: `None` for a small folder,
    /// or one changed too close to the check to be trusted.
    fn after_check(
        folder: Option<(i64, i64, i64)>,
        at_ns: i64,
        head: Option<String>,
        files: usize,
    ) -> Option<FolderScan> {
        let folder = folder?;
        let settled = folder.0 < at_ns - FOLDER_RACY_NS && folder.1 < at_ns - FOLDER_RACY_NS;
        (files >= FOLDER_CHECK_FILES && settled).then_some(FolderScan {
            folder,
            at_ns,
            head,
            files,
        })
    }
}

/// What the records of a sync are checked against ([`trust::check`]).
struct Trust {
    now: jiff::Timestamp,
    /// The repository's types; `None` when its config cannot be read or
    /// used.
    kinds: Option<Kinds>,
    /// The repository's trust policy (`Some(None)`: it has none); `None`
    /// when its config cannot be read or used: the index keeps the policy
    /// it last stored.
    policy: Option<Option<TrustPolicy>>,
    /// What the work tree's config says of the policy; `None` when it
    /// cannot be read.
    raw: Option<Raw>,
}

impl Trust {
    fn of(read: &RepoConfigRead, options: SyncOptions) -> Trust {
        let raw = read.as_ref().ok().map(|bytes| Raw::of(bytes.as_deref()));
        let config = RepoConfig::for_readers(read.as_ref().cloned()).ok();
        Trust {
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
    fn in_effect(
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
                super::provenance::history_policy(tx, workspace_id).map_err(sqlite)?
        {
            return Ok(Some(effective.policy));
        }
        Ok(self.policy.clone())
    }
}

/// Stores the workspace's trust policy (what recall checks provenance
/// against) when it differs from the one stored; says whether it did.
fn store_policy(
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

/// The stat data of a work-tree file, as the index records it.
fn stat_of(metadata: &fs::Metadata) -> Stat {
    Stat {
        size: metadata.size() as i64,
        mtime_ns: metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec(),
        ctime_ns: metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
        inode: metadata.ino() as i64,
    }
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Syncs `workspace` into the index, its `.goldfish/config` being `config`
/// (as the caller read it: once a command): gathers what the log holds and what
/// the index records (`Gathered`), plans what to write
/// ([`sync_plan::plan`], pure), writes it (`apply`), then walks the new
/// commits (provenance), stores the trust policy and weighs the verdicts,
/// all in one transaction; the keyword index catches up after it commits.
pub fn sync(
    index: &mut Index,
    workspace: &Workspace,
    config: &RepoConfigRead,
    options: SyncOptions,
) -> Result<SyncReport, SyncError> {
    let path = index.path.clone();
    let sqlite = |source| {
        SyncError::Index(IndexError::Sqlite {
            path: path.clone(),
            source,
        })
    };
    let tx = index
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite)?;
    let registered = register(&tx, workspace.root()).map_err(sqlite)?;
    let workspace_id = registered.id;
    if !registered.new {
        super::verdicts::track(&tx).map_err(sqlite)?;
    }
    let mut report = SyncReport {
        workspace: registered.name.clone(),
        ..SyncReport::default()
    };

    let trust = Trust::of(config, options);
    // A large folder whose stat, HEAD and last check of every file say
    // nothing changed is not checked file by file (`FolderScan`).
    let folder = FolderScan::folder_stat(&workspace.memory_dir());
    let began_ns = now_ns();
    let head_now = workspace.head_commit().map(|id| id.to_string());
    let last_scan = if registered.new {
        None
    } else {
        FolderScan::read(&tx, workspace_id).map_err(sqlite)?
    };
    let standing = last_scan.as_ref().filter(|scan| {
        !options.every_file
            && registered.head_commit == head_now
            && registered.history_commit == head_now
            && scan.stands(folder, head_now.as_deref(), began_ns)
    });
    let (head, files_written, scan) = if let Some(standing) = standing {
        report.head = head_now;
        report.files = standing.files;
        report.folder_unchanged = true;
        let head = report
            .head
            .as_deref()
            .and_then(|id| gix::ObjectId::from_hex(id.as_bytes()).ok());
        (head, false, last_scan.clone())
    } else {
        let mut gathered =
            Gathered::new(&tx, workspace, &registered, &trust, &mut report, &sqlite)?;
        let plan = loop {
            match sync_plan::plan(&gathered.found) {
                Planned::Ready(plan) => break plan,
                Planned::Read(names) => gathered.read_again(&tx, names, &sqlite)?,
            }
        };
        apply(&tx, workspace_id, &plan).map_err(sqlite)?;
        report.files_read = plan.files_read.len();
        report.files_removed = plan.files_removed.len();
        report.memories_added = plan.memories_added;
        report.memories_updated = plan.memories_updated;
        report.memories_removed = plan.memories_removed;
        report
            .problems
            .extend(plan.problems.iter().cloned().map(SyncProblem::from));
        let files_written = plan.writes();

        // Once every file is in: a `supersedes` naming no memory of the
        // repository (or its own) hides nothing, and the lines read now say so.
        if !plan.files_read.is_empty() {
            let read: HashSet<&str> = plan.files_read.iter().map(|file| file.name).collect();
            for (file, line, id, target) in
                dangling_supersedes(&tx, workspace_id).map_err(sqlite)?
            {
                if read.contains(file.as_str()) {
                    let why = if target == id {
                        "names the memory itself".to_owned()
                    } else {
                        format!("names {target}, which no memory of this repository has")
                    };
                    report.problems.push(SyncProblem::line(
                        &file,
                        line,
                        format!("memory {id}: `supersedes` {why}; it hides nothing"),
                    ));
                }
            }
        }
        let head = gathered.head;
        // What the sync read is written: let it go before the commit walk.
        drop(plan);
        drop(gathered);
        let scan = FolderScan::after_check(folder, began_ns, report.head.clone(), report.files);
        (head, files_written, scan)
    };
    let head_moved = registered.head_commit != report.head;
    let mut changed =
        registered.new || head_moved || registered.history_commit != report.head || files_written;
    let scan_changed = scan != last_scan;
    if scan_changed {
        FolderScan::store(&tx, workspace_id, scan.as_ref()).map_err(sqlite)?;
    }

    let known_commit = registered
        .history_commit
        .as_deref()
        .and_then(|id| gix::ObjectId::from_hex(id.as_bytes()).ok());
    // Which memories staleness judges: every one when the history was
    // walked from the start (or the workspace is new), else those that a
    // write, a path changed between the two HEADs or a new revert may
    // concern.
    let mut stale_due = if registered.new || (head.is_some() && known_commit.is_none()) {
        super::staleness::Due::All
    } else {
        super::staleness::Due::Changed {
            old_head: known_commit,
            reverted: Vec::new(),
            branches: Vec::new(),
        }
    };
    // Signatures verified against another signers file are verified anew.
    let signers_moved = head.is_some()
        && super::provenance::signers_moved(&tx, workspace, workspace_id).map_err(sqlite)?;
    if let Some(head) = head
        && (known_commit != Some(head) || signers_moved)
    {
        let walked = walk_provenance(&tx, workspace, workspace_id, head, known_commit, &sqlite)?;
        changed |= signers_moved;
        if let super::staleness::Due::Changed { reverted, .. } = &mut stale_due {
            reverted.clone_from(&walked.reverted);
        }
        report.commits_walked = walked.commits;
        // Named one by one up to a few: a history of lines written
        // by a tool under its own name would otherwise flood every
        // sync's output.
        let more = walked.mismatches.len().saturating_sub(LISTED_MISMATCHES);
        for (file, line, reason) in walked.mismatches.into_iter().take(LISTED_MISMATCHES) {
            report.problems.push(SyncProblem::line(&file, line, reason));
        }
        if more > 0 {
            report.problems.push(SyncProblem::Other(format!(
                "… and {more} more memories whose `author` field is not the author of their commit (quarantined: `goldfish recall --include-untrusted --json` lists them)"
            )));
        }
        report
            .problems
            .extend(walked.policy_changes.into_iter().map(SyncProblem::Other));
    }
    // A branch deleted (or moved) changes refs only: seen here, on every
    // sync, since nothing else would tell.
    let branches =
        super::branches::record(&tx, workspace, workspace_id, head, head_moved, &sqlite)?;
    changed |= branches.changed;
    if let super::staleness::Due::Changed { branches: due, .. } = &mut stale_due {
        *due = branches.due;
    }
    let policy_changed = match trust.in_effect(&tx, workspace, workspace_id, head, &sqlite)? {
        Some(policy) => store_policy(&tx, workspace_id, policy.as_ref()).map_err(sqlite)?,
        None => false,
    };
    changed |= policy_changed;
    changed |= retake_reused_ids(&tx, workspace, workspace_id, head, &trust, &mut report)
        .map_err(sqlite)?;
    if !changed {
        // Nothing to write: leave the index (and its last-sync time) alone,
        // but write the keyword index if it lags (gone, or a catch-up that
        // failed or never ran after its database's commit).
        report.memories = registered.live_memories;
        if scan_changed {
            tx.commit().map_err(sqlite)?;
        } else {
            drop(tx);
        }
        if !super::keyword::holds_everything(&index.conn, &index.path).unwrap_or(false) {
            catch_up_keyword_index(index, &mut report);
        }
        return Ok(report);
    }
    // Every memory weighed (again) under a new policy or in a workspace
    // seen for the first time; else those whose row, provenance or
    // releases this sync wrote.
    let due = if policy_changed || registered.new || signers_moved {
        super::verdicts::Due::All
    } else {
        super::verdicts::Due::Noted
    };
    if policy_changed {
        stale_due = super::staleness::Due::All;
    }
    let policy = super::verdicts::stored_policy(&tx, workspace_id).map_err(sqlite)?;
    super::staleness::weigh(
        &tx,
        workspace,
        workspace_id,
        head,
        stale_due,
        policy.as_ref(),
        &sqlite,
    )?;
    super::verdicts::apply(&tx, workspace_id, due).map_err(sqlite)?;
    report.memories = live_count(&tx, workspace_id).map_err(sqlite)?;
    tx.execute(
        "UPDATE workspaces SET head_commit = ?2, history_commit = ?2, synced_at = ?3, live_memories = ?4
         WHERE id = ?1",
        params![
            workspace_id,
            report.head,
            crate::domain::memory::format_timestamp(jiff::Timestamp::now()),
            report.memories as i64
        ],
    )
    .map_err(sqlite)?;
    if options.abort_before_commit {
        std::process::abort();
    }
    tx.commit().map_err(sqlite)?;
    catch_up_keyword_index(index, &mut report);
    Ok(report)
}

/// What a sync found of the log and of the index ([`Found`]: the input of
/// [`sync_plan::plan`]), and what it needs to read more of the log when
/// the plan asks for files it did not read.
struct Gathered<'w> {
    found: Found,
    workspace: &'w Workspace,
    workspace_id: i64,
    memory_dir: PathBuf,
    /// The work tree's memory files and their stat data.
    worktree: BTreeMap<String, Stat>,
    head: Option<gix::ObjectId>,
    /// HEAD's memory files and their blobs, once read: only when a file
    /// only in HEAD may have changed (HEAD moved, or a work-tree file the
    /// index recorded is gone) or the plan asks for one.
    head_files: Option<BTreeMap<String, gix::ObjectId>>,
    read_at_ns: i64,
    /// Files whose rows are in `found.recorded`.
    loaded: HashSet<String>,
}

impl<'w> Gathered<'w> {
    /// Lists the memory files of HEAD's tree and of the work tree, reads
    /// those whose blob changed, and loads what the index records of them.
    fn new(
        tx: &Transaction<'_>,
        workspace: &'w Workspace,
        registered: &Registered,
        trust: &Trust,
        report: &mut SyncReport,
        sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
    ) -> Result<Gathered<'w>, SyncError> {
        let known = known_files(tx, registered.id, true).map_err(sqlite)?;
        let head = workspace.head_commit();
        report.head = head.map(|id| id.to_string());
        let memory_dir = workspace.memory_dir();
        let read_at_ns = now_ns();
        let worktree: BTreeMap<String, Stat> = worktree_files(&memory_dir, &mut report.problems)?
            .iter()
            .map(|(name, metadata)| (name.clone(), stat_of(metadata)))
            .collect();
        // HEAD's tree only matters for files not in the work tree. If HEAD did
        // not move and no indexed work-tree file disappeared, those are
        // unchanged.
        let head_moved = registered.head_commit != report.head;
        let worktree_file_gone = known
            .iter()
            .any(|(name, file)| file.stat.is_some() && !worktree.contains_key(name));
        let head_files = match head {
            Some(head) if head_moved || worktree_file_gone => {
                Some(workspace.memory_files_at(head)?)
            }
            _ => None,
        };
        let unchanged_head_only = known
            .iter()
            .filter(|(name, file)| {
                head_files.is_none() && file.stat.is_none() && !worktree.contains_key(*name)
            })
            .map(|(name, _)| name);
        let names: BTreeSet<String> = head_files
            .iter()
            .flat_map(|files| files.keys())
            .chain(worktree.keys())
            .chain(unchanged_head_only)
            .cloned()
            .collect();
        report.files = names.len();
        let mut gathered = Gathered {
            found: Found {
                files: BTreeMap::new(),
                recorded: Recorded {
                    files: known,
                    ..Recorded::default()
                },
                now: trust.now,
                kinds: trust.kinds.clone(),
            },
            workspace,
            workspace_id: registered.id,
            memory_dir,
            worktree,
            head,
            head_files,
            read_at_ns,
            loaded: HashSet::new(),
        };
        for name in names {
            let state = gathered.look(&name, false)?;
            gathered.found.files.insert(name, state);
        }
        gathered.load_rows(tx, sqlite)?;
        Ok(gathered)
    }

    /// A file of the log as it is now: its blob id, and its lines when the
    /// blob differs from the recorded one or `again` asks for them.
    fn look(&self, name: &str, again: bool) -> Result<FileState, SyncError> {
        let recorded = self.found.recorded.files.get(name);
        let Some(&stat) = self.worktree.get(name) else {
            let Some(head_files) = &self.head_files else {
                return Ok(FileState::Unlooked);
            };
            let Some(&blob) = head_files.get(name) else {
                return Ok(FileState::Vanished);
            };
            let blob_text = blob.to_string();
            let content = if again || recorded.is_none_or(|recorded| recorded.blob != blob_text) {
                Some(Content::parse(&self.workspace.read_blob(blob)?))
            } else {
                None
            };
            return Ok(FileState::Listed {
                blob: blob_text,
                stat: None,
                racy: false,
                content,
            });
        };
        let racy = stat.racy(self.read_at_ns);
        if !again
            && let Some(recorded) = recorded
            && recorded.stat == Some(stat)
            && !recorded.racy
        {
            return Ok(FileState::Listed {
                blob: recorded.blob.clone(),
                stat: Some(stat),
                racy,
                content: None,
            });
        }
        let path = self.memory_dir.join(name);
        // Streamed: a line over the size a record may take is hashed and
        // passed over, never held. Hashed first; parsed (in a second pass
        // that hashes again, so the two always agree) only when its blob
        // changed.
        let wanted = |blob: &str| again || recorded.is_none_or(|recorded| recorded.blob != blob);
        match streamed(&path, false) {
            Ok(Some((blob, _))) if !wanted(&blob) => {
                return Ok(FileState::Listed {
                    blob,
                    stat: Some(stat),
                    racy,
                    content: None,
                });
            }
            Ok(Some(_)) => {
                if let Ok(Some((blob, content))) = streamed(&path, true) {
                    let content = wanted(&blob).then_some(content).flatten();
                    return Ok(FileState::Listed {
                        blob,
                        stat: Some(stat),
                        racy,
                        content,
                    });
                }
            }
            // Changed size while it was read, or gone, or not a file: read
            // whole below, which says which.
            Ok(None) | Err(_) => {}
        }
        let bytes = match crate::adapters::memdir::read_regular(&path) {
            Ok(bytes) => bytes,
            // Gone since it was listed: git rewrites a file by unlinking it
            // and creating it anew. Its rows and stamp stay as they were, so
            // the next sync reads the new one.
            Err(crate::adapters::memdir::OpenError::Io(source))
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(FileState::Vanished);
            }
            Err(crate::adapters::memdir::OpenError::Io(source)) => {
                return Err(SyncError::Io { path, source });
            }
            // Replaced by a link or a FIFO since it was listed.
            Err(err) => return Ok(FileState::Refused(err.skipped())),
        };
        let blob = blob_id(&bytes).to_string();
        let content = (again || recorded.is_none_or(|recorded| recorded.blob != blob))
            .then(|| Content::parse(&bytes));
        Ok(FileState::Listed {
            blob,
            stat: Some(stat),
            racy,
            content,
        })
    }

    /// Reads the files the plan asks for, whatever their blob, and loads
    /// what the index records of them.
    fn read_again(
        &mut self,
        tx: &Transaction<'_>,
        names: BTreeSet<String>,
        sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
    ) -> Result<(), SyncError> {
        for name in names {
            if self.head_files.is_none() && !self.worktree.contains_key(&name) {
                // HEAD's tree is read once a file only there is needed; as
                // for a sync that reads the files in name order, the files
                // only in HEAD from this one on are taken from it.
                self.head_files = Some(match self.head {
                    Some(head) => self.workspace.memory_files_at(head)?,
                    None => BTreeMap::new(),
                });
                let later: Vec<String> = self
                    .found
                    .files
                    .range(name.clone()..)
                    .filter(|(_, state)| matches!(state, FileState::Unlooked))
                    .map(|(later, _)| later.clone())
                    .collect();
                for later in later {
                    let state = self.look(&later, false)?;
                    self.found.files.insert(later, state);
                }
            }
            let state = self.look(&name, true)?;
            self.found.files.insert(name, state);
        }
        self.load_rows(tx, sqlite)
    }

    /// Loads what the index records of the files read and the files that
    /// left the log, not loaded yet: their rows, the rows of the ids their
    /// lines hold, and the duplicates of the ids they lost.
    fn load_rows(
        &mut self,
        tx: &Transaction<'_>,
        sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
    ) -> Result<(), SyncError> {
        let Found {
            files, recorded, ..
        } = &mut self.found;
        let gone = recorded
            .files
            .keys()
            .filter(|name| !files.contains_key(*name))
            .map(|name| (name, None));
        let read = files.iter().filter_map(|(name, state)| match state {
            FileState::Listed {
                content: Some(content),
                ..
            } => Some((name, Some(content))),
            _ => None,
        });
        let mut due: Vec<(String, Option<&Content>)> = gone
            .chain(read)
            .filter(|(name, _)| !self.loaded.contains(*name))
            .map(|(name, content)| (name.clone(), content))
            .collect();
        due.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, content) in due {
            let indexed = file_rows(tx, self.workspace_id, &name).map_err(sqlite)?;
            let held: HashSet<&str> = content.into_iter().flat_map(Content::memory_ids).collect();
            for id in &held {
                // An id with no row is looked up again for another file
                // that holds it too: rare, and cheaper than remembering
                // every new id.
                if !indexed.contains_key(*id)
                    && !recorded.rows.contains_key(*id)
                    && let Some(row) = row_of(tx, self.workspace_id, id).map_err(sqlite)?
                {
                    recorded.rows.insert((*id).to_owned(), row);
                }
            }
            for (id, (record_hash, line)) in indexed {
                if !held.contains(id.as_str()) && !recorded.duplicates.contains_key(&id) {
                    let waiting = duplicates_of(tx, self.workspace_id, &id).map_err(sqlite)?;
                    recorded.duplicates.insert(id.clone(), waiting);
                }
                let row = Row {
                    file: name.clone(),
                    record_hash,
                    line,
                };
                recorded.rows.insert(id, row);
            }
            self.loaded.insert(name);
        }
        Ok(())
    }
}

/// Writes a plan in the sync's transaction: the files that left the log,
/// the memory rows in the plan's order, the duplicates that became the
/// indexed record, each file read (its tombstones, releases and duplicates
/// replaced, in name order), and the files' records.
fn apply(tx: &Transaction<'_>, workspace_id: i64, plan: &SyncPlan<'_>) -> rusqlite::Result<()> {
    const CLEAR_FILE: [&str; 3] = [
        "DELETE FROM duplicates WHERE workspace_id = ?1 AND file = ?2",
        "DELETE FROM tombstones WHERE workspace_id = ?1 AND file = ?2",
        "DELETE FROM releases WHERE workspace_id = ?1 AND file = ?2",
    ];
    for name in &plan.files_removed {
        for statement in CLEAR_FILE {
            tx.prepare_cached(statement)?
                .execute(params![workspace_id, name])?;
        }
        tx.prepare_cached("DELETE FROM files WHERE workspace_id = ?1 AND name = ?2")?
            .execute(params![workspace_id, name])?;
    }
    for change in &plan.rows {
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
    for (id, file) in &plan.duplicates_taken {
        tx.prepare_cached(
            "DELETE FROM duplicates WHERE workspace_id = ?1 AND id = ?2 AND file = ?3",
        )?
        .execute(params![workspace_id, id, file])?;
    }
    for read in &plan.files_read {
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

/// Brings the keyword index up to date with the index's last commit; a
/// failure is a problem of the sync, not its failure (keyword recall then
/// ranks with a copy in memory, and this connection does not try again).
fn catch_up_keyword_index(index: &Index, report: &mut SyncReport) {
    if let Err(err) = super::keyword::catch_up(&index.conn, &index.path) {
        index
            .keyword_catch_up_failed
            .store(true, std::sync::atomic::Ordering::Relaxed);
        report.problems.push(SyncProblem::Other(format!(
            "{err}; keyword recall ranks with a copy in memory until a sync writes it"
        )));
    }
}

/// What a sync of a workspace would look at again, from stat data alone.
struct Stale {
    /// Work-tree files new or changed since the last sync, with their size.
    changed: Vec<(String, u64)>,
    /// Files the last sync saw in the work tree that are gone.
    gone: Vec<String>,
}

/// Compares the work tree's memory files with what the index recorded of
/// them. Reads no file content and writes nothing.
fn stale(index: &Index, workspace: &Workspace) -> Result<Stale, SyncError> {
    let sqlite = |source| {
        SyncError::Index(IndexError::Sqlite {
            path: index.path.clone(),
            source,
        })
    };
    let known = match index
        .workspace_by_root(workspace.root())
        .map_err(SyncError::Index)?
    {
        Some(row) => {
            let tx = index.conn.unchecked_transaction().map_err(sqlite)?;
            known_files(&tx, row.id, false).map_err(sqlite)?
        }
        None => HashMap::new(),
    };
    let mut problems = Vec::new();
    let files = worktree_files(&workspace.memory_dir(), &mut problems)?;
    let changed = files
        .iter()
        .filter(|(name, metadata)| {
            known
                .get(*name)
                .is_none_or(|k| k.stat != Some(stat_of(metadata)))
        })
        .map(|(name, metadata)| (name.clone(), metadata.len()))
        .collect();
    let gone = known
        .iter()
        .filter(|(name, k)| k.stat.is_some() && !files.contains_key(*name))
        .map(|(name, _)| name.clone())
        .collect();
    Ok(Stale { changed, gone })
}

/// How much a sync of `workspace` would have to read: the total size of the
/// work-tree memory files whose stat data differs from what the index
/// recorded. Reads no file content.
pub fn pending_bytes(index: &Index, workspace: &Workspace) -> Result<u64, SyncError> {
    Ok(stale(index, workspace)?
        .changed
        .iter()
        .map(|(_, size)| size)
        .sum())
}

/// The work-tree memory files a sync of `workspace` would look at again:
/// new, changed (stat data) or gone since the last sync, by name. Reads no
/// file content and writes nothing.
pub fn changed_files(index: &Index, workspace: &Workspace) -> Result<Vec<String>, SyncError> {
    let stale = stale(index, workspace)?;
    let mut names: Vec<String> = stale.changed.into_iter().map(|(name, _)| name).collect();
    names.extend(stale.gone);
    names.sort();
    Ok(names)
}

/// What the index remembers of a workspace at the start of a sync.
struct Registered {
    id: i64,
    name: String,
    head_commit: Option<String>,
    history_commit: Option<String>,
    live_memories: u64,
    /// Registered by this sync.
    new: bool,
}

/// Finds or creates the workspace row.
fn register(tx: &Transaction<'_>, root: &Path) -> rusqlite::Result<Registered> {
    let root_text = root.to_string_lossy();
    let existing = tx
        .query_row(
            "SELECT id, name, head_commit, history_commit, live_memories FROM workspaces WHERE root = ?1",
            params![root_text],
            |row| {
                Ok(Registered {
                    id: row.get(0)?,
                    name: row.get(1)?,
                    head_commit: row.get(2)?,
                    history_commit: row.get(3)?,
                    live_memories: row.get::<_, i64>(4)? as u64,
                    new: false,
                })
            },
        )
        .optional()?;
    if let Some(existing) = existing {
        return Ok(existing);
    }
    // The folder name, made unique among workspaces.
    let base = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".to_owned());
    let mut name = base.clone();
    let mut n = 1;
    while tx
        .query_row(
            "SELECT 1 FROM workspaces WHERE name = ?1",
            params![name],
            |_| Ok(()),
        )
        .optional()?
        .is_some()
    {
        n += 1;
        name = format!("{base}-{n}");
    }
    tx.execute(
        "INSERT INTO workspaces (root, name) VALUES (?1, ?2)",
        params![root_text, name],
    )?;
    Ok(Registered {
        id: tx.last_insert_rowid(),
        name,
        head_commit: None,
        history_commit: None,
        live_memories: 0,
        new: true,
    })
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

/// The files the index recorded for a workspace. `racy` is read only by a
/// sync: doctor also reads indexes of older schemas, which lack it.
fn known_files(
    tx: &Transaction<'_>,
    workspace_id: i64,
    with_racy: bool,
) -> rusqlite::Result<HashMap<String, RecordedFile>> {
    let mut statement = tx.prepare(if with_racy {
        "SELECT name, blob_id, size, mtime_ns, ctime_ns, inode, racy FROM files WHERE workspace_id = ?1"
    } else {
        "SELECT name, blob_id, size, mtime_ns, ctime_ns, inode, 0 FROM files WHERE workspace_id = ?1"
    })?;
    let rows = statement.query_map(params![workspace_id], |row| {
        let size: i64 = row.get(2)?;
        let stat = (size >= 0).then_some(Stat {
            size,
            mtime_ns: row.get(3)?,
            ctime_ns: row.get(4)?,
            inode: row.get(5)?,
        });
        Ok((
            row.get::<_, String>(0)?,
            RecordedFile {
                blob: row.get(1)?,
                stat,
                racy: row.get(6)?,
            },
        ))
    })?;
    rows.collect()
}

/// The `*.jsonl` files of the memory folder on disk with their metadata.
fn worktree_files(
    dir: &Path,
    problems: &mut Vec<SyncProblem>,
) -> Result<BTreeMap<String, fs::Metadata>, SyncError> {
    let mut files = BTreeMap::new();
    // A memory folder (or `.goldfish`) that is a link is never followed.
    if let Err(err @ crate::adapters::memdir::LogError::Unsafe { .. }) =
        crate::adapters::memdir::MemoryDir::new(dir.to_owned()).check_folder()
    {
        problems.push(SyncProblem::Other(err.to_string()));
        return Ok(files);
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(source) => {
            return Err(SyncError::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    for entry in entries {
        let entry = entry.map_err(|source| SyncError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".jsonl") {
            continue;
        }
        // Links are not followed: a committed link could point anywhere.
        match fs::symlink_metadata(entry.path()) {
            Ok(metadata) if metadata.is_file() => {
                files.insert(name, metadata);
            }
            Ok(metadata) if metadata.file_type().is_symlink() => problems.push(SyncProblem::file(
                &name,
                crate::adapters::memdir::OpenError::Link.skipped(),
            )),
            Ok(_) => problems.push(SyncProblem::file(&name, "is not a file; skipped")),
            Err(err) => problems.push(SyncProblem::file(&name, format!("{err}; skipped"))),
        }
    }
    Ok(files)
}

/// Gives an id back to the line that was committed first: the plan indexes
/// an id from the first file by name, so a later line that reuses a
/// teammate's id in a file that sorts first (`2000-01-01.jsonl`) would
/// hold the row and the genuine line would wait, hidden, as its duplicate.
/// Where a waiting line of another text was committed before the row's
/// line (or the row's is not committed), the two trade places: the first
/// line is the memory, the reuser's waits as a duplicate (and `doctor`
/// names it). Returns whether it wrote anything.
fn retake_reused_ids(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    workspace_id: i64,
    head: Option<gix::ObjectId>,
    trust: &Trust,
    report: &mut SyncReport,
) -> rusqlite::Result<bool> {
    struct Swap {
        id: String,
        row_file: String,
        row_line: i64,
        row_hash: String,
        first_file: String,
        first_line: i64,
        first_record: String,
    }
    let mut swaps: Vec<Swap> = Vec::new();
    {
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
    }
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
        let flags = crate::domain::memory::trust::index_flags(
            &crate::domain::memory::trust::check(&first, trust.now, trust.kinds.as_ref()),
        );
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

/// The canonical text of line `line` (from 1) of memory file `name`: the
/// work tree's, else HEAD's; `None` when it is not a memory record.
fn line_of(
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

/// A work-tree memory file read as a stream: its git blob id and, with
/// `parse`, its lines as [`Content::parse`] reads them, except that a line
/// over [`goldfish_log::record::MAX_LINE_BYTES`] is never held (its bytes
/// are hashed and passed over; it stays a `TooLong` line). `None` when the
/// file's size changed while it was read.
fn streamed(
    path: &Path,
    parse: bool,
) -> Result<Option<(String, Option<Content>)>, crate::adapters::memdir::OpenError> {
    use crate::adapters::memdir::{OpenError, open_regular};
    use crate::domain::memory::view::BYTE_ORDER_MARK;
    use goldfish_log::record::{MAX_LINE_BYTES, ParseError};
    use std::io::Read;

    let mut file = open_regular(path, fs::OpenOptions::new().read(true))?;
    let size = file.metadata().map_err(OpenError::Io)?.len();
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(format!("blob {size}\0").as_bytes());
    let mut lines = Vec::new();
    let mut first_bytes: Vec<u8> = Vec::new();
    // The line being read: its first bytes (all of it while it fits), its
    // length, its trailing `\r`s, and whether it is blank so far.
    let mut held: Vec<u8> = Vec::new();
    let (mut length, mut carriage_returns, mut blank) = (0usize, 0usize, true);
    let mut number = 0i64;
    let mut finish = |held: &mut Vec<u8>, length: usize, carriage_returns: usize, blank: bool| {
        number += 1;
        let kept = length - carriage_returns;
        if !blank {
            let parsed = if kept > MAX_LINE_BYTES {
                Err(ParseError::TooLong(kept))
            } else {
                Entry::parse(&held[..kept])
            };
            lines.push(sync_plan::Line { number, parsed });
        }
        held.clear();
    };
    let mut read = 0u64;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(OpenError::Io(err)),
        };
        let bytes = &chunk[..n];
        hasher.update(bytes);
        if first_bytes.len() < BYTE_ORDER_MARK.len() {
            first_bytes.extend(bytes.iter().take(BYTE_ORDER_MARK.len() - first_bytes.len()));
        }
        read += n as u64;
        if !parse {
            continue;
        }
        for &byte in bytes {
            if byte == b'\n' {
                finish(&mut held, length, carriage_returns, blank);
                (length, carriage_returns, blank) = (0, 0, true);
                continue;
            }
            length += 1;
            carriage_returns = if byte == b'\r' {
                carriage_returns + 1
            } else {
                0
            };
            blank &= byte.is_ascii_whitespace();
            if held.len() <= MAX_LINE_BYTES {
                held.push(byte);
            }
        }
    }
    if read != size {
        return Ok(None);
    }
    if parse && length > 0 {
        finish(&mut held, length, carriage_returns, blank);
    }
    let blob = hasher
        .try_finalize()
        .map_err(|err| OpenError::Io(std::io::Error::other(err)))?
        .to_string();
    Ok(Some((
        blob,
        parse.then_some(Content {
            lines,
            byte_order_mark: first_bytes.starts_with(BYTE_ORDER_MARK),
        }),
    )))
}

/// (file, line, id, supersedes) of every memory whose `supersedes` names
/// itself or an id no memory of the workspace has (forgotten ones count as
/// had: the link is right, the memory is gone).
fn dangling_supersedes(
    tx: &Transaction<'_>,
    workspace_id: i64,
) -> rusqlite::Result<Vec<(String, i64, String, String)>> {
    let mut statement = tx.prepare_cached(
        "SELECT m.file, m.line, m.id, m.supersedes FROM memories m
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

/// The rows indexed from `file`: id → (record hash, line).
fn file_rows(
    tx: &Transaction<'_>,
    workspace_id: i64,
    file: &str,
) -> rusqlite::Result<HashMap<String, (String, i64)>> {
    let mut statement = tx.prepare_cached(
        "SELECT id, record_hash, line FROM memories WHERE workspace_id = ?1 AND file = ?2",
    )?;
    let rows = statement.query_map(params![workspace_id, file], |row| {
        Ok((row.get(0)?, (row.get(1)?, row.get(2)?)))
    })?;
    rows.collect()
}

/// The indexed record of `id`, if there is one.
fn row_of(tx: &Transaction<'_>, workspace_id: i64, id: &str) -> rusqlite::Result<Option<Row>> {
    tx.prepare_cached(
        "SELECT file, record_hash, line FROM memories WHERE workspace_id = ?1 AND id = ?2",
    )?
    .query_row(params![workspace_id, id], |row| {
        Ok(Row {
            file: row.get(0)?,
            record_hash: row.get(1)?,
            line: row.get(2)?,
        })
    })
    .optional()
}

/// The records of `id` waiting in `duplicates`.
fn duplicates_of(
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
fn write_memory(
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
               type, content, source, tags, author, branch, commit_id, files, flags, imported, supersedes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
             ON CONFLICT (workspace_id, id) DO UPDATE SET line = excluded.line,
               record_hash = excluded.record_hash, content_hash = excluded.content_hash,
               timestamp = excluded.timestamp, ts_ms = excluded.ts_ms, type = excluded.type,
               content = excluded.content, source = excluded.source, tags = excluded.tags,
               author = excluded.author, branch = excluded.branch, commit_id = excluded.commit_id,
               files = excluded.files, flags = excluded.flags, file = excluded.file,
               imported = excluded.imported, supersedes = excluded.supersedes",
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
        ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use goldfish_log::record::MAX_LINE_BYTES;

    /// A streamed read gives the blob id and the lines a whole read gives,
    /// whatever the line ends, blank lines, byte order mark or sizes.
    #[test]
    fn a_streamed_read_is_a_whole_read() {
        let record = r#"{"id":"01M8AAAAAAAAAAAAAAAAAAAAAA","timestamp":"2026-11-21T09:30:00.000Z","type":"insight","content":"x"}"#;
        let long = format!(r#"{{"content":"{}"}}"#, "y".repeat(MAX_LINE_BYTES));
        let fits = format!(r#"{{"c":"{}"}}"#, "z".repeat(MAX_LINE_BYTES - 8));
        assert_eq!(fits.len(), MAX_LINE_BYTES);
        let cases: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"\n\n".to_vec(),
            format!("{record}\n").into_bytes(),
            format!("{record}\r\n\r\n  \n{record}").into_bytes(),
            format!("\u{feff}{record}\n{record}\n").into_bytes(),
            format!("{record}\n{long}\n{record}\n").into_bytes(),
            format!("{long}\r\r\n{fits}\n{fits}\r").into_bytes(),
            format!("{}\n{record}", " ".repeat(MAX_LINE_BYTES + 10)).into_bytes(),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (n, bytes) in cases.iter().enumerate() {
            let path = dir.path().join(format!("{n}.jsonl"));
            fs::write(&path, bytes).unwrap();
            let (blob, content) = streamed(&path, true).unwrap().unwrap();
            assert_eq!(blob, blob_id(bytes).to_string(), "case {n}");
            assert_eq!(content, Some(Content::parse(bytes)), "case {n}");
            let (blob, content) = streamed(&path, false).unwrap().unwrap();
            assert_eq!((blob, content), (blob_id(bytes).to_string(), None));
        }
    }
}
