//! Capture as the commands run it: the agent hook queues an event and makes
//! sure a worker runs; the worker drains the queues into the log through
//! `store`; the status of a repository's queue.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;

use super::notice::Notice;
use super::store::{self, StoreInput};
use super::{AppError, Session, background};
pub use crate::adapters::capture::MAX_PAYLOAD_BYTES;
use crate::adapters::capture::runtime::CommandGenerator;
use crate::adapters::capture::{self, Drained, Queue, Refusal, Sink};
use crate::adapters::env;
use crate::adapters::git::Workspace;
use crate::adapters::home::Home;
use crate::domain::capture::rules::AgentSession;
use crate::domain::capture::{Generator, Observation};
use crate::domain::citation;
use crate::domain::supersede;

/// Whether the person running the agent opted out of the capture their
/// repository turned on (`GOLDFISH_CAPTURE=off`).
pub fn opted_out() -> bool {
    env::capture().is_some_and(|v| v.trim().eq_ignore_ascii_case("off"))
}

/// Queues one hook payload (`kind` is `tool` or `stop`; at most
/// [`capture::MAX_PAYLOAD_BYTES`] and one byte more, to tell a larger one)
/// and starts the worker unless one runs. Never waits on the worker; a
/// notice when the event was dropped (the payload too large, the queue
/// full), which `capture status` counts.
pub fn hook(home: &Home, cwd: &Path, kind: &str, payload: &[u8]) -> anyhow::Result<Option<Notice>> {
    let enqueued = capture::enqueue(home.root(), cwd, kind, payload)?;
    let full = enqueued.dropped.map(|reason| {
        Notice::warning(format!(
            "event dropped: {reason} (counted in {})",
            enqueued.queue.status_path().display()
        ))
    });
    if !worker_running(home)? {
        background::capture_worker(home)?;
    }
    Ok(full)
}

/// `text` with every secret value capture removed so far in the agent
/// session `session_id` (of the repository holding `cwd`, or the payload's
/// `cwd`) hidden: what a PreCompact checkpoint quotes of the transcript.
/// Capture keeps only hashes of those values; a session it has no state of
/// changes nothing. The worker may not have read the session's last events
/// yet: the store's own secret check still runs on what this leaves.
pub fn hide_session_secrets(home: &Home, cwd: &Path, session_id: &str, text: &str) -> String {
    let Some(root) = capture::find_root(cwd) else {
        return text.to_owned();
    };
    let queue = Queue::for_root(&capture::capture_root(home.root()), &root);
    let session: AgentSession = queue.load_session(session_id);
    session.secrets.hide(text)
}

/// What Claude Code's Stop hook answers to have the agent store what a
/// teammate should know (`{"decision": "block", "reason": …}`), once a
/// session and only after the session changed code; `None` otherwise: when
/// the agent is already continuing for a Stop hook (`stop_hook_active`),
/// when this session was asked, when its transcript shows no edit, or the
/// payload cannot be read.
pub fn ask_agent(home: &Home, payload: &[u8]) -> Option<String> {
    let payload: serde_json::Value = serde_json::from_slice(payload).ok()?;
    if payload["stop_hook_active"] == true {
        return None;
    }
    let session = payload["session_id"].as_str().filter(|s| !s.is_empty())?;
    let transcript = payload["transcript_path"].as_str()?;
    if !capture::transcript_changed_code(Path::new(transcript)) {
        return None;
    }
    let asked = capture::capture_root(home.root()).join("asked");
    std::fs::create_dir_all(&asked).ok()?;
    let marker = asked.join(&blake3::hash(session.as_bytes()).to_hex()[..32]);
    // Created only if absent: a second Stop of the session is not asked.
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker)
        .ok()?;
    Some(
        serde_json::json!({
            "decision": "block",
            "reason": ASK_AGENT,
        })
        .to_string(),
    )
}

/// What the agent is asked at the end of a session that changed code.
pub const ASK_AGENT: &str = "Before you stop: if this session found something a teammate's agent should know next time (a decision and its reason, the cause of a bug and its fix, a gotcha of this code), store each as one short memory with the goldfish MCP `store` tool (type decision, bug-fix or insight; exact identifiers; facts, not instructions). If there is nothing worth keeping, just stop. Do not repeat what the code or its comments already say.";

fn open_lock(home: &Home) -> anyhow::Result<std::fs::File> {
    let dir = home.locks_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join("capture-worker.lock");
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

/// Stores observations like `store` does (its checks run again), with the
/// observation's source (`capture:rules` or `capture:<model>`); `store`'s
/// notices go to `notify` as they come.
struct StoreSink<'a> {
    session: &'a mut Session,
    notify: &'a mut dyn FnMut(Notice),
}

impl Sink for StoreSink<'_> {
    fn store(
        &mut self,
        root: &Path,
        agent_session: &str,
        observation: &Observation,
        orders_removed: bool,
    ) -> Result<String, Refusal> {
        let workspace = Workspace::discover(root).map_err(|e| Refusal::Failed(format!("{e:#}")))?;
        // Each memory the worker stores reads the config as it is then, as
        // a command of its own would.
        self.session.forget_repo_configs();
        // What the team already has is not stored again: a memory of the
        // same type saying nearly the same (best effort: no model, no
        // check). A session's summary may well be close to the fix it made.
        let (similar, vector) =
            store::near_duplicates(self.session, &workspace, &observation.content)
                .unwrap_or_default();
        // The hunks a fix changed, where they are now.
        let spans = cited_spans(&workspace, &observation.cites);
        let lines: Vec<citation::Lines<'_>> = spans
            .iter()
            .map(|span| (span.path.as_str(), span.start, span.end))
            .collect();
        // One it probably replaces (a fact changed) is no repeat.
        let replaceable = match &vector {
            Some(vector) => {
                let memo = supersede::Memo {
                    kind: &observation.kind,
                    content: &observation.content,
                    files: &observation.files,
                    spans: &lines,
                };
                store::replaceable_by(self.session, &workspace, memo, vector, None)
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        // A session's checkpoint replaces its own earlier one: never a
        // repeat of it.
        if let Some(same) = similar.iter().find(|m| {
            m.kind == observation.kind
                && observation.supersedes.as_deref() != Some(m.id.as_str())
                && !replaceable.iter().any(|r| r.memory.id == m.id)
        }) {
            return Err(Refusal::Duplicate(same.id.clone()));
        }
        let supersedes = match &observation.supersedes {
            Some(id) => Some(id.clone()),
            None => self.link(&replaceable, &observation.kind, orders_removed),
        };
        let stored = store::store(
            self.session,
            &workspace,
            StoreInput {
                content: observation.content.clone().into_bytes(),
                kind: observation.kind.clone(),
                tags: vec!["captured".to_owned()],
                files: observation
                    .files
                    .iter()
                    .cloned()
                    .chain(
                        spans
                            .iter()
                            .map(|span| format!("{}:{}-{}", span.path, span.start, span.end)),
                    )
                    .collect(),
                source: Some(observation.source.clone()),
                allow_secret: false,
                // Like a script: written, with a near-duplicate warning.
                refuse_similar: false,
                agent_session: Some(agent_session.to_owned()),
                vector,
                supersedes,
                replaced: store::FindReplaced::Skip,
            },
        )
        .map_err(|e| Refusal::Failed(format!("{:#}", e.error)));
        for notice in self.session.take_notices() {
            (self.notify)(notice);
        }
        Ok(stored?.entry.id().to_owned())
    }
}

/// The spans a captured memory cites: each text it noted found in its
/// file as the working tree has it now, the first place it is. One whose
/// file or text is gone since is left out (the memory names the file).
fn cited_spans(workspace: &Workspace, cites: &[(String, String)]) -> Vec<citation::Span> {
    cites
        .iter()
        .filter(|(path, _)| citation::inside(path))
        .filter_map(|(path, print)| {
            let print = citation::Context::parse(print)?;
            let text = store::read_cited(workspace, path).ok()?;
            citation::find_text(path, &text, &print)
        })
        .collect()
}

impl StoreSink<'_> {
    /// The older memory a captured one replaces, when capture may link
    /// them without asking (`supersede::capture_links`); every other
    /// candidate is named in the worker's log, with why it was not linked.
    fn link(
        &mut self,
        found: &[store::Replaceable],
        kind: &str,
        orders_removed: bool,
    ) -> Option<String> {
        let mut linked = None;
        for candidate in found {
            let verdict = supersede::capture_links(
                &candidate.why,
                kind,
                candidate.memory.source.as_deref(),
                orders_removed,
            );
            let line = store::replaceable_line(candidate, 80);
            match verdict {
                Ok(()) if linked.is_none() => {
                    (self.notify)(Notice::note(format!("supersedes {line}")));
                    linked = Some(candidate.memory.id.clone());
                }
                Ok(()) => (self.notify)(Notice::note(format!(
                    "may replace {line}, not linked: it supersedes another"
                ))),
                Err(why) => (self.notify)(Notice::note(format!(
                    "may replace {line}, not linked: {why}"
                ))),
            }
        }
        linked
    }
}

/// The worker: drains every queue of the home until they stay empty. One at
/// a time per home; `wait` waits for a running one, else this one leaves
/// (counting nothing). What it has to say goes to `notify` as it happens.
pub fn work(
    session: &mut Session,
    wait: bool,
    notify: &mut dyn FnMut(Notice),
) -> Result<Drained, AppError> {
    let home = session.home.clone();
    let root = capture::capture_root(home.root());
    let mut generator = generator(&home, notify);
    let mut sink = StoreSink { session, notify };
    let mut total = Drained::default();
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
            total.waiting += drained.waiting;
            total.dropped += drained.dropped;
        }
        drop(lock);
        // An event queued while this worker was stopping found it running.
        if Queue::all(&root).iter().all(|q| q.pending() == 0) {
            break;
        }
    }
    Ok(total)
}

/// Stored memories `capture status` names: the newest.
pub const MAX_STORED_IDS: usize = 10;

/// Why a failing check run was told in no fix: a run passed with nothing
/// changed, or its fix was not stored.
const SETTLED_WITHOUT_FIX: &str = "skipped check failed, then passed with no fix stored";

/// Where failing check runs told in a stored fix are counted.
const SETTLED_IN_FIX: &str = "told in a stored bug fix: check failed, then passed after changes";

/// A repository's capture queue and what its status log counts. Every
/// event is one of: stored (a memory), told in a stored bug fix (a failing
/// check run), skipped, waiting (a failing check run, until a run of it
/// passes) or dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub queued: usize,
    pub stored: usize,
    /// Failing check runs the bug fixes stored tell.
    pub in_fixes: usize,
    pub skipped: usize,
    pub waiting: usize,
    pub dropped: usize,
    /// The newest memories capture stored (at most [`MAX_STORED_IDS`]),
    /// oldest first; `stored` counts them all.
    pub stored_ids: Vec<String>,
    /// The same memories with their type and first line.
    pub stored_memories: Vec<StoredMemory>,
    /// `skipped REASON`, `waiting REASON`, `dropped REASON` (and where
    /// failing runs went) → how many.
    pub reasons: BTreeMap<String, usize>,
    /// Spans of tool output, transcripts and model answers removed because
    /// they read as an order to an agent, never stored.
    pub instructions: Removed,
    /// What judges the events the rules cannot, as a worker started now
    /// would.
    pub judge: Judge,
}

/// A memory capture stored, as `capture status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredMemory {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// Its first line (at most 100 characters).
    pub first_line: String,
}

/// Instruction-like spans removed from what capture was about to store.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Removed {
    /// Spans (or file paths, or failing test names) removed.
    pub spans: usize,
    /// Events whose texts they were removed from.
    pub events: usize,
    /// The detector's rule (`override`, `role-tag`, …) → spans.
    pub rules: BTreeMap<String, usize>,
}

/// `capture status` of `workspace`.
pub fn status(home: &Home, workspace: &Workspace) -> Status {
    let queue = Queue::for_root(&capture::capture_root(home.root()), workspace.root());
    let statuses = queue.statuses();
    let count = |verdict: &str| statuses.iter().filter(|s| s["verdict"] == verdict).count();
    let settles = |stored: bool| -> usize {
        statuses
            .iter()
            .filter(|s| (s["verdict"] == "stored") == stored)
            .filter_map(|s| s["settles"].as_u64())
            .map(|n| n as usize)
            .sum()
    };
    let (in_fixes, settled_otherwise) = (settles(true), settles(false));
    let waiting = count("waiting").saturating_sub(in_fixes + settled_otherwise);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for s in &statuses {
        // A fix held until its turn ends is told by what the turn's end
        // did with it.
        if s["verdict"] != "stored" && s["verdict"] != "waiting" && s["verdict"] != "held" {
            let reason = s["reason"].as_str().unwrap_or("unknown");
            *reasons
                .entry(format!("{} {reason}", s["verdict"].as_str().unwrap_or("")))
                .or_default() += 1;
        }
    }
    for (key, n) in [
        (
            format!("waiting {}", crate::domain::capture::rules::WAITING),
            waiting,
        ),
        (SETTLED_IN_FIX.to_owned(), in_fixes),
        (SETTLED_WITHOUT_FIX.to_owned(), settled_otherwise),
    ] {
        if n > 0 {
            reasons.insert(key, n);
        }
    }
    let mut stored_memories: Vec<StoredMemory> = statuses
        .iter()
        .filter(|s| s["verdict"] == "stored")
        .filter_map(|s| {
            Some(StoredMemory {
                id: s["id"].as_str()?.to_owned(),
                kind: s["type"].as_str().unwrap_or_default().to_owned(),
                first_line: s["first_line"].as_str().unwrap_or_default().to_owned(),
            })
        })
        .collect();
    stored_memories.drain(..stored_memories.len().saturating_sub(MAX_STORED_IDS));
    let stored_ids = stored_memories.iter().map(|m| m.id.clone()).collect();
    let mut instructions = Removed::default();
    for s in &statuses {
        let Some(rules) = s[capture::INSTRUCTIONS_REMOVED].as_array() else {
            continue;
        };
        instructions.events += 1;
        for rule in rules {
            instructions.spans += 1;
            *instructions
                .rules
                .entry(rule.as_str().unwrap_or("unknown").to_owned())
                .or_default() += 1;
        }
    }
    Status {
        queued: queue.pending(),
        stored: count("stored"),
        in_fixes,
        skipped: count("skipped") + settled_otherwise,
        waiting,
        dropped: count("dropped"),
        stored_ids,
        stored_memories,
        reasons,
        instructions,
        judge: judge(home),
    }
}

/// Whether this build runs a capture model (the `capture-model` feature:
/// candle and its kernels, off by default).
pub const CAPTURE_MODEL_BUILT: bool = cfg!(feature = "capture-model");

/// What a build without the `capture-model` feature says when a capture
/// model is asked for.
pub const NO_CAPTURE_MODEL: &str =
    "this build has no capture model: rebuild with --features capture-model";

/// Models up to this size are dequantized at load: faster on long prompts,
/// at about four times the memory.
#[cfg(feature = "capture-model")]
const DEQUANTIZE_BELOW_BYTES: u64 = 300 << 20;

/// What judges the events the rules cannot. The rules alone by default:
/// on the labelled set the default model recorded nothing the rules did
/// not (docs/BENCHMARKS.md, "Capture"), so a model runs only when asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judge {
    /// The rules alone; `installed` is the default model when it is there
    /// but not turned on, `why` what the environment said, if anything.
    Rules {
        installed: Option<std::path::PathBuf>,
        why: Option<String>,
    },
    /// `GOLDFISH_CAPTURE_COMMAND`.
    Command(String),
    /// `GOLDFISH_CAPTURE_MODEL`, or the default model with
    /// `GOLDFISH_CAPTURE=model`.
    CaptureModel(std::path::PathBuf),
}

impl Judge {
    /// `rules`, `model` or `command`.
    pub fn kind(&self) -> &'static str {
        match self {
            Judge::Rules { .. } => "rules",
            Judge::Command(_) => "command",
            Judge::CaptureModel(_) => "model",
        }
    }

    /// One line for `capture status`.
    pub fn describe(&self) -> String {
        match self {
            Judge::Rules { installed, why } => {
                let mut text = "rules only".to_owned();
                if let Some(why) = why {
                    text.push_str(&format!(" ({why})"));
                } else if let Some(path) = installed {
                    text.push_str(&format!(
                        " (the capture model {} is installed but off: {}=model turns it on)",
                        path.display(),
                        env::GOLDFISH_CAPTURE
                    ));
                }
                text
            }
            Judge::Command(command) => format!(
                "rules, then the command `{command}` ({})",
                env::GOLDFISH_CAPTURE_COMMAND
            ),
            Judge::CaptureModel(path) => format!("rules, then the model {}", path.display()),
        }
    }
}

/// The judge capture runs, from the environment and what the home holds:
/// `GOLDFISH_CAPTURE=rules` keeps to the rules whatever else is set; a
/// command (`GOLDFISH_CAPTURE_COMMAND`) or a model named
/// (`GOLDFISH_CAPTURE_MODEL`) is asked for and runs; the default model runs
/// only with `GOLDFISH_CAPTURE=model`.
pub fn judge(home: &Home) -> Judge {
    let installed = capture::install::default_capture_model(&home.models_dir());
    let setting = env::capture();
    match setting.as_deref() {
        Some("rules") => {
            return Judge::Rules {
                installed,
                why: Some(format!("{}=rules", env::GOLDFISH_CAPTURE)),
            };
        }
        None | Some("model") => {}
        Some(other) => {
            return Judge::Rules {
                installed,
                why: Some(format!(
                    "{}={other} is neither `rules` nor `model`",
                    env::GOLDFISH_CAPTURE
                )),
            };
        }
    }
    if let Some(command) = env::capture_command() {
        return Judge::Command(command);
    }
    let named = env::capture_model();
    if !CAPTURE_MODEL_BUILT && (named.is_some() || setting.is_some()) {
        let asked = match &named {
            Some(path) => format!("{}={path}", env::GOLDFISH_CAPTURE_MODEL),
            None => format!("{}=model", env::GOLDFISH_CAPTURE),
        };
        return Judge::Rules {
            installed,
            why: Some(format!("{asked}, but {NO_CAPTURE_MODEL}")),
        };
    }
    if let Some(path) = named {
        return Judge::CaptureModel(std::path::PathBuf::from(path));
    }
    match (setting.is_some(), installed) {
        (true, Some(path)) => Judge::CaptureModel(path),
        (true, None) => Judge::Rules {
            installed: None,
            why: Some(format!(
                "{}=model, but no capture model is installed: `goldfish model install --capture`",
                env::GOLDFISH_CAPTURE
            )),
        },
        (false, installed) => Judge::Rules {
            installed,
            why: None,
        },
    }
}

/// The generator of [`judge`]'s choice. A model that does not load, or
/// that this build cannot run, is reported and the worker goes on with
/// rules only.
fn generator(home: &Home, notify: &mut dyn FnMut(Notice)) -> Option<Box<dyn Generator>> {
    match judge(home) {
        Judge::Rules { why: Some(why), .. } if why.ends_with(NO_CAPTURE_MODEL) => {
            notify(Notice::warning(format!("{why}; using the rules only")));
            None
        }
        Judge::Rules { .. } => None,
        Judge::Command(command) => {
            let timeout = env::capture_timeout()
                .and_then(|v| v.parse().ok())
                .unwrap_or(60);
            Some(Box::new(CommandGenerator {
                command,
                timeout: std::time::Duration::from_secs(timeout),
            }))
        }
        Judge::CaptureModel(path) => load_capture_model(&path, notify),
    }
}

/// The capture model at `path`, loaded in process.
#[cfg(feature = "capture-model")]
fn load_capture_model(path: &Path, notify: &mut dyn FnMut(Notice)) -> Option<Box<dyn Generator>> {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(u64::MAX);
    if size < DEQUANTIZE_BELOW_BYTES && !env::candle_dequantize_all_set() {
        // SAFETY: the worker sets this before it loads the model, on its only
        // thread; candle reads it when the model's layers are built.
        unsafe { std::env::set_var(env::CANDLE_DEQUANTIZE_ALL, "1") };
    }
    match crate::adapters::capture::runtime::GgufModel::load(path) {
        Ok(model) => Some(Box::new(model)),
        Err(err) => {
            notify(Notice::warning(format!(
                "the capture model did not load: {err:#}; using the rules only"
            )));
            None
        }
    }
}

/// Without the `capture-model` feature [`judge`] never picks a model.
#[cfg(not(feature = "capture-model"))]
fn load_capture_model(path: &Path, notify: &mut dyn FnMut(Notice)) -> Option<Box<dyn Generator>> {
    notify(Notice::warning(format!(
        "the capture model {} was not run: {NO_CAPTURE_MODEL}; using the rules only",
        path.display()
    )));
    None
}

/// `model install --capture`: the default capture model; its path.
/// A build without the `capture-model` feature refuses: it could not run it.
pub fn install_model(home: &Home) -> anyhow::Result<std::path::PathBuf> {
    if !CAPTURE_MODEL_BUILT {
        anyhow::bail!(NO_CAPTURE_MODEL);
    }
    Ok(capture::install::install_capture_model(&home.models_dir())?)
}
