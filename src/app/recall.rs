//! `recall`: the request, the mode, a sync, the scope, the query's vector,
//! the search, and (with a budget) the digest.

use std::path::Path;

use anyhow::Context;
use jiff::Timestamp;

use super::digest::{
    DigestJob, DigestReport, Digested, Distill, extractive_digest, llm_command, llm_digest,
    token_counter,
};
use super::notice::Notice;
use super::session::{ModelState, Need, Session};
use super::sync::{Embed, READ_EMBEDS, problems, scope_of, sync_for_reading};
use super::{AppError, Arg, model};
use crate::adapters::embed::Embedder;
use crate::adapters::git::Workspace;
use crate::adapters::index::Index;
use crate::adapters::index::search::QueryVector;
use crate::adapters::sync as index_sync;
use crate::domain::config::RepoConfig;
use crate::domain::memory::kinds::Kinds;
use crate::domain::recall::{Mode, Request, Scope};
use crate::domain::recalled::{IndexedMemory, NewerThan, Trust};
use crate::domain::supersede;
use crate::domain::timespec;

/// What recall says when some of the workspace's memories have no vector
/// yet (`None` when all do: the queue is the home's): how much of it is
/// embedded, and whether a background embedder is at it.
fn not_embedded_notice(
    session: &mut Session,
    workspace: &Workspace,
    report: &index_sync::SyncReport,
) -> Result<Option<Notice>, AppError> {
    let index = session.index()?;
    let (pending, total) = match index.workspace_by_root(workspace.root())? {
        Some(row) => index.workspace_pending(row.id)?,
        None => (0, 0),
    };
    if pending == 0 {
        return Ok(None);
    }
    // Rounded down: never 100% while one is left.
    let share = 100 * (total - pending) / total;
    let rest = if report.embedding_in_background {
        "a background `goldfish sync` is embedding the rest (`goldfish status` shows how far)"
    } else {
        "run `goldfish sync` to embed the rest"
    };
    Ok(Some(Notice::note(format!(
        "{share}% of this workspace's memories are embedded ({} of {total}); until the rest are, they are found by keywords only; {rest}",
        total - pending
    ))))
}

/// What to recall.
#[derive(Debug, Clone)]
pub struct RecallInput {
    pub query: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub kinds: Vec<String>,
    pub tags: Vec<String>,
    pub author: Option<String>,
    pub mode: Option<Mode>,
    pub min_score: Option<f64>,
    /// `current`, `all`, or a workspace's name.
    pub workspace: String,
    pub limit: usize,
    pub budget: Option<usize>,
    pub distill: Distill,
    pub no_cache: bool,
    /// Captured memories: with the others, left out, or alone.
    pub captured: crate::domain::recall::Captured,
    /// Quarantined memories too (`--include-untrusted`, MCP `untrusted`),
    /// marked.
    pub include_untrusted: bool,
    /// Memories a later one supersedes too (`--include-superseded`, MCP
    /// `superseded`), marked.
    pub include_superseded: bool,
    /// The closest memories even for a question judged unrelated to the
    /// log (`--include-unrelated`, MCP `unrelated`; see
    /// [`crate::domain::relevance`]).
    pub include_unrelated: bool,
    /// What the viewer narrows to beyond the command line's filters.
    pub narrow: Narrow,
}

/// The viewer's filters that the command line has not: a branch, the
/// quarantined or the stale memories alone, a page after a memory.
#[derive(Debug, Clone, Default)]
pub struct Narrow {
    /// Only memories stored on this branch.
    pub branch: Option<String>,
    /// Only quarantined memories (implies `include_untrusted`).
    pub quarantined_only: bool,
    /// Only stale memories.
    pub stale_only: bool,
    /// Newest first, after this memory: its timestamp and id.
    pub after: Option<(String, String)>,
}

impl RecallInput {
    /// Recall of `query` (the newest memories without one) in this
    /// workspace, at most `limit`, with no filter: trusted, current
    /// memories, captured ones too; a digest, when asked, extractive.
    pub fn plain(query: Option<String>, limit: usize) -> RecallInput {
        RecallInput {
            query,
            since: None,
            until: None,
            kinds: Vec::new(),
            tags: Vec::new(),
            author: None,
            mode: None,
            min_score: None,
            workspace: "current".to_owned(),
            limit,
            budget: None,
            distill: Distill::Extractive,
            no_cache: false,
            captured: crate::domain::recall::Captured::Include,
            include_untrusted: false,
            include_superseded: false,
            include_unrelated: false,
            narrow: Narrow::default(),
        }
    }
}

/// A log of any size marks a weak best match: when no memory is as
/// similar to the question as the prompt hook's floor
/// ([`crate::domain::relevance::CLOSE`]), the results are the nearest
/// memories, not answers (a small log is never refused on its words, see
/// [`crate::domain::relevance`]; this says so instead). On LongMemEval_S
/// haystacks cut to 10–50 memories the floor leaves out every off-topic
/// question and about a quarter of the on-topic ones (docs/BENCHMARKS.md,
/// "The prompt hook"). Nothing without vectors.
fn weak_match(hits: &[IndexedMemory]) -> Option<Notice> {
    let best = hits
        .iter()
        .filter_map(|memory| memory.similarity)
        .max_by(f64::total_cmp)?;
    let close = crate::domain::relevance::CLOSE;
    (best < close).then(|| {
        Notice::note(format!(
            "no memory is close to the question (the closest is {best:.2} similar, under {close:.2}): these are the nearest, and may not bear on it"
        ))
    })
}

/// What recall found.
pub enum Recalled {
    Nothing,
    /// The question is about nothing the log holds: most of its words occur
    /// nowhere in a log large enough for that to count.
    NothingRelevant(crate::domain::relevance::Judgement),
    Memories {
        hits: Vec<IndexedMemory>,
        all_workspaces: bool,
    },
    Digest(Digested),
}

/// Filters, ranks and (with a budget) distils, step by step: the request
/// ([`request`]), the mode ([`mode`]), a sync, the scope ([`scope`]), the
/// query's vector, the search, the digest ([`llm_digest`], else
/// [`extractive_digest`]).
pub fn recall(session: &mut Session, cwd: &Path, input: RecallInput) -> Result<Recalled, AppError> {
    recall_after(session, cwd, input, Before::Sync)
}

/// What [`recall_after`] does before it reads the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// Syncs the workspace (recall's way: it never trusts a stale index).
    Sync,
    /// Nothing: the caller synced, or left a lagging sync to the
    /// background and reads the index as it is (the prompt hook).
    AsIndexed,
}

/// [`recall`], syncing first or not as `before` says.
pub fn recall_after(
    session: &mut Session,
    cwd: &Path,
    input: RecallInput,
    before: Before,
) -> Result<Recalled, AppError> {
    // `--workspace all` or NAME also works outside a repository.
    let workspace = match Workspace::discover(cwd) {
        Ok(workspace) => Some(workspace),
        Err(err) if input.workspace == "current" => return Err(AppError::input(err)),
        Err(_) => None,
    };
    let kinds = kinds_for_reading(session, workspace.as_ref(), &input);
    let request = request(&input, kinds.as_ref(), session.now()?)?;
    let mode = mode_for(session, input.mode)?;
    // Recall never trusts a stale index: the sync is incremental, so when
    // nothing changed it only compares HEAD and file stats. A few new
    // memories are embedded on the way; many are left to `goldfish sync`.
    if let Some(workspace) = &workspace
        && before == Before::Sync
    {
        sync_before_reading(session, workspace, mode)?;
    }
    let (index, _) = session.index_and_model(Need::Optional)?;
    let scope = scope(index, workspace.as_ref(), &input.workspace)?;
    // Before the query is embedded: a question about nothing the log holds
    // costs no model time.
    if let Some(query) = &request.query {
        let judgement = index.relevance(query, &scope)?;
        if !judgement.relevant {
            if !input.include_unrelated {
                return Ok(Recalled::NothingRelevant(judgement));
            }
            session.notice(Notice::note(format!(
                "probably nothing relevant: {}; the closest memories anyway",
                judgement.reason()
            )));
        }
    }
    let (hits, query_vector) = search(session, &request, &scope, mode)?;
    if hits.is_empty() {
        return Ok(Recalled::Nothing);
    }
    if let Some(notice) = weak_match(&hits) {
        session.notice(notice);
    }
    let Some(budget) = input.budget else {
        return Ok(Recalled::Memories {
            hits,
            all_workspaces: matches!(scope, Scope::All),
        });
    };
    let job = DigestJob {
        query: request.query.as_deref(),
        hits: &hits,
        budget,
        query_vector: query_vector.as_ref().map(|(_, vector)| vector.as_slice()),
        no_cache: input.no_cache,
    };
    let (report, tokenizer) = digest(session, &job, input.distill, mode)?;
    Ok(Recalled::Digest(Digested {
        report,
        hits,
        budget,
        tokenizer,
    }))
}

/// The repository's types, for a reader: a config it cannot use (a
/// teammate's, committed) leaves the types unchecked, as sync does;
/// `store` and doctor say why.
fn kinds_for_reading(
    session: &mut Session,
    workspace: Option<&Workspace>,
    input: &RecallInput,
) -> Option<Kinds> {
    let Some(workspace) = workspace else {
        return Some(Kinds::default());
    };
    let read = session.repo_config_read(workspace);
    match RepoConfig::kinds_for_readers(read.as_ref().as_ref().cloned()) {
        Ok(kinds) => Some(kinds),
        Err(why) => {
            if !input.kinds.is_empty() {
                session.notice(Notice::warning(format!("--type not checked: {why}")));
            }
            None
        }
    }
}

/// The mode recall runs in, given the one asked for and the model found;
/// the model's warning or the note that there is none, once.
fn mode_for(session: &mut Session, asked: Option<Mode>) -> Result<Mode, AppError> {
    if matches!(asked, Some(Mode::Semantic | Mode::Hybrid)) {
        // Asked for by name: an unusable model is an error, not a fallback.
        session.model(Need::Usable)?;
    }
    let found = session.model_state();
    let mode = mode(asked, matches!(found, ModelState::Installed(_)))?;
    match found {
        // The warning, once.
        ModelState::Unusable(_) => {
            session.model(Need::Optional)?;
        }
        ModelState::Missing => {
            if let Some(notice) = model::notice_no_model(&session.home) {
                session.notice(notice);
            }
        }
        ModelState::Installed(_) => {}
    }
    Ok(mode)
}

/// The sync before a read, its problems and how much is not embedded yet
/// left as notices.
fn sync_before_reading(
    session: &mut Session,
    workspace: &Workspace,
    mode: Mode,
) -> Result<(), AppError> {
    let embed = match mode {
        Mode::Keyword => Embed::Keywords,
        Mode::Semantic | Mode::Hybrid => READ_EMBEDS,
    };
    if let Some(report) = sync_for_reading(session, workspace, embed)? {
        problems(session, &report.problems);
        if report.pending_embeddings.is_some_and(|n| n > 0)
            && let Some(notice) = not_embedded_notice(session, workspace, &report)?
        {
            session.notice(notice);
        }
    }
    Ok(())
}

/// A vector and the id of the model that made it.
type ModelVector = (String, Vec<f32>);

/// The query's vector under the model (by its id) when the mode uses one,
/// and the search: the hits, newer first when facts collide.
fn search(
    session: &mut Session,
    request: &Request,
    scope: &Scope,
    mode: Mode,
) -> Result<(Vec<IndexedMemory>, Option<ModelVector>), AppError> {
    let mut queries_embedded = 0;
    let (index, model) = session.index_and_model(Need::Optional)?;
    let query_vector = match (&request.query, mode, model) {
        (Some(query), Mode::Semantic | Mode::Hybrid, Some(model)) => {
            let id = model.id();
            let vector = index.query_vector(&id, query, || -> Result<Vec<f32>, AppError> {
                queries_embedded += 1;
                let vector = model
                    .embedder()?
                    .embed(&[query.as_str()], crate::adapters::embed::TextKind::Query)
                    .context("embedding the query")?;
                Ok(vector.into_iter().next().unwrap_or_default())
            })?;
            Some((id, vector))
        }
        _ => None,
    };
    let hits = index.recall(
        request,
        scope,
        mode,
        query_vector
            .as_ref()
            .map(|(model, vector)| QueryVector { model, vector }),
    )?;
    let hits = match &query_vector {
        Some((model, _)) => newer_first(index, model, hits)?,
        None => hits,
    };
    session.trace.queries_embedded += queries_embedded;
    Ok((hits, query_vector))
}

/// The digest within the budget: the LLM command's when one is set and
/// answers, else the extractive one (with why, when the command failed);
/// and the tokenizer that counted.
fn digest(
    session: &mut Session,
    job: &DigestJob<'_>,
    distill: Distill,
    mode: Mode,
) -> Result<(DigestReport, String), AppError> {
    let (mut counter, tokenizer) = token_counter(session)?;
    let command = session.distill_command()?;
    let llm = llm_command(distill, command.as_ref(), session)?;
    let mut fallback_reason = None;
    if let Some(command) = llm {
        match llm_digest(session.index()?, job, command, counter.as_mut())? {
            Ok(report) => return Ok((report, tokenizer)),
            Err(failure) => {
                session.notice(Notice::note(format!(
                    "{failure}; using the extractive digest"
                )));
                fallback_reason = Some(failure.to_string());
            }
        }
    }
    let mut sentence_embedder = match (mode, session.model(Need::Optional)?) {
        (Mode::Keyword, _) | (_, None) => None,
        (_, Some(model)) => Some(model.sentence_embedder()?),
    };
    let mut report = extractive_digest(
        job,
        sentence_embedder
            .as_mut()
            .map(|embedder| embedder as &mut dyn Embedder),
        counter.as_mut(),
    )?;
    report.fallback_reason = fallback_reason;
    Ok((report, tokenizer))
}

/// Newer wins when facts collide ([`supersede::newer_first`]): a result
/// that updates an older one ranked above it (same type, at least 0.80
/// similar, the older restated with a fact changed) is shown just above
/// it, with `newer_than` saying why. Results without a vector under `model` stay where they are.
fn newer_first(
    index: &crate::adapters::index::Index,
    model: &str,
    hits: Vec<IndexedMemory>,
) -> Result<Vec<IndexedMemory>, AppError> {
    let vectors = hits
        .iter()
        .map(|hit| index.vector_of(model, &hit.content_hash))
        .collect::<Result<Vec<_>, _>>()?;
    let spans: Vec<Vec<_>> = hits
        .iter()
        .map(|hit| hit.cites.iter().map(|cite| cite.now()).collect())
        .collect();
    let ranked: Vec<supersede::Ranked> = hits
        .iter()
        .zip(&spans)
        .map(|(hit, spans)| supersede::Ranked {
            memo: supersede::Memo {
                kind: &hit.kind,
                content: &hit.content,
                files: &hit.files,
                spans,
            },
            timestamp: &hit.timestamp,
            trusted: hit.trust == Trust::Trusted,
        })
        .collect();
    let (order, updates) = supersede::newer_first(&ranked, |i, j| {
        let (a, b) = (vectors[i].as_deref()?, vectors[j].as_deref()?);
        Some(f64::from(crate::adapters::embed::cosine(a, b)))
    });
    if updates.is_empty() {
        return Ok(hits);
    }
    let mut hits: Vec<Option<IndexedMemory>> = hits.into_iter().map(Some).collect();
    for update in updates {
        let older = hits[update.older].as_ref().map(|hit| hit.id.clone());
        if let (Some(id), Some(newer)) = (older, hits[update.newer].as_mut()) {
            newer.newer_than = Some(NewerThan {
                id,
                why: update.why,
            });
        }
    }
    Ok(order.into_iter().filter_map(|k| hits[k].take()).collect())
}

/// The checked arguments of a recall as a [`Request`] (no I/O): types
/// resolved with the repository's types (`None`: not checked, only
/// normalised), times read relative to `now`.
pub fn request(
    input: &RecallInput,
    kinds: Option<&Kinds>,
    now: Timestamp,
) -> Result<Request, AppError> {
    let when = |spec: &Option<String>, arg: Arg| -> Result<Option<Timestamp>, AppError> {
        spec.as_deref()
            .map(|spec| timespec::parse(spec, now))
            .transpose()
            .map_err(|err| AppError::arg(arg, format!("{err:#}")))
    };
    let kinds = input
        .kinds
        .iter()
        .map(|kind| match kinds {
            Some(kinds) => kinds.resolve(kind).map(str::to_owned),
            None => Ok(Kinds::normalize(kind)),
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| AppError::arg(Arg::Type, err))?;
    if input.limit == 0 {
        return Err(AppError::arg(Arg::Limit, "must be at least 1"));
    }
    // Before the search: a bad budget is refused even when nothing matches.
    if input.budget == Some(0) {
        return Err(AppError::arg(Arg::Budget, "must be at least 1 token"));
    }
    Ok(Request {
        query: input.query.clone().filter(|q| !q.trim().is_empty()),
        since: when(&input.since, Arg::Since)?,
        until: when(&input.until, Arg::Until)?,
        kinds,
        tags: input.tags.clone(),
        author: input.author.clone(),
        limit: input.limit,
        min_score: input.min_score,
        fusion: Default::default(),
        floor: Some(crate::domain::recall::FLOOR),
        now: Some(now),
        // Recall shows flagged memories, marked (and a secret masked);
        // quarantined ones only when asked for, marked too.
        unflagged_only: false,
        trusted_only: !input.include_untrusted && !input.narrow.quarantined_only,
        hide_superseded: !input.include_superseded,
        // Stale memories stay in recall (they may explain history), ranked
        // lower and marked.
        hide_stale: false,
        captured: input.captured,
        branch: input.narrow.branch.clone(),
        quarantined_only: input.narrow.quarantined_only,
        stale_only: input.narrow.stale_only,
        after: input.narrow.after.clone(),
    })
}

/// The ranking a recall uses: hybrid by default, of the words alone without
/// a model; semantic or hybrid asked for without a model is an error;
/// keywords always work.
pub fn mode(asked: Option<Mode>, has_model: bool) -> Result<Mode, AppError> {
    match (asked, has_model) {
        (Some(Mode::Keyword), _) => Ok(Mode::Keyword),
        (Some(mode), true) => Ok(mode),
        (None, _) => Ok(Mode::Hybrid),
        (Some(mode), false) => Err(AppError::arg(
            Arg::Mode,
            format!(
                "{}: no embedding model is installed; {}",
                if mode == Mode::Semantic {
                    "semantic"
                } else {
                    "hybrid"
                },
                model::INSTALL_HINT
            ),
        )),
    }
}

/// Which workspaces `wanted` (`current`, `all`, a name or a root) means.
pub fn scope(index: &Index, current: Option<&Workspace>, wanted: &str) -> Result<Scope, AppError> {
    match (wanted, current) {
        ("all", _) => Ok(Scope::All),
        ("current", Some(workspace)) => scope_of(index, workspace),
        ("current", None) => Err(AppError::input(anyhow::anyhow!(
            "not inside a repository: the current workspace is unknown"
        ))),
        (name, _) => {
            let rows = index.workspaces()?;
            let Some(row) = rows.iter().find(|row| row.name == name || row.root == name) else {
                let known: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
                return Err(AppError::arg(
                    Arg::Workspace,
                    format!(
                        "no workspace named `{name}`; known: current, all, {}",
                        known.join(", ")
                    ),
                ));
            };
            Ok(Scope::Workspaces(vec![row.id]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::digest::Distill;
    use super::*;
    use crate::app::Kind;

    fn input() -> RecallInput {
        RecallInput {
            distill: Distill::Auto,
            ..RecallInput::plain(Some("cache eviction".to_owned()), 10)
        }
    }

    fn now() -> Timestamp {
        "2026-11-21T09:30:00Z".parse().unwrap()
    }

    fn arg_of(result: Result<Request, AppError>) -> Option<Arg> {
        result.err().and_then(|err| err.arg)
    }

    #[test]
    fn a_recall_input_becomes_a_request() {
        let kinds = Kinds::default();
        let request = request(
            &RecallInput {
                since: Some("3d".to_owned()),
                kinds: vec!["decision".to_owned()],
                ..input()
            },
            Some(&kinds),
            now(),
        )
        .unwrap();
        assert_eq!(request.query.as_deref(), Some("cache eviction"));
        assert_eq!(request.kinds, ["decision"]);
        // Types not checked (a config recall cannot use): only normalised.
        let unchecked = RecallInput {
            kinds: vec!["Post_Mortem".to_owned()],
            ..input()
        };
        assert_eq!(
            super::request(&unchecked, None, now()).unwrap().kinds,
            ["post-mortem"]
        );
        assert_eq!(request.since, Some("2026-11-18T09:30:00Z".parse().unwrap()));
        assert_eq!(request.now, Some(now()));
        assert!(!request.unflagged_only);

        // A blank query lists the newest memories.
        let blank = RecallInput {
            query: Some("  ".to_owned()),
            ..input()
        };
        assert_eq!(request_query(&blank), None);

        // Each bad argument is named, in the order the checks run.
        let bad = |input: RecallInput| arg_of(super::request(&input, Some(&kinds), now()));
        assert_eq!(
            bad(RecallInput {
                kinds: vec!["no-such-type".to_owned()],
                limit: 0,
                ..input()
            }),
            Some(Arg::Type)
        );
        assert_eq!(
            bad(RecallInput {
                limit: 0,
                ..input()
            }),
            Some(Arg::Limit)
        );
        assert_eq!(
            bad(RecallInput {
                budget: Some(0),
                ..input()
            }),
            Some(Arg::Budget)
        );
        assert_eq!(
            bad(RecallInput {
                since: Some("soon".to_owned()),
                ..input()
            }),
            Some(Arg::Since)
        );
        assert_eq!(
            bad(RecallInput {
                until: Some("later".to_owned()),
                ..input()
            }),
            Some(Arg::Until)
        );
    }

    fn request_query(input: &RecallInput) -> Option<String> {
        request(input, Some(&Kinds::default()), now())
            .unwrap()
            .query
    }

    #[test]
    fn keywords_always_work_and_other_modes_need_a_model() {
        assert_eq!(mode(Some(Mode::Keyword), false).unwrap(), Mode::Keyword);
        assert_eq!(mode(None, false).unwrap(), Mode::Hybrid);
        assert_eq!(mode(None, true).unwrap(), Mode::Hybrid);
        assert_eq!(mode(Some(Mode::Semantic), true).unwrap(), Mode::Semantic);
        let err = mode(Some(Mode::Semantic), false).unwrap_err();
        assert_eq!((err.kind, err.arg), (Kind::Input, Some(Arg::Mode)));
        assert!(
            err.error
                .to_string()
                .starts_with("semantic: no embedding model")
        );
    }

    fn index() -> (tempfile::TempDir, Index) {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(&dir.path().join("index.db")).unwrap();
        (dir, index)
    }

    #[test]
    fn the_scope_is_all_a_named_workspace_or_an_error_naming_the_known_ones() {
        let (_dir, index) = index();
        assert_eq!(scope(&index, None, "all").unwrap(), Scope::All);
        let err = scope(&index, None, "elsewhere").unwrap_err();
        assert_eq!(err.arg, Some(Arg::Workspace));
        assert_eq!(
            err.error.to_string(),
            "no workspace named `elsewhere`; known: current, all, "
        );
        assert_eq!(
            scope(&index, None, "current").unwrap_err().kind,
            Kind::Input
        );
    }
}
