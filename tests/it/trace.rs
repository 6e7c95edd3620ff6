//! One sync per command: the trace a command prints with `GOLDFISH_TRACE=1`
//! (index opens, syncs of the workspace, texts and queries embedded, model
//! loads and warm-process requests, config reads, similarity searches), for a
//! store, the hook after a pull and a recall; and a store that checks for
//! near-duplicates first (a person at a terminal, an agent over MCP), run in
//! process with the same session the front ends use. The embedder is the
//! tests' stand-in: what is counted is how often it runs, not what it says.

use std::path::Path;

use goldfish::adapters::git::Workspace;
use goldfish::adapters::home::Home;
use goldfish::app::Session;
use goldfish::app::session::{Clock, Trace};
use goldfish::app::store::{self, StoreInput};

use crate::common::TestEnv;

/// The trace line a command printed on stderr.
fn trace_of(stderr: &[u8]) -> String {
    let stderr = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|line| line.split_once("goldfish trace: ").map(|(_, trace)| trace))
        .collect();
    assert_eq!(lines.len(), 1, "one trace line expected:\n{stderr}");
    lines[0].to_owned()
}

fn traced(env: &TestEnv, cwd: &Path, program: &str, args: &[&str]) -> String {
    let program = if program == "goldfish" {
        env!("CARGO_BIN_EXE_goldfish")
    } else {
        program
    };
    let output = env
        .command(program, cwd)
        .args(args)
        .env("GOLDFISH_TRACE", "1")
        .env("GOLDFISH_HOOK_VERBOSE", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    trace_of(&output.stderr)
}

#[test]
fn a_store_a_hook_after_a_pull_and_a_recall_each_sync_once() {
    let env = TestEnv::new().with_fake_model();
    let (_remote, alice, bob) = env.team();
    env.ok(&alice, &["sync", "--quiet"]);
    // A store: one index open, one sync (which indexes the new line), its
    // text embedded once.
    assert_eq!(
        traced(
            &env,
            &alice,
            "goldfish",
            &[
                "store",
                "--type",
                "decision",
                "Invoices are numbered per tenant"
            ]
        ),
        "index opens 1, syncs 1, texts embedded 1, queries embedded 0, model loads 1, warm requests 0, config reads 1, similarity searches 1, folder unchanged 0"
    );
    // Bob's five memories (stored with a home of his own: Alice's has
    // never embedded them) arrive with a pull: the post-merge hook syncs
    // once and embeds the five from the queue that sync filled.
    for i in 1..=5 {
        let content = format!("Cache warmup number {i} takes a minute");
        env.store_elsewhere(&bob, "bob-home", "insight", &content);
    }
    env.commit_all(&bob, "five memories");
    env.git(&bob, &["push", "-q"]);
    env.commit_all(&alice, "a memory");
    let pull = traced(
        &env,
        &alice,
        "git",
        &["pull", "-q", "--no-rebase", "--no-edit"],
    );
    assert_eq!(
        pull,
        "index opens 1, syncs 1, texts embedded 5, queries embedded 0, model loads 1, warm requests 0, config reads 1, similarity searches 0, folder unchanged 0"
    );
    // A recall: one sync (nothing changed: stats and HEAD compared), its
    // query embedded once.
    assert_eq!(
        traced(
            &env,
            &alice,
            "goldfish",
            &["recall", "how long is the cache warmup"]
        ),
        "index opens 1, syncs 1, texts embedded 0, queries embedded 1, model loads 1, warm requests 0, config reads 1, similarity searches 0, folder unchanged 0"
    );
}

#[test]
fn a_store_that_checks_for_near_duplicates_embeds_its_text_once() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &["store", "--type", "decision", "Payments retry three times"],
    );
    env.ok(&repo, &["sync", "--quiet"]);
    let workspace = Workspace::discover(&repo).unwrap();
    let home = Home::at(env.path().join("home/.goldfish"));
    let clock = Clock::Fixed("2026-11-25T10:00:00Z".parse().unwrap());
    let input = |content: &str| StoreInput {
        content: content.as_bytes().to_vec(),
        kind: "decision".to_owned(),
        tags: Vec::new(),
        files: Vec::new(),
        source: None,
        allow_secret: false,
        refuse_similar: true,
        agent_session: None,
        vector: None,
        supersedes: None,
        // As MCP: looked for before the write, with the same vector.
        replaced: store::FindReplaced::Refuse,
    };
    // The index is current: the check reads it as it is, the vector it
    // computed goes into the index, and the one sync indexes the line.
    let mut session = Session::at(home.clone(), clock.clone());
    store::store(
        &mut session,
        &workspace,
        input("Refunds go through the ledger service"),
    )
    .unwrap();
    assert_eq!(
        session.trace(),
        Trace {
            index_opens: 1,
            syncs: 1,
            texts_embedded: 1,
            queries_embedded: 0,
            model_loads: 1,
            warm_requests: 0,
            // The config read once, for the types and the sync; the
            // near-duplicates searched once, before the write: nothing
            // but this memory came into the index since.
            config_reads: 1,
            similarity_searches: 1,
            folder_unchanged: 0,
        }
    );
    // A near-duplicate is refused before anything is written, and what it
    // repeats is named.
    let mut session = Session::at(home, clock);
    let refused = store::store(
        &mut session,
        &workspace,
        input("Payments retry three times"),
    )
    .err()
    .expect("a near-duplicate is refused");
    assert!(
        format!("{:#}", refused.error).contains("Payments retry three times"),
        "{:#}",
        refused.error
    );
    assert_eq!(session.trace.texts_embedded, 1);
    assert_eq!(session.trace.syncs, 0, "the index was current: no sync");
    assert_eq!(session.trace.similarity_searches, 1);
    // A memory indexed but not embedded yet (stored and synced with no
    // model: its text waits in the queue) is embedded before the check
    // compares with it: its near-duplicate is refused too.
    let stored = env
        .command(env!("CARGO_BIN_EXE_goldfish"), &repo)
        .args([
            "store",
            "--type",
            "decision",
            "Webhooks are verified with the signing secret",
        ])
        .env("GOLDFISH_MODEL", "none-installed")
        .output()
        .unwrap();
    assert!(stored.status.success(), "{stored:?}");
    let mut session = Session::at(
        Home::at(env.path().join("home/.goldfish")),
        Clock::Fixed("2026-11-25T10:00:00Z".parse().unwrap()),
    );
    let refused = store::store(
        &mut session,
        &workspace,
        input("Webhooks are verified with the signing secret"),
    )
    .err()
    .expect("a near-duplicate of a memory not embedded yet is refused");
    assert!(
        format!("{:#}", refused.error).contains("signing secret"),
        "{:#}",
        refused.error
    );
    assert_eq!(session.trace.syncs, 0, "the index was current: no sync");
    assert_eq!(
        session.trace.texts_embedded, 2,
        "the waiting memory, then the new text"
    );
}

#[test]
fn a_store_reads_the_config_once_and_searches_for_near_duplicates_once() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    // A config of the repository's own: the store checks its type against
    // it, and the sync reads its types and trust policy.
    std::fs::write(
        repo.join(".goldfish/config"),
        "[memory]\ntypes = [\"incident\"]\n",
    )
    .unwrap();
    env.ok(
        &repo,
        &["store", "--type", "incident", "The queue stalled on Monday"],
    );
    env.ok(&repo, &["sync", "--quiet"]);
    let output = env
        .command(env!("CARGO_BIN_EXE_goldfish"), &repo)
        .args(["store", "--type", "incident", "The queue stalled on Monday"])
        .env("GOLDFISH_TRACE", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Found once, after the write (a script is not asked first), and said.
    assert!(stderr.contains("warning: this is"), "{stderr}");
    let trace = trace_of(&output.stderr);
    assert!(trace.contains("config reads 1,"), "{trace}");
    assert!(trace.contains("similarity searches 1,"), "{trace}");
    assert!(trace.contains("syncs 1,"), "{trace}");
}
