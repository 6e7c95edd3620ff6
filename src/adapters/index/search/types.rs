//! What a search is asked and returns: the scope, the modes and the
//! memories found are the core's (`crate::domain::recall`,
//! `crate::domain::recalled`); here the query vector and the index's
//! answers about trust.

pub use crate::domain::recall::{Mode, Ranking, Scope};

/// A change of the trust policy by a commit whose author was outside the
/// policy before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedPolicyChange {
    pub commit: String,
    pub author: String,
    pub date: String,
    /// Why its author was outside: "whose author (…) is outside the policy
    /// before it".
    pub why: String,
}

/// An indexed line that reuses the id of a memory a line of another text
/// introduced, and that memory's commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReusedId {
    pub id: String,
    pub file: String,
    pub line: i64,
    pub original_commit: String,
    pub original_author: String,
}

/// A decision of 2026-11-20 with this id and content, for unit tests.
#[cfg(test)]
pub(crate) fn sample(id: &str, content: &str) -> crate::domain::recalled::IndexedMemory {
    crate::domain::recalled::IndexedMemory {
        id: id.to_owned(),
        timestamp: "2026-11-20T10:00:00Z".to_owned(),
        kind: "decision".to_owned(),
        content: content.to_owned(),
        source: None,
        tags: Vec::new(),
        author: None,
        branch: None,
        commit: None,
        files: Vec::new(),
        workspace: "r".to_owned(),
        file: "2026-11-20.jsonl".to_owned(),
        line: 1,
        introduced: None,
        trust: crate::domain::recalled::Trust::Trusted,
        trust_reasons: vec!["uncommitted".to_owned()],
        score: 1.0,
        keyword: None,
        similarity: None,
        ranking: None,
        flags: Vec::new(),
        supersedes: None,
        superseded_by: None,
        superseded_why: None,
        newer_than: None,
        stale: None,
        moved: Vec::new(),
        cites: Vec::new(),
        content_hash: crate::adapters::index::writing::content_hash(content),
        session: None,
    }
}

/// What the vector stage needs: the model's id and the query's embedding.
#[derive(Debug, Clone, Copy)]
pub struct QueryVector<'a> {
    pub model: &'a str,
    pub vector: &'a [f32],
}

/// Vectors the vector stage re-ranks by exact cosine: measured to keep
/// ≥ 0.98 of the exact top 10 (tests/it/vectors.rs, `cargo bench --bench vectors`).
pub const VECTOR_CANDIDATES: usize = 2000;
