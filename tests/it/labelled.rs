//! Test support: retrieval quality on a labelled set (`fixtures/eval/`, the
//! LongMemEval dev split): questions with the memory ids that answer them,
//! and the metrics (`tests/it/eval.rs`, `tests/it/digest.rs`).

use std::collections::HashMap;

use serde::Deserialize;

use goldfish::adapters::index::search::{Mode, QueryVector, Scope};
use goldfish::adapters::index::{Index, IndexError};
use goldfish::domain::recall::{Fusion, Request};

/// One labelled question.
#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    pub id: String,
    pub question: String,
    /// Ids of the memories that answer it.
    pub answers: Vec<String>,
    /// Exact substrings an answer must contain.
    pub facts: Vec<String>,
    /// `keyword`, `semantic` or `mixed`: how the question is phrased.
    pub kind: String,
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub until: Option<String>,
    /// When the question is asked (RFC 3339), for its time cues.
    #[serde(default)]
    pub now: Option<String>,
}

/// Parses `questions.json`.
pub fn questions(json: &str) -> Result<Vec<Question>, serde_json::Error> {
    serde_json::from_str(json)
}

/// Retrieval quality over a set of questions.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Metrics {
    pub questions: usize,
    /// Mean reciprocal rank of the first answer (0 when none in the top 10).
    pub mrr: f64,
    /// Share of questions with an answer ranked first.
    pub hit_at_1: f64,
    /// Share of questions with an answer in the top 5.
    pub hit_at_5: f64,
    /// Share of all answer memories found in the top 10.
    pub recall_at_10: f64,
}

/// Runs every question through recall (`mode`, `fusion`) and scores the
/// rankings. `vectors` holds each question's embedding by question id (only
/// needed for semantic and hybrid mode).
pub fn evaluate(
    index: &Index,
    scope: &Scope,
    questions: &[Question],
    vectors: &HashMap<String, Vec<f32>>,
    model: &str,
    mode: Mode,
    fusion: Fusion,
) -> Result<Metrics, IndexError> {
    let mut metrics = Metrics::default();
    let mut answers_total = 0usize;
    let mut answers_found = 0usize;
    for question in questions {
        let request = Request {
            query: Some(question.question.clone()),
            since: question.since.as_deref().and_then(day_start),
            until: question.until.as_deref().and_then(day_end),
            limit: 10,
            fusion,
            floor: Some(goldfish::domain::recall::FLOOR),
            now: question.now.as_deref().and_then(|now| now.parse().ok()),
            ..Request::default()
        };
        let vector = vectors
            .get(&question.id)
            .map(|vector| QueryVector { model, vector });
        let hits = index.recall(&request, scope, mode, vector)?;
        let first = hits
            .iter()
            .position(|hit| question.answers.contains(&hit.id));
        if let Some(rank) = first {
            metrics.mrr += 1.0 / (rank as f64 + 1.0);
            metrics.hit_at_1 += f64::from(u8::from(rank == 0));
            metrics.hit_at_5 += f64::from(u8::from(rank < 5));
        }
        answers_total += question.answers.len();
        answers_found += question
            .answers
            .iter()
            .filter(|answer| hits.iter().any(|hit| &hit.id == *answer))
            .count();
        metrics.questions += 1;
    }
    let n = metrics.questions.max(1) as f64;
    metrics.mrr /= n;
    metrics.hit_at_1 /= n;
    metrics.hit_at_5 /= n;
    metrics.recall_at_10 = answers_found as f64 / answers_total.max(1) as f64;
    Ok(metrics)
}

fn day_start(date: &str) -> Option<jiff::Timestamp> {
    format!("{date}T00:00:00Z").parse().ok()
}

fn day_end(date: &str) -> Option<jiff::Timestamp> {
    format!("{date}T23:59:59.999Z").parse().ok()
}
