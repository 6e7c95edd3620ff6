//! A thin line filter between stdin and rmcp: rmcp ignores a line that is
//! not JSON and answers a malformed message without its id, so a client
//! waiting for that id would hang. The filter answers such lines itself
//! (JSON-RPC -32700 parse error, -32600 invalid request, -32602 invalid
//! params, with the id when the line has one) and passes every valid
//! message on.

/// The tasks of [`filtered_stdio`], to wind down once the server stops.
pub(super) struct Filter {
    reader: tokio::task::JoinHandle<()>,
    writer: tokio::task::JoinHandle<()>,
}

impl Filter {
    /// Stops reading stdin and waits until every answer is on stdout.
    pub(super) async fn finish(self) {
        self.reader.abort();
        let _ = self.reader.await;
        let _ = self.writer.await;
    }
}

/// The server's stdio transport behind the line filter: stdin lines go
/// through [`reject`]; rmcp's output and the filter's answers reach stdout a
/// whole line at a time, never interleaved.
pub(super) fn filtered_stdio() -> ((tokio::io::DuplexStream, tokio::io::DuplexStream), Filter) {
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
            let whole = match read_bounded(&mut stdin, &mut line, MAX_LINE).await {
                Ok(None) | Err(_) => break,
                Ok(Some(whole)) => whole,
            };
            if !whole {
                // Never held whole, never passed on (rmcp would drop it
                // and the client would wait forever): answered by id.
                let _ = answers.send(too_long(&line).to_string().into_bytes());
                continue;
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

/// The longest line of stdin the server takes: a memory is at most 8 KiB
/// and a request holds one, so this is far above any real request and
/// far below what would strain memory.
const MAX_LINE: usize = 4 << 20;

/// Reads one line (with its `\n`) into `line`, keeping at most `max`
/// bytes: `Some(true)` for a whole line, `Some(false)` for one cut at
/// `max` (the rest is read and dropped, never held), `None` at the end of
/// input.
async fn read_bounded<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<bool>> {
    use tokio::io::AsyncBufReadExt;
    let mut whole = true;
    let mut read_any = false;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(read_any.then_some(whole));
        }
        read_any = true;
        let (chunk, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..=at], true),
            None => (buffer, false),
        };
        let room = max.saturating_sub(line.len());
        if chunk.len() > room {
            whole = false;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len();
        reader.consume(used);
        if done {
            return Ok(Some(whole));
        }
    }
}

/// The answer to a line over [`MAX_LINE`]: its id when the part read
/// names one (`"id"` before the params, as clients write it), else null.
fn too_long(start: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(&start[..start.len().min(4096)]);
    let id = regex::Regex::new(r#""id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")"#)
        .ok()
        .and_then(|pattern| {
            let found = pattern.captures(&text)?.get(1)?.as_str().to_owned();
            serde_json::from_str::<serde_json::Value>(&found).ok()
        })
        .unwrap_or(serde_json::Value::Null);
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32600,
            "message": format!("Invalid Request: a message of more than {} MiB", MAX_LINE >> 20),
        },
    })
}

/// The JSON-RPC error answers to a line of stdin that is not a valid
/// message (one per request of a batch), or none for a line to pass on
/// (blank lines included: the transport skips them).
fn reject(line: &[u8]) -> Vec<serde_json::Value> {
    use serde_json::Value;
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
    let object = match value {
        Value::Object(object) => object,
        Value::Array(items) => return reject_batch(&items),
        _ => return invalid(Value::Null, "not a JSON object"),
    };
    let id = object
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned();
    if object.contains_key("id") && id.is_none() {
        // MCP: a request's id is a string or an integer, never null; rmcp
        // would answer one without any id.
        return invalid(Value::Null, "`id` must be a string or a number");
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id.unwrap_or(Value::Null), "`jsonrpc` must be \"2.0\"");
    }
    let is_response =
        id.is_some() && (object.contains_key("result") || object.contains_key("error"));
    if !is_response && !object.get("method").is_some_and(Value::is_string) {
        return invalid(id.unwrap_or(Value::Null), "missing `method`");
    }
    let method = object
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let params = object.get("params").cloned();
    // Well formed, but not a message rmcp reads (params of the wrong shape):
    // rmcp's own answer would carry no id. A notification rmcp does not know
    // is passed on: it ignores those, and notifications get no answer.
    match (
        serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(Value::Object(object)),
        id,
    ) {
        (Err(err), Some(id)) => invalid(id, &err.to_string()),
        // rmcp reads a method it knows whose params do not fit it (a
        // `tools/call` whose `arguments` is a string) as a custom method,
        // and answers -32601 (method not found).
        (Ok(rmcp::model::JsonRpcMessage::Request(request)), Some(id))
            if matches!(
                request.request,
                rmcp::model::ClientRequest::CustomRequest(_)
            ) =>
        {
            match method.and_then(|method| invalid_params(&method, params)) {
                Some(why) => answer(id, -32602, format!("Invalid params: {why}")),
                None => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// A JSON-RPC error answer to `id`.
fn answer(id: serde_json::Value, code: i64, message: String) -> Vec<serde_json::Value> {
    vec![
        serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }),
    ]
}

/// An Invalid Request answer to `id`, and why.
fn invalid(id: serde_json::Value, why: &str) -> Vec<serde_json::Value> {
    answer(id, -32600, format!("Invalid Request: {why}"))
}

/// Batches are not part of MCP (2025-06-18): every request in one is
/// answered, by id, so no client waits for one.
fn reject_batch(items: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let ids: Vec<serde_json::Value> = items
        .iter()
        .filter_map(|item| item.get("id").filter(|id| id.is_string() || id.is_number()))
        .cloned()
        .collect();
    if ids.is_empty() {
        return invalid(serde_json::Value::Null, "batches are not supported");
    }
    ids.into_iter()
        .flat_map(|id| invalid(id, "batches are not supported"))
        .collect()
}

/// Why `params` do not fit `method` when it is a request rmcp knows (what
/// its reading as that request says), or `None` for a method it does not.
fn invalid_params(method: &str, params: Option<serde_json::Value>) -> Option<String> {
    use rmcp::model::*;
    let mut request = serde_json::Map::new();
    request.insert("method".to_owned(), method.into());
    if let Some(params) = params {
        request.insert("params".to_owned(), params);
    }
    let request = serde_json::Value::Object(request);
    macro_rules! known {
        ($($method:ty => $request:ty),* $(,)?) => {
            $(
                if method == <$method as ConstString>::VALUE {
                    return Some(match serde_json::from_value::<$request>(request) {
                        Err(err) => err.to_string(),
                        Ok(_) => format!("they do not fit {method}"),
                    });
                }
            )*
        };
    }
    known!(
        InitializeResultMethod => InitializeRequest,
        PingRequestMethod => PingRequest,
        ListToolsRequestMethod => ListToolsRequest,
        CallToolRequestMethod => CallToolRequest,
        ListPromptsRequestMethod => ListPromptsRequest,
        GetPromptRequestMethod => GetPromptRequest,
        ListResourcesRequestMethod => ListResourcesRequest,
        ListResourceTemplatesRequestMethod => ListResourceTemplatesRequest,
        ReadResourceRequestMethod => ReadResourceRequest,
        CompleteRequestMethod => CompleteRequest,
    );
    None
}

#[cfg(test)]
mod tests {
    use super::{read_bounded, reject, too_long};

    #[test]
    fn a_line_over_the_bound_is_answered_by_its_id_and_never_held_whole() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"x\":\"{}\"}}}}\n{{\"next\":1}}\n",
            "a".repeat(100)
        );
        let mut reader = tokio::io::BufReader::with_capacity(16, big.as_bytes());
        let mut line = Vec::new();
        let whole = runtime
            .block_on(read_bounded(&mut reader, &mut line, 64))
            .unwrap();
        assert_eq!(whole, Some(false));
        assert_eq!(line.len(), 64, "held no more than the bound");
        let answer = too_long(&line);
        assert_eq!(answer["id"], 7, "{answer}");
        assert_eq!(answer["error"]["code"], -32600);
        line.clear();
        let next = runtime
            .block_on(read_bounded(&mut reader, &mut line, 64))
            .unwrap();
        assert_eq!(
            (next, line.as_slice()),
            (Some(true), b"{\"next\":1}\n".as_slice())
        );
        line.clear();
        let end = runtime
            .block_on(read_bounded(&mut reader, &mut line, 64))
            .unwrap();
        assert_eq!(end, None);
        assert_eq!(
            too_long(b"{\"jsonrpc\":\"2.0\",\"params\"")["id"],
            serde_json::Value::Null
        );
        assert_eq!(too_long(br#"{"id": "a\"b", "x"#)["id"], "a\"b");
    }

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
            answers(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            [(json!(-32600), Value::Null)]
        );
        assert_eq!(
            answers(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}"#)[0].1,
            3
        );
        assert!(answers(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#).is_empty());
        assert_eq!(
            answers(
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recall","arguments":"str"}}"#
            ),
            [(json!(-32602), json!(5))]
        );
        assert!(
            answers(
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recall","arguments":{}}}"#
            )
            .is_empty()
        );
        assert!(answers(r#"{"jsonrpc":"2.0","id":6,"method":"x/y","params":{}}"#).is_empty());
        assert!(answers(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_empty());
        assert!(answers(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#).is_empty());
        assert!(answers(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#).is_empty());
        assert!(answers("  \r\n").is_empty());
    }
}
