//! The rules that decide, without a model, what a tool event is worth: a
//! failing check that passes after edits is a bug fix; reads, searches,
//! trivial commands and dead ends are not memories.

use serde::{Deserialize, Serialize};

use super::event::{Edit, Facts, Outcome};
use super::redact;

mod commands;
mod decision;

pub use commands::is_check;
use commands::{covers, is_trivial, normalize, runner_summary};
use decision::decision_record;

/// Memories one session may add; what comes after is skipped and counted.
pub const MAX_STORED_PER_SESSION: usize = 10;

/// Events of one session the worker looks at; later ones are skipped.
pub const MAX_EVENTS_PER_SESSION: usize = 1000;

/// The `source` of what the rules store.
pub const RULES_SOURCE: &str = "capture:rules";

/// Paths a session remembers per list.
const MAX_PATHS: usize = 200;

/// What the worker remembers of a session between events.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AgentSession {
    pub events: usize,
    pub stored: usize,
    pub read: Vec<String>,
    pub modified: Vec<String>,
    /// Checks (tests, builds) that failed and have not passed since.
    pub failing: Vec<Failure>,
    /// One line per bug fix stored.
    pub fixed: Vec<String>,
    /// The last check commands that passed.
    pub passed: Vec<String>,
    /// Failing runs the last event settled: a run that passes covered them
    /// (told in the fix it stored, or not, when nothing changed). Not kept.
    #[serde(skip)]
    pub settled: usize,
    /// The session's checkpoint, once stored: the next `Stop` replaces it
    /// (`supersedes`), so the session has one, kept current.
    #[serde(default)]
    pub checkpoint: Option<String>,
    /// [`Self::events`] when it was stored: a `Stop` with no event since
    /// stores nothing new.
    #[serde(default)]
    pub checkpoint_events: usize,
    /// Per file, the edits of the session that are still there, each as
    /// the hashes of its old and new text ([`Edit`]): an edit undone by the
    /// reverse edit (or a `git restore`) leaves it. A check that passes
    /// after edits that left nothing in the files it failed over fixed
    /// nothing.
    #[serde(default)]
    pub pending: std::collections::BTreeMap<String, Vec<Pending>>,
    /// The secret values removed from the session's texts so far, as
    /// hashes: each is hidden wherever it comes back in the session (a
    /// later output, the agent's last answer, the checkpoint).
    #[serde(default, skip_serializing_if = "redact::Remembered::is_empty")]
    pub secrets: redact::Remembered,
}

/// An edit of the session still in its file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// Hashes of the text it replaced (`None`: a whole file written) and of
    /// its new text.
    pub old: Option<String>,
    pub new: String,
    /// What it changed, as [`Edit::what`] says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what: Option<String>,
}

/// Why a check that passes again after its files went back to what they
/// were is not a fix.
pub const REVERTED: &str = "check passed after the edits since it failed were reverted (the files are as they were): no fix";

/// Why an interrupted run counts for nothing.
pub const INTERRUPTED: &str = "interrupted (neither failing nor passing)";

/// The type of a session's checkpoint.
pub const CHECKPOINT: &str = "checkpoint";

/// Failing tests and errors a failure keeps, across its runs.
const MAX_KEPT_PER_FAILURE: usize = 20;

/// Why a failing check waits ([`Verdict::Wait`]).
pub const WAITING: &str = "check failed (stored if it passes after changes)";

/// A failing check, waiting for the run that passes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Failure {
    pub command: String,
    pub tests: Vec<String>,
    pub errors: Vec<String>,
    /// Files modified since it first failed.
    pub modified_since: Vec<String>,
    /// The failing runs it stands for (the same command failing again
    /// adds to it).
    #[serde(default)]
    pub runs: usize,
}

impl Failure {
    /// Failing runs it stands for (a session saved before they were
    /// counted: one).
    fn runs(&self) -> usize {
        self.runs.max(1)
    }
}

/// What a memory made of a session's events says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// A memory type of the repository (bug-fix, checkpoint, …).
    pub kind: String,
    pub content: String,
    pub files: Vec<String>,
    /// `capture:rules`, or `capture:<model id>`.
    pub source: String,
    /// The memory it replaces: a session's earlier checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
}

/// The rules' verdict on one event.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Store(Observation),
    /// Not worth a memory, and why.
    Skip(&'static str),
    /// The rules cannot tell (an edit, a command that ran well): a model
    /// may judge; without one it is skipped for this reason.
    Consult(&'static str),
    /// A failing check, held until a run of it passes: a bug fix when files
    /// changed in between ([`AgentSession::settled`] counts the runs it settles).
    Wait(&'static str),
}

impl AgentSession {
    /// The facts of a tool event ([`facts`](crate::capture::event::facts)) as the session reads
    /// them: the secret values removed from this event are remembered, and
    /// every value the session removed so far (this event's too) is hidden
    /// in the texts kept, wherever no rule finds it (a password a test
    /// printed in a connection string, then alone in an error line).
    pub fn facts(&mut self, payload: &serde_json::Value, root: &std::path::Path) -> Facts {
        let mut facts = super::event::facts(payload, root);
        self.secrets.add(std::mem::take(&mut facts.secrets_removed));
        if self.secrets.is_empty() {
            return facts;
        }
        let hide = |text: &mut String| *text = self.secrets.hide(text);
        let texts = facts
            .command
            .iter_mut()
            .chain(facts.change.iter_mut())
            .chain(facts.written.iter_mut())
            .chain(facts.output.iter_mut())
            .chain(facts.errors.iter_mut())
            .chain(facts.failing_tests.iter_mut())
            .chain(facts.edits.iter_mut().filter_map(|edit| edit.what.as_mut()));
        texts.for_each(hide);
        facts
    }

    /// `observation` with every secret value the session removed hidden in
    /// its text: the last step before it is stored, whoever wrote it (the
    /// rules from earlier events' texts, a model, the agent's last answer).
    pub fn hide_secrets(&self, mut observation: Observation) -> Observation {
        observation.content = self.secrets.hide(&observation.content);
        observation
    }

    /// Applies one event's facts; returns what to store, if anything.
    pub fn apply(&mut self, facts: &Facts) -> Verdict {
        self.events += 1;
        self.settled = 0;
        if self.events > MAX_EVENTS_PER_SESSION {
            return Verdict::Skip("session event cap reached");
        }
        self.note_files(facts);
        if facts.interrupted {
            return Verdict::Skip(INTERRUPTED);
        }
        match facts.tool.as_str() {
            "Read" | "Grep" | "Glob" | "LS" => return Verdict::Skip("read or search"),
            "Write" if self.stored < MAX_STORED_PER_SESSION => {
                if let Some(observation) = decision_record(facts) {
                    self.stored += 1;
                    return Verdict::Store(observation);
                }
                return Verdict::Consult("edit (kept for the session summary)");
            }
            "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => {
                return Verdict::Consult("edit (kept for the session summary)");
            }
            "Bash" => {}
            _ => return Verdict::Skip("not a code event"),
        }
        let Some(command) = facts.command.as_deref() else {
            return Verdict::Skip("no command");
        };
        if facts.outcome != Some(Outcome::Failed) {
            self.note_restore(command);
        }
        let command = normalize(command);
        // A check by its command, or by what it printed: failing tests
        // found, or a test runner's summary.
        let check = is_check(&command)
            || !facts.failing_tests.is_empty()
            || facts.output.as_deref().is_some_and(runner_summary);
        match facts.outcome {
            Some(Outcome::Failed) if check => self.failed_check(command, facts),
            Some(Outcome::Failed) => Verdict::Skip("command failed (a dead end is not stored)"),
            _ if is_trivial(&command) => Verdict::Skip("trivial command"),
            _ if !check => Verdict::Consult("command succeeded, nothing learned"),
            _ => self.passed_check(command),
        }
    }

    /// The files the event read, changed and edited. A file changed by a
    /// tool whose edit is not known (a notebook, a payload without the
    /// texts) counts as changed.
    fn note_files(&mut self, facts: &Facts) {
        for path in &facts.read {
            push_unique(&mut self.read, path);
        }
        for path in &facts.modified {
            push_unique(&mut self.modified, path);
            for failure in &mut self.failing {
                push_unique(&mut failure.modified_since, path);
            }
        }
        for edit in &facts.edits {
            self.note_edit(edit);
        }
        for path in &facts.modified {
            if !facts.edits.iter().any(|edit| &edit.file == path) {
                self.note_edit(&Edit {
                    file: path.clone(),
                    old: None,
                    new: format!("unknown edit {}", self.events),
                    what: None,
                });
            }
        }
    }

    /// A check that failed, held until a run of it passes. The same check
    /// failing again is the failure it was, not a new one: what changed
    /// since it first failed still counts toward the fix, and its first
    /// error and tests are told first (a later run may fail further along).
    fn failed_check(&mut self, command: String, facts: &Facts) -> Verdict {
        let mut failure = Failure {
            command: command.clone(),
            ..Failure::default()
        };
        if let Some(at) = self.failing.iter().position(|f| f.command == command) {
            failure = self.failing.remove(at);
            failure.runs = failure.runs();
        }
        failure.runs += 1;
        for test in &facts.failing_tests {
            push_unique(&mut failure.tests, test);
        }
        for error in &facts.errors {
            push_unique(&mut failure.errors, error);
        }
        // Bounded however often it fails: the first ones tell it.
        failure.tests.truncate(MAX_KEPT_PER_FAILURE);
        failure.errors.truncate(MAX_KEPT_PER_FAILURE);
        self.failing.push(failure);
        Verdict::Wait(WAITING)
    }

    fn passed_check(&mut self, command: String) -> Verdict {
        push_unique(&mut self.passed, &command);
        if self.passed.len() > 20 {
            self.passed.remove(0);
        }
        // Every failure this run covers passes now; the first is the fix
        // told, with the tests and files of them all.
        let (covered, failing): (Vec<Failure>, Vec<Failure>) = std::mem::take(&mut self.failing)
            .into_iter()
            .partition(|f| covers(&command, &f.command));
        self.failing = failing;
        self.settled = covered.iter().map(Failure::runs).sum();
        let mut covered = covered.into_iter();
        let Some(mut failure) = covered.next() else {
            return Verdict::Skip("check passed");
        };
        for other in covered {
            for test in &other.tests {
                push_unique(&mut failure.tests, test);
            }
            for path in &other.modified_since {
                push_unique(&mut failure.modified_since, path);
            }
        }
        if failure.modified_since.is_empty() {
            return Verdict::Skip("check passed again with no change (flaky?)");
        }
        if failure
            .modified_since
            .iter()
            .all(|path| self.pending.get(path).is_none_or(Vec::is_empty))
        {
            return Verdict::Skip(REVERTED);
        }
        if self.stored >= MAX_STORED_PER_SESSION {
            return Verdict::Skip("session memory cap reached");
        }
        let mut content = format!(
            "`{}` failed, then passed after changes to {}.",
            clip(&failure.command, 200),
            list(&failure.modified_since, 8)
        );
        if !failure.tests.is_empty() {
            content.push_str(&format!(" Failing before: {}.", list(&failure.tests, 5)));
        }
        if let Some(error) = failure.errors.first() {
            content.push_str(&format!(" Error: {error}"));
        }
        let changes = self.what_changed(&failure.modified_since, 3);
        if !changes.is_empty() {
            if !content.ends_with('.') {
                content.push('.');
            }
            content.push_str(&format!(" Changed {}.", changes.join("; ")));
        }
        let content = self.secrets.hide(&content);
        let (content, _) = redact::remove_secrets(&content);
        self.fixed.push(clip(&content, 300));
        self.stored += 1;
        Verdict::Store(Observation {
            kind: "bug-fix".to_owned(),
            content,
            files: failure.modified_since.into_iter().take(20).collect(),
            source: RULES_SOURCE.to_owned(),
            supersedes: None,
        })
    }

    /// The session summary for the Stop event: what was asked, what was
    /// done, what is next. `None` when the session changed nothing. The
    /// request and the answer come from the transcript: the caller removes
    /// what reads as an order in them first
    /// ([`redact::remove_instructions`]), as the worker does.
    pub fn summary(&self, asked: Option<&str>, last_answer: Option<&str>) -> Option<Observation> {
        if self.modified.is_empty() && self.fixed.is_empty() {
            return None;
        }
        // Only what stayed changed (an edit undone is no work done), but
        // every file when none is tracked (a session saved before).
        let changed: Vec<String> = self
            .modified
            .iter()
            .filter(|path| {
                self.pending
                    .get(*path)
                    .is_none_or(|edits| !edits.is_empty())
            })
            .cloned()
            .collect();
        if changed.is_empty() && self.fixed.is_empty() {
            return None;
        }
        let mut content = String::from("Session summary.");
        if let Some(asked) = asked {
            content.push_str(&format!("\nAsked: {}", clip(&one_line(asked), 300)));
        }
        if !changed.is_empty() {
            content.push_str(&format!("\nDone: changed {}.", list(&changed, 12)));
            // What changed, when no fix below says it.
            let changes = self.what_changed(&changed, 2);
            if self.fixed.is_empty() && !changes.is_empty() {
                content.push_str(&format!(" Changed {}.", changes.join("; ")));
            }
        }
        for fix in self.fixed.iter().take(5) {
            content.push_str(&format!("\nFixed: {fix}"));
        }
        if !self.passed.is_empty() {
            content.push_str(&format!("\nPassing: {}.", list(&self.passed, 4)));
        }
        for failure in self.failing.iter().take(3) {
            content.push_str(&format!(
                "\nStill failing: `{}`",
                clip(&failure.command, 200)
            ));
        }
        if let Some(answer) = last_answer {
            content.push_str(&format!("\nLast answer: {}", answer_line(answer)));
        }
        let content = redact::strip_private(&content);
        // The session's secrets first: a line that names one keeps the rest
        // of what it says.
        let content = self.secrets.hide(&content);
        let (content, _) = redact::remove_secrets(&content);
        Some(Observation {
            kind: CHECKPOINT.to_owned(),
            content,
            files: changed.into_iter().take(20).collect(),
            source: RULES_SOURCE.to_owned(),
            supersedes: self.checkpoint.clone(),
        })
    }

    /// The verdict of a `Stop`: the session's checkpoint ([`Self::summary`]),
    /// replacing the one an earlier `Stop` stored; nothing when the session
    /// changed nothing, or nothing happened since its checkpoint.
    pub fn checkpoint(&self, asked: Option<&str>, last_answer: Option<&str>) -> Verdict {
        if self.checkpoint.is_some() && self.events == self.checkpoint_events {
            return Verdict::Skip("nothing new since the session's checkpoint");
        }
        match self.summary(asked, last_answer) {
            Some(observation) => Verdict::Store(observation),
            None => Verdict::Skip("nothing changed in the session"),
        }
    }

    /// What changed in the first `limit` of `paths` that have a telling
    /// line: each one's last edit that stayed (`PATH: what`).
    fn what_changed(&self, paths: &[String], limit: usize) -> Vec<String> {
        paths
            .iter()
            .filter_map(|path| {
                let what = self
                    .pending
                    .get(path)?
                    .iter()
                    .rev()
                    .find_map(|p| p.what.as_ref())?;
                Some(format!("{path}: {what}"))
            })
            .take(limit)
            .collect()
    }

    /// Notes that the session's checkpoint is stored as `id`.
    pub fn checkpoint_stored(&mut self, id: &str) {
        self.checkpoint = Some(id.to_owned());
        self.checkpoint_events = self.events;
    }

    /// Notes an edit: the reverse of an edit still there undoes it.
    fn note_edit(&mut self, edit: &Edit) {
        let edits = self.pending.entry(edit.file.clone()).or_default();
        let undone = edit.old.as_ref().and_then(|old| {
            edits
                .iter()
                .rposition(|pending| &pending.new == old && pending.old.as_ref() == Some(&edit.new))
        });
        match undone {
            Some(index) => {
                edits.remove(index);
            }
            None if edits.len() < MAX_PATHS => edits.push(Pending {
                old: edit.old.clone(),
                new: edit.new.clone(),
                what: edit.what.clone(),
            }),
            None => {}
        }
    }

    /// A command that puts files back as git has them (`git restore`,
    /// `git checkout -- PATH`, `git checkout .`, `git stash`, `git reset
    /// --hard`) undoes the session's edits of them.
    fn note_restore(&mut self, command: &str) {
        let words: Vec<&str> = command.split_whitespace().collect();
        let Some(git) = words.iter().position(|word| *word == "git") else {
            return;
        };
        let rest = &words[git + 1..];
        let everything = matches!(
            rest,
            ["stash"]
                | ["stash", "push", ..]
                | ["stash", "-u", ..]
                | ["reset", "--hard", ..]
                | ["checkout", ".", ..]
                | ["restore", ".", ..]
                | ["checkout", "--", "."]
        );
        if everything {
            self.pending.values_mut().for_each(Vec::clear);
            return;
        }
        let paths: &[&str] = match rest {
            ["restore", paths @ ..] => paths,
            ["checkout", "--", paths @ ..] => paths,
            _ => return,
        };
        for path in paths.iter().filter(|path| !path.starts_with('-')) {
            let path = path.trim_start_matches("./");
            for (file, edits) in &mut self.pending {
                if file == path || file.ends_with(&format!("/{path}")) {
                    edits.clear();
                }
            }
        }
    }
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if list.len() < MAX_PATHS && !list.iter().any(|i| i == item) {
        list.push(item.to_owned());
    }
}

fn list(items: &[String], max: usize) -> String {
    let mut shown: Vec<&str> = items.iter().take(max).map(String::as_str).collect();
    let more = items.len().saturating_sub(max);
    let extra;
    if more > 0 {
        extra = format!("{more} more");
        shown.push(&extra);
    }
    shown.join(", ")
}

/// Text from a transcript as one line: its lines joined, blanks collapsed
/// (a quoted block cannot pass for lines of the memory's own).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Characters of the agent's last answer a checkpoint keeps.
const MAX_ANSWER: usize = 400;

/// The agent's last answer as one bounded line that keeps what comes next:
/// its first sentence and the sentence that says the next step (`Next`,
/// `TODO`, `Remaining`, `Still to do`), when there is one.
fn answer_line(answer: &str) -> String {
    let line = one_line(answer);
    if line.len() <= MAX_ANSWER {
        return line;
    }
    let sentences: Vec<&str> = line
        .split_inclusive(['.', '!', '?'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let next = sentences.iter().find(|sentence| {
        let lower = sentence.to_lowercase();
        [
            "next",
            "todo",
            "remaining",
            "still to do",
            "left to do",
            "follow-up",
        ]
        .iter()
        .any(|word| lower.starts_with(word) || lower.contains(&format!(" {word}:")))
    });
    let first = sentences.first().copied().unwrap_or_default();
    match next {
        Some(next) if *next != first => format!(
            "{} … {}",
            clip(first, MAX_ANSWER / 2),
            clip(next, MAX_ANSWER / 2)
        ),
        _ => clip(&line, MAX_ANSWER),
    }
}

fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests;
