//! One plugin, three clients (issue 56): the Claude Code plugin (which
//! Codex CLI installs unchanged) and the Gemini CLI extension in
//! `plugins/`, the marketplace, `init --agent claude --plugin`, the hooks'
//! timeouts, and every hook doing nothing in a repository without
//! `.goldfish`, which is what makes a plugin safe in every repository.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;

fn source(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn json_at(path: &Path) -> serde_json::Value {
    let text = fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Every file under `dir` with its bytes (the `.git` folder's bookkeeping
/// left out but for what goldfish would write there).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), fs::read(&path).unwrap_or_default());
            }
        }
    }
    files
}

/// Payloads as Claude Code's hooks give them (the Agent SDK's
/// `*HookInput` types), for each goldfish hook command.
fn claude_payloads(cwd: &Path, transcript: &Path) -> Vec<(Vec<&'static str>, serde_json::Value)> {
    let base = |event: &str| {
        serde_json::json!({
            "session_id": "s-outside",
            "transcript_path": transcript,
            "cwd": cwd,
            "hook_event_name": event,
        })
    };
    let with = |event: &str, more: serde_json::Value| {
        let mut payload = base(event);
        for (key, value) in more.as_object().unwrap() {
            payload[key] = value.clone();
        }
        payload
    };
    vec![
        (
            vec!["session-start"],
            with("SessionStart", serde_json::json!({"source": "startup"})),
        ),
        (
            vec!["session-start", "--json"],
            with("SessionStart", serde_json::json!({"source": "compact"})),
        ),
        (
            vec!["user-prompt"],
            with(
                "UserPromptSubmit",
                serde_json::json!({"prompt": "why do invoices skip numbers under load?"}),
            ),
        ),
        (
            vec!["pre-compact"],
            with(
                "PreCompact",
                serde_json::json!({"trigger": "auto", "custom_instructions": null}),
            ),
        ),
        (
            vec!["post-tool-use"],
            with(
                "PostToolUse",
                serde_json::json!({
                    "tool_name": "Bash",
                    "tool_input": {"command": "cargo test", "description": "run the tests"},
                    "tool_response": {"stdout": "test result: ok. 3 passed", "stderr": "", "interrupted": false},
                    "tool_use_id": "toolu_01",
                }),
            ),
        ),
        (
            vec!["post-tool-use-failure"],
            with(
                "PostToolUseFailure",
                serde_json::json!({
                    "tool_name": "Bash",
                    "tool_input": {"command": "cargo test"},
                    "tool_use_id": "toolu_02",
                    "error": "Exit code 101\nerror[E0425]: cannot find value `x`",
                }),
            ),
        ),
        (
            vec!["stop"],
            with("Stop", serde_json::json!({"stop_hook_active": false})),
        ),
        (
            vec!["stop", "--ask-agent"],
            with("Stop", serde_json::json!({"stop_hook_active": false})),
        ),
        (
            vec!["session-end"],
            with(
                "SessionEnd",
                serde_json::json!({"reason": "prompt_input_exit"}),
            ),
        ),
    ]
}

/// In a git repository without `.goldfish` (and outside any repository),
/// every hook a plugin runs exits 0, prints nothing and creates nothing:
/// no memory, no capture queue, no index, no session marks.
#[test]
fn every_hook_does_nothing_in_a_repository_without_goldfish() {
    let env = TestEnv::new();
    let repo = env.path().join("elsewhere");
    fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q", "-b", "main"]);
    env.identify(&repo, "Alice");
    fs::write(repo.join("README.md"), "# not goldfish's\n").unwrap();
    env.commit_all(&repo, "initial");
    let transcript = env.path().join("transcript.jsonl");
    fs::write(
        &transcript,
        concat!(
            r#"{"type":"user","message":{"role":"user","content":"Fix the flaky login test"}}"#,
            "\n",
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Fixed with a fake clock."}]}}"#,
            "\n"
        ),
    )
    .unwrap();
    let plain = env.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    let home = env.path().join("home");
    let before = (tree(&repo), tree(&plain), tree(&home));
    for dir in [&repo, &plain] {
        for (args, payload) in claude_payloads(dir, &transcript) {
            let mut command = vec!["agent-hook"];
            command.extend(&args);
            let output = env.goldfish_stdin(dir, &command, payload.to_string().as_bytes());
            assert_eq!(
                output.status.code(),
                Some(0),
                "{args:?} in {}: {output:?}",
                dir.display()
            );
            assert!(
                output.stdout.is_empty() && output.stderr.is_empty(),
                "{args:?} in {} printed: {output:?}",
                dir.display()
            );
        }
        // A person's plain-text checkpoint, too.
        let output = env.goldfish_stdin(dir, &["agent-hook", "pre-compact"], b"Stopped halfway");
        assert_eq!(output.status.code(), Some(0));
        assert!(
            output.stdout.is_empty() && output.stderr.is_empty(),
            "{output:?}"
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        (tree(&repo), tree(&plain), tree(&home)),
        before,
        "a hook created or changed a file"
    );
    assert!(!home.join(".goldfish").exists());

    // Once the repository uses goldfish, the same hooks work.
    env.ok(&repo, &["init"]);
    let output = env.goldfish_stdin(&repo, &["agent-hook", "pre-compact"], b"Stopped halfway");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("stored checkpoint"),
        "{output:?}"
    );
}

/// Each hook entry of a settings file: (event, command, timeout).
fn hook_entries(settings: &serde_json::Value) -> Vec<(String, String, Option<u64>)> {
    let mut entries = Vec::new();
    for (event, list) in settings["hooks"].as_object().unwrap() {
        for entry in list.as_array().unwrap() {
            for hook in entry["hooks"].as_array().unwrap() {
                entries.push((
                    event.clone(),
                    hook["command"].as_str().unwrap().to_owned(),
                    hook["timeout"].as_u64(),
                ));
            }
        }
    }
    entries.sort();
    entries
}

/// Every hook entry `init --agent … --capture` writes has a timeout, in
/// the client's unit: seconds for Claude Code and Codex CLI (in
/// `hooks.json` and in `config.toml`'s `[hooks]`), milliseconds for Gemini
/// CLI; Codex's `SessionEnd` within the 3 s Codex allows it.
#[test]
fn every_hook_entry_init_writes_has_a_timeout() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &[
            "init",
            "--agent",
            "claude",
            "--agent",
            "gemini",
            "--agent",
            "codex",
            "--capture",
        ],
    );
    for (file, unit) in [
        (".claude/settings.json", 1),
        (".codex/hooks.json", 1),
        (".gemini/settings.json", 1000),
    ] {
        let entries = hook_entries(&json_at(&repo.join(file)));
        assert!(entries.len() >= 5, "{file}: {entries:?}");
        for (event, command, timeout) in &entries {
            let timeout =
                timeout.unwrap_or_else(|| panic!("{file}: {event} {command} has no timeout"));
            assert!(
                (3 * unit..=30 * unit).contains(&timeout),
                "{file}: {event} timeout {timeout}"
            );
            if file == ".codex/hooks.json" && event == "SessionEnd" {
                assert!(timeout <= 3, "Codex caps SessionEnd at 3 s");
            }
        }
    }
    let toml_repo = env.repo("toml", "Alice");
    fs::create_dir_all(toml_repo.join(".codex")).unwrap();
    fs::write(
        toml_repo.join(".codex/config.toml"),
        "[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"./lint.sh\" }]\n",
    )
    .unwrap();
    env.ok(&toml_repo, &["init", "--agent", "codex", "--capture"]);
    let config: toml::Table =
        toml::from_str(&fs::read_to_string(toml_repo.join(".codex/config.toml")).unwrap()).unwrap();
    let hooks = serde_json::to_value(&config["hooks"]).unwrap();
    for (event, command, timeout) in hook_entries(&serde_json::json!({ "hooks": hooks })) {
        if command.starts_with("goldfish ") {
            assert!(
                timeout.is_some(),
                "config.toml: {event} {command} has no timeout"
            );
        }
    }
}

/// The plugin runs what `init` writes: its hooks are the hooks of `init
/// --agent claude --capture` (the briefing as JSON, which Claude Code and
/// Codex CLI both read; no tool matcher, which Codex reads as a regular
/// expression), its server and `/recall` are init's; the Gemini extension's
/// (the repository's root) hooks are `init --agent gemini --capture`'s. The skill is one text in
/// both, and the manifests agree on the name and version.
#[test]
fn the_plugin_and_the_extension_run_what_init_writes() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    env.ok(
        &repo,
        &[
            "init",
            "--agent",
            "claude",
            "--agent",
            "gemini",
            "--capture",
        ],
    );

    let plugin = source("plugins/goldfish");
    let plugin_hooks = json_at(&plugin.join("hooks/hooks.json"));
    let as_init =
        |entries: Vec<(String, String, Option<u64>)>| -> Vec<(String, String, Option<u64>)> {
            entries
                .into_iter()
                .map(|(event, command, timeout)| {
                    (
                        event,
                        command.trim_end_matches(" --json").to_owned(),
                        timeout,
                    )
                })
                .collect()
        };
    assert_eq!(
        as_init(hook_entries(&plugin_hooks)),
        as_init(hook_entries(&json_at(&repo.join(".claude/settings.json"))))
    );
    for list in plugin_hooks["hooks"].as_object().unwrap().values() {
        for entry in list.as_array().unwrap() {
            assert!(entry.get("matcher").is_none(), "{entry}");
        }
    }
    let session_start = &plugin_hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"];
    assert_eq!(session_start, "goldfish agent-hook session-start --json");
    assert_eq!(
        json_at(&plugin.join(".mcp.json"))["mcpServers"]["goldfish"],
        json_at(&repo.join(".mcp.json"))["mcpServers"]["goldfish"]
    );
    assert_eq!(
        fs::read_to_string(plugin.join("commands/recall.md")).unwrap(),
        fs::read_to_string(repo.join(".claude/commands/recall.md")).unwrap()
    );

    // The repository's root is the extension: Gemini CLI installs a git
    // URL's root (`gemini extensions install <url>`), reading
    // gemini-extension.json, hooks/, commands/ and skills/ there.
    let extension = source("");
    assert_eq!(
        hook_entries(&json_at(&extension.join("hooks/hooks.json"))),
        hook_entries(&json_at(&repo.join(".gemini/settings.json")))
    );
    let manifest = json_at(&extension.join("gemini-extension.json"));
    assert_eq!(manifest["mcpServers"]["goldfish"]["command"], "goldfish");
    assert_eq!(
        manifest["mcpServers"]["goldfish"]["args"],
        serde_json::json!(["mcp"])
    );
    assert_eq!(
        manifest["mcpServers"]["goldfish"]["cwd"],
        "${workspacePath}"
    );
    let recall = fs::read_to_string(extension.join("commands/recall.toml")).unwrap();
    let recall: toml::Table = toml::from_str(&recall).unwrap();
    assert!(recall["prompt"].as_str().unwrap().contains("{{args}}"));

    assert_eq!(
        fs::read(plugin.join("skills/goldfish/SKILL.md")).unwrap(),
        fs::read(extension.join("skills/goldfish/SKILL.md")).unwrap(),
        "one skill, two copies"
    );
    let claude = json_at(&plugin.join(".claude-plugin/plugin.json"));
    let marketplace = json_at(&source(".claude-plugin/marketplace.json"));
    let listed = &marketplace["plugins"][0];
    assert_eq!(listed["source"], "./plugins/goldfish");
    for manifest in [&claude, &manifest, listed] {
        assert_eq!(manifest["name"], "goldfish");
        assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    }
    // `init --agent claude --plugin` names this marketplace and plugin.
    assert_eq!(marketplace["name"], "goldfish");
}

/// `init --agent claude --plugin` offers teammates the plugin in
/// `.claude/settings.json` (the user's bytes kept) instead of writing the
/// server, `/recall` and hooks; a second run changes nothing, a plugin the
/// user turned off stays off, and another marketplace named `goldfish` is
/// refused with nothing changed.
#[test]
fn init_plugin_offers_the_marketplace_in_claude_settings() {
    let env = TestEnv::new();
    let repo = env.repo("repo", "Alice");
    fs::create_dir_all(repo.join(".claude")).unwrap();
    let users = "{\n  \"permissions\": {\"allow\": [\"Bash(npm test)\"]},\n  \"enabledPlugins\": {\n    \"lint@tools\": true\n  }\n}\n";
    fs::write(repo.join(".claude/settings.json"), users).unwrap();
    let out = env.ok(&repo, &["init", "--agent", "claude", "--plugin"]);
    assert!(
        out.contains("offered goldfish's Claude Code plugin"),
        "{out}"
    );
    let text = fs::read_to_string(repo.join(".claude/settings.json")).unwrap();
    assert_eq!(
        text,
        "{\n  \"extraKnownMarketplaces\": {\"goldfish\": {\"source\":{\"repo\":\"goldfish-dev/goldfish\",\"source\":\"github\"}}},\n  \"permissions\": {\"allow\": [\"Bash(npm test)\"]},\n  \"enabledPlugins\": {\n    \"goldfish@goldfish\": true,\n    \"lint@tools\": true\n  }\n}\n"
    );
    assert!(!repo.join(".mcp.json").exists());
    assert!(!repo.join(".claude/commands/recall.md").exists());
    assert!(
        fs::read_to_string(repo.join("CLAUDE.md"))
            .unwrap()
            .contains("goldfish:start")
    );
    let again = env.ok(&repo, &["init", "--agent", "claude", "--plugin"]);
    assert!(!again.contains("offered"), "{again}");
    assert_eq!(
        fs::read_to_string(repo.join(".claude/settings.json")).unwrap(),
        text
    );

    let off = env.repo("off", "Alice");
    fs::create_dir_all(off.join(".claude")).unwrap();
    fs::write(
        off.join(".claude/settings.json"),
        "{\"enabledPlugins\": {\"goldfish@goldfish\": false}}",
    )
    .unwrap();
    env.ok(&off, &["init", "--agent", "claude", "--plugin"]);
    let settings = json_at(&off.join(".claude/settings.json"));
    assert_eq!(settings["enabledPlugins"]["goldfish@goldfish"], false);
    assert_eq!(
        settings["extraKnownMarketplaces"]["goldfish"]["source"]["repo"],
        "goldfish-dev/goldfish"
    );

    let foreign = env.repo("foreign", "Alice");
    fs::create_dir_all(foreign.join(".claude")).unwrap();
    let theirs = "{\"extraKnownMarketplaces\": {\"goldfish\": {\"source\": {\"source\": \"github\", \"repo\": \"mallory/goldfish\"}}}}";
    fs::write(foreign.join(".claude/settings.json"), theirs).unwrap();
    let refused = env.goldfish(&foreign, &["init", "--agent", "claude", "--plugin"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("mallory/goldfish"),
        "{refused:?}"
    );
    assert_eq!(
        fs::read_to_string(foreign.join(".claude/settings.json")).unwrap(),
        theirs
    );

    let alone = env.goldfish(&repo, &["init", "--agent", "gemini", "--plugin"]);
    assert_eq!(alone.status.code(), Some(2), "{alone:?}");
    let with_capture = env.goldfish(
        &repo,
        &["init", "--agent", "claude", "--plugin", "--capture"],
    );
    assert_eq!(with_capture.status.code(), Some(2), "{with_capture:?}");
}
