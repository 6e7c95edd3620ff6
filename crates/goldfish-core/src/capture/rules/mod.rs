//! The rules that decide, without a model, what a tool event is worth: a
//! failing check that passes after edits is a bug fix; reads, searches,
//! trivial commands and dead ends are not memories.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::event::{Edit, Facts, Outcome};
use super::redact;

mod commands;
mod decision;
pub mod turn;

pub use commands::is_check;
use commands::{covers, is_lint, is_trivial, normalize, runner_summary};
use decision::decision_record;
pub use turn::Turn;

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
    /// The [`fingerprint`](super::event::fingerprint) of what it said: a
    /// `Stop` that would say the same stores nothing new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_said: Option<String>,
    /// Per file, the edits of the session that are still there, each as
    /// the hashes of its old and new text ([`Edit`]): an edit undone by the
    /// reverse edit (or a `git restore`) leaves it. A check that passes
    /// after edits that left nothing in the files it failed over fixed
    /// nothing.
    #[serde(default)]
    pub pending: BTreeMap<String, Vec<Pending>>,
    /// The secret values removed from the session's texts so far, as
    /// hashes: each is hidden wherever it comes back in the session (a
    /// later output, the agent's last answer, the checkpoint).
    #[serde(default, skip_serializing_if = "redact::Remembered::is_empty")]
    pub secrets: redact::Remembered,
    /// Per file the session changed, its [`fingerprint`](super::event::fingerprint)
    /// before the session first changed it (`None`: it did not exist), when
    /// the hook saw it: a file that holds it again was put back.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub baseline: BTreeMap<String, Option<String>>,
    /// Fingerprints of the lines and names the session's edits added, the
    /// newest [`MAX_ADDED`]: an error in them is the session's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// What the person asked, in order (the first and the latest kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<String>,
    /// What the turns established: the answers' sentences that state a
    /// cause, a decision or a result and name an identifier.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned: Vec<Learned>,
    /// Fixes found in the turn, stored when it ends ([`Self::end_turn`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<HeldFix>,
    /// The next step the latest answer names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// Bytes of the transcript read by the last `Stop`.
    #[serde(default)]
    pub transcript_read: u64,
}

/// A sentence of an answer worth a teammate's reading ([`turn::said`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learned {
    pub text: String,
    /// 0: a cause, 1: a decision, 2: a result.
    pub rank: u8,
}

/// A fix found when a failing check passed, held until the turn ends:
/// then its change is checked again and the answer's why added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldFix {
    pub command: String,
    pub tests: Vec<String>,
    pub error: Option<String>,
    /// The files changed between the last failing run and the passing one
    /// (narrowed to those the failure named, when it named any).
    pub files: Vec<String>,
    /// Those changes, each a file and the hash of its new text.
    pub edits: Vec<(String, String)>,
    /// What they changed (`PATH: what`).
    pub changes: Vec<String>,
    /// The functions they are in.
    pub symbols: Vec<String>,
    /// The spans to cite: each file with the fingerprint of an edit's new
    /// text ([`Edit::span`]), at most [`MAX_FIX_CITES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cites: Vec<(String, String)>,
    /// The failing runs it settles (told in the fix once stored).
    #[serde(default)]
    pub settles: usize,
}

/// Spans of code a captured fix cites at most: the hunks that fixed it.
pub const MAX_FIX_CITES: usize = 4;

/// Fingerprints of added lines and names a session keeps.
pub const MAX_ADDED: usize = 3000;

/// Requests and learned sentences a session keeps.
const MAX_REQUESTS: usize = 12;
const MAX_LEARNED: usize = 16;

/// Why a fix of errors in code the session itself had just written is no
/// project bug.
pub const OWN_ERROR: &str =
    "check passed after fixing an error in code this session had just written: no project bug";

/// Why a lint or format check passing again is no bug fix.
pub const LINT_ONLY: &str = "lint or format findings fixed: no bug fix";

/// Why a fix of files the session itself created is no project bug.
pub const NEW_CODE_ONLY: &str =
    "check passed after changes only to files this session created: no project bug";

/// Why a fix waits for the end of the turn.
pub const HELD: &str = "fix found: stored when the turn ends, with its why";

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
    /// Its new text's fingerprint, as [`Edit::span`] says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<String>,
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
    /// The edits since its last failing run: each file and the hash of its
    /// new text.
    #[serde(default)]
    pub edits: Vec<(String, String)>,
    /// The files its last run named.
    #[serde(default)]
    pub named: Vec<String>,
    /// Its last run's errors are in code the session had just added.
    #[serde(default)]
    pub own: bool,
    /// A lint or format check.
    #[serde(default)]
    pub lint: bool,
    /// How its last run failed: its tests and first error, digits left out.
    #[serde(default)]
    pub symptom: String,
}

/// How a run failed, to tell a run that fails the same way: its failing
/// tests and first error, digits left out (line numbers move as the files
/// are edited).
fn symptom(facts: &Facts) -> String {
    let mut tests = facts.failing_tests.clone();
    tests.sort();
    let error = facts.errors.first().map(String::as_str).unwrap_or_default();
    let text = format!("{}\n{error}", tests.join("\n"));
    text.chars().filter(|c| !c.is_ascii_digit()).collect()
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
    /// The spans it cites, each a file and the fingerprint of the text to
    /// find there ([`crate::citation::find_text`]): a fix's hunks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cites: Vec<(String, String)>,
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
    /// A bug fix found, held until the turn ends ([`AgentSession::end_turn`]),
    /// as it would read now.
    Hold(Observation),
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
        self.note_added(facts);
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
            "Edit" | "MultiEdit" | "Write" | "NotebookEdit" | "apply_patch" => {
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
        // A runner's summary with failures is failing whatever the exit
        // code (`| tail`, `|| true`).
        let outcome = if check && facts.reported_failures {
            Some(Outcome::Failed)
        } else {
            facts.outcome
        };
        match outcome {
            Some(Outcome::Failed) if check => self.failed_check(command, facts),
            Some(Outcome::Failed) => Verdict::Skip("command failed (a dead end is not stored)"),
            _ if is_trivial(&command) => Verdict::Skip("trivial command"),
            // No exit code and no failure in the output: no pass either.
            None if check => Verdict::Skip("check ended unknown (no exit code)"),
            _ if !check => Verdict::Consult("command succeeded, nothing learned"),
            _ => self.passed_check(command),
        }
    }

    /// The files the event read, changed and edited. A file changed by a
    /// tool whose edit is not known (a notebook, a payload without the
    /// texts) counts as changed. Each failing check notes the edits since
    /// its last run; a file's baseline is noted the first time it changes.
    fn note_files(&mut self, facts: &Facts) {
        for path in &facts.read {
            push_unique(&mut self.read, path);
        }
        for path in &facts.modified {
            push_unique(&mut self.modified, path);
            for failure in &mut self.failing {
                push_unique(&mut failure.modified_since, path);
            }
            if let Some(baseline) = &facts.baseline
                && self.baseline.len() < MAX_PATHS
            {
                self.baseline
                    .entry(path.clone())
                    .or_insert_with(|| baseline.clone());
            }
        }
        let mut edits = facts.edits.clone();
        for path in &facts.modified {
            if !facts.edits.iter().any(|edit| &edit.file == path) {
                edits.push(Edit {
                    file: path.clone(),
                    old: None,
                    new: format!("unknown edit {}", self.events),
                    what: None,
                    span: None,
                });
            }
        }
        for edit in &edits {
            self.note_edit(edit);
            for failure in &mut self.failing {
                if failure.edits.len() < MAX_PATHS {
                    failure.edits.push((edit.file.clone(), edit.new.clone()));
                }
            }
        }
    }

    /// The lines and names the event's edits added, the newest kept.
    fn note_added(&mut self, facts: &Facts) {
        for added in facts.added_lines.iter().chain(&facts.added_names) {
            if !self.added.contains(added) {
                self.added.push(added.clone());
            }
        }
        let over = self.added.len().saturating_sub(MAX_ADDED);
        self.added.drain(..over);
    }

    /// A check that failed, held until a run of it passes. The same check
    /// failing again is the failure it was, not a new one. When it fails
    /// the same way (the same tests, the same first error), the edits
    /// since its last run did not fix it: what fixes it is what changes
    /// after this run. When it fails otherwise (further along), those
    /// edits count toward the fix, and its first tests and error are told
    /// first.
    fn failed_check(&mut self, command: String, facts: &Facts) -> Verdict {
        self.passed.retain(|passed| *passed != command);
        let mut failure = Failure {
            command: command.clone(),
            ..Failure::default()
        };
        if let Some(at) = self.failing.iter().position(|f| f.command == command) {
            failure = self.failing.remove(at);
            failure.runs = failure.runs();
        }
        failure.runs += 1;
        let symptom = symptom(facts);
        if failure.symptom == symptom {
            failure.modified_since.clear();
            failure.edits.clear();
        }
        failure.symptom = symptom;
        for test in &facts.failing_tests {
            push_unique(&mut failure.tests, test);
        }
        for error in &facts.errors {
            push_unique(&mut failure.errors, error);
        }
        // Bounded however often it fails: the first ones tell it.
        failure.tests.truncate(MAX_KEPT_PER_FAILURE);
        failure.errors.truncate(MAX_KEPT_PER_FAILURE);
        failure.named = facts
            .sites
            .files
            .iter()
            .take(MAX_KEPT_PER_FAILURE)
            .cloned()
            .collect();
        // An error the session made: no failing test, and the code or the
        // names the errors point at are what the session itself added.
        let sites = &facts.sites;
        failure.own = facts.failing_tests.is_empty()
            && sites
                .code
                .iter()
                .chain(&sites.names)
                .any(|site| self.added.contains(site));
        failure.lint = is_lint(&command);
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
            failure.edits.extend(other.edits);
            failure.named.extend(other.named);
            failure.own &= other.own;
            failure.lint &= other.lint;
        }
        if failure.modified_since.is_empty() {
            return Verdict::Skip("check passed again with no change (flaky?)");
        }
        // The edits since the last failing run that are still there.
        let stayed: Vec<(String, String)> = failure
            .edits
            .iter()
            .filter(|(file, new)| {
                self.pending
                    .get(file)
                    .is_some_and(|edits| edits.iter().any(|p| &p.new == new))
            })
            .cloned()
            .collect();
        if stayed.is_empty() {
            return Verdict::Skip(REVERTED);
        }
        if failure.lint {
            return Verdict::Skip(LINT_ONLY);
        }
        if failure.own {
            return Verdict::Skip(OWN_ERROR);
        }
        let mut files: Vec<String> = Vec::new();
        for (file, _) in &stayed {
            push_unique(&mut files, file);
        }
        if files
            .iter()
            .all(|file| self.baseline.get(file) == Some(&None))
        {
            return Verdict::Skip(NEW_CODE_ONLY);
        }
        // Narrowed to the files the failure named, when it named any of
        // them but tests: a failing test names where it noticed, its own
        // file; the code it calls is where the fix may be.
        let named: Vec<String> = files
            .iter()
            .filter(|file| !is_test_file(file))
            .filter(|file| failure.named.iter().any(|named| same_file(file, named)))
            .cloned()
            .collect();
        if !named.is_empty() {
            files = named;
        }
        if self.stored + self.held.len() >= MAX_STORED_PER_SESSION {
            return Verdict::Skip("session memory cap reached");
        }
        let edits: Vec<(String, String)> = stayed
            .into_iter()
            .filter(|(file, _)| files.contains(file))
            .collect();
        let whats: Vec<(String, String)> = edits
            .iter()
            .filter_map(|(file, new)| {
                let what = self
                    .pending
                    .get(file)?
                    .iter()
                    .rev()
                    .find(|p| &p.new == new)?
                    .what
                    .clone()?;
                Some((file.clone(), what))
            })
            .collect();
        let mut cites: Vec<(String, String)> = Vec::new();
        for (file, new) in &edits {
            let span = self
                .pending
                .get(file)
                .and_then(|pending| pending.iter().rev().find(|p| &p.new == new))
                .and_then(|p| p.span.clone());
            if let Some(span) = span
                && cites.len() < MAX_FIX_CITES
                && !cites.iter().any(|(f, s)| f == file && s == &span)
            {
                cites.push((file.clone(), span));
            }
        }
        let mut changes: Vec<String> = Vec::new();
        let mut symbols: Vec<String> = Vec::new();
        for (file, what) in whats.iter().rev() {
            if let Some(symbol) = symbol_of(what) {
                push_unique(&mut symbols, symbol);
            }
            if changes.len() < 3 && !changes.iter().any(|c| c.starts_with(&format!("{file}: "))) {
                changes.push(format!("{file}: {what}"));
            }
        }
        let held = HeldFix {
            command: failure.command,
            tests: failure.tests.into_iter().take(5).collect(),
            error: failure.errors.into_iter().next(),
            files,
            edits,
            changes,
            symbols,
            cites,
            settles: self.settled,
        };
        let preview = self.fix_observation(&held, &[]);
        self.held.push(held);
        Verdict::Hold(preview)
    }

    /// A held fix as it is stored: its symptom and the test or function it
    /// concerns first, then why (`why`: sentences of the turn's answers),
    /// what changed and the check.
    fn fix_observation(&self, fix: &HeldFix, why: &[String]) -> Observation {
        let error = fix.error.as_deref().map(|error| clip(error, 200));
        let mut content = match (fix.tests.first(), error, fix.symbols.first()) {
            (Some(test), Some(error), _) => format!("`{test}` failed: {error}"),
            (Some(test), None, _) => format!("`{test}` failed"),
            (None, Some(error), Some(symbol)) => format!("{error} (in `{symbol}`)"),
            (None, Some(error), None) => error,
            (None, None, Some(symbol)) => {
                format!("`{}` failed (in `{symbol}`)", clip(&fix.command, 120))
            }
            (None, None, None) => format!("`{}` failed", clip(&fix.command, 120)),
        };
        if !content.ends_with(['.', '!', '?']) {
            content.push('.');
        }
        if fix.tests.len() > 1 {
            content.push_str(&format!(" Failing before: {}.", list(&fix.tests, 5)));
        }
        if !why.is_empty() {
            content.push_str(&format!("\nCause: {}", why.join(" ")));
        }
        content.push_str(&format!("\nFixed in {}.", list(&fix.files, 5)));
        if !fix.changes.is_empty() {
            content.push_str(&format!(" Changed {}.", fix.changes.join("; ")));
        }
        content.push_str(&format!(
            "\nCheck: `{}` failed, then passed.",
            clip(&fix.command, 200)
        ));
        let content = self.secrets.hide(&content);
        let (content, _) = redact::remove_secrets(&content);
        Observation {
            kind: "bug-fix".to_owned(),
            content,
            files: fix.files.iter().take(20).cloned().collect(),
            cites: fix.cites.clone(),
            source: RULES_SOURCE.to_owned(),
            supersedes: None,
        }
    }

    /// The end of a turn (a `Stop`): what the turn established is noted,
    /// the fixes it held are stored when their change stayed (the files
    /// not put back), each with the answer's why, and the session's
    /// checkpoint replaces its earlier one. Fixes first, each with the
    /// failing runs it settles.
    pub fn end_turn(&mut self, turn: &Turn) -> Vec<(Verdict, usize)> {
        self.settled = 0;
        // Kept in the session's saved state: its secrets hidden first.
        let clean = |text: &str| redact::remove_secrets(&self.secrets.hide(text)).0;
        for request in &turn.requests {
            let request = clean(&one_line(request));
            if self.requests.last() != Some(&request) {
                self.requests.push(request);
            }
        }
        if self.requests.len() > MAX_REQUESTS {
            // The first request says what the session is for; the latest
            // what it is doing.
            self.requests
                .drain(1..self.requests.len() - MAX_REQUESTS + 1);
        }
        let answers: Vec<String> = turn.answers.iter().map(|a| clean(a)).collect();
        let compacted: Vec<String> = turn.compacted.iter().map(|c| clean(c)).collect();
        // A compaction summary's errors and fixes are what the session
        // established, told by the agent that did the work: causes first.
        let found = compacted
            .iter()
            .flat_map(|c| turn::sentences(c))
            .filter_map(|sentence| turn::said(&sentence).map(|_| (sentence, turn::Said::Cause)))
            .chain(
                answers
                    .iter()
                    .flat_map(|a| turn::sentences(a))
                    .filter_map(|sentence| turn::said(&sentence).map(|said| (sentence, said))),
            );
        for (sentence, said) in found.collect::<Vec<_>>() {
            if !self.learned.iter().any(|l| l.text == sentence) {
                self.learned.push(Learned {
                    text: sentence,
                    rank: said as u8,
                });
            }
        }
        if self.learned.len() > MAX_LEARNED {
            // The least telling first, the oldest of them.
            while self.learned.len() > MAX_LEARNED {
                let worst = self.learned.iter().map(|l| l.rank).max().unwrap_or(0);
                let at = self
                    .learned
                    .iter()
                    .position(|l| l.rank == worst)
                    .unwrap_or(0);
                self.learned.remove(at);
            }
        }
        if let Some(answer) = answers.last() {
            self.next = turn::next_step(answer);
        }
        for file in &turn.unchanged {
            if let Some(edits) = self.pending.get_mut(file) {
                edits.clear();
            }
        }
        let mut verdicts = Vec::new();
        for fix in std::mem::take(&mut self.held) {
            let mut fix = fix;
            fix.edits.retain(|(file, new)| {
                self.pending
                    .get(file)
                    .is_some_and(|edits| edits.iter().any(|p| &p.new == new))
            });
            fix.files
                .retain(|file| fix.edits.iter().any(|(f, _)| f == file));
            if fix.files.is_empty() {
                verdicts.push((Verdict::Skip(REVERTED), fix.settles));
                continue;
            }
            if self.stored >= MAX_STORED_PER_SESSION {
                verdicts.push((Verdict::Skip("session memory cap reached"), fix.settles));
                continue;
            }
            let mut names: Vec<String> = fix
                .files
                .iter()
                .map(|file| file.rsplit('/').next().unwrap_or(file).to_owned())
                .collect();
            names.extend(fix.symbols.iter().cloned());
            names.extend(fix.tests.iter().map(|test| {
                test.rsplit([':', '.', '/', ' '])
                    .next()
                    .unwrap_or(test)
                    .to_owned()
            }));
            let told: Vec<String> = compacted.iter().chain(&answers).cloned().collect();
            let why = turn::why(&told, &names, 2);
            let observation = self.fix_observation(&fix, &why);
            self.fixed.push(clip(
                observation.content.lines().next().unwrap_or_default(),
                160,
            ));
            self.stored += 1;
            verdicts.push((Verdict::Store(observation), fix.settles));
        }
        verdicts.push((self.checkpoint(), 0));
        verdicts
    }

    /// The session's checkpoint: what a teammate reads of the whole
    /// session, the turns' findings carried forward. Its first line is the
    /// first request; then every request (bounded), what the turns
    /// established (causes, then decisions, then results, at most
    /// four), the files whose change stayed (a file put
    /// back is no work done), the fixes, each check's latest state and the
    /// next step. `None` when the session changed nothing. Requests and
    /// answers are cleared of orders by the caller ([`Turn`]).
    pub fn summary(&self) -> Option<Observation> {
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
        let mut content = match self.requests.first() {
            Some(first) => clip(first, 160),
            None => format!("Work on {}", list(&changed, 3)),
        };
        if self.requests.len() > 1 {
            let later: Vec<String> = self.requests[1..]
                .iter()
                .rev()
                .take(MAX_REQUESTS_SHOWN)
                .rev()
                .map(|request| clip(request, 160))
                .collect();
            content.push_str(&format!("\nThen asked: {}", later.join(" / ")));
        }
        let mut learned: Vec<&Learned> = self.learned.iter().collect();
        learned.sort_by_key(|l| l.rank);
        learned.truncate(MAX_LEARNED_SHOWN);
        // In the order they were said.
        learned.sort_by_key(|l| self.learned.iter().position(|x| x == *l));
        if !learned.is_empty() {
            let said: Vec<&str> = learned.iter().map(|l| l.text.as_str()).collect();
            content.push_str(&format!("\nLearned: {}", said.join(" ")));
        }
        if !changed.is_empty() {
            content.push_str(&format!("\nDone: changed {}.", list(&changed, 12)));
            // What changed, when no fix below says it.
            let changes = self.what_changed(&changed, 2);
            if self.fixed.is_empty() && !changes.is_empty() {
                content.push_str(&format!(" Changed {}.", changes.join("; ")));
            }
        }
        for fix in self.fixed.iter().take(3) {
            content.push_str(&format!("\nFixed: {fix}"));
        }
        let mut checks: Vec<String> = self
            .passed
            .iter()
            .rev()
            .take(3)
            .map(|command| format!("`{}` passing", clip(command, 120)))
            .collect();
        checks.extend(
            self.failing
                .iter()
                .take(3)
                .map(|failure| format!("`{}` failing", clip(&failure.command, 120))),
        );
        if !checks.is_empty() {
            content.push_str(&format!("\nChecks: {}.", checks.join("; ")));
        }
        if let Some(next) = &self.next {
            content.push_str(&format!(
                "\nNext: {}",
                clip(next.trim_start_matches("Next:").trim(), 240)
            ));
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
            cites: Vec::new(),
            source: RULES_SOURCE.to_owned(),
            supersedes: self.checkpoint.clone(),
        })
    }

    /// The session's checkpoint at a `Stop` ([`Self::summary`]), replacing
    /// the one an earlier `Stop` stored; nothing when the session changed
    /// nothing, or nothing happened since its checkpoint.
    pub fn checkpoint(&self) -> Verdict {
        match self.summary() {
            Some(observation)
                if self.checkpoint.is_some()
                    && self.checkpoint_said.as_deref()
                        == Some(super::event::fingerprint(&observation.content).as_str()) =>
            {
                Verdict::Skip("nothing new since the session's checkpoint")
            }
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

    /// Notes that the session's checkpoint saying `content` is stored as `id`.
    pub fn checkpoint_stored(&mut self, id: &str, content: &str) {
        self.checkpoint = Some(id.to_owned());
        self.checkpoint_said = Some(super::event::fingerprint(content));
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
                span: edit.span.clone(),
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

/// Later requests and learned sentences a checkpoint shows.
const MAX_REQUESTS_SHOWN: usize = 4;
const MAX_LEARNED_SHOWN: usize = 4;

/// Whether two paths name the same file: equal, or one ends with the
/// other at a `/` (a runner prints paths from its own directory).
fn same_file(a: &str, b: &str) -> bool {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    long == short || long.ends_with(&format!("/{short}"))
}

/// Whether a path is a test's file, as the common runners name them
/// (`x_test.go`, `test_x.py`, `x.test.ts`, `x.spec.js`, `tests/…`).
fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    stem.ends_with("_test")
        || stem.starts_with("test_")
        || name.contains(".test.")
        || name.contains(".spec.")
        || stem.ends_with("Test")
        || path
            .split('/')
            .any(|part| matches!(part, "test" | "tests" | "spec" | "__tests__"))
}

/// The function an edit is in, from [`Edit::what`]'s `in NAME`.
fn symbol_of(what: &str) -> Option<&str> {
    let rest = what.strip_prefix("in ")?;
    let name = rest.split([',', ' ']).next()?;
    (!name.is_empty()).then_some(name)
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
