//! Digests on the labelled set: within the budget, most gold facts kept, a
//! large reduction against the recalled memories, nothing invented.

use goldfish::adapters::embed::onnx::ModelTokenizer;
use goldfish::adapters::embed::{DEFAULT_MODEL, InstalledModel};
use goldfish::adapters::index::search::{Mode, QueryVector, content_words};
use goldfish::domain::digest::{Digest, Source, TokenCounter, distill};
use goldfish::domain::embedding::{Remembering, TextVectors};
use goldfish::domain::recall::Request;

use crate::common::{TestEnv, json_lines, model_home, with_embedder};
use crate::eval::{EvalSet, eval_set};

fn tokenizer() -> ModelTokenizer {
    let home = model_home();
    let model = InstalledModel::find(&home.join("models"), &home.join("runtime"), DEFAULT_MODEL)
        .unwrap()
        .unwrap();
    ModelTokenizer::load(&model).unwrap()
}

/// Per question: (facts kept, facts, digest tokens, tokens of the top 10,
/// facts present in the top 10 at all).
fn run(
    set: &EvalSet,
    budget: usize,
    counter: &mut dyn TokenCounter,
) -> Vec<(usize, usize, usize, usize, usize)> {
    // The questions share memories: each sentence is embedded once, as the
    // MCP server's digests do (most of this test's time otherwise).
    let mut remembered = TextVectors::default();
    set.questions
        .iter()
        .map(|(q, scope)| {
            let request = Request {
                query: Some(q.question.clone()),
                since: q
                    .since
                    .as_deref()
                    .and_then(|d| format!("{d}T00:00:00Z").parse().ok()),
                until: q
                    .until
                    .as_deref()
                    .and_then(|d| format!("{d}T23:59:59.999Z").parse().ok()),
                limit: 10,
                ..Request::default()
            };
            let vector = &set.vectors[&q.id];
            let hits = set
                .index
                .recall(
                    &request,
                    scope,
                    Mode::Hybrid,
                    Some(QueryVector {
                        model: &set.model,
                        vector,
                    }),
                )
                .unwrap();
            let sources: Vec<Source> = hits.iter().map(Into::into).collect();
            let digest: Digest = with_embedder(|e| {
                let mut e = Remembering {
                    inner: e,
                    memory: &mut remembered,
                };
                distill(
                    &sources,
                    &content_words(&q.question),
                    Some(vector),
                    Some(&mut e),
                    counter,
                    budget,
                )
                .unwrap()
            });
            assert!(
                digest.tokens <= budget,
                "{}: {} tokens > {budget}",
                q.id,
                digest.tokens
            );
            for picked in &digest.sentences {
                let source = sources
                    .iter()
                    .find(|s| s.id == picked.memory)
                    .expect("a recalled memory");
                assert!(
                    source.content.contains(&picked.text),
                    "{}: invented {:?}",
                    q.id,
                    picked.text
                );
            }
            let kept = q
                .facts
                .iter()
                .filter(|fact| digest.text.contains(fact.as_str()))
                .count();
            let retrieved = q
                .facts
                .iter()
                .filter(|fact| sources.iter().any(|s| s.content.contains(fact.as_str())))
                .count();
            (
                kept,
                q.facts.len(),
                digest.tokens,
                digest.tokens_of_sources,
                retrieved,
            )
        })
        .collect()
}

/// (share of facts kept, share of questions with every fact kept, token
/// reduction in %, share of facts the top 10 held at all).
fn summary(rows: &[(usize, usize, usize, usize, usize)]) -> (f64, f64, f64, f64) {
    let facts: usize = rows.iter().map(|r| r.1).sum();
    let kept: usize = rows.iter().map(|r| r.0).sum();
    let all_kept = rows.iter().filter(|r| r.0 == r.1).count() as f64 / rows.len() as f64;
    let tokens: usize = rows.iter().map(|r| r.2).sum();
    let sources: usize = rows.iter().map(|r| r.3).sum();
    let retrieved: usize = rows.iter().map(|r| r.4).sum();
    (
        kept as f64 / facts as f64,
        all_kept,
        100.0 * (1.0 - tokens as f64 / sources as f64),
        retrieved as f64 / facts as f64,
    )
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn digests_at_500_tokens_keep_most_gold_facts() {
    let set = eval_set();
    let rows = run(&set, 500, &mut tokenizer());
    let (facts, all, reduction, retrieved) = summary(&rows);
    println!(
        "budget 500: {:.1}% of facts kept ({:.1}% were in the top 10), every fact for {:.1}% of questions, {reduction:.1}% fewer tokens than the top 10",
        facts * 100.0,
        retrieved * 100.0,
        all * 100.0
    );
    // Measured 69.8% / 63.4% / 46.7% with sentence-by-sentence selection;
    // 81.4% / 78.9% / 54.4% with whole short memories, identifiers kept with
    // their sentence and a relevance cut (the top 10 holds 86.0% of the
    // facts). These guard against regressions; the tables on both sets come
    // from `cargo run --example digest_eval` (docs/BENCHMARKS.md).
    assert!(facts >= 0.78, "facts kept: {facts}");
    assert!(all >= 0.74, "questions with every fact: {all}");
    assert!(reduction >= 50.0, "reduction: {reduction}");
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn recall_budget_from_the_command_line() {
    let env = TestEnv::new().with_model();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "-t", "bug-fix", "Fixed JWT validation accepting expired tokens: exp was compared in ms against s (src/auth/jwt.rs). Lunch was pizza."]);
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "The Postgres pool is 50 behind PgBouncer on port 6432.",
        ],
    );
    let digest = json_lines(&env.ok(
        &repo,
        &["recall", "login problems", "--budget", "60", "--json"],
    ));
    let digest = &digest[0];
    let text = digest["digest"].as_str().unwrap();
    assert!(text.contains("src/auth/jwt.rs"), "{text}");
    assert!(!text.contains("pizza"), "{text}");
    assert!(digest["tokens"].as_u64().unwrap() <= 60);
    assert!(digest["tokens"].as_u64().unwrap() < digest["tokens_of_sources"].as_u64().unwrap());
    assert!(digest["reduction_percent"].as_f64().unwrap() > 0.0);
    assert!(
        digest["tokenizer"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{}@", goldfish::adapters::embed::DEFAULT_MODEL))
    );
    // Text output is the digest itself, after the line that frames it as
    // quoted data.
    let plain = env.ok(&repo, &["recall", "login problems", "--budget", "60"]);
    assert_eq!(
        plain,
        format!("{}\n{text}", goldfish::app::render::QUOTED_DATA)
    );
}

/// A stand-in for an LLM CLI (no real LLM runs in tests): records its
/// prompt, counts its calls, and answers as `MODE` says.
const STAND_IN: &str = r#"#!/bin/sh
dir="$(dirname "$0")"
cat > "$dir/prompt.txt"
echo x >> "$dir/calls"
case "${MODE:-ok}" in
  ok) echo "JWT exp was compared in ms against s, so expired tokens passed [01KA]" ;;
  fail) echo "rate limited" >&2; exit 1 ;;
  slow) sleep 5; echo late ;;
  long) i=0; while [ $i -lt 300 ]; do printf 'word%s ' $i; i=$((i+1)); done; echo ;;
  empty) ;;
esac
"#;

struct LlmSetup {
    env: TestEnv,
    repo: std::path::PathBuf,
    dir: std::path::PathBuf,
}

fn llm_setup() -> LlmSetup {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "bug-fix",
            "Fixed JWT validation accepting expired tokens: exp was compared in ms against s.",
        ],
    );
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "Sessions last 15 minutes; refresh tokens 30 days.",
        ],
    );
    let dir = env.path().join("llm");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("llm.sh");
    std::fs::write(&script, STAND_IN).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    LlmSetup { env, repo, dir }
}

impl LlmSetup {
    fn recall(&self, mode: &str, extra: &[&str]) -> serde_json::Value {
        let llm = self.dir.join("llm.sh");
        let mut args = vec!["recall", "JWT tokens", "--budget", "80", "--json"];
        args.extend_from_slice(extra);
        let vars = [
            ("GOLDFISH_DISTILL_COMMAND", llm.to_str().unwrap()),
            ("GOLDFISH_DISTILL_TIMEOUT", "1"),
            ("MODE", mode),
        ];
        serde_json::from_str(&self.env.ok_with(&self.repo, &args, &vars)).unwrap()
    }

    fn calls(&self) -> usize {
        std::fs::read_to_string(self.dir.join("calls")).map_or(0, |s| s.lines().count())
    }
}

#[test]
fn llm_distillation_is_used_and_cached() {
    let setup = llm_setup();
    let first = setup.recall("ok", &[]);
    assert_eq!(first["distill"], "llm", "{first}");
    assert_eq!(first["cached"], false);
    assert!(
        first["digest"]
            .as_str()
            .unwrap()
            .starts_with("JWT exp was compared")
    );
    let prompt = std::fs::read_to_string(setup.dir.join("prompt.txt")).unwrap();
    assert!(prompt.contains("Question: JWT tokens"), "{prompt}");
    assert!(prompt.contains("at most 80 tokens"), "{prompt}");
    assert!(
        prompt.contains("Fixed JWT validation accepting expired tokens"),
        "{prompt}"
    );
    let id = first["sources"][0]["id"].as_str().unwrap();
    assert!(prompt.contains(id), "the prompt cites memory ids: {prompt}");
    assert_eq!(setup.calls(), 1);

    let second = setup.recall("ok", &[]);
    assert_eq!(second["cached"], true);
    assert_eq!(second["digest"], first["digest"]);
    assert_eq!(setup.calls(), 1, "a cache hit does not run the command");

    let bypass = setup.recall("ok", &["--no-cache"]);
    assert_eq!(bypass["cached"], false);
    assert_eq!(setup.calls(), 2);

    let extractive = setup.recall("ok", &["--distill", "extractive"]);
    assert_eq!(extractive["distill"], "extractive");
    assert_eq!(setup.calls(), 2, "extractive never runs the command");
}

#[test]
fn llm_failures_fall_back_to_the_extractive_digest() {
    let setup = llm_setup();
    for (mode, reason) in [
        ("fail", "failed"),
        ("slow", "longer than 1 s"),
        ("long", "over the budget of 80"),
        ("empty", "printed nothing"),
    ] {
        let digest = setup.recall(mode, &["--no-cache"]);
        assert_eq!(digest["distill"], "extractive", "{mode}: {digest}");
        let why = digest["fallback_reason"].as_str().unwrap();
        assert!(why.contains(reason), "{mode}: {why}");
        assert!(
            digest["digest"].as_str().unwrap().contains("JWT"),
            "{mode}: {digest}"
        );
        assert!(digest["tokens"].as_u64().unwrap() <= 80);
    }
    // Nothing failed is cached.
    let after = setup.recall("ok", &[]);
    assert_eq!(after["cached"], false);
}

#[test]
fn llm_mode_needs_a_command() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "Something"]);
    let output = env.goldfish(
        &repo,
        &["recall", "something", "--budget", "50", "--distill", "llm"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("GOLDFISH_DISTILL_COMMAND"));
}

#[test]
fn a_budget_without_a_query_summarises_the_newest() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.set_now("2026-11-19T09:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "plan",
            "Old plan: migrate the billing cron to the worker.",
        ],
    );
    env.set_now("2026-11-21T08:00:00Z");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "checkpoint",
            "Refund flow: API done, webhooks next.",
        ],
    );
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "bug-fix",
            "Fixed the refund rounding bug in src/refunds/amount.rs.",
        ],
    );
    env.set_now(crate::common::NOW);
    let digest = json_lines(&env.ok(
        &repo,
        &["recall", "--since", "24h", "--budget", "100", "--json"],
    ));
    let text = digest[0]["digest"].as_str().unwrap();
    assert!(
        text.contains("Refund flow: API done") && text.contains("src/refunds/amount.rs"),
        "{text}"
    );
    assert!(!text.contains("Old plan"), "outside the window: {text}");
    assert!(
        digest[0]["tokenizer"]
            .as_str()
            .unwrap()
            .starts_with("estimate"),
        "no model here"
    );
}

/// The digest's issue, end to end with the real model: asked for the fix
/// at 80 tokens, the digest keeps the symbol and the commit that carry it,
/// shows no fragment alone, and gives the same bytes twice (what an agent's
/// prompt cache needs).
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn the_fix_survives_a_small_budget_with_its_identifiers() {
    let env = TestEnv::new().with_model();
    let repo = env.repo("r", "Ada");
    for text in [
        "Fixed the auth bug: JWTs were accepted without an issuer claim. TokenService.validate now checks iss against AUTH_ISSUER_URL. Landed in commit a43f9c2.",
        "The auth bug first showed as 401s only in staging, because staging's issuer URL had a trailing slash.",
        "Decided to keep refresh tokens in an httpOnly cookie; access tokens stay in memory. See docs/auth.md.",
    ] {
        env.ok(&repo, &["store", "-t", "insight", text]);
    }
    for n in 1..=20 {
        env.ok(
            &repo,
            &[
                "store",
                "-t",
                "insight",
                &format!("Routine note {n}: updated dependency versions and reran the linters."),
            ],
        );
    }
    let ask = [
        "recall",
        "what was the fix for the auth bug?",
        "--budget",
        "80",
    ];
    let digest = env.ok(&repo, &ask);
    assert!(digest.contains("TokenService.validate"), "{digest}");
    assert!(digest.contains("a43f9c2"), "{digest}");
    assert!(
        digest
            .lines()
            .all(|line| line.trim() != "See docs/auth.md."),
        "{digest}"
    );
    assert!(!digest.contains("Routine note"), "{digest}");
    assert_eq!(
        env.ok(&repo, &ask),
        digest,
        "the same state, the same bytes"
    );
}
