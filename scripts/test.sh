#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: unit tests, merge fixtures and
# property tests, and the integration tests (real git repositories in tempdirs,
# the real embedding model, the viewer in a real browser). Needs a Rust
# toolchain, git, python3, and chromium with its WebDriver (Debian: `apt-get
# install chromium chromium-driver`); the model and ONNX Runtime come from
# PyPI through `goldfish model install` (cached).
#
# It builds what the demo and `cargo install --locked --path .` build (the
# release profile, README "One build"). `--capture-model` first adds the
# capture model's tests: the `capture-model` feature (candle, 35 more crates)
# and `goldfish model install --capture`. Other arguments go to the runner
# (`cargo nextest run`, or `cargo test` where nextest is not installed or
# GOLDFISH_TEST_RUNNER=cargo): test name filters, for example.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")

capture=()
if [[ ${1:-} == --capture-model ]]; then
    shift
    capture=(--features goldfish/capture-model)
fi

# The viewer's browser tests (tests/it/ui.rs, `#[ignore]`d for a plain
# `cargo test`) run below: without chromium they would fail one by one.
for tool in chromium chromedriver; do
    if ! command -v "$tool" >/dev/null; then
        echo "scripts/test.sh: $tool is not installed; the viewer's browser tests need it: apt-get install -y chromium chromium-driver" >&2
        exit 1
    fi
done

# Property tests: 1,000 cases per property unless told otherwise.
export PROPTEST_CASES="${PROPTEST_CASES:-1000}"

# The tests that need the model find it here (see tests/it/common.rs).
export GOLDFISH_TEST_MODEL_HOME="${GOLDFISH_TEST_MODEL_HOME:-$target/model-home}"
cargo build --release --locked --bin goldfish "${capture[@]}"
GOLDFISH_HOME="$GOLDFISH_TEST_MODEL_HOME" "$target/release/goldfish" model install
if [[ ${#capture[@]} -gt 0 ]]; then
    GOLDFISH_HOME="$GOLDFISH_TEST_MODEL_HOME" "$target/release/goldfish" model install --capture
fi

# The tests that need the model are `#[ignore]`d ("needs the real model"),
# so a plain `cargo test` passes on a fresh clone; here they run too. No
# feature turns them on, so the goldfish library the demo compiled is the
# one these tests link: after scripts/demo.sh this compiles the test
# binaries and the test-only crates, nothing else (README, "One build").
#
# cargo-nextest, where it is installed, runs every test in a process of its
# own, both cores busy across all test binaries, the slowest first
# (.config/nextest.toml): 5.2 minutes where `cargo test` took over 9 on 2
# cores (docs/BENCHMARKS.md, "Install and build"). It runs no doc tests; the
# crates have none, and CI's plain `cargo test` runs them.
if [[ -z ${GOLDFISH_TEST_RUNNER:-} ]] && cargo nextest --version >/dev/null 2>&1; then
    GOLDFISH_TEST_RUNNER=nextest
fi
if [[ ${GOLDFISH_TEST_RUNNER:-} == nextest ]]; then
    cargo nextest run --release --workspace --locked --no-fail-fast --run-ignored all \
        "${capture[@]}" "$@"
else
    cargo test --release --workspace --locked "${capture[@]}" "$@" -- --include-ignored
fi
