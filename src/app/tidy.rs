//! `goldfish tidy`: what the log holds that no longer helps (superseded
//! memories, checkpoints a later one covers, near-duplicates of a newer
//! memory, stale memories), as proposals ([`crate::domain::tidy`] decides), and the
//! forgetting of the proposals a person confirms: tombstones, so it merges
//! like any line and a `git revert` of their commit brings the memories
//! back. Nothing is deleted from history.

use crate::adapters::git::Workspace;
use crate::adapters::memdir::MemoryDir;
use crate::domain::memory::Entry;
use crate::domain::recall::{Mode, Request};
use crate::domain::recalled::{IndexedMemory, Trust};
use crate::domain::tidy::{self, Fact, Why};

use super::session::{Need, Session};
use super::store::DUPLICATE;
use super::sync::{Embed, problems, scope_of, sync_for_reading, sync_workspace};
use super::{AppError, Notice};

/// What `tidy` looks at.
#[derive(Debug, Clone, Copy)]
pub struct TidyOptions {
    /// Checkpoints older than this many days are candidates.
    pub older_than_days: u64,
}

/// A memory tidy proposes to forget, and why.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub memory: IndexedMemory,
    pub why: Why,
}

/// What `tidy` found.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub proposals: Vec<Proposal>,
    /// Live memories looked at.
    pub memories: usize,
    /// Whether near-duplicates were looked for (they need the model).
    pub duplicates_checked: bool,
}

/// The proposals for `workspace`, after a sync (and the embedding of what
/// waits, for the near-duplicates, when a model is installed).
pub fn find(
    session: &mut Session,
    workspace: &Workspace,
    options: TidyOptions,
) -> Result<Found, AppError> {
    let model_id = session.model(Need::Optional)?.map(|model| model.id());
    let has_model = model_id.is_some();
    let embed = if has_model {
        Embed::All
    } else {
        Embed::Keywords
    };
    if let Some(report) = sync_for_reading(session, workspace, embed)? {
        problems(session, &report.problems);
    }
    let now = session.now()?;
    let index = session.index()?;
    let scope = scope_of(index, workspace)?;
    let everything = Request {
        limit: usize::MAX,
        now: Some(now),
        ..Request::default()
    };
    let memories = index.recall(&everything, &scope, Mode::Keyword, None)?;
    let clusters: Vec<Vec<String>> = match &model_id {
        Some(model) => index
            .duplicate_clusters(model, &scope, DUPLICATE, usize::MAX, now)?
            .into_iter()
            .map(|cluster| cluster.into_iter().map(|m| m.id).collect())
            .collect(),
        None => Vec::new(),
    };
    let facts: Vec<Fact> = memories.iter().map(fact_of).collect();
    let cutoff = now
        .checked_sub(jiff::SignedDuration::from_hours(
            24 * i64::try_from(options.older_than_days).unwrap_or(i64::MAX / 48),
        ))
        .map_or(i64::MIN, |t| t.as_millisecond());
    let proposed = tidy::propose(
        &facts,
        cutoff,
        options.older_than_days,
        &clusters,
        DUPLICATE,
    );
    let by_id: std::collections::HashMap<&str, &IndexedMemory> =
        memories.iter().map(|m| (m.id.as_str(), m)).collect();
    let proposals = proposed
        .into_iter()
        .filter_map(|p| {
            by_id.get(p.id.as_str()).map(|memory| Proposal {
                memory: (*memory).clone(),
                why: p.why,
            })
        })
        .collect();
    if model_id.is_none() {
        session.notice(Notice::note(
            "no embedding model: near-duplicates were not looked for (`goldfish model install`)",
        ));
    }
    Ok(Found {
        proposals,
        memories: memories.len(),
        duplicates_checked: model_id.is_some(),
    })
}

/// What tidy's rules see of a memory.
fn fact_of(m: &IndexedMemory) -> Fact {
    Fact {
        id: m.id.clone(),
        // RFC 3339 (what sync indexed); an unreadable one sorts first.
        ts_ms: m
            .timestamp
            .parse::<jiff::Timestamp>()
            .map_or(i64::MIN, |t| t.as_millisecond()),
        kind: m.kind.clone(),
        branch: m.branch.clone(),
        superseded_by: m.superseded_by.clone(),
        counts: m.trust == Trust::Trusted && m.flags.is_empty(),
        // A deletion or revert from outside the trust policy proposes
        // nothing; nor does cited code that changed (the memory may still
        // be true; only one whose every cited span is gone is proposed).
        stale: m
            .stale
            .as_ref()
            .filter(|stale| !stale.outside_policy)
            .filter(|stale| stale.reason != crate::domain::staleness::CODE_CHANGED)
            .map(|stale| tidy::Staleness {
                reason: stale.reason.clone(),
                file: stale.file.clone(),
                branch: stale.branch.clone(),
                commit: stale.commit.clone(),
            }),
    }
}

/// Forgets the memories `ids` names: a tombstone line each, in the files
/// of today, then one sync. Ids already forgotten are skipped.
pub fn forget_all(
    session: &mut Session,
    workspace: &Workspace,
    ids: &[String],
) -> Result<Vec<Entry>, AppError> {
    let dir = MemoryDir::of(workspace);
    let view = dir.read()?;
    let mut written = Vec::new();
    for id in ids {
        if !matches!(view.find(id), crate::domain::memory::view::Lookup::Found(_)) {
            continue;
        }
        let tombstone = super::forget::tombstone(session, workspace, id)?;
        dir.append(&tombstone)?;
        written.push(tombstone);
    }
    if !written.is_empty()
        && let Err(err) = sync_workspace(session, workspace, Embed::Keywords)
    {
        session.notice(Notice::warning(format!(
            "forgotten, but the index still has them until the next sync: {:#}",
            err.error
        )));
    }
    Ok(written)
}
