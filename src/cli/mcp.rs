//! `goldfish mcp`: the MCP server an agent's client starts in a repository.
//!
//! Stdio transport: stdout carries the protocol only, logs go to stderr. The
//! tools run the same operations as the command line ([`super::ops`]) on one
//! long-lived [`Ctx`], so the embedding model and tokenizer are loaded once,
//! in a background thread that does not delay the `initialize` handshake.
//! Every recall first runs the incremental sync, which is what picks up a
//! pull (a HEAD change) made while the server runs.
//!
//! A thin line filter stands between stdin and rmcp: rmcp ignores a line
//! that is not JSON and answers a malformed message without its id, so a
//! client waiting for that id would hang. The filter answers such lines
//! itself (JSON-RPC -32700 parse error, -32600 invalid request, with the id
//! when the line has one) and passes every valid message on.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::Context;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::ops::{self, Ctx, Forgot, Front, RecallInput, Recalled, StoreInput, Target};
use super::{CliError, DistillMode, EXIT_OK, output};
use crate::index::search::{IndexedMemory, Mode};

/// What a recall without a budget returns at most, in tokens: MCP clients
/// truncate large tool results, and an agent's context is precious.
pub(crate) const DEFAULT_CAP: usize = 2000;
/// The most memories one recall may ask for.
const MAX_LIMIT: usize = 50;

const INSTRUCTIONS: &str = "goldfish is this repository's team memory, kept in git. \
Call `brief` when you start working. Call `recall` before you design, debug or decide \
something the team may have met before (pass `budget` to get a short digest). \
Call `store` when you make a decision, fix a non-obvious bug, learn something about \
the code, or reach a checkpoint: one short memory per fact, with the files it is about. \
Cite memory ids when you rely on them.";

/// The server's state, shared by the tool calls.
struct Shared {
    ctx: Ctx,
}

#[derive(Clone)]
pub(crate) struct Server {
    shared: Arc<Mutex<Shared>>,
    tool_router: ToolRouter<Server>,
}

/// Parameters of `store`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoreParams {
    /// The memory: a few self-contained sentences. Keep identifiers exact (paths, symbols, commit hashes, issue numbers). At most 8 KiB; credentials are refused.
    content: String,
    /// decision, bug-fix, feature, insight, observation, refactor, checkpoint or plan (or a type from .goldfish/config). Default: observation.
    #[serde(rename = "type")]
    kind: Option<String>,
    /// Short tags, e.g. ["auth", "billing"].
    #[serde(default)]
    tags: Vec<String>,
    /// Paths (relative to the repository root) the memory is about.
    #[serde(default)]
    files: Vec<String>,
    /// Store even though a nearly identical memory exists (it is refused otherwise): only when it really says something new.
    #[serde(default)]
    force: bool,
}

/// How recall ranks.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum RankMode {
    /// Keyword and meaning together (the default with a model).
    Hybrid,
    /// Meaning only: finds memories that use other words.
    Semantic,
    /// BM25 over words only.
    Keyword,
}

/// Parameters of `recall`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecallParams {
    /// What you want to know, in words. Without a query the newest memories come first.
    query: Option<String>,
    /// Only memories from this point on: 30m, 1h, 3d, 2w, 2026-11-01 or an RFC 3339 timestamp.
    since: Option<String>,
    /// Only memories up to this point (same forms as since).
    until: Option<String>,
    /// Only memories of these types, e.g. ["decision", "bug-fix"].
    #[serde(default, rename = "type")]
    kinds: Vec<String>,
    /// Only memories with all of these tags.
    #[serde(default)]
    tags: Vec<String>,
    /// Only memories whose author contains this (case-insensitive).
    author: Option<String>,
    /// current (this repository, the default), all, or a workspace's name.
    workspace: Option<String>,
    /// At most this many memories (default 10, at most 50).
    limit: Option<usize>,
    /// hybrid (default), semantic or keyword.
    mode: Option<RankMode>,
    /// Return a digest of the recalled memories in at most this many tokens instead of whole memories. 200-500 is a good size. Without it, whole memories up to about 2000 tokens.
    budget: Option<usize>,
}

/// Parameters of `brief`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BriefParams {
    /// At most this many tokens (default 300).
    budget: Option<usize>,
}

/// Parameters of `similar`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SimilarParams {
    /// A memory's id (or a unique prefix). Give either id or text.
    id: Option<String>,
    /// A text to compare with, e.g. a memory you are about to store.
    text: Option<String>,
    /// Cosine similarity from which memories count as similar (default 0.8).
    threshold: Option<f64>,
    /// At most this many memories (default 10).
    limit: Option<usize>,
}

/// Parameters of `forget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForgetParams {
    /// The memory's id (or a unique prefix of it).
    id: String,
}

/// Parameters of `status` (none).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusParams {}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

/// A failed operation as the agent sees it: the message, marked as an error.
fn failure(err: CliError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("error: {:#}", err.error))])
}

impl Server {
    fn new(ctx: Ctx) -> Server {
        Server {
            shared: Arc::new(Mutex::new(Shared { ctx })),
            tool_router: Self::tool_router(),
        }
    }

    /// Runs `op` on the shared state off the async runtime and turns its
    /// outcome into a tool result.
    async fn run<F>(&self, tool: &'static str, op: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&mut Shared) -> Result<String, CliError> + Send + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let outcome = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let mut shared = lock(&shared);
            let outcome = op(&mut shared);
            let status = match &outcome {
                Ok(_) => "ok".to_owned(),
                Err(err) => format!("error: {:#}", err.error),
            };
            eprintln!(
                "goldfish mcp: {tool} {} ms, {status}",
                started.elapsed().as_millis()
            );
            outcome
        })
        .await
        .map_err(|err| ErrorData::internal_error(format!("{tool} panicked: {err}"), None))?;
        Ok(match outcome {
            Ok(answer) => text(answer),
            Err(err) => failure(err),
        })
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panicking call leaves nothing half-done in `Shared` worth refusing.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[tool_router]
impl Server {
    /// Store a memory in the repository's team log (committed with the code, shared through git).
    #[tool(
        name = "store",
        description = "Store a memory for the team: a decision and its reason, a non-obvious bug fix, an insight about the code, a checkpoint or plan. One fact per memory, a few sentences, identifiers exact. Returns the id. A memory nearly identical to one the team has is refused, naming it; pass force: true only if it really says something new."
    )]
    async fn store(
        &self,
        Parameters(params): Parameters<StoreParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run("store", move |shared| {
            let workspace = super::commands::workspace()?;
            let stored = ops::store(
                &mut shared.ctx,
                &workspace,
                StoreInput {
                    content: params.content.into_bytes(),
                    kind: params
                        .kind
                        .unwrap_or_else(|| crate::memory::kinds::DEFAULT.to_owned()),
                    tags: params.tags,
                    files: params.files,
                    source: Some("agent".to_owned()),
                    allow_secret: false,
                    refuse_similar: !params.force,
                },
            )?;
            let mut answer = format!("stored {} in {}", stored.entry.id(), stored.file.display());
            if let Some(journaled) = stored.journaled {
                answer.push_str(&format!("\nnote: {journaled}"));
            }
            for similar in &stored.similar {
                answer.push_str(&format!(
                    "\nwarning: {}",
                    super::commands::near_duplicate(similar, 120)
                ));
            }
            if let Some(reason) = stored.not_indexed {
                answer.push_str(&format!("\nnote: not indexed yet: {reason}"));
            }
            Ok(answer)
        })
        .await
    }

    #[tool(
        name = "recall",
        description = "Search the team's memories of this repository (decisions, bug fixes, insights, checkpoints) by meaning and keywords, with filters. Use it before designing, debugging or deciding. Pass budget (e.g. 300) for a compact digest whose sentences cite memory ids; without a query, the newest memories (e.g. since: \"1d\" for a standup)."
    )]
    async fn recall(
        &self,
        Parameters(params): Parameters<RecallParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run("recall", move |shared| {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            let limit = params.limit.unwrap_or(10);
            if limit > MAX_LIMIT {
                return Err(CliError::usage(anyhow::anyhow!(
                    "limit: at most {MAX_LIMIT} memories per recall (ask with a budget for a digest)"
                )));
            }
            let input = RecallInput {
                query: params.query,
                since: params.since,
                until: params.until,
                kinds: params.kinds,
                tags: params.tags,
                author: params.author,
                mode: params.mode.map(|mode| match mode {
                    RankMode::Hybrid => Mode::Hybrid,
                    RankMode::Semantic => Mode::Semantic,
                    RankMode::Keyword => Mode::Keyword,
                }),
                min_score: None,
                workspace: params.workspace.unwrap_or_else(|| "current".to_owned()),
                limit,
                budget: params.budget,
                distill: DistillMode::Extractive,
                no_cache: false,
            };
            match ops::recall(&mut shared.ctx, &cwd, input)? {
                Recalled::Nothing => Ok("no memories match".to_owned()),
                Recalled::Digest(digested) => Ok(digest_answer(&digested)),
                Recalled::Memories {
                    hits,
                    all_workspaces,
                } => capped(&mut shared.ctx, &hits, all_workspaces, DEFAULT_CAP),
            }
        })
        .await
    }

    #[tool(
        name = "brief",
        description = "A short briefing for starting work in this repository: the latest checkpoint or plan, recent decisions, recent bug fixes on the current branch, within a token budget (default 300). Call it once at the start of a session."
    )]
    async fn brief(
        &self,
        Parameters(params): Parameters<BriefParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run("brief", move |shared| {
            let workspace = super::commands::workspace()?;
            Ok(
                match ops::brief(&mut shared.ctx, &workspace, params.budget.unwrap_or(300))? {
                    Some(digested) => digest_answer(&digested),
                    None => {
                        "nothing to brief on yet: no checkpoints, plans, decisions or recent fixes"
                            .to_owned()
                    }
                },
            )
        })
        .await
    }

    #[tool(
        name = "similar",
        description = "Memories that say nearly the same as a stored memory (id) or a text: use it to avoid storing a duplicate or to find related decisions. Needs the embedding model."
    )]
    async fn similar(
        &self,
        Parameters(params): Parameters<SimilarParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run("similar", move |shared| {
            let target = match (params.id, params.text) {
                (Some(id), None) => Target::Id(id),
                (None, Some(text)) => Target::Text(text),
                _ => {
                    return Err(CliError::usage(anyhow::anyhow!(
                        "give either id or text (exactly one)"
                    )));
                }
            };
            let threshold = params.threshold.unwrap_or(ops::SIMILAR);
            let workspace = super::commands::workspace()?;
            let hits = ops::similar(
                &mut shared.ctx,
                &workspace,
                target,
                threshold,
                params.limit.unwrap_or(10).min(MAX_LIMIT),
                false,
            )?;
            if hits.is_empty() {
                return Ok(format!("nothing at similarity {threshold} or more"));
            }
            Ok(hits
                .iter()
                .map(|m| super::commands::similar_line(m, 160))
                .collect::<Vec<_>>()
                .join("\n"))
        })
        .await
    }

    #[tool(
        name = "forget",
        description = "Forget a memory that is wrong or superseded: appends a tombstone to the log (history is kept in git)."
    )]
    async fn forget(
        &self,
        Parameters(params): Parameters<ForgetParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run("forget", move |shared| {
            let workspace = super::commands::workspace()?;
            Ok(
                match ops::forget(&mut shared.ctx, &workspace, &params.id)? {
                    Forgot::Done { target, .. } => format!("forgot {target}"),
                    Forgot::Already { id, at } => {
                        format!("{id} is already forgotten (since {at})")
                    }
                },
            )
        })
        .await
    }

    #[tool(
        name = "status",
        description = "The state of goldfish in this repository: memories in git and in the index, pending embeddings, the model, and setup problems with their fixes."
    )]
    async fn status(
        &self,
        Parameters(_): Parameters<StatusParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run("status", move |shared| {
            let workspace = super::commands::workspace()?;
            let index = super::commands::open_index(&shared.ctx.home)?;
            let model = shared.ctx.model.as_ref().map(|model| model.id());
            let status = super::status::collect(&workspace, &index, model)?;
            let mut out = Vec::new();
            super::status::print(&status, &mut out)?;
            Ok(String::from_utf8_lossy(&out).into_owned())
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("goldfish", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// A digest and the line that says what it cost.
fn digest_answer(digested: &ops::Digested) -> String {
    let report = &digested.report;
    format!(
        "{}({} tokens, distilled from {} of {} tokens)",
        report.text,
        report.tokens,
        output::memories(digested.hits.len() as u64),
        report.tokens_of_sources
    )
}

/// Whole memories, as many as fit in `cap` tokens.
fn capped(
    ctx: &mut Ctx,
    hits: &[IndexedMemory],
    all_workspaces: bool,
    cap: usize,
) -> Result<String, CliError> {
    let (mut counter, _) = ops::token_counter(ctx)?;
    let mut answer = String::new();
    let mut used = 0;
    for (shown, memory) in hits.iter().enumerate() {
        let mut one = Vec::new();
        output::memories_text(std::slice::from_ref(memory), all_workspaces, &mut one)?;
        let one = String::from_utf8_lossy(&one).into_owned();
        let tokens = counter.count(&one);
        if shown > 0 && used + tokens > cap {
            answer.push_str(&format!(
                "\n({} more not shown: over {cap} tokens; ask with a budget for a digest, or narrow the query)\n",
                hits.len() - shown
            ));
            break;
        }
        if shown > 0 {
            answer.push('\n');
        }
        answer.push_str(&one);
        used += tokens;
    }
    Ok(answer)
}

/// Serves MCP on stdin/stdout until the client closes the connection.
pub(super) fn serve() -> Result<u8, CliError> {
    let ctx = Ctx::open(Front::Mcp)?;
    let root = super::commands::workspace()
        .map(|workspace| workspace.root().display().to_string())
        .unwrap_or_else(|err| format!("no repository here ({:#})", err.error));
    eprintln!("goldfish mcp: serving {root}");
    let server = Server::new(ctx);
    // Warm the model while the client initializes: the first recall should
    // not pay for it, and the handshake must not wait for it.
    let warm = Arc::clone(&server.shared);
    std::thread::spawn(move || {
        let started = Instant::now();
        let mut shared = lock(&warm);
        if let Some(model) = shared.ctx.model.as_mut() {
            let loaded = model
                .embedder()
                .map(|_| ())
                .and_then(|()| model.tokenizer());
            match loaded {
                Ok(_) => eprintln!(
                    "goldfish mcp: model {} loaded in {} ms",
                    model.id(),
                    started.elapsed().as_millis()
                ),
                Err(err) => eprintln!("goldfish mcp: cannot load the model: {:#}", err.error),
            }
        }
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let (transport, filter) = filtered_stdio();
        let service = server
            .serve(transport)
            .await
            .context("MCP initialization failed")?;
        service.waiting().await.context("MCP server failed")?;
        filter.finish().await;
        Ok::<(), anyhow::Error>(())
    })?;
    eprintln!("goldfish mcp: client closed the connection");
    Ok(EXIT_OK)
}

/// The tasks of [`filtered_stdio`], to wind down once the server stops.
struct Filter {
    reader: tokio::task::JoinHandle<()>,
    writer: tokio::task::JoinHandle<()>,
}

impl Filter {
    /// Stops reading stdin and waits until every answer is on stdout.
    async fn finish(self) {
        self.reader.abort();
        let _ = self.reader.await;
        let _ = self.writer.await;
    }
}

/// The server's stdio transport behind the line filter: stdin lines go
/// through [`reject`]; rmcp's output and the filter's answers reach stdout a
/// whole line at a time, never interleaved.
fn filtered_stdio() -> ((tokio::io::DuplexStream, tokio::io::DuplexStream), Filter) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const PIPE: usize = 1 << 16;
    let (server_in, mut to_server) = tokio::io::duplex(PIPE);
    let (server_out, from_server) = tokio::io::duplex(PIPE);
    let (lines, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();

    let answers = lines.clone();
    let reader = tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match stdin.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let rejected = reject(&line);
            if !rejected.is_empty() {
                for answer in rejected {
                    let _ = answers.send(answer.to_string().into_bytes());
                }
                continue;
            }
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            if to_server.write_all(&line).await.is_err() {
                break;
            }
        }
        // Dropping `to_server` is the server's end of input.
    });
    let relay = tokio::spawn(async move {
        let mut from_server = BufReader::new(from_server);
        let mut line = Vec::new();
        while matches!(from_server.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            if lines.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut line) = outgoing.recv().await {
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
        let _ = relay.await;
    });
    ((server_in, server_out), Filter { reader, writer })
}

/// The JSON-RPC error answers to a line of stdin that is not a valid
/// message (one per request of a batch), or none for a line to pass on
/// (blank lines included: the transport skips them).
fn reject(line: &[u8]) -> Vec<serde_json::Value> {
    use serde_json::{Value, json};
    let answer = |id: Value, code: i64, message: String| {
        vec![json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })]
    };
    let text = line
        .strip_prefix(b"\xef\xbb\xbf".as_slice())
        .unwrap_or(line);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Vec::new();
    }
    let value: Value = match serde_json::from_slice(text) {
        Ok(value) => value,
        Err(err) => return answer(Value::Null, -32700, format!("Parse error: {err}")),
    };
    let invalid = |id: Value, why: &str| answer(id, -32600, format!("Invalid Request: {why}"));
    let object = match value {
        Value::Object(object) => object,
        Value::Array(items) => {
            // Batches are not part of MCP (2025-06-18): answer every request
            // in it, by id, so no client waits for one.
            let ids: Vec<Value> = items
                .iter()
                .filter_map(|item| item.get("id").filter(|id| id.is_string() || id.is_number()))
                .cloned()
                .collect();
            if ids.is_empty() {
                return invalid(Value::Null, "batches are not supported");
            }
            return ids
                .into_iter()
                .flat_map(|id| invalid(id, "batches are not supported"))
                .collect();
        }
        _ => return invalid(Value::Null, "not a JSON object"),
    };
    let id = object
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned();
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id.unwrap_or(Value::Null), "`jsonrpc` must be \"2.0\"");
    }
    let is_response =
        id.is_some() && (object.contains_key("result") || object.contains_key("error"));
    if !is_response && !object.get("method").is_some_and(Value::is_string) {
        return invalid(id.unwrap_or(Value::Null), "missing `method`");
    }
    // Well formed, but not a message rmcp reads (params of the wrong shape):
    // rmcp's own answer would carry no id. A notification rmcp does not know
    // is passed on: it ignores those, and notifications get no answer.
    match (
        serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(Value::Object(object)),
        id,
    ) {
        (Err(err), Some(id)) => invalid(id, &err.to_string()),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::reject;

    #[test]
    fn invalid_lines_get_json_rpc_errors_with_their_id() {
        use serde_json::{Value, json};
        let answers = |line: &str| -> Vec<(Value, Value)> {
            reject(line.as_bytes())
                .into_iter()
                .map(|a| (a["error"]["code"].clone(), a["id"].clone()))
                .collect()
        };
        assert_eq!(answers("not json"), [(json!(-32700), Value::Null)]);
        assert_eq!(answers(r#"{"jsonrpc":"2.0","id":1,"method":"#)[0].0, -32700);
        assert_eq!(
            answers(r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#),
            [(json!(-32600), json!(8))]
        );
        assert_eq!(
            answers(r#"{"jsonrpc":"2.0","id":"a"}"#),
            [(json!(-32600), json!("a"))]
        );
        assert_eq!(
            answers(
                r#"[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]"#
            ),
            [(json!(-32600), json!(6)), (json!(-32600), json!(7))]
        );
        assert_eq!(answers("[]"), [(json!(-32600), Value::Null)]);
        assert_eq!(answers("42"), [(json!(-32600), Value::Null)]);
        assert_eq!(
            answers(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}"#)[0].1,
            3
        );
        assert!(answers(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#).is_empty());
        assert!(answers(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_empty());
        assert!(answers(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#).is_empty());
        assert!(answers(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#).is_empty());
        assert!(answers("  \r\n").is_empty());
    }
}
