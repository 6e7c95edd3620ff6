//! What a recall asks for. The index ([`crate::index::search`]) answers it.

use jiff::Timestamp;

/// What to recall.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Words to look for; `None` lists the newest memories.
    pub query: Option<String>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    /// Any of these types (canonical spelling); empty means all.
    pub kinds: Vec<String>,
    /// Memories carrying every one of these tags (case-insensitive).
    pub tags: Vec<String>,
    /// Case-insensitive substring of the author.
    pub author: Option<String>,
    pub limit: usize,
    /// Drop results scoring below this (see `IndexedMemory::score`).
    pub min_score: Option<f64>,
    /// How hybrid mode combines keyword and vector evidence.
    pub fusion: Fusion,
    /// Leave out what is almost never evidence (see [`Floor`]); recall
    /// sets it, the code measuring rankings may not.
    pub floor: Option<Floor>,
    /// "Now", for the time cues of hybrid recall ("two weeks ago"); none
    /// without it.
    pub now: Option<Timestamp>,
    /// Leave out memories the index flagged ([`crate::memory::trust`]).
    pub unflagged_only: bool,
}

/// The relevance floor of semantic and hybrid recall: a memory less similar
/// to the query than `similarity` is left out unless it matched the query's
/// words, and then only if it is less similar than `with_words`. Without a
/// vector nothing is left out (keyword recall returns only word matches).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floor {
    pub similarity: f64,
    pub with_words: f64,
}

/// Calibrated with `scripts/eval/longmemeval.py` on LongMemEval_S's
/// development split and on fixtures/eval/ (docs/BENCHMARKS.md has the share
/// of answers it loses): below 0.1 a memory that shares no word with the
/// question is almost never its answer. Cosine similarity is not calibrated
/// enough to go higher: "login problems" is 0.14 similar to the fix of an
/// expired-token bug, a question about Kubernetes 0.17 to a note on CSS.
pub const FLOOR: Floor = Floor {
    similarity: 0.1,
    with_words: 0.05,
};

impl Floor {
    /// Whether a memory with this similarity (`None` without a vector) and
    /// this word match is relevant enough to be shown.
    pub fn keeps(self, similarity: Option<f64>, matched_words: bool) -> bool {
        match similarity {
            None => true,
            Some(s) if matched_words => s >= self.with_words,
            Some(s) => s >= self.similarity,
        }
    }
}

/// How hybrid recall combines the keyword and the vector ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal rank fusion: Σ 1 / (k + rank) over both lists.
    Rrf { k: f64 },
    /// `keyword` × BM25 relative to the query's best keyword match (1 for
    /// the best, 0 without a match) + (1 − `keyword`) × cosine similarity:
    /// two scores on the same scale, so a memory strong on either side
    /// ranks, and one strong on both ranks first.
    Mix { keyword: f64 },
}

impl Default for Fusion {
    fn default() -> Self {
        DEFAULT_FUSION
    }
}

/// The fusion recall uses. Measured with `scripts/eval/longmemeval.py` on
/// LongMemEval_S's development split and on fixtures/eval/
/// (docs/BENCHMARKS.md): equal parts and reciprocal rank fusion let
/// memories merely close in meaning crowd out word matches on the public
/// set; 0.7 keeps every question type at least at keyword ranking's recall
/// on both sets while the similarity finds what the words miss.
pub const DEFAULT_FUSION: Fusion = Fusion::Mix { keyword: 0.7 };

/// What a memory inside the span a question points at ("two weeks ago",
/// "in March") adds to its fused score.
pub const TIME_CUE_BOOST: f64 = 0.1;

/// What hybrid recall knows of one candidate memory.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Evidence {
    /// 0-based rank in the keyword list, if the memory is in it.
    pub keyword_rank: Option<usize>,
    /// 0-based rank in the vector list, if the memory is in it.
    pub semantic_rank: Option<usize>,
    /// BM25 relevance (≥ 0, higher is better); 0 when the words did not match.
    pub bm25: f64,
    /// Cosine similarity to the query; `None` without a vector.
    pub similarity: Option<f64>,
}

impl Fusion {
    /// The fused score of `evidence` when the query's best BM25 relevance
    /// among the candidates is `best_bm25`. Higher is better.
    pub fn score(self, evidence: &Evidence, best_bm25: f64) -> f64 {
        match self {
            Fusion::Rrf { k } => [evidence.keyword_rank, evidence.semantic_rank]
                .into_iter()
                .flatten()
                .map(|rank| 1.0 / (k + rank as f64 + 1.0))
                .sum(),
            Fusion::Mix { keyword } => {
                keyword * relative_keyword(evidence, best_bm25)
                    + (1.0 - keyword) * evidence.similarity.unwrap_or(0.0).max(0.0)
            }
        }
    }
}

/// BM25 relative to the best match: 1 for the best, 0 without a match.
pub fn relative_keyword(evidence: &Evidence, best_bm25: f64) -> f64 {
    if best_bm25 > 0.0 {
        evidence.bm25 / best_bm25
    } else {
        0.0
    }
}

/// The span of time a question points at, relative to "now" (UTC): "N
/// days/weeks/months/years ago" (N ± 1 of them), "last/past week/month/year"
/// (two of them back to now), "yesterday", "in/during <month>" (the latest
/// such month up to now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeCue {
    pub start: Timestamp,
    pub end: Timestamp,
}

impl TimeCue {
    /// The first cue in `text`, if any.
    pub fn find(text: &str, now: Timestamp) -> Option<TimeCue> {
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let now_zoned = now.to_zoned(jiff::tz::TimeZone::UTC);
        let back = |span: jiff::Span| now_zoned.checked_sub(span).ok().map(|z| z.timestamp());
        for (i, word) in words.iter().enumerate() {
            let before = |n: usize| {
                i.checked_sub(n)
                    .and_then(|j| words.get(j))
                    .map(String::as_str)
            };
            match word.as_str() {
                "ago" => {
                    let Some(unit) = before(1).and_then(unit) else {
                        continue;
                    };
                    let count = match (before(2), before(3)) {
                        (Some("of"), Some("couple")) => 2,
                        (Some(n), _) => match count(n) {
                            Some(n) => n,
                            None => continue,
                        },
                        _ => continue,
                    };
                    return Some(TimeCue {
                        start: back(unit(count + 1))?,
                        end: back(unit(count.saturating_sub(1)))?,
                    });
                }
                "last" | "past" | "previous" => {
                    if let Some(unit) = words.get(i + 1).and_then(|w| unit(w)) {
                        return Some(TimeCue {
                            start: back(unit(2))?,
                            end: now,
                        });
                    }
                }
                "yesterday" => {
                    return Some(TimeCue {
                        start: back(jiff::Span::new().days(2))?,
                        end: now,
                    });
                }
                "in" | "during" => {
                    let Some(month) = words.get(i + 1).and_then(|w| month(w)) else {
                        continue;
                    };
                    let year = if month <= now_zoned.month() {
                        now_zoned.year()
                    } else {
                        now_zoned.year() - 1
                    };
                    let first = jiff::civil::Date::new(year, month, 1).ok()?;
                    let start = first.to_zoned(jiff::tz::TimeZone::UTC).ok()?;
                    let end = start.checked_add(jiff::Span::new().months(1)).ok()?;
                    return Some(TimeCue {
                        start: start.timestamp(),
                        end: end.timestamp(),
                    });
                }
                _ => {}
            }
        }
        None
    }

    pub fn contains(&self, at: Timestamp) -> bool {
        self.start <= at && at <= self.end
    }
}

/// The span of `n` of the unit `word` names ("days", "week", …).
fn unit(word: &str) -> Option<fn(i64) -> jiff::Span> {
    Some(match word.strip_suffix('s').unwrap_or(word) {
        "day" => |n| jiff::Span::new().days(n),
        "week" => |n| jiff::Span::new().weeks(n),
        "month" => |n| jiff::Span::new().months(n),
        "year" => |n| jiff::Span::new().years(n),
        _ => return None,
    })
}

fn count(word: &str) -> Option<i64> {
    if let Ok(n) = word.parse::<i64>() {
        return (0..1000).contains(&n).then_some(n);
    }
    let words = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    match word {
        "a" | "an" => Some(1),
        "few" | "several" => Some(3),
        _ => words.iter().position(|&w| w == word).map(|i| i as i64 + 1),
    }
}

fn month(word: &str) -> Option<i8> {
    let months = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    months.iter().position(|&m| m == word).map(|i| i as i8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_lets_word_matches_through_lower() {
        assert!(FLOOR.keeps(Some(0.15), false));
        assert!(!FLOOR.keeps(Some(0.08), false));
        assert!(FLOOR.keeps(Some(0.08), true));
        assert!(!FLOOR.keeps(Some(0.01), true));
        assert!(FLOOR.keeps(None, false));
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn reciprocal_rank_fusion_sums_both_ranks() {
        let both = Evidence {
            keyword_rank: Some(0),
            semantic_rank: Some(1),
            ..Evidence::default()
        };
        assert!(close(
            Fusion::Rrf { k: 60.0 }.score(&both, 0.0),
            1.0 / 61.0 + 1.0 / 62.0
        ));
    }

    #[test]
    fn the_mix_adds_relative_keyword_relevance_and_similarity() {
        let fusion = Fusion::Mix { keyword: 0.5 };
        let best_words = Evidence {
            keyword_rank: Some(0),
            bm25: 4.0,
            similarity: Some(0.3),
            ..Evidence::default()
        };
        let closest = Evidence {
            keyword_rank: Some(1),
            semantic_rank: Some(0),
            bm25: 2.0,
            similarity: Some(0.7),
        };
        let no_words = Evidence {
            semantic_rank: Some(1),
            similarity: Some(0.6),
            ..Evidence::default()
        };
        assert!(close(fusion.score(&best_words, 4.0), 0.5 + 0.15));
        assert!(close(fusion.score(&closest, 4.0), 0.25 + 0.35));
        assert!(close(fusion.score(&no_words, 4.0), 0.3));
        // Without a vector only the words count; a negative cosine counts 0.
        let words_only = Evidence {
            similarity: None,
            ..closest
        };
        assert!(close(fusion.score(&words_only, 4.0), 0.25));
        let opposite = Evidence {
            similarity: Some(-0.2),
            ..no_words
        };
        assert!(close(fusion.score(&opposite, 4.0), 0.0));
    }

    #[test]
    fn time_cues() {
        let now: Timestamp = "2023-05-30T12:00:00Z".parse().unwrap();
        let cue =
            |text: &str| TimeCue::find(text, now).map(|c| (c.start.to_string(), c.end.to_string()));
        let span = |a: &str, b: &str| Some((a.to_owned(), b.to_owned()));
        assert_eq!(
            cue("What did I buy two weeks ago?"),
            span("2023-05-09T12:00:00Z", "2023-05-23T12:00:00Z")
        );
        assert_eq!(
            cue("the museum 2 months ago"),
            span("2023-02-28T12:00:00Z", "2023-04-30T12:00:00Z")
        );
        assert_eq!(
            cue("a couple of days ago"),
            span("2023-05-27T12:00:00Z", "2023-05-29T12:00:00Z")
        );
        assert_eq!(
            cue("a day ago"),
            span("2023-05-28T12:00:00Z", "2023-05-30T12:00:00Z")
        );
        assert_eq!(
            cue("jogging last week"),
            span("2023-05-16T12:00:00Z", "2023-05-30T12:00:00Z")
        );
        assert_eq!(
            cue("what did we decide yesterday"),
            span("2023-05-28T12:00:00Z", "2023-05-30T12:00:00Z")
        );
        // A month after now's month is last year's.
        assert_eq!(
            cue("appointments in March"),
            span("2023-03-01T00:00:00Z", "2023-04-01T00:00:00Z")
        );
        assert_eq!(
            cue("during December"),
            span("2022-12-01T00:00:00Z", "2023-01-01T00:00:00Z")
        );
        assert_eq!(
            cue("in may"),
            span("2023-05-01T00:00:00Z", "2023-06-01T00:00:00Z")
        );
        // Not cues: no unit, no count, no month.
        assert_eq!(cue("long ago"), None);
        assert_eq!(cue("many years ago"), None);
        assert_eq!(cue("the last step"), None);
        assert_eq!(cue("in production"), None);
        let march = TimeCue::find("in March", now).unwrap();
        assert!(march.contains("2023-03-27T20:56:00Z".parse().unwrap()));
        assert!(!march.contains("2023-04-02T00:00:00Z".parse().unwrap()));
    }
}
