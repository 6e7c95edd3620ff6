#!/usr/bin/env bash
# One short store, goldfish binaries against each other and against memlay
# (a Rust team-memory tool: `cargo install memlay --version 0.1.5`), paired
# in each round: A, B…, memlay. Each goldfish binary gets its own
# repository (fixtures/eval's memories without authors plus 100 stored) and
# its own home (the model from target/model-home, its warm process
# running); memlay a repository of the same texts. Medians in ms.
#   ROUNDS=21 bash scripts/store_vs_memlay.sh /tmp/goldfish-old target/release/goldfish
set -euo pipefail
ROUNDS=${ROUNDS:-21}
MEMLAY=${MEMLAY:-$(command -v memlay)}
MODELS=$(realpath "${MODEL_HOME:-target/model-home}")
EVAL=$(realpath fixtures/eval/memories.jsonl)
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
repo() { mkdir -p "$1" && cd "$1" && git init -q -b main && git config user.name A && git config user.email a@example.com && echo x > README.md && git add . && git commit -qm init; }
topics=(billing search auth ledger mail queue cache deploy metrics backup index webhook)
bins=()
for bin in "$@"; do bins+=("$(realpath "$bin")"); done
n=0
for B in "${bins[@]}"; do
  n=$((n + 1))
  mkdir -p "$D/home$n" && ln -s "$MODELS/models" "$D/home$n/models" && ln -s "$MODELS/runtime" "$D/home$n/runtime"
  repo "$D/g$n"
  GOLDFISH_HOME="$D/home$n" "$B" init >/dev/null 2>&1
  python3 -c "import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); r.pop('author',None); print(json.dumps(r))" "$EVAL" > .goldfish/memories/2026-11-20.jsonl
  git add -A && git commit -qm memories
  for i in $(seq 100); do
    GOLDFISH_HOME="$D/home$n" "$B" store --type insight "Stored $i: the ${topics[i % 12]} worker uses a pool of $((i * 7)) connections and retries $((i % 9)) times" >/dev/null 2>&1
  done
done
repo "$D/m"
"$MEMLAY" init >/dev/null 2>&1
i=0
python3 -c "import json,sys
for l in open(sys.argv[1]): print(json.loads(l)['content'][:200].replace(chr(10),' '))" "$EVAL" |
  while IFS= read -r text; do
    i=$((i + 1))
    "$MEMLAY" record --quiet --kind decision --key "bench.seed$i" --summary "$text" --rationale seed >/dev/null 2>&1 || true
  done
ms() { local s; s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A times
for r in $(seq 0 "$ROUNDS"); do
  stamp=$(date +%s%N)
  for n in $(seq ${#bins[@]}); do
    t=$(cd "$D/g$n" && GOLDFISH_HOME="$D/home$n" ms "${bins[n - 1]}" store "Retry webhook deliveries five times, note $stamp")
    # Round 0 warms up (it starts each home's warm process).
    [[ $r -gt 0 ]] && times[$n]+="$t "
  done
  t=$(cd "$D/m" && ms "$MEMLAY" record --quiet --kind decision --key "bench.n$stamp" --summary "Retry webhook deliveries five times, note $stamp" --rationale "seen in prod")
  [[ $r -gt 0 ]] && times[m]+="$t "
done
for n in $(seq ${#bins[@]}); do
  echo "goldfish ${bins[n - 1]}: $(tr ' ' '\n' <<< "${times[$n]}" | grep . | median) ms"
done
echo "memlay: $(tr ' ' '\n' <<< "${times[m]}" | grep . | median) ms"
# The warm processes this run started end after their 10 idle minutes.
