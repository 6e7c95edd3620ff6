//! What git and agents call: `review` and the pre-push hook, `hook` (git's
//! hooks), and `agent-hook` (the briefing, the pre-compaction checkpoint).

use std::ffi::OsString;
use std::io::{Read, Write};

use anyhow::Context;

use super::output;
use super::session::{session, workspace};
use super::{CliError, EXIT_NO_RESULT, EXIT_OK};
use crate::app::agent::SessionMarks;
use crate::app::brief;
use crate::app::hook::{self, AfterGit};
use crate::app::render::{self, count, memories};
use crate::app::store::{self, StoreInput};
use crate::app::sync::current_workspace;

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct ReviewArgs {
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

pub(super) fn review(args: ReviewArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let workspace = workspace()?;
    let now = crate::app::session::Clock::from_env().now()?;
    let review =
        crate::app::review::review(&workspace, args.base.as_deref(), args.head.as_deref(), now)?;
    if args.json {
        let line = serde_json::to_string(&crate::front::wire::Review::from(&review))
            .context("serializing the review")?;
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
            crate::front::stderr::line(&format!(
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
                crate::front::stderr::line(&format!("goldfish pre-push: {name}: {why}"));
            }
            Pushed::Reviewed(name, review) if review.stopping > 0 => {
                crate::front::stderr::line(&format!("goldfish pre-push: {name}:"));
                crate::front::stderr::text(&review::text(&review));
                stopped.push(name);
            }
            Pushed::Reviewed(name, review) => {
                let total = review.total();
                if total > 0 {
                    crate::front::stderr::line(&format!(
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
    crate::front::stderr::line(&format!(
        "goldfish pre-push: push stopped: {} brings memory changes that would be quarantined or rewrite the log (see above; `goldfish review` shows them again). Forget or fix them, or, if the team accepts them, {bypass}",
        stopped.join(", ")
    ));
    EXIT_NO_RESULT
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct HookArgs {
    /// The hook git ran
    #[arg(value_enum)]
    name: HookName,
    /// The arguments git passed to the hook
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
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

pub(super) fn hook(HookArgs { name, args }: HookArgs) -> Result<u8, CliError> {
    if let HookName::PrePush = name {
        return Ok(pre_push(&args));
    }
    // A hook must never fail or slow down the git command: any error is only
    // reported (hooks hide stderr unless GOLDFISH_HOOK_VERBOSE is set), and
    // `recall` syncs by itself if this one did not happen.
    match hook_sync(name) {
        Ok(message) => {
            crate::front::stderr::line(&format!("goldfish {}: {message}", name.as_str()))
        }
        Err(err) => {
            crate::front::stderr::line(&format!("goldfish {}: {:#}", name.as_str(), err.error))
        }
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
        AfterGit::Background {
            pending_bytes,
            log_path,
        } => format!(
            "syncing {pending_bytes} bytes in the background (log: {})",
            log_path.display()
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
                Some((pending, log_path)) => format!(
                    "{synced}; embedding {pending} in the background (log: {})",
                    log_path.display()
                ),
                None => synced,
            }
        }
    })
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct AgentHookArgs {
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
    pub(super) explain: bool,
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

/// A command line this goldfish cannot read, from an agent's hook, a git
/// hook or git's merge driver: what a newer goldfish's configuration names
/// (a hook event, a flag, a git hook) met an older goldfish, a teammate's.
/// The usage error's exit status 2 would block the agent (Claude Code and
/// Codex CLI block the prompt or the tool on a hook's exit 2 and give its
/// stderr to the model; Gemini CLI takes 2 as a blocking error) or stop a
/// push (pre-push), so instead a line says what was skipped (on stderr; in
/// the hook log under Gemini CLI), nothing goes to stdout, and the exit
/// status is 0. The merge driver merges with the arguments it knows (`%O
/// %A %B %P`) when more follow them. `None`: the usage error, as for any
/// other command (and for a person at a terminal).
pub(super) fn unknown_to_this_version(args: &[OsString], err: &clap::Error) -> Option<u8> {
    use std::io::IsTerminal;
    let command = args.get(1)?.to_str()?;
    let person = std::io::stdin().is_terminal();
    let line = args[1..]
        .iter()
        .map(|arg| arg.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let why = err.to_string();
    let why = why.lines().next().unwrap_or_default();
    let why = why.strip_prefix("error: ").unwrap_or(why);
    // Both quote a stranger's config: on one line, bounded.
    let (line, why) = (render::excerpt(&line, 200), render::excerpt(why, 200));
    let this = format!(
        "goldfish {command}: this goldfish ({}) cannot read `goldfish {line}` ({why})",
        env!("CARGO_PKG_VERSION")
    );
    let update = "a newer goldfish wrote this hook; update goldfish to run it";
    match command {
        "agent-hook" if !person => {
            if crate::app::agent::run_by_gemini() {
                let event = args.get(2).map(|event| event.to_string_lossy());
                let event = event.as_deref().unwrap_or("agent-hook");
                if let Some(log) = crate::app::agent::HookLog::from_env(event) {
                    crate::front::stderr::into_hook_log(log);
                }
            }
            crate::front::stderr::line(&format!("{this}; skipped: {update}"));
            let _ = hook_payload();
            Some(EXIT_OK)
        }
        "hook" if !person => {
            crate::front::stderr::line(&format!("{this}; skipped: {update}"));
            let _ = hook_payload();
            Some(EXIT_OK)
        }
        "merge-driver" => {
            // Only what follows `%O %A %B %P` can be left out: anything
            // before them would shift which file is ours.
            let known = args.get(2..6)?;
            if known
                .iter()
                .any(|arg| arg.to_string_lossy().starts_with('-'))
                || !known[..3]
                    .iter()
                    .all(|file| std::path::Path::new(file).is_file())
            {
                return None;
            }
            crate::front::stderr::line(&format!(
                "{this}; merging with the first four (%O %A %B %P): a newer goldfish declared this driver"
            ));
            Some(crate::front::driver::run(
                std::path::Path::new(&known[0]),
                std::path::Path::new(&known[1]),
                std::path::Path::new(&known[2]),
                Some(&known[3]),
                &mut std::io::stderr(),
            ))
        }
        _ => None,
    }
}

/// `agent-hook EVENT`, answering as the client that runs it reads an
/// answer. Gemini CLI shows a hook's stderr to the user whenever its
/// stdout is empty: under it the hook's notes go to the hook log, and an
/// error the hook met, when it printed nothing else, becomes its JSON
/// `systemMessage` (what Gemini CLI shows of a hook).
pub(super) fn agent_hook_answering(
    args: AgentHookArgs,
    out: &mut dyn Write,
) -> Result<u8, CliError> {
    let gemini = crate::app::agent::run_by_gemini() && !args.explain;
    if gemini && let Some(log) = crate::app::agent::HookLog::from_env(&args.event.name()) {
        crate::front::stderr::into_hook_log(log);
    }
    let mut answer = Counted { out, bytes: 0 };
    let exit = match args.event {
        AgentEvent::PostToolUse | AgentEvent::PostToolUseFailure => {
            Ok(super::capture::hook("tool"))
        }
        AgentEvent::Stop if args.ask_agent => Ok(super::capture::stop_asking(&mut answer)),
        AgentEvent::Stop | AgentEvent::SessionEnd => Ok(super::capture::hook("stop")),
        AgentEvent::UserPrompt => Ok(super::prompt::hook(args.explain, &mut answer)),
        _ => agent_hook(args, &mut answer),
    };
    let errors = crate::front::stderr::hook_errors();
    if gemini && answer.bytes == 0 && !errors.is_empty() {
        let message = serde_json::json!({ "systemMessage": errors.join("\n") });
        // A hook never fails its agent, not even for want of stdout.
        let _ = writeln!(answer.out, "{message}");
    }
    exit
}

/// A writer that counts what passes through it.
struct Counted<'a> {
    out: &'a mut dyn Write,
    bytes: usize,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.out.write(buf)?;
        self.bytes += written;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

fn agent_hook(args: AgentHookArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    // An agent's hook must never break its session: problems are reported
    // on stderr and the exit status is always 0.
    let result = match args.event {
        AgentEvent::SessionStart => session_start(args.budget, args.json, out),
        AgentEvent::PreCompact => pre_compact(),
        AgentEvent::PostToolUse
        | AgentEvent::PostToolUseFailure
        | AgentEvent::Stop
        | AgentEvent::SessionEnd
        | AgentEvent::UserPrompt => {
            unreachable!("capture and prompt events are dispatched to their modules")
        }
    };
    if let Err(err) = result {
        crate::front::stderr::hook_error(&format!("goldfish agent-hook: {:#}", err.error));
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
        // What the briefing quoted, the prompt hook does not add again.
        for picked in &digested.report.sentences {
            if !marks.given.contains(&picked.memory) {
                marks.given.push(picked.memory.clone());
            }
        }
        let over = marks
            .given
            .len()
            .saturating_sub(crate::app::prompt::MAX_SEEN);
        marks.given.drain(..over);
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
/// and last answer; nothing from a payload that tells of no compaction
/// (Gemini CLI's `PreCompress`: [`crate::app::agent::compacts`]). No LLM is
/// called: a hook must stay cheap.
fn pre_compact() -> Result<(), CliError> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read stdin")?;
    let event = serde_json::from_str::<serde_json::Value>(&input).ok();
    // Gemini CLI's PreCompress tells of no compaction: nothing is stored,
    // and nothing said (Gemini CLI shows a hook's stderr to the user).
    if !crate::app::agent::compacts(event.as_ref().filter(|event| event.is_object())) {
        return Ok(());
    }
    let session_id = event.as_ref().and_then(session_id_of);
    let cwd = event
        .as_ref()
        .and_then(|event| event["cwd"].as_str())
        .map(std::path::PathBuf::from)
        .filter(|cwd| cwd.is_absolute());
    let content = match event {
        Some(event) if event.is_object() => match event["transcript_path"].as_str() {
            Some(path) => crate::app::agent::checkpoint_from_transcript(std::path::Path::new(path))
                .with_context(|| format!("cannot read the transcript {path}"))?,
            None => None,
        },
        _ => Some(input.trim().to_owned()).filter(|text| !text.is_empty()),
    };
    let Some(content) = content else {
        crate::front::stderr::line("goldfish agent-hook: nothing to store");
        return Ok(());
    };
    let workspace = workspace()?;
    let mut session = session()?;
    // What capture removed in the session stays out of its checkpoint.
    let content = match &session_id {
        Some(id) => {
            let cwd = match cwd {
                Some(cwd) => cwd,
                None => std::env::current_dir().context("cannot read the current directory")?,
            };
            crate::app::capture::hide_session_secrets(&session.home, &cwd, id, &content)
        }
        None => content,
    };
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
            agent_session: None,
            vector: None,
            supersedes: None,
            replaced: store::FindReplaced::Skip,
        },
    );
    output::notices(&mut session);
    let stored = stored?;
    // Not on stdout: Claude Code adds a PreCompact hook's stdout to the
    // compaction instructions.
    crate::front::stderr::line(&format!(
        "goldfish: stored checkpoint {}",
        stored.entry.id()
    ));
    if let Some(id) = session_id {
        let mut marks = SessionMarks::of(&session.home, &id);
        marks.checkpoint = Some(stored.entry.id().to_owned());
        marks
            .save(&session.home, &id)
            .context("cannot keep the session's checkpoint")?;
    }
    Ok(())
}
