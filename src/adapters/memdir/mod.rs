//! The memory folder on disk: appends that a concurrent git operation cannot
//! lose, and reading every log file without following a link or opening
//! anything that is not a regular file.
//!
//! Git rewrites a memory file by unlinking it and creating a new one (merge,
//! rebase, checkout), and it may decide to do so before an append and do it
//! after (a merge checks the work tree, releases the index lock, then
//! rewrites). A line appended to the old file is lost, and a file created in
//! the moment git removed it makes git's own create fail, leaving the work
//! tree without the day's committed memories. So an append
//! ([`MemoryDir::append`]), step by step:
//!
//! 1. Writes the line to a journal in the work tree's git folder (fsync'd).
//! 2. Waits while git holds the index lock (bounded); while a merge, rebase,
//!    cherry-pick or revert is in progress, or when the lock stays, the line
//!    waits in the journal.
//! 3. Opens the day file without following links; when it is missing,
//!    creates it (never over anything) with HEAD's version of it first, so
//!    the work tree never lacks what HEAD has.
//! 4. Writes the line under an exclusive lock, then checks that git is still
//!    idle and the path still names the file written. If not, it removes a
//!    file it created (git may be about to create it), waits for git, and
//!    appends again unless the line is in the file git left.
//!
//! [`MemoryDir::drain_journal`] (every sync, so every command and hook)
//! appends journaled lines missing from their file once git is idle, and
//! forgets a line once it is in its file and [`JOURNAL_KEEP`] old. A line
//! the store had placed in its file and that the user took out again with
//! `git restore` (the file back to HEAD's version, HEAD unmoved) is left out,
//! not put back: see [`MemoryDir::drain_journal`].
//!
//! `activity.rs` tells what git is doing; `append.rs` appends (day files,
//! tags, the locked write); `journal.rs` keeps the store journal;
//! `regular.rs` opens only regular files and writes atomically.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::adapters::PathError;
use crate::adapters::git::Workspace;
use crate::domain::memory::view::{LogView, Problem};
use crate::domain::memory::{self, Entry};

mod activity;
mod append;
mod journal;
mod regular;

#[cfg(test)]
mod tests;

pub use activity::*;
use append::*;
pub use journal::*;
pub use regular::*;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{} does not exist: run `goldfish init` in this repository first", .0.display())]
    NotInitialized(PathBuf),
    #[error("{} {reason}: goldfish only uses real folders and regular files under .goldfish/ and never follows a link out of the repository; replace it (`git rm` it, then `goldfish init`)", .path.display())]
    Unsafe { path: PathBuf, reason: String },
    #[error("{} {reason}: it is goldfish's store journal, in the git folder and not tracked by git; move it aside (`mv {0} {0}.aside`) and run the command again", .path.display())]
    Journal { path: PathBuf, reason: String },
    #[error("the timestamp `{0}` has no day file (years 0001–9999 only)")]
    Timestamp(String),
    #[error(transparent)]
    Io(#[from] PathError),
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> LogError {
    PathError::at(action, path)
}

/// How long an append waits for a git command holding the index lock before
/// it journals the line instead (a lock left by a crashed git stays forever).
const GIT_WAIT: Duration = Duration::from_secs(10);
const GIT_POLL: Duration = Duration::from_millis(5);
/// Appends tried before the line is journaled, when git keeps rewriting the
/// file under it.
const ATTEMPTS: usize = 8;
/// How long a drain waits before it believes a file restored to HEAD's
/// version with HEAD unmoved: `git reset` (a stash's, a merge's abort)
/// writes the work tree, then releases the index lock, then adds its reflog
/// entry.
const RESTORE_SETTLE: Duration = Duration::from_millis(150);
/// The journal's file name in the (per-worktree) git folder.
pub const JOURNAL: &str = "goldfish-journal.jsonl";
/// The file, in the (per-worktree) git folder, that holds this work tree's
/// tag: the end of the name of every day file it writes
/// (`2026-11-28-k3m9qz.jsonl`), so two clones or worktrees never create
/// the same untracked file and a pull never finds one of ours in its way.
pub const TAG_FILE: &str = "goldfish-tag";
/// A tag's length: 6 characters of `0-9a-z`.
const TAG_LEN: usize = 6;

/// One `*.jsonl` file of the memory folder.
#[derive(Debug, Clone)]
pub struct LogFile {
    /// File name, e.g. `2026-11-21.jsonl`.
    pub name: String,
    /// Its bytes, or why they could not be read.
    pub content: Result<Vec<u8>, String>,
}

/// Where an appended line went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// Into this memory file.
    File(PathBuf),
    /// Into the journal, because git was busy with `operation`; the next
    /// goldfish command after it appends the line to `file`.
    Journaled {
        journal: PathBuf,
        file: PathBuf,
        operation: &'static str,
    },
}

impl Appended {
    /// The memory file the line is (or will be) in.
    pub fn file(&self) -> &Path {
        match self {
            Appended::File(file) | Appended::Journaled { file, .. } => file,
        }
    }
}

/// `.goldfish/memories/` of one work tree.
#[derive(Debug, Clone)]
pub struct MemoryDir {
    path: PathBuf,
    git: Option<GitSide>,
}

/// Whether the line was verified to be in the file at the path.
enum Verified {
    Yes,
    Unsure,
}

impl MemoryDir {
    /// A memory folder with no git around it (appends do not look for git).
    pub fn new(path: PathBuf) -> MemoryDir {
        MemoryDir { path, git: None }
    }

    /// The memory folder of `workspace`, whose appends keep out of git's way.
    pub fn of(workspace: &Workspace) -> MemoryDir {
        MemoryDir {
            path: workspace.memory_dir(),
            git: Some(GitSide {
                git_dir: workspace.git_dir().to_owned(),
                workspace: workspace.clone(),
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The memory folder and `.goldfish` above it must be real folders of
    /// this repository: a link committed in their place would send writes
    /// and reads out of the repository, and a submodule (a gitlink in
    /// HEAD's tree, or a folder holding a `.git`) into another one.
    pub fn check_folder(&self) -> Result<(), LogError> {
        let parent = self.goldfish_folder();
        let dirs: Vec<&Path> = parent.into_iter().chain([self.path.as_path()]).collect();
        self.check_dirs(&dirs)
    }

    /// [`MemoryDir::check_folder`] for `.goldfish` alone, where
    /// `.goldfish/config` is read: a memory folder that is not a folder
    /// leaves the config readable. `Ok` when there is no `.goldfish`.
    pub fn check_config_folder(&self) -> Result<(), LogError> {
        match self.goldfish_folder() {
            Some(parent) => match self.check_dirs(&[parent]) {
                Err(LogError::NotInitialized(_)) => Ok(()),
                checked => checked,
            },
            None => Ok(()),
        }
    }

    fn goldfish_folder(&self) -> Option<&Path> {
        self.path.parent().filter(|p| p.ends_with(".goldfish"))
    }

    /// Each of `dirs` is a folder (not a link) of this repository (not a
    /// submodule).
    fn check_dirs(&self, dirs: &[&Path]) -> Result<(), LogError> {
        for dir in dirs {
            match fs::symlink_metadata(dir) {
                Ok(metadata) if metadata.file_type().is_symlink() => {
                    return Err(LogError::Unsafe {
                        path: dir.to_path_buf(),
                        reason: "is a symbolic link".to_owned(),
                    });
                }
                Ok(metadata) if !metadata.is_dir() => {
                    return Err(LogError::Unsafe {
                        path: dir.to_path_buf(),
                        reason: "is not a folder".to_owned(),
                    });
                }
                Ok(_) => {}
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    return Err(LogError::NotInitialized(self.path.clone()));
                }
                Err(err) => return Err(io_error("read", dir)(err)),
            }
        }
        for dir in dirs {
            if let Some(reason) = self.submodule(dir) {
                return Err(LogError::Unsafe {
                    path: dir.to_path_buf(),
                    reason,
                });
            }
        }
        Ok(())
    }

    /// Why `dir` (`.goldfish` or the memory folder) is a submodule, when it
    /// is one.
    fn submodule(&self, dir: &Path) -> Option<String> {
        let committed = self.git.as_ref().is_some_and(|git| {
            dir.strip_prefix(git.workspace.root())
                .ok()
                .and_then(Path::to_str)
                .is_some_and(|path| git.workspace.gitlink_at_head(path))
        });
        if committed {
            return Some(
                "is a git submodule in HEAD (a gitlink: another repository's commit, not a folder of this one)".to_owned(),
            );
        }
        fs::symlink_metadata(dir.join(".git")).ok().map(|_| {
            "is a git submodule (it holds a .git: another repository's work tree, whose files git commits there, not here)".to_owned()
        })
    }

    /// Appends `entry` to the file of its UTC day (see the module's steps).
    ///
    /// The line goes out in a single `write` under an exclusive lock on the
    /// file, so concurrent writers never interleave or tear lines; if the file
    /// does not end in a newline (a torn line from elsewhere), one is written
    /// first so the new record stays on a line of its own.
    pub fn append(&self, entry: &Entry) -> Result<Appended, LogError> {
        self.check_folder()?;
        let tag = self.git.as_ref().map(GitSide::tag).transpose()?;
        let file_path = self.path.join(day_file(entry, tag.as_deref())?);
        let mut line = entry.to_line().into_bytes();
        line.push(b'\n');
        let Some(git) = &self.git else {
            append_once(&file_path, &[&line], None, false)?;
            return Ok(Appended::File(file_path));
        };
        // The journal first: from here on the line cannot be lost, whatever
        // git does to the file. Held until the line is in place, so a drain
        // never appends it a second time.
        // Marked as placed in its file from the start (a store that dies
        // before it says "stored" promised nothing); marked otherwise when
        // the line only waits in the journal (see `JournalEntry::placed`).
        let mut journal = Journal::open(&git.journal())?;
        let reflog = git.reflog_len();
        let before = journal.add(&line, reflog, true)?;
        let placed = Self::place(git, &file_path, &line);
        match &placed {
            // Not stored, so not journaled either.
            Err(_) => journal.truncate(before)?,
            Ok(Appended::Journaled { .. }) => {
                journal.truncate(before)?;
                journal.add(&line, reflog, false)?;
            }
            Ok(Appended::File(_)) => {}
        }
        placed
    }

    /// Appends `line` where git cannot lose it, or leaves it to the journal.
    fn place(git: &GitSide, file_path: &Path, line: &[u8]) -> Result<Appended, LogError> {
        let file_path = file_path.to_owned();
        let journal = git.journal();
        let mut busy = GitActivity::Writing;
        let mut check_first = false;
        for _ in 0..ATTEMPTS {
            let activity = git.wait_while_writing();
            if activity != GitActivity::Idle {
                busy = activity;
                break;
            }
            // After an unsure attempt the line may be in the file already
            // (git left the file alone, or its new one has the line): it is
            // then not written again.
            match append_once(&file_path, &[line], Some(git), check_first)? {
                (Verified::Yes, _) => return Ok(Appended::File(file_path)),
                (Verified::Unsure, _) => check_first = true,
            }
        }
        Ok(Appended::Journaled {
            journal,
            file: file_path,
            operation: busy.describe(),
        })
    }

    /// The lines of memory file `name` as read now (read once per drain
    /// into `files`), or `None` when it cannot take lines (a link, say).
    fn file_lines<'f>(
        &self,
        files: &'f mut HashMap<String, Option<HashSet<Vec<u8>>>>,
        name: &str,
    ) -> Option<&'f mut HashSet<Vec<u8>>> {
        files
            .entry(name.to_owned())
            .or_insert_with(|| match read_regular(&self.path.join(name)) {
                Ok(bytes) => Some(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()),
                Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => {
                    Some(HashSet::new())
                }
                Err(_) => None,
            })
            .as_mut()
    }

    /// Brings the journal's lines into their memory files when git is idle
    /// (`rewriting`: a rebase in progress counts as done, for its
    /// post-rewrite hook): a line missing from its file is appended (again,
    /// if git replaced the file since), unless git holds it elsewhere: in a
    /// commit HEAD pointed to since the store (a checkout moved away from
    /// it) or in a stash (the user set it aside with their other changes;
    /// appending it would make the stash's apply fail). A line stays in the
    /// journal until it is in its file and [`JOURNAL_KEEP`] old. The lines
    /// of one file go in with one write, and only those the file lacks when
    /// it is locked for that write.
    ///
    /// A line the store had placed in its file is left out, and leaves the
    /// journal, when the user took it out: the file is byte for byte HEAD's
    /// version, HEAD's reflog has exactly the entries it had at the store
    /// and git is idle, checked twice `RESTORE_SETTLE` (150 ms) apart. That is
    /// `git restore` or `git checkout -- FILE` (or an edit back to HEAD's
    /// version), which write a file whatever it held, so no store raced
    /// them; a git command that can race a store moves HEAD, resets it, or
    /// leaves a merge in progress, and the reflog or the activity shows it.
    /// Returns what it appended and what it left out.
    pub fn drain_journal(&self, rewriting: bool) -> Result<Drained, LogError> {
        let mut drained = Drained::default();
        let Some(git) = &self.git else {
            return Ok(drained);
        };
        let journal_path = git.journal();
        // Not followed: a link in its place is refused by the open below.
        if fs::symlink_metadata(&journal_path).is_err() {
            return Ok(drained);
        }
        let idle = || match git.activity() {
            GitActivity::Idle => true,
            GitActivity::InProgress("a rebase") => rewriting,
            _ => false,
        };
        match self.check_folder() {
            // A folder that is a link or a submodule takes no line: they
            // stay in the journal (for doctor to see), and sync names it.
            Err(LogError::Unsafe { .. }) => return Ok(drained),
            other => other?,
        }
        let mut journal = Journal::open(&journal_path)?;
        let entries = journal.entries()?;
        if entries.is_empty() {
            return Ok(drained);
        }
        let tag = git.tag()?;
        let now = unix_millis();
        let mut sorted = self.sort_entries(git, entries, &tag, now);
        if !sorted.restored.is_empty() {
            sorted.settle_restored(git, &self.path, now, &mut drained);
        }
        self.append_missing(git, sorted.missing, &idle, &mut drained);
        journal.rewrite(&sorted.kept)?;
        Ok(drained)
    }

    /// Sorts the journal's entries: a line in its file and old enough, or
    /// torn, leaves; one git holds elsewhere (committed since its store,
    /// stashed) or that is in its file stays; a placed line the user may
    /// have restored away waits to be checked again; any other is missing
    /// from its file and stays until it is in.
    fn sort_entries(
        &self,
        git: &GitSide,
        entries: Vec<JournalEntry>,
        tag: &str,
        now: u64,
    ) -> Sorted {
        let mut history = History::new(git);
        // Per file: its lines as read now, or None when it cannot take lines
        // (a link, say: the entries stay in the journal, for doctor to see).
        let mut files: HashMap<String, Option<HashSet<Vec<u8>>>> = HashMap::new();
        let mut sorted = Sorted::default();
        for entry in entries {
            let JournalEntry {
                at,
                reflog,
                line,
                placed,
            } = &entry;
            let Ok(parsed) = Entry::parse(line) else {
                continue; // torn by a crash before its store said anything
            };
            let (Ok(tagged), Ok(plain)) = (day_file(&parsed, Some(tag)), day_file(&parsed, None))
            else {
                continue;
            };
            // A line stored before work trees had tags went to the plain day file.
            let name = if tagged != plain
                && self
                    .file_lines(&mut files, &plain)
                    .is_some_and(|lines| lines.contains(line))
            {
                plain
            } else {
                tagged
            };
            let Some(lines) = self.file_lines(&mut files, &name) else {
                sorted.kept.push(entry);
                continue;
            };
            let present = lines.contains(line);
            if present && now.saturating_sub(*at) >= JOURNAL_KEEP.as_millis() as u64 {
                continue;
            }
            // Gone from the file but committed since its store (then moved
            // away from by a checkout or reset): git has it, nothing is lost.
            if !present && history.committed_since(*reflog, &name, line) {
                continue;
            }
            if present || history.stashed(&name, line) {
                sorted.kept.push(entry);
                continue;
            }
            if *placed && restored_by_user(git, &self.path, &name, *reflog) {
                sorted.restored.push((name, entry));
                continue;
            }
            let described = JournalLine::of(line, &name, now.saturating_sub(*at));
            sorted
                .missing
                .entry(name)
                .or_default()
                .push((line.clone(), described, *placed));
            sorted.kept.push(entry);
        }
        sorted
    }

    /// Appends the missing lines, one write per file, while git is idle.
    fn append_missing(
        &self,
        git: &GitSide,
        missing: Missing,
        idle: &dyn Fn() -> bool,
        drained: &mut Drained,
    ) {
        for (name, lines) in missing {
            if !idle() {
                break;
            }
            let (lines, described): (Vec<Vec<u8>>, Vec<(JournalLine, bool)>) = lines
                .into_iter()
                .map(|(mut line, described, placed)| {
                    line.push(b'\n');
                    (line, (described, placed))
                })
                .unzip();
            let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
            // A file that cannot take them now (replaced by a link, say)
            // leaves the lines in the journal, for doctor to see.
            if let Ok((Verified::Yes, written)) =
                append_once(&self.path.join(&name), &lines, Some(git), true)
            {
                drained.appended += written.len();
                // A line that only waited in the journal goes in as its store
                // said it would; one the store had placed is put back.
                for (index, (described, placed)) in described.into_iter().enumerate() {
                    if placed && written.contains(&index) {
                        drained.put_back.push(described);
                    }
                }
            }
        }
    }

    /// Reads every `*.jsonl` file of the folder into one view. Files that
    /// cannot be read are reported as problems, never fatal.
    pub fn read(&self) -> Result<LogView, LogError> {
        let files = self.read_files()?;
        let mut problems = Vec::new();
        let mut readable = Vec::new();
        for file in &files {
            match &file.content {
                Ok(bytes) => readable.push((file.name.as_str(), bytes.as_slice())),
                Err(reason) => problems.push(Problem {
                    file: file.name.clone(),
                    line: 0,
                    reason: reason.clone(),
                }),
            }
        }
        let mut view = LogView::build(readable);
        problems.append(&mut view.problems);
        view.problems = problems;
        Ok(view)
    }

    /// The log files (sorted by name) with their bytes, or why not readable.
    /// A link or anything else that is not a regular file is never opened.
    pub fn read_files(&self) -> Result<Vec<LogFile>, LogError> {
        match self.check_folder() {
            Ok(()) => {}
            Err(LogError::NotInitialized(_)) => return Ok(Vec::new()),
            Err(err) => return Err(err),
        }
        let entries = match fs::read_dir(&self.path) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(io_error("list", &self.path)(err)),
        };
        let mut files = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_error("list", &self.path))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".jsonl") {
                continue;
            }
            let content = read_regular(&entry.path()).map_err(|err| err.skipped());
            files.push(LogFile { name, content });
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(files)
    }
}
