//! `forget` (a tombstone) and `trust` (a release line): what is appended
//! about a memory already in the log, and the lookup of a live memory by
//! id or unique prefix.

use super::notice::Notice;
use super::session::Session;
use super::sync::{Embed, repo_config, scope_of, sync_for_reading, sync_workspace};
use super::{AppError, Arg};
use crate::adapters::env;
use crate::adapters::git::Workspace;
use crate::adapters::memdir::MemoryDir;
use crate::domain::config::RepoConfig;
use crate::domain::memory::view::Lookup;
use crate::domain::memory::{self, Entry, Memory, Release, Tombstone};
use crate::domain::recalled::Trust;

/// What `forget` did.
pub enum Forgot {
    Done {
        target: String,
        tombstone: Box<Entry>,
    },
    /// The memory was forgotten before, at this time.
    Already { id: String, at: String },
}

/// A tombstone line for the memory `id`, by this clone's author, now.
pub fn tombstone(session: &Session, workspace: &Workspace, id: &str) -> Result<Entry, AppError> {
    let at = session.now()?;
    Ok(Entry::Tombstone(Tombstone {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        forgets: id.to_owned(),
        author: workspace.author(),
        extra: Default::default(),
    }))
}

/// Appends a tombstone for the memory `id` (or a unique prefix) names.
pub fn forget(session: &mut Session, workspace: &Workspace, id: &str) -> Result<Forgot, AppError> {
    let dir = MemoryDir::of(workspace);
    let view = dir.read()?;
    let target = match view.find(id) {
        Lookup::Forgotten { id, at } => return Ok(Forgot::Already { id, at }),
        _ => match find(&view, id)? {
            Some(memory) => memory.id,
            None => unreachable!("a forgotten memory is answered above"),
        },
    };
    let tombstone = tombstone(session, workspace, &target)?;
    dir.append(&tombstone)?;
    if let Err(err) = sync_workspace(session, workspace, Embed::Keywords) {
        session.notice(Notice::warning(format!(
            "forgotten, but the index still has it until the next sync: {:#}",
            err.error
        )));
    }
    Ok(Forgot::Done {
        target,
        tombstone: Box::new(tombstone),
    })
}

/// What `trust` did.
pub enum Released {
    /// A release line was appended for `target`, which was quarantined for
    /// `reasons`.
    Done {
        target: String,
        reasons: Vec<String>,
        release: Box<Entry>,
    },
    /// The memory is not quarantined (`reasons`: why it is trusted):
    /// nothing written.
    NotQuarantined { id: String, reasons: Vec<String> },
}

/// Releases the quarantined memory `id` (or a unique prefix) names: appends
/// a release line (`"type":"trust"`). It counts for this clone at once, and
/// for the team once committed by an author inside the trust policy (a
/// notice says so when the local user is outside it).
pub fn release(
    session: &mut Session,
    workspace: &Workspace,
    id: &str,
) -> Result<Released, AppError> {
    let dir = MemoryDir::of(workspace);
    let view = dir.read()?;
    let target = match find(&view, id)? {
        Some(memory) => memory.id,
        None => {
            return Err(AppError::arg(
                Arg::Id,
                format!("`{id}` names a forgotten memory: nothing to release"),
            ));
        }
    };
    sync_for_reading(session, workspace, Embed::Keywords)?;
    let now = session.now()?;
    let index = session.index()?;
    let scope = scope_of(index, workspace)?;
    let found = index
        .by_id_prefix(&scope, &target, 1, now)?
        .into_iter()
        .next()
        .ok_or_else(|| no_memory_has(id))?;
    if found.trust == Trust::Trusted {
        return Ok(Released::NotQuarantined {
            id: target,
            reasons: found.trust_reasons,
        });
    }
    let at = session.now()?;
    let release = Entry::Release(Release {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        releases: target.clone(),
        author: workspace.author(),
        extra: Default::default(),
    });
    dir.append(&release)?;
    let email = env::git_author_email().or_else(|| workspace.config_string("user.email"));
    if let Ok(RepoConfig {
        trust: Some(policy),
        ..
    }) = repo_config(session, workspace)
        && !email.as_deref().is_some_and(|email| policy.admits(email))
    {
        session.notice(Notice::warning(format!(
            "your email ({}) is outside the trust policy of .goldfish/config: the release counts in this clone until it is committed, then for nobody",
            email.as_deref().unwrap_or("not set")
        )));
    }
    if let Err(err) = sync_workspace(session, workspace, Embed::Keywords) {
        session.notice(Notice::warning(format!(
            "released, but the index still quarantines it until the next sync: {:#}",
            err.error
        )));
    }
    Ok(Released::Done {
        target,
        reasons: found.trust_reasons,
        release: Box::new(release),
    })
}

/// The live memory `id` names; `None` when it is forgotten.
pub(super) fn find(
    view: &crate::domain::memory::view::LogView,
    id: &str,
) -> Result<Option<Memory>, AppError> {
    match view.find(id) {
        Lookup::Found(located) => Ok(Some(located.memory.clone())),
        Lookup::Forgotten { .. } => Ok(None),
        Lookup::Missing => Err(no_memory_has(id)),
        Lookup::Ambiguous(ids) => Err(several_memories_match(id, &ids, false)),
    }
}

/// The error for an id no live memory has.
pub(super) fn no_memory_has(id: &str) -> AppError {
    AppError::arg(
        Arg::Id,
        format!("no memory has the id `{id}` (see `goldfish recall`)"),
    )
}

/// The error for a prefix that `ids` (and more, if `more`) start with.
pub(super) fn several_memories_match(id: &str, ids: &[impl AsRef<str>], more: bool) -> AppError {
    let ids: Vec<&str> = ids.iter().map(AsRef::as_ref).collect();
    AppError::arg(
        Arg::Id,
        format!(
            "`{id}` matches several memories ({}{}); give more of the id",
            ids.join(", "),
            if more { ", …" } else { "" }
        ),
    )
}
