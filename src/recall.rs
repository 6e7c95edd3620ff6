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
    /// Leave out memories the index flagged ([`crate::memory::trust`]).
    pub unflagged_only: bool,
}

/// How hybrid recall combines the keyword and the vector ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal rank fusion: Σ 1 / (k + rank) over both lists.
    Rrf { k: f64 },
    /// Cosine similarity plus `weight` × keyword relevance (BM25 mapped by
    /// x/(1+x) into [0, 1)).
    Weighted { weight: f64 },
    /// Cosine similarity plus `weight` × keyword relevance relative to the
    /// query's best keyword match (so the best match adds `weight`).
    Relative { weight: f64 },
    /// Cosine similarity plus `weight` for the memories among the keyword
    /// ranking's `top` (scaled by their relevance relative to the best match):
    /// a strong word match lifts a memory, a flood of weak ones cannot.
    TopBoost { top: usize, weight: f64 },
    /// Cosine similarity × (1 + `weight` × relative keyword relevance) for
    /// the memories among the keyword ranking's `top`: words lift what is
    /// already related in meaning, and cannot lift what is not.
    Lift { top: usize, weight: f64 },
    /// Convex combination of both scores, each min-max normalised over the
    /// query's candidates: (1 − `keyword`) × similarity + `keyword` × BM25.
    Convex { keyword: f64 },
}

impl Default for Fusion {
    fn default() -> Self {
        DEFAULT_FUSION
    }
}

/// The fusion recall uses: chosen on the labelled set in fixtures/eval/
/// (`cargo test --test it eval::compare_fusions -- --ignored --nocapture`),
/// where it beat keyword and semantic ranking alone, and reciprocal-rank,
/// convex and additive fusion, which let weak word matches outrank answers.
pub const DEFAULT_FUSION: Fusion = Fusion::Lift {
    top: 1,
    weight: 0.1,
};

/// The spread of the evidence over one query's candidates.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    pub best_keyword: f64,
    pub min_similarity: f64,
    pub max_similarity: f64,
}

impl Spread {
    pub fn of<'a>(evidence: impl IntoIterator<Item = &'a Evidence>) -> Spread {
        let mut spread = Spread {
            best_keyword: 0.0,
            min_similarity: f64::INFINITY,
            max_similarity: f64::NEG_INFINITY,
        };
        for e in evidence {
            spread.best_keyword = spread.best_keyword.max(e.keyword);
            spread.min_similarity = spread.min_similarity.min(e.similarity);
            spread.max_similarity = spread.max_similarity.max(e.similarity);
        }
        spread
    }
}

/// What hybrid recall knows of one candidate memory.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Evidence {
    /// 0-based rank in the keyword list, if the memory is in it.
    pub keyword_rank: Option<usize>,
    /// 0-based rank in the vector list, if the memory is in it.
    pub semantic_rank: Option<usize>,
    /// Keyword relevance in [0, 1); 0 when the words did not match.
    pub keyword: f64,
    /// Cosine similarity to the query.
    pub similarity: f64,
}

impl Fusion {
    /// The fused score of `evidence` among candidates spread as `spread`.
    /// Higher is better.
    pub fn score(self, evidence: &Evidence, spread: &Spread) -> f64 {
        let best_keyword = spread.best_keyword;
        match self {
            Fusion::Rrf { k } => [evidence.keyword_rank, evidence.semantic_rank]
                .into_iter()
                .flatten()
                .map(|rank| 1.0 / (k + rank as f64 + 1.0))
                .sum(),
            Fusion::Weighted { weight } => evidence.similarity + weight * evidence.keyword,
            Fusion::Relative { weight } => {
                let relative = if best_keyword > 0.0 {
                    evidence.keyword / best_keyword
                } else {
                    0.0
                };
                evidence.similarity + weight * relative
            }
            Fusion::TopBoost { top, weight } => {
                let boosted =
                    evidence.keyword_rank.is_some_and(|rank| rank < top) && best_keyword > 0.0;
                evidence.similarity
                    + if boosted {
                        weight * evidence.keyword / best_keyword
                    } else {
                        0.0
                    }
            }
            Fusion::Lift { top, weight } => {
                let boosted =
                    evidence.keyword_rank.is_some_and(|rank| rank < top) && best_keyword > 0.0;
                let lift = if boosted {
                    weight * evidence.keyword / best_keyword
                } else {
                    0.0
                };
                evidence.similarity.max(0.0) * (1.0 + lift)
            }
            Fusion::Convex { keyword } => {
                let range = spread.max_similarity - spread.min_similarity;
                let similarity = if range > 0.0 {
                    (evidence.similarity - spread.min_similarity) / range
                } else {
                    1.0
                };
                let lexical = if best_keyword > 0.0 {
                    evidence.keyword / best_keyword
                } else {
                    0.0
                };
                (1.0 - keyword) * similarity + keyword * lexical
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusions() {
        let both = Evidence {
            keyword_rank: Some(0),
            semantic_rank: Some(1),
            keyword: 0.5,
            similarity: 0.6,
        };
        let other = Evidence {
            semantic_rank: Some(0),
            similarity: 0.2,
            ..Evidence::default()
        };
        let spread = Spread::of([&both, &other]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(
            Fusion::Rrf { k: 60.0 }.score(&both, &spread),
            1.0 / 61.0 + 1.0 / 62.0
        ));
        assert!(close(
            Fusion::Weighted { weight: 0.2 }.score(&both, &spread),
            0.7
        ));
        assert!(close(
            Fusion::Relative { weight: 0.2 }.score(&both, &spread),
            0.8
        ));
        assert!(close(
            Fusion::TopBoost {
                top: 1,
                weight: 0.2
            }
            .score(&both, &spread),
            0.8
        ));
        assert!(close(
            Fusion::Lift {
                top: 1,
                weight: 0.5
            }
            .score(&both, &spread),
            0.9
        ));
        assert!(close(
            Fusion::Convex { keyword: 0.3 }.score(&both, &spread),
            1.0
        ));
        assert!(close(
            Fusion::Convex { keyword: 0.3 }.score(&other, &spread),
            0.0
        ));
        // Without a word match, lifting and boosting leave the similarity.
        assert!(close(
            Fusion::Lift {
                top: 1,
                weight: 0.5
            }
            .score(&other, &spread),
            0.2
        ));
        assert!(close(
            Fusion::TopBoost {
                top: 1,
                weight: 0.5
            }
            .score(&other, &spread),
            0.2
        ));
    }
}
