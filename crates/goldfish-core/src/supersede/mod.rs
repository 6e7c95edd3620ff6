//! Whether a new memory probably replaces an older one (issue 26, "found,
//! not only declared"): the two are of the same type, close in meaning (a
//! cosine the caller measured), about the same files when both name some,
//! and they differ in a fact: a number or a version, a name, a negation, or
//! the newer one says that something changed ("switched from X to Y",
//! "instead of", "no longer").
//!
//! Pure: the texts and the cosine come in, a [`Candidate`] with every
//! reason goes out. The thresholds were measured on the labelled pairs of
//! `fixtures/supersede/pairs.jsonl` (chosen on its `tune` half, reported on
//! both halves: `tests/it/supersede_found.rs`, `examples/supersede_table.rs`).

use serde::Serialize;

use crate::recall::Captured;

mod facts;
pub mod labelled;
mod order;
mod quantity;
mod words;

pub use facts::differences;
use facts::{Text, compare, not_restated};
pub use order::{Ranked, Update, newer_first};

/// Cosine from which `store` asks (at a terminal), names (a script, MCP)
/// the older memories a new one may replace: on the labelled set, the
/// detector at this threshold finds most updates (high recall); a person
/// or an agent decides. On the default (int8) model: the highest cosine
/// that keeps fp32's 0.55 recall of same-subject public pairs
/// (`scripts/eval/thresholds_public.py`, docs/BENCHMARKS.md).
pub const ASK: f64 = 0.54;

/// Cosine from which capture links a new memory to the one it replaces
/// without asking: the detector is at least 0.95 precise there on the
/// labelled set (its `tune` half, and the whole set).
pub const LINK: f64 = 0.80;

/// One memory as the detector sees it.
#[derive(Debug, Clone, Copy)]
pub struct Memo<'a> {
    pub kind: &'a str,
    pub content: &'a str,
    pub files: &'a [String],
    /// The spans of code it cites ([`crate::citation::Lines`]).
    pub spans: &'a [crate::citation::Lines<'a>],
}

/// Why an older memory is a candidate for replacement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// Cosine similarity of the two texts.
    pub cosine: f64,
    /// Always true (a candidate has the new memory's type): said so that
    /// `--json` spells every condition out.
    pub same_type: bool,
    /// Files both name (empty when either names none).
    pub shared_files: Vec<String>,
    /// The facts that differ, at least one.
    pub differences: Vec<Difference>,
    /// Words of the older text (besides the facts that differ) the newer
    /// does not say: none when the newer restates the older with a fact
    /// changed, which capture's link asks for ([`Candidate::links`]).
    pub not_restated: Vec<String>,
}

/// A fact in which the newer text differs from the older.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub kind: FactKind,
    /// What the older text says (absent when only the newer says it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub older: Option<String>,
    /// What the newer text says instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer: Option<String>,
}

/// What kind of fact differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FactKind {
    /// A quantity of the same kind (a count, a duration, a size, a time of
    /// day, a share) with another value.
    Number,
    /// A version (`1.82`, `v76`, `Node 22`) with another value.
    Version,
    /// A name (a capitalised word, an identifier, a path) one says and the
    /// other does not, each with its own.
    Name,
    /// One says `not`, `no`, `never`, `disabled`… and the other does not.
    Negation,
    /// One says a word and the other its opposite (`old` and `new`,
    /// `enabled` and `disabled`, `before` and `after`).
    Opposite,
    /// The newer says something changed: `from X to Y`, `instead of`, `no
    /// longer`, `switched`, `took over`…
    Change,
}

impl FactKind {
    pub fn name(self) -> &'static str {
        match self {
            FactKind::Number => "number",
            FactKind::Version => "version",
            FactKind::Name => "name",
            FactKind::Negation => "negation",
            FactKind::Opposite => "opposite",
            FactKind::Change => "change",
        }
    }
}

impl Difference {
    /// What only one text says: the older (`older` true) or the newer.
    fn only(kind: FactKind, said: &str, older: bool) -> Difference {
        let said = Some(said.to_owned());
        let (older, newer) = if older { (said, None) } else { (None, said) };
        Difference { kind, older, newer }
    }

    /// `number 20 → 50`, `negation not (older)`, `change switched`.
    pub fn explain(&self) -> String {
        match (&self.older, &self.newer) {
            (Some(older), Some(newer)) if self.kind == FactKind::Name => {
                format!("name {} → {}", names_shown(older), names_shown(newer))
            }
            (Some(older), Some(newer)) => format!("{} {older} → {newer}", self.kind.name()),
            (Some(older), None) => format!("{} `{older}` only in the older", self.kind.name()),
            (None, Some(newer)) => format!("{} `{newer}` only in the newer", self.kind.name()),
            (None, None) => self.kind.name().to_owned(),
        }
    }
}

/// How many names of a side [`Difference::explain`] shows.
const NAMES_SHOWN: usize = 4;

/// `` `Redis` ``, `` `sliced`, `abcdefg` and 3 more ``: the names of one side
/// of a name difference (joined by `, `), each as code.
fn names_shown(names: &str) -> String {
    let names: Vec<&str> = names.split(", ").collect();
    let mut shown: Vec<String> = names
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| format!("`{n}`"))
        .collect();
    if names.len() > NAMES_SHOWN {
        shown.push(format!("{} more", names.len() - NAMES_SHOWN));
    }
    shown.join(", ")
}

impl Candidate {
    /// One line: `0.83 similar, same type, shared files a.rs, number 20 → 50`.
    pub fn explain(&self) -> String {
        let mut parts = vec![
            format!("{:.2} similar", self.cosine),
            "same type".to_owned(),
        ];
        if !self.shared_files.is_empty() {
            parts.push(format!("shared files {}", self.shared_files.join(", ")));
        }
        parts.extend(self.differences.iter().map(Difference::explain));
        if !self.not_restated.is_empty() {
            parts.push(format!("not restated: {}", self.not_restated.join(" ")));
        }
        parts.join(", ")
    }

    /// Whether capture may link the two without asking: at least [`LINK`]
    /// similar, and the newer restates everything the older said but the
    /// facts that changed (a value changed in place, not another subject
    /// with another value: `1.0 in staging` is no update of `0.1 in
    /// production`).
    pub fn links(&self) -> bool {
        self.cosine >= LINK && self.not_restated.is_empty()
    }

    /// Whether the newer says it changes what the older says: `from X to
    /// Y`, X said by the older and Y not.
    pub fn names_the_change(&self) -> bool {
        self.differences
            .iter()
            .any(|d| d.kind == FactKind::Change && d.older.is_some() && d.newer.is_some())
    }
}

/// Whether `newer` probably replaces `older`, given the cosine of their
/// texts and the threshold to reach: `None` unless they have the same type,
/// reach it, share a file when both name files (a line when both cite
/// spans), and differ in a fact.
pub fn judge(older: Memo, newer: Memo, cosine: f64, threshold: f64) -> Option<Candidate> {
    if older.kind != newer.kind || cosine < threshold {
        return None;
    }
    let shared_files: Vec<String> = newer
        .files
        .iter()
        .filter(|f| older.files.contains(f))
        .cloned()
        .collect();
    if !older.files.is_empty() && !newer.files.is_empty() && shared_files.is_empty() {
        return None;
    }
    // Both cite code, and not the same lines: about different code, however
    // alike the words.
    if crate::citation::apart(older.spans, newer.spans) {
        return None;
    }
    let (old, new) = (Text::read(older.content), Text::read(newer.content));
    let differences = compare(&old, &new);
    if differences.is_empty() {
        return None;
    }
    Some(Candidate {
        cosine,
        same_type: true,
        shared_files,
        not_restated: not_restated(&old, &new, &differences),
        differences,
    })
}

/// Why capture does not link a captured memory to an older one it
/// probably replaces, or `Ok` when it does (records `supersedes` without
/// asking anyone). `older_source` is the older memory's `source`;
/// `orders_removed` says that text reading as an order to an agent was
/// removed from the event the new memory comes from. The caller offers
/// only older memories agents receive unmarked (trusted, unflagged).
///
/// A captured memory summarises text nobody vetted (a tool's output, a
/// transcript, a model's answer), so it replaces only what capture itself
/// wrote: a memory a person or an agent stored on purpose is named, never
/// hidden, and an event that carried an order to an agent links nothing.
pub fn capture_links(
    candidate: &Candidate,
    kind: &str,
    older_source: Option<&str>,
    orders_removed: bool,
) -> Result<(), &'static str> {
    if candidate.cosine < LINK {
        return Err("under the link threshold");
    }
    if !candidate.not_restated.is_empty() {
        return Err("it does not restate the older memory with a fact changed");
    }
    if kind == "checkpoint" {
        return Err("a later checkpoint covers an older one (tidy), it does not replace it");
    }
    if !older_source.is_some_and(|s| s.starts_with(Captured::SOURCE_PREFIX)) {
        return Err("capture replaces only what capture wrote");
    }
    if orders_removed {
        return Err("text read as an order to an agent was removed from the event");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
