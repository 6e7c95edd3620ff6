//! Issue 29, point 5: recall says "nothing relevant" for a question about
//! nothing the log holds (most of its words occur nowhere in a log large
//! enough for that to count), and keeps answering the questions it answers.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{TestEnv, json_lines};
use crate::mcp::{call, connect, runtime, text_of};

/// The questions of the issue.
const UNRELATED: [&str; 2] = ["kubernetes helm chart upgrade", "graphql schema stitching"];

/// A realistic engineering log: fixtures/eval/'s (a billing SaaS, 1,700
/// distinct words) less the few memories that mention Kubernetes, Helm,
/// charts or GraphQL, so the issue's questions are about nothing it holds
/// ("upgrade" and "schema" it does use).
fn engineering_log(env: &TestEnv) -> PathBuf {
    let repo = env.repo("billing", "Ada");
    let lines = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval/memories.jsonl"),
    )
    .unwrap();
    let kept: String = lines
        .lines()
        .filter(|line| {
            let lower = line.to_lowercase();
            !["kubernetes", "helm", "chart", "graphql", "stitch"]
                .iter()
                .any(|word| lower.contains(word))
        })
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(kept.lines().count() > 250, "most of the log is kept");
    fs::write(repo.join(".goldfish/memories/eval.jsonl"), kept).unwrap();
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "memories"]);
    repo
}

/// The README demo's log (scripts/demo.sh): four memories.
fn demo_log(env: &TestEnv) -> PathBuf {
    let repo = env.repo("demo", "Alice");
    for (kind, content) in [
        (
            "decision",
            "Chose SQLite in WAL mode for the ledger cache: readers never block the writer",
        ),
        (
            "bug-fix",
            "Fixed JWT validation accepting expired tokens: exp was compared in ms against s",
        ),
        (
            "insight",
            "The flaky payments test was a race on the shared Postgres port 5433",
        ),
        (
            "checkpoint",
            "Refund flow: API done, webhooks next (see src/refunds/)",
        ),
    ] {
        env.ok(&repo, &["store", "-t", kind, content]);
    }
    repo
}

fn nothing_relevant(env: &TestEnv, repo: &Path, args: &[&str]) -> Value {
    let output = env.goldfish(repo, args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{args:?}: {stdout}{stderr}");
    assert!(
        stderr.contains("nothing relevant: the log never mentions"),
        "{args:?}: {stderr}"
    );
    assert!(stderr.contains("--include-unrelated"), "{stderr}");
    json_lines(&stdout)
        .into_iter()
        .next()
        .unwrap_or(Value::Null)
}

/// Keyword ranking (no model): the judgement is the words', whatever the
/// ranking.
#[test]
fn issue_29_unrelated_questions_get_nothing_relevant() {
    let env = TestEnv::new();
    let repo = engineering_log(&env);
    for question in UNRELATED {
        let verdict = nothing_relevant(&env, &repo, &["recall", question, "--json"]);
        assert_eq!(verdict["nothing_relevant"], true, "{verdict}");
        assert!(verdict["share"].as_f64().unwrap() < verdict["min_share"].as_f64().unwrap());
        assert!(
            verdict["vocabulary"].as_u64().unwrap() >= verdict["min_vocabulary"].as_u64().unwrap()
        );
        assert!(verdict.get("id").is_none(), "not a memory: {verdict}");
        // Filters, a digest, the one-line index: the same answer.
        nothing_relevant(&env, &repo, &["recall", question, "--budget", "100"]);
        nothing_relevant(&env, &repo, &["recall", question, "--index"]);
        nothing_relevant(&env, &repo, &["recall", question, "--type", "decision"]);
    }
    let verdict = nothing_relevant(&env, &repo, &["recall", UNRELATED[0], "--json"]);
    let words: Vec<(&str, bool)> = verdict["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["word"].as_str().unwrap(), w["in_log"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        words,
        [
            ("kubernetes", false),
            ("helm", false),
            ("chart", false),
            ("upgrade", true)
        ]
    );
    assert_eq!(
        verdict["missing"],
        serde_json::json!(["kubernetes", "helm", "chart"])
    );
    assert_eq!(verdict["share"].as_f64(), Some(0.25));
    // Text: nothing on stdout, the reason on stderr.
    let output = env.goldfish(&repo, &["recall", UNRELATED[1]]);
    assert!(output.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("the log never mentions graphql, stitching (2 of 3 words")
    );
    // Asked for anyway: the closest memories, with a note.
    let output = env.goldfish(
        &repo,
        &[
            "recall",
            UNRELATED[0],
            "--include-unrelated",
            "--include-untrusted",
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    let hits = json_lines(&String::from_utf8_lossy(&output.stdout));
    assert!(hits.iter().all(|hit| hit["id"].is_string()) && !hits.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("probably nothing relevant"));
    // An on-topic question of the set still finds its answer (fixtures/eval
    // q02; the set's authors are not the committer's, so its memories are
    // quarantined and asked for).
    let hits = json_lines(&env.ok(
        &repo,
        &[
            "recall",
            "Which host port does the docker-compose Postgres use for local dev?",
            "--include-untrusted",
            "--json",
        ],
    ));
    assert!(
        hits.iter()
            .take(3)
            .any(|hit| hit["content"].as_str().unwrap().contains("5433")),
        "{hits:?}"
    );
}

/// A small log never refuses: the README's "login problems" shares no word
/// with its answer, the expired-token fix, and finds it.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn issue_29_login_problems_still_finds_the_expired_token_fix() {
    let env = TestEnv::new().with_model();
    let demo = demo_log(&env);
    let hits = json_lines(&env.ok(&demo, &["recall", "login problems", "--json", "-n", "2"]));
    assert!(
        hits.iter().any(|hit| hit["content"]
            .as_str()
            .unwrap()
            .starts_with("Fixed JWT validation")),
        "{hits:?}"
    );
    // In hybrid ranking (the default with a model) and through MCP, the
    // issue's questions of a large log are refused the same way.
    let repo = engineering_log(&env);
    for question in UNRELATED {
        nothing_relevant(&env, &repo, &["recall", question]);
    }
    runtime().block_on(async {
        let client = connect(&env, &repo).await;
        let answer = text_of(
            &call(
                &client,
                "recall",
                serde_json::json!({ "query": UNRELATED[0] }),
            )
            .await,
        );
        assert!(
            answer.starts_with("nothing relevant: the log never mentions kubernetes, helm, chart"),
            "{answer}"
        );
        assert!(answer.contains("unrelated: true"));
        let anyway = text_of(
            &call(
                &client,
                "recall",
                serde_json::json!({ "query": UNRELATED[0], "unrelated": true, "untrusted": true, "index": true }),
            )
            .await,
        );
        assert!(!anyway.starts_with("nothing relevant"), "{anyway}");
        let demo_client = connect(&env, &demo).await;
        let login = text_of(
            &call(
                &demo_client,
                "recall",
                serde_json::json!({ "query": "login problems" }),
            )
            .await,
        );
        assert!(login.contains("Fixed JWT validation"), "{login}");
        client.cancel().await.unwrap();
        demo_client.cancel().await.unwrap();
    });
}
