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
//!    new); bad lines and suspect records ([`trust::check`]) are problems
//!    (file:line); a row of the file whose id it lost goes.
//! 3. An id in several files is indexed from the first by name (its first
//!    line there), as [`crate::memory::view::LogView`] reads the
//!    log; its records in later files wait as duplicates, and when the
//!    indexed file loses the id the next one takes its place. A file that
//!    takes an id over from a later file has that one read again: when the
//!    later file's lines are not in the [`Found`], the plan is
//!    [`Planned::Read`], and the adapter reads them and plans again. (The
//!    adapter then gives an id back to a line committed earlier, which
//!    only provenance tells: `adapters::index::sync::retake_reused_ids`.)
//! 4. A file's record (blob id, stat data) is written when the file was
//!    read or its stat data changed.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use jiff::Timestamp;

use crate::memory::kinds::Kinds;
use crate::memory::view::{BYTE_ORDER_MARK, bom_note};
use crate::memory::{Entry, Memory, ParseError, Release, Tombstone, trust};

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
    /// indexed for and no longer holds (those the sync may remove).
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
        /// [`trust::index_flags`] of the record.
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
    let mut mirror = Mirror::of(&found.recorded);
    let mut plan = SyncPlan::default();

    let mut gone: Vec<&str> = found
        .recorded
        .files
        .keys()
        .map(String::as_str)
        .filter(|name| !found.files.contains_key(*name))
        .collect();
    gone.sort_unstable();
    for &name in &gone {
        mirror.clear_duplicates(name);
        plan.files_removed.push(name);
    }
    for &name in &gone {
        for id in mirror.ids_in(name) {
            mirror.remove(id, found, &mut plan);
            plan.memories_removed += 1;
        }
    }

    // In name order: a file that takes an id over from a later one has
    // that one read again.
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
            let read = mirror.read(name, content, found, &mut plan, &mut reread);
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
    if !unread.is_empty() {
        return Planned::Read(unread);
    }

    // The duplicates of the files read, as the reading left them.
    let read: HashMap<&str, usize> = plan
        .files_read
        .iter()
        .enumerate()
        .map(|(n, file)| (file.name, n))
        .collect();
    for (id, waiting) in mirror.duplicates {
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
    Planned::Ready(plan)
}

/// A row as the plan goes: the index's, or one it wrote.
struct MirroredRow<'a> {
    file: &'a str,
    /// `None` when the index's is not a hash (a migration clears it to
    /// have the row written again): it matches no record.
    record_hash: Option<blake3::Hash>,
    line: i64,
}

/// A record waiting in the mirror's duplicates.
struct Waits<'a> {
    line: i64,
    /// Its canonical line.
    record: Cow<'a, str>,
    memory: Option<&'a Memory>,
}

/// The plan's mirror of the index, as its writes so far leave it.
struct Mirror<'a> {
    rows: HashMap<&'a str, MirroredRow<'a>>,
    /// The ids indexed from each file.
    by_file: HashMap<&'a str, BTreeSet<&'a str>>,
    /// By id, then file.
    duplicates: HashMap<&'a str, BTreeMap<&'a str, Waits<'a>>>,
}

impl<'a> Mirror<'a> {
    fn of(recorded: &'a Recorded) -> Mirror<'a> {
        let mut mirror = Mirror {
            rows: HashMap::with_capacity(recorded.rows.len()),
            by_file: HashMap::new(),
            duplicates: HashMap::new(),
        };
        for (id, row) in &recorded.rows {
            let record_hash = blake3::Hash::from_hex(&row.record_hash).ok();
            mirror.index(id, &row.file, record_hash, row.line);
        }
        for (id, duplicates) in &recorded.duplicates {
            let waiting = mirror.duplicates.entry(id).or_default();
            for Waiting { duplicate, memory } in duplicates {
                let waits = Waits {
                    line: duplicate.line,
                    record: Cow::Borrowed(&duplicate.record),
                    memory: memory.as_ref(),
                };
                waiting.insert(&duplicate.file, waits);
            }
        }
        mirror
    }

    fn index(&mut self, id: &'a str, file: &'a str, record_hash: Option<blake3::Hash>, line: i64) {
        let row = MirroredRow {
            file,
            record_hash,
            line,
        };
        if let Some(old) = self.rows.insert(id, row)
            && old.file != file
            && let Some(ids) = self.by_file.get_mut(old.file)
        {
            ids.remove(id);
        }
        self.by_file.entry(file).or_default().insert(id);
    }

    fn ids_in(&self, file: &str) -> Vec<&'a str> {
        self.by_file
            .get(file)
            .map(|ids| ids.iter().copied().collect())
            .unwrap_or_default()
    }

    fn clear_duplicates(&mut self, file: &str) {
        for waiting in self.duplicates.values_mut() {
            waiting.remove(file);
        }
    }

    /// Writes a row (a [`RowChange::Write`]) of `id`.
    fn write(&mut self, plan: &mut SyncPlan<'a>, id: &'a str, change: RowChange<'a>) {
        if let RowChange::Write {
            file,
            line,
            record_hash,
            ..
        } = &change
        {
            self.index(id, file, Some(*record_hash), *line);
        }
        plan.rows.push(change);
    }

    /// Deletes the row of `id`; the record of the same id in the next file
    /// by name, if one has it, takes its place.
    fn remove(&mut self, id: &'a str, found: &Found, plan: &mut SyncPlan<'a>) {
        plan.rows.push(RowChange::Remove { id });
        if let Some(old) = self.rows.remove(id)
            && let Some(ids) = self.by_file.get_mut(old.file)
        {
            ids.remove(id);
        }
        let Some((file, waits)) = self
            .duplicates
            .get_mut(id)
            .and_then(|waiting| waiting.pop_first())
        else {
            return;
        };
        plan.duplicates_taken.push((id, file));
        if let Some(memory) = waits.memory {
            let suspicions = trust::check(memory, found.now, found.kinds.as_ref());
            let change = RowChange::Write {
                file,
                line: waits.line,
                memory,
                record_hash: record_hash(&waits.record),
                flags: trust::index_flags(&suspicions),
            };
            self.write(plan, id, change);
        }
    }

    /// Brings the rows of one memory file in line with its lines.
    fn read(
        &mut self,
        name: &'a str,
        content: &'a Content,
        found: &Found,
        plan: &mut SyncPlan<'a>,
        reread: &mut BTreeSet<&'a str>,
    ) -> FileRead<'a> {
        let indexed = self.ids_in(name);
        let existing: HashMap<&str, (Option<blake3::Hash>, i64)> = indexed
            .iter()
            .map(|&id| {
                let row = &self.rows[id];
                (id, (row.record_hash, row.line))
            })
            .collect();
        self.clear_duplicates(name);
        let mut read = FileRead {
            name,
            ..FileRead::default()
        };
        let mut seen: HashSet<&str> = HashSet::new();
        for line in &content.lines {
            let number = line.number;
            let (entry, memory) = match &line.parsed {
                Ok(Entry::Tombstone(tombstone)) => {
                    read.tombstones.push(tombstone);
                    continue;
                }
                Ok(Entry::Release(release)) => {
                    read.releases.push(release);
                    continue;
                }
                Ok(entry @ Entry::Memory(memory)) => (entry, memory),
                Err(err) => {
                    let bom = bom_note(content.byte_order_mark, number as usize);
                    plan.problems.push(FileProblem::line(
                        name,
                        number,
                        format!("not a memory record ({err}{bom}); skipped"),
                    ));
                    continue;
                }
            };
            let id = memory.id.as_str();
            if !seen.insert(id) {
                plan.problems.push(FileProblem::line(
                    name,
                    number,
                    format!("id {id} appears twice in this file; skipped"),
                ));
                continue;
            }
            let canonical = entry.to_line();
            let hash = record_hash(&canonical);
            // Reported at every read of the file, recorded in the row.
            let suspicions = trust::check(memory, found.now, found.kinds.as_ref());
            for suspicion in &suspicions {
                plan.problems.push(FileProblem::line(
                    name,
                    number,
                    format!(
                        "memory {id}: {suspicion}; indexed, flagged `{}`",
                        suspicion.flag()
                    ),
                ));
            }
            let flags = trust::index_flags(&suspicions);
            let write = |record_hash| RowChange::Write {
                file: name,
                line: number,
                memory,
                record_hash,
                flags,
            };
            match existing.get(id) {
                Some((old_hash, old_line)) if *old_hash == Some(hash) && *old_line == number => {}
                Some((old_hash, _)) if *old_hash == Some(hash) => {
                    plan.rows.push(RowChange::MoveLine { id, line: number });
                    if let Some(row) = self.rows.get_mut(id) {
                        row.line = number;
                    }
                }
                Some(_) => {
                    self.write(plan, id, write(hash));
                    plan.memories_updated += 1;
                }
                None => match self.rows.get(id).map(|row| row.file) {
                    None => {
                        self.write(plan, id, write(hash));
                        plan.memories_added += 1;
                    }
                    Some(other) if other < name => {
                        self.duplicates.entry(id).or_default().insert(
                            name,
                            Waits {
                                line: number,
                                record: Cow::Owned(canonical),
                                memory: Some(memory),
                            },
                        );
                        plan.problems.push(FileProblem::line(
                            name,
                            number,
                            format!(
                                "id {id} is already indexed from another file ({other}); skipped"
                            ),
                        ));
                    }
                    Some(other) => {
                        // This file comes first: its record is the one.
                        self.write(plan, id, write(hash));
                        plan.memories_updated += 1;
                        reread.insert(other);
                    }
                },
            }
        }
        for id in indexed {
            if !seen.contains(id) {
                self.remove(id, found, plan);
                plan.memories_removed += 1;
            }
        }
        read
    }
}

/// blake3 of a canonical line: what tells a changed record.
pub fn record_hash(canonical: &str) -> blake3::Hash {
    blake3::hash(canonical.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(id: &str, content: &str) -> Memory {
        Memory {
            id: id.to_owned(),
            timestamp: "2026-11-20T10:00:00Z".to_owned(),
            kind: "decision".to_owned(),
            content: content.to_owned(),
            ..Memory::default()
        }
    }

    fn line(memory: &Memory) -> String {
        Entry::Memory(memory.clone()).to_line()
    }

    fn tombstone(id: &str, forgets: &str) -> String {
        Entry::Tombstone(Tombstone {
            id: id.to_owned(),
            timestamp: "2026-11-20T11:00:00Z".to_owned(),
            forgets: forgets.to_owned(),
            ..Tombstone::default()
        })
        .to_line()
    }

    /// A file whose blob changed, with these lines.
    fn changed(blob: &str, lines: &[String]) -> FileState {
        FileState::Listed {
            blob: blob.to_owned(),
            stat: None,
            racy: false,
            content: Some(Content::parse(lines.join("\n").as_bytes())),
        }
    }

    /// A file whose blob is the recorded one, not read.
    fn unchanged(blob: &str) -> FileState {
        FileState::Listed {
            blob: blob.to_owned(),
            stat: None,
            racy: false,
            content: None,
        }
    }

    fn recorded_file(blob: &str) -> RecordedFile {
        RecordedFile {
            blob: blob.to_owned(),
            stat: None,
            racy: false,
        }
    }

    fn row(file: &str, memory: &Memory, line: i64) -> Row {
        Row {
            file: file.to_owned(),
            record_hash: record_hash(&super::tests::line(memory))
                .to_hex()
                .to_string(),
            line,
        }
    }

    fn found(files: Vec<(&str, FileState)>, recorded: Recorded) -> Found {
        Found {
            files: files
                .into_iter()
                .map(|(name, state)| (name.to_owned(), state))
                .collect(),
            recorded,
            now: "2026-11-21T09:30:00Z".parse().unwrap(),
            kinds: None,
        }
    }

    fn ready(found: &Found) -> SyncPlan<'_> {
        match plan(found) {
            Planned::Ready(plan) => plan,
            Planned::Read(names) => panic!("the plan asks for {names:?}"),
        }
    }

    /// The rows a plan writes, in a form a test can spell.
    fn rows(plan: &SyncPlan<'_>) -> Vec<String> {
        plan.rows
            .iter()
            .map(|change| match change {
                RowChange::Write {
                    file, line, memory, ..
                } => format!("write {} {file}:{line} {}", memory.id, memory.content),
                RowChange::MoveLine { id, line } => format!("move {id} to line {line}"),
                RowChange::Remove { id } => format!("remove {id}"),
            })
            .collect()
    }

    #[test]
    fn a_changed_file_is_diffed_by_id() {
        let kept = memory("A", "kept");
        let edited = memory("B", "edited");
        let gone = memory("C", "gone");
        let added = memory("D", "added");
        let recorded = Recorded {
            files: HashMap::from([("a.jsonl".to_owned(), recorded_file("old"))]),
            rows: HashMap::from([
                ("A".to_owned(), row("a.jsonl", &kept, 1)),
                ("B".to_owned(), row("a.jsonl", &memory("B", "before"), 2)),
                ("C".to_owned(), row("a.jsonl", &gone, 3)),
            ]),
            duplicates: HashMap::from([("C".to_owned(), Vec::new())]),
        };
        let found = found(
            vec![(
                "a.jsonl",
                changed("new", &[line(&added), line(&kept), line(&edited)]),
            )],
            recorded,
        );
        let plan = ready(&found);
        assert_eq!(
            rows(&plan),
            [
                "write D a.jsonl:1 added",
                "move A to line 2",
                "write B a.jsonl:3 edited",
                "remove C",
            ]
        );
        assert_eq!(
            (
                plan.memories_added,
                plan.memories_updated,
                plan.memories_removed
            ),
            (1, 1, 1)
        );
        assert_eq!(plan.files_read.len(), 1);
        assert_eq!(
            plan.files_recorded,
            [FileRecord {
                name: "a.jsonl",
                blob: "new",
                stat: None,
                racy: false
            }]
        );
        assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    }

    #[test]
    fn an_unchanged_blob_is_not_read_and_new_stat_data_is_recorded() {
        let stat = Stat {
            size: 10,
            mtime_ns: 1,
            ctime_ns: 1,
            inode: 7,
        };
        let recorded = Recorded {
            files: HashMap::from([("a.jsonl".to_owned(), recorded_file("same"))]),
            ..Recorded::default()
        };
        let touched = FileState::Listed {
            blob: "same".to_owned(),
            stat: Some(stat),
            racy: false,
            content: None,
        };
        let found = found(vec![("a.jsonl", touched)], recorded.clone());
        let plan = ready(&found);
        assert!(plan.files_read.is_empty() && plan.rows.is_empty());
        assert_eq!(plan.files_recorded[0].stat, Some(stat));

        let found = super::tests::found(vec![("a.jsonl", unchanged("same"))], recorded);
        assert!(!ready(&found).writes(), "nothing changed, nothing written");
    }

    #[test]
    fn a_file_that_left_the_log_takes_its_rows_and_the_next_file_takes_its_ids() {
        let first = memory("X", "in a");
        let second = memory("X", "in b");
        let recorded = Recorded {
            files: HashMap::from([
                ("a.jsonl".to_owned(), recorded_file("a")),
                ("b.jsonl".to_owned(), recorded_file("b")),
            ]),
            rows: HashMap::from([("X".to_owned(), row("a.jsonl", &first, 1))]),
            duplicates: HashMap::from([(
                "X".to_owned(),
                vec![Waiting::parse(Duplicate {
                    id: "X".to_owned(),
                    file: "b.jsonl".to_owned(),
                    line: 4,
                    record: line(&second),
                })],
            )]),
        };
        let found = found(vec![("b.jsonl", unchanged("b"))], recorded);
        let plan = ready(&found);
        assert_eq!(plan.files_removed, ["a.jsonl"]);
        assert_eq!(rows(&plan), ["remove X", "write X b.jsonl:4 in b"]);
        assert_eq!(plan.duplicates_taken, [("X", "b.jsonl")]);
        assert_eq!(plan.memories_removed, 1);
        assert!(plan.files_read.is_empty() && plan.files_recorded.is_empty());
        assert!(plan.writes());
    }

    #[test]
    fn an_id_in_two_files_is_indexed_from_the_first_by_name() {
        let first = memory("X", "in a");
        let second = memory("X", "in b");
        let found = found(
            vec![
                ("a.jsonl", changed("a", &[line(&first)])),
                (
                    "b.jsonl",
                    changed("b", &[line(&memory("Y", "y")), line(&second)]),
                ),
            ],
            Recorded::default(),
        );
        let plan = ready(&found);
        assert_eq!(
            rows(&plan),
            ["write X a.jsonl:1 in a", "write Y b.jsonl:1 y"]
        );
        assert_eq!(plan.memories_added, 2);
        assert_eq!(
            plan.files_read[1].duplicates,
            [Duplicate {
                id: "X".to_owned(),
                file: "b.jsonl".to_owned(),
                line: 2,
                record: line(&second),
            }]
        );
        assert_eq!(
            plan.problems,
            [FileProblem::line(
                "b.jsonl",
                2,
                "id X is already indexed from another file (a.jsonl); skipped".to_owned()
            )]
        );
    }

    #[test]
    fn a_file_that_takes_an_id_over_has_the_later_file_read_again() {
        let first = memory("X", "in a");
        let second = memory("X", "in b");
        let recorded = Recorded {
            files: HashMap::from([("b.jsonl".to_owned(), recorded_file("b"))]),
            rows: HashMap::from([("X".to_owned(), row("b.jsonl", &second, 1))]),
            ..Recorded::default()
        };
        let mut found = found(
            vec![
                ("a.jsonl", changed("a", &[line(&first)])),
                ("b.jsonl", unchanged("b")),
            ],
            recorded,
        );
        match plan(&found) {
            Planned::Read(names) => assert_eq!(names, BTreeSet::from(["b.jsonl".to_owned()])),
            Planned::Ready(plan) => panic!("planned without b.jsonl's lines: {plan:?}"),
        }
        found
            .files
            .insert("b.jsonl".to_owned(), changed("b", &[line(&second)]));
        let plan = ready(&found);
        assert_eq!(rows(&plan), ["write X a.jsonl:1 in a"]);
        assert_eq!((plan.memories_added, plan.memories_updated), (0, 1));
        let read: Vec<&str> = plan.files_read.iter().map(|file| file.name).collect();
        assert_eq!(read, ["a.jsonl", "b.jsonl"]);
        assert_eq!(plan.files_read[1].duplicates[0].record, line(&second));
    }

    #[test]
    fn tombstones_and_releases_are_kept_per_file_and_index_no_row() {
        let kept = memory("A", "kept");
        let release = Entry::Release(Release {
            id: "R".to_owned(),
            timestamp: "2026-11-20T12:00:00Z".to_owned(),
            releases: "A".to_owned(),
            ..Release::default()
        })
        .to_line();
        let found = found(
            vec![(
                "a.jsonl",
                changed("a", &[line(&kept), tombstone("T", "A"), release]),
            )],
            Recorded::default(),
        );
        let plan = ready(&found);
        assert_eq!(rows(&plan), ["write A a.jsonl:1 kept"]);
        let read = &plan.files_read[0];
        let forgets: Vec<(&str, &str)> = read
            .tombstones
            .iter()
            .map(|t| (t.id.as_str(), t.forgets.as_str()))
            .collect();
        assert_eq!(forgets, [("T", "A")]);
        assert_eq!(read.releases[0].releases, "A");
    }

    #[test]
    fn bad_lines_and_suspect_records_are_problems_with_their_line() {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(line(&memory("A", "first")).as_bytes());
        bytes.extend_from_slice(b"\nnot json\n");
        for again in ["again", "once more"] {
            bytes.extend_from_slice(line(&memory("A", again)).as_bytes());
            bytes.push(b'\n');
        }
        let mut suspect = memory("S", "the deploy password is hunter2!");
        suspect.timestamp = "yesterday".to_owned();
        bytes.extend_from_slice(line(&suspect).as_bytes());
        let state = FileState::Listed {
            blob: "a".to_owned(),
            stat: None,
            racy: false,
            content: Some(Content::parse(&bytes)),
        };
        let found = found(vec![("a.jsonl", state)], Recorded::default());
        let plan = ready(&found);
        let problems: Vec<(Option<i64>, &str)> = plan
            .problems
            .iter()
            .map(|problem| (problem.line, problem.reason.as_str()))
            .collect();
        assert_eq!(problems.len(), 5, "{problems:#?}");
        assert_eq!(problems[0].0, Some(1));
        assert!(problems[0].1.contains("byte order mark"), "{problems:?}");
        assert_eq!(problems[1].0, Some(2));
        assert!(problems[1].1.starts_with("not a memory record"));
        assert_eq!(
            problems[2],
            (Some(4), "id A appears twice in this file; skipped")
        );
        assert!(problems[3].1.contains("flagged `secret`"), "{problems:?}");
        assert!(
            problems[4].1.contains("flagged `bad-timestamp`"),
            "{problems:?}"
        );
        assert!(problems[3..].iter().all(|(line, _)| *line == Some(5)));
        assert_eq!(
            rows(&plan),
            [
                "write A a.jsonl:3 again",
                "write S a.jsonl:5 the deploy password is hunter2!"
            ]
        );
        let RowChange::Write { flags, .. } = &plan.rows[1] else {
            panic!("{:?}", plan.rows)
        };
        assert_eq!(flags, "bad-timestamp,secret");
    }

    #[test]
    fn a_file_refused_or_vanished_is_left_as_recorded() {
        let recorded = Recorded {
            files: HashMap::from([
                ("a.jsonl".to_owned(), recorded_file("a")),
                ("b.jsonl".to_owned(), recorded_file("b")),
            ]),
            ..Recorded::default()
        };
        let found = found(
            vec![
                ("a.jsonl", FileState::Refused("is a link".to_owned())),
                ("b.jsonl", FileState::Vanished),
            ],
            recorded,
        );
        let plan = ready(&found);
        assert!(!plan.writes());
        assert_eq!(
            plan.problems,
            [FileProblem {
                file: "a.jsonl".to_owned(),
                line: None,
                reason: "is a link".to_owned()
            }]
        );
    }
}
