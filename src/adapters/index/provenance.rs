//! Provenance: for each memory id, the commit that introduced it (its
//! author and date), found by walking the commits new since the last sync,
//! oldest first; part of the sync's transaction.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{OptionalExtension, Transaction, params};

use super::SyncError;
use crate::adapters::git::Workspace;

#[derive(serde::Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
}

/// Walks the commits new since `known`, oldest first, and records for each
/// memory id the commit that introduced it: the one whose memory file has the
/// id while none of its parents' versions of that file do.
pub(super) fn walk_provenance(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    workspace_id: i64,
    head: gix::ObjectId,
    known: Option<gix::ObjectId>,
    sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
) -> Result<usize, SyncError> {
    if let Some(known) = known
        && !workspace.is_ancestor(known, head)
    {
        forget_provenance_outside(tx, workspace, workspace_id, head, sqlite)?;
    }
    let commits = workspace.new_commits(head, known)?;
    let mut files_at: HashMap<gix::ObjectId, BTreeMap<String, gix::ObjectId>> = HashMap::new();
    let mut ids_in: HashMap<gix::ObjectId, HashSet<String>> = HashMap::new();
    let mut introduced: HashMap<String, usize> = HashMap::new();

    let mut files_of = |id: gix::ObjectId| -> Result<BTreeMap<String, gix::ObjectId>, SyncError> {
        if let Some(files) = files_at.get(&id) {
            return Ok(files.clone());
        }
        let files = workspace.memory_files_at(id)?;
        files_at.insert(id, files.clone());
        Ok(files)
    };
    for (index, commit) in commits.iter().enumerate() {
        let files = files_of(commit.id)?;
        let parents = commit
            .parents
            .iter()
            .map(|parent| files_of(*parent))
            .collect::<Result<Vec<_>, _>>()?;
        for (name, blob) in &files {
            if parents.iter().any(|p| p.get(name) == Some(blob)) {
                continue;
            }
            let mut before: HashSet<String> = HashSet::new();
            for parent_blob in parents.iter().filter_map(|p| p.get(name)) {
                before.extend(
                    ids_of(workspace, *parent_blob, &mut ids_in)?
                        .iter()
                        .cloned(),
                );
            }
            for id in ids_of(workspace, *blob, &mut ids_in)? {
                if !before.contains(id) {
                    introduced.entry(id.clone()).or_insert(index);
                }
            }
        }
    }
    // An id this walk sees introduced again (copied into another file,
    // or brought back) keeps what an earlier walk recorded when that commit
    // is in HEAD's history too: it is the older one, as a walk of the whole
    // history would find.
    let walked: HashSet<gix::ObjectId> = commits.iter().map(|commit| commit.id).collect();
    let mut in_history: HashMap<String, bool> = HashMap::new();
    let mut recorded = tx
        .prepare_cached("SELECT commit_id FROM provenance WHERE workspace_id = ?1 AND id = ?2")
        .map_err(sqlite)?;
    let mut statement = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO provenance (workspace_id, id, commit_id, author, date) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(sqlite)?;
    for (id, index) in &introduced {
        let commit = &commits[*index];
        let earlier: Option<String> = recorded
            .query_row(params![workspace_id, id], |row| row.get(0))
            .optional()
            .map_err(sqlite)?;
        if let Some(earlier) = earlier
            && earlier != commit.id
        {
            let keep = match in_history.get(&earlier) {
                Some(keep) => *keep,
                None => {
                    let keep = match gix::ObjectId::from_hex(earlier.as_bytes()) {
                        Ok(earlier_id) if walked.contains(&earlier_id) => true,
                        Ok(earlier_id) => workspace.is_ancestor(earlier_id, head),
                        Err(_) => false,
                    };
                    in_history.insert(earlier.clone(), keep);
                    keep
                }
            };
            if keep {
                continue;
            }
        }
        statement
            .execute(params![
                workspace_id,
                id,
                commit.id.to_string(),
                commit.author,
                commit.date
            ])
            .map_err(sqlite)?;
    }
    Ok(commits.len())
}

/// HEAD left the history an earlier walk saw (a checkout of an older commit
/// or of another branch): what commits outside HEAD's history introduced no
/// longer counts, as a walk of HEAD's whole history would not see them.
fn forget_provenance_outside(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    workspace_id: i64,
    head: gix::ObjectId,
    sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
) -> Result<(), SyncError> {
    let recorded: Vec<String> = tx
        .prepare_cached("SELECT DISTINCT commit_id FROM provenance WHERE workspace_id = ?1")
        .and_then(|mut statement| {
            statement
                .query_map(params![workspace_id], |row| row.get(0))?
                .collect()
        })
        .map_err(sqlite)?;
    let mut forget = tx
        .prepare_cached("DELETE FROM provenance WHERE workspace_id = ?1 AND commit_id = ?2")
        .map_err(sqlite)?;
    for commit in recorded {
        let in_history = gix::ObjectId::from_hex(commit.as_bytes())
            .is_ok_and(|id| workspace.is_ancestor(id, head));
        if !in_history {
            forget
                .execute(params![workspace_id, commit])
                .map_err(sqlite)?;
        }
    }
    Ok(())
}

fn ids_of<'a>(
    workspace: &Workspace,
    blob: gix::ObjectId,
    cache: &'a mut HashMap<gix::ObjectId, HashSet<String>>,
) -> Result<&'a HashSet<String>, SyncError> {
    match cache.entry(blob) {
        std::collections::hash_map::Entry::Occupied(entry) => Ok(entry.into_mut()),
        std::collections::hash_map::Entry::Vacant(entry) => {
            let bytes = workspace.read_blob(blob)?;
            let ids = goldfish_log::record::split_lines(&bytes)
                .filter_map(|(_, line)| serde_json::from_slice::<IdOnly<'_>>(line).ok())
                .map(|record| record.id.into_owned())
                .collect();
            Ok(entry.insert(ids))
        }
    }
}
