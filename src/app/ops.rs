//! The operations behind `store`, `recall`, `forget`, `similar` and `brief`,
//! shared by the command line and the MCP server: inputs in, data out. They
//! never print: notes and warnings are left on the [`Session`] for the front
//! end to show, and errors name the argument at fault as an [`Arg`].

use std::path::{Path, PathBuf};

use anyhow::Context;
use jiff::Timestamp;

use super::notice::Notice;
use super::session::{ModelState, Need, Session};
use super::sync::{
    Embed, READ_EMBED_LIMIT, READ_EMBEDS, embed_pending, lags, problems, repo_config, scope_of,
    sync_for_reading, sync_workspace,
};
use super::{AppError, Arg, Hint, model, render};
use crate::adapters::embed::Embedder;
use crate::adapters::env;
use crate::adapters::git::Workspace;
use crate::adapters::index::Index;
use crate::adapters::index::search::{IndexedMemory, Mode, QueryVector, Scope, Trust};
use crate::adapters::index::sync as index_sync;
use crate::adapters::memdir::{Appended, MemoryDir};
use crate::domain::config::RepoConfig;
use crate::domain::digest::{Source, TokenCounter};
use crate::domain::memory::kinds::Kinds;
use crate::domain::memory::view::Lookup;
use crate::domain::memory::{self, Entry, Memory, Release, Tombstone};
use crate::domain::recall::Request;
use crate::domain::supersede;
use crate::domain::timespec;

/// What to store.
pub struct StoreInput {
    pub content: Vec<u8>,
    pub kind: String,
    pub tags: Vec<String>,
    pub files: Vec<String>,
    pub source: Option<String>,
    pub allow_secret: bool,
    /// Refuse, before writing, a text this similar to a memory the
    /// workspace has (a person at a terminal, an agent): `--force` not given.
    pub refuse_similar: bool,
    /// The agent session it comes from (capture), recorded with it.
    pub session: Option<String>,
    /// The content's vector, when the caller computed it already (capture's
    /// own near-duplicate check): the index takes it as it is.
    pub vector: Option<ContentVector>,
    /// The live memory of this repository (an id or a unique prefix) the
    /// new one replaces (`--supersedes`, MCP `supersedes`).
    pub supersedes: Option<String>,
    /// Whether to look for older memories the new one probably replaces
    /// when `supersedes` names none, and what to do with them.
    pub replaced: FindReplaced,
}

/// Whether and when `store` looks for the older memories a new one
/// probably replaces (`domain::supersede`; never when it declares one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FindReplaced {
    /// Not at all (capture looks itself, before it stores).
    #[default]
    Skip,
    /// After the write, for [`Stored::replaceable`]: a script is never
    /// stopped nor asked.
    Report,
    /// Before the write, refusing the store when some are found (MCP: the
    /// agent decides and calls again with `supersedes`, or `force`).
    Refuse,
    /// Before the write, asking [`store_asking`]'s `ask` about each, best
    /// first; the first it confirms is recorded as `supersedes` (one a
    /// memory: the log's field holds one id).
    Ask,
}

/// An older memory the new one probably replaces, and why.
#[derive(Debug, Clone)]
pub struct Replaceable {
    pub memory: IndexedMemory,
    pub why: supersede::Candidate,
}

/// A text's vector under a model: computed once per store, for the
/// near-duplicate check and for the index.
#[derive(Debug, Clone)]
pub struct ContentVector {
    pub model: String,
    pub vector: Vec<f32>,
}

/// A stored memory.
pub struct Stored {
    pub entry: Entry,
    /// The log file it went to, relative to the repository root.
    pub file: PathBuf,
    /// Why it waits in the journal instead (git was busy), when it does.
    pub journaled: Option<String>,
    /// Memories the workspace already has that say nearly the same.
    pub similar: Vec<IndexedMemory>,
    /// Older memories it probably replaces (with [`FindReplaced`] other
    /// than `Skip`): the one it supersedes when it was asked and confirmed
    /// (see the entry's `supersedes`), and those it does not.
    pub replaceable: Vec<Replaceable>,
    /// Why it is not indexed yet (the next sync catches up).
    pub not_indexed: Option<String>,
}

/// Similarity from which a new memory counts as a near-duplicate: `store`
/// refuses it (at a terminal, over MCP) or warns. No pair of the labelled
/// set in `fixtures/similar/` that states another fact reaches it (the
/// closest is 0.78), and it finds about half of the paraphrases, the
/// closest ones (`tests/it/similarity.rs`).
pub const DUPLICATE: f64 = 0.85;

/// `similar`'s default threshold: on the labelled set, it finds 88% of
/// the paraphrases, and everything it finds is one.
pub const SIMILAR: f64 = 0.80;

/// Appends a memory to the log, then indexes and embeds it.
pub fn store(
    session: &mut Session,
    workspace: &Workspace,
    input: StoreInput,
) -> Result<Stored, AppError> {
    store_asking(session, workspace, input, &mut |_| false)
}

/// [`store`], with `ask` deciding (under [`FindReplaced::Ask`]) whether the
/// new memory replaces each older one found, before the write.
pub fn store_asking(
    session: &mut Session,
    workspace: &Workspace,
    input: StoreInput,
    ask: &mut dyn FnMut(&Replaceable) -> bool,
) -> Result<Stored, AppError> {
    let content = memory::validate_content(&input.content, input.allow_secret)
        .map_err(|err| refusal(Arg::Content, err))?;
    let list = |items: &[String], limit: memory::ListLimit, arg: Arg| {
        let items = memory::split_list(&items.join(","));
        limit
            .check(&items)
            .map(|()| items)
            .map_err(|err| AppError::arg(arg, err))
    };
    let tags = list(&input.tags, memory::TAGS, Arg::Tags)?;
    let files = list(&input.files, memory::FILES, Arg::Files)?;
    if let Some(source) = &input.source
        && source.trim().len() > memory::MAX_SOURCE_BYTES
    {
        return Err(AppError::arg(
            Arg::Source,
            format!(
                "{} bytes, at most {}: where a memory came from is a URL or a name",
                source.trim().len(),
                memory::MAX_SOURCE_BYTES
            ),
        ));
    }
    let config = repo_config(workspace)?;
    let kind = config
        .kinds
        .resolve(&input.kind)
        .map_err(|err| AppError::arg(Arg::Type, err))?
        .to_owned();
    let mut supersedes = match input.supersedes.as_deref() {
        Some(id) => Some(superseded(workspace, id.trim())?),
        None => None,
    };
    let mut vector = input.vector;
    let replaced = if supersedes.is_some() {
        FindReplaced::Skip
    } else {
        input.replaced
    };
    let look_before = matches!(replaced, FindReplaced::Refuse | FindReplaced::Ask);
    let mut similar = Vec::new();
    if (input.refuse_similar || look_before) && vector.is_none() {
        // Best effort: an index or model that fails here never stops a store.
        let computed;
        (similar, computed) = near_duplicates(session, workspace, &content).unwrap_or_default();
        vector = computed;
    }
    let memo = supersede::Memo {
        kind: &kind,
        content: &content,
        files: &files,
    };
    let mut replaceable = match (&vector, look_before) {
        (Some(vector), true) => {
            replaceable_by(session, workspace, memo, vector, None).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    if input.refuse_similar {
        // The memory it replaces says nearly the same: that is the point.
        // So may one it probably replaces, asked about below.
        similar.retain(|m| {
            Some(&m.id) != supersedes.as_ref() && !replaceable.iter().any(|r| r.memory.id == m.id)
        });
        if !similar.is_empty() {
            let listed: Vec<String> = similar
                .iter()
                .map(|m| render::near_duplicate(m, 100))
                .collect();
            return Err(AppError::input(anyhow::anyhow!(
                "not stored: this is {}",
                listed.join("; and ")
            ))
            .with_hint(Hint::Force));
        }
    }
    match replaced {
        FindReplaced::Refuse if !replaceable.is_empty() => {
            let listed: Vec<String> = replaceable
                .iter()
                .map(|r| replaceable_line(r, 100))
                .collect();
            return Err(AppError::input(anyhow::anyhow!(
                "not stored: it may replace {}",
                listed.join("; or ")
            ))
            .with_hint(Hint::Supersede));
        }
        FindReplaced::Ask => {
            supersedes = replaceable
                .iter()
                .find(|r| ask(r))
                .map(|r| r.memory.id.clone());
        }
        _ => {}
    }
    let at = session.now()?;
    let head = workspace.head();
    let entry = Entry::Memory(Memory {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        kind,
        content,
        source: input
            .source
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
        tags,
        author: workspace.author(),
        branch: head.branch,
        commit: head.commit,
        files,
        session: input.session,
        supersedes,
        extra: Default::default(),
    });
    if !input.allow_secret
        && let Entry::Memory(memory) = &entry
        && let Some((field, found)) = memory::secret_in(memory)
    {
        // Content was checked above: the options the caller gave, or what
        // came from git (author, branch).
        let arg = match field.as_str() {
            "content" => Arg::Content,
            "tags" => Arg::Tags,
            "files" => Arg::Files,
            "source" => Arg::Source,
            "author" => Arg::Field("author"),
            "branch" => Arg::Field("branch"),
            "commit" => Arg::Field("commit"),
            _ => Arg::Field("field"),
        };
        let err = memory::ContentError::Secret {
            rule: found.rule,
            excerpt: found.redacted(),
        };
        return Err(refusal(arg, err));
    }
    let appended = MemoryDir::of(workspace).append(&entry)?;
    let relative = |path: &Path| {
        path.strip_prefix(workspace.root())
            .map(Path::to_owned)
            .unwrap_or_else(|_| path.to_owned())
    };
    let file = relative(appended.file());
    let journaled = match &appended {
        Appended::File(_) => None,
        Appended::Journaled {
            journal, operation, ..
        } => Some(format!(
            "git is in the middle of {operation}: the memory waits in {} and goes into {} at the next goldfish command after it",
            journal.display(),
            file.display()
        )),
    };
    // The memory is safely in the log; indexing it is best effort (the next
    // sync catches up), so a broken index or model never loses a store.
    let (similar, not_indexed) = match index_stored(session, workspace, &entry, vector) {
        Ok((mut similar, vector)) => {
            if let Entry::Memory(m) = &entry {
                similar.retain(|s| {
                    Some(&s.id) != m.supersedes.as_ref()
                        && !replaceable.iter().any(|r| r.memory.id == s.id)
                });
                if replaced == FindReplaced::Report
                    && let Some(vector) = vector
                {
                    let memo = supersede::Memo {
                        kind: &m.kind,
                        content: &m.content,
                        files: &m.files,
                    };
                    // Best effort, as the indexing.
                    replaceable = replaceable_by(session, workspace, memo, &vector, Some(&m.id))
                        .unwrap_or_default();
                    similar.retain(|s| !replaceable.iter().any(|r| r.memory.id == s.id));
                }
            }
            (similar, None)
        }
        Err(err) => (Vec::new(), Some(format!("{:#}", err.error))),
    };
    Ok(Stored {
        entry,
        file,
        journaled,
        similar,
        replaceable,
        not_indexed,
    })
}

/// How many older memories `store` names as ones a new memory may replace.
const REPLACEABLE_LIMIT: usize = 3;

/// The older memories of the workspace that a new memory (`memo`, whose
/// vector is `vector`) probably replaces, best first (`domain::supersede`:
/// same type, at least [`supersede::ASK`] similar, a shared file when both
/// name files, a fact that differs). Only memories agents receive unmarked
/// are taken (trusted or released, unflagged, not superseded already): a
/// quarantined one is out of the briefing and recall already, and what is
/// shown here of a memory must be safe to show. `except` is the new
/// memory's own id once it is indexed.
pub fn replaceable_by(
    session: &mut Session,
    workspace: &Workspace,
    memo: supersede::Memo,
    vector: &ContentVector,
    except: Option<&str>,
) -> Result<Vec<Replaceable>, AppError> {
    let now = session.now()?;
    let index = session.index()?;
    let scope = scope_of(index, workspace)?;
    let among = Request {
        kinds: vec![memo.kind.to_owned()],
        unflagged_only: true,
        trusted_only: true,
        hide_superseded: true,
        now: Some(now),
        ..Request::default()
    };
    let near = index.similar_among(
        &vector.model,
        &vector.vector,
        &scope,
        supersede::ASK,
        REPLACEABLE_LIMIT + 2,
        among,
    )?;
    let mut found: Vec<Replaceable> = near
        .into_iter()
        .filter(|m| Some(m.id.as_str()) != except)
        .filter_map(|memory| {
            let older = supersede::Memo {
                kind: &memory.kind,
                content: &memory.content,
                files: &memory.files,
            };
            let cosine = memory.similarity.unwrap_or(memory.score);
            let why = supersede::judge(older, memo, cosine, supersede::ASK)?;
            Some(Replaceable { memory, why })
        })
        .collect();
    found.truncate(REPLACEABLE_LIMIT);
    Ok(found)
}

/// `ID (DATE, 0.83 similar, …, number 20 → 50): "excerpt"`, one older
/// memory a new one may replace.
pub fn replaceable_line(replaceable: &Replaceable, width: usize) -> String {
    let m = &replaceable.memory;
    format!(
        "{} ({}, {}): \"{}\"",
        render::terminal_safe(&m.id),
        m.timestamp.get(..10).unwrap_or(&m.timestamp),
        render::terminal_safe(&replaceable.why.explain()),
        render::excerpt(&m.content, width)
    )
}

/// The full id of the live memory `id` (an id or a unique prefix) names,
/// for `store --supersedes`: an empty, unknown, ambiguous or forgotten id
/// is an error naming it. A memory superseded already may be superseded
/// again (a chain).
fn superseded(workspace: &Workspace, id: &str) -> Result<String, AppError> {
    let shown = render::terminal_safe(id);
    if id.is_empty() {
        return Err(AppError::arg(Arg::Supersedes, "the id is empty"));
    }
    let view = MemoryDir::of(workspace).read()?;
    match view.find(id) {
        Lookup::Found(located) => Ok(located.memory.id.clone()),
        Lookup::Forgotten { id: full, at } => Err(AppError::arg(
            Arg::Supersedes,
            format!(
                "`{shown}` names {full}, forgotten at {at}: a forgotten memory cannot be superseded"
            ),
        )),
        Lookup::Missing => Err(AppError::arg(
            Arg::Supersedes,
            format!("no memory of this repository has the id `{shown}` (see `goldfish recall`)"),
        )),
        Lookup::Ambiguous(ids) => Err(AppError::arg(
            Arg::Supersedes,
            format!(
                "`{shown}` matches several memories ({}); give more of the id",
                ids.join(", ")
            ),
        )),
    }
}

/// Why `store` refused content: a secret comes with the hint the front end
/// words (only a person can pass `--allow-secret`).
fn refusal(arg: Arg, err: memory::ContentError) -> AppError {
    match err {
        memory::ContentError::Secret { rule, excerpt } => AppError::arg(
            arg,
            format!("the memory looks like it contains a secret ({rule}: {excerpt})"),
        )
        .with_hint(Hint::AllowSecret),
        other => AppError::arg(arg, other),
    }
}

/// Memories of the workspace at least [`DUPLICATE`] similar to `content`,
/// before it is written, and the content's vector (none without a model).
/// The index is synced first only when it lags the workspace (the hooks
/// keep it current): a store syncs once, after its append.
pub fn near_duplicates(
    session: &mut Session,
    workspace: &Workspace,
    content: &str,
) -> Result<(Vec<IndexedMemory>, Option<ContentVector>), AppError> {
    if session.model(Need::Optional)?.is_none() {
        return Ok((Vec::new(), None));
    }
    if lags(session, workspace)? {
        sync_workspace(session, workspace, READ_EMBEDS)?;
    } else if session.index()?.pending_embeddings()? > 0 {
        // Current, but memories a hook left to a background embedder would
        // escape the comparison: as many as a read embeds, from the queue.
        embed_pending(session, Some(READ_EMBED_LIMIT))?;
    }
    let now = session.now()?;
    let Some(vector) = content_vector(session, content)? else {
        return Ok((Vec::new(), None));
    };
    let index = session.index()?;
    let scope = scope_of(index, workspace)?;
    let similar = index.similar(&vector.model, &vector.vector, &scope, DUPLICATE, 3, now)?;
    Ok((similar, Some(vector)))
}

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

/// `content` embedded as a memory text (`None` without a model).
fn content_vector(session: &mut Session, content: &str) -> Result<Option<ContentVector>, AppError> {
    let Some(model) = session.model(Need::Optional)? else {
        return Ok(None);
    };
    let vector = model
        .embedder()?
        .embed(&[content], crate::adapters::embed::TextKind::Document)
        .context("embedding the memory")?
        .remove(0);
    let model = model.id();
    session.trace.texts_embedded += 1;
    Ok(Some(ContentVector { model, vector }))
}

/// Indexes (and embeds, unless `vector` is its vector already) what
/// `store` appended, with one sync; returns the memories it nearly repeats
/// and its vector (none without a model).
fn index_stored(
    session: &mut Session,
    workspace: &Workspace,
    entry: &Entry,
    vector: Option<ContentVector>,
) -> Result<(Vec<IndexedMemory>, Option<ContentVector>), AppError> {
    let Entry::Memory(memory) = entry else {
        return Ok((Vec::new(), None));
    };
    let hash = index_sync::content_hash(&memory.content);
    if let Some(ContentVector { model, vector }) = &vector
        && session.model_state().id() == Some(model.as_str())
    {
        // In before the sync queues the text: its embedding step finds it
        // done.
        let index = session.index()?;
        index.use_model(model)?;
        index.insert_embeddings(model, [(hash.as_str(), vector.as_slice())])?;
    }
    sync_workspace(session, workspace, READ_EMBEDS)?;
    let ModelState::Installed(model_id) = session.model_state() else {
        return Ok((Vec::new(), None));
    };
    let now = session.now()?;
    let index = session.index()?;
    let Some(vector) = index.vector_of(&model_id, &hash)? else {
        return Ok((Vec::new(), None));
    };
    let scope = scope_of(index, workspace)?;
    let mut similar = index.similar(&model_id, &vector, &scope, DUPLICATE, 4, now)?;
    similar.retain(|m| m.id != memory.id);
    similar.truncate(3);
    Ok((
        similar,
        Some(ContentVector {
            model: model_id,
            vector,
        }),
    ))
}

/// How `--budget` distils.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distill {
    /// The configured LLM command (an error without one).
    Llm,
    /// The extractive digest.
    Extractive,
    /// The LLM when a command is configured, else extractive.
    Auto,
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

/// A digest and what it was made from.
pub struct Digested {
    pub report: DigestReport,
    pub hits: Vec<IndexedMemory>,
    pub budget: usize,
    /// The tokenizer the budget was counted with.
    pub tokenizer: String,
}

/// A digest as recall reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct DigestReport {
    pub text: String,
    pub tokens: usize,
    pub tokens_of_sources: usize,
    /// Extractive digests: each sentence with its memory.
    pub sentences: Vec<crate::domain::digest::Picked>,
    /// `llm` or `extractive`.
    pub distill: &'static str,
    /// Why the LLM's answer was not used, when it was asked.
    pub fallback_reason: Option<String>,
    /// Whether the LLM digest came from the cache.
    pub cached: bool,
}

/// Filters, ranks and (with a budget) distils, step by step: the request
/// ([`request`]), the mode ([`mode`]), a sync, the scope ([`scope`]), the
/// query's vector, the search, the digest ([`llm_digest`], else
/// [`extractive_digest`]).
pub fn recall(session: &mut Session, cwd: &Path, input: RecallInput) -> Result<Recalled, AppError> {
    // `--workspace all` or NAME also works outside a repository.
    let workspace = match Workspace::discover(cwd) {
        Ok(workspace) => Some(workspace),
        Err(err) if input.workspace == "current" => return Err(AppError::input(err)),
        Err(_) => None,
    };
    // A reader: a config it cannot use (a teammate's, committed) leaves
    // the types unchecked, as sync does; `store` and doctor say why.
    let kinds = match &workspace {
        Some(workspace) => {
            match RepoConfig::kinds_for_readers(crate::adapters::memdir::read_repo_config(
                workspace,
            )) {
                Ok(kinds) => Some(kinds),
                Err(why) => {
                    if !input.kinds.is_empty() {
                        session.notice(Notice::warning(format!("--type not checked: {why}")));
                    }
                    None
                }
            }
        }
        None => Some(Kinds::default()),
    };
    let request = request(&input, kinds.as_ref(), session.now()?)?;
    if matches!(input.mode, Some(Mode::Semantic | Mode::Hybrid)) {
        // Asked for by name: an unusable model is an error, not a fallback.
        session.model(Need::Usable)?;
    }
    let found = session.model_state();
    let mode = mode(input.mode, matches!(found, ModelState::Installed(_)))?;
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
    // Recall never trusts a stale index: the sync is incremental, so when
    // nothing changed it only compares HEAD and file stats. A few new
    // memories are embedded on the way; many are left to `goldfish sync`.
    if let Some(workspace) = &workspace {
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
    }
    let mut queries_embedded = 0;
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
        &request,
        &scope,
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
    if hits.is_empty() {
        return Ok(Recalled::Nothing);
    }
    let Some(budget) = input.budget else {
        return Ok(Recalled::Memories {
            hits,
            all_workspaces: matches!(scope, Scope::All),
        });
    };
    let (mut counter, tokenizer) = token_counter(session)?;
    let command = session.distill_command()?;
    let llm = llm_command(input.distill, command.as_ref(), session)?;
    let job = DigestJob {
        query: request.query.as_deref(),
        hits: &hits,
        budget,
        query_vector: query_vector.as_ref().map(|(_, vector)| vector.as_slice()),
        no_cache: input.no_cache,
    };
    let mut fallback_reason = None;
    if let Some(command) = llm {
        match llm_digest(session.index()?, &job, command, counter.as_mut())? {
            Ok(report) => {
                return Ok(Recalled::Digest(Digested {
                    report,
                    hits,
                    budget,
                    tokenizer,
                }));
            }
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
        &job,
        sentence_embedder
            .as_mut()
            .map(|embedder| embedder as &mut dyn Embedder),
        counter.as_mut(),
    )?;
    report.fallback_reason = fallback_reason;
    Ok(Recalled::Digest(Digested {
        report,
        hits,
        budget,
        tokenizer,
    }))
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
    let ranked: Vec<supersede::Ranked> = hits
        .iter()
        .map(|hit| supersede::Ranked {
            memo: supersede::Memo {
                kind: &hit.kind,
                content: &hit.content,
                files: &hit.files,
            },
            timestamp: &hit.timestamp,
            trusted: hit.trust == crate::adapters::index::search::Trust::Trusted,
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
            newer.newer_than = Some(crate::adapters::index::search::NewerThan {
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
        trusted_only: !input.include_untrusted,
        hide_superseded: !input.include_superseded,
        // Stale memories stay in recall (they may explain history), ranked
        // lower and marked.
        hide_stale: false,
        captured: input.captured,
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

/// The LLM command to distil with, if `distill` wants one and it is set.
fn llm_command<'c>(
    distill: Distill,
    command: Option<&'c (String, std::time::Duration)>,
    session: &Session,
) -> Result<Option<&'c (String, std::time::Duration)>, AppError> {
    match (distill, command) {
        (Distill::Extractive, _) | (Distill::Auto, None) => Ok(None),
        (Distill::Llm | Distill::Auto, Some(command)) => Ok(Some(command)),
        (Distill::Llm, None) => Err(AppError::arg(
            Arg::Distill,
            format!(
                "llm: no distill command is configured; set {} (e.g. `claude -p`) or `[distill] command` in {}",
                env::GOLDFISH_DISTILL_COMMAND,
                session.home.config_path().display()
            ),
        )),
    }
}

/// What a digest is made of.
pub struct DigestJob<'a> {
    pub query: Option<&'a str>,
    pub hits: &'a [IndexedMemory],
    pub budget: usize,
    pub query_vector: Option<&'a [f32]>,
    /// Neither read nor fill the cache of LLM digests.
    pub no_cache: bool,
}

impl DigestJob<'_> {
    fn sources(&self) -> Vec<Source> {
        self.hits.iter().map(Into::into).collect()
    }
}

/// The LLM's digest: from the cache (keyed by the question, the memories'
/// contents, the command and the budget), else from the command, cached when
/// it fits the budget; why not, when it fails.
pub fn llm_digest(
    index: &mut Index,
    job: &DigestJob,
    (command, timeout): &(String, std::time::Duration),
    counter: &mut dyn TokenCounter,
) -> Result<Result<DigestReport, crate::adapters::llm::Failure>, AppError> {
    let sources = job.sources();
    let tokens_of_sources = crate::domain::digest::source_tokens(&sources, counter);
    let hashes: Vec<String> = job.hits.iter().map(|m| m.content_hash.clone()).collect();
    let key = crate::adapters::llm::cache_key(job.query, &hashes, command, job.budget);
    let cached = if job.no_cache {
        None
    } else {
        index.cached_digest(&key)?
    };
    let answer = match cached {
        Some((text, tokens)) => Ok((text, tokens, true)),
        None => {
            let prompt = crate::adapters::llm::prompt(job.query, &sources, job.budget);
            crate::adapters::llm::run(command, &prompt, *timeout).and_then(|text| {
                let tokens = counter.count(&text);
                if tokens > job.budget {
                    Err(crate::adapters::llm::Failure::OverBudget {
                        tokens,
                        budget: job.budget,
                    })
                } else {
                    Ok((text, tokens, false))
                }
            })
        }
    };
    let (text, tokens, cached) = match answer {
        Ok(answer) => answer,
        Err(failure) => return Ok(Err(failure)),
    };
    if !cached && !job.no_cache {
        index.cache_digest(&key, &text, tokens)?;
    }
    Ok(Ok(DigestReport {
        text: format!("{text}\n"),
        tokens,
        tokens_of_sources,
        sentences: Vec::new(),
        distill: "llm",
        fallback_reason: None,
        cached,
    }))
}

/// The extractive digest (sentences of the memories, never invented text).
pub fn extractive_digest(
    job: &DigestJob,
    sentence_embedder: Option<&mut dyn Embedder>,
    counter: &mut dyn TokenCounter,
) -> Result<DigestReport, AppError> {
    let sources = job.sources();
    let tokens_of_sources = crate::domain::digest::source_tokens(&sources, counter);
    let words = job
        .query
        .map(crate::adapters::index::search::content_words)
        .unwrap_or_default();
    let digest = crate::domain::digest::distill(
        &sources,
        &words,
        job.query_vector,
        sentence_embedder,
        counter,
        job.budget,
    )
    .context("distilling the digest")?;
    Ok(DigestReport {
        text: digest.text,
        tokens: digest.tokens,
        tokens_of_sources,
        sentences: digest.sentences,
        distill: "extractive",
        fallback_reason: None,
        cached: false,
    })
}

/// The model's tokenizer (cached on the model), or an estimate without one.
pub fn token_counter(session: &mut Session) -> Result<(Box<dyn TokenCounter>, String), AppError> {
    Ok(match session.model(Need::Optional)? {
        Some(model) => (Box::new(model.tokenizer()?), model.id()),
        None => (
            Box::new(crate::domain::digest::CharEstimate),
            "estimate (4 characters a token)".to_owned(),
        ),
    })
}

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
    let email = env::var(env::GIT_AUTHOR_EMAIL).or_else(|| workspace.config_string("user.email"));
    if let Ok(RepoConfig {
        trust: Some(policy),
        ..
    }) = repo_config(workspace)
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
fn find(view: &crate::domain::memory::view::LogView, id: &str) -> Result<Option<Memory>, AppError> {
    match view.find(id) {
        Lookup::Found(located) => Ok(Some(located.memory.clone())),
        Lookup::Forgotten { .. } => Ok(None),
        Lookup::Missing => Err(no_memory_has(id)),
        Lookup::Ambiguous(ids) => Err(several_memories_match(id, &ids, false)),
    }
}

/// The error for an id no live memory has.
fn no_memory_has(id: &str) -> AppError {
    AppError::arg(
        Arg::Id,
        format!("no memory has the id `{id}` (see `goldfish recall`)"),
    )
}

/// The error for a prefix that `ids` (and more, if `more`) start with.
fn several_memories_match(id: &str, ids: &[impl AsRef<str>], more: bool) -> AppError {
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
                .vector_of(&model_id, &index_sync::content_hash(&memory.content))?
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
    /// A resumed session: what the log gained since it was last briefed.
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
    // Where work stopped: the newest checkpoint and the newest plan, newer
    // first.
    let mut state = newest(&["checkpoint"], 1, None)?;
    state.extend(newest(&["plan"], 1, None)?);
    state.sort_by(|a, b| b.timestamp.cmp(&a.timestamp));
    // After a compaction, the session's own checkpoint (live, trusted) is
    // where work stopped.
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
    let mut sections = Vec::new();
    if let Moment::Resumed { since: Some(since) } = moment {
        let mut new = newest(&[], 20, Some(*since))?;
        new.retain(|m| m.timestamp.parse::<Timestamp>().is_ok_and(|at| at > *since));
        sections.push(Section {
            title: "New since this session was last briefed".to_owned(),
            memories: people_first(new, 5),
        });
    }
    let decisions = people_first(newest(&["decision"], 20, window)?, 3);
    let mut fixes = newest(&["bug-fix"], 20, window)?;
    if let Some(branch) = branch {
        fixes.retain(|m| m.branch.as_deref() == Some(branch));
    }
    let fixes = people_first(fixes, 3);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Kind;

    fn input() -> RecallInput {
        RecallInput {
            query: Some("cache eviction".to_owned()),
            since: None,
            until: None,
            kinds: Vec::new(),
            tags: Vec::new(),
            author: None,
            mode: None,
            min_score: None,
            workspace: "current".to_owned(),
            limit: 10,
            budget: None,
            distill: Distill::Auto,
            no_cache: false,
            captured: crate::domain::recall::Captured::Include,
            include_untrusted: false,
            include_superseded: false,
            include_unrelated: false,
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

    fn memory(id: &str, content: &str) -> IndexedMemory {
        IndexedMemory::sample(id, content)
    }

    fn job<'a>(hits: &'a [IndexedMemory], no_cache: bool) -> DigestJob<'a> {
        DigestJob {
            query: Some("cache eviction"),
            hits,
            budget: 40,
            query_vector: None,
            no_cache,
        }
    }

    fn command(script: &str) -> (String, std::time::Duration) {
        (script.to_owned(), std::time::Duration::from_secs(10))
    }

    #[test]
    fn the_llm_digest_is_cached_and_its_failures_say_why() {
        let (_dir, mut index) = index();
        let hits = [
            memory("A", "The cache evicts with LRU. Entries live an hour."),
            memory("B", "Sessions are stored in Redis."),
        ];
        let mut counter = crate::domain::digest::CharEstimate;
        let llm = command("cat >/dev/null; echo 'The cache uses LRU [A].'");
        let first = llm_digest(&mut index, &job(&hits, false), &llm, &mut counter)
            .unwrap()
            .unwrap();
        assert_eq!(
            (first.text.as_str(), first.distill, first.cached),
            ("The cache uses LRU [A].\n", "llm", false)
        );
        let again = llm_digest(&mut index, &job(&hits, false), &llm, &mut counter)
            .unwrap()
            .unwrap();
        assert!(again.cached, "the second answer comes from the cache");
        let uncached = llm_digest(&mut index, &job(&hits, true), &llm, &mut counter)
            .unwrap()
            .unwrap();
        assert!(!uncached.cached);

        let failing = command("cat >/dev/null; exit 4");
        let failure = llm_digest(&mut index, &job(&hits, false), &failing, &mut counter)
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(failure, crate::adapters::llm::Failure::Exit(_)),
            "{failure}"
        );
        let long = command("cat >/dev/null; printf '%0400d' 0");
        let failure = llm_digest(&mut index, &job(&hits, false), &long, &mut counter)
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(
                failure,
                crate::adapters::llm::Failure::OverBudget { budget: 40, .. }
            ),
            "{failure}"
        );
    }

    #[test]
    fn the_extractive_digest_keeps_sentences_of_the_memories() {
        let hits = [
            memory("A", "The cache evicts with LRU. Entries live an hour."),
            memory("B", "Sessions are stored in Redis."),
        ];
        let report = extractive_digest(
            &job(&hits, false),
            None,
            &mut crate::domain::digest::CharEstimate,
        )
        .unwrap();
        assert_eq!(report.distill, "extractive");
        assert!(
            report.text.contains("The cache evicts with LRU."),
            "{}",
            report.text
        );
        assert!(report.tokens <= 40);
        assert!(report.tokens_of_sources > 0);
    }
}
