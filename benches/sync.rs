//! Sync and store benchmark: prints a markdown table.
//!
//! For 1k and 100k memories (override with `GOLDFISH_BENCH_SIZES=1000,10000`)
//! it builds a repository (memories spread over daily files, one commit) and
//! times, as a user sees them (the release `goldfish` process, start to exit):
//! the first full sync, a no-op sync, a sync after one new memory, and
//! `store` (which appends and indexes). Medians of several runs.
//!
//! Run: `cargo bench --bench sync`.

use std::path::Path;
use std::time::{Duration, Instant};

mod common;

use common::{ms, run_in};

const GOLDFISH: &str = env!("CARGO_BIN_EXE_goldfish");

fn main() {
    let sizes = common::sizes("GOLDFISH_BENCH_SIZES", &[1000], &[1000, 100_000]);
    println!("machine: {}", common::machine());
    println!();
    println!(
        "| memories | files | full sync | no-op sync | sync after 1 new | store (append + index) | index size |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut noop = Vec::new();
    for &size in &sizes {
        let row = measure(size);
        noop.push(row.noop);
        println!(
            "| {size} | {} | {} | {} | {} | {} | {:.1} MB |",
            row.files,
            ms(row.full),
            ms(row.noop),
            ms(row.one_new),
            ms(row.store),
            row.index_bytes as f64 / 1e6
        );
    }
    if noop.len() >= 2 {
        println!();
        println!(
            "no-op sync at {} ÷ at {}: {:.2}",
            sizes[sizes.len() - 1],
            sizes[0],
            noop[noop.len() - 1].as_secs_f64() / noop[0].as_secs_f64()
        );
    }
}

struct Row {
    files: usize,
    full: Duration,
    noop: Duration,
    one_new: Duration,
    store: Duration,
    index_bytes: u64,
}

fn measure(size: usize) -> Row {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let home = dir.path().join("home");
    std::fs::create_dir_all(repo.join(".goldfish/memories")).unwrap();
    let files = (size / 300).clamp(1, 365);
    write_log(&repo, size, files);
    run_in(&repo, None, "git", &["init", "-q", "-b", "main"]);
    run_in(&repo, None, "git", &["add", "-A"]);
    run_in(&repo, None, "git", &["commit", "-q", "-m", "memories"]);
    run_in(&repo, Some(&home), GOLDFISH, &["init"]);

    let full = median(1, || {
        std::fs::remove_dir_all(&home).ok();
        time(|| run_in(&repo, Some(&home), GOLDFISH, &["sync", "--quiet"]))
    });
    let noop = median(9, || {
        time(|| run_in(&repo, Some(&home), GOLDFISH, &["sync", "--quiet"]))
    });
    let mut n = 0;
    let one_new = median(5, || {
        n += 1;
        append_one(&repo, n);
        time(|| run_in(&repo, Some(&home), GOLDFISH, &["sync", "--quiet"]))
    });
    let store = median(9, || {
        time(|| {
            run_in(
                &repo,
                Some(&home),
                GOLDFISH,
                &["store", "Benchmark memory about the cache layer"],
            )
        })
    });
    let index_bytes = ["index.db", "index.db-wal"]
        .iter()
        .filter_map(|name| std::fs::metadata(home.join(name)).ok())
        .map(|m| m.len())
        .sum();
    Row {
        files,
        full,
        noop,
        one_new,
        store,
        index_bytes,
    }
}

/// `size` realistic memories over `files` daily files.
fn write_log(repo: &Path, size: usize, files: usize) {
    const TOPICS: &[&str] = &[
        "the payment retry queue backs off exponentially and caps at five minutes",
        "JWT validation now rejects tokens whose exp is in the past; clock skew allowance is 30 s",
        "the search index is rebuilt nightly; partial rebuilds caused stale facets in the UI",
        "Postgres connection pool raised to 40 after p99 latency spikes under load tests",
        "feature flags are evaluated server side; the client only receives the resolved set",
        "migrations must be backward compatible for one release so rollbacks stay safe",
    ];
    const TYPES: &[&str] = &[
        "decision",
        "bug-fix",
        "insight",
        "checkpoint",
        "observation",
        "plan",
    ];
    let mut texts = vec![String::new(); files];
    for i in 0..size {
        let day = i % files;
        let line = format!(
            r#"{{"id":"01KA{i:022}","timestamp":"2026-{:02}-{:02}T{:02}:{:02}:{:02}.000Z","type":"{}","content":"Memory {i}: {} (module m{})","tags":["t{}"],"author":"Dev {}"}}"#,
            1 + day / 28 % 12,
            1 + day % 28,
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60,
            TYPES[i % TYPES.len()],
            TOPICS[i % TOPICS.len()],
            i % 211,
            i % 17,
            i % 5
        );
        texts[day].push_str(&line);
        texts[day].push('\n');
    }
    for (day, text) in texts.iter().enumerate() {
        let path = repo.join(format!(
            ".goldfish/memories/2026-{:02}-{:02}-{day}.jsonl",
            1 + day / 28 % 12,
            1 + day % 28
        ));
        std::fs::write(path, text).unwrap();
    }
}

fn append_one(repo: &Path, n: usize) {
    use std::io::Write;
    let path = repo.join(".goldfish/memories/2026-01-01-0.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(
        file,
        r#"{{"id":"01KB{n:022}","timestamp":"2026-01-01T23:59:59.000Z","type":"decision","content":"New memory {n}"}}"#
    )
    .unwrap();
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut samples: Vec<Duration> = (0..runs).map(|_| f()).collect();
    samples.sort();
    samples[samples.len() / 2]
}
