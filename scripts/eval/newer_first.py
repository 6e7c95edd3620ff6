#!/usr/bin/env python3
"""Newest first: does recall put the memory that replaced an older one above
it, on a real git history? (issue 26, point 4's own fixture)

fixtures/eval/ (the Ledgerline log: 303 memories, 71 questions) records 16
supersessions (`relations.json`: old → new, the later memory says what it
replaces; the API pool size changes twice). This builds that log as the
history it describes: one commit per author and day, by that author, dated
as the memories; each path a memory names created in the commit of the
first memory naming it; and the code changes the replacements speak of
(the PDF renderer moved into `crates/pdf` and its HTML template deleted,
the Redux store deleted, the reconciliation CronJob deleted for the
in-process scheduler), so some old memories are stale or moved by then.
Every memory is trusted (its commit's author is its `author`).

Then each question about the current state of a replaced decision (its
answers hold the newer memory and not the older; 25 question-pairs) is
asked with `recall --json`, and a pair counts as "newest first" when the
newer memory ranks above the older one in the top 10 (an older one not in
the top 10 counts too; a newer one not in it does not). Orders compared
on the same answers:

- keyword: `--mode keyword`, as ranked;
- hybrid, scores only: the hybrid scores without the stale part and
  without newer-wins' moves (what ranking was before issue 26);
- hybrid, with staleness: the scores with the stale part;
- hybrid, as recall shows it: with staleness and newer wins.

    GOLDFISH_TEST_MODEL_HOME=target/model-home \\
        python3 scripts/eval/newer_first.py --goldfish target/release/goldfish

Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import longmemeval  # noqa: E402  (git_env, run, prepare_home)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "eval"

# The code changes the replacing memories speak of, done in the commit that
# brings the replacing memory (keyed by its relation's topic): (old path,
# new path or None for a deletion).
CODE_CHANGES = {
    "PDF renderer": [
        ("crates/worker/src/jobs/render_pdf.rs", "crates/pdf/src/render.rs"),
        ("crates/pdf/templates/invoice.html", None),
    ],
    "frontend state management": [("web/src/store/index.ts", None)],
    "where reconcile_payouts runs": [
        ("deploy/helm/ledgerline/templates/cronjob-reconcile.yaml", None),
    ],
}


def email(author: str) -> str:
    return author.lower().replace(" ", ".").replace("á", "a") + "@ledgerline.example"


def build(goldfish: str, home: Path, path: Path, memories: list[dict], relations: dict) -> dict:
    """The Ledgerline repository with its history; returns what the code
    changes did (topic → list of (old, new))."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    env = longmemeval.git_env(home)
    run = longmemeval.run
    run(["git", "init", "-q", "-b", "main"], path, env)
    (path / "README.md").write_text("# Ledgerline\n")
    run(["git", "add", "README.md"], path, env)
    run(["git", "commit", "-q", "-m", "initial"], path, env)
    run([goldfish, "init"], path, env)
    run(["git", "add", "-A"], path, env)
    run(["git", "commit", "-q", "-m", "set up goldfish"], path, env)
    changes_of = {r["new"]: CODE_CHANGES.get(r["topic"], []) for r in relations["supersedes"]}
    folder = path / ".goldfish" / "memories"
    folder.mkdir(parents=True, exist_ok=True)
    seen_paths: set[str] = set()
    done = {}
    # One commit per (day, author), in time order.
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for m in memories:
        groups[(m["timestamp"][:10], m.get("author", "Eval"))].append(m)
    for (day, author), group in sorted(groups.items(), key=lambda kv: kv[1][0]["timestamp"]):
        for m in group:
            for old, new in changes_of.get(m["id"], []):
                source = path / old
                if not source.exists():
                    continue
                if new:
                    target = path / new
                    target.parent.mkdir(parents=True, exist_ok=True)
                    # Moved and edited, as a move into a new crate is.
                    text = source.read_text()
                    source.unlink()
                    target.write_text(text + "// moved\n")
                    seen_paths.add(new)
                else:
                    source.unlink()
                done.setdefault(m["id"], []).append((old, new))
            for file in m.get("files", []):
                if file not in seen_paths:
                    seen_paths.add(file)
                    target = path / file
                    # A memory may name a folder another names a file in
                    # (`web/e2e`): that one is not created as a file.
                    try:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        if not target.exists():
                            target.write_text("".join(f"// {file}: line {i}\n" for i in range(12)))
                    except (FileExistsError, NotADirectoryError, IsADirectoryError):
                        pass
            with open(folder / f"{day}.jsonl", "a") as f:
                f.write(json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n")
        last = group[-1]["timestamp"][:19] + "Z"
        commit_env = dict(
            env,
            GIT_AUTHOR_NAME=author,
            GIT_AUTHOR_EMAIL=email(author),
            GIT_AUTHOR_DATE=last,
            GIT_COMMITTER_NAME=author,
            GIT_COMMITTER_EMAIL=email(author),
            GIT_COMMITTER_DATE=last,
        )
        run(["git", "add", "-A"], path, commit_env)
        run(["git", "commit", "-q", "-m", f"{day}: {author}"], path, commit_env)
    run([goldfish, "sync", "--quiet"], path, env)
    return done


def ask(goldfish: str, home: Path, path: Path, question: dict, now: str, mode: str) -> list[dict]:
    env = longmemeval.git_env(home)
    env["GOLDFISH_NOW"] = now
    cmd = [goldfish, "recall", "--json", "--limit", "10", "--mode", mode]
    if question.get("since"):
        cmd += ["--since", question["since"]]
    if question.get("until"):
        cmd += ["--until", question["until"] + "T23:59:59Z"]
    done = longmemeval.run([*cmd, "--", question["question"]], path, env, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"recall failed ({done.returncode}): {done.stderr}")
    return [json.loads(line) for line in done.stdout.split("\n") if line.strip()]


def newest_first(order: list[str], old: str, new: str) -> bool:
    if new not in order:
        return False
    return old not in order or order.index(new) < order.index(old)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--goldfish", default=str(ROOT / "target" / "release" / "goldfish"))
    parser.add_argument("--home", default=str(Path.home() / ".cache" / "goldfish" / "newer-first"))
    parser.add_argument("--model-home", default=os.environ.get("GOLDFISH_TEST_MODEL_HOME"))
    parser.add_argument("--keep", help="build the repository here and keep it")
    parser.add_argument("--json", help="write the per-pair results here")
    args = parser.parse_args()
    goldfish = str(Path(args.goldfish).resolve())
    home = Path(args.home)
    home.mkdir(parents=True, exist_ok=True)
    longmemeval.prepare_home(home, args.model_home)

    memories = [json.loads(line) for line in (FIXTURES / "memories.jsonl").read_text().splitlines() if line.strip()]
    relations = json.loads((FIXTURES / "relations.json").read_text())
    questions = json.loads((FIXTURES / "questions.json").read_text())
    now = max(m["timestamp"] for m in memories)
    scratch = None if args.keep else tempfile.mkdtemp(prefix="newer-first-")
    path = Path(args.keep) if args.keep else Path(scratch) / "ledgerline"
    try:
        changed = build(goldfish, home, path, memories, relations)
        pairs = [
            (q, r)
            for r in relations["supersedes"]
            for q in questions
            if r["new"] in q["answers"] and r["old"] not in q["answers"]
        ]
        orders = defaultdict(list)
        rows = []
        for q, r in pairs:
            keyword = [h["id"] for h in ask(goldfish, home, path, q, now, "keyword")]
            hits = ask(goldfish, home, path, q, now, "hybrid")
            shown = [h["id"] for h in hits]

            def without(h: dict, stale: bool) -> float:
                score = h.get("score") or 0.0
                return score - (0.0 if stale else (h.get("ranking") or {}).get("stale", 0.0))

            scores_only = [h["id"] for h in sorted(hits, key=lambda h: -without(h, False))]
            with_stale = [h["id"] for h in sorted(hits, key=lambda h: -without(h, True))]
            by_id = {h["id"]: h for h in hits}
            row = {
                "question": q["id"],
                "topic": r["topic"],
                "old": r["old"],
                "new": r["new"],
                "old_stale": (by_id.get(r["old"]) or {}).get("stale"),
                "new_moved_above": (by_id.get(r["new"]) or {}).get("newer_than"),
            }
            for name, order in [
                ("keyword", keyword),
                ("hybrid, scores only", scores_only),
                ("hybrid, with staleness", with_stale),
                ("hybrid, as recall shows it", shown),
            ]:
                first = newest_first(order, r["old"], r["new"])
                orders[name].append(first)
                row[name] = first
            rows.append(row)
        stale_old = sum(1 for row in rows if row["old_stale"])
        moved = sum(1 for row in rows if row["new_moved_above"])
        print(f"{len(pairs)} question-pairs over {len(relations['supersedes'])} replacements; "
              f"code changes in {len(changed)} commits; older memory stale in {stale_old} pairs, "
              f"newer moved above an older result in {moved}")
        print()
        print("| order | newest first |")
        print("|---|---:|")
        for name, results in orders.items():
            print(f"| {name} | {sum(results)}/{len(results)} ({sum(results) / len(results):.2f}) |")
        misses = [row for row in rows if not row["hybrid, as recall shows it"]]
        if misses:
            print()
            print("Not newest first as recall shows it:")
            for row in misses:
                print(f"  {row['question']} ({row['topic']})")
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
