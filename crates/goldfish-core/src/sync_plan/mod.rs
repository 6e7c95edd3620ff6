//! What a sync writes into the index, decided from what it found: no I/O,
//! no SQL, no clock.
//!
//! The index adapter (`adapters::index::sync`) gathers a [`Found`]: every
//! memory file of the log (HEAD's tree and the work tree) with its blob id
//! and, when the blob changed, its parsed lines; and what the index records
//! of the workspace's files and of the memories those files hold or held
//! ([`Recorded`]). [`plan`] goes through the files as a sync reads them,
//! over that copy of the index, and says what to write: a [`SyncPlan`],
//! which the adapter writes in one transaction.
//!
//! 1. Files that left the log go first (their tombstones, releases and
//!    waiting duplicates, then their memories), so no id is brought back
//!    from them.
//! 2. In name order, a file whose blob changed is read: its tombstones and
//!    releases replace the ones it had; each memory is compared by id with
//!    the row the index has (unchanged, moved to another line, rewritten,
//!    new); bad lines and suspect records ([`trust::check`](crate::memory::trust::check)) are problems
//!    (file:line); a row of the file whose id it lost goes.
//! 3. An id in several files is indexed from the first by name (its first
//!    line there), as [`crate::memory::view::LogView`] reads the
//!    log; its records in later files wait as duplicates, and when the
//!    indexed file loses the id the next one takes its place. A file that
//!    takes an id over from a later file has that one read again: when the
//!    later file's lines are not in the [`Found`], the plan is
//!    [`Planned::Read`], and the adapter reads them and plans again. (The
//!    adapter then gives an id back to a line committed earlier, which
//!    only provenance tells: `adapters::index::sync::retake_reused_ids`;
//!    when that line changes, the first file by name takes the id again.)
//! 4. A file's record (blob id, stat data) is written when the file was
//!    read or its stat data changed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use jiff::Timestamp;

use crate::memory::kinds::Kinds;
use crate::memory::view::BYTE_ORDER_MARK;
use crate::memory::{Entry, Memory, ParseError, Release, Tombstone};

mod planned_index;

use planned_index::{PlannedIndex, Waits};

/// A file's stat data, as the index records it: a work-tree file whose
/// stat data did not change since the last sync is not read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub size: i64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub inode: i64,
}

impl Stat {
    /// Whether the file changed too shortly before `read_at_ns` for its stat
    /// data to tell a later change apart: file times are coarse (a clock
    /// tick, or seconds on some file systems), so a write in the same tick
    /// of the same size leaves them as they were. Git calls such entries
    /// racily clean and hashes them again; so does sync.
    pub fn racy(&self, read_at_ns: i64) -> bool {
        const MARGIN_NS: i64 = 2_000_000_000;
        self.mtime_ns.max(self.ctime_ns) > read_at_ns - MARGIN_NS
    }
}

/// What the index records of a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedFile {
    /// Its git blob id when it was last read.
    pub blob: String,
    /// Its stat data then; `None` for a file read from HEAD's tree.
    pub stat: Option<Stat>,
    /// Read too soon after a change to trust `stat` (see [`Stat::racy`]).
    pub racy: bool,
}

/// The indexed record of a memory id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The file it is indexed from.
    pub file: String,
    /// blake3 of its canonical line.
    pub record_hash: String,
    pub line: i64,
    /// The trust flags the index stored with it
    /// ([`trust::index_flags`](crate::memory::trust::index_flags)).
    pub flags: String,
}

/// A record of an id that is indexed from an earlier file (by name): it
/// waits to take that one's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    pub id: String,
    pub file: String,
    pub line: i64,
    /// Its canonical line.
    pub record: String,
}

/// A [`Duplicate`] the index keeps, and the memory its record holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub duplicate: Duplicate,
    /// `None` if the record is not a memory's (the index stores only
    /// canonical memory records: it is).
    pub memory: Option<Memory>,
}

impl Waiting {
    pub fn parse(duplicate: Duplicate) -> Waiting {
        let memory = match Entry::parse(duplicate.record.as_bytes()) {
            Ok(Entry::Memory(memory)) => Some(memory),
            _ => None,
        };
        Waiting { duplicate, memory }
    }
}

/// What the index records of a workspace, as far as a sync needs it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recorded {
    /// Every memory file of the workspace, by name.
    pub files: HashMap<String, RecordedFile>,
    /// By id: every row indexed from a file that is read or left the log,
    /// and the row of every id the lines read hold.
    pub rows: HashMap<String, Row>,
    /// By id, in any order: the duplicates of every id such a file is
    /// indexed for and no longer holds (those the sync may remove), or
    /// holds while a record of it waits in a file that sorts first (a
    /// retake's: the plan gives the id back when the line changes).
    pub duplicates: HashMap<String, Vec<Waiting>>,
}

/// One non-blank line of a memory file and what it parsed to.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// 1-based.
    pub number: i64,
    pub parsed: Result<Entry, ParseError>,
}

/// The parsed lines of a memory file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Content {
    pub lines: Vec<Line>,
    /// The file starts with a UTF-8 byte order mark (its first line does
    /// not parse, and the problem says why).
    pub byte_order_mark: bool,
}

impl Content {
    pub fn parse(bytes: &[u8]) -> Content {
        Content {
            lines: goldfish_log::record::parse_log(bytes)
                .into_iter()
                .map(|line| Line {
                    number: line.number as i64,
                    parsed: line.parsed,
                })
                .collect(),
            byte_order_mark: bytes.starts_with(BYTE_ORDER_MARK),
        }
    }

    /// The ids of its memories, in line order (an id twice, twice).
    pub fn memory_ids(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|line| match &line.parsed {
            Ok(Entry::Memory(memory)) => Some(memory.id.as_str()),
            _ => None,
        })
    }
}

/// A memory file of the log, as the sync found it.
#[derive(Debug, Clone, PartialEq)]
pub enum FileState {
    /// Its blob id (hashed, from HEAD's tree, or the recorded one when its
    /// stat data did not change) and stat data (`None` when it is only in
    /// HEAD); its lines when they were read: when its blob changed, or
    /// when the plan asked for them.
    Listed {
        blob: String,
        stat: Option<Stat>,
        racy: bool,
        content: Option<Content>,
    },
    /// Only in HEAD, which did not move: not looked at, left as recorded
    /// unless the plan asks for it.
    Unlooked,
    /// Gone since it was listed (git rewrites a file by unlinking it and
    /// creating it anew), or not in HEAD after all: left as recorded; the
    /// next sync reads it.
    Vanished,
    /// Replaced by a link or a FIFO since it was listed: skipped, for the
    /// reason given.
    Refused(String),
}

/// What a sync found: the log's files and what the index records.
#[derive(Debug, Clone)]
pub struct Found {
    /// Every memory file of the log (HEAD's and the work tree's), by name.
    pub files: BTreeMap<String, FileState>,
    pub recorded: Recorded,
    /// "Now", for the future-timestamp check of the problems it reports.
    pub now: Timestamp,
    /// The repository's types; `None` when its config cannot be used.
    pub kinds: Option<Kinds>,
}

/// A plan, or the files it needs read first.
#[derive(Debug)]
pub enum Planned<'a> {
    Ready(SyncPlan<'a>),
    /// A file took an id over from these, whose lines the [`Found`] lacks:
    /// read them (whatever their blob) and plan again.
    Read(BTreeSet<String>),
}

/// What a sync writes, in the order to write it.
#[derive(Debug, Default, PartialEq)]
pub struct SyncPlan<'a> {
    /// Files that left the log: their record, tombstones, releases and
    /// duplicates go (their memories go in `rows`).
    pub files_removed: Vec<&'a str>,
    /// The memory rows written, in order.
    pub rows: Vec<RowChange<'a>>,
    /// Duplicates (id, file) that became the indexed record of their id.
    pub duplicates_taken: Vec<(&'a str, &'a str)>,
    /// The files read, in name order: what replaces their tombstones,
    /// releases and duplicates.
    pub files_read: Vec<FileRead<'a>>,
    /// Files whose record (blob id, stat data) is written.
    pub files_recorded: Vec<FileRecord<'a>>,
    /// Lines skipped and records indexed flagged, in file and line order.
    pub problems: Vec<FileProblem>,
    pub memories_added: usize,
    pub memories_updated: usize,
    pub memories_removed: usize,
}

impl SyncPlan<'_> {
    /// Whether the plan writes anything at all.
    pub fn writes(&self) -> bool {
        !self.files_removed.is_empty() || !self.files_recorded.is_empty()
    }
}

/// A change to the memory rows.
#[derive(Debug, Clone, PartialEq)]
pub enum RowChange<'a> {
    /// Insert the record, or rewrite the row of its id, whatever file that
    /// came from.
    Write {
        file: &'a str,
        line: i64,
        memory: &'a Memory,
        /// [`record_hash`] of the record.
        record_hash: blake3::Hash,
        /// [`trust::index_flags`](crate::memory::trust::index_flags) of the record.
        flags: String,
    },
    /// The same record, at another line of its file.
    MoveLine {
        id: &'a str,
        line: i64,
    },
    Remove {
        id: &'a str,
    },
}

/// A file read: what it holds besides the memories it is indexed for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileRead<'a> {
    pub name: &'a str,
    pub tombstones: Vec<&'a Tombstone>,
    pub releases: Vec<&'a Release>,
    /// Its records of ids indexed from an earlier file, by id.
    pub duplicates: Vec<Duplicate>,
}

/// A file's record as the index keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRecord<'a> {
    pub name: &'a str,
    pub blob: &'a str,
    pub stat: Option<Stat>,
    pub racy: bool,
}

/// A problem with a memory file or one of its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    pub file: String,
    pub line: Option<i64>,
    pub reason: String,
}

impl FileProblem {
    fn line(file: &str, line: i64, reason: String) -> FileProblem {
        FileProblem {
            file: file.to_owned(),
            line: Some(line),
            reason,
        }
    }
}

/// What a sync writes, given what it found (see the module's steps).
pub fn plan(found: &Found) -> Planned<'_> {
    let mut planned = PlannedIndex::of(&found.recorded);
    let mut plan = SyncPlan::default();
    remove_gone(found, &mut planned, &mut plan);
    let unread = read_changed(found, &mut planned, &mut plan);
    if !unread.is_empty() {
        return Planned::Read(unread);
    }
    list_duplicates(planned, &mut plan);
    Planned::Ready(plan)
}

/// The files the index records that are gone: their rows removed (the
/// duplicates of their ids in other files take their place).
fn remove_gone<'a>(found: &'a Found, planned: &mut PlannedIndex<'a>, plan: &mut SyncPlan<'a>) {
    let mut gone: Vec<&str> = found
        .recorded
        .files
        .keys()
        .map(String::as_str)
        .filter(|name| !found.files.contains_key(*name))
        .collect();
    gone.sort_unstable();
    for &name in &gone {
        planned.clear_duplicates(name);
        plan.files_removed.push(name);
    }
    for &name in &gone {
        for id in planned.ids_in(name) {
            planned.remove(id, found, plan);
            plan.memories_removed += 1;
        }
    }
}

/// Reads the files whose blob changed, in name order: a file that takes
/// an id over from a later one has that one read again. Returns the files
/// it must read but whose content was not gathered.
fn read_changed<'a>(
    found: &'a Found,
    planned: &mut PlannedIndex<'a>,
    plan: &mut SyncPlan<'a>,
) -> BTreeSet<String> {
    let mut reread: BTreeSet<&str> = BTreeSet::new();
    let mut unread: BTreeSet<String> = BTreeSet::new();
    for (name, state) in &found.files {
        let again = reread.contains(name.as_str());
        let (blob, stat, racy, content) = match state {
            FileState::Listed {
                blob,
                stat,
                racy,
                content,
            } => (blob, *stat, *racy, content),
            FileState::Unlooked => {
                if again {
                    unread.insert(name.clone());
                }
                continue;
            }
            FileState::Vanished => continue,
            FileState::Refused(reason) => {
                plan.problems.push(FileProblem {
                    file: name.clone(),
                    line: None,
                    reason: reason.clone(),
                });
                continue;
            }
        };
        let recorded = found.recorded.files.get(name);
        let unchanged = recorded.is_some_and(|recorded| recorded.blob == *blob) && !again;
        if !unchanged {
            let Some(content) = content else {
                unread.insert(name.clone());
                continue;
            };
            let read = planned.read(name, content, found, plan, &mut reread);
            plan.files_read.push(read);
        }
        if !unchanged
            || recorded.is_some_and(|recorded| recorded.stat != stat || recorded.racy != racy)
        {
            plan.files_recorded.push(FileRecord {
                name,
                blob,
                stat,
                racy,
            });
        }
    }
    unread
}

/// The duplicates of the files read, as the reading left them.
fn list_duplicates<'a>(planned: PlannedIndex<'a>, plan: &mut SyncPlan<'a>) {
    let read: HashMap<&str, usize> = plan
        .files_read
        .iter()
        .enumerate()
        .map(|(n, file)| (file.name, n))
        .collect();
    for (id, waiting) in planned.duplicates {
        for (file, Waits { line, record, .. }) in waiting {
            if let Some(&n) = read.get(file) {
                plan.files_read[n].duplicates.push(Duplicate {
                    id: id.to_owned(),
                    file: file.to_owned(),
                    line,
                    record: record.into_owned(),
                });
            }
        }
    }
    for file in &mut plan.files_read {
        file.duplicates.sort_by(|a, b| a.id.cmp(&b.id));
    }
}

/// blake3 of a canonical line: what tells a changed record.
pub fn record_hash(canonical: &str) -> blake3::Hash {
    blake3::hash(canonical.as_bytes())
}

#[cfg(test)]
mod tests;
