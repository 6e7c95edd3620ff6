//! The git adapter: finds the repository (with gix, honouring `GIT_DIR` and
//! linked worktrees), reads identity, HEAD, trees and blobs, and runs the
//! `git` CLI for the few things gix does not do here (config writes,
//! `merge-file`, a split index's unmerged entries, verifying commit
//! signatures;
//! docs/ARCHITECTURE.md lists every call).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Where the memory log lives inside a work tree.
pub const MEMORY_DIR: &str = ".goldfish/memories";
pub use crate::domain::config::REPO_CONFIG;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("not inside a git repository ({}): run goldfish in a clone, or `git init` first", .path.display())]
    NotARepository {
        path: PathBuf,
        /// Why, when it is more than "no repository here" (which the
        /// message already says).
        #[source]
        source: Option<Box<gix::Error>>,
    },
    #[error("{} is a bare repository: goldfish needs a work tree (run it in a clone)", .0.display())]
    Bare(PathBuf),
    #[error("could not read {what} from the git repository")]
    Read {
        what: String,
        #[source]
        source: Box<gix::Error>,
    },
    #[error("could not run `git {args}`")]
    Spawn {
        args: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`git {args}` failed: {stderr}")]
    Failed { args: String, stderr: String },
}

/// A git repository with a work tree: the unit goldfish calls a workspace.
#[derive(Clone)]
pub struct Workspace {
    repo: gix::Repository,
    root: PathBuf,
}

/// An index entry git left at a conflict stage (one line of `git ls-files
/// -u`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmerged {
    /// Its path from the work tree's root.
    pub path: String,
    /// Its file mode, e.g. `0o100644`.
    pub mode: u32,
    /// Its blob.
    pub id: gix::ObjectId,
    /// 1 the base, 2 ours, 3 theirs.
    pub stage: u8,
}

/// What HEAD points to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// Short branch name; `None` when detached.
    pub branch: Option<String>,
    /// Full commit id; `None` in a repository without commits.
    pub commit: Option<String>,
}

impl Workspace {
    /// Finds the repository containing `dir`, like git does (`GIT_DIR` and
    /// `GIT_WORK_TREE` win).
    pub fn discover(dir: &Path) -> Result<Workspace, GitError> {
        // Replacement objects (`git replace`, `refs/replace/*`) are left
        // out: provenance is what the commits say, not what a local ref
        // swaps in for them (the git processes below are told the same).
        let no_replace =
            |options: gix::open::Options| options.config_overrides(["core.useReplaceRefs=false"]);
        let trust: gix::sec::trust::Mapping<gix::open::Options> = Default::default();
        let trust = gix::sec::trust::Mapping {
            full: no_replace(trust.full),
            reduced: no_replace(trust.reduced),
        };
        // gix's "Could not find a git repository in …" says the same again.
        let repo = gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
            dir,
            Default::default(),
            trust,
        )
        .map(gix::Repository::from)
        .map_err(|source| {
            let not_found = source
                .to_string()
                .starts_with("Could not find a git repository");
            GitError::NotARepository {
                path: dir.to_owned(),
                source: (!not_found).then(|| Box::new(source)),
            }
        })?;
        let Some(root) = repo.workdir().map(Path::to_path_buf) else {
            return Err(GitError::Bare(repo.git_dir().to_owned()));
        };
        let root = root.canonicalize().unwrap_or(root);
        Ok(Workspace { repo, root })
    }

    /// The top of the work tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// This work tree's own git folder (`.git`, or `.git/worktrees/NAME` of
    /// a linked worktree): its index, index lock and operation state.
    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// The git data shared by all worktrees of this repository.
    pub fn common_dir(&self) -> &Path {
        self.repo.common_dir()
    }

    pub fn memory_dir(&self) -> PathBuf {
        self.root.join(MEMORY_DIR)
    }

    pub fn repo_config_path(&self) -> PathBuf {
        self.root.join(REPO_CONFIG)
    }

    /// A string from git's configuration (all scopes, as git resolves them).
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|value| value.to_string())
    }

    /// A string from this repository's own config file alone, as `git
    /// config --local --get` reads it: the last value of `key` in the
    /// shared git folder's `config`, its includes not followed. `None` when
    /// unset, or when the file cannot be read or parsed (git fails then
    /// too).
    pub fn local_config_string(&self, key: &str) -> Option<String> {
        let path = self.common_dir().join("config");
        let file =
            gix::config::File::from_path_no_includes(path, gix::config::Source::Local).ok()?;
        file.string(key).map(|value| value.to_string())
    }

    /// The folder git runs hooks from, as `git rev-parse --git-path hooks`
    /// names it: `core.hooksPath` (any scope, `~` expanded; relative to the
    /// work tree, where git runs hooks) when set, else the shared git
    /// folder's `hooks` (a linked worktree shares its main one's). A value
    /// gix cannot expand is left to git itself.
    pub fn hooks_dir(&self) -> Result<PathBuf, GitError> {
        let dir = match self.repo.config_snapshot().trusted_path("core.hooksPath") {
            Ok(Some(path)) if !path.as_os_str().is_empty() => path,
            Ok(_) => {
                let common = self.common_dir();
                common
                    .canonicalize()
                    .unwrap_or_else(|_| common.to_owned())
                    .join("hooks")
            }
            Err(_) => PathBuf::from(self.git(&["rev-parse", "--git-path", "hooks"])?),
        };
        Ok(if dir.is_absolute() {
            dir
        } else {
            self.root.join(dir)
        })
    }

    /// The index's entries at a conflict stage inside the folder `folder`
    /// (a path from the root, no trailing slash), in the index's order
    /// (path, then stage): what `git ls-files -u -- folder` lists. Read in
    /// process; a split index (`core.splitIndex`, whose other half gix does
    /// not read) is asked of git itself.
    pub fn unmerged_in(&self, folder: &str) -> Result<Vec<Unmerged>, GitError> {
        let path = self.repo.index_path();
        if !path.exists() {
            return Ok(Vec::new());
        }
        let index = match self.repo.open_index() {
            Ok(index) if index.link().is_none() => index,
            _ => return self.unmerged_listed(folder),
        };
        let prefix = format!("{folder}/");
        Ok(index
            .entries()
            .iter()
            .filter(|entry| entry.stage_raw() != 0)
            .filter_map(|entry| {
                let path = std::str::from_utf8(entry.path(&index)).ok()?;
                path.starts_with(&prefix).then(|| Unmerged {
                    path: path.to_owned(),
                    mode: entry.mode.bits(),
                    id: entry.id,
                    stage: entry.stage_raw() as u8,
                })
            })
            .collect())
    }

    /// [`Workspace::unmerged_in`] from `git ls-files -u`.
    fn unmerged_listed(&self, folder: &str) -> Result<Vec<Unmerged>, GitError> {
        let listing = self.git(&["ls-files", "-u", "-z", "--", folder])?;
        Ok(listing
            .split('\0')
            .filter_map(|entry| {
                let (meta, path) = entry.split_once('\t')?;
                let mut words = meta.split(' ');
                let mode = u32::from_str_radix(words.next()?, 8).ok()?;
                let id = gix::ObjectId::from_hex(words.next()?.as_bytes()).ok()?;
                let stage = words.next()?.parse().ok()?;
                Some(Unmerged {
                    path: path.to_owned(),
                    mode,
                    id,
                    stage,
                })
            })
            .collect())
    }

    /// The author name goldfish stamps on records: `GIT_AUTHOR_NAME`,
    /// else `user.name`, else `user.email`.
    pub fn author(&self) -> Option<String> {
        crate::adapters::env::git_author_name()
            .or_else(|| self.config_string("user.name"))
            .or_else(|| self.config_string("user.email"))
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
    }

    pub fn head(&self) -> Head {
        let branch = self
            .repo
            .head_name()
            .ok()
            .flatten()
            .map(|name| name.shorten().to_string());
        let commit = self.repo.head_id().ok().map(|id| id.to_string());
        Head { branch, commit }
    }

    /// Runs `git` in the work tree root.
    pub fn git(&self, args: &[&str]) -> Result<String, GitError> {
        run_git(&self.root, args)
    }

    /// The repository path of `gpg.ssh.allowedSignersFile` when it lies in
    /// this work tree (a relative path as git, run at the root, reads it);
    /// `None` when unset or outside (`~/…`, another folder).
    pub fn signers_file_in_repo(&self) -> Option<String> {
        use std::path::Component;
        let value = self.config_string("gpg.ssh.allowedSignersFile")?;
        let value = value.trim();
        if value.is_empty() || value.starts_with('~') {
            return None;
        }
        // Lexically: `..` takes a part off, `.` adds none.
        let normal = |path: &Path| -> PathBuf {
            let mut parts: Vec<Component<'_>> = Vec::new();
            for part in path.components() {
                match part {
                    Component::ParentDir => {
                        parts.pop();
                    }
                    Component::CurDir => {}
                    other => parts.push(other),
                }
            }
            parts.iter().collect()
        };
        let root = normal(&std::path::absolute(&self.root).ok()?);
        let file = normal(&root.join(value));
        let inside = file.strip_prefix(&root).ok()?;
        let path = inside.to_str()?.to_owned();
        (!path.is_empty()).then_some(path)
    }

    /// The object at repository path `path` in `commit`'s tree.
    pub fn object_in_commit(&self, commit: gix::ObjectId, path: &str) -> Option<gix::ObjectId> {
        let tree = self.repo.find_commit(commit).ok()?.tree_id().ok()?.detach();
        self.object_at(tree, path)
    }

    /// The `merge` attribute a memory file gets from the `.gitattributes`
    /// files of `commit`'s tree, as git reads them (`git check-attr
    /// --source`, git 2.40 or later): `goldfish`, `unset`, `unspecified`,
    /// `set` or another driver's name; `None` when git cannot tell.
    pub fn memory_merge_at(&self, commit: gix::ObjectId) -> Option<String> {
        let source = format!("--source={commit}");
        let probe = format!("{MEMORY_DIR}/2000-01-01.jsonl");
        let out = self
            .git(&["check-attr", &source, "merge", "--", &probe])
            .ok()?;
        let value = out.trim_end().rsplit(": ").next()?.trim();
        (!value.is_empty()).then(|| value.to_owned())
    }
}

/// A commit of the history walk, with what provenance needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: gix::ObjectId,
    pub parents: Vec<gix::ObjectId>,
    /// `Name <email>` of the commit's author.
    pub author: String,
    /// The author's name and email, as the commit has them.
    pub author_name: String,
    pub author_email: String,
    /// `Name <email>` of the commit's committer.
    pub committer: String,
    /// The author date, RFC 3339 UTC.
    pub date: String,
    /// Whether the commit carries a signature (`gpgsig`), which
    /// [`Workspace::verify_signatures`] checks.
    pub signed: bool,
    /// The commit its message says it reverts (`This reverts commit
    /// <sha>.`, as `git revert` writes it), full hex.
    pub reverts: Option<String>,
    /// A boundary of a shallow clone: its parents are not here (`.git/shallow`
    /// lists it, or the object database lacks one), so what its tree holds
    /// it may not have introduced: history that could tell is missing.
    pub shallow: bool,
}

/// The commit a message says it reverts: the 40 hex digits after the
/// first `This reverts commit ` (`git revert`'s wording).
pub fn reverted_by_message(message: &[u8]) -> Option<String> {
    const MARK: &[u8] = b"This reverts commit ";
    let start = message.windows(MARK.len()).position(|w| w == MARK)? + MARK.len();
    let hex = message.get(start..start + 40)?;
    hex.iter()
        .all(u8::is_ascii_hexdigit)
        .then(|| String::from_utf8_lossy(hex).to_ascii_lowercase())
}

/// What a commit's tree lacks and holds against another tree: the paths
/// (of blobs and links) deleted and added, each with its object id, those
/// modified in place, and the submodules (gitlinks) added, removed or
/// changed: another repository's commits, never read as blobs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TreeChanges {
    pub deleted: Vec<(String, gix::ObjectId)>,
    pub added: Vec<(String, gix::ObjectId)>,
    pub modified: Vec<String>,
    pub submodules: Vec<String>,
}

impl TreeChanges {
    /// Every path deleted, added or modified (submodules too).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.deleted
            .iter()
            .chain(&self.added)
            .map(|(path, _)| path.as_str())
            .chain(self.modified.iter().map(String::as_str))
            .chain(self.submodules.iter().map(String::as_str))
    }
}

/// What a tree entry is to [`Workspace::diff_trees`]: a tree, a blob (a
/// file or a link), or a submodule's commit (of another repository).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    Tree,
    Blob,
    Submodule,
}

/// An entry of a tree where goldfish reads memories that is not what it
/// reads ([`Workspace::memory_folder_oddities_at`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oddity {
    pub path: String,
    /// What it is: `a submodule`, `a symbolic link`, `a folder`, `a file`.
    pub kind: &'static str,
    pub id: gix::ObjectId,
}

impl Oddity {
    fn of(path: String, mode: gix::object::tree::EntryMode, id: gix::ObjectId) -> Oddity {
        let kind = if mode.is_commit() {
            "a submodule"
        } else if mode.is_link() {
            "a symbolic link"
        } else if mode.is_tree() {
            "a folder"
        } else {
            "a file"
        };
        Oddity { path, kind, id }
    }
}

/// A branch's tip ([`Workspace::branch_tips`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchTip {
    pub id: gix::ObjectId,
    /// A local branch (`refs/heads/`), else only remote-tracking.
    pub local: bool,
}

/// What git says of a commit's signature (`git log --format=%G?`), checked
/// against the repository's own settings (`gpg.ssh.allowedSignersFile`,
/// the GPG keyring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureState {
    /// No signature.
    Unsigned,
    /// A good signature by a key the repository allows (`G`).
    Good,
    /// A good signature by a key it does not know or trust (`U`: for SSH, a
    /// key missing from `gpg.ssh.allowedSignersFile`).
    UnknownKey,
    /// A signature that does not match the commit (`B`).
    Bad,
    /// Expired signature or key (`X`, `Y`).
    Expired,
    /// Revoked key (`R`).
    Revoked,
    /// Signed, but git could not check it (`E`: no key, no
    /// `gpg.ssh.allowedSignersFile`, git missing).
    Unchecked,
}

impl SignatureState {
    /// Its stable name, as the index stores it and `recall --json` shows it.
    pub fn name(self) -> &'static str {
        match self {
            SignatureState::Unsigned => "unsigned",
            SignatureState::Good => "good",
            SignatureState::UnknownKey => "unknown-key",
            SignatureState::Bad => "bad",
            SignatureState::Expired => "expired",
            SignatureState::Revoked => "revoked",
            SignatureState::Unchecked => "unchecked",
        }
    }

    /// From `%G?`, for a commit that carries a signature: git says `N`
    /// when it cannot verify an SSH signature at all (no allowed signers
    /// file), which is not "unsigned".
    fn of_letter(letter: &str) -> SignatureState {
        match letter {
            "G" => SignatureState::Good,
            "U" => SignatureState::UnknownKey,
            "B" => SignatureState::Bad,
            "X" | "Y" => SignatureState::Expired,
            "R" => SignatureState::Revoked,
            _ => SignatureState::Unchecked,
        }
    }
}

/// A signed commit's verification: the state and the signer git names
/// (`%GS`: an SSH principal from the allowed signers, or a GPG user id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub state: SignatureState,
    pub signer: String,
}

impl Verified {
    /// No signature.
    pub fn unsigned() -> Verified {
        Verified {
            state: SignatureState::Unsigned,
            signer: String::new(),
        }
    }
}

impl CommitInfo {
    /// The commit as the trust verdict sees it, with `signature` its
    /// verification ([`Workspace::verify_signatures`]).
    pub fn origin<'a>(
        &'a self,
        signature: &'a Verified,
    ) -> crate::domain::memory::verdict::Origin<'a> {
        crate::domain::memory::verdict::Origin {
            author: &self.author,
            author_name: &self.author_name,
            author_email: &self.author_email,
            signature: signature.state.name(),
            signer: crate::domain::config::TrustPolicy::email_of(&signature.signer),
            shallow: self.shallow,
        }
    }
}

/// `commits` (those reachable from `head` that a walk found) in history's
/// order ([`crate::domain::history_order::order`]); a commit the order does
/// not reach from `head` through the walked ones cannot be, but would
/// come last, oldest first as the walk found it.
fn in_history_order(head: gix::ObjectId, commits: Vec<CommitInfo>) -> Vec<CommitInfo> {
    let at: HashMap<gix::ObjectId, usize> = commits
        .iter()
        .enumerate()
        .map(|(index, commit)| (commit.id, index))
        .collect();
    let ordered = crate::domain::history_order::order(head, |id| {
        at.get(&id).map(|&index| commits[index].parents.as_slice())
    });
    let mut slots: Vec<Option<CommitInfo>> = commits.into_iter().map(Some).collect();
    let mut out: Vec<CommitInfo> = ordered
        .iter()
        .filter_map(|id| slots[at[id]].take())
        .collect();
    out.extend(slots.into_iter().rev().flatten());
    out
}

fn read_error(what: impl Into<String>) -> impl FnOnce(gix::Error) -> GitError {
    let what = what.into();
    move |source| GitError::Read {
        what,
        source: Box::new(source),
    }
}

impl Workspace {
    /// HEAD's commit id, `None` in a repository without commits.
    pub fn head_commit(&self) -> Option<gix::ObjectId> {
        self.repo.head_id().ok().map(|id| id.detach())
    }

    /// The `*.jsonl` files of the memory folder in `commit`'s tree, by name,
    /// with their blob ids. Empty when the commit has no memory folder.
    pub fn memory_files_at(
        &self,
        commit: gix::ObjectId,
    ) -> Result<std::collections::BTreeMap<String, gix::ObjectId>, GitError> {
        let what = || format!("the memory folder of commit {commit}");
        let tree = self.commit_tree(commit, what)?;
        let mut files = std::collections::BTreeMap::new();
        let Some(entry) = tree
            .lookup_entry_by_path(MEMORY_DIR)
            .map_err(read_error(what()))?
        else {
            return Ok(files);
        };
        if !entry.mode().is_tree() {
            return Ok(files);
        }
        let folder = self
            .repo
            .find_tree(entry.id())
            .map_err(read_error(what()))?;
        for entry in folder.iter() {
            let entry = entry.map_err(|err| read_error(what())(err))?;
            let name = entry.filename().to_string();
            if name.ends_with(".jsonl") && entry.mode().is_blob() {
                files.insert(name, entry.oid().to_owned());
            }
        }
        Ok(files)
    }

    /// The tree of `commit`; `what` names what was being read when it cannot
    /// be.
    fn commit_tree(
        &self,
        commit: gix::ObjectId,
        what: impl Fn() -> String,
    ) -> Result<gix::Tree<'_>, GitError> {
        self.repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(read_error(what()))
    }

    /// What stands in `commit`'s tree where goldfish reads memories without
    /// being what it reads: `.goldfish` or the memory folder not a folder,
    /// or a `*.jsonl` entry of the folder that is not a regular file (a
    /// submodule, a link, a folder). Readers skip them; review names them.
    pub fn memory_folder_oddities_at(
        &self,
        commit: gix::ObjectId,
    ) -> Result<Vec<Oddity>, GitError> {
        let what = || format!("the memory folder of commit {commit}");
        let tree = self.commit_tree(commit, what)?;
        let mut odd = Vec::new();
        let mut folder = None;
        for path in [".goldfish", MEMORY_DIR] {
            match tree
                .lookup_entry_by_path(path)
                .map_err(read_error(what()))?
            {
                None => return Ok(odd),
                Some(entry) if entry.mode().is_tree() => folder = Some(entry.id().detach()),
                Some(entry) => {
                    odd.push(Oddity::of(
                        path.to_owned(),
                        entry.mode(),
                        entry.id().detach(),
                    ));
                    return Ok(odd);
                }
            }
        }
        let Some(folder) = folder else {
            return Ok(odd);
        };
        let folder = self.repo.find_tree(folder).map_err(read_error(what()))?;
        for entry in folder.iter() {
            let entry = entry.map_err(|err| read_error(what())(err))?;
            let name = entry.filename().to_string();
            if name.ends_with(".jsonl") && !entry.mode().is_blob() {
                odd.push(Oddity::of(
                    format!("{MEMORY_DIR}/{name}"),
                    entry.mode(),
                    entry.oid().to_owned(),
                ));
            }
        }
        Ok(odd)
    }

    /// Whether `path` is a submodule (a gitlink) in HEAD's tree: another
    /// repository's commit, whose files live in that repository.
    pub fn gitlink_at_head(&self, path: &str) -> bool {
        let Some(head) = self.head_commit() else {
            return false;
        };
        self.repo
            .find_commit(head)
            .ok()
            .and_then(|commit| commit.tree().ok())
            .and_then(|tree| tree.lookup_entry_by_path(path).ok().flatten())
            .is_some_and(|entry| entry.mode().is_commit())
    }

    /// Memory file `name` as `commit`'s tree has it, when it is a regular
    /// file there (a link in a tree is never followed); `None` otherwise.
    pub fn memory_file_at(&self, commit: gix::ObjectId, name: &str) -> Option<Vec<u8>> {
        let tree = self.repo.find_commit(commit).ok()?.tree().ok()?;
        let entry = tree
            .lookup_entry_by_path(format!("{MEMORY_DIR}/{name}"))
            .ok()??;
        if !entry.mode().is_blob() {
            return None;
        }
        Some(self.repo.find_blob(entry.id()).ok()?.take_data())
    }

    /// The commits HEAD's reflog of this work tree moved to, oldest first
    /// (empty without a reflog).
    pub fn head_reflog(&self) -> Vec<gix::ObjectId> {
        let Ok(head) = self.repo.head() else {
            return Vec::new();
        };
        let mut log = head.log_iter();
        match log.all() {
            Ok(Some(lines)) => lines
                .filter_map(Result::ok)
                .map(|line| line.new_oid())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The stash commits (`git stash list`): the reflog of `refs/stash`.
    pub fn stash_commits(&self) -> Vec<gix::ObjectId> {
        let Ok(Some(stash)) = self.repo.try_find_reference("refs/stash") else {
            return Vec::new();
        };
        let mut log = stash.log_iter();
        let mut commits: Vec<gix::ObjectId> = match log.all() {
            Ok(Some(lines)) => lines
                .filter_map(Result::ok)
                .map(|line| line.new_oid())
                .collect(),
            _ => Vec::new(),
        };
        if let Some(id) = stash.target().try_id() {
            commits.push(id.to_owned());
        }
        commits
    }

    /// The bytes of a blob.
    pub fn read_blob(&self, id: gix::ObjectId) -> Result<Vec<u8>, GitError> {
        self.repo
            .find_blob(id)
            .map(|mut blob| blob.take_data())
            .map_err(read_error(format!("blob {id}")))
    }

    /// Whether `ancestor` is `head` or in its history; `false` when either
    /// is missing or the history cannot be read.
    pub fn is_ancestor(&self, ancestor: gix::ObjectId, head: gix::ObjectId) -> bool {
        if ancestor == head {
            return true;
        }
        if self.repo.find_commit(ancestor).is_err() {
            return false;
        }
        match self.repo.rev_walk([ancestor]).with_hidden([head]).all() {
            Ok(mut walk) => walk.next().is_none(),
            Err(_) => false,
        }
    }

    /// The commit `spec` names (a branch, a tag, `origin/main`, a commit id,
    /// `@{upstream}`, as `git rev-parse` reads it); `None` when it names no
    /// commit here. A spec that starts with `-` names nothing (it would be
    /// read as an option).
    pub fn resolve_commit(&self, spec: &str) -> Result<Option<gix::ObjectId>, GitError> {
        if spec.is_empty() || spec.starts_with('-') {
            return Ok(None);
        }
        let peeled = format!("{spec}^{{commit}}");
        let output = git_command(
            &self.root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &peeled,
            ],
        )?;
        if !output.status.success() {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&output.stdout);
        Ok(gix::ObjectId::from_hex(text.trim().as_bytes()).ok())
    }

    /// The upstream of the current branch (`@{upstream}`, e.g.
    /// `origin/main`); `None` when detached or without one.
    pub fn upstream(&self) -> Option<String> {
        self.git(&[
            "rev-parse",
            "--abbrev-ref",
            "--symbolic-full-name",
            "@{upstream}",
        ])
        .ok()
        .filter(|name| !name.is_empty())
    }

    /// The remote of the current branch's upstream (`branch.NAME.remote`);
    /// `None` when detached, without one, or when the upstream is a local
    /// branch (`.`).
    pub fn upstream_remote(&self) -> Option<String> {
        let branch = self.head().branch?;
        self.config_string(&format!("branch.{branch}.remote"))
            .map(|remote| remote.trim().to_owned())
            .filter(|remote| !remote.is_empty() && remote != ".")
    }

    /// The default branch of `remote` as this clone knows it, by name and
    /// commit: `REMOTE/HEAD` (set by `git clone` and `git remote set-head`)
    /// named as the branch it points to, else `REMOTE/main`, else
    /// `REMOTE/master`; `None` when it has none of them.
    pub fn remote_default_branch(&self, remote: &str) -> Option<(String, gix::ObjectId)> {
        ["HEAD", "main", "master"].iter().find_map(|name| {
            let full = format!("refs/remotes/{remote}/{name}");
            let id = self.resolve_commit(&full).ok().flatten()?;
            let named = self
                .repo
                .try_find_reference(full.as_str())
                .ok()
                .flatten()
                .and_then(|reference| {
                    reference
                        .target()
                        .try_name()
                        .map(|target| target.shorten().to_string())
                })
                .unwrap_or_else(|| format!("{remote}/{name}"));
            Some((named, id))
        })
    }

    /// The best common ancestor of `a` and `b` (`git merge-base`); `None`
    /// when their histories are unrelated.
    pub fn merge_base(&self, a: gix::ObjectId, b: gix::ObjectId) -> Option<gix::ObjectId> {
        let found = self
            .git(&["merge-base", &a.to_string(), &b.to_string()])
            .ok()?;
        gix::ObjectId::from_hex(found.trim().as_bytes()).ok()
    }

    /// Whether this repository has commit `id` (a deleted branch's tip is
    /// gone once git collects it).
    pub fn has_commit(&self, id: gix::ObjectId) -> bool {
        self.repo.find_commit(id).is_ok()
    }

    /// The branches and their tips, by short name: the local branches
    /// (`refs/heads/NAME`) and the remote-tracking ones
    /// (`refs/remotes/REMOTE/NAME`, when no local branch has the name).
    /// Symbolic refs (`origin/HEAD`) are left out.
    pub fn branch_tips(&self) -> Result<std::collections::BTreeMap<String, BranchTip>, GitError> {
        fn failed(err: impl Into<gix::Error>) -> GitError {
            read_error("the branches")(err.into())
        }
        let refs = self.repo.references().map_err(failed)?;
        let mut tips = std::collections::BTreeMap::new();
        for reference in refs.local_branches().map_err(failed)? {
            let reference = reference.map_err(failed)?;
            if let Some(id) = reference.target().try_id() {
                let tip = BranchTip {
                    id: id.to_owned(),
                    local: true,
                };
                tips.insert(reference.name().shorten().to_string(), tip);
            }
        }
        for reference in refs.remote_branches().map_err(failed)? {
            let reference = reference.map_err(failed)?;
            let Some(id) = reference.target().try_id().map(ToOwned::to_owned) else {
                continue;
            };
            let full = reference.name().as_bstr().to_string();
            let Some((_, name)) = full
                .strip_prefix("refs/remotes/")
                .and_then(|rest| rest.split_once('/'))
            else {
                continue;
            };
            if name != "HEAD" {
                tips.entry(name.to_owned())
                    .or_insert(BranchTip { id, local: false });
            }
        }
        Ok(tips)
    }

    /// Every branch by the name git shows it with, and its tip: local ones
    /// (`main`) and remote-tracking ones (`origin/feature`), sorted by
    /// name; symbolic refs (`origin/HEAD`) are left out.
    pub fn branch_refs(&self) -> Result<Vec<(String, gix::ObjectId)>, GitError> {
        fn failed(err: impl Into<gix::Error>) -> GitError {
            read_error("the branches")(err.into())
        }
        let refs = self.repo.references().map_err(failed)?;
        let mut found = std::collections::BTreeMap::new();
        for reference in refs.local_branches().map_err(failed)? {
            let reference = reference.map_err(failed)?;
            if let Some(id) = reference.target().try_id() {
                found.insert(reference.name().shorten().to_string(), id.to_owned());
            }
        }
        for reference in refs.remote_branches().map_err(failed)? {
            let reference = reference.map_err(failed)?;
            let Some(id) = reference.target().try_id().map(ToOwned::to_owned) else {
                continue;
            };
            let full = reference.name().as_bstr().to_string();
            if let Some(name) = full.strip_prefix("refs/remotes/")
                && !name.ends_with("/HEAD")
            {
                found.entry(name.to_owned()).or_insert(id);
            }
        }
        Ok(found.into_iter().collect())
    }

    /// The id of `commit`'s root tree.
    pub fn tree_of(&self, commit: gix::ObjectId) -> Result<gix::ObjectId, GitError> {
        let what = || format!("the tree of commit {commit}");
        let commit = self.repo.find_commit(commit).map_err(read_error(what()))?;
        commit
            .tree_id()
            .map(|id| id.detach())
            .map_err(read_error(what()))
    }

    /// What tree `new` deleted and added against tree `old` (`None`: the
    /// empty tree), descending only into subtrees whose ids differ.
    pub fn diff_trees(
        &self,
        old: Option<gix::ObjectId>,
        new: Option<gix::ObjectId>,
    ) -> Result<TreeChanges, GitError> {
        let mut changes = TreeChanges::default();
        self.diff_into(old, new, "", &mut changes)?;
        Ok(changes)
    }

    fn diff_into(
        &self,
        old: Option<gix::ObjectId>,
        new: Option<gix::ObjectId>,
        prefix: &str,
        changes: &mut TreeChanges,
    ) -> Result<(), GitError> {
        if old == new {
            return Ok(());
        }
        let before = self.tree_entries(old)?;
        let after = self.tree_entries(new)?;
        let names: std::collections::BTreeSet<&String> =
            before.keys().chain(after.keys()).collect();
        for name in names {
            let (a, b) = (before.get(name), after.get(name));
            if a == b {
                continue;
            }
            let path = format!("{prefix}{name}");
            let of = |entry: Option<&(gix::ObjectId, EntryKind)>, kind: EntryKind| {
                entry.filter(|e| e.1 == kind).map(|e| e.0)
            };
            let tree = |entry| of(entry, EntryKind::Tree);
            let blob = |entry| of(entry, EntryKind::Blob);
            let (old_tree, new_tree) = (tree(a), tree(b));
            if old_tree != new_tree {
                self.diff_into(old_tree, new_tree, &format!("{path}/"), changes)?;
            }
            if of(a, EntryKind::Submodule) != of(b, EntryKind::Submodule) {
                changes.submodules.push(path.clone());
            }
            match (blob(a), blob(b)) {
                (Some(id), None) => changes.deleted.push((path, id)),
                (None, Some(id)) => changes.added.push((path, id)),
                (Some(_), Some(_)) => changes.modified.push(path),
                (None, None) => {}
            }
        }
        Ok(())
    }

    /// A tree's entries by name: (id, kind).
    fn tree_entries(
        &self,
        tree: Option<gix::ObjectId>,
    ) -> Result<std::collections::BTreeMap<String, (gix::ObjectId, EntryKind)>, GitError> {
        let mut entries = std::collections::BTreeMap::new();
        let Some(tree) = tree else {
            return Ok(entries);
        };
        let what = || format!("tree {tree}");
        let tree = self.repo.find_tree(tree).map_err(read_error(what()))?;
        for entry in tree.iter() {
            let entry = entry.map_err(|err| read_error(what())(err))?;
            let kind = if entry.mode().is_tree() {
                EntryKind::Tree
            } else if entry.mode().is_commit() {
                EntryKind::Submodule
            } else {
                EntryKind::Blob
            };
            entries.insert(entry.filename().to_string(), (entry.oid().to_owned(), kind));
        }
        Ok(entries)
    }

    /// The object at `path` in tree `tree`, when it holds one (the same
    /// paths as [`Workspace::tree_holds`]).
    pub fn object_at(&self, tree: gix::ObjectId, path: &str) -> Option<gix::ObjectId> {
        if path.is_empty()
            || path
                .split('/')
                .any(|part| part.is_empty() || part == "." || part == "..")
        {
            return None;
        }
        let tree = self.repo.find_tree(tree).ok()?;
        Some(tree.lookup_entry_by_path(path).ok()??.object_id())
    }

    /// Whether tree `tree` holds `path` (a path of the repository, `/`
    /// between its parts); a path with an empty, `.` or `..` part, or
    /// absolute, is held by no tree. Only the tree is read, never the
    /// work tree.
    pub fn tree_holds(&self, tree: gix::ObjectId, path: &str) -> bool {
        if path.is_empty()
            || path
                .split('/')
                .any(|part| part.is_empty() || part == "." || part == "..")
        {
            return false;
        }
        let Ok(tree) = self.repo.find_tree(tree) else {
            return false;
        };
        tree.lookup_entry_by_path(path).ok().flatten().is_some()
    }

    /// Commits reachable from `head` but not from `known`, oldest first in
    /// history's order ([`history_order::order`]: by the first-parent line
    /// of the branch each reached, the same on every machine), each with
    /// the parents this repository has.
    ///
    /// [`history_order::order`]: crate::domain::history_order::order
    pub fn new_commits(
        &self,
        head: gix::ObjectId,
        known: Option<gix::ObjectId>,
    ) -> Result<Vec<CommitInfo>, GitError> {
        let boundary = self.shallow_boundary();
        let mut walk = self.repo.rev_walk([head]);
        // A known commit that is gone (gc after a rewrite) just means walking more.
        if let Some(known) = known.filter(|id| self.repo.find_commit(*id).is_ok()) {
            walk = walk.with_hidden([known]);
        }
        let walk = walk.all().map_err(read_error("the commit history"))?;
        let mut commits = Vec::new();
        for info in walk {
            let info = info.map_err(|err| read_error("the commit history")(err))?;
            commits.push(self.commit_info_in(info.id, &boundary)?);
        }
        Ok(in_history_order(head, commits))
    }

    /// A commit's first parent, when this repository has it.
    pub fn first_parent(&self, commit: gix::ObjectId) -> Option<gix::ObjectId> {
        let parent = self
            .repo
            .find_commit(commit)
            .ok()?
            .parent_ids()
            .next()?
            .detach();
        self.repo.has_object(parent).then_some(parent)
    }

    /// One commit, as [`Workspace::new_commits`] reads each.
    pub fn commit_info(&self, id: gix::ObjectId) -> Result<CommitInfo, GitError> {
        self.commit_info_in(id, &self.shallow_boundary())
    }

    fn commit_info_in(
        &self,
        id: gix::ObjectId,
        boundary: &HashSet<gix::ObjectId>,
    ) -> Result<CommitInfo, GitError> {
        let commit = self
            .repo
            .find_commit(id)
            .map_err(read_error(format!("commit {id}")))?;
        let (author, author_name, author_email, date) = match commit.author() {
            Ok(signature) => {
                let signature = signature.trim();
                let date = jiff::Timestamp::from_second(signature.seconds())
                    .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
                    .unwrap_or_default();
                (
                    format!("{} <{}>", signature.name, signature.email),
                    signature.name.to_string(),
                    signature.email.to_string(),
                    date,
                )
            }
            Err(_) => Default::default(),
        };
        let committer = commit
            .committer()
            .map(|signature| {
                let signature = signature.trim();
                format!("{} <{}>", signature.name, signature.email)
            })
            .unwrap_or_default();
        let signed = commit
            .decode()
            .is_ok_and(|decoded| decoded.extra_headers().pgp_signature().is_some());
        let all_parents: Vec<gix::ObjectId> = commit.parent_ids().map(|id| id.detach()).collect();
        // Parents missing from the object database (the boundary of a
        // shallow clone) are left out, and the commit says it is one.
        let parents: Vec<gix::ObjectId> = all_parents
            .iter()
            .copied()
            .filter(|parent| !boundary.contains(&id) && self.repo.has_object(parent))
            .collect();
        Ok(CommitInfo {
            id,
            shallow: boundary.contains(&id) || parents.len() < all_parents.len(),
            parents,
            author,
            author_name,
            author_email,
            committer,
            date,
            signed,
            reverts: commit
                .message_raw()
                .ok()
                .and_then(|message| reverted_by_message(message)),
        })
    }

    /// Every commit reachable from `head`, oldest first in history's order
    /// ([`Workspace::new_commits`]'s), read no further than their parents.
    pub fn commit_order(&self, head: gix::ObjectId) -> Result<Vec<gix::ObjectId>, GitError> {
        let boundary = self.shallow_boundary();
        let walk = self
            .repo
            .rev_walk([head])
            .all()
            .map_err(read_error("the commit history"))?;
        let mut parents: HashMap<gix::ObjectId, Vec<gix::ObjectId>> = HashMap::new();
        for info in walk {
            let info = info.map_err(|err| read_error("the commit history")(err))?;
            let of: Vec<gix::ObjectId> = if boundary.contains(&info.id) {
                Vec::new()
            } else {
                info.parent_ids
                    .iter()
                    .copied()
                    .filter(|id| self.repo.has_object(id))
                    .collect()
            };
            parents.insert(info.id, of);
        }
        Ok(crate::domain::history_order::order(head, |id| {
            parents.get(&id).map(Vec::as_slice)
        }))
    }

    /// The commits `.git/shallow` lists: a shallow clone's boundary, whose
    /// parents this repository does not have. Empty in a complete clone.
    pub fn shallow_boundary(&self) -> HashSet<gix::ObjectId> {
        match self.repo.shallow_commits() {
            Ok(Some(commits)) => commits.iter().copied().collect(),
            _ => HashSet::new(),
        }
    }

    /// The blob id of `.goldfish/config` in `commit`'s tree; `None` when it
    /// has none (or it is not a file).
    pub fn repo_config_at(&self, commit: gix::ObjectId) -> Result<Option<gix::ObjectId>, GitError> {
        let what = || format!("{REPO_CONFIG} of commit {commit}");
        let tree = self.commit_tree(commit, what)?;
        let entry = tree
            .lookup_entry_by_path(REPO_CONFIG)
            .map_err(read_error(what()))?;
        Ok(entry
            .filter(|entry| entry.mode().is_blob())
            .map(|entry| entry.id().detach()))
    }

    /// Verifies the signatures of the signed ones among `commits` (see
    /// [`CommitInfo::signed`]; each once) with one `git log` process, as git
    /// itself would (gix does not verify signatures): the repository's
    /// `gpg.ssh.allowedSignersFile` for SSH, the keyring for GPG. A commit
    /// git does not answer for, or a git that cannot run, is `Unchecked`.
    pub fn verify_signatures<'a>(
        &self,
        commits: impl IntoIterator<Item = &'a CommitInfo>,
    ) -> Signatures {
        self.verify_signatures_with(commits, &AllowedSigners::Configured)
    }

    /// [`Workspace::verify_signatures`] against `signers`: for a blob, SSH
    /// signatures are checked against that committed version of the
    /// allowed-signers file (none: against an empty one), never the work
    /// tree's.
    pub fn verify_signatures_with<'a>(
        &self,
        commits: impl IntoIterator<Item = &'a CommitInfo>,
        signers: &AllowedSigners,
    ) -> Signatures {
        let mut commits: Vec<gix::ObjectId> = commits
            .into_iter()
            .filter(|commit| commit.signed)
            .map(|commit| commit.id)
            .collect();
        commits.sort_unstable();
        commits.dedup();
        let mut verified: std::collections::HashMap<gix::ObjectId, Verified> = commits
            .iter()
            .map(|id| {
                (
                    *id,
                    Verified {
                        state: SignatureState::Unchecked,
                        signer: String::new(),
                    },
                )
            })
            .collect();
        if commits.is_empty() {
            return Signatures(verified);
        }
        let stdin: String = commits.iter().map(|id| format!("{id}\n")).collect();
        // A committed signers file is read into a file of its own; one
        // that cannot be read, or is over the bound, verifies nobody.
        let file = match signers {
            AllowedSigners::Configured => None,
            AllowedSigners::Blob(blob) => {
                let bytes = blob
                    .and_then(|blob| self.read_blob(blob).ok())
                    .filter(|bytes| bytes.len() <= MAX_SIGNERS_BYTES)
                    .unwrap_or_default();
                let Ok(mut file) = tempfile::NamedTempFile::new() else {
                    return Signatures(verified);
                };
                if std::io::Write::write_all(&mut file, &bytes).is_err() {
                    return Signatures(verified);
                }
                Some(file)
            }
        };
        let signers_setting = file
            .as_ref()
            .map(|file| format!("gpg.ssh.allowedSignersFile={}", file.path().display()));
        let mut args: Vec<&str> = Vec::new();
        if let Some(setting) = &signers_setting {
            args.extend(["-c", setting]);
        }
        args.extend([
            "-c",
            "log.showSignature=false",
            "log",
            "--no-walk=unsorted",
            "--stdin",
            "--no-color",
            "--format=%H%x1f%G?%x1f%GS%x1e",
        ]);
        let Ok(output) = git_with_stdin(&self.root, &args, stdin.as_bytes()) else {
            return Signatures(verified);
        };
        read_signatures(&output.stdout, &mut verified);
        Signatures(verified)
    }
}

/// Reads `git log --format=%H%x1f%G?%x1f%GS%x1e`'s records into the
/// verdicts of the commits asked about.
fn read_signatures(
    stdout: &[u8],
    verified: &mut std::collections::HashMap<gix::ObjectId, Verified>,
) {
    for record in String::from_utf8_lossy(stdout).split('\x1e') {
        let mut fields = record.trim_start_matches('\n').split('\x1f');
        let (Some(id), Some(letter), Some(signer)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Ok(id) = gix::ObjectId::from_hex(id.as_bytes()) else {
            continue;
        };
        if let Some(entry) = verified.get_mut(&id) {
            *entry = Verified {
                state: SignatureState::of_letter(letter),
                signer: signer.trim().to_owned(),
            };
        }
    }
}

/// The allowed-signers file SSH signatures are verified against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowedSigners {
    /// What git is configured with (`gpg.ssh.allowedSignersFile`): a file
    /// outside the repository, which no commit can change.
    Configured,
    /// A version of the file kept in the repository (`None`: the file did
    /// not exist there), the one in effect by the policy's history.
    Blob(Option<gix::ObjectId>),
}

/// The largest allowed-signers file read from git (a team's keys take a
/// few KiB); a larger one verifies nobody.
pub const MAX_SIGNERS_BYTES: usize = 1 << 20;

/// What [`Workspace::verify_signatures`] found, by commit.
#[derive(Debug, Default)]
pub struct Signatures(std::collections::HashMap<gix::ObjectId, Verified>);

impl Signatures {
    /// The signature of `commit`: unsigned when it carries none (or was not
    /// among the commits verified).
    pub fn of(&self, commit: &CommitInfo) -> Verified {
        match self.0.get(&commit.id) {
            Some(verified) if commit.signed => verified.clone(),
            _ => Verified::unsigned(),
        }
    }
}

/// Runs `git args…` in `dir` with `stdin` on its standard input, whatever
/// its exit status.
fn git_with_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> Result<Output, GitError> {
    use std::io::Write;
    let spawn_error = |source| GitError::Spawn {
        args: args.join(" "),
        source,
    };
    let mut child = Command::new("git")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    // Written from a thread: git answers as it reads, and a full stdout
    // pipe would stop it while this still writes.
    let mut input = child.stdin.take().expect("stdin was piped");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let output = child.wait_with_output().map_err(spawn_error)?;
    let _ = writer.join();
    Ok(output)
}

/// The git blob id of `bytes`, as `git hash-object` computes it.
pub fn blob_id(bytes: &[u8]) -> gix::ObjectId {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .expect("sha1 hashing of in-memory bytes does not fail")
}

/// Runs `git args…` in `dir` and returns its trimmed stdout.
pub fn run_git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let output = git_command(dir, args)?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_owned())
    } else {
        Err(GitError::Failed {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

/// Runs `git args…` in `dir`, whatever its exit status.
pub fn git_command(dir: &Path, args: &[&str]) -> Result<Output, GitError> {
    Command::new("git")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|source| GitError::Spawn {
            args: args.join(" "),
            source,
        })
}

/// `git merge-file` (gix has no text merge that leaves conflict markers):
/// merges `theirs` into `ours` in place; the number of conflicts, negative
/// on error (the process's exit code).
pub fn git_merge_file(ours: &Path, base: &Path, theirs: &Path) -> Result<i32, GitError> {
    let status = Command::new("git")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .args(["merge-file", "-L", "ours", "-L", "base", "-L", "theirs"])
        .arg(ours)
        .arg(base)
        .arg(theirs)
        .status()
        .map_err(|source| GitError::Spawn {
            args: "merge-file".to_owned(),
            source,
        })?;
    Ok(status.code().unwrap_or(-1))
}

#[cfg(test)]
mod tests {
    use super::reverted_by_message;

    #[test]
    fn a_revert_message_names_the_commit_it_reverts() {
        let sha = "0123456789abcdef0123456789ABCDEF01234567";
        let message = format!("Revert \"retry forever\"\n\nThis reverts commit {sha}.\n");
        assert_eq!(
            reverted_by_message(message.as_bytes()).as_deref(),
            Some(sha.to_ascii_lowercase().as_str())
        );
        // Abbreviated, or not hex: not git's wording.
        assert_eq!(reverted_by_message(b"This reverts commit 0123456."), None);
        assert_eq!(
            reverted_by_message(b"This reverts commit zz23456789abcdef0123456789abcdef01234567."),
            None
        );
        assert_eq!(reverted_by_message(b"retry forever"), None);
    }
}
