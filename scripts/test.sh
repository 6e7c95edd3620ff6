#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: unit tests, merge fixtures and
# property tests, and the integration tests (real git repositories in tempdirs).
# Needs only a Rust toolchain and git; everything else is fetched by cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

# Property tests: 1,000 cases per property unless told otherwise.
export PROPTEST_CASES="${PROPTEST_CASES:-1000}"

cargo test --workspace --locked "$@"
