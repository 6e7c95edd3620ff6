//! What a commit did to the repository's paths: the ones it deleted
//! (against every parent), each with the path it renamed it to, if any: the
//! same blob added, or a file at least half alike (git's `-M` default).
//! The index stores them (`path_changes`) to judge staleness; [`AtHead`]
//! answers what the judgement asks of the code at HEAD.

use std::collections::{BTreeSet, HashMap};

use crate::adapters::git::{CommitInfo, GitError, Workspace};
use crate::domain::staleness::{Code, CommitChanges};

/// What each of `commits` did that staleness records.
pub fn changes(
    workspace: &Workspace,
    commits: &[CommitInfo],
) -> Result<Vec<CommitChanges>, GitError> {
    commits
        .iter()
        .map(|commit| {
            Ok(CommitChanges {
                commit: commit.id.to_string(),
                reverts: commit.reverts.clone(),
                deleted: deleted_by(workspace, commit)?,
                author: commit.author.clone(),
                author_name: commit.author_name.clone(),
                author_email: commit.author_email.clone(),
            })
        })
        .collect()
}

/// The paths `old`'s tree has and `new`'s lacks.
pub fn deleted_between(
    workspace: &Workspace,
    old: gix::ObjectId,
    new: gix::ObjectId,
) -> Result<Vec<String>, GitError> {
    let changes =
        workspace.diff_trees(Some(workspace.tree_of(old)?), Some(workspace.tree_of(new)?))?;
    Ok(changes.deleted.into_iter().map(|(path, _)| path).collect())
}

/// The code at a HEAD, as staleness asks about it: whether its tree holds a
/// path, whether a commit came before another; each answer kept for the
/// sync.
pub struct AtHead<'w> {
    workspace: &'w Workspace,
    tree: gix::ObjectId,
    held: HashMap<String, bool>,
    ancestors: HashMap<(String, String), bool>,
}

impl<'w> AtHead<'w> {
    pub fn new(workspace: &'w Workspace, head: gix::ObjectId) -> Result<Self, GitError> {
        Ok(AtHead {
            workspace,
            tree: workspace.tree_of(head)?,
            held: HashMap::new(),
            ancestors: HashMap::new(),
        })
    }
}

impl Code for AtHead<'_> {
    fn holds(&mut self, path: &str) -> bool {
        if let Some(held) = self.held.get(path) {
            return *held;
        }
        let held = self.workspace.tree_holds(self.tree, path);
        self.held.insert(path.to_owned(), held);
        held
    }

    fn is_ancestor(&mut self, commit: &str, of: &str) -> bool {
        let key = (commit.to_owned(), of.to_owned());
        if let Some(known) = self.ancestors.get(&key) {
            return *known;
        }
        let before = match (
            gix::ObjectId::from_hex(commit.as_bytes()),
            gix::ObjectId::from_hex(of.as_bytes()),
        ) {
            (Ok(commit), Ok(of)) => self.workspace.is_ancestor(commit, of),
            _ => true,
        };
        self.ancestors.insert(key, before);
        before
    }
}

/// The paths `commit` deleted, in path order, each with the path it was
/// renamed to (`None`: deleted). A root commit deletes nothing.
pub fn deleted_by(
    workspace: &Workspace,
    commit: &CommitInfo,
) -> Result<Vec<(String, Option<String>)>, GitError> {
    if commit.parents.is_empty() {
        return Ok(Vec::new());
    }
    let tree = workspace.tree_of(commit.id)?;
    // Deleted: lacking here while every parent has it (a merge that
    // takes one side's deletion deletes nothing: that side did).
    let mut deleted: Option<BTreeSet<(String, gix::ObjectId)>> = None;
    let mut added: HashMap<gix::ObjectId, String> = HashMap::new();
    for (n, parent) in commit.parents.iter().enumerate() {
        let changes = workspace.diff_trees(Some(workspace.tree_of(*parent)?), Some(tree))?;
        let these: BTreeSet<(String, gix::ObjectId)> = changes.deleted.into_iter().collect();
        deleted = Some(match deleted {
            None => these,
            Some(before) => before
                .into_iter()
                .filter(|(path, _)| these.iter().any(|(p, _)| p == path))
                .collect(),
        });
        if n == 0 {
            for (path, blob) in changes.added {
                added.entry(blob).or_insert(path);
            }
        }
    }
    let deleted = deleted.unwrap_or_default();
    let edited = renamed_with_edits(workspace, &deleted, &added)?;
    Ok(deleted
        .into_iter()
        .map(|(path, blob)| {
            let renamed_to = added.get(&blob).or_else(|| edited.get(&path)).cloned();
            (path, renamed_to)
        })
        .collect())
}

/// Files one commit renamed and edited: each deleted path whose blob no
/// added path holds, with the added path at least half alike to it
/// (`domain::rename`, git's `-M` default), each added path once. Only when
/// a commit deletes and adds few enough files to compare each pair, and
/// files small enough to read (a bulk move of a vendored tree counts as
/// deletions, as before).
fn renamed_with_edits(
    workspace: &Workspace,
    deleted: &BTreeSet<(String, gix::ObjectId)>,
    added: &HashMap<gix::ObjectId, String>,
) -> Result<HashMap<String, String>, GitError> {
    const MOST_FILES: usize = 64;
    const LARGEST: usize = 1 << 20;
    let gone: Vec<&(String, gix::ObjectId)> = deleted
        .iter()
        .filter(|(_, blob)| !added.contains_key(blob))
        .collect();
    let exact: BTreeSet<&String> = deleted
        .iter()
        .filter_map(|(_, blob)| added.get(blob))
        .collect();
    let fresh: Vec<(&String, gix::ObjectId)> = added
        .iter()
        .filter(|(_, path)| !exact.contains(path))
        .map(|(blob, path)| (path, *blob))
        .collect();
    if gone.is_empty() || fresh.is_empty() || gone.len() > MOST_FILES || fresh.len() > MOST_FILES {
        return Ok(HashMap::new());
    }
    let read = |blob: gix::ObjectId| -> Result<Vec<u8>, GitError> {
        let data = workspace.read_blob(blob)?;
        Ok(if data.len() > LARGEST {
            Vec::new()
        } else {
            data
        })
    };
    let old: Vec<Vec<u8>> = gone
        .iter()
        .map(|(_, blob)| read(*blob))
        .collect::<Result<_, _>>()?;
    let mut fresh = fresh;
    // A fixed order, whatever the map's: the same pairs on every sync.
    fresh.sort();
    let new: Vec<Vec<u8>> = fresh
        .iter()
        .map(|(_, blob)| read(*blob))
        .collect::<Result<_, _>>()?;
    let old_refs: Vec<&[u8]> = old.iter().map(Vec::as_slice).collect();
    let new_refs: Vec<&[u8]> = new.iter().map(Vec::as_slice).collect();
    Ok(crate::domain::rename::pair_renames(&old_refs, &new_refs)
        .into_iter()
        .map(|(d, a)| (gone[d].0.clone(), fresh[a].0.clone()))
        .collect())
}
