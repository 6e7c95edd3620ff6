//! `import`: notes of the old markdown format into the log, each file with
//! what became of it ([`crate::domain::import`] plans; this appends and indexes).

use std::path::PathBuf;

use super::session::Need;
use super::sync::{Embed, repo_config, sync_workspace};
use super::{AppError, Arg, Session};
use crate::adapters::git::Workspace;
use crate::adapters::memdir::{LogError, MemoryDir};
use crate::domain::import::{self, FileOutcome, Known, Options};
use crate::domain::memory::{Entry, Memory};

pub struct ImportInput {
    pub dir: PathBuf,
    pub allow_secret: bool,
    /// Plan only: nothing is written.
    pub dry_run: bool,
}

pub struct Imported {
    /// Every markdown file found, in order, with what became of it.
    pub outcomes: Vec<FileOutcome>,
    /// Why the imported memories are not indexed yet (they are in the log;
    /// the next sync catches up).
    pub not_indexed: Option<String>,
}

impl Imported {
    /// Whether any file's memories are in the log now (imported, or
    /// already there from an earlier import).
    pub fn any_in_log(&self) -> bool {
        self.outcomes.iter().any(|outcome| match &outcome.result {
            Ok(_) => true,
            Err(skip) => skip.is_in_log(),
        })
    }
}

/// Plans the notes under `input.dir` against `workspace`'s log and, unless
/// a dry run, appends the new memories oldest first and syncs them into the
/// index (best effort).
pub fn import(
    session: &mut Session,
    workspace: &Workspace,
    input: &ImportInput,
) -> Result<Imported, AppError> {
    let log = MemoryDir::of(workspace);
    if !log.path().is_dir() {
        return Err(LogError::NotInitialized(log.path().to_owned()).into());
    }
    let config = repo_config(session, workspace)?;
    let files = crate::adapters::notes::find_notes(&input.dir).map_err(|err| AppError {
        arg: Some(Arg::Dir),
        ..AppError::input(err)
    })?;
    if files.is_empty() {
        return Err(AppError::arg(
            Arg::Dir,
            format!("no markdown files (*.md) under {}", input.dir.display()),
        ));
    }
    let mut known = Known::new(&every_memory(&log)?);
    let options = Options {
        kinds: config.kinds,
        allow_secret: input.allow_secret,
        author: workspace.author(),
    };
    let outcomes = import::plan(&files, &mut known, &options);

    let mut records: Vec<&Memory> = outcomes
        .iter()
        .filter_map(|outcome| outcome.result.as_ref().ok())
        .flat_map(|imported| &imported.memories)
        .collect();
    // Oldest first, so each day's file reads in order; ties keep file order.
    records.sort_by(|a, b| a.timestamp.cmp(&b.timestamp));
    let mut not_indexed = None;
    if !input.dry_run {
        for memory in &records {
            log.append(&Entry::Memory((*memory).clone()))?;
        }
        // The memories are safely in the log; indexing them is best effort.
        if !records.is_empty()
            && let Err(err) = index(session, workspace)
        {
            not_indexed = Some(format!("{:#}", err.error));
        }
    }
    Ok(Imported {
        outcomes,
        not_indexed,
    })
}

/// Every memory of the log, forgotten ones included: what was imported and
/// then forgotten must not come back.
fn every_memory(log: &MemoryDir) -> Result<Vec<Memory>, AppError> {
    let mut memories = Vec::new();
    for file in log.read_files()? {
        let Ok(bytes) = file.content else { continue };
        for line in goldfish_log::record::parse_log(&bytes) {
            if let Ok(Entry::Memory(memory)) = line.parsed {
                memories.push(memory);
            }
        }
    }
    Ok(memories)
}

fn index(session: &mut Session, workspace: &Workspace) -> Result<(), AppError> {
    session.model(Need::Usable)?;
    sync_workspace(session, workspace, Embed::All)?;
    Ok(())
}
