#!/usr/bin/env bash
# Runs every benchmark and prints one table (docs/BENCHMARKS.md says what
# each line measures).
#
#   bash scripts/bench.sh [--quick] [--json FILE] [--markdown FILE] [--doc]
#
#   --quick          1k and 10k only (a few minutes); the full run goes to
#                    100k (1M for the in-process recall and the vector stage)
#   --json FILE      the run as one JSON document, to compare with another
#                    run: python3 scripts/bench_table.py --compare OLD NEW
#   --markdown FILE  the table as markdown (it is printed on stdout too)
#   --doc            puts the table into docs/BENCHMARKS.md
#
# Builds release once, installs the model for the benchmarks (cached, as
# scripts/test.sh does), then runs the cargo bench targets with
# GOLDFISH_BENCH_ROWS set: each prints its own table (kept in target/bench/)
# and appends its numbers there, and scripts/bench_table.py merges them.
# GOLDFISH_BENCH_SIZES, GOLDFISH_BENCH_VECTORS and GOLDFISH_BENCH_LINES
# override the sizes of a full run.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
json=""
markdown=""
doc=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --json) json="${2:?--json needs a file}"; shift ;;
        --markdown) markdown="${2:?--markdown needs a file}"; shift ;;
        --doc) doc=docs/BENCHMARKS.md ;;
        -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

# Release builds go where cargo puts them (CARGO_TARGET_DIR, else target/).
release=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release
out=target/bench
mkdir -p "$out"
rows="$PWD/$out/rows.jsonl"
: >"$rows"
load() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?"; }

echo "building release…" >&2
cargo build --release --locked --quiet --bin goldfish
cargo bench --workspace --locked --no-run --quiet 2>"$out/build.log"
export GOLDFISH_TEST_MODEL_HOME="${GOLDFISH_TEST_MODEL_HOME:-$PWD/target/model-home}"
GOLDFISH_HOME="$GOLDFISH_TEST_MODEL_HOME" "$release/goldfish" model install >/dev/null 2>>"$out/build.log"
GOLDFISH_HOME="$GOLDFISH_TEST_MODEL_HOME" "$release/goldfish" model install --capture >/dev/null 2>>"$out/build.log"

export GOLDFISH_BENCH_ROWS="$rows"
export GOLDFISH_BENCH_BIN="$release/goldfish"
if [ "$quick" = 1 ]; then
    export GOLDFISH_BENCH_QUICK=1
    export GOLDFISH_BENCH_SIZES=1000,10000
    export GOLDFISH_BENCH_VECTORS=10000
    export GOLDFISH_BENCH_LINES=1000,10000
    mode=quick
else
    mode=full
fi

load_start=$(load)
started=$SECONDS
run() {
    local name=$1
    shift
    local start=$SECONDS
    printf '%-8s' "$name" >&2
    if ! cargo bench --locked --quiet "$@" >"$out/$name.md" 2>"$out/$name.log"; then
        echo " failed; see $out/$name.log" >&2
        tail -n 20 "$out/$name.log" >&2
        exit 1
    fi
    echo " $((SECONDS - start)) s" >&2
}
run merge -p goldfish-log --bench merge
run sync --bench sync
run clone --bench clone
run embed --bench embed
# MCP before the 1M recall and vector sizes: after them (gigabytes of
# indexes written) its rows read 1.5-2x slower than in a run of its own.
run mcp --bench mcp
run recall --bench recall
run ui --bench ui
run vectors --bench vectors
run capture --features capture-model --bench capture

seconds=$((SECONDS - started))
load_end=$(load)
note=""
busy=$(awk -v l="$load_start" -v c="$(nproc)" 'BEGIN { print (l + 0 > c / 2) ? 1 : 0 }')
if [ "$mode" = quick ]; then note="quick run (1k and 10k only)"; fi
if [ "$busy" = 1 ]; then note="${note:+$note, }machine busy (load average $load_start at the start on $(nproc) cores): numbers are noisy"; fi

python3 scripts/bench_table.py "$rows" \
    --meta mode="$mode" \
    --meta date="$(date -u +%Y-%m-%dT%H:%MZ)" \
    --meta seconds="$seconds" \
    --meta load_start="$load_start" \
    --meta load_end="$load_end" \
    --meta note="$note" \
    --json "${json:-$out/results.json}" \
    ${markdown:+--markdown "$markdown"} \
    ${doc:+--doc "$doc"}
