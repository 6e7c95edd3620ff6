#!/usr/bin/env bash
# The real Codex CLI against goldfish's hooks, with no network but npm: the
# pinned client is installed from npm into a temporary prefix and run
# headless (`codex exec`) against a stand-in for the OpenAI Responses API
# on 127.0.0.1 (scripts/clients/responses_standin.py: canned answers, every
# request logged), configured as a model provider in a temporary
# CODEX_HOME, in a temporary repository set up by `goldfish init --agent
# codex --capture`. It checks what the client really does:
#   - untrusted hooks do not run (Codex CLI asks the user to trust each);
#     trusted as its /hooks view trusts them (`[hooks.state."<key>"]
#     trusted_hash` in the user's config, the keys and hashes from its app
#     server's `hooks/list`), they run headless too;
#   - the briefing (SessionStart) and what the prompt hook answers
#     (UserPromptSubmit) reach the model's request, its memory in it when
#     the lookup kept to its budget;
#   - a failing check, an `apply_patch` edit, then the check passing is
#     captured as a fix (the shell's exit code read from the rollout);
#   - an automatic compaction stores a checkpoint quoting the request, and
#     the briefing after it (SessionStart, `source: "compact"`) starts from it.
#   - what the hooks say on stderr is not shown (Codex CLI reads a hook's
#     stderr only when it exits 2).
# Needs node and npm (the registry), python3, git, and a goldfish binary
# (GOLDFISH=path, else target/release/goldfish). CODEX_CLI=path/to/codex
# skips the install; KEEP_WORK=1 keeps the temporary folder. The prompt hook needs an embedding model: the one in
# GOLDFISH_MODEL_HOME (default target/model-home, as scripts/test.sh
# installs it) when there is one, else `goldfish model install`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=${CODEX_CLI_VERSION:-0.171.0}
goldfish=$(realpath "${GOLDFISH:-$root/target/release/goldfish}")
work=$(mktemp -d "${TMPDIR:-/tmp}/goldfish-codex.XXXXXX")
server_pid=
cleanup() {
    if [[ -n $server_pid ]]; then kill "$server_pid" 2> /dev/null || true; fi
    if [[ -n ${KEEP_WORK:-} ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

if [[ -n ${CODEX_CLI:-} ]]; then
    codex=$CODEX_CLI
else
    npm install --silent --no-audit --no-fund --prefix "$work/npm" "@openai/codex@$version" > "$work/npm.log" 2>&1 \
        || { cat "$work/npm.log" >&2; exit 1; }
    codex=$work/npm/node_modules/.bin/codex
fi
echo "$("$codex" --version 2>/dev/null), $("$goldfish" --version)"

# A hermetic world: its own HOME, CODEX_HOME (config, sessions), goldfish
# home, git config.
mkdir -p "$work/bin" "$work/home/.codex" "$work/home/.goldfish" "$work/hooks"
# goldfish as the hooks find it on PATH: the binary, with what each agent
# hook printed also kept in $work/hooks/ (TIME-EVENT.out and .err).
cat > "$work/bin/goldfish" <<EOF
#!/usr/bin/env bash
[[ \${1:-} == agent-hook ]] || exec "$goldfish" "\$@"
said=$work/hooks/\$(date +%s%N)-\$2
"$goldfish" "\$@" > "\$said.out" 2> "\$said.err"
status=\$?
cat "\$said.out"
cat "\$said.err" >&2
exit \$status
EOF
chmod +x "$work/bin/goldfish"
export PATH="$work/bin:$PATH" HOME="$work/home" CODEX_HOME="$work/home/.codex"
export GOLDFISH_HOME="$work/home/.goldfish" GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 NO_COLOR=1
models=${GOLDFISH_MODEL_HOME:-$root/target/model-home}
if [[ -d $models/models && -d $models/runtime ]]; then
    ln -s "$(realpath "$models/models")" "$GOLDFISH_HOME/models"
    ln -s "$(realpath "$models/runtime")" "$GOLDFISH_HOME/runtime"
else
    goldfish model install > "$work/model.log" 2>&1 || { cat "$work/model.log" >&2; exit 1; }
fi

repo=$work/repo
mkdir -p "$repo/src"
cd "$repo"
git init -q -b main
git config user.name "Alice" && git config user.email "alice@example.com"
cat > package.json <<'EOF'
{"name": "cart", "private": true, "scripts": {"test": "node test.js"}}
EOF
cat > test.js <<'EOF'
const { total } = require("./src/cart.js");
if (total(2, 3) !== 5) {
  console.log("FAIL test.js\n  cart total: expected 5, got " + total(2, 3) + "\n    at total (src/cart.js:1:1)");
  process.exit(1);
}
console.log("PASS test.js: 1 passed");
EOF
echo 'exports.total = (a, b) => a + b + 1;' > src/cart.js
goldfish init --agent codex --capture > "$work/init.log"
goldfish store -t decision "Cart totals are computed in integer cents, never floats, so rounding cannot drift" > /dev/null
goldfish store -t insight "The cart total test in test.js expects total(2, 3) to be exactly 5: src/cart.js must return the plain sum of the line prices" > /dev/null
git add -A && git commit -q -m "cart, goldfish"

# The stand-in model: answers by prompt, one per step of the turn.
patch=$'*** Begin Patch\n*** Update File: src/cart.js\n@@\n-exports.total = (a, b) => a + b + 1;\n+exports.total = (a, b) => a + b;\n*** End Patch\n'
python3 - "$patch" > "$work/answers.json" <<'EOF'
import json, sys
call = lambda n, cmd, usage=100: {"type": "function_call", "call_id": "call_%d" % n, "name": "exec_command", "arguments": json.dumps({"cmd": cmd}), "usage": usage}
say = lambda text: {"type": "message", "role": "assistant", "id": "msg", "content": [{"type": "output_text", "text": text}]}
print(json.dumps({
    "Fix the failing cart total test": [
        call(1, "npm test"),
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": sys.argv[1]},
        call(3, "npm test"),
        say("The total added 1 on top of the sum in src/cart.js; fixed, and npm test passes."),
    ],
    # Usage over the compaction limit: Codex compacts before its next request.
    "Now check the cart totals stay in integer cents": [
        call(4, "grep -n total src/cart.js", usage=50000),
        say("The total is the plain sum of integer cents; nothing else to change."),
    ],
    "compaction": "Summary: the cart total fix is in; checking integer cents next.",
}))
EOF
python3 "$root/scripts/clients/responses_standin.py" "$work/answers.json" "$work/requests.jsonl" "$work/port" 2> "$work/server.log" &
server_pid=$!
# Up to 30 s for python3 to start and bind, on a loaded machine too.
for _ in $(seq 300); do [[ -s $work/port ]] && break; sleep 0.1; done
port=$(cat "$work/port")
cat > "$CODEX_HOME/config.toml" <<EOF
model = "gpt-5.5"
model_provider = "standin"
model_auto_compact_token_limit = 20000
check_for_update_on_startup = false

[model_providers.standin]
name = "stand-in Responses API"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects."$repo"]
trust_level = "trusted"
EOF

trust_hooks() { # trusts the repository's hooks as Codex CLI's /hooks does
    # The hooks' keys and hashes from Codex CLI's own app server
    # (`hooks/list`), kept as `[hooks.state."<key>"] trusted_hash` in the
    # user's config, where its trust dialog keeps them.
    python3 - "$codex" "$repo" >> "$CODEX_HOME/config.toml" <<'EOF'
import json, subprocess, sys
codex, repo = sys.argv[1:3]
server = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
for message in [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "goldfish-codex-sh", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [repo]}},
]:
    server.stdin.write(json.dumps(message) + "\n")
server.stdin.flush()
for line in server.stdout:
    answer = json.loads(line)
    if answer.get("id") == 2:
        break
server.kill()
for cwd in answer["result"]["data"]:
    for hook in cwd["hooks"]:
        if "goldfish agent-hook" in hook["command"] and hook["trustStatus"] != "trusted":
            print("\n[hooks.state.%s]\ntrusted_hash = %s" % (json.dumps(hook["key"]), json.dumps(hook["currentHash"])))
EOF
}
run() { # run PROMPT [FLAGS...]: one headless session
    "$codex" exec "${@:2}" "$1" < /dev/null >> "$work/codex.out" 2>> "$work/codex.err" \
        || { tail -n 30 "$work/codex.err" >&2; exit 1; }
}
requests() { # the requests the model got since line $1, as text
    tail -n "+$1" "$work/requests.jsonl"
}
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
check "init wrote Codex CLI's hooks" grep -q '"goldfish agent-hook post-tool-use"' .codex/hooks.json
check "init said the hooks must be trusted" grep -q "only once you trust them" "$work/init.log"

# 1. Untrusted: the hooks are skipped. Then trusted, as a user would.
run "Say hello"
check "untrusted hooks do not run (no briefing in the request)" \
    bash -c "! grep -q 'integer cents' '$work/requests.jsonl'"
trust_hooks
check "the hooks' trust is kept in the user's config ($(grep -c trusted_hash "$CODEX_HOME/config.toml") hooks)" \
    test "$(grep -c trusted_hash "$CODEX_HOME/config.toml")" -eq 6

# 2. The task, hooks run for this invocation: fail, patch, pass.
from=$(($(wc -l < "$work/requests.jsonl") + 1))
run "Fix the failing cart total test"
check "the briefing reached the model's request" \
    grep -q 'Cart totals are computed in integer cents' <(requests "$from" | head -n 1)
# The prompt hook answers within its budget (1.5 s) or adds nothing, and
# leaves the lookup to the background: on a loaded machine it may miss the
# budget, as it should, without the client being at fault. What is checked
# is that Codex CLI ran it and put what it answered into the request; the
# memory in that answer when the lookup was in time.
said=$(find "$work/hooks" -name '*-user-prompt.out' | sort | head -n 1)
said=${said%.out}
check "Codex CLI ran the prompt hook (UserPromptSubmit)" test -n "$said"
check "the prompt hook's answer reached the model's request" python3 -c '
import json, sys
said = sys.stdin.read()
answer = json.loads(said)["hookSpecificOutput"]["additionalContext"] if said.strip() else ""
def texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            yield from texts(item)
request = json.loads(open(sys.argv[1]).readline())["body"]
sys.exit(not any(answer.strip() in text for text in texts(request)))' <(requests "$from" | head -n 1) < "$said.out"
if grep -q 'the lookup took longer than' "$said.err"; then
    echo "skip the prompt hook's memory: its lookup missed the budget on this machine (\"$(head -n 1 "$said.err")\")"
else
    check "the prompt hook's memory reached the model's request" \
        grep -q 'insight  Alice  The cart total test in test.js expects' <(requests "$from" | head -n 1)
fi
check "the patch changed src/cart.js" grep -q 'a + b;' src/cart.js
goldfish capture work --wait > /dev/null
memories() { cat .goldfish/memories/*.jsonl; }
check "the failing then passing npm test after apply_patch was captured as a fix" \
    grep -q 'Check: `npm test` failed, then passed.' <(memories)
check "the fix names src/cart.js" \
    python3 -c 'import json,sys; sys.exit(not any(m.get("type") == "bug-fix" and m.get("files") == ["src/cart.js"] for m in map(json.loads, sys.stdin)))' < <(memories)

# 3. A long turn: Codex compacts; PreCompact stores the checkpoint, and
# SessionStart (source "compact") briefs from it.
from=$(($(wc -l < "$work/requests.jsonl") + 1))
run "Now check the cart totals stay in integer cents"
check "Codex compacted (its summary request reached the model)" \
    grep -q 'CONTEXT CHECKPOINT COMPACTION' <(requests "$from")
checkpoint=$(memories | python3 -c '
import json, sys
last = ""
for m in map(json.loads, sys.stdin):
    if m.get("type") == "checkpoint" and "pre-compact" in m.get("tags", []):
        last = m["content"]
print(last.replace("\n", " | "))')
check "a pre-compaction checkpoint quotes the request (\"${checkpoint:0:120}…\")" \
    grep -q 'Last request: Now check the cart totals stay in integer cents' <<< "$checkpoint"
check "the briefing after the compaction starts from the checkpoint" \
    grep -q 'Checkpoint before the agent' <(requests "$from" | tail -n 1)
# 4. What a hook says on stderr (here its trace: GOLDFISH_TRACE=1) Codex
# CLI keeps from the user, unlike Gemini CLI (gemini.sh). In codex-rs (the
# openai/codex repository) it pipes a hook's stderr
# (hooks/src/engine/command_runner.rs, `run_command`:
# `.stderr(Stdio::piped())`) and reads it only from a hook that exits 2,
# as the reason it blocks or the model's feedback (the `Some(2)` arm of
# `parse_completed` in hooks/src/events/user_prompt_submit.rs and
# post_tool_use.rs); for exit 0 the `Some(0)` arms read stdout alone
# (those and session_start.rs), and what a client shows of a run, its
# `HookRunSummary` (`completed_summary` in hooks/src/engine/dispatcher.rs),
# has the entries made from stdout and no stderr. goldfish's hooks always
# exit 0. Nor does Codex CLI set a variable of its own for a hook process
# (it gets codex's environment, its PATH led by codex's codex-path
# folder). So under Codex CLI goldfish's notes stay on stderr, unshown;
# this pins it for the pinned client.
GOLDFISH_TRACE=1 run "Say hello"
check "the hooks wrote on stderr ($(grep -l 'goldfish trace:' "$work"/hooks/*.err | wc -l) hooks' traces)" \
    grep -q 'goldfish trace:' "$work"/hooks/*.err
check "codex exec showed none of it" bash -c "! grep -q 'goldfish trace' '$work/codex.out' '$work/codex.err'"
echo "memories: $(memories | python3 -c '
import json, sys, collections
kinds = collections.Counter(json.loads(line)["type"] for line in sys.stdin if line.strip())
print(", ".join("%d %s" % (n, k) for k, n in kinds.items()))')"
exit $fail
