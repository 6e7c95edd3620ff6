//! Helpers shared by the benchmarks (each bench includes this module).
#![allow(dead_code)]

use std::time::Duration;

use goldfish::embed::normalize;

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

/// The `p`-th percentile (sorts `samples`).
pub fn percentile(samples: &mut [Duration], p: usize) -> Duration {
    samples.sort();
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

/// Resident memory of this process, in KiB.
pub fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
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

/// Runs `program args` in `dir` with a hermetic git identity and config (and
/// `GOLDFISH_HOME=home` when given), output discarded; panics on failure.
pub fn run_in(dir: &std::path::Path, home: Option<&std::path::Path>, program: &str, args: &[&str]) {
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(home) = home {
        command.env("GOLDFISH_HOME", home);
    }
    let status = command
        .status()
        .unwrap_or_else(|err| panic!("{program}: {err}"));
    assert!(
        status.success(),
        "{program} {args:?} failed in {}",
        dir.display()
    );
}
