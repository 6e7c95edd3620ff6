//! Whole-recall benchmark: keyword, semantic, hybrid and hybrid with
//! `--budget 500`, p50 / p95, at 1k, 10k, 100k and 1M memories:
//!
//! - warm: in one process with the model loaded and the index open, as a
//!   long-lived agent integration runs it; each query is new, so it is
//!   embedded by the real model before the search (what `goldfish recall`
//!   does, in the same order, from `Index::query_vector` to `digest::distill`);
//! - cold: `goldfish recall` as a new process (sync check, model load, query
//!   embedding, search, output); its peak memory too;
//! - cold again with the keyword index gone and unwritable, so that each
//!   keyword recall ranks with a copy written in memory: its worst case.
//!
//! The workspace is a synthetic team log (`common/workspace.rs`) synced from
//! git; its vectors are synthetic (embedding a million texts is out of the
//! question; throughput is `--bench embed`), stored under the real model's
//! id through the index's embedding queue. Also prints the index's size on
//! disk and the warm process's resident memory.
//!
//! Needs the model installed (`scripts/bench.sh` or `scripts/test.sh` do it;
//! or set `GOLDFISH_TEST_MODEL_HOME`).
//!
//! Run: `cargo bench --bench recall` (`GOLDFISH_BENCH_SIZES=1000,10000`).

use std::time::{Duration, Instant};

mod common;

use common::report::{Row, emit};
use common::workspace::{Workspace, peak_rss_mb, questions, run};
use common::{ms, percentile, rss_kb};
use goldfish::adapters::embed::onnx::{ModelTokenizer, OnnxEmbedder};
use goldfish::adapters::embed::{Embedder, InstalledModel, TextKind};
use goldfish::adapters::index::Index;
use goldfish::adapters::index::search::{Mode, QueryVector, Scope, content_words};
use goldfish::domain::digest::{Source, TokenCounter, distill, source_tokens};
use goldfish::domain::recall::Request;

/// Workspaces up to this size are committed; larger ones stay in the work
/// tree (committing a million lines adds minutes and nothing to recall).
const COMMIT_MAX: usize = 100_000;
const BUDGET: usize = 500;

#[derive(Clone, Copy)]
enum Kind {
    Keyword,
    Semantic,
    Hybrid,
    Budget,
}

const KINDS: [(Kind, &str); 4] = [
    (Kind::Keyword, "keyword"),
    (Kind::Semantic, "semantic"),
    (Kind::Hybrid, "hybrid"),
    (Kind::Budget, "hybrid --budget 500"),
];

fn main() {
    let sizes = common::sizes(
        "GOLDFISH_BENCH_SIZES",
        &[1000],
        &[1000, 10_000, 100_000, 1_000_000],
    );
    let model = common::installed_model();
    println!("machine: {}", common::machine());
    println!();
    println!(
        "| memories | | keyword p50 / p95 | semantic p50 / p95 | hybrid p50 / p95 | hybrid --budget 500 p50 / p95 | peak RSS | index size |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        measure(n, &model);
    }
}

fn measure(n: usize, model: &InstalledModel) {
    let workspace = Workspace::create(n, n <= COMMIT_MAX);
    workspace.link_model(&common::model_home());
    let sync = run(&mut workspace.sync_keywords());
    let model_id = model.model_id();
    workspace.embed_synthetic(&model_id);
    let index_bytes = workspace.index_bytes();
    if n > COMMIT_MAX {
        // The sync benchmark stops at 100k; this workspace was synced anyway.
        emit(Row::time("sync", "full sync, keywords only", sync).at(n));
    }

    let warm_times = warm(&workspace, model, &model_id, &KINDS, 0);
    let rss = rss_kb() as f64 / 1024.0;
    let cells: Vec<String> = warm_times
        .iter()
        .map(|(p50, p95)| format!("{} / {}", ms(*p50), ms(*p95)))
        .collect();
    println!(
        "| {n} | warm | {} | {rss:.0} MB (process) | {:.0} B/memory |",
        cells.join(" | "),
        index_bytes as f64 / n as f64
    );
    for ((_, name), (p50, p95)) in KINDS.iter().zip(&warm_times) {
        emit(Row::latency("recall, warm", *name, *p50, *p95).at(n));
    }
    // The "nothing relevant" judgement alone (part of each warm row).
    let (p50, p95) = relevance(&workspace);
    println!(
        "| {n} | warm, the relevance judgement alone | {} / {} | | | | | |",
        ms(p50),
        ms(p95)
    );
    emit(Row::latency("recall, warm", "relevance judgement alone", p50, p95).at(n));
    emit(
        Row::new(
            "memory",
            "RSS, warm recall process (model + index open)",
            "MB",
            rss,
        )
        .at(n),
    );
    emit(
        Row::new(
            "index",
            "index size per memory, with vectors",
            "B/memory",
            index_bytes as f64 / n as f64,
        )
        .at(n),
    );
    emit(
        Row::new(
            "index",
            "index size on disk, with vectors",
            "MB",
            index_bytes as f64 / 1e6,
        )
        .at(n),
    );

    // New processes, loading the model themselves; then the same with the
    // home's warm process running (`goldfish model warm`), in the same run.
    for warm_process in [false, true] {
        let _warm = warm_process.then(|| workspace.start_warm());
        let cold = cold(&workspace, warm_process);
        let (label, suffix) = if warm_process {
            ("cold, warm process running", " (warm process running)")
        } else {
            ("cold", "")
        };
        let cells: Vec<String> = cold
            .iter()
            .map(|(p50, p95, _)| format!("{} / {}", ms(*p50), ms(*p95)))
            .collect();
        let peak = cold
            .iter()
            .filter_map(|(_, _, peak)| *peak)
            .fold(0.0, f64::max);
        println!(
            "| {n} | {label} | {} | {peak:.0} MB (peak) | |",
            cells.join(" | ")
        );
        for ((_, name), (p50, p95, peak)) in KINDS.iter().zip(&cold) {
            let name = format!("{name}{suffix}");
            emit(Row::latency("recall, cold", name.clone(), *p50, *p95).at(n));
            if let Some(peak) = peak {
                emit(
                    Row::new(
                        "memory",
                        format!("peak RSS, cold recall, {name}"),
                        "MB",
                        *peak,
                    )
                    .at(n),
                );
            }
        }
    }

    // The keyword index's worst case, same run: gone and unwritable (a
    // folder where its writer's lock goes, as when the disk is full), so
    // each `goldfish recall --mode keyword` process ranks with a copy
    // written in memory from every row.
    let text = workspace.home.join("index.text");
    std::fs::remove_dir_all(&text).expect("remove the keyword index");
    std::fs::create_dir_all(text.join(".tantivy-writer.lock")).expect("block its writer");
    const RUNS: usize = 5;
    let mut times: Vec<Duration> = questions(RUNS, 900)
        .iter()
        .map(|query| {
            run(&mut workspace.goldfish(&[
                "recall",
                query,
                "--mode",
                "keyword",
                "--include-untrusted",
            ]))
        })
        .collect();
    let (p50, p95) = (percentile(&mut times, 50), percentile(&mut times, 95));
    std::fs::remove_dir_all(&text).expect("unblock the keyword index");
    println!(
        "| {n} | cold, keyword index unwritable | {} / {} | | | | | |",
        ms(p50),
        ms(p95)
    );
    emit(
        Row::latency(
            "recall, cold",
            "keyword, keyword index unwritable (a copy in memory)",
            p50,
            p95,
        )
        .at(n),
    );
}

/// The bench workspace as a recall scope.
fn scope_of(index: &Index, workspace: &Workspace) -> Scope {
    Scope::Workspaces(vec![
        index
            .workspace_by_root(&workspace.repo)
            .unwrap()
            .unwrap()
            .id,
    ])
}

/// p50 and p95 of the "nothing relevant" judgement (`Index::relevance`),
/// in process.
fn relevance(workspace: &Workspace) -> (Duration, Duration) {
    let index = Index::open(&workspace.home.join("index.db")).unwrap();
    let scope = scope_of(&index, workspace);
    let mut times: Vec<Duration> = questions(30, 700)
        .into_iter()
        .enumerate()
        .filter_map(|(i, query)| {
            let start = Instant::now();
            index.relevance(&query, &scope).unwrap();
            (i >= 5).then(|| start.elapsed())
        })
        .collect();
    (percentile(&mut times, 50), percentile(&mut times, 95))
}

/// p50 and p95 of each kind of recall, in process.
fn warm(
    workspace: &Workspace,
    model: &InstalledModel,
    model_id: &str,
    kinds: &[(Kind, &str)],
    first_question: usize,
) -> Vec<(Duration, Duration)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut embedder = OnnxEmbedder::load(model, threads).expect("load the model");
    let mut tokenizer = ModelTokenizer::load(model).expect("load the tokenizer");
    let mut index = Index::open(&workspace.home.join("index.db")).unwrap();
    let scope = scope_of(&index, workspace);
    const WARM_UP: usize = 5;
    const TIMED: usize = 25;
    kinds
        .iter()
        .enumerate()
        .map(|(k, (kind, _))| {
            let mut times: Vec<Duration> = questions(WARM_UP + TIMED, first_question + k * 100)
                .into_iter()
                .enumerate()
                .filter_map(|(i, query)| {
                    let start = Instant::now();
                    recall_in_process(
                        &mut index,
                        &scope,
                        &mut embedder,
                        &mut tokenizer,
                        model_id,
                        *kind,
                        query,
                    );
                    (i >= WARM_UP).then(|| start.elapsed())
                })
                .collect();
            (percentile(&mut times, 50), percentile(&mut times, 95))
        })
        .collect()
}

/// What `goldfish recall` does once it has synced, without the output.
fn recall_in_process(
    index: &mut Index,
    scope: &Scope,
    embedder: &mut OnnxEmbedder,
    tokenizer: &mut ModelTokenizer,
    model_id: &str,
    kind: Kind,
    query: String,
) {
    let mode = match kind {
        Kind::Keyword => Mode::Keyword,
        Kind::Semantic => Mode::Semantic,
        Kind::Hybrid | Kind::Budget => Mode::Hybrid,
    };
    let vector = match mode {
        Mode::Keyword => None,
        _ => Some(
            index
                .query_vector(model_id, &query, || -> anyhow::Result<Vec<f32>> {
                    Ok(embedder
                        .embed(&[query.as_str()], TextKind::Query)?
                        .remove(0))
                })
                .unwrap(),
        ),
    };
    // What recall asks first: is the question about anything the log holds?
    let judgement = index.relevance(&query, scope).unwrap();
    assert!(judgement.relevant, "{query:?}: {}", judgement.reason());
    let request = Request {
        query: Some(query),
        limit: 10,
        ..Request::default()
    };
    let hits = index
        .recall(
            &request,
            scope,
            mode,
            vector.as_deref().map(|vector| QueryVector {
                model: model_id,
                vector,
            }),
        )
        .unwrap();
    assert!(!hits.is_empty(), "no memory matches {:?}", request.query);
    if let Kind::Budget = kind {
        let sources: Vec<Source> = hits.iter().map(Into::into).collect();
        let words = content_words(request.query.as_deref().unwrap_or_default());
        source_tokens(&sources, &mut *tokenizer as &mut dyn TokenCounter);
        let digest = distill(
            &sources,
            &words,
            vector.as_deref(),
            Some(&mut *embedder as &mut dyn Embedder),
            tokenizer,
            BUDGET,
        )
        .unwrap();
        assert!(digest.tokens <= BUDGET);
    }
}

/// p50, p95 and peak memory (MB, one more run under GNU time) of
/// `goldfish recall` processes, per kind; with `warm_process`, allowed to
/// ask the home's warm process for their query vectors.
fn cold(workspace: &Workspace, warm_process: bool) -> Vec<(Duration, Duration, Option<f64>)> {
    const RUNS: usize = 7;
    KINDS
        .iter()
        .enumerate()
        .map(|(k, (kind, _))| {
            let flags: &[&str] = match kind {
                Kind::Keyword => &["--mode", "keyword"],
                Kind::Semantic => &["--mode", "semantic"],
                Kind::Hybrid => &[],
                Kind::Budget => &["--budget", "500"],
            };
            // The synthetic log's memories name five authors, all committed
            // by the bench's one identity: each is quarantined
            // (`author-mismatch`), so they are asked for (the in-process
            // recalls above take them too).
            let recall = |query: &str| {
                let mut args = vec!["recall", query, "--include-untrusted"];
                args.extend_from_slice(flags);
                if warm_process {
                    workspace.goldfish_warm(&args)
                } else {
                    workspace.goldfish(&args)
                }
            };
            // Other questions with the warm process: none is answered from
            // the index's cache of query vectors.
            let offset = 500 + k * 100 + if warm_process { 50 } else { 0 };
            let queries = questions(RUNS + 1, offset);
            let mut times: Vec<Duration> = queries[..RUNS]
                .iter()
                .map(|query| run(&mut recall(query)))
                .collect();
            (
                percentile(&mut times, 50),
                percentile(&mut times, 95),
                peak_rss_mb(&recall(&queries[RUNS])),
            )
        })
        .collect()
}
