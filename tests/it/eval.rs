//! Retrieval quality on two labelled sets: fixtures/eval/ (memories of a
//! fictional project, written here) and fixtures/longmemeval-sample/ (public
//! conversational data, one memory per dialogue turn). Hybrid recall, the
//! default, must find at least as much as keyword ranking alone on every
//! kind of question of both, and more overall.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;

use crate::labelled::{self as eval, Metrics};
use goldfish::adapters::embed::{Embedder, TextKind};
use goldfish::adapters::index::Index;
use goldfish::adapters::index::search::{Mode, Scope};
use goldfish::domain::recall::{DEFAULT_FUSION, Fusion};

use crate::common::{TestEnv, with_embedder};

/// A labelled set synced into an index with embeddings: each question with
/// the workspace it is asked in and its embedding.
pub struct EvalSet {
    /// Keeps the tempdir (and the index in it) alive.
    _env: TestEnv,
    pub index: Index,
    pub questions: Vec<(eval::Question, Scope)>,
    pub vectors: HashMap<String, Vec<f32>>,
    pub model: String,
}

/// fixtures/eval/: one repository, every question asked in it.
pub fn eval_set() -> EvalSet {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    let questions = eval::questions(&fs::read_to_string(fixtures.join("questions.json")).unwrap())
        .expect("questions.json parses");
    let repos = vec![(
        "invoicing".to_owned(),
        vec![fixtures.join("memories.jsonl")],
    )];
    let questions = questions
        .into_iter()
        .map(|q| (q, "invoicing".to_owned()))
        .collect();
    build(repos, questions)
}

/// fixtures/longmemeval-sample/: each question in a repository of its own
/// haystack.
pub fn longmemeval_sample() -> EvalSet {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/longmemeval-sample");
    let questions = eval::questions(&fs::read_to_string(fixtures.join("questions.json")).unwrap())
        .expect("questions.json parses");
    let repos = questions
        .iter()
        .map(|q| {
            let file = fixtures.join(format!("memories/{}.jsonl", q.id));
            (format!("q-{}", q.id), vec![file])
        })
        .collect();
    let questions = questions
        .into_iter()
        .map(|q| {
            let repo = format!("q-{}", q.id);
            (q, repo)
        })
        .collect();
    build(repos, questions)
}

fn build(
    repos: Vec<(String, Vec<std::path::PathBuf>)>,
    questions: Vec<(eval::Question, String)>,
) -> EvalSet {
    let env = TestEnv::new().with_model();
    let mut scopes = HashMap::new();
    let mut roots = Vec::new();
    for (name, files) in &repos {
        let repo = env.repo(name, "Eval");
        for file in files {
            fs::copy(
                file,
                repo.join(".goldfish/memories")
                    .join(file.file_name().unwrap()),
            )
            .unwrap();
        }
        env.git(&repo, &["add", "-A"]);
        env.git(&repo, &["commit", "-q", "-m", "memories"]);
        env.ok(&repo, &["sync", "--quiet"]);
        roots.push((name.clone(), repo));
    }
    let index = Index::open(&env.path().join("home/.goldfish/index.db")).unwrap();
    assert_eq!(index.pending_embeddings().unwrap(), 0);
    for (name, repo) in roots {
        let row = index
            .workspace_by_root(&repo.canonicalize().unwrap())
            .unwrap()
            .unwrap();
        scopes.insert(name, row.id);
    }
    let texts: Vec<&str> = questions.iter().map(|(q, _)| q.question.as_str()).collect();
    let (model, embedded) = with_embedder(|e| {
        (
            e.model_id().to_owned(),
            e.embed(&texts, TextKind::Query).unwrap(),
        )
    });
    let vectors = questions
        .iter()
        .map(|(q, _)| q.id.clone())
        .zip(embedded)
        .collect();
    let questions = questions
        .into_iter()
        .map(|(q, repo)| (q, Scope::Workspaces(vec![scopes[&repo]])))
        .collect();
    EvalSet {
        _env: env,
        index,
        questions,
        vectors,
        model,
    }
}

impl EvalSet {
    /// Metrics of each question asked alone.
    fn per_question(&self, mode: Mode, fusion: Fusion) -> Vec<(&eval::Question, Metrics)> {
        self.questions
            .iter()
            .map(|(q, scope)| {
                let metrics = eval::evaluate(
                    &self.index,
                    scope,
                    std::slice::from_ref(q),
                    &self.vectors,
                    &self.model,
                    mode,
                    fusion,
                )
                .unwrap();
                (q, metrics)
            })
            .collect()
    }

    /// Mean recall@10 (share of a question's answers in its top 10) by kind
    /// of question, and overall under "overall".
    pub fn recall_by_kind(&self, mode: Mode, fusion: Fusion) -> BTreeMap<String, f64> {
        let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
        for (q, m) in self.per_question(mode, fusion) {
            for key in [q.kind.clone(), "overall".to_owned()] {
                let entry = sums.entry(key).or_default();
                entry.0 += m.recall_at_10;
                entry.1 += 1;
            }
        }
        sums.into_iter()
            .map(|(kind, (sum, n))| (kind, sum / n as f64))
            .collect()
    }

    pub fn metrics(&self, mode: Mode, fusion: Fusion) -> Metrics {
        let all = self.per_question(mode, fusion);
        let n = all.len().max(1) as f64;
        let mut total = Metrics {
            questions: all.len(),
            ..Metrics::default()
        };
        for (_, m) in all {
            total.mrr += m.mrr / n;
            total.hit_at_1 += m.hit_at_1 / n;
            total.hit_at_5 += m.hit_at_5 / n;
            total.recall_at_10 += m.recall_at_10 / n;
        }
        total
    }
}

/// Hybrid recall finds at least what keyword ranking finds on every kind of
/// question, and more overall.
fn assert_hybrid_beats_keyword(set: &EvalSet) {
    let keyword = set.recall_by_kind(Mode::Keyword, DEFAULT_FUSION);
    let hybrid = set.recall_by_kind(Mode::Hybrid, DEFAULT_FUSION);
    for (kind, k) in &keyword {
        let h = hybrid[kind];
        println!("{kind}: keyword {k:.3}, hybrid {h:.3}");
        assert!(h >= *k - 1e-9, "{kind}: hybrid {h:.3} < keyword {k:.3}");
    }
    assert!(
        hybrid["overall"] > keyword["overall"],
        "overall: hybrid {hybrid:?} vs keyword {keyword:?}"
    );
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn hybrid_beats_keyword_on_the_project_set() {
    let set = eval_set();
    assert_hybrid_beats_keyword(&set);
    let keyword = set.metrics(Mode::Keyword, DEFAULT_FUSION);
    let hybrid = set.metrics(Mode::Hybrid, DEFAULT_FUSION);
    assert!(
        hybrid.mrr > keyword.mrr,
        "hybrid {hybrid:?} vs keyword {keyword:?}"
    );
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn hybrid_beats_keyword_on_public_conversations() {
    let set = longmemeval_sample();
    assert_hybrid_beats_keyword(&set);
}
