#!/usr/bin/env python3
"""How many of the same memories two runs of longmemeval.py put in each
question's top 10: the check that a change meant to keep rankings (compact
vectors, another build of the model) keeps them.

Usage: top10_overlap.py OLD.json NEW.json   (each from `longmemeval.py --json`)

For each set and ranking both runs have, per question: |top10(old) ∩
top10(new)| / |top10(old)| (questions where the old run found nothing are
left out), then the mean, the minimum and how many questions have the same
top 10 in the same order. Python 3.11, standard library only.
"""

import json
import sys
from collections import defaultdict


def load(path: str) -> dict:
    runs = {}
    for result in json.load(open(path)):
        for row in result["per_question"]:
            if row["hits"] and "id" not in row["hits"][0]:
                sys.exit(f"{path}: hits carry no ids (written by an older longmemeval.py)")
            runs[(row["set"], row["mode"], row["id"])] = [hit["id"] for hit in row["hits"][:10]]
    return runs


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    old, new = load(sys.argv[1]), load(sys.argv[2])
    groups = defaultdict(list)
    for key, before in old.items():
        after = new.get(key)
        if after is None or not before:
            continue
        overlap = len(set(before) & set(after)) / len(before)
        groups[key[:2]].append((overlap, before == after))
    print("| set | ranking | questions | top-10 overlap (mean) | lowest | same order |")
    print("|---|---|---:|---:|---:|---:|")
    for (name, mode), rows in sorted(groups.items()):
        mean = sum(o for o, _ in rows) / len(rows)
        same = sum(1 for _, s in rows if s)
        print(f"| {name} | {mode} | {len(rows)} | {mean:.4f} | {min(o for o, _ in rows):.2f} | {same}/{len(rows)} |")


if __name__ == "__main__":
    main()
