//! A teammate's clone is useful at once (issue 27): keyword recall as soon
//! as the log is indexed, the embedding left to one background process per
//! home, resumable after a kill, its progress in `status`.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common::TestEnv;
use crate::index::write_log;

fn status(env: &TestEnv, repo: &Path) -> Value {
    serde_json::from_str(&env.ok(repo, &["status", "--json"])).unwrap()
}

/// Polls `status --json` until `done` says so (at most ~40 s).
fn wait_for(env: &TestEnv, repo: &Path, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..800 {
        last = status(env, repo);
        if done(&last) {
            return last;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("status never got there: {last}");
}

#[test]
fn a_fresh_clone_answers_at_once_and_embeds_the_rest_in_the_background() {
    let env = TestEnv::new().with_fake_model();
    let (remote, alice, _bob) = env.team();
    write_log(&alice, 500, 5);
    env.commit_all(&alice, "500 memories");
    env.git(&alice, &["push", "-q"]);

    let fresh = env.clone_of(&remote, "fresh");
    env.identify(&fresh, "Carol");
    let recall = env.goldfish(&fresh, &["recall", "Memory 42 about module", "--json"]);
    assert!(
        recall.status.success(),
        "{}",
        crate::common::render(&recall)
    );
    let stdout = String::from_utf8_lossy(&recall.stdout);
    assert!(
        stdout.contains("Memory 42 about"),
        "found at once: {stdout}"
    );
    let stderr = String::from_utf8_lossy(&recall.stderr);
    assert!(
        stderr.contains("% of this workspace's memories are embedded (")
            && stderr.contains("of 500)")
            && stderr.contains("a background `goldfish sync` is embedding the rest"),
        "{stderr}"
    );
    // Nobody runs `goldfish sync`: the background embedder finishes.
    let done = wait_for(&env, &fresh, |s| s["pending_embeddings"] == 0);
    assert_eq!(done["memories_in_index"], 500, "{done}");
    let log = std::fs::read_to_string(env.path().join("home/.goldfish/logs/sync.log")).unwrap();
    assert!(log.contains("embedded"), "{log}");
    // Once all are embedded, recall says nothing about it.
    let again = env.goldfish(&fresh, &["recall", "Memory 7 about module"]);
    assert!(!String::from_utf8_lossy(&again.stderr).contains("embedded"));
}

/// `goldfish sync` killed with SIGKILL while it embeds keeps every batch it
/// committed; `status` showed its progress and an estimate meanwhile; the
/// next sync embeds only the rest.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn an_embedder_killed_mid_way_keeps_its_work_and_the_next_sync_finishes() {
    let env = TestEnv::new().with_model();
    let repo = env.repo("r", "Ada");
    write_log(&repo, 1500, 5);
    env.commit_all(&repo, "1500 memories");
    // Keywords only: everything waits for the embedder.
    env.ok(&repo, &["recall", "cache", "--mode", "keyword"]);
    assert_eq!(status(&env, &repo)["pending_embeddings"], 1500);

    let mut embedder = env
        .command(env!("CARGO_BIN_EXE_goldfish"), &repo)
        .env("GOLDFISH_THREADS", "1")
        .args(["sync", "--quiet"])
        .spawn()
        .unwrap();
    let running = wait_for(&env, &repo, |s| {
        s["embedding"]["done"]
            .as_u64()
            .is_some_and(|done| done >= 128)
    });
    let embedding = &running["embedding"];
    assert_eq!(embedding["total"], 1500, "{running}");
    assert!(embedding["per_second"].as_f64().unwrap() > 0.0, "{running}");
    assert!(
        embedding["seconds_left"].as_f64().unwrap() > 0.0,
        "{running}"
    );
    let text = env.ok(&repo, &["status"]);
    assert!(
        text.contains("being embedded now:") && text.contains(" left"),
        "{text}"
    );

    embedder.kill().unwrap();
    embedder.wait().unwrap();
    let killed = status(&env, &repo);
    let pending = killed["pending_embeddings"].as_u64().unwrap();
    assert!(pending > 0 && pending <= 1500 - 128, "{killed}");
    assert!(
        killed.get("embedding").is_none(),
        "no embedder runs: {killed}"
    );

    let report: Value = serde_json::from_str(&env.ok(&repo, &["sync", "--json"])).unwrap();
    assert_eq!(report["embedded"].as_u64(), Some(pending), "{report}");
    assert_eq!(report["pending_embeddings"], 0);
    let hits = crate::common::json_lines(&env.ok(
        &repo,
        &[
            "recall",
            "Memory 1499 about module",
            "--mode",
            "semantic",
            "--json",
        ],
    ));
    assert!(!hits.is_empty());
}

#[test]
fn a_pull_while_an_embedder_runs_for_the_home_starts_no_second_one() {
    let env = TestEnv::new().with_fake_model();
    let (_remote, alice, bob) = env.team();
    env.ok(&bob, &["sync", "--quiet"]);
    // Twenty memories from Alice, stored with a home of her own: Bob's has
    // never embedded them, so his pull leaves more than the hook embeds.
    for i in 0..20 {
        let content = format!("The nightly export number {i} writes one file per tenant");
        env.store_elsewhere(&alice, "alice-home", "insight", &content);
    }
    env.commit_all(&alice, "twenty memories");
    env.git(&alice, &["push", "-q"]);
    // An embedder already at work for Bob's home: the test holds its lock.
    let locks = env.path().join("home/.goldfish/locks");
    std::fs::create_dir_all(&locks).unwrap();
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(locks.join("embed.lock"))
        .unwrap();
    lock.lock().unwrap();
    let pull = env
        .command("git", &bob)
        .env("GOLDFISH_HOOK_VERBOSE", "1")
        .args(["pull", "-q", "--no-rebase", "--no-edit"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&pull.stderr);
    assert!(pull.status.success(), "{said}");
    assert!(said.contains("embedding 20 in the background"), "{said}");
    // The running one embeds the home's queue: no second `goldfish sync`
    // was started (starting one creates its log).
    assert!(
        !env.path().join("home/.goldfish/logs/sync.log").exists(),
        "a second embedder was started"
    );
    lock.unlock().unwrap();
}
