//! The store journal (`goldfish-journal.jsonl` in the work tree's git
//! folder): each line kept until it is in its file and old enough, and
//! appended again once git is idle ([`MemoryDir::drain_journal`]).

use super::*;

/// How long a line stays in the journal after its store: git may have read
/// the memory file before the line was appended and replace it later (a
/// merge checks the work tree, releases the index lock, then rewrites
/// files), so the journal keeps the line until such a git command is
/// surely over and the line is still in the file.
pub const JOURNAL_KEEP: Duration = Duration::from_secs(60);

pub(super) fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A line of the journal: `MILLIS<TAB>REFLOG<TAB>RECORD`, or
/// `MILLIS<TAB>REFLOG<TAB>placed<TAB>RECORD` for a line the store placed in
/// its file (a record is JSON: it holds no raw tab, and starts with `{`).
/// A goldfish from before the mark reads a marked entry as torn and drops
/// it: the line is in its file already.
pub(super) struct JournalEntry {
    /// When it was stored (ms since 1970).
    pub(super) at: u64,
    /// How many entries HEAD's reflog had then.
    pub(super) reflog: usize,
    /// The record line, without its newline.
    pub(super) line: Vec<u8>,
    /// Whether the store placed the line in its file (it said "stored"),
    /// rather than leaving it to wait in the journal while git was busy.
    /// Only a placed line can have been taken out by the user.
    pub(super) placed: bool,
}

/// The mark of a placed entry, between the reflog length and the record.
pub(super) const PLACED: &[u8] = b"placed\t";

/// A journaled line a drain put back in its file, or left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalLine {
    /// The record's id (a memory, or a tombstone or trust line).
    pub id: String,
    /// `memory`, `tombstone` or `trust`.
    pub record: &'static str,
    /// The memory file's name, e.g. `2026-11-21.jsonl`.
    pub file: String,
    /// Milliseconds since its store.
    pub age_ms: u64,
}

impl JournalLine {
    pub(super) fn of(line: &[u8], file: &str, age_ms: u64) -> JournalLine {
        let (id, record) = match Entry::parse(line) {
            Ok(Entry::Memory(memory)) => (memory.id, "memory"),
            Ok(Entry::Tombstone(tombstone)) => (tombstone.id, "tombstone"),
            Ok(Entry::Release(release)) => (release.id, "trust"),
            Err(_) => (String::new(), "memory"),
        };
        JournalLine {
            id,
            record,
            file: file.to_owned(),
            age_ms,
        }
    }
}

/// What a drain of the journal did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drained {
    /// Lines appended to their files.
    pub appended: usize,
    /// Lines appended again that the store had placed in their file: git
    /// rewrote the file without them since.
    pub put_back: Vec<JournalLine>,
    /// Placed lines the user took out of their file (`git restore`), not
    /// put back and gone from the journal.
    pub left_out: Vec<JournalLine>,
}

/// Whether the user took a line the store had placed out of memory file
/// `name` (see [`MemoryDir::drain_journal`]): git idle, HEAD's reflog as
/// long as it was at the store (`reflog`), and the file, a regular one,
/// byte for byte HEAD's version of it.
pub(super) fn restored_by_user(git: &GitSide, dir: &Path, name: &str, reflog: usize) -> bool {
    if git.activity() != GitActivity::Idle || git.reflog_len() != reflog {
        return false;
    }
    let Some(head) = git.head_file(name) else {
        return false;
    };
    matches!(read_regular(&dir.join(name)), Ok(bytes) if bytes == head)
}

/// The journal in the git folder, locked.
pub(super) struct Journal {
    pub(super) path: PathBuf,
    pub(super) file: File,
}

impl Journal {
    /// Opens (or creates) and locks the journal.
    pub(super) fn open(path: &Path) -> Result<Journal, LogError> {
        loop {
            let file = match open_regular(path, OpenOptions::new().read(true).append(true)) {
                Ok(file) => file,
                Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => {
                    match OpenOptions::new()
                        .read(true)
                        .append(true)
                        .create_new(true)
                        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                        .open(path)
                    {
                        Ok(file) => file,
                        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                        Err(err) => return Err(io_error("create", path)(err)),
                    }
                }
                Err(err) => return Err(err.into_journal_error(path)),
            };
            file.lock().map_err(io_error("lock", path))?;
            // Removed by a drain while this waited for the lock: open anew.
            if same_file(path, &file) {
                return Ok(Journal {
                    path: path.to_owned(),
                    file,
                });
            }
        }
    }

    /// Appends an entry (`placed`: see [`JournalEntry::placed`]); returns
    /// the journal's length before it.
    pub(super) fn add(
        &mut self,
        line: &[u8],
        reflog: usize,
        placed: bool,
    ) -> Result<u64, LogError> {
        let before = self
            .file
            .metadata()
            .map_err(io_error("read", &self.path))?
            .len();
        let mut bytes = format!("{}\t{reflog}\t", unix_millis()).into_bytes();
        if placed {
            bytes.extend_from_slice(PLACED);
        }
        bytes.extend_from_slice(line);
        if let Err(err) = self
            .file
            .write_all(&bytes)
            .and_then(|()| self.file.sync_data())
        {
            // No torn entry: the journal as it was.
            let _ = self.truncate(before);
            return Err(io_error("append to", &self.path)(err));
        }
        Ok(before)
    }

    pub(super) fn truncate(&mut self, len: u64) -> Result<(), LogError> {
        self.file
            .set_len(len)
            .map_err(io_error("truncate", &self.path))
    }

    /// The entries, in order.
    pub(super) fn entries(&mut self) -> Result<Vec<JournalEntry>, LogError> {
        let mut bytes = Vec::new();
        self.file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_to_end(&mut bytes))
            .map_err(io_error("read", &self.path))?;
        Ok(bytes
            .split(|&b| b == b'\n')
            .filter_map(|raw| {
                let mut fields = raw.splitn(3, |&b| b == b'\t');
                let mut number = || std::str::from_utf8(fields.next()?).ok()?.parse().ok();
                let at = number()?;
                let reflog = number()? as usize;
                let rest = fields.next()?;
                let (line, placed) = match rest.strip_prefix(PLACED) {
                    Some(line) => (line, true),
                    None => (rest, false),
                };
                Some(JournalEntry {
                    at,
                    reflog,
                    line: line.to_vec(),
                    placed,
                })
            })
            .collect())
    }

    /// Replaces the journal's lines; removes it when none are left.
    pub(super) fn rewrite(&mut self, entries: &[JournalEntry]) -> Result<(), LogError> {
        if entries.is_empty() {
            // Still locked: whoever waits for the lock sees it gone and
            // opens a new one.
            return fs::remove_file(&self.path).map_err(io_error("remove", &self.path));
        }
        let mut bytes = Vec::new();
        for JournalEntry {
            at,
            reflog,
            line,
            placed,
        } in entries
        {
            bytes.extend_from_slice(format!("{at}\t{reflog}\t").as_bytes());
            if *placed {
                bytes.extend_from_slice(PLACED);
            }
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
        // A new file renamed over the old one: a failed write (a full disk)
        // leaves the old journal whole. Whoever waits for the old one's
        // lock sees the path name another file and opens that.
        write_atomically(&self.path, &bytes).map_err(io_error("rewrite", &self.path))
    }
}

/// Per file: the lines to append, each described, and whether its store
/// had placed it (then appending it puts it back).
pub(super) type Missing = BTreeMap<String, Vec<(Vec<u8>, JournalLine, bool)>>;

/// Where a drain sorts the journal's entries.
#[derive(Default)]
pub(super) struct Sorted {
    pub(super) missing: Missing,
    /// The entries that stay in the journal.
    pub(super) kept: Vec<JournalEntry>,
    /// Placed lines the user may have restored away, checked again.
    pub(super) restored: Vec<(String, JournalEntry)>,
}

impl Sorted {
    /// Checks the placed lines the user may have restored away again,
    /// [`RESTORE_SETTLE`] later (not a `git reset` between its work tree
    /// and its reflog entry): left out when still so, else missing.
    pub(super) fn settle_restored(
        &mut self,
        git: &GitSide,
        dir: &Path,
        now: u64,
        drained: &mut Drained,
    ) {
        std::thread::sleep(RESTORE_SETTLE);
        for (name, entry) in std::mem::take(&mut self.restored) {
            let described = JournalLine::of(&entry.line, &name, now.saturating_sub(entry.at));
            if restored_by_user(git, dir, &name, entry.reflog) {
                drained.left_out.push(described);
            } else {
                self.missing
                    .entry(name)
                    .or_default()
                    .push((entry.line.clone(), described, true));
                self.kept.push(entry);
            }
        }
    }
}
