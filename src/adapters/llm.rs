//! Optional LLM distillation: a command the user configures (`claude -p`,
//! `ollama run qwen2.5`, …) gets a prompt on stdin and prints the digest.
//! Anything but a usable answer (a failure, a timeout, nothing, or more
//! than the budget) falls back to the extractive digest, with the reason.

use std::time::Duration;

use crate::adapters::shell::{self, ShellError};
use crate::domain::digest::Source;

/// The prompt for the command: the question, the memories with their ids
/// and dates, the budget, and how to answer.
pub fn prompt(question: Option<&str>, sources: &[Source], budget: usize) -> String {
    let mut text = String::new();
    text.push_str(
        "You distil a software team's memories (decisions, bug fixes, insights, checkpoints) into a short digest \
         for a coding agent.\n",
    );
    match question {
        Some(q) => text.push_str(&format!("Question: {q}\n")),
        None => text.push_str("Question: what happened recently? Summarise the newest memories.\n"),
    }
    text.push_str(&format!(
        "Rules: answer in at most {budget} tokens; use only the memories below, never invent; keep technical \
         details exact (file paths, symbols, commit hashes, issue numbers, ids, numbers with units); cite the \
         memory id in brackets after each fact, e.g. [01KA12345678]; if the memories do not answer, say so in \
         one line. Print only the digest.\n\nMemories:\n"
    ));
    for source in sources {
        text.push_str(&format!(
            "[{} · {} · {}] {}\n",
            source.id, source.date, source.kind, source.content
        ));
    }
    text
}

/// Why the command's answer was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    Spawn(String),
    Timeout(Duration),
    Exit(String),
    Empty,
    OverBudget { tokens: usize, budget: usize },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Spawn(err) => write!(f, "the distill command could not start: {err}"),
            Failure::Timeout(after) => write!(
                f,
                "the distill command took longer than {} s",
                after.as_secs()
            ),
            Failure::Exit(status) => write!(f, "the distill command failed ({status})"),
            Failure::Empty => write!(f, "the distill command printed nothing"),
            Failure::OverBudget { tokens, budget } => {
                write!(
                    f,
                    "the distill command's answer has {tokens} tokens, over the budget of {budget}"
                )
            }
        }
    }
}

/// The most of a command's answer read: far over any budget (an answer
/// over it is refused anyway).
const MAX_ANSWER_BYTES: u64 = 1 << 20;

/// Runs `command` through `sh -c` with `prompt` on stdin; its trimmed stdout,
/// or why not. At `timeout` it is killed with whatever it started
/// ([`shell::run`]).
pub fn run(command: &str, prompt: &str, timeout: Duration) -> Result<String, Failure> {
    let finished =
        shell::run(command, prompt, timeout, MAX_ANSWER_BYTES).map_err(|err| match err {
            ShellError::Spawn(err) => Failure::Spawn(err.to_string()),
            ShellError::Timeout(_) => Failure::Timeout(timeout),
            ShellError::Wait(err) => Failure::Exit(err.to_string()),
        })?;
    if !finished.status.success() {
        return Err(Failure::Exit(finished.status.to_string()));
    }
    let text = String::from_utf8_lossy(&finished.stdout).trim().to_owned();
    if text.is_empty() {
        return Err(Failure::Empty);
    }
    Ok(text)
}

/// The cache key of a distillation: the question, the exact memories (by
/// content hash, in order), the command and the budget.
pub fn cache_key(
    question: Option<&str>,
    content_hashes: &[String],
    command: &str,
    budget: usize,
) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in [question.unwrap_or(""), command, &budget.to_string()] {
        hasher.update(part.as_bytes());
        hasher.update(b"\0");
    }
    for hash in content_hashes {
        hasher.update(hash.as_bytes());
        hasher.update(b"\0");
    }
    hasher.finalize().to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_told_apart() {
        let second = Duration::from_secs(1);
        assert_eq!(run("cat", "hello", second), Ok("hello".into()));
        assert!(matches!(run("exit 3", "", second), Err(Failure::Exit(_))));
        assert_eq!(run("true", "", second), Err(Failure::Empty));
        assert_eq!(
            run("sleep 5", "", Duration::from_millis(200)),
            Err(Failure::Timeout(Duration::from_millis(200)))
        );
    }

    /// Regression: a timed-out command was killed, but not what it had
    /// started (5 timeouts left 5 processes behind).
    #[test]
    fn a_timed_out_command_leaves_no_process_behind() {
        use crate::adapters::shell::testing;
        use std::time::Instant;
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let timeout = Duration::from_millis(300);
        let started = Instant::now();
        assert_eq!(
            run(&testing::lingering(&pids), "prompt", timeout),
            Err(Failure::Timeout(timeout))
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(testing::recorded(&pids).len(), 2, "the command ran");
        assert_eq!(testing::survivors(&pids), Vec::<u32>::new());
    }

    #[test]
    fn keys_change_with_every_input() {
        let hashes = vec!["a".to_owned(), "b".to_owned()];
        let key = cache_key(Some("q"), &hashes, "cmd", 300);
        assert_ne!(key, cache_key(Some("q2"), &hashes, "cmd", 300));
        assert_ne!(key, cache_key(Some("q"), &hashes[..1], "cmd", 300));
        assert_ne!(key, cache_key(Some("q"), &hashes, "cmd2", 300));
        assert_ne!(key, cache_key(Some("q"), &hashes, "cmd", 301));
        assert_eq!(key, cache_key(Some("q"), &hashes, "cmd", 300));
    }
}
