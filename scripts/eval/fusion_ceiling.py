#!/usr/bin/env python3
"""How far can any fusion of the keyword and vector lists go? A learned bound.

`fusion_offline.py` compares hand-made fusions. This script asks what the
best linear fusion of the same evidence would reach if it were fitted to
the answers: a logistic regression over every candidate of a question (the
union of the keyword and the vector top 50, as recall's), its label whether
the memory is evidence, its features what goldfish knows of a candidate:

- BM25 relative to the best match, and its square root;
- the cosine similarity (0 below zero), and the similarity rescaled over the
  candidates (least 0, most 1);
- its rank in each list, as 1 / (60 + rank) and 1 / (5 + rank) (0 outside);
- whether it lies in the question's time cue, whether it matched a word.

The model is fitted on one half of a set's questions and ranks the other
half (then the other way round: 2-fold cross-validation per set), and also
fitted on one set and ranked on the other, so a number here is never a
model scoring its own training answers. Turn R@10 per question type, beside
keyword ranking and the default fusion.

`--with-length` adds the memory's length (log of its characters). On
LongMemEval the evidence is mostly users' short turns and the distractors
the assistant's long answers, so length alone separates them there; it is
reported to show how much of a gain would be that set's shape, not recall.

Plain numpy (Newton's method on the L2-regularised, class-balanced logistic
loss); the same Python and cache as `fusion_offline.py`:
    ~/.cache/goldfish/model-build/venv/bin/python scripts/eval/fusion_ceiling.py --available
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fusion_offline as fo  # noqa: E402

L2 = 1e-2


def features(case: fo.Case, with_length: bool) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(features, labels, candidate indices) of one question."""
    everything = np.ones(len(case.docs), bool)
    kw = fo.ordered(case, case.bm25, case.bm25 > 0)[: fo.DEPTH]
    se = fo.ordered(case, case.cos, everything)[: fo.DEPTH]
    cand = sorted(set(kw) | set(se))
    kw_rank = {i: r for r, i in enumerate(kw)}
    se_rank = {i: r for r, i in enumerate(se)}
    best = max((case.bm25[i] for i in kw), default=0.0)
    low, high = min(case.cos[i] for i in cand), max(case.cos[i] for i in cand)
    rows = []
    for i in cand:
        relative = case.bm25[i] / best if best > 0 and i in kw_rank else 0.0
        row = [
            relative,
            np.sqrt(relative),
            max(case.cos[i], 0.0),
            (case.cos[i] - low) / (high - low) if high > low else 1.0,
            1 / (60 + kw_rank[i]) if i in kw_rank else 0.0,
            1 / (60 + se_rank[i]) if i in se_rank else 0.0,
            1 / (5 + kw_rank[i]) if i in kw_rank else 0.0,
            1 / (5 + se_rank[i]) if i in se_rank else 0.0,
            float(case.cue[i]),
            float(i in kw_rank),
        ]
        if with_length:
            row.append(np.log(max(len(case.docs[i]["text"]), 1)))
        rows.append(row)
    labels = np.array([case.docs[i]["label"] in case.evidence for i in cand], float)
    return np.array(rows, float), labels, cand


class Model:
    """A logistic regression fitted by Newton's method."""

    def __init__(self, cases: list[fo.Case], with_length: bool):
        parts = [features(c, with_length) for c in cases]
        x = np.vstack([p[0] for p in parts])
        y = np.concatenate([p[1] for p in parts])
        self.mean, self.std = x.mean(0), x.std(0) + 1e-9
        x = np.hstack([(x - self.mean) / self.std, np.ones((len(x), 1))])
        # Each class weighs as much as the other.
        weight = np.where(y > 0, len(y) / (2 * max(y.sum(), 1)), len(y) / (2 * max((1 - y).sum(), 1)))
        w = np.zeros(x.shape[1])
        for _ in range(50):
            p = 1 / (1 + np.exp(-(x @ w)))
            gradient = x.T @ (weight * (p - y)) / len(y) + L2 * w
            hessian = (x * (weight * p * (1 - p))[:, None]).T @ x / len(y) + L2 * np.eye(len(w))
            step = np.linalg.solve(hessian, gradient)
            w -= step
            if np.abs(step).max() < 1e-8:
                break
        self.w, self.with_length = w, with_length

    def rank(self, case: fo.Case) -> list[int]:
        x, _, cand = features(case, self.with_length)
        x = np.hstack([(x - self.mean) / self.std, np.ones((len(x), 1))])
        score = np.full(len(case.docs), -np.inf)
        score[cand] = x @ self.w
        mask = np.zeros(len(case.docs), bool)
        mask[cand] = True
        return fo.ordered(case, score, mask)[:10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    fo.arguments(parser)
    parser.add_argument("--with-length", action="store_true", help="also learn from each memory's length (shows LongMemEval's shape, not a ranking to ship)")
    args = parser.parse_args()
    cases = fo.load(args)
    by_set: dict[str, list[fo.Case]] = defaultdict(list)
    for case in cases:
        by_set[case.set].append(case)
    lme, fixtures = by_set["LongMemEval_S dev"], by_set["fixtures/eval"]
    learned: dict[str, dict[str, Model]] = {"half": {}, "set": {}}
    for set_ in (lme, fixtures):
        halves = (set_[0::2], set_[1::2])
        for n, half in enumerate(halves):
            model = Model(halves[1 - n], args.with_length)
            learned["half"].update({c.id: model for c in half})
    to_fixtures, to_lme = Model(lme, args.with_length), Model(fixtures, args.with_length)
    learned["set"].update({c.id: to_fixtures for c in fixtures})
    learned["set"].update({c.id: to_lme for c in lme})
    rankings = {
        "keyword": fo.RANKINGS["keyword"],
        "mix (default)": fo.RANKINGS["mix"],
        "learned, other half": lambda c: learned["half"][c.id].rank(c),
        "learned, other set": lambda c: learned["set"][c.id].rank(c),
    }
    rows: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for case in lme + fixtures:
        for name, rank in rankings.items():
            value = fo.metrics(case, rank(case))["turn_r10"]
            rows[(case.set, case.type, name)].append(value)
            rows[(case.set, "overall", name)].append(value)
    for set_ in (lme, fixtures):
        name = set_[0].set
        print(f"**{name}** ({len(set_)} questions), turn R@10{', with length' if args.with_length else ''}\n")
        print("| type | n | " + " | ".join(rankings) + " |")
        print("|---|---:|" + "---:|" * len(rankings))
        for kind in sorted({c.type for c in set_}) + ["overall"]:
            cells = [float(np.mean(rows[(name, kind, r)])) for r in rankings]
            label = f"**{kind}**" if kind == "overall" else kind
            print(f"| {label} | {len(rows[(name, kind, 'keyword')])} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")
        print()


if __name__ == "__main__":
    main()
