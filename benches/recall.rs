//! Whole-recall benchmark, warm (one process, index open, codes loaded):
//! keyword, semantic and hybrid recall at 10k, 100k and 1M memories, with
//! the memories synced from git files and their vectors stored directly
//! (synthetic, clustered; embedding a million texts is measured elsewhere).
//! Prints a markdown table with p50/p95 and the process's resident memory.
//!
//! Run: `cargo bench --bench recall` (`GOLDFISH_BENCH_SIZES=10000,100000`).

use std::process::Command;
use std::time::{Duration, Instant};

mod common;

use common::{Rng, ms, rss_kb, run_in};
use goldfish::embed::normalize;
use goldfish::index::Index;
use goldfish::index::search::{Mode, QueryVector, Scope};
use goldfish::recall::Request;

const GOLDFISH: &str = env!("CARGO_BIN_EXE_goldfish");
const MODEL: &str = "bench-model";

fn main() {
    let sizes = common::sizes(
        "GOLDFISH_BENCH_SIZES",
        &[10_000],
        &[10_000, 100_000, 1_000_000],
    );
    println!("machine: {}", common::machine());
    println!();
    println!(
        "| memories | keyword p50 / p95 | semantic p50 / p95 | hybrid p50 / p95 | sync (keyword, full) | RSS after |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        run(n);
    }
}

const TOPICS: &[&str] = &[
    "the billing worker retries failed charges with exponential backoff",
    "JWT validation rejects expired tokens after the clock fix",
    "the Postgres pool was raised after p99 latency spikes",
    "the CI cache key includes the lockfile hash",
    "invoice numbers are allocated per customer and year",
    "webhooks are signed and retried five times",
    "the search index is rebuilt nightly",
    "feature flags are resolved on the server",
];

fn run(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let home = dir.path().join("home");
    std::fs::create_dir_all(repo.join(".goldfish/memories")).unwrap();
    let files = (n / 300).clamp(1, 365);
    let mut texts = vec![String::new(); files];
    let mut contents = Vec::with_capacity(n);
    for i in 0..n {
        let content = format!(
            "Memory {i}: {} (module m{}, ticket #{})",
            TOPICS[i % TOPICS.len()],
            i % 211,
            i % 997
        );
        texts[i % files].push_str(&format!(
            r#"{{"id":"01KA{i:022}","timestamp":"2026-{:02}-{:02}T10:{:02}:{:02}.000Z","type":"insight","content":"{content}"}}"#,
            1 + (i % files) / 28 % 12,
            1 + (i % files) % 28,
            (i / 60) % 60,
            i % 60
        ));
        texts[i % files].push('\n');
        contents.push(content);
    }
    for (f, text) in texts.iter().enumerate() {
        std::fs::write(repo.join(format!(".goldfish/memories/f{f:03}.jsonl")), text).unwrap();
    }
    run_in(&repo, None, "git", &["init", "-q"]);
    let start = Instant::now();
    let status = Command::new(GOLDFISH)
        .args(["sync", "--quiet"])
        .current_dir(&repo)
        .env("GOLDFISH_HOME", &home)
        .env("GOLDFISH_MODEL", "none")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(status.success());
    let sync = start.elapsed();

    let mut index = Index::open(&home.join("index.db")).unwrap();
    index.use_model(MODEL).unwrap();
    let mut rng = Rng(n as u64 * 7919 + 1);
    let centers: Vec<Vec<f32>> = (0..TOPICS.len() * 50)
        .map(|_| rng.unit_vector(384))
        .collect();
    let mut batch: Vec<(String, Vec<f32>)> = Vec::new();
    for (i, content) in contents.iter().enumerate() {
        let center = &centers[i % centers.len()];
        let mut v: Vec<f32> = center.iter().map(|c| c + 0.06 * rng.normal()).collect();
        normalize(&mut v);
        batch.push((goldfish::index::sync::content_hash(content), v));
        if batch.len() == 10_000 || i + 1 == contents.len() {
            index
                .insert_embeddings(MODEL, batch.iter().map(|(h, v)| (h.as_str(), v.as_slice())))
                .unwrap();
            batch.clear();
        }
    }
    let root = repo.canonicalize().unwrap();
    let scope = Scope::Workspaces(vec![index.workspace_by_root(&root).unwrap().unwrap().id]);
    let queries: Vec<(String, Vec<f32>)> = (0..40)
        .map(|i| {
            let center = &centers[(i * 37) % centers.len()];
            let mut v: Vec<f32> = center.iter().map(|c| c + 0.08 * rng.normal()).collect();
            normalize(&mut v);
            (
                format!(
                    "why did {} change",
                    TOPICS[i % TOPICS.len()].split(' ').nth(1).unwrap()
                ),
                v,
            )
        })
        .collect();
    let measure = |mode: Mode| -> (Duration, Duration) {
        let mut times = Vec::new();
        for (round, (text, vector)) in queries.iter().enumerate() {
            let request = Request {
                query: Some(text.clone()),
                limit: 10,
                ..Request::default()
            };
            let vector = QueryVector {
                model: MODEL,
                vector,
            };
            let start = Instant::now();
            index.recall(&request, &scope, mode, Some(vector)).unwrap();
            if round >= 5 {
                times.push(start.elapsed());
            }
        }
        times.sort();
        (times[times.len() / 2], times[times.len() * 95 / 100])
    };
    let keyword = measure(Mode::Keyword);
    let semantic = measure(Mode::Semantic);
    let hybrid = measure(Mode::Hybrid);
    println!(
        "| {n} | {} / {} | {} / {} | {} / {} | {} | {:.0} MB |",
        ms(keyword.0),
        ms(keyword.1),
        ms(semantic.0),
        ms(semantic.1),
        ms(hybrid.0),
        ms(hybrid.1),
        ms(sync),
        rss_kb() as f64 / 1024.0
    );
}
