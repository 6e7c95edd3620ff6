//! Semantic and hybrid recall with the real model: concepts find memories
//! that share no words with the question.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{TestEnv, json_lines};

/// Memories of a small project: three answers and distractors that share
/// vocabulary with the questions.
const MEMORIES: &[(&str, &str)] = &[
    (
        "bug-fix",
        "Fixed JWT validation accepting expired tokens: exp was compared in ms against s",
    ),
    (
        "bug-fix",
        "Slow database query latency on the invoices list: added an index on (customer_id, created_at)",
    ),
    (
        "bug-fix",
        "Transaction rollback on write failure lost the user's changes; the handler now retries the commit",
    ),
    ("decision", "Chose Tailwind for the settings page styles"),
    (
        "insight",
        "Problems with the staging deploy were a stale DNS record, not the app",
    ),
    (
        "observation",
        "The CI cache key now includes the Cargo.lock hash",
    ),
    (
        "refactor",
        "Moved the CSV export code into src/export/ and split it per format",
    ),
    (
        "plan",
        "Saving 20% on the cloud bill next quarter by moving the worker to spot instances",
    ),
];

fn project(env: &TestEnv) -> std::path::PathBuf {
    let repo = env.repo("project", "Ada");
    for (kind, content) in MEMORIES {
        env.ok(&repo, &["store", "-t", kind, content]);
    }
    repo
}

fn first(env: &TestEnv, repo: &Path, query: &str, mode: &str) -> Option<String> {
    let output = env.goldfish(
        repo,
        &["recall", query, "--mode", mode, "--json", "-n", "3"],
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    json_lines(&stdout)
        .first()
        .map(|m| m["content"].as_str().unwrap().to_owned())
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn concepts_find_memories_keywords_miss() {
    let env = TestEnv::new().with_model();
    let repo = project(&env);
    let cases = [
        ("login problems", "Fixed JWT validation"),
        ("performance", "Slow database query latency"),
        ("data not saving", "Transaction rollback on write failure"),
    ];
    for (question, answer) in cases {
        let got = first(&env, &repo, question, "semantic");
        assert!(
            got.as_deref().is_some_and(|c| c.starts_with(answer)),
            "semantic recall of {question:?} should rank {answer:?} first, got {got:?}"
        );
        // Hybrid ranking leans on words ("problems" matches another memory),
        // and still finds it.
        let hybrid = json_lines(&env.ok(
            &repo,
            &["recall", question, "--mode", "hybrid", "--json", "-n", "3"],
        ));
        assert!(
            hybrid
                .iter()
                .any(|m| m["content"].as_str().unwrap().starts_with(answer)),
            "hybrid recall of {question:?} should have {answer:?} in its top 3"
        );
        let keyword = first(&env, &repo, question, "keyword");
        assert!(
            !keyword.as_deref().is_some_and(|c| c.starts_with(answer)),
            "keyword recall of {question:?} is not expected to find {answer:?} first (got it: the case proves nothing)"
        );
    }
    // Hybrid is the default with a model; each score is read off its parts
    // and their weights, all in the output: the keyword weight × keyword
    // relevance relative to the best match + the semantic weight × similarity
    // (+ a time cue's boost, none here). The weights are the default fusion's.
    let (keyword_weight, semantic_weight) =
        goldfish::domain::recall::DEFAULT_FUSION.weights().unwrap();
    let default: Vec<Value> =
        json_lines(&env.ok(&repo, &["recall", "data not saving", "--json", "-n", "8"]));
    assert!(
        default[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Transaction rollback")
    );
    let mut similarities = Vec::new();
    for hit in &default {
        let score = hit["score"].as_f64().unwrap();
        let similarity = hit["similarity"].as_f64().unwrap();
        let ranking = &hit["ranking"];
        let keyword = ranking["keyword"].as_f64().unwrap();
        let semantic = ranking["semantic"].as_f64().unwrap();
        assert_eq!(ranking["time_cue"].as_f64(), Some(0.0), "{hit}");
        assert_eq!(
            ranking["keyword_weight"].as_f64(),
            Some(keyword_weight),
            "{hit}"
        );
        assert_eq!(
            ranking["semantic_weight"].as_f64(),
            Some(semantic_weight),
            "{hit}"
        );
        assert!(
            (score - (keyword_weight * keyword + semantic_weight * semantic)).abs() < 1e-3,
            "{hit}"
        );
        assert!((semantic - similarity.max(0.0)).abs() < 1e-3, "{hit}");
        similarities.push((similarity, semantic));
        assert_eq!(keyword > 0.0, ranking["keyword_rank"].is_u64(), "{hit}");
    }
    // The semantic part keeps the similarities' order.
    for (a, rescaled_a) in &similarities {
        for (b, rescaled_b) in &similarities {
            if a > b {
                assert!(rescaled_a >= rescaled_b, "{similarities:?}");
            }
        }
    }
    // --min-score keeps only what scores that high.
    let threshold = default[0]["score"].as_f64().unwrap() - 1e-4;
    let strict = json_lines(&env.ok(
        &repo,
        &[
            "recall",
            "data not saving",
            "--json",
            "--min-score",
            &threshold.to_string(),
        ],
    ));
    assert_eq!(strict.len(), 1);
}

#[test]
fn sync_embeds_only_new_content_and_once_per_text() {
    let env = TestEnv::new().with_fake_model();
    let (_remote, alice, bob) = env.team();
    env.ok(&bob, &["sync"]);
    // Alice and Bob share this test's GOLDFISH_HOME: Alice stores with a model
    // that is not installed, so her stores leave the embedding to Bob's sync.
    let store = |text: &str| {
        env.ok_with(
            &alice,
            &["store", text],
            &[("GOLDFISH_MODEL", "not-installed")],
        );
    };
    store("Retry payments with exponential backoff");
    store("Invoices are numbered per customer and year");
    // Same text in another memory (another day): one embedding.
    env.set_now("2026-11-22T09:00:00Z");
    store("Retry payments with exponential backoff");
    env.commit_all(&alice, "memories");
    env.git(&alice, &["push", "-q"]);
    // Hooks off, so the explicit sync below is the one that embeds.
    let pull = env
        .command("git", &bob)
        .env("GOLDFISH", "0")
        .args(["pull", "-q"])
        .output()
        .unwrap();
    assert!(pull.status.success());
    let report: Value = serde_json::from_str(&env.ok(&bob, &["sync", "--json"])).unwrap();
    assert_eq!(report["memories_added"], 3, "{report}");
    assert_eq!(
        report["embedded"], 2,
        "identical content is embedded once: {report}"
    );
    assert_eq!(report["pending_embeddings"], 0);
    let again: Value = serde_json::from_str(&env.ok(&bob, &["sync", "--json"])).unwrap();
    assert_eq!(again["embedded"], 0, "{again}");
}

/// Gives `env`'s home a models folder of its own (the tests share one,
/// read-only) holding the default model, and returns that model's folder.
fn own_models_folder(env: &TestEnv) -> std::path::PathBuf {
    let installed = crate::common::model_home()
        .join("models")
        .join(goldfish::adapters::embed::DEFAULT_MODEL);
    let models = env.path().join("home/.goldfish/models");
    fs::remove_file(&models).unwrap();
    fs::create_dir_all(&models).unwrap();
    std::os::unix::fs::symlink(
        &installed,
        models.join(goldfish::adapters::embed::DEFAULT_MODEL),
    )
    .unwrap();
    installed
}

/// A folder `model install --from` takes: the files of the model in
/// `installed`, its manifest renamed `name` and changed by `edit`.
fn model_folder(
    env: &TestEnv,
    installed: &Path,
    name: &str,
    edit: impl FnOnce(&mut Value),
) -> std::path::PathBuf {
    let source = env.path().join(name);
    fs::create_dir_all(&source).unwrap();
    for file in ["model.onnx", "tokenizer.json"] {
        fs::copy(installed.join(file), source.join(file)).unwrap();
    }
    let mut manifest: Value =
        serde_json::from_str(&fs::read_to_string(installed.join("manifest.json")).unwrap())
            .unwrap();
    manifest["name"] = name.into();
    edit(&mut manifest);
    fs::write(source.join("manifest.json"), manifest.to_string()).unwrap();
    source
}

/// The standard output of a goldfish command run with the model `model`.
fn with_model(env: &TestEnv, repo: &Path, model: &str, args: &[&str]) -> String {
    env.ok_with(repo, args, &[("GOLDFISH_MODEL", model)])
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn a_model_change_re_embeds_everything() {
    let env = TestEnv::new().with_model();
    let repo = project(&env);
    let first: Value = serde_json::from_str(&env.ok(&repo, &["sync", "--json"])).unwrap();
    assert_eq!(first["pending_embeddings"], 0);

    // The same files under another name are another model as far as the
    // index knows: installed with --from and a manifest of its own.
    let installed = own_models_folder(&env);
    let source = model_folder(&env, &installed, "minilm-copy", |_| {});
    let out = env.ok(
        &repo,
        &["model", "install", "--from", source.to_str().unwrap()],
    );
    assert!(out.contains("minilm-copy"), "{out}");

    let report: Value =
        serde_json::from_str(&with_model(&env, &repo, "minilm-copy", &["sync", "--json"])).unwrap();
    assert_eq!(report["embedded"], MEMORIES.len(), "{report}");
    let status: Value = serde_json::from_str(&with_model(
        &env,
        &repo,
        "minilm-copy",
        &["status", "--json"],
    ))
    .unwrap();
    assert!(
        status["model"]
            .as_str()
            .unwrap()
            .starts_with("minilm-copy@"),
        "{status}"
    );
}

/// Issue 59: an index embedded by the fp32 model (the default before int8)
/// moves to the default model on its own: the first read answers at once
/// (on keywords for what the new model has not embedded, and says so), a
/// background sync embeds the rest with int8, and from then semantic
/// recall works on the new vectors. fp32 stays one setting away.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn an_index_embedded_by_fp32_moves_to_the_default_in_the_background() {
    use goldfish::adapters::embed::{DEFAULT_MODEL, FP32_MODEL};
    use goldfish::app::sync::READ_EMBED_LIMIT;
    assert_ne!(DEFAULT_MODEL, FP32_MODEL);
    let env = TestEnv::new().with_model();
    let repo = project(&env);
    // More memories than a read embeds itself, so the rest is left to the
    // background.
    let lines: String = (0..READ_EMBED_LIMIT + 40)
        .map(|n| {
            format!(
                "{{\"id\":\"01JZ{n:022}\",\"type\":\"observation\",\"content\":\"Filler note {n} about the build of module m{n}\",\"timestamp\":\"2026-01-01T00:00:00Z\"}}\n"
            )
        })
        .collect();
    fs::write(repo.join(".goldfish/memories/filler.jsonl"), lines).unwrap();
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "filler"]);
    let fp32 = [("GOLDFISH_MODEL", FP32_MODEL)];
    let report: Value =
        serde_json::from_str(&env.ok_with(&repo, &["sync", "--json"], &fp32)).unwrap();
    assert_eq!(report["pending_embeddings"], 0, "{report}");
    let status: Value =
        serde_json::from_str(&env.ok_with(&repo, &["status", "--json"], &fp32)).unwrap();
    assert!(
        status["model"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{FP32_MODEL}@")),
        "{status}"
    );

    // The default model now: the read answers, on keywords for the rest.
    let read = env.goldfish(&repo, &["recall", "JWT validation", "--json", "-n", "3"]);
    assert!(read.status.success(), "{read:?}");
    let hits = json_lines(&String::from_utf8(read.stdout).unwrap());
    assert!(
        hits[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Fixed JWT validation"),
        "{hits:?}"
    );
    let stderr = String::from_utf8_lossy(&read.stderr);
    assert!(
        stderr.contains("found by keywords only")
            && stderr.contains("background `goldfish sync` is embedding the rest"),
        "{stderr}"
    );

    // The background sync embeds everything with the default model.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        let status: Value = serde_json::from_str(&env.ok(&repo, &["status", "--json"])).unwrap();
        let moved = status["model"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("{DEFAULT_MODEL}@")));
        if moved && status["pending_embeddings"] == 0 {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not re-embedded in 2 minutes: {status}"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    assert_eq!(
        status["memories_in_index"],
        MEMORIES.len() + READ_EMBED_LIMIT + 40
    );
    let found = first(&env, &repo, "login problems", "semantic");
    assert!(
        found
            .as_deref()
            .is_some_and(|c| c.starts_with("Fixed JWT validation")),
        "{found:?}"
    );
}

/// A model of another family (bge's `[CLS]` pooling, e5's `query: ` and
/// `passage: ` prefixes) comes from its files and a manifest saying so;
/// here all-MiniLM-L6-v2's files stand in for it, so only the settings
/// differ, and what they change is the vectors. A pooling goldfish does not
/// know is refused, naming the manifest.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn a_model_of_another_family_brings_its_pooling_and_prefixes() {
    let env = TestEnv::new().with_model();
    let repo = project(&env);
    env.ok(&repo, &["sync"]);
    let installed = own_models_folder(&env);
    let folder = |name: &str, pooling: &str| {
        model_folder(&env, &installed, name, |manifest| {
            manifest["pooling"] = pooling.into();
            manifest["query_prefix"] = "query: ".into();
            manifest["document_prefix"] = "passage: ".into();
        })
    };

    let odd = folder("odd-pooling", "max");
    let refused = env.goldfish(
        &repo,
        &["model", "install", "--from", odd.to_str().unwrap()],
    );
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("manifest.json") && stderr.contains("pooling `max`"),
        "{stderr}"
    );

    let cls = folder("cls-prefixed", "cls");
    let out = env.ok(
        &repo,
        &["model", "install", "--from", cls.to_str().unwrap()],
    );
    assert!(out.contains("cls-prefixed"), "{out}");
    let synced: Value = serde_json::from_str(&with_model(
        &env,
        &repo,
        "cls-prefixed",
        &["sync", "--json"],
    ))
    .unwrap();
    assert_eq!(synced["embedded"], MEMORIES.len(), "{synced}");
    let similarity = |model: &str| -> f64 {
        let hits: Vec<Value> = with_model(
            &env,
            &repo,
            model,
            &[
                "recall",
                "--mode",
                "semantic",
                "--json",
                "expired login tokens",
            ],
        )
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
        let jwt = hits
            .iter()
            .find(|hit| hit["content"].as_str().unwrap().contains("JWT"))
            .expect("the JWT fix is among the results");
        jwt["similarity"].as_f64().unwrap()
    };
    let (mean, cls) = (
        similarity(goldfish::adapters::embed::DEFAULT_MODEL),
        similarity("cls-prefixed"),
    );
    assert!(
        (mean - cls).abs() > 0.01,
        "mean {mean}, cls with prefixes {cls}"
    );
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn a_tampered_model_file_is_refused() {
    let env = TestEnv::new();
    let source = env.path().join("bad-model");
    fs::create_dir_all(&source).unwrap();
    let installed = crate::common::model_home()
        .join("models")
        .join(goldfish::adapters::embed::DEFAULT_MODEL);
    fs::copy(
        installed.join("tokenizer.json"),
        source.join("tokenizer.json"),
    )
    .unwrap();
    fs::copy(
        installed.join("manifest.json"),
        source.join("manifest.json"),
    )
    .unwrap();
    fs::write(source.join("model.onnx"), b"not the model").unwrap();
    let output = env.goldfish(
        env.path(),
        &["model", "install", "--from", source.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("checksum mismatch") && stderr.contains("model.onnx"),
        "{stderr}"
    );
}

#[test]
fn without_a_model_recall_uses_keywords_and_says_so_once() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "Payments retry with exponential backoff"]);
    let first = env.goldfish(&repo, &["recall", "backoff"]);
    assert_eq!(first.status.code(), Some(0));
    let notice = String::from_utf8_lossy(&first.stderr);
    assert!(notice.contains("goldfish model install"), "{notice}");
    let second = env.goldfish(&repo, &["recall", "backoff"]);
    assert_eq!(second.status.code(), Some(0));
    assert!(
        second.stderr.is_empty(),
        "said once: {}",
        String::from_utf8_lossy(&second.stderr)
    );
    let status = env.ok(&repo, &["status"]);
    assert!(status.contains("goldfish model install"), "{status}");
    let semantic = env.goldfish(&repo, &["recall", "backoff", "--mode", "semantic"]);
    assert_eq!(semantic.status.code(), Some(2));
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn similar_finds_near_duplicates_and_store_warns() {
    let env = TestEnv::new().with_model();
    let repo = project(&env);
    let output = env.goldfish(
        &repo,
        &[
            "store",
            "Fixed JWT validation that accepted expired tokens: exp compared in ms vs s",
        ],
    );
    assert!(output.status.success());
    let warning = String::from_utf8_lossy(&output.stderr);
    assert!(
        warning.contains("similar to") && warning.contains("Fixed JWT validation accepting"),
        "{warning}"
    );

    let similar = json_lines(&env.ok(
        &repo,
        &[
            "similar",
            "--text",
            "expired JWT tokens passed validation",
            "--threshold",
            "0.5",
            "--json",
        ],
    ));
    assert!(similar[0]["content"].as_str().unwrap().contains("JWT"));
    let clusters = json_lines(&env.ok(
        &repo,
        &["similar", "--scan", "--threshold", "0.95", "--json"],
    ));
    assert_eq!(clusters.len(), 1, "{clusters:?}");
    assert_eq!(clusters[0]["memories"].as_array().unwrap().len(), 2);
    let id = clusters[0]["memories"][0]["id"].as_str().unwrap();
    let by_id = json_lines(&env.ok(&repo, &["similar", id, "--threshold", "0.95", "--json"]));
    assert_eq!(by_id.len(), 1);
    assert_ne!(by_id[0]["id"], id);
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn unrelated_questions_find_nothing() {
    let env = TestEnv::new().with_model();
    let repo = project(&env);
    for question in ["nonexistent zebra quantum"] {
        for mode in ["hybrid", "semantic"] {
            let output = env.goldfish(&repo, &["recall", question, "--mode", mode, "--json"]);
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert_eq!(
                output.status.code(),
                Some(1),
                "{mode} {question:?}: {stdout}"
            );
            assert!(stdout.is_empty());
            assert!(String::from_utf8_lossy(&output.stderr).contains("no memories match"));
        }
    }
    // A question that shares one word ("tokens") with a memory and is
    // about something else (issue 29): the keyword part no longer gives that
    // memory all of its 0.6, only the share of the question's word weight it
    // covers (`coverage`, also in `--json`).
    let tokens = "Which Figma library holds the design tokens?";
    let hits = json_lines(&env.ok(&repo, &["recall", tokens, "--json"]));
    let matched = hits
        .iter()
        .find(|hit| hit["ranking"]["keyword_rank"] == 1)
        .unwrap_or_else(|| panic!("{hits:?}"));
    let ranking = &matched["ranking"];
    let coverage = ranking["coverage"].as_f64().unwrap();
    assert!(coverage > 0.0 && coverage < 0.5, "{ranking}");
    assert_eq!(ranking["keyword"].as_f64(), Some(coverage), "{ranking}");
    assert!(matched["score"].as_f64().unwrap() < 0.4, "{matched}");
    // A question its best match covers whole keeps the whole part.
    let covered = json_lines(&env.ok(
        &repo,
        &["recall", "Tailwind settings page styles", "--json"],
    ));
    assert_eq!(
        covered[0]["ranking"]["keyword"].as_f64(),
        Some(1.0),
        "{:?}",
        covered[0]
    );
    // A word match that is also close enough in meaning still counts.
    let output = env.ok(&repo, &["recall", "staging DNS problems", "--json"]);
    assert!(
        json_lines(&output)[0]["content"]
            .as_str()
            .unwrap()
            .contains("stale DNS")
    );
}

/// A folder as the guide tells a user to copy from another machine's
/// install (`models/all-MiniLM-L6-v2-int8/*` and the runtime), holding the
/// tests' stand-in model under that name (no real model needed).
fn copied_int8_folder(env: &TestEnv, with_runtime: bool) -> std::path::PathBuf {
    let name = goldfish::adapters::embed::INT8_MODEL;
    let source = env.path().join("copied");
    fs::create_dir_all(&source).unwrap();
    fs::write(source.join("model.onnx"), b"stand-in weights").unwrap();
    fs::write(source.join("tokenizer.json"), b"{}").unwrap();
    let sha =
        |file: &str| goldfish::adapters::embed::install::sha256_file(&source.join(file)).unwrap();
    let manifest = serde_json::json!({
        "name": name,
        "kind": goldfish::adapters::embed::manifest::FAKE_KIND,
        "dims": 64,
        "pooling": "mean",
        "normalize": true,
        "max_length": 256,
        "files": {
            "model.onnx": {"sha256": sha("model.onnx"), "source": "tests"},
            "tokenizer.json": {"sha256": sha("tokenizer.json"), "source": "tests"},
        },
    });
    fs::write(source.join("manifest.json"), manifest.to_string()).unwrap();
    if with_runtime {
        let runtime = goldfish::adapters::embed::RUNTIME_LIBRARY;
        fs::write(source.join(runtime), b"stand-in runtime").unwrap();
    }
    source
}

/// Issue 59: `model install --from` the int8 files makes int8 the model in
/// use, for status and recall, with no `GOLDFISH_MODEL`; the default
/// install afterwards puts the default back.
#[test]
fn issue_59_model_install_from_puts_the_installed_model_in_use() {
    let env = TestEnv::new();
    let repo = env.repo("r", "Ada");
    env.ok(&repo, &["store", "Payments retry with exponential backoff"]);
    let source = copied_int8_folder(&env, true);
    let out = env.ok(
        &repo,
        &["model", "install", "--from", source.to_str().unwrap()],
    );
    assert!(out.contains(goldfish::adapters::embed::INT8_MODEL), "{out}");
    let status: Value = serde_json::from_str(&env.ok(&repo, &["status", "--json"])).unwrap();
    let model = status["model"].as_str().unwrap_or_default();
    assert!(
        model.starts_with(&format!("{}@", goldfish::adapters::embed::INT8_MODEL)),
        "{status}"
    );
    let recall = env.goldfish(&repo, &["recall", "backoff", "--mode", "semantic"]);
    assert_eq!(
        recall.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&recall.stderr)
    );
    // `GOLDFISH_MODEL` still wins over the choice.
    let other = env.ok_with(
        &repo,
        &["status", "--json"],
        &[("GOLDFISH_MODEL", "not-installed")],
    );
    let other: Value = serde_json::from_str(&other).unwrap();
    assert!(other["model"].is_null(), "{other}");
}

/// Issue 59: a `--from` that fails (here: no ONNX Runtime beside the model
/// nor installed) leaves no model folder, whole or half-filled; and one
/// that replaces an installed model keeps nothing of the old beside it.
#[test]
fn issue_59_a_failed_model_install_from_leaves_nothing_half_installed() {
    let env = TestEnv::new();
    let source = copied_int8_folder(&env, false);
    let output = env.goldfish(
        env.path(),
        &["model", "install", "--from", source.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    let models = env.path().join("home/.goldfish/models");
    let left: Vec<_> = fs::read_dir(&models)
        .map(|entries| entries.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");

    let source = copied_int8_folder(&env, true);
    for _ in 0..2 {
        env.ok(
            env.path(),
            &["model", "install", "--from", source.to_str().unwrap()],
        );
    }
    let left: Vec<_> = fs::read_dir(&models)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, [goldfish::adapters::embed::INT8_MODEL], "{left:?}");
}

/// Issue 59 with the real files: the int8 model's folder and the runtime,
/// copied as the guide says, installed with `--from`, give semantic recall
/// on int8 with no `GOLDFISH_MODEL`.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn issue_59_the_copied_int8_files_installed_from_a_folder_are_used() {
    let env = TestEnv::new();
    let repo = project(&env);
    let model = crate::common::model_home();
    let int8 = goldfish::adapters::embed::INT8_MODEL;
    let from = env.path().join("copied");
    fs::create_dir_all(&from).unwrap();
    for file in ["model.onnx", "tokenizer.json", "manifest.json"] {
        fs::copy(model.join("models").join(int8).join(file), from.join(file)).unwrap();
    }
    let runtime = goldfish::adapters::embed::RUNTIME_LIBRARY;
    fs::copy(model.join("runtime").join(runtime), from.join(runtime)).unwrap();
    env.ok(
        &repo,
        &["model", "install", "--from", from.to_str().unwrap()],
    );
    env.ok(&repo, &["sync"]);
    let status: Value = serde_json::from_str(&env.ok(&repo, &["status", "--json"])).unwrap();
    assert!(
        status["model"]
            .as_str()
            .unwrap_or_default()
            .starts_with(&format!("{int8}@")),
        "{status}"
    );
    assert_eq!(status["pending_embeddings"], 0, "{status}");
    let semantic = env.goldfish(&repo, &["recall", "token expiry", "--mode", "semantic"]);
    assert_eq!(semantic.status.code(), Some(0));
}

/// Issue 59: a small log never refuses a question on its words, so recall
/// marks a weak best match instead: no result at least
/// `relevance::CLOSE` similar gets a note that these are the nearest, not
/// answers; a question the log answers gets none.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn a_weak_best_match_on_a_small_log_is_marked() {
    let env = TestEnv::new().with_model();
    let repo = project(&env);
    let weak = env.goldfish(
        &repo,
        &[
            "recall",
            "a good recipe for banana bread with walnuts",
            "--json",
        ],
    );
    assert!(weak.status.success(), "{weak:?}");
    let hits = json_lines(&String::from_utf8(weak.stdout).unwrap());
    assert!(!hits.is_empty(), "a small log lists the nearest anyway");
    let best = hits
        .iter()
        .filter_map(|h| h["similarity"].as_f64())
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(best < goldfish::domain::relevance::CLOSE, "{hits:?}");
    let stderr = String::from_utf8_lossy(&weak.stderr);
    assert!(
        stderr.contains("no memory is close to the question"),
        "{stderr}"
    );

    let strong = env.goldfish(&repo, &["recall", "JWT validation accepted expired tokens"]);
    assert!(strong.status.success(), "{strong:?}");
    let stderr = String::from_utf8_lossy(&strong.stderr);
    assert!(!stderr.contains("no memory is close"), "{stderr}");
}
