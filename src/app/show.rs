//! Reading memories back: `show` (whole memories by id), `similar` (those
//! near a memory or a text) and `similar --scan` (clusters of
//! near-duplicates).

use std::path::Path;

use anyhow::Context;

use super::forget::{find, no_memory_has, several_memories_match};
use super::recall::scope;
use super::session::{Need, Session};
use super::sync::{Embed, problems, scope_of, sync_for_reading, sync_workspace};
use super::{AppError, Arg};
use crate::adapters::git::Workspace;
use crate::adapters::memdir::MemoryDir;
use crate::domain::recalled::IndexedMemory;

/// `similar`'s default threshold: on the labelled set, it finds 88% of
/// the paraphrases, and everything it finds is one.
pub const SIMILAR: f64 = 0.80;

/// Whole memories of the current workspace by id or unique prefix (what
/// `recall --index` lists), from the index after a sync, in the order
/// asked; a secret is masked as in recall. An id no live memory has, or a
/// prefix several have, is an error naming it.
pub fn show(
    session: &mut Session,
    cwd: &Path,
    ids: &[String],
) -> Result<Vec<IndexedMemory>, AppError> {
    let workspace = Workspace::discover(cwd).map_err(AppError::input)?;
    if let Some(report) = sync_for_reading(session, &workspace, Embed::Keywords)? {
        problems(session, &report.problems);
    }
    let now = session.now()?;
    let index = session.index()?;
    let scope = scope(index, Some(&workspace), "current")?;
    let mut shown = Vec::with_capacity(ids.len());
    for id in ids {
        let id = id.trim();
        if id.is_empty() {
            return Err(AppError::arg(Arg::Id, "an id is empty"));
        }
        let mut found = index.by_id_prefix(&scope, id, 6, now)?;
        // An id that is whole names its memory even when it is also the
        // prefix of a longer one.
        if let Some(exact) = found.iter().position(|m| m.id.eq_ignore_ascii_case(id)) {
            shown.push(found.swap_remove(exact));
            continue;
        }
        match found.len() {
            0 => return Err(no_memory_has(id)),
            1 => shown.extend(found),
            _ => {
                let some: Vec<&str> = found.iter().take(5).map(|m| m.id.as_str()).collect();
                return Err(several_memories_match(id, &some, found.len() > 5));
            }
        }
    }
    Ok(shown)
}

/// What `similar` compares with.
pub enum Target {
    Id(String),
    Text(String),
}

/// Memories of the workspace at `threshold` similarity or more to `target`.
pub fn similar(
    session: &mut Session,
    workspace: &Workspace,
    target: Target,
    threshold: f64,
    limit: usize,
) -> Result<Vec<IndexedMemory>, AppError> {
    session.model(Need::Required("similar"))?;
    sync_for_reading(session, workspace, Embed::All)?;
    let now = session.now()?;
    let (index, model) = session.index_and_model(Need::Required("similar"))?;
    let model = model.expect("required");
    let scope = scope_of(index, workspace)?;
    let model_id = model.id();
    let (vector, own_id) = match target {
        Target::Id(id) => {
            let view = MemoryDir::of(workspace).read()?;
            let Some(memory) = find(&view, &id)? else {
                return Err(AppError::arg(Arg::Id, format!("{id} is forgotten")));
            };
            let vector = index
                .vector_of(
                    &model_id,
                    &crate::adapters::index::writing::content_hash(&memory.content),
                )?
                .ok_or_else(|| {
                    anyhow::anyhow!("{} has no embedding yet: run `goldfish sync`", memory.id)
                })?;
            (vector, Some(memory.id))
        }
        Target::Text(text) => {
            let vector = model
                .embedder()?
                .embed(&[text.as_str()], crate::adapters::embed::TextKind::Document)
                .context("embedding the text")?
                .remove(0);
            (vector, None)
        }
    };
    let mut hits = index.similar(&model_id, &vector, &scope, threshold, limit + 1, now)?;
    session.trace.similarity_searches += 1;
    hits.retain(|hit| Some(&hit.id) != own_id.as_ref());
    hits.truncate(limit);
    Ok(hits)
}

/// Every cluster of near-duplicates of the workspace (`similar --scan`).
pub fn duplicate_clusters(
    session: &mut Session,
    workspace: &Workspace,
    threshold: f64,
    limit: usize,
) -> Result<Vec<Vec<IndexedMemory>>, AppError> {
    session.model(Need::Required("similar"))?;
    sync_workspace(session, workspace, Embed::All)?;
    let model_id = session
        .model(Need::Required("similar"))?
        .expect("required")
        .id();
    let now = session.now()?;
    let index = session.index()?;
    let scope = scope_of(index, workspace)?;
    Ok(index.duplicate_clusters(&model_id, &scope, threshold, limit, now)?)
}
