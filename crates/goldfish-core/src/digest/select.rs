//! Sentence selection: each sentence scored against the query, then
//! picked greedily by maximal marginal relevance with the context it
//! needs, within the budget, and rendered under its memory's header.

use std::collections::HashSet;

use crate::embedding::{Embedder, TextKind, cosine};

use super::sentence::{carries_identifier, continues};
use super::sentence::{identifiers, jaccard, says_next, says_next_or_why, sentences, words};
use super::tokens::{TokenCounter, source_tokens};
use super::{Digest, Picked, Source, block_text, header};

/// A sentence's relevance: its similarity to the query (relative to the best
/// sentence's), the share of the query's words it has, and its memory's
/// recall rank.
const SIMILARITY_WEIGHT: f64 = 0.5;
const OVERLAP_WEIGHT: f64 = 0.3;
const RANK_WEIGHT: f64 = 0.2;
/// A sentence sharing no word with the query and less than this share of the
/// best similarity is left out.
const RELATIVE_FLOOR: f64 = 0.4;
/// Relevance against redundancy in the greedy pick, and the similarity from
/// which a sentence repeats one already picked.
const MMR_LAMBDA: f64 = 0.7;
const DUPLICATE: f64 = 0.9;
/// A memory of at most this share of the budget (1/4) is kept whole once one
/// of its sentences is picked: its other sentences are the answer's context.
const WHOLE_SHARE: usize = 4;

/// Full headers (id, date, type, author, commit: ~27 tokens each) take at
/// most a third of the budget; past that the digest uses compact ones
/// (`[TYPE · AUTHOR]`), so a small budget goes to what the memories say.
pub(super) const HEADER_SHARE_DENOMINATOR: usize = 3;
/// With a query, a sentence that says what comes next or why is at least
/// this share as relevant as its memory's most relevant sentence (above
/// [`RELATIVE_CUT`]: it is kept when its memory is, room permitting).
const NEXT_OR_WHY_SHARE: f64 = 0.9;
/// A piece of fewer words than this is never shown alone: it comes with its
/// neighbour ("See docs/auth.md." says nothing by itself).
const CLAUSE_WORDS: usize = 5;
/// With a query, content scoring below this share of the best sentence's
/// relevance stays out even when there is room.
const RELATIVE_CUT: f64 = 0.5;

struct Candidate {
    memory: usize,
    position: usize,
    text: String,
    words: HashSet<String>,
    /// Its exact names and numbers ([`identifiers`]).
    marks: HashSet<String>,
    vector: Option<Vec<f32>>,
    relevance: f64,
    tokens: usize,
}

/// Distils `sources` (in recall order) into at most `budget` tokens.
/// `query_words` are the query's content words (empty without a query);
/// with `embedder` and `query_vector`, sentences are also compared by meaning.
pub fn distill(
    sources: &[Source],
    query_words: &[String],
    query_vector: Option<&[f32]>,
    embedder: Option<&mut dyn Embedder>,
    counter: &mut dyn TokenCounter,
    budget: usize,
) -> Result<Digest, crate::embedding::EmbedError> {
    let mut candidates = candidates(sources, counter);
    if let Some(embedder) = embedder {
        let texts: Vec<&str> = candidates.iter().map(|c| c.text.as_str()).collect();
        let vectors = if texts.is_empty() {
            Vec::new()
        } else {
            embedder.embed(&texts, TextKind::Document)?
        };
        for (candidate, vector) in candidates.iter_mut().zip(vectors) {
            candidate.vector = Some(vector);
        }
    }
    let has_query = score(&mut candidates, sources.len(), query_words, query_vector);
    // Each memory's sentences, as a range of `candidates`.
    let mut spans: Vec<std::ops::Range<usize>> = vec![0..0; sources.len()];
    for (i, c) in candidates.iter().enumerate() {
        if spans[c.memory].is_empty() {
            spans[c.memory] = i..i;
        }
        spans[c.memory].end = i + 1;
    }
    // Content far below the best is left out, whatever room is left: the
    // digest is shorter than the budget rather than padded.
    let best_relevance = candidates
        .iter()
        .map(|c| c.relevance)
        .filter(|r| r.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let cut = if has_query {
        RELATIVE_CUT * best_relevance
    } else {
        f64::NEG_INFINITY
    };
    let pool = Pool {
        sources,
        candidates: &candidates,
        spans: &spans,
        cut,
        budget,
    };
    // Headers take at most a fixed share of the budget: when the full ones
    // of what fits would take more, the digest is made again with compact
    // ones (what a small budget is for is the memories' text).
    let (mut digest, headers) = pool.select(false, counter);
    if headers * HEADER_SHARE_DENOMINATOR > budget {
        digest = pool.select(true, counter).0;
    }
    digest.tokens_of_sources = source_tokens(sources, counter);
    Ok(digest)
}

/// Each memory's sentences (step 1), in recall order, with their words,
/// identifiers and tokens.
fn candidates(sources: &[Source], counter: &mut dyn TokenCounter) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = Vec::new();
    for (memory, source) in sources.iter().enumerate() {
        for (position, text) in sentences(&source.content).into_iter().enumerate() {
            let tokens = counter.count(&text);
            candidates.push(Candidate {
                memory,
                position,
                words: words(&text),
                marks: identifiers(&text),
                text,
                vector: None,
                relevance: 0.0,
                tokens,
            });
        }
    }
    candidates
}

/// Scores each sentence against the query (step 2), or by recall rank
/// without one; `memories` is how many sources there are. Says whether
/// there is a query.
fn score(
    candidates: &mut [Candidate],
    memories: usize,
    query_words: &[String],
    query_vector: Option<&[f32]>,
) -> bool {
    // The sentence that says what comes next or why rides with the
    // memory's most relevant one: a checkpoint without its next step, or a
    // rule without its reason, tells half of what it was stored for.
    let mut best_of_memory: Vec<f64> = vec![f64::NEG_INFINITY; memories];
    let query_set: HashSet<String> = query_words.iter().map(|w| w.to_lowercase()).collect();
    let has_query = !query_set.is_empty() || query_vector.is_some();
    let similarity_of = |c: &Candidate| match (query_vector, &c.vector) {
        (Some(q), Some(v)) => f64::from(cosine(q, v)).max(0.0),
        _ => 0.0,
    };
    // Similarities of short questions are all low: compare with the best.
    let best_similarity = candidates.iter().map(similarity_of).fold(0.0, f64::max);
    for c in candidates.iter_mut() {
        let prior = 1.0 / (1.0 + c.memory as f64);
        let overlap = if query_set.is_empty() {
            0.0
        } else {
            c.words.intersection(&query_set).count() as f64 / query_set.len() as f64
        };
        let similarity = if best_similarity > 0.0 {
            similarity_of(c) / best_similarity
        } else {
            0.0
        };
        c.relevance = if !has_query {
            // No question: the newest memories first, their first sentences
            // first, then what comes next or why.
            let position = if c.position > 0 && says_next_or_why(&c.text) {
                0.5
            } else {
                c.position as f64
            };
            prior - 0.01 * position
        } else {
            SIMILARITY_WEIGHT * similarity + OVERLAP_WEIGHT * overlap + RANK_WEIGHT * prior
        };
        // Off-topic sentences stay out, whatever room is left.
        if has_query && overlap == 0.0 && similarity < RELATIVE_FLOOR {
            c.relevance = f64::NEG_INFINITY;
        }
        best_of_memory[c.memory] = best_of_memory[c.memory].max(c.relevance);
    }
    if has_query {
        for c in candidates.iter_mut() {
            let best = best_of_memory[c.memory];
            if best.is_finite() && says_next_or_why(&c.text) {
                c.relevance = c.relevance.max(NEXT_OR_WHY_SHARE * best);
            }
        }
    }
    has_query
}

/// The scored sentences of one distillation and what bounds the pick.
struct Pool<'a> {
    sources: &'a [Source],
    candidates: &'a [Candidate],
    /// Each memory's sentences, as a range of `candidates`.
    spans: &'a [std::ops::Range<usize>],
    /// The relevance under which content stays out.
    cut: f64,
    budget: usize,
}

impl Pool<'_> {
    // Picks and renders with full headers or compact ones; says what the
    // full headers of what it picked cost.
    fn select(&self, compact: bool, counter: &mut dyn TokenCounter) -> (Digest, usize) {
        let picked = self.pick(compact, counter);
        self.fit(picked, compact, counter)
    }

    /// Picks greedily by maximal marginal relevance (steps 3 to 5): the
    /// indexes of the picked sentences, in the order picked. One loop over
    /// the candidates, kept whole: its state is what it picked so far.
    fn pick(&self, compact: bool, counter: &mut dyn TokenCounter) -> Vec<usize> {
        let Pool {
            sources,
            candidates,
            spans,
            cut,
            budget,
        } = *self;
        let redundancy = |a: &Candidate, b: &Candidate| -> f64 {
            match (&a.vector, &b.vector) {
                (Some(x), Some(y)) => f64::from(cosine(x, y)),
                _ => jaccard(&a.words, &b.words),
            }
        };
        let short = |memory: usize| -> bool {
            let tokens: usize = candidates[spans[memory].clone()]
                .iter()
                .map(|c| c.tokens + 1)
                .sum();
            tokens <= budget / WHOLE_SHARE
        };
        let mut picked: Vec<usize> = Vec::new();
        let mut is_picked = vec![false; candidates.len()];
        let mut groups: Vec<usize> = Vec::new();
        let mut used = 0usize;
        let mut open: Vec<bool> = vec![true; candidates.len()];
        let cost_of = |unit: &[usize],
                       is_picked: &[bool],
                       groups: &[usize],
                       counter: &mut dyn TokenCounter| {
            let mut cost: usize = unit
                .iter()
                .filter(|&&j| !is_picked[j])
                .map(|&j| candidates[j].tokens + 1)
                .sum();
            let memory = candidates[unit[0]].memory;
            if !groups.contains(&memory) {
                cost += counter.count(&header(&sources[memory], compact)) + 1;
            }
            cost
        };
        loop {
            let mut best: Option<(f64, Vec<usize>, usize)> = None;
            for (i, c) in candidates.iter().enumerate() {
                if !open[i] || is_picked[i] || c.relevance == f64::NEG_INFINITY || c.relevance < cut
                {
                    continue;
                }
                let similar = picked
                    .iter()
                    .map(|&p| redundancy(c, &candidates[p]))
                    .fold(0.0, f64::max);
                // A repeat says nothing new, unless it names other things or
                // numbers: "10-12 hours" after "5 hours" is an update.
                let repeats = picked.iter().any(|&p| {
                    redundancy(c, &candidates[p]) >= DUPLICATE
                        && c.marks.is_subset(&candidates[p].marks)
                });
                if repeats {
                    open[i] = false;
                    continue;
                }
                // The whole memory when it is short, else the sentence with the
                // neighbours it needs to be understood.
                let span = spans[c.memory].clone();
                let mut units = Vec::new();
                if short(c.memory) {
                    units.push(span.clone().collect::<Vec<_>>());
                }
                units.push(context(candidates, span.clone(), i, true));
                units.push(context(candidates, span.clone(), i, false));
                // What comes next or why goes with any part of its memory
                // that has room for it, before that part alone.
                let next_or_why: Vec<usize> = span
                    .filter(|&j| !is_picked[j] && says_next_or_why(&candidates[j].text))
                    .collect();
                if !next_or_why.is_empty() {
                    // All of them first; then, where they do not all fit,
                    // the next step alone (a checkpoint's next step before
                    // a reason).
                    let next: Vec<usize> = next_or_why
                        .iter()
                        .copied()
                        .filter(|&j| says_next(&candidates[j].text))
                        .collect();
                    let mut extras = vec![next_or_why];
                    if !next.is_empty() && next.len() < extras[0].len() {
                        extras.push(next);
                    }
                    let mut with: Vec<Vec<usize>> = extras
                        .iter()
                        .flat_map(|extra| {
                            units.iter().map(move |unit| {
                                let mut unit = unit.clone();
                                unit.extend(extra);
                                unit.sort_unstable();
                                unit.dedup();
                                unit
                            })
                        })
                        .collect();
                    with.append(&mut units);
                    units = with;
                }
                let Some((unit, cost)) = units.into_iter().find_map(|unit| {
                    let cost = cost_of(&unit, &is_picked, &groups, counter);
                    (used + cost <= budget).then_some((unit, cost))
                }) else {
                    open[i] = false;
                    continue;
                };
                let score = MMR_LAMBDA * c.relevance - (1.0 - MMR_LAMBDA) * similar;
                if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
                    best = Some((score, unit, cost));
                }
            }
            let Some((_, unit, cost)) = best else { break };
            used += cost;
            let memory = candidates[unit[0]].memory;
            if !groups.contains(&memory) {
                groups.push(memory);
            }
            for j in unit {
                if !is_picked[j] {
                    is_picked[j] = true;
                    open[j] = false;
                    picked.push(j);
                }
            }
        }
        picked
    }

    /// Renders `picked` (step 6) and says what the full headers of what it
    /// picked cost.
    fn fit(
        &self,
        mut picked: Vec<usize>,
        compact: bool,
        counter: &mut dyn TokenCounter,
    ) -> (Digest, usize) {
        let Pool {
            sources,
            candidates,
            budget,
            ..
        } = *self;
        // Render, then trim from the least relevant pick if the exact count of
        // the whole text is over (token boundaries differ from piecewise sums).
        loop {
            let (text, sentences) = render(sources, candidates, &picked, compact);
            let tokens = if text.is_empty() {
                0
            } else {
                counter.count(&text)
            };
            if tokens <= budget || picked.is_empty() {
                let headers = if compact {
                    0
                } else {
                    let memories: HashSet<usize> =
                        picked.iter().map(|&p| candidates[p].memory).collect();
                    memories
                        .iter()
                        .map(|&memory| counter.count(&header(&sources[memory], false)) + 1)
                        .sum()
                };
                return (
                    Digest {
                        text,
                        tokens,
                        tokens_of_sources: 0,
                        sentences,
                    },
                    headers,
                );
            }
            let weakest = picked
                .iter()
                .enumerate()
                .min_by(|a, b| {
                    candidates[*a.1]
                        .relevance
                        .total_cmp(&candidates[*b.1].relevance)
                })
                .map(|(at, _)| at)
                .expect("picked is not empty");
            picked.remove(weakest);
        }
    }
}

/// Sentence `i` with what it needs around it, within its memory's `span`:
/// the sentences it continues (back to one that starts afresh); with
/// `following`, the sentences after it for as long as each continues the one
/// before or carries identifiers (a path, a symbol, a commit, a number); and
/// a neighbour when the piece is still shorter than a clause.
fn context(
    candidates: &[Candidate],
    span: std::ops::Range<usize>,
    i: usize,
    following: bool,
) -> Vec<usize> {
    let (mut lo, mut hi) = (i, i);
    while lo > span.start && continues(&candidates[lo].text) {
        lo -= 1;
    }
    while following && hi + 1 < span.end {
        let next = &candidates[hi + 1].text;
        if !(continues(next) || carries_identifier(next)) {
            break;
        }
        hi += 1;
    }
    let word_count = |lo: usize, hi: usize| -> usize {
        candidates[lo..=hi]
            .iter()
            .map(|c| c.text.split_whitespace().count())
            .sum()
    };
    while word_count(lo, hi) < CLAUSE_WORDS && (lo > span.start || hi + 1 < span.end) {
        if lo > span.start {
            lo -= 1;
        } else {
            hi += 1;
        }
    }
    (lo..=hi).collect()
}

fn render(
    sources: &[Source],
    candidates: &[Candidate],
    picked: &[usize],
    compact: bool,
) -> (String, Vec<Picked>) {
    let mut memories: Vec<usize> = Vec::new();
    for &p in picked {
        if !memories.contains(&candidates[p].memory) {
            memories.push(candidates[p].memory);
        }
    }
    // Recall order between memories, the memory's own order within one.
    memories.sort_unstable();
    let mut text = String::new();
    let mut sentences = Vec::new();
    for memory in memories {
        let mut mine: Vec<&Candidate> = picked
            .iter()
            .map(|&p| &candidates[p])
            .filter(|c| c.memory == memory)
            .collect();
        mine.sort_by_key(|c| c.position);
        text.push_str(&header(&sources[memory], compact));
        text.push('\n');
        // Sentences that were apart in the memory are apart here too.
        let mut line = String::new();
        for (n, c) in mine.iter().enumerate() {
            if n > 0 {
                line.push_str(if c.position == mine[n - 1].position + 1 {
                    " "
                } else {
                    " … "
                });
            }
            line.push_str(&c.text);
        }
        text.push_str(&block_text(&line));
        text.push('\n');
        sentences.extend(mine.iter().map(|c| Picked {
            memory: sources[memory].id.clone(),
            text: c.text.clone(),
        }));
    }
    (text, sentences)
}
