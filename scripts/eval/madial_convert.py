#!/usr/bin/env python3
"""MADial-Bench (hejunqing/MADial-Bench, NAACL 2025) in the format of
LongMemEval_S dev, for `longmemeval.py --sets madial`.

MADial-Bench's English part is an archive of 160 short event memories of two
children ("Bart danced at the Christmas party and felt very happy.", each
dated) and 160 dialogues between a child and an assistant. In each dialogue
an assistant turn (`test-turn`) brings up memories of the archive, and
`relevant-id` lists which: its memory-recall task.

What this writes (`--out`, default target/madial; not committed: the
repository states no licence, so a clone is read and nothing of it is
redistributed):

- `sessions.jsonl.gz`: one session per memory, `mem-<id>`, at 09:00 on the
  memory's date, one turn (the event, as the child's own line).
- `questions.jsonl`: one per dialogue, `madial-<n>`. `question` is the
  child's turns before the first test turn, joined: what the assistant
  had heard when it recalled (the paper's recall query is the dialogue so
  far; its last line alone, what a prompt hook is given, rarely names
  the topic).
  `question_type` is `one-memory` or `several-memories` (how many are
  relevant); `question_date` the day after the newest memory;
  `haystack_session_ids` every memory (the whole archive, as the paper
  recalls from it); `evidence_turns` the relevant memories.

Python 3.11, standard library only; it reads the data and runs none of its
code.

    python3 scripts/eval/madial_convert.py --git-dir /path/to/MADial-Bench/.git
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
from pathlib import Path

from realmem_convert import write_set

ROOT = Path(__file__).resolve().parents[2]
MEMORIES = "data/en/MADial-Bench-en-memory.json"
DIALOGUES = "data/en/MADial-Bench-en-dialogue.json"
# The commit measured (github.com/hejunqing/MADial-Bench).
COMMIT = "572e3a1"


def show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def fmt(at: dt.datetime) -> str:
    return at.strftime("%Y/%m/%d (%a) %H:%M")


def turn_text(line: str) -> str:
    """`<Bart>: "Hey, did you know?"` → `Hey, did you know?`"""
    text = re.sub(r"^<[^>]*>:\s*", "", line.strip())
    return text.strip().strip('"“”').strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", required=True, help="a git directory of MADial-Bench")
    parser.add_argument("--commit", default=COMMIT)
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "madial")
    args = parser.parse_args()
    memories = {}
    for line in show(args.git_dir, args.commit, MEMORIES).splitlines():
        if line.strip():
            for key, memory in json.loads(line).items():
                memories[int(key)] = memory
    sessions = []
    for key in sorted(memories):
        memory = memories[key]
        at = dt.datetime.strptime(memory["time"], "%Y-%m-%d").replace(hour=9)
        turns = [{"role": "user", "content": memory["event"].strip()}]
        sessions.append({"session_id": f"mem-{key}", "date": fmt(at), "turns": turns})
    newest = max(dt.datetime.strptime(m["time"], "%Y-%m-%d") for m in memories.values())
    asked = fmt(newest + dt.timedelta(days=1, hours=9))
    everything = [s["session_id"] for s in sessions]
    questions = []
    skipped = 0
    for n, line in enumerate(show(args.git_dir, args.commit, DIALOGUES).splitlines(), 1):
        if not line.strip():
            continue
        dialogue = json.loads(line)
        first = min(dialogue["test-turn"])
        heard = [
            turn_text(t)
            for t in dialogue["dialogue"][1:first]
            if not t.startswith("<Assistant>")
        ]
        relevant = [r for r in dialogue["relevant-id"] if r in memories]
        if not heard or not relevant:
            skipped += 1
            continue
        questions.append(
            {
                "question_id": f"madial-{n:03d}",
                "question_type": "one-memory" if len(relevant) == 1 else "several-memories",
                "question": " ".join(heard),
                "question_date": asked,
                "answer": "\n".join(memories[r]["event"] for r in relevant),
                "answer_session_ids": [f"mem-{r}" for r in relevant],
                "haystack_session_ids": everything,
                "evidence_turns": [f"mem-{r}:0" for r in relevant],
            }
        )
    write_set(args.out, sessions, questions)
    print(f"memories: {len(sessions)}, questions: {len(questions)}, skipped: {skipped}")


if __name__ == "__main__":
    main()
