//! Vector-stage benchmark: the two-stage search recall uses against exact
//! brute force with sqlite-vec, at 10k, 100k and 1M stored vectors (384
//! dims, clustered like sentence embeddings). Prints a markdown table.
//!
//! Also emits rows for `scripts/bench.sh` (see `common/report.rs`).
//!
//! Run: `cargo bench --bench vectors` (`GOLDFISH_BENCH_VECTORS=10000,100000`
//! to choose sizes).

use std::time::Instant;

mod common;

use common::report::{Row, emit};
use common::{Rng, ms, percentile, rss_kb};
use goldfish::adapters::embed::normalize;
use goldfish::adapters::index::Index;
use goldfish::adapters::index::search::VECTOR_CANDIDATES;

const DIMS: usize = 384;

fn main() {
    let sizes = common::sizes(
        "GOLDFISH_BENCH_VECTORS",
        &[10_000],
        &[10_000, 100_000, 1_000_000],
    );
    println!("machine: {}", common::machine());
    println!();
    println!(
        "| vectors | two-stage p50 | p95 | exact (sqlite-vec) p50 | speed-up | top-10 overlap | first search (loads codes) | RSS for codes | index size |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        run(n);
    }
}

fn run(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.db");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ n as u64);
    let centers: Vec<Vec<f32>> = (0..1000).map(|_| rng.unit_vector(DIMS)).collect();
    {
        let mut index = Index::open(&path).unwrap();
        let mut batch: Vec<(String, Vec<f32>)> = Vec::with_capacity(10_000);
        for i in 0..n {
            let center = &centers[(rng.next() % centers.len() as u64) as usize];
            let mut v: Vec<f32> = center.iter().map(|c| c + 0.06 * rng.normal()).collect();
            normalize(&mut v);
            batch.push((format!("h{i:08}"), v));
            if batch.len() == 10_000 || i + 1 == n {
                index
                    .insert_embeddings("m", batch.iter().map(|(h, v)| (h.as_str(), v.as_slice())))
                    .unwrap();
                batch.clear();
            }
        }
    }
    let index = Index::open(&path).unwrap();
    let queries: Vec<Vec<f32>> = (0..60)
        .map(|_| {
            let center = &centers[(rng.next() % centers.len() as u64) as usize];
            let mut v: Vec<f32> = center.iter().map(|c| c + 0.08 * rng.normal()).collect();
            normalize(&mut v);
            v
        })
        .collect();
    let rss_before = rss_kb();
    let start = Instant::now();
    index
        .vector_search("m", &queries[0], 10, VECTOR_CANDIDATES)
        .unwrap();
    let first = start.elapsed();
    let rss_after = rss_kb();
    let mut fast = Vec::new();
    let mut results = Vec::new();
    for q in &queries[10..] {
        let start = Instant::now();
        let hits = index.vector_search("m", q, 10, VECTOR_CANDIDATES).unwrap();
        fast.push(start.elapsed());
        results.push(hits);
    }
    let exact_runs = if n >= 1_000_000 { 5 } else { 20 };
    let mut exact = Vec::new();
    let mut overlap = 0.0;
    for (q, fast_hits) in queries[10..].iter().zip(&results).take(exact_runs) {
        let start = Instant::now();
        let hits = index.vector_search_exact("m", q, 10).unwrap();
        exact.push(start.elapsed());
        overlap += hits
            .iter()
            .filter(|h| fast_hits.iter().any(|f| f.content_hash == h.content_hash))
            .count() as f64
            / hits.len() as f64;
    }
    overlap /= exact_runs as f64;
    let size: u64 = ["index.db", "index.db-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.path().join(f)).ok())
        .map(|m| m.len())
        .sum();
    let (p50, p95) = (percentile(&mut fast, 50), percentile(&mut fast, 95));
    let exact50 = percentile(&mut exact, 50);
    println!(
        "| {n} | {} | {} | {} | {:.0}× | {overlap:.3} | {} | {:.0} MB | {:.0} MB |",
        ms(p50),
        ms(p95),
        ms(exact50),
        exact50.as_secs_f64() / p50.as_secs_f64(),
        ms(first),
        (rss_after.saturating_sub(rss_before)) as f64 / 1024.0,
        size as f64 / 1e6
    );
    const AREA: &str = "vector stage";
    emit(
        Row::latency(
            AREA,
            "two-stage search (bits, estimate, exact top 2,000)",
            p50,
            p95,
        )
        .at(n),
    );
    emit(Row::time(AREA, "exact search (sqlite-vec, every vector)", exact50).at(n));
    emit(
        Row::new(
            AREA,
            "two-stage speed-up over exact",
            "×",
            exact50.as_secs_f64() / p50.as_secs_f64(),
        )
        .at(n),
    );
    emit(Row::new(AREA, "two-stage top-10 overlap with exact", "", overlap).at(n));
    emit(Row::time(AREA, "first search of a process (loads the bits)", first).at(n));
}
