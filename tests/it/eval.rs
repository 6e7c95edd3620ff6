//! Retrieval quality on the labelled set in fixtures/eval/: hybrid recall
//! must beat keyword and semantic recall alone, as measured here.

use std::collections::HashMap;
use std::fs;

use goldfish::embed::{Embedder, TextKind};
use goldfish::eval::{self, Metrics};
use goldfish::index::Index;
use goldfish::index::search::{Mode, Scope};
use goldfish::recall::{DEFAULT_FUSION, Fusion};

use crate::common::{TestEnv, with_embedder};

/// The labelled project synced into an index with embeddings, and the
/// questions with their embeddings.
pub struct EvalSet {
    /// Keeps the tempdir (and the index in it) alive.
    _env: TestEnv,
    pub index: Index,
    pub scope: Scope,
    pub questions: Vec<eval::Question>,
    pub vectors: HashMap<String, Vec<f32>>,
    pub model: String,
}

pub fn eval_set() -> EvalSet {
    let env = TestEnv::new().with_model();
    let repo = env.repo("invoicing", "Eval");
    let memories = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/eval/memories.jsonl");
    fs::copy(memories, repo.join(".goldfish/memories/eval.jsonl")).unwrap();
    env.ok(&repo, &["sync", "--quiet"]);
    let index = Index::open(&env.path().join("home/.goldfish/index.db")).unwrap();
    let row = index
        .workspace_by_root(&repo.canonicalize().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(index.pending_embeddings().unwrap(), 0);
    let questions = eval::questions(include_str!("../../fixtures/eval/questions.json"))
        .expect("questions.json parses");
    let texts: Vec<&str> = questions.iter().map(|q| q.question.as_str()).collect();
    let (model, embedded) = with_embedder(|e| {
        (
            e.model_id().to_owned(),
            e.embed(&texts, TextKind::Query).unwrap(),
        )
    });
    let vectors = questions
        .iter()
        .map(|q| q.id.clone())
        .zip(embedded)
        .collect();
    EvalSet {
        _env: env,
        index,
        scope: Scope::Workspaces(vec![row.id]),
        questions,
        vectors,
        model,
    }
}

impl EvalSet {
    pub fn metrics(&self, mode: Mode, fusion: Fusion) -> Metrics {
        eval::evaluate(
            &self.index,
            &self.scope,
            &self.questions,
            &self.vectors,
            &self.model,
            mode,
            fusion,
        )
        .unwrap()
    }
}

#[test]
fn hybrid_beats_keyword_and_semantic_alone() {
    let set = eval_set();
    let keyword = set.metrics(Mode::Keyword, DEFAULT_FUSION);
    let semantic = set.metrics(Mode::Semantic, DEFAULT_FUSION);
    let hybrid = set.metrics(Mode::Hybrid, DEFAULT_FUSION);
    println!("{} questions", set.questions.len());
    println!("| mode | MRR | hit@1 | hit@5 | recall@10 |");
    for (name, m) in [
        ("keyword", keyword),
        ("semantic", semantic),
        ("hybrid", hybrid),
    ] {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} |",
            m.mrr, m.hit_at_1, m.hit_at_5, m.recall_at_10
        );
    }
    assert!(
        hybrid.mrr > keyword.mrr,
        "hybrid {hybrid:?} vs keyword {keyword:?}"
    );
    assert!(
        hybrid.mrr > semantic.mrr,
        "hybrid {hybrid:?} vs semantic {semantic:?}"
    );
    assert!(hybrid.recall_at_10 >= keyword.recall_at_10.max(semantic.recall_at_10) - 0.02);
}

#[test]
#[ignore = "prints the comparison of fusion strategies; run with --ignored --nocapture"]
fn compare_fusions() {
    let set = eval_set();
    println!("| ranking | MRR | hit@1 | hit@5 | recall@10 |");
    let mut rows = vec![
        (
            "keyword".to_owned(),
            set.metrics(Mode::Keyword, DEFAULT_FUSION),
        ),
        (
            "semantic".to_owned(),
            set.metrics(Mode::Semantic, DEFAULT_FUSION),
        ),
    ];
    for k in [10.0, 30.0, 60.0] {
        rows.push((
            format!("hybrid rrf k={k}"),
            set.metrics(Mode::Hybrid, Fusion::Rrf { k }),
        ));
    }
    for top in [1, 2, 5] {
        for weight in [0.1, 0.2, 0.5] {
            let fusion = Fusion::Lift { top, weight };
            let odd: Vec<eval::Question> = set.questions.iter().step_by(2).cloned().collect();
            let even: Vec<eval::Question> =
                set.questions.iter().skip(1).step_by(2).cloned().collect();
            let half = |qs: &[eval::Question]| {
                eval::evaluate(
                    &set.index,
                    &set.scope,
                    qs,
                    &set.vectors,
                    &set.model,
                    Mode::Hybrid,
                    fusion,
                )
                .unwrap()
                .mrr
            };
            println!(
                "lift top={top} weight={weight}: odd half {:.3}, even half {:.3}",
                half(&odd),
                half(&even)
            );
            rows.push((
                format!("hybrid lift {top} {weight}"),
                set.metrics(Mode::Hybrid, fusion),
            ));
        }
    }
    for (top, weight) in [(1, 0.1), (2, 0.1), (5, 0.1)] {
        rows.push((
            format!("hybrid top-boost {top} {weight}"),
            set.metrics(Mode::Hybrid, Fusion::TopBoost { top, weight }),
        ));
    }
    for keyword in [0.1, 0.2, 0.3, 0.4, 0.5] {
        rows.push((
            format!("hybrid convex {keyword}"),
            set.metrics(Mode::Hybrid, Fusion::Convex { keyword }),
        ));
    }
    for weight in [0.05, 0.1, 0.2, 0.3, 0.5] {
        rows.push((
            format!("hybrid weighted {weight}"),
            set.metrics(Mode::Hybrid, Fusion::Weighted { weight }),
        ));
        rows.push((
            format!("hybrid relative {weight}"),
            set.metrics(Mode::Hybrid, Fusion::Relative { weight }),
        ));
    }
    for (name, m) in rows {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} |",
            m.mrr, m.hit_at_1, m.hit_at_5, m.recall_at_10
        );
    }
    println!();
    println!("MRR by question kind");
    println!("| ranking | keyword | mixed | semantic |");
    let fusions = [
        ("keyword", Mode::Keyword, DEFAULT_FUSION),
        ("semantic", Mode::Semantic, DEFAULT_FUSION),
        ("hybrid (default)", Mode::Hybrid, DEFAULT_FUSION),
        ("hybrid rrf k=60", Mode::Hybrid, Fusion::Rrf { k: 60.0 }),
        (
            "hybrid weighted 0.05",
            Mode::Hybrid,
            Fusion::Weighted { weight: 0.05 },
        ),
        (
            "hybrid relative 0.5",
            Mode::Hybrid,
            Fusion::Relative { weight: 0.5 },
        ),
        (
            "hybrid convex 0.2",
            Mode::Hybrid,
            Fusion::Convex { keyword: 0.2 },
        ),
        (
            "hybrid convex 0.3",
            Mode::Hybrid,
            Fusion::Convex { keyword: 0.3 },
        ),
    ];
    for (name, mode, fusion) in fusions {
        let by_kind: Vec<String> = ["keyword", "mixed", "semantic"]
            .iter()
            .map(|kind| {
                let subset: Vec<eval::Question> = set
                    .questions
                    .iter()
                    .filter(|q| q.kind == *kind)
                    .cloned()
                    .collect();
                let m = eval::evaluate(
                    &set.index,
                    &set.scope,
                    &subset,
                    &set.vectors,
                    &set.model,
                    mode,
                    fusion,
                )
                .unwrap();
                format!("{:.3}", m.mrr)
            })
            .collect();
        println!("| {name} | {} |", by_kind.join(" | "));
    }
}

#[test]
#[ignore = "prints per-question ranks; run with --ignored --nocapture"]
fn per_question_ranks() {
    let set = eval_set();
    let rank = |q: &eval::Question, mode: Mode, fusion: Fusion| -> String {
        let one = std::slice::from_ref(q);
        let m = eval::evaluate(
            &set.index,
            &set.scope,
            one,
            &set.vectors,
            &set.model,
            mode,
            fusion,
        )
        .unwrap();
        if m.mrr > 0.0 {
            format!("{:.0}", 1.0 / m.mrr)
        } else {
            "-".into()
        }
    };
    for q in &set.questions {
        println!(
            "{} {:8} kw={:>2} sem={:>2} cvx={:>2} | {}",
            q.id,
            q.kind,
            rank(q, Mode::Keyword, DEFAULT_FUSION),
            rank(q, Mode::Semantic, DEFAULT_FUSION),
            rank(q, Mode::Hybrid, Fusion::Convex { keyword: 0.3 }),
            q.question
        );
    }
}
