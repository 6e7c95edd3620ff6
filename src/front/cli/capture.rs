//! `agent-hook post-tool-use|stop`, `capture status|work` and
//! `model install --capture`: [`crate::app::capture`] on the command line.

use std::io::{Read, Write};

use anyhow::Context;

use super::{CliError, EXIT_OK};
use crate::app::{Home, Session, capture};

/// Queues the event on stdin and makes sure a worker runs. Never fails and
/// never waits on the worker: problems go to stderr, the exit status is 0.
pub(super) fn hook(kind: &str) -> u8 {
    if let Err(err) = queue_event(kind) {
        crate::front::stderr::hook_error(&format!("goldfish agent-hook: {err:#}"));
    }
    EXIT_OK
}

/// How much of a payload over the limit is still read (and thrown away),
/// so the agent's write of it completes.
const DRAIN_BYTES: u64 = 64 << 20;

/// `agent-hook stop --ask-agent`: the Stop event queued for capture, then,
/// once a session and only after it changed code, Claude Code's `{"decision":
/// "block", "reason": …}` on stdout, which has the agent store what a
/// teammate should know before it stops. Never fails the agent: exit 0.
pub(super) fn stop_asking(out: &mut dyn Write) -> u8 {
    match queue_event("stop") {
        Ok(Some((home, payload))) => {
            if let Some(answer) = capture::ask_agent(&home, &payload)
                && let Err(err) = writeln!(out, "{answer}")
            {
                crate::front::stderr::hook_error(&format!("goldfish agent-hook: {err:#}"));
            }
        }
        Ok(None) => {}
        Err(err) => crate::front::stderr::hook_error(&format!("goldfish agent-hook: {err:#}")),
    }
    EXIT_OK
}

/// Reads the event from stdin and queues it; returns the home and the
/// payload read, `None` when capture is off.
fn queue_event(kind: &str) -> anyhow::Result<Option<(Home, Vec<u8>)>> {
    let mut payload = Vec::new();
    let mut stdin = std::io::stdin().lock();
    (&mut stdin)
        .take(capture::MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut payload)
        .context("cannot read stdin")?;
    if payload.len() as u64 > capture::MAX_PAYLOAD_BYTES {
        let _ = std::io::copy(&mut stdin.take(DRAIN_BYTES), &mut std::io::sink());
    }
    // A teammate's way out of the hooks the repository commits.
    if capture::opted_out() {
        return Ok(None);
    }
    let home = Home::from_env()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    if let Some(notice) = capture::hook(&home, &cwd, kind, &payload)? {
        crate::front::stderr::line(&format!("goldfish agent-hook: {}", notice.text()));
    }
    Ok(Some((home, payload)))
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct CaptureWorkArgs {
    /// Wait for a running worker to finish instead of leaving the queues to it
    #[arg(long)]
    wait: bool,
}

/// The worker (started by the hook, its output in the capture log).
pub(super) fn work(
    CaptureWorkArgs { wait }: CaptureWorkArgs,
    out: &mut dyn Write,
) -> Result<u8, CliError> {
    let mut session = Session::open()?;
    let total = capture::work(&mut session, wait, &mut |notice| {
        crate::front::stderr::notice(&notice)
    })?;
    let at = session.now()?;
    writeln!(
        out,
        "{at}: {} events, {} stored, {} skipped, {} waiting, {} dropped",
        total.events, total.stored, total.skipped, total.waiting, total.dropped
    )
    .context("writing output")?;
    Ok(EXIT_OK)
}

#[derive(Debug, clap::Args)]
#[deny(missing_docs)]
pub(super) struct CaptureStatusArgs {
    /// Print one JSON object
    #[arg(long)]
    json: bool,
}

/// `capture status`: this repository's queue and the status log's counts.
pub(super) fn status(
    CaptureStatusArgs { json }: CaptureStatusArgs,
    out: &mut dyn Write,
) -> Result<u8, CliError> {
    let home = Home::from_env().map_err(CliError::usage)?;
    let workspace = super::session::workspace()?;
    let status = capture::status(&home, &workspace);
    if json {
        writeln!(out, "{}", status_json(&status)).context("writing output")?;
        return Ok(EXIT_OK);
    }
    writeln!(
        out,
        "queued {}, stored {}, skipped {}, waiting {}, dropped {}",
        status.queued, status.stored, status.skipped, status.waiting, status.dropped
    )
    .context("writing output")?;
    for memory in &status.stored_memories {
        let line = if memory.first_line.is_empty() {
            String::new()
        } else {
            format!(": {}", memory.first_line)
        };
        writeln!(
            out,
            "  stored {} {}{}",
            memory.id,
            memory.kind,
            crate::app::render::terminal_safe(&line)
        )
        .context("writing output")?;
    }
    if status.stored > status.stored_memories.len() {
        writeln!(
            out,
            "  (the newest {} of {} stored)",
            status.stored_memories.len(),
            status.stored
        )
        .context("writing output")?;
    }
    for (reason, n) in &status.reasons {
        writeln!(out, "  {n} {reason}").context("writing output")?;
    }
    let removed = &status.instructions;
    if removed.spans > 0 {
        let rules: Vec<String> = removed
            .rules
            .iter()
            .map(|(rule, n)| format!("{rule} ×{n}"))
            .collect();
        writeln!(
            out,
            "  {} instruction-like {} removed from {} {} ({}): never stored",
            removed.spans,
            plural(removed.spans, "span", "spans"),
            removed.events,
            plural(removed.events, "event", "events"),
            rules.join(", ")
        )
        .context("writing output")?;
    }
    writeln!(
        out,
        "judge: {}",
        crate::app::render::terminal_safe(&status.judge.describe())
    )
    .context("writing output")?;
    Ok(EXIT_OK)
}

/// `capture status --json`'s one object.
fn status_json(status: &capture::Status) -> serde_json::Value {
    serde_json::json!({
        "queued": status.queued,
        "stored": status.stored,
        "in_bug_fixes": status.in_fixes,
        "skipped": status.skipped,
        "waiting": status.waiting,
        "dropped": status.dropped,
        "stored_ids": status.stored_ids,
        "stored_memories": status.stored_memories,
        "reasons": status.reasons,
        "instructions_removed": status.instructions,
        "judge": status.judge.kind(),
        "judge_detail": status.judge.describe(),
    })
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// `model install --capture`.
pub(super) fn model_install(out: &mut dyn Write) -> Result<u8, CliError> {
    if !capture::CAPTURE_MODEL_BUILT {
        return Err(CliError::usage(anyhow::anyhow!(capture::NO_CAPTURE_MODEL)));
    }
    let home = Home::from_env().map_err(CliError::usage)?;
    let path = capture::install_model(&home)?;
    writeln!(out, "installed the capture model {}", path.display()).context("writing output")?;
    writeln!(
        out,
        "it is off by default (on the labelled set it recorded nothing the rules did not: docs/BENCHMARKS.md, \"Capture\"); \
         set GOLDFISH_CAPTURE=model where the capture worker runs (the agent's environment) to turn it on"
    )
    .context("writing output")?;
    Ok(EXIT_OK)
}
