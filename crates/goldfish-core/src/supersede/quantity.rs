//! Quantities: numbers, versions, durations, sizes, times of day.

use super::words::{STOPWORDS, Word, is_name};

/// What a quantity measures: only quantities of one kind are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Measure {
    Count,
    Duration,
    Size,
    Share,
    ClockTime,
    Ordinal,
    Version,
}

#[derive(Debug, Clone)]
pub(super) struct Quantity {
    pub(super) measure: Measure,
    /// In the measure's base unit (seconds, bytes); a version's text.
    pub(super) value: String,
    /// As written (`30 minutes`, `v76`).
    pub(super) shown: String,
    /// The indexes of its words.
    pub(super) words: std::ops::Range<usize>,
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

pub(super) fn quantities(words: &[Word]) -> Vec<Quantity> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (quantity, taken) = quantity_at(words, i);
        found.extend(quantity);
        i += taken;
    }
    found
}

/// The quantity that starts at word `i`, if any, and how many words it
/// takes (one when there is none).
fn quantity_at(words: &[Word], i: usize) -> (Option<Quantity>, usize) {
    let word = &words[i];
    let lower = word.lower.as_str();
    let previous = i.checked_sub(1).map(|p| &words[p]);
    let next = words.get(i + 1).map(|w| w.lower.as_str());
    let one_word = |measure, value| {
        let quantity = Quantity {
            measure,
            value,
            shown: word.raw.clone(),
            words: i..i + 1,
        };
        (Some(quantity), 1)
    };
    if let Some(v) = version(word, previous) {
        return one_word(Measure::Version, v);
    }
    if let Some(minutes) = clock_minutes(lower) {
        return one_word(Measure::ClockTime, minutes.to_string());
    }
    if let Some(n) = ORDINALS.iter().position(|o| *o == lower) {
        // "first", "second" count only before a noun that is counted:
        // `third grade`, not `every second Tuesday`.
        if n > 1 || next.is_some_and(|n| n == "grade" || n == "floor") {
            return one_word(Measure::Ordinal, (n + 1).to_string());
        }
        return (None, 1);
    }
    let Some((value, measure, taken)) = measured(words, i) else {
        return (None, 1);
    };
    let shown = words[i..i + taken]
        .iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let quantity = Quantity {
        measure,
        value: format!("{value}"),
        shown,
        words: i..i + taken,
    };
    (Some(quantity), taken)
}

/// A time of day in minutes: `02:00`, `2:05`.
fn clock_minutes(lower: &str) -> Option<u32> {
    let (h, m) = lower.split_once(':')?;
    (!h.is_empty()
        && h.len() <= 2
        && m.len() == 2
        && h.chars().chain(m.chars()).all(|c| c.is_ascii_digit()))
    .then(|| h.parse::<u32>().unwrap_or(0) * 60 + m.parse::<u32>().unwrap_or(0))
}

/// A number at word `i` with its unit (glued on, or the next word), or a
/// plain count: its value in the unit's measure and the words it takes.
fn measured(words: &[Word], i: usize) -> Option<(f64, Measure, usize)> {
    let lower = words[i].lower.as_str();
    let next = words.get(i + 1).map(|w| w.lower.as_str());
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
    match (glued, number) {
        (Some((n, (measure, scale))), _) => Some((n * scale, measure, 1)),
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
                Some((measure, scale)) => Some((n * scale, measure, j + 1 - i)),
                None if lower == "half" || lower == "a" || lower == "an" => None,
                None => Some((n, Measure::Count, 1)),
            }
        }
        (None, None) => None,
    }
}
