//! One function per subcommand: validate arguments, call the library, print.

use std::ffi::OsString;
use std::io::{Read, Write};

use anyhow::Context;
use jiff::Timestamp;

use super::output;
use super::{
    CliError, EXIT_NO_RESULT, EXIT_OK, ForgetArgs, HookName, InitArgs, RecallArgs, StoreArgs,
};
use crate::config::RepoConfig;
use crate::git::{REPO_CONFIG, Workspace};
use crate::log::{LogError, MemoryDir};
use crate::memory::view::Lookup;
use crate::memory::{self, Entry, Memory, Tombstone};
use crate::recall::{self, Request};
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
    let workspace = workspace()?;
    let config = repo_config(&workspace)?;
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
    let view = MemoryDir::new(workspace.memory_dir())
        .read()
        .map_err(log_error)?;
    output::warn_problems(&view.problems, crate::git::MEMORY_DIR);
    let hits = recall::recall(&view, &request);
    if hits.is_empty() {
        eprintln!("no memories match");
        return Ok(EXIT_NO_RESULT);
    }
    if args.json {
        output::hits_json(&hits, out)?;
    } else {
        output::hits_text(&hits, out)?;
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
    if args.json {
        writeln!(out, "{}", entry.to_line()).context("writing output")?;
    } else {
        writeln!(out, "forgot {target}").context("writing output")?;
    }
    Ok(EXIT_OK)
}

pub(super) fn hook(name: HookName, _args: &[OsString]) -> Result<u8, CliError> {
    // Hooks must never fail a git command. Recall reads the work tree, so
    // there is nothing to refresh yet; the index (when present) syncs here.
    let _ = name;
    Ok(EXIT_OK)
}
