//! The generative step: a prompt with one `create_observation` tool, a
//! generator (a GGUF model in process, or an external command) and the
//! parser that turns its answer into an observation or nothing.
//!
//! The model only ever writes the type and the text: file paths come from
//! the tool input, by rules. Its answer is validated against the tool's
//! schema; anything else is dropped and counted, never stored.

use serde_json::Value;

use super::event::Facts;

/// The memory types a model may choose.
pub const TYPES: &[&str] = &[
    "bug-fix",
    "feature",
    "refactor",
    "decision",
    "insight",
    "observation",
];

/// Bytes of a model's observation text at most.
pub const MAX_TEXT_BYTES: usize = 1000;

/// The one tool the model is given.
pub fn tool_schema() -> Value {
    serde_json::json!({
        "type": "function",
        "function": {
            "name": "create_observation",
            "description": "Record one thing a teammate should know later: a bug and its fix, a decision and why, a fact about the code. Do not call it for routine reads, listings or steps that taught nothing.",
            "parameters": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": TYPES},
                    "text": {"type": "string", "minLength": 20, "maxLength": MAX_TEXT_BYTES,
                             "description": "One or two sentences with exact identifiers."}
                },
                "required": ["type", "text"],
                "additionalProperties": false
            }
        }
    })
}

const SYSTEM: &str = "You watch a coding agent's tool calls and record what a teammate should remember. \
Call create_observation only for something learned: a bug's cause and fix, a decision and its reason, \
a non-obvious fact about the code. For routine steps, answer with the single word: nothing.";

/// How much of an event the model sees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Context {
    /// The facts: tool, command, outcome, files, errors, the edit's text.
    #[default]
    Plain,
    /// The facts, and what may say why: the comment lines an edit adds, a
    /// `git commit`'s message, a command's output (clipped).
    Rich,
}

/// Bytes of an event's description at most (the prompt stays well within
/// the runtime's token limit).
pub const MAX_DESCRIPTION_BYTES: usize = 3000;

/// The event as the model sees it: facts only, secrets already removed.
pub fn describe(facts: &Facts) -> String {
    describe_with(facts, Context::Plain)
}

/// The event as the model sees it with `context`, clipped to
/// [`MAX_DESCRIPTION_BYTES`].
pub fn describe_with(facts: &Facts, context: Context) -> String {
    let mut text = String::new();
    if context == Context::Rich {
        if let Some(message) = facts.command.as_deref().and_then(commit_message) {
            text.push_str(&format!("Commit message:\n{message}\n"));
        }
        let comments = facts
            .change
            .as_deref()
            .map(added_comments)
            .unwrap_or_default();
        if !comments.is_empty() {
            text.push_str(&format!("Comments added:\n{}\n", comments.join("\n")));
        }
        if let Some(output) = &facts.output {
            text.push_str(&format!("Output:\n{output}\n"));
        }
    }
    let plain = describe_plain(facts);
    // The facts first, what says why after: the clip keeps both ends.
    let text = if text.is_empty() {
        plain
    } else {
        format!("{plain}\n{}", text.trim_end())
    };
    super::redact::clip_middle(&text, MAX_DESCRIPTION_BYTES)
}

/// The message of a `git commit` command: its `-m`/`--message` values
/// (quoted, or a `"$(cat <<'EOF' … EOF)"` heredoc), paragraphs joined.
pub fn commit_message(command: &str) -> Option<String> {
    let at = command.find("git commit")?;
    let rest = &command[at + "git commit".len()..];
    if let Some(start) = rest.find("<<") {
        let after = rest[start + 2..].trim_start_matches('-');
        let (tag, body) = after.split_once('\n')?;
        let tag = tag.trim().trim_matches(|c| c == '\'' || c == '"');
        let end = body
            .lines()
            .position(|line| line.trim() == tag)
            .unwrap_or(usize::MAX);
        let message: Vec<&str> = body.lines().take(end).collect();
        let message = message.join("\n").trim().to_owned();
        return (!message.is_empty()).then_some(message);
    }
    let mut parts = Vec::new();
    let mut words = rest;
    while let Some(flag) = find_message_flag(words) {
        let value = words[flag..].trim_start();
        let Some(quote) = value.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            let word = value.split_whitespace().next().unwrap_or_default();
            parts.push(word.to_owned());
            words = &value[word.len()..];
            continue;
        };
        let (part, rest) = quoted(&value[1..], quote);
        parts.push(part);
        words = rest;
    }
    let message = parts.join("\n\n").trim().to_owned();
    (!message.is_empty()).then_some(message)
}

/// The text up to the closing `quote` (in double quotes, `\"` and `\\`
/// stand for themselves, as in a shell), and what follows it.
fn quoted(text: &str, quote: char) -> (String, &str) {
    let mut part = String::new();
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        if c == quote {
            return (part, &text[at + c.len_utf8()..]);
        }
        if c == '\\'
            && quote == '"'
            && let Some((_, next)) = chars.next()
        {
            if next != '"' && next != '\\' {
                part.push(c);
            }
            part.push(next);
            continue;
        }
        part.push(c);
    }
    (part, "")
}

/// Where the value of the next `-m`, `-am`, `--message` flag starts.
fn find_message_flag(text: &str) -> Option<usize> {
    let mut at = 0;
    for word in text.split_inclusive(char::is_whitespace) {
        let flag = word.trim_end();
        at += word.len();
        if flag == "--message"
            || (flag.starts_with('-') && !flag.starts_with("--") && flag.ends_with('m'))
        {
            return Some(at);
        }
        if let Some(value) = flag.strip_prefix("--message=") {
            return Some(at - word.len() + word.find(value).unwrap_or(0));
        }
    }
    None
}

/// The comment lines among an edit's added lines (`+ …`, see
/// [`Facts::change`]): `//`, `#`, `/*`, `*`, `--`, `;;` and docstrings.
pub fn added_comments(change: &str) -> Vec<String> {
    let mut adding = false;
    let mut comments = Vec::new();
    for line in change.lines() {
        let line = if let Some(added) = line.strip_prefix("+ ") {
            adding = true;
            added
        } else if line.starts_with("- ") {
            adding = false;
            continue;
        } else {
            line
        };
        let code = line.trim();
        let comment = ["//", "#", "/*", "*", "--", ";;", "\"\"\"", "'''"]
            .iter()
            .any(|mark| code.starts_with(mark))
            && !code.starts_with("#[")
            && !code.starts_with("#!");
        if adding && comment {
            comments.push(code.to_owned());
        }
    }
    comments
}

fn describe_plain(facts: &Facts) -> String {
    let mut text = format!("Tool: {}", facts.tool);
    if let Some(command) = &facts.command {
        text.push_str(&format!("\nCommand: {command}"));
    }
    if let Some(outcome) = facts.outcome {
        text.push_str(&format!("\nOutcome: {outcome:?}").to_lowercase());
    }
    if !facts.modified.is_empty() {
        text.push_str(&format!("\nModified: {}", facts.modified.join(", ")));
    }
    if !facts.read.is_empty() {
        text.push_str(&format!("\nRead: {}", facts.read.join(", ")));
    }
    if !facts.failing_tests.is_empty() {
        text.push_str(&format!(
            "\nFailing tests: {}",
            facts.failing_tests.join(", ")
        ));
    }
    for error in &facts.errors {
        text.push_str(&format!("\nError: {error}"));
    }
    if let Some(change) = &facts.change {
        text.push_str(&format!("\nChange:\n{change}"));
    }
    text
}

/// The whole prompt in ChatML (SmolLM2, Qwen2.5, Qwen3), the tool declared
/// the way Qwen's template does, and the assistant's turn opened.
pub fn prompt(event: &str) -> String {
    format!(
        "<|im_start|>system\n{SYSTEM}\n\n# Tools\n\n<tools>\n{}\n</tools>\n\nTo call the tool, answer with <tool_call>{{\"name\": \"create_observation\", \"arguments\": {{\"type\": ..., \"text\": ...}}}}</tool_call><|im_end|>\n<|im_start|>user\n{event}<|im_end|>\n<|im_start|>assistant\n",
        tool_schema()
    )
}

/// What a model answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A valid call: the type and the text.
    Observation { kind: String, text: String },
    /// No tool call: nothing worth recording.
    Nothing,
    /// A call that does not fit the schema, and why.
    Invalid(String),
}

/// Parses `<tool_call>{…}</tool_call>` (the closing tag may be missing at
/// the end of the output) and validates it against [`tool_schema`].
pub fn parse(output: &str) -> Answer {
    let Some(start) = output.find("<tool_call>") else {
        return Answer::Nothing;
    };
    let body = &output[start + "<tool_call>".len()..];
    let body = body.split("</tool_call>").next().unwrap_or(body).trim();
    let call: Value = match serde_json::from_str(body) {
        Ok(call) => call,
        Err(err) => return Answer::Invalid(format!("not JSON: {err}")),
    };
    if call["name"] != "create_observation" {
        return Answer::Invalid(format!("unknown tool {}", call["name"]));
    }
    let arguments = match &call["arguments"] {
        // Some models send the arguments as a JSON string.
        Value::String(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        other => other.clone(),
    };
    let Some(fields) = arguments.as_object() else {
        return Answer::Invalid("arguments are not an object".to_owned());
    };
    if let Some(extra) = fields.keys().find(|k| *k != "type" && *k != "text") {
        return Answer::Invalid(format!("unexpected argument `{extra}`"));
    }
    let Some(kind) = fields
        .get("type")
        .and_then(Value::as_str)
        .filter(|k| TYPES.contains(k))
    else {
        return Answer::Invalid("`type` missing or not one of the memory types".to_owned());
    };
    let Some(text) = fields.get("text").and_then(Value::as_str).map(str::trim) else {
        return Answer::Invalid("`text` missing".to_owned());
    };
    if text.chars().count() < 20 || text.len() > MAX_TEXT_BYTES {
        return Answer::Invalid(format!(
            "`text` of {} bytes (20 to {MAX_TEXT_BYTES})",
            text.len()
        ));
    }
    Answer::Observation {
        kind: kind.to_owned(),
        text: text.to_owned(),
    }
}

/// Whether an answer that opens with `text` can no longer be a tool call
/// as the prompt asks for one: `<tool_call>` first, after an optional
/// `<think>…</think>` (Qwen3). The model in process stops generating there
/// ("nothing", or prose): the parser would find no call, and each token
/// saved is CPU time on the user's machine.
pub fn past_any_call(text: &str) -> bool {
    const CALL: &str = "<tool_call>";
    const THINK: &str = "<think>";
    let mut rest = text.trim_start();
    let mut thought = false;
    if let Some(after) = rest.strip_prefix(THINK) {
        let Some(end) = after.find("</think>") else {
            return false;
        };
        rest = after[end + "</think>".len()..].trim_start();
        thought = true;
    }
    let open = |tag: &str| rest.starts_with(tag) || tag.starts_with(rest);
    !(rest.is_empty() || open(CALL) || (!thought && open(THINK)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_past_any_call_once_it_cannot_open_one() {
        for (text, past) in [
            ("", false),
            ("  ", false),
            ("<", false),
            ("<t", false),
            ("<tool", false),
            ("<tool_call>{\"name\"", false),
            ("\n<tool_call>", false),
            ("<thi", false),
            ("<think>the edit fixes", false),
            ("<think>routine</think>\n\n<tool", false),
            ("<think>routine</think>\n\nnothing", true),
            ("<think>x</think><think>", true),
            ("nothing", true),
            ("N", true),
            ("Sure, <tool_call>", true),
        ] {
            assert_eq!(past_any_call(text), past, "{text:?}");
        }
    }

    #[test]
    fn a_commit_message_is_read_from_m_flags_and_heredocs() {
        for (command, message) in [
            (
                r#"git commit -m "Pin openssl: 3.2 breaks FIPS""#,
                Some("Pin openssl: 3.2 breaks FIPS"),
            ),
            (
                r#"git add -A && git commit -am 'fix typo'"#,
                Some("fix typo"),
            ),
            (
                r#"git commit -m "Title" -m "Body says \"why\".""#,
                Some("Title\n\nBody says \"why\"."),
            ),
            (r#"git commit --message=wip"#, Some("wip")),
            (
                "git commit -m \"$(cat <<'EOF'\nMove sessions to Redis\n\nDeploys logged users out.\nEOF\n)\"",
                Some("Move sessions to Redis\n\nDeploys logged users out."),
            ),
            ("git commit --amend --no-edit", None),
            ("git status", None),
        ] {
            assert_eq!(commit_message(command).as_deref(), message, "{command}");
        }
    }

    #[test]
    fn the_comment_lines_an_edit_adds_are_found_not_the_removed_ones() {
        let change = "- // old reason\n- let a = 1;\n+ // 16, not 4: threads starved\n# why in yaml\nlet b = 2;\n+ #[derive(Debug)]\n";
        assert_eq!(
            added_comments(change),
            ["// 16, not 4: threads starved", "# why in yaml"]
        );
    }

    #[test]
    fn more_context_adds_what_may_say_why_and_stays_clipped() {
        let facts = Facts {
            tool: "Bash".to_owned(),
            command: Some(r#"git commit -m "Retry on 503: exports lost files""#.to_owned()),
            output: Some("[main 77d20ab] Retry on 503".to_owned()),
            ..Facts::default()
        };
        let plain = describe(&facts);
        assert!(!plain.contains("Commit message") && !plain.contains("Output"));
        let rich = describe_with(&facts, Context::Rich);
        assert!(rich.starts_with(&plain), "{rich}");
        assert!(rich.contains("Commit message:\nRetry on 503: exports lost files"));
        assert!(rich.contains("Output:\n[main 77d20ab]"));
        let long = Facts {
            tool: "Edit".to_owned(),
            change: Some(format!("+ // {}\n", "why ".repeat(2000))),
            ..Facts::default()
        };
        assert!(describe_with(&long, Context::Rich).len() <= MAX_DESCRIPTION_BYTES + 20);
    }

    #[test]
    fn a_valid_call_is_an_observation_and_no_call_is_nothing() {
        let output = r#"<tool_call>{"name": "create_observation", "arguments": {"type": "bug-fix", "text": "sync failed on branch switch: the journal was not drained first."}}</tool_call>"#;
        assert_eq!(
            parse(output),
            Answer::Observation {
                kind: "bug-fix".to_owned(),
                text: "sync failed on branch switch: the journal was not drained first.".to_owned()
            }
        );
        assert_eq!(parse("nothing"), Answer::Nothing);
        let unclosed = r#"<tool_call>{"name":"create_observation","arguments":"{\"type\":\"insight\",\"text\":\"The index is a cache: deleting it loses nothing.\"}"}"#;
        assert!(matches!(parse(unclosed), Answer::Observation { .. }));
    }

    #[test]
    fn calls_outside_the_schema_are_invalid() {
        for output in [
            "<tool_call>{not json</tool_call>",
            r#"<tool_call>{"name": "rm", "arguments": {}}</tool_call>"#,
            r#"<tool_call>{"name": "create_observation", "arguments": {"type": "secret", "text": "a long enough text here ok"}}</tool_call>"#,
            r#"<tool_call>{"name": "create_observation", "arguments": {"type": "insight", "text": "short"}}</tool_call>"#,
            r#"<tool_call>{"name": "create_observation", "arguments": {"type": "insight", "text": "a long enough text here ok", "files": ["/etc/passwd"]}}</tool_call>"#,
        ] {
            assert!(matches!(parse(output), Answer::Invalid(_)), "{output}");
        }
    }
}
