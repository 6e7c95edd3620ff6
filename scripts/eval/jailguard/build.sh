#!/bin/sh
# Builds the jailguard scorer outside the goldfish workspace (CI never builds
# it). ONNX Runtime comes from PyPI's `onnxruntime` wheel, not ort's own
# download: ORT_LIB_LOCATION names a folder holding its libonnxruntime.so.
#   ORT_LIB_LOCATION=/tmp/jg-ort/lib sh scripts/eval/jailguard/build.sh
set -eu
cd "$(dirname "$0")"
: "${ORT_LIB_LOCATION:?a folder with libonnxruntime.so (PyPI onnxruntime 1.20.x, capi/)}"
export ORT_LIB_LOCATION ORT_PREFER_DYNAMIC_LINK=1
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/jg-target}"
nice -n 19 cargo build --release -j 2
echo "$CARGO_TARGET_DIR/release/jailguard-eval"
