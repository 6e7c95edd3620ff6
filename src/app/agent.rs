//! What goldfish writes into and reads from coding agents' own files: the
//! project setup of `init --agent` (MCP server registration, a `/recall`
//! command, a section of the agent's instructions file), merged into what
//! the user already has, the checkpoint a pre-compact hook stores from a
//! session transcript, and what the hooks keep of a session between them.

use std::io;
use std::path::{Path, PathBuf};

use crate::adapters::PathError;
use crate::adapters::home::Home;

/// The agents `init --agent` sets up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code: `.mcp.json`, `.claude/commands/recall.md`, `CLAUDE.md`.
    Claude,
    /// Gemini CLI: `.gemini/settings.json` (server and hooks), `GEMINI.md`.
    Gemini,
    /// Codex CLI: `.codex/config.toml` (read in a project Codex trusts),
    /// `AGENTS.md`.
    Codex,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Io(#[from] PathError),
    #[error("{} {reason}: goldfish never follows a link or opens what is not a regular file in an agent's files; replace it with a regular file (`git rm` it) and run init again, nothing was changed", .path.display())]
    Unsafe { path: PathBuf, reason: String },
    #[error("{} is not valid JSON ({source}); fix it and run init again, nothing was changed", .path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: `{key}` is not a JSON object; fix it and run init again, nothing was changed", .path.display())]
    NotAnObject { path: PathBuf, key: String },
    #[error("{}: could not add the goldfish server without changing the rest of the file; add `\"goldfish\": {{\"command\": \"goldfish\", \"args\": [\"mcp\"]}}` to `mcpServers` by hand, nothing was changed", .path.display())]
    Edit { path: PathBuf },
    #[error("{}: could not add the capture hooks without changing the rest of the file; add them by hand as docs/guide/capture.md shows, nothing was changed", .path.display())]
    HooksEdit { path: PathBuf },
    #[error("{} is not valid TOML ({message}); fix it and run init again, nothing was changed", .path.display())]
    Toml { path: PathBuf, message: String },
    #[error("{}: could not add the goldfish server without changing the rest of the file; add `[mcp_servers.goldfish]` with `command = \"goldfish\"` and `args = [\"mcp\"]` by hand, nothing was changed", .path.display())]
    TomlEdit { path: PathBuf },
    #[error("{}: `{key}` is not a table; fix it and run init again, nothing was changed", .path.display())]
    NotATable { path: PathBuf, key: String },
    #[error("{}: its `goldfish` entry of `extraKnownMarketplaces` is {what}, not goldfish's: teammates would be offered that plugin as goldfish; set it to {MARKETPLACE_FIX} (or delete it) and run init again, nothing was changed", .path.display())]
    ForeignMarketplace { path: PathBuf, what: String },
    #[error("{}: could not add the goldfish plugin without changing the rest of the file; add `extraKnownMarketplaces` and `enabledPlugins` by hand as docs/guide/agents.md shows, nothing was changed", .path.display())]
    PluginEdit { path: PathBuf },
    #[error("{}: its `goldfish` MCP server {what}, not this goldfish: an agent would start that as goldfish; set the entry to {fix} (or delete it) and run init again, nothing was changed", .path.display())]
    ForeignServer {
        path: PathBuf,
        what: String,
        fix: &'static str,
    },
}

/// The marketplace entry to write by hand in place of a foreign one.
const MARKETPLACE_FIX: &str =
    r#"`"goldfish": {"source": {"source": "github", "repo": "goldfish-dev/goldfish"}}`"#;

/// The entry to write by hand in place of a foreign one, per file kind.
const JSON_FIX: &str = r#"`"goldfish": {"command": "goldfish", "args": ["mcp"]}`"#;
const TOML_FIX: &str =
    r#"`[mcp_servers.goldfish]` with `command = "goldfish"` and `args = ["mcp"]`"#;

/// What a `goldfish` MCP server entry (JSON, or TOML as JSON) runs, when
/// that is not this goldfish (`None` when it is): its command is
/// `goldfish` (found on PATH, as init writes it) or this executable's
/// path, its arguments `mcp`, and its environment sets only `GOLDFISH_*`
/// (a `PATH` of its own could make `goldfish` another program). An agent
/// starts whatever the entry names, and the file arrives through git.
pub fn foreign_server(entry: &serde_json::Value) -> Option<String> {
    let Some(command) = entry["command"].as_str() else {
        return Some(match entry.get("url").or(entry.get("httpUrl")) {
            Some(url) => format!("is a remote server ({url})"),
            None => "names no command".to_owned(),
        });
    };
    let args: Option<Vec<&str>> = match &entry["args"] {
        serde_json::Value::Null => Some(Vec::new()),
        serde_json::Value::Array(args) => args.iter().map(serde_json::Value::as_str).collect(),
        _ => None,
    };
    let line = std::iter::once(command)
        .chain(args.iter().flatten().copied())
        .collect::<Vec<_>>()
        .join(" ");
    let runs = || {
        format!(
            "runs `{}`",
            crate::domain::memory::injection::visible(&line)
        )
    };
    if !is_goldfish(command) || args.as_deref() != Some(&["mcp"][..]) {
        return Some(runs());
    }
    let env = entry["env"].as_object().into_iter().flatten();
    let foreign: Vec<&str> = env
        .map(|(key, _)| key.as_str())
        .filter(|key| !key.starts_with("GOLDFISH_"))
        .collect();
    if !foreign.is_empty() || !(entry["env"].is_null() || entry["env"].is_object()) {
        return Some(format!(
            "{} with its own environment ({})",
            runs(),
            crate::domain::memory::injection::visible(&foreign.join(", "))
        ));
    }
    None
}

/// `goldfish` (looked up on PATH) or this executable's own path.
fn is_goldfish(command: &str) -> bool {
    if command == "goldfish" {
        return true;
    }
    let path = Path::new(command);
    let canonical = |path: &Path| std::fs::canonicalize(path).ok();
    path.is_absolute()
        && std::env::current_exe()
            .ok()
            .and_then(|exe| canonical(&exe))
            .is_some_and(|exe| canonical(path) == Some(exe))
}

/// The `goldfish` MCP server entry of each agent configuration file in
/// the repository at `root` that names something other than this goldfish
/// ([`foreign_server`]): the file (relative to `root`) and what it runs.
/// A file that cannot be read or parsed is left to `init` to report.
pub fn foreign_servers(root: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for agent in [Agent::Claude, Agent::Gemini, Agent::Codex] {
        let (path, _) = agent_files(root, agent);
        let Ok(Some(text)) = read_optional(root, &path) else {
            continue;
        };
        let entry = if agent == Agent::Codex {
            toml::from_str::<toml::Table>(&text)
                .ok()
                .and_then(|config| config.get("mcp_servers")?.get("goldfish").cloned())
                .and_then(|entry| serde_json::to_value(entry).ok())
        } else {
            Jsonc::new(text, comments_allowed(&path))
                .value()
                .ok()
                .and_then(|config| config.get("mcpServers")?.get("goldfish").cloned())
        };
        if let Some(what) = entry.as_ref().and_then(foreign_server) {
            found.push((relative(root, &path), what));
        }
    }
    found
}

/// Whether the repository the current directory is in uses goldfish: its
/// work tree has a `.goldfish` folder (`init` made it, or it came with a
/// clone). An agent's hook anywhere else does nothing at all, so a plugin
/// that runs the hooks in every repository is safe in every repository.
pub fn in_use_here() -> bool {
    crate::app::sync::current_workspace().is_ok_and(|workspace| {
        std::fs::symlink_metadata(workspace.root().join(".goldfish"))
            .is_ok_and(|metadata| metadata.is_dir())
    })
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
    let (config, instructions) = agent_files(root, agent);
    if agent == Agent::Codex {
        changes.extend(merge_codex_server(root, &config)?);
    } else {
        changes.extend(merge_server(root, &config)?);
    }
    if agent == Agent::Claude {
        changes.extend(write_new(root, &recall_command(root), RECALL_COMMAND)?);
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

fn read_optional(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    refuse_links(root, path)?;
    let io_error = |source| {
        SetupError::from(PathError {
            action: "read",
            path: path.to_owned(),
            source,
        })
    };
    match crate::adapters::memdir::read_regular(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|err| io_error(io::Error::new(io::ErrorKind::InvalidData, err))),
        Err(crate::adapters::memdir::OpenError::Io(err))
            if err.kind() == io::ErrorKind::NotFound =>
        {
            Ok(None)
        }
        Err(crate::adapters::memdir::OpenError::Io(err)) => Err(io_error(err)),
        Err(crate::adapters::memdir::OpenError::Link) => {
            Err(unsafe_path(path, "is a symbolic link"))
        }
        Err(crate::adapters::memdir::OpenError::NotRegular(kind)) => {
            Err(unsafe_path(path, &format!("is {kind}, not a regular file")))
        }
    }
}

/// Refuses a path whose folders below `root` are not real folders: the
/// agent's files arrive through git, and a committed link (`.claude` to a
/// folder elsewhere, `CLAUDE.md` to a file elsewhere) would make `init`
/// read a file outside the repository into one it commits, or write
/// outside it.
fn refuse_links(root: &Path, path: &Path) -> Result<(), SetupError> {
    let Ok(relative) = path.strip_prefix(root) else {
        return Ok(());
    };
    let mut at = root.to_owned();
    let mut parts = relative.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        let last = parts.peek().is_none();
        match std::fs::symlink_metadata(&at) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(unsafe_path(&at, "is a symbolic link"));
            }
            Ok(metadata) if !last && !metadata.is_dir() => {
                return Err(unsafe_path(&at, "is not a folder"));
            }
            _ => {}
        }
    }
    Ok(())
}

fn unsafe_path(path: &Path, reason: &str) -> SetupError {
    SetupError::Unsafe {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Writes `text` to `path` (never through a link, its folder made) with the
/// one atomic writer.
fn write_atomic(root: &Path, path: &Path, text: &str) -> Result<(), SetupError> {
    refuse_links(root, path)?;
    let io_error = |action| PathError::at::<SetupError>(action, path);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_error("create the folder of"))?;
    crate::adapters::memdir::write_atomically(path, text.as_bytes()).map_err(io_error("write"))?;
    Ok(())
}

/// Checks that `init --agent` can set `agent` up in the repository at
/// `root` (its configuration file parses and has room for the server)
/// without writing anything, so `init` can refuse before it changes anything.
pub fn check(root: &Path, agent: Agent) -> Result<(), SetupError> {
    let (config, instructions) = agent_files(root, agent);
    read_optional(root, &instructions)?;
    if agent == Agent::Claude {
        read_optional(root, &recall_command(root))?;
    }
    if agent == Agent::Codex {
        return codex_server_edit(root, &config).map(|_| ());
    }
    server_edit(root, &config).map(|_| ())
}

fn recall_command(root: &Path) -> PathBuf {
    root.join(".claude").join("commands").join("recall.md")
}

fn agent_files(root: &Path, agent: Agent) -> (PathBuf, PathBuf) {
    match agent {
        Agent::Claude => (root.join(".mcp.json"), root.join("CLAUDE.md")),
        Agent::Gemini => (
            root.join(".gemini").join("settings.json"),
            root.join("GEMINI.md"),
        ),
        Agent::Codex => (
            root.join(".codex").join("config.toml"),
            root.join("AGENTS.md"),
        ),
    }
}

/// Adds the `goldfish` server to `mcpServers` in the JSON file at `path`,
/// keeping every other byte of the file; an existing `goldfish` entry that
/// runs this goldfish stays as it is, one that runs anything else is
/// refused ([`foreign_server`]).
fn merge_server(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    let Some(text) = server_edit(root, path)? else {
        return Ok(None);
    };
    write_atomic(root, path, &text)?;
    Ok(Some(format!(
        "registered the goldfish MCP server in {}",
        relative(root, path)
    )))
}

/// The file at `path` with the goldfish server added, or `None` when it has
/// one. The entry is inserted into the user's text (a parse and re-write
/// would sort keys and change numbers: `2.50` → `2.5`, big integers to
/// floats); the result is checked to parse to the user's value plus the entry.
fn server_edit(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    let existing = read_optional(root, path)?.unwrap_or_default();
    if existing.trim().is_empty() {
        let config = serde_json::json!({ "mcpServers": { "goldfish": server_entry() } });
        let mut text = serde_json::to_string_pretty(&config).expect("a JSON value serializes");
        text.push('\n');
        return Ok(Some(text));
    }
    let json_error = |source| SetupError::Json {
        path: path.to_owned(),
        source,
    };
    let mut doc = Jsonc::new(existing, comments_allowed(path));
    let mut config: serde_json::Value = doc.value().map_err(json_error)?;
    let not_an_object = |key: &str| SetupError::NotAnObject {
        path: path.to_owned(),
        key: key.to_owned(),
    };
    let top = config
        .as_object_mut()
        .ok_or_else(|| not_an_object("(top level)"))?;
    let servers = top.get("mcpServers");
    if servers.is_some_and(|servers| !servers.is_object()) {
        return Err(not_an_object("mcpServers"));
    }
    if let Some(entry) = servers.and_then(|servers| servers.get("goldfish")) {
        if let Some(what) = foreign_server(entry) {
            return Err(SetupError::ForeignServer {
                path: path.to_owned(),
                what,
                fix: JSON_FIX,
            });
        }
        return Ok(None);
    }
    let entry = r#""goldfish": {"command": "goldfish", "args": ["mcp"]}"#;
    let brace = top_brace(&doc.blank);
    // The value of `mcpServers`, when it is an object.
    let servers_brace = member_value(&doc.blank, brace, "mcpServers")
        .filter(|&at| doc.blank[at..].starts_with('{'));
    match servers_brace {
        Some(at) => doc.insert(at, entry),
        None => doc.insert(brace, &format!(r#""mcpServers": {{{entry}}}"#)),
    }
    top.entry("mcpServers")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
        .expect("checked above")
        .insert("goldfish".to_owned(), server_entry());
    // Cannot fail on valid JSON; checked rather than trusted all the same.
    if doc.value().ok().as_ref() != Some(&config) {
        return Err(SetupError::Edit {
            path: path.to_owned(),
        });
    }
    Ok(Some(doc.text))
}

/// Whether the JSON file at `path` may hold comments: Gemini CLI reads its
/// settings as JSON with comments; Claude Code and Codex CLI read JSON.
fn comments_allowed(path: &Path) -> bool {
    path.ends_with(".gemini/settings.json")
}

/// A JSON settings text that may hold `//` and `/* */` comments (when
/// allowed), and the same text with each comment's bytes blanked to
/// spaces (newlines kept): offsets are found in `blank`, where a comment
/// cannot pass for JSON, and every insertion goes into both, so the
/// user's comments stay where they were.
struct Jsonc {
    text: String,
    blank: String,
}

impl Jsonc {
    fn new(text: String, comments: bool) -> Jsonc {
        let blank = if comments {
            blank_comments(&text)
        } else {
            text.clone()
        };
        Jsonc { text, blank }
    }

    fn value(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(&self.blank)
    }

    fn has_comments(&self) -> bool {
        self.text != self.blank
    }

    /// [`insert_member`] at the container opening at `brace`.
    fn insert(&mut self, brace: usize, member: &str) {
        let blank = insert_member(&self.blank, brace, member);
        let inserted = &blank[brace + 1..brace + 1 + blank.len() - self.blank.len()];
        self.text.insert_str(brace + 1, inserted);
        self.blank = blank;
    }
}

/// `text` with the bytes of each comment outside strings as spaces
/// (newlines kept), so its byte offsets are the text's.
fn blank_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |at| i + 2 + at + 2);
                for byte in &mut out[i..end] {
                    if *byte != b'\n' {
                        *byte = b' ';
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    String::from_utf8(out).expect("only ASCII bytes of whole characters were replaced")
}

/// The goldfish server as Codex CLI's configuration spells it.
const CODEX_SERVER: &str = "[mcp_servers.goldfish]\ncommand = \"goldfish\"\nargs = [\"mcp\"]\n";

/// Adds `[mcp_servers.goldfish]` to Codex CLI's `config.toml` at `path`,
/// keeping every other byte; an existing `goldfish` server is kept when it
/// runs this goldfish, refused otherwise ([`foreign_server`]).
fn merge_codex_server(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    let Some(text) = codex_server_edit(root, path)? else {
        return Ok(None);
    };
    write_atomic(root, path, &text)?;
    Ok(Some(format!(
        "registered the goldfish MCP server in {} (Codex reads it in a project it trusts)",
        relative(root, path)
    )))
}

/// The TOML file at `path` with the goldfish server's table appended, or
/// `None` when it has one. Appending a table keeps the user's bytes; the
/// result is checked to parse to the user's tables plus the server (an
/// inline `mcp_servers = {…}`, which a table cannot extend, is refused).
fn codex_server_edit(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    let existing = read_optional(root, path)?.unwrap_or_default();
    let toml_error = |err: toml::de::Error| SetupError::Toml {
        path: path.to_owned(),
        message: err.message().to_owned(),
    };
    let mut config: toml::Table = toml::from_str(&existing).map_err(toml_error)?;
    match config.get("mcp_servers") {
        Some(toml::Value::Table(servers)) if servers.contains_key("goldfish") => {
            let entry = serde_json::to_value(&servers["goldfish"]).unwrap_or_default();
            if let Some(what) = foreign_server(&entry) {
                return Err(SetupError::ForeignServer {
                    path: path.to_owned(),
                    what,
                    fix: TOML_FIX,
                });
            }
            return Ok(None);
        }
        Some(toml::Value::Table(_)) | None => {}
        Some(_) => {
            return Err(SetupError::NotATable {
                path: path.to_owned(),
                key: "mcp_servers".to_owned(),
            });
        }
    }
    let separator = match existing.as_str() {
        "" => "",
        text if text.ends_with("\n\n") => "",
        text if text.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    let text = format!("{existing}{separator}{CODEX_SERVER}");
    let mut server = toml::Table::new();
    server.insert("command".to_owned(), "goldfish".into());
    server.insert("args".to_owned(), toml::Value::Array(vec!["mcp".into()]));
    if let toml::Value::Table(servers) = config
        .entry("mcp_servers")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
    {
        servers.insert("goldfish".to_owned(), toml::Value::Table(server));
    }
    if toml::from_str::<toml::Table>(&text).ok().as_ref() != Some(&config) {
        return Err(SetupError::TomlEdit {
            path: path.to_owned(),
        });
    }
    Ok(Some(text))
}

/// The byte offset of the `{` opening valid JSON `text` whose top level is
/// an object.
fn top_brace(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

/// Inserts `member` as the first member of the object (or element of the
/// array) whose `{` (`[`) is at `brace`, in the style of the text: on its
/// own line with the indentation of the next member, or inline.
fn insert_member(text: &str, brace: usize, member: &str) -> String {
    let after = &text[brace + 1..];
    let next = after.trim_start();
    let empty = next.starts_with(['}', ']']);
    let gap = &after[..after.len() - next.len()];
    let insertion = match gap.rfind('\n') {
        Some(newline) if !empty => format!("\n{}{member},", &gap[newline + 1..]),
        Some(_) => {
            // `{` then `}` on a later line: indent one step past the brace's line.
            let line_start = text[..brace].rfind('\n').map_or(0, |n| n + 1);
            let indent: String = text[line_start..]
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            format!("\n{indent}  {member}")
        }
        None if empty => member.to_owned(),
        None => format!("{member}, "),
    };
    let mut out = String::with_capacity(text.len() + insertion.len());
    out.push_str(&text[..=brace]);
    out.push_str(&insertion);
    out.push_str(after);
    out
}

/// The marketplace that holds goldfish's Claude Code plugin (this
/// repository's `.claude-plugin/marketplace.json`), as
/// `extraKnownMarketplaces` names it.
fn marketplace_entry() -> serde_json::Value {
    serde_json::json!({ "source": { "source": "github", "repo": "goldfish-dev/goldfish" } })
}

/// The plugin, as `enabledPlugins` names it: `plugin@marketplace`.
pub const PLUGIN_ID: &str = "goldfish@goldfish";

/// `init --agent claude --plugin`: offers every teammate who trusts the
/// repository goldfish's Claude Code plugin (the marketplace in
/// `extraKnownMarketplaces`, the plugin in `enabledPlugins` of
/// `.claude/settings.json`) in place of `.mcp.json`, `/recall` and the
/// hooks, which the plugin brings; the instructions section as `setup`
/// writes it. Every other byte of the settings is kept; a plugin the user
/// turned off (`false`) stays off.
pub fn setup_plugin(root: &Path) -> Result<Vec<String>, SetupError> {
    let mut changes = Vec::new();
    let path = hooks_file(root, Agent::Claude).expect("Claude Code has a settings file");
    if let Some(text) = plugin_edit(root, &path)? {
        write_atomic(root, &path, &text)?;
        changes.push(format!(
            "offered goldfish's Claude Code plugin in {} (extraKnownMarketplaces, enabledPlugins): each teammate who trusts the folder is asked to install it",
            relative(root, &path)
        ));
    }
    let (_, instructions) = agent_files(root, Agent::Claude);
    changes.extend(merge_section(root, &instructions)?);
    Ok(changes)
}

/// Checks that [`setup_plugin`] can edit the files, writing nothing.
pub fn check_plugin(root: &Path) -> Result<(), SetupError> {
    let (_, instructions) = agent_files(root, Agent::Claude);
    read_optional(root, &instructions)?;
    let path = hooks_file(root, Agent::Claude).expect("Claude Code has a settings file");
    plugin_edit(root, &path).map(|_| ())
}

/// The settings at `path` with the marketplace and the plugin added, or
/// `None` when both are there; inserted into the user's text as
/// [`server_edit`] inserts the server, the result checked to parse to the
/// user's value plus the two entries.
fn plugin_edit(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    let existing = read_optional(root, path)?.unwrap_or_default();
    let mut text = if existing.trim().is_empty() {
        "{}\n".to_owned()
    } else {
        existing.clone()
    };
    let mut config: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| SetupError::Json {
            path: path.to_owned(),
            source,
        })?;
    let not_an_object = |key: &str| SetupError::NotAnObject {
        path: path.to_owned(),
        key: key.to_owned(),
    };
    let top = config
        .as_object_mut()
        .ok_or_else(|| not_an_object("(top level)"))?;
    let wanted = [
        ("extraKnownMarketplaces", "goldfish", marketplace_entry()),
        ("enabledPlugins", PLUGIN_ID, serde_json::Value::Bool(true)),
    ];
    let mut changed = false;
    for (key, name, value) in wanted {
        let members = top
            .entry(key)
            .or_insert_with(|| serde_json::json!({}))
            .as_object_mut()
            .ok_or_else(|| not_an_object(key))?;
        if let Some(present) = members.get(name) {
            if key == "extraKnownMarketplaces" && present != &value {
                return Err(SetupError::ForeignMarketplace {
                    path: path.to_owned(),
                    what: crate::domain::memory::injection::visible(&present.to_string())
                        .into_owned(),
                });
            }
            continue;
        }
        members.insert(name.to_owned(), value.clone());
        let member = format!("{}: {value}", serde_json::Value::from(name));
        let brace = top_brace(&text);
        text = match member_value(&text, brace, key).filter(|&at| text[at..].starts_with('{')) {
            Some(at) => insert_member(&text, at, &member),
            None => insert_member(&text, brace, &format!("\"{key}\": {{{member}}}")),
        };
        changed = true;
    }
    if !changed {
        return Ok(None);
    }
    if serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .as_ref()
        != Some(&config)
    {
        return Err(SetupError::PluginEdit {
            path: path.to_owned(),
        });
    }
    Ok(Some(text))
}

/// The Claude Code hook events capture listens to, with the command each
/// runs (`init --agent claude --capture`).
const CAPTURE_HOOKS: [(&str, &str); 4] = [
    ("PostToolUse", "goldfish agent-hook post-tool-use"),
    (
        "PostToolUseFailure",
        "goldfish agent-hook post-tool-use-failure",
    ),
    ("Stop", "goldfish agent-hook stop"),
    // The end of a last turn no `Stop` ended (an interrupt, an exit).
    ("SessionEnd", "goldfish agent-hook session-end"),
];

/// The other goldfish hooks `init --agent claude --capture` adds: the
/// briefing at session start, a checkpoint before the context is compacted.
const SESSION_HOOKS: [(&str, &str); 2] = [
    ("SessionStart", "goldfish agent-hook session-start"),
    ("PreCompact", "goldfish agent-hook pre-compact"),
];

/// One hook entry of Claude Code's settings for `command`: tool events
/// match every tool, the others take no matcher.
fn hook_entry(agent: Agent, event: &str, command: &str) -> serde_json::Value {
    let hook = serde_json::json!({
        "type": "command",
        "command": command,
        "timeout": hook_timeout(agent, event),
    });
    // Codex CLI runs an entry with no matcher for every tool (its matcher
    // is a regular expression, where `*` is none).
    if event.starts_with("PostToolUse") && agent != Agent::Codex {
        serde_json::json!({ "matcher": "*", "hooks": [hook] })
    } else {
        serde_json::json!({ "hooks": [hook] })
    }
}

/// How long an agent lets a goldfish hook run before it stops it, in the
/// agent's unit (Gemini CLI counts milliseconds, Claude Code and Codex CLI
/// seconds). The hooks return well within it (the prompt hook in 1.5 s,
/// capture's after queueing); it bounds a stuck one, which would otherwise
/// hold the agent for the clients' default (60 s to 10 min). Codex CLI
/// caps `SessionEnd` at 3 s.
pub fn hook_timeout(agent: Agent, event: &str) -> u64 {
    let seconds = match event {
        "SessionStart" | "PreCompact" => 30,
        "SessionEnd" => 3,
        _ => 10,
    };
    match agent {
        Agent::Gemini => seconds * 1000,
        Agent::Claude | Agent::Codex => seconds,
    }
}

/// Whether the entries of an event already run `command` (with or without
/// arguments of the user's: `… session-start --budget 500`).
fn runs(entries: &serde_json::Value, command: &str) -> bool {
    entries.as_array().is_some_and(|entries| {
        entries.iter().any(|entry| {
            entry["hooks"].as_array().is_some_and(|hooks| {
                hooks.iter().any(|hook| {
                    hook["command"].as_str().is_some_and(|c| {
                        let c = c.trim();
                        c == command || c.starts_with(&format!("{command} "))
                    })
                })
            })
        })
    })
}

/// The offset of the value of member `key` in the object whose `{` is at
/// `brace` in valid JSON `text` (the last such member, as JSON readers take
/// the last).
fn member_value(text: &str, brace: usize, key: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut depth, mut found) = (0usize, None);
    let mut i = brace;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let rest = text[i + 1..].trim_start();
                if depth == 1
                    && rest.starts_with(':')
                    && serde_json::from_str::<String>(&text[start..=i]).is_ok_and(|k| k == key)
                {
                    let value = rest[1..].trim_start();
                    found = Some(text.len() - value.len());
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// A hook `init --agent` writes: the event, the command it is known by
/// (an entry running it, with or without the user's arguments, counts) and
/// the command line written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub event: &'static str,
    pub command: &'static str,
    pub line: String,
}

impl Hook {
    fn new(event: &'static str, command: &'static str) -> Hook {
        Hook {
            event,
            command,
            line: command.to_owned(),
        }
    }
}

/// The prompt hook: the memories relevant to each prompt (Claude Code's
/// `UserPromptSubmit`, Gemini CLI's `BeforeAgent`).
const PROMPT_HOOK: &str = "goldfish agent-hook user-prompt";

/// The hooks `init --agent` writes for `agent`: the prompt hook unless
/// `prompt` is off; with `capture` the capture hooks (and Claude Code's
/// session hooks; Gemini CLI always gets its briefing). Gemini CLI reads
/// only JSON from a hook, so its briefing is asked for as JSON.
///
/// Gemini CLI gets no pre-compaction checkpoint: its `PreCompress` is no
/// sign of a compaction (see [`compacts`]), and no `SessionStart`
/// follows one, which is what Claude Code's checkpoint is for. Its
/// session's checkpoint comes from capture: each `AfterAgent` (the end of
/// a turn, with its `prompt` and `prompt_response`) keeps it current, and
/// `SessionEnd` ends a last turn no `AfterAgent` ended (an interrupt, an
/// exit).
pub fn hooks(agent: Agent, prompt: bool, capture: bool, ask_agent: bool) -> Vec<Hook> {
    let mut hooks = Vec::new();
    match agent {
        Agent::Claude => {
            if prompt {
                hooks.push(Hook::new("UserPromptSubmit", PROMPT_HOOK));
            }
            if capture {
                for (event, command) in CAPTURE_HOOKS.into_iter().chain(SESSION_HOOKS) {
                    let mut hook = Hook::new(event, command);
                    if event == "Stop" && ask_agent {
                        hook.line = format!("{command} --ask-agent");
                    }
                    hooks.push(hook);
                }
            }
        }
        Agent::Gemini => {
            if prompt {
                hooks.push(Hook::new("BeforeAgent", PROMPT_HOOK));
            }
            let mut briefing = Hook::new("SessionStart", "goldfish agent-hook session-start");
            briefing.line = format!("{} --json", briefing.command);
            hooks.push(briefing);
            if capture {
                // Read in Claude Code's shape (`capture::event::claude_shaped`).
                hooks.push(Hook::new("AfterTool", "goldfish agent-hook post-tool-use"));
                hooks.push(Hook::new("AfterAgent", "goldfish agent-hook stop"));
                hooks.push(Hook::new("SessionEnd", "goldfish agent-hook session-end"));
            }
        }
        Agent::Codex => {
            if prompt {
                hooks.push(Hook::new("UserPromptSubmit", PROMPT_HOOK));
            }
            // Its output as Codex CLI's schema for the event has it
            // (`session-start.command.output`: `hookSpecificOutput`).
            let mut briefing = Hook::new("SessionStart", "goldfish agent-hook session-start");
            briefing.line = format!("{} --json", briefing.command);
            hooks.push(briefing);
            // Codex CLI fires PreCompact when it compacts, with the
            // rollout as `transcript_path`, and SessionStart (`source:
            // "compact"`) after.
            hooks.push(Hook::new("PreCompact", "goldfish agent-hook pre-compact"));
            if capture {
                // Its shell and `apply_patch` read in Claude Code's shape
                // (`capture::event::claude_shaped`).
                hooks.push(Hook::new(
                    "PostToolUse",
                    "goldfish agent-hook post-tool-use",
                ));
                let mut stop = Hook::new("Stop", "goldfish agent-hook stop");
                if ask_agent {
                    stop.line = format!("{} --ask-agent", stop.command);
                }
                hooks.push(stop);
                hooks.push(Hook::new("SessionEnd", "goldfish agent-hook session-end"));
            }
        }
    }
    hooks
}

/// The settings file an agent reads its hooks from.
fn hooks_file(root: &Path, agent: Agent) -> Option<PathBuf> {
    match agent {
        Agent::Claude => Some(root.join(".claude").join("settings.json")),
        Agent::Gemini => Some(root.join(".gemini").join("settings.json")),
        // Codex CLI's hooks file beside its project config (in Claude
        // Code's shape), read in a project it trusts; or that config's
        // `[hooks]`, where the user keeps them (Codex CLI runs the hooks
        // of both, and warns: one place a project).
        Agent::Codex => {
            let dir = root.join(".codex");
            let json = dir.join("hooks.json");
            let toml = dir.join("config.toml");
            let in_toml = !json.exists()
                && read_optional(root, &toml)
                    .ok()
                    .flatten()
                    .and_then(|text| toml::from_str::<toml::Table>(&text).ok())
                    .is_some_and(|config| config.contains_key("hooks"));
            Some(if in_toml { toml } else { json })
        }
    }
}

/// [`hooks_edit`], or [`codex_toml_hooks_edit`] for Codex CLI's
/// `config.toml`.
fn edit_hooks(
    agent: Agent,
    root: &Path,
    path: &Path,
    wanted: &[Hook],
) -> Result<Option<HooksEdit>, SetupError> {
    if agent == Agent::Codex && path.extension().is_some_and(|e| e == "toml") {
        return codex_toml_hooks_edit(root, path, wanted);
    }
    hooks_edit(agent, root, path, wanted, obsolete_hooks(agent))
}

/// Codex CLI's `config.toml` at `path` with the `wanted` hooks its `[hooks]`
/// does not run yet appended, each as a `[[hooks.<event>]]` table (after
/// the user's entries), every other byte kept; `None` when there is
/// nothing to add. The result is checked to parse to the user's
/// configuration plus those entries: hooks written as inline arrays,
/// which a table cannot extend, are refused with nothing changed.
fn codex_toml_hooks_edit(
    root: &Path,
    path: &Path,
    wanted: &[Hook],
) -> Result<Option<HooksEdit>, SetupError> {
    let existing = read_optional(root, path)?.unwrap_or_default();
    let toml_error = |err: toml::de::Error| SetupError::Toml {
        path: path.to_owned(),
        message: err.message().to_owned(),
    };
    let mut config: toml::Table = toml::from_str(&existing).map_err(toml_error)?;
    let hooks_json = serde_json::to_value(config.get("hooks")).unwrap_or_default();
    let mut text = existing.clone();
    let mut added = Vec::new();
    for hook in wanted {
        if runs(&hooks_json[hook.event], hook.command) {
            continue;
        }
        let mut command = toml::Table::new();
        command.insert("type".to_owned(), "command".into());
        command.insert("command".to_owned(), hook.line.clone().into());
        let timeout = hook_timeout(Agent::Codex, hook.event);
        command.insert(
            "timeout".to_owned(),
            toml::Value::Integer(i64::try_from(timeout).unwrap_or(i64::MAX)),
        );
        let mut entry = toml::Table::new();
        entry.insert(
            "hooks".to_owned(),
            toml::Value::Array(vec![toml::Value::Table(command)]),
        );
        let separator = if text.is_empty() || text.ends_with("\n\n") {
            ""
        } else if text.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        };
        text = format!(
            "{text}{separator}[[hooks.{}]]\nhooks = [{{ type = \"command\", command = {}, timeout = {timeout} }}]\n",
            hook.event,
            toml::Value::String(hook.line.clone())
        );
        let Some(toml::Value::Table(hooks)) = config.get_mut("hooks") else {
            return Err(SetupError::NotATable {
                path: path.to_owned(),
                key: "hooks".to_owned(),
            });
        };
        match hooks
            .entry(hook.event)
            .or_insert_with(|| toml::Value::Array(Vec::new()))
        {
            toml::Value::Array(entries) => entries.push(toml::Value::Table(entry)),
            _ => {
                return Err(SetupError::NotATable {
                    path: path.to_owned(),
                    key: format!("hooks.{} (a list)", hook.event),
                });
            }
        }
        added.push(hook.event);
    }
    if added.is_empty() {
        return Ok(None);
    }
    if toml::from_str::<toml::Table>(&text).ok().as_ref() != Some(&config) {
        return Err(SetupError::HooksEdit {
            path: path.to_owned(),
        });
    }
    Ok(Some(HooksEdit {
        text,
        added,
        removed: Vec::new(),
    }))
}

/// What [`hooks_edit`] does to a settings file.
struct HooksEdit {
    text: String,
    /// The events whose hook it added.
    added: Vec<&'static str>,
    /// The events whose obsolete goldfish entry it took out.
    removed: Vec<&'static str>,
}

/// The settings file at `path` with `wanted` hooks added and `obsolete`
/// goldfish entries taken out, or `None` when there is nothing to do. Like
/// [`server_edit`], the entries are inserted into the user's text (first
/// in each event's list, the user's hooks after them), an obsolete one is
/// cut out of it with its comma, and the result is checked to parse to
/// the user's value plus and minus them.
fn hooks_edit(
    agent: Agent,
    root: &Path,
    path: &Path,
    wanted: &[Hook],
    obsolete: &[(&'static str, &'static str)],
) -> Result<Option<HooksEdit>, SetupError> {
    let existing = read_optional(root, path)?.unwrap_or_default();
    let existing = if existing.trim().is_empty() {
        "{}\n".to_owned()
    } else {
        existing
    };
    let mut doc = Jsonc::new(existing, comments_allowed(path));
    let mut config: serde_json::Value = doc.value().map_err(|source| SetupError::Json {
        path: path.to_owned(),
        source,
    })?;
    let not_an_object = |key: &str| SetupError::NotAnObject {
        path: path.to_owned(),
        key: key.to_owned(),
    };
    let top = config
        .as_object_mut()
        .ok_or_else(|| not_an_object("(top level)"))?;
    let hooks = top
        .entry("hooks")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
        .ok_or_else(|| not_an_object("hooks"))?;
    let mut removed = Vec::new();
    for &(event, command) in obsolete {
        let Some(entries) = hooks.get_mut(event).and_then(|e| e.as_array_mut()) else {
            continue;
        };
        let before = entries.len();
        entries.retain(|entry| !only_runs(entry, command));
        if entries.len() == before {
            continue;
        }
        if entries.is_empty() {
            hooks.remove(event);
        }
        // Cut out of a text without comments only (a comment could sit
        // in what is cut).
        let cut = (!doc.has_comments())
            .then(|| without_entries(&doc.text, event, command))
            .flatten()
            .ok_or_else(|| SetupError::HooksEdit {
                path: path.to_owned(),
            })?;
        doc = Jsonc::new(cut, false);
        removed.push(event);
    }
    let mut added = Vec::new();
    for hook in wanted {
        let event = hook.event;
        let entries = hooks.entry(event).or_insert_with(|| serde_json::json!([]));
        if runs(entries, hook.command) {
            continue;
        }
        let entry = hook_entry(agent, event, &hook.line);
        entries
            .as_array_mut()
            .ok_or_else(|| SetupError::NotAnObject {
                path: path.to_owned(),
                key: format!("hooks.{event} (a list)"),
            })?
            .insert(0, entry.clone());
        added.push(event);
        let top = top_brace(&doc.blank);
        match member_value(&doc.blank, top, "hooks") {
            Some(at) => match member_value(&doc.blank, at, event) {
                Some(list) => doc.insert(list, &entry.to_string()),
                None => doc.insert(at, &format!("\"{event}\": [{entry}]")),
            },
            None => doc.insert(top, &format!("\"hooks\": {{\"{event}\": [{entry}]}}")),
        }
    }
    if added.is_empty() && removed.is_empty() {
        return Ok(None);
    }
    if doc.value().ok().as_ref() != Some(&config) {
        return Err(SetupError::HooksEdit {
            path: path.to_owned(),
        });
    }
    Ok(Some(HooksEdit {
        text: doc.text,
        added,
        removed,
    }))
}

/// The goldfish entries an older `init` wrote that it no longer writes,
/// with the command each runs: Gemini CLI's `PreCompress` checkpoint,
/// which stored one on every model call ([`compacts`]).
fn obsolete_hooks(agent: Agent) -> &'static [(&'static str, &'static str)] {
    match agent {
        Agent::Gemini => &[("PreCompress", "goldfish agent-hook pre-compact")],
        Agent::Claude | Agent::Codex => &[],
    }
}

/// Whether a hook entry runs `command` and nothing else (an entry that
/// also runs a hook of the user's is left as it is).
fn only_runs(entry: &serde_json::Value, command: &str) -> bool {
    entry["hooks"].as_array().is_some_and(|hooks| {
        !hooks.is_empty()
            && hooks
                .iter()
                .all(|hook| runs(&serde_json::json!([{ "hooks": [hook] }]), command))
    })
}

/// Valid JSON settings `text` without the entries of `hooks.<event>` that
/// only run `command` ([`only_runs`]), and without the event when none is
/// left: each cut out with the comma and blanks between it and the next
/// item (the previous one, for the last), every other byte kept. `None`
/// when the text is not laid out as its value says (cannot happen on
/// valid JSON; the caller checks the result all the same).
fn without_entries(text: &str, event: &str, command: &str) -> Option<String> {
    let mut text = text.to_owned();
    let hooks = member_value(&text, top_brace(&text), "hooks")?;
    let list = member_value(&text, hooks, event)?;
    loop {
        let items = items_at(&text, list)?;
        let found = items.iter().position(|&(start, end)| {
            serde_json::from_str::<serde_json::Value>(&text[start..end])
                .is_ok_and(|entry| only_runs(&entry, command))
        });
        let Some(at) = found else {
            break;
        };
        if items.len() == 1 {
            // The event's last entry: the event goes.
            let members = items_at(&text, hooks)?;
            let member = members
                .iter()
                .position(|&(start, end)| start < list && list < end)?;
            let cut = cut_item(&members, member);
            text.replace_range(cut, "");
            return Some(text);
        }
        let cut = cut_item(&items, at);
        text.replace_range(cut, "");
    }
    Some(text)
}

/// The byte range to cut for item `at` of `items`: up to the next item,
/// or from the end of the previous one, or the item alone.
fn cut_item(items: &[(usize, usize)], at: usize) -> std::ops::Range<usize> {
    match (at.checked_sub(1), items.get(at + 1)) {
        (_, Some(next)) => items[at].0..next.0,
        (Some(previous), None) => items[previous].1..items[at].1,
        (None, None) => items[at].0..items[at].1,
    }
}

/// The byte ranges of the items (members of an object, elements of an
/// array) of the container whose `{` or `[` is at `open` in valid JSON
/// `text`, blanks around them left out.
fn items_at(text: &str, open: usize) -> Option<Vec<(usize, usize)>> {
    let bytes = text.as_bytes();
    if !matches!(bytes.get(open), Some(b'{' | b'[')) {
        return None;
    }
    let mut items = Vec::new();
    let (mut depth, mut start, mut end) = (0usize, None::<usize>, 0usize);
    let mut i = open + 1;
    while i < bytes.len() {
        let byte = bytes[i];
        match byte {
            b'"' => {
                start.get_or_insert(i);
                i += 1;
                while *bytes.get(i)? != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                end = i + 1;
            }
            b'{' | b'[' => {
                start.get_or_insert(i);
                depth += 1;
            }
            b'}' | b']' if depth == 0 => {
                if let Some(start) = start {
                    items.push((start, end));
                }
                return Some(items);
            }
            b'}' | b']' => {
                depth -= 1;
                end = i + 1;
            }
            b',' if depth == 0 => {
                items.push((start?, end));
                start = None;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => {
                start.get_or_insert(i);
                end = i + 1;
            }
        }
        i += 1;
    }
    None
}

/// Checks that `init --agent` can add `hooks` for `agent` to the
/// repository at `root` without writing anything.
pub fn check_hooks(root: &Path, agent: Agent, hooks: &[Hook]) -> Result<(), SetupError> {
    match hooks_file(root, agent) {
        Some(path) if !hooks.is_empty() => edit_hooks(agent, root, &path, hooks).map(|_| ()),
        _ => Ok(()),
    }
}

/// Adds the `hooks` of `agent` that are not there yet to its settings file
/// in the repository at `root`, keeping every other byte of the file and
/// the user's own hooks; says what it added, by what the hooks do.
pub fn setup_hooks(root: &Path, agent: Agent, hooks: &[Hook]) -> Result<Vec<String>, SetupError> {
    let Some(path) = hooks_file(root, agent).filter(|_| !hooks.is_empty()) else {
        return Ok(Vec::new());
    };
    let Some(HooksEdit {
        text,
        added,
        removed,
    }) = edit_hooks(agent, root, &path, hooks)?
    else {
        return Ok(Vec::new());
    };
    write_atomic(root, &path, &text)?;
    let shown = relative(root, &path);
    let of = |events: &[&str]| -> Vec<&'static str> {
        added
            .iter()
            .copied()
            .filter(|event| events.contains(event))
            .collect()
    };
    let capture = of(&[
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
        "AfterTool",
        "AfterAgent",
    ]);
    let session = of(&["SessionStart", "PreCompact"]);
    let prompt = of(&["UserPromptSubmit", "BeforeAgent"]);
    let mut changes = Vec::new();
    if !prompt.is_empty() {
        changes.push(format!(
            "added the {} {} to {shown} (the few memories relevant to each prompt, or nothing; leave it out with --no-prompt-hook)",
            and_list(&prompt),
            hooks_word(&prompt)
        ));
    }
    if !capture.is_empty() {
        changes.push(format!(
            "turned capture on: {} {} in {shown}; once committed, capture runs for every teammate who pulls it (one opts out with GOLDFISH_CAPTURE=off in the agent's environment)",
            and_list(&capture),
            hooks_word(&capture)
        ));
    }
    if !session.is_empty() {
        let what = if session.contains(&"PreCompact") {
            "the briefing at session start, a checkpoint before compaction"
        } else {
            "the briefing at session start"
        };
        changes.push(format!(
            "added the {} {} to {shown} ({what})",
            and_list(&session),
            hooks_word(&session)
        ));
    }
    for event in removed {
        changes.push(format!(
            "took the {event} hook out of {shown}: it stored a checkpoint on every model call, with no compaction; the session's checkpoint comes from capture (--capture)"
        ));
    }
    if agent == Agent::Codex && !added.is_empty() {
        changes.push(CODEX_TRUST.to_owned());
    }
    Ok(changes)
}

/// What `init --agent codex` says of the hooks it added: Codex CLI runs a
/// hook only once the user trusted it (each new or changed one), in its
/// `/hooks` view.
pub const CODEX_TRUST: &str = "Codex CLI runs these hooks only once you trust them: start `codex` in this repository and trust them when it asks (or in /hooks); a headless run (`codex exec`) skips untrusted hooks";

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn hooks_word(items: &[&str]) -> &'static str {
    if items.len() == 1 { "hook" } else { "hooks" }
}

/// Creates `path` with `text` unless it exists (then it is the user's).
fn write_new(root: &Path, path: &Path, text: &str) -> Result<Option<String>, SetupError> {
    if read_optional(root, path)?.is_some() {
        return Ok(None);
    }
    write_atomic(root, path, text)?;
    Ok(Some(format!("wrote {}", relative(root, path))))
}

/// Puts the goldfish section into the instructions file: appended when the
/// file has none, refreshed between its markers when it has an older one.
fn merge_section(root: &Path, path: &Path) -> Result<Option<String>, SetupError> {
    let block = format!("{SECTION_START}\n{SECTION}{SECTION_END}\n");
    let existing = read_optional(root, path)?.unwrap_or_default();
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
    write_atomic(root, path, &updated)?;
    Ok(Some(format!(
        "{verb} the goldfish section in {}",
        relative(root, path)
    )))
}

/// Whether the payload a pre-compaction hook got (`None`: plain text, a
/// person's) tells of a compaction, so that a checkpoint is worth storing.
/// Claude Code's `PreCompact` fires when it compacts. Gemini CLI's
/// `PreCompress` does not: 0.61 fires it at the start of every compression
/// attempt, before the threshold check that decides whether anything is
/// compressed (`ChatCompressionService.compress`), which runs before every
/// model call, so with the default settings it fires on every call; and
/// its payload (`trigger`: `auto` or `manual`) is the same whether or not
/// a compression follows. Nothing in it proves one, so nothing is stored
/// from it: a settings file an older `init` wrote still runs it, until
/// `init --agent gemini` takes it out.
pub fn compacts(payload: Option<&serde_json::Value>) -> bool {
    payload.is_none_or(|payload| payload["hook_event_name"] != "PreCompress")
}

/// Characters kept of the last request and of the last answer.
const EXCERPT: usize = 1500;

/// A checkpoint from a Claude Code transcript (JSON Lines of `user` and
/// `assistant` messages): the last request the user typed (not a slash
/// command's wrapper, a meta entry or a tool result:
/// [`crate::domain::capture::transcript::request_in`]) and the agent's
/// last text answer, found in its last 4 MiB (a transcript of any length
/// is read in bounded time and memory). `None` when that part has neither.
pub fn checkpoint_from_transcript(path: &Path) -> io::Result<Option<String>> {
    let (request, answer) = crate::adapters::capture::transcript_last(path)?;
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

/// The first `max` characters of `text`, marked when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

/// What the agent hooks keep of one agent session between its hooks: the
/// checkpoint its PreCompact hook stored (what SessionStart shows first
/// after the compaction) and when SessionStart last briefed it (what a
/// resumed session is told is new since). One small file per session in
/// the home's `sessions/`, named by a hash of the session id: the id comes
/// from the agent's payload and never becomes a path.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionMarks {
    pub checkpoint: Option<String>,
    pub seen: Option<String>,
    /// The memories the prompt hook gave it (never twice), the last
    /// [`crate::app::prompt::MAX_SEEN`].
    #[serde(default)]
    pub given: Vec<String>,
}

/// A marks file is at most a few kilobytes (256 ids): a larger one is not
/// ours.
const MARKS_MAX_BYTES: u64 = 16 << 10;

fn marks_path(home: &Home, session_id: &str) -> PathBuf {
    let hash = blake3::hash(session_id.as_bytes()).to_hex();
    home.sessions_dir().join(format!("{}.json", &hash[..32]))
}

impl SessionMarks {
    /// The session's marks; none when it has no file, or one that cannot
    /// be read as marks (it only loses the hint it held).
    pub fn of(home: &Home, session_id: &str) -> SessionMarks {
        use std::io::Read;
        let Ok(file) = std::fs::File::open(marks_path(home, session_id)) else {
            return SessionMarks::default();
        };
        let mut text = String::new();
        if file
            .take(MARKS_MAX_BYTES)
            .read_to_string(&mut text)
            .is_err()
        {
            return SessionMarks::default();
        }
        serde_json::from_str(&text).unwrap_or_default()
    }

    /// Writes the session's marks (a temporary file renamed into place).
    pub fn save(&self, home: &Home, session_id: &str) -> io::Result<()> {
        let path = marks_path(home, session_id);
        let dir = home.sessions_dir();
        std::fs::create_dir_all(&dir)?;
        let mut temp = tempfile::NamedTempFile::new_in(&dir)?;
        std::io::Write::write_all(
            &mut temp,
            serde_json::to_string(self)
                .expect("marks serialize")
                .as_bytes(),
        )?;
        temp.persist(path).map_err(|err| err.error)?;
        Ok(())
    }
}

/// Whether Gemini CLI runs this hook: its hook runner sets
/// `GEMINI_SESSION_ID` (with `GEMINI_PROJECT_DIR` and `GEMINI_CWD`) for
/// each hook command, and whenever a hook's stdout is empty it shows its
/// stderr to the user, as the hook's `systemMessage`
/// (`HookRunner.executeCommandHook` in `@google/gemini-cli` 0.61). Codex
/// CLI needs no such care: it reads a hook's stderr only when the hook
/// exits 2, and sets no variable of its own for a hook
/// (`scripts/clients/codex.sh` checks it shows none of it).
pub fn run_by_gemini() -> bool {
    crate::adapters::env::gemini_session()
}

/// Where an agent hook that must not speak on stderr keeps what it would
/// have said: `$GOLDFISH_HOME/logs/agent-hook.log`, a line each, dated and
/// named by the event; over 1 MiB the file becomes `agent-hook.log.old`
/// and a new one starts.
#[derive(Debug, Clone)]
pub struct HookLog {
    path: PathBuf,
    event: String,
}

/// The size past which the hook log starts again.
const HOOK_LOG_MAX_BYTES: u64 = 1 << 20;

impl HookLog {
    /// The log of the home the environment names, for `event`'s hook. The
    /// event's name heads every line as a label (one line, bounded,
    /// escaped): a hook command line this goldfish cannot read names an
    /// event a stranger's config wrote.
    pub fn from_env(event: &str) -> Option<HookLog> {
        let home = Home::from_env().ok()?;
        Some(HookLog {
            path: home.logs_dir().join("agent-hook.log"),
            event: crate::domain::memory::label::shown(
                event,
                crate::domain::memory::label::LABEL_CHARS,
            ),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `text` (one line or more, already escaped for a terminal).
    pub fn append(&self, text: &str) -> io::Result<()> {
        use std::io::Write;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() > HOOK_LOG_MAX_BYTES) {
            std::fs::rename(&self.path, self.path.with_extension("log.old"))?;
        }
        let at = crate::app::session::Clock::from_env()
            .now()
            .map(|now| now.to_string())
            .unwrap_or_default();
        let mut lines = String::new();
        for line in text.lines() {
            lines.push_str(&format!("{at} {}: {line}\n", self.event));
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?
            .write_all(lines.as_bytes())
    }
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

    /// A transcript is read from its last 4 MiB only: what comes after a
    /// 6 MiB tool result is quoted, a request before it is not.
    #[test]
    fn a_long_transcript_is_read_from_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let big = format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","content":"{}"}}]}}}}"#,
            "x".repeat(6 << 20)
        );
        let old = r#"{"type":"user","message":{"role":"user","content":"An old request"}}"#;
        let request = r#"{"type":"user","message":{"role":"user","content":"Speed up the sync"}}"#;
        let answer = r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Done: one transaction per sync."}]}}"#;
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, [old, big.as_str(), request, answer].join("\n")).unwrap();
        let checkpoint = checkpoint_from_transcript(&path).unwrap().unwrap();
        assert!(
            checkpoint.contains("Last request: Speed up the sync"),
            "{checkpoint}"
        );
        assert!(checkpoint.contains("Last answer: Done: one transaction per sync."));
        let path = dir.path().join("u.jsonl");
        std::fs::write(&path, [old, big.as_str(), answer].join("\n")).unwrap();
        let checkpoint = checkpoint_from_transcript(&path).unwrap().unwrap();
        assert!(!checkpoint.contains("An old request"), "{checkpoint}");
        assert!(checkpoint.contains("Last answer: Done"), "{checkpoint}");
    }

    /// A transcript path that names a FIFO is refused at once, not waited on.
    #[test]
    fn a_transcript_that_is_no_regular_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("t.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let err = checkpoint_from_transcript(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    /// The hook log names the event on each line and starts again past
    /// 1 MiB, the older lines kept in `agent-hook.log.old`.
    #[test]
    fn the_hook_log_dates_each_line_and_starts_again_past_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let log = HookLog {
            path: dir.path().join("logs/agent-hook.log"),
            event: "user-prompt".to_owned(),
        };
        log.append("warning: one\nhint: two\n").unwrap();
        let text = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].ends_with(" user-prompt: warning: one"), "{text}");
        assert!(lines[1].ends_with(" user-prompt: hint: two"), "{text}");
        std::fs::write(log.path(), vec![b'x'; (HOOK_LOG_MAX_BYTES + 1) as usize]).unwrap();
        log.append("note: three").unwrap();
        assert!(
            std::fs::read_to_string(log.path())
                .unwrap()
                .ends_with(" user-prompt: note: three\n")
        );
        let old = dir.path().join("logs/agent-hook.log.old");
        assert_eq!(
            std::fs::metadata(old).unwrap().len(),
            HOOK_LOG_MAX_BYTES + 1
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
