#!/usr/bin/env python3
"""CPU time of `goldfish recall --mode keyword` at 100k memories, for
binaries compared side by side (interleaved, so a busy machine weighs on
each alike): a home holding a workspace of 100,000 synthetic memories
(words drawn from fixtures/eval/) and another of 20,000, so the keyword
index's workspace filter and per-workspace statistics are at work.

    python3 scripts/rarity/keyword_cost.py --dir /tmp/kwcost OLD_BINARY NEW_BINARY

Builds the home with the first binary once (a few minutes), then asks 20
of fixtures/eval/'s questions 3 times with each binary and prints the
p50 / p95 of the child's user + system time. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(goldfish: str, root: Path, env: dict[str, str]) -> None:
    memories = [json.loads(line) for line in open(ROOT / "fixtures/eval/memories.jsonl")]
    vocabulary = [w for m in memories for w in re.findall(r"[A-Za-z]+", m["content"])]
    rng = random.Random(0)
    for name, n in [("big", 100_000), ("other", 20_000)]:
        repo = root / name
        repo.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env, check=True)
        (repo / "README.md").write_text("x\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "initial"], cwd=repo, env=env, check=True)
        subprocess.run([goldfish, "init"], cwd=repo, env=env, check=True, capture_output=True)
        tag = "B" if name == "big" else "O"
        with open(repo / ".goldfish/memories/2026-10-05.jsonl", "w") as out:
            for i in range(n):
                words = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(10, 60)))
                out.write(json.dumps({"id": f"01KAJ{tag}{i:020d}", "timestamp": "2026-10-05T06:52:18.142Z", "type": "observation", "content": words}) + "\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "memories"], cwd=repo, env=env, check=True)
        subprocess.run([goldfish, "sync", "--quiet"], cwd=repo, env=env, check=True)
    (root / "built").write_text("")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    root = args.dir.resolve()
    env = dict(os.environ, GOLDFISH_HOME=str(root / "home"), GOLDFISH_MODEL="no-such-model",
               GIT_CONFIG_GLOBAL="/dev/null", GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@example.com",
               GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@example.com")
    binaries = [str(Path(b).resolve()) for b in args.binaries]
    if not (root / "built").exists():
        build(binaries[0], root, env)
    questions = [q["question"] for q in json.load(open(ROOT / "fixtures/eval/questions.json"))][:20]
    times: dict[str, list[float]] = {b: [] for b in binaries}
    for _ in range(3):
        for question in questions:
            for goldfish in binaries:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([goldfish, "recall", "--mode", "keyword", "--json", "-n", "10", "--", question],
                               cwd=root / "big", env=env, capture_output=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                times[goldfish].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    for goldfish in binaries:
        t = sorted(times[goldfish])
        print(f"{goldfish}: CPU p50 {1000 * statistics.median(t):.1f} ms, p95 {1000 * t[int(0.95 * len(t)) - 1]:.1f} ms over {len(t)} recalls")


if __name__ == "__main__":
    main()
