//! Embedding benchmark with the real model: Rust (ort) throughput at 1 and 2
//! threads next to Python onnxruntime on the same model and texts, model load
//! time, and the embedding of one query (what a warm semantic recall pays
//! before it searches). Prints a markdown table (and rows for
//! `scripts/bench.sh`, see `common/report.rs`).
//!
//! Needs the model installed (`scripts/test.sh` or `scripts/bench.sh` do it;
//! or set `GOLDFISH_TEST_MODEL_HOME`) and, for the Python column, the model
//! build's private Python (`~/.cache/goldfish/model-build/venv`).
//!
//! Run: `cargo bench --bench embed` (`GOLDFISH_BENCH_QUICK=1`: one timed pass
//! instead of three).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod common;

use common::report::{Row, emit};
use common::{ms, percentile};
use goldfish::adapters::embed::onnx::OnnxEmbedder;
use goldfish::adapters::embed::{DEFAULT_MODEL, Embedder, TextKind};

fn main() {
    let as_test = !std::env::args().any(|arg| arg == "--bench");
    let python = python();
    let texts: Vec<String> = match &python {
        Some(python) => {
            let output = Command::new(python)
                .arg(script())
                .arg("--texts")
                .output()
                .expect("run bench_python.py --texts");
            serde_json::from_slice(&output.stdout).expect("texts as JSON")
        }
        None => (0..256)
            .map(|i| format!("Memory {i} about the billing worker and its retries."))
            .collect(),
    };
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let runs = if common::quick() { 1 } else { 3 };

    println!("machine: {}", common::machine());
    // The default model, and the other build of it in the same run: the
    // int8 model against the fp32 one (`GOLDFISH_BENCH_MODELS` to choose).
    let models = common::compared_models();
    for name in &models {
        let model = common::installed_model_named(name);
        // Rows of the default model keep their names (bench_table.py
        // --compare matches them across runs); the other's say which.
        let label = |measure: String| {
            if name == DEFAULT_MODEL {
                measure
            } else {
                format!("{measure} [{name}]")
            }
        };
        measure(
            &model,
            name,
            &label,
            python.as_deref(),
            &refs,
            runs,
            as_test,
        );
    }
}

fn measure(
    model: &goldfish::adapters::embed::InstalledModel,
    name: &str,
    label: &dyn Fn(String) -> String,
    python: Option<&Path>,
    refs: &[&str],
    runs: usize,
    as_test: bool,
) {
    let batch = model.manifest.batch;
    println!();
    println!("**{name}** (texts a run: {batch})");
    println!();
    println!("| measure | goldfish (Rust, ort) | Python onnxruntime |");
    println!("|---|---:|---:|");
    let python_rates = python.filter(|_| !as_test).map(|python| {
        let output = Command::new(python)
            .arg(script())
            .arg(model.dir.as_os_str())
            .output()
            .expect("run bench_python.py");
        let json: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("JSON from bench_python.py");
        json["intra_op_threads"].clone()
    });
    for threads in [1usize, 2] {
        let start = Instant::now();
        let mut embedder = OnnxEmbedder::load(model, threads).expect("load the model");
        let load = start.elapsed();
        embedder.embed(&refs[..32], TextKind::Document).unwrap(); // warm-up
        let mut rates: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                embedder.embed(refs, TextKind::Document).unwrap();
                refs.len() as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        let rate = rates[rates.len() / 2];
        let python_rate = python_rates
            .as_ref()
            .and_then(|r| r[threads.to_string()]["texts_per_s"].as_f64());
        let plural = if threads == 1 { "" } else { "s" };
        println!(
            "| throughput, {threads} thread{plural}, {} texts in batches of {batch} | {rate:.0} texts/s | {} |",
            refs.len(),
            python_rate.map_or("n/a".to_owned(), |r| format!("{r:.0} texts/s")),
        );
        println!("| model load ({threads} thread{plural}) | {} | |", ms(load));
        let measure = format!("throughput, {threads} thread{plural}");
        emit(Row::new(
            "embed",
            label(format!("{measure}, goldfish (Rust, ort)")),
            "texts/s",
            rate,
        ));
        if let Some(python_rate) = python_rate {
            emit(Row::new(
                "embed",
                label(format!("{measure}, Python onnxruntime")),
                "texts/s",
                python_rate,
            ));
            emit(Row::new(
                "embed",
                label(format!("{measure}, Rust ÷ Python")),
                "×",
                rate / python_rate,
            ));
        }
        emit(Row::time(
            "embed",
            label(format!("model load, {threads} thread{plural}")),
            load,
        ));
    }
    // One query at a time, as recall embeds it, with every core (the CLI's default).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut embedder = OnnxEmbedder::load(model, threads).expect("load the model");
    let queries = common::workspace::questions(40, 0);
    let mut times: Vec<_> = queries
        .iter()
        .enumerate()
        .filter_map(|(i, query)| {
            let start = Instant::now();
            embedder.embed(&[query.as_str()], TextKind::Query).unwrap();
            (i >= 5).then(|| start.elapsed())
        })
        .collect();
    let (p50, p95) = (percentile(&mut times, 50), percentile(&mut times, 95));
    println!(
        "| one query ({threads} threads), p50 / p95 | {} / {} | |",
        ms(p50),
        ms(p95)
    );
    emit(Row::latency(
        "embed",
        label("one query (as recall embeds it)".to_owned()),
        p50,
        p95,
    ));
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/model/bench_python.py")
}

/// The model build's private Python, which has onnxruntime and tokenizers.
fn python() -> Option<PathBuf> {
    let cache = std::env::var_os("GOLDFISH_MODEL_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/goldfish/model-build"))
        })?;
    Some(cache.join("venv/bin/python")).filter(|p| p.is_file())
}
