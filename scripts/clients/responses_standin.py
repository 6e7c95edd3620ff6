# A stand-in for the OpenAI Responses API, on 127.0.0.1: canned answers by
# the request's prompt, one per step of the turn (the tool outputs since the
# prompt), a summary for a compaction request. Logs every request.
import http.server, json, sys, threading
answers_path, log_path, port_path = sys.argv[1:4]
lock = threading.Lock()

def prompt_and_step(body):
    items = body.get("input") or []
    prompt, step = None, 0
    for item in items:
        if item.get("type") == "message" and item.get("role") == "user":
            texts = [c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict)]
            text = "\n".join(texts).strip()
            if text and not text.startswith("<"):
                prompt, step = text, 0
        elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
            step += 1
    return prompt, step

def message(text):
    return {"type": "message", "role": "assistant", "id": "msg", "content": [{"type": "output_text", "text": text}]}

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def reply(self, status, kind, body):
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self.reply(200, "application/json", b'{"object": "list", "data": []}')
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.loads(raw or b"{}")
        with open(answers_path) as f:
            answers = json.load(f)
        text = json.dumps(body)
        usage = 100
        if "CONTEXT CHECKPOINT COMPACTION" in text:
            item = message(answers.get("compaction", "Summary: nothing."))
        else:
            prompt, step = prompt_and_step(body)
            steps = answers.get(prompt or "", [])
            item = steps[step] if step < len(steps) else message("Done.")
            usage = item.pop("usage", 100) if isinstance(item, dict) else 100
        with lock, open(log_path, "a") as f:
            f.write(json.dumps({"path": self.path, "body": body, "answer": item}) + "\n")
        events = [
            {"type": "response.created", "response": {"id": "resp"}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": "resp", "usage": {"input_tokens": usage, "input_tokens_details": None, "output_tokens": 10, "output_tokens_details": None, "total_tokens": usage + 10}}},
        ]
        out = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)
        self.reply(200, "text/event-stream", out.encode())

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_path, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
