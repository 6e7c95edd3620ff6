//! Helpers shared by the benchmarks (each bench includes this module; so do
//! the vector tests, for [`Rng`]).
#![allow(dead_code)]

pub mod report;
pub mod sqlite_vec;
pub mod workspace;

use std::path::{Path, PathBuf};
use std::time::Duration;

use goldfish::adapters::embed::{DEFAULT_MODEL, InstalledModel, normalize};

/// Deterministic pseudo-random numbers (xorshift64*), no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in (0, 1).
    pub fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
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

/// Milliseconds with two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// `1k`, `100k`, `1M`: a size as the tables write it.
pub fn short(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

/// The `p`-th percentile (sorts `samples`).
pub fn percentile(samples: &mut [Duration], p: usize) -> Duration {
    samples.sort();
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

/// The median (sorts `samples`).
pub fn median(samples: &mut [Duration]) -> Duration {
    percentile(samples, 50)
}

/// Resident memory of this process, in KiB.
pub fn rss_kb() -> u64 {
    status_kb("VmRSS:")
}

/// The most resident memory this process has had, in KiB.
pub fn peak_rss_kb() -> u64 {
    status_kb("VmHWM:")
}

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// "N cores, CPU model" of this machine.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cores} cores, {cpu}")
}

/// Sizes from the comma-separated `var`, else `quick` when the bench runs as
/// a test (`cargo test --benches`, no `--bench` argument), else `full`.
pub fn sizes(var: &str, quick: &[usize], full: &[usize]) -> Vec<usize> {
    match std::env::var(var) {
        Ok(list) => list
            .split(',')
            .map(|n| {
                n.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("{var}: comma-separated numbers"))
            })
            .collect(),
        Err(_) if !std::env::args().any(|arg| arg == "--bench") => quick.to_vec(),
        Err(_) => full.to_vec(),
    }
}

/// Whether to measure less: `GOLDFISH_BENCH_QUICK=1` (`scripts/bench.sh
/// --quick`), or the bench runs as a test (no `--bench` argument).
pub fn quick() -> bool {
    std::env::var_os("GOLDFISH_BENCH_QUICK").is_some_and(|v| v == "1")
        || !std::env::args().any(|arg| arg == "--bench")
}

/// Where the installed model is: `GOLDFISH_TEST_MODEL_HOME`, else
/// `target/model-home` (what `scripts/test.sh` and `scripts/bench.sh` install).
pub fn model_home() -> PathBuf {
    std::env::var_os("GOLDFISH_TEST_MODEL_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/model-home"))
}

/// The model the goldfish processes of a bench run with:
/// `GOLDFISH_BENCH_MODEL`, else the default (e.g. the int8 build, to measure
/// `store` and recall with it).
pub fn bench_model() -> String {
    std::env::var("GOLDFISH_BENCH_MODEL").unwrap_or_else(|_| DEFAULT_MODEL.to_owned())
}

/// The models a bench that compares them measures: the comma-separated
/// `GOLDFISH_BENCH_MODELS`, else the default model and the other build of
/// all-MiniLM-L6-v2 (fp32 or int8), the default first.
pub fn compared_models() -> Vec<String> {
    std::env::var("GOLDFISH_BENCH_MODELS")
        .map(|list| list.split(',').map(str::to_owned).collect())
        .unwrap_or_else(|_| {
            let mut both = vec![DEFAULT_MODEL.to_owned()];
            both.extend(
                [
                    goldfish::adapters::embed::FP32_MODEL,
                    goldfish::adapters::embed::INT8_MODEL,
                ]
                .iter()
                .filter(|m| **m != DEFAULT_MODEL)
                .map(|m| (*m).to_owned()),
            );
            both
        })
}

/// The installed [`bench_model`]; panics, saying how to install it, when
/// absent.
pub fn installed_model() -> InstalledModel {
    installed_model_named(&bench_model())
}

/// The installed model `name`; panics, saying how to install it, when absent.
pub fn installed_model_named(name: &str) -> InstalledModel {
    let home = model_home();
    InstalledModel::find(&home.join("models"), &home.join("runtime"), name)
        .expect("a readable model")
        .unwrap_or_else(|| {
            panic!(
                "no model in {}: run scripts/bench.sh (or scripts/test.sh) once to install it",
                home.display()
            )
        })
}
