#!/usr/bin/env python3
"""How many of a question's words a workspace's log uses at all, against
how similar its closest memory is: a prototype of a "nothing relevant"
signal (issue 29, point 5), measured offline.

    python3 scripts/eval/longmemeval.py --sample 36 --sets offtopic,longmemeval,fixtures \
        --modes hybrid --json off.json
    python3 scripts/eval/vocab_share.py off.json [--home ~/.cache/goldfish/longmemeval]

A question's share is the part of its words (three letters or more, no
stop word, compared by their first five letters) that occur anywhere in the
workspace's memory files. Prints, for a grid of (share, similarity) floors,
how many on-topic questions (LongMemEval sample, fixtures/eval) and how many
off-topic asks (fixtures/offtopic) a rule "share below K and best similarity
below S: nothing relevant" would refuse.
"""

import argparse
import glob
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STOP = set(
    """a an the and or but if of to in on at by for with from as is are was were be been being do does did done
    have has had i you he she it we they me my our your their this that these those what which who whom whose when
    where why how not no yes can could should would will shall may might must there here about into over under than
    then so such very just also too only any some all each every most more other another same own up down out off
    again once get got make made use used using go went gone its""".split()
)


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in STOP]


def vocabulary(path: Path, cache: dict) -> set[str]:
    if path not in cache:
        known = set()
        for name in glob.glob(str(path / ".goldfish" / "memories" / "*.jsonl")):
            for line in open(name, encoding="utf-8"):
                try:
                    known.update(w[:5] for w in words(json.loads(line).get("content", "")))
                except (json.JSONDecodeError, AttributeError):
                    continue
        cache[path] = known
    return cache[path]


def share(question: str, path: Path, cache: dict) -> float:
    asked = words(question)
    known = vocabulary(path, cache)
    return sum(w[:5] in known for w in asked) / len(asked) if asked else 1.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", type=Path, help="longmemeval.py --json output with offtopic, longmemeval, fixtures")
    parser.add_argument("--home", type=Path, default=Path.home() / ".cache" / "goldfish" / "longmemeval")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "longmemeval-s-dev")
    args = parser.parse_args()
    spaces = args.home / "workspaces"
    sets = {s["set"]: s for s in json.loads(args.results.read_text())}
    offtopic = json.loads((ROOT / "fixtures" / "offtopic" / "questions.json").read_text())
    lme = {json.loads(l)["question_id"]: json.loads(l) for l in (args.data / "questions.jsonl").open()}
    fixtures = {q["id"]: q for q in json.loads((ROOT / "fixtures" / "eval" / "questions.json").read_text())}
    cache: dict = {}
    rows = []  # (on-topic?, where, share, best similarity)
    best = lambda q: max([h.get("similarity") or 0 for h in q["hits"]] or [0])
    for q in sets.get("off-topic", {}).get("per_question", []):
        n, asked_of = q["id"][3:].split("@")
        path = spaces / "fixtures-eval" if q["type"] == "fixtures/eval" else spaces / "longmemeval" / asked_of
        rows.append((False, q["type"], share(offtopic[int(n)]["question"], path, cache), best(q)))
    for q in sets.get("LongMemEval_S dev", {}).get("per_question", []):
        rows.append((True, "LongMemEval", share(lme[q["id"]]["question"], spaces / "longmemeval" / q["id"], cache), best(q)))
    for q in sets.get("fixtures/eval", {}).get("per_question", []):
        rows.append((True, "fixtures/eval", share(fixtures[q["id"]]["question"], spaces / "fixtures-eval", cache), best(q)))
    on = [r for r in rows if r[0]]
    off = [r for r in rows if not r[0]]
    print("| share below | similarity below | on-topic refused | off-topic refused (fixtures/eval) | off-topic refused (LongMemEval) |")
    print("|---:|---:|---:|---:|---:|")
    for k in (0.34, 0.5, 0.6):
        for s in (1.0, 0.4, 0.3):
            refused = lambda r: r[2] < k and r[3] < s
            fx = [r for r in off if r[1] == "fixtures/eval"]
            lm = [r for r in off if r[1] != "fixtures/eval"]
            print(f"| {k} | {s} | {sum(map(refused, on))}/{len(on)} | {sum(map(refused, fx))}/{len(fx)} | {sum(map(refused, lm))}/{len(lm)} |")


if __name__ == "__main__":
    main()
