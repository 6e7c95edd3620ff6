#!/usr/bin/env python3
"""Write fixtures/embeddings/reference.json: token ids and embeddings to test the Rust embedder.

Usage: make_reference.py MODEL_DIR [OUT_FILE]   (run with the private env's python)

For each fixed text: its token ids (tokenizer.json with the padding and
truncation overrides of embed.py) and its 384-dim L2-normalised embedding
from Python onnxruntime on MODEL_DIR/model.onnx, each text embedded alone
with one thread, floats rounded to 8 significant digits. Also the cosine
similarities of the sentence-transformers quickstart pairs. The file is
deterministic for a given model and CPU; the Rust side compares within the
tolerance written in it.
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from embed import MAX_TOKENS, embed, load_session, load_tokenizer

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "fixtures" / "embeddings" / "reference.json"
TOLERANCE = 1e-5

PARAGRAPH = (
    "When the payment service restarts during a deploy, in-flight requests to the "
    "ledger can time out, and the retry middleware replays them without an "
    "idempotency key. We saw duplicate charges in staging twice last week. The fix "
    "is to generate the key at the API gateway, persist it with the transaction, and "
    "have the ledger reject any write whose key it has already committed. Backfill "
    "keys for pending transactions before turning the check on, or old retries will "
    "fail."
)

TEXTS = [
    # sentence-transformers quickstart (indices 0-2, see SIMILARITIES)
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    # software work
    "fixed JWT validation accepting expired tokens",
    "slow database query latency",
    "transaction rollback on write failure",
    "fn load_config(path: &Path) -> Result<Config, Error> panics on an empty file",
    # ~80 words
    PARAGRAPH,
    # unicode: accents stripped (lowercase normalizer), em dash kept, CJK one token per character
    "café naïve résumé — 東京",
    # longer than MAX_TOKENS: checks truncation
    " ".join([PARAGRAPH] * 4),
]
SIMILARITIES = [(0, 1), (0, 2), (1, 2)]


def sha256_of(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def floats(values):
    """A JSON array of floats with 8 significant digits."""
    return "[" + ", ".join(f"{v:.8g}" for v in values) + "]"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: make_reference.py MODEL_DIR [OUT_FILE]")
    model_dir = Path(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) == 3 else DEFAULT_OUT

    tokenizer = load_tokenizer(model_dir)
    session = load_session(model_dir, threads=1)
    vectors = np.concatenate([embed(session, tokenizer, [text]) for text in TEXTS])

    # The same texts in one padded batch must give the same vectors, or the
    # fixture would depend on how the Rust side batches.
    batched = embed(session, tokenizer, TEXTS)
    drift = float(np.abs(batched - vectors).max())
    assert drift < TOLERANCE / 10, f"batched and single embeddings differ by {drift}"

    header = {
        "about": "all-MiniLM-L6-v2 reference embeddings, by scripts/model/make_reference.py",
        "model_onnx_sha256": sha256_of(model_dir / "model.onnx"),
        "tokenizer_sha256": sha256_of(model_dir / "tokenizer.json"),
        "tokenizer": {"padding": "batch_longest", "truncation": MAX_TOKENS},
        "pooling": "mean of last_hidden_state over attention_mask, then L2 normalisation",
        "tolerance": TOLERANCE,
        "similarities": [
            {"a": a, "b": b, "cosine": float(f"{float(vectors[a] @ vectors[b]):.8g}")}
            for a, b in SIMILARITIES
        ],
    }
    lines = ["{"] + [
        f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in header.items()
    ]
    entries = [
        f'    {{"text": {json.dumps(text, ensure_ascii=False)},\n'
        f'     "input_ids": {json.dumps(tokenizer.encode(text).ids)},\n'
        f'     "embedding": {floats(vector)}}}'
        for text, vector in zip(TEXTS, vectors, strict=True)
    ]
    lines += ['  "texts": [', ",\n".join(entries), "  ]", "}"]
    text = "\n".join(lines) + "\n"

    # The rounded file must still match what was computed.
    parsed = json.loads(text)
    assert np.abs(np.array([t["embedding"] for t in parsed["texts"]]) - vectors).max() < 1e-7

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(
        f"wrote {out}: {len(TEXTS)} texts, {len(text.encode())} bytes, "
        f"batched-vs-single max diff {drift:.1e}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
