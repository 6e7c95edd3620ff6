//! One function per subcommand: validate arguments, call the library, print.

use std::ffi::OsString;
use std::io::{Read, Write};

use anyhow::Context;
use jiff::Timestamp;

use super::model::{self, Model};
use super::output;
use super::{
    CliError, DistillMode, EXIT_NO_RESULT, EXIT_OK, ForgetArgs, HookName, InitArgs,
    ModelInstallArgs, RecallArgs, ReindexArgs, SimilarArgs, StatusArgs, StoreArgs, SyncArgs,
};
use crate::config::RepoConfig;
use crate::embed::Embedder;
use crate::git::{REPO_CONFIG, Workspace};
use crate::home::Home;
use crate::index::search::{Mode, QueryVector, Scope};
use crate::index::sync::{self as index_sync, SyncError, SyncOptions, SyncReport};
use crate::index::{Index, IndexError};
use crate::log::{LogError, MemoryDir};
use crate::memory::view::Lookup;
use crate::memory::{self, Entry, Memory, Tombstone};
use crate::recall::Request;
use crate::{env, timespec};

/// "Now", or the fixed time in `GOLDFISH_NOW`.
fn now() -> Result<Timestamp, CliError> {
    match env::var(env::GOLDFISH_NOW) {
        Some(fixed) => fixed
            .parse()
            .with_context(|| format!("{}={fixed} is not an RFC 3339 timestamp", env::GOLDFISH_NOW))
            .map_err(CliError::usage),
        None => Ok(Timestamp::now()),
    }
}

pub(super) fn workspace() -> Result<Workspace, CliError> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Workspace::discover(&cwd).map_err(CliError::usage)
}

pub(super) fn home() -> Result<Home, CliError> {
    Home::from_env().map_err(CliError::usage)
}

fn open_index(home: &Home) -> Result<Index, CliError> {
    Index::open(&home.index_path()).map_err(index_error)
}

impl From<IndexError> for CliError {
    fn from(err: IndexError) -> CliError {
        index_error(err)
    }
}

fn index_error(err: IndexError) -> CliError {
    anyhow::Error::new(err).into()
}

fn sync_error(err: SyncError) -> CliError {
    anyhow::Error::new(err).context("sync failed").into()
}

/// How much embedding a sync does after its keyword part.
pub(super) enum Embedding<'m> {
    /// Keywords only.
    Skip,
    /// At most this many texts (the rest waits for the next sync).
    UpTo(&'m mut Model, usize),
    /// Everything pending, with a progress bar on a terminal when `progress`.
    All(&'m mut Model, bool),
}

/// Syncs `workspace` under its sync lock, then embeds as `embedding` says.
/// `None` when another sync holds the lock: it will pick up whatever this one
/// would have seen.
pub(super) fn sync_workspace(
    home: &Home,
    workspace: &Workspace,
    mut embedding: Embedding<'_>,
) -> Result<Option<SyncReport>, CliError> {
    let options = SyncOptions {
        abort_before_commit: env::var(env::GOLDFISH_FAULT).as_deref() == Some("sync-abort"),
    };
    let mut index = open_index(home)?;
    index_sync::exclusive(&home.locks_dir(), workspace.root(), || {
        let mut report = index_sync::sync(&mut index, workspace, options).map_err(sync_error)?;
        let (model, limit, progress) = match &mut embedding {
            Embedding::Skip => return Ok(report),
            Embedding::UpTo(model, limit) => (&mut **model, Some(*limit), false),
            Embedding::All(model, progress) => (&mut **model, None, *progress),
        };
        // A new model queues everything again: vector spaces never mix.
        index.use_model(&model.id()).map_err(index_error)?;
        let pending = index.pending_embeddings().map_err(index_error)?;
        if pending > 0 {
            let bar = progress_bar(progress, pending);
            let embedder = model.embedder()?;
            let embedded = index
                .embed_pending(embedder, limit, &mut |done, _| {
                    bar.set_position(done as u64)
                })
                .context("embedding memories")?;
            bar.finish_and_clear();
            report.embedded = embedded.embedded;
        }
        report.pending_embeddings = Some(index.pending_embeddings().map_err(index_error)?);
        Ok(report)
    })
    .map_err(|err: CliError| err)
}

/// A progress bar on stderr when it is a terminal and the work is long
/// enough to watch; hidden otherwise (hooks, pipes, small jobs).
fn progress_bar(wanted: bool, total: u64) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !wanted || total < 64 || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "embedding {bar:30} {pos}/{len} memories ({per_sec}, {eta} left)",
        )
        .expect("a valid progress template"),
    );
    bar
}

impl From<SyncError> for CliError {
    fn from(err: SyncError) -> CliError {
        sync_error(err)
    }
}

fn repo_config(workspace: &Workspace) -> Result<RepoConfig, CliError> {
    let path = workspace.repo_config_path();
    match std::fs::read_to_string(&path) {
        Ok(text) => RepoConfig::parse(&text)
            .with_context(|| format!("{REPO_CONFIG} is invalid"))
            .map_err(CliError::usage),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(RepoConfig::default()),
        Err(err) => Err(anyhow::Error::new(err)
            .context(format!("cannot read {}", path.display()))
            .into()),
    }
}

fn log_error(err: LogError) -> CliError {
    match err {
        LogError::NotInitialized(_) => CliError::usage(err),
        LogError::Io { .. } => anyhow::Error::new(err).into(),
    }
}

pub(super) fn init(args: InitArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let changes = crate::init::init(&workspace, args.force).map_err(|err| match err {
        crate::init::InitError::HooksOutside(_) | crate::init::InitError::LegacyTaken { .. } => {
            CliError::usage(err)
        }
        other => anyhow::Error::new(other).into(),
    })?;
    if changes.is_empty() {
        writeln!(
            out,
            "goldfish is already set up in {}",
            workspace.root().display()
        )
        .context("writing output")?;
    } else {
        for change in &changes {
            writeln!(out, "{change}").context("writing output")?;
        }
        writeln!(
            out,
            "commit .gitattributes and {} so teammates share them; each clone runs `goldfish init` once",
            crate::git::MEMORY_DIR
        )
        .context("writing output")?;
    }
    Ok(EXIT_OK)
}

pub(super) fn store(args: StoreArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let raw = if args.content == ["-"] {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the memory from stdin")?;
        bytes
    } else {
        args.content.join(" ").into_bytes()
    };
    let content = memory::validate_content(&raw, args.allow_secret)
        .context("CONTENT")
        .map_err(CliError::usage)?;
    let workspace = workspace()?;
    let config = repo_config(&workspace)?;
    let kind = config
        .kinds
        .resolve(&args.kind)
        .context("--type")
        .map_err(CliError::usage)?
        .to_owned();
    let at = now()?;
    let head = workspace.head();
    let entry = Entry::Memory(Memory {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        kind,
        content,
        source: args
            .source
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
        tags: args
            .tags
            .as_deref()
            .map(memory::split_list)
            .unwrap_or_default(),
        author: workspace.author(),
        branch: head.branch,
        commit: head.commit,
        files: args
            .files
            .as_deref()
            .map(memory::split_list)
            .unwrap_or_default(),
        extra: Default::default(),
    });
    let file = MemoryDir::new(workspace.memory_dir())
        .append(&entry)
        .map_err(log_error)?;
    // The memory is safely in the log; indexing it is best effort (the next
    // sync catches up), so a broken index or model never loses a store.
    if let Err(err) = index_stored(&workspace, &entry) {
        eprintln!("warning: stored, but not indexed yet: {:#}", err.error);
    }
    if args.json {
        writeln!(out, "{}", entry.to_line()).context("writing output")?;
    } else {
        let relative = file.strip_prefix(workspace.root()).unwrap_or(&file);
        writeln!(out, "stored {} in {}", entry.id(), relative.display())
            .context("writing output")?;
    }
    Ok(EXIT_OK)
}

/// Indexes (and embeds) what `store` appended, and warns when it nearly
/// repeats a memory the workspace already has.
fn index_stored(workspace: &Workspace, entry: &Entry) -> Result<(), CliError> {
    /// Similarity from which a new memory counts as a near-duplicate.
    const DUPLICATE: f64 = 0.95;
    let home = home()?;
    let mut model = Model::find(&home)?;
    let embedding = match model.as_mut() {
        Some(model) => Embedding::UpTo(model, 64),
        None => Embedding::Skip,
    };
    sync_workspace(&home, workspace, embedding)?;
    let (Some(model), Entry::Memory(memory)) = (model, entry) else {
        return Ok(());
    };
    let index = open_index(&home)?;
    let Some(vector) = index
        .vector_of(&model.id(), &index_sync::content_hash(&memory.content))
        .map_err(index_error)?
    else {
        return Ok(());
    };
    let scope = scope_of(&index, workspace)?;
    for similar in index
        .similar(&model.id(), &vector, &scope, DUPLICATE, 3)
        .map_err(index_error)?
    {
        if similar.id != memory.id {
            eprintln!(
                "warning: this is {:.2} similar to {} ({}): {}",
                similar.similarity.unwrap_or(0.0),
                similar.id,
                similar.timestamp.get(..10).unwrap_or(&similar.timestamp),
                excerpt(&similar.content, 80)
            );
        }
    }
    Ok(())
}

/// The distill command and its timeout: `GOLDFISH_DISTILL_COMMAND` /
/// `GOLDFISH_DISTILL_TIMEOUT`, else `[distill]` in `$GOLDFISH_HOME/config.toml`.
fn distill_command(home: &Home) -> Result<Option<(String, std::time::Duration)>, CliError> {
    let path = home.config_path();
    let config = match std::fs::read_to_string(&path) {
        Ok(text) => crate::config::HomeConfig::parse(&text)
            .with_context(|| format!("{} is invalid", path.display()))
            .map_err(CliError::usage)?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Default::default(),
        Err(err) => {
            return Err(anyhow::Error::new(err)
                .context(format!("cannot read {}", path.display()))
                .into());
        }
    };
    let command = env::var(env::GOLDFISH_DISTILL_COMMAND).or(config.distill.command);
    let timeout = match env::var(env::GOLDFISH_DISTILL_TIMEOUT) {
        Some(secs) => secs
            .parse::<u64>()
            .with_context(|| {
                format!(
                    "{}={secs} is not a number of seconds",
                    env::GOLDFISH_DISTILL_TIMEOUT
                )
            })
            .map_err(CliError::usage)?,
        None => config.distill.timeout_secs.unwrap_or(30),
    };
    Ok(command.map(|command| (command, std::time::Duration::from_secs(timeout))))
}

/// `SIMILARITY  ID  DATE  excerpt` for `similar`.
fn similar_line(m: &crate::index::search::IndexedMemory, width: usize) -> String {
    format!(
        "{:.2}  {}  {}  {}",
        m.similarity.unwrap_or(0.0),
        m.id,
        m.timestamp.get(..10).unwrap_or(&m.timestamp),
        excerpt(&m.content, width)
    )
}

/// The first `max` characters of `text`, on one line.
fn excerpt(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}

/// The current workspace as a recall scope (empty when never synced).
fn scope_of(index: &Index, workspace: &Workspace) -> Result<Scope, CliError> {
    let row = index
        .workspace_by_root(workspace.root())
        .map_err(index_error)?;
    Ok(Scope::Workspaces(
        row.map(|row| vec![row.id]).unwrap_or_default(),
    ))
}

/// How long recall waits for another sync of its workspace to finish.
const RECALL_WAITS_FOR_SYNC: std::time::Duration = std::time::Duration::from_secs(10);

pub(super) fn recall(args: RecallArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let home = home()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // `--workspace all` or NAME also works outside a repository.
    let workspace = match Workspace::discover(&cwd) {
        Ok(workspace) => Some(workspace),
        Err(err) if args.workspace == "current" => return Err(CliError::usage(err)),
        Err(_) => None,
    };
    let config = match &workspace {
        Some(workspace) => repo_config(workspace)?,
        None => RepoConfig::default(),
    };
    let now = now()?;
    let when = |spec: &Option<String>, flag: &str| -> Result<Option<Timestamp>, CliError> {
        spec.as_deref()
            .map(|spec| timespec::parse(spec, now).context(flag.to_owned()))
            .transpose()
            .map_err(CliError::usage)
    };
    let kinds = args
        .kinds
        .iter()
        .map(|kind| config.kinds.resolve(kind).map(str::to_owned))
        .collect::<Result<Vec<_>, _>>()
        .context("--type")
        .map_err(CliError::usage)?;
    let query = args.query.join(" ");
    let request = Request {
        query: (!query.trim().is_empty()).then_some(query),
        since: when(&args.since, "--since")?,
        until: when(&args.until, "--until")?,
        kinds,
        tags: args.tags,
        author: args.author,
        limit: args.limit,
        min_score: args.min_score,
        fusion: Default::default(),
    };
    let mut model = Model::find(&home)?;
    let mode = match (args.mode, &model) {
        (Some(Mode::Keyword), _) | (None, None) => Mode::Keyword,
        (Some(mode), Some(_)) => mode,
        (None, Some(_)) => Mode::Hybrid,
        (Some(mode), None) => {
            return Err(CliError::usage(anyhow::anyhow!(
                "--mode {}: no embedding model is installed; {}",
                if mode == Mode::Semantic {
                    "semantic"
                } else {
                    "hybrid"
                },
                model::INSTALL_HINT
            )));
        }
    };
    if model.is_none() {
        model::notice_no_model(&home);
    }
    // Recall never trusts a stale index: the sync is incremental, so when
    // nothing changed it only compares HEAD and file stats. A few new
    // memories are embedded on the way; many are left to `goldfish sync`.
    // A sync that finds another running hands it its request and returns at
    // once: wait for that one (a while) so recall reads what was stored.
    if let Some(workspace) = &workspace {
        let deadline = std::time::Instant::now() + RECALL_WAITS_FOR_SYNC;
        let report = loop {
            let embedding = match (mode, model.as_mut()) {
                (Mode::Keyword, _) | (_, None) => Embedding::Skip,
                (_, Some(model)) => Embedding::UpTo(model, 64),
            };
            if let Some(report) = sync_workspace(&home, workspace, embedding)? {
                break Some(report);
            }
            match index_sync::wait_for_running(&home.locks_dir(), workspace.root(), deadline)? {
                index_sync::Waited::Synced => break None,
                index_sync::Waited::SyncAgain => {}
                index_sync::Waited::TimedOut => {
                    eprintln!(
                        "note: another sync of this workspace is still running; recall may miss what it has not indexed yet"
                    );
                    break None;
                }
            }
        };
        if let Some(report) = report {
            output::warn_problems(&report.problems, crate::git::MEMORY_DIR);
            if let Some(pending) = report.pending_embeddings.filter(|&n| n > 0) {
                eprintln!(
                    "note: {pending} memories are not embedded yet (run `goldfish sync`); they are found by keywords only"
                );
            }
        }
    }
    let mut index = open_index(&home)?;
    let scope = match args.workspace.as_str() {
        "all" => Scope::All,
        "current" => scope_of(&index, workspace.as_ref().expect("checked above"))?,
        name => {
            let rows = index.workspaces().map_err(index_error)?;
            let Some(row) = rows.iter().find(|row| row.name == name || row.root == name) else {
                let known: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
                return Err(CliError::usage(anyhow::anyhow!(
                    "--workspace: no workspace named `{name}`; known: current, all, {}",
                    known.join(", ")
                )));
            };
            Scope::Workspaces(vec![row.id])
        }
    };
    let query_vector = match (&request.query, mode, model.as_mut()) {
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
        eprintln!("no memories match");
        return Ok(EXIT_NO_RESULT);
    }
    if let Some(budget) = args.budget {
        let sources: Vec<crate::digest::Source> = hits.iter().map(Into::into).collect();
        let words = request
            .query
            .as_deref()
            .map(crate::index::search::content_words)
            .unwrap_or_default();
        let (mut counter, tokenizer): (Box<dyn crate::digest::TokenCounter>, String) = match &model
        {
            Some(model) => (Box::new(model.tokenizer()?), model.id()),
            None => (
                Box::new(crate::digest::CharEstimate),
                "estimate (4 characters a token)".to_owned(),
            ),
        };
        let command = distill_command(&home)?;
        let use_llm = match (args.distill, &command) {
            (DistillMode::Extractive, _) | (DistillMode::Auto, None) => false,
            (DistillMode::Llm | DistillMode::Auto, Some(_)) => true,
            (DistillMode::Llm, None) => {
                return Err(CliError::usage(anyhow::anyhow!(
                    "--distill llm: no distill command is configured; set {} (e.g. `claude -p`) or `[distill] command` in {}",
                    env::GOLDFISH_DISTILL_COMMAND,
                    home.config_path().display()
                )));
            }
        };
        let tokens_of_sources = crate::digest::source_tokens(&sources, counter.as_mut());
        let mut fallback_reason = None;
        if let (true, Some((command, timeout))) = (use_llm, &command) {
            let hashes: Vec<String> = hits.iter().map(|m| m.content_hash.clone()).collect();
            let key = crate::distill::cache_key(request.query.as_deref(), &hashes, command, budget);
            let index = open_index(&home)?;
            let cached = if args.no_cache {
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
                    if !cached && !args.no_cache {
                        index.cache_digest(&key, &text, tokens)?;
                    }
                    let report = output::DigestReport {
                        text: format!("{text}\n"),
                        tokens,
                        tokens_of_sources,
                        sentences: Vec::new(),
                        distill: "llm",
                        fallback_reason: None,
                        cached,
                    };
                    output::digest(&report, &hits, budget, &tokenizer, args.json, out)?;
                    return Ok(EXIT_OK);
                }
                Err(failure) => {
                    eprintln!("note: {failure}; using the extractive digest");
                    fallback_reason = Some(failure.to_string());
                }
            }
        }
        let embedder: Option<&mut dyn Embedder> = match (mode, model.as_mut()) {
            (Mode::Keyword, _) | (_, None) => None,
            (_, Some(model)) => Some(model.embedder()?),
        };
        let digest = crate::digest::distill(
            &sources,
            &words,
            query_vector.as_ref().map(|(_, vector)| vector.as_slice()),
            embedder,
            counter.as_mut(),
            budget,
        )
        .context("distilling the digest")?;
        let report = output::DigestReport {
            text: digest.text,
            tokens: digest.tokens,
            tokens_of_sources,
            sentences: digest.sentences,
            distill: "extractive",
            fallback_reason,
            cached: false,
        };
        output::digest(&report, &hits, budget, &tokenizer, args.json, out)?;
        return Ok(EXIT_OK);
    }
    if args.json {
        output::memories_json(&hits, out)?;
    } else {
        output::memories_text(&hits, matches!(scope, Scope::All), out)?;
    }
    Ok(EXIT_OK)
}

pub(super) fn forget(args: ForgetArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let dir = MemoryDir::new(workspace.memory_dir());
    let view = dir.read().map_err(log_error)?;
    let target = match view.find(&args.id) {
        Lookup::Found(located) => located.memory.id.clone(),
        Lookup::Forgotten => {
            eprintln!("{} is already forgotten", args.id);
            return Ok(EXIT_OK);
        }
        Lookup::Missing => {
            return Err(CliError::usage(anyhow::anyhow!(
                "ID: no memory has the id `{}` (see `goldfish recall`)",
                args.id
            )));
        }
        Lookup::Ambiguous(ids) => {
            return Err(CliError::usage(anyhow::anyhow!(
                "ID: `{}` matches several memories ({}); give more of the id",
                args.id,
                ids.join(", ")
            )));
        }
    };
    let at = now()?;
    let entry = Entry::Tombstone(Tombstone {
        id: memory::new_id(at),
        timestamp: memory::format_timestamp(at),
        forgets: target.clone(),
        author: workspace.author(),
        extra: Default::default(),
    });
    dir.append(&entry).map_err(log_error)?;
    if let Err(err) = home().and_then(|home| sync_workspace(&home, &workspace, Embedding::Skip)) {
        eprintln!(
            "warning: forgotten, but the index still has it until the next sync: {:#}",
            err.error
        );
    }
    if args.json {
        writeln!(out, "{}", entry.to_line()).context("writing output")?;
    } else {
        writeln!(out, "forgot {target}").context("writing output")?;
    }
    Ok(EXIT_OK)
}

pub(super) fn hook(name: HookName, _args: &[OsString]) -> Result<u8, CliError> {
    // A hook must never fail or slow down the git command: any error is only
    // reported (hooks hide stderr unless GOLDFISH_HOOK_VERBOSE is set), and
    // `recall` syncs by itself if this one did not happen.
    match hook_sync() {
        Ok(message) => eprintln!("goldfish {}: {message}", name.as_str()),
        Err(err) => eprintln!("goldfish {}: {:#}", name.as_str(), err.error),
    }
    Ok(EXIT_OK)
}

/// Syncs in the foreground when little changed, else in a detached process.
fn hook_sync() -> Result<String, CliError> {
    const DEFAULT_BACKGROUND_BYTES: u64 = 1 << 20;
    let workspace = workspace()?;
    let home = home()?;
    let threshold = env::var(env::GOLDFISH_HOOK_BACKGROUND_BYTES)
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_BACKGROUND_BYTES);
    let pending = index_sync::pending_bytes(&open_index(&home)?, &workspace)?;
    if pending >= threshold {
        let log = background_sync(&home, &workspace)?;
        return Ok(format!(
            "syncing {pending} bytes in the background (log: {})",
            log.display()
        ));
    }
    // The keyword index now, so the pull's memories are found at once;
    // embedding a handful now, many in the background.
    let Some(report) = sync_workspace(&home, &workspace, Embedding::Skip)? else {
        return Ok("another sync is running; it will pick this up".to_owned());
    };
    let synced = format!(
        "synced {} ({} files read, {} memories)",
        report.workspace, report.files_read, report.memories
    );
    let Some(mut model) = Model::find(&home)? else {
        return Ok(synced);
    };
    let pending = open_index(&home)?
        .pending_embeddings()
        .map_err(index_error)?;
    if pending > HOOK_FOREGROUND_EMBEDDINGS {
        let log = background_sync(&home, &workspace)?;
        return Ok(format!(
            "{synced}; embedding {pending} in the background (log: {})",
            log.display()
        ));
    }
    if pending > 0 {
        sync_workspace(
            &home,
            &workspace,
            Embedding::UpTo(&mut model, HOOK_FOREGROUND_EMBEDDINGS as usize),
        )?;
    }
    Ok(synced)
}

/// Texts a hook embeds itself (about a tenth of a second); more go to a
/// background process.
const HOOK_FOREGROUND_EMBEDDINGS: u64 = 16;

/// Starts `goldfish sync` detached from the git command, appending
/// its output to `$GOLDFISH_HOME/logs/sync.log`.
fn background_sync(home: &Home, workspace: &Workspace) -> Result<std::path::PathBuf, CliError> {
    use std::os::unix::process::CommandExt;
    let logs = home.logs_dir();
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let log_path = logs.join("sync.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("cannot open {}", log_path.display()))?;
    let exe = std::env::current_exe().context("cannot find the goldfish executable")?;
    std::process::Command::new(exe)
        .arg("sync")
        .current_dir(workspace.root())
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().context("cannot share the log file")?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .context("cannot start the background sync")?;
    Ok(log_path)
}

pub(super) fn sync(args: SyncArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let home = home()?;
    let mut model = Model::find(&home)?;
    let embedding = match model.as_mut() {
        Some(model) => Embedding::All(model, !args.quiet && !args.json),
        None => Embedding::Skip,
    };
    let Some(report) = sync_workspace(&home, &workspace, embedding)? else {
        if !args.quiet {
            eprintln!("another sync of this workspace is running; it will include your changes");
        }
        return Ok(EXIT_OK);
    };
    if !args.quiet || args.json {
        output::warn_problems(&report.problems, crate::git::MEMORY_DIR);
    }
    if args.json {
        let line = serde_json::to_string(&report).context("serializing the report")?;
        writeln!(out, "{line}").context("writing output")?;
    } else if !args.quiet {
        writeln!(
            out,
            "synced {}: {} memories ({} files read of {}, +{} ~{} -{}, {} commits walked)",
            report.workspace,
            report.memories,
            report.files_read,
            report.files,
            report.memories_added,
            report.memories_updated,
            report.memories_removed,
            report.commits_walked
        )
        .context("writing output")?;
        match report.pending_embeddings {
            Some(pending) => writeln!(
                out,
                "embedded {} memories ({pending} pending)",
                report.embedded
            ),
            None => writeln!(
                out,
                "no embedding model: recall matches keywords only; {}",
                model::INSTALL_HINT
            ),
        }
        .context("writing output")?;
    }
    Ok(EXIT_OK)
}

pub(super) fn status(args: StatusArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let home = home()?;
    let index = open_index(&home)?;
    let model = Model::find(&home)?.map(|model| model.id());
    let status = super::status::collect(&workspace, &index, model)?;
    if args.json {
        let line = serde_json::to_string(&status).context("serializing the status")?;
        writeln!(out, "{line}").context("writing output")?;
    } else {
        super::status::print(&status, out)?;
    }
    Ok(EXIT_OK)
}

pub(super) fn reindex(args: ReindexArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let home = home()?;
    let current = workspace().ok();
    let mut index = open_index(&home)?;
    let mut roots: Vec<std::path::PathBuf> = index
        .workspaces()
        .map_err(index_error)?
        .into_iter()
        .map(|row| std::path::PathBuf::from(row.root))
        .collect();
    index.clear().map_err(index_error)?;
    drop(index);
    if let Some(current) = &current
        && !roots.iter().any(|root| root == current.root())
    {
        roots.push(current.root().to_owned());
    }
    for root in roots {
        let Ok(workspace) = Workspace::discover(&root).map_err(|err| {
            eprintln!(
                "warning: {} is no longer a repository ({err}); dropped",
                root.display()
            );
        }) else {
            continue;
        };
        if workspace.root() != root {
            continue;
        }
        let mut model = Model::find(&home)?;
        let embedding = match model.as_mut() {
            Some(model) => Embedding::All(model, !args.json),
            None => Embedding::Skip,
        };
        let Some(report) = sync_workspace(&home, &workspace, embedding)? else {
            continue;
        };
        if args.json {
            let line = serde_json::to_string(&report).context("serializing the report")?;
            writeln!(out, "{line}").context("writing output")?;
        } else {
            writeln!(
                out,
                "rebuilt {}: {} memories",
                report.workspace, report.memories
            )
            .context("writing output")?;
        }
    }
    Ok(EXIT_OK)
}

pub(super) fn model_install(args: ModelInstallArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let home = home()?;
    let installed = match &args.from {
        Some(dir) => {
            crate::embed::install::install_from(dir, &home.models_dir(), &home.runtime_dir())
                .map_err(CliError::usage)?
        }
        None => crate::embed::install::install_default(&home.models_dir(), &home.runtime_dir())
            .map_err(|err| CliError::from(anyhow::Error::new(err)))?,
    };
    writeln!(
        out,
        "installed {} ({} dims) in {}\nONNX Runtime: {}",
        installed.manifest.name,
        installed.manifest.dims,
        installed.dir.display(),
        installed.runtime.display()
    )
    .context("writing output")?;
    Ok(EXIT_OK)
}

pub(super) fn similar(args: SimilarArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let home = home()?;
    let Some(mut model) = Model::find(&home)? else {
        return Err(CliError::usage(anyhow::anyhow!(
            "similar compares embeddings, and no embedding model is installed; {}",
            model::INSTALL_HINT
        )));
    };
    sync_workspace(&home, &workspace, Embedding::All(&mut model, !args.json))?;
    let index = open_index(&home)?;
    let scope = scope_of(&index, &workspace)?;
    let model_id = model.id();
    if args.scan {
        let clusters = index
            .duplicate_clusters(&model_id, &scope, args.threshold, args.limit)
            .map_err(index_error)?;
        if clusters.is_empty() {
            eprintln!(
                "no near-duplicates at similarity {} or more",
                args.threshold
            );
            return Ok(EXIT_NO_RESULT);
        }
        for (n, cluster) in clusters.iter().enumerate() {
            if args.json {
                let line = serde_json::to_string(
                    &serde_json::json!({ "cluster": n + 1, "memories": cluster }),
                )
                .context("serializing a cluster")?;
                writeln!(out, "{line}").context("writing output")?;
            } else {
                writeln!(out, "cluster {}:", n + 1).context("writing output")?;
                for m in cluster {
                    writeln!(out, "  {}", similar_line(m, 70)).context("writing output")?;
                }
            }
        }
        return Ok(EXIT_OK);
    }
    let (vector, own_id) = match (&args.id, &args.text) {
        (Some(id), _) => {
            let view = MemoryDir::new(workspace.memory_dir())
                .read()
                .map_err(log_error)?;
            let memory = match view.find(id) {
                Lookup::Found(located) => located.memory.clone(),
                Lookup::Forgotten => {
                    return Err(CliError::usage(anyhow::anyhow!("ID: {id} is forgotten")));
                }
                Lookup::Missing => {
                    return Err(CliError::usage(anyhow::anyhow!(
                        "ID: no memory has the id `{id}`"
                    )));
                }
                Lookup::Ambiguous(ids) => {
                    return Err(CliError::usage(anyhow::anyhow!(
                        "ID: `{id}` matches several memories ({}); give more of the id",
                        ids.join(", ")
                    )));
                }
            };
            let vector = index
                .vector_of(&model_id, &index_sync::content_hash(&memory.content))
                .map_err(index_error)?
                .ok_or_else(|| {
                    anyhow::anyhow!("{} has no embedding yet: run `goldfish sync`", memory.id)
                })?;
            (vector, Some(memory.id))
        }
        (None, Some(text)) => {
            let vector = model
                .embedder()?
                .embed(&[text.as_str()], crate::embed::TextKind::Document)
                .context("embedding --text")?
                .remove(0);
            (vector, None)
        }
        (None, None) => unreachable!("clap requires an id, --text or --scan"),
    };
    let mut hits = index
        .similar(&model_id, &vector, &scope, args.threshold, args.limit + 1)
        .map_err(index_error)?;
    hits.retain(|hit| Some(&hit.id) != own_id.as_ref());
    hits.truncate(args.limit);
    if hits.is_empty() {
        eprintln!("nothing at similarity {} or more", args.threshold);
        return Ok(EXIT_NO_RESULT);
    }
    if args.json {
        output::memories_json(&hits, out)?;
    } else {
        for m in &hits {
            writeln!(out, "{}", similar_line(m, 90)).context("writing output")?;
        }
    }
    Ok(EXIT_OK)
}
