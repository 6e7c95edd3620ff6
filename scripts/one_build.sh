#!/usr/bin/env bash
# Checks that the README's three steps can share one compilation of the
# dependency graph: every dependency of the goldfish binary has the same
# features in `cargo build --bin goldfish` (the demo, `cargo install`) as in
# `cargo test --workspace` (scripts/test.sh, a plain `cargo test`), so the
# tests link the very library the demo compiled. A dev-dependency that turns on a feature of a
# shared crate (resolver 2 applies it to test builds only) makes that crate
# and everything above it compile twice; this names the crate. No compiling:
# it reads `cargo tree`.
set -euo pipefail
cd "$(dirname "$0")/.."

features() { # crates (not this workspace's) with their features, one a line
    cargo tree --locked --prefix none -f '{p} [{f}]' "$@" |
        grep -v ' (/' | sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u
}
binary=$(features -p goldfish -e normal,build)
status=0
for test_build in "--workspace"; do
    # shellcheck disable=SC2086 # the options are words
    tests=$(features $test_build -e normal,build,dev)
    # A crate of the binary's graph listed by the test build with other features.
    split=$(comm -13 <(echo "$binary") <(echo "$tests") |
        awk 'NR == FNR { seen[$1 " " $2] = 1; next } seen[$1 " " $2]' \
            <(echo "$binary") -)
    if [[ -n $split ]]; then
        echo "\`cargo test $test_build\` compiles these with other features than \`cargo build\`:" >&2
        comm -3 <(echo "$binary") <(echo "$tests") |
            awk 'NR == FNR { split_[$1 " " $2] = 1; next }
                 { side = sub(/^\t/, "") ? "test: " : "build:" }
                 split_[$1 " " $2] { print "  " side " " $0 }' <(echo "$split") - >&2
        status=1
    fi
done
[[ $status == 0 ]] && echo "one build: the tests' dependency graph has the binary's features"
exit "$status"
