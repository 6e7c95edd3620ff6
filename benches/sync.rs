//! Sync and store benchmark: prints a markdown table (and rows for
//! `scripts/bench.sh`, see `common/report.rs`).
//!
//! For 1k, 10k and 100k memories (override with
//! `GOLDFISH_BENCH_SIZES=1000,10000`) it builds a synthetic team workspace
//! (`common/workspace.rs`: one file a day, committed) and times, as a user
//! sees them (the release `goldfish` process, start to exit, and its peak
//! memory):
//!
//! - the first full sync, keywords only (embedding is the model's
//!   throughput times the memories, measured by `--bench embed`);
//! - a no-op sync (nothing changed);
//! - a sync after a pull: a new commit appending 5 memories to the newest
//!   file; without a model, then with the model (it embeds the 5);
//! - `store` of one memory, without a model, then with it (store embeds the
//!   new memory and looks for near-duplicates).
//!
//! The model runs need every other memory embedded: the index gets
//! synthetic vectors under the real model's id first. Peak memory comes from
//! one more run under GNU time (`/usr/bin/time`; n/a without it).
//!
//! Needs the model installed (`scripts/bench.sh` or `scripts/test.sh` do it;
//! or set `GOLDFISH_TEST_MODEL_HOME`).
//!
//! Run: `cargo bench --bench sync`.

use std::time::Duration;

mod common;

use common::report::{Row, emit};
use common::workspace::{Workspace, peak_rss_mb, run};
use common::{median, ms};

fn main() {
    let sizes = common::sizes("GOLDFISH_BENCH_SIZES", &[1000], &[1000, 10_000, 100_000]);
    let model = common::installed_model();
    println!("machine: {}", common::machine());
    println!();
    println!(
        "| memories | files | full sync (keywords) | peak RSS | no-op sync | sync after a pull (5 new) | same, with model | store | store, with model | index size (keywords) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut noop = Vec::new();
    for &size in &sizes {
        let row = measure(size, &model);
        noop.push(row.noop);
        let mb = |rss: Option<f64>| rss.map_or("n/a".to_owned(), |mb| format!("{mb:.0} MB"));
        println!(
            "| {size} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} B/memory |",
            row.files,
            ms(row.full),
            mb(row.full_rss),
            ms(row.noop),
            ms(row.pull),
            ms(row.pull_model),
            ms(row.store),
            ms(row.store_model),
            row.index_bytes as f64 / size as f64
        );
        let sync = |measure: &str, time: Duration| emit(Row::time("sync", measure, time).at(size));
        sync("full sync, keywords only", row.full);
        sync("no-op sync", row.noop);
        sync(
            "sync after a pull (a commit of 5 memories), no model",
            row.pull,
        );
        sync(
            "sync after a pull, with the model (embeds the 5)",
            row.pull_model,
        );
        emit(Row::time("store", "store, no model", row.store).at(size));
        emit(
            Row::time(
                "store",
                "store, with the model (embed + near-duplicate check)",
                row.store_model,
            )
            .at(size),
        );
        if let Some(rss) = row.full_rss {
            emit(Row::new("memory", "peak RSS, full sync", "MB", rss).at(size));
        }
        sync(
            "sync after a pull, with the model, warm process running",
            row.pull_warm,
        );
        emit(
            Row::time(
                "store",
                "store, with the model, warm process running",
                row.store_warm,
            )
            .at(size),
        );
        if let Some(rss) = row.store_model_rss {
            emit(Row::new("memory", "peak RSS, store with the model", "MB", rss).at(size));
        }
        if let Some(rss) = row.store_warm_rss {
            let measure = "peak RSS, store with the model, warm process running";
            emit(Row::new("memory", measure, "MB", rss).at(size));
        }
        emit(
            Row::new(
                "index",
                "log size per memory (its JSONL line)",
                "B/memory",
                row.log_bytes as f64 / size as f64,
            )
            .at(size),
        );
        emit(
            Row::new(
                "index",
                "index size per memory, keywords only",
                "B/memory",
                row.index_bytes as f64 / size as f64,
            )
            .at(size),
        );
    }
    if noop.len() >= 2 {
        let (first, last) = (sizes[0], sizes[sizes.len() - 1]);
        let ratio = noop[noop.len() - 1].as_secs_f64() / noop[0].as_secs_f64();
        println!();
        println!("no-op sync at {last} ÷ at {first}: {ratio:.2}");
        emit(Row::new(
            "sync",
            format!(
                "no-op sync at {} ÷ at {}",
                common::short(last),
                common::short(first)
            ),
            "×",
            ratio,
        ));
    }
}

struct Measured {
    files: usize,
    log_bytes: u64,
    full: Duration,
    full_rss: Option<f64>,
    noop: Duration,
    pull: Duration,
    pull_model: Duration,
    store: Duration,
    store_model: Duration,
    store_model_rss: Option<f64>,
    pull_warm: Duration,
    store_warm: Duration,
    store_warm_rss: Option<f64>,
    index_bytes: u64,
}

fn measure(size: usize, model: &goldfish::adapters::embed::InstalledModel) -> Measured {
    let mut workspace = Workspace::create(size, true);
    let fresh_home = |workspace: &Workspace| {
        std::fs::remove_dir_all(&workspace.home).unwrap();
        std::fs::create_dir_all(&workspace.home).unwrap();
    };
    // The first sync, from an empty home each time; then once more under
    // GNU time for its peak memory.
    let full = median(
        &mut (0..if size <= 10_000 { 3 } else { 1 })
            .map(|_| {
                fresh_home(&workspace);
                run(&mut workspace.sync_keywords())
            })
            .collect::<Vec<_>>(),
    );
    fresh_home(&workspace);
    let full_rss = peak_rss_mb(&workspace.sync_keywords());
    let index_bytes = workspace.index_bytes();

    let mut noops: Vec<Duration> = (0..9)
        .map(|_| run(&mut workspace.goldfish(&["sync", "--quiet"])))
        .collect();
    let mut pulls: Vec<Duration> = (0..5)
        .map(|_| {
            workspace.commit_memories(5);
            run(&mut workspace.goldfish(&["sync", "--quiet"]))
        })
        .collect();
    let mut stores: Vec<Duration> = (0..9)
        .map(|k| run(&mut store(&workspace, k, false)))
        .collect();

    workspace.link_model(&common::model_home());
    workspace.embed_synthetic(&model.model_id());
    let mut pulls_model: Vec<Duration> = (0..5)
        .map(|_| {
            workspace.commit_memories(5);
            run(&mut workspace.goldfish(&["sync", "--quiet"]))
        })
        .collect();
    let mut stores_model: Vec<Duration> = (0..9)
        .map(|k| run(&mut store(&workspace, 100 + k, false)))
        .collect();
    let store_model_rss = peak_rss_mb(&store(&workspace, 200, false));
    // The same with the home's warm process running: the commands get
    // their vectors from it instead of loading the model.
    let warm = workspace.start_warm();
    let mut pulls_warm: Vec<Duration> = (0..5)
        .map(|_| {
            workspace.commit_memories(5);
            run(&mut workspace.goldfish_warm(&["sync", "--quiet"]))
        })
        .collect();
    let mut stores_warm: Vec<Duration> = (0..9)
        .map(|k| run(&mut store(&workspace, 300 + k, true)))
        .collect();
    let store_warm_rss = peak_rss_mb(&store(&workspace, 400, true));
    drop(warm);
    Measured {
        files: workspace.files,
        log_bytes: workspace.log_bytes,
        full,
        full_rss,
        noop: median(&mut noops),
        pull: median(&mut pulls),
        pull_model: median(&mut pulls_model),
        store: median(&mut stores),
        store_model: median(&mut stores_model),
        store_model_rss,
        pull_warm: median(&mut pulls_warm),
        store_warm: median(&mut stores_warm),
        store_warm_rss,
        index_bytes,
    }
}

/// `goldfish store` of a new memory, different for each `k` (identical text
/// would be embedded once); with `warm`, allowed to use the home's warm
/// process.
fn store(workspace: &Workspace, k: usize, warm: bool) -> std::process::Command {
    let goldfish = if warm {
        Workspace::goldfish_warm
    } else {
        Workspace::goldfish
    };
    goldfish(
        workspace,
        &[
            "store",
            "--type",
            "decision",
            &format!(
                "Chose a write-through cache for the pricing service (run {k}): reads stay under 5 ms and invalidation is one DELETE."
            ),
        ],
    )
}
