//! The diff: the memory lines of the files a range changes, read from
//! git, and what it adds and removes.

use super::*;

/// One line of a memory file at a commit.
#[derive(Clone)]
pub(super) struct Line {
    pub(super) file: String,
    pub(super) number: usize,
    pub(super) key: Key,
    pub(super) entry: Option<Entry>,
    /// Why it is not a record.
    pub(super) problem: Option<String>,
    /// Not text: a NUL, or bytes that are not UTF-8.
    pub(super) binary: bool,
    /// The line's first [`RAW_KEPT`] bytes.
    pub(super) raw: String,
}

/// A line's identity for the diff: its id and the hash of its canonical
/// text (two spellings of a record are one line, as the merge counts
/// them); an unreadable line has no id and the hash of its bytes. A hash,
/// not the text: a review of a large log holds 32 bytes a line, not a
/// copy of it.
pub(super) type Key = (String, [u8; 32]);

pub(super) fn key_of(raw: &[u8]) -> (Key, Option<Entry>, Option<String>) {
    match Entry::parse(raw) {
        Ok(entry) => {
            let canonical = blake3::hash(entry.to_line().as_bytes());
            (
                (entry.id().to_owned(), *canonical.as_bytes()),
                Some(entry),
                None,
            )
        }
        Err(err) => (
            (String::new(), *blake3::hash(raw).as_bytes()),
            None,
            Some(err.to_string()),
        ),
    }
}

/// How much of a line a review keeps to show it (it shows at most 400
/// characters of one): a line over the size a record may take is never
/// copied whole.
pub(super) const RAW_KEPT: usize = 4096;

pub(super) fn key_in(raw: &[u8]) -> Option<(Key, ())> {
    Some((key_of(raw).0, ()))
}

/// Every line of memory file `file` (blob `blob`), in order; with `only`,
/// only the lines whose id it holds (read with a light parse of the id).
pub(super) fn file_lines(
    workspace: &Workspace,
    file: &str,
    blob: gix::ObjectId,
    only: Option<&HashSet<&str>>,
) -> Result<Vec<Line>, AppError> {
    #[derive(serde::Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow)]
        id: std::borrow::Cow<'a, str>,
    }
    let bytes = workspace
        .read_blob(blob)
        .map_err(|err| AppError::from(anyhow::Error::new(err)))?;
    let mut lines = Vec::new();
    for (number, raw) in goldfish_log::record::split_lines(&bytes) {
        if let Some(only) = only {
            let wanted = serde_json::from_slice::<IdOnly<'_>>(raw)
                .is_ok_and(|record| only.contains(record.id.as_ref()));
            if !wanted {
                continue;
            }
        }
        let (key, entry, problem) = key_of(raw);
        lines.push(Line {
            file: file.to_owned(),
            number,
            key,
            entry,
            problem,
            binary: raw.contains(&0) || std::str::from_utf8(raw).is_err(),
            raw: String::from_utf8_lossy(&raw[..raw.len().min(RAW_KEPT)]).into_owned(),
        });
    }
    Ok(lines)
}

/// The lines of `commit`'s memory files whose id `ids` holds.
pub(super) fn lines_with_ids(
    workspace: &Workspace,
    commit: gix::ObjectId,
    ids: &HashSet<&str>,
) -> Result<Vec<Line>, AppError> {
    let git = |err| AppError::from(anyhow::Error::new(err));
    let mut lines = Vec::new();
    if ids.is_empty() {
        return Ok(lines);
    }
    for (name, blob) in workspace.memory_files_at(commit).map_err(git)? {
        lines.extend(file_lines(workspace, &name, blob, Some(ids))?);
    }
    Ok(lines)
}

/// The lines of the memory files that differ between `since` and `head`
/// (each side's), and of the files both have alike only those whose id a
/// change may concern: what the diff needs, without reading every memory
/// of a large log in full.
pub(super) fn diffed_lines(
    workspace: &Workspace,
    since: Option<gix::ObjectId>,
    head: gix::ObjectId,
) -> Result<(Vec<Line>, Vec<Line>), AppError> {
    let git = |err| AppError::from(anyhow::Error::new(err));
    let files_since = match since {
        Some(since) => workspace.memory_files_at(since).map_err(git)?,
        None => Default::default(),
    };
    let files_head = workspace.memory_files_at(head).map_err(git)?;
    let alike = |name: &String, blob: &gix::ObjectId| {
        files_since.get(name) == Some(blob) && files_head.get(name) == Some(blob)
    };
    let mut before = Vec::new();
    for (name, blob) in files_since.iter().filter(|(n, b)| !alike(n, b)) {
        before.extend(file_lines(workspace, name, *blob, None)?);
    }
    let mut after = Vec::new();
    for (name, blob) in files_head.iter().filter(|(n, b)| !alike(n, b)) {
        after.extend(file_lines(workspace, name, *blob, None)?);
    }
    let before_keys: HashSet<&Key> = before.iter().map(|line| &line.key).collect();
    let after_keys: HashSet<&Key> = after.iter().map(|line| &line.key).collect();
    let mut ids: HashSet<&str> = HashSet::new();
    for line in after.iter().filter(|line| !before_keys.contains(&line.key)) {
        ids.insert(&line.key.0);
        match &line.entry {
            Some(Entry::Tombstone(t)) => ids.insert(&t.forgets),
            Some(Entry::Release(r)) => ids.insert(&r.releases),
            _ => true,
        };
    }
    for line in before.iter().filter(|line| !after_keys.contains(&line.key)) {
        ids.insert(&line.key.0);
    }
    ids.remove("");
    let mut shared = Vec::new();
    if !ids.is_empty() {
        for (name, blob) in files_head.iter().filter(|(n, b)| alike(n, b)) {
            shared.extend(file_lines(workspace, name, *blob, Some(&ids))?);
        }
    }
    before.extend(shared.iter().cloned());
    after.extend(shared);
    Ok((before, after))
}

/// The diff of a range's memory lines: what it adds and what it removes.
pub(super) struct Diff<'l> {
    pub(super) before: &'l [Line],
    pub(super) after: &'l [Line],
    pub(super) after_keys: HashSet<&'l Key>,
    pub(super) before_by_id: HashMap<&'l str, Vec<&'l Line>>,
    pub(super) added: Vec<&'l Line>,
    pub(super) removed: Vec<&'l Line>,
}

impl<'l> Diff<'l> {
    pub(super) fn of(before: &'l [Line], after: &'l [Line]) -> Self {
        let before_keys: HashSet<&Key> = before.iter().map(|line| &line.key).collect();
        let after_keys: HashSet<&Key> = after.iter().map(|line| &line.key).collect();
        let mut before_by_id: HashMap<&str, Vec<&Line>> = HashMap::new();
        for line in before {
            if !line.key.0.is_empty() {
                before_by_id.entry(&line.key.0).or_default().push(line);
            }
        }
        let after_ids: HashSet<&str> = after.iter().map(|line| line.key.0.as_str()).collect();
        let added: Vec<&Line> = after
            .iter()
            .filter(|line| !before_keys.contains(&line.key))
            .collect();
        let removed: Vec<&Line> = before
            .iter()
            .filter(|line| {
                !line.key.0.is_empty()
                    && !after_keys.contains(&line.key)
                    && !after_ids.contains(line.key.0.as_str())
            })
            .collect();
        Diff {
            before,
            after,
            after_keys,
            before_by_id,
            added,
            removed,
        }
    }

    /// The line an added line replaces in place, if any: one of its id
    /// that HEAD no longer has (else the first of its id).
    pub(super) fn was(&self, line: &Line) -> Option<Was> {
        self.before_by_id
            .get(line.key.0.as_str())
            .and_then(|lines| {
                lines
                    .iter()
                    .find(|old| !self.after_keys.contains(&old.key))
                    .or(lines.first())
                    .map(|old| Was {
                        file: old.file.clone(),
                        line: old.number,
                        content: match &old.entry {
                            Some(Entry::Memory(memory)) => shown(&memory.content, 2000),
                            _ => shown(&old.raw, 400),
                        },
                    })
            })
    }

    /// Whether an added line replaces a line of its id in place: one that
    /// `since` has and HEAD no longer has.
    pub(super) fn replaces(&self, line: &Line) -> bool {
        self.before_by_id
            .get(line.key.0.as_str())
            .is_some_and(|lines| lines.iter().any(|old| !self.after_keys.contains(&old.key)))
    }

    /// The added lines that reuse the id of a line of another text
    /// that stays (in HEAD, or in `base`'s lines when BASE is not in HEAD's
    /// history: the branch a pull request goes into), each with where that
    /// line is. An id is its memory's: a second text under it is never that
    /// memory, whoever wrote it.
    pub(super) fn reused(&self, base: &[Line]) -> HashMap<Key, String> {
        let mut holders: HashMap<&str, Vec<&Line>> = HashMap::new();
        for line in self.after.iter().chain(base) {
            if line.entry.is_some() {
                holders.entry(&line.key.0).or_default().push(line);
            }
        }
        let mut reused = HashMap::new();
        for line in &self.added {
            if line.entry.is_none() || self.replaces(line) {
                continue;
            }
            let other = holders
                .get(line.key.0.as_str())
                .and_then(|lines| lines.iter().find(|other| other.key.1 != line.key.1));
            if let Some(other) = other {
                reused.insert(line.key.clone(), format!("{}:{}", other.file, other.number));
            }
        }
        reused
    }

    /// What a tombstone forgets, as HEAD (or BASE) has it.
    pub(super) fn content_of(&self, id: &str) -> Option<String> {
        self.after
            .iter()
            .chain(self.before)
            .find_map(|line| match &line.entry {
                Some(Entry::Memory(memory)) if memory.id == id => Some(shown(&memory.content, 80)),
                _ => None,
            })
    }
}
