//! Which commit changed which memory line: a walk of commits, oldest first,
//! that compares each commit's memory files with its parents' versions of
//! them.
//!
//! Linear in the history: a version of a file is read once, and kept only
//! while a commit still to walk has it as a parent's version (a straight
//! history holds two of each file: the parent's and the child's). A version
//! that appends to its parent's (what `store` and a fast-forward make) is
//! read as the parent's keys plus the lines after them, its parent's keys
//! taken over when nothing else needs them: the lines of a file appended to
//! 5,000 times are parsed once each, not 5,000 times.

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
    /// with what the reader of the line gave for each.
    pub added: Vec<(&'a K, &'a V)>,
    /// Keys a parent's version holds that this version lacks (only when
    /// the walker was asked for removals).
    pub removed: Vec<&'a K>,
}

/// One version of a memory file as read: its bytes (to tell an append)
/// and its keys, each with its first line's value.
struct Version<K, V> {
    bytes: Vec<u8>,
    keys: HashMap<K, V>,
}

/// Walks commits over memory files, reading each blob once: `key` reads a
/// line into its key and a value (say what the line claims); `None` for a
/// line without one.
pub struct Walker<'w, K, V, F> {
    workspace: &'w Workspace,
    key: F,
    removals: bool,
    /// The memory files of the commits a commit still to walk has as a
    /// parent.
    files_at: HashMap<gix::ObjectId, BTreeMap<String, gix::ObjectId>>,
    /// How many of the walked commits still to come have each commit as a
    /// parent.
    children_left: HashMap<gix::ObjectId, usize>,
    /// The versions read that a map of `files_at` holds.
    versions: HashMap<gix::ObjectId, Version<K, V>>,
    /// How many maps of `files_at` hold each blob.
    held: HashMap<gix::ObjectId, usize>,
}

impl<'w, K, V, F> Walker<'w, K, V, F>
where
    K: Eq + Hash + Clone,
    V: Clone,
    F: FnMut(&[u8]) -> Option<(K, V)>,
{
    pub fn new(workspace: &'w Workspace, key: F) -> Self {
        Walker {
            workspace,
            key,
            removals: false,
            files_at: HashMap::new(),
            children_left: HashMap::new(),
            versions: HashMap::new(),
            held: HashMap::new(),
        }
    }

    /// Also report the keys each change removed (a file a commit deleted
    /// counts too).
    pub fn with_removals(mut self) -> Self {
        self.removals = true;
        self
    }

    /// Calls `changed` for every memory file each of `commits` (oldest
    /// first, parents before children) changed: one whose blob differs
    /// from every parent's (a merge that takes one side's file changes
    /// nothing: that side's own commit did).
    pub fn walk(
        &mut self,
        commits: &[CommitInfo],
        mut changed: impl FnMut(FileChange<'_, K, V>),
    ) -> Result<(), GitError> {
        for commit in commits {
            for parent in &commit.parents {
                *self.children_left.entry(*parent).or_default() += 1;
            }
        }
        for (index, commit) in commits.iter().enumerate() {
            let files = self.workspace.memory_files_at(commit.id)?;
            let parents = commit
                .parents
                .iter()
                .map(|parent| self.files_of(*parent))
                .collect::<Result<Vec<_>, _>>()?;
            let mut names: BTreeSet<&String> = files.keys().collect();
            if self.removals {
                names.extend(parents.iter().flat_map(|p| p.keys()));
            }
            let mut read_here: Vec<gix::ObjectId> = Vec::new();
            for name in names {
                let blob = files.get(name).copied();
                if parents.iter().any(|p| p.get(name).copied() == blob) {
                    continue;
                }
                let parent_blobs: Vec<gix::ObjectId> = parents
                    .iter()
                    .filter_map(|p| p.get(name).copied())
                    .collect();
                for id in &parent_blobs {
                    self.load(*id)?;
                    read_here.push(*id);
                }
                // One parent's version and this one appending to it: what
                // it adds is what it appends, and it removes nothing.
                let appended = match (blob, &parent_blobs[..]) {
                    (Some(id), [parent]) if !self.versions.contains_key(&id) => {
                        let last_use = commit.parents.len() == 1
                            && self.held.get(parent).copied().unwrap_or(0) <= 1
                            && self.children_left.get(&commit.parents[0]).copied() == Some(1);
                        self.append_to(id, *parent, last_use)?
                    }
                    _ => None,
                };
                if let Some(id) = blob {
                    self.load(id)?;
                    read_here.push(id);
                }
                let now = blob.map(|id| &self.versions[&id].keys);
                let (added, removed) = match (appended, now) {
                    (Some(appended), Some(now)) => (
                        appended
                            .iter()
                            .filter_map(|key| now.get_key_value(key))
                            .collect(),
                        Vec::new(),
                    ),
                    _ => {
                        let before: Vec<&HashMap<K, V>> = parent_blobs
                            .iter()
                            .filter_map(|id| self.versions.get(id).map(|v| &v.keys))
                            .collect();
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
                        (added, removed)
                    }
                };
                changed(FileChange {
                    commit: index,
                    file: name,
                    blob,
                    added,
                    removed,
                });
            }
            // Kept while a commit to come has this one as a parent.
            if self.children_left.get(&commit.id).copied().unwrap_or(0) > 0 {
                self.hold(commit.id, files);
            }
            for parent in &commit.parents {
                if let Some(left) = self.children_left.get_mut(parent) {
                    *left = left.saturating_sub(1);
                    if *left == 0 {
                        self.release(*parent);
                    }
                }
            }
            for id in read_here {
                if self.held.get(&id).copied().unwrap_or(0) == 0 {
                    self.versions.remove(&id);
                }
            }
        }
        Ok(())
    }

    /// Reads version `blob` line by line, unless it is read.
    fn load(&mut self, blob: gix::ObjectId) -> Result<(), GitError> {
        if !self.versions.contains_key(&blob) {
            let bytes = self.workspace.read_blob(blob)?;
            self.parse(blob, bytes);
        }
        Ok(())
    }

    /// Keeps version `blob` of `bytes`, read line by line.
    fn parse(&mut self, blob: gix::ObjectId, bytes: Vec<u8>) {
        let mut keys = HashMap::new();
        for (_, line) in goldfish_log::record::split_lines(&bytes) {
            if let Some((key, value)) = (self.key)(line) {
                keys.entry(key).or_insert(value);
            }
        }
        self.versions.insert(blob, Version { bytes, keys });
    }

    /// Reads version `blob` as `parent`'s plus the lines after its bytes,
    /// when it begins with them (whole lines): the keys it appends, in
    /// order. `parent`'s keys are taken over when this is their `last_use`
    /// (it is dropped), else copied. `None` when `blob` does not append to
    /// `parent`: it is then read line by line.
    fn append_to(
        &mut self,
        blob: gix::ObjectId,
        parent: gix::ObjectId,
        last_use: bool,
    ) -> Result<Option<Vec<K>>, GitError> {
        let bytes = self.workspace.read_blob(blob)?;
        let appends = self.versions.get(&parent).is_some_and(|version| {
            bytes.len() > version.bytes.len()
                && bytes.starts_with(&version.bytes)
                && version.bytes.last().is_none_or(|last| *last == b'\n')
        });
        if !appends {
            self.parse(blob, bytes);
            return Ok(None);
        }
        let (start, mut keys) = if last_use {
            let version = self.versions.remove(&parent).expect("read");
            (version.bytes.len(), version.keys)
        } else {
            let version = &self.versions[&parent];
            (version.bytes.len(), version.keys.clone())
        };
        let mut appended: Vec<K> = Vec::new();
        for (_, line) in goldfish_log::record::split_lines(&bytes[start..]) {
            if let Some((key, value)) = (self.key)(line)
                && !keys.contains_key(&key)
            {
                appended.push(key.clone());
                keys.insert(key, value);
            }
        }
        self.versions.insert(blob, Version { bytes, keys });
        Ok(Some(appended))
    }

    /// The memory files of `commit`: held for its children to come, else
    /// read (a commit outside the walk, seen again: an older sync's).
    fn files_of(
        &mut self,
        commit: gix::ObjectId,
    ) -> Result<BTreeMap<String, gix::ObjectId>, GitError> {
        if let Some(files) = self.files_at.get(&commit) {
            return Ok(files.clone());
        }
        let files = self.workspace.memory_files_at(commit)?;
        if self.children_left.get(&commit).copied().unwrap_or(0) > 1 {
            self.hold(commit, files.clone());
        }
        Ok(files)
    }

    fn hold(&mut self, commit: gix::ObjectId, files: BTreeMap<String, gix::ObjectId>) {
        for blob in files.values() {
            *self.held.entry(*blob).or_default() += 1;
        }
        self.files_at.insert(commit, files);
    }

    /// `commit`'s files are no longer needed: nor are the versions only
    /// they held.
    fn release(&mut self, commit: gix::ObjectId) {
        let Some(files) = self.files_at.remove(&commit) else {
            return;
        };
        for blob in files.values() {
            if let Some(held) = self.held.get_mut(blob) {
                *held -= 1;
                if *held == 0 {
                    self.held.remove(blob);
                    self.versions.remove(blob);
                }
            }
        }
    }
}
