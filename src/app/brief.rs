//! The session-start briefing: where work stopped, what was decided, what
//! was fixed on this branch, and what the moment puts first.

use anyhow::Context;
use jiff::Timestamp;

use super::digest::{DigestReport, Digested, token_counter};
use super::session::Session;
use super::sync::{Embed, problems, scope_of, sync_for_reading};
use super::{AppError, Arg};
use crate::adapters::git::Workspace;
use crate::adapters::index::Index;
use crate::domain::digest::Source;
use crate::domain::recall::{Mode, Request, Scope};
use crate::domain::recalled::{IndexedMemory, Trust};

/// The moment an agent is briefed at (Claude Code's SessionStart
/// `source`): what the briefing puts first.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Moment {
    /// A new session (`startup`, `clear`), or a briefing asked for.
    #[default]
    Start,
    /// After a compaction: the checkpoint this session's PreCompact stored
    /// is where work stopped, whatever teammates stored since.
    Compacted { checkpoint: Option<String> },
    /// A resumed session: what the log gained since it was last briefed
    /// that the other sections do not list.
    Resumed { since: Option<Timestamp> },
}

/// The session-start briefing: where work stopped, what was decided, what
/// was fixed on this branch, distilled into `budget` tokens; what the
/// `moment` puts first before them.
pub fn brief(
    session: &mut Session,
    workspace: &Workspace,
    budget: usize,
    moment: &Moment,
) -> Result<Option<Digested>, AppError> {
    if budget == 0 {
        return Err(AppError::arg(Arg::Budget, "must be at least 1 token"));
    }
    if let Some(report) = sync_for_reading(session, workspace, Embed::Keywords)? {
        problems(session, &report.problems);
    }
    let now = session.now()?;
    let index = session.index()?;
    let scope = scope_of(index, workspace)?;
    let branch = workspace.head().branch;
    let sections = brief_sections(index, &scope, branch.as_deref(), now, moment)?;
    if sections.iter().all(|section| section.memories.is_empty()) {
        return Ok(None);
    }
    let (mut counter, tokenizer) = token_counter(session)?;
    let parts: Vec<(String, Vec<Source>)> = sections
        .iter()
        .map(|section| {
            (
                section.title.clone(),
                section.memories.iter().map(Into::into).collect(),
            )
        })
        .collect();
    let digest = crate::domain::digest::sections(&parts, counter.as_mut(), budget)
        .context("distilling the briefing")?;
    let hits: Vec<IndexedMemory> = sections
        .into_iter()
        .flat_map(|section| section.memories)
        .collect();
    let report = DigestReport {
        text: digest.text,
        tokens: digest.tokens,
        tokens_of_sources: digest.tokens_of_sources,
        sentences: digest.sentences,
        distill: "extractive",
        fallback_reason: None,
        cached: false,
    };
    Ok(Some(Digested {
        report,
        hits,
        budget,
        tokenizer,
    }))
}

/// The first `limit` of `memories` (newest first), those people or agents
/// stored (`store`, MCP `store`) before those capture wrote: a captured
/// fragment never fills a section while a written memory of its window
/// waits. Each group keeps its order.
fn people_first(memories: Vec<IndexedMemory>, limit: usize) -> Vec<IndexedMemory> {
    let captured = |memory: &IndexedMemory| {
        memory.source.as_deref().is_some_and(|source| {
            source.starts_with(crate::domain::recall::Captured::SOURCE_PREFIX)
        })
    };
    let (mut written, taken): (Vec<_>, Vec<_>) =
        memories.into_iter().partition(|memory| !captured(memory));
    written.extend(taken);
    written.truncate(limit);
    written
}

/// One part of the briefing.
struct Section {
    title: String,
    memories: Vec<IndexedMemory>,
}

/// How far back the briefing looks for decisions and fixes.
const BRIEF_WINDOW_DAYS: i64 = 14;

/// The newest memories of some types (all: none given), at most so many,
/// since a time: the briefing's one query.
type Newest<'a> = dyn Fn(
        &[&str],
        usize,
        Option<Timestamp>,
    ) -> Result<Vec<IndexedMemory>, crate::adapters::index::IndexError>
    + 'a;

/// Checkpoints looked at for where work stopped.
const CHECKPOINTS_WEIGHED: usize = 10;

/// Where work stopped: a checkpoint and the newest plan (by `newest`),
/// newer first. The checkpoint is the newest of the reader's branch before
/// one of another branch, and a person's hand-off before a summary capture
/// wrote (a teammate's captured session does not push out what someone
/// wrote for the next one). After a compaction, the session's own
/// checkpoint (live, trusted) comes first.
fn where_work_stopped(
    index: &Index,
    scope: &Scope,
    branch: Option<&str>,
    now: Timestamp,
    moment: &Moment,
    newest: &Newest<'_>,
) -> Result<Vec<IndexedMemory>, AppError> {
    let mut checkpoints = newest(&["checkpoint"], CHECKPOINTS_WEIGHED, None)?;
    let captured = |memory: &IndexedMemory| {
        memory.source.as_deref().is_some_and(|source| {
            source.starts_with(crate::domain::recall::Captured::SOURCE_PREFIX)
        })
    };
    // Newest first already; a stable sort keeps that order within a rank.
    checkpoints.sort_by_key(|m| {
        let elsewhere = branch.is_some() && m.branch.is_some() && m.branch.as_deref() != branch;
        (elsewhere, captured(m))
    });
    checkpoints.truncate(1);
    let mut state = checkpoints;
    state.extend(newest(&["plan"], 1, None)?);
    state.sort_by(|a, b| b.timestamp.cmp(&a.timestamp));
    if let Moment::Compacted {
        checkpoint: Some(id),
    } = moment
        && let Some(own) = index
            .by_id_prefix(scope, id, 1, now)?
            .into_iter()
            .find(|m| m.id == *id && m.trust == Trust::Trusted && m.kind == "checkpoint")
    {
        state.retain(|m| m.kind != "checkpoint");
        state.insert(0, own);
    }
    Ok(state)
}

fn brief_sections(
    index: &Index,
    scope: &Scope,
    branch: Option<&str>,
    now: Timestamp,
    moment: &Moment,
) -> Result<Vec<Section>, AppError> {
    // Flagged memories (a secret, a time that is not a time, an unknown
    // type) stay out, and so does a time far ahead (`until`: the index does
    // not store that flag, it depends on the clock): a hand-written line
    // dated 9999 would otherwise open every briefing.
    let until = now
        .checked_add(crate::domain::memory::trust::FUTURE_SLACK)
        .ok();
    let newest = |kinds: &[&str], limit: usize, since: Option<Timestamp>| {
        let request = Request {
            kinds: kinds.iter().map(|k| (*k).to_owned()).collect(),
            limit,
            since,
            until,
            now: Some(now),
            unflagged_only: true,
            trusted_only: true,
            hide_superseded: true,
            hide_stale: true,
            ..Request::default()
        };
        index.recall(&request, scope, Mode::Keyword, None)
    };
    let window = now
        .checked_sub(jiff::SignedDuration::from_hours(24 * BRIEF_WINDOW_DAYS))
        .ok();
    let state = where_work_stopped(index, scope, branch, now, moment, &newest)?;
    let decisions = people_first(newest(&["decision"], 20, window)?, 3);
    let mut fixes = newest(&["bug-fix"], 20, window)?;
    if let Some(branch) = branch {
        fixes.retain(|m| m.branch.as_deref() == Some(branch));
    }
    let fixes = people_first(fixes, 3);
    let mut sections = Vec::new();
    if let Moment::Resumed { since: Some(since) } = moment {
        // What the sections below list (the checkpoint stored since, a
        // new decision) is said there, once.
        let listed = |m: &IndexedMemory| {
            [&state, &decisions, &fixes]
                .iter()
                .any(|section| section.iter().any(|listed| listed.id == m.id))
        };
        let mut new = newest(&[], 20, Some(*since))?;
        new.retain(|m| m.timestamp.parse::<Timestamp>().is_ok_and(|at| at > *since) && !listed(m));
        sections.push(Section {
            title: "New since this session was last briefed".to_owned(),
            memories: people_first(new, 5),
        });
    }
    sections.extend([
        Section {
            title: "Where work stopped".to_owned(),
            memories: state,
        },
        Section {
            title: "Recent decisions".to_owned(),
            memories: decisions,
        },
        Section {
            title: match branch {
                Some(branch) => format!("Recent fixes on {branch}"),
                None => "Recent fixes".to_owned(),
            },
            memories: fixes,
        },
    ]);
    Ok(sections)
}
