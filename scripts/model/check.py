#!/usr/bin/env python3
"""Check an installed model and ONNX Runtime library.

Usage: check.py MODEL_DIR LIB_DIR   (run with the private env's python)

- LIB_DIR/libonnxruntime.so.1.31.1 loads, reports version 1.31.1 and offers
  C API level 30 (what the Rust `ort` crate's `api-30` feature asks for).
- MODEL_DIR/{model.onnx,tokenizer.json}, run with the Python onnxruntime
  package, reproduce the sentence-transformers quickstart similarities of
  all-MiniLM-L6-v2 within 5e-4.

Prints one line per check; exits non-zero if any fails.
"""

import ctypes
import sys
from pathlib import Path

from embed import embed, load_session, load_tokenizer

ORT_LIB = "libonnxruntime.so.1.31.1"
ORT_VERSION = "1.31.1"
ORT_API_LEVEL = 30

# sentence-transformers quickstart, all-MiniLM-L6-v2.
SENTENCES = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
EXPECTED = {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411}
TOLERANCE = 5e-4


class OrtApiBase(ctypes.Structure):
    """struct OrtApiBase from onnxruntime_c_api.h."""

    _fields_ = [
        ("GetApi", ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint32)),
        ("GetVersionString", ctypes.CFUNCTYPE(ctypes.c_char_p)),
    ]


def check_library(lib_dir):
    lib = ctypes.CDLL(str(Path(lib_dir) / ORT_LIB))
    lib.OrtGetApiBase.restype = ctypes.POINTER(OrtApiBase)
    base = lib.OrtGetApiBase().contents
    version = base.GetVersionString().decode()
    has_api = base.GetApi(ORT_API_LEVEL) is not None
    ok = version == ORT_VERSION and has_api
    print(
        f"{'ok  ' if ok else 'FAIL'} {ORT_LIB}: version {version}, C API {ORT_API_LEVEL} "
        f"{'available' if has_api else 'missing'}"
    )
    return ok


def check_model(model_dir):
    vectors = embed(load_session(model_dir, threads=1), load_tokenizer(model_dir), SENTENCES)
    ok = True
    for (a, b), want in EXPECTED.items():
        got = float(vectors[a] @ vectors[b])
        good = abs(got - want) <= TOLERANCE
        ok &= good
        print(
            f"{'ok  ' if good else 'FAIL'} cos({SENTENCES[a]!r}, {SENTENCES[b]!r}) = "
            f"{got:.6f} (expected {want:.4f})"
        )
    return ok


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check.py MODEL_DIR LIB_DIR")
    ok = check_library(sys.argv[2])
    ok &= check_model(sys.argv[1])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
