//! One function per subcommand: validate arguments, call the library, print.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};

use anyhow::Context;

use super::output;
use super::{
    AgentArg, AgentEvent, AgentHookArgs, BriefArgs, CliError, EXIT_NO_RESULT, EXIT_OK, ForgetArgs,
    HookName, InitArgs, ModelInstallArgs, RecallArgs, ReindexArgs, ReviewArgs, ShowArgs,
    SimilarArgs, StatusArgs, StoreArgs, SyncArgs, TidyArgs, TrustArgs,
};
use crate::adapters::git::Workspace;
use crate::adapters::home::Home;
use crate::app::agent::SessionMarks;
use crate::app::forget::{self, Forgot, Released};
use crate::app::hook::{self, AfterGit};
use crate::app::model;
use crate::app::recall::{self, RecallInput, Recalled};
use crate::app::render::{count, index_line, memories, near_duplicate, similar_line};
use crate::app::session::{Need, Progress};
use crate::app::show::{self, Target};
use crate::app::store::{self, StoreInput};
use crate::app::sync::{
    self as app_sync, Embed, Rebuilt, current_workspace, problems, sync_workspace,
};
use crate::app::{AppError, Notice, Session};
use crate::app::{brief, digest};
use crate::domain::memory::Entry;

pub(super) fn workspace() -> Result<Workspace, CliError> {
    Ok(current_workspace()?)
}

pub(super) fn session() -> Result<Traced, CliError> {
    Ok(Traced(Session::open()?))
}

/// A command's session; with `GOLDFISH_TRACE=1`, the command's trace (index
/// opens, syncs, embeddings) goes to stderr when it ends.
pub(super) struct Traced(Session);

impl std::ops::Deref for Traced {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.0
    }
}

impl std::ops::DerefMut for Traced {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.0
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        if crate::adapters::env::var(crate::adapters::env::GOLDFISH_TRACE).is_some() {
            super::output::stderr_line(&format!("goldfish trace: {}", self.0.trace()));
        }
    }
}

/// A progress bar on stderr when it is a terminal and the work is long
/// enough to watch; hidden otherwise (hooks, pipes, small jobs).
pub(super) struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    /// Progress for `session`'s long embeddings, when `wanted`.
    pub(super) fn install(session: &mut Session, wanted: bool) {
        session.progress = wanted.then(|| Box::new(Bar(None)) as Box<dyn Progress + Send>);
    }
}

impl Progress for Bar {
    fn start(&mut self, total: u64) {
        if total < 64 || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "embedding {bar:30} {pos}/{len} memories ({per_sec}, {eta} left)",
            )
            .expect("a valid progress template"),
        );
        self.0 = Some(bar);
    }

    fn set(&mut self, done: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(done);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
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
            args.capture && agent == AgentArg::Claude,
            args.ask_agent,
        )
    };
    for agent in &args.agent {
        crate::app::agent::check(workspace.root(), (*agent).into()).map_err(agent_error)?;
        crate::app::agent::check_hooks(workspace.root(), (*agent).into(), &hooks_of(*agent))
            .map_err(agent_error)?;
    }
    if args.capture
        && !args
            .agent
            .iter()
            .any(|agent| matches!(agent, AgentArg::Claude))
    {
        return Err(CliError::usage(anyhow::anyhow!(
            "--capture works through Claude Code's hooks: give it with --agent claude"
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
        eprintln!("warning: {problem}\nhint: {fix}");
    }
    let mut agent_changes = Vec::new();
    for &agent in &args.agent {
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
            "commit .gitattributes and {} so teammates share them; a teammate's clone sets itself up at its first goldfish command",
            crate::adapters::git::MEMORY_DIR
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
    let mut session = session()?;
    let at_terminal = std::io::stdin().is_terminal();
    let mut asked: Vec<String> = Vec::new();
    let stored = store::store_asking(
        &mut session,
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
            refuse_similar: !args.force && at_terminal,
            session: None,
            vector: None,
            supersedes: args.supersedes,
            replaced: if at_terminal {
                store::FindReplaced::Ask
            } else {
                store::FindReplaced::Report
            },
        },
        &mut |candidate| {
            asked.push(candidate.memory.id.clone());
            ask_replaces(candidate)
        },
    );
    output::notices(&mut session);
    let stored = stored?;
    if let Some(journaled) = &stored.journaled {
        output::notice(&Notice::note(journaled.to_string()));
    }
    if let Some(reason) = &stored.not_indexed {
        output::notice(&Notice::warning(format!(
            "stored, but not indexed yet: {reason}"
        )));
    }
    for similar in &stored.similar {
        output::notice(&Notice::warning(format!(
            "this is {}",
            near_duplicate(similar, 80)
        )));
    }
    let superseded = match &stored.entry {
        Entry::Memory(m) => m.supersedes.clone(),
        _ => None,
    };
    for candidate in &stored.replaceable {
        if asked.contains(&candidate.memory.id) {
            continue;
        }
        output::notice(&Notice::note(format!(
            "it may replace {}; if it does: `goldfish forget {}`, then store it again with `--supersedes {}`",
            store::replaceable_line(candidate, 80),
            stored.entry.id(),
            candidate.memory.id
        )));
    }
    if args.json {
        writeln!(out, "{}", stored.entry.to_line()).context("writing output")?;
        for candidate in &stored.replaceable {
            let id = &candidate.memory.id;
            let decision = if superseded.as_ref() == Some(id) {
                "superseded"
            } else if asked.contains(id) {
                "declined"
            } else {
                "not-asked"
            };
            output::replaceable_json(candidate, decision, out)?;
        }
    } else {
        let superseding = match &stored.entry {
            Entry::Memory(m) => m
                .supersedes
                .as_deref()
                .map(|old| format!(", superseding {old}"))
                .unwrap_or_default(),
            _ => String::new(),
        };
        writeln!(
            out,
            "stored {} in {}{superseding}",
            stored.entry.id(),
            stored.file.display()
        )
        .context("writing output")?;
    }
    Ok(EXIT_OK)
}

/// Asks on stderr whether the memory being stored replaces `candidate`
/// (default no); the answer is read from stdin, a terminal.
fn ask_replaces(candidate: &store::Replaceable) -> bool {
    output::notice(&Notice::note(format!(
        "it may replace {}",
        store::replaceable_line(candidate, 100)
    )));
    eprint!("Does the new memory replace it? [y/N] ");
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

pub(super) fn recall(args: RecallArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mut session = session()?;
    let query = args.query.join(" ");
    let input = RecallInput {
        query: Some(query),
        since: args.since,
        until: args.until,
        kinds: args.kinds,
        tags: args.tags,
        author: args.author,
        mode: args.mode.map(Into::into),
        min_score: args.min_score,
        workspace: args.workspace,
        limit: args.limit,
        budget: args.budget,
        distill: args.distill.into(),
        no_cache: args.no_cache,
        captured: args.captured.into(),
        include_untrusted: args.include_untrusted,
        include_superseded: args.include_superseded,
        include_unrelated: args.include_unrelated,
    };
    let recalled = recall::recall(&mut session, &cwd, input);
    output::notices(&mut session);
    match recalled? {
        Recalled::Nothing => {
            eprintln!("no memories match");
            Ok(EXIT_NO_RESULT)
        }
        Recalled::NothingRelevant(judgement) => {
            if args.json {
                output::nothing_relevant_json(&judgement, out)?;
            }
            eprintln!("nothing relevant: {}", judgement.reason());
            eprintln!("hint: --include-unrelated shows the closest memories anyway");
            Ok(EXIT_NO_RESULT)
        }
        Recalled::Memories { hits, .. } if args.index => {
            let (mut counter, _) = digest::token_counter(&mut session)?;
            for memory in &hits {
                writeln!(out, "{}", index_line(memory, counter.as_mut()))
                    .context("writing output")?;
            }
            Ok(EXIT_OK)
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
    let mut session = session()?;
    let briefed = brief::brief(&mut session, &workspace, args.budget, &brief::Moment::Start);
    output::notices(&mut session);
    match briefed? {
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

pub(super) fn show(args: ShowArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let mut session = session()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let shown = show::show(&mut session, &cwd, &args.ids);
    output::notices(&mut session);
    let memories = shown?;
    if args.json {
        output::memories_json(&memories, out)?;
    } else {
        output::memories_text(&memories, false, out)?;
    }
    Ok(EXIT_OK)
}

pub(super) fn forget(args: ForgetArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    let forgot = forget::forget(&mut session, &workspace, &args.id);
    output::notices(&mut session);
    match forgot? {
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

pub(super) fn trust(args: TrustArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    let released = forget::release(&mut session, &workspace, &args.id);
    output::notices(&mut session);
    match released? {
        Released::NotQuarantined { id, reasons } => {
            writeln!(
                out,
                "{id} is not quarantined ({}): nothing to release",
                reasons.join(", ")
            )
            .context("writing output")?;
        }
        Released::Done {
            target,
            reasons,
            release,
        } => {
            if args.json {
                writeln!(out, "{}", release.to_line()).context("writing output")?;
            } else {
                writeln!(
                    out,
                    "released {target} (quarantined for: {}); commit .goldfish/memories to release it for the team",
                    reasons.join(", ")
                )
                .context("writing output")?;
            }
        }
    }
    Ok(EXIT_OK)
}

pub(super) fn review(args: ReviewArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let now = crate::app::session::Clock::from_env().now()?;
    let review =
        crate::app::review::review(&workspace, args.base.as_deref(), args.head.as_deref(), now)?;
    if args.json {
        let line = serde_json::to_string(&review).context("serializing the review")?;
        writeln!(out, "{line}").context("writing output")?;
    } else {
        write!(out, "{}", crate::app::review::text(&review)).context("writing output")?;
    }
    // 1: something would enter quarantine (or rewrites the log): the check
    // failed, as doctor's 1.
    Ok(if review.stopping > 0 {
        EXIT_NO_RESULT
    } else {
        EXIT_OK
    })
}

/// The pre-push hook (`init --review-on-push`): reviews each range git is
/// about to push (its lines on stdin); 1 stops the push. Unlike the other
/// hooks it reports on stderr and can fail: that is its job.
fn pre_push(args: &[OsString]) -> u8 {
    use crate::app::review::{self, Pushed};
    let remote = args
        .first()
        .map(|remote| remote.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut input = String::new();
    let reviewed = std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read what git passes the pre-push hook on stdin")
        .map_err(crate::app::AppError::from)
        .and_then(|_| {
            let workspace = current_workspace()?;
            let now = crate::app::session::Clock::from_env().now()?;
            review::pre_push(&workspace, &remote, &input, now)
        });
    let bypass = "push anyway with `git push --no-verify`";
    let pushed = match reviewed {
        Ok(pushed) => pushed,
        Err(err) => {
            output::stderr_line(&format!(
                "goldfish pre-push: could not review the memory changes of this push: {:#}\n{bypass}",
                err.error
            ));
            return EXIT_NO_RESULT;
        }
    };
    let mut stopped = Vec::new();
    for pushed in pushed {
        match pushed {
            Pushed::Skipped(name, why) => {
                output::stderr_line(&format!("goldfish pre-push: {name}: {why}"));
            }
            Pushed::Reviewed(name, review) if review.stopping > 0 => {
                output::stderr_line(&format!("goldfish pre-push: {name}:"));
                eprint!("{}", review::text(&review));
                stopped.push(name);
            }
            Pushed::Reviewed(name, review) => {
                let total = review.total();
                if total > 0 {
                    output::stderr_line(&format!(
                        "goldfish pre-push: {name}: {}, none would be quarantined",
                        crate::app::render::count(total as u64, "memory change", "memory changes")
                    ));
                }
            }
        }
    }
    if stopped.is_empty() {
        return EXIT_OK;
    }
    output::stderr_line(&format!(
        "goldfish pre-push: push stopped: {} brings memory changes that would be quarantined or rewrite the log (see above; `goldfish review` shows them again). Forget or fix them, or, if the team accepts them, {bypass}",
        stopped.join(", ")
    ));
    EXIT_NO_RESULT
}

pub(super) fn hook(name: HookName, args: &[OsString]) -> Result<u8, CliError> {
    if let HookName::PrePush = name {
        return Ok(pre_push(args));
    }
    // A hook must never fail or slow down the git command: any error is only
    // reported (hooks hide stderr unless GOLDFISH_HOOK_VERBOSE is set), and
    // `recall` syncs by itself if this one did not happen.
    match hook_sync(name) {
        Ok(message) => output::stderr_line(&format!("goldfish {}: {message}", name.as_str())),
        Err(err) => output::stderr_line(&format!("goldfish {}: {:#}", name.as_str(), err.error)),
    }
    Ok(EXIT_OK)
}

/// Syncs after git changed the work tree (see [`hook::after_git`]); what
/// happened, in a line.
fn hook_sync(name: HookName) -> Result<String, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    let done = hook::after_git(
        &mut session,
        &workspace,
        matches!(name, HookName::PostRewrite),
    );
    // What the journal's drain said (a store put back or left out): seen
    // with GOLDFISH_HOOK_VERBOSE, like the rest of a hook's report.
    output::notices(&mut session);
    Ok(match done? {
        AfterGit::Background { pending_bytes, log } => format!(
            "syncing {pending_bytes} bytes in the background (log: {})",
            log.display()
        ),
        AfterGit::Busy => "another sync is running; it will pick this up".to_owned(),
        AfterGit::Synced { report, embedding } => {
            let synced = format!(
                "synced {} ({} read, {})",
                report.workspace,
                count(report.files_read as u64, "file", "files"),
                memories(report.memories)
            );
            match embedding {
                Some((pending, log)) => format!(
                    "{synced}; embedding {pending} in the background (log: {})",
                    log.display()
                ),
                None => synced,
            }
        }
    })
}

pub(super) fn sync(args: SyncArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    // An installed model that cannot be used stops a sync: it says why.
    session.model(Need::Usable)?;
    Bar::install(&mut session, !args.quiet && !args.json);
    let Some(report) = sync_workspace(&mut session, &workspace, Embed::All)? else {
        if !args.quiet {
            eprintln!("another sync of this workspace is running; it will include your changes");
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

pub(super) fn reindex(args: ReindexArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let mut session = session()?;
    Bar::install(&mut session, !args.json);
    let current = workspace().ok();
    let rebuilt = app_sync::rebuild(&mut session, current.as_ref());
    output::notices(&mut session);
    for done in rebuilt? {
        match done {
            Rebuilt::Dropped { root, reason } => output::notice(&Notice::warning(format!(
                "{} is no longer a repository ({reason}); dropped",
                root.display()
            ))),
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

pub(super) fn model_install(args: ModelInstallArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let home = Home::from_env().map_err(AppError::input)?;
    let installed = crate::app::model::install(&home, args.from.as_deref())?;
    for model in &installed {
        let default = if model.manifest.name == crate::app::model::DEFAULT_MODEL {
            " (the default)"
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

/// `goldfish model warm`: serves until a rule of the warm process ends it;
/// says why on stderr (its log when a command started it).
pub(super) fn model_warm() -> Result<u8, CliError> {
    let home = Home::from_env().map_err(AppError::input)?;
    let ended = crate::app::model::serve_warm(&home)?;
    crate::front::cli::output::stderr_line(&format!("goldfish model warm: ended: {ended}"));
    Ok(EXIT_OK)
}

pub(super) fn similar(args: SimilarArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let mut session = session()?;
    Bar::install(&mut session, !args.json);
    if args.scan {
        let clusters =
            show::duplicate_clusters(&mut session, &workspace, args.threshold, args.limit);
        output::notices(&mut session);
        let clusters = clusters?;
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
    let hits = show::similar(&mut session, &workspace, target, args.threshold, args.limit);
    output::notices(&mut session);
    let hits = hits?;
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

pub(super) fn tidy(args: TidyArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    use crate::app::tidy::{self, TidyOptions};
    let workspace = workspace()?;
    let mut session = session()?;
    Bar::install(&mut session, !args.json);
    let asks = args.apply && !args.yes;
    if asks && !std::io::stdin().is_terminal() {
        return Err(CliError::usage(anyhow::anyhow!(
            "tidy --apply asks before it forgets, and no terminal can answer: pass --yes to forget everything it lists (`goldfish tidy` lists it first)"
        )));
    }
    let found = tidy::find(
        &mut session,
        &workspace,
        TidyOptions {
            older_than_days: args.older_than,
        },
    );
    output::notices(&mut session);
    let found = found?;
    // Groups in the order found: superseded, covered checkpoints,
    // near-duplicates, stale.
    let mut groups: Vec<(&'static str, Vec<&tidy::Proposal>)> = Vec::new();
    for proposal in &found.proposals {
        let name = proposal.why.name();
        match groups.iter_mut().find(|(group, _)| *group == name) {
            Some((_, members)) => members.push(proposal),
            None => groups.push((name, vec![proposal])),
        }
    }
    let mut forget: Vec<String> = Vec::new();
    for (name, members) in &groups {
        if !args.json {
            writeln!(out, "{} ({}):", heading(name), members.len()).context("writing output")?;
            for proposal in members {
                let m = &proposal.memory;
                // Ids and types arrive through git too: never raw controls.
                let safe = crate::app::render::terminal_safe;
                writeln!(
                    out,
                    "  {}  {}  {}\n      {}",
                    safe(&m.id),
                    safe(&m.kind),
                    crate::app::render::excerpt(&m.content, 70),
                    safe(&proposal.why.explain())
                )
                .context("writing output")?;
            }
        }
        if !args.apply {
            continue;
        }
        let confirmed = !asks || {
            eprint!(
                "Forget {} listed above? [y/N] ",
                crate::app::render::memories(members.len() as u64)
            );
            let mut answer = String::new();
            std::io::stdin()
                .read_line(&mut answer)
                .context("reading the answer")?;
            matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
        };
        if confirmed {
            forget.extend(members.iter().map(|p| p.memory.id.clone()));
        }
    }
    let forgotten: Vec<String> = if forget.is_empty() {
        Vec::new()
    } else {
        let written = tidy::forget_all(&mut session, &workspace, &forget);
        output::notices(&mut session);
        written?
            .iter()
            .filter_map(|entry| match entry {
                Entry::Tombstone(t) => Some(t.forgets.clone()),
                _ => None,
            })
            .collect()
    };
    if args.json {
        for proposal in &found.proposals {
            let mut line = serde_json::json!({
                "why": proposal.why.name(),
                "because_of": proposal.why.because_of(),
                "reason": proposal.why.explain(),
                "memory": proposal.memory,
            });
            if args.apply {
                line["forgotten"] = forgotten.contains(&proposal.memory.id).into();
            }
            let line = serde_json::to_string(&line).context("serializing a proposal")?;
            writeln!(out, "{line}").context("writing output")?;
        }
    }
    let listed = crate::app::render::memories(found.proposals.len() as u64);
    if found.proposals.is_empty() {
        eprintln!(
            "nothing to tidy among {}",
            crate::app::render::memories(found.memories as u64)
        );
    } else if !args.apply {
        eprintln!(
            "nothing changed: `goldfish tidy --apply` forgets these {listed} (it asks first; tombstones, which `git revert` undoes)"
        );
    } else {
        eprintln!(
            "forgot {} of {listed}: tombstones in .goldfish/memories/, shared once committed; `git revert` of that commit brings them back",
            forgotten.len()
        );
    }
    Ok(EXIT_OK)
}

/// A group of `tidy`'s list, for people.
fn heading(why: &str) -> &'static str {
    match why {
        "superseded" => "superseded: a later memory replaces each",
        "covered-checkpoint" => "checkpoints a later one covers",
        "near-duplicate" => "near-duplicates of a newer memory",
        "stale" => {
            "stale: a file each names was deleted, its commit reverted, or its branch deleted unmerged"
        }
        _ => "other",
    }
}

pub(super) fn agent_hook(args: AgentHookArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    // An agent's hook must never break its session: problems are reported
    // on stderr and the exit status is always 0.
    let result = match args.event {
        AgentEvent::SessionStart => session_start(args.budget, args.json, out),
        AgentEvent::PreCompact => pre_compact(),
        AgentEvent::PostToolUse
        | AgentEvent::PostToolUseFailure
        | AgentEvent::Stop
        | AgentEvent::UserPrompt => {
            unreachable!("capture and prompt events are dispatched to their modules")
        }
    };
    if let Err(err) = result {
        output::stderr_line(&format!("goldfish agent-hook: {:#}", err.error));
    }
    Ok(EXIT_OK)
}

/// Prints the briefing (nothing when there is nothing to brief on), for the
/// moment the agent's payload names (`source`: after a compaction the
/// session's own checkpoint first, on resume what is new since its last
/// briefing), and notes when the session was briefed.
fn session_start(budget: usize, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let payload = hook_payload();
    let session_id = payload.as_ref().and_then(session_id_of);
    let workspace = workspace()?;
    let mut session = session()?;
    let mut marks = session_id
        .as_deref()
        .map(|id| SessionMarks::of(&session.home, id))
        .unwrap_or_default();
    let moment = match payload.as_ref().and_then(|p| p["source"].as_str()) {
        Some("compact") => brief::Moment::Compacted {
            checkpoint: marks.checkpoint.clone(),
        },
        Some("resume") => brief::Moment::Resumed {
            since: marks.seen.as_deref().and_then(|seen| seen.parse().ok()),
        },
        _ => brief::Moment::Start,
    };
    let briefed = brief::brief(&mut session, &workspace, budget, &moment);
    output::notices(&mut session);
    if let Some(digested) = briefed? {
        if json {
            let mut text = Vec::new();
            output::digest(&digested, false, &mut text)?;
            let answer = serde_json::json!({
                "hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": String::from_utf8_lossy(&text),
                }
            });
            writeln!(out, "{answer}").context("writing output")?;
        } else {
            output::digest(&digested, false, out)?;
        }
    }
    if let Some(id) = &session_id {
        marks.seen = Some(session.now()?.to_string());
        marks
            .save(&session.home, id)
            .context("cannot keep the session's briefing time")?;
    }
    Ok(())
}

/// The agent session a hook's payload names (`session_id`), when it is a
/// plausible one (not empty, at most 256 bytes).
pub(super) fn session_id_of(payload: &serde_json::Value) -> Option<String> {
    payload["session_id"]
        .as_str()
        .filter(|id| !id.is_empty() && id.len() <= 256)
        .map(str::to_owned)
}

/// The JSON an agent's hook gives on stdin, when it gives one: nothing from
/// a terminal, and nothing from a stdin still open after a second (a hook
/// must never hang its agent). At most 1 MiB is read.
pub(super) fn hook_payload() -> Option<serde_json::Value> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut input = String::new();
        let read = std::io::stdin()
            .take(1 << 20)
            .read_to_string(&mut input)
            .map(|_| input);
        let _ = send.send(read);
    });
    let input = receive
        .recv_timeout(std::time::Duration::from_secs(1))
        .ok()?
        .ok()?;
    serde_json::from_str::<serde_json::Value>(&input)
        .ok()
        .filter(serde_json::Value::is_object)
}

/// Stores what stdin says as a checkpoint: plain text as it is, or, from a
/// Claude Code hook (JSON with `transcript_path`), the session's last request
/// and last answer. No LLM is called: a hook must stay cheap.
fn pre_compact() -> Result<(), CliError> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read stdin")?;
    let event = serde_json::from_str::<serde_json::Value>(&input).ok();
    let session_id = event.as_ref().and_then(session_id_of);
    let content = match event {
        Some(event) if event.is_object() => match event["transcript_path"].as_str() {
            Some(path) => crate::app::agent::checkpoint_from_transcript(std::path::Path::new(path))
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
    let mut session = session()?;
    let stored = store::store(
        &mut session,
        &workspace,
        StoreInput {
            content: content.into_bytes(),
            kind: "checkpoint".to_owned(),
            tags: vec!["pre-compact".to_owned()],
            files: Vec::new(),
            source: Some("agent-hook".to_owned()),
            allow_secret: false,
            refuse_similar: false,
            session: None,
            vector: None,
            supersedes: None,
            replaced: store::FindReplaced::Skip,
        },
    );
    output::notices(&mut session);
    let stored = stored?;
    // Not on stdout: Claude Code adds a PreCompact hook's stdout to the
    // compaction instructions.
    eprintln!("goldfish: stored checkpoint {}", stored.entry.id());
    if let Some(id) = session_id {
        let mut marks = SessionMarks::of(&session.home, &id);
        marks.checkpoint = Some(stored.entry.id().to_owned());
        marks
            .save(&session.home, &id)
            .context("cannot keep the session's checkpoint")?;
    }
    Ok(())
}
