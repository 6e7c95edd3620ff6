#!/usr/bin/env bash
# Times `goldfish review BASE HEAD` on a synthetic log, for each goldfish
# binary given: N memories (default 100,000) in 200 day files at BASE under
# a `[trust]` policy, then 20 commits adding 10 memories each to one file,
# every fifth by an author outside the policy. Prints the median wall time
# and the peak resident memory of each binary's run.
#   N=100000 ROUNDS=5 bash scripts/review_bench.sh target/debug/goldfish
set -euo pipefail
N=${N:-100000}
ROUNDS=${ROUNDS:-5}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GOLDFISH_HOME="$D/home"
bins=()
for bin in "$@"; do bins+=("$(realpath "$bin")"); done
mkdir -p "$D/repo" && cd "$D/repo"
python3 - "$N" <<'PY'
import json, os, subprocess, sys
n, days = int(sys.argv[1]), 200
def git(*args): subprocess.run(["git", *args], check=True, stdout=subprocess.DEVNULL)
def line(id, day, content, author):
    return json.dumps({"id": id, "timestamp": f"{day}T10:00:00.000Z", "type": "decision",
                       "content": content, "author": author}, separators=(",", ":")) + "\n"
git("init", "-q", "-b", "main")
git("config", "user.name", "Alice"); git("config", "user.email", "alice@example.com")
os.makedirs(".goldfish/memories")
open(".goldfish/config", "w").write('[trust]\nauthors = ["alice@example.com"]\n')
files = {}
for i in range(n):
    d = i % days
    day = f"2026-{1 + d // 28:02d}-{1 + d % 28:02d}"
    files.setdefault(day, []).append(line(f"01M8{i:022d}", day,
        f"Memory {i}: the service uses queue {i % 97} and cache {i % 13}", "Alice"))
for day, lines in files.items():
    open(f".goldfish/memories/{day}.jsonl", "w").write("".join(lines))
git("add", "-A"); git("commit", "-qm", "base"); git("tag", "base")
for c in range(20):
    name, email = ("Mallory", "mallory@evil.test") if c % 5 == 0 else ("Alice", "alice@example.com")
    git("config", "user.name", name); git("config", "user.email", email)
    with open(".goldfish/memories/2026-08-01.jsonl", "a") as f:
        for k in range(10):
            f.write(line(f"01M9{c * 10 + k:022d}", "2026-08-01", f"New memory {c} {k}", name))
    git("add", "-A"); git("commit", "-qm", f"commit {c}")
PY
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| binary | memories | commits | changes | median wall (s) | peak RSS (MB) |"
echo "| --- | --- | --- | --- | --- | --- |"
for bin in "${bins[@]}"; do
  : > "$D/times"
  for _ in $(seq "$ROUNDS"); do
    /usr/bin/time -f "%e %M" -o "$D/t" "$bin" review base HEAD > "$D/out" || true
    tail -1 "$D/t" >> "$D/times"
  done
  wall=$(cut -d' ' -f1 "$D/times" | median)
  rss=$(cut -d' ' -f2 "$D/times" | median)
  changes=$(tail -1 "$D/out" | cut -d' ' -f1)
  echo "| $bin | $N | 20 | $changes | $wall | $((rss / 1024)) |"
done
