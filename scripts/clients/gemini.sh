#!/usr/bin/env bash
# The real Gemini CLI against goldfish's hooks, with no network: the pinned
# client is installed from npm into a temporary prefix and run headless
# (`gemini -p`) with canned model responses (its own `--fake-responses-non-strict`
# mode), in a temporary repository set up by `goldfish init --agent gemini
# --capture`. It checks what the client really sends:
#   - several model calls in a session (Gemini CLI fires PreCompress before
#     each) store no compaction checkpoint;
#   - the prompt hook looks up the prompt, not the briefing the client puts
#     before it (`<hook_context>…</hook_context>`);
#   - a failing check, an edit, then the check passing is seen as a fix;
#   - the session's checkpoint quotes the request, not the briefing;
#   - a hook's notes never reach the user as a system message (Gemini CLI
#     shows a hook's stderr so when its stdout is empty).
# Needs node and npm (the registry), git, and a goldfish binary
# (GOLDFISH=path, else target/release/goldfish). GEMINI_CLI=path/to/gemini
# skips the install.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=${GEMINI_CLI_VERSION:-0.61.0}
goldfish=$(realpath "${GOLDFISH:-$root/target/release/goldfish}")
work=$(mktemp -d "${TMPDIR:-/tmp}/goldfish-gemini.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [[ -n ${GEMINI_CLI:-} ]]; then
    gemini=$GEMINI_CLI
else
    npm install --silent --no-audit --no-fund --prefix "$work/npm" "@google/gemini-cli@$version" > "$work/npm.log" 2>&1 \
        || { cat "$work/npm.log" >&2; exit 1; }
    gemini=$work/npm/node_modules/.bin/gemini
fi
echo "gemini cli $("$gemini" --version 2>/dev/null), $("$goldfish" --version)"

# A hermetic world: its own HOME (Gemini CLI's settings and chat records),
# goldfish home, git config; the client trusts the folder (headless).
mkdir -p "$work/bin" "$work/home"
ln -s "$goldfish" "$work/bin/goldfish"
export PATH="$work/bin:$PATH" HOME="$work/home" GOLDFISH_HOME="$work/home/.goldfish"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GEMINI_API_KEY=not-used GEMINI_CLI_TRUST_WORKSPACE=true NO_COLOR=1
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
goldfish init --agent gemini --capture > "$work/init.log"
goldfish store -t decision "Cart totals are computed in integer cents, never floats, so rounding cannot drift" > /dev/null
git add -A && git commit -q -m "cart, goldfish"
if grep -q PreCompress .gemini/settings.json; then
    echo "FAIL: init --agent gemini registered PreCompress" >&2; exit 1
fi
# A second hook beside goldfish's logs what the client sends on BeforeAgent.
node -e '
const fs = require("fs"), path = ".gemini/settings.json";
const settings = JSON.parse(fs.readFileSync(path, "utf8"));
settings.hooks.BeforeAgent.push({hooks: [{type: "command", command: "cat >> " + process.argv[1] + "; echo >> " + process.argv[1]}]});
fs.writeFileSync(path, JSON.stringify(settings, null, 2));
' "$work/before-agent.jsonl"

# Canned model answers, one JSON line per call (`{method, response}`).
call() { # a model turn: one functionCall, or text when $1 is "text"
    if [[ $1 == text ]]; then
        node -e 'console.log(JSON.stringify({method: "generateContentStream", response: [{candidates: [{content: {role: "model", parts: [{text: process.argv[1]}]}, finishReason: "STOP"}], usageMetadata: {promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110}}]}))' "$2"
    else
        node -e 'console.log(JSON.stringify({method: "generateContentStream", response: [{candidates: [{content: {role: "model", parts: [{functionCall: {name: process.argv[1], args: JSON.parse(process.argv[2])}}]}, finishReason: "STOP"}]}]}))' "$1" "$2"
    fi
}
run() { # run PROMPT RESPONSES: one headless session
    "$gemini" -p "$1" --fake-responses-non-strict "$2" --yolo >> "$work/gemini.out" 2>> "$work/gemini.err" \
        || { tail -n 20 "$work/gemini.err" >&2; exit 1; }
}

# 1. A prompt that asks nothing after the briefing: nothing is looked up.
call text "Going on." > "$work/one.jsonl"
run "ok, go on" "$work/one.jsonl"

# 2. A task: the check fails, the fix, the check passes (five model calls).
{
    call run_shell_command '{"command": "npm test", "description": "run the tests"}'
    call write_file "{\"file_path\": \"$repo/src/cart.js\", \"content\": \"exports.total = (a, b) => a + b;\\n\"}"
    call run_shell_command '{"command": "npm test", "description": "run the tests again"}'
    call text "The total added 1 on top of the sum in src/cart.js; fixed, and npm test passes."
} > "$work/two.jsonl"
run "Fix the failing cart total test" "$work/two.jsonl"
goldfish capture work --wait > /dev/null

memories() { cat .goldfish/memories/*.jsonl; }
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
check "the client put the briefing before the prompt" grep -q '"prompt":"<hook_context>' "$work/before-agent.jsonl"
# The lookup keeps to the prompt hook's budget (1.5 s) or answers nothing
# ("the lookup took longer"), as a loaded machine can make it: asked again
# then, up to three times.
for _ in 1 2 3; do
    explained=$(head -n 1 "$work/before-agent.jsonl" | goldfish agent-hook user-prompt --explain 2> "$work/explain.err")
    if [[ -n $explained ]] || ! grep -q 'the lookup took longer than' "$work/explain.err"; then break; fi
done
check "the prompt hook looked up the prompt, not the briefing (\"ok, go on\" asks nothing)" \
    grep -q '"event":"BeforeAgent".*"skipped":"not a question about the work' <<< "$explained"
check "no compaction checkpoint over $(grep -c . "$work/two.jsonl") model calls" \
    bash -c '! grep -q "context was compacted" .goldfish/memories/*.jsonl'
check "the failing then passing npm test was seen as a fix" \
    grep -q 'Check: `npm test` failed, then passed.' <(memories)
checkpoint=$(memories | node -e '
let last = "";
for (const line of require("fs").readFileSync(0, "utf8").split("\n"))
  if (line.trim()) { const m = JSON.parse(line); if (m.type === "checkpoint") last = m.content; }
console.log(last.split("\n")[0]);')
check "the session's checkpoint quotes the request (\"$checkpoint\")" \
    test "$checkpoint" = "Fix the failing cart total test"
# 3. A hook with something to note (here: a memory folder that is a
# link, which every sync reports) and nothing on stdout: Gemini CLI shows
# a hook's stderr as its system message then (its debug log says "Hook
# system message"); goldfish's notes go to its hook log instead.
noted=$work/noted
mkdir -p "$noted" "$work/elsewhere"
git -C "$noted" init -q -b main
(cd "$noted" && goldfish init --agent gemini > /dev/null && rm -rf .goldfish/memories && ln -s "$work/elsewhere" .goldfish/memories)
call text "Hello." > "$work/three.jsonl"
(cd "$noted" && "$gemini" -d -p "hello" --fake-responses-non-strict "$work/three.jsonl" > "$work/noted.out" 2> "$work/noted.err") \
    || { tail -n 20 "$work/noted.err" >&2; exit 1; }
check "Gemini CLI ran the SessionStart hook" grep -q 'Hook execution for SessionStart: 1 hooks executed successfully' "$work/noted.err"
check "no goldfish note became a Gemini CLI system message" bash -c "! grep -q 'Hook system message' '$work/noted.err'"
check "the note is in goldfish's hook log" grep -q 'session-start: warning: .*is a symbolic link' "$GOLDFISH_HOME/logs/agent-hook.log"
echo "memories: $(memories | node -e '
const kinds = {};
for (const line of require("fs").readFileSync(0, "utf8").split("\n"))
  if (line.trim()) { const k = JSON.parse(line).type; kinds[k] = (kinds[k] || 0) + 1; }
console.log(Object.entries(kinds).map(([k, n]) => n + " " + k).join(", "));')"
exit $fail
