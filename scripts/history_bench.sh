#!/usr/bin/env bash
# Times history work on a long history, for each goldfish binary given:
# N commits (default 5,000), each appending one memory line to one file
# (what `store` and a commit make), then for each binary `review` of the
# whole range and the first `sync` of a clone (provenance of every line).
# Prints the median wall time and the peak resident memory of each.
#   N=5000 ROUNDS=3 bash scripts/history_bench.sh OLD_BINARY NEW_BINARY
set -euo pipefail
N=${N:-5000}
ROUNDS=${ROUNDS:-3}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
bins=()
for bin in "$@"; do bins+=("$(realpath "$bin")"); done
mkdir -p "$D/repo" && cd "$D/repo"
# The commits come from `git fast-import`: one process for all of them.
cat > "$D/stream.py" <<'PY'
import json, sys
n = int(sys.argv[1])
out = sys.stdout.buffer
config = b'[trust]\nauthors = ["alice@example.com"]\n'
log = b""
for c in range(n):
    line = json.dumps({"id": f"01M8{c:022d}", "timestamp": "2026-11-01T10:00:00.000Z",
                       "type": "decision", "author": "Alice",
                       "content": f"Memory {c}: the service uses queue {c % 97} and cache {c % 13}"},
                      separators=(",", ":")).encode() + b"\n"
    log += line
    out.write(b"commit refs/heads/main\n")
    out.write(b"committer Alice <alice@example.com> %d +0000\n" % (1_700_000_000 + c))
    message = b"commit %d" % c
    out.write(b"data %d\n%s\n" % (len(message), message))
    if c == 0:
        out.write(b"M 100644 inline .goldfish/config\ndata %d\n%s\n" % (len(config), config))
    out.write(b"M 100644 inline .goldfish/memories/2026-11-01.jsonl\ndata %d\n" % len(log))
    out.write(log + b"\n")
PY
git init -q -b main .
python3 "$D/stream.py" "$N" | git fast-import --quiet
git checkout -q main
git config user.name Alice && git config user.email alice@example.com
root=$(git rev-list --max-parents=0 HEAD)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| binary | commits | command | median wall (s) | peak RSS (MB) |"
echo "| --- | --- | --- | --- | --- |"
for bin in "${bins[@]}"; do
  for what in review sync; do
    : > "$D/times"
    for _ in $(seq "$ROUNDS"); do
      rm -rf "$D/home"
      if [[ $what == review ]]; then
        GOLDFISH_HOME="$D/home" /usr/bin/time -f "%e %M" -o "$D/t" "$bin" review "$root" HEAD > "$D/out" || true
      else
        GOLDFISH_HOME="$D/home" /usr/bin/time -f "%e %M" -o "$D/t" "$bin" sync --quiet > "$D/out" || true
      fi
      tail -1 "$D/t" >> "$D/times"
    done
    wall=$(cut -d' ' -f1 "$D/times" | median)
    rss=$(cut -d' ' -f2 "$D/times" | median)
    echo "| $bin | $N | $what | $wall | $((rss / 1024)) |"
  done
done
