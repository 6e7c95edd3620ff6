//! What a commit did to the repository's paths: the ones it deleted
//! (against every parent), each with the path it renamed it to, if any: the
//! same blob added, or a file at least half alike (git's `-M` default).
//! The index stores them (`path_changes`) to judge staleness.

use std::collections::{BTreeSet, HashMap};

use crate::adapters::git::{CommitInfo, GitError, Workspace};

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
