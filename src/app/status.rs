//! `goldfish status`: the index's view of this workspace, and the health of
//! the clone's setup, each problem with its fix. It never syncs, so it shows
//! what the hooks did (it does put lines store's journal holds into their
//! files, as every command does).

use serde::Serialize;

use super::AppError;
use crate::adapters::git::Workspace;
use crate::adapters::index::Index;
use crate::adapters::index::locks::EmbedProgress;
use crate::adapters::memdir::MemoryDir;
use crate::app::init::{self, Check};

#[derive(Debug, Serialize)]
pub struct Status {
    pub workspace: Option<String>,
    pub root: String,
    pub head: Option<String>,
    /// HEAD when the index last synced this workspace.
    pub index_head: Option<String>,
    /// Whether HEAD moved since the last sync (the next recall will sync).
    pub stale: bool,
    pub last_sync: Option<String>,
    /// Live memories of HEAD's commit.
    pub memories_in_git: usize,
    /// Live memories of the work tree that HEAD's commit does not have.
    pub memories_uncommitted: usize,
    pub memories_in_index: u64,
    /// Lines of the log that are not readable records.
    pub bad_lines: usize,
    pub model: Option<String>,
    pub pending_embeddings: Option<u64>,
    /// The home's embedder at work now, how far it is (`None` when none
    /// runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Embedding>,
    /// The warm process that keeps the model loaded for the home's
    /// commands (`goldfish model warm`), when one runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmInfo>,
    pub health: Vec<Check>,
    pub index: String,
    pub workspaces: Vec<WorkspaceSummary>,
}

/// A running embedder's progress, with its rate and estimate.
#[derive(Debug, Serialize)]
pub struct Embedding {
    /// Texts queued when it started.
    pub total: u64,
    /// Texts embedded since.
    pub done: u64,
    /// Texts per second so far.
    pub per_second: Option<f64>,
    /// Seconds left at that rate.
    pub seconds_left: Option<f64>,
}

pub use crate::adapters::embed::warm::Info as WarmInfo;

#[derive(Debug, Serialize)]
pub struct WorkspaceSummary {
    pub name: String,
    pub root: String,
    pub memories: u64,
    pub last_sync: Option<String>,
}

/// The status of `workspace`; `locks_dir` is the home's, where a running
/// embedder writes how far it is; `warm` the running warm process.
pub fn collect(
    workspace: &Workspace,
    index: &Index,
    model: Option<String>,
    locks_dir: &std::path::Path,
    warm: Option<WarmInfo>,
) -> Result<Status, AppError> {
    let embedding = EmbedProgress::read(locks_dir).map(|progress| Embedding {
        total: progress.total,
        done: progress.done,
        per_second: progress.rate(),
        seconds_left: progress.seconds_left(),
    });
    let pending_embeddings = match &model {
        Some(_) => Some(
            index
                .pending_embeddings()
                .map_err(|err| AppError::from(anyhow::Error::new(err)))?,
        ),
        None => None,
    };
    let log = MemoryDir::of(workspace);
    // Like every command: what a store set aside while git was busy goes
    // into its file first (a write to the log, not a sync).
    log.drain_journal(false)?;
    let view = log
        .read()
        .map_err(|err| AppError::from(anyhow::Error::new(err)))?;
    let row = index
        .workspace_by_root(workspace.root())
        .map_err(|err| AppError::from(anyhow::Error::new(err)))?;
    let head_id = workspace.head_commit();
    let head = head_id.map(|id| id.to_string());
    let committed = match head_id {
        Some(commit) => committed_view(workspace, commit)?,
        None => Default::default(),
    };
    let committed_ids: std::collections::HashSet<&str> = committed
        .memories
        .iter()
        .map(|m| m.memory.id.as_str())
        .collect();
    let memories_uncommitted = view
        .memories
        .iter()
        .filter(|m| !committed_ids.contains(m.memory.id.as_str()))
        .count();
    let memories_in_index = match &row {
        Some(row) => index
            .live_count(row.id)
            .map_err(|err| AppError::from(anyhow::Error::new(err)))?,
        None => 0,
    };
    let workspaces = workspace_summaries(index)?;
    Ok(Status {
        workspace: row.as_ref().map(|row| row.name.clone()),
        root: workspace.root().display().to_string(),
        stale: row.as_ref().is_none_or(|row| row.head_commit != head),
        index_head: row.as_ref().and_then(|row| row.head_commit.clone()),
        last_sync: row.as_ref().and_then(|row| row.synced_at.clone()),
        head,
        memories_in_git: committed.memories.len(),
        memories_uncommitted,
        memories_in_index,
        bad_lines: view.problems.len(),
        model,
        pending_embeddings,
        embedding,
        warm,
        health: init::health(workspace),
        index: index.path().display().to_string(),
        workspaces,
    })
}

/// Every workspace the index holds, with its live memories.
fn workspace_summaries(index: &Index) -> Result<Vec<WorkspaceSummary>, AppError> {
    let mut workspaces = Vec::new();
    for other in index
        .workspaces()
        .map_err(|err| AppError::from(anyhow::Error::new(err)))?
    {
        workspaces.push(WorkspaceSummary {
            memories: index
                .live_count(other.id)
                .map_err(|err| AppError::from(anyhow::Error::new(err)))?,
            name: other.name,
            root: other.root,
            last_sync: other.synced_at,
        });
    }
    Ok(workspaces)
}

/// What HEAD's commit holds of the log.
fn committed_view(
    workspace: &Workspace,
    commit: gix::ObjectId,
) -> Result<crate::domain::memory::view::LogView, AppError> {
    let failed = |err: crate::adapters::git::GitError| AppError::from(anyhow::Error::new(err));
    let mut files = Vec::new();
    for (name, blob) in workspace.memory_files_at(commit).map_err(failed)? {
        files.push((name, workspace.read_blob(blob).map_err(failed)?));
    }
    Ok(crate::domain::memory::view::LogView::build(
        files
            .iter()
            .map(|(name, bytes)| (name.as_str(), bytes.as_slice())),
    ))
}

/// The report as text, for a person (the command line, MCP's `status`).
pub fn text(status: &Status) -> String {
    let mut text = String::new();
    let name = status.workspace.as_deref().unwrap_or("(not synced yet)");
    text.push_str(&format!("workspace  {name}  {}\n", status.root));
    text.push_str(&format!(
        "memories   {} in git{}, {} in the index{}\n",
        status.memories_in_git,
        match status.memories_uncommitted {
            0 => String::new(),
            n => format!(" (and {n} not committed yet)"),
        },
        status.memories_in_index,
        if status.bad_lines > 0 {
            format!(
                " ({}: see `goldfish doctor`)",
                super::render::count(
                    status.bad_lines as u64,
                    "unreadable line",
                    "unreadable lines"
                )
            )
        } else {
            String::new()
        }
    ));
    match &status.last_sync {
        Some(at) => text.push_str(&format!(
            "last sync  {at}{}\n",
            if status.stale {
                " (HEAD moved since: the next recall syncs)"
            } else {
                ""
            }
        )),
        None => text.push_str("last sync  never (run `goldfish sync`)\n"),
    }
    text.push_str(&model_line(status));
    if let Some(warm) = &status.warm {
        text.push_str(&format!(
            "warm       process {} keeps {} loaded (ends after {} s without a request)\n",
            warm.pid, warm.model, warm.idle_secs
        ));
    }
    for check in &status.health {
        match (&check.problem, &check.fix) {
            (Some(problem), Some(fix)) => {
                text.push_str(&format!("problem    {problem}\n           fix: {fix}\n"));
            }
            _ => text.push_str(&format!("ok         {}\n", check.check)),
        }
    }
    text.push_str(&format!("index      {}\n", status.index));
    for other in &status.workspaces {
        text.push_str(&format!(
            "           {}: {} ({})\n",
            other.name,
            super::render::memories(other.memories),
            other.root
        ));
    }
    text
}

/// The `model` line: the embedding model and how much is embedded.
fn model_line(status: &Status) -> String {
    match (&status.model, status.pending_embeddings) {
        (Some(model), Some(0)) => format!("model      {model}: every memory embedded\n"),
        (Some(model), Some(pending)) => match &status.embedding {
            Some(embedding) => format!(
                "model      {model}: {} not embedded yet, being embedded now: {}\n",
                super::render::memories(pending),
                progress_words(embedding)
            ),
            None => format!(
                "model      {model}: {} not embedded yet (`goldfish sync` embeds them)\n",
                super::render::memories(pending)
            ),
        },
        _ => format!(
            "model      none: recall matches keywords only; {}\n",
            super::model::INSTALL_HINT
        ),
    }
}

/// "1,200 of 9,000 done, 310 a second, about 25 s left".
fn progress_words(embedding: &Embedding) -> String {
    let mut words = format!("{} of {} done", embedding.done, embedding.total);
    if let (Some(rate), Some(left)) = (embedding.per_second, embedding.seconds_left) {
        let left = if left < 90.0 {
            format!("{:.0} s", left.max(1.0))
        } else {
            format!("{:.0} min", (left / 60.0).ceil())
        };
        words.push_str(&format!(", {rate:.0} a second, about {left} left"));
    }
    words
}
