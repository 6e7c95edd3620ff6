//! One function per subcommand: validate arguments, call the library, print.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};

use anyhow::Context;
use jiff::Timestamp;

use super::model::{self, Model};
use super::ops::{self, Ctx, Forgot, Front, RecallInput, Recalled, StoreInput, Target};
use super::output;
use super::{
    AgentEvent, AgentHookArgs, BriefArgs, CliError, EXIT_NO_RESULT, EXIT_OK, ForgetArgs, HookName,
    InitArgs, ModelInstallArgs, RecallArgs, ReindexArgs, SimilarArgs, StatusArgs, StoreArgs,
    SyncArgs,
};
use crate::config::RepoConfig;
use crate::env;
use crate::git::{REPO_CONFIG, Workspace};
use crate::home::Home;
use crate::index::search::Scope;
use crate::index::sync::{self as index_sync, SyncError, SyncOptions, SyncReport};
use crate::index::{Index, IndexError};
use crate::log::{LogError, MemoryDir};

/// "Now", or the fixed time in `GOLDFISH_NOW`.
pub(super) fn now() -> Result<Timestamp, CliError> {
    match env::var(env::GOLDFISH_NOW) {
        Some(fixed) => {
            let at: Timestamp = fixed
                .parse()
                .with_context(|| {
                    format!("{}={fixed} is not an RFC 3339 timestamp", env::GOLDFISH_NOW)
                })
                .map_err(CliError::usage)?;
            // Ids count milliseconds since 1970; day files have 4-digit years.
            let year = at.to_zoned(jiff::tz::TimeZone::UTC).year();
            if !(1970..=9999).contains(&year) {
                return Err(CliError::usage(anyhow::anyhow!(
                    "{}={fixed} is outside the years 1970 to 9999",
                    env::GOLDFISH_NOW
                )));
            }
            Ok(at)
        }
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

pub(super) fn open_index(home: &Home) -> Result<Index, CliError> {
    Index::open(&home.index_path()).map_err(index_error)
}

impl From<IndexError> for CliError {
    fn from(err: IndexError) -> CliError {
        index_error(err)
    }
}

pub(super) fn index_error(err: IndexError) -> CliError {
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

/// Syncs `workspace` under its sync lock, then embeds as `embedding` says
/// under the home's embedding lock. `None` when another sync holds the
/// workspace's lock: it will pick up whatever this one would have seen.
///
/// Embedding runs after the workspace's lock is released, so a reader
/// waiting for a running sync ([`index_sync::wait_for_running`]) waits for
/// the keyword part (milliseconds), never for the model (seconds).
pub(super) fn sync_workspace(
    home: &Home,
    workspace: &Workspace,
    embedding: Embedding<'_>,
) -> Result<Option<SyncReport>, CliError> {
    let options = SyncOptions {
        abort_before_commit: env::var(env::GOLDFISH_FAULT).as_deref() == Some("sync-abort"),
        now: now().ok(),
    };
    // What a store set aside while git was busy goes into the log first.
    MemoryDir::of(workspace)
        .drain_journal(false)
        .map_err(log_error)?;
    let mut index = open_index(home)?;
    let Some(mut report) = index_sync::exclusive(&home.locks_dir(), workspace.root(), || {
        index_sync::sync(&mut index, workspace, options).map_err(sync_error)
    })?
    else {
        return Ok(None);
    };
    let (model, limit, progress) = match embedding {
        Embedding::Skip => return Ok(Some(report)),
        Embedding::UpTo(model, limit) => (model, Some(limit), false),
        Embedding::All(model, progress) => (model, None, progress),
    };
    // Embeddings are shared by every workspace of the home. Who asked for
    // everything waits for another embedder; who asked for a few leaves the
    // queue to it.
    let embedded = index_sync::embedding(&home.locks_dir(), limit.is_none(), || {
        // A new model queues everything again: vector spaces never mix.
        index.use_model(&model.id()).map_err(index_error)?;
        let pending = index.pending_embeddings().map_err(index_error)?;
        if pending == 0 {
            return Ok::<usize, CliError>(0);
        }
        let bar = progress_bar(progress, pending);
        let embedder = model.embedder()?;
        let embedded = index
            .embed_pending(embedder, limit, &mut |done, _| {
                bar.set_position(done as u64)
            })
            .context("embedding memories")?;
        bar.finish_and_clear();
        Ok(embedded.embedded)
    })?;
    report.embedded = embedded.unwrap_or(0);
    report.pending_embeddings = Some(index.pending_embeddings().map_err(index_error)?);
    Ok(Some(report))
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

pub(super) fn repo_config(workspace: &Workspace) -> Result<RepoConfig, CliError> {
    use crate::log::OpenError;
    let path = workspace.repo_config_path();
    // `.goldfish` itself a link: the config would come from outside.
    if let Err(err @ LogError::Unsafe { .. }) = MemoryDir::of(workspace).check_folder() {
        return Err(CliError::usage(err));
    }
    match crate::log::read_regular(&path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("{REPO_CONFIG} is not UTF-8 text"))
                .map_err(CliError::usage)?;
            RepoConfig::parse(&text)
                .with_context(|| format!("{REPO_CONFIG} is invalid"))
                .map_err(CliError::usage)
        }
        Err(OpenError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {
            Ok(RepoConfig::default())
        }
        Err(OpenError::Io(err)) => Err(anyhow::Error::new(err)
            .context(format!("cannot read {}", path.display()))
            .into()),
        Err(OpenError::Link) => Err(CliError::usage(anyhow::anyhow!(
            "{REPO_CONFIG} is a symbolic link, not followed (it could point out of the repository); replace it with a regular file"
        ))),
        Err(OpenError::NotRegular(kind)) => Err(CliError::usage(anyhow::anyhow!(
            "{REPO_CONFIG} is {kind}, not a regular file; replace it with one"
        ))),
    }
}

pub(super) fn log_error(err: LogError) -> CliError {
    match err {
        LogError::NotInitialized(_) | LogError::Unsafe { .. } | LogError::Timestamp(_) => {
            CliError::usage(err)
        }
        LogError::Io { .. } => anyhow::Error::new(err).into(),
    }
}

pub(super) fn init(args: InitArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let agent_error = |err: crate::agent::SetupError| match err {
        crate::agent::SetupError::Io { .. } => anyhow::Error::new(err).into(),
        _ => CliError::usage(err),
    };
    // An agent file that cannot be merged stops init before it changes
    // anything (its error says "nothing was changed").
    for agent in &args.agent {
        crate::agent::check(workspace.root(), *agent).map_err(agent_error)?;
    }
    let changes = crate::init::init(&workspace, args.force).map_err(|err| match err {
        crate::init::InitError::HooksOutside(_)
        | crate::init::InitError::LegacyTaken { .. }
        | crate::init::InitError::Unsafe(_)
        | crate::init::InitError::LinkedFile(_) => CliError::usage(err),
        other => anyhow::Error::new(other).into(),
    })?;
    let mut agent_changes = Vec::new();
    for agent in args.agent {
        agent_changes.extend(crate::agent::setup(workspace.root(), agent).map_err(agent_error)?);
    }
    if changes.is_empty() && agent_changes.is_empty() {
        writeln!(
            out,
            "goldfish is already set up in {}",
            workspace.root().display()
        )
        .context("writing output")?;
        return Ok(EXIT_OK);
    }
    for change in changes.iter().chain(&agent_changes) {
        writeln!(out, "{change}").context("writing output")?;
    }
    if !changes.is_empty() {
        writeln!(
            out,
            "commit .gitattributes and {} so teammates share them; each clone runs `goldfish init` once",
            crate::git::MEMORY_DIR
        )
        .context("writing output")?;
    }
    if !agent_changes.is_empty() {
        writeln!(
            out,
            "commit the agent files too; the agent starts `goldfish mcp` in this repository (goldfish must be on its PATH)"
        )
        .context("writing output")?;
    }
    Ok(EXIT_OK)
}

/// What `resolve` (or any command healing the clone) says of a file it merged.
pub(super) fn resolved_line(file: &crate::heal::Resolved) -> String {
    let mut line = format!(
        "merged {} again with the goldfish merge driver (both sides kept) and staged it; finish with `git commit`",
        file.path
    );
    for notice in &file.notices {
        line.push_str(&format!("\n  {}: {notice}", file.path));
    }
    line
}

pub(super) fn resolve(out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let resolved = crate::heal::resolve(&workspace).map_err(|err| match err {
        crate::heal::ResolveError::Refused { .. } | crate::heal::ResolveError::Unsafe(_) => {
            CliError::usage(err)
        }
        other => anyhow::Error::new(other).into(),
    })?;
    if resolved.is_empty() {
        writeln!(out, "no memory file is in conflict").context("writing output")?;
    }
    for file in &resolved {
        writeln!(out, "{}", resolved_line(file)).context("writing output")?;
    }
    Ok(EXIT_OK)
}

pub(super) fn store(args: StoreArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let content = if args.content == ["-"] {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the memory from stdin")?;
        bytes
    } else {
        args.content.join(" ").into_bytes()
    };
    let workspace = workspace()?;
    let mut ctx = Ctx::open(Front::Cli)?;
    let stored = ops::store(
        &mut ctx,
        &workspace,
        StoreInput {
            content,
            kind: args.kind,
            tags: args.tags.into_iter().collect(),
            files: args.files.into_iter().collect(),
            source: args.source,
            allow_secret: args.allow_secret,
            // A script keeps today's behaviour (write, then warn); a person
            // at a terminal is asked first.
            refuse_similar: !args.force && std::io::stdin().is_terminal(),
        },
    )?;
    if let Some(journaled) = &stored.journaled {
        eprintln!("note: {journaled}");
    }
    if let Some(reason) = &stored.not_indexed {
        eprintln!("warning: stored, but not indexed yet: {reason}");
    }
    for similar in &stored.similar {
        eprintln!("warning: this is {}", near_duplicate(similar, 80));
    }
    if args.json {
        writeln!(out, "{}", stored.entry.to_line()).context("writing output")?;
    } else {
        writeln!(
            out,
            "stored {} in {}",
            stored.entry.id(),
            stored.file.display()
        )
        .context("writing output")?;
    }
    Ok(EXIT_OK)
}

/// The distill command and its timeout: `GOLDFISH_DISTILL_COMMAND` /
/// `GOLDFISH_DISTILL_TIMEOUT`, else `[distill]` in `$GOLDFISH_HOME/config.toml`.
pub(super) fn distill_command(
    home: &Home,
) -> Result<Option<(String, std::time::Duration)>, CliError> {
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
/// `0.97 similar to ID (DATE): excerpt`: a near-duplicate `store` found.
pub(super) fn near_duplicate(m: &crate::index::search::IndexedMemory, width: usize) -> String {
    format!(
        "{:.2} similar to {} ({}): {}",
        m.similarity.unwrap_or(0.0),
        m.id,
        m.timestamp.get(..10).unwrap_or(&m.timestamp),
        excerpt(&m.content, width)
    )
}

pub(super) fn similar_line(m: &crate::index::search::IndexedMemory, width: usize) -> String {
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
    // Printed on stderr too (a near duplicate at store): never raw controls.
    let flat = super::output::terminal_safe(&flat).into_owned();
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}

/// The current workspace as a recall scope (empty when never synced).
pub(super) fn scope_of(index: &Index, workspace: &Workspace) -> Result<Scope, CliError> {
    let row = index
        .workspace_by_root(workspace.root())
        .map_err(index_error)?;
    Ok(Scope::Workspaces(
        row.map(|row| vec![row.id]).unwrap_or_default(),
    ))
}

pub(super) fn recall(args: RecallArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mut ctx = Ctx::open(Front::Cli)?;
    let query = args.query.join(" ");
    let input = RecallInput {
        query: Some(query),
        since: args.since,
        until: args.until,
        kinds: args.kinds,
        tags: args.tags,
        author: args.author,
        mode: args.mode,
        min_score: args.min_score,
        workspace: args.workspace,
        limit: args.limit,
        budget: args.budget,
        distill: args.distill,
        no_cache: args.no_cache,
    };
    match ops::recall(&mut ctx, &cwd, input)? {
        Recalled::Nothing => {
            eprintln!("no memories match");
            Ok(EXIT_NO_RESULT)
        }
        Recalled::Memories {
            hits,
            all_workspaces,
        } => {
            if args.json {
                output::memories_json(&hits, out)?;
            } else {
                output::memories_text(&hits, all_workspaces, out)?;
            }
            Ok(EXIT_OK)
        }
        Recalled::Digest(digested) => {
            output::digest(&digested, args.json, out)?;
            Ok(EXIT_OK)
        }
    }
}

pub(super) fn brief(args: BriefArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut ctx = Ctx::open(Front::Cli)?;
    match ops::brief(&mut ctx, &workspace, args.budget)? {
        Some(digested) => {
            output::digest(&digested, args.json, out)?;
            Ok(EXIT_OK)
        }
        None => {
            eprintln!("nothing to brief on yet: no checkpoints, plans, decisions or recent fixes");
            Ok(EXIT_NO_RESULT)
        }
    }
}

pub(super) fn forget(args: ForgetArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut ctx = Ctx::open(Front::Cli)?;
    match ops::forget(&mut ctx, &workspace, &args.id)? {
        Forgot::Already { id, at } => {
            writeln!(out, "{id} is already forgotten (since {at})").context("writing output")?;
        }
        Forgot::Done { target, tombstone } => {
            if args.json {
                writeln!(out, "{}", tombstone.to_line()).context("writing output")?;
            } else {
                writeln!(out, "forgot {target}").context("writing output")?;
            }
        }
    }
    Ok(EXIT_OK)
}

pub(super) fn hook(name: HookName, _args: &[OsString]) -> Result<u8, CliError> {
    // A hook must never fail or slow down the git command: any error is only
    // reported (hooks hide stderr unless GOLDFISH_HOOK_VERBOSE is set), and
    // `recall` syncs by itself if this one did not happen.
    match hook_sync(name) {
        Ok(message) => eprintln!("goldfish {}: {message}", name.as_str()),
        Err(err) => eprintln!("goldfish {}: {:#}", name.as_str(), err.error),
    }
    Ok(EXIT_OK)
}

/// Syncs in the foreground when little changed, else in a detached process.
fn hook_sync(name: HookName) -> Result<String, CliError> {
    const DEFAULT_BACKGROUND_BYTES: u64 = 1 << 20;
    let workspace = workspace()?;
    // A rebase runs post-rewrite before it removes its state: it is done
    // with the work tree then.
    MemoryDir::of(&workspace)
        .drain_journal(matches!(name, HookName::PostRewrite))
        .map_err(log_error)?;
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
        "synced {} ({} read, {})",
        report.workspace,
        output::count(report.files_read as u64, "file", "files"),
        output::memories(report.memories)
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
    Ok(
        spawn_detached(home, "sync.log", &["sync"], workspace.root())
            .context("cannot start the background sync")?,
    )
}

/// Starts `goldfish ARGS` in `dir`, detached (its own process group, stdin
/// closed), appending its output to `$GOLDFISH_HOME/logs/LOG`; returns the
/// log's path.
pub(super) fn spawn_detached(
    home: &Home,
    log: &str,
    args: &[&str],
    dir: &std::path::Path,
) -> anyhow::Result<std::path::PathBuf> {
    use std::os::unix::process::CommandExt;
    let logs = home.logs_dir();
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let log_path = logs.join(log);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("cannot open {}", log_path.display()))?;
    let exe = std::env::current_exe().context("cannot find the goldfish executable")?;
    std::process::Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().context("cannot share the log file")?)
        .stderr(log)
        .process_group(0)
        .spawn()?;
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
            "synced {}: {} ({} read of {}, +{} ~{} -{}, {} walked)",
            report.workspace,
            output::memories(report.memories),
            output::count(report.files_read as u64, "file", "files"),
            report.files,
            report.memories_added,
            report.memories_updated,
            report.memories_removed,
            output::count(report.commits_walked as u64, "commit", "commits")
        )
        .context("writing output")?;
        match report.pending_embeddings {
            Some(pending) => writeln!(
                out,
                "embedded {} ({pending} pending)",
                output::memories(report.embedded as u64)
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
                "rebuilt {}: {}",
                report.workspace,
                output::memories(report.memories)
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
    let mut ctx = Ctx::open(Front::Cli)?;
    if args.scan {
        let model = ops::require_model(&mut ctx.model, "similar")?;
        sync_workspace(&ctx.home, &workspace, Embedding::All(model, !args.json))?;
        let model_id = ctx.model.as_ref().expect("required above").id();
        let index = open_index(&ctx.home)?;
        let scope = scope_of(&index, &workspace)?;
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
    let target = match (args.id, args.text) {
        (Some(id), _) => Target::Id(id),
        (None, Some(text)) => Target::Text(text),
        (None, None) => unreachable!("clap requires an id, --text or --scan"),
    };
    let hits = ops::similar(
        &mut ctx,
        &workspace,
        target,
        args.threshold,
        args.limit,
        !args.json,
    )?;
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

pub(super) fn agent_hook(args: AgentHookArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    // An agent's hook must never break its session: problems are reported
    // on stderr and the exit status is always 0.
    let result = match args.event {
        AgentEvent::SessionStart => session_start(args.budget, out),
        AgentEvent::PreCompact => pre_compact(out),
        AgentEvent::PostToolUse | AgentEvent::PostToolUseFailure | AgentEvent::Stop => {
            unreachable!("capture events are dispatched to cli::capture")
        }
    };
    if let Err(err) = result {
        eprintln!("goldfish agent-hook: {:#}", err.error);
    }
    Ok(EXIT_OK)
}

/// Prints the briefing (nothing when there is nothing to brief on).
fn session_start(budget: usize, out: &mut dyn Write) -> Result<(), CliError> {
    let workspace = workspace()?;
    let mut ctx = Ctx::open(Front::Cli)?;
    if let Some(digested) = ops::brief(&mut ctx, &workspace, budget)? {
        writeln!(out, "Team memory (goldfish) for this repository:").context("writing output")?;
        output::digest(&digested, false, out)?;
    }
    Ok(())
}

/// Stores what stdin says as a checkpoint: plain text as it is, or, from a
/// Claude Code hook (JSON with `transcript_path`), the session's last request
/// and last answer. No LLM is called: a hook must stay cheap.
fn pre_compact(out: &mut dyn Write) -> Result<(), CliError> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read stdin")?;
    let content = match serde_json::from_str::<serde_json::Value>(&input) {
        Ok(event) if event.is_object() => match event["transcript_path"].as_str() {
            Some(path) => crate::agent::checkpoint_from_transcript(std::path::Path::new(path))
                .with_context(|| format!("cannot read the transcript {path}"))?,
            None => None,
        },
        _ => Some(input.trim().to_owned()).filter(|text| !text.is_empty()),
    };
    let Some(content) = content else {
        eprintln!("goldfish agent-hook: nothing to store");
        return Ok(());
    };
    let workspace = workspace()?;
    let mut ctx = Ctx::open(Front::Cli)?;
    let stored = ops::store(
        &mut ctx,
        &workspace,
        StoreInput {
            content: content.into_bytes(),
            kind: "checkpoint".to_owned(),
            tags: vec!["pre-compact".to_owned()],
            files: Vec::new(),
            source: Some("agent-hook".to_owned()),
            allow_secret: false,
            refuse_similar: false,
        },
    )?;
    writeln!(out, "stored checkpoint {}", stored.entry.id()).context("writing output")?;
    Ok(())
}
