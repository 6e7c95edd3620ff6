//! The index as the plan's writes so far leave it: the rows, duplicates
//! and ids by file; and the reading of one file.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::memory::view::bom_note;
use crate::memory::{Entry, Memory, trust};

use super::record_hash;
use super::{Content, FileProblem, FileRead, Found, Line, Recorded, RowChange, SyncPlan, Waiting};

/// A row as the plan goes: the index's, or one it wrote.
struct PlannedRow<'a> {
    file: &'a str,
    /// `None` when the index's is not a hash (a migration clears it to
    /// have the row written again): it matches no record.
    record_hash: Option<blake3::Hash>,
    line: i64,
    /// The index checked this record and its text passed the scans
    /// ([`trust::scanned_clean`]; a row the plan writes is not taken as
    /// checked).
    scanned_clean: bool,
}

/// A record waiting in the planned index's duplicates.
pub(super) struct Waits<'a> {
    pub(super) line: i64,
    /// Its canonical line.
    pub(super) record: Cow<'a, str>,
    memory: Option<&'a Memory>,
}

/// The index as the plan's writes so far leave it.
pub(super) struct PlannedIndex<'a> {
    rows: HashMap<&'a str, PlannedRow<'a>>,
    /// The ids indexed from each file.
    by_file: HashMap<&'a str, BTreeSet<&'a str>>,
    /// By id, then file.
    pub(super) duplicates: HashMap<&'a str, BTreeMap<&'a str, Waits<'a>>>,
}

impl<'a> PlannedIndex<'a> {
    pub(super) fn of(recorded: &'a Recorded) -> PlannedIndex<'a> {
        let mut planned = PlannedIndex {
            rows: HashMap::with_capacity(recorded.rows.len()),
            by_file: HashMap::new(),
            duplicates: HashMap::new(),
        };
        for (id, row) in &recorded.rows {
            let record_hash = blake3::Hash::from_hex(&row.record_hash).ok();
            planned.index(id, &row.file, record_hash, row.line);
            if let Some(planned_row) = planned.rows.get_mut(id.as_str()) {
                planned_row.scanned_clean = trust::scanned_clean(&row.flags);
            }
        }
        for (id, duplicates) in &recorded.duplicates {
            let waiting = planned.duplicates.entry(id).or_default();
            for Waiting { duplicate, memory } in duplicates {
                let waits = Waits {
                    line: duplicate.line,
                    record: Cow::Borrowed(&duplicate.record),
                    memory: memory.as_ref(),
                };
                waiting.insert(&duplicate.file, waits);
            }
        }
        planned
    }

    fn index(&mut self, id: &'a str, file: &'a str, record_hash: Option<blake3::Hash>, line: i64) {
        let row = PlannedRow {
            file,
            record_hash,
            line,
            scanned_clean: false,
        };
        if let Some(old) = self.rows.insert(id, row)
            && old.file != file
            && let Some(ids) = self.by_file.get_mut(old.file)
        {
            ids.remove(id);
        }
        self.by_file.entry(file).or_default().insert(id);
    }

    pub(super) fn ids_in(&self, file: &str) -> Vec<&'a str> {
        self.by_file
            .get(file)
            .map(|ids| ids.iter().copied().collect())
            .unwrap_or_default()
    }

    pub(super) fn clear_duplicates(&mut self, file: &str) {
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
    pub(super) fn remove(&mut self, id: &'a str, found: &Found, plan: &mut SyncPlan<'a>) {
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

    /// The first file by name where a record of `id` waits, when that
    /// record is a memory that can take the row.
    fn first_waiting(&self, id: &str) -> Option<&'a str> {
        self.duplicates
            .get(id)
            .and_then(|waiting| waiting.first_key_value())
            .filter(|(_, waits)| waits.memory.is_some())
            .map(|(file, _)| *file)
    }

    /// Puts the record of `id` at `name:number` among the duplicates: the
    /// row is another file's.
    fn wait(
        &mut self,
        id: &'a str,
        name: &'a str,
        number: i64,
        canonical: String,
        memory: &'a Memory,
        plan: &mut SyncPlan<'a>,
    ) {
        let other = self.rows.get(id).map_or("?", |row| row.file);
        plan.problems.push(FileProblem::line(
            name,
            number,
            format!("id {id} is already indexed from another file ({other}); skipped"),
        ));
        self.duplicates.entry(id).or_default().insert(
            name,
            Waits {
                line: number,
                record: Cow::Owned(canonical),
                memory: Some(memory),
            },
        );
    }

    /// Brings the rows of one memory file in line with its lines.
    pub(super) fn read(
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
            let Some((entry, memory)) = memory_of(line, name, content, plan, &mut read) else {
                continue;
            };
            let number = line.number;
            let id = memory.id.as_str();
            if !seen.insert(id) {
                plan.problems.push(FileProblem::line(
                    name,
                    number,
                    format!("id {id} appears twice in this file; skipped"),
                ));
                continue;
            }
            let record = ReadRecord::checked(
                (name, number),
                entry,
                memory,
                |hash| {
                    self.rows
                        .get(id)
                        .is_some_and(|row| row.scanned_clean && row.record_hash == Some(hash))
                },
                found,
                plan,
            );
            self.place(record, existing.get(id), found, plan, reread);
        }
        for id in indexed {
            if !seen.contains(id) {
                self.remove(id, found, plan);
                plan.memories_removed += 1;
            }
        }
        read
    }

    /// Writes, moves or keeps the row of a memory read from a file
    /// (`existing`: what the index holds of its id in that file), or puts
    /// it among the duplicates when another file comes first.
    fn place(
        &mut self,
        record: ReadRecord<'a>,
        existing: Option<&(Option<blake3::Hash>, i64)>,
        found: &Found,
        plan: &mut SyncPlan<'a>,
        reread: &mut BTreeSet<&'a str>,
    ) {
        let ReadRecord {
            name,
            number,
            memory,
            canonical,
            hash,
            flags,
        } = record;
        let id = memory.id.as_str();
        let write = |record_hash| RowChange::Write {
            file: name,
            line: number,
            memory,
            record_hash,
            flags,
        };
        match existing {
            Some((old_hash, old_line)) if *old_hash == Some(hash) && *old_line == number => {}
            Some((old_hash, _)) if *old_hash == Some(hash) => {
                plan.rows.push(RowChange::MoveLine { id, line: number });
                if let Some(row) = self.rows.get_mut(id) {
                    row.line = number;
                }
            }
            // The row is here only because its line was committed before
            // the one of a file that sorts first (the adapter's retake).
            // Changed, it is not that line any more: the first file by name
            // takes the id back, as a rebuild gives it, and the retake
            // decides again.
            Some(_) if self.first_waiting(id).is_some_and(|first| first < name) => {
                self.remove(id, found, plan);
                self.wait(id, name, number, canonical, memory, plan);
                plan.memories_updated += 1;
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
                    self.wait(id, name, number, canonical, memory, plan);
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
}

/// The memory a line holds; a tombstone or release goes to what the file
/// read holds, and a line that is no record is reported.
fn memory_of<'a>(
    line: &'a Line,
    name: &'a str,
    content: &Content,
    plan: &mut SyncPlan<'a>,
    read: &mut FileRead<'a>,
) -> Option<(&'a Entry, &'a Memory)> {
    match &line.parsed {
        Ok(Entry::Tombstone(tombstone)) => {
            read.tombstones.push(tombstone);
            None
        }
        Ok(Entry::Release(release)) => {
            read.releases.push(release);
            None
        }
        Ok(entry @ Entry::Memory(memory)) => Some((entry, memory)),
        Err(err) => {
            let bom = bom_note(content.byte_order_mark, line.number as usize);
            plan.problems.push(FileProblem::line(
                name,
                line.number,
                format!("not a memory record ({err}{bom}); skipped"),
            ));
            None
        }
    }
}

/// A memory line of a file, its canonical text, hash and trust flags.
struct ReadRecord<'a> {
    name: &'a str,
    number: i64,
    memory: &'a Memory,
    canonical: String,
    hash: blake3::Hash,
    flags: String,
}

impl<'a> ReadRecord<'a> {
    /// Hashes the record and checks it; what the check finds is reported
    /// at every read of the file, and recorded in the row. The text scans
    /// are skipped for a record the index holds unchanged and found clean
    /// (`scanned_clean` of its hash): they are pure functions of the record,
    /// and the costly part of a read.
    fn checked(
        (name, number): (&'a str, i64),
        entry: &Entry,
        memory: &'a Memory,
        scanned_clean: impl FnOnce(blake3::Hash) -> bool,
        found: &Found,
        plan: &mut SyncPlan<'a>,
    ) -> ReadRecord<'a> {
        let id = memory.id.as_str();
        let canonical = entry.to_line();
        let hash = record_hash(&canonical);
        // Reported at every read of the file, recorded in the row.
        let suspicions =
            trust::check_known(memory, found.now, found.kinds.as_ref(), scanned_clean(hash));
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
        ReadRecord {
            name,
            number,
            memory,
            canonical,
            hash,
            flags,
        }
    }
}
