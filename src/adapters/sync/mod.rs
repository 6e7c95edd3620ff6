//! Sync: git → index, incrementally. It reads git, history and the memory
//! folder, has the core plan and judge, and hands the index
//! ([`Writing`]) what to write; the index reads neither git nor history.
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
//!
//! `files.rs` holds the files a sync looks at (the folder's stat, the work
//! tree's files and their stat data, a file read as a stream);
//! `gather.rs` the gathering; `walk.rs` the walk of the history;
//! `config.rs` what a sync takes of the repository's config and the ids
//! given back.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::adapters::git::{GitError, Workspace, blob_id};
use crate::adapters::history::Policies;
use crate::adapters::index::locks::LockError;
use crate::adapters::index::writing::{FolderScan, Registered, StaleDue, VerdictsDue, Writing};
use crate::adapters::index::{Index, IndexError};
use crate::adapters::memdir::RepoConfigRead;
use crate::domain::config::{RepoConfig, TrustPolicy};
use crate::domain::memory::Entry;
use crate::domain::memory::kinds::Kinds;
use crate::domain::policy_history::Raw;
use crate::domain::sync_plan::{
    self, Content, FileProblem, FileState, Found, Planned, Recorded, Row, Stat,
};

pub(crate) mod cites;
mod config;
mod files;
mod gather;
mod walk;

use config::*;
use files::*;
use gather::*;
use walk::walk_provenance;

pub use crate::adapters::index::writing::{FOLDER_CHECK_FILES, FOLDER_TRUSTED_NS, content_hash};

/// Why a sync, or the stale check and the locks around it, failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("could not read {}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

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
    /// Leave the keyword index for the next reader to catch up (the
    /// journal keeps what it lacks, and a search catches it up before it
    /// reads): a store, whose own checks search by meaning only, does not
    /// write it for each memory.
    pub keywords_later: bool,
}

/// Syncs `workspace` into the index, its `.goldfish/config` being `config`
/// (as the caller read it: once a command), in one transaction of the
/// index's: gathers what the log holds and what the index records
/// (`Gathered`), plans what to write ([`sync_plan::plan`], pure), has the
/// index write it, walks the new commits (provenance), stores the trust
/// policy and weighs the verdicts; the keyword index catches up after it
/// commits (unless [`SyncOptions::keywords_later`]).
pub fn sync(
    index: &mut Index,
    workspace: &Workspace,
    config: &RepoConfigRead,
    options: SyncOptions,
) -> Result<SyncReport, SyncError> {
    let writing = index.begin_sync(workspace.root())?;
    let registered = writing.registered();
    let mut report = SyncReport {
        workspace: registered.name.clone(),
        ..SyncReport::default()
    };
    let sync_config = SyncConfig::of(config, options);
    let scanned = scan_log(&writing, workspace, &sync_config, options, &mut report)?;
    let head = scanned.head;
    let followed = follow_history(&writing, workspace, head, &mut report)?;
    let policy_changed = sync_config.store_in_effect(&writing, workspace, head)?;
    let mut changed =
        scanned.changed || followed.walked_again || followed.branches_changed || policy_changed;
    changed |= retake_reused_ids(&writing, workspace, head, &sync_config, &mut report)?;
    if !changed {
        // Nothing to write: leave the index (and its last-sync time) alone,
        // but write the keyword index if it lags (gone, or a catch-up that
        // failed or never ran after its database's commit).
        report.memories = writing.registered().live_memories;
        if scanned.scan_changed {
            writing.commit()?;
        } else {
            drop(writing);
        }
        if !options.keywords_later {
            catch_up_if_lagging(index, &mut report);
        }
        return Ok(report);
    }
    weigh(&writing, workspace, head, followed, policy_changed)?;
    report.memories = writing.record_synced(report.head.as_deref())?;
    if options.abort_before_commit {
        std::process::abort();
    }
    writing.commit()?;
    if !options.keywords_later {
        catch_up_keyword_index(index, &mut report);
    }
    Ok(report)
}

/// Weighs staleness and the trust verdicts of the memories due, under the
/// policy stored.
fn weigh(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: Option<gix::ObjectId>,
    followed: Followed,
    policy_changed: bool,
) -> Result<(), SyncError> {
    let registered = writing.registered();
    // Every memory weighed (again) under a new policy or in a workspace
    // seen for the first time; else those whose row, provenance or
    // releases this sync wrote.
    let due = if policy_changed || registered.new || followed.walked_again {
        VerdictsDue::All
    } else {
        VerdictsDue::Noted
    };
    let mut stale_due = if policy_changed {
        StaleDue::All
    } else {
        followed.stale_due
    };
    let policy = writing.stored_policy()?;
    // The cited code, checked where it changed; the memories whose
    // citations' verdicts moved are judged again.
    let every_cite = registered.new || followed.walked_again || followed.old_head.is_none();
    let cited = cites::check(writing, workspace, head, followed.old_head, every_cite)?;
    if let StaleDue::Changed { cited: due, .. } = &mut stale_due {
        *due = cited;
    }
    // What history answers of the code: the paths deleted between the
    // last HEAD walked and this one, and HEAD's tree as the judgement asks.
    if let StaleDue::Changed { deleted, .. } = &mut stale_due
        && let (Some(head), Some(old_head)) = (head, followed.old_head)
        && old_head != head
    {
        *deleted = crate::adapters::history::paths::deleted_between(workspace, old_head, head)?;
    }
    let mut code = match head {
        Some(head) => Some(crate::adapters::history::paths::AtHead::new(
            workspace, head,
        )?),
        None => None,
    };
    writing.weigh_staleness(
        code.as_mut()
            .map(|code| code as &mut dyn crate::domain::staleness::Code),
        stale_due,
        policy.as_ref(),
    )?;
    writing.weigh_verdicts(due)?;
    Ok(())
}

/// What the look at the memory folder found.
struct Scanned {
    /// HEAD's commit.
    head: Option<gix::ObjectId>,
    /// The workspace is new, HEAD moved since the last sync or walk, or the
    /// plan wrote to the index.
    changed: bool,
    /// The check of every file this sync stands on is not the last one
    /// (and was stored).
    scan_changed: bool,
}

/// Looks at the memory folder: a large folder whose stat, HEAD and last
/// check of every file say nothing changed is not checked file by file
/// (`FolderScan`); else what the log holds is gathered, planned and
/// written.
fn scan_log(
    writing: &Writing<'_>,
    workspace: &Workspace,
    sync_config: &SyncConfig,
    options: SyncOptions,
    report: &mut SyncReport,
) -> Result<Scanned, SyncError> {
    let registered = writing.registered();
    let folder = folder_stat(&workspace.memory_dir());
    let began_ns = now_ns();
    let head_now = workspace.head_commit().map(|id| id.to_string());
    let last_scan = if registered.new {
        None
    } else {
        writing.folder_scan()?
    };
    let standing = last_scan.as_ref().filter(|scan| {
        !options.every_file
            && registered.head_commit == head_now
            && registered.history_commit == head_now
            && scan.stands(folder, head_now.as_deref(), began_ns)
    });
    if let Some(standing) = standing {
        report.head = head_now;
        report.files = standing.files;
        report.folder_unchanged = true;
        let head = report
            .head
            .as_deref()
            .and_then(|id| gix::ObjectId::from_hex(id.as_bytes()).ok());
        return Ok(Scanned {
            head,
            changed: registered.new,
            scan_changed: false,
        });
    }
    let (head, files_written) = write_log(writing, workspace, sync_config, report)?;
    let scan = FolderScan::after_check(folder, began_ns, report.head.clone(), report.files);
    let scan_changed = scan != last_scan;
    if scan_changed {
        writing.store_folder_scan(scan.as_ref())?;
    }
    let changed = registered.new
        || registered.head_commit != report.head
        || registered.history_commit != report.head
        || files_written;
    Ok(Scanned {
        head,
        changed,
        scan_changed,
    })
}

/// Gathers what the log holds and the index records, plans what to write
/// and has the index write it: HEAD's commit, and whether the plan wrote
/// anything.
fn write_log(
    writing: &Writing<'_>,
    workspace: &Workspace,
    sync_config: &SyncConfig,
    report: &mut SyncReport,
) -> Result<(Option<gix::ObjectId>, bool), SyncError> {
    let mut gathered = Gathered::new(writing, workspace, sync_config, report)?;
    let plan = loop {
        match sync_plan::plan(&gathered.found) {
            Planned::Ready(plan) => break plan,
            Planned::Read(names) => gathered.read_again(writing, names)?,
        }
    };
    writing.apply(&plan)?;
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
        report_dangling_supersedes(writing, &read, report)?;
    }
    // What the sync read is written: let it go before the commit walk.
    Ok((gathered.head, files_written))
}

/// Reports each `supersedes` of the files just read that names no memory of
/// the repository, or its own.
fn report_dangling_supersedes(
    writing: &Writing<'_>,
    read: &HashSet<&str>,
    report: &mut SyncReport,
) -> Result<(), IndexError> {
    for (file, line, id, target) in writing.dangling_supersedes()? {
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
    Ok(())
}

/// What [`follow_history`] found.
struct Followed {
    /// The history was walked again from the start: the signatures are
    /// verified against another signers file, or a shallow boundary moved.
    walked_again: bool,
    /// The HEAD the last walk reached (`None`: none, or walked from the
    /// start).
    old_head: Option<gix::ObjectId>,
    /// A branch was deleted or moved.
    branches_changed: bool,
    /// Which memories staleness judges.
    stale_due: StaleDue,
}

/// Walks the commits new since the last walk (provenance), when HEAD moved
/// or the signatures must be verified anew, reports what it found, and
/// records the branches.
fn follow_history(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: Option<gix::ObjectId>,
    report: &mut SyncReport,
) -> Result<Followed, SyncError> {
    let registered = writing.registered();
    let head_moved = registered.head_commit != report.head;
    let known_commit = registered
        .history_commit
        .as_deref()
        .and_then(|id| gix::ObjectId::from_hex(id.as_bytes()).ok());
    // Which memories staleness judges: every one when the history was
    // walked from the start (or the workspace is new), else those that a
    // write, a path changed between the two HEADs or a new revert may
    // concern.
    let mut stale_due = if registered.new || (head.is_some() && known_commit.is_none()) {
        StaleDue::All
    } else {
        StaleDue::Changed {
            deleted: Vec::new(),
            reverted: Vec::new(),
            branches: Vec::new(),
            cited: Vec::new(),
        }
    };
    // Signatures verified against another signers file are verified anew.
    let signers_moved = head.is_some() && walk::signers_moved(writing, workspace)?;
    // A shallow boundary that moved (`git fetch --unshallow`, `--deepen`)
    // shows history the last walk could not see.
    let boundary = head.map(|_| walk::shallow_boundary(workspace));
    let shallow_moved = match &boundary {
        Some(boundary) => writing.shallow_boundary()? != *boundary,
        None => false,
    };
    if let Some(head) = head
        && (known_commit != Some(head) || signers_moved || shallow_moved)
    {
        // A walk again from the start: what the last walk knew is not
        // all there is.
        let known = known_commit.filter(|_| !shallow_moved);
        let boundary = boundary.as_deref().unwrap_or_default();
        let walked = walk_provenance(writing, workspace, head, known, boundary)?;
        if let StaleDue::Changed { reverted, .. } = &mut stale_due {
            reverted.clone_from(&walked.reverted);
        }
        report_walked(walked, report);
    }
    // A branch deleted (or moved) changes refs only: seen here, on every
    // sync, since nothing else would tell.
    let branches = follow_branches(writing, workspace, head, head_moved)?;
    let branches_changed = branches.changed();
    if let StaleDue::Changed { branches: due, .. } = &mut stale_due {
        *due = branches.due;
    }
    Ok(Followed {
        walked_again: signers_moved || shallow_moved,
        old_head: known_commit,
        branches_changed,
        stale_due,
    })
}

/// The branches now against those the index recorded: the index's rows,
/// the repository's tips, the core's comparison, history's answer for each
/// gone branch to judge (whether its work is in HEAD), the core's verdict,
/// written.
fn follow_branches(
    writing: &Writing<'_>,
    workspace: &Workspace,
    head: Option<gix::ObjectId>,
    head_moved: bool,
) -> Result<crate::domain::branches::Seen, SyncError> {
    use crate::domain::branches::{self, Tip};
    let recorded = writing.branches()?;
    let tips: BTreeMap<String, Tip> = workspace
        .branch_tips()?
        .into_iter()
        .map(|(name, tip)| {
            let tip = Tip {
                id: tip.id.to_string(),
                local: tip.local,
            };
            (name, tip)
        })
        .collect();
    let compared = branches::compare(&recorded, &tips, head_moved, &mut |name| {
        writing.branch_named(name)
    })?;
    let mut history = crate::adapters::history::branches::Landed::default();
    let mut landed = BTreeMap::new();
    for name in &compared.judge {
        let tip = gix::ObjectId::from_hex(recorded[name].tip.as_bytes());
        let verdict = match (tip, head) {
            (Ok(tip), Some(head)) => history.landed(workspace, tip, head)?,
            // No commit yet: nothing is merged.
            (Ok(_), None) => Some(false),
            (Err(_), _) => None,
        };
        landed.insert(name.clone(), verdict);
    }
    let seen = branches::settle(compared, &recorded, &landed);
    writing.write_branches(&seen)?;
    Ok(seen)
}

/// What the walk found that the sync reports: the commits walked, the
/// memories whose `author` field is not their commit's author, the policy
/// changes that did not take effect.
fn report_walked(walked: walk::Walked, report: &mut SyncReport) {
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
    if walked.shallow > 0 {
        report
            .problems
            .push(SyncProblem::Other(shallow_message(walked.shallow)));
    }
}

/// What sync and doctor say of the lines a shallow clone's boundary holds.
pub fn shallow_message(lines: usize) -> String {
    format!(
        "this clone is shallow: {lines} memory lines are in its oldest commit, whose history is not here, so who wrote them is unknown; they are quarantined (`shallow`) until `git fetch --unshallow`, after which any goldfish command walks them again"
    )
}

/// Catches the keyword index up when it lags (gone, or a catch-up that
/// failed or never ran after its database's commit).
fn catch_up_if_lagging(index: &Index, report: &mut SyncReport) {
    if !index.keyword_index_holds_everything() {
        catch_up_keyword_index(index, report);
    }
}

/// Brings the keyword index up to date with the index's last commit; a
/// failure is a problem of the sync, not its failure (keyword recall then
/// ranks with a copy in memory, and this connection does not try again).
fn catch_up_keyword_index(index: &Index, report: &mut SyncReport) {
    if let Err(err) = index.catch_up_keyword_index() {
        report.problems.push(SyncProblem::Other(format!(
            "{err}; keyword recall ranks with a copy in memory until a sync writes it"
        )));
    }
}

/// What a sync of a workspace would look at again, from stat data alone.
struct Unsynced {
    /// Work-tree files new or changed since the last sync, with their size.
    changed: Vec<(String, u64)>,
    /// Files the last sync saw in the work tree that are gone.
    gone: Vec<String>,
}

/// Compares the work tree's memory files with what the index recorded of
/// them. Reads no file content and writes nothing.
fn unsynced(index: &Index, workspace: &Workspace) -> Result<Unsynced, SyncError> {
    let known = index.known_files(workspace.root())?;
    let mut problems = Vec::new();
    let files = worktree_files(workspace, &mut problems)?;
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
    Ok(Unsynced { changed, gone })
}

/// How much a sync of `workspace` would have to read: the total size of the
/// work-tree memory files whose stat data differs from what the index
/// recorded. Reads no file content.
pub fn pending_bytes(index: &Index, workspace: &Workspace) -> Result<u64, SyncError> {
    Ok(unsynced(index, workspace)?
        .changed
        .iter()
        .map(|(_, size)| size)
        .sum())
}

/// The work-tree memory files a sync of `workspace` would look at again:
/// new, changed (stat data) or gone since the last sync, by name. Reads no
/// file content and writes nothing.
pub fn changed_files(index: &Index, workspace: &Workspace) -> Result<Vec<String>, SyncError> {
    let unsynced = unsynced(index, workspace)?;
    let mut names: Vec<String> = unsynced.changed.into_iter().map(|(name, _)| name).collect();
    names.extend(unsynced.gone);
    names.sort();
    Ok(names)
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
