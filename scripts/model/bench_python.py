#!/usr/bin/env python3
"""Embedding throughput of the installed model with Python onnxruntime.

Usage: bench_python.py MODEL_DIR   (run with the private env's python)
       bench_python.py --texts      (print the texts as a JSON list, for the
                                     Rust benchmark to embed the same ones)

Embeds 256 fixed one-to-three-sentence texts about software work in batches
of 32 (or the manifest's `batch`), tokenization included, with 1 and 2 intra-op threads; one warm-up
pass, then the median of 3 timed passes. Prints JSON on stdout. A baseline
for the Rust embedder, which runs the same model through the same library.
"""

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from embed import embed, load_session, load_tokenizer, ort

N_TEXTS = 256
BATCH = 32
THREADS = [1, 2]
RUNS = 3

COMPONENTS = [
    "the auth middleware",
    "the billing worker",
    "the search indexer",
    "the CI pipeline",
    "the session cache",
    "the GraphQL gateway",
    "the migration runner",
    "the upload service",
    "the feature-flag client",
    "the notification queue",
    "the sqlite store",
    "the CLI parser",
]
PROBLEMS = [
    "accepted expired JWTs after the clock skew change",
    "leaked file descriptors under load",
    "retried non-idempotent writes and double-charged a customer",
    "took 4 seconds per query once the table passed a million rows",
    "deadlocked when two deploys ran at the same time",
    "dropped messages whenever the broker restarted",
    "returned stale results for ten minutes after an update",
    "crashed on empty input instead of returning an error",
    "logged full request bodies, including passwords",
    "ignored the timeout setting and hung forever",
    "broke on Windows paths with spaces",
]
FIXES = [
    "We now validate the exp claim against server time with a 30 second leeway.",
    "The fix closes the handle in a finally block and adds a regression test.",
    "Writes carry an idempotency key and the ledger rejects duplicates.",
    "Adding a composite index on (tenant_id, created_at) brought it under 20 ms.",
    "An advisory lock around the migration step serialises deploys.",
    "Consumers now ack only after the handler commits.",
    "Cache entries are invalidated on write instead of relying on the TTL.",
    "Empty input is rejected with a clear message before parsing starts.",
    "Request bodies are redacted by a logging filter.",
    "The HTTP client reads the timeout from config and defaults to 10 seconds.",
]
NOTES = [
    "Keep this in mind before touching the retry logic.",
    "Ask the platform team before changing the defaults.",
    "The integration test in tests/e2e covers the failure mode now.",
    "Rolling back is safe; the schema change is additive.",
    "Same root cause as the incident in March.",
    "Do not remove the workaround until the upstream release ships.",
    "Benchmarks are in the PR description.",
]


def texts():
    """N_TEXTS deterministic texts of one to three sentences."""
    out = []
    for i in range(N_TEXTS):
        component = COMPONENTS[i % len(COMPONENTS)].capitalize()
        sentences = [f"{component} {PROBLEMS[(i * 7) % len(PROBLEMS)]}."]
        if i % 3 >= 1:
            sentences.append(FIXES[(i * 5) % len(FIXES)])
        if i % 3 == 2:
            sentences.append(NOTES[(i * 3) % len(NOTES)])
        out.append(" ".join(sentences))
    return out


def main():
    if sys.argv[1:] == ["--texts"]:
        print(json.dumps(texts()))
        return
    if len(sys.argv) != 2:
        sys.exit("usage: bench_python.py MODEL_DIR")
    tokenizer = load_tokenizer(sys.argv[1])
    corpus = texts()
    # The texts a run holds: the manifest's `batch` when it has one (1 for
    # the int8 model), as goldfish runs it.
    manifest = Path(sys.argv[1]) / "manifest.json"
    batch = json.loads(manifest.read_text()).get("batch", BATCH) if manifest.is_file() else BATCH
    batches = [corpus[i : i + batch] for i in range(0, N_TEXTS, batch)]
    lengths = [sum(e.attention_mask) for e in tokenizer.encode_batch(corpus)]  # unpadded

    results = {}
    for threads in THREADS:
        session = load_session(sys.argv[1], threads)
        rates = []
        for run in range(RUNS + 1):  # run 0 warms up
            start = time.perf_counter()
            for batch in batches:
                embed(session, tokenizer, batch)
            if run:
                rates.append(round(N_TEXTS / (time.perf_counter() - start), 1))
        results[str(threads)] = {"texts_per_s": statistics.median(rates), "runs": rates}

    print(
        json.dumps(
            {
                "onnxruntime": ort.__version__,
                "texts": N_TEXTS,
                "batch_size": batch,
                "tokens_per_text": {"mean": round(float(np.mean(lengths)), 1), "max": max(lengths)},
                "intra_op_threads": results,
            }
        )
    )


if __name__ == "__main__":
    main()
