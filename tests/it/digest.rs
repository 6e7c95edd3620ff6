//! Digests on the labelled set: within the budget, most gold facts kept, a
//! large reduction against the recalled memories, nothing invented.

use goldfish::digest::{Digest, Source, TokenCounter, distill};
use goldfish::embed::onnx::ModelTokenizer;
use goldfish::embed::{DEFAULT_MODEL, InstalledModel};
use goldfish::index::search::{Mode, QueryVector, content_words};
use goldfish::recall::Request;

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
    set.questions
        .iter()
        .map(|q| {
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
                    &set.scope,
                    Mode::Hybrid,
                    Some(QueryVector {
                        model: &set.model,
                        vector,
                    }),
                )
                .unwrap();
            let sources: Vec<Source> = hits.iter().map(Into::into).collect();
            let digest: Digest = with_embedder(|e| {
                distill(
                    &sources,
                    &content_words(&q.question),
                    Some(vector),
                    Some(e),
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
    // Measured 74.4% / 70.4% / 47.1% when written; these guard against regressions.
    assert!(facts >= 0.70, "facts kept: {facts}");
    assert!(all >= 0.65, "questions with every fact: {all}");
    assert!(reduction >= 40.0, "reduction: {reduction}");
}

#[test]
#[ignore = "prints the digest table per budget; run with --ignored --nocapture"]
fn digest_table() {
    let set = eval_set();
    let mut counter = tokenizer();
    println!(
        "| budget | gold facts kept | in the top 10 at all | questions with every fact | tokens vs top-10 memories |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for budget in [200, 500, 1000] {
        let (facts, all, reduction, retrieved) = summary(&run(&set, budget, &mut counter));
        println!(
            "| {budget} | {:.1}% | {:.1}% | {:.1}% | −{reduction:.1}% |",
            facts * 100.0,
            retrieved * 100.0,
            all * 100.0
        );
    }
}

#[test]
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
            .starts_with("all-MiniLM-L6-v2@")
    );
    // Text output is the digest itself.
    let plain = env.ok(&repo, &["recall", "login problems", "--budget", "60"]);
    assert_eq!(plain, text);
}
