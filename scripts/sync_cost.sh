#!/usr/bin/env bash
# Times sync of a team workspace with each goldfish binary given, from the
# same starting state: N memories (one file a day) that arrived in COMMITS
# commits by four authors, then a full sync into an empty index, a no-op
# sync, and the sync after a pull (one new commit of 5 memories); then, on
# that index, `brief`, a keyword recall and a recall of the newest 50 (no
# model: the cost of the filters, not of the embedding); and the index's
# bytes per memory on disk (index.db after a checkpoint of its write-ahead
# log, plus the keyword index index.text/; no vectors). Median of
# RUNS runs each, binaries alternating; milliseconds of CPU time (user +
# system), which other work on the machine disturbs less than wall time.
#   N=100000 COMMITS=100 RUNS=3 bash scripts/sync_cost.sh path/to/old/goldfish target/debug/goldfish
# FILES=1 gives each memory a `files` field (one of 211 paths, which the
# repository does not hold): the cost of the staleness bookkeeping of
# memories that name files. BRANCHES=1 gives each memory a `branch` (one of
# 40, each a branch with a commit of its own, unmerged), and adds a sync
# after 10 of them are deleted: the cost of the branch bookkeeping.
# CITES=1 commits 211 source files and has every tenth memory cite one of
# 422 spans of them (anchors made by `store --files PATH:A-B` of the last
# binary given, which must know citations; an older one keeps the field
# verbatim), and adds a sync after a pull of 5 memories and a commit that
# edits a cited line in 5 files and moves the spans of 5 others: the cost
# of judging citations.
set -euo pipefail
N=${N:-100000}
export FILES=${FILES:-0}
export BRANCHES=${BRANCHES:-0}
export CITES=${CITES:-0}
COMMITS=${COMMITS:-100}
RUNS=${RUNS:-3}
bins=()
for bin in "$@"; do bins+=("$(realpath "$bin")"); done
set -- "${bins[@]}"
citer="${@: -1}"
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GOLDFISH_NOW=2026-11-21T09:30:00Z
export GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com GIT_COMMITTER_DATE=2026-11-21T10:00:00Z
mkdir "$D/r" && cd "$D/r"
git init -q -b main && git config user.name A && git config user.email a@example.com
echo x > README.md && git add . && git commit -qm initial
mkdir -p .goldfish/memories
export ANCHORS=$D/anchors.jsonl
: > "$ANCHORS"
if [ "$CITES" = 1 ]; then
  # 211 files of 40 five-line functions each, committed before any memory.
  mkdir src
  python3 -c '
for k in range(211):
    with open(f"src/m{k}.rs", "w") as f:
        for j in range(40):
            f.write(f"fn f{k}_{j}(x: u32) -> u32 {{\n    let y = x * {k} + {j};\n    y + 1\n}}\n\n")
'
  git add src && git commit -qm "code"
  # Two spans a file, anchored by `store` in a throwaway copy.
  cp -a "$D/r" "$D/anchor" && (
    cd "$D/anchor"
    for k in $(seq 0 210); do
      for j in 3 30; do
        a=$((j * 5 + 1))
        GOLDFISH_HOME="$D/anchor-home" "$citer" store --force --type insight \
          --files "src/m$k.rs:$a-$((a + 3))" "f${k}_$j adds one" >/dev/null
      done
    done
    cat .goldfish/memories/*.jsonl | python3 -c 'import json, sys; [print(json.dumps({"files": r["files"], "cites": r["cites"]})) for r in map(json.loads, sys.stdin)]' > "$ANCHORS"
  )
  rm -rf "$D/anchor" "$D/anchor-home"
  [ "$(wc -l < "$ANCHORS")" = 422 ] || { echo "expected 422 anchors from $citer" >&2; exit 1; }
fi
python3 - "$N" "$COMMITS" <<'EOF'
import datetime, json, os, subprocess, sys
n, commits = int(sys.argv[1]), int(sys.argv[2])
crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
def ulid(ms, serial):
    t = "".join(crockford[(ms >> (5 * i)) & 31] for i in reversed(range(10)))
    r = "".join(crockford[(serial >> (5 * i)) & 31] for i in reversed(range(16)))
    return t + r
kinds = ["decision", "bug-fix", "insight", "observation", "checkpoint", "plan"]
authors = [("Alice", "alice@example.com"), ("Bob", "bob@example.com"),
           ("Carol", "carol@example.com"), ("Dan", "dan@example.com")]
per_day = 300
days = (n + per_day - 1) // per_day
start = 1_700_000_000_000
files = {}
anchors = [json.loads(line) for line in open(os.environ["ANCHORS"])]
for i in range(n):
    day = i // per_day
    ms = start + day * 86_400_000 + (i % per_day) * 1000
    ts = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    name = ts.strftime("%Y-%m-%d") + ".jsonl"
    record = {"id": ulid(ms, i), "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
              "type": kinds[i % len(kinds)],
              "content": f"Memory {i}: the service {i % 97} retries {i % 7} times before the queue {i % 13} gives up; see module m{i % 211}."}
    if os.environ.get("FILES") == "1":
        record["files"] = [f"src/m{i % 211}.rs"]
    if os.environ.get("BRANCHES") == "1":
        record["branch"] = f"feat/b{i % 40}"
    if anchors and i % 10 == 0:
        record.update(anchors[(i // 10) % len(anchors)])
    files.setdefault(name, []).append(record)
names = sorted(files)
chunk = (len(names) + commits - 1) // commits
for c in range(0, len(names), chunk):
    # Each commit's memories were stored by its author, as `store` writes them.
    name, email = authors[(c // chunk) % 4]
    for file in names[c:c + chunk]:
        with open(f".goldfish/memories/{file}", "w") as f:
            f.write("".join(json.dumps(dict(r, author=name), separators=(",", ":")) + "\n"
                            for r in files[file]))
    env = dict(os.environ, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email,
               GIT_AUTHOR_DATE="2026-11-21T10:00:00Z")
    subprocess.run(["git", "add", "-A"], check=True, env=env)
    subprocess.run(["git", "commit", "-qm", f"memories {c}"], check=True, env=env)
EOF
if [ "$BRANCHES" = 1 ]; then
  for b in $(seq 0 39); do
    git checkout -q -b "feat/b$b" main && echo "$b" > "b$b.txt" && git add "b$b.txt"
    GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_AUTHOR_DATE=2026-11-21T10:00:00Z git commit -qm "b$b"
  done
  git checkout -q main
fi
newest=$(ls .goldfish/memories | sort | tail -1)
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# CPU time (user + system) of the command, in ms: steadier than wall time
# on a machine other work shares.
ms() {
  local TIMEFORMAT='%3U %3S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
  awk '{ printf "%d\n", ($1 + $2) * 1000 }' <<< "$t"
}
declare -A full noop pull code deleted indexed brief recall newest size
for run in $(seq "$RUNS"); do
  n=0
  for bin in "$@"; do
    n=$((n + 1))
    rm -rf "$D/c" "$D/home" && cp -a "$D/r" "$D/c" && cd "$D/c"
    full[$n]+="$(GOLDFISH_HOME="$D/home" ms "$bin" sync --quiet) "
    noop[$n]+="$(GOLDFISH_HOME="$D/home" ms "$bin" sync --quiet) "
    indexed[$n]=$(GOLDFISH_HOME="$D/home" "$bin" sync --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["memories"])')
    for k in 1 2 3 4 5; do
      echo "{\"id\":\"01ZZZZZZZZ00000000000000$k$run\",\"timestamp\":\"2026-11-21T09:0$k:00.000Z\",\"type\":\"decision\",\"content\":\"pulled memory $k\",\"author\":\"Bob\"}" >> ".goldfish/memories/$newest"
    done
    GIT_AUTHOR_NAME=Bob GIT_AUTHOR_EMAIL=bob@example.com git commit -qam "pull"
    pull[$n]+="$(GOLDFISH_HOME="$D/home" ms "$bin" sync --quiet) "
    if [ "$CITES" = 1 ]; then
      # A cited line edited in 5 files, 5 others' spans moved down 3 lines.
      for k in 0 1 2 3 4; do sed -i "17s/+ 3;/+ 4;/" "src/m$k.rs"; done
      for k in 5 6 7 8 9; do sed -i '1i // a\n// b\n// c' "src/m$k.rs"; done
      for k in 1 2 3 4 5; do
        echo "{\"id\":\"01ZZZZZZZZ00000000000001$k$run\",\"timestamp\":\"2026-11-21T09:1$k:00.000Z\",\"type\":\"decision\",\"content\":\"code memory $k\",\"author\":\"Bob\"}" >> ".goldfish/memories/$newest"
      done
      GIT_AUTHOR_NAME=Bob GIT_AUTHOR_EMAIL=bob@example.com git commit -qam "code"
      code[$n]+="$(GOLDFISH_HOME="$D/home" ms "$bin" sync --quiet) "
    else
      code[$n]+="- "
    fi
    if [ "$BRANCHES" = 1 ]; then
      for b in $(seq 0 9); do git branch -q -D "feat/b$b"; done
      deleted[$n]+="$(GOLDFISH_HOME="$D/home" ms "$bin" sync --quiet) "
    else
      deleted[$n]+="- "
    fi
    brief[$n]+="$(GOLDFISH_HOME="$D/home" ms "$bin" brief) "
    recall[$n]+="$(GOLDFISH_HOME="$D/home" ms "$bin" recall --mode keyword -n 10 queue retries module) "
    newest[$n]+="$(GOLDFISH_HOME="$D/home" ms "$bin" recall -n 50) "
    python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA wal_checkpoint(TRUNCATE)")' "$D/home/index.db"
    size[$n]=$(du -sb "$D/home/index.db" "$D/home/index.text" | awk -v n="$N" '{ s += $1 } END { printf "%d\n", s / n }')
    cd "$D"
  done
done
echo "| binary | memories | indexed | commits | full sync (CPU ms) | no-op sync | sync after a pull | sync after a pull that changes cited code | sync after 10 branches deleted | brief | recall (keywords) | recall (newest 50) | index bytes/memory |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
n=0
for bin in "$@"; do
  n=$((n + 1))
  echo "| $bin | $N | ${indexed[$n]} | $COMMITS | $(tr ' ' '\n' <<< "${full[$n]}" | grep . | median) | $(tr ' ' '\n' <<< "${noop[$n]}" | grep . | median) | $(tr ' ' '\n' <<< "${pull[$n]}" | grep . | median) | $(tr ' ' '\n' <<< "${code[$n]}" | grep . | median) | $(tr ' ' '\n' <<< "${deleted[$n]}" | grep . | median) | $(tr ' ' '\n' <<< "${brief[$n]}" | grep . | median) | $(tr ' ' '\n' <<< "${recall[$n]}" | grep . | median) | $(tr ' ' '\n' <<< "${newest[$n]}" | grep . | median) | ${size[$n]} |"
done
