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
}

impl Default for Fusion {
    fn default() -> Self {
        DEFAULT_FUSION
    }
}

/// The fusion recall uses.
pub const DEFAULT_FUSION: Fusion = Fusion::Rrf { k: 60.0 };

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
    /// The fused score of `evidence`; `best_keyword` is the highest keyword
    /// relevance among the candidates. Higher is better.
    pub fn score(self, evidence: &Evidence, best_keyword: f64) -> f64 {
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
        assert!(
            (Fusion::Rrf { k: 60.0 }.score(&both, 0.5) - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-12
        );
        assert!((Fusion::Weighted { weight: 0.2 }.score(&both, 0.5) - 0.7).abs() < 1e-12);
        assert!((Fusion::Relative { weight: 0.2 }.score(&both, 0.5) - 0.8).abs() < 1e-12);
        let vector_only = Evidence {
            semantic_rank: Some(0),
            similarity: 0.6,
            ..Evidence::default()
        };
        assert_eq!(
            Fusion::Relative { weight: 0.2 }.score(&vector_only, 0.0),
            0.6
        );
    }
}
