//! Branches deleted without being merged: a memory stored on one (its
//! `branch` field) is about work that never landed.
//!
//! A deletion changes refs, not commits, so every sync compares the
//! repository's branches ([`Workspace::branch_tips`]) with the last tips it
//! recorded (`branches`, schema 14). A branch that vanished while a memory
//! names it is kept as `gone` with its last tip, and judged against HEAD
//! ([`history::branches::Landed`]); one no memory names is forgotten. A branch is judged again
//! when HEAD moves (a merge may bring it in, a reset take it out), while
//! its tip can still be read; once git has collected the tip (it is in no
//! history left) the last verdict stands.
//!
//! [`super::staleness`] marks the memories of a gone, unmerged branch
//! `branch-deleted`. Only a branch this index saw is known to have been
//! deleted: a memory naming one it never saw is not judged.

use std::collections::BTreeMap;

use rusqlite::{Transaction, params};

use super::SyncError;
use crate::adapters::git::Workspace;
use crate::adapters::history;

/// What a sync saw change in the branches.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// A row was written: a branch new, moved, gone, back, or judged anew.
    pub changed: bool,
    /// The branches whose memories' verdict may have changed: gone, back,
    /// or judged otherwise than before.
    pub due: Vec<String>,
}

/// A recorded branch.
struct Row {
    tip: String,
    local: bool,
    gone: bool,
    merged: Option<bool>,
}

/// Writes a branch's row.
const UPSERT: &str = "INSERT INTO branches (workspace_id, name, tip, local, gone, merged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (workspace_id, name) DO UPDATE SET tip = excluded.tip, local = excluded.local,
               gone = excluded.gone, merged = excluded.merged";

/// The branches as the last sync recorded them, by name.
fn recorded_branches(
    tx: &Transaction<'_>,
    workspace_id: i64,
) -> rusqlite::Result<BTreeMap<String, Row>> {
    tx.prepare_cached("SELECT name, tip, local, gone, merged FROM branches WHERE workspace_id = ?1")
        .and_then(|mut statement| {
            statement
                .query_map(params![workspace_id], |row| {
                    Ok((
                        row.get(0)?,
                        Row {
                            tip: row.get(1)?,
                            local: row.get(2)?,
                            gone: row.get(3)?,
                            merged: row.get(4)?,
                        },
                    ))
                })?
                .collect()
        })
}

/// Records the branches as they are now, against what the last sync
/// recorded, and judges the gone ones a memory names (all of them when
/// `head_moved`, else those that just went).
pub(super) fn record(
    tx: &Transaction<'_>,
    workspace: &Workspace,
    workspace_id: i64,
    head: Option<gix::ObjectId>,
    head_moved: bool,
    sqlite: &dyn Fn(rusqlite::Error) -> SyncError,
) -> Result<Seen, SyncError> {
    let tips = workspace.branch_tips()?;
    let recorded = recorded_branches(tx, workspace_id).map_err(sqlite)?;
    let mut seen = Seen::default();
    let mut upsert = tx.prepare_cached(UPSERT).map_err(sqlite)?;
    for (name, now) in &tips {
        let tip = now.id.to_string();
        match recorded.get(name) {
            Some(row) if row.tip == tip && row.local == now.local && !row.gone => continue,
            Some(row) if row.gone => seen.due.push(name.clone()),
            _ => {}
        }
        upsert
            .execute(params![
                workspace_id,
                name,
                tip,
                now.local,
                false,
                None::<bool>
            ])
            .map_err(sqlite)?;
        seen.changed = true;
    }
    let mut named = tx
        .prepare_cached("SELECT 1 FROM memories WHERE workspace_id = ?1 AND branch = ?2 LIMIT 1")
        .map_err(sqlite)?;
    let mut forget = tx
        .prepare_cached("DELETE FROM branches WHERE workspace_id = ?1 AND name = ?2")
        .map_err(sqlite)?;
    let mut judged = history::branches::Landed::default();
    for (name, row) in recorded
        .iter()
        .filter(|(name, _)| !tips.contains_key(*name))
    {
        let went = !row.gone;
        if !went && !head_moved {
            continue;
        }
        if went && !named.exists(params![workspace_id, name]).map_err(sqlite)? {
            forget
                .execute(params![workspace_id, name])
                .map_err(sqlite)?;
            seen.changed = true;
            continue;
        }
        let merged = match (gix::ObjectId::from_hex(row.tip.as_bytes()), head) {
            (Ok(tip), Some(head)) => judged.landed(workspace, tip, head)?.or(row.merged),
            // No commit yet: nothing is merged.
            (Ok(_), None) => Some(false),
            (Err(_), _) => row.merged,
        };
        if went || merged != row.merged {
            upsert
                .execute(params![
                    workspace_id,
                    name,
                    row.tip,
                    row.local,
                    true,
                    merged
                ])
                .map_err(sqlite)?;
            seen.changed = true;
            seen.due.push(name.clone());
        }
    }
    Ok(seen)
}

/// A gone branch judged unmerged.
#[derive(Debug, Clone)]
pub(super) struct Unmerged {
    /// Its last tip.
    pub tip: String,
    /// Last seen as a local branch: deleted here, by the user. A branch
    /// known only from the remote was deleted there, by anyone who can
    /// push.
    pub local: bool,
}

/// The gone branches judged unmerged, by name.
pub(super) fn unmerged(
    tx: &Transaction<'_>,
    workspace_id: i64,
) -> rusqlite::Result<BTreeMap<String, Unmerged>> {
    tx.prepare_cached(
        "SELECT name, tip, local FROM branches WHERE workspace_id = ?1 AND gone AND merged = 0",
    )?
    .query_map(params![workspace_id], |row| {
        Ok((
            row.get(0)?,
            Unmerged {
                tip: row.get(1)?,
                local: row.get(2)?,
            },
        ))
    })?
    .collect()
}
