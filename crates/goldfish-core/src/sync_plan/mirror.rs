//! The plan's mirror of the index: the rows, duplicates and ids by file
//! as the plan's writes so far leave them, and the reading of one file.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::memory::view::bom_note;
use crate::memory::{Entry, Memory, trust};

use super::record_hash;
use super::{Content, FileProblem, FileRead, Found, Recorded, RowChange, SyncPlan, Waiting};

/// A row as the plan goes: the index's, or one it wrote.
struct MirroredRow<'a> {
    file: &'a str,
    /// `None` when the index's is not a hash (a migration clears it to
    /// have the row written again): it matches no record.
    record_hash: Option<blake3::Hash>,
    line: i64,
}

/// A record waiting in the mirror's duplicates.
pub(super) struct Waits<'a> {
    pub(super) line: i64,
    /// Its canonical line.
    pub(super) record: Cow<'a, str>,
    memory: Option<&'a Memory>,
}

/// The plan's mirror of the index, as its writes so far leave it.
pub(super) struct Mirror<'a> {
    rows: HashMap<&'a str, MirroredRow<'a>>,
    /// The ids indexed from each file.
    by_file: HashMap<&'a str, BTreeSet<&'a str>>,
    /// By id, then file.
    pub(super) duplicates: HashMap<&'a str, BTreeMap<&'a str, Waits<'a>>>,
}

impl<'a> Mirror<'a> {
    pub(super) fn of(recorded: &'a Recorded) -> Mirror<'a> {
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
