//! `agent-hook post-tool-use|stop` and `capture status|work`: wiring of
//! [`crate::capture`] to the home, the worker process and `store`.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::Context;

use super::{CliError, EXIT_OK};
use crate::app::Session;
use crate::app::ops::{self, StoreInput};
use crate::capture::runtime::{CommandGenerator, GgufModel};
use crate::capture::{self, Generator, Observation, Queue, Refusal, Sink};
use crate::env;
use crate::git::Workspace;
use crate::home::Home;

/// Queues the event on stdin and makes sure a worker runs. Never fails and
/// never waits on the worker: problems go to stderr, the exit status is 0.
pub(super) fn hook(kind: &str) -> u8 {
    if let Err(err) = queue_event(kind) {
        eprintln!("goldfish agent-hook: {err:#}");
    }
    EXIT_OK
}

fn queue_event(kind: &str) -> anyhow::Result<()> {
    let mut payload = Vec::new();
    std::io::stdin()
        .take(4 << 20)
        .read_to_end(&mut payload)
        .context("cannot read stdin")?;
    let home = Home::from_env()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let enqueued = capture::enqueue(home.root(), &cwd, kind, &payload)?;
    if !enqueued.queued {
        eprintln!(
            "goldfish agent-hook: the capture queue {} is full; event dropped",
            enqueued.queue.dir().display()
        );
    }
    if !worker_running(&home)? {
        start_worker(&home)?;
    }
    Ok(())
}

fn lock_path(home: &Home) -> std::path::PathBuf {
    home.locks_dir().join("capture-worker.lock")
}

fn open_lock(home: &Home) -> anyhow::Result<std::fs::File> {
    let dir = home.locks_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = lock_path(home);
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))
}

fn worker_running(home: &Home) -> anyhow::Result<bool> {
    let lock = open_lock(home)?;
    Ok(matches!(
        lock.try_lock(),
        Err(std::fs::TryLockError::WouldBlock)
    ))
}

/// Starts `goldfish capture work` detached, logging to
/// `$GOLDFISH_HOME/logs/capture.log`.
fn start_worker(home: &Home) -> anyhow::Result<()> {
    super::commands::spawn_detached(home, "capture.log", &["capture", "work"], home.root())
        .context("cannot start the capture worker")?;
    Ok(())
}

/// Stores observations like `store` does (its checks run again), with the
/// observation's source (`capture:rules` or `capture:<model>`).
struct StoreSink {
    session: Session,
}

impl Sink for StoreSink {
    fn store(
        &mut self,
        root: &Path,
        session: &str,
        observation: &Observation,
    ) -> Result<String, Refusal> {
        let workspace = Workspace::discover(root).map_err(|e| Refusal::Failed(format!("{e:#}")))?;
        // What the team already has is not stored again: a memory of the
        // same type saying nearly the same (best effort: no model, no
        // check). A session's summary may well be close to the fix it made.
        let similar = ops::near_duplicates(&mut self.session, &workspace, &observation.content)
            .unwrap_or_default();
        if let Some(same) = similar.iter().find(|m| m.kind == observation.kind) {
            return Err(Refusal::Duplicate(same.id.clone()));
        }
        let stored = ops::store(
            &mut self.session,
            &workspace,
            StoreInput {
                content: observation.content.clone().into_bytes(),
                kind: observation.kind.clone(),
                tags: vec!["captured".to_owned()],
                files: observation.files.clone(),
                source: Some(observation.source.clone()),
                allow_secret: false,
                // Like a script: written, with a near-duplicate warning.
                refuse_similar: false,
                session: Some(session.to_owned()),
            },
        )
        .map_err(|e| Refusal::Failed(format!("{:#}", e.error)));
        // The worker's log.
        for notice in self.session.take_notices() {
            eprintln!("{notice}");
        }
        Ok(stored?.entry.id().to_owned())
    }
}

/// The worker: drains every queue of the home until they stay empty. One at
/// a time per home; `wait` waits for a running one, else this one leaves.
pub(super) fn work(wait: bool, out: &mut dyn Write) -> Result<u8, CliError> {
    let session = Session::open()?;
    let home = session.home.clone();
    let root = capture::capture_root(home.root());
    let mut generator = generator(&home);
    let mut sink = StoreSink { session };
    let mut total = capture::Drained::default();
    loop {
        let lock = open_lock(&home)?;
        if wait {
            lock.lock().context("cannot lock the capture worker")?;
        } else if lock.try_lock().is_err() {
            break;
        }
        loop {
            let drained = capture::drain(home.root(), &mut sink, generator.as_deref_mut())
                .map_err(anyhow::Error::from)?;
            if drained.events == 0 {
                break;
            }
            total.events += drained.events;
            total.stored += drained.stored;
            total.skipped += drained.skipped;
            total.dropped += drained.dropped;
        }
        drop(lock);
        // An event queued while this worker was stopping found it running.
        if Queue::all(&root).iter().all(|q| q.pending() == 0) {
            break;
        }
    }
    let at = sink.session.now()?;
    writeln!(
        out,
        "{at}: {} events, {} stored, {} skipped, {} dropped",
        total.events, total.stored, total.skipped, total.dropped
    )
    .context("writing output")?;
    Ok(EXIT_OK)
}

/// `capture status`: this repository's queue and the status log's counts.
pub(super) fn status(json: bool, out: &mut dyn Write) -> Result<u8, CliError> {
    let home = Home::from_env().map_err(CliError::usage)?;
    let workspace = super::commands::workspace()?;
    let queue = Queue::for_root(&capture::capture_root(home.root()), workspace.root());
    let statuses = queue.statuses();
    let count = |verdict: &str| statuses.iter().filter(|s| s["verdict"] == verdict).count();
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    for s in &statuses {
        if s["verdict"] != "stored" {
            let reason = s["reason"].as_str().unwrap_or("unknown").to_owned();
            *reasons
                .entry(format!("{} {reason}", s["verdict"].as_str().unwrap_or("")))
                .or_default() += 1;
        }
    }
    let stored: Vec<&str> = statuses
        .iter()
        .filter(|s| s["verdict"] == "stored")
        .filter_map(|s| s["id"].as_str())
        .collect();
    if json {
        let report = serde_json::json!({
            "queued": queue.pending(),
            "stored": count("stored"),
            "skipped": count("skipped"),
            "dropped": count("dropped"),
            "stored_ids": stored,
            "reasons": reasons,
        });
        writeln!(out, "{report}").context("writing output")?;
        return Ok(EXIT_OK);
    }
    writeln!(
        out,
        "queued {}, stored {}, skipped {}, dropped {}",
        queue.pending(),
        count("stored"),
        count("skipped"),
        count("dropped")
    )
    .context("writing output")?;
    for id in stored {
        writeln!(out, "  stored {id}").context("writing output")?;
    }
    for (reason, n) in reasons {
        writeln!(out, "  {n} {reason}").context("writing output")?;
    }
    Ok(EXIT_OK)
}

/// Models up to this size are dequantized at load: faster on long prompts,
/// at about four times the memory.
const DEQUANTIZE_BELOW_BYTES: u64 = 300 << 20;

/// What judges the events the rules cannot: `GOLDFISH_CAPTURE_COMMAND`,
/// else `GOLDFISH_CAPTURE_MODEL`, else the installed default model, else
/// nothing (rules only). A model that does not load is reported and the
/// worker goes on with rules only.
fn generator(home: &Home) -> Option<Box<dyn Generator>> {
    if env::var(env::GOLDFISH_CAPTURE).is_some_and(|v| v == "rules") {
        return None;
    }
    if let Some(command) = env::var(env::GOLDFISH_CAPTURE_COMMAND) {
        let timeout = env::var(env::GOLDFISH_CAPTURE_TIMEOUT)
            .and_then(|v| v.parse().ok())
            .unwrap_or(60);
        return Some(Box::new(CommandGenerator {
            command,
            timeout: std::time::Duration::from_secs(timeout),
        }));
    }
    let path = env::var(env::GOLDFISH_CAPTURE_MODEL)
        .map(std::path::PathBuf::from)
        .or_else(|| capture::install::default_model(&home.models_dir()))?;
    let size = std::fs::metadata(&path)
        .map(|m| m.len())
        .unwrap_or(u64::MAX);
    if size < DEQUANTIZE_BELOW_BYTES && env::var("CANDLE_DEQUANTIZE_ALL").is_none() {
        // SAFETY: the worker sets this before it loads the model, on its only
        // thread; candle reads it when the model's layers are built.
        unsafe { std::env::set_var("CANDLE_DEQUANTIZE_ALL", "1") };
    }
    match GgufModel::load(&path) {
        Ok(model) => Some(Box::new(model)),
        Err(err) => {
            eprintln!("goldfish capture: {err:#}; using the rules only");
            None
        }
    }
}

/// `model install --capture`.
pub(super) fn model_install(out: &mut dyn Write) -> Result<u8, CliError> {
    let home = Home::from_env().map_err(CliError::usage)?;
    let path = capture::install::install_default(&home.models_dir())
        .map_err(|err| CliError::from(anyhow::Error::new(err)))?;
    writeln!(out, "installed the capture model {}", path.display()).context("writing output")?;
    Ok(EXIT_OK)
}
