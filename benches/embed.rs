//! Embedding and recall benchmark with the real model: Rust (ort) throughput
//! at 1 and 2 threads next to Python onnxruntime on the same model and texts,
//! model load time, and `goldfish recall` wall time (a new process each time)
//! on a 10k-memory workspace, cold and with the query's embedding cached.
//!
//! Needs the model installed (`scripts/test.sh` does it; or set
//! `GOLDFISH_TEST_MODEL_HOME`) and, for the Python column, the model build's
//! private Python (`~/.cache/goldfish/model-build/venv`).
//!
//! Run: `cargo bench --bench embed`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod common;

use common::{ms, run_in};
use goldfish::embed::onnx::OnnxEmbedder;
use goldfish::embed::{DEFAULT_MODEL, Embedder, InstalledModel, TextKind, normalize};
use goldfish::index::Index;

const GOLDFISH: &str = env!("CARGO_BIN_EXE_goldfish");

fn main() {
    let quick = !std::env::args().any(|arg| arg == "--bench");
    let home = std::env::var_os("GOLDFISH_TEST_MODEL_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/model-home"));
    let model = InstalledModel::find(&home.join("models"), &home.join("runtime"), DEFAULT_MODEL)
        .expect("a readable model")
        .unwrap_or_else(|| panic!("no model in {}: run scripts/test.sh first", home.display()));
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
    let runs = if quick { 1 } else { 3 };

    println!("machine: {}", common::machine());
    println!();
    println!("| measure | goldfish (Rust, ort) | Python onnxruntime |");
    println!("|---|---:|---:|");
    let python_rates = python.as_ref().filter(|_| !quick).map(|python| {
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
        let mut embedder = OnnxEmbedder::load(&model, threads).expect("load the model");
        let load = start.elapsed();
        embedder.embed(&refs[..32], TextKind::Document).unwrap(); // warm-up
        let mut rates: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                embedder.embed(&refs, TextKind::Document).unwrap();
                refs.len() as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        let python = python_rates
            .as_ref()
            .and_then(|r| r[threads.to_string()]["texts_per_s"].as_f64())
            .map_or("n/a".to_owned(), |r| format!("{r:.0} texts/s"));
        println!(
            "| throughput, {threads} thread{}, {} texts in batches of 32 | {:.0} texts/s | {python} |",
            if threads == 1 { "" } else { "s" },
            refs.len(),
            rates[rates.len() / 2]
        );
        println!(
            "| model load ({threads} thread{}) | {} | |",
            if threads == 1 { "" } else { "s" },
            ms(load)
        );
    }
    cold_recall(&home, if quick { 1_000 } else { 10_000 });
}

/// `goldfish recall` as a new process on a workspace of `n` memories whose
/// vectors are in the index: cold (model load + query embedding + search)
/// and with the query's embedding cached (no model load).
fn cold_recall(model_home: &Path, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    for sub in ["models", "runtime"] {
        std::os::unix::fs::symlink(model_home.join(sub), home.join(sub)).unwrap();
    }
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".goldfish/memories")).unwrap();
    run_in(&repo, Some(&home), "git", &["init", "-q"]);
    run_in(&repo, Some(&home), GOLDFISH, &["init"]);
    let mut log = String::new();
    for i in 0..n {
        log.push_str(&format!(
            r#"{{"id":"01KA{i:022}","timestamp":"2026-10-{:02}T10:00:00.000Z","type":"insight","content":"Memory {i}: the billing worker {} (module m{})"}}"#,
            1 + i % 28,
            ["retries failed charges", "leaks connections", "runs nightly", "was refactored"][i % 4],
            i % 97
        ));
        log.push('\n');
    }
    std::fs::write(repo.join(".goldfish/memories/2026-10.jsonl"), log).unwrap();
    // Keyword sync without the model, then vectors put straight into the
    // index (embedding 10k texts would take a minute and is measured above).
    run_in(&repo, Some(&home), GOLDFISH, &["sync", "--quiet"]);
    let model = InstalledModel::find(&home.join("models"), &home.join("runtime"), DEFAULT_MODEL)
        .unwrap()
        .unwrap();
    {
        let mut index = Index::open(&home.join("index.db")).unwrap();
        index.use_model(&model.model_id()).unwrap();
        let hashes: Vec<String> = (0..n)
            .map(|i| {
                let content = format!(
                    "Memory {i}: the billing worker {} (module m{})",
                    [
                        "retries failed charges",
                        "leaks connections",
                        "runs nightly",
                        "was refactored"
                    ][i % 4],
                    i % 97
                );
                goldfish::index::sync::content_hash(&content)
            })
            .collect();
        let mut state = 0x1234_5678_9abc_def0u64;
        let vectors: Vec<Vec<f32>> = (0..n)
            .map(|_| {
                let mut v: Vec<f32> = (0..384)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                    })
                    .collect();
                normalize(&mut v);
                v
            })
            .collect();
        index
            .insert_embeddings(
                &model.model_id(),
                hashes
                    .iter()
                    .map(String::as_str)
                    .zip(vectors.iter().map(Vec::as_slice)),
            )
            .unwrap();
        // Nothing left to embed: recall measures recall, not catching up.
        assert!(
            index
                .embed_pending(&mut NoEmbedder(model.model_id()), None, &mut |_, _| {})
                .is_ok()
        );
    }
    let mut cold = Vec::new();
    let mut cached = Vec::new();
    for i in 0..5 {
        let query = format!("why did the billing worker fail {i}");
        let start = Instant::now();
        run_in(&repo, Some(&home), GOLDFISH, &["recall", &query, "-n", "5"]);
        cold.push(start.elapsed());
        let start = Instant::now();
        run_in(&repo, Some(&home), GOLDFISH, &["recall", &query, "-n", "5"]);
        cached.push(start.elapsed());
    }
    cold.sort();
    cached.sort();
    println!(
        "| `goldfish recall` at {n} memories, new process, hybrid: new query (model load + embed + search), p50 | {} | |",
        ms(cold[cold.len() / 2])
    );
    println!(
        "| `goldfish recall` at {n} memories, new process, hybrid: repeated query (embedding cached), p50 | {} | |",
        ms(cached[cached.len() / 2])
    );
}

/// Stands in for the model where every hash is already embedded: asserts
/// nothing is asked of it.
struct NoEmbedder(String);

impl Embedder for NoEmbedder {
    fn model_id(&self) -> &str {
        &self.0
    }
    fn dims(&self) -> usize {
        384
    }
    fn embed(
        &mut self,
        texts: &[&str],
        _: TextKind,
    ) -> Result<Vec<Vec<f32>>, goldfish::embed::EmbedError> {
        panic!(
            "{} texts were not embedded by the benchmark setup",
            texts.len()
        )
    }
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
