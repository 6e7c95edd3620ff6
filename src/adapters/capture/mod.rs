//! Capture: memories written from an agent's tool use.
//!
//! The agent's PostToolUse hook hands each tool call to [`enqueue`], which
//! removes `<private>` spans, clips it and appends it to a queue under
//! `$GOLDFISH_HOME/capture/` (never in the repository) and returns. A
//! worker, one per home at a time, [`drain`]s the queues: rules read the
//! facts of each event ([`event::facts`]: files, command, exit status,
//! failing tests, error lines; instruction-like spans and secrets removed),
//! keep a state per session ([`rules::AgentSession`]) and decide what is worth a
//! memory; a Stop event adds the session summary. Before the store,
//! [`guard`] removes what still reads as an order to an agent (a model may
//! echo one) or skips the observation; each event's status line names the
//! rules of what was removed. What to store goes to a [`Sink`] (the CLI
//! stores it like `store` does, whose secret check runs again).

pub mod eval;
#[cfg(feature = "capture-model")]
pub mod gguf;
pub mod install;
pub mod queue;
pub mod runtime;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::adapters::PathError;

use crate::domain::capture::rules::{self, AgentSession, Observation, Turn, Verdict};
use crate::domain::capture::{
    Generator, READ_AS_AN_ORDER, event, guard, judge, redact, transcript,
};
pub use queue::Queue;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error(transparent)]
    Io(#[from] PathError),
    #[error("the hook payload is not a JSON object: {0}")]
    Payload(String),
    #[error("{} is not inside a git repository", .0.display())]
    NoRepository(PathBuf),
}

/// The most of a hook payload read: a tool call's input and output (whose
/// texts are clipped to 8 KiB each anyway). A larger one is dropped, and
/// counted.
pub const MAX_PAYLOAD_BYTES: u64 = 4 << 20;

/// Why the hook dropped an event, as the status log and `capture status`
/// say it.
pub const DROPPED_TOO_LARGE: &str = "hook payload over 4 MiB";
pub const DROPPED_QUEUE_FULL: &str = "capture queue full";

/// The capture folder of a home.
pub fn capture_root(home: &Path) -> PathBuf {
    home.join("capture")
}

/// The repository holding `dir`: the nearest folder up with a `.git`.
/// Cheap (a few `stat`s): the hook must not open the repository.
pub fn find_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").symlink_metadata().is_ok())
        .map(Path::to_owned)
}

/// What the hook did with an event.
#[derive(Debug)]
pub struct Enqueued {
    pub queue: Queue,
    /// Why the event was dropped (counted in the status log), when it was.
    pub dropped: Option<&'static str>,
}

/// Queues one hook payload (`kind` is `tool` or `stop`) of the repository
/// holding the payload's `cwd` (else `cwd`). A payload over
/// [`MAX_PAYLOAD_BYTES`] (the caller reads one byte more) is dropped, for
/// the repository holding `cwd`, and so is an event the full queue has no
/// room for: each with a status line.
pub fn enqueue(
    home: &Path,
    cwd: &Path,
    kind: &str,
    payload: &[u8],
) -> Result<Enqueued, CaptureError> {
    if payload.len() as u64 > MAX_PAYLOAD_BYTES {
        let root = find_root(cwd).ok_or_else(|| CaptureError::NoRepository(cwd.to_owned()))?;
        let queue = Queue::for_root(&capture_root(home), &root);
        return dropped(queue, &root, kind, None, DROPPED_TOO_LARGE);
    }
    let value: Value =
        serde_json::from_slice(payload).map_err(|e| CaptureError::Payload(e.to_string()))?;
    let mut value = event::claude_shaped(value);
    if !value.is_object() {
        return Err(CaptureError::Payload("not an object".to_owned()));
    }
    // Codex CLI's shell result has no exit code; its rollout records one.
    if let Some(code) = event::codex_call(&value)
        .and_then(|(transcript, call)| codex_exit_code(Path::new(transcript), call))
    {
        value["tool_response"]["exit_code"] = code.into();
    }
    let dir = value["cwd"]
        .as_str()
        .filter(|d| Path::new(d).is_absolute())
        .map(PathBuf::from)
        .unwrap_or_else(|| cwd.to_owned());
    let root = find_root(&dir).ok_or(CaptureError::NoRepository(dir))?;
    // Before strings are clipped: the file's whole text before the tool.
    event::note_baseline(&mut value);
    event::sanitize(&mut value);
    event::shrink(&mut value);
    value["goldfish_event"] = Value::String(kind.to_owned());
    let queue = Queue::for_root(&capture_root(home), &root);
    if !queue.push(&root, &value.to_string())? {
        return dropped(queue, &root, kind, Some(&value), DROPPED_QUEUE_FULL);
    }
    Ok(Enqueued {
        queue,
        dropped: None,
    })
}

/// Counts an event the hook dropped: a status line as the worker writes
/// one (with the session and tool when the payload was read).
fn dropped(
    queue: Queue,
    root: &Path,
    kind: &str,
    payload: Option<&Value>,
    reason: &'static str,
) -> Result<Enqueued, CaptureError> {
    let tool = match (kind, payload) {
        ("stop", _) => Value::String("Stop".to_owned()),
        (_, Some(payload)) => payload["tool_name"].clone(),
        (_, None) => Value::Null,
    };
    let session = payload.map_or(Value::Null, |payload| payload["session_id"].clone());
    queue.record_root(root)?;
    queue.log_status(&serde_json::json!({
        "session": session,
        "tool": tool,
        "verdict": "dropped",
        "reason": reason,
    }))?;
    Ok(Enqueued {
        queue,
        dropped: Some(reason),
    })
}

/// Where the worker's observations go.
pub trait Sink {
    /// Stores an observation of `agent_session`; returns the memory's id,
    /// or why it was not stored. `orders_removed`: text that read as an
    /// order to an agent was removed from the event (it links nothing).
    fn store(
        &mut self,
        root: &Path,
        agent_session: &str,
        observation: &Observation,
        orders_removed: bool,
    ) -> Result<String, Refusal>;
}

/// Why a [`Sink`] did not store an observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The workspace has a memory saying nearly the same (its id): skipped.
    Duplicate(String),
    /// Storing failed (the message): dropped.
    Failed(String),
}

/// What a drain did, by verdict.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Drained {
    pub events: usize,
    pub stored: usize,
    pub skipped: usize,
    /// Failing checks held until a run of them passes.
    pub waiting: usize,
    pub dropped: usize,
}

/// Bytes of a transcript read from each end: its start for the request,
/// its end for the last answer.
const TRANSCRIPT_END_BYTES: u64 = 4 << 20;

/// What a transcript holds after byte `from` (its last 4 MiB at most; all
/// of it again when it is shorter than `from`, rewritten): what the person
/// typed ([`transcript::request_in`]) and what the agent answered
/// ([`transcript::answer_in`]), in order, and its length.
pub fn transcript_since(path: &Path, from: u64) -> Stretch {
    let Ok((mut file, length)) = open_transcript(path) else {
        return Stretch {
            read: from,
            ..Stretch::default()
        };
    };
    let from = if from > length { 0 } else { from };
    let start = from.max(length.saturating_sub(TRANSCRIPT_END_BYTES));
    // A start inside a line leaves that line out; `from` is a line's start.
    let entries = match start {
        0 => entries_from(&mut file, 0),
        start if start == from => entries_at_line(&mut file, start),
        start => entries_from(&mut file, start),
    };
    let entries = entries.unwrap_or_default();
    let mut requests: Vec<String> = Vec::new();
    // A long stretch read only at its end: its first 4 MiB too, for the
    // requests (the first says what the session is for).
    if start > from
        && let Some(head) = entries_at_line(&mut file, from)
    {
        requests.extend(head.iter().filter_map(transcript::request_in));
    }
    for request in entries.iter().filter_map(transcript::request_in) {
        if !requests.contains(&request) {
            requests.push(request);
        }
    }
    Stretch {
        requests,
        answers: entries.iter().filter_map(transcript::answer_in).collect(),
        compactions: entries
            .iter()
            .filter_map(transcript::compaction_in)
            .collect(),
        read: length,
    }
}

/// What a stretch of a transcript says ([`transcript_since`]).
#[derive(Debug, Default, PartialEq)]
pub struct Stretch {
    /// What the person typed, in order.
    pub requests: Vec<String>,
    /// What the agent answered, in order.
    pub answers: Vec<String>,
    /// The summaries compactions left ([`transcript::compaction_in`]).
    pub compactions: Vec<String>,
    /// Where the stretch ends: the next one starts there.
    pub read: u64,
}

/// The last request the person typed ([`transcript::request_in`]) and the
/// agent's last answer, from a transcript's last 4 MiB: what a checkpoint
/// before a compaction quotes, read from a file of any length in bounded
/// time and memory. A regular file only; the error says why not.
pub fn transcript_last(path: &Path) -> std::io::Result<(Option<String>, Option<String>)> {
    let (mut file, length) = open_transcript(path)?;
    let tail = entries_from(&mut file, length.saturating_sub(TRANSCRIPT_END_BYTES))
        .ok_or_else(|| std::io::Error::other("cannot read its end"))?;
    let request = tail.iter().rev().find_map(transcript::request_in);
    let answer = tail.iter().rev().find_map(transcript::answer_in);
    Ok((request, answer))
}

/// Whether a transcript's last 4 MiB show the agent editing a file (an
/// `Edit`, `MultiEdit`, `Write` or `NotebookEdit` tool call).
pub fn transcript_changed_code(path: &Path) -> bool {
    let Ok((mut file, length)) = open_transcript(path) else {
        return false;
    };
    let tail = entries_from(&mut file, length.saturating_sub(TRANSCRIPT_END_BYTES));
    tail.into_iter()
        .flatten()
        .any(|entry| transcript::edits_code(&entry))
}

/// Bytes of a Codex CLI rollout read from its end for a shell call's exit
/// code: the call has just ended, its record is among the last.
const ROLLOUT_TAIL_BYTES: u64 = 1 << 20;

/// The exit code of Codex CLI's shell call `call_id`, from the rollout at
/// `path` (the payload's `transcript_path`): its `CommandExecution`
/// record in the file's last MiB ([`transcript::codex_exit_code`]). Only a
/// regular file named `rollout-*.jsonl` is read, and only lines naming
/// the call are parsed; `None` when it is not found (the exit code stays
/// unknown, never a pass).
pub fn codex_exit_code(path: &Path, call_id: &str) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    if !(name.starts_with("rollout-") && name.ends_with(".jsonl")) {
        return None;
    }
    let (mut file, length) = open_transcript(path).ok()?;
    use std::io::{Read, Seek, SeekFrom};
    let start = length.saturating_sub(ROLLOUT_TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(ROLLOUT_TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let quoted = serde_json::to_string(call_id).ok()?;
    text.lines()
        .rev()
        .filter(|line| line.contains(&quoted) && line.contains("CommandExecution"))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|entry| transcript::codex_exit_code(&entry, call_id))
}

/// A transcript, if it is a regular file, and its length; the error says
/// why not.
fn open_transcript(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    let file = crate::adapters::memdir::open_regular(path, std::fs::OpenOptions::new().read(true))
        .map_err(|err| match err {
            crate::adapters::memdir::OpenError::Io(err) => err,
            other => std::io::Error::other(other.to_string()),
        })?;
    let length = file.metadata()?.len();
    Ok((file, length))
}

/// [`entries_from`] at `start`, a line's start (none left out).
fn entries_at_line(file: &mut std::fs::File, start: u64) -> Option<Vec<Value>> {
    entries_read(file, start, false)
}

/// The entries of at most [`TRANSCRIPT_END_BYTES`] of a transcript from
/// byte `start` (a line cut there left out); `None` when it cannot be read.
fn entries_from(file: &mut std::fs::File, start: u64) -> Option<Vec<Value>> {
    entries_read(file, start, start > 0)
}

/// The entries of at most [`TRANSCRIPT_END_BYTES`] from byte `start`, the
/// first line left out when `cut` (it may be a line's end).
fn entries_read(file: &mut std::fs::File, start: u64, cut: bool) -> Option<Vec<Value>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(start)).ok()?;
    file.take(TRANSCRIPT_END_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    if cut {
        lines.next();
    }
    Some(
        lines
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .collect(),
    )
}

/// Works through every queue of the home once: each event's facts, the
/// session's rules, observations to `sink`, a status line per event.
/// Events the rules cannot judge go to `generator` when there is one.
pub fn drain(
    home: &Path,
    sink: &mut dyn Sink,
    mut generator: Option<&mut (dyn Generator + '_)>,
) -> Result<Drained, CaptureError> {
    let mut total = Drained::default();
    for queue in Queue::all(&capture_root(home)) {
        let Some(root) = queue.root() else { continue };
        while let Some(batch) = queue.take()? {
            for line in batch.lines() {
                total.events += 1;
                for status in process(&queue, &root, line, sink, generator.as_deref_mut())? {
                    match status["verdict"].as_str() {
                        Some("stored") => total.stored += 1,
                        Some("waiting" | "held") => total.waiting += 1,
                        Some("dropped") => total.dropped += 1,
                        _ => total.skipped += 1,
                    }
                    queue.log_status(&status)?;
                }
            }
            queue.finish()?;
        }
    }
    Ok(total)
}

fn process(
    queue: &Queue,
    root: &Path,
    line: &str,
    sink: &mut dyn Sink,
    generator: Option<&mut (dyn Generator + '_)>,
) -> Result<Vec<Value>, CaptureError> {
    let Ok(payload) = serde_json::from_str::<Value>(line) else {
        return Ok(vec![
            serde_json::json!({"verdict": "dropped", "reason": "unreadable queue line"}),
        ]);
    };
    let session_id = payload["session_id"]
        .as_str()
        .unwrap_or("unknown")
        .to_owned();
    let mut session: AgentSession = queue.load_session(&session_id);
    let mut status = serde_json::json!({
        "session": session_id,
        "tool": payload["tool_name"],
    });
    // The rule of each span removed from this event's texts because it read
    // as an order to an agent: `capture status` counts and names them.
    let mut removed: Vec<&'static str> = Vec::new();
    let verdicts = if payload["goldfish_event"] == "stop" {
        status["tool"] = Value::String("Stop".to_owned());
        stop_verdicts(&payload, root, &mut session, &mut removed)
    } else {
        match tool_verdict(&payload, root, &mut session, generator, &mut removed) {
            // A held fix tells the failing runs it settles once stored.
            Ok(verdict @ Verdict::Hold(_)) => vec![(verdict, 0)],
            Ok(verdict) => vec![(verdict, session.settled)],
            Err(reason) => {
                status["verdict"] = "dropped".into();
                status["reason"] = reason.into();
                note_removed(&mut status, &removed);
                queue.save_session(&session_id, &session)?;
                return Ok(vec![status]);
            }
        }
    };
    note_removed(&mut status, &removed);
    let redacted = !removed.is_empty();
    let mut statuses = Vec::new();
    for (n, (verdict, settles)) in verdicts.into_iter().enumerate() {
        let mut status = status.clone();
        // What the event's texts lost is told once, by its first verdict.
        if n > 0
            && let Some(fields) = status.as_object_mut()
        {
            fields.remove(INSTRUCTIONS_REMOVED);
        }
        // The failing runs this verdict settled: `capture status` counts
        // them in the fix stored, or skipped when none was.
        if settles > 0 {
            status["settles"] = settles.into();
        }
        // The last check before the store, whoever wrote the text (a model
        // may echo what it read): orders removed, or the observation skipped.
        let verdict = match verdict {
            Verdict::Store(observation) => {
                let guarded = guard(session.hide_secrets(observation));
                if !guarded.removed.is_empty() {
                    let mut all = removed.clone();
                    all.extend(guarded.removed);
                    note_removed(&mut status, &all);
                }
                match guarded.observation {
                    Some(observation) => Verdict::Store(observation),
                    None => Verdict::Skip(READ_AS_AN_ORDER),
                }
            }
            verdict => verdict,
        };
        record_verdict(
            verdict,
            sink,
            root,
            &session_id,
            redacted,
            &mut session,
            &mut status,
        );
        statuses.push(status);
    }
    queue.save_session(&session_id, &session)?;
    Ok(statuses)
}

/// The verdicts of an agent's stop ([`AgentSession::end_turn`]): the turn
/// read from the transcript since the last stop (the payload's request
/// and answer where it has them: Claude Code's `last_assistant_message`,
/// Gemini CLI's `prompt` and `prompt_response`), and the files the session
/// changed that hold again what they held before it. A request or answer
/// that held an order is not cleared by cutting the order out: it is left
/// out whole.
fn stop_verdicts(
    payload: &Value,
    root: &Path,
    session: &mut AgentSession,
    removed: &mut Vec<&'static str>,
) -> Vec<(Verdict, usize)> {
    let Stretch {
        mut requests,
        mut answers,
        compactions,
        read,
    } = payload["transcript_path"]
        .as_str()
        .map(|p| transcript_since(Path::new(p), session.transcript_read))
        .unwrap_or(Stretch {
            read: session.transcript_read,
            ..Stretch::default()
        });
    session.transcript_read = read;
    let text_of = |key: &str| {
        payload[key]
            .as_str()
            .filter(|text| !text.trim().is_empty())
            .map(str::to_owned)
    };
    if let Some(answer) = text_of("last_assistant_message").or_else(|| text_of("prompt_response")) {
        answers.retain(|a| a.trim() != answer.trim());
        answers.push(answer);
    }
    if let Some(prompt) = text_of("prompt")
        && requests.last() != Some(&prompt)
    {
        requests.push(prompt);
    }
    let mut keep = |texts: Vec<String>| -> Vec<String> {
        texts
            .into_iter()
            .filter_map(|text| {
                let (text, rules) = redact::remove_instructions(&text);
                let clear = rules.is_empty();
                removed.extend(rules);
                clear.then_some(text)
            })
            .collect()
    };
    let compacted = compactions
        .iter()
        .flat_map(|summary| rules::turn::compaction_sections(summary))
        .collect();
    let turn = Turn {
        requests: keep(requests),
        answers: keep(answers),
        unchanged: put_back(root, &session.baseline),
        compacted: keep(compacted),
    };
    session.end_turn(&turn)
}

/// Bytes of a file compared with its baseline at most.
const MAX_BASELINE_BYTES: u64 = 16 << 20;

/// The files of `baseline` that hold again what they held before the
/// session changed them (or are absent again): a regular file of the
/// repository, read whole up to [`MAX_BASELINE_BYTES`]; a file that
/// cannot be read so is not judged.
fn put_back(
    root: &Path,
    baseline: &std::collections::BTreeMap<String, Option<String>>,
) -> Vec<String> {
    use std::io::Read;
    baseline
        .iter()
        .filter(|(file, before)| {
            let path = root.join(file);
            let now = match std::fs::symlink_metadata(&path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
                Ok(meta) if meta.is_file() && meta.len() <= MAX_BASELINE_BYTES => {
                    let mut text = String::new();
                    let read = crate::adapters::memdir::open_regular(
                        &path,
                        std::fs::OpenOptions::new().read(true),
                    )
                    .ok()
                    .and_then(|mut file| file.read_to_string(&mut text).ok());
                    match read {
                        Some(_) => Some(event::fingerprint(&text)),
                        None => return false,
                    }
                }
                _ => return false,
            };
            now.as_ref() == before.as_ref()
        })
        .map(|(file, _)| file.clone())
        .collect()
}

/// The verdict of a tool event: the rules', or the generator's when the
/// rules cannot tell; `Err` with why when the generator failed (the event
/// is dropped).
fn tool_verdict(
    payload: &Value,
    root: &Path,
    session: &mut AgentSession,
    generator: Option<&mut (dyn Generator + '_)>,
    removed: &mut Vec<&'static str>,
) -> Result<Verdict, String> {
    let facts = session.facts(payload, root);
    removed.extend(&facts.instructions_removed);
    Ok(match (session.apply(&facts), generator) {
        (Verdict::Consult(_), Some(generator))
            if session.stored < rules::MAX_STORED_PER_SESSION =>
        {
            match judge(generator, &facts)? {
                Some(observation) => {
                    session.stored += 1;
                    Verdict::Store(observation)
                }
                None => Verdict::Skip("the model found nothing worth recording"),
            }
        }
        (verdict, _) => verdict,
    })
}

/// Stores what the verdict says to in the sink (`redacted`: orders were
/// removed from the event's texts), and writes the verdict in `status`.
fn record_verdict(
    verdict: Verdict,
    sink: &mut dyn Sink,
    root: &Path,
    session_id: &str,
    redacted: bool,
    session: &mut AgentSession,
    status: &mut Value,
) {
    match verdict {
        Verdict::Skip(reason) | Verdict::Consult(reason) => {
            status["verdict"] = "skipped".into();
            status["reason"] = reason.into();
        }
        Verdict::Wait(reason) => {
            status["verdict"] = "waiting".into();
            status["reason"] = reason.into();
        }
        Verdict::Hold(observation) => {
            status["verdict"] = "held".into();
            status["reason"] = rules::HELD.into();
            status["first_line"] = first_line(&observation.content).into();
            status["type"] = observation.kind.into();
        }
        Verdict::Store(observation) => match sink.store(root, session_id, &observation, redacted) {
            Ok(id) => {
                if observation.kind == rules::CHECKPOINT {
                    session.checkpoint_stored(&id, &observation.content);
                }
                status["verdict"] = "stored".into();
                status["id"] = id.into();
                status["first_line"] = first_line(&observation.content).into();
                status["type"] = observation.kind.into();
            }
            Err(Refusal::Duplicate(id)) => {
                status["verdict"] = "skipped".into();
                status["reason"] = "near-duplicate of a memory".into();
                status["similar_to"] = id.into();
            }
            Err(Refusal::Failed(reason)) => {
                status["verdict"] = "dropped".into();
                status["reason"] = reason.into();
            }
        },
    }
}

/// The first line of what was stored, at most 100 characters: what `capture
/// status` shows of it.
fn first_line(content: &str) -> String {
    let line = content.lines().next().unwrap_or_default().trim();
    let mut kept: String = line.chars().take(100).collect();
    if kept.len() < line.len() {
        kept.push('…');
    }
    kept
}

/// Names, in an event's status line, the rule of each span removed from
/// its texts because it read as an order to an agent.
fn note_removed(status: &mut Value, removed: &[&'static str]) {
    if !removed.is_empty() {
        status[INSTRUCTIONS_REMOVED] = removed.into();
    }
}

/// The status line's field listing the rule of each instruction-like span
/// removed from the event's texts.
pub const INSTRUCTIONS_REMOVED: &str = "instructions_removed";

#[cfg(test)]
mod tests {
    use super::*;

    /// A Codex CLI shell call's exit code is read from its rollout's
    /// `CommandExecution` record, and only from a file named as Codex
    /// names its rollouts.
    #[test]
    fn a_codex_exit_code_comes_from_a_rollout_only() {
        let dir = tempfile::tempdir().unwrap();
        let record = serde_json::json!({"timestamp": "2026-12-03T12:56:33.844Z", "type": "event_msg", "payload": {"type": "item_completed", "item": {"type": "CommandExecution", "id": "call_1", "status": "failed", "exit_code": 1}}});
        let lines = format!("{{\"type\": \"session_meta\", \"payload\": {{}}}}\n{record}\n");
        let rollout = dir
            .path()
            .join("rollout-2026-12-03T12-56-32-01a23bfa.jsonl");
        std::fs::write(&rollout, &lines).unwrap();
        assert_eq!(codex_exit_code(&rollout, "call_1"), Some(1));
        assert_eq!(codex_exit_code(&rollout, "call_2"), None);
        let other = dir.path().join("notes.jsonl");
        std::fs::write(&other, &lines).unwrap();
        assert_eq!(codex_exit_code(&other, "call_1"), None);
        std::os::unix::fs::symlink(&rollout, dir.path().join("rollout-link.jsonl")).unwrap();
        assert_eq!(
            codex_exit_code(&dir.path().join("rollout-link.jsonl"), "call_1"),
            None
        );
    }

    /// An event the full queue has no room for is dropped and counted,
    /// with its session and tool, as one over the size limit is.
    #[test]
    fn events_the_hook_drops_are_counted() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        let payload = serde_json::json!({
            "session_id": "s1",
            "tool_name": "Read",
            "cwd": repo.path(),
        })
        .to_string();
        let queue = Queue::for_root(&capture_root(home.path()), repo.path());
        queue.record_root(repo.path()).unwrap();
        std::fs::write(
            queue.dir().join("queue.jsonl"),
            vec![b'\n'; queue::MAX_QUEUE_BYTES as usize],
        )
        .unwrap();
        let full = enqueue(home.path(), repo.path(), "tool", payload.as_bytes()).unwrap();
        assert_eq!(full.dropped, Some(DROPPED_QUEUE_FULL));
        let huge = vec![b' '; MAX_PAYLOAD_BYTES as usize + 1];
        let large = enqueue(home.path(), repo.path(), "stop", &huge).unwrap();
        assert_eq!(large.dropped, Some(DROPPED_TOO_LARGE));
        let statuses = queue.statuses();
        assert_eq!(
            statuses,
            [
                serde_json::json!({"session": "s1", "tool": "Read", "verdict": "dropped", "reason": DROPPED_QUEUE_FULL}),
                serde_json::json!({"session": null, "tool": "Stop", "verdict": "dropped", "reason": DROPPED_TOO_LARGE}),
            ]
        );
    }
}
