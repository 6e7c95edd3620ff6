//! Merge throughput against `git merge-file --union`, the line-based merge
//! that a `.gitattributes` `merge=union` would give.
//!
//! For each size N, base holds N synthetic memory records (~250 bytes each),
//! ours adds 1% new records and theirs 1% other new records. Timed, median of
//! 5 runs after one warm-up:
//!
//! - goldfish: read the three files from a temporary directory, `merge`, write
//!   the result;
//! - git: spawn `git merge-file --union -p ours base theirs` with stdout going
//!   to a file;
//! - with `GOLDFISH_BENCH_BIN` naming a `goldfish` binary (`scripts/bench.sh`
//!   sets it): spawn `goldfish merge-driver base ours theirs path` as git
//!   would, on a fresh copy of ours: the process git waits for, to compare
//!   with git's process.
//!
//! Prints a markdown table, and rows for `scripts/bench.sh` (see
//! `benches/common/report.rs` of the goldfish crate). `cargo bench -p
//! goldfish-log` runs it in release mode at 1k and 100k lines
//! (`GOLDFISH_BENCH_LINES=1000,10000` to choose); run as a test (`cargo test
//! --benches`) it only does a quick smoke run.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use goldfish_log::merge::merge;

#[path = "../../../benches/common/report.rs"]
mod report;

use report::{Row, emit};

const RUNS: usize = 5;
const SIZES: [usize; 2] = [1_000, 100_000];

fn main() -> io::Result<()> {
    let full = std::env::args().any(|arg| arg == "--bench");
    let (mut sizes, runs): (Vec<usize>, usize) = if full {
        (SIZES.to_vec(), RUNS)
    } else {
        (SIZES[..1].to_vec(), 1)
    };
    if let Ok(list) = std::env::var("GOLDFISH_BENCH_LINES") {
        sizes = list
            .split(',')
            .map(|n| {
                n.trim()
                    .parse()
                    .expect("GOLDFISH_BENCH_LINES: comma-separated numbers")
            })
            .collect();
    }
    let driver = std::env::var_os("GOLDFISH_BENCH_BIN").map(PathBuf::from);

    let git_version = git_version();
    println!();
    println!(
        "goldfish-log vs {} (median of {runs} run(s), 1% new records on each side)",
        git_version.as_deref().unwrap_or("git (not found)")
    );
    println!();
    println!(
        "| lines | bytes per side | goldfish-log | git merge-file --union | ratio goldfish/git | goldfish lines/s | git lines/s | goldfish merge-driver (process) | ratio driver/git |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &lines in &sizes {
        let row = bench_size(lines, runs, git_version.is_some(), driver.as_deref())?;
        println!("{row}");
    }
    println!();
    println!("lines/s = lines in the merged file / median time.");
    Ok(())
}

struct Files {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ours: PathBuf,
    theirs: PathBuf,
    out_goldfish: PathBuf,
    out_git: PathBuf,
    out_driver: PathBuf,
}

fn bench_size(
    lines: usize,
    runs: usize,
    with_git: bool,
    driver: Option<&Path>,
) -> io::Result<String> {
    let files = write_inputs(lines)?;
    let side_bytes = fs::metadata(&files.ours)?.len();

    let goldfish = median_time(runs, || merge_in_process(&files))?;
    let merged_lines = count_lines(&fs::read(&files.out_goldfish)?);
    let expected_lines = lines + 2 * new_records(lines);
    assert_eq!(
        merged_lines, expected_lines,
        "goldfish-log output has the wrong number of lines"
    );

    let git = if with_git {
        let time = median_time(runs, || merge_with_git(&files))?;
        let git_lines = count_lines(&fs::read(&files.out_git)?);
        assert_eq!(
            git_lines, expected_lines,
            "git merge-file output has the wrong number of lines"
        );
        Some(time)
    } else {
        None
    };

    let process = match driver {
        Some(driver) => {
            let time = driver_time(driver, &files, runs)?;
            assert_eq!(
                fs::read(&files.out_goldfish)?,
                fs::read(&files.out_driver)?,
                "the merge driver and the library disagree"
            );
            Some(time)
        }
        None => None,
    };

    const AREA: &str = "merge";
    let row = |measure: &str, time: Duration| {
        emit(Row::time(AREA, measure, time).at(lines));
    };
    row(
        "goldfish-log merge, in process (read, merge, write)",
        goldfish,
    );
    if let Some(process) = process {
        row("goldfish merge-driver (the process git runs)", process);
    }
    if let Some(git) = git {
        row("git merge-file --union (process)", git);
        if let Some(process) = process {
            emit(
                Row::new(
                    AREA,
                    "merge-driver ÷ git merge-file --union",
                    "×",
                    process.as_secs_f64() / git.as_secs_f64(),
                )
                .at(lines),
            );
        }
    }

    let per_second = |time: Duration| format!("{:.0}", merged_lines as f64 / time.as_secs_f64());
    Ok(format!(
        "| {lines} | {side_bytes} | {} | {} | {} | {} | {} | {} | {} |",
        format_duration(goldfish),
        git.map_or("n/a".into(), format_duration),
        git.map_or("n/a".into(), |git| format!(
            "{:.2}",
            goldfish.as_secs_f64() / git.as_secs_f64()
        )),
        per_second(goldfish),
        git.map_or("n/a".into(), per_second),
        process.map_or("n/a".into(), format_duration),
        match (process, git) {
            (Some(process), Some(git)) =>
                format!("{:.2}", process.as_secs_f64() / git.as_secs_f64()),
            _ => "n/a".into(),
        },
    ))
}

/// Median time of `goldfish merge-driver base ours theirs path` (one warm-up
/// run first), each run on a fresh copy of ours, which it overwrites.
fn driver_time(driver: &Path, files: &Files, runs: usize) -> io::Result<Duration> {
    let mut times = Vec::with_capacity(runs);
    for run in 0..=runs {
        fs::copy(&files.ours, &files.out_driver)?;
        let start = Instant::now();
        let status = Command::new(driver)
            .arg("merge-driver")
            .args([&files.base, &files.out_driver, &files.theirs])
            .arg(".goldfish/memories/2026-11-18.jsonl")
            .env_remove("GOLDFISH")
            .stdin(Stdio::null())
            .status()?;
        let time = start.elapsed();
        if !status.success() {
            return Err(io::Error::other(format!(
                "goldfish merge-driver failed: {status}"
            )));
        }
        if run > 0 {
            times.push(time);
        }
    }
    times.sort();
    Ok(times[times.len() / 2])
}

fn merge_in_process(files: &Files) -> io::Result<()> {
    let base = fs::read(&files.base)?;
    let ours = fs::read(&files.ours)?;
    let theirs = fs::read(&files.theirs)?;
    let merged = merge(&base, &ours, &theirs);
    fs::write(&files.out_goldfish, merged.bytes)
}

fn merge_with_git(files: &Files) -> io::Result<()> {
    let status = Command::new("git")
        .args(["merge-file", "--union", "-p"])
        .args([&files.ours, &files.base, &files.theirs])
        .stdin(Stdio::null())
        .stdout(File::create(&files.out_git)?)
        .status()?;
    // The exit code is the number of conflicts, and --union leaves none.
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("git merge-file failed: {status}")))
    }
}

/// Runs `f` once to warm up, then `runs` times; returns the median duration.
fn median_time(runs: usize, mut f: impl FnMut() -> io::Result<()>) -> io::Result<Duration> {
    f()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

fn git_version() -> Option<String> {
    let output = Command::new("git").arg("--version").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn format_duration(time: Duration) -> String {
    let ms = time.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

fn count_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

// ---------------------------------------------------------------------------
// Synthetic logs
// ---------------------------------------------------------------------------

fn new_records(lines: usize) -> usize {
    (lines / 100).max(1)
}

fn write_inputs(lines: usize) -> io::Result<Files> {
    let dir = tempfile::tempdir()?;
    let mut generator = Generator::new(0x5EED_F00D_601D_F15D);
    let base: Vec<String> = (0..lines).map(|_| generator.record()).collect();
    let ours_new: Vec<String> = (0..new_records(lines))
        .map(|_| generator.record())
        .collect();
    let theirs_new: Vec<String> = (0..new_records(lines))
        .map(|_| generator.record())
        .collect();

    let path = |name: &str| dir.path().join(name);
    let files = Files {
        base: path("base.jsonl"),
        ours: path("ours.jsonl"),
        theirs: path("theirs.jsonl"),
        out_goldfish: path("merged-goldfish.jsonl"),
        out_git: path("merged-git.jsonl"),
        out_driver: path("merged-driver.jsonl"),
        _dir: dir,
    };
    write_log(&files.base, [&base])?;
    write_log(&files.ours, [&base, &ours_new])?;
    write_log(&files.theirs, [&base, &theirs_new])?;
    Ok(files)
}

fn write_log<const N: usize>(path: &Path, parts: [&[String]; N]) -> io::Result<()> {
    let mut bytes = Vec::new();
    for line in parts.iter().flat_map(|part| part.iter()) {
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    fs::write(path, bytes)
}

const KINDS: [&str; 5] = ["decision", "bug-fix", "insight", "checkpoint", "convention"];
const SUBJECTS: [&str; 8] = [
    "The invoice exporter",
    "Session refresh",
    "The webhook retry queue",
    "CSV import",
    "The rate limiter",
    "Statement rendering",
    "The sqlx offline cache",
    "Push notifications",
];
const FINDINGS: [&str; 8] = [
    "must round once on the total, not per line item",
    "needs a composite index on (created_at, id) to avoid a sort",
    "is flaky on CI because it sleeps on wall-clock time; use tokio::time::pause()",
    "keys on (ip, username) so a shared NAT does not lock everyone out",
    "reads config at startup only; restart after changing flags.toml",
    "has to compare timestamps in UTC, never in local time",
    "should use the csv crate's writer instead of hand-rolled escaping",
    "is cached in an Arc at startup; reloading per request cost 80 ms",
];
const TAGS: [&str; 8] = [
    "billing", "auth", "ci", "database", "webhooks", "exports", "mobile", "perf",
];
const AUTHORS: [&str; 3] = ["Maya Chen", "Jonas Berg", "Priya Raman"];
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Deterministic records in increasing time order, ~250 bytes each.
struct Generator {
    state: u64,
    /// Milliseconds since the Unix epoch of the next record.
    millis: u64,
}

impl Generator {
    fn new(seed: u64) -> Self {
        Generator {
            state: seed,
            // 2026-11-18T08:00:00Z
            millis: 1_794_988_800_000,
        }
    }

    /// xorshift64*
    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }

    fn record(&mut self) -> String {
        self.millis += 1 + self.next() % 90_000;
        let id = self.ulid();
        let timestamp = format_timestamp(self.millis);
        let kind = self.pick(&KINDS);
        let content = format!("{} {}.", self.pick(&SUBJECTS), self.pick(&FINDINGS));
        let (tag_a, tag_b) = (self.pick(&TAGS), self.pick(&TAGS));
        let author = self.pick(&AUTHORS);
        let commit = format!("{:07x}", self.next() & 0xFFF_FFFF);
        format!(
            r#"{{"id":"{id}","timestamp":"{timestamp}","type":"{kind}","content":"{content}","tags":["{tag_a}","{tag_b}"],"author":"{author}","commit":"{commit}"}}"#
        )
    }

    fn ulid(&mut self) -> String {
        let random = u128::from(self.next()) << 16 | u128::from(self.next() & 0xFFFF);
        let value = u128::from(self.millis) << 80 | random;
        (0..26)
            .rev()
            .map(|i| CROCKFORD[((value >> (5 * i)) & 31) as usize] as char)
            .collect()
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the Unix epoch.
fn format_timestamp(millis: u64) -> String {
    let (days, ms_of_day) = (millis / 86_400_000, millis % 86_400_000);
    let (year, month, day) = civil_from_days(days as i64);
    let (hour, minute) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
    let (second, ms) = (ms_of_day / 1000 % 60, ms_of_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{ms:03}Z")
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
