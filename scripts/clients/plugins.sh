#!/usr/bin/env bash
# goldfish's plugin and extension in the real clients, with no network but
# npm: Claude Code, Codex CLI and Gemini CLI are installed from npm (into
# a cache, target/clients/, reused), each in a hermetic HOME, and each
# client's own commands check that
#   - Claude Code: `claude plugin validate --strict` passes the plugin
#     (plugins/goldfish) and the marketplace (.claude-plugin/marketplace.json);
#     `claude plugin marketplace add` + `claude plugin install` install it,
#     `claude plugin list` shows it enabled, `claude mcp list` connects its
#     server, and a headless run (`claude -p`, against a stand-in for the
#     Messages API on 127.0.0.1, scripts/clients/messages_standin.py) gets
#     the plugin's briefing into the model's request;
#   - Codex CLI installs the same folder unchanged (`codex plugin
#     marketplace add`, `codex plugin add`): `codex plugin list` shows it
#     enabled, `codex mcp list` its server, its app server's `hooks/list`
#     the plugin's hooks with their timeouts;
#   - Gemini CLI: `gemini extensions validate` passes the repository's
#     root (the extension), `gemini extensions install <git url>` installs
#     it from a git host on 127.0.0.1 (scripts/clients/git_standin.py
#     serving a bare clone of HEAD), `gemini mcp list` connects
#     its server (started in the workspace, `${workspacePath}`), and a
#     headless run (`gemini -p`, canned model answers) in a repository
#     with goldfish gets the briefing from the extension's SessionStart
#     hook, while the same run in a repository without `.goldfish` leaves
#     no file behind.
# Needs node and npm (the registry), python3, git, and a goldfish binary
# (GOLDFISH=path, else target/release/goldfish). CLIENTS=dir changes the
# cache; KEEP_WORK=1 keeps the temporary folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
goldfish=$(realpath "${GOLDFISH:-$root/target/release/goldfish}")
clients=${CLIENTS:-$root/target/clients}
work=$(mktemp -d "${TMPDIR:-/tmp}/goldfish-plugins.XXXXXX")
cleanup() {
    if [[ -n ${KEEP_WORK:-} ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

client() { # client PACKAGE VERSION BIN: the path of BIN, installed once into the cache
    local dir=$clients/${1//\//+}@$2
    if [[ ! -x $dir/node_modules/.bin/$3 ]]; then
        mkdir -p "$dir"
        npm install --silent --no-audit --no-fund --prefix "$dir" "$1@$2" > "$dir.log" 2>&1 \
            || { cat "$dir.log" >&2; exit 1; }
    fi
    echo "$dir/node_modules/.bin/$3"
}
claude=$(client @anthropic-ai/claude-code "${CLAUDE_CODE_VERSION:-2.1.332}" claude)
codex=$(client @openai/codex "${CODEX_CLI_VERSION:-0.171.0}" codex)
gemini=$(client @google/gemini-cli "${GEMINI_CLI_VERSION:-0.61.0}" gemini)

# A hermetic world: its own HOME (every client's settings, plugins and
# caches), goldfish home, git config; goldfish on PATH.
mkdir -p "$work/bin" "$work/home/.codex"
ln -s "$goldfish" "$work/bin/goldfish"
export PATH="$work/bin:$PATH" HOME="$work/home" CODEX_HOME="$work/home/.codex"
export GOLDFISH_HOME="$work/home/.goldfish" GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 NO_COLOR=1
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export GEMINI_API_KEY=not-used GEMINI_CLI_TRUST_WORKSPACE=true
echo "$("$claude" --version), $("$codex" --version 2>/dev/null), gemini cli $("$gemini" --version 2>/dev/null), $("$goldfish" --version)"

fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
log() { # log NAME COMMAND...: runs it, its output in $work/NAME.log
    "${@:2}" > "$work/$1.log" 2>&1
}
shows() { # shows NAME PATTERN: the log holds the pattern
    grep -q -- "$2" "$work/$1.log" || { sed 's/^/    /' "$work/$1.log" | tail -n 20 >&2; return 1; }
}

repo=$work/repo
mkdir -p "$repo"
cd "$repo"
git init -q -b main
git config user.name "Alice" && git config user.email "alice@example.com"
goldfish init > /dev/null
goldfish store -t decision "Cart totals are computed in integer cents, never floats, so rounding cannot drift" > /dev/null
git add -A && git commit -q -m "goldfish"
plain=$work/plain
mkdir -p "$plain"
git -C "$plain" init -q -b main

# 1. Claude Code.
check "claude plugin validate --strict plugins/goldfish" log claude-validate "$claude" plugin validate --strict "$root/plugins/goldfish"
# The marketplace by its manifest: given the folder, the validator also
# reads hooks/hooks.json there as a plugin's, and that one is the Gemini
# extension's (BeforeAgent, AfterTool, AfterAgent are no Claude Code events).
check "claude plugin validate --strict (the marketplace)" log claude-market "$claude" plugin validate --strict "$root/.claude-plugin/marketplace.json"
check "claude plugin marketplace add" log claude-add "$claude" plugin marketplace add "$root"
check "claude plugin install goldfish@goldfish" log claude-install "$claude" plugin install goldfish@goldfish
log claude-list "$claude" plugin list --json || true
check "claude plugin list: goldfish@goldfish enabled" python3 -c '
import json, sys
plugins = json.load(open(sys.argv[1]))
sys.exit(not any(p["id"] == "goldfish@goldfish" and p["enabled"] for p in plugins))' "$work/claude-list.log"
log claude-mcp "$claude" mcp list || true
check "claude mcp list: the plugin's goldfish server connects" shows claude-mcp "plugin:goldfish:goldfish: goldfish mcp - ✔ Connected"

# A headless session (`claude -p`, against a stand-in for the Messages API
# on 127.0.0.1) in the repository: the plugin's SessionStart briefing and
# its prompt hook run, and the briefing reaches the model's request. In a
# repository without .goldfish, nothing is left behind.
python3 "$root/scripts/clients/messages_standin.py" "$work/messages.jsonl" "$work/port" 2> "$work/standin.log" &
standin=$!
trap 'kill $standin 2> /dev/null || true; cleanup' EXIT
# Up to 30 s for python3 to start and bind, on a loaded machine too.
for _ in $(seq 300); do [[ -s $work/port ]] && break; sleep 0.1; done
port=$(cat "$work/port")
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=not-used
(cd "$repo" && timeout 120 "$claude" -p "What did the team decide about cart totals?" --model claude-sonnet-4-5 > "$work/claude-run.log" 2>&1) || true
check "claude -p: the plugin's SessionStart briefing reached the model" grep -q 'integer cents' "$work/messages.jsonl"
before=$(cd "$plain" && find . -path ./.git -prune -o -print | sort)
(cd "$plain" && timeout 120 "$claude" -p "Say hello" --model claude-sonnet-4-5 > "$work/claude-plain.log" 2>&1) || true
check "claude -p in a repository without .goldfish: the hooks left nothing behind" \
    test "$before" = "$(cd "$plain" && find . -path ./.git -prune -o -print | sort)"
unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY

# 2. Codex CLI, the same folder.
check "codex plugin marketplace add" log codex-add "$codex" plugin marketplace add "$root"
check "codex plugin add goldfish@goldfish" log codex-install "$codex" plugin add goldfish@goldfish
log codex-list "$codex" plugin list || true
check "codex plugin list: goldfish@goldfish installed, enabled" shows codex-list "goldfish@goldfish  installed, enabled"
log codex-mcp "$codex" mcp list || true
check "codex mcp list: the plugin's goldfish server" grep -Eq "^goldfish +goldfish +mcp .*enabled" "$work/codex-mcp.log"
python3 - "$codex" "$repo" > "$work/codex-hooks.log" <<'EOF'
import json, subprocess, sys
codex, repo = sys.argv[1:3]
server = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
for message in [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "goldfish-plugins-sh", "version": "0"}}},
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
        if hook.get("pluginId") == "goldfish@goldfish":
            print(hook["eventName"], hook["timeoutSec"], hook["command"])
for cwd in answer["result"]["data"]:
    for warning in cwd.get("warnings", []):
        print("warning:", warning)
EOF
check "codex hooks/list: the plugin's 6 hooks, each with a timeout ($(grep -vc warning: "$work/codex-hooks.log"))" \
    test "$(grep -Ec '^[a-zA-Z]+ [0-9]+ goldfish agent-hook' "$work/codex-hooks.log")" -eq 6
sed 's/^/    /' "$work/codex-hooks.log"

# 3. Gemini CLI, the extension: the repository's root, installed from a
# git URL as from GitHub (Gemini CLI clones the repository and reads
# gemini-extension.json, hooks/, commands/ and skills/ at its root). The
# host is a stand-in on 127.0.0.1 (git's smart HTTP) serving a bare clone
# of this repository's HEAD (committed changes only).
check "gemini extensions validate (the repository's root)" log gemini-validate "$gemini" extensions validate "$root"
mkdir -p "$work/git"
if git -C "$root" rev-parse --verify -q HEAD > /dev/null; then
    git clone -q --bare "$root" "$work/git/goldfish.git"
else # a source tree out of git: a repository of the extension's files
    mkdir "$work/tree"
    cp -R "$root"/{gemini-extension.json,hooks,commands,skills,README.md} "$work/tree/"
    git -C "$work/tree" init -q -b main
    git -C "$work/tree" add -A
    git -C "$work/tree" -c user.name=ci -c user.email=ci@example.com commit -q -m extension
    git clone -q --bare "$work/tree" "$work/git/goldfish.git"
fi
python3 "$root/scripts/clients/git_standin.py" "$work/git" "$work/git-port" 2> "$work/git-standin.log" &
git_standin=$!
trap 'kill $standin $git_standin 2> /dev/null || true; cleanup' EXIT
# Up to 30 s for python3 to start and bind, on a loaded machine too.
for _ in $(seq 300); do [[ -s $work/git-port ]] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$work/git-port")/goldfish.git"
check "gemini extensions install <git url>" log gemini-install "$gemini" extensions install "$url" --consent
log gemini-list "$gemini" extensions list || true
check "gemini extensions list: goldfish from the git URL, with its MCP server and skill" \
    bash -c "grep -q 'goldfish (0.1.0)' '$work/gemini-list.log' && grep -q 'Source: $url (Type: git)' '$work/gemini-list.log' \
        && grep -q 'goldfish: The team' '$work/gemini-list.log'"
(cd "$repo" && log gemini-mcp "$gemini" mcp list) || true
check "gemini mcp list: goldfish (from the extension) connects" shows gemini-mcp "goldfish (from goldfish): goldfish mcp (stdio) - Connected"
node -e 'console.log(JSON.stringify({method: "generateContentStream", response: [{candidates: [{content: {role: "model", parts: [{text: "Noted."}]}, finishReason: "STOP"}], usageMetadata: {promptTokenCount: 100, candidatesTokenCount: 2, totalTokenCount: 102}}]}))' > "$work/answer.jsonl"
# A second hook beside the extension's logs what the model is sent at
# BeforeModel: the briefing is in it.
mkdir -p "$repo/.gemini"
cat > "$repo/.gemini/settings.json" <<EOF
{"hooks": {"BeforeModel": [{"hooks": [{"type": "command", "command": "cat >> $work/before-model.jsonl; echo >> $work/before-model.jsonl", "timeout": 10000}]}]}}
EOF
(cd "$repo" && "$gemini" -p "What did the team decide about cart totals?" --fake-responses-non-strict "$work/answer.jsonl" > "$work/gemini-run.log" 2>&1) || true
check "gemini -p: the extension's SessionStart briefing reached the model" \
    grep -q 'integer cents' "$work/before-model.jsonl"
before=$(cd "$plain" && find . -path ./.git -prune -o -print | sort; ls -A "$GOLDFISH_HOME/sessions" 2>/dev/null | wc -l)
(cd "$plain" && "$gemini" -p "Say hello" --fake-responses-non-strict "$work/answer.jsonl" > "$work/gemini-plain.log" 2>&1) || true
after=$(cd "$plain" && find . -path ./.git -prune -o -print | sort; ls -A "$GOLDFISH_HOME/sessions" 2>/dev/null | wc -l)
check "gemini -p in a repository without .goldfish: the hooks left nothing behind" test "$before" = "$after"
check "gemini -p in a repository without .goldfish: no hook said anything" \
    bash -c "! grep -q 'goldfish agent-hook' '$work/gemini-plain.log'"
exit $fail
