#!/usr/bin/env python3
"""How large a log must be before a question's words missing from it say
the question is unrelated (issue 29, point 5): the vocabulary condition of
recall's "nothing relevant" judgement, measured offline.

    python3 scripts/eval/vocab_size.py [--orders 10] [--data DIR]

For every on-topic question of fixtures/eval/ (71) and of LongMemEval_S's
development split (196), a log grows from the question's answer memories
alone, one other memory of its workspace at a time in a random order (the
other memories of fixtures/eval, the other turns of the question's
haystack), `--orders` times. Where a log first reaches a vocabulary of V
(distinct first-five-letters of its words: three letters or more, no stop
word, as `crates/goldfish-core/src/relevance.rs` counts them), it notes whether the
question's share (its words the log holds) is below K. A rule "share below
K in a log of V distinct words or more: nothing relevant" refuses an
on-topic question in each such log: the script prints, per set, how many
of the logs it would refuse for a grid of K and V, and the README demo
log's vocabulary. (Its own words: the Python tokenizer splits on
non-letters as the product does, up to details of Unicode.)
"""

import argparse
import gzip
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The stop words of `crates/goldfish-core/src/relevance.rs`, as vocab_share.py has them.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from vocab_share import STOP  # noqa: E402

SHARES = (0.01, 0.2, 0.34, 0.5)
SIZES = (0, 100, 300, 500, 1000, 1500, 2000, 3000)
DEMO = [
    "Chose SQLite in WAL mode for the ledger cache: readers never block the writer",
    "Fixed JWT validation accepting expired tokens: exp was compared in ms against s",
    "The flaky payments test was a race on the shared Postgres port 5433",
    "Refund flow: API done, webhooks next (see src/refunds/)",
]


def words(text: str) -> list[str]:
    found = [w for w in re.findall(r"\w+", text.lower()) if w.replace("_", "")]
    return [w[:5] for part in found for w in part.split("_") if len(w) >= 3 and w not in STOP]


def share(question: list[str], known: set[str]) -> float:
    return sum(w in known for w in question) / len(question) if question else 1.0


def grow(question: str, answers: list[str], others: list[str], orders: int, rng: random.Random, counts: dict) -> None:
    """Grows `orders` logs from the answers, one other memory at a time in a
    random order; where a log first reaches each of SIZES distinct words,
    counts whether the question's share is below each of SHARES."""
    asked = words(question)
    for _ in range(orders):
        known = set()
        for text in answers:
            known.update(words(text))
        order = others[:]
        rng.shuffle(order)
        pending = list(SIZES)

        def note() -> None:
            while pending and len(known) >= pending[0]:
                size = pending.pop(0)
                part = share(asked, known)
                for k in SHARES:
                    counts[(k, size)][0] += part < k
                    counts[(k, size)][1] += 1

        note()
        for text in order:
            if not pending:
                break
            known.update(words(text))
            note()


def table(name: str, counts: dict) -> None:
    print(f"\n**{name}**: on-topic logs refused (share below K at a vocabulary of at least V)\n")
    print("| V | " + " | ".join(f"K = {k}" for k in SHARES) + " |")
    print("|---:|" + "---:|" * len(SHARES))
    for size in SIZES:
        cells = [f"{counts[(k, size)][0]}/{counts[(k, size)][1]}" for k in SHARES]
        print(f"| {size} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--orders", type=int, default=10)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "longmemeval-s-dev")
    args = parser.parse_args()
    rng = random.Random(29)
    demo = set()
    for text in DEMO:
        demo.update(words(text))
    print(f"README demo log: vocabulary {len(demo)}; 'login problems' share {share(words('login problems'), demo):.2f}")

    memories = [json.loads(l) for l in (ROOT / "fixtures" / "eval" / "memories.jsonl").read_text().splitlines() if l.strip()]
    content = {m["id"]: m["content"] + " " + " ".join(m.get("tags", [])) for m in memories}
    full = set()
    for text in content.values():
        full.update(words(text))
    counts = {name: defaultdict(lambda: [0, 0]) for name in ("fixtures/eval", "LongMemEval_S dev")}
    for q in json.loads((ROOT / "fixtures" / "eval" / "questions.json").read_text()):
        answers = [content[i] for i in q["answers"] if i in content]
        others = [t for i, t in content.items() if i not in q["answers"]]
        grow(q["question"], answers, others, args.orders, rng, counts["fixtures/eval"])
    print(f"fixtures/eval log: vocabulary {len(full)}")

    questions = [json.loads(l) for l in (args.data / "questions.jsonl").open()]
    wanted = {s for q in questions for s in q["haystack_session_ids"]}
    sessions = {}
    with gzip.open(args.data / "sessions.jsonl.gz", "rt") as f:
        for line in f:
            s = json.loads(line)
            if s["session_id"] in wanted:
                sessions[s["session_id"]] = s
    sizes = []
    for q in questions:
        evidence = set(q["evidence_turns"])
        answers, others = [], []
        vocab = set()
        for sid in q["haystack_session_ids"]:
            for i, turn in enumerate(sessions[sid]["turns"]):
                text = turn["content"].strip()
                if not text:
                    continue
                vocab.update(words(text))
                (answers if f"{sid}:{i}" in evidence else others).append(text)
        sizes.append(len(vocab))
        grow(q["question"], answers, others, args.orders, rng, counts["LongMemEval_S dev"])
    sizes.sort()
    print(f"LongMemEval_S dev logs: vocabulary min {sizes[0]}, median {sizes[len(sizes) // 2]}")
    for name, by in counts.items():
        table(name, by)

if __name__ == "__main__":
    main()
