//! Issue 56: Codex CLI as a first-class agent. `init --agent codex` writes
//! its hooks (`.codex/hooks.json`, Claude Code's shape), and each hook is
//! driven with payloads built to validate against the input schemas Codex
//! CLI 0.171.0 embeds (`fixtures/codex-hooks/`); what goldfish answers must
//! validate against its output schemas. The rollout (`transcript_path`) is
//! written as a real run wrote it: `{timestamp, type, payload}` records.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::capture::run_hook;
use crate::common::{TestEnv, memory_lines};

/// A schema Codex CLI validates a hook against (`<event>.command.<input|output>`).
fn schema(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/codex-hooks")
        .join(format!("{name}.json"));
    serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap()
}

/// The errors of `value` against `schema` (the draft-07 keywords Codex
/// CLI's hook schemas use: `type`, `const`, `enum`, `properties`,
/// `additionalProperties: false`, `required`, `allOf`, local `$ref`).
fn violations(value: &Value, schema: &Value, root: &Value, at: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/definitions/");
        return violations(value, &root["definitions"][name], root, at);
    }
    for part in schema["allOf"].as_array().into_iter().flatten() {
        errors.extend(violations(value, part, root, at));
    }
    let type_of = |value: &Value| match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let types: Vec<&str> = match &schema["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() && !types.contains(&type_of(value)) {
        errors.push(format!("{at}: a {} where {types:?}", type_of(value)));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        errors.push(format!("{at}: {value} is not {constant}"));
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        errors.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let Some(fields) = value.as_object() {
        let properties = schema["properties"].as_object();
        for (key, field) in fields {
            match properties.and_then(|p| p.get(key)) {
                Some(property) => {
                    errors.extend(violations(field, property, root, &format!("{at}.{key}")))
                }
                None if schema["additionalProperties"] == false => {
                    errors.push(format!("{at}: `{key}` is not allowed"))
                }
                None => {}
            }
        }
        for key in schema["required"].as_array().into_iter().flatten() {
            if !fields.contains_key(key.as_str().unwrap()) {
                errors.push(format!("{at}: `{key}` is missing"));
            }
        }
    }
    errors
}

/// Panics unless `value` validates against Codex CLI's schema `name`.
fn assert_valid(value: &Value, name: &str) {
    let schema = schema(name);
    let errors = violations(value, &schema, &schema, "$");
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{value:#}");
}

/// The file name of each input schema, by event.
fn input_schema(event: &str) -> &'static str {
    match event {
        "SessionStart" => "session-start.command.input",
        "UserPromptSubmit" => "user-prompt-submit.command.input",
        "PreCompact" => "pre-compact.command.input",
        "PostToolUse" => "post-tool-use.command.input",
        "Stop" => "stop.command.input",
        "SessionEnd" => "session-end.command.input",
        other => panic!("no schema for {other}"),
    }
}

/// A Codex CLI session in a repository `init --agent codex` set up: its
/// hooks file, its rollout, its ids.
struct Codex {
    repo: PathBuf,
    hooks: Value,
    rollout: PathBuf,
    session: String,
}

const TURN: &str = "01a23bfa-587f-7bc1-9ccc-0094421229e3";

impl Codex {
    fn new(env: &TestEnv, repo: PathBuf, session: &str, init: &[&str]) -> Codex {
        let mut args = vec!["init", "--agent", "codex"];
        args.extend(init);
        env.ok(&repo, &args);
        let hooks =
            serde_json::from_str(&fs::read_to_string(repo.join(".codex/hooks.json")).unwrap())
                .unwrap();
        let sessions = env
            .path()
            .join(format!("codex-home/sessions/2026/11/20/{session}"));
        fs::create_dir_all(&sessions).unwrap();
        let rollout = sessions.join(format!("rollout-2026-11-20T09-00-00-{session}.jsonl"));
        let codex = Codex {
            repo,
            hooks,
            rollout,
            session: session.to_owned(),
        };
        codex.record(
            "session_meta",
            json!({"session_id": session, "id": session, "cwd": codex.repo, "originator": "codex_exec", "cli_version": "0.171.0", "source": "exec", "model_provider": "standin"}),
        );
        codex
    }

    /// Appends one rollout record, as Codex CLI writes them.
    fn record(&self, kind: &str, payload: Value) {
        use std::io::Write;
        let line =
            json!({"timestamp": "2026-11-20T09:00:01.000Z", "type": kind, "payload": payload});
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.rollout)
            .unwrap();
        writeln!(file, "{line}").unwrap();
    }

    /// What the person typed, and the harness's own user message before it.
    fn typed(&self, prompt: &str) {
        self.record(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("<environment_context>\n  <cwd>{}</cwd>\n  <shell>bash</shell>\n</environment_context>", self.repo.display())}]}),
        );
        self.record(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
        );
        self.record(
            "event_msg",
            json!({"type": "item_completed", "thread_id": self.session, "turn_id": TURN, "item": {"type": "UserMessage", "id": "u1", "content": [{"type": "text", "text": prompt, "text_elements": []}]}}),
        );
    }

    fn answered(&self, text: &str) {
        self.record(
            "response_item",
            json!({"type": "message", "id": "m1", "role": "assistant", "content": [{"type": "output_text", "text": text}]}),
        );
    }

    /// A shell call's record: its `CommandExecution`, with its exit code.
    fn ran(&self, call: &str, command: &str, output: &str, code: i64) {
        self.record(
            "response_item",
            json!({"type": "function_call", "name": "exec_command", "arguments": json!({"cmd": command}).to_string(), "call_id": call}),
        );
        self.record(
            "event_msg",
            json!({"type": "item_completed", "thread_id": self.session, "turn_id": TURN, "item": {"type": "CommandExecution", "id": call, "command": ["/bin/bash", "-lc", command], "cwd": format!("file://{}", self.repo.display()), "source": "unified_exec_startup", "status": if code == 0 { "completed" } else { "failed" }, "aggregated_output": output, "exit_code": code}}),
        );
    }

    /// The payload of `event` with `fields`: the fields Codex CLI sends
    /// with every event its schema has them for; checked against it.
    fn payload(&self, event: &str, fields: Value) -> Value {
        let name = input_schema(event);
        let properties = schema(name)["properties"].clone();
        let mut payload = json!({
            "session_id": self.session,
            "transcript_path": self.rollout,
            "cwd": self.repo,
            "hook_event_name": event,
        });
        for (key, value) in [
            ("model", json!("gpt-5.5")),
            ("permission_mode", json!("bypassPermissions")),
            ("turn_id", json!(TURN)),
        ] {
            if properties.get(key).is_some() {
                payload[key] = value;
            }
        }
        for (key, value) in fields.as_object().unwrap() {
            payload[key] = value.clone();
        }
        assert_valid(&payload, name);
        payload
    }

    /// Runs the hook `init` wrote for `event` as Codex CLI does; its stdout.
    fn run(&self, env: &TestEnv, event: &str, fields: Value) -> String {
        let command = self.hooks["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("no {event} hook: {:#}", self.hooks))
            .to_owned();
        run_hook(env, &self.repo, &command, &self.payload(event, fields))
    }

    fn shell(&self, env: &TestEnv, call: &str, command: &str, output: &str) {
        self.run(
            env,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_response": output, "tool_use_id": call}),
        );
    }

    fn patch(&self, env: &TestEnv, call: &str, patch: &str, result: &str) {
        self.record(
            "response_item",
            json!({"type": "custom_tool_call", "call_id": call, "name": "apply_patch", "input": patch}),
        );
        self.run(
            env,
            "PostToolUse",
            json!({"tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_response": result, "tool_use_id": call}),
        );
    }
}

const FAILED: &str = "\n> test\n> node test.js\n\nFAIL test.js\n  cart total: expected 5, got 6\n";
const PASSED: &str = "\n> test\n> node test.js\n\nPASS test.js: 1 passed\n";
const PATCH: &str = "*** Begin Patch\n*** Update File: src/cart.js\n@@\n-exports.total = (a, b) => a + b + 1;\n+exports.total = (a, b) => a + b;\n*** End Patch\n";
const PATCHED: &str = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nM src/cart.js\n";

/// The command of each goldfish hook in a Codex hooks file, by event.
fn commands(hooks: &Value) -> Vec<(String, String)> {
    let mut commands = Vec::new();
    for (event, entries) in hooks["hooks"].as_object().unwrap() {
        for entry in entries.as_array().unwrap() {
            for hook in entry["hooks"].as_array().unwrap() {
                commands.push((event.clone(), hook["command"].as_str().unwrap().to_owned()));
            }
        }
    }
    commands.sort();
    commands
}

/// Issue 56: `init --agent codex` set up the MCP server only. It writes
/// Codex CLI's hooks (the briefing at session start as the event's JSON,
/// the prompt hook, a checkpoint before compaction; with `--capture`
/// PostToolUse, Stop and SessionEnd) into `.codex/hooks.json`, says that
/// Codex runs them only once trusted, keeps the user's own hooks and
/// bytes, and changes nothing the second time.
#[test]
fn issue_56_init_agent_codex_writes_its_hooks_beside_the_users_own() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let out = env.ok(&repo, &["init", "--agent", "codex"]);
    assert!(
        out.contains("added the UserPromptSubmit hook to .codex/hooks.json"),
        "{out}"
    );
    assert!(
        out.contains("added the SessionStart and PreCompact hooks to .codex/hooks.json (the briefing at session start, a checkpoint before compaction)"),
        "{out}"
    );
    assert!(
        out.contains("Codex CLI runs these hooks only once you trust them"),
        "{out}"
    );
    let hooks: Value =
        serde_json::from_str(&fs::read_to_string(repo.join(".codex/hooks.json")).unwrap()).unwrap();
    assert_eq!(
        commands(&hooks),
        [
            ("PreCompact", "goldfish agent-hook pre-compact"),
            ("SessionStart", "goldfish agent-hook session-start --json"),
            ("UserPromptSubmit", "goldfish agent-hook user-prompt"),
        ]
        .map(|(e, c)| (e.to_owned(), c.to_owned()))
    );
    let out = env.ok(&repo, &["init", "--agent", "codex", "--capture"]);
    assert!(
        out.contains(
            "turned capture on: PostToolUse, Stop and SessionEnd hooks in .codex/hooks.json"
        ),
        "{out}"
    );
    let hooks: Value =
        serde_json::from_str(&fs::read_to_string(repo.join(".codex/hooks.json")).unwrap()).unwrap();
    assert_eq!(commands(&hooks).len(), 6, "{hooks:#}");
    // Codex CLI's matcher is a regular expression: none runs for every tool.
    assert_eq!(hooks["hooks"]["PostToolUse"][0].get("matcher"), None);
    let before = fs::read(repo.join(".codex/hooks.json")).unwrap();
    let again = env.ok(&repo, &["init", "--agent", "codex", "--capture"]);
    assert!(!again.contains("hooks.json"), "{again}");
    assert_eq!(fs::read(repo.join(".codex/hooks.json")).unwrap(), before);

    // The user's own hooks file: every byte kept, goldfish's entries first.
    let other = env.repo("other", "Alice");
    let user = "{\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\"matcher\": \"^Bash$\", \"hooks\": [{\"type\": \"command\", \"command\": \"./scripts/audit.sh\", \"timeout\": 5}]}\n    ]\n  }\n}\n";
    fs::create_dir_all(other.join(".codex")).unwrap();
    fs::write(other.join(".codex/hooks.json"), user).unwrap();
    env.ok(&other, &["init", "--agent", "codex", "--capture"]);
    let text = fs::read_to_string(other.join(".codex/hooks.json")).unwrap();
    assert!(
        text.contains("{\"matcher\": \"^Bash$\", \"hooks\": [{\"type\": \"command\", \"command\": \"./scripts/audit.sh\", \"timeout\": 5}]}"),
        "{text}"
    );
    let hooks: Value = serde_json::from_str(&text).unwrap();
    let post = hooks["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(post.len(), 2, "{hooks:#}");
    assert_eq!(
        post[0]["hooks"][0]["command"],
        "goldfish agent-hook post-tool-use"
    );
    assert_eq!(post[1]["hooks"][0]["command"], "./scripts/audit.sh");
}

/// Issue 56: what goldfish's hooks print for Codex CLI validates against
/// the output schema of each event (`additionalProperties: false`, a
/// `hookSpecificOutput` naming its event): the briefing and the prompt's
/// memories as `additionalContext`, the Stop hook's question as `decision:
/// block` with a `reason`; the compaction and capture hooks print nothing.
#[test]
fn issue_56_codex_hook_outputs_validate_against_its_schemas() {
    let env = TestEnv::new().with_fake_model();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &["store", "-t", "decision", "Deploys go out on Tuesdays"],
    );
    // Not in the briefing (an insight), so the prompt hook gives it: what
    // the briefing gave, the prompt hook does not give again.
    env.ok(
        &repo,
        &[
            "store",
            "-t",
            "insight",
            "Deploys go out each week from the release branch",
        ],
    );
    env.ok(&repo, &["sync", "--quiet"]);
    let codex = Codex::new(&env, repo, "codex-out", &["--capture", "--ask-agent"]);
    let json_of = |stdout: String, name: &str| -> Value {
        let answer: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|err| panic!("{name}: not JSON ({err}): {stdout}"));
        assert_valid(&answer, name);
        answer
    };

    let started = codex.run(&env, "SessionStart", json!({"source": "startup"}));
    let started = json_of(started, "session-start.command.output");
    let briefing = started["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        briefing.contains("Deploys go out on Tuesdays"),
        "{briefing}"
    );

    codex.typed("When do deploys go out each week?");
    let prompted = codex.run(
        &env,
        "UserPromptSubmit",
        json!({"prompt": "When do deploys go out each week?"}),
    );
    let prompted = json_of(prompted, "user-prompt-submit.command.output");
    assert!(
        prompted["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("insight  Alice  Deploys go out each week"),
        "{prompted:#}"
    );

    fs::create_dir_all(codex.repo.join("src")).unwrap();
    fs::write(
        codex.repo.join("src/cart.js"),
        "exports.total = (a, b) => a + b;\n",
    )
    .unwrap();
    codex.patch(&env, "call_1", PATCH, PATCHED);
    codex.answered("Fixed the total in src/cart.js.");
    let stopped = codex.run(
        &env,
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "Fixed the total in src/cart.js."}),
    );
    let stopped = json_of(stopped, "stop.command.output");
    assert_eq!(stopped["decision"], "block", "{stopped:#}");
    assert!(stopped["reason"].as_str().unwrap().contains("store"));
    let compacted = codex.run(&env, "PreCompact", json!({"trigger": "auto"}));
    assert_eq!(compacted, "", "PreCompact prints nothing");
    let ended = codex.run(&env, "SessionEnd", json!({"reason": "other"}));
    assert_eq!(ended, "");
    env.ok(&codex.repo, &["capture", "work", "--wait"]);
}

/// Issue 56: Codex CLI's PreCompact (with `transcript_path`, its rollout)
/// stored nothing: the rollout's records are not Claude Code's. The
/// checkpoint quotes what the person typed (not the harness's
/// `<environment_context>`) and the last answer, and the briefing after
/// the compaction (`SessionStart`, `source: "compact"`) starts from it.
#[test]
fn issue_56_a_codex_compaction_checkpoint_quotes_its_rollout() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let codex = Codex::new(&env, repo, "codex-compact", &[]);
    codex.typed("Port the renderer to the layout engine");
    codex.ran("call_1", "rg --files src", "src/render.rs\n", 0);
    codex.answered("Half the widgets are ported; next: the table widget.");
    codex.run(&env, "PreCompact", json!({"trigger": "auto"}));
    let lines = memory_lines(&codex.repo);
    let checkpoint = lines
        .iter()
        .find(|l| l["type"] == "checkpoint")
        .unwrap_or_else(|| panic!("a checkpoint: {lines:#?}"));
    let content = checkpoint["content"].as_str().unwrap();
    assert!(
        content.contains("Last request: Port the renderer to the layout engine"),
        "{content}"
    );
    assert!(
        content.contains("Last answer: Half the widgets are ported; next: the table widget."),
        "{content}"
    );
    assert!(!content.contains("environment_context"), "{content}");
    codex.record(
        "compacted",
        json!({"message": "The renderer port is half done.", "replacement_history": []}),
    );
    let briefed = codex.run(&env, "SessionStart", json!({"source": "compact"}));
    let briefed: Value = serde_json::from_str(briefed.trim()).unwrap();
    assert_valid(&briefed, "session-start.command.output");
    let context = briefed["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("Half the widgets are ported"), "{context}");
}

/// Issue 56: with `init --agent codex --capture`, a Codex CLI session that
/// runs `npm test` (failing), patches `src/cart.js` with `apply_patch` and
/// runs it again (passing) is captured as the fix: the shell's result is
/// the output alone, its exit code read from the rollout's
/// `CommandExecution` record, and the patch read as the edit of the file.
/// Where the rollout holds no record of the passing run, its exit code is
/// unknown: no pass, no fix.
#[test]
fn issue_56_a_codex_failing_check_patched_then_passing_is_captured_as_a_fix() {
    let env = TestEnv::new();
    let session = |name: &str, record_the_pass: bool| -> Vec<Value> {
        let repo = env.repo(name, "Alice");
        fs::create_dir_all(repo.join("src")).unwrap();
        fs::write(
            repo.join("src/cart.js"),
            "exports.total = (a, b) => a + b + 1;\n",
        )
        .unwrap();
        let codex = Codex::new(&env, repo, &format!("codex-{name}"), &["--capture"]);
        codex.typed("Fix the failing cart total test");
        codex.ran("call_1", "npm test", FAILED, 1);
        codex.shell(&env, "call_1", "npm test", FAILED);
        fs::write(
            codex.repo.join("src/cart.js"),
            "exports.total = (a, b) => a + b;\n",
        )
        .unwrap();
        codex.patch(&env, "call_2", PATCH, PATCHED);
        if record_the_pass {
            codex.ran("call_3", "npm test", PASSED, 0);
        }
        codex.shell(&env, "call_3", "npm test", PASSED);
        let answer =
            "The total added 1 on top of the sum in src/cart.js; fixed, and npm test passes.";
        codex.answered(answer);
        codex.run(
            &env,
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": answer}),
        );
        env.ok(&codex.repo, &["capture", "work", "--wait"]);
        memory_lines(&codex.repo)
    };

    let lines = session("fixed", true);
    let fix = lines
        .iter()
        .find(|l| l["type"] == "bug-fix")
        .unwrap_or_else(|| panic!("a bug fix: {lines:#?}"));
    assert_eq!(fix["files"], json!(["src/cart.js"]));
    assert_eq!(fix["session"], "codex-fixed");
    let content = fix["content"].as_str().unwrap();
    assert!(
        content.contains("Check: `npm test` failed, then passed."),
        "{content}"
    );
    assert!(
        content.contains("Changed src/cart.js: `exports.total = (a, b) => a + b;`"),
        "the patch read as the edit: {content}"
    );
    let checkpoint = lines
        .iter()
        .find(|l| l["type"] == "checkpoint")
        .unwrap_or_else(|| panic!("a checkpoint: {lines:#?}"));
    let checkpoint = checkpoint["content"].as_str().unwrap();
    assert!(
        checkpoint.starts_with("Fix the failing cart total test"),
        "{checkpoint}"
    );
    assert!(checkpoint.contains("src/cart.js"), "{checkpoint}");

    let lines = session("unknown", false);
    assert!(
        !lines.iter().any(|l| l["type"] == "bug-fix"),
        "an exit code the rollout does not give is no pass: {lines:#?}"
    );
}

/// Issue 56: Codex CLI also reads hooks from `[hooks]` in
/// `.codex/config.toml`, and runs those of both places (it warns: one
/// place a project). A project that keeps its hooks there gets goldfish's
/// there, as `[[hooks.<event>]]` tables after the user's (every byte kept,
/// no `hooks.json`); hooks written as inline arrays, which a table cannot
/// extend, are refused with nothing changed.
#[test]
fn issue_56_init_agent_codex_adds_to_the_hooks_its_config_toml_holds() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let user = "model = \"gpt-5.5\"\n\n[[hooks.PostToolUse]]\nmatcher = \"^Bash$\"\nhooks = [{ type = \"command\", command = \"./scripts/audit.sh\" }]\n";
    fs::create_dir_all(repo.join(".codex")).unwrap();
    fs::write(repo.join(".codex/config.toml"), user).unwrap();
    let out = env.ok(&repo, &["init", "--agent", "codex", "--capture"]);
    assert!(
        out.contains(
            "turned capture on: PostToolUse, Stop and SessionEnd hooks in .codex/config.toml"
        ),
        "{out}"
    );
    assert!(!repo.join(".codex/hooks.json").exists());
    let text = fs::read_to_string(repo.join(".codex/config.toml")).unwrap();
    assert!(text.starts_with(user), "{text}");
    assert!(
        text.contains("[[hooks.SessionStart]]\nhooks = [{ type = \"command\", command = \"goldfish agent-hook session-start --json\", timeout = 30 }]\n"),
        "{text}"
    );
    let config: toml::Table = toml::from_str(&text).unwrap();
    let hooks = serde_json::to_value(&config["hooks"]).unwrap();
    assert_eq!(commands(&json!({ "hooks": hooks })).len(), 7, "{text}");
    assert_eq!(
        hooks["PostToolUse"][0]["hooks"][0]["command"],
        "./scripts/audit.sh"
    );
    assert_eq!(
        config["mcp_servers"]["goldfish"]["command"].as_str(),
        Some("goldfish")
    );
    env.ok(&repo, &["init", "--agent", "codex", "--capture"]);
    assert_eq!(
        fs::read_to_string(repo.join(".codex/config.toml")).unwrap(),
        text
    );

    let inline = env.repo("inline", "Alice");
    let user = "[hooks]\nSessionStart = [{ hooks = [{ type = \"command\", command = \"./start.sh\" }] }]\n";
    fs::create_dir_all(inline.join(".codex")).unwrap();
    fs::write(inline.join(".codex/config.toml"), user).unwrap();
    let output = env.goldfish(&inline, &["init", "--agent", "codex"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        crate::common::stderr(&output).contains("nothing was changed"),
        "{output:?}"
    );
    assert_eq!(
        fs::read_to_string(inline.join(".codex/config.toml")).unwrap(),
        user
    );
}

/// Issue 56, version skew: `.codex/hooks.json` arrives through git, written
/// by a teammate's newer goldfish, with an event and flags this one lacks.
/// Codex CLI blocks the prompt (or the stop, or the tool) on a hook's exit
/// 2 and gives its stderr to the model; each such hook, with the payload
/// Codex CLI sends for its event, exits 0 with nothing on stdout and a
/// line on stderr (which Codex CLI does not read on exit 0).
#[test]
fn issue_56_codex_hooks_a_newer_goldfish_wrote_never_block() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    let codex = Codex::new(&env, repo, "codex-skew", &["--capture"]);
    for (line, event, fields) in [
        (
            "goldfish agent-hook user-prompt --budget-tokens 800",
            "UserPromptSubmit",
            json!({"prompt": "When do deploys go out each week?"}),
        ),
        (
            "goldfish agent-hook session-start --json --since-last",
            "SessionStart",
            json!({"source": "startup"}),
        ),
        (
            "goldfish agent-hook stop --ask-agent --once-per-branch",
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
        ),
        // An event this goldfish has no name for, with a payload it reads.
        (
            "goldfish agent-hook post-tool-batch",
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "src\n", "tool_use_id": "call_1"}),
        ),
    ] {
        let payload = codex.payload(event, fields);
        let said = crate::agent::assert_skipped(&env, &codex.repo, line, &payload, &[]);
        assert_eq!(said.lines().count(), 1, "{line}: {said}");
        assert!(said.contains(&format!("cannot read `{line}`")), "{said}");
    }
}
