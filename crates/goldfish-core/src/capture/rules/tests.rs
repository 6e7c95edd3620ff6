use super::*;

fn bash(command: &str, outcome: Outcome) -> Facts {
    Facts {
        tool: "Bash".to_owned(),
        command: Some(command.to_owned()),
        outcome: Some(outcome),
        ..Facts::default()
    }
}

fn edit(path: &str) -> Facts {
    Facts {
        tool: "Edit".to_owned(),
        modified: vec![path.to_owned()],
        ..Facts::default()
    }
}

fn edit_text(path: &str, old: &str, new: &str) -> Facts {
    Facts {
        edits: vec![Edit {
            file: path.to_owned(),
            old: Some(old.to_owned()),
            new: new.to_owned(),
            what: None,
            span: None,
        }],
        ..edit(path)
    }
}

#[test]
fn the_checkpoint_carries_every_turn_and_keeps_the_next_step() {
    let mut session = AgentSession::default();
    session.apply(&edit_text("src/render.rs", "a", "b"));
    let turn = |request: &str, answer: &str| Turn {
        requests: vec![request.to_owned()],
        answers: vec![answer.to_owned()],
        ..Turn::default()
    };
    session.end_turn(&turn(
        "Port the renderer",
        "Ported it: `render_frame` must run on the UI thread, because the terminal handle is not `Send`.",
    ));
    session.apply(&edit_text("src/cli.rs", "a", "b"));
    let verdicts = session.end_turn(&turn(
        "Wire it in",
        &format!(
            "{}\nNext: wire the new layout into the CLI.",
            "Details of the port. ".repeat(40)
        ),
    ));
    let Some((Verdict::Store(checkpoint), _)) = verdicts.last() else {
        panic!("{verdicts:?}")
    };
    let content = &checkpoint.content;
    assert!(
        content.starts_with("Port the renderer\nThen asked: Wire it in"),
        "{content}"
    );
    assert!(
        content.contains("Learned: Ported it: `render_frame` must run on the UI thread"),
        "{content}"
    );
    assert!(
        content.ends_with("Next: wire the new layout into the CLI."),
        "{content}"
    );
    assert!(!content.contains("Details of the port"), "{content}");
    assert_eq!(one_line("a\n\n  b\tc"), "a b c");
}

#[test]
fn checks_are_known_by_the_projects_tasks_pipes_and_output() {
    for check in [
        "mise run test:ci",
        "mise run lint 2>&1 | tail -30",
        "just test",
        "pnpm test -- --run",
        "bun test",
        "uv run pytest -x",
        "mix test",
        "go test ./... 2>&1 | head -50",
    ] {
        assert!(is_check(check), "{check}");
    }
    for other in [
        "mise run fmt",
        "just release",
        "pnpm install",
        "uv run python x.py",
    ] {
        assert!(!is_check(other), "{other}");
    }
    assert!(covers("mise run test", "mise run test:ci"));
    assert!(covers(
        "go test ./pkg/ 2>&1 | tail -5",
        "go test ./pkg/ | head -100"
    ));
    assert!(runner_summary("ok  \tgithub.com/x/y\t0.01s"));
    assert!(runner_summary("==== 3 passed in 0.1s ===="));
    assert!(!runner_summary("hello world"));
}

#[test]
fn edits_undone_or_restored_leave_no_fix_and_the_checkpoint_names_what_stayed() {
    let failed = bash("go test ./...", Outcome::Failed);
    let passed = bash("go test ./...", Outcome::Succeeded);
    // The reverse edit undoes the first.
    let mut session = AgentSession::default();
    session.apply(&edit_text("a.go", "x", "y"));
    session.apply(&failed);
    session.apply(&edit_text("a.go", "y", "x"));
    assert_eq!(session.apply(&passed), Verdict::Skip(REVERTED));
    // `git restore` (or `git checkout -- PATH`) puts the file back.
    let mut session = AgentSession::default();
    session.apply(&failed);
    session.apply(&edit_text("pkg/a.go", "x", "y"));
    session.apply(&bash("git restore pkg/a.go", Outcome::Succeeded));
    assert_eq!(session.apply(&passed), Verdict::Skip(REVERTED));
    // An edit that stays is a fix; the checkpoint names only what
    // stayed changed.
    let mut session = AgentSession::default();
    session.apply(&edit_text("b.go", "1", "2"));
    session.apply(&failed);
    session.apply(&edit_text("a.go", "x", "y"));
    session.apply(&edit_text("b.go", "2", "1"));
    assert!(matches!(session.apply(&passed), Verdict::Hold(_)));
    let summary = session.summary().unwrap();
    assert_eq!(summary.files, ["a.go"]);
    // An interrupted run neither fails nor passes.
    let mut interrupted = bash("go test ./...", Outcome::Failed);
    interrupted.interrupted = true;
    assert_eq!(session.apply(&interrupted), Verdict::Skip(INTERRUPTED));
    assert!(session.failing.is_empty());
}

/// A session whose fix no check saw (a public SWE-agent trajectory,
/// fixtures/capture-sessions/py-swe-humanevalfix-0): its checkpoint
/// says what changed, not only which file; with a fix, the fix says it.
#[test]
fn a_checkpoint_says_what_changed_when_no_fix_does() {
    let mut session = AgentSession::default();
    let mut fix = edit_text(
        "main.py",
        "if elem - elem2 < threshold:",
        "if abs(elem - elem2) < threshold:",
    );
    fix.edits[0].what = Some("`if abs(elem - elem2) < threshold:`".to_owned());
    session.apply(&fix);
    let summary = session.summary().unwrap();
    assert!(
        summary.content.contains(
            "Done: changed main.py. Changed main.py: `if abs(elem - elem2) < threshold:`."
        ),
        "{}",
        summary.content
    );
    session.apply(&bash("pytest", Outcome::Failed));
    session.apply(&fix);
    session.apply(&bash("pytest", Outcome::Succeeded));
    let summary = session.summary().unwrap();
    assert_eq!(
        summary.content.matches("Changed main.py").count(),
        1,
        "{}",
        summary.content
    );
}

/// A real session (fixtures/capture-sessions/go-entire-concurrent-sessions):
/// the test failed, the code was fixed, the test failed further along,
/// the test was fixed, it passed. The same check failing again is one
/// failure: the fix names the code changed after its first run, and
/// its first error, not only what changed after the last.
#[test]
fn a_check_failing_again_keeps_what_changed_since_it_first_failed() {
    let mut session = AgentSession::default();
    let mut first = bash("go test -run TestBoth ./it/", Outcome::Failed);
    first.failing_tests = vec!["TestBoth".to_owned()];
    first.errors = vec!["it_test.go:309: Session B: 0 checkpoints".to_owned()];
    assert_eq!(session.apply(&first), Verdict::Wait(WAITING));
    session.apply(&edit_text(
        "cli/handlers.go",
        "state{}",
        "state{WorktreePath: dir}",
    ));
    let mut again = bash("go test -run TestBoth ./it/", Outcome::Failed);
    again.failing_tests = vec!["TestBoth".to_owned()];
    again.errors = vec!["it_test.go:320: no full.jsonl".to_owned()];
    assert_eq!(session.apply(&again), Verdict::Wait(WAITING));
    session.apply(&edit_text(
        "it/it_test.go",
        "transcript.jsonl",
        "full.jsonl",
    ));
    let Verdict::Hold(fix) =
        session.apply(&bash("go test -run TestBoth ./it/", Outcome::Succeeded))
    else {
        panic!("a fix is stored")
    };
    assert_eq!(fix.files, ["cli/handlers.go", "it/it_test.go"]);
    assert!(
        fix.content.contains("Session B: 0 checkpoints"),
        "{}",
        fix.content
    );
    assert!(fix.content.contains("cli/handlers.go"), "{}", fix.content);
    assert_eq!(session.settled, 2);
}

#[test]
fn a_check_failing_then_passing_after_an_edit_is_a_bug_fix() {
    let mut session = AgentSession::default();
    let mut failed = bash("cargo test --test it sync", Outcome::Failed);
    failed.failing_tests = vec!["sync::branch_switch".to_owned()];
    assert_eq!(session.apply(&failed), Verdict::Wait(WAITING));
    // Failing again: one failure, of two runs.
    assert_eq!(session.apply(&failed), Verdict::Wait(WAITING));
    assert!(matches!(
        session.apply(&edit("src/git.rs")),
        Verdict::Consult(_)
    ));
    assert_eq!(session.settled, 0);
    let Verdict::Hold(observation) =
        session.apply(&bash("cargo test --test it", Outcome::Succeeded))
    else {
        panic!("a fix is stored");
    };
    assert_eq!(session.settled, 2, "the fix settles both failing runs");
    assert_eq!(observation.kind, "bug-fix");
    assert_eq!(observation.files, ["src/git.rs"]);
    assert!(
        observation.content.contains("sync::branch_switch"),
        "{}",
        observation.content
    );
}

#[test]
fn trivial_commands_dead_ends_and_flaky_passes_are_not_stored() {
    let mut session = AgentSession::default();
    assert_eq!(
        session.apply(&bash("ls -la", Outcome::Succeeded)),
        Verdict::Skip("trivial command")
    );
    assert!(matches!(
        session.apply(&bash("curl http://x", Outcome::Failed)),
        Verdict::Skip(_)
    ));
    session.apply(&bash("pytest tests", Outcome::Failed));
    assert!(matches!(
        session.apply(&bash("pytest tests", Outcome::Succeeded)),
        Verdict::Skip(_)
    ));
    assert_eq!(session.settled, 1, "a flaky pass settles the failing run");
    assert!(session.summary().is_none(), "nothing changed");
}

#[test]
fn a_new_decision_record_is_a_decision_and_other_writes_are_not() {
    let write = |path: &str, text: &str| Facts {
        tool: "Write".into(),
        modified: vec![path.into()],
        written: Some(text.into()),
        ..Facts::default()
    };
    let mut session = AgentSession::default();
    let Verdict::Store(decision) = session.apply(&write(
            "docs/adr/0007-queue-in-home.md",
            "# 7. The capture queue lives in the home\n\nStatus: accepted\n\nThe queue is never in the repository: it holds tool output.\n\n## Consequences\n\nNone.",
        )) else {
            panic!("a decision record is a decision")
        };
    assert_eq!(decision.kind, "decision");
    assert_eq!(
        decision.content,
        "Decision (docs/adr/0007-queue-in-home.md): The capture queue lives in the home. The queue is never in the repository: it holds tool output."
    );
    // Nygard's layout: the paragraph under "Decision".
    let Verdict::Store(nygard) = session.apply(&write(
            "doc/adr/0002-use-wal.md",
            "# 2. Use WAL\n\nDate: 2026-11-02\n\n## Status\n\nAccepted\n\n## Context\n\nReaders blocked.\n\n## Decision\n\nWe will open SQLite in WAL mode.\n",
        )) else {
            panic!("a decision record is a decision")
        };
    assert_eq!(
        nygard.content,
        "Decision (doc/adr/0002-use-wal.md): Use WAL. We will open SQLite in WAL mode."
    );
    assert_eq!(decision.files, vec!["docs/adr/0007-queue-in-home.md"]);
    // Numbers as other tools write them, MADR's metadata lines and
    // front matter, a setext title.
    for (text, expected) in [
        (
            "# ADR 7: Cursor pagination\n\nStatus: Accepted\nDate: 2026-11-02\n\nList endpoints take a cursor.",
            "Cursor pagination. List endpoints take a cursor.",
        ),
        (
            "# ADR-0007 - Cursor pagination\n\n* Status: accepted\n* Deciders: Ada, Linus\n\n## Context and Problem Statement\n\nOffsets skip rows.\n\n## Decision Outcome\n\nChosen option: \"cursor\", because rows move.",
            "Cursor pagination. Chosen option: \"cursor\", because rows move.",
        ),
        (
            "---\nstatus: accepted\ndate: 2026-11-02\n---\n\n# 0007 Cursor pagination\n\n**Status:** Accepted\n\nList endpoints take a cursor.",
            "Cursor pagination. List endpoints take a cursor.",
        ),
        (
            "Cursor pagination\n=================\n\nList endpoints take a cursor.",
            "Cursor pagination. List endpoints take a cursor.",
        ),
    ] {
        let Verdict::Store(decision) =
            AgentSession::default().apply(&write("docs/decisions/0007-cursor.md", text))
        else {
            panic!("a decision record is a decision: {text}")
        };
        assert_eq!(
            decision.content,
            format!("Decision (docs/decisions/0007-cursor.md): {expected}")
        );
    }
    // Wherever the project keeps them: a record's layout is enough.
    let Verdict::Store(elsewhere) = AgentSession::default().apply(&write(
            "docs/architecture/0003-keyword-index.md",
            "# 3. One keyword engine\n\n## Status\n\nAccepted\n\n## Context\n\nTwo engines disagreed.\n\n## Decision\n\nThe keyword index is tantivy alone.\n",
        )) else {
            panic!("a record outside a decision folder is a decision")
        };
    assert_eq!(
        elsewhere.content,
        "Decision (docs/architecture/0003-keyword-index.md): One keyword engine. The keyword index is tantivy alone."
    );
    for (path, text) in [
        ("docs/guide.md", "# Guide\n\nHow to start."),
        (
            "docs/architecture/overview.md",
            "# Overview\n\n## Context\n\nThe layers.\n\n## Decision trees\n\nHow ranking branches.",
        ),
        ("docs/adr/README.md.bak", "# x\n\ny"),
        ("src/adr/mod.rs", "// code"),
        ("docs/decisions/0001-x.md", "# Only a title"),
    ] {
        assert!(
            matches!(session.apply(&write(path, text)), Verdict::Consult(_)),
            "{path}"
        );
    }
}

/// Regression: `cargo test t0` failing, then `cargo test t48` passing
/// after an edit was stored as a fix of t0 (the same tool, another test).
#[test]
fn a_different_test_passing_is_no_fix() {
    let mut session = AgentSession::default();
    let mut failed = bash("cargo test t0", Outcome::Failed);
    failed.failing_tests = vec!["parse::t0".to_owned()];
    session.apply(&failed);
    session.apply(&edit("src/parse.rs"));
    assert_eq!(
        session.apply(&bash("cargo test t48", Outcome::Succeeded)),
        Verdict::Skip("check passed")
    );
    // The whole suite passing covers t0.
    let Verdict::Hold(fix) = session.apply(&bash("cargo test", Outcome::Succeeded)) else {
        panic!("a fix is stored");
    };
    assert!(fix.content.contains("parse::t0"), "{}", fix.content);
}

#[test]
fn a_passing_run_covers_a_failing_one_it_includes() {
    for (failed, passed) in [
        ("cargo test t0", "cargo test"),
        ("cargo test t0", "cargo test t0"),
        ("cargo test --test it sync", "cargo test --test it"),
        ("cargo test sync::branch_switch", "cargo test sync"),
        ("cargo test -q t0", "cargo test t0"),
        ("cargo test t0", "cargo test -q"),
        ("cd app && cargo test t0", "cargo test"),
        (
            "pytest tests/test_a.py::test_x -q",
            "pytest tests/test_a.py",
        ),
        ("pytest tests/unit/test_a.py", "pytest tests"),
        ("go test ./merge/...", "go test ./merge/..."),
    ] {
        assert!(covers(passed, failed), "`{passed}` covers `{failed}`");
    }
    for (failed, passed) in [
        ("cargo test t0", "cargo test t48"),
        ("cargo test", "cargo test t0"),
        ("cargo test --test it", "cargo test --lib"),
        ("cargo test -p core t0", "cargo test -p cli"),
        ("cargo test t0", "cargo build"),
        ("pytest tests/test_a.py", "pytest tests/test_b.py"),
        ("npx jest src/ui", "npx jest src/api"),
    ] {
        assert!(
            !covers(passed, failed),
            "`{passed}` does not cover `{failed}`"
        );
    }
}

#[test]
fn checks_are_recognised_behind_cd_and_env() {
    assert!(is_check("cd app && RUST_LOG=debug cargo test -q"));
    assert!(!is_check("cargo fmt"));
    assert!(!is_check("echo cargo test"));
}

/// Regression (issue 54, finding 5): a password capture removed from a
/// test's output (a connection string) came back in the agent's last
/// answer, which the checkpoint stored. Whatever capture removed in a
/// session is hidden in all of that session's later texts, and the
/// session's saved state holds only hashes.
#[test]
fn issue_54_a_secret_removed_once_is_hidden_everywhere_in_the_session() {
    let root = std::path::Path::new("/repo");
    let run = |command: &str, output: &str, code: i64| {
        serde_json::json!({
            "session_id": "s",
            "cwd": "/repo",
            "hook_event_name": if code == 0 { "PostToolUse" } else { "PostToolUseFailure" },
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_response": {"stdout": output, "exit_code": code},
        })
    };
    let mut session = AgentSession::default();
    // An error line that no rule reads as a secret comes first.
    let first = session.facts(
        &run(
            "cargo test config_test",
            "error: login as Sup3rS3cret refused",
            101,
        ),
        root,
    );
    assert_eq!(session.apply(&first), Verdict::Wait(WAITING));
    let facts = session.facts(
        &run(
            "cargo test config_test",
            "test config_test ... FAILED\nconnect postgres://app:Sup3rS3cret@db: refused",
            101,
        ),
        root,
    );
    assert!(facts.secret_removed);
    session.apply(&facts);
    // Later texts of the session: an output that prints it alone.
    let later = session.facts(&run("cat .env.test", "DB=app\nPW Sup3rS3cret", 0), root);
    assert!(
        !later
            .output
            .as_deref()
            .unwrap_or_default()
            .contains("Sup3rS3cret"),
        "{later:?}"
    );
    session.apply(&edit("src/config.rs"));
    let Verdict::Hold(fix) = session.apply(&bash("cargo test config_test", Outcome::Succeeded))
    else {
        panic!("a bug fix")
    };
    let fix = session.hide_secrets(fix);
    assert!(
        fix.content
            .contains("failed: error: login as …[redacted] refused"),
        "{}",
        fix.content
    );
    // The last answer, where the stated-value rule would remove the whole
    // line: hidden first, the rest of the line kept.
    let verdicts = session.end_turn(&Turn {
        requests: vec!["fix the config test".to_owned()],
        answers: vec![
            "Fixed it. Sup3rS3cret was hard-coded in config_test; it reads DB_PASSWORD now."
                .to_owned(),
        ],
        ..Turn::default()
    });
    let Some((Verdict::Store(checkpoint), _)) = verdicts.last() else {
        panic!("a checkpoint: {verdicts:?}")
    };
    assert!(
        checkpoint
            .content
            .contains("…[redacted] was hard-coded in config_test"),
        "{}",
        checkpoint.content
    );
    assert!(
        !checkpoint.content.contains("Sup3rS3cret"),
        "{}",
        checkpoint.content
    );
    let (Verdict::Store(fix), 2) = &verdicts[0] else {
        panic!("the held fix: {verdicts:?}")
    };
    assert!(!fix.content.contains("Sup3rS3cret"), "{}", fix.content);
    let saved = serde_json::to_string(&session).unwrap();
    assert!(!saved.contains("Sup3rS3cret"), "{saved}");
    let restored: AgentSession = serde_json::from_str(&saved).unwrap();
    assert_eq!(restored.secrets.hide("was Sup3rS3cret"), "was …[redacted]");
    // A session saved before it remembered secrets reads as one that has none.
    let old: AgentSession = serde_json::from_str(r#"{"events": 3, "stored": 0, "read": [], "modified": [], "failing": [], "fixed": [], "passed": []}"#).unwrap();
    assert!(old.secrets.is_empty());
}
