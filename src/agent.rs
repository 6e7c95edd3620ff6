//! What goldfish writes into and reads from coding agents' own files: the
//! project setup of `init --agent` (MCP server registration, a `/recall`
//! command, a section of the agent's instructions file), merged into what
//! the user already has, and the checkpoint a pre-compact hook stores from a
//! session transcript.

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

/// The agents `init --agent` sets up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code: `.mcp.json`, `.claude/commands/recall.md`, `CLAUDE.md`.
    Claude,
    /// Gemini CLI: `.gemini/settings.json`, `GEMINI.md`.
    Gemini,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("could not {action} {}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not valid JSON ({source}); fix it and run init again, nothing was changed", .path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: `{key}` is not a JSON object; fix it and run init again, nothing was changed", .path.display())]
    NotAnObject { path: PathBuf, key: String },
}

/// The MCP server entry every agent's configuration gets.
fn server_entry() -> serde_json::Value {
    serde_json::json!({ "command": "goldfish", "args": ["mcp"] })
}

/// Where the section goes in an instructions file, between these markers.
const SECTION_START: &str = "<!-- goldfish:start -->";
const SECTION_END: &str = "<!-- goldfish:end -->";

/// The instructions section: when to store and recall.
const SECTION: &str = "## Team memory (goldfish)

This repository keeps the team's memory in git (`.goldfish/memories/`), served by the
`goldfish` MCP server.

- At the start of a task, call `brief`; before designing, debugging or deciding, call
  `recall` with a question and `budget: 500`. Cite memory ids you rely on.
- Call `store` when you make a decision (and why), fix a non-obvious bug (cause and fix),
  learn something about the code, or stop mid-task (type `checkpoint`: what is done, what
  is next). One fact per memory, a few sentences, exact identifiers, `files` it is about.
- Never store secrets. If a memory is wrong or superseded, `forget` it and store the new one.
- Commit `.goldfish/memories/` with your changes so teammates get them.
";

/// The `/recall` command for Claude Code.
const RECALL_COMMAND: &str = "---
description: Recall what the team's memory (goldfish) knows about a topic
argument-hint: <question>
---
Call the goldfish MCP tool `recall` with query \"$ARGUMENTS\" and budget 500. If the
tool is not available, run `goldfish recall --budget 500 \"$ARGUMENTS\"` in a shell.
Then say briefly what of it applies to the current task, citing the memory ids.
";

/// Sets `agent` up in the repository at `root`; returns what changed, one
/// sentence each (empty when everything was in place). Existing files are
/// merged into, never replaced; a file that cannot be merged safely is left
/// untouched and reported as an error.
pub fn setup(root: &Path, agent: Agent) -> Result<Vec<String>, SetupError> {
    let mut changes = Vec::new();
    let (config, instructions) = match agent {
        Agent::Claude => (root.join(".mcp.json"), root.join("CLAUDE.md")),
        Agent::Gemini => (
            root.join(".gemini").join("settings.json"),
            root.join("GEMINI.md"),
        ),
    };
    changes.extend(merge_server(root, &config)?);
    if agent == Agent::Claude {
        let command = root.join(".claude").join("commands").join("recall.md");
        changes.extend(write_new(root, &command, RECALL_COMMAND)?);
    }
    changes.extend(merge_section(root, &instructions)?);
    Ok(changes)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read_optional(path: &Path) -> Result<Option<String>, SetupError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(SetupError::Io {
            action: "read",
            path: path.to_owned(),
            source,
        }),
    }
}

/// Writes `text` to `path` through a temporary file in the same folder, so a
/// reader never sees half a file.
fn write_atomic(path: &Path, text: &str) -> Result<(), SetupError> {
    let io_error = |action| {
        let path = path.to_owned();
        move |source| SetupError::Io {
            action,
            path,
            source,
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_error("create the folder of"))?;
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io_error("write"))?;
    io::Write::write_all(&mut file, text.as_bytes()).map_err(io_error("write"))?;
    // A temporary file is private (0600); the result keeps the permissions
    // of the file it replaces, or gets a plain file's.
    let permissions = match std::fs::metadata(path) {
        Ok(existing) => existing.permissions(),
        Err(_) => std::os::unix::fs::PermissionsExt::from_mode(0o644),
    };
    file.as_file()
        .set_permissions(permissions)
        .map_err(io_error("write"))?;
    file.persist(path)
        .map_err(|err| err.error)
        .map_err(io_error("write"))?;
    Ok(())
}

/// Adds the `goldfish` server to `mcpServers` in the JSON file at `path`,
/// keeping every other key and server; an existing `goldfish` entry is the
/// user's and stays as it is.
fn merge_server(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    let existing = read_optional(path)?;
    let mut config: serde_json::Value = match existing.as_deref() {
        None => serde_json::json!({}),
        Some(text) if text.trim().is_empty() => serde_json::json!({}),
        Some(text) => serde_json::from_str(text).map_err(|source| SetupError::Json {
            path: path.to_owned(),
            source,
        })?,
    };
    let not_an_object = |key: &str| SetupError::NotAnObject {
        path: path.to_owned(),
        key: key.to_owned(),
    };
    let servers = config
        .as_object_mut()
        .ok_or_else(|| not_an_object("(top level)"))?
        .entry("mcpServers")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
        .ok_or_else(|| not_an_object("mcpServers"))?;
    if servers.contains_key("goldfish") {
        return Ok(None);
    }
    servers.insert("goldfish".to_owned(), server_entry());
    let mut text = serde_json::to_string_pretty(&config).expect("a JSON value serializes");
    text.push('\n');
    write_atomic(path, &text)?;
    Ok(Some(format!(
        "registered the goldfish MCP server in {}",
        relative(root, path)
    )))
}

/// Creates `path` with `text` unless it exists (then it is the user's).
fn write_new(root: &Path, path: &Path, text: &str) -> Result<Option<String>, SetupError> {
    if read_optional(path)?.is_some() {
        return Ok(None);
    }
    write_atomic(path, text)?;
    Ok(Some(format!("wrote {}", relative(root, path))))
}

/// Puts the goldfish section into the instructions file: appended when the
/// file has none, refreshed between its markers when it has an older one.
fn merge_section(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    let block = format!("{SECTION_START}\n{SECTION}{SECTION_END}\n");
    let existing = read_optional(path)?.unwrap_or_default();
    let verb = if existing.contains(SECTION_START) {
        "updated"
    } else {
        "added"
    };
    let updated = match (existing.find(SECTION_START), existing.find(SECTION_END)) {
        (Some(start), Some(end)) if start < end => {
            let after = existing[end + SECTION_END.len()..]
                .strip_prefix('\n')
                .unwrap_or(&existing[end + SECTION_END.len()..]);
            format!("{}{block}{after}", &existing[..start])
        }
        _ if existing.is_empty() => block,
        _ => {
            let separator = if existing.ends_with("\n\n") {
                ""
            } else if existing.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            format!("{existing}{separator}{block}")
        }
    };
    if updated == existing {
        return Ok(None);
    }
    write_atomic(path, &updated)?;
    Ok(Some(format!(
        "{verb} the goldfish section in {}",
        relative(root, path)
    )))
}

/// Characters kept of the last request and of the last answer.
const EXCERPT: usize = 1500;

/// A checkpoint from a Claude Code transcript (JSON Lines of `user` and
/// `assistant` messages): the last request the user typed and the agent's
/// last text answer. `None` when the transcript has neither.
pub fn checkpoint_from_transcript(path: &Path) -> io::Result<Option<String>> {
    let file = std::fs::File::open(path)?;
    let mut request = None;
    let mut answer = None;
    for line in io::BufReader::new(file).lines() {
        let line = line?;
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let role = entry["type"].as_str().or(entry["message"]["role"].as_str());
        let Some(text) = message_text(&entry["message"]["content"]) else {
            continue;
        };
        match role {
            Some("user") => request = Some(text),
            Some("assistant") => answer = Some(text),
            _ => {}
        }
    }
    if request.is_none() && answer.is_none() {
        return Ok(None);
    }
    let mut checkpoint = String::from("Checkpoint before the agent's context was compacted.");
    if let Some(request) = request {
        checkpoint.push_str("\nLast request: ");
        checkpoint.push_str(&clip(&request, EXCERPT));
    }
    if let Some(answer) = answer {
        checkpoint.push_str("\nLast answer: ");
        checkpoint.push_str(&clip(&answer, EXCERPT));
    }
    Ok(Some(checkpoint))
}

/// The text of a message: a string, or the `text` parts of a list (tool
/// calls and tool results are not what a person said).
fn message_text(content: &serde_json::Value) -> Option<String> {
    let text = match content {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter(|part| part["type"] == "text")
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The first `max` characters of `text`, marked when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_request_and_answer_without_tool_traffic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let lines = [
            r#"{"type":"user","message":{"role":"user","content":"Fix the flaky login test"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Looking at tests/login.rs."},{"type":"tool_use","name":"Read"}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"file body"}]}}"#,
            "not json",
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"The test raced the token refresh; fixed with a fake clock."}]}}"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let checkpoint = checkpoint_from_transcript(&path).unwrap().unwrap();
        assert_eq!(
            checkpoint,
            "Checkpoint before the agent's context was compacted.\n\
             Last request: Fix the flaky login test\n\
             Last answer: The test raced the token refresh; fixed with a fake clock."
        );
    }

    #[test]
    fn empty_transcript_gives_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "").unwrap();
        assert_eq!(checkpoint_from_transcript(&path).unwrap(), None);
    }
}
