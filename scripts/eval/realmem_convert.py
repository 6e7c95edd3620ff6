#!/usr/bin/env python3
"""RealMem (AvatarMemory/RealMemBench) in the format of LongMemEval_S dev.

RealMem (ACL 2026 Findings, arXiv 2601.06966) is ten simulated users, each
talking with an assistant over 135-276 sessions about a few long-running
projects (a trip, a training plan, an app, a budget) with small talk between
them. Some user turns are marked as queries: answering them needs something
said in an earlier session, and the assistant's reply records which
"memory points" it used and the session each came from. Each memory point
was extracted from one turn (`source_turn`, `source_content_snapshot`).

What this writes (`--out`, the format of ../shared/eval/longmemeval-s-dev/):

- `sessions.jsonl.gz`: every session of every user, `session_id`
  `<User_Name>-<position in the user's file, 3 digits>`, its turns with
  `User` → `user` and `Assistant` → `assistant` (one person and an
  assistant, so no names are added), and a date (below).
- `questions.jsonl`: one line per query turn. `question` is the query turn
  as the user wrote it; `question_type` RealMem's `category_name`
  (dynamic-incremental, dynamic-updating, implicit-preference,
  temporal-reasoning); `question_date` the date of the query's session;
  `answer` the memory points the reply used, one a line (RealMem has no
  reference answer of its own); `haystack_session_ids` every session of the
  same user before the query's session, in file order (the order RealMem's
  own evaluation feeds them); `answer_session_ids` the sessions of the
  memory points; `evidence_turns` the turn each memory point was extracted
  from, `<session_id>:<turn index>`.

Choices, each counted in the summary printed at the end:

- Dates. RealMem dates sessions by day only, and in two users' files a few
  sessions are dated a day or two before the session before them. A
  session starts at 09:00 on its date, or 30 minutes after the session
  before it in the file if that is later, so time runs the way the file
  does and sessions of one day are ordered.
- Evidence turns. `source_turn` counts from 1 in some files and from 0 in
  others, so the turn is the one whose text equals the snapshot (the turn
  at `source_turn - 1` first, then `source_turn`, then any); failing that
  the turn most like the snapshot (difflib ratio at least 0.5, or one text
  containing the other). A memory point with no snapshot
  (`source_turn` -1) or no turn like it names its session only.
- A memory point from the query's own session is not evidence (the
  haystack holds earlier sessions only). A question left with no evidence
  turn is dropped.
- Sample. `--per-type N` keeps, of each question type, the N questions
  whose blake2b-64 digest of `question_id` is smallest (0: every question);
  every session is kept.

Python 3.11, standard library only. It reads the data; it runs no code of
RealMem's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import gzip
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

SOURCE = "https://github.com/AvatarMemory/RealMemBench"
COMMIT = "67afd0891d603adcc4458ff0449df306ef296b7a"
FIRST_SESSION = dt.time(9, 0)
SESSION_GAP = dt.timedelta(minutes=30)


def read_raw(args) -> dict[str, dict]:
    """User name → that user's file, from a directory or a git directory."""
    files: dict[str, dict] = {}
    if args.raw:
        for path in sorted(Path(args.raw).glob("*_dialogues_256k.json")):
            files[path.name] = json.loads(path.read_text())
    else:
        def git(*cmd: str) -> str:
            return subprocess.run(
                ["git", "--git-dir", args.git_dir, *cmd], check=True, capture_output=True, text=True
            ).stdout

        for name in git("ls-tree", "--name-only", args.commit, "dataset/").split():
            if name.endswith("_dialogues_256k.json"):
                files[Path(name).name] = json.loads(git("show", f"{args.commit}:{name}"))
    if not files:
        sys.exit("no *_dialogues_256k.json found")
    return {name.removesuffix("_dialogues_256k.json"): data for name, data in sorted(files.items())}


def session_starts(sessions: list[dict]) -> list[dt.datetime]:
    starts: list[dt.datetime] = []
    for s in sessions:
        day = dt.datetime.strptime(s["current_time"][:10], "%Y-%m-%d")
        at = dt.datetime.combine(day.date(), FIRST_SESSION)
        if starts and at < starts[-1] + SESSION_GAP:
            at = starts[-1] + SESSION_GAP
        starts.append(at)
    return starts


def fmt(at: dt.datetime) -> str:
    return at.strftime("%Y/%m/%d (%a) %H:%M")


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip()


def source_turn(point: dict, turns: list[dict], stats: Counter) -> int | None:
    """The index of the turn a memory point was extracted from, or None."""
    snapshot = norm(point.get("source_content_snapshot") or "")
    given = point.get("source_turn")
    if not snapshot or not isinstance(given, int) or given < 0:
        stats["evidence: no snapshot"] += 1
        return None
    texts = [norm(t["content"]) for t in turns]
    for i in (given - 1, given):
        if 0 <= i < len(texts) and texts[i] == snapshot:
            stats["evidence: snapshot at source_turn" + (" - 1" if i == given - 1 else "")] += 1
            return i
    if snapshot in texts:
        stats["evidence: snapshot elsewhere in the session"] += 1
        return texts.index(snapshot)
    best, where = 0.0, None
    for i, text in enumerate(texts):
        if text and (text in snapshot or snapshot in text):
            ratio = 1.0
        else:
            ratio = difflib.SequenceMatcher(None, text, snapshot, autojunk=False).ratio()
        if ratio > best:
            best, where = ratio, i
    if best >= 0.5:
        stats["evidence: turn most like the snapshot"] += 1
        return where
    stats["evidence: no turn like the snapshot"] += 1
    return None


def convert(raw: dict[str, dict], stats: Counter) -> tuple[list[dict], list[dict]]:
    out_sessions: list[dict] = []
    questions: list[dict] = []
    for user, data in raw.items():
        sessions = data["dialogues"]
        ids = [f"{user}-{i:03d}" for i in range(len(sessions))]
        by_uuid = {s["session_uuid"]: i for i, s in enumerate(sessions)}
        starts = session_starts(sessions)
        stats["sessions moved after the one before"] += sum(
            1 for s, at in zip(sessions, starts) if at.strftime("%Y-%m-%d") != s["current_time"][:10]
        )
        for i, s in enumerate(sessions):
            turns = [
                {"role": "user" if t["speaker"] == "User" else "assistant", "content": t["content"]}
                for t in s["dialogue_turns"]
            ]
            stats["turns"] += len(turns)
            out_sessions.append({"session_id": ids[i], "date": fmt(starts[i]), "turns": turns})
        for i, s in enumerate(sessions):
            turns = s["dialogue_turns"]
            for k, turn in enumerate(turns):
                if not turn.get("is_query"):
                    continue
                stats["query turns"] += 1
                reply = turns[k + 1] if k + 1 < len(turns) else {}
                used = turn.get("memory_used") or reply.get("memory_used") or []
                evidence: list[str] = []
                answer_sessions: list[str] = []
                answer: list[str] = []
                for point in used:
                    j = by_uuid.get(point["session_uuid"])
                    if j is None:
                        stats["evidence: unknown session"] += 1
                        continue
                    if j >= i:
                        stats["evidence: in the query's own session (left out)"] += 1
                        continue
                    stats["evidence: memory points"] += 1
                    answer.append(norm(point["content"]))
                    if ids[j] not in answer_sessions:
                        answer_sessions.append(ids[j])
                    found = [p for p in sessions[j].get("extracted_memory", []) if p["content"] == point["content"]]
                    if not found:
                        stats["evidence: point not among its session's points"] += 1
                        continue
                    at = source_turn(found[0], sessions[j]["dialogue_turns"], stats)
                    if at is not None and f"{ids[j]}:{at}" not in evidence:
                        evidence.append(f"{ids[j]}:{at}")
                if not evidence:
                    stats["questions dropped: no evidence turn"] += 1
                    continue
                questions.append(
                    {
                        "question_id": f"{user}-{turn['query_id']}",
                        "question_type": turn["category_name"].lower().replace(" ", "-"),
                        "question": turn["content"],
                        "question_date": fmt(starts[i]),
                        "answer": "\n".join(answer),
                        "answer_session_ids": sorted(answer_sessions),
                        "haystack_session_ids": ids[:i],
                        "evidence_turns": sorted(evidence),
                    }
                )
    return out_sessions, questions


def write_set(out: Path, sessions: list[dict], questions: list[dict]) -> None:
    """`questions.jsonl` and `sessions.jsonl.gz` in `out`, as LongMemEval_S
    dev has them; the same input writes the same bytes (gzip's mtime 0)."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "questions.jsonl").open("w") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    with open(out / "sessions.jsonl.gz", "wb") as raw_out:
        with gzip.GzipFile(fileobj=raw_out, mode="wb", compresslevel=9, mtime=0) as f:
            for s in sessions:
                f.write((json.dumps(s, ensure_ascii=False) + "\n").encode())


def digest(question_id: str) -> bytes:
    return hashlib.blake2b(question_id.encode(), digest_size=8).digest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--git-dir", help="a git directory of RealMemBench (read with git show)")
    where.add_argument("--raw", help="a directory holding its dataset/*_dialogues_256k.json")
    parser.add_argument("--commit", default=COMMIT, help="with --git-dir (default: %(default)s)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-type", type=int, default=90, help="questions kept of each type, by hash of id (0: all)")
    args = parser.parse_args()
    stats: Counter = Counter()
    sessions, questions = convert(read_raw(args), stats)
    if args.per_type:
        taken: Counter = Counter()
        kept = []
        for q in sorted(questions, key=lambda q: digest(q["question_id"])):
            if taken[q["question_type"]] < args.per_type:
                taken[q["question_type"]] += 1
                kept.append(q)
        questions = kept
    questions.sort(key=lambda q: q["question_id"])
    write_set(args.out, sessions, questions)
    stats["sessions"] = len(sessions)
    stats["questions written"] = len(questions)
    for name, count in sorted(stats.items()):
        print(f"{name}: {count}")
    for kind, count in sorted(Counter(q["question_type"] for q in questions).items()):
        print(f"type {kind}: {count}")
    print(f"haystack turns per question: {mean_haystack(questions, sessions):.0f}")


def mean_haystack(questions: list[dict], sessions: list[dict]) -> float:
    size = {s["session_id"]: len(s["turns"]) for s in sessions}
    return sum(sum(size[h] for h in q["haystack_session_ids"]) for q in questions) / max(len(questions), 1)


if __name__ == "__main__":
    main()
