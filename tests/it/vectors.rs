//! The two-stage vector search (sign-bit Hamming scan, then exact cosine on
//! the closest candidates) against exact search with sqlite-vec (a
//! dev-dependency: `bench_common::sqlite_vec`).

use goldfish::adapters::embed::{Embedder, TextKind, normalize};
use goldfish::adapters::index::Index;

use crate::common::with_embedder;

// The benchmarks' seeded generator, so tests and benchmarks draw alike.
#[path = "../../benches/common/mod.rs"]
mod bench_common;
use bench_common::Rng;
use bench_common::sqlite_vec::ExactSearch;

/// Mean share of the exact top 10 that the two-stage search also returns.
fn overlap(index: &Index, queries: &[Vec<f32>], candidates: usize) -> f64 {
    let mut total = 0.0;
    for query in queries {
        let exact = index.vector_search_exact("m", query, 10).unwrap();
        let fast = index.vector_search("m", query, 10, candidates).unwrap();
        let found = exact
            .iter()
            .filter(|e| fast.iter().any(|f| f.content_hash == e.content_hash))
            .count();
        total += found as f64 / exact.len() as f64;
    }
    total / queries.len() as f64
}

fn index_with(vectors: &[Vec<f32>]) -> (tempfile::TempDir, Index) {
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(&dir.path().join("index.db")).unwrap();
    let hashes: Vec<String> = (0..vectors.len()).map(|i| format!("h{i:07}")).collect();
    index
        .insert_embeddings(
            "m",
            hashes
                .iter()
                .map(String::as_str)
                .zip(vectors.iter().map(Vec::as_slice)),
        )
        .unwrap();
    (dir, index)
}

/// Candidates recall re-ranks exactly (see `index::search::VECTOR_CANDIDATES`).
const CANDIDATES: usize = goldfish::adapters::index::search::VECTOR_CANDIDATES;

#[test]
fn two_stage_search_matches_exact_on_random_vectors() {
    let mut rng = Rng(7);
    let vectors: Vec<Vec<f32>> = (0..20_000).map(|_| rng.unit_vector(384)).collect();
    let (_dir, index) = index_with(&vectors);
    // Queries near stored vectors, as real queries are near their answers.
    let queries: Vec<Vec<f32>> = (0..40)
        .map(|i| {
            let base = &vectors[i * 97];
            let noise = rng.unit_vector(384);
            let mut q: Vec<f32> = base.iter().zip(&noise).map(|(b, n)| b + 0.8 * n).collect();
            normalize(&mut q);
            q
        })
        .collect();
    let got = overlap(&index, &queries, CANDIDATES);
    assert!(got >= 0.98, "top-10 overlap with exact search: {got}");
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn two_stage_search_matches_exact_on_real_embeddings() {
    // Real sentence embeddings, and mixtures of them to reach a size where the
    // first stage has to cut (20,000 vectors, 2,000 candidates).
    let texts: Vec<String> = (0..400)
        .map(|i| {
            let subjects = [
                "the invoice job",
                "JWT validation",
                "the Postgres pool",
                "the CI cache",
                "payment retries",
            ];
            let verbs = [
                "was slow",
                "failed on deploy",
                "was refactored",
                "got a new index",
                "leaked connections",
            ];
            let details = [
                "after the 1.4 release",
                "under load",
                "on staging only",
                "since #412",
                "in src/billing",
            ];
            format!(
                "{} {} {} (note {i})",
                subjects[i % 5],
                verbs[(i / 5) % 5],
                details[(i / 25) % 5]
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let real = with_embedder(|e| e.embed(&refs, TextKind::Document).unwrap());
    let mut rng = Rng(11);
    let mut vectors = real.clone();
    while vectors.len() < 20_000 {
        let a = &real[(rng.next() % real.len() as u64) as usize];
        let b = &real[(rng.next() % real.len() as u64) as usize];
        let t = rng.unit() as f32;
        let mut v: Vec<f32> = a
            .iter()
            .zip(b)
            .map(|(x, y)| t * x + (1.0 - t) * y + 0.02 * rng.normal())
            .collect();
        normalize(&mut v);
        vectors.push(v);
    }
    let (_dir, index) = index_with(&vectors);
    let questions = [
        "why is billing slow",
        "login token problems",
        "database connections",
        "flaky builds",
    ];
    let queries = with_embedder(|e| e.embed(&questions, TextKind::Query).unwrap());
    let got = overlap(&index, &queries, CANDIDATES);
    assert!(got >= 0.98, "top-10 overlap with exact search: {got}");
}
