//! What a git hook (post-merge, post-checkout, post-rewrite) does: bring the
//! index up to date with what git just changed, without slowing git down.

use std::path::PathBuf;

use super::session::Need;
use super::sync::{Embed, drain_journal, embed_pending, sync_workspace};
use super::{AppError, Session, background};
use crate::adapters::env;
use crate::adapters::git::Workspace;
use crate::adapters::sync::{self as index_sync, SyncReport};

/// Memory files changed by at least this many bytes are synced in a
/// background process (`GOLDFISH_HOOK_BACKGROUND_BYTES`).
const DEFAULT_BACKGROUND_BYTES: u64 = 1 << 20;

/// Texts a hook embeds itself (about a tenth of a second); more go to a
/// background process.
pub const FOREGROUND_EMBEDDINGS: u64 = 16;

/// What the hook did.
#[derive(Debug)]
pub enum AfterGit {
    /// Much changed: a background sync was started (its log file).
    Background {
        pending_bytes: u64,
        log_path: PathBuf,
    },
    /// Another sync holds the workspace's lock; it will pick this up.
    Busy,
    /// The keyword index is synced, and the embeddings too unless more
    /// than [`FOREGROUND_EMBEDDINGS`] were pending: then a background sync
    /// embeds them (how many, its log).
    Synced {
        report: SyncReport,
        embedding: Option<(u64, PathBuf)>,
    },
}

/// After git changed the work tree: drains store's journal (`rewritten`:
/// a rebase runs post-rewrite before it removes its state, it is done with
/// the work tree then), then syncs in the foreground when little changed,
/// else in a detached process.
pub fn after_git(
    session: &mut Session,
    workspace: &Workspace,
    rewritten: bool,
) -> Result<AfterGit, AppError> {
    drain_journal(session, workspace, rewritten)?;
    let home = session.home.clone();
    let threshold = env::hook_background_bytes()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_BACKGROUND_BYTES);
    let pending_bytes = index_sync::pending_bytes(session.index()?, workspace)?;
    if pending_bytes >= threshold {
        let log_path = background::start_sync(&home, workspace)?;
        return Ok(AfterGit::Background {
            pending_bytes,
            log_path,
        });
    }
    // The keyword index now, so the pull's memories are found at once;
    // embedding a handful now, many in the background.
    let Some(report) = sync_workspace(session, workspace, Embed::Keywords)? else {
        return Ok(AfterGit::Busy);
    };
    if session.model(Need::Usable)?.is_none() {
        return Ok(AfterGit::Synced {
            report,
            embedding: None,
        });
    }
    let pending = session.index()?.pending_embeddings()?;
    if pending > FOREGROUND_EMBEDDINGS {
        // An embedder already at work for the home embeds this queue too
        // (the queue is the home's): a second one would only wait for it.
        let log_path = if crate::adapters::index::locks::embedding_running(&home.locks_dir()) {
            home.logs_dir().join("sync.log")
        } else {
            background::start_sync(&home, workspace)?
        };
        return Ok(AfterGit::Synced {
            report,
            embedding: Some((pending, log_path)),
        });
    }
    // A handful: embedded here, from the queue the sync just filled (no
    // second sync).
    if pending > 0 {
        embed_pending(session, Some(FOREGROUND_EMBEDDINGS as usize))?;
    }
    Ok(AfterGit::Synced {
        report,
        embedding: None,
    })
}
