//! Capture's costs (docs/BENCHMARKS.md, "Capture"):
//!
//! - the hook: `goldfish agent-hook post-tool-use` as Claude Code runs it, a
//!   new process per tool call with a 3 KB payload on stdin, p50 / p95 over
//!   200 calls (it queues the event and starts the worker when none runs);
//!   next to `goldfish --version`, the cost of any process of this binary;
//! - the rules: every event of `fixtures/capture/events.jsonl` through the
//!   rules alone (and capture's guard), in process, per event: a first pass
//!   that builds the regular expressions, then once warm (in µs too);
//! - the model: the same events with the default GGUF model
//!   (SmolLM2-135M-Instruct Q4_1, dequantized at load as the worker does)
//!   on what the rules leave to it: per call (mean and max), its load, and
//!   the process's peak memory. Skipped, saying so, when the capture model is
//!   not installed (`goldfish model install --capture`; `scripts/bench.sh`
//!   installs it).
//!
//! Run: `cargo bench --features capture-model --bench capture`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::report::{Row, emit};
use common::workspace::{GOLDFISH, Workspace};
use common::{ms, percentile};
use goldfish::adapters::capture::eval;
use goldfish::adapters::capture::runtime::GgufModel;

const CALLS: usize = 200;
const EVENTS: &str = include_str!("../fixtures/capture/events.jsonl");

fn main() {
    println!("machine: {}", common::machine());
    println!();
    println!("| measure | p50 | p95 |");
    println!("|---|---:|---:|");
    let workspace = Workspace::create(100, true);
    let (version50, version95) = latency(CALLS, || {
        let mut command = workspace.goldfish(&["--version"]);
        command.stdout(Stdio::null());
        timed(command, None)
    });
    let payload = payload(&workspace.repo);
    let (hook50, hook95) = latency(CALLS, || {
        timed(
            workspace.goldfish(&["agent-hook", "post-tool-use"]),
            Some(&payload),
        )
    });
    println!(
        "| `agent-hook post-tool-use` ({} B payload) | {} | {} |",
        payload.len(),
        ms(hook50),
        ms(hook95)
    );
    println!(
        "| `goldfish --version` (any process of this binary) | {} | {} |",
        ms(version50),
        ms(version95)
    );
    emit(Row::latency(
        "capture",
        "hook: agent-hook post-tool-use, 3 KB payload",
        hook50,
        hook95,
    ));
    emit(Row::latency(
        "capture",
        "goldfish --version (a process of this binary)",
        version50,
        version95,
    ));
    // Let the worker the hooks started finish before the workspace goes.
    let _ = workspace.goldfish(&["capture", "work", "--wait"]).status();

    let set = eval::load(EVENTS).expect("the labelled events");
    // Once to build the rules' regular expressions (a worker does it once),
    // then measured.
    let first = eval::evaluate(&set, Path::new("/repo"), None);
    let rules = eval::evaluate(&set, Path::new("/repo"), None);
    let micros = |d: std::time::Duration| format!("{:.1} µs", d.as_secs_f64() * 1e6);
    println!(
        "| rules, per event, first pass (building the regular expressions) | {} | |",
        micros(first.latency_total / first.events as u32)
    );
    println!(
        "| rules, per event, then (max {}) | {} | |",
        micros(rules.latency_max),
        micros(rules.latency_total / rules.events as u32)
    );
    let per_event = rules.latency_total / rules.events as u32;
    println!(
        "| rules, per event (in process, {} events) | {} | |",
        rules.events,
        ms(per_event)
    );
    emit(Row::time(
        "capture",
        "rules, per event (in process)",
        per_event,
    ));
    let per_stop = stop_cost(&set);
    println!(
        "| rules, per Stop (in process: a session of the set's events, a turn of 3 answers) | {} | |",
        micros(per_stop)
    );
    emit(Row::time(
        "capture",
        "rules, per Stop (in process)",
        per_stop,
    ));

    let path = common::model_home()
        .join("models/capture")
        .join(goldfish::adapters::capture::install::DEFAULT_GGUF);
    if !path.is_file() {
        println!();
        println!(
            "no capture model at {}: `goldfish model install --capture` (scripts/bench.sh does)",
            path.display()
        );
        return;
    }
    // What the worker does for a model this small (src/app/capture.rs).
    // SAFETY: set before any thread of this process reads the environment.
    unsafe { std::env::set_var("CANDLE_DEQUANTIZE_ALL", "1") };
    let started = Instant::now();
    let mut model = GgufModel::load(&path).expect("load the capture model");
    let load = started.elapsed();
    let with_model = eval::evaluate(&set, Path::new("/repo"), Some(&mut model));
    let calls = with_model.model_calls.max(1) as u32;
    // The rules' share of the total is microseconds; the rest is the model.
    let per_call = with_model.latency_total.saturating_sub(rules.latency_total) / calls;
    let peak = common::peak_rss_kb() as f64 / 1024.0;
    println!(
        "| model call, default GGUF (mean of {}; max {}) | {} | |",
        with_model.model_calls,
        ms(with_model.latency_max),
        ms(per_call)
    );
    println!("| model load | {} | |", ms(load));
    println!("| peak memory, process with the model | {peak:.0} MB | |");
    emit(Row::time(
        "capture",
        "model call, default GGUF (mean)",
        per_call,
    ));
    emit(Row::time(
        "capture",
        "model call, default GGUF (slowest)",
        with_model.latency_max,
    ));
    emit(Row::time("capture", "model load, default GGUF", load));
    emit(Row::new(
        "memory",
        "peak RSS, capture model process",
        "MB",
        peak,
    ));
}

/// What the rules take at a Stop (`AgentSession::end_turn`: the turn's
/// findings, its held fixes, the checkpoint), mean of 200, on a session of
/// every event of the labelled set and a turn of three answers of about
/// 1,500 characters each.
fn stop_cost(set: &[eval::Labelled]) -> Duration {
    use goldfish::domain::capture::event;
    use goldfish::domain::capture::rules::{AgentSession, Turn};
    let mut session = AgentSession::default();
    for labelled in set {
        let mut payload = labelled.payload.clone();
        event::sanitize(&mut payload);
        let facts = session.facts(&payload, Path::new("/repo"));
        session.apply(&facts);
    }
    let answer = "The sync raced because `drain_journal` ran after `read_tree`, so src/sync.rs now drains first. ".repeat(16);
    let turn = Turn {
        requests: vec!["Fix the flaky sync test on branch switch".to_owned()],
        answers: vec![answer.clone(), answer.clone(), answer],
        ..Turn::default()
    };
    let runs = 200;
    let mut total = Duration::ZERO;
    for _ in 0..runs {
        let mut session = session.clone();
        let started = Instant::now();
        std::hint::black_box(session.end_turn(&turn));
        total += started.elapsed();
    }
    total / runs
}

/// p50 and p95 of `calls` runs of `once`, after 5 unmeasured.
fn latency(calls: usize, mut once: impl FnMut() -> Duration) -> (Duration, Duration) {
    for _ in 0..5 {
        once();
    }
    let mut samples: Vec<Duration> = (0..calls).map(|_| once()).collect();
    (percentile(&mut samples, 50), percentile(&mut samples, 95))
}

/// How long `command` takes with `stdin` written to it; panics unless it
/// exits 0.
fn timed(mut command: Command, stdin: Option<&[u8]>) -> Duration {
    command.stdin(Stdio::piped());
    let start = Instant::now();
    let mut child = command
        .spawn()
        .unwrap_or_else(|err| panic!("{GOLDFISH}: {err}"));
    let mut pipe = child.stdin.take().expect("a piped stdin");
    if let Some(bytes) = stdin {
        pipe.write_all(bytes).expect("write the payload");
    }
    drop(pipe);
    let status = child.wait().expect("wait for the hook");
    let wall = start.elapsed();
    assert!(status.success(), "{command:?} failed: {status}");
    wall
}

/// A PostToolUse payload of about 3 KB: a test run's output, as Claude Code
/// sends it.
fn payload(repo: &Path) -> Vec<u8> {
    let output: String = (0..80)
        .map(|i| format!("test sync::case_{i:02} ... ok (0.{i:02}s)\n"))
        .collect();
    serde_json::json!({
        "session_id": "bench-session",
        "transcript_path": repo.join("../transcript.jsonl"),
        "cwd": repo,
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test --test it sync::", "description": "Run the sync tests"},
        "tool_response": {"stdout": output, "stderr": "", "interrupted": false},
    })
    .to_string()
    .into_bytes()
}
