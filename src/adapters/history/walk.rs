//! Which commit changed which memory line: a walk of commits, oldest first,
//! that compares each commit's memory files with its parents' versions of
//! them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use crate::adapters::git::{CommitInfo, GitError, Workspace};

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
