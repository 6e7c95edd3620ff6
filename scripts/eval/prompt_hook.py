#!/usr/bin/env python3
"""The prompt hook (`goldfish agent-hook user-prompt`) on public data and on
our fixtures: what it adds to an agent's context, and when it adds nothing.

Sets (each question is the prompt, given as Claude Code's
`UserPromptSubmit` payload, with `--explain`):

- on-topic, LongMemEval_S (development split, ../shared/eval/longmemeval-s-dev/,
  MIT): `--sample` questions, each in a repository of its answer sessions
  and `--distractors` other sessions of its haystack, one memory per turn
  (scripts/eval/longmemeval.py --write-fixture's format);
- on-topic, fixtures/eval/ (71 questions written for this project), its
  memories committed by their own authors' names (so none is quarantined);
- off-topic, fixtures/offtopic/ (38 questions whose answer is in none of
  the sets), each asked of fixtures/eval and of three LongMemEval
  repositories.

Reported: for on-topic prompts, the share that get something and the share
of those injections that hold an evidence memory; for off-topic prompts,
the share that get nothing; tokens added (median, p95); the hook's wall
time p50/p95, with the warm process and without it (GOLDFISH_WARM=off).
`--floors` also replays the candidates `--explain` lists under other
similarity floors (the same candidates, so only the floor changes), and
`--margins` under a margin to the closest candidate as well (a candidate
is kept when it is within the margin of the most similar one).

Small logs (issue 59): `--cut 10-50` cuts each on-topic haystack to
between 10 and 50 memories (its evidence and a sample of the rest, the
size drawn per question), as a new team's log is; `--set realmem` asks
RealMem's questions (fixtures/public/realmem/, public) instead of
LongMemEval's: the tuning and the test source of the prompt hook's rules.

Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import longmemeval as lme  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def build(goldfish: str, home: Path, path: Path, lines: list[str], author: str = "Eval") -> None:
    """A repository whose memory folder holds `lines`, committed and synced."""
    if (path / ".git" / "prompt-hook-done").exists():
        return
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    env = lme.git_env(home)
    lme.run(["git", "init", "-q", "-b", "main"], path, env)
    lme.run([goldfish, "init"], path, env)
    (path / ".goldfish" / "memories" / "eval.jsonl").write_text("".join(line + "\n" for line in lines))
    lme.run(["git", "add", "-A"], path, env)
    lme.run(["git", "commit", "-q", "-m", "memories"], path, env)
    lme.run([goldfish, "sync", "--quiet"], path, env)
    (path / ".git" / "prompt-hook-done").write_text("")


def hook(goldfish: str, home: Path, case: dict, warm: bool, vary: str = "") -> tuple[dict, float]:
    env = lme.git_env(home)
    env["GOLDFISH_NOW"] = case["now"]
    if not warm:
        env["GOLDFISH_WARM"] = "off"
    payload = {
        "session_id": "",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": str(case["path"]),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": case["question"] + vary,
    }
    started = time.monotonic()
    done = subprocess.run(
        [goldfish, "agent-hook", "user-prompt", "--explain"],
        cwd=case["path"], env=env, input=json.dumps(payload), capture_output=True, text=True,
    )
    took = time.monotonic() - started
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"the hook failed for {case['id']} (exit {done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout), took


def cut(lines: list[str], evidence: set[str], key: str, bounds: tuple[int, int]) -> list[str]:
    """`lines` cut to a size between `bounds` drawn from `key`: every
    evidence line and an even sample of the others, in their order."""
    lo, hi = bounds
    seed = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    size = lo + seed % (hi - lo + 1)
    ids = [json.loads(line)["id"] for line in lines]
    others = [n for n, i in enumerate(ids) if i not in evidence]
    room = max(0, size - (len(ids) - len(others)))
    step = len(others) / room if room else 0
    keep = {others[int(k * step)] for k in range(min(room, len(others)))}
    return [line for n, line in enumerate(lines) if ids[n] in evidence or n in keep]


def lme_cases(args, home: Path) -> list[dict]:
    fixture = home / f"{args.set}-fixture{args.cut_tag}"
    if not (fixture / "questions.json").exists():
        ns = argparse.Namespace(data=args.set_data, sample=args.sample, distractors=args.distractors)
        lme.write_fixture(ns, fixture)
    questions = json.loads((fixture / "questions.json").read_text())
    cases = []
    for n, q in enumerate(questions, 1):
        lines = [l for l in (fixture / "memories" / f"{q['id']}.jsonl").read_text().split("\n") if l.strip()]
        if args.cut:
            lines = cut(lines, set(q["answers"]), q["id"], args.cut)
        path = home / "workspaces" / f"{args.set}{args.cut_tag}-{q['id']}"
        build(args.goldfish, home, path, lines)
        print(f"\r{args.set_name} workspaces {n}/{len(questions)}", end="", file=sys.stderr, flush=True)
        cases.append({"set": args.set_name, "id": q["id"], "question": q["question"], "now": q["now"], "memories": len(lines),
                      "path": path, "evidence": set(q["answers"]), "type": q["kind"]})
    print(file=sys.stderr)
    return cases


def fixture_cases(args, home: Path) -> list[dict]:
    fixtures = ROOT / "fixtures" / "eval"
    lines = []
    for line in (fixtures / "memories.jsonl").read_text().split("\n"):
        if line.strip():
            memory = json.loads(line)
            # Committed by one author here: the line's own fictional author
            # would quarantine it (author-mismatch), and the hook adds no
            # quarantined memory.
            memory.pop("author", None)
            lines.append(json.dumps(memory))
    path = home / "workspaces" / "fixtures-eval"
    build(args.goldfish, home, path, lines)
    last = max(json.loads(line)["timestamp"] for line in lines)
    return [
        {"set": "fixtures/eval", "id": q["id"], "question": q["question"], "now": last, "path": path,
         "evidence": set(q["answers"]), "type": q["kind"]}
        for q in json.loads((fixtures / "questions.json").read_text())
    ]


def offtopic_cases(lme_set: list[dict], fixtures: list[dict]) -> list[dict]:
    questions = json.loads((ROOT / "fixtures" / "offtopic" / "questions.json").read_text())
    cases = []
    for n, q in enumerate(questions):
        asked = [fixtures[0]] if fixtures else []
        asked += [lme_set[(n * 3 + k) % len(lme_set)] for k in range(min(3, len(lme_set)))]
        for like in asked:
            cases.append({"set": "off-topic", "id": f"off{n}@{like['id']}", "question": q["question"],
                          "now": like["now"], "path": like["path"], "evidence": set(), "type": like["set"]})
    return cases


def replay(candidates: list[dict], floor: float, margin: float | None = None) -> list[str]:
    """The ids the hook would add under `floor` and, when given, within
    `margin` of the most similar candidate (the token cap aside)."""
    best = max((c["similarity"] or 0 for c in candidates), default=0)
    kept = [c for c in candidates if (c["similarity"] or 0) >= floor and c["verdict"] != "flagged"
            and (margin is None or (c["similarity"] or 0) >= best - margin)]
    return [c["id"] for c in kept[:3]]


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "longmemeval-s-dev")
    parser.add_argument("--goldfish", default=str(ROOT / "target" / "release" / "goldfish"))
    parser.add_argument("--home", type=Path, default=Path(tempfile.gettempdir()) / "goldfish-prompt-hook")
    parser.add_argument("--model-home", default=os.environ.get("GOLDFISH_TEST_MODEL_HOME"))
    parser.add_argument("--sample", type=int, default=48)
    parser.add_argument("--distractors", type=int, default=3)
    parser.add_argument("--floors", default="", help="comma-separated similarity floors to replay")
    parser.add_argument("--margins", default="", help="comma-separated margins to the closest candidate to replay, at each floor")
    parser.add_argument("--set", choices=["longmemeval", "realmem"], default="longmemeval")
    parser.add_argument("--realmem-data", type=Path, default=ROOT / "fixtures" / "public" / "realmem")
    parser.add_argument("--cut", default="", help="LO-HI: cut each on-topic haystack to LO..HI memories")
    parser.add_argument("--no-fixtures", action="store_true", help="leave fixtures/eval out (ours)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.goldfish = str(Path(args.goldfish).resolve())
    args.set_data = args.data if args.set == "longmemeval" else args.realmem_data
    args.set_name = {"longmemeval": "LongMemEval_S dev", "realmem": "RealMem"}[args.set]
    args.cut_tag = f"-cut{args.cut}" if args.cut else ""
    args.cut = tuple(int(x) for x in args.cut.split("-")) if args.cut else None
    home = args.home.resolve()
    lme.prepare_home(home, args.model_home)
    lme_set = lme_cases(args, home)
    fixtures = [] if args.no_fixtures else fixture_cases(args, home)
    off = offtopic_cases(lme_set, fixtures)
    cases = lme_set + fixtures + off
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        warm = list(pool.map(lambda case: hook(args.goldfish, home, case, True), cases))
    # Latency, one at a time, a sample of every set: each prompt new to the
    # index (recall keeps a question's vector), with the warm process and
    # without it (the model loaded by the hook itself).
    timed = cases[:: max(1, len(cases) // 40)]
    stamp = str(time.time_ns())
    hot = [hook(args.goldfish, home, case, True, f" ({stamp} warm {n})")[1] for n, case in enumerate(timed)]
    cold = [hook(args.goldfish, home, case, False, f" ({stamp} cold {n})")[1] for n, case in enumerate(timed)]
    rows = []
    for case, (explained, took) in zip(cases, warm):
        added = explained["added"]
        rows.append({
            "set": case["set"], "id": case["id"], "type": case["type"], "added": added,
            "evidence_added": bool(set(added) & case["evidence"]), "tokens": explained["tokens"],
            "skipped": explained["skipped"], "seconds": took,
            "candidates": [{**c, "evidence": c["id"] in case["evidence"]} for c in explained["candidates"]],
        })
    print("| set | prompts | something added | holding evidence, of those | nothing added |")
    print("|---|---:|---:|---:|---:|")
    names = [args.set_name] + ([] if args.no_fixtures else ["fixtures/eval"]) + ["off-topic"]
    for name in names:
        part = [r for r in rows if r["set"] == name]
        some = [r for r in part if r["added"]]
        held = sum(r["evidence_added"] for r in some)
        print(f"| {name} | {len(part)} | {len(some) / max(len(part), 1):.3f} | "
              f"{held / max(len(some), 1):.3f} | {1 - len(some) / max(len(part), 1):.3f} |")
    tokens = [r["tokens"] for r in rows if r["added"]]
    print(f"\ntokens added per injection: median {pct(tokens, 0.5):.0f}, p95 {pct(tokens, 0.95):.0f} "
          f"(n = {len(tokens)})")
    for name, took in [("warm process", hot), ("no warm process", cold)]:
        ms = [t * 1000 for t in took]
        print(f"hook wall time, {name}: p50 {pct(ms, 0.5):.0f} ms, p95 {pct(ms, 0.95):.0f} ms "
              f"(n = {len(ms)}, one at a time, each prompt new to the index)")
    sizes = [c["memories"] for c in lme_set]
    if sizes:
        print(f"on-topic haystacks: {min(sizes)}-{max(sizes)} memories, median {statistics.median(sizes):.0f}")
    floors = [float(f) for f in args.floors.split(",") if f]
    margins = [None] + [float(m) for m in args.margins.split(",") if m]
    if floors:
        print("\n| floor | margin | " + " | ".join(f"{n}: added / evidence of those" if n != "off-topic" else "off-topic: nothing" for n in names) + " |")
        print("|---:|---:|" + "---:|" * len(names))
        for floor in floors:
            for margin in margins:
                cells = []
                for name in names:
                    part = [r for r in rows if r["set"] == name]
                    chosen = [(r, replay(r["candidates"], floor, margin)) for r in part]
                    some = [(r, ids) for r, ids in chosen if ids]
                    ev = sum(any(c["evidence"] for c in r["candidates"] if c["id"] in ids) for r, ids in some)
                    if name == "off-topic":
                        cells.append(f"{1 - len(some) / max(len(part), 1):.3f}")
                    else:
                        cells.append(f"{len(some) / max(len(part), 1):.3f} / {ev / max(len(some), 1):.3f}")
                shown = "–" if margin is None else f"{margin:.2f}"
                print(f"| {floor:.2f} | {shown} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
