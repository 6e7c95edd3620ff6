//! Which commit changed which memory line: a walk of commits, oldest first,
//! that compares each commit's memory files with its parents' versions of
//! them. The index's provenance keys lines by id (the commit that
//! introduced a memory); `goldfish review` keys them by id and text (the
//! commit that added, edited or removed a line).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use crate::adapters::git::{CommitInfo, GitError, Workspace};
use crate::domain::policy_history::{self, Raw};

/// Reads the trust policy of `.goldfish/config` at commits, each blob
/// once, and, when asked, the version of the allowed-signers file kept in
/// the repository.
pub struct Policies<'w> {
    workspace: &'w Workspace,
    blob_at: HashMap<gix::ObjectId, Option<gix::ObjectId>>,
    raw_of: HashMap<gix::ObjectId, Raw>,
    /// The repository path of the allowed-signers file, when it is part
    /// of the policy.
    signers: Option<String>,
}

impl<'w> Policies<'w> {
    pub fn new(workspace: &'w Workspace) -> Self {
        Policies {
            workspace,
            blob_at: HashMap::new(),
            raw_of: HashMap::new(),
            signers: None,
        }
    }

    /// Follows the allowed-signers file too, when git verifies signatures
    /// against one kept in the repository
    /// ([`Workspace::signers_file_in_repo`]).
    pub fn with_signers(mut self) -> Self {
        self.signers = self.workspace.signers_file_in_repo();
        self
    }

    /// The repository path of the signers file it follows.
    pub fn signers_path(&self) -> Option<&str> {
        self.signers.as_deref()
    }

    /// The version of the signers file it follows at `commit`.
    pub fn signers_at(&self, commit: gix::ObjectId) -> Option<gix::ObjectId> {
        self.workspace
            .object_in_commit(commit, self.signers.as_deref()?)
    }

    /// The blob of the config of `commit` (`None`: no config).
    fn blob(&mut self, commit: gix::ObjectId) -> Result<Option<gix::ObjectId>, GitError> {
        if let Some(blob) = self.blob_at.get(&commit) {
            return Ok(*blob);
        }
        let blob = self.workspace.repo_config_at(commit)?;
        self.blob_at.insert(commit, blob);
        Ok(blob)
    }

    /// What the config of `commit` says of the policy.
    pub fn at(&mut self, commit: gix::ObjectId) -> Result<Raw, GitError> {
        let Some(blob) = self.blob(commit)? else {
            return Ok(Raw::Absent);
        };
        if let Some(raw) = self.raw_of.get(&blob) {
            return Ok(raw.clone());
        }
        let raw = Raw::of(Some(&self.workspace.read_blob(blob)?));
        self.raw_of.insert(blob, raw.clone());
        Ok(raw)
    }

    /// The steps of [`policy_history::walk`] for `commits` (oldest first).
    pub fn steps(
        &mut self,
        commits: &[CommitInfo],
    ) -> Result<Vec<policy_history::Step<gix::ObjectId>>, GitError> {
        commits
            .iter()
            .map(|commit| {
                let blob = self.blob(commit.id)?;
                let before = match commit.parents.first() {
                    Some(parent) => self.blob(*parent)?,
                    None => None,
                };
                let signers = self.signers_at(commit.id);
                let signers_before = commit
                    .parents
                    .first()
                    .and_then(|parent| self.signers_at(*parent));
                Ok(policy_history::Step {
                    commit: commit.id,
                    parents: commit.parents.clone(),
                    raw: self.at(commit.id)?,
                    signers: signers.map(|blob| blob.to_string()),
                    changed: blob != before || signers != signers_before,
                })
            })
            .collect()
    }

    /// The policy in effect at a commit outside a walk that no earlier
    /// walk knows: its config's, of a history of its own (a merge taking
    /// it is judged).
    pub fn seed(&mut self, commit: gix::ObjectId) -> policy_history::Effective {
        let policy = match self.at(commit) {
            Ok(Raw::Policy(policy)) => Some(policy),
            Ok(Raw::Absent) => None,
            Ok(Raw::Unusable(_)) | Err(_) => Some(policy_history::Effective::nobody()),
        };
        policy_history::Effective {
            root: Some(format!("outside:{commit}")),
            policy,
            signers: self.signers_at(commit).map(|blob| blob.to_string()),
        }
    }
}

/// What one commit changed in one memory file.
pub struct FileChange<'a, K, V> {
    /// The commit's index in the walked commits.
    pub commit: usize,
    /// The file's name inside the memory folder.
    pub file: &'a str,
    /// Its blob in this commit; `None` when the commit removed the file.
    pub blob: Option<gix::ObjectId>,
    /// Keys this version holds that no parent's version of the file holds,
    /// with what the reader of the blob gave for each.
    pub added: Vec<(&'a K, &'a V)>,
    /// Keys a parent's version holds that this version lacks (only when
    /// the walker was asked for removals).
    pub removed: Vec<&'a K>,
}

/// Walks commits over memory files, reading each blob once: `keys` turns a
/// blob's bytes into its keys (each with a value, say what its line
/// claims).
pub struct Walker<'w, K, V, F> {
    workspace: &'w Workspace,
    keys: F,
    removals: bool,
    files_at: HashMap<gix::ObjectId, BTreeMap<String, gix::ObjectId>>,
    keys_in: HashMap<gix::ObjectId, HashMap<K, V>>,
}

impl<'w, K, V, F> Walker<'w, K, V, F>
where
    K: Eq + Hash,
    F: FnMut(&[u8]) -> HashMap<K, V>,
{
    pub fn new(workspace: &'w Workspace, keys: F) -> Self {
        Walker {
            workspace,
            keys,
            removals: false,
            files_at: HashMap::new(),
            keys_in: HashMap::new(),
        }
    }

    /// Also report the keys each change removed (a file a commit deleted
    /// counts too).
    pub fn with_removals(mut self) -> Self {
        self.removals = true;
        self
    }

    /// Calls `changed` for every memory file each of `commits` (oldest
    /// first) changed: one whose blob differs from every parent's (a merge
    /// that takes one side's file changes nothing: that side's own commit
    /// did).
    pub fn walk(
        &mut self,
        commits: &[CommitInfo],
        mut changed: impl FnMut(FileChange<'_, K, V>),
    ) -> Result<(), GitError> {
        for (index, commit) in commits.iter().enumerate() {
            let files = self.files_of(commit.id)?;
            let parents = commit
                .parents
                .iter()
                .map(|parent| self.files_of(*parent))
                .collect::<Result<Vec<_>, _>>()?;
            let mut names: BTreeSet<&String> = files.keys().collect();
            if self.removals {
                names.extend(parents.iter().flat_map(|p| p.keys()));
            }
            for name in names {
                let blob = files.get(name).copied();
                if parents.iter().any(|p| p.get(name).copied() == blob) {
                    continue;
                }
                let parent_blobs: Vec<gix::ObjectId> = parents
                    .iter()
                    .filter_map(|p| p.get(name).copied())
                    .collect();
                for id in blob.iter().chain(&parent_blobs) {
                    self.load(*id)?;
                }
                let before: Vec<&HashMap<K, V>> =
                    parent_blobs.iter().map(|id| &self.keys_in[id]).collect();
                let now = blob.map(|id| &self.keys_in[&id]);
                let added = now
                    .into_iter()
                    .flatten()
                    .filter(|(key, _)| !before.iter().any(|keys| keys.contains_key(*key)))
                    .collect();
                let mut removed: Vec<&K> = Vec::new();
                if self.removals {
                    for keys in &before {
                        for key in keys.keys() {
                            if !now.is_some_and(|now| now.contains_key(key))
                                && !removed.contains(&key)
                            {
                                removed.push(key);
                            }
                        }
                    }
                }
                changed(FileChange {
                    commit: index,
                    file: name,
                    blob,
                    added,
                    removed,
                });
            }
        }
        Ok(())
    }

    /// The keys of a blob this walker has read; `None` for one it has not.
    pub fn read(&self, blob: gix::ObjectId) -> Option<&HashMap<K, V>> {
        self.keys_in.get(&blob)
    }

    fn load(&mut self, blob: gix::ObjectId) -> Result<(), GitError> {
        if !self.keys_in.contains_key(&blob) {
            let bytes = self.workspace.read_blob(blob)?;
            let keys = (self.keys)(&bytes);
            self.keys_in.insert(blob, keys);
        }
        Ok(())
    }

    fn files_of(
        &mut self,
        commit: gix::ObjectId,
    ) -> Result<BTreeMap<String, gix::ObjectId>, GitError> {
        if let Some(files) = self.files_at.get(&commit) {
            return Ok(files.clone());
        }
        let files = self.workspace.memory_files_at(commit)?;
        self.files_at.insert(commit, files.clone());
        Ok(files)
    }
}
