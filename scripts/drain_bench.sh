#!/usr/bin/env bash
# Times a sync that drains store's journal: N stores journaled while git was
# busy (a merge), then 5 commits HEAD moved through, then one sync, for each
# goldfish binary given, from the same starting state.
#   N=300 bash scripts/drain_bench.sh path/to/old/goldfish target/debug/goldfish
set -euo pipefail
N=${N:-300}
first=$(realpath "$1")
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GOLDFISH_NOW=2026-11-21T09:30:00Z
mkdir "$D/r" && cd "$D/r"
git init -q -b main && git config user.name A && git config user.email a@example.com
echo x > README.md && git add . && git commit -qm initial
GOLDFISH_HOME="$D/home" "$first" init >/dev/null 2>&1
git add -A && git commit -qm goldfish
git rev-parse HEAD > .git/MERGE_HEAD
for i in $(seq "$N"); do
  GOLDFISH_HOME="$D/home" "$first" store "journaled memory $i while git merges" >/dev/null 2>&1
done
rm .git/MERGE_HEAD
for k in 1 2 3 4 5; do echo "$k" >> README.md; git commit -qam "c$k"; done
echo "| binary | lines journaled | sync that drains them (ms) | lines in the day's files after |"
echo "|---|---:|---:|---:|"
n=0
for bin in "$@"; do
  n=$((n + 1)); bin=$(realpath "$bin")
  cp -a "$D/r" "$D/c$n" && cp -a "$D/home" "$D/home$n"
  cd "$D/c$n"
  start=$(date +%s%N)
  GOLDFISH_HOME="$D/home$n" "$bin" sync --quiet
  end=$(date +%s%N)
  echo "| $bin | $N | $(( (end - start) / 1000000 )) | $(cat .goldfish/memories/2026-11-21*.jsonl | wc -l) |"
done
