//! What a prompt brings back: the few memories relevant to what an agent's
//! user just asked (Claude Code's `UserPromptSubmit`, Gemini CLI's
//! `BeforeAgent`), as `recall --index` lines the agent can open by id, or
//! nothing at all.
//!
//! Every prompt pays for it, and every line it adds costs the agent context,
//! so it fails closed: no line without a model to judge closeness, none for
//! a question recall judges unrelated to the log, none below
//! [`MIN_SIMILARITY`], none flagged, none the session already received.
//! The same index and prompt give the same bytes (prompt caching).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::adapters::git::Workspace;
use crate::adapters::sync as index_sync;
use crate::app::digest;
use crate::app::hook::FOREGROUND_EMBEDDINGS;
use crate::app::recall::{self, Before, RecallInput, Recalled};
use crate::app::render::{QUOTED_DATA, index_line};
use crate::app::sync::{Embed, drain_journal, problems, sync_waiting};
use crate::app::{AppError, Notice, Session, background};
use crate::domain::recalled::IndexedMemory;

/// The prompt's first this many characters are the question (a pasted log
/// or file is not a question; its opening says what it is about).
pub const MAX_PROMPT_CHARS: usize = 2_000;
/// Recall's candidates, before the floor.
pub const CANDIDATES: usize = 5;
/// At most this many memories a prompt.
pub const MAX_LINES: usize = 3;
/// The whole context added, framing included, in the model's tokens.
pub const MAX_TOKENS: usize = 150;
/// A memory is added only when it is at least this similar to the prompt
/// (cosine, the embedding model's). `scripts/eval/prompt_hook.py`
/// (docs/BENCHMARKS.md, "The prompt hook"): at 0.40, 77% of LongMemEval
/// prompts and 89% of fixtures/eval's get lines, 81% of those hold the
/// evidence, and 97% of off-topic prompts get nothing; 0.45 adds to fewer
/// (65%, 85%) for 99%.
pub const MIN_SIMILARITY: f64 = crate::domain::relevance::CLOSE;
/// A session remembers at most this many memories it was given.
pub const MAX_SEEN: usize = 256;

/// Memory files changed by at least this many bytes since the index last
/// synced (a `git reset --hard`, a `GOLDFISH=0 git pull`: HEAD moved with
/// no git hook to sync) are left to a background catch-up, and the prompt
/// is answered from the index as it is. A sync of less fits the prompt's
/// budget (docs/BENCHMARKS.md, "The prompt hook").
pub const FOREGROUND_SYNC_BYTES: u64 = 256 * 1024;
/// How long a prompt waits for a sync another process runs before it
/// reads the index as it is.
pub const WAITS_FOR_SYNC: Duration = Duration::from_millis(300);

/// The line after the memories: how to read one whole.
pub const OPEN_HINT: &str =
    "Open one with the goldfish MCP tool `get` (its id) when it bears on the task.";

/// Why a candidate was or was not added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Added,
    /// Less similar to the prompt than [`MIN_SIMILARITY`].
    NotClose,
    /// The session was given it already.
    Seen,
    /// Flagged (a suspected secret, instruction-like text): read it with
    /// recall, never unasked.
    Flagged,
    /// [`MAX_LINES`] or [`MAX_TOKENS`] reached.
    OverBudget,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Added => "added",
            Verdict::NotClose => "not-close",
            Verdict::Seen => "seen",
            Verdict::Flagged => "flagged",
            Verdict::OverBudget => "over-budget",
        }
    }
}

/// Why nothing was looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    /// A slash command, or fewer than two words that say what it is about
    /// ("yes", "go on").
    NoQuestion,
    /// No embedding model: closeness cannot be judged.
    NoModel,
    /// Recall's judgement ([`crate::domain::relevance`]).
    NothingRelevant(String),
    /// Recall found nothing at all.
    NothingFound,
    /// A prompt the client made, not the user (`source: "system"`: a
    /// background task's notification).
    NotTheUsers,
}

impl Skipped {
    pub fn reason(&self) -> String {
        match self {
            Skipped::NoQuestion => {
                "not a question about the work (a command, or too few words)".to_owned()
            }
            Skipped::NoModel => {
                "no embedding model to judge closeness (goldfish model install)".to_owned()
            }
            Skipped::NothingRelevant(why) => format!("nothing relevant: {why}"),
            Skipped::NothingFound => "no memory matches".to_owned(),
            Skipped::NotTheUsers => {
                "a prompt the client made (a task notification), not one the user typed".to_owned()
            }
        }
    }
}

/// What a prompt brought back, and why.
pub struct PromptRecall {
    /// The context for the agent; `None` when nothing is added.
    pub context: Option<String>,
    /// Its tokens (0 without context).
    pub tokens: usize,
    /// Each candidate with its verdict, in recall's order.
    pub candidates: Vec<(IndexedMemory, Verdict)>,
    /// Why nothing was looked up, when it was not.
    pub skipped: Option<Skipped>,
    /// The index lagged the work tree too much to sync within the prompt:
    /// a background catch-up syncs it, and this answer is the index's as
    /// it was.
    pub catching_up: bool,
}

impl PromptRecall {
    /// Nothing looked up: the prompt is not the user's ([`Skipped::NotTheUsers`]).
    pub fn not_the_users() -> PromptRecall {
        PromptRecall::skipped(Skipped::NotTheUsers)
    }

    fn skipped(why: Skipped) -> PromptRecall {
        PromptRecall {
            context: None,
            tokens: 0,
            candidates: Vec::new(),
            skipped: Some(why),
            catching_up: false,
        }
    }

    /// The ids added.
    pub fn added(&self) -> impl Iterator<Item = &str> {
        self.candidates
            .iter()
            .filter(|(_, verdict)| *verdict == Verdict::Added)
            .map(|(memory, _)| memory.id.as_str())
    }
}

/// The question a prompt asks: its first [`MAX_PROMPT_CHARS`] characters,
/// or `None` for a slash command or a prompt with fewer than two words that
/// are not stop words.
pub fn question_of(prompt: &str) -> Option<String> {
    let prompt = prompt.trim();
    if prompt.starts_with('/') {
        return None;
    }
    let question: String = prompt.chars().take(MAX_PROMPT_CHARS).collect();
    let words = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3)
        .filter(|word| !crate::domain::relevance::STOP.contains(&word.to_lowercase().as_str()))
        .count();
    (words >= 2).then_some(question)
}

/// What the prompt hook asks recall: the question, in this workspace, the
/// closest [`CANDIDATES`], trusted and current memories only.
fn prompt_input(question: String) -> RecallInput {
    RecallInput::plain(Some(question), CANDIDATES)
}

/// The memories relevant to `prompt` that the session (`seen`) was not
/// given yet, as context for the agent.
pub fn for_prompt(
    session: &mut Session,
    cwd: &Path,
    prompt: &str,
    seen: &[String],
) -> Result<PromptRecall, AppError> {
    let Some(question) = question_of(prompt) else {
        return Ok(PromptRecall::skipped(Skipped::NoQuestion));
    };
    if !matches!(
        session.model_state(),
        crate::app::session::ModelState::Installed(_)
    ) {
        return Ok(PromptRecall::skipped(Skipped::NoModel));
    }
    let workspace = Workspace::discover(cwd).map_err(AppError::input)?;
    let catching_up = sync_for_prompt(session, &workspace)? == Synced::LeftToBackground;
    let recalled = recall::recall_after(session, cwd, prompt_input(question), Before::AsIndexed)?;
    let skipped = |why| PromptRecall {
        catching_up,
        ..PromptRecall::skipped(why)
    };
    let hits = match recalled {
        Recalled::Memories { hits, .. } => hits,
        Recalled::NothingRelevant(judgement) => {
            return Ok(skipped(Skipped::NothingRelevant(judgement.reason())));
        }
        Recalled::Nothing | Recalled::Digest(_) => {
            return Ok(skipped(Skipped::NothingFound));
        }
    };
    let (mut counter, _) = digest::token_counter(session)?;
    let mut context = QUOTED_DATA.to_owned();
    let mut tokens = counter.count(&format!("{context}\n{OPEN_HINT}"));
    let mut added = 0;
    let mut candidates = Vec::with_capacity(hits.len());
    for memory in hits {
        let verdict = if memory.similarity.is_none_or(|s| s < MIN_SIMILARITY) {
            Verdict::NotClose
        } else if seen.contains(&memory.id) {
            Verdict::Seen
        } else if !memory.flags.is_empty() {
            Verdict::Flagged
        } else if added >= MAX_LINES {
            Verdict::OverBudget
        } else {
            let line = index_line(&memory, counter.as_mut());
            let cost = counter.count(&format!("\n{line}"));
            if tokens + cost > MAX_TOKENS {
                Verdict::OverBudget
            } else {
                context.push('\n');
                context.push_str(&line);
                tokens += cost;
                added += 1;
                Verdict::Added
            }
        };
        candidates.push((memory, verdict));
    }
    let context = (added > 0).then(|| format!("{context}\n{OPEN_HINT}"));
    Ok(PromptRecall {
        tokens: if context.is_some() { tokens } else { 0 },
        context,
        candidates,
        skipped: None,
        catching_up,
    })
}

/// What [`sync_for_prompt`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Synced {
    /// Synced here, or by the sync another process ran (or still runs:
    /// then after [`WAITS_FOR_SYNC`] the index is read as it is).
    Here,
    /// Too much to sync within the prompt: a background catch-up does it.
    LeftToBackground,
}

/// The sync before a prompt's lookup, within the prompt's budget: little
/// changed, it syncs the keyword index and embeds a few texts (more go to
/// a background embedder); much changed, it leaves the sync to one
/// background catch-up ([`background::start_catch_up`]) rather than start
/// a sync the budget would cut off and roll back at every prompt.
fn sync_for_prompt(session: &mut Session, workspace: &Workspace) -> Result<Synced, AppError> {
    // What a store set aside goes into its file first: it counts as lag.
    drain_journal(session, workspace, false)?;
    let lag = index_sync::pending_bytes(session.index()?, workspace)?;
    if lag >= FOREGROUND_SYNC_BYTES {
        let log = match background::start_catch_up(&session.home, workspace) {
            Ok(Some(log)) => format!(" (log: {})", log.display()),
            Ok(None) => String::new(),
            Err(err) => {
                session.notice(Notice::warning(format!(
                    "{err:#}; run `goldfish sync` to bring the index up to date"
                )));
                return Ok(Synced::LeftToBackground);
            }
        };
        session.notice(Notice::note(format!(
            "the index lags the work tree by {lag} bytes of memory files: a background sync is catching up{log}; this prompt was answered from the index as it is"
        )));
        return Ok(Synced::LeftToBackground);
    }
    let embed = Embed::UpTo(FOREGROUND_EMBEDDINGS as usize);
    if let Some(report) = sync_waiting(session, workspace, embed, WAITS_FOR_SYNC)? {
        problems(session, &report.problems);
    }
    Ok(Synced::Here)
}

/// For a prompt whose lookup ran out of its budget: when a sync of the
/// work tree in `cwd` holds its lock (the lookup's own, about to be cut
/// off and rolled back, or another process's), leaves the sync to a
/// background catch-up, so the next prompt finds it done or under way
/// instead of starting it again. Opens no index (the lookup may hold it,
/// a migration for one). The catch-up's log, when one was started; `None`
/// when no sync was running or a catch-up runs already.
pub fn leave_to_background(cwd: &Path) -> Result<Option<PathBuf>, AppError> {
    let workspace = Workspace::discover(cwd).map_err(AppError::input)?;
    let home = crate::adapters::home::Home::from_env().map_err(AppError::input)?;
    if !crate::adapters::index::locks::sync_running(&home.locks_dir(), workspace.root()) {
        return Ok(None);
    }
    Ok(background::start_catch_up(&home, &workspace)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_or_a_word_or_two_is_no_question() {
        assert_eq!(question_of("/clear"), None);
        assert_eq!(question_of("/recall token refresh"), None);
        assert_eq!(question_of("yes"), None);
        assert_eq!(question_of("ok, do it"), None);
        assert_eq!(question_of("go on then"), None);
        assert_eq!(
            question_of("  why does login fail?  ").as_deref(),
            Some("why does login fail?")
        );
    }

    #[test]
    fn a_long_prompt_is_asked_by_its_opening() {
        let prompt = format!("Fix the flaky checkout test {}", "x ".repeat(5_000));
        let question = question_of(&prompt).unwrap();
        assert_eq!(question.chars().count(), MAX_PROMPT_CHARS);
        assert!(question.starts_with("Fix the flaky checkout test"));
    }
}
