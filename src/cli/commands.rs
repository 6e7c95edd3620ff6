//! One function per subcommand: validate arguments, call the library, print.

use std::ffi::OsString;
use std::io::{Read, Write};

use anyhow::Context;
use jiff::Timestamp;

use super::output;
use super::{
    CliError, EXIT_NO_RESULT, EXIT_OK, ForgetArgs, HookName, InitArgs, ModelInstallArgs,
    RecallArgs, ReindexArgs, StatusArgs, StoreArgs, SyncArgs,
};
use crate::config::RepoConfig;
use crate::git::{REPO_CONFIG, Workspace};
use crate::home::Home;
use crate::index::search::Scope;
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

fn workspace() -> Result<Workspace, CliError> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Workspace::discover(&cwd).map_err(CliError::usage)
}

fn home() -> Result<Home, CliError> {
    Home::from_env().map_err(CliError::usage)
}

fn open_index(home: &Home) -> Result<Index, CliError> {
    Index::open(&home.index_path()).map_err(index_error)
}

fn index_error(err: IndexError) -> CliError {
    anyhow::Error::new(err).into()
}

fn sync_error(err: SyncError) -> CliError {
    anyhow::Error::new(err).context("sync failed").into()
}

/// Syncs `workspace` under its sync lock. `None` when another sync holds the
/// lock: it will pick up whatever this one would have seen.
pub(super) fn sync_workspace(
    home: &Home,
    workspace: &Workspace,
) -> Result<Option<SyncReport>, CliError> {
    let options = SyncOptions {
        abort_before_commit: env::var(env::GOLDFISH_FAULT).as_deref() == Some("sync-abort"),
    };
    let mut index = open_index(home)?;
    index_sync::exclusive(&home.locks_dir(), workspace.root(), || {
        index_sync::sync(&mut index, workspace, options).map_err(sync_error)
    })
    .map_err(|err: CliError| err)
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
    // sync catches up), so a broken index never loses a store.
    if let Err(err) = home().and_then(|home| sync_workspace(&home, &workspace)) {
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
    };
    // Recall never trusts a stale index: the sync is incremental, so when
    // nothing changed it only compares HEAD and file stats.
    if let Some(workspace) = &workspace
        && let Some(report) = sync_workspace(&home, workspace)?
    {
        output::warn_problems(&report.problems, crate::git::MEMORY_DIR);
    }
    let index = open_index(&home)?;
    let scope = match args.workspace.as_str() {
        "all" => Scope::All,
        "current" => {
            let root = workspace.as_ref().expect("checked above").root();
            let row = index.workspace_by_root(root).map_err(index_error)?;
            Scope::Workspaces(row.map(|row| vec![row.id]).unwrap_or_default())
        }
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
    let hits = index.recall(&request, &scope).map_err(index_error)?;
    if hits.is_empty() {
        eprintln!("no memories match");
        return Ok(EXIT_NO_RESULT);
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
    if let Err(err) = home().and_then(|home| sync_workspace(&home, &workspace)) {
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
    Ok(match sync_workspace(&home, &workspace)? {
        Some(report) => format!(
            "synced {} ({} files read, {} memories)",
            report.workspace, report.files_read, report.memories
        ),
        None => "another sync is running; it will pick this up".to_owned(),
    })
}

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
    let Some(report) = sync_workspace(&home, &workspace)? else {
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
    }
    Ok(EXIT_OK)
}

pub(super) fn status(args: StatusArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let home = home()?;
    let index = open_index(&home)?;
    let status = super::status::collect(&workspace, &index)?;
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
        let Some(report) = sync_workspace(&home, &workspace)? else {
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
