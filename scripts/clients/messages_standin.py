# A stand-in for the Anthropic Messages API, on 127.0.0.1: every request
# (streamed or not) gets one short text answer. Logs every request, so a
# script can check what reached the model. Args: log path, port file.
import http.server, json, sys, threading
log_path, port_path = sys.argv[1:3]
lock = threading.Lock()
ANSWER = "Noted."

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
        self.reply(200, "application/json", b'{"data": [], "has_more": false}')
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.loads(raw or b"{}")
        with lock, open(log_path, "a") as f:
            f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if "count_tokens" in self.path:
            return self.reply(200, "application/json", b'{"input_tokens": 100}')
        model = body.get("model", "claude")
        usage = {"input_tokens": 100, "output_tokens": 2}
        message = {"id": "msg_standin", "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            message.update(content=[{"type": "text", "text": ANSWER}], stop_reason="end_turn")
            return self.reply(200, "application/json", json.dumps(message).encode())
        events = [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ANSWER}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 2}},
            {"type": "message_stop"},
        ]
        out = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)
        self.reply(200, "text/event-stream", out.encode())

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_path, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
