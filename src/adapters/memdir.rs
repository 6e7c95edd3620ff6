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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::adapters::git::Workspace;
use crate::domain::memory::view::{LogView, Problem};
use crate::domain::memory::{self, Entry};

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
    #[error("could not {action} {}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> LogError {
    let path = path.to_owned();
    move |source| LogError::Io {
        action,
        path,
        source,
    }
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

/// What git is doing in a work tree, as far as an append cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitActivity {
    Idle,
    /// A git command holds the index lock: it may be rewriting files.
    Writing,
    /// A merge, rebase, cherry-pick or revert is in progress (running or
    /// stopped for the user): it rewrites files when it goes on.
    InProgress(&'static str),
}

impl GitActivity {
    fn describe(self) -> &'static str {
        match self {
            GitActivity::Idle => "nothing",
            GitActivity::Writing => "a git command that holds the index lock",
            GitActivity::InProgress(what) => what,
        }
    }
}

/// The git side of a work tree: its own git folder (a linked worktree has
/// one of its own, with its own index lock) and the repository, whose
/// objects and reflogs are read with gix.
#[derive(Clone)]
struct GitSide {
    git_dir: PathBuf,
    workspace: Workspace,
}

impl std::fmt::Debug for GitSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitSide")
            .field("git_dir", &self.git_dir)
            .field("root", &self.workspace.root())
            .finish()
    }
}

impl GitSide {
    fn activity(&self) -> GitActivity {
        activity(&self.git_dir)
    }

    /// Waits while git holds the index lock, up to [`GIT_WAIT`].
    fn wait_while_writing(&self) -> GitActivity {
        let start = Instant::now();
        loop {
            let activity = self.activity();
            if activity != GitActivity::Writing || start.elapsed() >= GIT_WAIT {
                return activity;
            }
            std::thread::sleep(GIT_POLL);
        }
    }

    /// How many entries HEAD's reflog of this work tree has.
    fn reflog_len(&self) -> usize {
        self.workspace.head_reflog().len()
    }

    fn journal(&self) -> PathBuf {
        self.git_dir.join(JOURNAL)
    }

    /// This work tree's tag ([`TAG_FILE`]), made the first time: random,
    /// written once with `create_new` so concurrent first stores agree on
    /// it. A file that is not a tag (edited, truncated) is replaced.
    fn tag(&self) -> Result<String, LogError> {
        tag_in(&self.git_dir)
    }

    /// HEAD's version of memory file `name`, when HEAD has it as a regular
    /// file (a link in the tree is never followed).
    fn head_file(&self, name: &str) -> Option<Vec<u8>> {
        let head = self.workspace.head_commit()?;
        self.workspace.memory_file_at(head, name)
    }
}

/// What git holds of the memory files besides the work tree, as a drain
/// asks about it: commits HEAD's reflog names and stashes. Each commit's
/// file is read once per drain (a drain of many lines asks about the same
/// few commits again and again).
struct History<'a> {
    git: &'a GitSide,
    /// HEAD's reflog, one commit per entry (the commit HEAD moved to).
    reflog: Option<Vec<gix::ObjectId>>,
    /// The stash commits: `git stash list` and a pending autostash.
    stashes: Option<Vec<gix::ObjectId>>,
    /// The lines of `commit:memory file`, empty when it has no such file.
    files: HashMap<(gix::ObjectId, String), HashSet<Vec<u8>>>,
}

impl<'a> History<'a> {
    fn new(git: &'a GitSide) -> History<'a> {
        History {
            git,
            reflog: None,
            stashes: None,
            files: HashMap::new(),
        }
    }

    /// Whether memory file `name` of a commit HEAD pointed to after its
    /// reflog's first `since` entries holds `line`.
    fn committed_since(&mut self, since: usize, name: &str, line: &[u8]) -> bool {
        let git = self.git;
        let reflog = self
            .reflog
            .get_or_insert_with(|| git.workspace.head_reflog());
        // A shorter reflog was expired or rewritten: look at all of it.
        let skip = if since <= reflog.len() { since } else { 0 };
        let commits: BTreeSet<gix::ObjectId> = reflog[skip..].iter().copied().collect();
        commits
            .into_iter()
            .any(|commit| self.file_lines(commit, name).contains(line))
    }

    /// Whether a stash (`git stash list`, or the autostash of a pull,
    /// merge or rebase) holds `line` in memory file `name`.
    fn stashed(&mut self, name: &str, line: &[u8]) -> bool {
        let git = self.git;
        let stashes = self.stashes.get_or_insert_with(|| {
            let mut stashes = git.workspace.stash_commits();
            for autostash in [
                "MERGE_AUTOSTASH",
                "rebase-merge/autostash",
                "rebase-apply/autostash",
            ] {
                if let Ok(text) = fs::read_to_string(git.git_dir.join(autostash))
                    && let Ok(id) = gix::ObjectId::from_hex(text.trim().as_bytes())
                {
                    stashes.push(id);
                }
            }
            stashes
        });
        stashes
            .clone()
            .into_iter()
            .any(|stash| self.file_lines(stash, name).contains(line))
    }

    fn file_lines(&mut self, commit: gix::ObjectId, name: &str) -> &HashSet<Vec<u8>> {
        let workspace = &self.git.workspace;
        self.files
            .entry((commit, name.to_owned()))
            .or_insert_with_key(|(commit, name)| {
                workspace
                    .memory_file_at(*commit, name)
                    .map(|bytes| bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect())
                    .unwrap_or_default()
            })
    }
}

/// What [`activity`] says while git has set the user's changes aside
/// (`--autostash`) and has yet to put them back.
const AUTOSTASH: &str = "a pull, merge or rebase that has yet to give back your stashed changes";

/// What git is doing in the work tree whose git folder is `git_dir`.
pub fn activity(git_dir: &Path) -> GitActivity {
    if git_dir.join("index.lock").exists() {
        return GitActivity::Writing;
    }
    // An autostash first: git applies it after the hooks have run, and a
    // line appended to a file the stash changes makes that apply fail and
    // leaves the user's own edits in the stash.
    const STATES: [(&str, &str); 9] = [
        ("MERGE_AUTOSTASH", AUTOSTASH),
        ("rebase-merge/autostash", AUTOSTASH),
        ("rebase-apply/autostash", AUTOSTASH),
        ("MERGE_HEAD", "a merge"),
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
        ("REVERT_HEAD", "a revert"),
        ("sequencer", "a cherry-pick or revert"),
    ];
    STATES
        .iter()
        .find(|(name, _)| git_dir.join(name).exists())
        .map_or(GitActivity::Idle, |(_, what)| GitActivity::InProgress(what))
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

    /// The memory folder and `.goldfish` above it must be real folders: a
    /// link committed in their place would send writes and reads out of the
    /// repository.
    pub fn check_folder(&self) -> Result<(), LogError> {
        let parent = self.path.parent().filter(|p| p.ends_with(".goldfish"));
        for dir in parent.into_iter().chain([self.path.as_path()]) {
            match fs::symlink_metadata(dir) {
                Ok(metadata) if metadata.file_type().is_symlink() => {
                    return Err(LogError::Unsafe {
                        path: dir.to_owned(),
                        reason: "is a symbolic link".to_owned(),
                    });
                }
                Ok(metadata) if !metadata.is_dir() => {
                    return Err(LogError::Unsafe {
                        path: dir.to_owned(),
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
        Ok(())
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
        self.check_folder()?;
        let mut journal = Journal::open(&journal_path)?;
        let entries = journal.entries()?;
        if entries.is_empty() {
            return Ok(drained);
        }
        let tag = git.tag()?;
        let now = unix_millis();
        let mut history = History::new(git);
        // Per file: its lines as read now, or None when it cannot take lines
        // (a link, say: the entries stay in the journal, for doctor to see).
        let mut files: HashMap<String, Option<HashSet<Vec<u8>>>> = HashMap::new();
        // Per file: the lines to append, each described, and whether its store
        // had placed it (then appending it puts it back).
        let mut missing: BTreeMap<String, Vec<(Vec<u8>, JournalLine, bool)>> = BTreeMap::new();
        let mut kept = Vec::new();
        // Placed lines the user may have restored away, checked again below.
        let mut restored: Vec<(String, JournalEntry)> = Vec::new();
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
            let (Ok(tagged), Ok(plain)) = (day_file(&parsed, Some(&tag)), day_file(&parsed, None))
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
                kept.push(entry);
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
                kept.push(entry);
                continue;
            }
            if *placed && restored_by_user(git, &self.path, &name, *reflog) {
                restored.push((name, entry));
                continue;
            }
            let described = JournalLine::of(line, &name, now.saturating_sub(*at));
            missing
                .entry(name)
                .or_default()
                .push((line.clone(), described, *placed));
            kept.push(entry);
        }
        if !restored.is_empty() {
            // Not a `git reset` between its work tree and its reflog entry.
            std::thread::sleep(RESTORE_SETTLE);
            for (name, entry) in restored {
                let described = JournalLine::of(&entry.line, &name, now.saturating_sub(entry.at));
                if restored_by_user(git, &self.path, &name, entry.reflog) {
                    drained.left_out.push(described);
                } else {
                    missing
                        .entry(name)
                        .or_default()
                        .push((entry.line.clone(), described, true));
                    kept.push(entry);
                }
            }
        }
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
        journal.rewrite(&kept)?;
        Ok(drained)
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

/// How long a line stays in the journal after its store: git may have read
/// the memory file before the line was appended and replace it later (a
/// merge checks the work tree, releases the index lock, then rewrites
/// files), so the journal keeps the line until such a git command is
/// surely over and the line is still in the file.
pub const JOURNAL_KEEP: Duration = Duration::from_secs(60);

fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A line of the journal: `MILLIS<TAB>REFLOG<TAB>RECORD`, or
/// `MILLIS<TAB>REFLOG<TAB>placed<TAB>RECORD` for a line the store placed in
/// its file (a record is JSON: it holds no raw tab, and starts with `{`).
/// A goldfish from before the mark reads a marked entry as torn and drops
/// it: the line is in its file already.
struct JournalEntry {
    /// When it was stored (ms since 1970).
    at: u64,
    /// How many entries HEAD's reflog had then.
    reflog: usize,
    /// The record line, without its newline.
    line: Vec<u8>,
    /// Whether the store placed the line in its file (it said "stored"),
    /// rather than leaving it to wait in the journal while git was busy.
    /// Only a placed line can have been taken out by the user.
    placed: bool,
}

/// The mark of a placed entry, between the reflog length and the record.
const PLACED: &[u8] = b"placed\t";

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
    fn of(line: &[u8], file: &str, age_ms: u64) -> JournalLine {
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
fn restored_by_user(git: &GitSide, dir: &Path, name: &str, reflog: usize) -> bool {
    if git.activity() != GitActivity::Idle || git.reflog_len() != reflog {
        return false;
    }
    let Some(head) = git.head_file(name) else {
        return false;
    };
    matches!(read_regular(&dir.join(name)), Ok(bytes) if bytes == head)
}

/// The journal in the git folder, locked.
struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens (or creates) and locks the journal.
    fn open(path: &Path) -> Result<Journal, LogError> {
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
    fn add(&mut self, line: &[u8], reflog: usize, placed: bool) -> Result<u64, LogError> {
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

    fn truncate(&mut self, len: u64) -> Result<(), LogError> {
        self.file
            .set_len(len)
            .map_err(io_error("truncate", &self.path))
    }

    /// The entries, in order.
    fn entries(&mut self) -> Result<Vec<JournalEntry>, LogError> {
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
    fn rewrite(&mut self, entries: &[JournalEntry]) -> Result<(), LogError> {
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

/// Writes `bytes` to a temporary file beside `path` and renames it over
/// `path` (keeping its permissions; a new file gets a plain file's, 0644):
/// a reader, or a failed write, never leaves half a file. The one atomic
/// writer: the merge driver's result, `resolve`'s, the journal, the agent
/// files `init --agent` writes.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_data()?;
    // A temporary file is private (0600).
    let permissions = match fs::metadata(path) {
        Ok(metadata) => metadata.permissions(),
        Err(_) => std::os::unix::fs::PermissionsExt::from_mode(0o644),
    };
    temp.as_file().set_permissions(permissions)?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// The day file of an entry's timestamp, with the work tree's tag when
/// there is one (`2026-11-28-k3m9qz.jsonl`).
fn day_file(entry: &Entry, tag: Option<&str>) -> Result<String, LogError> {
    let timestamp: jiff::Timestamp = entry
        .timestamp()
        .parse()
        .map_err(|_| LogError::Timestamp(entry.timestamp().to_owned()))?;
    let name = memory::file_name_for(timestamp);
    // `%Y` of a year before 0 or after 9999 has a sign or a fifth digit.
    if !(name.len() == "YYYY-MM-DD.jsonl".len() && name.as_bytes()[0].is_ascii_digit()) {
        return Err(LogError::Timestamp(entry.timestamp().to_owned()));
    }
    Ok(match tag {
        Some(tag) => format!("{}-{tag}.jsonl", &name[.."YYYY-MM-DD".len()]),
        None => name,
    })
}

/// The tag kept in `git_dir` ([`TAG_FILE`]), made the first time: random,
/// written with `create_new` so concurrent first stores agree on it. A
/// file that is not a tag (edited, truncated) is replaced; a link or a
/// FIFO in its place is refused.
fn tag_in(git_dir: &Path) -> Result<String, LogError> {
    let path = git_dir.join(TAG_FILE);
    // An empty file is another store's, about to hold its tag; one that
    // stays empty this long was left by a crash and is replaced.
    const EMPTY_WAITS: usize = 100;
    let mut empty = 0;
    for _ in 0..EMPTY_WAITS + ATTEMPTS {
        match read_regular_prefix(&path, 64) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let tag = text.trim();
                if is_tag(tag) {
                    return Ok(tag.to_owned());
                }
                if bytes.is_empty() && empty < EMPTY_WAITS {
                    empty += 1;
                    std::thread::sleep(GIT_POLL);
                    continue;
                }
                write_atomically(&path, format!("{}\n", new_tag()).as_bytes())
                    .map_err(io_error("write", &path))?;
            }
            Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => {
                let made = open_regular(
                    &path,
                    OpenOptions::new().write(true).create_new(true).mode(0o644),
                );
                match made {
                    Ok(mut file) => {
                        let tag = new_tag();
                        file.write_all(format!("{tag}\n").as_bytes())
                            .and_then(|()| file.sync_data())
                            .map_err(io_error("write", &path))?;
                        return Ok(tag);
                    }
                    Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(err) => return Err(err.into_log_error(&path)),
                }
            }
            Err(err) => return Err(err.into_log_error(&path)),
        }
    }
    Err(LogError::Unsafe {
        path,
        reason: "stays empty or is rewritten while goldfish reads it".to_owned(),
    })
}

fn is_tag(text: &str) -> bool {
    text.len() == TAG_LEN
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

/// A new random tag: the random part of a ULID, lowercased.
fn new_tag() -> String {
    let id = ulid::Ulid::generate().to_string().to_ascii_lowercase();
    id[id.len() - TAG_LEN..].to_owned()
}

/// Why a memory file was not opened.
#[derive(Debug)]
pub enum OpenError {
    Link,
    NotRegular(&'static str),
    Io(io::Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Link => write!(f, "a symbolic link (not followed)"),
            OpenError::NotRegular(kind) => write!(f, "{kind}, not a regular file"),
            OpenError::Io(err) => write!(f, "{err}"),
        }
    }
}

impl OpenError {
    /// The reason as a problem says it, ending in "skipped".
    pub fn skipped(&self) -> String {
        match self {
            OpenError::Link => {
                "is a symbolic link; not followed, skipped (memory files must be regular files)"
                    .to_owned()
            }
            OpenError::NotRegular(kind) => {
                format!("is {kind}, not a memory file; skipped")
            }
            OpenError::Io(err) => format!("could not be read ({err}); skipped"),
        }
    }

    /// Why the store journal at `path` cannot be used, and what to do.
    fn into_journal_error(self, path: &Path) -> LogError {
        let reason = match self {
            OpenError::Link => "is a symbolic link".to_owned(),
            OpenError::NotRegular(kind) => format!("is {kind}, not a regular file"),
            OpenError::Io(err) => format!("cannot be opened for appending ({err})"),
        };
        LogError::Journal {
            path: path.to_owned(),
            reason,
        }
    }

    fn into_log_error(self, path: &Path) -> LogError {
        match self {
            OpenError::Link => LogError::Unsafe {
                path: path.to_owned(),
                reason: "is a symbolic link".to_owned(),
            },
            OpenError::NotRegular(kind) => LogError::Unsafe {
                path: path.to_owned(),
                reason: format!("is {kind}, not a regular file"),
            },
            OpenError::Io(err) => io_error("open", path)(err),
        }
    }
}

fn kind_of(file_type: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_block_device() || file_type.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Opens `path` with `options` if it is a regular file: never through a link
/// (`O_NOFOLLOW`), never blocking on a FIFO (`O_NONBLOCK`), and checked on
/// the opened descriptor.
pub fn open_regular(path: &Path, options: &mut OpenOptions) -> Result<File, OpenError> {
    let file = options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|err| match fs::symlink_metadata(path) {
            Ok(metadata) if metadata.file_type().is_symlink() => OpenError::Link,
            Ok(metadata) if !metadata.is_file() => {
                OpenError::NotRegular(kind_of(metadata.file_type()))
            }
            _ => OpenError::Io(err),
        })?;
    let metadata = file.metadata().map_err(OpenError::Io)?;
    if !metadata.is_file() {
        return Err(OpenError::NotRegular(kind_of(metadata.file_type())));
    }
    Ok(file)
}

/// The bytes of `path` if it is a regular file (see [`open_regular`]).
pub fn read_regular(path: &Path) -> Result<Vec<u8>, OpenError> {
    read_regular_prefix(path, u64::MAX)
}

/// At most `limit` bytes of `path` if it is a regular file (see
/// [`open_regular`]).
pub fn read_regular_prefix(path: &Path, limit: u64) -> Result<Vec<u8>, OpenError> {
    let file = open_regular(path, OpenOptions::new().read(true))?;
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(OpenError::Io)?;
    Ok(bytes)
}

/// What reading `.goldfish/config` gave ([`read_repo_config`]): its bytes,
/// `None` when there is none, or why it could not be read.
pub type RepoConfigRead = Result<Option<Vec<u8>>, OpenError>;

/// `.goldfish/config` as it is read (by `store`, sync and doctor): at most
/// one byte more than [`crate::domain::config::MAX_BYTES`], so a larger file is
/// told apart without reading it; `None` when there is none. Never through
/// a link in place of `.goldfish` or of the file, never from a FIFO.
pub fn read_repo_config(workspace: &Workspace) -> RepoConfigRead {
    let path = workspace.repo_config_path();
    if let Some(folder) = path.parent() {
        match fs::symlink_metadata(folder) {
            Ok(metadata) if metadata.file_type().is_symlink() => return Err(OpenError::Link),
            Ok(metadata) if !metadata.is_dir() => {
                return Err(OpenError::NotRegular(kind_of(metadata.file_type())));
            }
            _ => {}
        }
    }
    match read_regular_prefix(&path, crate::domain::config::MAX_BYTES as u64 + 1) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Opens the memory file for appending, creating it (never over anything)
/// when missing. Returns the file and whether this call created it.
fn open_or_create(file_path: &Path) -> Result<(File, bool), LogError> {
    loop {
        match open_regular(file_path, OpenOptions::new().read(true).append(true)) {
            Ok(file) => return Ok((file, false)),
            Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err.into_log_error(file_path)),
        }
        match OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(file_path)
        {
            Ok(file) => return Ok((file, true)),
            // Created by someone else in between: append to theirs.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(io_error("create", file_path)(err)),
        }
    }
}

/// One append of `lines` (each ending in a newline) to `file_path`, in a
/// single write under the file's lock; with `git`, verified afterwards.
/// Returns the verdict and how many lines were written.
///
/// With `skip_present`, a line the file already holds (read under the lock,
/// just before the write) is not written again: a retry or a drain never
/// doubles a line that git, or an earlier attempt, put there. A write that
/// fails (a full disk, a file size limit) is undone: the file is cut back to
/// its length before it, or removed when this call created it, so no torn
/// line is left for git to commit.
fn append_once(
    file_path: &Path,
    lines: &[&[u8]],
    git: Option<&GitSide>,
    skip_present: bool,
) -> Result<(Verified, Vec<usize>), LogError> {
    let (mut file, created) = open_or_create(file_path)?;
    file.lock().map_err(io_error("lock", file_path))?;
    let before = file.metadata().map_err(io_error("read", file_path))?.len();
    let mut bytes = Vec::new();
    if created {
        // HEAD's version first: a created file never drops what HEAD has.
        if let Some(head) = git.and_then(|git| git.head_file(&file_name(file_path))) {
            bytes.extend_from_slice(&head);
            if !head.is_empty() && !head.ends_with(b"\n") {
                bytes.push(b'\n');
            }
        }
    } else if skip_present {
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(io_error("read", file_path))?;
    }
    let mut present: HashSet<Vec<u8>> = if skip_present {
        bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
    } else {
        HashSet::new()
    };
    if !created {
        // Only the new bytes are written; what was read stays as it is.
        let ends_in_newline = match bytes.last() {
            _ if before == 0 => true,
            Some(&last) if skip_present => last == b'\n',
            _ => ends_with_newline(&mut file).map_err(io_error("read", file_path))?,
        };
        bytes.clear();
        if !ends_in_newline {
            bytes.push(b'\n');
        }
    }
    let mut written = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let bare = line.strip_suffix(b"\n").unwrap_or(line);
        if skip_present && !present.insert(bare.to_vec()) {
            continue;
        }
        bytes.extend_from_slice(line);
        written.push(index);
    }
    if !written.is_empty() || created {
        let outcome = file.write_all(&bytes).and_then(|()| file.sync_data());
        if let Err(err) = outcome {
            // Whole or not at all: the file as it was before this write.
            // Still under the lock, so no other append is cut.
            if created && same_file(file_path, &file) {
                let _ = fs::remove_file(file_path);
            } else {
                let _ = file.set_len(before).and_then(|()| file.sync_data());
            }
            return Err(io_error("append to", file_path)(err));
        }
        if !created {
            mark_folder_changed(file_path);
        }
    }
    let Some(git) = git else {
        return Ok((Verified::Yes, written));
    };
    // Git idle now, and the path still names the file written: any git
    // command that starts later sees the line (and refuses to overwrite a
    // changed file). Otherwise git may have read the file before the write
    // and be replacing it.
    let same = same_file(file_path, &file);
    if same && git.activity() == GitActivity::Idle {
        return Ok((Verified::Yes, written));
    }
    if created && same {
        // Out of the way of git's own create of this file; the line is
        // appended again once git is done.
        let _ = fs::remove_file(file_path);
    }
    // The lock is released when `file` is closed.
    Ok((Verified::Unsure, written))
}

/// Sets the memory folder's times to now: an append changes a file in
/// place, which leaves the folder's own stat as it was, and a sync of a
/// large folder trusts an unchanged stat for a while
/// (`index::sync::FOLDER_TRUSTED_NS`). Creating a file changes the folder
/// by itself.
fn mark_folder_changed(file_path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Some(dir) = file_path.parent() else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: `path` is a NUL-terminated string that lives through the
    // call; null `times` asks for both times set to now, which needs only
    // write access to the folder (the append had it).
    unsafe {
        libc::utimensat(libc::AT_FDCWD, path.as_ptr(), std::ptr::null(), 0);
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether `path` (not followed) is the file `file` has open.
fn same_file(path: &Path, file: &File) -> bool {
    match (fs::symlink_metadata(path), file.metadata()) {
        (Ok(at_path), Ok(open)) => at_path.dev() == open.dev() && at_path.ino() == open.ino(),
        _ => false,
    }
}

fn ends_with_newline(file: &mut File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::memory::Memory;

    fn memory(id: &str) -> Entry {
        Entry::Memory(Memory {
            id: id.into(),
            timestamp: "2026-11-21T10:00:00.000Z".into(),
            kind: "insight".into(),
            content: "c".into(),
            ..Memory::default()
        })
    }

    #[test]
    fn a_work_tree_gets_one_tag_however_many_stores_ask_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let tags: Vec<String> = std::thread::scope(|scope| {
            let asking: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| tag_in(dir.path()).unwrap()))
                .collect();
            asking.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert!(is_tag(&tags[0]), "{tags:?}");
        assert!(tags.iter().all(|t| *t == tags[0]), "{tags:?}");
        assert_eq!(tag_in(dir.path()).unwrap(), tags[0], "kept");
        // Another work tree gets another.
        let other = tempfile::tempdir().unwrap();
        assert_ne!(tag_in(other.path()).unwrap(), tags[0]);
        // Not a tag: replaced.
        fs::write(dir.path().join(TAG_FILE), "../../etc\n").unwrap();
        let replaced = tag_in(dir.path()).unwrap();
        assert!(is_tag(&replaced) && replaced != tags[0], "{replaced}");
        // A link in its place is refused, not followed.
        let linked = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path().join(TAG_FILE), linked.path().join(TAG_FILE))
            .unwrap();
        assert!(matches!(
            tag_in(linked.path()),
            Err(LogError::Unsafe { .. })
        ));
    }

    #[test]
    fn day_files_carry_the_tag() {
        let entry = memory("01KAJ00000000000000000000A");
        assert_eq!(day_file(&entry, None).unwrap(), "2026-11-21.jsonl");
        assert_eq!(
            day_file(&entry, Some("k3m9qz")).unwrap(),
            "2026-11-21-k3m9qz.jsonl"
        );
    }

    #[test]
    fn the_atomic_writer_keeps_permissions_and_gives_a_new_file_a_plain_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let new = dir.path().join("new.json");
        write_atomically(&new, b"{}").unwrap();
        assert_eq!(
            (fs::read(&new).unwrap(), mode(&new)),
            (b"{}".to_vec(), 0o644)
        );
        let script = dir.path().join("hook.sh");
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomically(&script, b"new").unwrap();
        assert_eq!(
            (fs::read(&script).unwrap(), mode(&script)),
            (b"new".to_vec(), 0o755)
        );
    }

    fn memory_dir() -> (tempfile::TempDir, MemoryDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".goldfish/memories");
        fs::create_dir_all(&path).unwrap();
        (dir, MemoryDir::new(path))
    }

    #[test]
    fn append_repairs_a_missing_final_newline() {
        let (_dir, log) = memory_dir();
        let file = log.path().join("2026-11-21.jsonl");
        fs::write(&file, b"{\"half").unwrap();
        log.append(&memory("01A")).unwrap();
        let text = fs::read_to_string(&file).unwrap();
        assert_eq!(text, format!("{{\"half\n{}\n", memory("01A").to_line()));
        let view = log.read().unwrap();
        assert_eq!(view.memories.len(), 1);
        assert_eq!(view.problems.len(), 1);
    }

    #[test]
    fn append_needs_an_initialized_folder() {
        let dir = tempfile::tempdir().unwrap();
        let log = MemoryDir::new(dir.path().join("missing"));
        assert!(matches!(
            log.append(&memory("01A")),
            Err(LogError::NotInitialized(_))
        ));
    }

    #[test]
    fn links_and_fifos_are_neither_followed_nor_opened() {
        let (dir, log) = memory_dir();
        let outside = dir.path().join("outside");
        fs::write(&outside, b"secret\n").unwrap();
        let day = log.path().join("2026-11-21.jsonl");
        std::os::unix::fs::symlink(&outside, &day).unwrap();
        let fifo = log.path().join("2026-11-20.jsonl");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        let err = log.append(&memory("01A")).unwrap_err();
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        assert_eq!(fs::read(&outside).unwrap(), b"secret\n");
        let view = log.read().unwrap();
        let reasons: Vec<String> = view.problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            reasons,
            [
                "2026-11-20.jsonl: is a FIFO, not a memory file; skipped",
                "2026-11-21.jsonl: is a symbolic link; not followed, skipped (memory files must be regular files)",
            ]
        );
    }

    #[test]
    fn a_linked_memory_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::create_dir_all(dir.path().join(".goldfish")).unwrap();
        let path = dir.path().join(".goldfish/memories");
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        let log = MemoryDir::new(path);
        assert!(matches!(
            log.append(&memory("01A")),
            Err(LogError::Unsafe { .. })
        ));
        assert!(matches!(log.read(), Err(LogError::Unsafe { .. })));
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
    }
}
