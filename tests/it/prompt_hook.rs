//! Issue 40: the right memory at the right moment. The prompt hook
//! (`agent-hook user-prompt`) driven with payloads shaped as the real
//! clients' types: `@anthropic-ai/claude-agent-sdk` 0.3.332's
//! `UserPromptSubmitHookInput` (`BaseHookInput` & `prompt`) and
//! `@google/gemini-cli` 0.61.0's `BeforeAgent` input (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `timestamp`, `prompt`).
//! What reaches the model is `hookSpecificOutput.additionalContext` in
//! both (Gemini CLI reads nothing else; it escapes `<` and `>`).

use std::path::Path;
use std::process::Output;

use crate::common::TestEnv;

fn claude_prompt(repo: &Path, session: &str, prompt: &str) -> serde_json::Value {
    serde_json::json!({
        "session_id": session,
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": repo,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    })
}

fn gemini_prompt(repo: &Path, session: &str, prompt: &str) -> serde_json::Value {
    serde_json::json!({
        "session_id": session,
        "transcript_path": "",
        "cwd": repo,
        "hook_event_name": "BeforeAgent",
        "timestamp": "2026-11-20T09:00:00.000Z",
        "prompt": prompt,
    })
}

fn hook(env: &TestEnv, repo: &Path, payload: &serde_json::Value) -> Output {
    let output = env.goldfish_stdin(
        repo,
        &["agent-hook", "user-prompt"],
        payload.to_string().as_bytes(),
    );
    assert!(output.status.success(), "a hook never fails: {output:?}");
    output
}

/// `--explain`'s decision for `payload`.
fn explain(env: &TestEnv, repo: &Path, payload: &serde_json::Value) -> serde_json::Value {
    let output = env.goldfish_stdin(
        repo,
        &["agent-hook", "user-prompt", "--explain"],
        payload.to_string().as_bytes(),
    );
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The context the hook gives the model, `None` when stdout is empty.
fn context(output: &Output, event: &str) -> Option<String> {
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    if stdout.is_empty() {
        return None;
    }
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], event);
    Some(
        answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

fn project(env: &TestEnv) -> (std::path::PathBuf, String) {
    let repo = env.repo("repo", "Alice");
    let store = |kind: &str, text: &str| -> String {
        let out = env.ok(&repo, &["store", "--json", "-t", kind, text]);
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let fix = store(
        "bug-fix",
        "Users were logged out after 15 minutes: the JWT refresh compared the token's expiry with the server clock in local time. Fixed by comparing in UTC.",
    );
    store(
        "decision",
        "Invoice numbers come from a Postgres sequence per tenant, never from max(id) + 1, so two workers cannot issue the same number.",
    );
    store(
        "insight",
        "The CSV export streams rows through a server-side cursor; loading every row at once ran out of memory above 200k invoices.",
    );
    env.commit_all(&repo, "memories");
    (repo, fix)
}

#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn the_prompt_hook_adds_what_bears_on_the_prompt_once_and_nothing_else() {
    let env = TestEnv::new().with_model();
    let (repo, fix) = project(&env);
    let short: String = fix.chars().take(10).collect();
    let question = "Why do users keep getting logged out after fifteen minutes?";

    let first = context(
        &hook(&env, &repo, &claude_prompt(&repo, "s-1", question)),
        "UserPromptSubmit",
    )
    .expect("the fix bears on the prompt");
    assert!(first.contains(&short), "the fix's id first: {first}");
    assert!(
        first.starts_with(goldfish::app::render::QUOTED_DATA),
        "framed as quoted data: {first}"
    );
    assert!(
        !first.contains("Invoice numbers"),
        "only what bears on it: {first}"
    );
    let explained = explain(&env, &repo, &claude_prompt(&repo, "", question));
    assert!(
        explained["tokens"].as_u64().unwrap() <= goldfish::app::prompt::MAX_TOKENS as u64,
        "{explained}"
    );
    assert_eq!(explained["added"][0], fix, "{explained}");
    for candidate in explained["candidates"].as_array().unwrap() {
        let verdict = candidate["verdict"].as_str().unwrap();
        let similarity = candidate["similarity"].as_f64().unwrap();
        assert_eq!(
            verdict == "not-close",
            similarity < goldfish::app::prompt::MIN_SIMILARITY,
            "each verdict says why: {candidate}"
        );
    }

    // Never the same memory twice in a session; another session gets the
    // same bytes (prompt caching).
    let again = hook(&env, &repo, &claude_prompt(&repo, "s-1", question));
    assert!(again.stdout.is_empty(), "{again:?}");
    let other = context(
        &hook(&env, &repo, &claude_prompt(&repo, "s-2", question)),
        "UserPromptSubmit",
    );
    assert_eq!(other.as_deref(), Some(first.as_str()));

    // Gemini CLI's BeforeAgent gets the same context under its own event.
    let gemini = context(
        &hook(&env, &repo, &gemini_prompt(&repo, "g-1", question)),
        "BeforeAgent",
    );
    assert_eq!(gemini.as_deref(), Some(first.as_str()));

    // Nothing at all for what the log does not hold, for a slash command,
    // and for a prompt that asks nothing.
    for prompt in [
        "What is a good recipe for banana bread with walnuts?",
        "/clear",
        "yes, go on",
        "",
    ] {
        let output = hook(&env, &repo, &claude_prompt(&repo, "s-3", prompt));
        assert!(output.stdout.is_empty(), "{prompt}: {output:?}");
    }
}

/// A sync another process runs (here the test holds the workspace's sync
/// lock, as a long sync after a large pull does): the prompt waits a
/// moment, then answers from the index as it is, within its budget (not
/// when recall stops waiting for the sync, 10 s): with what was synced
/// before, not the memory that waits to be.
#[test]
fn the_prompt_hook_answers_from_the_index_rather_than_wait() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &["store", "-t", "decision", "Deploys go out on Tuesdays"],
    );
    env.ok(&repo, &["sync", "--quiet"]);
    let lock = lock_file(&env, "lock");
    // Another process holds the sync lock, and a memory waits to be synced.
    env.ok(
        &repo,
        &["store", "-t", "decision", "Deploys freeze on Fridays"],
    );
    // Held by this test (`flock`, as goldfish holds it), so nothing is left
    // running when the test ends.
    let holder = std::fs::File::open(&lock).unwrap();
    holder.lock().unwrap();
    let started = std::time::Instant::now();
    let output = hook(
        &env,
        &repo,
        &claude_prompt(&repo, "s-1", "When do deploys go out each week?"),
    );
    let took = started.elapsed();
    drop(holder);
    let context = context(&output, "UserPromptSubmit").expect("the index as it is");
    assert!(context.contains("Tuesdays"), "{context}");
    assert!(!context.contains("Fridays"), "{context}");
    assert!(
        !crate::common::stderr(&output).contains("took longer"),
        "{output:?}"
    );
    assert!(
        took < std::time::Duration::from_secs(6),
        "the hook did not wait for the sync: {took:?}"
    );
}

/// The lock file of the one workspace synced in `env`'s home
/// (`sync-<key>.<suffix>`).
fn lock_file(env: &TestEnv, suffix: &str) -> std::path::PathBuf {
    let locks = env.path().join("home/.goldfish/locks");
    std::fs::read_dir(&locks)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with("sync-") && name.ends_with(&format!(".{suffix}"))
        })
        .expect("the workspace's lock file")
}

/// `git` with goldfish's git hooks off (`GOLDFISH=0`): HEAD moves and no
/// hook syncs.
fn git_unhooked(env: &TestEnv, repo: &Path, args: &[&str]) {
    let output = env
        .command("git", repo)
        .env("GOLDFISH", "0")
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

/// The background sync's log, waited for until it says `caught up` (the
/// catch-up is done, embeddings too), at most `limit`.
fn caught_up(env: &TestEnv, limit: std::time::Duration) -> String {
    let log = env.path().join("home/.goldfish/logs/sync.log");
    let started = std::time::Instant::now();
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("caught up") {
            return text;
        }
        assert!(
            started.elapsed() < limit,
            "no background sync caught up within {limit:?}: {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The memory the prompts below ask about, on a branch of many others.
const FRIDAYS: &str =
    "Payments freeze on Fridays: the ledger reconciliation batch locks the invoices table.";
const FRIDAYS_QUESTION: &str = "Why do payments freeze on Fridays?";

/// Issue 54 (MEDIUM 8): HEAD moved with no git hook to sync (`git reset
/// --hard` onto a branch of 20,000 memories). Every prompt restarted the
/// sync inside its 1.5 s budget, was cut off and rolled back: none ever
/// added a memory. Now each prompt answers at once from the index as it
/// is and leaves the sync to one background catch-up (one for all the
/// prompts), after which a prompt finds the new memory.
#[test]
fn prompts_after_head_moved_onto_many_memories_answer_at_once_and_catch_up() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &["store", "-t", "decision", "Deploys go out on Tuesdays"],
    );
    env.commit_all(&repo, "memories");
    git_unhooked(&env, &repo, &["checkout", "-q", "-b", "bulk"]);
    let mut text = String::new();
    let words = [
        "cache", "shard", "queue", "worker", "retry", "backoff", "schema", "tenant", "export",
        "cursor", "session", "header", "proxy", "router", "handler", "release",
    ];
    for i in 0..20_000usize {
        let content = format!(
            "Note {i}: the {} {} uses the {} {} with limit {}",
            words[i % 16],
            words[(i / 16) % 16],
            words[(i / 256) % 16],
            words[(i * 7) % 16],
            i % 997
        );
        let line = serde_json::json!({
            "id": format!("01M8{i:022}"),
            "timestamp": "2026-11-20T08:00:00.000Z",
            "type": "insight",
            "content": content,
        });
        text.push_str(&format!("{line}\n"));
    }
    let fridays = "01M9FR1DAYS0000000000000000";
    let line = serde_json::json!({
        "id": fridays,
        "timestamp": "2026-11-20T09:00:00.000Z",
        "type": "decision",
        "content": FRIDAYS,
    });
    text.push_str(&format!("{line}\n"));
    std::fs::write(
        repo.join(".goldfish/memories/2026-11-20-bulk01.jsonl"),
        text,
    )
    .unwrap();
    env.commit_all(&repo, "twenty thousand memories");
    git_unhooked(&env, &repo, &["checkout", "-q", "main"]);
    env.ok(&repo, &["sync", "--quiet"]);
    // `git reset` runs no hook: the index is left at main's memories.
    env.git(&repo, &["reset", "-q", "--hard", "bulk"]);

    let first = explain(&env, &repo, &claude_prompt(&repo, "", FRIDAYS_QUESTION));
    assert_eq!(first["catching_up"], true, "{first}");
    let mut took = Vec::new();
    for _ in 0..5 {
        let started = std::time::Instant::now();
        let output = hook(&env, &repo, &claude_prompt(&repo, "s-1", FRIDAYS_QUESTION));
        took.push(started.elapsed());
        assert!(
            !crate::common::stderr(&output).contains("took longer"),
            "the prompt answered within its budget: {output:?}"
        );
    }
    println!("prompts while the index caught up: {took:?}");
    let log = caught_up(&env, std::time::Duration::from_secs(240));
    assert_eq!(
        log.matches("catching up").count(),
        1,
        "one background sync for all the prompts: {log}"
    );
    let found = hook(&env, &repo, &claude_prompt(&repo, "s-2", FRIDAYS_QUESTION));
    let context = context(&found, "UserPromptSubmit").expect("the new memory");
    assert!(context.contains(&fridays[..10]), "{context}");
}

/// A sync that turned out slower than the prompt's budget (here made slow,
/// `GOLDFISH_FAULT=sync-slow`, as a long history makes it: 3 s more when
/// the index lags) is cut off with
/// the prompt, and was started again, and cut off again, by every prompt
/// after. Now the prompt that ran out of time leaves it to a background
/// catch-up, which finishes it: a later prompt finds the memory.
#[test]
fn a_sync_the_budget_cut_off_is_finished_in_the_background() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &["store", "-t", "decision", "Deploys go out on Tuesdays"],
    );
    env.commit_all(&repo, "memories");
    git_unhooked(&env, &repo, &["checkout", "-q", "-b", "more"]);
    let out = env.ok(&repo, &["store", "--json", "-t", "decision", FRIDAYS]);
    let id = serde_json::from_str::<serde_json::Value>(&out).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.commit_all(&repo, "a memory");
    git_unhooked(&env, &repo, &["checkout", "-q", "main"]);
    env.ok(&repo, &["sync", "--quiet"]);
    env.git(&repo, &["reset", "-q", "--hard", "more"]);
    let slow = |session: &str| {
        let payload = claude_prompt(&repo, session, FRIDAYS_QUESTION).to_string();
        let mut child = env
            .command(env!("CARGO_BIN_EXE_goldfish"), &repo)
            .args(["agent-hook", "user-prompt"])
            .env("GOLDFISH_FAULT", "sync-slow")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let cut = slow("s-1");
    assert!(cut.stdout.is_empty(), "{cut:?}");
    let stderr = crate::common::stderr(&cut);
    assert!(stderr.contains("took longer"), "{stderr}");
    assert!(stderr.contains("catching up in the background"), "{stderr}");
    caught_up(&env, std::time::Duration::from_secs(60));
    // Slow still, but with nothing left to sync.
    let found = slow("s-2");
    let context = context(&found, "UserPromptSubmit").expect("the memory");
    assert!(context.contains(&id[..10]), "{context}");
}

/// Without a model the hook cannot judge closeness: it adds nothing and
/// says why in `--explain`.
#[test]
fn the_prompt_hook_without_a_model_adds_nothing_and_says_why() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &["store", "-t", "decision", "Deploys go out on Tuesdays"],
    );
    let payload = claude_prompt(&repo, "s-1", "When do deploys go out each week?");
    assert!(hook(&env, &repo, &payload).stdout.is_empty());
    let explained = explain(&env, &repo, &payload);
    assert!(
        explained["skipped"]
            .as_str()
            .unwrap()
            .starts_with("no embedding model"),
        "{explained}"
    );
    assert_eq!(explained["added"], serde_json::json!([]));
}

/// Issue 56: a headless Gemini CLI run (`gemini -p`) puts the context its
/// SessionStart hooks gave, goldfish's briefing, before the prompt in
/// exactly `<hook_context>{context}</hook_context>`, a blank line, the
/// prompt (`packages/cli/src/gemini.tsx`, in the package's
/// `bundle/gemini-*.js`), and `BeforeAgent`'s `prompt` is that text. The
/// lookup was the briefing's; it is the prompt's: here "yes, go on", which
/// asks nothing. A tag never closed is no wrapper of the client's: the
/// prompt is read whole, not swallowed.
#[test]
fn issue_56_a_headless_gemini_prompt_is_looked_up_without_the_briefing() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "Deploys go out on Tuesdays after the freeze, because the release train leaves then",
        ],
    );
    let start = serde_json::json!({
        "session_id": "g-1",
        "transcript_path": "",
        "cwd": repo,
        "hook_event_name": "SessionStart",
        "timestamp": "2026-11-20T09:00:00.000Z",
        "source": "startup",
    });
    let output = env.goldfish_stdin(
        &repo,
        &["agent-hook", "session-start", "--json"],
        start.to_string().as_bytes(),
    );
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let briefing = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        briefing.contains("Deploys go out on Tuesdays"),
        "{briefing}"
    );
    let headless = format!("<hook_context>{briefing}</hook_context>\n\nyes, go on");
    let explained = explain(&env, &repo, &gemini_prompt(&repo, "g-1", &headless));
    assert_eq!(
        explained["skipped"],
        goldfish::app::prompt::Skipped::NoQuestion.reason(),
        "the briefing is not the question: {explained}"
    );
    assert!(
        hook(&env, &repo, &gemini_prompt(&repo, "g-1", &headless))
            .stdout
            .is_empty()
    );
    // Unclosed: the person's text, looked up as it is (here it asks
    // something, so only the missing model stops it).
    let unclosed = "<hook_context> why do deploys go out on Tuesdays?";
    let explained = explain(&env, &repo, &gemini_prompt(&repo, "g-1", unclosed));
    assert!(
        explained["skipped"]
            .as_str()
            .unwrap()
            .starts_with("no embedding model"),
        "{explained}"
    );
}

/// Issue 56: a memory the session-start briefing just gave the session is
/// not added again by the prompt hook (the briefing's memories count as
/// given); a prompt the client made (`source: "system"`, a background
/// task's notification) is not looked up.
#[test]
fn the_prompt_hook_skips_what_the_briefing_gave_and_the_clients_own_prompts() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    let out = env.ok(
        &repo,
        &[
            "store",
            "--json",
            "-t",
            "decision",
            "Deploys go out on Tuesdays",
        ],
    );
    let id = serde_json::from_str::<serde_json::Value>(&out).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.ok(&repo, &["sync", "--quiet"]);
    let question = "When do deploys go out each week?";
    let verdict_of = |explained: &serde_json::Value| {
        explained["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|candidate| candidate["id"] == id.as_str())
            .map(|candidate| candidate["verdict"].clone())
    };
    // Another session, never briefed: the memory is added.
    let fresh = explain(&env, &repo, &claude_prompt(&repo, "s-other", question));
    assert_eq!(verdict_of(&fresh), Some("added".into()), "{fresh}");

    let briefing = env.goldfish_stdin(
        &repo,
        &["agent-hook", "session-start"],
        serde_json::json!({
            "session_id": "s-1",
            "transcript_path": "/nonexistent/transcript.jsonl",
            "cwd": repo,
            "hook_event_name": "SessionStart",
            "source": "startup",
        })
        .to_string()
        .as_bytes(),
    );
    assert!(
        String::from_utf8_lossy(&briefing.stdout).contains("Tuesdays"),
        "{briefing:?}"
    );
    let after = explain(&env, &repo, &claude_prompt(&repo, "s-1", question));
    assert_eq!(verdict_of(&after), Some("seen".into()), "{after}");
    assert!(
        hook(&env, &repo, &claude_prompt(&repo, "s-1", question))
            .stdout
            .is_empty()
    );

    let mut notification = claude_prompt(&repo, "s-2", question);
    notification["source"] = "system".into();
    let explained = explain(&env, &repo, &notification);
    assert_eq!(
        explained["skipped"],
        "a prompt the client made (a task notification), not one the user typed",
        "{explained}"
    );
    assert!(hook(&env, &repo, &notification).stdout.is_empty());
}
