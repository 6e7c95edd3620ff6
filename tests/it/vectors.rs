//! The two-stage vector search (sign-bit Hamming scan, then exact cosine on
//! the closest candidates) against exact search with sqlite-vec.

use goldfish::embed::{Embedder, TextKind, normalize};
use goldfish::index::Index;

use crate::common::with_embedder;

/// Deterministic pseudo-random numbers (xorshift64*), no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in (0, 1).
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f32 {
        ((-2.0 * self.unit().ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos()) as f32
    }

    pub fn unit_vector(&mut self, dims: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dims).map(|_| self.normal()).collect();
        normalize(&mut v);
        v
    }
}

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
const CANDIDATES: usize = goldfish::index::search::VECTOR_CANDIDATES;

#[test]
fn two_stage_search_matches_exact_on_random_vectors() {
    let mut rng = Rng::new(7);
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
    let mut rng = Rng::new(11);
    let mut vectors = real.clone();
    while vectors.len() < 20_000 {
        let a = &real[(rng.next_u64() % real.len() as u64) as usize];
        let b = &real[(rng.next_u64() % real.len() as u64) as usize];
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
