"""Sentence embeddings with the installed model, as sentence-transformers computes them.

Shared by check.py, make_reference.py and bench_python.py. Tokenize with
tokenizer.json (its Fixed-128 padding replaced by batch-longest padding,
truncation at 256 tokens as in the model's sentence_bert_config.json), run
model.onnx with onnxruntime, mean-pool last_hidden_state over the attention
mask and L2-normalise. The Rust embedder must do the same.
"""

import os
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

# ONNX Runtime 1.31's Linux build carries Microsoft 1DS telemetry: creating
# its environment writes a device id and an event store under
# $XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime/ (and would try to
# upload them). Only ORT_DISABLE_TELEMETRY=1, set before that environment
# exists, prevents it; DisableTelemetryEvents() afterwards is too late.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
import onnxruntime as ort  # noqa: E402

MAX_TOKENS = 256


def load_tokenizer(model_dir):
    tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tokenizer.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")  # no length: batch-longest
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    return tokenizer


def load_session(model_dir, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(
        str(Path(model_dir) / "model.onnx"), options, providers=["CPUExecutionProvider"]
    )


def embed(session, tokenizer, texts):
    """Return float32 [len(texts), 384] unit vectors for one batch of texts."""
    encodings = tokenizer.encode_batch(list(texts))
    feeds = {
        "input_ids": np.array([e.ids for e in encodings], np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], np.int64),
    }
    (hidden,) = session.run(["last_hidden_state"], feeds)
    mask = feeds["attention_mask"][..., None].astype(np.float32)
    pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return (pooled / norms).astype(np.float32)
