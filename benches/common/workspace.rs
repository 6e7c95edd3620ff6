//! Synthetic workspaces: a git repository whose memory log looks like a
//! team's, and a `$GOLDFISH_HOME` that indexes it.
//!
//! The log: `size` memories of every type, one to four sentences each (about
//! 100 to 400 characters, with the identifiers real memories carry: paths,
//! ticket numbers), by five authors, agents and people, spread over
//! `size / 100` days (7 to 730), one file a day. Deterministic.
//!
//! Vectors: embedding 100k texts with the real model would take longer than
//! the whole benchmark, so [`Workspace::embed_synthetic`] fills the index
//! through the product's own embedding queue with [`SyntheticEmbedder`]:
//! pseudo-random unit vectors, clustered by topic like sentence embeddings,
//! under the real model's id, so `goldfish recall` finds nothing left to
//! embed. Everything else (the query's embedding, a digest's sentences) runs
//! the real model.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use goldfish::adapters::embed::{EmbedError, Embedder, TextKind, normalize};
use goldfish::adapters::index::Index;
use goldfish::domain::memory::{Entry, Memory, file_name_for, format_timestamp};
use jiff::Timestamp;

use super::Rng;

pub const GOLDFISH: &str = env!("CARGO_BIN_EXE_goldfish");

/// 2025-01-06T00:00:00Z, the first memory's day.
const START_MS: i64 = 1_736_121_600_000;
const DAY_MS: i64 = 86_400_000;

const COMPONENTS: &[&str] = &[
    "the auth middleware",
    "the billing worker",
    "the search indexer",
    "the CI pipeline",
    "the session cache",
    "the GraphQL gateway",
    "the migration runner",
    "the upload service",
    "the feature-flag client",
    "the notification queue",
    "the invoice exporter",
    "the rate limiter",
    "the webhook dispatcher",
    "the CSV importer",
    "the Postgres pool",
    "the mobile sync API",
];
/// Module paths, one per component.
const MODULES: &[&str] = &[
    "auth",
    "billing",
    "search",
    "ci",
    "session",
    "gateway",
    "migrate",
    "upload",
    "flags",
    "notify",
    "export",
    "ratelimit",
    "webhooks",
    "import",
    "db",
    "sync",
];
const PROBLEMS: &[&str] = &[
    "accepted expired JWTs after the clock skew change",
    "leaked file descriptors under load",
    "retried non-idempotent writes and double-charged a customer",
    "took 4 seconds per query once the table passed a million rows",
    "deadlocked when two deploys ran at the same time",
    "dropped messages whenever the broker restarted",
    "returned stale results for ten minutes after an update",
    "crashed on empty input instead of returning an error",
    "logged full request bodies, including passwords",
    "ignored the timeout setting and hung forever",
    "broke on Windows paths with spaces",
    "rounded each line item instead of the total",
];
const FIXES: &[&str] = &[
    "We now validate the exp claim against server time with a 30 second leeway.",
    "The fix closes the handle in a finally block and adds a regression test.",
    "Writes carry an idempotency key and the ledger rejects duplicates.",
    "A composite index on (tenant_id, created_at) brought it under 20 ms.",
    "An advisory lock around the migration step serialises deploys.",
    "Consumers now ack only after the handler commits.",
    "Cache entries are invalidated on write instead of relying on the TTL.",
    "Empty input is rejected with a clear message before parsing starts.",
    "Request bodies are redacted by a logging filter.",
    "The HTTP client reads the timeout from config and defaults to 10 seconds.",
    "Paths go through std::path instead of string splitting.",
    "Totals are rounded once, with banker's rounding, in Money::total().",
];
const CHOICES: &[(&str, &str)] = &[
    ("SQLite in WAL mode", "readers never block the writer"),
    (
        "exponential backoff capped at five minutes",
        "the provider rate-limits bursts",
    ),
    (
        "server-side feature flags",
        "clients only ever see the resolved set",
    ),
    (
        "a pool of 40 connections",
        "p99 latency spiked at 20 under the load test",
    ),
    (
        "UTC everywhere, converted at the edge",
        "local times broke the DST reports",
    ),
    (
        "the csv crate's writer",
        "hand-rolled escaping mangled quotes",
    ),
    (
        "signed webhooks with a 5 minute window",
        "replays were possible before",
    ),
    (
        "backward-compatible migrations for one release",
        "rollbacks must stay safe",
    ),
];
const INSIGHTS: &[&str] = &[
    "is only slow on the first request after a deploy: it warms a cache of 80 MB",
    "reads its config at startup only, so flag changes need a restart",
    "spends most of its time in JSON serialisation, not in the database",
    "is flaky on CI because it sleeps on wall-clock time; use tokio::time::pause()",
    "keys on (ip, username) so a shared NAT does not lock everyone out",
    "holds a lock across an await point, which is why it stalls under load",
];
const STEPS: &[&str] = &[
    "move the retry state into the jobs table",
    "add a load test for 10k concurrent sessions",
    "switch the client to the v2 endpoint",
    "delete the legacy code path behind the old flag",
    "backfill the missing created_at values",
    "document the failure mode in the runbook",
];
const NOTES: &[&str] = &[
    "Keep this in mind before touching the retry logic.",
    "Ask the platform team before changing the defaults.",
    "The integration test in tests/e2e covers the failure mode now.",
    "Rolling back is safe; the schema change is additive.",
    "Same root cause as the incident in March.",
    "Do not remove the workaround until the upstream release ships.",
];
const CONTEXTS: &[&str] = &[
    "Found while working on the Q3 billing migration.",
    "Reported by the on-call engineer after the Sunday alert.",
    "Measured with the staging load test at 2,000 requests per second.",
    "The customer-facing symptom was a 502 from the edge proxy.",
    "Reproduced locally with `make e2e FILTER=checkout`.",
    "This only shows up with more than 8 worker threads.",
];
/// Types in proportion: observations and bug fixes are the most common.
const TYPES: &[&str] = &[
    "observation",
    "observation",
    "observation",
    "bug-fix",
    "bug-fix",
    "bug-fix",
    "decision",
    "decision",
    "insight",
    "insight",
    "feature",
    "checkpoint",
    "checkpoint",
    "plan",
    "refactor",
];
const AUTHORS: &[&str] = &[
    "Maya Chen",
    "Maya Chen",
    "Jonas Berg",
    "Jonas Berg",
    "Priya Raman",
    "Tomás Ortega",
    "Aiko Tanaka",
];
const TAGS: &[&str] = &[
    "billing", "auth", "ci", "database", "webhooks", "exports", "mobile", "perf", "security",
];

/// Topics the synthetic vectors cluster on: memories about the same component
/// and problem land near each other.
const CLUSTERS: usize = 512;
const DIMS: usize = 384;

fn pick<T: Copy>(rng: &mut Rng, items: &[T]) -> T {
    items[(rng.next() % items.len() as u64) as usize]
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Days a log of `size` memories spans (one file each).
pub fn days_for(size: usize) -> usize {
    (size / 100).clamp(7, 730)
}

/// The deterministic memories of a workspace, oldest first.
pub struct Memories {
    rng: Rng,
    size: usize,
    next: usize,
    /// Added to ticket numbers, so memories made later never repeat one.
    serial: usize,
    millis: i64,
    spacing: i64,
}

impl Memories {
    pub fn new(size: usize) -> Memories {
        let spacing = (days_for(size) as i64 * DAY_MS / size.max(1) as i64).max(1);
        Memories {
            rng: Rng(0x6f1d_f15e_u64 ^ size as u64),
            size,
            next: 0,
            serial: 0,
            millis: START_MS,
            spacing,
        }
    }

    /// `count` more memories, from `millis` on, numbered from `serial`.
    pub fn more(count: usize, millis: i64, serial: usize) -> Memories {
        Memories {
            rng: Rng(0x5eed ^ serial as u64),
            size: count,
            next: 0,
            serial,
            millis,
            spacing: 1_000,
        }
    }

    fn content(&mut self, kind: &str, n: usize) -> String {
        let rng = &mut self.rng;
        let c = (rng.next() % COMPONENTS.len() as u64) as usize;
        let component = COMPONENTS[c];
        let path = format!(
            "src/{}/{}.rs",
            MODULES[c],
            pick(rng, &["mod", "worker", "client", "store"])
        );
        let mut text = match kind {
            "bug-fix" => format!(
                "Fixed: {component} {} ({path}). {} Fixed in #{n}.",
                pick(rng, PROBLEMS),
                pick(rng, FIXES)
            ),
            "decision" => {
                let (choice, why) = pick(rng, CHOICES);
                format!("Chose {choice} for {component}: {why}. Decided in ADR-{n}.")
            }
            "insight" => format!(
                "{} {} (see {path}, #{n}).",
                capitalized(component),
                pick(rng, INSIGHTS)
            ),
            "checkpoint" => format!(
                "Checkpoint #{n}: {component} is half done; next, {}.",
                pick(rng, STEPS)
            ),
            "plan" => format!(
                "Plan #{n} for {component}: {}, then {}.",
                pick(rng, STEPS),
                pick(rng, STEPS)
            ),
            "feature" => format!(
                "Added retries with jitter to {component} in {path} (#{n}). {}",
                pick(rng, FIXES)
            ),
            "refactor" => format!(
                "Split {path} in two so {component} can be tested without the network (#{n})."
            ),
            _ => format!(
                "{} {} again in staging (#{n}).",
                capitalized(component),
                pick(rng, PROBLEMS)
            ),
        };
        if rng.next().is_multiple_of(2) {
            text.push(' ');
            text.push_str(pick(rng, CONTEXTS));
        }
        if rng.next().is_multiple_of(2) {
            text.push(' ');
            text.push_str(pick(rng, NOTES));
        }
        text
    }
}

impl Iterator for Memories {
    type Item = Memory;

    fn next(&mut self) -> Option<Memory> {
        if self.next == self.size {
            return None;
        }
        let n = 1000 + self.serial + self.next;
        self.next += 1;
        self.millis += 1 + (self.rng.next() % (2 * self.spacing as u64)) as i64;
        let at = Timestamp::from_millisecond(self.millis).expect("a valid time");
        let random = u128::from(self.rng.next()) << 16 | u128::from(self.rng.next() & 0xffff);
        let id = ulid::Ulid::from_parts(self.millis as u64, random).to_string();
        let kind = pick(&mut self.rng, TYPES);
        let content = self.content(kind, n);
        let rng = &mut self.rng;
        let tags = (0..1 + rng.next() % 2)
            .map(|_| pick(rng, TAGS).to_owned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let files = if rng.next() % 5 < 2 {
            vec![format!("src/{}/mod.rs", pick(rng, MODULES))]
        } else {
            Vec::new()
        };
        Some(Memory {
            id,
            timestamp: format_timestamp(at),
            kind: kind.to_owned(),
            content,
            source: Some(if rng.next() % 10 < 7 { "agent" } else { "user" }.to_owned()),
            tags,
            author: Some(pick(rng, AUTHORS).to_owned()),
            branch: Some("main".to_owned()),
            commit: Some(format!(
                "{:016x}{:016x}{:08x}",
                rng.next(),
                rng.next(),
                rng.next() as u32
            )),
            files,
            session: None,
            supersedes: None,
            extra: Default::default(),
        })
    }
}

/// The log file (relative to the memory folder) of `memory`.
fn file_of(memory: &Memory) -> String {
    let at: Timestamp = memory.timestamp.parse().expect("a generated timestamp");
    file_name_for(at)
}

/// Questions a user would ask of these memories. Each range of `count`
/// from `offset` is a pseudo-random sample of the same 960 questions (so
/// sets are alike), and ranges that do not overlap share no question (so
/// nothing comes from the index's query cache) while `offset + count <= 960`.
pub fn questions(count: usize, offset: usize) -> Vec<String> {
    const ASKS: &[&str] = &[
        "why did {c} fail with {x}",
        "what did we decide about {x} in {c}",
        "how do we fix {x} in {c}",
        "{c} {x}",
        "is the {x} fix in {c} safe to change",
    ];
    const SUBJECTS: &[&str] = &[
        "expired tokens",
        "a file descriptor leak",
        "double charges",
        "slow queries",
        "a deploy deadlock",
        "dropped messages",
        "stale results",
        "an empty input crash",
        "passwords in logs",
        "an ignored timeout",
        "Windows paths",
        "rounding",
    ];
    const ALL: usize = 5 * 16 * 12;
    (offset..offset + count)
        .map(|i| {
            // 337 is prime to 960: a permutation of the questions.
            let q = (i * 337) % ALL;
            let component = COMPONENTS[q % COMPONENTS.len()];
            let ask = ASKS[(q / COMPONENTS.len()) % ASKS.len()];
            let subject = SUBJECTS[q / (COMPONENTS.len() * ASKS.len())];
            ask.replace("{c}", component).replace("{x}", subject)
        })
        .collect()
}

/// Runs `command` to its end and returns how long it took; panics unless
/// it exits 0.
pub fn run(command: &mut Command) -> Duration {
    let start = Instant::now();
    let status = command
        .status()
        .unwrap_or_else(|err| panic!("{command:?}: {err}"));
    let wall = start.elapsed();
    assert!(status.success(), "{command:?} failed: {status}");
    wall
}

/// Runs `command` under GNU time and returns its peak resident memory in
/// MB; `None` without `/usr/bin/time`. (A child's own `wait4` figure would
/// count the pages of the benchmark process it was forked from.)
pub fn peak_rss_mb(command: &Command) -> Option<f64> {
    const TIME: &str = "/usr/bin/time";
    if !Path::new(TIME).is_file() {
        return None;
    }
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut timed = Command::new(TIME);
    timed
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(out.path())
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        timed.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => timed.env(key, value),
            None => timed.env_remove(key),
        };
    }
    timed
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    run(&mut timed);
    let kb: f64 = std::fs::read_to_string(out.path())
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// A running `goldfish model warm`, killed when dropped.
pub struct WarmProcess(std::process::Child);

impl Drop for WarmProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Set, workspaces are left on disk (their paths on stderr).
const KEEP_VAR: &str = "GOLDFISH_BENCH_KEEP";

/// A git repository holding a synthetic memory log, set up with
/// `goldfish init`, and an empty `$GOLDFISH_HOME`.
pub struct Workspace {
    _dir: tempfile::TempDir,
    pub repo: PathBuf,
    pub home: PathBuf,
    pub size: usize,
    /// Memory files (days).
    pub files: usize,
    /// Bytes of the memory files.
    pub log_bytes: u64,
    last_millis: i64,
    added: usize,
}

impl Workspace {
    /// `size` memories; committed when `commit` (a million takes a while to
    /// commit and recall does not need it).
    pub fn create(size: usize, commit: bool) -> Workspace {
        let mut dir = tempfile::tempdir().expect("a temporary directory");
        if std::env::var_os(KEEP_VAR).is_some() {
            // For looking into a workspace after the run (its index with sqlite3).
            dir.disable_cleanup(true);
            eprintln!("keeping {}", dir.path().display());
        }
        let repo = dir.path().join("repo");
        let home = dir.path().join("home");
        let memory_dir = repo.join(".goldfish/memories");
        std::fs::create_dir_all(&memory_dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let mut files = 0;
        let mut log_bytes = 0;
        let mut last_millis = START_MS;
        let mut current: Option<(String, std::io::BufWriter<std::fs::File>)> = None;
        for memory in Memories::new(size) {
            let name = file_of(&memory);
            if current.as_ref().is_none_or(|(open, _)| *open != name) {
                if let Some((_, mut writer)) = current.take() {
                    writer.flush().unwrap();
                }
                let file = std::fs::File::create(memory_dir.join(&name)).unwrap();
                current = Some((name, std::io::BufWriter::new(file)));
                files += 1;
            }
            last_millis = memory
                .timestamp
                .parse::<Timestamp>()
                .unwrap()
                .as_millisecond();
            let (_, writer) = current.as_mut().expect("opened above");
            let line = Entry::Memory(memory).to_line();
            log_bytes += line.len() as u64 + 1;
            writeln!(writer, "{line}").unwrap();
        }
        if let Some((_, mut writer)) = current {
            writer.flush().unwrap();
        }
        let repo = repo.canonicalize().unwrap();
        let workspace = Workspace {
            _dir: dir,
            repo,
            home,
            size,
            files,
            log_bytes,
            last_millis,
            added: 0,
        };
        workspace.git(&["init", "-q", "-b", "main"]);
        run(&mut workspace.goldfish(&["init"]));
        if commit {
            workspace.git(&["add", "-A"]);
            workspace.git(&["commit", "-q", "-m", "memories"]);
        }
        workspace
    }

    fn hermetic(&self, command: &mut Command) {
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GOLDFISH") {
                command.env_remove(key);
            }
        }
        command
            .current_dir(&self.repo)
            .env("GOLDFISH_HOME", &self.home)
            .env("GOLDFISH_MODEL", super::bench_model())
            // Every process loads the model itself unless a bench starts
            // the warm process and says so in its row.
            .env("GOLDFISH_WARM", "0")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Bench")
            .env("GIT_AUTHOR_EMAIL", "bench@example.com")
            .env("GIT_COMMITTER_NAME", "Bench")
            .env("GIT_COMMITTER_EMAIL", "bench@example.com")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    }

    /// Starts `goldfish model warm` for this workspace's home and waits
    /// until it serves; it is killed when the guard drops. Commands use it
    /// only when given `GOLDFISH_WARM=1` ([`Workspace::goldfish_warm`]).
    pub fn start_warm(&self) -> WarmProcess {
        let child = self.goldfish(&["model", "warm"]).spawn().unwrap();
        let socket = self
            .home
            .join("warm")
            .join(format!("{}.sock", super::bench_model()));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !socket.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the warm process never served"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        WarmProcess(child)
    }

    /// `goldfish ARGS` allowed to use the home's warm process.
    pub fn goldfish_warm(&self, args: &[&str]) -> Command {
        let mut command = self.goldfish(args);
        command.env("GOLDFISH_WARM", "1");
        command
    }

    /// `goldfish ARGS` in the repository, with this workspace's home.
    pub fn goldfish(&self, args: &[&str]) -> Command {
        let mut command = Command::new(GOLDFISH);
        command.args(args);
        self.hermetic(&mut command);
        command
    }

    pub fn git(&self, args: &[&str]) {
        let mut command = Command::new("git");
        command.args(args);
        self.hermetic(&mut command);
        run(&mut command);
    }

    /// Makes the model in `model_home` (`models/`, `runtime/`) this home's.
    pub fn link_model(&self, model_home: &Path) {
        for sub in ["models", "runtime"] {
            let link = self.home.join(sub);
            if !link.exists() {
                std::os::unix::fs::symlink(model_home.join(sub), link).unwrap();
            }
        }
    }

    /// The keyword part of a full sync (`GOLDFISH_MODEL=none`: nothing is
    /// embedded even with a model installed).
    pub fn sync_keywords(&self) -> Command {
        let mut command = self.goldfish(&["sync", "--quiet"]);
        command.env("GOLDFISH_MODEL", "none");
        command
    }

    /// Gives every memory of the index a synthetic vector under `model_id`,
    /// through the index's embedding queue; returns how many.
    pub fn embed_synthetic(&self, model_id: &str) -> usize {
        let mut index = Index::open(&self.home.join("index.db")).unwrap();
        let mut embedder = SyntheticEmbedder::new(model_id);
        let report = index
            .embed_pending(&mut embedder, None, &mut |_, _| {})
            .unwrap();
        assert_eq!(report.pending, 0);
        report.embedded
    }

    /// Appends `count` memories to the newest day's file and commits them:
    /// what a pull of a teammate's work brings.
    pub fn commit_memories(&mut self, count: usize) {
        let memories: Vec<Memory> =
            Memories::more(count, self.last_millis, 10_000_000 + self.added).collect();
        self.added += count;
        let path = self
            .repo
            .join(".goldfish/memories")
            .join(file_of(&memories[0]));
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        for memory in memories {
            self.last_millis = memory
                .timestamp
                .parse::<Timestamp>()
                .unwrap()
                .as_millisecond();
            writeln!(file, "{}", Entry::Memory(memory).to_line()).unwrap();
        }
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", "memories from a teammate"]);
    }

    /// The index on disk: the database and its write-ahead log.
    /// Bytes of the index: the database and its keyword index.
    pub fn index_bytes(&self) -> u64 {
        let text: u64 = std::fs::read_dir(self.home.join("index.text"))
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok()?.metadata().ok())
            .map(|metadata| metadata.len())
            .sum();
        let db: u64 = ["index.db", "index.db-wal"]
            .iter()
            .filter_map(|name| std::fs::metadata(self.home.join(name)).ok())
            .map(|metadata| metadata.len())
            .sum();
        db + text
    }
}

/// Stands in for the model when a benchmark fills the index: unit vectors
/// near one of [`CLUSTERS`] centres chosen by the text's first words.
pub struct SyntheticEmbedder {
    model_id: String,
    centers: Vec<Vec<f32>>,
}

impl SyntheticEmbedder {
    pub fn new(model_id: &str) -> SyntheticEmbedder {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        SyntheticEmbedder {
            model_id: model_id.to_owned(),
            centers: (0..CLUSTERS).map(|_| rng.unit_vector(DIMS)).collect(),
        }
    }

    pub fn vector(&self, text: &str) -> Vec<f32> {
        // FNV-1a of the first eight words picks the topic, of the whole text the noise.
        let fnv = |bytes: &[u8]| {
            bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            })
        };
        let topic: String = text.split(' ').take(8).collect::<Vec<_>>().join(" ");
        let center = &self.centers[(fnv(topic.as_bytes()) % CLUSTERS as u64) as usize];
        let mut rng = Rng(fnv(text.as_bytes()) | 1);
        let mut vector: Vec<f32> = center.iter().map(|c| c + 0.06 * rng.normal()).collect();
        normalize(&mut vector);
        vector
    }
}

impl Embedder for SyntheticEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dims(&self) -> usize {
        DIMS
    }

    fn embed(&mut self, texts: &[&str], _: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|text| self.vector(text)).collect())
    }
}
