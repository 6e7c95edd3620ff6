//! What a sentence is and says: memory text split into sentences, its
//! words and exact names, whether it continues the one before it or says
//! what comes next or why.

use std::collections::HashSet;

/// First words that make a sentence continue the one before it.
const CONTINUES: &[&str] = &[
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "they",
    "there",
    "so",
    "but",
    "and",
    "or",
    "because",
    "which",
    "then",
    "also",
    "otherwise",
    "instead",
    "however",
    "thus",
    "hence",
];

/// Splits memory text into sentences: at `.`, `!` or `?` followed by
/// whitespace, at `;` followed by whitespace, and at line breaks. A period
/// inside a token (`src/a.rs`, `v1.2`, `e.g.x`) never splits.
pub fn sentences(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in content.lines() {
        let mut start = 0;
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        for (i, &(at, c)) in chars.iter().enumerate() {
            let next_is_space = chars.get(i + 1).is_some_and(|&(_, n)| n.is_whitespace());
            if matches!(c, '.' | '!' | '?' | ';') && next_is_space {
                let end = at + c.len_utf8();
                let piece = line[start..end].trim();
                // "e.g. " or "i.e. ": abbreviations, not sentence ends.
                let abbreviation = ["e.g.", "i.e.", "vs.", "etc."]
                    .iter()
                    .any(|a| piece.to_ascii_lowercase().ends_with(a));
                if !abbreviation && !piece.is_empty() {
                    out.push(piece.to_owned());
                    start = end;
                }
            }
        }
        let rest = line[start..].trim();
        if !rest.is_empty() {
            out.push(rest.to_owned());
        }
    }
    out
}

/// Lowercased words of `text` (letters, digits, `_`), for overlap.
pub(super) fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

pub(super) fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// Whether `sentence` picks up where the one before it left off: it starts
/// in lower case or with a word that refers back ("It", "This", "So", ...).
pub(super) fn continues(sentence: &str) -> bool {
    let Some(first) = sentence.split_whitespace().next() else {
        return false;
    };
    if first.chars().next().is_some_and(char::is_lowercase) {
        return true;
    }
    let word: String = first
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    CONTINUES.contains(&word.as_str())
}

/// Whether `sentence` says what comes next ("Next: …", "Next step …",
/// "TODO …").
pub(super) fn says_next(sentence: &str) -> bool {
    let lower = sentence.trim_start().to_lowercase();
    ["next:", "next step", "next,", "todo"]
        .iter()
        .any(|start| lower.starts_with(start))
}

/// Whether `sentence` says what comes next ([`says_next`]) or why ("…
/// because …", "Reason: …", "… so that …", "… otherwise …").
pub(super) fn says_next_or_why(sentence: &str) -> bool {
    let lower = sentence.trim_start().to_lowercase();
    let starts = [
        "next:",
        "next step",
        "next,",
        "todo",
        "reason:",
        "why:",
        "because ",
    ];
    let within = [
        " because ",
        " so that ",
        " otherwise ",
        " since ",
        " reason: ",
    ];
    starts.iter().any(|start| lower.starts_with(start))
        || within.iter().any(|word| lower.contains(word))
}

/// Whether `sentence` names something exactly (see [`identifiers`]).
pub(super) fn carries_identifier(sentence: &str) -> bool {
    !identifiers(sentence).is_empty()
}

/// The words of `text` that name something exactly: with a digit, or with
/// `.`, `/`, `_`, `:` or `#` inside, or in camelCase.
pub(super) fn identifiers(text: &str) -> HashSet<String> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|word| {
            word.chars().any(|c| c.is_ascii_digit())
                || word.contains(['.', '/', '_', ':', '#'])
                || word
                    .as_bytes()
                    .windows(2)
                    .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        })
        .map(str::to_owned)
        .collect()
}
