//! The labelled capture events (`fixtures/capture/events.jsonl`) through
//! the rules alone and through the rules and a GGUF model: valid tool-call
//! rate, precision and recall of "worth recording", type accuracy, secrets
//! leaked, per model call and the process's peak memory — the table of
//! docs/BENCHMARKS.md, "Capture".
//!
//! ```text
//! cargo run --release --features capture-model --example capture_eval [-- MODEL.gguf]
//! ```
//!
//! Three rows: the rules alone; the rules and the model shown the plain
//! facts of an event (what the worker shows it); the rules and the model
//! shown more of it ([`Context::Rich`]: the comment lines an edit adds, a
//! commit's message, a command's output).
//!
//! The model: the argument, else the default one installed by
//! `scripts/test.sh` (`GOLDFISH_TEST_MODEL_HOME`, else `target/model-home`).
//! A model under 300 MB is dequantized at load, as the worker does.

use std::path::{Path, PathBuf};
use std::time::Instant;

use goldfish::adapters::capture::eval::{self, Report};
use goldfish::adapters::capture::install::DEFAULT_GGUF;
use goldfish::adapters::capture::runtime::GgufModel;
use goldfish::domain::capture::Generator;
use goldfish::domain::capture::prompt::Context;

fn main() -> anyhow::Result<()> {
    let path = match std::env::args_os().nth(1) {
        Some(path) => PathBuf::from(path),
        None => std::env::var_os("GOLDFISH_TEST_MODEL_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/model-home"))
            .join("models/capture")
            .join(DEFAULT_GGUF),
    };
    anyhow::ensure!(
        path.is_file(),
        "no capture model at {}: pass a GGUF, or run `bash scripts/test.sh` once, which installs the default",
        path.display()
    );
    let set = eval::load(include_str!("../fixtures/capture/events.jsonl"))
        .map_err(|err| anyhow::anyhow!("fixtures/capture/events.jsonl: {err}"))?;
    let root = Path::new("/repo");

    println!(
        "| judge | valid calls | precision | recall | type accuracy | secrets leaked | per model call (mean, max) | model load | peak memory |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let rules = eval::evaluate(&set, root, None);
    row("rules only", &rules, None);

    if std::fs::metadata(&path)?.len() < 300 << 20 {
        // SAFETY: set before any thread of this process reads the environment.
        unsafe { std::env::set_var("CANDLE_DEQUANTIZE_ALL", "1") };
    }
    let started = Instant::now();
    let mut model = GgufModel::load(&path)?;
    let load = started.elapsed().as_secs_f64();
    let plain = eval::evaluate_with(&set, root, Some(&mut model), Context::Plain);
    row(&format!("rules + {}", model.id()), &plain, Some(load));
    let rich = eval::evaluate_with(&set, root, Some(&mut model), Context::Rich);
    row(
        &format!(
            "rules + {}, more context (comment lines, commit message, output)",
            model.id()
        ),
        &rich,
        Some(load),
    );
    eprintln!();
    eprintln!("rules only: missed {:?}", rules.missed);
    for (name, report) in [("model", &plain), ("model, more context", &rich)] {
        eprintln!(
            "{name}: missed {:?}, recorded but not worth it {:?}",
            report.missed, report.false_positives
        );
    }
    anyhow::ensure!(
        plain.secrets_leaked == 0 && rich.secrets_leaked == 0,
        "a secret reached the log"
    );
    Ok(())
}

fn row(judge: &str, report: &Report, load: Option<f64>) {
    let calls = report.model_calls.max(1) as f64;
    let per_call = match load {
        Some(_) => format!(
            "{:.2} s, {:.2} s",
            report.latency_total.as_secs_f64() / calls,
            report.latency_max.as_secs_f64()
        ),
        None => "–".to_owned(),
    };
    println!(
        "| {judge} | {} | {:.2} | {:.2} | {:.2} | {} | {per_call} | {} | {} |",
        match load {
            Some(_) => format!("{}/{}", report.model_valid, report.model_calls),
            None => "–".to_owned(),
        },
        report.precision(),
        report.recall(),
        report.type_accuracy(),
        report.secrets_leaked,
        load.map_or("–".to_owned(), |s| format!("{s:.1} s")),
        match load {
            Some(_) => format!("{:.0} MB", peak_rss_mb()),
            None => "–".to_owned(),
        }
    );
}

/// The most resident memory this process has had.
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
