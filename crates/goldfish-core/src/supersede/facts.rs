//! The facts in which two texts differ (quantities, names, negations,
//! opposites, words of change) and the restatement test: the words of the
//! older text the newer does not mention.

use std::collections::BTreeSet;

use super::quantity::{Measure, Quantity, quantities};
use super::words::{STOPWORDS, Word, is_name, split_words, stem};
use super::{Difference, FactKind};

/// Every fact in which `newer` differs from `older` (empty when none).
pub fn differences(older: &str, newer: &str) -> Vec<Difference> {
    compare(&Text::read(older), &Text::read(newer))
}

pub(super) fn compare(old: &Text, new: &Text) -> Vec<Difference> {
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
pub(super) fn not_restated(old: &Text, new: &Text, differences: &[Difference]) -> Vec<String> {
    let changed: BTreeSet<String> = differences
        .iter()
        .filter(|d| d.kind == FactKind::Name)
        .filter_map(|d| d.older.as_deref())
        .flat_map(|names| names.split(", "))
        .map(str::to_lowercase)
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
            || changed.contains(&word.lower)
            || new.mentions(lower)
            || missing.iter().any(|m| m == lower)
        {
            continue;
        }
        missing.push(lower.to_owned());
    }
    missing
}

/// A text cut into words, with its quantities and names.
pub(super) struct Text {
    words: Vec<Word>,
    /// Every word's stem, to tell whether a text mentions something at all.
    stems: BTreeSet<String>,
    quantities: Vec<Quantity>,
    /// Indexes of the words a quantity is made of (`30`, `minutes`).
    in_quantity: BTreeSet<usize>,
    /// Lower case, each with the first form it was written in.
    names: Vec<(String, String)>,
}

impl Text {
    pub(super) fn read(text: &str) -> Text {
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
            .map(|w| (w.lower.clone(), w.raw.clone()))
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

/// A name only one text has, with one only the other has: `Redis` and
/// `Postgres`, `SameSite=Lax` and `SameSite=Strict`. A name the other text
/// mentions in any form (lower case, a part of an identifier) is no
/// difference. Each is shown as first written (`None`, `SameSite=Lax`).
fn name_changes(old: &Text, new: &Text) -> Vec<Difference> {
    let only = |a: &Text, b: &Text| -> Vec<String> {
        let mut seen = BTreeSet::new();
        a.names
            .iter()
            .filter(|(lower, _)| !b.mentions(lower))
            .filter(|(lower, _)| seen.insert(lower.clone()))
            .map(|(_, raw)| raw.clone())
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
            // `None`, `!is_empty()`: code, no negation of what is said.
            if w.quoted {
                None
            } else if NEGATIONS.contains(&lower) {
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
