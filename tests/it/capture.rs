//! Capture: Claude Code's PostToolUse and Stop payloads through
//! `agent-hook`, the queue under the home and the worker, into the log.

use std::fs;
use std::path::Path;

use serde_json::json;

use crate::common::{TestEnv, json_lines, memory_lines};

const SECRET: &str = "Zx9fQ2mR7tL4vB8nK3wPq";

/// Runs the hook for `event` as Claude Code would: the command that
/// `init --agent claude --capture` wrote into `.claude/settings.json` (by
/// `sh`, with `goldfish` on PATH), or `goldfish agent-hook EVENT` where
/// that file has none. Returns what the hook printed on stdout.
pub(crate) fn hook(env: &TestEnv, repo: &Path, event: &str, payload: &serde_json::Value) -> String {
    let settings: serde_json::Value = fs::read_to_string(repo.join(".claude/settings.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let name = match event {
        "post-tool-use" => "PostToolUse",
        "post-tool-use-failure" => "PostToolUseFailure",
        _ => "Stop",
    };
    let command = settings["hooks"][name][0]["hooks"][0]["command"]
        .as_str()
        .map_or_else(|| format!("goldfish agent-hook {event}"), str::to_owned);
    run_hook(env, repo, &command, payload)
}

/// Runs a hook's `command` as an agent does (by `sh`, with `goldfish` on
/// PATH, the payload on stdin); it must exit 0. Returns its stdout.
pub(crate) fn run_hook(
    env: &TestEnv,
    repo: &Path,
    command: &str,
    payload: &serde_json::Value,
) -> String {
    let output = env.as_agent_hook(repo, command, payload, &[]);
    assert_eq!(output.status.code(), Some(0), "{command}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

pub(crate) fn tool(
    repo: &Path,
    name: &str,
    input: serde_json::Value,
    response: serde_json::Value,
) -> serde_json::Value {
    json!({
        "session_id": "sess-1",
        "transcript_path": repo.join("../transcript.jsonl"),
        "cwd": repo,
        "hook_event_name": "PostToolUse",
        "tool_name": name,
        "tool_input": input,
        "tool_response": response,
    })
}

/// A session as Claude Code reports it: a read, a failing test run (with a
/// secret and a private span in its output), an edit, the run passing, a
/// trivial command, then Stop.
fn session(env: &TestEnv, repo: &Path) {
    session_as(env, repo, "sess-1");
}

/// [`session`] as the session `id`.
fn session_as(env: &TestEnv, repo: &Path, id: &str) {
    let hook = |env: &TestEnv, repo: &Path, event: &str, payload: &serde_json::Value| {
        let mut payload = payload.clone();
        payload["session_id"] = id.into();
        hook(env, repo, event, &payload);
    };
    let transcript = repo.join("../transcript.jsonl");
    fs::write(
        &transcript,
        [
            json!({"type": "user", "message": {"role": "user", "content": "Fix the failing sync test on branch switch"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Fixed: the journal is drained before the sync. Next: add a test for rebases."}]}}),
        ]
        .map(|l| l.to_string())
        .join("\n"),
    )
    .unwrap();
    let src = repo.join("src");
    hook(
        env,
        repo,
        "post-tool-use",
        &tool(
            repo,
            "Read",
            json!({"file_path": src.join("git.rs")}),
            json!({"type": "text"}),
        ),
    );
    hook(
        env,
        repo,
        "post-tool-use",
        &tool(
            repo,
            "Bash",
            json!({"command": "cargo test --test it sync::branch_switch"}),
            json!({
                "stdout": "running 1 test\ntest sync::branch_switch ... FAILED\n\nfailures:\n<private>customer acme-corp data</private>\n",
                "stderr": format!("thread 'sync::branch_switch' panicked at src/git.rs:41: journal not drained\nerror: cannot reach the fixture db password={SECRET}\nerror: test failed, to rerun pass `--test it`\nExit code 101"),
                "interrupted": false,
            }),
        ),
    );
    hook(
        env,
        repo,
        "post-tool-use",
        &tool(
            repo,
            "Edit",
            json!({"file_path": src.join("git.rs"), "old_string": "a", "new_string": "b"}),
            json!({}),
        ),
    );
    hook(
        env,
        repo,
        "post-tool-use",
        &tool(
            repo,
            "Bash",
            json!({"command": "cargo test --test it sync::branch_switch"}),
            json!({"stdout": "test result: ok. 1 passed", "stderr": "", "interrupted": false}),
        ),
    );
    hook(
        env,
        repo,
        "post-tool-use",
        &tool(
            repo,
            "Bash",
            json!({"command": "ls -la"}),
            json!({"stdout": "src", "stderr": ""}),
        ),
    );
    hook(
        env,
        repo,
        "stop",
        &json!({"session_id": "sess-1", "transcript_path": transcript, "cwd": repo, "hook_event_name": "Stop", "stop_hook_active": false}),
    );
    // The hooks started a worker; this one waits for it, then drains the rest.
    env.ok(repo, &["capture", "work", "--wait"]);
}

#[test]
fn capture_turns_a_failing_then_passing_test_into_a_bug_fix_and_a_session_summary() {
    let env = TestEnv::new();
    let (_remote, alice, bob) = env.team();
    // Capture is opt-in: init writes the hooks Claude Code runs.
    let init = env.ok(&alice, &["init", "--agent", "claude", "--capture"]);
    assert!(init.contains("turned capture on"), "{init}");
    let head = env.git(&alice, &["rev-parse", "HEAD"]);
    session(&env, &alice);

    let lines = memory_lines(&alice);
    let text = serde_json::to_string(&lines).unwrap();
    assert!(!text.contains(SECRET), "no secret reaches the log: {text}");
    assert!(
        !text.contains("acme-corp"),
        "private spans never reach the log: {text}"
    );
    assert_eq!(lines.len(), 2, "{lines:#?}");
    let fix = &lines
        .iter()
        .find(|l| l["type"] == "bug-fix")
        .expect("a bug fix");
    assert_eq!(fix["source"], "capture:rules");
    assert_eq!(fix["session"], "sess-1", "the session it came from");
    assert_eq!(fix["files"], json!(["src/git.rs"]));
    let content = fix["content"].as_str().unwrap();
    // Titled by the test and its symptom; the check last.
    assert!(
        content.starts_with("`sync::branch_switch` failed:"),
        "{content}"
    );
    assert!(content.contains("Fixed in src/git.rs."), "{content}");
    assert!(
        content.contains("Check: `cargo test --test it sync::branch_switch` failed, then passed."),
        "{content}"
    );
    assert!(content.contains("journal not drained"), "{content}");
    let summary = lines
        .iter()
        .find(|l| l["type"] == "checkpoint")
        .expect("a session summary");
    let summary = summary["content"].as_str().unwrap();
    assert!(
        summary.starts_with("Fix the failing sync test on branch switch"),
        "{summary}"
    );
    assert!(summary.contains("Done: changed src/git.rs."), "{summary}");
    assert!(
        summary.contains("Next: add a test for rebases"),
        "{summary}"
    );

    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&alice, &["capture", "status", "--json"])).unwrap();
    assert_eq!(status["queued"], 0);
    assert_eq!(status["stored"], 2);
    // Regression (issue 29): the failing run was counted as skipped though
    // the bug fix stored tells it. Each event is counted once: the read,
    // the edit and `ls` skipped, the failing run in the fix.
    assert_eq!(status["skipped"], 3, "{status}");
    assert_eq!(status["in_bug_fixes"], 1, "{status}");
    assert_eq!(status["waiting"], 0, "{status}");
    assert_eq!(status["reasons"]["skipped trivial command"], 1, "{status}");
    assert_eq!(
        status["reasons"]["told in a stored bug fix: check failed, then passed after changes"], 1,
        "{status}"
    );
    let home = env.path().join("home/.goldfish");
    assert!(home.join("capture").is_dir());
    assert!(
        !alice.join(".goldfish/capture").exists(),
        "the queue is never in the repository"
    );

    // Written, never committed (README): the user reviews and commits them.
    assert_eq!(env.git(&alice, &["rev-parse", "HEAD"]), head, "no commit");
    assert!(
        !env.git(
            &alice,
            &["status", "--porcelain", "--", ".goldfish/memories"]
        )
        .is_empty(),
        "captured memories are left for the user to commit"
    );

    // Shared like any memory once committed: a teammate recalls it after a
    // pull.
    env.commit_all(&alice, "fix sync");
    env.git(&alice, &["push", "-q", "origin", "main"]);
    env.git(&bob, &["pull", "-q"]);
    let hits = json_lines(&env.ok(
        &bob,
        &["recall", "branch_switch", "--mode", "keyword", "--json"],
    ));
    let recalled = hits
        .iter()
        .find(|h| h["id"] == fix["id"])
        .unwrap_or_else(|| panic!("{hits:#?}"));
    assert_eq!(
        recalled["session"], "sess-1",
        "recall says which session captured it"
    );

    // Captured memories can be left out, or reviewed alone.
    env.ok(
        &bob,
        &[
            "store",
            "-t",
            "decision",
            "Syncs on a branch switch drain the journal before reading.",
        ],
    );
    let sources = |which: &str| -> Vec<String> {
        json_lines(&env.ok(&bob, &["recall", "--captured", which, "-n", "20", "--json"]))
            .iter()
            .map(|h| h["source"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let all = sources("include");
    assert_eq!(all.len(), 3, "{all:?}");
    let only = sources("only");
    assert_eq!(only.len(), 2, "{only:?}");
    assert!(only.iter().all(|s| s.starts_with("capture:")), "{only:?}");
    let stored = sources("exclude");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(!stored[0].starts_with("capture:"), "{stored:?}");
}

/// A failing run of a test runner, as Claude Code reports it: a
/// `PostToolUseFailure` with the output in `error`, or a `PostToolUse`
/// with it in `stdout` (no exit code).
fn failed_run(
    repo: &Path,
    session: &str,
    command: &str,
    output: &str,
    as_failure: bool,
) -> (&'static str, serde_json::Value) {
    let mut event = tool(
        repo,
        "Bash",
        json!({"command": command, "description": "Run the tests"}),
        json!({"stdout": output, "stderr": "", "interrupted": false, "isImage": false}),
    );
    event["session_id"] = json!(session);
    if !as_failure {
        return ("post-tool-use", event);
    }
    event["hook_event_name"] = json!("PostToolUseFailure");
    event["error"] = json!(format!("Exit code 1\n{output}"));
    event["is_interrupt"] = json!(false);
    event.as_object_mut().unwrap().remove("tool_response");
    ("post-tool-use-failure", event)
}

/// Regression (issue 29): a modern Rust panic's message is on the line
/// after `panicked at FILE:LINE:COL:`, and only that line was kept; a Jest
/// failure arriving as `PostToolUseFailure` stored no failing test and no
/// error. Each runner's real output (`fixtures/capture/outputs/`) goes
/// through the hook: the failing run, an edit, the run passing; the stored
/// bug fix names the failing tests and keeps the error message.
#[test]
fn a_captured_bug_fix_names_the_failing_test_and_its_error_for_each_runner() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let outputs = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/capture/outputs");
    // (fixture, command, as a PostToolUseFailure, file edited, failing
    // tests, error)
    let cases = [
        (
            "cargo-test.txt",
            "cargo test",
            true,
            "src/billing/invoice.rs",
            "billing::invoice::tests::numbers_are_unique_across_retries",
            "assertion `left != right` failed: duplicate invoice number 1042 (left: 1042, right: 1042), at src/billing/invoice.rs:38:9",
        ),
        (
            "cargo-test-rust-1.72.txt",
            "cargo test",
            false,
            "src/billing/invoice.rs",
            "billing::invoice::tests::empty_amount_is_zero, billing::invoice::tests::numbers_are_unique_across_retries",
            "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: Empty }, at src/billing/invoice.rs:23:42",
        ),
        (
            "jest.txt",
            "npm test",
            true,
            "src/cart/cart.js",
            "Cart › total › applies the discount once, a missing item has no price",
            "expect(received).toBe(expected) // Object.is equality (Expected: 90, Received: 81)",
        ),
        (
            "vitest.txt",
            "npx vitest run",
            false,
            "src/cart/cart.js",
            "src/cart/total.test.js > Cart > total > applies the discount once",
            "AssertionError: expected 81 to be 90 // Object.is equality",
        ),
        (
            "vitest-color.txt",
            "npx vitest run",
            false,
            "src/cart/cart.js",
            "src/cart/total.test.js > Cart > total > applies the discount once",
            "AssertionError: expected 81 to be 90 // Object.is equality",
        ),
        (
            "pytest.txt",
            "python -m pytest tests",
            false,
            "app/auth.py",
            "tests/test_auth.py::test_expired_token_is_rejected",
            "AssertionError: token expired 100 s ago (assert False, +  where False = is_expired({'exp': 1000}, now=1100)), at tests/test_auth.py:8",
        ),
        (
            "go-test.txt",
            "go test ./...",
            true,
            "invoice/numbering.go",
            "TestNumbersAreUniqueAcrossRetries, TestNumbersStartAt/thousand",
            "numbering_test.go:11: duplicate invoice number 1042: issued twice after a retry",
        ),
    ];
    for (fixture, command, as_failure, file, _, _) in cases {
        let output = fs::read_to_string(outputs.join(fixture)).unwrap();
        let (event, failed) = failed_run(&repo, fixture, command, &output, as_failure);
        hook(&env, &repo, event, &failed);
        let mut edit = tool(
            &repo,
            "Edit",
            json!({"file_path": repo.join(file), "old_string": "a", "new_string": "b"}),
            json!({}),
        );
        edit["session_id"] = json!(fixture);
        hook(&env, &repo, "post-tool-use", &edit);
        let mut passed = tool(
            &repo,
            "Bash",
            json!({"command": command}),
            json!({"stdout": "all tests passed", "stderr": "", "interrupted": false}),
        );
        passed["session_id"] = json!(fixture);
        hook(&env, &repo, "post-tool-use", &passed);
        // The fix is stored when the turn ends.
        let stop = json!({"session_id": fixture, "cwd": repo, "hook_event_name": "Stop", "stop_hook_active": false});
        hook(&env, &repo, "stop", &stop);
    }
    env.ok(&repo, &["capture", "work", "--wait"]);

    let lines = memory_lines(&repo);
    for (fixture, command, _, file, tests, error) in cases {
        let fix = lines
            .iter()
            .find(|l| l["session"] == fixture && l["type"] == "bug-fix")
            .unwrap_or_else(|| panic!("{fixture}: no bug fix stored: {lines:#?}"));
        let first = tests.split(", ").next().unwrap();
        let more = if tests.contains(", ") {
            format!(" Failing before: {tests}.")
        } else {
            String::new()
        };
        assert_eq!(
            fix["content"],
            format!(
                "`{first}` failed: {error}.{more}\nFixed in {file}. Changed {file}: `b`.\nCheck: `{command}` failed, then passed."
            ),
            "{fixture}"
        );
    }
}

/// Regression (issue 29): a `Write` of a decision record was stored as
/// `Decision (…): + # 7. Cursor pagination …`, its title read from the
/// `+ `-prefixed change text made for a model.
#[test]
fn a_decision_record_written_through_the_hook_is_stored_with_a_clean_title() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let record = "# 7. Cursor pagination for list endpoints\n\nDate: 2026-11-20\n\n## Status\n\nAccepted\n\n## Context\n\nOffset pagination skipped and repeated rows while invoices were inserted.\n\n## Decision\n\nList endpoints take an opaque `cursor` (the last id seen) instead of `offset`; pages hold 50 items.\n\n## Consequences\n\nClients cannot jump to page N.\n";
    let path = repo.join("docs/adr/0007-cursor-pagination.md");
    let write = tool(
        &repo,
        "Write",
        json!({"file_path": path, "content": record}),
        json!({"type": "create", "filePath": path, "content": record, "structuredPatch": []}),
    );
    hook(&env, &repo, "post-tool-use", &write);
    env.ok(&repo, &["capture", "work", "--wait"]);
    let lines = memory_lines(&repo);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["type"], "decision");
    assert_eq!(
        lines[0]["content"],
        "Decision (docs/adr/0007-cursor-pagination.md): Cursor pagination for list endpoints. List endpoints take an opaque `cursor` (the last id seen) instead of `offset`; pages hold 50 items."
    );
    assert_eq!(
        lines[0]["files"],
        json!(["docs/adr/0007-cursor-pagination.md"])
    );
}

/// Regression (issue 29): `capture status` listed every memory capture
/// ever stored, and counted a failing check as skipped whatever became of
/// it. It names the newest 10 and says how many there are; a failing run
/// still waiting for its pass is waiting, one a pass with no change
/// settled is skipped.
#[test]
fn capture_status_counts_each_event_once_and_names_only_the_newest_stored() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let in_session = |session: &str, mut event: serde_json::Value| {
        event["session_id"] = json!(session);
        event
    };
    // 12 decision records, in two sessions (a session stores 10 at most).
    for n in 1..=12 {
        let path = repo.join(format!("docs/adr/{n:04}-choice-{n}.md"));
        let text = format!("# {n}. Choice {n}\n\nWe chose option {n} for part {n}.\n");
        let write = tool(
            &repo,
            "Write",
            json!({"file_path": path, "content": text}),
            json!({}),
        );
        let session = if n <= 6 { "records-a" } else { "records-b" };
        hook(&env, &repo, "post-tool-use", &in_session(session, write));
    }
    let run = |command: &str, output: &str| {
        tool(
            &repo,
            "Bash",
            json!({"command": command}),
            json!({"stdout": output, "stderr": ""}),
        )
    };
    // A check failing, then passing with nothing changed (flaky); another
    // failing and not passing yet.
    for (session, event) in [
        (
            "flaky",
            run(
                "cargo test",
                "test a ... FAILED\ntest result: FAILED. 0 passed; 1 failed",
            ),
        ),
        ("flaky", run("cargo test", "test result: ok. 1 passed")),
        (
            "open",
            run(
                "npm test",
                "FAIL src/a.test.js\n  ● a › works\n\n    boom\n",
            ),
        ),
    ] {
        hook(&env, &repo, "post-tool-use", &in_session(session, event));
    }
    env.ok(&repo, &["capture", "work", "--wait"]);

    let lines = memory_lines(&repo);
    assert_eq!(lines.len(), 12);
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["capture", "status", "--json"])).unwrap();
    assert_eq!(status["stored"], 12, "{status}");
    let newest: Vec<&serde_json::Value> = lines.iter().map(|l| &l["id"]).skip(2).collect();
    assert_eq!(
        status["stored_ids"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        newest,
        "{status}"
    );
    assert_eq!(status["waiting"], 1, "{status}");
    assert_eq!(status["skipped"], 2, "{status}");
    assert_eq!(status["in_bug_fixes"], 0, "{status}");
    assert_eq!(
        status["reasons"]["skipped check failed, then passed with no fix stored"], 1,
        "{status}"
    );
    assert_eq!(
        status["reasons"]["waiting check failed (stored if it passes after changes)"], 1,
        "{status}"
    );
    let text = env.ok(&repo, &["capture", "status"]);
    assert!(
        text.starts_with("queued 0, stored 12, skipped 2, waiting 1, dropped 0\n"),
        "{text}"
    );
    assert_eq!(text.matches("\n  stored ").count(), 10, "{text}");
    assert!(text.contains("  (the newest 10 of 12 stored)"), "{text}");
}

/// Regression (issue 29, point 6): `recall --index` titled every captured
/// checkpoint `Session summary …` and every captured decision record
/// `Decision …`. They are titled by the request and the record's title.
#[test]
fn captured_memories_are_listed_by_what_they_are_about() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    session(&env, &repo);
    let record = "# 7. Cursor pagination for list endpoints\n\n## Decision\n\nList endpoints take a cursor.\n";
    let write = tool(
        &repo,
        "Write",
        json!({"file_path": repo.join("docs/adr/0007-cursor-pagination.md"), "content": record}),
        json!({}),
    );
    hook(&env, &repo, "post-tool-use", &write);
    env.ok(&repo, &["capture", "work", "--wait"]);
    let listed = env.ok(&repo, &["recall", "--index", "--captured", "only"]);
    let title_of = |kind: &str| {
        listed
            .lines()
            .find(|line| line.contains(&format!("  {kind}  ")))
            .and_then(|line| line.split("  Alice  ").nth(1))
            .unwrap_or_else(|| panic!("no {kind}: {listed}"))
            .to_owned()
    };
    assert_eq!(
        title_of("checkpoint"),
        "Fix the failing sync test on branch switch …",
        "titled by its request: {listed}"
    );
    assert_eq!(
        title_of("decision"),
        "Cursor pagination for list endpoints …",
        "{listed}"
    );
}

#[test]
fn capture_hook_exits_zero_on_bad_input_and_outside_a_repository() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    for payload in [&b"not json"[..], b"[1,2]", b""] {
        let output = env.goldfish_stdin(&repo, &["agent-hook", "post-tool-use"], payload);
        assert_eq!(output.status.code(), Some(0));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("payload is not a JSON object"),
            "{output:?}"
        );
    }
    let outside = env.goldfish_stdin(
        env.path(),
        &["agent-hook", "post-tool-use"],
        b"{\"tool_name\":\"Read\"}",
    );
    // Outside a repository (or in one without `.goldfish`), a hook does
    // nothing and says nothing (`plugins.rs`).
    assert_eq!(outside.status.code(), Some(0));
    assert!(outside.stderr.is_empty(), "{outside:?}");
    assert!(memory_lines(&repo).is_empty());
}

/// Regression: a hook payload over 4 MiB was dropped whole, and `capture
/// status` did not count it. It is still dropped (the hook exits 0 and
/// never blocks), and counted as dropped with its reason.
#[test]
fn a_capture_hook_payload_over_4_mib_is_dropped_uncounted() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let huge = tool(
        &repo,
        "Read",
        json!({"file_path": repo.join("big.log")}),
        json!({"content": "x".repeat(5 << 20)}),
    );
    let started = std::time::Instant::now();
    let output = env.goldfish_stdin(
        &repo,
        &["agent-hook", "post-tool-use"],
        huge.to_string().as_bytes(),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("event dropped: hook payload over 4 MiB"),
        "{stderr}"
    );
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["capture", "status", "--json"])).unwrap();
    assert_eq!(status["dropped"], 1, "{status}");
    assert_eq!(
        status["reasons"]["dropped hook payload over 4 MiB"], 1,
        "{status}"
    );
    let text = env.ok(&repo, &["capture", "status"]);
    assert!(
        text.contains("dropped 1") && text.contains("1 dropped hook payload over 4 MiB"),
        "{text}"
    );
    assert!(memory_lines(&repo).is_empty());
}

/// Runs goldfish with extra environment variables.
pub(crate) fn goldfish_with(
    env: &TestEnv,
    repo: &Path,
    vars: &[(&str, &str)],
    args: &[&str],
    stdin: &[u8],
) -> std::process::Output {
    use std::io::Write;
    let mut command = env.command(env!("CARGO_BIN_EXE_goldfish"), repo);
    command
        .args(args)
        .envs(vars.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Queues `event` through the agent hook and runs the worker to its end,
/// both with `vars` (a capture command: the hook's own worker may drain the
/// event first, with the same command); asserts both succeeded and returns
/// the worker's output.
pub(crate) fn capture_through(
    env: &TestEnv,
    repo: &Path,
    vars: &[(&str, &str)],
    event: &[u8],
) -> std::process::Output {
    let out = goldfish_with(env, repo, vars, &["agent-hook", "post-tool-use"], event);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = goldfish_with(env, repo, vars, &["capture", "work", "--wait"], b"");
    assert!(out.status.success(), "{out:?}");
    wait_for_background_workers(env);
    out
}

/// Waits until no process of `env`'s home runs `goldfish capture work`: the
/// worker the hook started in the background may start late, after the
/// foreground one drained the queue, and would take the next call's event
/// with this call's environment (`GOLDFISH_CAPTURE_COMMAND`).
pub(crate) fn wait_for_background_workers(env: &TestEnv) {
    let home = format!(
        "GOLDFISH_HOME={}",
        env.path().join("home/.goldfish").display()
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let running = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .any(|e| {
                let read = |name: &str| std::fs::read(e.path().join(name)).unwrap_or_default();
                let (environ, cmdline) = (read("environ"), read("cmdline"));
                environ.split(|b| *b == 0).any(|v| v == home.as_bytes())
                    && cmdline.split(|b| *b == 0).any(|arg| arg == b"capture")
            })
    };
    while running() {
        assert!(
            std::time::Instant::now() < deadline,
            "a capture worker never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// An edit the rules cannot judge, through a capture command and the worker.
fn edit_event(repo: &Path) -> serde_json::Value {
    tool(
        repo,
        "Edit",
        json!({"file_path": repo.join("src/config.rs"), "old_string": "POOL_SIZE: usize = 4", "new_string": format!("POOL_SIZE: usize = 16 // token={SECRET}")}),
        json!({}),
    )
}

#[test]
fn capture_command_judges_what_the_rules_cannot_and_invalid_calls_are_dropped() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    // A mock of an external LLM CLI (`GOLDFISH_CAPTURE_COMMAND`): it keeps
    // the prompt it got and answers with a tool call.
    let prompt_copy = env.path().join("prompt.txt");
    let valid = env.path().join("mock-llm.sh");
    fs::write(
        &valid,
        format!(
            "#!/bin/sh\ncat > {}\necho '<tool_call>{{\"name\": \"create_observation\", \"arguments\": {{\"type\": \"decision\", \"text\": \"Raised POOL_SIZE from 4 to 16 so sync and recall stop starving each other.\"}}}}</tool_call>'\n",
            prompt_copy.display()
        ),
    )
    .unwrap();
    let invalid = env.path().join("mock-bad-llm.sh");
    fs::write(
        &invalid,
        "#!/bin/sh\ncat > /dev/null\necho '<tool_call>{\"name\": \"create_observation\", \"arguments\": {\"type\": \"decision\", \"text\": \"Raised the pool size for good reasons.\", \"files\": [\"/etc/passwd\"]}}</tool_call>'\n",
    )
    .unwrap();
    for script in [&valid, &invalid] {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(script, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let payload = edit_event(&repo).to_string();
    for script in [&valid, &invalid] {
        // The hook's worker and this one run with the same command.
        let vars = [("GOLDFISH_CAPTURE_COMMAND", script.to_str().unwrap())];
        capture_through(&env, &repo, &vars, payload.as_bytes());
    }

    let lines = memory_lines(&repo);
    assert_eq!(lines.len(), 1, "only the valid call is stored: {lines:#?}");
    let memory = &lines[0];
    assert_eq!(memory["type"], "decision");
    assert_eq!(memory["source"], "capture:command-mock-llm.sh");
    assert_eq!(
        memory["files"],
        json!(["src/config.rs"]),
        "paths come from the tool input, not the model"
    );
    assert_eq!(
        memory["content"],
        "Raised POOL_SIZE from 4 to 16 so sync and recall stop starving each other."
    );
    let prompt = fs::read_to_string(&prompt_copy).unwrap();
    assert!(
        prompt.contains("create_observation") && prompt.contains("Modified: src/config.rs"),
        "{prompt}"
    );
    assert!(prompt.contains("POOL_SIZE"), "{prompt}");
    assert!(
        !prompt.contains(SECRET),
        "secrets never reach a model: {prompt}"
    );

    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["capture", "status", "--json"])).unwrap();
    assert_eq!(status["stored"], 1, "{status}");
    assert_eq!(status["dropped"], 1, "{status}");
    assert_eq!(
        status["reasons"]["dropped invalid tool call: unexpected argument `files`"], 1,
        "{status}"
    );
}

#[test]
fn labelled_set_with_rules_only_records_no_junk_and_no_secret() {
    let set = goldfish::adapters::capture::eval::load(include_str!(
        "../../fixtures/capture/events.jsonl"
    ))
    .unwrap();
    assert!(set.len() >= 60);
    let report = goldfish::adapters::capture::eval::evaluate(&set, Path::new("/repo"), None);
    eprintln!(
        "{report:#?}\nprecision {:.2} recall {:.2} type accuracy {:.2}",
        report.precision(),
        report.recall(),
        report.type_accuracy()
    );
    assert_eq!(report.secrets_leaked, 0);
    assert!(report.false_positives.is_empty(), "{report:#?}");
    assert!(report.precision() >= 0.9, "{report:#?}");
    assert_eq!(report.type_accuracy(), 1.0, "{report:#?}");
    // The first 9 sessions (ids 1-49: runs failing then passing, decision
    // records, trivia) are the shapes the rules are for; the sessions after
    // them state their reasons in comments, commit messages and outputs,
    // which no rule reads (docs/BENCHMARKS.md, "Capture").
    let first: Vec<_> = set.iter().filter(|e| e.id <= 49).cloned().collect();
    let report = goldfish::adapters::capture::eval::evaluate(&first, Path::new("/repo"), None);
    assert!(report.recall() >= 0.6, "{report:#?}");
}

/// The model given more context sees what says why: the comment lines an
/// edit adds, a commit's message, a command's output, secrets removed; the
/// plain description (what the worker shows) has none of them.
#[test]
fn more_context_shows_the_model_the_reasons_the_labelled_events_state() {
    use goldfish::domain::capture::{event, prompt};
    let set = goldfish::adapters::capture::eval::load(include_str!(
        "../../fixtures/capture/events.jsonl"
    ))
    .unwrap();
    let describe = |id: u32, context: prompt::Context| {
        let labelled = set.iter().find(|e| e.id == id).unwrap();
        let mut payload = labelled.payload.clone();
        event::sanitize(&mut payload);
        prompt::describe_with(&event::facts(&payload, Path::new("/repo")), context)
    };
    for (id, why) in [
        (
            51,
            "Comments added:\n# Avatar and invoice uploads over 1 MB got 413 errors",
        ),
        (53, "hammered the pricing service"),
        (
            56,
            "Commit message:\nPin openssl to 3.0.x: 3.2 breaks the FIPS provider",
        ),
        (
            61,
            "Commit message:\nMove sessions from sticky load balancing to Redis\n\nEvery deploy logged users out",
        ),
        (70, "Output:\nINC-2291 closed.\nSummary: checkout 502s"),
    ] {
        let rich = describe(id, prompt::Context::Rich);
        assert!(rich.contains(why), "event {id}: {rich}");
        let plain = describe(id, prompt::Context::Plain);
        assert!(rich.starts_with(&plain), "event {id}: {plain}");
        assert!(!plain.contains("Comments added:") && !plain.contains("Commit message:"));
    }
    // A secret in a command's output never reaches the model.
    let rich = describe(31, prompt::Context::Rich);
    assert!(!rich.contains("sk_live_51HxQ2eLkdIwHu7ix"), "{rich}");
}

/// Installs `model` as the home's default capture model, as `goldfish
/// model install --capture` leaves it.
fn install_capture_model(env: &TestEnv, model: &Path) {
    let dir = env.path().join("home/.goldfish/models/capture");
    fs::create_dir_all(&dir).unwrap();
    let to = dir.join(goldfish::adapters::capture::install::DEFAULT_GGUF);
    if fs::hard_link(model, &to).is_err() {
        fs::copy(model, &to).unwrap();
    }
}

/// The default model installed and not turned on: capture keeps to the
/// rules (the model did not beat them on the labelled set), `capture
/// status` says so and how to turn it on; `GOLDFISH_CAPTURE=model` turns it
/// on, `rules` off, anything else is named and ignored.
#[test]
fn with_the_capture_model_installed_and_no_opt_in_status_names_the_rules_as_judge() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let status = |vars: &[(&str, &str)]| -> serde_json::Value {
        let out = goldfish_with(&env, &repo, vars, &["capture", "status", "--json"], b"");
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let nothing = status(&[]);
    assert_eq!(nothing["judge"], "rules", "{nothing}");
    let asked = status(&[("GOLDFISH_CAPTURE", "model")]);
    assert_eq!(asked["judge"], "rules", "{asked}");
    let missing = if cfg!(feature = "capture-model") {
        "no capture model is installed: `goldfish model install --capture`"
    } else {
        "GOLDFISH_CAPTURE=model, but this build has no capture model: rebuild with --features capture-model"
    };
    assert!(
        asked["judge_detail"].as_str().unwrap().contains(missing),
        "{asked}"
    );

    // Not a model: with no opt-in it is never loaded.
    let model = env.path().join("model.gguf");
    fs::write(&model, "not a model").unwrap();
    install_capture_model(&env, &model);
    let text = env.ok(&repo, &["capture", "status"]);
    assert!(
        text.contains("judge: rules only (the capture model ")
            && text.contains("SmolLM2-135M-Instruct.Q4_1.gguf is installed but off: GOLDFISH_CAPTURE=model turns it on)"),
        "{text}"
    );
    assert_eq!(status(&[])["judge"], "rules");
    let on = status(&[("GOLDFISH_CAPTURE", "model")]);
    if cfg!(feature = "capture-model") {
        assert_eq!(on["judge"], "model", "{on}");
        assert!(
            on["judge_detail"]
                .as_str()
                .unwrap()
                .contains("SmolLM2-135M-Instruct.Q4_1.gguf")
        );
    } else {
        assert_eq!(on["judge"], "rules", "{on}");
        assert!(
            on["judge_detail"]
                .as_str()
                .unwrap()
                .contains("rebuild with --features capture-model"),
            "{on}"
        );
    }
    let off = status(&[
        ("GOLDFISH_CAPTURE", "rules"),
        ("GOLDFISH_CAPTURE_COMMAND", "true"),
    ]);
    assert_eq!(off["judge"], "rules", "{off}");
    let typo = status(&[("GOLDFISH_CAPTURE", "modle")]);
    assert_eq!(typo["judge"], "rules", "{typo}");
    assert!(
        typo["judge_detail"]
            .as_str()
            .unwrap()
            .contains("GOLDFISH_CAPTURE=modle is neither `rules` nor `model`"),
        "{typo}"
    );
    assert_eq!(
        status(&[("GOLDFISH_CAPTURE_COMMAND", "true")])["judge"],
        "command"
    );

    // The worker does not load it: an edit is left to the rules (no "did
    // not load" warning, the rules' own verdict) and the fix is theirs.
    session(&env, &repo);
    let out = goldfish_with(&env, &repo, &[], &["capture", "work", "--wait"], b"");
    assert!(out.status.success(), "{out:?}");
    // The hooks' background worker logs there.
    let log =
        fs::read_to_string(env.path().join("home/.goldfish/logs/capture.log")).unwrap_or_default();
    assert!(!log.contains("did not load"), "{log}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("did not load"));
    let status = status(&[]);
    assert_eq!(
        status["reasons"]["skipped edit (kept for the session summary)"], 1,
        "{status}"
    );
    let lines = memory_lines(&repo);
    assert!(!lines.is_empty());
    assert!(
        lines.iter().all(|m| m["source"] == "capture:rules"),
        "{lines:#?}"
    );
}

/// The capture model: `GOLDFISH_TEST_CAPTURE_MODEL`, else the default one
/// in the test model home (`scripts/test.sh --capture-model` installs it
/// there).
#[cfg(feature = "capture-model")]
fn capture_model() -> std::path::PathBuf {
    let path = std::env::var_os("GOLDFISH_TEST_CAPTURE_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            crate::common::model_home().join("models/capture/SmolLM2-135M-Instruct.Q4_1.gguf")
        });
    assert!(
        path.is_file(),
        "the capture model is not installed at {}: run `bash scripts/test.sh`, which installs it",
        path.display()
    );
    path
}

/// A build without the `capture-model` feature (the default) says so
/// wherever the capture model is asked for, and never runs it silently:
/// `model install --capture` refuses (exit 2), and a worker told
/// `GOLDFISH_CAPTURE=model` or given `GOLDFISH_CAPTURE_MODEL` warns and
/// keeps to the rules.
#[test]
#[cfg(not(feature = "capture-model"))]
fn without_the_capture_model_feature_asking_for_the_model_names_the_feature() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let out = env.goldfish(&repo, &["model", "install", "--capture"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("this build has no capture model: rebuild with --features capture-model"),
        "{stderr}"
    );
    let model = env.path().join("model.gguf");
    fs::write(&model, "not a model").unwrap();
    for vars in [
        [("GOLDFISH_CAPTURE", "model")],
        [("GOLDFISH_CAPTURE_MODEL", model.to_str().unwrap())],
    ] {
        let out = goldfish_with(&env, &repo, &vars, &["capture", "work", "--wait"], b"");
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("but this build has no capture model: rebuild with --features capture-model; using the rules only"),
            "{stderr}"
        );
    }
}

#[test]
#[cfg(feature = "capture-model")]
#[ignore = "needs the capture model: bash scripts/test.sh --capture-model"]
fn capture_with_the_default_model_in_process_judges_edits_and_stores_only_valid_calls() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    install_capture_model(&env, &capture_model());
    let vars = [("GOLDFISH_CAPTURE", "model")];
    let status: serde_json::Value = serde_json::from_slice(
        &goldfish_with(&env, &repo, &vars, &["capture", "status", "--json"], b"").stdout,
    )
    .unwrap();
    assert_eq!(status["judge"], "model", "{status}");
    let events = [
        edit_event(&repo),
        tool(
            &repo,
            "Bash",
            json!({"command": "npm install"}),
            json!({"stdout": "added 214 packages in 6s", "stderr": ""}),
        ),
    ];
    for event in &events {
        let out = goldfish_with(
            &env,
            &repo,
            &vars,
            &["agent-hook", "post-tool-use"],
            event.to_string().as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let out = goldfish_with(&env, &repo, &vars, &["capture", "work", "--wait"], b"");
    assert!(out.status.success(), "{out:?}");

    // Each event was put to the model: stored under its id, found not worth
    // it, or dropped as an invalid call; never the rules-only verdict.
    let home = env.path().join("home/.goldfish/capture");
    let queue = fs::read_dir(&home).unwrap().next().unwrap().unwrap().path();
    let statuses: Vec<serde_json::Value> = fs::read_to_string(queue.join("status.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(statuses.len(), 2, "{statuses:#?}");
    for status in &statuses {
        let by_model = status["verdict"] == "stored"
            || status["reason"] == "the model found nothing worth recording"
            || status["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("invalid tool call"));
        assert!(by_model, "{status}");
    }
    let lines = memory_lines(&repo);
    for memory in &lines {
        assert!(
            memory["source"]
                .as_str()
                .unwrap()
                .starts_with("capture:smollm2"),
            "{memory}"
        );
        assert!(
            [
                "bug-fix",
                "feature",
                "refactor",
                "decision",
                "insight",
                "observation"
            ]
            .contains(&memory["type"].as_str().unwrap())
        );
        assert!(!memory.to_string().contains(SECRET));
    }
    let stored = statuses.iter().filter(|s| s["verdict"] == "stored").count();
    assert_eq!(lines.len(), stored);
}

/// The same work captured again (another session doing what one already
/// recorded) is not stored twice: with the embedding model, an observation
/// nearly repeating a memory of the workspace is skipped, and says which.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn a_captured_observation_the_team_already_has_is_skipped() {
    let env = TestEnv::new().with_model();
    let repo = env.repo("r", "Ada");
    session(&env, &repo);
    let first = memory_lines(&repo);
    assert_eq!(first.len(), 2, "{first:#?}");
    session_as(&env, &repo, "sess-2");
    assert_eq!(memory_lines(&repo), first, "nothing stored twice");
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["capture", "status", "--json"])).unwrap();
    assert_eq!(
        status["reasons"]["skipped near-duplicate of a memory"], 2,
        "{status:#}"
    );
    assert_eq!(status["stored"], 2, "{status:#}");
}

/// Issue 40: Gemini CLI as a first-class agent. `init --agent gemini
/// --capture` writes its `AfterTool` and `AfterAgent` hooks, and a session
/// given as `@google/gemini-cli` 0.61.0 gives its hooks (`tool_name`
/// `read_file`, `run_shell_command`, `replace`; `tool_response` =
/// `{llmContent, returnDisplay, error}`, a shell's exit code written in
/// `llmContent` only when it is not 0; `AfterAgent` with the turn's
/// `prompt` and `prompt_response`) is captured by the same rules as Claude
/// Code's: a bug fix naming the failing test and the file changed, and the
/// session's checkpoint.
#[test]
fn a_gemini_session_is_captured_by_the_same_rules() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let init = env.ok(&repo, &["init", "--agent", "gemini", "--capture"]);
    assert!(
        init.contains(
            "turned capture on: AfterTool, AfterAgent and SessionEnd hooks in .gemini/settings.json"
        ),
        "{init}"
    );
    let settings: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(repo.join(".gemini/settings.json")).unwrap())
            .unwrap();
    let run = |event: &str, payload: serde_json::Value| {
        let command = settings["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("no {event} hook: {settings:#}"))
            .to_owned();
        run_hook(&env, &repo, &command, &payload);
    };
    let base = |event: &str| {
        json!({
            "session_id": "gemini-1",
            "transcript_path": repo.join("../chats/session.json"),
            "cwd": repo,
            "hook_event_name": event,
            "timestamp": "2026-11-20T09:00:00.000Z",
        })
    };
    let tool = |name: &str, input: serde_json::Value, response: serde_json::Value| {
        let mut payload = base("AfterTool");
        payload["tool_name"] = name.into();
        payload["tool_input"] = input;
        payload["tool_response"] = response;
        payload
    };
    let file = repo.join("src/git.rs");
    run(
        "AfterTool",
        tool(
            "read_file",
            json!({"file_path": file}),
            json!({"llmContent": "fn drain() {}", "returnDisplay": ""}),
        ),
    );
    run(
        "AfterTool",
        tool(
            "run_shell_command",
            json!({"command": "cargo test --test it sync::branch_switch", "description": "run the test"}),
            json!({
                "llmContent": "Output: running 1 test\ntest sync::branch_switch ... FAILED\nthread 'sync::branch_switch' panicked at src/git.rs:41: journal not drained\nerror: test failed, to rerun pass `--test it`\nExit Code: 101\nProcess Group PGID: 4242",
                "returnDisplay": "Exit Code: 101",
            }),
        ),
    );
    run(
        "AfterTool",
        tool(
            "replace",
            json!({"file_path": file, "instruction": "drain first", "old_string": "a", "new_string": "b"}),
            json!({"llmContent": "Successfully modified file", "returnDisplay": {"fileDiff": "-a\n+b"}}),
        ),
    );
    run(
        "AfterTool",
        tool(
            "run_shell_command",
            json!({"command": "cargo test --test it sync::branch_switch"}),
            json!({
                "llmContent": "Output: test result: ok. 1 passed\nProcess Group PGID: 4243",
                "returnDisplay": "",
            }),
        ),
    );
    let mut end = base("AfterAgent");
    end["prompt"] = "Fix the failing sync test on branch switch".into();
    end["prompt_response"] =
        "The sync read the log before `drain_journal` ran, because src/git.rs called it last. Fixed: the journal is drained before the sync. Next: add a test for rebases.".into();
    end["stop_hook_active"] = false.into();
    run("AfterAgent", end);
    env.ok(&repo, &["capture", "work", "--wait"]);

    let lines = memory_lines(&repo);
    let fix = lines
        .iter()
        .find(|l| l["type"] == "bug-fix")
        .unwrap_or_else(|| panic!("a bug fix: {lines:#?}"));
    assert_eq!(fix["session"], "gemini-1");
    assert_eq!(fix["files"], json!(["src/git.rs"]));
    let content = fix["content"].as_str().unwrap();
    assert!(
        content.starts_with("`sync::branch_switch` failed:"),
        "{content}"
    );
    assert!(
        content.contains("Check: `cargo test --test it sync::branch_switch` failed, then passed."),
        "{content}"
    );
    assert!(content.contains("journal not drained"), "{content}");
    assert!(
        !content.contains("PGID"),
        "Gemini's trailer is not output: {content}"
    );
    let summary = lines
        .iter()
        .find(|l| l["type"] == "checkpoint")
        .unwrap_or_else(|| panic!("a checkpoint: {lines:#?}"));
    let summary = summary["content"].as_str().unwrap();
    assert!(
        summary.starts_with("Fix the failing sync test on branch switch"),
        "{summary}"
    );
    assert!(
        summary.contains("Next: add a test for rebases"),
        "{summary}"
    );

    // A second turn: the session stays the unit, as with Claude Code. Its
    // checkpoint replaces the first and carries the first turn's cause.
    let cli = repo.join("src/cli.rs");
    run(
        "AfterTool",
        tool(
            "replace",
            json!({"file_path": cli, "instruction": "add the flag", "old_string": "struct Args {", "new_string": "struct Args {\n    verbose: bool,"}),
            json!({"llmContent": "Successfully modified file", "returnDisplay": {"fileDiff": "+    verbose: bool,"}}),
        ),
    );
    let mut end = base("AfterAgent");
    end["prompt"] = "Now add a --verbose flag".into();
    end["prompt_response"] = "Added the `verbose` field to `Args` in src/cli.rs.".into();
    end["stop_hook_active"] = false.into();
    run("AfterAgent", end);
    env.ok(&repo, &["capture", "work", "--wait"]);
    let lines = memory_lines(&repo);
    let replaced: Vec<&serde_json::Value> = lines.iter().map(|l| &l["supersedes"]).collect();
    let current: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "checkpoint" && !replaced.contains(&&l["id"]))
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    assert_eq!(current.len(), 1, "one checkpoint a session: {current:#?}");
    let checkpoint = current[0];
    assert!(
        checkpoint.starts_with("Fix the failing sync test on branch switch"),
        "{checkpoint}"
    );
    assert!(
        checkpoint.contains("Now add a --verbose flag"),
        "{checkpoint}"
    );
    assert!(
        checkpoint.contains("before `drain_journal` ran"),
        "the first turn's cause: {checkpoint}"
    );
    assert!(
        checkpoint.contains("src/git.rs") && checkpoint.contains("src/cli.rs"),
        "{checkpoint}"
    );
}

/// A Gemini CLI 0.61 session driven through the hooks `init --agent gemini
/// --capture` wrote, with payloads shaped as the package's
/// `HookEventHandler` builds them (`bundle/chunk-*.js`: `createBaseInput`'s
/// `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`,
/// then each event's fields) and shell results as its shell tool writes
/// them since 0.48 (`llmContent` inside `<untrusted_context>`, the output
/// as `returnDisplay`), captured from a real run.
struct GeminiSession {
    settings: serde_json::Value,
    repo: std::path::PathBuf,
    chat: std::path::PathBuf,
}

impl GeminiSession {
    fn new(env: &TestEnv) -> GeminiSession {
        let repo = env.repo("repo", "Alice");
        env.ok(&repo, &["init", "--agent", "gemini", "--capture"]);
        let settings =
            serde_json::from_str(&fs::read_to_string(repo.join(".gemini/settings.json")).unwrap())
                .unwrap();
        let chat = env.path().join("session-2026-11-20T09-00-gemini56.jsonl");
        GeminiSession {
            settings,
            repo,
            chat,
        }
    }

    fn run(&self, env: &TestEnv, event: &str, fields: serde_json::Value) {
        let command = self.settings["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("no {event} hook: {:#}", self.settings))
            .to_owned();
        let mut payload = json!({
            "session_id": "gemini-56",
            "transcript_path": self.chat,
            "cwd": self.repo,
            "hook_event_name": event,
            "timestamp": "2026-11-20T09:00:00.000Z",
        });
        for (key, value) in fields.as_object().unwrap() {
            payload[key] = value.clone();
        }
        run_hook(env, &self.repo, &command, &payload);
    }

    fn shell(&self, env: &TestEnv, command: &str, llm: &str, display: &str) {
        self.run(
            env,
            "AfterTool",
            json!({
                "tool_name": "run_shell_command",
                "tool_input": {"command": command, "description": "run the tests"},
                "tool_response": {"llmContent": llm, "returnDisplay": display},
            }),
        );
    }

    fn edit(&self, env: &TestEnv, file: &str) {
        self.run(
            env,
            "AfterTool",
            json!({
                "tool_name": "replace",
                "tool_input": {"file_path": self.repo.join(file), "instruction": "fix the total", "old_string": "a + b + 1", "new_string": "a + b"},
                "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": {"fileDiff": "-a + b + 1\n+a + b"}},
            }),
        );
    }

    fn end_turn(&self, env: &TestEnv, prompt: &str, answer: &str) {
        self.run(
            env,
            "AfterAgent",
            json!({"prompt": prompt, "prompt_response": answer, "stop_hook_active": false}),
        );
    }
}

/// Gemini CLI 0.61's shell result of a failing run (`Exit Code: 1`).
const GEMINI_FAILED: &str = "<untrusted_context>\nOutput: FAIL tests/cart.test.js\n  cart total\n    expected 5, got 6\n      at total (src/cart.js:3:10)\nTests: 1 failed, 1 total\nExit Code: 1\nProcess Group PGID: 22847\n</untrusted_context>";
const GEMINI_FAILED_DISPLAY: &str = "FAIL tests/cart.test.js\n  cart total\n    expected 5, got 6\n      at total (src/cart.js:3:10)\nTests: 1 failed, 1 total";

/// Issue 56: Gemini CLI 0.61 wraps a shell result in
/// `<untrusted_context>`, and a result that is not its `Output: …` form
/// (a command moved to the background, a summarized output) says nothing
/// of how the command ended: its exit code was written as 0, a pass, so a
/// failing run then such a result read as fail-then-pass and stored a
/// fix. Unknown is no pass; the same run failing then passing, in 0.61's
/// shape, is the fix.
#[test]
fn issue_56_a_gemini_shell_result_without_an_exit_code_is_no_pass() {
    let env = TestEnv::new();
    let session = GeminiSession::new(&env);
    let test = "npm test -- tests/cart.test.js";
    session.shell(&env, test, GEMINI_FAILED, GEMINI_FAILED_DISPLAY);
    session.edit(&env, "src/cart.js");
    session.shell(
        &env,
        test,
        "<untrusted_context>\nCommand moved to background (PID: 4242). Output hidden. Press Ctrl+B to view.\n</untrusted_context>",
        "Command moved to background (PID: 4242). Output hidden. Press Ctrl+B to view.",
    );
    session.end_turn(
        &env,
        "Fix the cart total test",
        "Started the tests in the background.",
    );
    env.ok(&session.repo, &["capture", "work", "--wait"]);
    let lines = memory_lines(&session.repo);
    assert!(
        !lines.iter().any(|l| l["type"] == "bug-fix"),
        "no pass was seen: {lines:#?}"
    );

    session.shell(
        &env,
        test,
        "<untrusted_context>\nOutput: PASS tests/cart.test.js\nTests: 1 passed, 1 total\nProcess Group PGID: 22853\n</untrusted_context>",
        "PASS tests/cart.test.js\nTests: 1 passed, 1 total",
    );
    session.end_turn(
        &env,
        "Run them again",
        "The total added 1 twice in src/cart.js; fixed.",
    );
    env.ok(&session.repo, &["capture", "work", "--wait"]);
    let lines = memory_lines(&session.repo);
    let fix = lines
        .iter()
        .find(|l| l["type"] == "bug-fix")
        .unwrap_or_else(|| panic!("a bug fix: {lines:#?}"));
    let content = fix["content"].as_str().unwrap();
    assert!(
        content.contains(&format!("Check: `{test}` failed, then passed.")),
        "{content}"
    );
    assert!(!content.contains("untrusted_context"), "{content}");
}

/// Issue 56: with `gemini -p` the SessionStart briefing comes before the
/// prompt (`<hook_context>…</hook_context>`, a blank line, the prompt), in
/// `AfterAgent`'s `prompt` and in the chat record's user message; the
/// session's checkpoint quoted the briefing as the request. It quotes
/// what the person asked.
#[test]
fn issue_56_a_headless_gemini_checkpoint_quotes_the_request_not_the_briefing() {
    let env = TestEnv::new();
    let session = GeminiSession::new(&env);
    let briefing = format!(
        "{}\n## Recent decisions\n- Deploys go out on Tuesdays after the freeze",
        goldfish::app::render::QUOTED_DATA
    );
    let prompt = format!("<hook_context>{briefing}</hook_context>\n\nFix the cart total test");
    fs::write(
        &session.chat,
        [
            json!({"sessionId": "gemini-56", "projectHash": "p", "startTime": "2026-11-20T09:00:00Z", "lastUpdated": "2026-11-20T09:00:00Z", "kind": "main"}),
            json!({"id": "1", "timestamp": "2026-11-20T09:00:01Z", "type": "user", "content": [{"text": prompt}]}),
            json!({"id": "2", "timestamp": "2026-11-20T09:01:00Z", "type": "gemini", "content": "The total added 1 twice in src/cart.js; fixed."}),
        ]
        .map(|line| line.to_string())
        .join("\n"),
    )
    .unwrap();
    session.edit(&env, "src/cart.js");
    session.end_turn(
        &env,
        &prompt,
        "The total added 1 twice in src/cart.js; fixed.",
    );
    session.run(&env, "SessionEnd", json!({"reason": "exit"}));
    env.ok(&session.repo, &["capture", "work", "--wait"]);
    let lines = memory_lines(&session.repo);
    let checkpoint = lines
        .iter()
        .find(|l| l["type"] == "checkpoint")
        .unwrap_or_else(|| panic!("a checkpoint: {lines:#?}"));
    let content = checkpoint["content"].as_str().unwrap();
    assert!(content.starts_with("Fix the cart total test"), "{content}");
    assert!(
        !content.contains("hook_context") && !content.contains("Tuesdays"),
        "{content}"
    );
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "checkpoint").count(),
        1,
        "SessionEnd after AfterAgent adds no second checkpoint: {lines:#?}"
    );
}

/// Regression (issue 54, finding 5): a test's output held
/// `postgres://app:Sup3rS3cret@db`, which capture removed there; the
/// agent's last answer (the Stop payload's `last_assistant_message`) said
/// the password again in a sentence, and the checkpoint stored it. What
/// capture removed anywhere in a session is removed everywhere in it: the
/// last answer, the transcript's answer, a PreCompact checkpoint; the
/// session's state holds only hashes.
#[test]
fn issue_54_a_password_removed_from_a_test_output_never_comes_back_in_the_last_answer() {
    let env = TestEnv::new();
    let repo = env.repo("project", "Ada");
    env.ok(&repo, &["init", "--agent", "claude", "--capture"]);
    let transcript = repo.join("../transcript.jsonl");
    let answer =
        "The password Sup3rS3cret was hard-coded in config_test; it reads DB_PASSWORD now.";
    fs::write(
        &transcript,
        [
            json!({"type": "user", "message": {"role": "user", "content": "Fix the config test"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Sup3rS3cret is gone from config_test."}]}}),
        ]
        .map(|l| l.to_string())
        .join("\n"),
    )
    .unwrap();
    let (event, failing) = failed_run(
        &repo,
        "sess-1",
        "cargo test config_test",
        "running 1 test\ntest config_test ... FAILED\n\nfailures:\n---- config_test stdout ----\nthread 'config_test' panicked at src/config.rs:12:5:\nconnection refused: postgres://app:Sup3rS3cret@db\n\ntest result: FAILED. 0 passed; 1 failed",
        true,
    );
    hook(&env, &repo, event, &failing);
    hook(
        &env,
        &repo,
        "post-tool-use",
        &tool(
            &repo,
            "Edit",
            json!({"file_path": repo.join("src/config.rs"), "old_string": "\"Sup3rS3cret\"", "new_string": "env(\"DB_PASSWORD\")"}),
            json!({}),
        ),
    );
    hook(
        &env,
        &repo,
        "post-tool-use",
        &tool(
            &repo,
            "Bash",
            json!({"command": "cargo test config_test"}),
            json!({"stdout": "test result: ok. 1 passed", "stderr": "", "interrupted": false}),
        ),
    );
    hook(
        &env,
        &repo,
        "stop",
        &json!({
            "session_id": "sess-1",
            "transcript_path": transcript,
            "cwd": repo,
            "hook_event_name": "Stop",
            "stop_hook_active": false,
            "last_assistant_message": answer,
        }),
    );
    env.ok(&repo, &["capture", "work", "--wait"]);

    let lines = memory_lines(&repo);
    let text = serde_json::to_string(&lines).unwrap();
    assert!(!text.contains("Sup3rS3cret"), "{text}");
    let checkpoint = lines
        .iter()
        .find(|l| l["type"] == "checkpoint")
        .expect("a checkpoint");
    let content = checkpoint["content"].as_str().unwrap();
    assert!(
        content.contains("The password …[redacted] was hard-coded in config_test"),
        "the rest of the answer is kept: {content}"
    );
    assert!(lines.iter().any(|l| l["type"] == "bug-fix"), "{lines:#?}");

    // Capture's state and status log: never the value in the clear.
    let capture = env.path().join("home/.goldfish/capture");
    for entry in walk(&capture) {
        let bytes = fs::read(&entry).unwrap();
        let name = entry.display().to_string();
        let clear = String::from_utf8_lossy(&bytes);
        if name.ends_with(".json") {
            assert!(!clear.contains("Sup3rS3cret"), "{name}: {clear}");
        }
    }

    // A PreCompact checkpoint of the same session quotes the transcript's
    // answer, where no rule sees a secret: hidden all the same.
    run_hook(
        &env,
        &repo,
        "goldfish agent-hook pre-compact",
        &json!({"session_id": "sess-1", "transcript_path": transcript, "cwd": repo, "hook_event_name": "PreCompact"}),
    );
    let lines = memory_lines(&repo);
    let text = serde_json::to_string(&lines).unwrap();
    assert!(
        text.contains("Last answer: …[redacted] is gone from config_test."),
        "{text}"
    );
    assert!(!text.contains("Sup3rS3cret"), "{text}");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
