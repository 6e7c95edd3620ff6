//! How much of the answer the extractive digest keeps, on public data and on
//! fixtures/eval/, at several budgets.
//!
//! Input: the top 10 memories per question as the default ranking returns
//! them, written by `scripts/eval/fusion_offline.py --dump-top FILE` (one
//! JSON line per question: set, id, type, question, LongMemEval's `answer`
//! and `evidence` memory ids, fixtures/eval's `facts`, the `sources`).
//!
//! ```text
//! cargo run --release --example digest_eval -- FILE [--budgets 200,500,1000]
//! ```
//!
//! What is kept (docs/BENCHMARKS.md, "What the digest keeps"):
//! - LongMemEval: for each evidence turn in the top 10, its answer sentence
//!   (split as the digest splits): the first sentence containing the gold
//!   answer (case-insensitive); else the one sharing most of the answer's
//!   content words; else most of the question's; else the first. Kept when
//!   the digest contains that sentence verbatim.
//! - fixtures/eval: each gold fact (an exact substring of an answer memory)
//!   present in the top 10; kept when the digest contains it.
//!
//! Tokens: the digest's against the top 10 rendered whole the same way,
//! counted with the model's tokenizer. Every picked sentence is checked to
//! be a substring of its memory.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use goldfish::adapters::embed::onnx::{ModelTokenizer, OnnxEmbedder};
use goldfish::adapters::embed::{DEFAULT_MODEL, EmbedError, Embedder, InstalledModel, TextKind};
use goldfish::adapters::index::search::content_words;
use goldfish::domain::digest::{Source, distill, sentences};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    set: String,
    id: String,
    #[serde(rename = "type")]
    kind: String,
    question: String,
    answer: Option<String>,
    #[serde(default)]
    facts: Vec<String>,
    #[serde(default)]
    evidence: Vec<String>,
    sources: Vec<DumpedSource>,
}

#[derive(Deserialize)]
struct DumpedSource {
    id: String,
    date: String,
    kind: String,
    content: String,
}

/// What a question's digest kept at one budget.
#[derive(Default, Clone, Copy)]
struct Tally {
    questions: usize,
    /// Evidence (answer sentences or facts) the top 10 hold.
    held: usize,
    kept: usize,
    tokens: usize,
    tokens_of_sources: usize,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.questions += other.questions;
        self.held += other.held;
        self.kept += other.kept;
        self.tokens += other.tokens;
        self.tokens_of_sources += other.tokens_of_sources;
    }
}

/// The model, with every vector kept on disk by text between runs (the
/// sentences of 10 long memories a question take most of a run).
struct Cached {
    inner: OnnxEmbedder,
    vectors: std::collections::HashMap<String, Vec<f32>>,
    path: PathBuf,
    dirty: bool,
}

impl Cached {
    fn open(inner: OnnxEmbedder, path: PathBuf) -> Self {
        let mut vectors = std::collections::HashMap::new();
        if let Ok(bytes) = std::fs::read(&path) {
            let mut at = 0;
            let dims = inner.dims();
            while at + 4 <= bytes.len() {
                let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
                at += 4;
                let text = String::from_utf8_lossy(&bytes[at..at + len]).into_owned();
                at += len;
                let vector = bytes[at..at + 4 * dims]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect();
                at += 4 * dims;
                vectors.insert(text, vector);
            }
        }
        Cached {
            inner,
            vectors,
            path,
            dirty: false,
        }
    }

    fn save(&self) {
        if !self.dirty {
            return;
        }
        let mut bytes = Vec::new();
        for (text, vector) in &self.vectors {
            bytes.extend((text.len() as u32).to_le_bytes());
            bytes.extend(text.as_bytes());
            for x in vector {
                bytes.extend(x.to_le_bytes());
            }
        }
        std::fs::write(&self.path, bytes).expect("writing the vector cache");
    }
}

impl Embedder for Cached {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dims(&self) -> usize {
        self.inner.dims()
    }

    fn embed(&mut self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        let key = |text: &str| format!("{kind:?}\u{0}{text}");
        let missing: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !self.vectors.contains_key(&key(t)))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !missing.is_empty() {
            for (text, vector) in missing.iter().zip(self.inner.embed(&missing, kind)?) {
                self.vectors.insert(key(text), vector);
            }
            self.dirty = true;
        }
        Ok(texts
            .iter()
            .map(|t| self.vectors[&key(t)].clone())
            .collect())
    }
}

fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The sentence of `content` that carries `answer` (see the module's doc).
fn answer_sentence(content: &str, answer: &str, question: &str) -> String {
    let all = sentences(content);
    let needle = answer.trim().to_lowercase();
    if !needle.is_empty()
        && let Some(hit) = all.iter().find(|s| s.to_lowercase().contains(&needle))
    {
        return hit.clone();
    }
    for cue in [answer, question] {
        let cue: HashSet<String> = content_words(cue).into_iter().collect();
        let best = all
            .iter()
            .map(|s| (words(s).intersection(&cue).count(), s))
            .rev() // max_by_key keeps the last maximum: the first sentence wins ties
            .max_by_key(|(shared, _)| *shared);
        if let Some((shared, sentence)) = best
            && shared > 0
        {
            return sentence.clone();
        }
    }
    all.into_iter().next().unwrap_or_default()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut budgets = vec![200, 500, 1000];
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--budgets" => {
                budgets = args
                    .next()
                    .expect("--budgets needs a list")
                    .split(',')
                    .map(|b| b.parse().expect("a budget is a number"))
                    .collect();
            }
            _ => file = Some(PathBuf::from(arg)),
        }
    }
    let file = file.expect("usage: digest_eval FILE [--budgets 200,500,1000]");
    let home = std::env::var_os("GOLDFISH_TEST_MODEL_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/model-home"));
    let model = InstalledModel::find(&home.join("models"), &home.join("runtime"), DEFAULT_MODEL)
        .expect("reading the model")
        .expect("the model is installed: goldfish model install");
    let onnx = OnnxEmbedder::load(&model, 2).expect("loading the model");
    let key = blake3::hash(onnx.model_id().as_bytes()).to_hex();
    let cache = std::env::temp_dir().join(format!("goldfish-digest-eval-{}.vectors", &key[..16]));
    let mut embedder = Cached::open(onnx, cache);
    let mut counter = ModelTokenizer::load(&model).expect("loading the tokenizer");
    let text = std::fs::read_to_string(&file).expect("reading the cases");
    // (set, type, budget) → tally
    let mut tallies: BTreeMap<(String, String, usize), Tally> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Case = serde_json::from_str(line).expect("a case line");
        let sources: Vec<Source> = case
            .sources
            .iter()
            .map(|s| Source {
                id: s.id.clone(),
                date: s.date.clone(),
                kind: s.kind.clone(),
                content: s.content.clone(),
                untrusted: false,
                author: None,
                commit: None,
            })
            .collect();
        let query = embedder
            .embed(&[case.question.as_str()], TextKind::Query)
            .expect("embedding the question")
            .remove(0);
        // What counts as the answer in the top 10.
        let evidence: Vec<String> = match &case.answer {
            Some(answer) => sources
                .iter()
                .filter(|s| case.evidence.contains(&s.id))
                .map(|s| answer_sentence(&s.content, answer, &case.question))
                .collect(),
            None => case
                .facts
                .iter()
                .filter(|fact| sources.iter().any(|s| s.content.contains(fact.as_str())))
                .cloned()
                .collect(),
        };
        if evidence.is_empty() && case.answer.is_none() && case.facts.is_empty() {
            continue; // no gold to score against
        }
        for &budget in &budgets {
            let digest = distill(
                &sources,
                &content_words(&case.question),
                Some(&query),
                Some(&mut embedder),
                &mut counter,
                budget,
            )
            .expect("distilling");
            assert!(digest.tokens <= budget, "{}: over the budget", case.id);
            for picked in &digest.sentences {
                let source = sources.iter().find(|s| s.id == picked.memory).unwrap();
                assert!(
                    source.content.contains(&picked.text),
                    "{}: {:?} is not in its memory",
                    case.id,
                    picked.text
                );
            }
            let tally = Tally {
                questions: 1,
                held: evidence.len(),
                kept: evidence
                    .iter()
                    .filter(|e| digest.text.contains(e.as_str()))
                    .count(),
                tokens: digest.tokens,
                tokens_of_sources: digest.tokens_of_sources,
            };
            for kind in [case.kind.as_str(), "overall"] {
                tallies
                    .entry((case.set.clone(), kind.to_owned(), budget))
                    .or_default()
                    .add(tally);
            }
        }
    }
    embedder.save();
    let sets: Vec<String> = tallies
        .keys()
        .map(|(set, _, _)| set.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for set in sets {
        println!("\n{set}\n");
        let mut header =
            "| type | questions | top-10 tokens (mean) | evidence in the top 10 |".to_owned();
        let mut rule = "|---|---:|---:|---:|".to_owned();
        for budget in &budgets {
            header.push_str(&format!(" kept @{budget} | tokens @{budget} |"));
            rule.push_str("---:|---:|");
        }
        println!("{header}\n{rule}");
        let kinds: Vec<String> = tallies
            .keys()
            .filter(|(s, kind, _)| *s == set && kind != "overall")
            .map(|(_, kind, _)| kind.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .chain(["overall".to_owned()])
            .collect();
        for kind in kinds {
            let first = tallies[&(set.clone(), kind.clone(), budgets[0])];
            let label = if kind == "overall" {
                format!("**{kind}**")
            } else {
                kind.clone()
            };
            let mut row = format!(
                "| {label} | {} | {} | {} |",
                first.questions,
                first.tokens_of_sources / first.questions.max(1),
                first.held
            );
            for budget in &budgets {
                let t = tallies[&(set.clone(), kind.clone(), *budget)];
                row.push_str(&format!(
                    " {:.1}% | {:.1}% |",
                    100.0 * t.kept as f64 / t.held.max(1) as f64,
                    100.0 * t.tokens as f64 / t.tokens_of_sources.max(1) as f64
                ));
            }
            println!("{row}");
        }
    }
}
