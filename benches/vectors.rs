//! Vector-stage benchmark: the two-stage search recall uses, sqlite-vec's
//! binary quantisation with re-scoring, and exact brute force with
//! sqlite-vec, at 10k, 100k and 1M stored vectors (384 dims, clustered like
//! sentence embeddings), in one process on the same vectors and queries.
//! Prints a markdown table.
//!
//! - *two-stage*: `Index::vector_search` (sign bits in memory → estimate →
//!   exact cosine on the best `VECTOR_CANDIDATES`).
//! - *sqlite-vec bits*: a `vec0(code bit[384])` table filled with
//!   `vec_quantize_binary(vector)`, KNN by Hamming distance (`k` =
//!   `VECTOR_CANDIDATES`), then `vec_distance_cosine` on those candidates,
//!   top 10, in one SQL statement (`common/sqlite_vec.rs`).
//! - *exact*: `vec_distance_cosine` over every vector, the reference of the
//!   top-10 overlap.
//!
//! Also emits rows for `scripts/bench.sh` (see `common/report.rs`).
//!
//! Run: `cargo bench --bench vectors` (`GOLDFISH_BENCH_VECTORS=10000,100000`
//! to choose sizes).

use std::time::{Duration, Instant};

mod common;

use common::report::{Row, emit};
use common::sqlite_vec::{self, BitTable, ExactSearch};
use common::{Rng, ms, percentile, rss_kb};
use goldfish::adapters::embed::normalize;
use goldfish::adapters::index::Index;
use goldfish::adapters::index::search::VECTOR_CANDIDATES;
use goldfish::adapters::index::vectors::VectorHit;

const DIMS: usize = 384;
const AREA: &str = "vector stage";

fn main() {
    let sizes = common::sizes(
        "GOLDFISH_BENCH_VECTORS",
        &[10_000],
        &[10_000, 100_000, 1_000_000],
    );
    println!("machine: {}", common::machine());
    println!();
    println!(
        "| vectors | search | p50 | p95 | p50 ÷ two-stage p50 | top-10 overlap with exact | first search | RSS after first search | index size |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        run(n);
    }
}

/// Mean share of each exact top 10 that `hits` (the same queries, in order)
/// also hold.
fn overlap(exact: &[Vec<VectorHit>], hits: &[Vec<VectorHit>]) -> f64 {
    let shares: Vec<f64> = exact
        .iter()
        .zip(hits)
        .map(|(exact, hits)| {
            exact
                .iter()
                .filter(|e| hits.iter().any(|h| h.content_hash == e.content_hash))
                .count() as f64
                / exact.len() as f64
        })
        .collect();
    shares.iter().sum::<f64>() / shares.len() as f64
}

/// sqlite-vec's binary quantisation as it comes (chunks of 1,024 vectors)
/// and with the chunk size that was fastest at 100k of 16, 32, 64, 128, 256,
/// 1,024 and 2,048 (its top-k selection per chunk costs chunk size × k).
const BIT_TABLES: [BitTable; 2] = [
    BitTable {
        name: "vec_codes",
        chunk_size: None,
    },
    BitTable {
        name: "vec_codes_64",
        chunk_size: Some(64),
    },
];

/// One sqlite-vec variant's connection and what it measured.
struct Variant {
    table: BitTable,
    conn: rusqlite::Connection,
    fill: Duration,
    bytes: u64,
    first: Duration,
    rss: u64,
    times: Vec<Duration>,
    hits: Vec<Vec<VectorHit>>,
}

impl Variant {
    fn label(&self) -> String {
        let chunks = match self.table.chunk_size {
            None => "default chunks".to_owned(),
            Some(size) => format!("chunk_size={size}"),
        };
        format!("sqlite-vec bits (k = 2,000) + cosine, {chunks}")
    }
}

fn mb(kb: u64) -> String {
    format!("{:.0} MB", kb as f64 / 1024.0)
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
    let index_size: u64 = ["index.db", "index.db-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.path().join(f)).ok())
        .map(|m| m.len())
        .sum();

    // First searches: the two-stage one loads the sign bits; sqlite-vec's
    // run on a new connection each, once their table is filled.
    let rss_before = rss_kb();
    let start = Instant::now();
    index
        .vector_search("m", &queries[0], 10, VECTOR_CANDIDATES)
        .unwrap();
    let first_two_stage = start.elapsed();
    let rss_two_stage = rss_kb().saturating_sub(rss_before);
    let mut variants: Vec<Variant> = BIT_TABLES
        .iter()
        .map(|&table| {
            let (fill, bytes) = table.create(&sqlite_vec::open(&path), "m", DIMS);
            let conn = sqlite_vec::open(&path);
            let rss_before = rss_kb();
            let start = Instant::now();
            table.search(&conn, "m", &queries[0], 10, VECTOR_CANDIDATES);
            let first = start.elapsed();
            Variant {
                table,
                conn,
                fill,
                bytes,
                first,
                rss: rss_kb().saturating_sub(rss_before),
                times: Vec::new(),
                hits: Vec::new(),
            }
        })
        .collect();

    // Warm: the same queries asked of each in turn, so a change in the
    // machine's load falls on all; sqlite-vec, slower, gets fewer at 1M.
    let warm = &queries[10..];
    let bit_runs = if n >= 1_000_000 { 20 } else { warm.len() };
    let (mut two_stage, mut two_stage_hits) = (Vec::new(), Vec::new());
    for (i, q) in warm.iter().enumerate() {
        let start = Instant::now();
        two_stage_hits.push(index.vector_search("m", q, 10, VECTOR_CANDIDATES).unwrap());
        two_stage.push(start.elapsed());
        if i >= bit_runs {
            continue;
        }
        for variant in &mut variants {
            let start = Instant::now();
            let hits = variant
                .table
                .search(&variant.conn, "m", q, 10, VECTOR_CANDIDATES);
            variant.times.push(start.elapsed());
            variant.hits.push(hits);
        }
    }

    let exact_runs = if n >= 1_000_000 { 10 } else { 20 };
    let mut exact = Vec::new();
    let mut exact_hits = Vec::new();
    for q in warm.iter().take(exact_runs) {
        let start = Instant::now();
        exact_hits.push(index.vector_search_exact("m", q, 10).unwrap());
        exact.push(start.elapsed());
    }
    let overlap_two_stage = overlap(&exact_hits, &two_stage_hits);

    let p50 = percentile(&mut two_stage, 50);
    let p95 = percentile(&mut two_stage, 95);
    let exact50 = percentile(&mut exact, 50);
    let exact95 = percentile(&mut exact, 95);
    let ratio = |d: Duration| d.as_secs_f64() / p50.as_secs_f64();
    println!(
        "| {n} | two-stage (bits, estimate, exact top {VECTOR_CANDIDATES}; {} queries) | {} | {} | 1.00× | {overlap_two_stage:.3} | {} | {} | {:.0} MB |",
        warm.len(),
        ms(p50),
        ms(p95),
        ms(first_two_stage),
        mb(rss_two_stage),
        index_size as f64 / 1e6,
    );
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
    emit(Row::new(AREA, "two-stage speed-up over exact", "×", ratio(exact50)).at(n));
    emit(
        Row::new(
            AREA,
            "two-stage top-10 overlap with exact",
            "",
            overlap_two_stage,
        )
        .at(n),
    );
    emit(
        Row::time(
            AREA,
            "first search of a process (loads the bits)",
            first_two_stage,
        )
        .at(n),
    );
    for variant in &mut variants {
        let overlap = overlap(&exact_hits, &variant.hits);
        let p50 = percentile(&mut variant.times, 50);
        let p95 = percentile(&mut variant.times, 95);
        let label = variant.label();
        println!(
            "| {n} | {label} ({bit_runs} queries) | {} | {} | {:.2}× | {overlap:.3} | {} | {} | +{:.0} B a vector (filled in {}) |",
            ms(p50),
            ms(p95),
            ratio(p50),
            ms(variant.first),
            mb(variant.rss),
            variant.bytes as f64 / n as f64,
            ms(variant.fill),
        );
        emit(Row::latency(AREA, label.clone(), p50, p95).at(n));
        emit(Row::new(AREA, format!("{label} ÷ two-stage (p50)"), "×", ratio(p50)).at(n));
        emit(
            Row::new(
                AREA,
                format!("{label}: top-10 overlap with exact"),
                "",
                overlap,
            )
            .at(n),
        );
        emit(
            Row::time(
                AREA,
                format!("{label}: first search of a connection"),
                variant.first,
            )
            .at(n),
        );
        emit(
            Row::new(
                AREA,
                format!("{label}: vec0 table size per vector"),
                "B/memory",
                variant.bytes as f64 / n as f64,
            )
            .at(n),
        );
    }
    println!(
        "| {n} | exact (sqlite-vec, every vector; {exact_runs} queries) | {} | {} | {:.1}× | 1 | | | |",
        ms(exact50),
        ms(exact95),
        ratio(exact50),
    );
}
