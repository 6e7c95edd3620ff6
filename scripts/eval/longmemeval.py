#!/usr/bin/env python3
"""Retrieval quality of `goldfish recall` on public data and on fixtures/eval/.

LongMemEval_S (development split, ../shared/eval/longmemeval-s-dev/): for each
question, a git repository holding that question's haystack as memories, the
way users' data arrives: one memory per dialogue turn, `source` "user" or
"agent" (the assistant), type `observation`, timestamp = the session's date +
30 s per turn, in the daily files `goldfish store` would write, committed, then
`goldfish init` and `goldfish sync`. The question is asked with `GOLDFISH_NOW`
set to the question's date through `goldfish recall --json --limit 10`.
Sessions carry no id of their own in the memories (users' memories have none):
what ties a session's turns together is being close in time.

fixtures/public/realmem/ (public, written by others: RealMem, 300 of its
queries, see its README.md): read and asked exactly as LongMemEval_S, each
question's haystack being every earlier session of its user.

fixtures/eval/ (303 memories, 71 questions written for this project): its
memories in one repository, each question asked the same way (with its
`since`/`until`). Its "types" are how the question is phrased.

Each set has a GOLDFISH_HOME of its own under --home (default
~/.cache/goldfish/longmemeval/), named by the set and --sample/--types
(e.g. longmemeval-sample48/): its workspaces share it, as one user's
repositories share theirs, so each text is embedded once by content hash.
BM25's statistics were the home's until they became each workspace's own
(blended with a table in the binary), so a set's figures moved with
whatever other sets were asked before it (LongMemEval keyword R@10 0.822
with only its own workspaces built, 0.804 once three other sets had joined
them); a home per set keeps the embeddings apart too.

Rankings compared: keyword, semantic, hybrid (the default) and
"no vectors" (the default ranking with no model: recall without --mode and
GOLDFISH_MODEL naming no installed model).

Metrics per question type and overall: turn-level Recall@5/@10 (share of the
question's evidence turns in the top k, averaged over questions),
session-level Recall@5/@10 (share of the answer sessions with a turn in the
top k) and MRR@10 (reciprocal rank of the first evidence turn). fixtures/eval/
has no sessions: its session columns repeat the memory-level ones.

Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import fcntl
import gzip
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
MODES = {
    "keyword": ["--mode", "keyword"],
    "semantic": ["--mode", "semantic"],
    "hybrid": ["--mode", "hybrid"],
    "no-vectors": [],
    # Not goldfish: plain BM25 (Lucene's formula, k1 1.2, b 0.75, no
    # stemming, Lucene's English stop words) over the workspace's memories
    # alone, computed here: the baseline keyword ranking is held to.
    "bm25": None,
}
TURN_SPACING = dt.timedelta(seconds=30)
# The sets asked the same way, and their names in the tables.
SET_TITLES = {
    "longmemeval": "LongMemEval_S dev",
    "realmem": "RealMem sample",
    "madial": "MADial-Bench en",
    "fixtures": "fixtures/eval",
}
# What marks a workspace as built and synced (its content's digest).
DONE = ".longmemeval-done"


def ulid(at: dt.datetime, key: str) -> str:
    """A ULID of `at` whose random part is derived from `key` (reproducible)."""
    millis = int(at.timestamp() * 1000)
    rand = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=10).digest(), "big")
    value = (millis << 80) | rand
    return "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))


def parse_date(text: str) -> dt.datetime:
    """`2023/05/21 (Sun) 19:50` as UTC."""
    day, _, clock = text.split(" ")
    return dt.datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M").replace(tzinfo=dt.UTC)


def stamp(at: dt.datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def git_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("GIT_"):
            del env[name]
    env.update(
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Eval",
        GIT_AUTHOR_EMAIL="eval@example.com",
        GIT_COMMITTER_NAME="Eval",
        GIT_COMMITTER_EMAIL="eval@example.com",
        GIT_AUTHOR_DATE="2024-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2024-01-01T00:00:00Z",
        GOLDFISH_HOME=str(home),
        GOLDFISH_HOOK_BACKGROUND_BYTES="1000000000000",
    )
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        sys.exit(f"{' '.join(cmd[:3])} … in {cwd} failed ({done.returncode}):\n{done.stderr}")
    return done


def build_workspace(
    goldfish: str, home: Path, path: Path, files: dict[str, list[str]]
) -> None:
    """A repository whose memory folder holds `files`, committed and synced."""
    digest = hashlib.blake2b(json.dumps(files, sort_keys=True).encode()).hexdigest()
    marker = path / ".git" / DONE
    path.parent.mkdir(parents=True, exist_ok=True)
    # Two runs at once (a full run in the background, a sample meanwhile)
    # build a workspace one after the other.
    with open(path.parent / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and marker.read_text() == digest:
            return
        build_locked(goldfish, home, path, files)
        marker.write_text(digest)


def build_locked(goldfish: str, home: Path, path: Path, files: dict[str, list[str]]) -> None:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    env = git_env(home)
    run(["git", "init", "-q", "-b", "main"], path, env)
    (path / "README.md").write_text("# haystack\n")
    run(["git", "add", "README.md"], path, env)
    run(["git", "commit", "-q", "-m", "initial"], path, env)
    run([goldfish, "init"], path, env)
    memories = path / ".goldfish" / "memories"
    memories.mkdir(parents=True, exist_ok=True)
    for name, lines in files.items():
        (memories / name).write_text("".join(line + "\n" for line in lines))
    run(["git", "add", "-A"], path, env)
    run(["git", "commit", "-q", "-m", "memories"], path, env)
    # Embedding everything is `goldfish sync`'s job; without it recall embeds
    # a few texts and leaves the rest.
    run([goldfish, "sync", "--quiet"], path, env)


def memory_line(id_: str, at: dt.datetime, content: str, source: str | None) -> str:
    record = {"id": id_, "timestamp": stamp(at), "type": "observation", "content": content}
    if source:
        record["source"] = source
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


# --- the two sets -----------------------------------------------------------


def longmemeval_questions(data: Path, sample: int | None) -> list[dict]:
    questions = [json.loads(line) for line in (data / "questions.jsonl").open()]
    # Round-robin over the types (by id within a type), so the first N cover
    # every type: `--sample N` takes those, and a full run builds them first.
    by_type: dict[str, list[dict]] = defaultdict(list)
    for q in sorted(questions, key=lambda q: q["question_id"]):
        by_type[q["question_type"]].append(q)
    ordered: list[dict] = []
    while len(ordered) < len(questions):
        for kind in sorted(by_type):
            if by_type[kind]:
                ordered.append(by_type[kind].pop(0))
    return ordered[:sample] if sample else ordered


def load_sessions(data: Path, wanted: set[str]) -> dict[str, dict]:
    sessions = {}
    with gzip.open(data / "sessions.jsonl.gz", "rt") as f:
        for line in f:
            session = json.loads(line)
            if session["session_id"] in wanted:
                sessions[session["session_id"]] = session
    return sessions


def haystack_files(question: dict, sessions: dict[str, dict]) -> tuple[dict[str, list[str]], dict[str, tuple[str, int]]]:
    """The memory files of a question's haystack, and memory id → (session, turn)."""
    records: list[tuple[str, str, str]] = []  # (timestamp, id, line)
    where: dict[str, tuple[str, int]] = {}
    for session_id in question["haystack_session_ids"]:
        session = sessions[session_id]
        start = parse_date(session["date"])
        for i, turn in enumerate(session["turns"]):
            if not turn["content"].strip():
                continue
            at = start + i * TURN_SPACING
            id_ = ulid(at, f"{session_id}:{i}")
            source = "user" if turn["role"] == "user" else "agent"
            records.append((stamp(at), id_, memory_line(id_, at, turn["content"].strip(), source)))
            where[id_] = (session_id, i)
    files: dict[str, list[str]] = defaultdict(list)
    for ts, _, line in sorted(records):
        files[ts[:10] + ".jsonl"].append(line)
    return dict(files), where


def write_fixture(args, out: Path) -> None:
    """A small LongMemEval sample for the tests: for each of `--sample`
    questions, its answer sessions and the first `--distractors` other
    sessions of its haystack, as memory lines, and the questions in
    fixtures/eval/'s format (answers: memory ids; kind: question type)."""
    questions = longmemeval_questions(args.data, args.sample)
    wanted = {s for q in questions for s in q["haystack_session_ids"]}
    sessions = load_sessions(args.data, wanted)
    (out / "memories").mkdir(parents=True, exist_ok=True)
    rows = []
    for q in questions:
        answers = set(q["answer_session_ids"])
        others = [s for s in q["haystack_session_ids"] if s not in answers][: args.distractors]
        kept = [s for s in q["haystack_session_ids"] if s in answers or s in others]
        files, where = haystack_files(q | {"haystack_session_ids": kept}, sessions)
        lines = [line for name in sorted(files) for line in files[name]]
        (out / "memories" / f"{q['question_id']}.jsonl").write_text("".join(line + "\n" for line in lines))
        evidence = set(q["evidence_turns"])
        rows.append(
            {
                "id": q["question_id"],
                "question": q["question"],
                "answers": sorted(i for i, (s, t) in where.items() if f"{s}:{t}" in evidence),
                "facts": [],
                "kind": q["question_type"],
                "now": stamp(parse_date(q["question_date"])),
            }
        )
    (out / "questions.json").write_text(
        "[\n" + ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n]\n"
    )


def longmemeval_cases(args, home: Path, data: Path | None = None, name: str = "longmemeval") -> list[dict]:
    """A set in LongMemEval's format (`--data`, or `data`): its workspaces
    under workspaces/NAME/."""
    data = data or args.data
    questions = longmemeval_questions(data, args.sample)
    if args.types:
        kinds = set(args.types.split(","))
        questions = [q for q in questions if q["question_type"] in kinds]
    wanted = {s for q in questions for s in q["haystack_session_ids"]}
    sessions = load_sessions(data, wanted)
    cases = []
    for n, q in enumerate(questions, 1):
        files, where = haystack_files(q, sessions)
        path = home / "workspaces" / name / q["question_id"]
        build_workspace(args.goldfish, home, path, files)
        if args.progress:
            print(f"\rworkspaces {n}/{len(questions)}", end="", file=sys.stderr, flush=True)
        evidence = set(q["evidence_turns"])
        cases.append(
            {
                "id": q["question_id"],
                "type": q["question_type"],
                "question": q["question"],
                "now": stamp(parse_date(q["question_date"])),
                "extra": [],
                "path": path,
                "home": home,
                # Each memory's unit of evidence and its session.
                "label": {i: f"{s}:{t}" for i, (s, t) in where.items()},
                "session": {i: s for i, (s, _) in where.items()},
                "evidence": evidence,
                "sessions": set(q["answer_session_ids"]),
            }
        )
    if args.progress:
        print(file=sys.stderr)
    return cases


def fixture_cases(args, home: Path) -> list[dict]:
    fixtures = ROOT / "fixtures" / "eval"
    lines = [line for line in (fixtures / "memories.jsonl").read_text().split("\n") if line.strip()]
    path = home / "workspaces" / "fixtures-eval"
    build_workspace(args.goldfish, home, path, {"eval.jsonl": lines})
    ids = [json.loads(line)["id"] for line in lines]
    last = max(json.loads(line)["timestamp"] for line in lines)
    cases = []
    for q in json.loads((fixtures / "questions.json").read_text()):
        # The set's memories name a fictional team as authors, which the
        # one commit that brings them here does not have: every one is
        # quarantined (`author-mismatch`). What is measured is ranking, so
        # they are asked for.
        extra = ["--include-untrusted"]
        if q.get("since"):
            extra += ["--since", q["since"]]
        if q.get("until"):
            extra += ["--until", q["until"] + "T23:59:59Z"]
        cases.append(
            {
                "id": q["id"],
                "type": q["kind"],
                "question": q["question"],
                "now": last,
                "extra": extra,
                "path": path,
                "home": home,
                "label": {i: i for i in ids},
                "session": {i: i for i in ids},
                "evidence": set(q["answers"]),
                "sessions": set(q["answers"]),
            }
        )
    return cases


def offtopic_cases(lme: list[dict], fixtures: list[dict]) -> list[dict]:
    """fixtures/offtopic/: each question asked of the fixtures/eval workspace
    and of six LongMemEval workspaces (a different six per question), as
    those sets' own questions are asked (time, trust)."""
    questions = json.loads((ROOT / "fixtures" / "offtopic" / "questions.json").read_text())
    cases = []
    for n, q in enumerate(questions):
        asked = [("fixtures/eval", fixtures[0])] if fixtures else []
        if lme:
            asked += [("LongMemEval_S dev", lme[(n * 6 + k) % len(lme)]) for k in range(min(6, len(lme)))]
        for where, like in asked:
            cases.append(
                {
                    "id": f"off{n}@{like['id']}",
                    "type": where,
                    "question": q["question"],
                    "now": like["now"],
                    "extra": like["extra"],
                    "path": like["path"],
                    "home": like["home"],
                }
            )
    return cases


def ask_all(args, cases: list[dict]) -> list[tuple[tuple[dict, str], tuple[list[dict], dict | None]]]:
    """Every case asked in every ranking of --modes, --jobs at a time:
    ((case, mode), (hits, refusal)) in case order (see `ask`)."""
    jobs = [(case, mode) for case in cases for mode in args.modes]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        answers = list(pool.map(lambda job: ask(args, *job), jobs))
    return list(zip(jobs, answers))


def by_type_and_mode(per_question: list[dict], modes: list[str]):
    """(type, mode, rows) for each question type, then "overall", and each
    ranking: the rows a table line averages."""
    for kind in sorted({r["type"] for r in per_question}) + ["overall"]:
        for mode in modes:
            yield kind, mode, [r for r in per_question if r["mode"] == mode and (kind == "overall" or r["type"] == kind)]


def evaluate_offtopic(args, cases: list[dict]) -> dict:
    """Per set and ranking: the share of off-topic questions answered with
    nothing (the right answer), and the best score of the others."""
    per_question = []
    for (case, mode), (hits, refusal) in ask_all(args, cases):
        per_question.append(
            {
                "set": "off-topic",
                "id": case["id"],
                "type": case["type"],
                "mode": mode,
                "nothing": not hits,
                "nothing_relevant": refusal is not None,
                "share": refusal and refusal["share"],
                "hits": [
                    {"id": h["id"], "score": h.get("score"), "similarity": h.get("similarity"), "ranking": h.get("ranking")}
                    for h in hits
                ],
            }
        )
    table: dict[str, dict[str, dict]] = defaultdict(dict)
    for kind, mode, rows in by_type_and_mode(per_question, args.modes):
        tops = sorted(r["hits"][0]["score"] or 0.0 for r in rows if r["hits"])
        table[kind][mode] = {
            "questions": len(rows),
            "nothing": round(sum(r["nothing"] for r in rows) / max(len(rows), 1), 4),
            "nothing_relevant": sum(r["nothing_relevant"] for r in rows),
            "median_top_score": round(tops[len(tops) // 2], 4) if tops else None,
        }
    return {"set": "off-topic", "questions": len(cases), "table": table, "per_question": per_question}


def markdown_offtopic(result: dict, modes: list[str]) -> str:
    out = [
        f"**off-topic** ({result['questions']} questions asked)",
        "",
        "| asked of | n | ranking | answered with nothing | of which \"nothing relevant\" | median top score of the rest |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for kind, by_mode in result["table"].items():
        for mode in modes:
            m = by_mode[mode]
            name = "hybrid (default)" if mode == "hybrid" else mode
            top = "–" if m["median_top_score"] is None else f"{m['median_top_score']:.3f}"
            label = f"**{kind}**" if kind == "overall" else kind
            out.append(f"| {label} | {m['questions']} | {name} | {m['nothing']:.3f} | {m['nothing_relevant']} | {top} |")
    return "\n".join(out) + "\n"


# --- asking and scoring -----------------------------------------------------


# Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET).
BM25_STOP = set(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split()
)
BM25_K1, BM25_B = 1.2, 0.75


def bm25_tokens(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in BM25_STOP]


class PlainBm25:
    """One workspace's memories as a plain BM25 index (its own statistics)."""

    def __init__(self, path: Path):
        self.docs = []
        for file in sorted((path / ".goldfish" / "memories").glob("*.jsonl")):
            for line in file.read_text().split("\n"):
                if line.strip():
                    record = json.loads(line)
                    self.docs.append((record["id"], record["timestamp"], Counter(bm25_tokens(record["content"]))))
        self.avgdl = sum(sum(tf.values()) for _, _, tf in self.docs) / max(len(self.docs), 1)
        self.df = Counter(w for _, _, tf in self.docs for w in tf)

    def rank(self, question: str, since: str | None, until: str | None, limit: int) -> list[dict]:
        n = len(self.docs)
        words = set(bm25_tokens(question))
        idf = {w: math.log(1 + (n - self.df[w] + 0.5) / (self.df[w] + 0.5)) for w in words if self.df[w]}
        scored = []
        for id_, ts, tf in self.docs:
            if (since and ts < since) or (until and ts > until):
                continue
            dl = sum(tf.values())
            s = sum(
                idf[w] * tf[w] * (BM25_K1 + 1) / (tf[w] + BM25_K1 * (1 - BM25_B + BM25_B * dl / self.avgdl))
                for w in idf
                if w in tf
            )
            if s > 0:
                scored.append((s, ts, id_))
        scored.sort(reverse=True)
        return [{"id": id_, "score": s} for s, _, id_ in scored[:limit]]


BM25_INDEXES: dict[Path, PlainBm25] = {}
BM25_LOCK = threading.Lock()


def ask_bm25(args, case: dict) -> list[dict]:
    with BM25_LOCK:
        if case["path"] not in BM25_INDEXES:
            BM25_INDEXES[case["path"]] = PlainBm25(case["path"])
        index = BM25_INDEXES[case["path"]]
    extra = case["extra"]
    since = extra[extra.index("--since") + 1] if "--since" in extra else None
    until = extra[extra.index("--until") + 1] if "--until" in extra else None
    return index.rank(case["question"], since, until, args.limit)


def ask(args, case: dict, mode: str) -> tuple[list[dict], dict | None]:
    """The memories recall answers, and its "nothing relevant" judgement
    when it answers that instead (`--json`'s `nothing_relevant` line)."""
    if mode == "bm25":
        return ask_bm25(args, case), None
    env = git_env(case["home"])
    env["GOLDFISH_NOW"] = case["now"]
    if mode == "no-vectors":
        env["GOLDFISH_MODEL"] = "no-such-model"
    cmd = [args.goldfish, "recall", "--json", "--limit", str(args.limit), *MODES[mode], *case["extra"], "--", case["question"]]
    done = run(cmd, case["path"], env, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"recall failed for {case['id']} ({mode}, exit {done.returncode}):\n{done.stderr}")
    lines = [json.loads(line) for line in done.stdout.split("\n") if line.strip()]
    refusal = next((line for line in lines if line.get("nothing_relevant")), None)
    return [line for line in lines if "id" in line], refusal


def score(case: dict, hits: list[dict]) -> dict:
    labels = [case["label"].get(hit["id"]) for hit in hits]
    sessions = [case["session"].get(hit["id"]) for hit in hits]
    evidence, answer_sessions = case["evidence"], case["sessions"]

    def turn_recall(k: int) -> float:
        return len(evidence & set(labels[:k])) / len(evidence)

    def session_recall(k: int) -> float:
        return len(answer_sessions & set(sessions[:k])) / len(answer_sessions)

    first = next((rank for rank, label in enumerate(labels[:10]) if label in evidence), None)
    return {
        "turn_r5": turn_recall(5),
        "turn_r10": turn_recall(10),
        "session_r5": session_recall(5),
        "session_r10": session_recall(10),
        "mrr10": 0.0 if first is None else 1.0 / (first + 1),
    }


METRICS = ["turn_r5", "turn_r10", "session_r5", "session_r10", "mrr10"]


def evaluate(args, name: str, cases: list[dict]) -> dict:
    per_question = []
    for (case, mode), (hits, refusal) in ask_all(args, cases):
        row = {"set": name, "id": case["id"], "type": case["type"], "mode": mode, **score(case, hits)}
        # An on-topic question answered "nothing relevant" loses its answer.
        row["nothing_relevant"] = refusal is not None
        # What the floor is calibrated on: each hit's score and whether it is evidence.
        row["hits"] = [
            {
                "id": hit["id"],
                "score": hit.get("score"),
                "similarity": hit.get("similarity"),
                "keyword": hit.get("keyword"),
                "ranking": hit.get("ranking"),
                "evidence": case["label"].get(hit["id"]) in case["evidence"],
            }
            for hit in hits
        ]
        per_question.append(row)
    table: dict[str, dict[str, dict]] = defaultdict(dict)
    for kind, mode, rows in by_type_and_mode(per_question, args.modes):
        table[kind][mode] = (
            {"questions": len(rows)}
            | {m: round(sum(r[m] for r in rows) / max(len(rows), 1), 4) for m in METRICS}
            | {"nothing_relevant": sum(r["nothing_relevant"] for r in rows)}
        )
    result = {"set": name, "questions": len(cases), "table": table, "per_question": per_question}
    if {"hybrid", "keyword"} <= set(args.modes):
        result["margin_turn_r10"] = {k: dict(zip(("mean", "low", "high"), v)) for k, v in margins(result).items()}
    return result


def paired_bootstrap(pairs: list[tuple[float, float]], draws: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """The mean of a − b over paired questions and its 95% interval by the
    percentile bootstrap (questions drawn with replacement, a fixed seed so
    a rerun prints the same interval)."""
    diffs = [a - b for a, b in pairs]
    if not diffs:
        return 0.0, 0.0, 0.0
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(draws))
    return sum(diffs) / n, means[int(0.025 * draws)], means[int(0.975 * draws) - 1]


def margins(result: dict, metric: str = "turn_r10") -> dict[str, tuple[float, float, float]]:
    """Default − keyword per question type and overall: (mean, low, high)."""
    rows = defaultdict(dict)
    for r in result["per_question"]:
        rows[(r["type"], r["id"])][r["mode"]] = r[metric]
    out = {}
    for kind in sorted({t for t, _ in rows}) + ["overall"]:
        pairs = [
            (m["hybrid"], m["keyword"])
            for (t, _), m in rows.items()
            if (kind == "overall" or t == kind) and {"hybrid", "keyword"} <= m.keys()
        ]
        out[kind] = paired_bootstrap(pairs)
    return out


def markdown_margin(result: dict) -> str:
    """The default's margin over keyword ranking, with how sure it is (what
    `evaluate` found)."""
    cells = [
        f"{kind} {m['mean']:+.3f} [{m['low']:+.3f}, {m['high']:+.3f}]"
        for kind, m in result["margin_turn_r10"].items()
    ]
    return (
        "Default − keyword, turn R@10, mean [95% paired bootstrap over questions]: "
        + "; ".join(cells)
        + "\n"
    )


def markdown(result: dict, modes: list[str]) -> str:
    out = [
        f"**{result['set']}** ({result['questions']} questions)",
        "",
        "| type | n | ranking | turn R@5 | turn R@10 | session R@5 | session R@10 | MRR@10 | \"nothing relevant\" |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, by_mode in result["table"].items():
        for mode in modes:
            m = by_mode[mode]
            name = "hybrid (default)" if mode == "hybrid" else mode
            cells = " | ".join(f"{m[k]:.3f}" for k in METRICS)
            label = f"**{kind}**" if kind == "overall" else kind
            out.append(f"| {label} | {m['questions']} | {name} | {cells} | {m['nothing_relevant']} |")
    return "\n".join(out) + "\n"


def prepare_home(home: Path, model_home: str | None) -> None:
    home.mkdir(parents=True, exist_ok=True)
    if (home / "models").exists():
        return
    if not model_home:
        sys.exit(
            f"no model in {home}/models: pass --model-home (or set GOLDFISH_TEST_MODEL_HOME) "
            "to copy one from, or run `goldfish model install` with GOLDFISH_HOME set to it"
        )
    for part in ("models", "runtime"):
        shutil.copytree(Path(model_home) / part, home / part)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "longmemeval-s-dev")
    parser.add_argument("--goldfish", default=str(ROOT / "target" / "release" / "goldfish"))
    parser.add_argument("--home", type=Path, default=Path.home() / ".cache" / "goldfish" / "longmemeval")
    parser.add_argument("--model-home", default=os.environ.get("GOLDFISH_TEST_MODEL_HOME"))
    parser.add_argument("--sample", type=int, help="only N LongMemEval (and RealMem) questions, spread over the types")
    parser.add_argument("--types", help="comma-separated LongMemEval (and RealMem) question types to ask (default: all), e.g. knowledge-update")
    parser.add_argument("--realmem-data", type=Path, default=ROOT / "fixtures" / "public" / "realmem")
    parser.add_argument("--madial-data", type=Path, default=ROOT / "target" / "madial", help="written by scripts/eval/madial_convert.py")
    parser.add_argument("--sets", default="longmemeval,fixtures", help="comma-separated: longmemeval, realmem, madial, fixtures, offtopic (fixtures/offtopic/ asked of longmemeval and fixtures)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated of: {', '.join(MODES)}")
    parser.add_argument("--limit", type=int, default=10, help="memories each recall returns (metrics read the top 10)")
    parser.add_argument("--jobs", type=int, default=2, help="recall processes at once")
    parser.add_argument("--prepare-only", action="store_true", help="build and sync the workspaces, ask nothing")
    parser.add_argument("--json", type=Path, help="write the tables and per-question results here")
    parser.add_argument("--write-fixture", type=Path, metavar="DIR", help="write a test fixture of --sample questions to DIR and exit")
    parser.add_argument("--distractors", type=int, default=6, help="other sessions per question in --write-fixture")
    parser.add_argument("--quiet", dest="progress", action="store_false")
    args = parser.parse_args()
    args.modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in args.modes if m not in MODES]
    if unknown:
        sys.exit(f"--modes: unknown {', '.join(unknown)}; known: {', '.join(MODES)}")
    if args.write_fixture:
        write_fixture(args, args.write_fixture)
        return
    args.goldfish = str(Path(args.goldfish).resolve())
    if not Path(args.goldfish).is_file():
        sys.exit(f"--goldfish: {args.goldfish} does not exist (cargo build --release)")
    homes = args.home.expanduser().resolve()
    results = []

    def home_of(name: str) -> Path:
        """The set's own home (see the module's doc), model copied in."""
        part = name
        if name != "fixtures" and args.sample:
            part += f"-sample{args.sample}"
        if name != "fixtures" and args.types:
            part += "-types-" + "-".join(sorted(args.types.split(",")))
        home = homes / part
        prepare_home(home, args.model_home)
        return home

    built: dict[str, list[dict]] = {}

    def cases_of(name: str) -> list[dict]:
        if name not in built:
            if name == "longmemeval":
                if not (args.data / "questions.jsonl").is_file():
                    sys.exit(f"--data: {args.data} has no questions.jsonl")
                built[name] = longmemeval_cases(args, home_of(name))
            elif name == "realmem":
                if not (args.realmem_data / "questions.jsonl").is_file():
                    sys.exit(f"--realmem-data: {args.realmem_data} has no questions.jsonl")
                built[name] = longmemeval_cases(args, home_of(name), args.realmem_data, "realmem")
            elif name == "madial":
                if not (args.madial_data / "questions.jsonl").is_file():
                    sys.exit(f"--madial-data: {args.madial_data} has no questions.jsonl (scripts/eval/madial_convert.py)")
                built[name] = longmemeval_cases(args, home_of(name), args.madial_data, "madial")
            else:
                built[name] = fixture_cases(args, home_of(name))
        return built[name]

    for name in [s for s in args.sets.split(",") if s]:
        if name not in SET_TITLES and name != "offtopic":
            sys.exit(f"--sets: unknown set {name}; known: longmemeval, realmem, madial, fixtures, offtopic")
        if name == "offtopic":
            cases = offtopic_cases(cases_of("longmemeval"), cases_of("fixtures"))
            if args.prepare_only:
                continue
            result = evaluate_offtopic(args, cases)
            print(markdown_offtopic(result, args.modes))
            results.append(result)
            continue
        cases = cases_of(name)
        if args.prepare_only:
            continue
        result = evaluate(args, SET_TITLES[name], cases)
        print(markdown(result, args.modes))
        if "margin_turn_r10" in result:
            print(markdown_margin(result))
        results.append(result)
    if args.json and results:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
