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

use std::collections::BTreeSet;

use serde::Serialize;

use crate::recall::Captured;

pub mod labelled;

/// Cosine from which `store` asks (at a terminal), names (a script, MCP)
/// the older memories a new one may replace: on the labelled set, the
/// detector at this threshold finds most updates (high recall); a person
/// or an agent decides.
pub const ASK: f64 = 0.55;

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
            (Some(older), Some(newer)) => format!("{} {older} → {newer}", self.kind.name()),
            (Some(older), None) => format!("{} `{older}` only in the older", self.kind.name()),
            (None, Some(newer)) => format!("{} `{newer}` only in the newer", self.kind.name()),
            (None, None) => self.kind.name().to_owned(),
        }
    }
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
/// reach it, share a file when both name files, and differ in a fact.
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

/// One result of a recall as [`newer_first`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct Ranked<'a> {
    pub memo: Memo<'a>,
    /// RFC 3339; the newer of two is the later.
    pub timestamp: &'a str,
    /// Whether agents receive it unmarked: an untrusted result never moves
    /// above a trusted one.
    pub trusted: bool,
}

/// A newer result moved above an older one it probably updates.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// Indexes into the results as ranked.
    pub newer: usize,
    pub older: usize,
    pub why: Candidate,
}

/// Newer wins when facts collide: the order in which to show `results`
/// (best first) when a newer result updates an older one shown above it:
/// [`judge`] at [`ASK`] (same type, at least 0.55 similar, a fact that
/// differs), and either capture's rule ([`Candidate::links`]: at least
/// 0.80 similar, the older restated with a fact changed; 1.00 precise on
/// both halves of the labelled pairs) or the newer saying what it changes
/// ([`Candidate::names_the_change`]: `from X to Y`, X the older's). Any
/// differing fact at [`ASK`] (store's test) moved a newer result above
/// the answer in 30 of 31 of LongMemEval's knowledge-update questions
/// (MRR@10 0.784 → 0.380): among a conversation's turns of one type
/// nearly every close pair differs in some name or number
/// (docs/BENCHMARKS.md, "Newer wins").
/// Taken in rank order, each result moves to just above the highest-placed
/// older one it updates, never above a result newer than itself (so a
/// value changed twice shows newest, then middle, then oldest, and a
/// middle value that updates the oldest does not pass the newest);
/// everything else keeps its order. `cosine(i, j)`
/// is the similarity of two results' texts (`None` without vectors).
/// Returns the new order (indexes into `results`) and the moves, for
/// `--json`.
pub fn newer_first(
    results: &[Ranked],
    cosine: impl Fn(usize, usize) -> Option<f64>,
) -> (Vec<usize>, Vec<Update>) {
    let mut order: Vec<usize> = (0..results.len()).collect();
    let mut updates = Vec::new();
    for (j, newer) in results.iter().enumerate() {
        let at = order
            .iter()
            .position(|&k| k == j)
            .expect("every result is placed");
        // Never above a newer result: newer wins, it does not lose to a
        // middle value that moves.
        let floor = order[..at]
            .iter()
            .rposition(|&k| results[k].timestamp > newer.timestamp)
            .map_or(0, |p| p + 1);
        let highest = order[floor..at].iter().enumerate().find_map(|(place, &i)| {
            let place = floor + place;
            let older = &results[i];
            if newer.timestamp <= older.timestamp || (older.trusted && !newer.trusted) {
                return None;
            }
            let why = judge(older.memo, newer.memo, cosine(i, j)?, ASK)?;
            if !why.links() && !why.names_the_change() {
                return None;
            }
            Some((
                place,
                Update {
                    newer: j,
                    older: i,
                    why,
                },
            ))
        });
        if let Some((place, update)) = highest {
            order.remove(at);
            order.insert(place, j);
            updates.push(update);
        }
    }
    (order, updates)
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

/// Every fact in which `newer` differs from `older` (empty when none).
pub fn differences(older: &str, newer: &str) -> Vec<Difference> {
    compare(&Text::read(older), &Text::read(newer))
}

fn compare(old: &Text, new: &Text) -> Vec<Difference> {
    let mut found = Vec::new();
    found.extend(quantity_changes(old, new));
    found.extend(name_changes(old, new));
    found.extend(negation_changes(old, new));
    found.extend(opposites(old, new));
    found.extend(change_words(old, new));
    found
}

/// The words of the older text that say what it is about (no stop word, no
/// quantity, no negation, no name the differences list) and that the newer
/// does not mention in any form.
fn not_restated(old: &Text, new: &Text, differences: &[Difference]) -> Vec<String> {
    let changed: BTreeSet<&str> = differences
        .iter()
        .filter(|d| d.kind == FactKind::Name)
        .filter_map(|d| d.older.as_deref())
        .flat_map(|names| names.split(", "))
        .collect();
    let mut missing: Vec<String> = Vec::new();
    for (i, word) in old.words.iter().enumerate() {
        let lower = word.lower.as_str();
        if old.in_quantity.contains(&i)
            || lower.chars().count() < 3
            || !lower.chars().any(char::is_alphabetic)
            || STOPWORDS.contains(&lower)
            || NEGATIONS.contains(&lower)
            || lower.ends_with("n't")
            || changed.contains(lower)
            || new.mentions(lower)
            || missing.iter().any(|m| m == lower)
        {
            continue;
        }
        missing.push(lower.to_owned());
    }
    missing
}

/// A word of a text, as the detector reads it.
#[derive(Debug, Clone)]
struct Word {
    /// As written, without surrounding punctuation and backticks.
    raw: String,
    /// Lower case, a possessive `'s` removed.
    lower: String,
    /// First of its sentence.
    initial: bool,
    /// Written between backticks.
    quoted: bool,
    /// Punctuation that ended a clause right after it (`,`, `;`, `.`).
    ends_clause: bool,
}

/// A text cut into words, with its quantities and names.
struct Text {
    words: Vec<Word>,
    /// Every word's stem, to tell whether a text mentions something at all.
    stems: BTreeSet<String>,
    quantities: Vec<Quantity>,
    /// Indexes of the words a quantity is made of (`30`, `minutes`).
    in_quantity: BTreeSet<usize>,
    names: Vec<String>,
}

impl Text {
    fn read(text: &str) -> Text {
        let words = split_words(text);
        let mut stems = BTreeSet::new();
        for word in &words {
            stems.insert(stem(&word.lower));
            for part in word.lower.split(['/', '.', '_', '-', ':', '=']) {
                if !part.is_empty() {
                    stems.insert(stem(part));
                }
            }
        }
        let quantities = quantities(&words);
        let in_quantity = quantities.iter().flat_map(|q| q.words.clone()).collect();
        let names = words
            .iter()
            .filter(|w| is_name(w))
            .map(|w| w.lower.clone())
            .collect();
        Text {
            words,
            stems,
            quantities,
            in_quantity,
            names,
        }
    }

    fn mentions(&self, word: &str) -> bool {
        self.stems.contains(&stem(word))
            || word
                .split(['/', '.', '_', '-', ':', '='])
                .filter(|p| !p.is_empty())
                .all(|p| self.stems.contains(&stem(p)))
    }
}

fn split_words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut initial = true;
    for chunk in text.split_whitespace() {
        let quoted = chunk.contains('`');
        let trimmed_end = chunk.trim_end_matches(|c: char| ",.;:!?)]}\"'`".contains(c));
        let tail = &chunk[trimmed_end.len()..];
        let core = trimmed_end.trim_start_matches(|c: char| "([{\"'`".contains(c));
        let ends_sentence = tail.contains(['.', '!', '?', ';', ':']);
        let ends_clause = ends_sentence || tail.contains(',');
        if core.is_empty() {
            initial = initial || ends_sentence;
            continue;
        }
        // `localhost:3000`: a host and its port.
        let parts: Vec<&str> = match core.split_once(':') {
            Some((host, port))
                if !host.is_empty()
                    && !host.chars().all(|c| c.is_ascii_digit())
                    && !port.is_empty()
                    && port.chars().all(|c| c.is_ascii_digit()) =>
            {
                vec![host, port]
            }
            _ => vec![core],
        };
        let count = parts.len();
        for (i, part) in parts.into_iter().enumerate() {
            let mut lower = part.to_lowercase().replace('’', "'");
            if let Some(base) = lower.strip_suffix("'s") {
                lower = base.to_owned();
            }
            words.push(Word {
                raw: part.to_owned(),
                lower,
                initial,
                quoted,
                ends_clause: ends_clause && i + 1 == count,
            });
            initial = false;
        }
        initial = ends_sentence;
    }
    words
}

/// A crude stem: `orders` and `order`, `runners` and `runner` meet.
fn stem(word: &str) -> String {
    let word = word.trim_end_matches('\'');
    for suffix in ["ies", "es", "s"] {
        if let Some(base) = word.strip_suffix(suffix)
            && base.len() >= 3
            && !word.ends_with("ss")
        {
            return if suffix == "ies" {
                format!("{base}y")
            } else {
                base.to_owned()
            };
        }
    }
    word.to_owned()
}

// ---------------------------------------------------------------------
// Quantities: numbers, versions, durations, sizes, times of day.

/// What a quantity measures: only quantities of one kind are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Count,
    Duration,
    Size,
    Share,
    ClockTime,
    Ordinal,
    Version,
}

#[derive(Debug, Clone)]
struct Quantity {
    measure: Measure,
    /// In the measure's base unit (seconds, bytes); a version's text.
    value: String,
    /// As written (`30 minutes`, `v76`).
    shown: String,
    /// The indexes of its words.
    words: std::ops::Range<usize>,
}

const NUMBER_WORDS: &[(&str, f64)] = &[
    ("zero", 0.0),
    ("one", 1.0),
    ("two", 2.0),
    ("three", 3.0),
    ("four", 4.0),
    ("five", 5.0),
    ("six", 6.0),
    ("seven", 7.0),
    ("eight", 8.0),
    ("nine", 9.0),
    ("ten", 10.0),
    ("eleven", 11.0),
    ("twelve", 12.0),
    ("fifteen", 15.0),
    ("twenty", 20.0),
    ("thirty", 30.0),
    ("forty", 40.0),
    ("fifty", 50.0),
    ("sixty", 60.0),
    ("ninety", 90.0),
    ("hundred", 100.0),
    ("twice", 2.0),
    ("half", 0.5),
    ("dozen", 12.0),
];

const ORDINALS: &[&str] = &[
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
];

/// Units and what one of each is in its measure's base unit.
fn unit(word: &str) -> Option<(Measure, f64)> {
    let seconds = |n: f64| Some((Measure::Duration, n));
    let bytes = |n: f64| Some((Measure::Size, n));
    match word {
        "ms" | "millisecond" | "milliseconds" => seconds(0.001),
        "s" | "sec" | "secs" | "second" | "seconds" => seconds(1.0),
        "min" | "mins" | "minute" | "minutes" => seconds(60.0),
        "h" | "hr" | "hrs" | "hour" | "hours" => seconds(3600.0),
        "day" | "days" => seconds(86_400.0),
        "week" | "weeks" => seconds(604_800.0),
        "month" | "months" => seconds(2_592_000.0),
        "year" | "years" => seconds(31_536_000.0),
        "kb" | "kib" | "kilobytes" => bytes(1e3),
        "mb" | "mib" | "megabyte" | "megabytes" => bytes(1e6),
        "gb" | "gib" | "gigabyte" | "gigabytes" => bytes(1e9),
        "tb" | "tib" | "terabytes" => bytes(1e12),
        "%" | "percent" => Some((Measure::Share, 0.01)),
        _ => None,
    }
}

fn plain_number(word: &str) -> Option<f64> {
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if word.starts_with('.') || word.ends_with('.') || word.matches('.').count() > 1 {
        return None;
    }
    word.parse().ok()
}

/// A version: `v76`, `1.2.3`, `0.10` (two dots or a `v`, or a number
/// right after a capitalised name or a lower-case package: `Node 22`).
fn version(word: &Word, previous: Option<&Word>) -> Option<String> {
    let lower = word.lower.as_str();
    if let Some(rest) = lower.strip_prefix('v')
        && !rest.is_empty()
        && rest.chars().next().is_some_and(|c| c.is_ascii_digit())
        && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
    {
        return Some(rest.trim_end_matches('.').to_owned());
    }
    let dotted = lower.chars().all(|c| c.is_ascii_digit() || c == '.')
        && lower.contains('.')
        && lower.chars().next().is_some_and(|c| c.is_ascii_digit());
    if dotted && lower.matches('.').count() >= 2 {
        return Some(lower.to_owned());
    }
    let after_name = previous.is_some_and(|p| {
        !p.ends_clause
            && p.raw.chars().any(|c| c.is_alphabetic())
            && (is_name(p) || p.raw.contains('-'))
            && !STOPWORDS.contains(&p.lower.as_str())
    });
    if after_name && lower.chars().all(|c| c.is_ascii_digit() || c == '.') && !lower.is_empty() {
        return Some(lower.to_owned());
    }
    None
}

fn quantities(words: &[Word]) -> Vec<Quantity> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        let lower = word.lower.as_str();
        let previous = i.checked_sub(1).map(|p| &words[p]);
        let next = words.get(i + 1).map(|w| w.lower.as_str());
        if let Some(v) = version(word, previous) {
            found.push(Quantity {
                measure: Measure::Version,
                value: v,
                shown: word.raw.clone(),
                words: i..i + 1,
            });
            i += 1;
            continue;
        }
        // `02:00`, `2:05`.
        if let Some((h, m)) = lower.split_once(':')
            && !h.is_empty()
            && h.len() <= 2
            && m.len() == 2
            && h.chars().chain(m.chars()).all(|c| c.is_ascii_digit())
        {
            let minutes = h.parse::<u32>().unwrap_or(0) * 60 + m.parse::<u32>().unwrap_or(0);
            found.push(Quantity {
                measure: Measure::ClockTime,
                value: minutes.to_string(),
                shown: word.raw.clone(),
                words: i..i + 1,
            });
            i += 1;
            continue;
        }
        if let Some(n) = ORDINALS.iter().position(|o| *o == lower) {
            // "first", "second" count only before a noun that is counted:
            // `third grade`, not `every second Tuesday`.
            if n > 1 || next.is_some_and(|n| n == "grade" || n == "floor") {
                found.push(Quantity {
                    measure: Measure::Ordinal,
                    value: (n + 1).to_string(),
                    shown: word.raw.clone(),
                    words: i..i + 1,
                });
            }
            i += 1;
            continue;
        }
        // A number with its unit glued on: `10s`, `25MB`, `99.9%`.
        let glued = lower
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&at| at > 0)
            .and_then(|at| {
                let (number, suffix) = lower.split_at(at);
                Some((plain_number(number)?, unit(suffix)?))
            });
        let number = plain_number(lower)
            .or_else(|| {
                NUMBER_WORDS
                    .iter()
                    .find(|(w, _)| *w == lower)
                    .map(|(_, n)| *n)
            })
            .or_else(|| {
                // `a minute`, `an hour`.
                ((lower == "a" || lower == "an")
                    && next
                        .and_then(unit)
                        .is_some_and(|(m, _)| m == Measure::Duration))
                .then_some(1.0)
            });
        let (value, measure, taken) = match (glued, number) {
            (Some((n, (measure, scale))), _) => (n * scale, measure, 1),
            (None, Some(n)) => {
                // `half an hour`: skip the article.
                let mut j = i + 1;
                if lower == "half"
                    && words
                        .get(j)
                        .is_some_and(|w| w.lower == "a" || w.lower == "an")
                {
                    j += 1;
                }
                match words.get(j).and_then(|w| unit(&w.lower)) {
                    Some((measure, scale)) => (n * scale, measure, j + 1 - i),
                    None if lower == "half" || lower == "a" || lower == "an" => {
                        i += 1;
                        continue;
                    }
                    None => (n, Measure::Count, 1),
                }
            }
            (None, None) => {
                i += 1;
                continue;
            }
        };
        let shown = words[i..i + taken]
            .iter()
            .map(|w| w.raw.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        found.push(Quantity {
            measure,
            value: format!("{value}"),
            shown,
            words: i..i + taken,
        });
        i += taken;
    }
    found
}

/// A quantity the older text has and the newer lacks, with one of the same
/// measure the newer has and the older lacks: `20 → 50`, `v74 → v76`.
fn quantity_changes(old: &Text, new: &Text) -> Vec<Difference> {
    let lacks = |text: &Text, q: &Quantity| {
        !text
            .quantities
            .iter()
            .any(|other| other.measure == q.measure && other.value == q.value)
    };
    let mut found = Vec::new();
    for older in old.quantities.iter().filter(|q| lacks(new, q)) {
        let Some(newer) = new
            .quantities
            .iter()
            .find(|q| q.measure == older.measure && lacks(old, q))
        else {
            continue;
        };
        let kind = if older.measure == Measure::Version {
            FactKind::Version
        } else {
            FactKind::Number
        };
        let difference = Difference {
            kind,
            older: Some(older.shown.clone()),
            newer: Some(newer.shown.clone()),
        };
        if !found.contains(&difference) {
            found.push(difference);
        }
    }
    found
}

// ---------------------------------------------------------------------
// Names.

/// Words that start sentences or are capitalised without naming anything.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "also",
    "always",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "before",
    "both",
    "but",
    "by",
    "can",
    "checkpoint",
    "decided",
    "do",
    "does",
    "during",
    "each",
    "every",
    "for",
    "from",
    "has",
    "have",
    "he",
    "her",
    "here",
    "his",
    "how",
    "i",
    "i'm",
    "i've",
    "if",
    "in",
    "is",
    "it",
    "its",
    "keep",
    "let",
    "make",
    "may",
    "me",
    "more",
    "most",
    "must",
    "my",
    "never",
    "new",
    "no",
    "not",
    "note",
    "now",
    "of",
    "on",
    "once",
    "only",
    "or",
    "our",
    "plan",
    "she",
    "should",
    "since",
    "so",
    "some",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "todo",
    "under",
    "until",
    "use",
    "was",
    "we",
    "we're",
    "what",
    "when",
    "where",
    "which",
    "while",
    "why",
    "will",
    "with",
    "per",
    "via",
    "than",
    "too",
    "still",
    "been",
    "were",
    "into",
    "onto",
    "out",
    "up",
    "them",
    "it's",
    "you",
    "your",
    "am",
    "being",
    "just",
    "very",
    "get",
    "got",
    "gets",
];

/// A name: a capitalised word that is no common word, an acronym, an
/// identifier (`max_connections`, `auth_v2`, `us-east-1`, a path), or
/// anything between backticks. Numbers and versions are quantities.
fn is_name(word: &Word) -> bool {
    let raw = word.raw.as_str();
    if !raw.chars().any(|c| c.is_alphabetic()) || STOPWORDS.contains(&word.lower.as_str()) {
        return false;
    }
    if word.quoted {
        return true;
    }
    let has_digit = raw.chars().any(|c| c.is_ascii_digit());
    let code_like = raw.contains(['_', '/', '=', '.', ':'])
        || (raw.contains('-') && has_digit)
        || (has_digit && !raw.starts_with(|c: char| c.is_ascii_digit()))
        || raw.chars().skip(1).any(|c| c.is_uppercase());
    if code_like {
        // `v76` is a version.
        return !(word.lower.starts_with('v')
            && word.lower[1..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.'));
    }
    // A sentence's first word is capitalised whatever it is: not a name.
    raw.starts_with(|c: char| c.is_uppercase()) && !word.initial
}

/// A name only one text has, with one only the other has: `Redis` and
/// `Postgres`, `SameSite=Lax` and `SameSite=Strict`. A name the other text
/// mentions in any form (lower case, a part of an identifier) is no
/// difference.
fn name_changes(old: &Text, new: &Text) -> Vec<Difference> {
    let only = |a: &Text, b: &Text| -> Vec<String> {
        let mut seen = BTreeSet::new();
        a.names
            .iter()
            .filter(|n| !b.mentions(n))
            .filter(|n| seen.insert((*n).clone()))
            .cloned()
            .collect()
    };
    let (older, newer) = (only(old, new), only(new, old));
    if older.is_empty() || newer.is_empty() {
        return Vec::new();
    }
    vec![Difference {
        kind: FactKind::Name,
        older: Some(older.join(", ")),
        newer: Some(newer.join(", ")),
    }]
}

// ---------------------------------------------------------------------
// Negations and words of change.

const NEGATIONS: &[&str] = &[
    "not", "no", "never", "cannot", "without", "none", "nothing", "neither", "nor", "disabled",
    "nobody",
];

fn negations(text: &Text) -> BTreeSet<String> {
    text.words
        .iter()
        .filter_map(|w| {
            let lower = w.lower.as_str();
            if NEGATIONS.contains(&lower) {
                Some(lower.to_owned())
            } else if lower.ends_with("n't") {
                Some("n't".to_owned())
            } else {
                None
            }
        })
        .collect()
}

/// A negation one text says and the other does not: `do not ship` and
/// `ships`, `enabled` and `disabled`.
fn negation_changes(old: &Text, new: &Text) -> Vec<Difference> {
    let (older, newer) = (negations(old), negations(new));
    let mut found = Vec::new();
    if let Some(word) = older.difference(&newer).next() {
        found.push(Difference::only(FactKind::Negation, word, true));
    }
    if let Some(word) = newer.difference(&older).next() {
        found.push(Difference::only(FactKind::Negation, word, false));
    }
    found
}

/// Words whose opposite, said by the other text instead, is a difference.
const OPPOSITES: &[(&str, &str)] = &[
    ("old", "new"),
    ("enable", "disable"),
    ("before", "after"),
    ("allowed", "forbidden"),
    ("allow", "deny"),
    ("required", "optional"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("public", "private"),
    ("increase", "decrease"),
    ("more", "less"),
];

/// A word one text says and whose opposite the other says instead.
fn opposites(old: &Text, new: &Text) -> Vec<Difference> {
    let says = |text: &Text, word: &str| text.words.iter().any(|w| w.lower == word);
    let mut found = Vec::new();
    for (a, b) in OPPOSITES {
        for (x, y) in [(a, b), (b, a)] {
            if says(old, x) && !says(old, y) && says(new, y) && !says(new, x) {
                found.push(Difference {
                    kind: FactKind::Opposite,
                    older: Some((*x).to_owned()),
                    newer: Some((*y).to_owned()),
                });
            }
        }
    }
    found
}

/// Phrases by which a text says that something changed.
const CHANGE_PHRASES: &[&[&str]] = &[
    &["no", "longer"],
    &["instead", "of"],
    &["anymore"],
    &["any", "more"],
    &["took", "over"],
    &["takes", "over"],
    &["switched"],
    &["moved"],
    &["migrated"],
    &["changed"],
    &["upgraded"],
    &["downgraded"],
    &["bumped"],
    &["raised"],
    &["lowered"],
    &["increased"],
    &["decreased"],
    &["reduced"],
    &["replaced"],
    &["dropped"],
    &["removed"],
    &["retired"],
    &["went", "back"],
    &["reverted"],
    &["deprecated"],
    &["cancelled"],
    &["switched", "off"],
];

fn change_phrases(text: &Text) -> BTreeSet<String> {
    let lower: Vec<&str> = text.words.iter().map(|w| w.lower.as_str()).collect();
    CHANGE_PHRASES
        .iter()
        .filter(|phrase| lower.windows(phrase.len()).any(|w| w == **phrase))
        .map(|phrase| phrase.join(" "))
        .collect()
}

/// The newer text says that something changed and the older does not:
/// a phrase of change, or `from X to Y` where the older mentions X and not
/// all of Y.
fn change_words(old: &Text, new: &Text) -> Vec<Difference> {
    let mut found = Vec::new();
    let words = &new.words;
    for (i, word) in words.iter().enumerate() {
        if word.lower != "from" || word.ends_clause {
            continue;
        }
        let Some(to) = (i + 2..(i + 6).min(words.len()))
            .find(|&j| words[j].lower == "to" && !words[j - 1].ends_clause)
        else {
            continue;
        };
        if words[i + 1..to]
            .iter()
            .any(|w| w.ends_clause && w.lower != words[to - 1].lower)
        {
            continue;
        }
        let end = (to + 1..words.len().min(to + 5))
            .find(|&j| words[j].ends_clause)
            .map(|j| j + 1)
            .unwrap_or_else(|| words.len().min(to + 5));
        let content = |ws: &[Word]| -> Vec<String> {
            ws.iter()
                .filter(|w| !STOPWORDS.contains(&w.lower.as_str()))
                .map(|w| w.lower.clone())
                .collect()
        };
        let (from, into) = (content(&words[i + 1..to]), content(&words[to + 1..end]));
        if from.iter().any(|w| old.mentions(w)) && into.iter().any(|w| !old.mentions(w)) {
            let phrase = |ws: &[Word]| {
                ws.iter()
                    .map(|w| w.raw.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            found.push(Difference {
                kind: FactKind::Change,
                older: Some(phrase(&words[i + 1..to])),
                newer: Some(phrase(&words[to + 1..end])),
            });
            return found;
        }
    }
    let said = change_phrases(new);
    let before = change_phrases(old);
    if let Some(phrase) = said.difference(&before).next() {
        found.push(Difference::only(FactKind::Change, phrase, false));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_result_that_says_what_it_changes_moves_above_a_less_similar_older_one() {
        let files: Vec<String> = Vec::new();
        let memo = |content| Memo {
            kind: "decision",
            content,
            files: &files,
        };
        let older = Ranked {
            memo: memo("Deploys are blue/green: two Helm releases, and make flip switches traffic"),
            timestamp: "2026-01-01T00:00:00Z",
            trusted: true,
        };
        let reason = Ranked {
            memo: memo(
                "Deploy strategy changes from blue/green to an Argo Rollouts canary, with an analysis that aborts on errors",
            ),
            timestamp: "2026-02-01T00:00:00Z",
            trusted: true,
        };
        // 0.6 similar and much it does not restate: not a link, but it says
        // it changes what the older says.
        let (order, updates) = newer_first(&[older, reason], |_, _| Some(0.6));
        assert_eq!(order, vec![1, 0]);
        assert!(
            updates[0]
                .why
                .differences
                .iter()
                .any(|d| d.explain() == "change blue/green → an Argo Rollouts canary"),
            "{:?}",
            updates[0].why.differences
        );
        // Under the asking threshold, or with no change said, it stays.
        assert_eq!(
            newer_first(&[older, reason], |_, _| Some(0.5)).0,
            vec![0, 1]
        );
        let other = Ranked {
            memo: memo(
                "Deploy previews run on Argo Rollouts with an analysis that aborts on errors",
            ),
            ..reason
        };
        assert_eq!(newer_first(&[older, other], |_, _| Some(0.6)).0, vec![0, 1]);
    }

    #[test]
    fn a_moving_result_never_passes_a_newer_one() {
        let files: Vec<String> = Vec::new();
        let memo = |content| Memo {
            kind: "decision",
            content,
            files: &files,
        };
        let at = |content, timestamp| Ranked {
            memo: memo(content),
            timestamp,
            trusted: true,
        };
        // The oldest first, then the newest, then the middle one, which
        // updates the oldest but must not pass the newest.
        let results = [
            at("The API pool holds 20 connections", "2026-01-01T00:00:00Z"),
            at(
                "PgBouncer now sits in front of the database",
                "2026-03-01T00:00:00Z",
            ),
            at("The API pool holds 28 connections", "2026-02-01T00:00:00Z"),
        ];
        let (order, updates) = newer_first(&results, |_, _| Some(0.9));
        assert_eq!((order, updates.len()), (vec![0, 1, 2], 0));
    }

    #[test]
    fn a_newer_result_that_updates_an_older_one_moves_above_it() {
        let files: Vec<String> = Vec::new();
        let memo = |content| Memo {
            kind: "decision",
            content,
            files: &files,
        };
        let results = [
            Ranked {
                memo: memo("The API pool holds 20 connections"),
                timestamp: "2026-01-01T00:00:00Z",
                trusted: true,
            },
            Ranked {
                memo: memo("Deploys go out on Tuesdays"),
                timestamp: "2026-02-01T00:00:00Z",
                trusted: true,
            },
            Ranked {
                memo: memo("The API pool holds 50 connections"),
                timestamp: "2026-03-01T00:00:00Z",
                trusted: true,
            },
            Ranked {
                memo: memo("The API pool holds 80 connections"),
                timestamp: "2026-04-01T00:00:00Z",
                trusted: false,
            },
        ];
        // The pool memories are close to each other, the deploy one to none.
        let pool = [0, 2, 3];
        let cosine = |i: usize, j: usize| {
            Some(if pool.contains(&i) && pool.contains(&j) {
                0.9
            } else {
                0.1
            })
        };
        let (order, updates) = newer_first(&results, cosine);
        assert_eq!(
            order,
            vec![2, 0, 1, 3],
            "the newer pool size first; an untrusted one stays"
        );
        assert_eq!(updates.len(), 1);
        assert_eq!((updates[0].newer, updates[0].older), (2, 0));
        assert_eq!(updates[0].why.differences[0].explain(), "number 20 → 50");
        // A value changed twice: newest, then the middle one, then the oldest.
        let twice = [results[0], results[2], {
            let mut third = results[3];
            third.trusted = true;
            third
        }];
        let (order, updates) = newer_first(&twice, |_, _| Some(0.9));
        assert_eq!(order, vec![2, 1, 0]);
        assert_eq!(updates.len(), 2);
        // An older result ranked below a newer one stays where it is.
        let (order, updates) = newer_first(&[results[2], results[0]], |_, _| Some(0.9));
        assert_eq!((order, updates.len()), (vec![0, 1], 0));
        // Without vectors nothing moves.
        assert_eq!(newer_first(&results, |_, _| None).0, vec![0, 1, 2, 3]);
    }

    fn kinds(older: &str, newer: &str) -> Vec<FactKind> {
        let mut kinds: Vec<FactKind> = differences(older, newer).iter().map(|d| d.kind).collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    fn explained(older: &str, newer: &str) -> Vec<String> {
        differences(older, newer)
            .iter()
            .map(Difference::explain)
            .collect()
    }

    #[test]
    fn a_changed_number_is_a_difference_and_the_same_number_spelled_otherwise_is_not() {
        assert_eq!(
            explained(
                "The pool size is 20 per instance",
                "The pool size is 50 per instance"
            ),
            ["number 20 → 50"]
        );
        assert_eq!(
            explained(
                "The gateway timeout is 30 seconds",
                "The gateway timeout is 1 minute"
            ),
            ["number 30 seconds → 1 minute"]
        );
        for (older, newer) in [
            ("Retries three times", "Retries 3 times"),
            ("Cached for 60 seconds", "cached for a minute"),
            (
                "Sessions expire after 30 minutes",
                "Sessions expire after half an hour",
            ),
            (
                "Uploads are capped at 10 MB",
                "Uploads are capped at 10 megabytes",
            ),
            ("Run the dev server on port 3000", "open localhost:3000"),
            (
                "The backup runs at 02:00 UTC",
                "At 02:00 UTC the backup runs",
            ),
        ] {
            assert_eq!(differences(older, newer), [], "{older} / {newer}");
        }
        // Quantities of different kinds are not compared.
        assert_eq!(
            differences(
                "Pool of 20 connections",
                "Idle connections close after 10 minutes"
            ),
            []
        );
        assert_eq!(
            kinds("The backup runs at 02:00", "The backup runs at 04:00"),
            [FactKind::Number]
        );
        assert_eq!(
            kinds(
                "My daughter is in third grade",
                "My daughter is in fourth grade now"
            ),
            [FactKind::Number]
        );
    }

    #[test]
    fn a_changed_version_is_a_version_difference() {
        assert_eq!(
            explained("Depends on stripe-go v74", "Upgraded to stripe-go v76"),
            ["version v74 → v76", "change `upgraded` only in the newer"]
        );
        assert_eq!(
            explained(
                "The toolchain is pinned to 1.78.0",
                "The toolchain is pinned to 1.82.0"
            ),
            ["version 1.78.0 → 1.82.0"]
        );
        assert_eq!(
            explained("We pin Node 20 in .nvmrc", "We pin Node 22 in .nvmrc"),
            ["version 20 → 22"]
        );
        assert_eq!(
            differences("tonic 0.10 in Cargo.toml", "Cargo.toml has tonic 0.10"),
            []
        );
    }

    #[test]
    fn a_name_only_each_side_says_is_a_difference() {
        assert_eq!(
            explained("Logs are shipped to Loki", "Logs are shipped to Datadog"),
            ["name loki → datadog"]
        );
        assert_eq!(
            explained(
                "Session cookies are SameSite=Lax",
                "Session cookies are SameSite=Strict"
            ),
            ["name samesite=lax → samesite=strict"]
        );
        assert_eq!(
            kinds(
                "The primary database is in us-east-1",
                "The primary database is in eu-west-1"
            ),
            [FactKind::Name]
        );
        // A name the other text mentions, in any case, is no difference; a
        // name added next to the same ones is no change either.
        assert_eq!(
            differences(
                "We use Postgres for billing",
                "Billing data lives in postgres"
            ),
            []
        );
        assert_eq!(
            differences("I live in Denver", "I'm based in Denver, Colorado"),
            []
        );
    }

    #[test]
    fn a_negation_on_one_side_only_is_a_difference() {
        assert_eq!(
            explained("We do not ship Windows builds", "We ship Windows builds"),
            ["negation `not` only in the older"]
        );
        assert_eq!(
            explained(
                "The flag is enabled for all tenants",
                "The flag is disabled for all tenants"
            ),
            ["negation `disabled` only in the newer"]
        );
        assert_eq!(
            kinds(
                "The CLI supports Windows",
                "The CLI doesn't support Windows"
            ),
            [FactKind::Negation]
        );
        assert_eq!(
            differences("Never log tokens", "Tokens are never logged"),
            []
        );
    }

    #[test]
    fn words_of_change_in_the_newer_text_are_a_difference() {
        assert_eq!(
            explained(
                "Feature flags are cached",
                "Feature flags are no longer cached"
            ),
            [
                "negation `no` only in the newer",
                "change `no longer` only in the newer"
            ]
        );
        assert_eq!(
            explained(
                "Thumbnails use ImageMagick",
                "Thumbnails use libvips instead of ImageMagick"
            ),
            ["change `instead of` only in the newer"]
        );
        assert_eq!(
            explained(
                "Sessions are stored in Redis",
                "Sessions moved from Redis to Postgres"
            ),
            ["change Redis → Postgres"]
        );
        assert_eq!(
            explained(
                "I live in Denver",
                "I moved from Denver to Austin last month"
            ),
            ["change Denver → Austin last month"]
        );
        assert_eq!(
            explained(
                "Use Jest for the frontend unit tests",
                "Switched the frontend unit tests from Jest to Vitest"
            ),
            ["change Jest → Vitest"]
        );
        // The same words on both sides say no change.
        assert_eq!(
            differences(
                "We switched to Vitest last year",
                "Last year we switched to Vitest"
            ),
            []
        );
        // `from` with what the older never mentioned is no change of it.
        assert_eq!(
            kinds(
                "Staging is reset every Sunday",
                "Staging is restored from a snapshot to save time"
            ),
            []
        );
    }

    fn memo<'a>(kind: &'a str, content: &'a str, files: &'a [String]) -> Memo<'a> {
        Memo {
            kind,
            content,
            files,
        }
    }

    #[test]
    fn capture_links_a_restated_update_of_what_capture_wrote_and_nothing_else() {
        let none: Vec<String> = Vec::new();
        let older = memo("decision", "The pool size is 20 in the API", &none);
        let newer = memo("decision", "The pool size is 50 in the API", &none);
        let close = judge(older, newer, 0.95, ASK).unwrap();
        let captured = Some("capture:rules");
        assert_eq!(capture_links(&close, "decision", captured, false), Ok(()));
        let far = judge(older, newer, LINK - 0.01, ASK).unwrap();
        assert_eq!(
            capture_links(&far, "decision", captured, false),
            Err("under the link threshold")
        );
        let elsewhere = judge(
            older,
            memo("decision", "The pool size is 50 in the worker", &none),
            0.95,
            ASK,
        )
        .unwrap();
        assert!(capture_links(&elsewhere, "decision", captured, false).is_err());
        assert!(capture_links(&close, "checkpoint", captured, false).is_err());
        for stored_by_hand in [None, Some("agent"), Some("user")] {
            assert_eq!(
                capture_links(&close, "decision", stored_by_hand, false),
                Err("capture replaces only what capture wrote")
            );
        }
        assert!(capture_links(&close, "decision", captured, true).is_err());
    }

    #[test]
    fn a_candidate_has_the_type_the_threshold_a_shared_file_and_a_difference() {
        let none: Vec<String> = Vec::new();
        let pool = vec!["src/db/pool.rs".to_owned()];
        let mail = vec!["src/mail.rs".to_owned()];
        let older = memo("decision", "The pool size is 20", &pool);
        let newer = memo("decision", "The pool size is 50", &pool);
        let found = judge(older, newer, 0.9, ASK).expect("a candidate");
        assert_eq!(found.shared_files, pool);
        assert_eq!(
            found.explain(),
            "0.90 similar, same type, shared files src/db/pool.rs, number 20 → 50"
        );
        assert_eq!(
            serde_json::to_value(&found).unwrap()["differences"][0],
            serde_json::json!({"kind": "number", "older": "20", "newer": "50"})
        );
        // Another type, under the threshold, other files, no difference.
        assert!(
            judge(
                older,
                memo("insight", "The pool size is 50", &pool),
                0.9,
                ASK
            )
            .is_none()
        );
        assert!(judge(older, newer, ASK - 0.01, ASK).is_none());
        assert!(
            judge(
                older,
                memo("decision", "The pool size is 50", &mail),
                0.9,
                ASK
            )
            .is_none()
        );
        assert!(
            judge(
                older,
                memo("decision", "The pool size is 20 still", &pool),
                0.9,
                ASK
            )
            .is_none()
        );
        // One side naming no files: the meaning decides.
        assert!(
            judge(
                older,
                memo("decision", "The pool size is 50", &none),
                0.9,
                ASK
            )
            .is_some()
        );
    }
}
