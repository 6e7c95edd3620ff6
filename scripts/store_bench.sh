#!/usr/bin/env bash
# Times what "one sync per command" changed, for each goldfish binary
# given, in the same run and from the same starting state: `store` with the
# model (at a terminal, so with the near-duplicate check, and from a
# script), without one, and the post-merge hook after a pull of 5 memories.
# Needs a home with the model installed (default target/model-home, as
# scripts/test.sh leaves it) and `script` (util-linux) for the terminal.
#   N=1000 ROUNDS=7 bash scripts/store_bench.sh /tmp/goldfish-old target/debug/goldfish
set -euo pipefail
N=${N:-1000}
ROUNDS=${ROUNDS:-7}
MODELS=$(realpath "${MODEL_HOME:-target/model-home}")
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GOLDFISH_NOW=2026-11-21T09:30:00Z
first=$(realpath "$1")
# The merge driver git runs is the first binary.
mkdir "$D/bin" && ln -s "$first" "$D/bin/goldfish" && export PATH="$D/bin:$PATH"
ms() { echo $(( ($2 - $1) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
newhome() { mkdir -p "$1" && ln -s "$MODELS/models" "$1/models" && ln -s "$MODELS/runtime" "$1/runtime"; }

# A repository with N memories, on a bare remote.
mkdir "$D/seed" && cd "$D/seed"
git init -q -b main && git config user.name Seed && git config user.email seed@example.com
echo x > README.md && git add . && git commit -qm initial
GOLDFISH_HOME="$D/seedhome" "$first" init >/dev/null 2>&1
for i in $(seq "$N"); do
  printf '{"id":"01KA%022d","type":"insight","content":"Memory %d: the %s service keeps its cache for %d minutes after a deploy","timestamp":"2026-11-20T10:00:00Z","author":"Seed"}\n' \
    "$i" "$i" "$(shuf -n1 -e billing search auth ledger mail)" "$((i % 60))"
done > .goldfish/memories/2026-11-20.jsonl
git add -A && git commit -qm "$N memories"
git clone -q --bare "$D/seed" "$D/remote.git"
git clone -q "$D/remote.git" "$D/bob" && git -C "$D/bob" config user.name Bob && git -C "$D/bob" config user.email bob@example.com

# Each binary: its own clone and home; the rounds alternate the binaries,
# so a busy moment of the machine falls on all of them alike.
bins=()
n=0
for bin in "$@"; do
  n=$((n + 1)); bins+=("$(realpath "$bin")")
  git clone -q "$D/remote.git" "$D/alice$n"
  git -C "$D/alice$n" config user.name Alice && git -C "$D/alice$n" config user.email alice@example.com
  newhome "$D/home$n"
  (cd "$D/alice$n" && GOLDFISH_HOME="$D/home$n" "${bins[-1]}" init >/dev/null 2>&1 && GOLDFISH_HOME="$D/home$n" "${bins[-1]}" sync --quiet)
done
# Texts unlike each other (a near-duplicate would be refused).
topics=(billing search auth ledger mail queue cache deploy metrics backup index webhook)
things=("a retry budget of" "a timeout of" "a pool of" "a batch size of" "a lease of" "a quota of" "a shard count of")
for r in $(seq "$ROUNDS"); do
  # Five memories from Bob (his own home, no model) for every clone to pull.
  cd "$D/bob" && git pull -q --no-rebase --no-edit
  for k in 1 2 3 4 5; do
    GOLDFISH_HOME="$D/bobhome" "$first" store --type insight "Bob $r.$k: the $k-th shard of cluster $r rebalances nightly" >/dev/null 2>&1
  done
  git add -A && git commit -qm "bob $r" && git push -q
  for n in $(seq ${#bins[@]}); do
    bin=${bins[n - 1]}; A="$D/alice$n"; H="$D/home$n"
    cd "$A"
    s=$(date +%s%N)
    GOLDFISH_HOME="$H" script -qec "'$bin' store --type decision 'The ${topics[r % 12]} service uses ${things[r % 7]} $((r * 3)) in round $r'" /dev/null >/dev/null
    e=$(date +%s%N); echo "$n tty $(ms "$s" "$e")" >> "$D/times"
    s=$(date +%s%N)
    GOLDFISH_HOME="$H" "$bin" store --type insight "Draining the ${topics[(r + 5) % 12]} queue $r takes $((r * 7)) seconds" </dev/null >/dev/null 2>&1
    e=$(date +%s%N); echo "$n plain $(ms "$s" "$e")" >> "$D/times"
    s=$(date +%s%N)
    GOLDFISH_MODEL=none-installed GOLDFISH_HOME="$H" "$bin" store --type insight "Without a model the ${topics[(r + 3) % 12]} note $r says $((r * 11))" </dev/null >/dev/null 2>&1
    e=$(date +%s%N); echo "$n keywords $(ms "$s" "$e")" >> "$D/times"
    # The pull with the hooks off; then the hook alone, timed.
    git add -A && git commit -qm "alice $r" && git -c core.hooksPath=/dev/null pull -q --no-rebase --no-edit
    s=$(date +%s%N)
    GOLDFISH_HOME="$H" "$bin" hook post-merge 2>/dev/null
    e=$(date +%s%N); echo "$n hook $(ms "$s" "$e")" >> "$D/times"
  done
done
col() { awk -v n="$1" -v k="$2" '$1 == n && $2 == k {print $3}' "$D/times" | median; }
echo "| binary | store at a terminal (ms) | store from a script (ms) | store, no model (ms) | hook after a pull of 5 (ms) |"
echo "|---|---:|---:|---:|---:|"
for n in $(seq ${#bins[@]}); do
  echo "| ${bins[n - 1]} | $(col "$n" tty) | $(col "$n" plain) | $(col "$n" keywords) | $(col "$n" hook) |"
done
echo
echo "N=$N memories, medians of $ROUNDS rounds (binaries alternating); the model: $MODELS"
