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

/// The event as the model sees it: facts only, secrets already removed.
pub fn describe(facts: &Facts) -> String {
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
