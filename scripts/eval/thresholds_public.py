#!/usr/bin/env python3
"""The cosine thresholds, chosen per model on public labelled pairs.

goldfish judges with five cosines between two memories: store's
near-duplicate warning (`DUPLICATE`), `show`'s similar list (`SIMILAR`),
supersession asked (`ASK`) and linked (`LINK`, also recall's "newer wins").
They were chosen on the fp32 model and mostly on pairs we wrote. This
script scores each threshold on pairs labelled by others, for every model
named, and prints per threshold a table of precision and recall at each
cosine, on a tuning half and a test half split by source:

- tune: SemEval STS 2016 question-question and answer-answer (Stack
  Exchange, CC BY-SA 3.0), STS 2016 plagiarism, STS 2015 answers-students;
- test: STS 2016 headlines and post-editing, STS 2015 images, and the
  Microsoft Research Paraphrase Corpus's 500 validation pairs (news).

STS pairs carry a gold similarity of 0 to 5. "Duplicate" (for DUPLICATE,
SIMILAR, LINK) is gold >= 4 ("mostly equivalent, unimportant details
differ"), MSRP's own label on MSRP; "same subject" (for ASK, which only
decides which pairs the judge reads) is gold >= 3 ("roughly equivalent,
some important information differs": what an update is).

The rule that picks a model's threshold is fixed here, before any run:
for a precision judgement (DUPLICATE, SIMILAR, LINK) the lowest cosine
whose tuning-half precision is at least the fp32 threshold's tuning-half
precision; for ASK the highest cosine whose tuning-half recall is at
least fp32's. The test half is read only to be printed.

The data is not committed (its licences ask for attribution per author):
`--sts` names a git directory of github.com/brmson/dataset-sts (the
`fetch` tool leaves it at /work/.mirror/brmson+dataset-sts/repo/.git).
Cosines come from `cargo run --release --example pair_cosines`, one run per
model (`GOLDFISH_MODEL`), cached in `--cache`.

    python3 scripts/eval/thresholds_public.py --models all-MiniLM-L6-v2,all-MiniLM-L6-v2-int8
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TUNE = [
    "data/sts/semeval-sts/2016/question-question.test.tsv",
    "data/sts/semeval-sts/2016/answer-answer.test.tsv",
    "data/sts/semeval-sts/2016/plagiarism.test.tsv",
    "data/sts/semeval-sts/2015/answers-students.test.tsv",
]
TEST = [
    "data/sts/semeval-sts/2016/headlines.test.tsv",
    "data/sts/semeval-sts/2016/postediting.test.tsv",
    "data/sts/semeval-sts/2015/images.test.tsv",
    "data/para/msr/msr-para-val.tsv",
]
# name, fp32 value, kind ("precision": flag duplicates; "recall": keep
# candidates), label band.
THRESHOLDS = [
    ("DUPLICATE (store)", 0.85, "precision", "duplicate"),
    ("SIMILAR (show, similar)", 0.80, "precision", "duplicate"),
    ("LINK (capture's link, newer wins)", 0.80, "precision", "duplicate"),
    ("ASK (supersession asked)", 0.55, "recall", "subject"),
]
FP32 = "all-MiniLM-L6-v2"


def git_show(gitdir, path):
    return subprocess.run(
        ["git", "--git-dir", gitdir, "show", f"HEAD:{path}"],
        check=True, capture_output=True, text=True,
    ).stdout


def read_pairs(gitdir, paths, half):
    pairs = []
    for path in paths:
        text = git_show(gitdir, path)
        source = path.split("/")[-2] + "/" + Path(path).stem.replace(".test", "")
        for number, line in enumerate(text.splitlines(), 1):
            fields = line.split("\t")
            if "msr-para" in path:
                if number == 1:
                    continue
                gold, a, b = fields[0], fields[3], fields[4]
                duplicate = subject = gold == "1"
            else:
                if len(fields) < 3 or not fields[0].strip():
                    continue  # a pair the task left unscored
                gold, a, b = float(fields[0]), fields[1], fields[2]
                duplicate, subject = gold >= 4.0, gold >= 3.0
            a, b = " ".join(a.split()), " ".join(b.split())
            if not a or not b:
                continue
            pairs.append({"id": f"{half}:{source}:{number}", "a": a, "b": b,
                          "duplicate": duplicate, "subject": subject,
                          "source": source, "half": half})
    return pairs


def ours():
    """Our labelled pairs, for the same tables (not used to choose)."""
    pairs = []
    for number, line in enumerate((ROOT / "fixtures/similar/pairs.jsonl").read_text().splitlines(), 1):
        row = json.loads(line)
        pairs.append({"id": f"ours:similar:{number}", "a": row["a"], "b": row["b"],
                      "duplicate": bool(row.get("paraphrase")), "subject": None,
                      "source": "similar", "half": "ours"})
    for number, line in enumerate((ROOT / "fixtures/supersede/pairs.jsonl").read_text().splitlines(), 1):
        row = json.loads(line)
        label = row["label"]
        pairs.append({"id": f"ours:supersede:{number}", "a": row["older"], "b": row["newer"],
                      "duplicate": label == "paraphrase" if label != "update" else None,
                      "subject": label in ("update", "paraphrase"),
                      "source": "supersede", "half": "ours"})
    return pairs


def cosines(pairs, model, cache):
    path = Path(cache) / f"{model}.tsv"
    known = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, value = line.split("\t")
            known[key] = float(value)
    missing = [p for p in pairs if p["id"] not in known]
    if missing:
        feed = "".join(f"{p['id']}\t{p['a']}\t{p['b']}\n" for p in missing)
        env = dict(os.environ, GOLDFISH_MODEL=model)
        out = subprocess.run(
            ["cargo", "run", "--quiet", "--release", "--locked", "--example", "pair_cosines"],
            cwd=ROOT, input=feed, capture_output=True, text=True, env=env, check=True,
        ).stdout
        with path.open("a") as f:
            f.write(out)
        for line in out.splitlines():
            key, value = line.split("\t")
            known[key] = float(value)
    return {p["id"]: known[p["id"]] for p in pairs}


def score(pairs, cos, threshold, band):
    rows = [p for p in pairs if p[band] is not None]
    flagged = [p for p in rows if cos[p["id"]] >= threshold - 1e-9]
    hits = sum(1 for p in flagged if p[band])
    positives = sum(1 for p in rows if p[band])
    precision = hits / len(flagged) if flagged else 1.0
    recall = hits / positives if positives else 1.0
    return precision, recall, hits, len(flagged), positives


def choose(pairs, cos, fp32cos, value, kind, band):
    p0, r0, *_ = score(pairs, fp32cos, value, band)
    grid = [round(0.30 + 0.01 * i, 2) for i in range(0, 67)]
    if kind == "precision":
        ok = [t for t in grid if score(pairs, cos, t, band)[0] >= p0 - 1e-9]
        return min(ok) if ok else value
    ok = [t for t in grid if score(pairs, cos, t, band)[1] >= r0 - 1e-9]
    return max(ok) if ok else value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sts", default="/work/.mirror/brmson+dataset-sts/repo/.git")
    parser.add_argument("--models", default=f"{FP32},all-MiniLM-L6-v2-int8")
    parser.add_argument("--cache", default="target/thresholds-public")
    parser.add_argument("--json", help="write the chosen thresholds here")
    args = parser.parse_args()
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    tune, test = read_pairs(args.sts, TUNE, "tune"), read_pairs(args.sts, TEST, "test")
    own = ours()
    everything = tune + test + own
    models = args.models.split(",")
    cos = {m: cosines(everything, m, args.cache) for m in models}
    print(f"pairs: tune {len(tune)} ({sum(p['duplicate'] for p in tune)} duplicates, "
          f"{sum(p['subject'] for p in tune)} same subject); test {len(test)} "
          f"({sum(p['duplicate'] for p in test)}, {sum(p['subject'] for p in test)}); ours {len(own)}\n")
    chosen = {}
    for name, value, kind, band in THRESHOLDS:
        print(f"### {name}: fp32 {value:.2f}, {band} pairs, {kind} kept\n")
        picks = {m: value if m == FP32 else choose(tune, cos[m], cos[FP32], value, kind, band) for m in models}
        chosen[name] = picks
        print("| model | cosine | tune P | tune R | test P | test R | ours P | ours R |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for m in models:
            candidates = sorted({value, picks[m], round(picks[m] - 0.01, 2), round(value - 0.02, 2), round(value + 0.02, 2)})
            for t in candidates:
                cells = []
                for half in (tune, test, own):
                    p, r, *_ = score(half, cos[m], t, band)
                    cells += [f"{p:.3f}", f"{r:.3f}"]
                mark = " **(chosen)**" if t == picks[m] else ""
                print(f"| {m} | {t:.2f}{mark} | " + " | ".join(cells) + " |")
        print()
    if args.json:
        Path(args.json).write_text(json.dumps(chosen, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
