//! The operations behind `store`, `recall`, `forget`, `similar` and `brief`,
//! shared by the command line and the MCP server: inputs in, data out.
//! Rendering is the caller's business; notices go to stderr (which the MCP
//! server keeps for logs, since stdout is its protocol).

use std::path::{Path, PathBuf};

use anyhow::Context;
use jiff::Timestamp;

use super::commands::{
    Embedding, distill_command, index_error, log_error, now, open_index, repo_config, scope_of,
    sync_workspace,
};
use super::model::{self, Model};
use super::output::{self, DigestReport};
use super::{CliError, DistillMode};
use crate::config::RepoConfig;
use crate::digest::{Source, TokenCounter};
use crate::embed::Embedder;
use crate::git::Workspace;
use crate::home::Home;
use crate::index::Index;
use crate::index::search::{IndexedMemory, Mode, QueryVector, Scope};
use crate::index::sync as index_sync;
use crate::log::{Appended, MemoryDir};
use crate::memory::view::Lookup;
use crate::memory::{self, Entry, Memory, Tombstone};
use crate::recall::Request;
use crate::{env, timespec};

/// Who is asking: argument names in error messages follow the front end
/// (`--type` on the command line, `type` in an MCP tool call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Front {
    Cli,
    Mcp,
}

/// What one process keeps between operations: the home and the model,
/// loaded once (the MCP server runs many operations on one `Ctx`).
pub(crate) struct Ctx {
    pub home: Home,
    pub model: Option<Model>,
    pub front: Front,
}

impl Ctx {
    pub fn open(front: Front) -> Result<Ctx, CliError> {
        let home = super::commands::home()?;
        let model = Model::find(&home)?;
        Ok(Ctx { home, model, front })
    }

    /// The name of a command-line argument as this front end spells it.
    pub fn arg(&self, cli: &str) -> String {
        match self.front {
            Front::Cli => cli.to_owned(),
            Front::Mcp => match cli.strip_prefix("--") {
                Some(flag) => flag.replace('-', "_"),
                None => cli.to_lowercase(),
            },
        }
    }

    fn usage(&self, arg: &str, err: impl std::fmt::Display) -> CliError {
        CliError::usage(anyhow::anyhow!("{}: {err}", self.arg(arg)))
    }
}

/// What to store.
pub(crate) struct StoreInput {
    pub content: Vec<u8>,
    pub kind: String,
    pub tags: Vec<String>,
    pub files: Vec<String>,
    pub source: Option<String>,
    pub allow_secret: bool,
    /// Refuse, before writing, a text this similar to a memory the
    /// workspace has (a person at a terminal, an agent): `--force` not given.
    pub refuse_similar: bool,
}

/// A stored memory.
pub(crate) struct Stored {
    pub entry: Entry,
    /// The log file it went to, relative to the repository root.
    pub file: PathBuf,
    /// Why it waits in the journal instead (git was busy), when it does.
    pub journaled: Option<String>,
    /// Memories the workspace already has that say nearly the same.
    pub similar: Vec<IndexedMemory>,
    /// Why it is not indexed yet (the next sync catches up).
    pub not_indexed: Option<String>,
}

/// Similarity from which a new memory counts as a near-duplicate: `store`
/// refuses it (at a terminal, over MCP) or warns. No pair of the labelled
/// set in `fixtures/similar/` that states another fact reaches it (the
/// closest is 0.78), and it finds about half of the paraphrases, the
/// closest ones (`tests/it/similarity.rs`).
pub(crate) const DUPLICATE: f64 = 0.85;

/// `similar`'s default threshold: on the labelled set, it finds 88% of
/// the paraphrases, and everything it finds is one.
pub(crate) const SIMILAR: f64 = 0.80;

/// Appends a memory to the log, then indexes and embeds it.
pub(crate) fn store(
    ctx: &mut Ctx,
    workspace: &Workspace,
    input: StoreInput,
) -> Result<Stored, CliError> {
    let content = memory::validate_content(&input.content, input.allow_secret)
        .map_err(|err| ctx.usage("CONTENT", refusal(ctx.front, err)))?;
    let config = repo_config(workspace)?;
    let kind = config
        .kinds
        .resolve(&input.kind)
        .map_err(|err| ctx.usage("--type", err))?
        .to_owned();
    if input.refuse_similar {
        // Best effort: an index or model that fails here never stops a store.
        let similar = near_duplicates(ctx, workspace, &content).unwrap_or_default();
        if !similar.is_empty() {
            let listed: Vec<String> = similar
                .iter()
                .map(|m| super::commands::near_duplicate(m, 100))
                .collect();
            let how = match ctx.front {
                Front::Cli => "pass --force to store it anyway".to_owned(),
                Front::Mcp => {
                    "if it really says something new, call store again with `force: true`"
                        .to_owned()
                }
            };
            return Err(CliError::usage(anyhow::anyhow!(
                "not stored: this is {}; {how}",
                listed.join("; and ")
            )));
        }
    }
    let at = now()?;
    let head = workspace.head();
    let list = |items: &[String]| -> Vec<String> { memory::split_list(&items.join(",")) };
    let entry = Entry::Memory(Memory {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        kind,
        content,
        source: input
            .source
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
        tags: list(&input.tags),
        author: workspace.author(),
        branch: head.branch,
        commit: head.commit,
        files: list(&input.files),
        extra: Default::default(),
    });
    if !input.allow_secret
        && let Entry::Memory(memory) = &entry
        && let Some((field, found)) = memory::secret_in(memory)
    {
        // Content was checked above: the options the caller gave, or what
        // came from git (author, branch).
        let arg = match field.as_str() {
            "content" => "CONTENT",
            "tags" => "--tags",
            "files" => "--files",
            "source" => "--source",
            other => other,
        };
        let err = memory::ContentError::Secret {
            rule: found.rule,
            excerpt: found.redacted(),
        };
        return Err(ctx.usage(arg, refusal(ctx.front, err)));
    }
    let appended = MemoryDir::of(workspace).append(&entry).map_err(log_error)?;
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
    let (similar, not_indexed) = match index_stored(ctx, workspace, &entry) {
        Ok(similar) => (similar, None),
        Err(err) => (Vec::new(), Some(format!("{:#}", err.error))),
    };
    Ok(Stored {
        entry,
        file,
        journaled,
        similar,
        not_indexed,
    })
}

/// Why `store` refused content, as the front end should say it.
fn refusal(front: Front, err: memory::ContentError) -> String {
    let message = err.to_string();
    match front {
        Front::Cli => message,
        // Tool calls cannot pass --allow-secret: only a person can.
        Front::Mcp => message.replace(
            "remove it, or pass --allow-secret if it is not one",
            "remove it (if it is not one, a person can store it with `goldfish store --allow-secret`)",
        ),
    }
}

/// Memories of the workspace at least [`DUPLICATE`] similar to `content`,
/// before it is written (none without a model).
fn near_duplicates(
    ctx: &mut Ctx,
    workspace: &Workspace,
    content: &str,
) -> Result<Vec<IndexedMemory>, CliError> {
    let Some(model) = ctx.model.as_mut() else {
        return Ok(Vec::new());
    };
    sync_workspace(&ctx.home, workspace, Embedding::UpTo(model, 64))?;
    let index = open_index(&ctx.home)?;
    let scope = scope_of(&index, workspace)?;
    let vector = model
        .embedder()?
        .embed(&[content], crate::embed::TextKind::Document)
        .context("embedding the memory")?
        .remove(0);
    index
        .similar(&model.id(), &vector, &scope, DUPLICATE, 3)
        .map_err(index_error)
}

/// Indexes (and embeds) what `store` appended; returns the memories it
/// nearly repeats.
fn index_stored(
    ctx: &mut Ctx,
    workspace: &Workspace,
    entry: &Entry,
) -> Result<Vec<IndexedMemory>, CliError> {
    let embedding = match ctx.model.as_mut() {
        Some(model) => Embedding::UpTo(model, 64),
        None => Embedding::Skip,
    };
    sync_workspace(&ctx.home, workspace, embedding)?;
    let (Some(model), Entry::Memory(memory)) = (&ctx.model, entry) else {
        return Ok(Vec::new());
    };
    let index = open_index(&ctx.home)?;
    let Some(vector) = index
        .vector_of(&model.id(), &index_sync::content_hash(&memory.content))
        .map_err(index_error)?
    else {
        return Ok(Vec::new());
    };
    let scope = scope_of(&index, workspace)?;
    let mut similar = index
        .similar(&model.id(), &vector, &scope, DUPLICATE, 4)
        .map_err(index_error)?;
    similar.retain(|m| m.id != memory.id);
    similar.truncate(3);
    Ok(similar)
}

/// What to recall.
#[derive(Debug, Clone)]
pub(crate) struct RecallInput {
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
    pub distill: DistillMode,
    pub no_cache: bool,
}

/// How long a read waits for another sync of its workspace to finish.
const READS_WAIT_FOR_SYNC: std::time::Duration = std::time::Duration::from_secs(10);

/// How much a read embeds on its way.
#[derive(Clone, Copy)]
enum Embed {
    No,
    /// A few texts (the rest is left to `goldfish sync`).
    Some,
    /// Everything pending, with a progress bar on a terminal when `true`.
    All(bool),
}

/// Syncs `workspace` before a read. A sync that finds another running hands
/// it its request and returns at once: this waits for that one (a while), so
/// a read sees what was just stored.
fn sync_for_reading(
    ctx: &mut Ctx,
    workspace: &Workspace,
    embed: Embed,
) -> Result<Option<index_sync::SyncReport>, CliError> {
    let deadline = std::time::Instant::now() + READS_WAIT_FOR_SYNC;
    loop {
        let embedding = match (embed, ctx.model.as_mut()) {
            (Embed::No, _) | (_, None) => Embedding::Skip,
            (Embed::Some, Some(model)) => Embedding::UpTo(model, 64),
            (Embed::All(progress), Some(model)) => Embedding::All(model, progress),
        };
        if let Some(report) = sync_workspace(&ctx.home, workspace, embedding)? {
            return Ok(Some(report));
        }
        match index_sync::wait_for_running(&ctx.home.locks_dir(), workspace.root(), deadline)? {
            index_sync::Waited::Synced => return Ok(None),
            index_sync::Waited::SyncAgain => {}
            index_sync::Waited::TimedOut => {
                eprintln!(
                    "note: another sync of this workspace is still running; results may miss what it has not indexed yet"
                );
                return Ok(None);
            }
        }
    }
}

/// What recall found.
pub(crate) enum Recalled {
    Nothing,
    Memories {
        hits: Vec<IndexedMemory>,
        all_workspaces: bool,
    },
    Digest(Digested),
}

/// A digest and what it was made from.
pub(crate) struct Digested {
    pub report: DigestReport,
    pub hits: Vec<IndexedMemory>,
    pub budget: usize,
    /// The tokenizer the budget was counted with.
    pub tokenizer: String,
}

/// Filters, ranks and (with a budget) distils.
pub(crate) fn recall(ctx: &mut Ctx, cwd: &Path, input: RecallInput) -> Result<Recalled, CliError> {
    // `--workspace all` or NAME also works outside a repository.
    let workspace = match Workspace::discover(cwd) {
        Ok(workspace) => Some(workspace),
        Err(err) if input.workspace == "current" => return Err(CliError::usage(err)),
        Err(_) => None,
    };
    let config = match &workspace {
        Some(workspace) => repo_config(workspace)?,
        None => RepoConfig::default(),
    };
    let now = now()?;
    let when = |spec: &Option<String>, flag: &str| -> Result<Option<Timestamp>, CliError> {
        spec.as_deref()
            .map(|spec| timespec::parse(spec, now))
            .transpose()
            .map_err(|err| ctx.usage(flag, format!("{err:#}")))
    };
    let kinds = input
        .kinds
        .iter()
        .map(|kind| config.kinds.resolve(kind).map(str::to_owned))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| ctx.usage("--type", err))?;
    if input.limit == 0 {
        return Err(ctx.usage("--limit", "must be at least 1"));
    }
    // Before the search: a bad budget is refused even when nothing matches.
    if input.budget == Some(0) {
        return Err(ctx.usage("--budget", "must be at least 1 token"));
    }
    let request = Request {
        query: input.query.filter(|q| !q.trim().is_empty()),
        since: when(&input.since, "--since")?,
        until: when(&input.until, "--until")?,
        kinds,
        tags: input.tags,
        author: input.author,
        limit: input.limit,
        min_score: input.min_score,
        fusion: Default::default(),
        floor: Some(crate::recall::FLOOR),
        now: Some(now),
        // Recall shows flagged memories, marked (and a secret masked).
        unflagged_only: false,
    };
    // Without a model, the default is still hybrid ranking, of the words alone.
    let mode = match (input.mode, &ctx.model) {
        (Some(Mode::Keyword), _) => Mode::Keyword,
        (Some(mode), Some(_)) => mode,
        (None, _) => Mode::Hybrid,
        (Some(mode), None) => {
            return Err(ctx.usage(
                "--mode",
                format!(
                    "{}: no embedding model is installed; {}",
                    if mode == Mode::Semantic {
                        "semantic"
                    } else {
                        "hybrid"
                    },
                    model::INSTALL_HINT
                ),
            ));
        }
    };
    if ctx.model.is_none() {
        model::notice_no_model(&ctx.home);
    }
    // Recall never trusts a stale index: the sync is incremental, so when
    // nothing changed it only compares HEAD and file stats. A few new
    // memories are embedded on the way; many are left to `goldfish sync`.
    if let Some(workspace) = &workspace {
        let embed = match mode {
            Mode::Keyword => Embed::No,
            Mode::Semantic | Mode::Hybrid => Embed::Some,
        };
        let report = sync_for_reading(ctx, workspace, embed)?;
        if let Some(report) = report {
            output::warn_problems(&report.problems, crate::git::MEMORY_DIR);
            if let Some(pending) = report.pending_embeddings.filter(|&n| n > 0) {
                eprintln!(
                    "note: {pending} memories are not embedded yet (run `goldfish sync`); they are found by keywords only"
                );
            }
        }
    }
    let mut index = open_index(&ctx.home)?;
    let scope = match input.workspace.as_str() {
        "all" => Scope::All,
        "current" => scope_of(&index, workspace.as_ref().expect("checked above"))?,
        name => {
            let rows = index.workspaces().map_err(index_error)?;
            let Some(row) = rows.iter().find(|row| row.name == name || row.root == name) else {
                let known: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
                return Err(ctx.usage(
                    "--workspace",
                    format!(
                        "no workspace named `{name}`; known: current, all, {}",
                        known.join(", ")
                    ),
                ));
            };
            Scope::Workspaces(vec![row.id])
        }
    };
    let query_vector = match (&request.query, mode, ctx.model.as_mut()) {
        (Some(query), Mode::Semantic | Mode::Hybrid, Some(model)) => {
            let id = model.id();
            let vector = index.query_vector(&id, query, || -> Result<Vec<f32>, CliError> {
                let vector = model
                    .embedder()?
                    .embed(&[query.as_str()], crate::embed::TextKind::Query)
                    .context("embedding the query")?;
                Ok(vector.into_iter().next().unwrap_or_default())
            })?;
            Some((id, vector))
        }
        _ => None,
    };
    let hits = index
        .recall(
            &request,
            &scope,
            mode,
            query_vector
                .as_ref()
                .map(|(model, vector)| QueryVector { model, vector }),
        )
        .map_err(index_error)?;
    if hits.is_empty() {
        return Ok(Recalled::Nothing);
    }
    let Some(budget) = input.budget else {
        return Ok(Recalled::Memories {
            hits,
            all_workspaces: matches!(scope, Scope::All),
        });
    };
    let sources: Vec<Source> = hits.iter().map(Into::into).collect();
    let words = request
        .query
        .as_deref()
        .map(crate::index::search::content_words)
        .unwrap_or_default();
    let (mut counter, tokenizer) = token_counter(ctx)?;
    let command = distill_command(&ctx.home)?;
    let use_llm = match (input.distill, &command) {
        (DistillMode::Extractive, _) | (DistillMode::Auto, None) => false,
        (DistillMode::Llm | DistillMode::Auto, Some(_)) => true,
        (DistillMode::Llm, None) => {
            return Err(ctx.usage(
                "--distill",
                format!(
                    "llm: no distill command is configured; set {} (e.g. `claude -p`) or `[distill] command` in {}",
                    env::GOLDFISH_DISTILL_COMMAND,
                    ctx.home.config_path().display()
                ),
            ));
        }
    };
    let tokens_of_sources = crate::digest::source_tokens(&sources, counter.as_mut());
    let mut fallback_reason = None;
    if let (true, Some((command, timeout))) = (use_llm, &command) {
        let hashes: Vec<String> = hits.iter().map(|m| m.content_hash.clone()).collect();
        let key = crate::distill::cache_key(request.query.as_deref(), &hashes, command, budget);
        let cached = if input.no_cache {
            None
        } else {
            index.cached_digest(&key)?
        };
        let answer = match cached {
            Some((text, tokens)) => Ok((text, tokens, true)),
            None => {
                let prompt = crate::distill::prompt(request.query.as_deref(), &sources, budget);
                crate::distill::run(command, &prompt, *timeout).and_then(|text| {
                    let tokens = counter.count(&text);
                    if tokens > budget {
                        Err(crate::distill::Failure::OverBudget { tokens, budget })
                    } else {
                        Ok((text, tokens, false))
                    }
                })
            }
        };
        match answer {
            Ok((text, tokens, cached)) => {
                if !cached && !input.no_cache {
                    index.cache_digest(&key, &text, tokens)?;
                }
                let report = DigestReport {
                    text: format!("{text}\n"),
                    tokens,
                    tokens_of_sources,
                    sentences: Vec::new(),
                    distill: "llm",
                    fallback_reason: None,
                    cached,
                };
                return Ok(Recalled::Digest(Digested {
                    report,
                    hits,
                    budget,
                    tokenizer,
                }));
            }
            Err(failure) => {
                eprintln!("note: {failure}; using the extractive digest");
                fallback_reason = Some(failure.to_string());
            }
        }
    }
    let mut sentence_embedder = match (mode, ctx.model.as_mut()) {
        (Mode::Keyword, _) | (_, None) => None,
        (_, Some(model)) => Some(model.sentence_embedder()?),
    };
    let digest = crate::digest::distill(
        &sources,
        &words,
        query_vector.as_ref().map(|(_, vector)| vector.as_slice()),
        sentence_embedder
            .as_mut()
            .map(|embedder| embedder as &mut dyn Embedder),
        counter.as_mut(),
        budget,
    )
    .context("distilling the digest")?;
    let report = DigestReport {
        text: digest.text,
        tokens: digest.tokens,
        tokens_of_sources,
        sentences: digest.sentences,
        distill: "extractive",
        fallback_reason,
        cached: false,
    };
    Ok(Recalled::Digest(Digested {
        report,
        hits,
        budget,
        tokenizer,
    }))
}

/// The model's tokenizer (cached on the model), or an estimate without one.
pub(crate) fn token_counter(ctx: &mut Ctx) -> Result<(Box<dyn TokenCounter>, String), CliError> {
    Ok(match &mut ctx.model {
        Some(model) => (Box::new(model.tokenizer()?), model.id()),
        None => (
            Box::new(crate::digest::CharEstimate),
            "estimate (4 characters a token)".to_owned(),
        ),
    })
}

/// What `forget` did.
pub(crate) enum Forgot {
    Done {
        target: String,
        tombstone: Box<Entry>,
    },
    /// The memory was forgotten before, at this time.
    Already { id: String, at: String },
}

/// Appends a tombstone for the memory `id` (or a unique prefix) names.
pub(crate) fn forget(ctx: &mut Ctx, workspace: &Workspace, id: &str) -> Result<Forgot, CliError> {
    let dir = MemoryDir::of(workspace);
    let view = dir.read().map_err(log_error)?;
    let target = match view.find(id) {
        Lookup::Forgotten { id, at } => return Ok(Forgot::Already { id, at }),
        _ => match find(ctx, &view, id)? {
            Some(memory) => memory.id,
            None => unreachable!("a forgotten memory is answered above"),
        },
    };
    let at = now()?;
    let tombstone = Entry::Tombstone(Tombstone {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        forgets: target.clone(),
        author: workspace.author(),
        extra: Default::default(),
    });
    dir.append(&tombstone).map_err(log_error)?;
    if let Err(err) = sync_workspace(&ctx.home, workspace, Embedding::Skip) {
        eprintln!(
            "warning: forgotten, but the index still has it until the next sync: {:#}",
            err.error
        );
    }
    Ok(Forgot::Done {
        target,
        tombstone: Box::new(tombstone),
    })
}

/// The live memory `id` names; `None` when it is forgotten.
fn find(
    ctx: &Ctx,
    view: &crate::memory::view::LogView,
    id: &str,
) -> Result<Option<Memory>, CliError> {
    match view.find(id) {
        Lookup::Found(located) => Ok(Some(located.memory.clone())),
        Lookup::Forgotten { .. } => Ok(None),
        Lookup::Missing => Err(ctx.usage(
            "ID",
            format!("no memory has the id `{id}` (see `goldfish recall`)"),
        )),
        Lookup::Ambiguous(ids) => Err(ctx.usage(
            "ID",
            format!(
                "`{id}` matches several memories ({}); give more of the id",
                ids.join(", ")
            ),
        )),
    }
}

/// What `similar` compares with.
pub(crate) enum Target {
    Id(String),
    Text(String),
}

/// The model, or a usage error saying how to install it.
pub(crate) fn require_model<'m>(
    model: &'m mut Option<Model>,
    what: &str,
) -> Result<&'m mut Model, CliError> {
    match model.as_mut() {
        Some(model) => Ok(model),
        None => Err(CliError::usage(anyhow::anyhow!(
            "{what} compares embeddings, and no embedding model is installed; {}",
            model::INSTALL_HINT
        ))),
    }
}

/// Memories of the workspace at `threshold` similarity or more to `target`.
pub(crate) fn similar(
    ctx: &mut Ctx,
    workspace: &Workspace,
    target: Target,
    threshold: f64,
    limit: usize,
    progress: bool,
) -> Result<Vec<IndexedMemory>, CliError> {
    require_model(&mut ctx.model, "similar")?;
    sync_for_reading(ctx, workspace, Embed::All(progress))?;
    let index = open_index(&ctx.home)?;
    let scope = scope_of(&index, workspace)?;
    let model_id = ctx.model.as_ref().expect("required above").id();
    let (vector, own_id) = match target {
        Target::Id(id) => {
            let view = MemoryDir::of(workspace).read().map_err(log_error)?;
            let Some(memory) = find(ctx, &view, &id)? else {
                return Err(ctx.usage("ID", format!("{id} is forgotten")));
            };
            let vector = index
                .vector_of(&model_id, &index_sync::content_hash(&memory.content))
                .map_err(index_error)?
                .ok_or_else(|| {
                    anyhow::anyhow!("{} has no embedding yet: run `goldfish sync`", memory.id)
                })?;
            (vector, Some(memory.id))
        }
        Target::Text(text) => {
            let model = ctx.model.as_mut().expect("required above");
            let vector = model
                .embedder()?
                .embed(&[text.as_str()], crate::embed::TextKind::Document)
                .context("embedding the text")?
                .remove(0);
            (vector, None)
        }
    };
    let mut hits = index
        .similar(&model_id, &vector, &scope, threshold, limit + 1)
        .map_err(index_error)?;
    hits.retain(|hit| Some(&hit.id) != own_id.as_ref());
    hits.truncate(limit);
    Ok(hits)
}

/// The session-start briefing: where work stopped, what was decided, what
/// was fixed on this branch, distilled into `budget` tokens.
pub(crate) fn brief(
    ctx: &mut Ctx,
    workspace: &Workspace,
    budget: usize,
) -> Result<Option<Digested>, CliError> {
    if budget == 0 {
        return Err(ctx.usage("--budget", "must be at least 1 token"));
    }
    if let Some(report) = sync_for_reading(ctx, workspace, Embed::No)? {
        output::warn_problems(&report.problems, crate::git::MEMORY_DIR);
    }
    let index = open_index(&ctx.home)?;
    let scope = scope_of(&index, workspace)?;
    let branch = workspace.head().branch;
    let sections = brief_sections(&index, &scope, branch.as_deref(), now()?)?;
    if sections.iter().all(|section| section.memories.is_empty()) {
        return Ok(None);
    }
    let (mut counter, tokenizer) = token_counter(ctx)?;
    let parts: Vec<(String, Vec<Source>)> = sections
        .iter()
        .map(|section| {
            (
                section.title.clone(),
                section.memories.iter().map(Into::into).collect(),
            )
        })
        .collect();
    let digest = crate::digest::sections(&parts, counter.as_mut(), budget)
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
) -> Result<Vec<Section>, CliError> {
    // Flagged memories (a secret, a time far ahead or not a time, an
    // unknown type) stay out: a hand-written line dated 9999 would
    // otherwise open every briefing.
    let until = now.checked_add(crate::memory::trust::FUTURE_SLACK).ok();
    let newest = |kinds: &[&str], limit: usize, since: Option<Timestamp>| {
        let request = Request {
            kinds: kinds.iter().map(|k| (*k).to_owned()).collect(),
            limit,
            since,
            until,
            unflagged_only: true,
            ..Request::default()
        };
        index
            .recall(&request, scope, Mode::Keyword, None)
            .map_err(index_error)
    };
    let window = now
        .checked_sub(jiff::SignedDuration::from_hours(24 * BRIEF_WINDOW_DAYS))
        .ok();
    // Where work stopped: the newest checkpoint and the newest plan, newer
    // first.
    let mut state = newest(&["checkpoint"], 1, None)?;
    state.extend(newest(&["plan"], 1, None)?);
    state.sort_by(|a, b| b.timestamp.cmp(&a.timestamp));
    let decisions = newest(&["decision"], 3, window)?;
    let mut fixes = newest(&["bug-fix"], 20, window)?;
    if let Some(branch) = branch {
        fixes.retain(|m| m.branch.as_deref() == Some(branch));
    }
    fixes.truncate(3);
    Ok(vec![
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
    ])
}
