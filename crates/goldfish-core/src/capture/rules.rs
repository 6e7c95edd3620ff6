//! The rules that decide, without a model, what a tool event is worth: a
//! failing check that passes after edits is a bug fix; reads, searches,
//! trivial commands and dead ends are not memories.

use serde::{Deserialize, Serialize};

use super::event::{Edit, Facts, Outcome};
use super::redact;

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
pub struct Session {
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
    /// changed in between ([`Session::settled`] counts the runs it settles).
    Wait(&'static str),
}

impl Session {
    /// Applies one event's facts; returns what to store, if anything.
    pub fn apply(&mut self, facts: &Facts) -> Verdict {
        self.events += 1;
        self.settled = 0;
        if self.events > MAX_EVENTS_PER_SESSION {
            return Verdict::Skip("session event cap reached");
        }
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
        // A file changed by a tool whose edit is not known (a notebook, a
        // payload without the texts) counts as changed.
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
            Some(Outcome::Failed) if check => {
                // The same check failing again is the failure it was, not a
                // new one: what changed since it first failed still counts
                // toward the fix, and its first error and tests are told
                // first (a later run may fail further along).
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
            Some(Outcome::Failed) => Verdict::Skip("command failed (a dead end is not stored)"),
            _ if is_trivial(&command) => Verdict::Skip("trivial command"),
            _ if !check => Verdict::Consult("command succeeded, nothing learned"),
            _ => self.passed_check(command),
        }
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

/// Folders that hold architecture decision records, by the conventions of
/// adr-tools (`doc/adr/`), MADR (`docs/decisions/`) and their kin.
const DECISION_FOLDERS: &[&str] = &["adr", "adrs", "decisions", "architecture-decisions"];

/// A new decision record written (a markdown file in a decision folder) is
/// a decision: its title and decision (else first paragraph), naming the
/// file. The layouts of adr-tools and Nygard (`# 7. Title`, `## Status`,
/// `## Decision`) and MADR (YAML front matter or `* Status:` lines,
/// `## Decision Outcome`) are read; numbers (`7.`, `ADR 7:`, `0007`) and
/// status, date and deciders lines are left out.
fn decision_record(facts: &Facts) -> Option<Observation> {
    let [path] = facts.modified.as_slice() else {
        return None;
    };
    let path_ref = std::path::Path::new(path);
    let in_folder = path_ref
        .parent()
        .and_then(|dir| dir.file_name())
        .and_then(|name| name.to_str())
        .is_some_and(|name| DECISION_FOLDERS.contains(&name.to_ascii_lowercase().as_str()));
    if path_ref.extension().is_none_or(|ext| ext != "md") {
        return None;
    }
    let text = facts.written.as_deref()?;
    if !in_folder && !reads_as_record(text) {
        return None;
    }
    let mut lines = without_front_matter(text).lines().map(str::trim).peekable();
    let title = record_title(lines.by_ref().find(|line| !line.is_empty())?);
    // A setext heading's underline.
    lines.next_if(|line| !line.is_empty() && line.chars().all(|c| c == '=' || c == '-'));
    // The paragraphs after the title, each under the heading it follows.
    let mut paragraphs: Vec<(String, Vec<&str>)> = Vec::new();
    let mut heading = String::new();
    let mut open = false;
    for line in lines {
        if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_lowercase();
            open = false;
        } else if line.is_empty() || is_record_metadata(line) {
            open = false;
        } else if open {
            paragraphs.last_mut().expect("open").1.push(line);
        } else {
            paragraphs.push((heading.clone(), vec![line]));
            open = true;
        }
    }
    // The decision itself (MADR's "Decision Outcome", Nygard's "Decision"),
    // else the first paragraph that is not under a status or date heading.
    let paragraph = paragraphs
        .iter()
        .find(|(heading, _)| heading.starts_with("decision"))
        .or_else(|| {
            paragraphs
                .iter()
                .find(|(heading, _)| !matches!(heading.as_str(), "status" | "date"))
        })
        .map(|(_, lines)| lines.join(" "))
        .unwrap_or_default();
    // A title or decision that was all order (removed when the facts were
    // read) is no decision.
    if redact::said(&title) == 0 || redact::said(&paragraph) == 0 {
        return None;
    }
    let content = format!("Decision ({path}): {title}. {}", clip(&paragraph, 400));
    let (content, _) = redact::remove_secrets(&content);
    Some(Observation {
        kind: "decision".to_owned(),
        content,
        files: vec![path.clone()],
        source: RULES_SOURCE.to_owned(),
        supersedes: None,
    })
}

/// Whether a markdown text outside a decision folder is laid out as a
/// decision record, wherever the project keeps them (`docs/architecture/`,
/// `design/`): a heading that is the decision (Nygard's "Decision", MADR's
/// "Decision Outcome") and one a record has beside it ("Status", "Context",
/// "Consequences", MADR's "Context and Problem Statement").
fn reads_as_record(text: &str) -> bool {
    let headings: Vec<String> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("##"))
        .map(|heading| {
            heading
                .trim_start_matches('#')
                .trim()
                .trim_end_matches(':')
                .to_lowercase()
        })
        .collect();
    let has = |names: &[&str]| headings.iter().any(|h| names.contains(&h.as_str()));
    has(&["decision", "decision outcome"])
        && has(&[
            "status",
            "context",
            "consequences",
            "context and problem statement",
        ])
}

/// MADR's YAML front matter (`---` … `---`) left out.
fn without_front_matter(text: &str) -> &str {
    let trimmed = text.trim_start();
    let Some(rest) = trimmed.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---") {
        Some(end) => rest[end + 4..].trim_start_matches(['-', '\n']),
        None => text,
    }
}

/// A record's title without its heading marks and number: `# 7. Use WAL`,
/// `# ADR 7: Use WAL`, `# ADR-0007 - Use WAL`, `# 0007 Use WAL` → `Use WAL`.
fn record_title(line: &str) -> String {
    let mut title = line.trim_start_matches('#').trim();
    for prefix in ["ADR", "adr", "Adr"] {
        if let Some(rest) = title.strip_prefix(prefix)
            && rest
                .trim_start_matches(['-', ' '])
                .starts_with(|c: char| c.is_ascii_digit())
        {
            title = rest.trim_start_matches(['-', ' ']);
        }
    }
    let number_end = title
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(title.len());
    if number_end > 0 {
        let rest = &title[number_end..];
        let separated = rest.trim_start_matches(['.', ':', '-', '–', '—', ' ']);
        // `7. Title`, `7: Title`, `0007 Title`: a number, then a separator.
        if separated.len() < rest.len() {
            title = separated;
        }
    }
    title.trim().trim_end_matches('.').trim().to_owned()
}

/// `Status: Accepted`, `* Date: 2026-11-02`, `- **Deciders:** Ada`: a
/// record's metadata, not what it says.
fn is_record_metadata(line: &str) -> bool {
    let line = line
        .trim_start_matches(['*', '-', ' '])
        .trim_start_matches("**");
    let Some((key, _)) = line.split_once(':') else {
        return false;
    };
    matches!(
        key.trim_end_matches("**").trim().to_lowercase().as_str(),
        "status"
            | "date"
            | "deciders"
            | "decision-makers"
            | "authors"
            | "author"
            | "consulted"
            | "informed"
            | "technical story"
            | "supersedes"
            | "superseded by"
    )
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if list.len() < MAX_PATHS && !list.iter().any(|i| i == item) {
        list.push(item.to_owned());
    }
}

fn normalize(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Commands whose failure is a finding and whose later success a fix:
/// tests, builds, type checks and linters (a program and its subcommand).
const CHECKS: &[&str] = &[
    "cargo test",
    "cargo nextest",
    "cargo build",
    "cargo check",
    "cargo clippy",
    "cargo run",
    "pytest",
    "python -m pytest",
    "python3 -m pytest",
    "npm test",
    "npm run test",
    "npm run build",
    "npm run lint",
    "yarn test",
    "pnpm test",
    "npx jest",
    "npx vitest",
    "jest",
    "vitest",
    "go test",
    "go build",
    "go vet",
    "make",
    "mvn test",
    "mvn verify",
    "gradle test",
    "./gradlew test",
    "tsc",
    "npx tsc",
    "mypy",
    "ruff",
    "rspec",
    "bundle exec rspec",
    "dotnet test",
    "dotnet build",
    "ctest",
    "bash scripts/test.sh",
    "scripts/test.sh",
];

/// Flags that change what a run prints, not what it runs.
const OUTPUT_ONLY: &[&str] = &[
    "-q",
    "--quiet",
    "-v",
    "-vv",
    "-vvv",
    "--verbose",
    "-s",
    "--nocapture",
    "--no-capture",
    "--show-output",
];

/// Whether `command` runs a check: a test run, a build, a linter.
pub fn is_check(command: &str) -> bool {
    check_of(command).is_some()
}

/// The check `command` runs (its [`CHECKS`] entry) and its arguments but
/// [`OUTPUT_ONLY`] flags: the last command of a `cd x && …` chain, without
/// leading `A=1` assignments.
fn check_of(command: &str) -> Option<(&'static str, Vec<&str>)> {
    let last = strip_env(command.rsplit("&&").next().unwrap_or(command).trim());
    let last = before_pipe(last);
    let known = |last: &str| {
        CHECKS
            .iter()
            .filter(|check| last == **check || last.starts_with(&format!("{check} ")))
            .max_by_key(|check| check.len())
            .copied()
    };
    let check = match known(last) {
        Some(check) => check,
        None => {
            // A task of the project's own runner named like a check
            // (`mise run test:ci`, `just lint`, `pnpm test`), or one that
            // runs a known check (`uv run pytest`).
            let runner = RUNNERS
                .iter()
                .filter(|runner| last.starts_with(&format!("{runner} ")))
                .max_by_key(|runner| runner.len())?;
            let rest = strip_env(last[runner.len()..].trim_start());
            let task = rest.split_whitespace().next()?;
            let named = task
                .split([':', '-', '_', '/', '.'])
                .any(|word| CHECK_WORDS.contains(&word.to_ascii_lowercase().as_str()));
            if !named && known(rest).is_none() {
                return None;
            }
            runner
        }
    };
    let arguments = last[check.len()..]
        .split_whitespace()
        .filter(|arg| {
            !OUTPUT_ONLY.contains(arg) && !arg.starts_with("--color") && !is_redirect(arg)
        })
        .collect();
    Some((check, arguments))
}

/// Programs that run a project's own tasks (package.json scripts, a
/// Makefile, a justfile, mise, pyproject's tools, mix): a task of theirs
/// is a check when [`CHECK_WORDS`] names it, or it runs a known check.
const RUNNERS: &[&str] = &[
    "mise run",
    "mise r",
    "just",
    "make",
    "task",
    "npm run",
    "pnpm run",
    "pnpm",
    "yarn run",
    "yarn",
    "bun run",
    "bun",
    "mix",
    "rake",
    "uv run",
    "poetry run",
    "pipenv run",
    "hatch run",
    "rye run",
    "pdm run",
    "npx",
    "bunx",
    "deno task",
    "deno",
    "tox -e",
    "nox -s",
];

/// The words that name a check among a task's name's parts
/// (`test:integration`, `lint-go`, `type_check`).
const CHECK_WORDS: &[&str] = &[
    "test",
    "tests",
    "spec",
    "specs",
    "lint",
    "linter",
    "build",
    "check",
    "checks",
    "typecheck",
    "types",
    "vet",
    "clippy",
    "ci",
    "verify",
    "compile",
    "e2e",
    "integration",
    "unit",
];

/// The command a pipeline's output comes from: what precedes the first
/// `|` that is not `||` (a `| tail -50` or `| grep FAIL` shows less of
/// the same check).
fn before_pipe(command: &str) -> &str {
    let bytes = command.as_bytes();
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'|') if bytes.get(i + 1) != Some(&b'|') && (i == 0 || bytes[i - 1] != b'|') => {
                return command[..i].trim_end();
            }
            _ => {}
        }
    }
    command
}

/// Whether a command's output ends like a test runner's run: go's `ok`
/// and `PASS` lines, cargo's `test result:`, pytest's, jest's and
/// vitest's counts, rspec's and ExUnit's `examples`/`tests, 0 failures`.
fn runner_summary(output: &str) -> bool {
    output.lines().map(str::trim).any(|line| {
        line == "PASS"
            || line.starts_with("ok  \t")
            || line.starts_with("ok \t")
            || line.starts_with("test result: ")
            || line.starts_with("Tests:")
            || line.starts_with("Test Files ")
            || (line.starts_with('=') && (line.contains(" passed") || line.contains(" failed")))
            || ((line.contains(" examples, ") || line.contains(" tests, "))
                && line.contains(" failure"))
    })
}

/// A redirection (`2>&1`, `>/dev/null`, `2> err.log`'s first word).
fn is_redirect(word: &str) -> bool {
    let word = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    word.starts_with('>') || word.starts_with('<')
}

/// `A=1 B=2 cmd` → `cmd`.
fn strip_env(command: &str) -> &str {
    let mut rest = command;
    while let Some((word, tail)) = rest.split_once(' ') {
        if word.contains('=') && !word.starts_with('-') {
            rest = tail.trim_start();
        } else {
            break;
        }
    }
    rest
}

/// Whether the run `passed` covers the run `failed`, so that the tests
/// that failed then pass now: the same check (program and subcommand), and
/// every argument of `passed` (its filters, targets, paths) one of
/// `failed`, or a prefix of one up to `::` or `/`. `cargo test` covers
/// `cargo test t0` (a superset run), `cargo test sync` covers `cargo test
/// sync::branch_switch`, `pytest tests` covers `pytest tests/test_a.py`;
/// `cargo test t48` does not cover `cargo test t0`, nor `cargo test t0`
/// `cargo test` (t48 may still fail). Output flags (`-q`, `-v`) do not
/// count. Arguments are compared as words, not parsed: an approximation
/// that errs towards "not the same check" when they differ.
fn covers(passed: &str, failed: &str) -> bool {
    let (Some((check, passed)), Some((failed_check, failed))) =
        (check_of(passed), check_of(failed))
    else {
        // A check known by its output only: the same command.
        return before_pipe(passed) == before_pipe(failed);
    };
    check == failed_check
        && passed.iter().all(|p| {
            failed.iter().any(|f| {
                *f == *p
                    || (f.starts_with(p)
                        && (p.ends_with('/') || matches!(f.as_bytes()[p.len()], b'/' | b':')))
            })
        })
}

fn is_trivial(command: &str) -> bool {
    const TRIVIAL: &[&str] = &[
        "ls",
        "cd",
        "pwd",
        "cat",
        "head",
        "tail",
        "echo",
        "which",
        "find",
        "grep",
        "rg",
        "wc",
        "tree",
        "less",
        "file",
        "stat",
        "du",
        "df",
        "env",
        "date",
        "whoami",
        "sed -n",
        "git status",
        "git log",
        "git diff",
        "git show",
        "git branch",
        "git remote",
    ];
    let last = strip_env(command.rsplit("&&").next().unwrap_or(command).trim());
    TRIVIAL
        .iter()
        .any(|t| last == *t || last.starts_with(&format!("{t} ")))
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
mod tests {
    use super::*;

    fn bash(command: &str, outcome: Outcome) -> Facts {
        Facts {
            tool: "Bash".to_owned(),
            command: Some(command.to_owned()),
            outcome: Some(outcome),
            ..Facts::default()
        }
    }

    fn edit(path: &str) -> Facts {
        Facts {
            tool: "Edit".to_owned(),
            modified: vec![path.to_owned()],
            ..Facts::default()
        }
    }

    fn edit_text(path: &str, old: &str, new: &str) -> Facts {
        Facts {
            edits: vec![Edit {
                file: path.to_owned(),
                old: Some(old.to_owned()),
                new: new.to_owned(),
                what: None,
            }],
            ..edit(path)
        }
    }

    #[test]
    fn transcript_text_is_one_bounded_line_that_keeps_the_next_step() {
        let answer = format!(
            "Ported the renderer.\n\n{}\nNext: wire the new layout into the CLI.",
            "Details of the port. ".repeat(40)
        );
        let line = answer_line(&answer);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.len() <= MAX_ANSWER + 10, "{line}");
        assert!(line.starts_with("Ported the renderer."), "{line}");
        assert!(
            line.ends_with("Next: wire the new layout into the CLI."),
            "{line}"
        );
        assert_eq!(one_line("a\n\n  b\tc"), "a b c");
    }

    #[test]
    fn checks_are_known_by_the_projects_tasks_pipes_and_output() {
        for check in [
            "mise run test:ci",
            "mise run lint 2>&1 | tail -30",
            "just test",
            "pnpm test -- --run",
            "bun test",
            "uv run pytest -x",
            "mix test",
            "go test ./... 2>&1 | head -50",
        ] {
            assert!(is_check(check), "{check}");
        }
        for other in [
            "mise run fmt",
            "just release",
            "pnpm install",
            "uv run python x.py",
        ] {
            assert!(!is_check(other), "{other}");
        }
        assert!(covers("mise run test", "mise run test:ci"));
        assert!(covers(
            "go test ./pkg/ 2>&1 | tail -5",
            "go test ./pkg/ | head -100"
        ));
        assert!(runner_summary("ok  \tgithub.com/x/y\t0.01s"));
        assert!(runner_summary("==== 3 passed in 0.1s ===="));
        assert!(!runner_summary("hello world"));
    }

    #[test]
    fn edits_undone_or_restored_leave_no_fix_and_the_checkpoint_names_what_stayed() {
        let failed = bash("go test ./...", Outcome::Failed);
        let passed = bash("go test ./...", Outcome::Succeeded);
        // The reverse edit undoes the first.
        let mut session = Session::default();
        session.apply(&edit_text("a.go", "x", "y"));
        session.apply(&failed);
        session.apply(&edit_text("a.go", "y", "x"));
        assert_eq!(session.apply(&passed), Verdict::Skip(REVERTED));
        // `git restore` (or `git checkout -- PATH`) puts the file back.
        let mut session = Session::default();
        session.apply(&failed);
        session.apply(&edit_text("pkg/a.go", "x", "y"));
        session.apply(&bash("git restore pkg/a.go", Outcome::Succeeded));
        assert_eq!(session.apply(&passed), Verdict::Skip(REVERTED));
        // An edit that stays is a fix; the checkpoint names only what
        // stayed changed.
        let mut session = Session::default();
        session.apply(&edit_text("b.go", "1", "2"));
        session.apply(&failed);
        session.apply(&edit_text("a.go", "x", "y"));
        session.apply(&edit_text("b.go", "2", "1"));
        assert!(matches!(session.apply(&passed), Verdict::Store(_)));
        let summary = session.summary(None, None).unwrap();
        assert_eq!(summary.files, ["a.go"]);
        // An interrupted run neither fails nor passes.
        let mut interrupted = bash("go test ./...", Outcome::Failed);
        interrupted.interrupted = true;
        assert_eq!(session.apply(&interrupted), Verdict::Skip(INTERRUPTED));
        assert!(session.failing.is_empty());
    }

    /// A session whose fix no check saw (a public SWE-agent trajectory,
    /// fixtures/capture-sessions/py-swe-humanevalfix-0): its checkpoint
    /// says what changed, not only which file; with a fix, the fix says it.
    #[test]
    fn a_checkpoint_says_what_changed_when_no_fix_does() {
        let mut session = Session::default();
        let mut fix = edit_text(
            "main.py",
            "if elem - elem2 < threshold:",
            "if abs(elem - elem2) < threshold:",
        );
        fix.edits[0].what = Some("`if abs(elem - elem2) < threshold:`".to_owned());
        session.apply(&fix);
        let summary = session.summary(Some("fix the bug"), None).unwrap();
        assert!(
            summary.content.contains(
                "Done: changed main.py. Changed main.py: `if abs(elem - elem2) < threshold:`."
            ),
            "{}",
            summary.content
        );
        session.apply(&bash("pytest", Outcome::Failed));
        session.apply(&fix);
        session.apply(&bash("pytest", Outcome::Succeeded));
        let summary = session.summary(None, None).unwrap();
        assert_eq!(
            summary.content.matches("Changed main.py").count(),
            1,
            "{}",
            summary.content
        );
    }

    /// A real session (fixtures/capture-sessions/go-entire-concurrent-sessions):
    /// the test failed, the code was fixed, the test failed further along,
    /// the test was fixed, it passed. The same check failing again is one
    /// failure: the fix names the code changed after its first run, and
    /// its first error, not only what changed after the last.
    #[test]
    fn a_check_failing_again_keeps_what_changed_since_it_first_failed() {
        let mut session = Session::default();
        let mut first = bash("go test -run TestBoth ./it/", Outcome::Failed);
        first.failing_tests = vec!["TestBoth".to_owned()];
        first.errors = vec!["it_test.go:309: Session B: 0 checkpoints".to_owned()];
        assert_eq!(session.apply(&first), Verdict::Wait(WAITING));
        session.apply(&edit_text(
            "cli/handlers.go",
            "state{}",
            "state{WorktreePath: dir}",
        ));
        let mut again = bash("go test -run TestBoth ./it/", Outcome::Failed);
        again.failing_tests = vec!["TestBoth".to_owned()];
        again.errors = vec!["it_test.go:320: no full.jsonl".to_owned()];
        assert_eq!(session.apply(&again), Verdict::Wait(WAITING));
        session.apply(&edit_text(
            "it/it_test.go",
            "transcript.jsonl",
            "full.jsonl",
        ));
        let Verdict::Store(fix) =
            session.apply(&bash("go test -run TestBoth ./it/", Outcome::Succeeded))
        else {
            panic!("a fix is stored")
        };
        assert_eq!(fix.files, ["cli/handlers.go", "it/it_test.go"]);
        assert!(
            fix.content.contains("Session B: 0 checkpoints"),
            "{}",
            fix.content
        );
        assert!(fix.content.contains("cli/handlers.go"), "{}", fix.content);
        assert_eq!(session.settled, 2);
    }

    #[test]
    fn a_check_failing_then_passing_after_an_edit_is_a_bug_fix() {
        let mut session = Session::default();
        let mut failed = bash("cargo test --test it sync", Outcome::Failed);
        failed.failing_tests = vec!["sync::branch_switch".to_owned()];
        assert_eq!(session.apply(&failed), Verdict::Wait(WAITING));
        // Failing again: one failure, of two runs.
        assert_eq!(session.apply(&failed), Verdict::Wait(WAITING));
        assert!(matches!(
            session.apply(&edit("src/git.rs")),
            Verdict::Consult(_)
        ));
        assert_eq!(session.settled, 0);
        let Verdict::Store(observation) =
            session.apply(&bash("cargo test --test it", Outcome::Succeeded))
        else {
            panic!("a fix is stored");
        };
        assert_eq!(session.settled, 2, "the fix settles both failing runs");
        assert_eq!(observation.kind, "bug-fix");
        assert_eq!(observation.files, ["src/git.rs"]);
        assert!(
            observation.content.contains("sync::branch_switch"),
            "{}",
            observation.content
        );
    }

    #[test]
    fn trivial_commands_dead_ends_and_flaky_passes_are_not_stored() {
        let mut session = Session::default();
        assert_eq!(
            session.apply(&bash("ls -la", Outcome::Succeeded)),
            Verdict::Skip("trivial command")
        );
        assert!(matches!(
            session.apply(&bash("curl http://x", Outcome::Failed)),
            Verdict::Skip(_)
        ));
        session.apply(&bash("pytest tests", Outcome::Failed));
        assert!(matches!(
            session.apply(&bash("pytest tests", Outcome::Succeeded)),
            Verdict::Skip(_)
        ));
        assert_eq!(session.settled, 1, "a flaky pass settles the failing run");
        assert!(session.summary(None, None).is_none(), "nothing changed");
    }

    #[test]
    fn a_new_decision_record_is_a_decision_and_other_writes_are_not() {
        let write = |path: &str, text: &str| Facts {
            tool: "Write".into(),
            modified: vec![path.into()],
            written: Some(text.into()),
            ..Facts::default()
        };
        let mut session = Session::default();
        let Verdict::Store(decision) = session.apply(&write(
            "docs/adr/0007-queue-in-home.md",
            "# 7. The capture queue lives in the home\n\nStatus: accepted\n\nThe queue is never in the repository: it holds tool output.\n\n## Consequences\n\nNone.",
        )) else {
            panic!("a decision record is a decision")
        };
        assert_eq!(decision.kind, "decision");
        assert_eq!(
            decision.content,
            "Decision (docs/adr/0007-queue-in-home.md): The capture queue lives in the home. The queue is never in the repository: it holds tool output."
        );
        // Nygard's layout: the paragraph under "Decision".
        let Verdict::Store(nygard) = session.apply(&write(
            "doc/adr/0002-use-wal.md",
            "# 2. Use WAL\n\nDate: 2026-11-02\n\n## Status\n\nAccepted\n\n## Context\n\nReaders blocked.\n\n## Decision\n\nWe will open SQLite in WAL mode.\n",
        )) else {
            panic!("a decision record is a decision")
        };
        assert_eq!(
            nygard.content,
            "Decision (doc/adr/0002-use-wal.md): Use WAL. We will open SQLite in WAL mode."
        );
        assert_eq!(decision.files, vec!["docs/adr/0007-queue-in-home.md"]);
        // Numbers as other tools write them, MADR's metadata lines and
        // front matter, a setext title.
        for (text, expected) in [
            (
                "# ADR 7: Cursor pagination\n\nStatus: Accepted\nDate: 2026-11-02\n\nList endpoints take a cursor.",
                "Cursor pagination. List endpoints take a cursor.",
            ),
            (
                "# ADR-0007 - Cursor pagination\n\n* Status: accepted\n* Deciders: Ada, Linus\n\n## Context and Problem Statement\n\nOffsets skip rows.\n\n## Decision Outcome\n\nChosen option: \"cursor\", because rows move.",
                "Cursor pagination. Chosen option: \"cursor\", because rows move.",
            ),
            (
                "---\nstatus: accepted\ndate: 2026-11-02\n---\n\n# 0007 Cursor pagination\n\n**Status:** Accepted\n\nList endpoints take a cursor.",
                "Cursor pagination. List endpoints take a cursor.",
            ),
            (
                "Cursor pagination\n=================\n\nList endpoints take a cursor.",
                "Cursor pagination. List endpoints take a cursor.",
            ),
        ] {
            let Verdict::Store(decision) =
                Session::default().apply(&write("docs/decisions/0007-cursor.md", text))
            else {
                panic!("a decision record is a decision: {text}")
            };
            assert_eq!(
                decision.content,
                format!("Decision (docs/decisions/0007-cursor.md): {expected}")
            );
        }
        // Wherever the project keeps them: a record's layout is enough.
        let Verdict::Store(elsewhere) = Session::default().apply(&write(
            "docs/architecture/0003-keyword-index.md",
            "# 3. One keyword engine\n\n## Status\n\nAccepted\n\n## Context\n\nTwo engines disagreed.\n\n## Decision\n\nThe keyword index is tantivy alone.\n",
        )) else {
            panic!("a record outside a decision folder is a decision")
        };
        assert_eq!(
            elsewhere.content,
            "Decision (docs/architecture/0003-keyword-index.md): One keyword engine. The keyword index is tantivy alone."
        );
        for (path, text) in [
            ("docs/guide.md", "# Guide\n\nHow to start."),
            (
                "docs/architecture/overview.md",
                "# Overview\n\n## Context\n\nThe layers.\n\n## Decision trees\n\nHow ranking branches.",
            ),
            ("docs/adr/README.md.bak", "# x\n\ny"),
            ("src/adr/mod.rs", "// code"),
            ("docs/decisions/0001-x.md", "# Only a title"),
        ] {
            assert!(
                matches!(session.apply(&write(path, text)), Verdict::Consult(_)),
                "{path}"
            );
        }
    }

    /// Regression: `cargo test t0` failing, then `cargo test t48` passing
    /// after an edit was stored as a fix of t0 (the same tool, another test).
    #[test]
    fn a_different_test_passing_is_no_fix() {
        let mut session = Session::default();
        let mut failed = bash("cargo test t0", Outcome::Failed);
        failed.failing_tests = vec!["parse::t0".to_owned()];
        session.apply(&failed);
        session.apply(&edit("src/parse.rs"));
        assert_eq!(
            session.apply(&bash("cargo test t48", Outcome::Succeeded)),
            Verdict::Skip("check passed")
        );
        // The whole suite passing covers t0.
        let Verdict::Store(fix) = session.apply(&bash("cargo test", Outcome::Succeeded)) else {
            panic!("a fix is stored");
        };
        assert!(fix.content.contains("parse::t0"), "{}", fix.content);
    }

    #[test]
    fn a_passing_run_covers_a_failing_one_it_includes() {
        for (failed, passed) in [
            ("cargo test t0", "cargo test"),
            ("cargo test t0", "cargo test t0"),
            ("cargo test --test it sync", "cargo test --test it"),
            ("cargo test sync::branch_switch", "cargo test sync"),
            ("cargo test -q t0", "cargo test t0"),
            ("cargo test t0", "cargo test -q"),
            ("cd app && cargo test t0", "cargo test"),
            (
                "pytest tests/test_a.py::test_x -q",
                "pytest tests/test_a.py",
            ),
            ("pytest tests/unit/test_a.py", "pytest tests"),
            ("go test ./merge/...", "go test ./merge/..."),
        ] {
            assert!(covers(passed, failed), "`{passed}` covers `{failed}`");
        }
        for (failed, passed) in [
            ("cargo test t0", "cargo test t48"),
            ("cargo test", "cargo test t0"),
            ("cargo test --test it", "cargo test --lib"),
            ("cargo test -p core t0", "cargo test -p cli"),
            ("cargo test t0", "cargo build"),
            ("pytest tests/test_a.py", "pytest tests/test_b.py"),
            ("npx jest src/ui", "npx jest src/api"),
        ] {
            assert!(
                !covers(passed, failed),
                "`{passed}` does not cover `{failed}`"
            );
        }
    }

    #[test]
    fn checks_are_recognised_behind_cd_and_env() {
        assert!(is_check("cd app && RUST_LOG=debug cargo test -q"));
        assert!(!is_check("cargo fmt"));
        assert!(!is_check("echo cargo test"));
    }
}
