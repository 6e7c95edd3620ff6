//! What a recall asks for: the request, the workspaces it searches
//! ([`Scope`]), how it ranks ([`Mode`]) and the ranking policy. The index
//! (`goldfish::adapters::index::search`) answers it with
//! [`crate::recalled::IndexedMemory`]s.

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
    /// "Now", for the time cues of hybrid recall ("two weeks ago"; none
    /// without it) and the `future-timestamp` flag of what it finds (the
    /// clock's without it).
    pub now: Option<Timestamp>,
    /// Leave out memories the index flagged ([`crate::memory::trust`]); a
    /// timestamp ahead of now is left out by `until`, since the index does
    /// not store that flag.
    pub unflagged_only: bool,
    /// Leave out quarantined memories (`untrusted`: see
    /// [`crate::recalled::Trust`]): what agents receive unless they ask for
    /// more.
    pub trusted_only: bool,
    /// Leave out memories that a memory which counts supersedes (see
    /// `goldfish::adapters::index::search`'s superseder condition).
    pub hide_superseded: bool,
    /// Leave out stale memories (a file they name deleted since, their
    /// commit reverted) unless the commit that made them stale is by
    /// someone outside the trust policy: what `brief` does. Recall keeps
    /// them, ranked lower.
    pub hide_stale: bool,
    /// Memories captured from an agent's tool use (`source` `capture:…`):
    /// with the others, left out, or alone.
    pub captured: Captured,
    /// Only memories stored on this branch (their `branch` field).
    pub branch: Option<String>,
    /// Only quarantined memories (the viewer's review queue).
    pub quarantined_only: bool,
    /// Only stale memories.
    pub stale_only: bool,
    /// Only memories listed after this one, newest first: its timestamp and
    /// id (a page of a long list).
    pub after: Option<(String, String)>,
}

/// Which workspaces a recall searches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// These workspace ids.
    Workspaces(Vec<i64>),
    /// Every workspace in the index.
    All,
}

/// How recall ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// BM25 over content, tags and files.
    Keyword,
    /// Cosine similarity of embeddings.
    Semantic,
    /// Both rankings, fused.
    Hybrid,
}

/// Which memories a recall takes by how they were made: captured from an
/// agent's tool use (`source` starting with [`Captured::SOURCE_PREFIX`]) or
/// stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Captured {
    /// Every memory.
    #[default]
    Include,
    /// Only the stored ones.
    Exclude,
    /// Only the captured ones (to review them).
    Only,
}

impl Captured {
    /// How a captured memory's `source` starts.
    pub const SOURCE_PREFIX: &str = "capture:";
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

/// The keyword part never measures a memory against less than this share
/// of a whole-question match ([`Spread::full_bm25`]): BM25 relative to the
/// best match alone gave a memory sharing one common word with the question
/// the whole keyword part whenever nothing matched better.
pub const WHOLE_QUESTION_SHARE: f64 = 1.0;

/// How hybrid recall combines the keyword and the vector ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal rank fusion: Σ 1 / (k + rank) over both lists.
    Rrf { k: f64 },
    /// `keyword` × BM25 relative to the query's best keyword match (1 for
    /// the best, 0 without a match) + (1 − `keyword`) × cosine similarity.
    Mix { keyword: f64 },
    /// `keyword` × BM25 relative to the query's best keyword match + (1 −
    /// `keyword`) × similarity rescaled over the candidates (the least
    /// similar 0, the most similar 1): both parts on the same [0, 1] scale
    /// for every query, whatever range the model's cosines take for it.
    Scaled { keyword: f64 },
}

impl Default for Fusion {
    fn default() -> Self {
        DEFAULT_FUSION
    }
}

/// The fusion recall uses. Measured with `scripts/eval/longmemeval.py` (which
/// asks goldfish itself) and `scripts/eval/fusion_offline.py` (which re-ranks
/// every question in Python) on LongMemEval_S's development split, on
/// fixtures/eval/ and on samples of the split whose haystacks are mostly the
/// answers' own conversations (docs/BENCHMARKS.md): 0.6 keeps every question
/// type of every set at or above keyword ranking's recall while the
/// similarity finds what the words miss (0.7, the weight before, found less
/// on both public and project sets; 0.5 loses single-session questions).
/// A logistic regression fitted on half the split's questions over the same
/// evidence (`scripts/eval/fusion_ceiling.py`) ranks the other half no
/// better. [`Fusion::Scaled`] finds more on
/// LongMemEval's full haystacks (mostly unrelated chats) but loses
/// multi-session evidence where every candidate is on the question's topic,
/// as in one project's log: rescaling stretches small differences of
/// similarity there.
pub const DEFAULT_FUSION: Fusion = Fusion::Mix { keyword: 0.6 };

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

/// What the candidates of one query span: each memory's evidence is read
/// relative to it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    /// The best BM25 relevance among the candidates (0 without a word match).
    pub best_bm25: f64,
    /// The BM25 relevance of a memory of average length holding each word
    /// of the question once (Σ idf; 0 when unknown): what a memory that
    /// matches the whole question scores.
    pub full_bm25: f64,
    /// The lowest and highest similarity among the candidates that have one.
    pub similarity: Option<(f64, f64)>,
}

impl Spread {
    pub fn of<'a>(candidates: impl IntoIterator<Item = &'a Evidence>) -> Spread {
        let mut spread = Spread::default();
        for evidence in candidates {
            spread.best_bm25 = spread.best_bm25.max(evidence.bm25);
            if let Some(s) = evidence.similarity {
                spread.similarity = Some(match spread.similarity {
                    Some((low, high)) => (low.min(s), high.max(s)),
                    None => (s, s),
                });
            }
        }
        spread
    }

    /// BM25 relative to the best match, or to [`WHOLE_QUESTION_SHARE`] of a
    /// whole-question match when that is more: 1 for the best match of a
    /// question it covers well, 0 without a match.
    pub fn keyword(&self, evidence: &Evidence) -> f64 {
        let against = self.best_bm25.max(WHOLE_QUESTION_SHARE * self.full_bm25);
        if against > 0.0 {
            (evidence.bm25 / against).min(1.0)
        } else {
            0.0
        }
    }

    /// How much of the question's word weight a memory matches: its BM25
    /// over [`Spread::full_bm25`], at most 1 (0 when unknown). A memory that
    /// shares only a common word with a long question covers little of it,
    /// however it ranks among the candidates.
    pub fn coverage(&self, evidence: &Evidence) -> f64 {
        if self.full_bm25 > 0.0 {
            (evidence.bm25 / self.full_bm25).min(1.0)
        } else {
            0.0
        }
    }

    /// Similarity rescaled over the candidates: 0 for the least similar, 1
    /// for the most (1 when all are alike); 0 without a vector.
    pub fn semantic(&self, evidence: &Evidence) -> f64 {
        match (evidence.similarity, self.similarity) {
            (Some(s), Some((low, high))) if high > low => (s - low) / (high - low),
            (Some(_), Some(_)) => 1.0,
            _ => 0.0,
        }
    }
}

impl Fusion {
    /// The fused score of `evidence` among candidates that span `spread`.
    /// Higher is better.
    pub fn score(self, evidence: &Evidence, spread: &Spread) -> f64 {
        match self {
            Fusion::Rrf { k } => [evidence.keyword_rank, evidence.semantic_rank]
                .into_iter()
                .flatten()
                .map(|rank| 1.0 / (k + rank as f64 + 1.0))
                .sum(),
            // The parts and weights `recall --json` shows, summed.
            Fusion::Mix { keyword } | Fusion::Scaled { keyword } => {
                keyword * spread.keyword(evidence)
                    + (1.0 - keyword) * self.semantic_part(evidence, spread)
            }
        }
    }

    /// The weights of the keyword and the semantic part in `score`, as
    /// `recall --json` shows them; `None` for rank fusion, which adds ranks.
    pub fn weights(self) -> Option<(f64, f64)> {
        match self {
            Fusion::Rrf { .. } => None,
            Fusion::Mix { keyword } | Fusion::Scaled { keyword } => Some((keyword, 1.0 - keyword)),
        }
    }

    /// The semantic part of `score` as `recall --json` shows it: what
    /// multiplies the similarity's weight.
    pub fn semantic_part(self, evidence: &Evidence, spread: &Spread) -> f64 {
        match self {
            Fusion::Scaled { .. } => spread.semantic(evidence),
            _ => evidence.similarity.unwrap_or(0.0).max(0.0),
        }
    }
}

/// The parts of a hybrid recall's score (`recall --json`), so a rank can be
/// read off: `score` = `keyword_weight` × `keyword` + `semantic_weight` ×
/// `semantic` + `time_cue` (with the default fusion 0.6 and 0.4, `semantic`
/// the cosine similarity, 0 below zero or without a vector); see
/// [`DEFAULT_FUSION`]. Reciprocal rank fusion (for the
/// evaluation only) has no weights: its score comes from the ranks.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Ranking {
    /// 1-based rank in the keyword (BM25) list; `null` when not in it.
    pub keyword_rank: Option<usize>,
    /// 1-based rank in the vector list; `null` when not in it.
    pub semantic_rank: Option<usize>,
    /// BM25 relative to the query's best keyword match among the
    /// candidates, in [0, 1]; 0 without a word match.
    pub keyword: f64,
    /// How much of the question's word weight the memory matches, in [0, 1]:
    /// its BM25 over what a memory holding every word of the question once
    /// scores (rare words weigh more than common ones).
    pub coverage: f64,
    /// What the similarity adds before its weight: the cosine similarity
    /// (0 below zero or without a vector) with the default fusion; rescaled
    /// over the candidates, in [0, 1], with [`Fusion::Scaled`].
    pub semantic: f64,
    /// What the memory's time adds: it lies in the span the question points
    /// at ("two weeks ago", "in March"); 0 otherwise.
    pub time_cue: f64,
    /// What the memory's staleness takes off (a file it names deleted
    /// since, or its commit reverted: [`STALE_PENALTY`] below zero); left
    /// out when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub stale: f64,
    /// The weight of `keyword` in the score; `null` for rank fusion.
    pub keyword_weight: Option<f64>,
    /// The weight of `semantic` in the score; `null` for rank fusion.
    pub semantic_weight: Option<f64>,
}

/// What a stale memory's score loses in a hybrid recall: it still shows
/// (it may explain history), below a live memory of similar relevance.
pub const STALE_PENALTY: f64 = 0.1;

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// One candidate's fused score and its parts, as the request's fusion
/// reads its evidence among candidates that span `spread`, with what its
/// time (`timestamp`, RFC 3339) adds when it lies in the question's `cue`,
/// less [`STALE_PENALTY`] when the memory is `stale`.
pub fn fuse(
    request: &Request,
    evidence: &Evidence,
    spread: &Spread,
    cue: Option<TimeCue>,
    timestamp: &str,
    stale: bool,
) -> (f64, Ranking) {
    let in_cue = cue.is_some_and(|cue| {
        timestamp
            .parse()
            .is_ok_and(|at: Timestamp| cue.contains(at))
    });
    let time_cue = if in_cue { TIME_CUE_BOOST } else { 0.0 };
    let weights = request.fusion.weights();
    let ranking = Ranking {
        keyword_rank: evidence.keyword_rank.map(|r| r + 1),
        semantic_rank: evidence.semantic_rank.map(|r| r + 1),
        keyword: spread.keyword(evidence),
        coverage: spread.coverage(evidence),
        semantic: request.fusion.semantic_part(evidence, spread),
        time_cue,
        stale: if stale { -STALE_PENALTY } else { 0.0 },
        keyword_weight: weights.map(|(k, _)| k),
        semantic_weight: weights.map(|(_, s)| s),
    };
    (
        request.fusion.score(evidence, spread) + time_cue + ranking.stale,
        ranking,
    )
}

/// The order of a ranked list: higher score first, then newer, then the
/// larger id (ids are time-ordered), so equal scores never shuffle.
pub fn ranked_before(
    score_a: f64,
    timestamp_a: &str,
    id_a: &str,
    score_b: f64,
    timestamp_b: &str,
    id_b: &str,
) -> std::cmp::Ordering {
    score_b
        .total_cmp(&score_a)
        .then_with(|| timestamp_b.cmp(timestamp_a))
        .then_with(|| id_b.cmp(id_a))
}

/// The span of time a question points at, relative to "now" (UTC): "N
/// days/weeks/months/years ago" (N ± 1 of them), "last/past week/month/year"
/// (two of them back to now), "yesterday", "in/during MONTH" (the latest
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
        // Each reading: `None` when the word starts no cue, else what
        // `find` answers (`Some(None)` when the cue's dates overflow).
        for (i, word) in words.iter().enumerate() {
            let cue = match word.as_str() {
                "ago" => TimeCue::ago(&words, i, &now_zoned),
                "last" | "past" | "previous" => TimeCue::last(&words, i, &now_zoned),
                "yesterday" => Some(
                    back(&now_zoned, jiff::Span::new().days(2))
                        .map(|start| TimeCue { start, end: now }),
                ),
                "in" | "during" => TimeCue::in_months(&words, i, &now_zoned),
                _ => None,
            };
            if let Some(cue) = cue {
                return cue;
            }
        }
        None
    }

    /// "N days/weeks/months/years ago", "a couple of … ago" (at word `i`):
    /// N ± 1 of them.
    fn ago(words: &[String], i: usize, now: &jiff::Zoned) -> Option<Option<TimeCue>> {
        let before = |n: usize| {
            i.checked_sub(n)
                .and_then(|j| words.get(j))
                .map(String::as_str)
        };
        let unit = before(1).and_then(unit)?;
        let count = match (before(2), before(3)) {
            (Some("of"), Some("couple")) => 2,
            (Some(n), _) => count(n)?,
            _ => return None,
        };
        let start = back(now, unit(count + 1));
        let end = back(now, unit(count.saturating_sub(1)));
        Some(start.zip(end).map(|(start, end)| TimeCue { start, end }))
    }

    /// "last/past/previous" (word `i`) and what follows: a weekday (a day
    /// either side), the weekend, a unit (two of them back to now), or a
    /// count of units (that many back to now).
    fn last(words: &[String], i: usize, now: &jiff::Zoned) -> Option<Option<TimeCue>> {
        let next = words.get(i + 1).map(String::as_str);
        if let Some(weekday) = next.and_then(weekday) {
            // The latest such day before today, a day either side.
            let today = now.date();
            let back_days = i64::from(
                (today.weekday().to_monday_zero_offset() - weekday.to_monday_zero_offset() + 6)
                    .rem_euclid(7)
                    + 1,
            );
            return Some(
                today
                    .checked_sub(jiff::Span::new().days(back_days))
                    .ok()
                    .and_then(|day| day_span(day, 1, 2)),
            );
        }
        if next == Some("weekend") {
            // The latest Saturday before today, to Monday.
            let today = now.date();
            let back_days =
                i64::from((today.weekday().to_monday_zero_offset() - 5 + 6).rem_euclid(7) + 1);
            return Some(
                today
                    .checked_sub(jiff::Span::new().days(back_days))
                    .ok()
                    .and_then(|saturday| day_span(saturday, 1, 3)),
            );
        }
        let end = now.timestamp();
        if let Some(unit) = next.and_then(unit) {
            return Some(back(now, unit(2)).map(|start| TimeCue { start, end }));
        }
        // "the past three months": that many back to now.
        let (n, unit) = next
            .and_then(count)
            .zip(words.get(i + 2).and_then(|w| unit(w)))?;
        Some(back(now, unit(n + 1)).map(|start| TimeCue { start, end }))
    }

    /// "in/during MONTH" (word `i`), or "in MONTH and MONTH": the latest
    /// such months up to now.
    fn in_months(words: &[String], i: usize, now: &jiff::Zoned) -> Option<Option<TimeCue>> {
        let first_month = words.get(i + 1).and_then(|w| month(w))?;
        let year = if first_month <= now.month() {
            now.year()
        } else {
            now.year() - 1
        };
        // "in March and April": through the second month.
        let through = match words.get(i + 2).map(String::as_str) {
            Some("and" | "or" | "to" | "through") => words.get(i + 3).and_then(|w| month(w)),
            _ => None,
        };
        let months = match through {
            Some(last) => i64::from((last - first_month).rem_euclid(12)) + 1,
            None => 1,
        };
        Some(month_span(year, first_month, months))
    }

    pub fn contains(&self, at: Timestamp) -> bool {
        self.start <= at && at <= self.end
    }
}

/// `months` months from the first of `month` in `year` (UTC).
fn month_span(year: i16, month: i8, months: i64) -> Option<TimeCue> {
    let first = jiff::civil::Date::new(year, month, 1).ok()?;
    let start = first.to_zoned(jiff::tz::TimeZone::UTC).ok()?;
    let end = start.checked_add(jiff::Span::new().months(months)).ok()?;
    Some(TimeCue {
        start: start.timestamp(),
        end: end.timestamp(),
    })
}

/// `span` before `now`.
fn back(now: &jiff::Zoned, span: jiff::Span) -> Option<Timestamp> {
    now.checked_sub(span).ok().map(|z| z.timestamp())
}

/// From `before` days before `day` to `after` days after its start (UTC).
fn day_span(day: jiff::civil::Date, before: i64, after: i64) -> Option<TimeCue> {
    let start = day.to_zoned(jiff::tz::TimeZone::UTC).ok()?;
    Some(TimeCue {
        start: start
            .checked_sub(jiff::Span::new().days(before))
            .ok()?
            .timestamp(),
        end: start
            .checked_add(jiff::Span::new().days(after))
            .ok()?
            .timestamp(),
    })
}

fn weekday(word: &str) -> Option<jiff::civil::Weekday> {
    use jiff::civil::Weekday::*;
    let days = [
        ("monday", Monday),
        ("tuesday", Tuesday),
        ("wednesday", Wednesday),
        ("thursday", Thursday),
        ("friday", Friday),
        ("saturday", Saturday),
        ("sunday", Sunday),
    ];
    days.iter()
        .find(|(name, _)| *name == word)
        .map(|&(_, day)| day)
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
            Fusion::Rrf { k: 60.0 }.score(&both, &Spread::default()),
            1.0 / 61.0 + 1.0 / 62.0
        ));
    }

    fn three() -> [Evidence; 3] {
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
        [best_words, closest, no_words]
    }

    #[test]
    fn the_spread_holds_the_best_words_and_the_range_of_similarities() {
        let spread = Spread::of(&three());
        assert_eq!(spread.best_bm25, 4.0);
        assert_eq!(spread.similarity, Some((0.3, 0.7)));
        let [best_words, closest, no_words] = three();
        assert!(close(spread.keyword(&best_words), 1.0));
        assert!(close(spread.keyword(&closest), 0.5));
        assert!(close(spread.keyword(&no_words), 0.0));
        assert!(close(spread.semantic(&best_words), 0.0));
        assert!(close(spread.semantic(&closest), 1.0));
        assert!(close(spread.semantic(&no_words), 0.75));
        // One similarity, or all alike: each is the most similar.
        let alone = Spread::of(&[closest]);
        assert!(close(alone.semantic(&closest), 1.0));
        // Without vectors the semantic part is 0.
        let words_only = Evidence {
            similarity: None,
            ..closest
        };
        let spread = Spread::of(&[words_only]);
        assert_eq!(spread.similarity, None);
        assert!(close(spread.semantic(&words_only), 0.0));
    }

    #[test]
    fn the_mix_adds_relative_keyword_relevance_and_similarity() {
        let fusion = Fusion::Mix { keyword: 0.5 };
        let [best_words, closest, no_words] = three();
        let spread = Spread::of(&three());
        assert!(close(fusion.score(&best_words, &spread), 0.5 + 0.15));
        assert!(close(fusion.score(&closest, &spread), 0.25 + 0.35));
        assert!(close(fusion.score(&no_words, &spread), 0.3));
        // `--json` shows the weights the score used; rank fusion has none.
        assert_eq!(Fusion::Mix { keyword: 0.6 }.weights(), Some((0.6, 0.4)));
        assert_eq!(
            Fusion::Scaled { keyword: 0.7 }.weights(),
            Some((0.7, 1.0 - 0.7))
        );
        assert_eq!(Fusion::Rrf { k: 60.0 }.weights(), None);
        // Without a vector only the words count; a negative cosine counts 0.
        let words_only = Evidence {
            similarity: None,
            ..closest
        };
        assert!(close(fusion.score(&words_only, &spread), 0.25));
        let opposite = Evidence {
            similarity: Some(-0.2),
            ..no_words
        };
        assert!(close(fusion.score(&opposite, &spread), 0.0));
    }

    /// A memory sharing one word with a long question covers little of it:
    /// it gets the whole keyword part only when it matches what a
    /// whole-question match would, whatever else matched.
    #[test]
    fn one_common_word_cannot_take_the_whole_keyword_part() {
        let one_word = Evidence {
            keyword_rank: Some(0),
            bm25: 1.0,
            ..Evidence::default()
        };
        let spread = Spread {
            full_bm25: 8.0,
            ..Spread::of([&one_word])
        };
        assert!(close(spread.coverage(&one_word), 1.0 / 8.0));
        let expected = 1.0 / (WHOLE_QUESTION_SHARE * 8.0).max(1.0);
        assert!(close(spread.keyword(&one_word), expected));
        assert!(spread.keyword(&one_word) < 1.0 || WHOLE_QUESTION_SHARE * 8.0 <= 1.0);
        // A match of the whole question is measured against the best, as before.
        let whole = Evidence {
            bm25: 9.0,
            ..one_word
        };
        let spread = Spread {
            full_bm25: 8.0,
            ..Spread::of([&whole, &one_word])
        };
        assert!(close(spread.keyword(&whole), 1.0));
        assert!(close(spread.keyword(&one_word), 1.0 / 9.0));
        assert!(close(spread.coverage(&whole), 1.0), "at most 1");
        // Unknown whole-question score: relative to the best alone.
        assert!(close(Spread::of([&one_word]).keyword(&one_word), 1.0));
        assert!(close(Spread::of([&one_word]).coverage(&one_word), 0.0));
    }

    #[test]
    fn the_scaled_fusion_weighs_both_parts_on_the_candidates_scale() {
        let fusion = Fusion::Scaled { keyword: 0.5 };
        let [best_words, closest, no_words] = three();
        let spread = Spread::of(&three());
        assert!(close(fusion.score(&best_words, &spread), 0.5));
        assert!(close(fusion.score(&closest, &spread), 0.25 + 0.5));
        assert!(close(fusion.score(&no_words, &spread), 0.375));
        assert!(close(fusion.semantic_part(&no_words, &spread), 0.75));
        // The same similarities shifted down (a query the model finds
        // everything less similar to) rank the same way.
        let lower: Vec<Evidence> = three()
            .iter()
            .map(|e| Evidence {
                similarity: e.similarity.map(|s| s - 0.25),
                ..*e
            })
            .collect();
        let spread = Spread::of(&lower);
        assert!(close(fusion.score(&lower[2], &spread), 0.375));
        // Without vectors, the words alone: the keyword ranking's order.
        let words: Vec<Evidence> = three()
            .iter()
            .map(|e| Evidence {
                similarity: None,
                ..*e
            })
            .collect();
        let spread = Spread::of(&words);
        assert!(fusion.score(&words[0], &spread) > fusion.score(&words[1], &spread));
        assert!(close(fusion.score(&words[2], &spread), 0.0));
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
        // Weekdays and weekends: the latest before today (2023-05-30 is
        // a Tuesday), a day either side.
        assert_eq!(
            cue("the jewelry I got last Saturday"),
            span("2023-05-26T00:00:00Z", "2023-05-29T00:00:00Z")
        );
        assert_eq!(
            cue("last tuesday"),
            span("2023-05-22T00:00:00Z", "2023-05-25T00:00:00Z")
        );
        assert_eq!(
            cue("the bike I fixed the past weekend"),
            span("2023-05-26T00:00:00Z", "2023-05-30T00:00:00Z")
        );
        // "the past three months": that many and one more, back to now.
        assert_eq!(
            cue("trips in the past three months"),
            span("2023-01-30T12:00:00Z", "2023-05-30T12:00:00Z")
        );
        // Two months: from the first through the second.
        assert_eq!(
            cue("flights in March and April"),
            span("2023-03-01T00:00:00Z", "2023-05-01T00:00:00Z")
        );
        assert_eq!(
            cue("from in November to January"),
            span("2022-11-01T00:00:00Z", "2023-02-01T00:00:00Z")
        );
        // Not cues: no unit, no count, no month; a weekend to come.
        assert_eq!(cue("this weekend"), None);
        assert_eq!(cue("the last chapter"), None);
        assert_eq!(cue("long ago"), None);
        assert_eq!(cue("many years ago"), None);
        assert_eq!(cue("the last step"), None);
        assert_eq!(cue("in production"), None);
        let march = TimeCue::find("in March", now).unwrap();
        assert!(march.contains("2023-03-27T20:56:00Z".parse().unwrap()));
        assert!(!march.contains("2023-04-02T00:00:00Z".parse().unwrap()));
    }
}
