//! What git is doing in a work tree (a lock held, a merge, rebase,
//! cherry-pick, revert or autostash in progress), and what a commit, a
//! stash or the reflog holds of a line.

use super::*;

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
    pub(super) fn describe(self) -> &'static str {
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
pub(super) struct GitSide {
    pub(super) git_dir: PathBuf,
    pub(super) workspace: Workspace,
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
    pub(super) fn activity(&self) -> GitActivity {
        activity(&self.git_dir)
    }

    /// Waits while git holds the index lock, up to [`GIT_WAIT`].
    pub(super) fn wait_while_writing(&self) -> GitActivity {
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
    pub(super) fn reflog_len(&self) -> usize {
        self.workspace.head_reflog().len()
    }

    pub(super) fn journal(&self) -> PathBuf {
        self.git_dir.join(JOURNAL)
    }

    /// This work tree's tag ([`TAG_FILE`]), made the first time: random,
    /// written once with `create_new` so concurrent first stores agree on
    /// it. A file that is not a tag (edited, truncated) is replaced.
    pub(super) fn tag(&self) -> Result<String, LogError> {
        tag_in(&self.git_dir)
    }

    /// HEAD's version of memory file `name`, when HEAD has it as a regular
    /// file (a link in the tree is never followed).
    pub(super) fn head_file(&self, name: &str) -> Option<Vec<u8>> {
        let head = self.workspace.head_commit()?;
        self.workspace.memory_file_at(head, name)
    }
}

/// What git holds of the memory files besides the work tree, as a drain
/// asks about it: commits HEAD's reflog names and stashes. Each commit's
/// file is read once per drain (a drain of many lines asks about the same
/// few commits again and again).
pub(super) struct History<'a> {
    pub(super) git: &'a GitSide,
    /// HEAD's reflog, one commit per entry (the commit HEAD moved to).
    pub(super) reflog: Option<Vec<gix::ObjectId>>,
    /// The stash commits: `git stash list` and a pending autostash.
    pub(super) stashes: Option<Vec<gix::ObjectId>>,
    /// The lines of `commit:memory file`, empty when it has no such file.
    pub(super) files: HashMap<(gix::ObjectId, String), HashSet<Vec<u8>>>,
}

impl<'a> History<'a> {
    pub(super) fn new(git: &'a GitSide) -> History<'a> {
        History {
            git,
            reflog: None,
            stashes: None,
            files: HashMap::new(),
        }
    }

    /// Whether memory file `name` of a commit HEAD pointed to after its
    /// reflog's first `since` entries holds `line`.
    pub(super) fn committed_since(&mut self, since: usize, name: &str, line: &[u8]) -> bool {
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
    pub(super) fn stashed(&mut self, name: &str, line: &[u8]) -> bool {
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

    pub(super) fn file_lines(&mut self, commit: gix::ObjectId, name: &str) -> &HashSet<Vec<u8>> {
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
pub(super) const AUTOSTASH: &str =
    "a pull, merge or rebase that has yet to give back your stashed changes";

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
