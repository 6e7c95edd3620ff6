//! `agent-hook user-prompt`: [`crate::app::prompt`] on the command line.
//! Claude Code's `UserPromptSubmit` and Gemini CLI's `BeforeAgent` give the
//! prompt on stdin; the memories relevant to it go back as the event's
//! `hookSpecificOutput.additionalContext` (the field both read), and
//! nothing at all is printed when none is.

use std::io::Write;
use std::time::Duration;

use super::hooks::{hook_payload, session_id_of};
use super::session::session;
use super::{CliError, EXIT_OK, output};
use crate::app::agent::SessionMarks;
use crate::app::prompt::{self, MAX_SEEN, PromptRecall};

/// The longest the lookup may take once the payload is read. A lookup
/// that has not answered by then (a cold model load on a busy machine, a
/// sync slower than it looked) adds nothing, and a sync it cut off goes on
/// in the background: the prompt never waits for memory.
pub const BUDGET: Duration = Duration::from_millis(1_500);

/// Never fails the prompt: problems go to stderr, the exit status is 0.
pub(super) fn hook(explain: bool, out: &mut dyn Write) -> u8 {
    let payload = hook_payload().unwrap_or_default();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(answer(&payload, explain));
    });
    match receive.recv_timeout(BUDGET) {
        Ok(Ok(Some(text))) => {
            if let Err(err) = writeln!(out, "{text}") {
                crate::front::stderr::hook_error(&format!("goldfish agent-hook: {err:#}"));
            }
        }
        Ok(Ok(None)) => {}
        Ok(Err(err)) => {
            crate::front::stderr::hook_error(&format!("goldfish agent-hook: {:#}", err.error))
        }
        Err(_) => {
            crate::front::stderr::line(&format!(
                "goldfish agent-hook: no memory added: the lookup took longer than {} ms",
                BUDGET.as_millis()
            ));
            // A sync the budget cut off would start again at the next
            // prompt and be cut off again: a background one finishes it.
            let left = std::env::current_dir()
                .map_err(|err| crate::app::AppError::from(anyhow::Error::new(err)))
                .and_then(|cwd| prompt::leave_to_background(&cwd));
            match left {
                Ok(Some(log)) => crate::front::stderr::line(&format!(
                    "goldfish agent-hook: the index is catching up in the background (log: {})",
                    log.display()
                )),
                Ok(None) => {}
                Err(err) => crate::front::stderr::hook_error(&format!(
                    "goldfish agent-hook: {:#}",
                    err.error
                )),
            }
        }
    }
    EXIT_OK
}

/// What goes on stdout: the agent's JSON, or with `explain` the decision.
fn answer(payload: &serde_json::Value, explain: bool) -> Result<Option<String>, CliError> {
    let prompt = payload["prompt"].as_str().unwrap_or_default();
    // The event the answer is for, as the payload names it: Gemini CLI's
    // `BeforeAgent`, else Claude Code's `UserPromptSubmit`.
    let event = match payload["hook_event_name"].as_str() {
        Some("BeforeAgent") => "BeforeAgent",
        _ => "UserPromptSubmit",
    };
    // A headless Gemini CLI run puts the SessionStart briefing before the
    // prompt: the question is what follows it.
    let prompt = match event {
        "BeforeAgent" => crate::domain::capture::transcript::without_hook_context(prompt),
        _ => prompt,
    };
    let session_id = session_id_of(payload);
    let mut session = session()?;
    let mut marks = session_id
        .as_deref()
        .map(|id| SessionMarks::of(&session.home, id))
        .unwrap_or_default();
    let cwd = std::env::current_dir().map_err(|err| {
        CliError::from(anyhow::Error::new(err).context("cannot read the current directory"))
    })?;
    // A prompt the client made (Claude Code's task notifications come as
    // `source: "system"`) asks nothing of the user's.
    let recalled = if payload["source"] == "system" {
        Ok(PromptRecall::not_the_users())
    } else {
        prompt::for_prompt(&mut session, &cwd, prompt, &marks.given)
    };
    output::notices(&mut session);
    let recalled = recalled?;
    if let Some(id) = &session_id
        && recalled.context.is_some()
    {
        marks.given.extend(recalled.added().map(str::to_owned));
        let over = marks.given.len().saturating_sub(MAX_SEEN);
        marks.given.drain(..over);
        if let Err(err) = marks.save(&session.home, id) {
            crate::front::stderr::line(&format!(
                "goldfish agent-hook: cannot keep what the session was given: {err}"
            ));
        }
    }
    if explain {
        return Ok(Some(explained(&recalled, event).to_string()));
    }
    Ok(recalled.context.map(|context| {
        serde_json::json!({
            "hookSpecificOutput": {
                "hookEventName": event,
                "additionalContext": context,
            }
        })
        .to_string()
    }))
}

/// `--explain`: what was added, and why each candidate was or was not.
fn explained(recalled: &PromptRecall, event: &str) -> serde_json::Value {
    let candidates: Vec<serde_json::Value> = recalled
        .candidates
        .iter()
        .map(|(memory, verdict)| {
            serde_json::json!({
                "id": memory.id,
                "verdict": verdict.as_str(),
                "similarity": memory.similarity,
                "score": memory.score,
                "kind": memory.kind,
            })
        })
        .collect();
    serde_json::json!({
        "event": event,
        "added": recalled.added().collect::<Vec<_>>(),
        "tokens": recalled.tokens,
        "skipped": recalled.skipped.as_ref().map(prompt::Skipped::reason),
        "catching_up": recalled.catching_up,
        "min_similarity": prompt::MIN_SIMILARITY,
        "candidates": candidates,
        "context": recalled.context,
    })
}
