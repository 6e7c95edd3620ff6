//! Warm recall through `goldfish mcp`, next to a new `goldfish recall`
//! process, on a workspace of 10k memories with real embeddings.
//!
//! The memories are the labelled set's 303 (`fixtures/eval/memories.jsonl`)
//! repeated with a variant suffix, embedded for real by `goldfish sync`; the
//! queries are the labelled set's questions, so every semantic recall embeds
//! a new query. A real MCP client (rmcp) talks to the server over stdio.
//!
//! Run: `cargo bench --bench mcp` (`GOLDFISH_BENCH_SIZES=10000`; needs the
//! model in `target/model-home`, which `scripts/test.sh` installs).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;

use common::report::{Row, emit};
use common::{ms, percentile};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;

const GOLDFISH: &str = env!("CARGO_BIN_EXE_goldfish");

fn main() {
    // Real embeddings of every memory: 10k take about a minute to sync.
    let sizes = if common::quick() {
        vec![1_000]
    } else {
        common::sizes("GOLDFISH_BENCH_MCP_SIZES", &[1_000], &[10_000])
    };
    println!("machine: {}", common::machine());
    println!();
    println!(
        "| memories | initialize | first recall | MCP keyword p50 / p95 | MCP semantic p50 / p95 | MCP hybrid p50 / p95 | MCP hybrid + budget 300 p50 / p95 | new `goldfish recall` process, hybrid p50 |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        run(n);
    }
}

/// `goldfish mcp` in `repo` with `GOLDFISH_HOME=home`, allowed to use the
/// home's warm process when `warm`.
fn mcp_command(repo: &Path, home: &Path, warm: bool) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(GOLDFISH);
    command
        .arg("mcp")
        .current_dir(repo)
        .env("GOLDFISH_HOME", home)
        .env("GOLDFISH_MODEL", common::bench_model())
        .env("GOLDFISH_WARM", if warm { "1" } else { "0" })
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    command
}

/// Runs `program args` in `dir` with `GOLDFISH_HOME=home` and a hermetic
/// git config, output discarded; panics on failure.
fn run_in(dir: &Path, home: &Path, program: &str, args: &[&str]) {
    run_in_warm(dir, home, program, args, false);
}

/// [`run_in`], allowed to use the home's warm process when `warm`.
fn run_in_warm(dir: &Path, home: &Path, program: &str, args: &[&str], warm: bool) {
    let status = std::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GOLDFISH_HOME", home)
        .env("GOLDFISH_MODEL", common::bench_model())
        .env("GOLDFISH_WARM", if warm { "1" } else { "0" })
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{program} {args:?} failed: {status}");
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/eval")
            .join(name),
    )
    .unwrap()
}

fn run(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    for sub in ["models", "runtime"] {
        std::os::unix::fs::symlink(common::model_home().join(sub), home.join(sub)).unwrap();
    }
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    run_in(&repo, &home, "git", &["init", "-q"]);
    run_in(&repo, &home, GOLDFISH, &["init"]);
    let seeds: Vec<serde_json::Value> = fixture("memories.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut log = String::new();
    for i in 0..n {
        let mut memory = seeds[i % seeds.len()].clone();
        let round = i / seeds.len();
        memory["id"] = format!("01KB{i:022}").into();
        if round > 0 {
            let content = memory["content"].as_str().unwrap().to_owned();
            memory["content"] = format!("{content} (variant {round}, module m{})", i % 97).into();
        }
        log.push_str(&memory.to_string());
        log.push('\n');
    }
    std::fs::write(repo.join(".goldfish/memories/2026-10-01.jsonl"), log).unwrap();
    run_in(&repo, &home, GOLDFISH, &["sync", "--quiet"]);

    let questions: Vec<String> =
        serde_json::from_str::<Vec<serde_json::Value>>(&fixture("questions.json"))
            .unwrap()
            .into_iter()
            .map(|q| q["question"].as_str().unwrap().to_owned())
            .collect();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let row = runtime.block_on(async {
        let command = mcp_command(&repo, &home, false);
        let started = Instant::now();
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let client = ().serve(transport).await.unwrap();
        let initialize = started.elapsed();
        let recall = |arguments: serde_json::Value| {
            let serde_json::Value::Object(arguments) = arguments else {
                unreachable!()
            };
            let client = &client;
            async move {
                let start = Instant::now();
                let result = client
                    .call_tool(CallToolRequestParams::new("recall").with_arguments(arguments))
                    .await
                    .unwrap();
                assert_eq!(result.is_error, Some(false), "{result:?}");
                start.elapsed()
            }
        };
        // The fixture's memories name a fictional team that the bench's one
        // commit does not have: quarantined (`author-mismatch`), so asked
        // for, here and below.
        let first = recall(serde_json::json!({ "query": "warm up", "limit": 5, "untrusted": true })).await;
        let mut rows = Vec::new();
        for (mode, budget) in [
            ("keyword", None),
            ("semantic", None),
            ("hybrid", None),
            ("hybrid", Some(300)),
        ] {
            let mut samples: Vec<Duration> = Vec::new();
            for question in questions.iter().take(30) {
                let mut arguments =
                    serde_json::json!({ "query": question, "mode": mode, "limit": 10, "untrusted": true });
                if let Some(budget) = budget {
                    arguments["budget"] = budget.into();
                }
                samples.push(recall(arguments).await);
            }
            let measure = match budget {
                Some(budget) => format!("MCP {mode} --budget {budget}, warm"),
                None => format!("MCP {mode}, warm"),
            };
            let (p50, p95) = (percentile(&mut samples, 50), percentile(&mut samples, 95));
            emit(Row::latency("mcp", measure, p50, p95).at(n));
            rows.push(format!("{} / {}", ms(p50), ms(p95)));
        }
        client.cancel().await.unwrap();
        (initialize, first, rows)
    });

    let mut process: Vec<Duration> = questions
        .iter()
        .skip(30)
        .take(7)
        .map(|question| {
            let start = Instant::now();
            run_in(
                &repo,
                &home,
                GOLDFISH,
                &["recall", question, "-n", "10", "--include-untrusted"],
            );
            start.elapsed()
        })
        .collect();
    let (initialize, first, rows) = row;
    let process_p50 = percentile(&mut process, 50);

    // A new MCP server and new recall processes with the home's warm
    // process running (`goldfish model warm`): their vectors come from it.
    let mut warm = std::process::Command::new(GOLDFISH)
        .args(["model", "warm"])
        .current_dir(&home)
        .env("GOLDFISH_HOME", &home)
        .env("GOLDFISH_MODEL", common::bench_model())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let socket = home
        .join("warm")
        .join(format!("{}.sock", common::bench_model()));
    while !socket.exists() {
        assert!(warm.try_wait().unwrap().is_none(), "the warm process ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    let first_warm = runtime.block_on(async {
        let command = mcp_command(&repo, &home, true);
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let client = ().serve(transport).await.unwrap();
        let start = Instant::now();
        let arguments =
            serde_json::json!({ "query": "warm up once more", "limit": 5, "untrusted": true });
        let serde_json::Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let result = client
            .call_tool(CallToolRequestParams::new("recall").with_arguments(arguments))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false), "{result:?}");
        let first = start.elapsed();
        client.cancel().await.unwrap();
        first
    });
    let mut process_warm: Vec<Duration> = questions
        .iter()
        .skip(40)
        .take(7)
        .map(|question| {
            let start = Instant::now();
            run_in_warm(
                &repo,
                &home,
                GOLDFISH,
                &["recall", question, "-n", "10", "--include-untrusted"],
                true,
            );
            start.elapsed()
        })
        .collect();
    let _ = warm.kill();
    let _ = warm.wait();
    emit(Row::time("mcp", "MCP first recall, warm process running", first_warm).at(n));
    emit(
        Row::time(
            "mcp",
            "new `goldfish recall` process, hybrid, warm process running",
            percentile(&mut process_warm, 50),
        )
        .at(n),
    );
    emit(Row::time("mcp", "MCP initialize", initialize).at(n));
    emit(Row::time("mcp", "MCP first recall (waits for the model)", first).at(n));
    emit(Row::time("mcp", "new `goldfish recall` process, hybrid", process_p50).at(n));
    println!(
        "| {n} | {} | {} | {} | {} | {} | {} | {} |",
        ms(initialize),
        ms(first),
        rows[0],
        rows[1],
        rows[2],
        rows[3],
        ms(process_p50)
    );
}
