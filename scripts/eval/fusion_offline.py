#!/usr/bin/env python3
"""Hybrid rankings compared offline, on every question of both sets, in seconds.

`scripts/eval/longmemeval.py` asks `goldfish recall` itself and is the
reference; this script re-ranks the same questions in Python so that many
fusions can be compared on the whole LongMemEval_S dev split and on
fixtures/eval/ in one run, without a build:

- each question's haystack (as the harness builds it: one memory per turn,
  the session's date + 30 s a turn) in an in-memory SQLite FTS5 table with
  goldfish's tokenizer, columns and BM25 weights, queried as
  `src/adapters/index/search.rs` queries (content words, each quoted, OR'ed);
- every text embedded once with onnxruntime and the installed model (mean
  pooling, normalised, 256 tokens: what goldfish computes, to ~1e-7), cached
  by group of questions under `--cache`, so a run continues where the last
  one stopped and a second run embeds nothing;
- the candidates, floor, time cues and fusions of `crates/goldfish-core/src/recall.rs`.

BM25's statistics (IDF, average length) are those of every haystack of the
set, as in the harness's and the tests' goldfish home, which holds every
workspace (`--per-question-stats`: each haystack's own). They change
rankings: the sample's multi-session question that the rescaled fusion
loses keeps its evidence with per-question statistics.

Rankings: keyword, semantic, `mix` (0.6 × relative BM25 + 0.4 × cosine:
the default), `mix-0.7` (the same at 0.7 / 0.3: the default until
2026-11-24), `mix-no-cue` (the default without time cues), `no-vectors`
(the default without a model: the words alone, with time cues), `scaled`
(0.7 × relative BM25 + 0.3 × similarity rescaled over the candidates),
`scaled-equal` (the same with equal weights) and `rrf` (reciprocal rank
fusion, k = 60).

Sets: the LongMemEval_S dev split (full haystacks), fixtures/eval/, and
fixtures/longmemeval-sample/ (what `longmemeval.py --write-fixture` writes:
each question's answer sessions and a few others, so most candidates are on
the question's topic; `--sample-set DIR` adds another such folder).

Needs numpy, onnxruntime and tokenizers: the model build's private Python,
    ~/.cache/goldfish/model-build/venv/bin/python scripts/eval/fusion_offline.py \\
        --model target/model-home/models/all-MiniLM-L6-v2 [--sample N] [--available]
(embedding the whole split's 88,803 turns takes about 2 hours on 2 shared
cores, once; `--available` ranks only the questions already embedded).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import longmemeval as lme  # noqa: E402
from chunks_offline import STOPWORDS, Model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEPTH = 50  # each list's candidates, as recall with --limit 10
TIME_CUE_BOOST = 0.1
KEYWORD_WEIGHT = 0.6  # crates/goldfish-core/src/recall.rs DEFAULT_FUSION
FLOOR_SIMILARITY, FLOOR_WITH_WORDS = 0.1, 0.05  # crates/goldfish-core/src/recall.rs FLOOR
GROUP = 5  # questions per cache file

# --- the two sets ------------------------------------------------------------


class Case:
    """One question: its memories (sorted by time), evidence and scores."""

    def __init__(self, set_: str, id_: str, kind: str, question: str, now: dt.datetime, docs: list[dict], evidence: set[str], sessions: set[str]):
        self.set, self.id, self.type, self.question, self.now = set_, id_, kind, question, now
        self.docs = sorted(docs, key=lambda d: (d["ts"], d["id"]))
        self.evidence, self.sessions = evidence, sessions
        self.answer: str | None = None  # LongMemEval's gold answer
        self.facts: list[str] = []  # fixtures/eval's gold facts


def longmemeval_cases(data: Path, sample: int | None) -> list[Case]:
    questions = lme.longmemeval_questions(data, sample)
    sessions = lme.load_sessions(data, {s for q in questions for s in q["haystack_session_ids"]})
    cases = []
    for q in questions:
        docs = []
        for sid in q["haystack_session_ids"]:
            start = lme.parse_date(sessions[sid]["date"])
            for i, turn in enumerate(sessions[sid]["turns"]):
                if not turn["content"].strip():
                    continue
                at = start + i * lme.TURN_SPACING
                docs.append(dict(id=lme.ulid(at, f"{sid}:{i}"), ts=at, text=turn["content"].strip(), tags="[]", files="[]", label=f"{sid}:{i}", session=sid, kind="observation"))
        cases.append(Case("LongMemEval_S dev", q["question_id"], q["question_type"], q["question"], lme.parse_date(q["question_date"]), docs, set(q["evidence_turns"]), set(q["answer_session_ids"])))
        cases[-1].answer = str(q["answer"])
    return cases


def fixture_cases() -> list[Case]:
    fixtures = ROOT / "fixtures" / "eval"
    records = [json.loads(line) for line in (fixtures / "memories.jsonl").read_text().split("\n") if line.strip()]
    docs = [
        dict(
            id=r["id"],
            ts=dt.datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")),
            text=r["content"],
            tags=json.dumps(r.get("tags", []), ensure_ascii=False),
            files=json.dumps(r.get("files", []), ensure_ascii=False),
            label=r["id"],
            session=r["id"],
            kind=r["type"],
        )
        for r in records
    ]
    now = max(d["ts"] for d in docs)
    cases = []
    for q in json.loads((fixtures / "questions.json").read_text()):
        since = dt.datetime.fromisoformat(q["since"] + "T00:00:00+00:00") if q.get("since") else None
        until = dt.datetime.fromisoformat(q["until"] + "T23:59:59+00:00") if q.get("until") else None
        kept = [d for d in docs if (since is None or d["ts"] >= since) and (until is None or d["ts"] <= until)]
        cases.append(Case("fixtures/eval", q["id"], q["kind"], q["question"], now, kept, set(q["answers"]), set(q["answers"])))
        cases[-1].facts = q["facts"]
    return cases


def sample_cases(folder: Path) -> list[Case]:
    """A folder `longmemeval.py --write-fixture` wrote: memories per question."""
    cases = []
    for q in json.loads((folder / "questions.json").read_text()):
        docs = []
        for line in (folder / "memories" / f"{q['id']}.jsonl").read_text().split("\n"):
            if line.strip():
                r = json.loads(line)
                docs.append(dict(id=r["id"], ts=dt.datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")), text=r["content"], tags="[]", files="[]", label=r["id"], session=r["id"], kind=r.get("type", "observation")))
        now = dt.datetime.fromisoformat(q["now"].replace("Z", "+00:00"))
        cases.append(Case(str(folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder), q["id"], q["kind"], q["question"], now, docs, set(q["answers"]), set(q["answers"])))
    return cases


# --- embeddings, cached ------------------------------------------------------


def embed_all(groups: list[list[str]], cache: Path, model: Model, progress: bool, only_cached: bool) -> dict[str, np.ndarray]:
    """Vectors of every text of `groups` (texts per group of questions),
    computed once per group and kept in `cache`."""
    cache.mkdir(parents=True, exist_ok=True)
    vectors: dict[str, np.ndarray] = {}
    started = time.time()
    for n, texts in enumerate(groups):
        key = lme.hashlib.blake2b("\n\0".join(texts).encode(), digest_size=8).hexdigest()
        file = cache / f"{key}.npz"
        if file.exists():
            stored = np.load(file, allow_pickle=True)
            vectors.update(zip(stored["texts"], stored["vectors"]))
            continue
        if only_cached:
            continue
        todo = [t for t in texts if t not in vectors]
        computed = model.embed(todo) if todo else np.zeros((0, 384), np.float32)
        np.savez(file, texts=np.array(todo, dtype=object), vectors=computed)
        vectors.update(zip(todo, computed))
        if progress:
            print(f"\rembedded group {n + 1}/{len(groups)} ({time.time() - started:.0f} s)", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return vectors


# --- what goldfish computes --------------------------------------------------


def content_words(text: str) -> list[str]:
    """src/adapters/index/search.rs content_words."""
    words: list[str] = []
    for w in re.split(r"[^\w]|_", text.lower()):
        if w and w not in words:
            words.append(w)
    if all(w in STOPWORDS for w in words):
        return words
    return [w for w in words if w not in STOPWORDS]


NUMBERS = "one two three four five six seven eight nine ten eleven twelve".split()
MONTHS = "january february march april may june july august september october november december".split()
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()


def time_cue(text: str, now: dt.datetime) -> tuple[dt.datetime, dt.datetime] | None:
    """crates/goldfish-core/src/recall.rs TimeCue::find."""
    words = [w for w in re.split(r"[^\w]|_", text.lower()) if w]

    def unit(w: str | None) -> str | None:
        if not w:
            return None
        w = w[:-1] if w.endswith("s") else w
        return w if w in ("day", "week", "month", "year") else None

    def count(w: str | None) -> int | None:
        if w is None:
            return None
        if w.isdigit():
            return int(w) if int(w) < 1000 else None
        if w in ("a", "an"):
            return 1
        if w in ("few", "several"):
            return 3
        return NUMBERS.index(w) + 1 if w in NUMBERS else None

    def back(u: str, n: int) -> dt.datetime:
        if u == "day":
            return now - dt.timedelta(days=n)
        if u == "week":
            return now - dt.timedelta(weeks=n)
        y, m = divmod(now.year * 12 + now.month - 1 - n * (12 if u == "year" else 1), 12)
        return now.replace(year=y, month=m + 1, day=min(now.day, 28))

    def day_span(days_back: int, before: int, after: int) -> tuple[dt.datetime, dt.datetime]:
        day = (now - dt.timedelta(days=days_back)).replace(hour=0, minute=0, second=0, microsecond=0)
        return day - dt.timedelta(days=before), day + dt.timedelta(days=after)

    for i, w in enumerate(words):
        prev = lambda n: words[i - n] if i - n >= 0 else None  # noqa: E731
        next_ = lambda n: words[i + n] if i + n < len(words) else None  # noqa: E731
        if w == "ago":
            u = unit(prev(1))
            if not u:
                continue
            if prev(2) == "of" and prev(3) == "couple":
                n = 2
            elif count(prev(2)) is not None:
                n = count(prev(2))
            else:
                continue
            return back(u, n + 1), back(u, max(n - 1, 0))
        if w in ("last", "past", "previous"):
            if next_(1) in WEEKDAYS:
                return day_span((now.weekday() - WEEKDAYS.index(next_(1)) - 1) % 7 + 1, 1, 2)
            if next_(1) == "weekend":
                return day_span((now.weekday() - 5 - 1) % 7 + 1, 1, 3)
            if unit(next_(1)):
                return back(unit(next_(1)), 2), now
            if count(next_(1)) and unit(next_(2)):
                return back(unit(next_(2)), count(next_(1)) + 1), now
        if w == "yesterday":
            return back("day", 2), now
        if w in ("in", "during") and next_(1) in MONTHS:
            first = MONTHS.index(next_(1)) + 1
            last = MONTHS.index(next_(3)) + 1 if next_(2) in ("and", "or", "to", "through") and next_(3) in MONTHS else first
            year = now.year if first <= now.month else now.year - 1
            months = (last - first) % 12 + 1
            y, m = divmod(year * 12 + first - 1 + months, 12)
            return dt.datetime(year, first, 1, tzinfo=dt.UTC), dt.datetime(y, m + 1, 1, tzinfo=dt.UTC)
    return None


def full_text(cases: list[Case]) -> sqlite3.Connection:
    """One FTS5 table of the cases' memories (each case's rows from `case.base`):
    BM25's statistics over all of them, as in a goldfish home that holds every
    workspace of a set."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE f USING fts5(content, tags, files, tokenize = 'porter unicode61 remove_diacritics 2')")
    base = 0
    for case in cases:
        case.base = base
        con.executemany("INSERT INTO f (rowid, content, tags, files) VALUES (?, ?, ?, ?)", [(base + i, d["text"], d["tags"], d["files"]) for i, d in enumerate(case.docs)])
        base += len(case.docs)
    return con


def prepare(case: Case, vectors: dict[str, np.ndarray], query: np.ndarray, con: sqlite3.Connection | None = None) -> None:
    if con is None:
        con = full_text([case])
    case.bm25 = np.zeros(len(case.docs))
    words = content_words(case.question)
    if words:
        match = " OR ".join(f'"{w}"' for w in words)
        for rowid, rank in con.execute("SELECT rowid, bm25(f, 1.0, 2.0, 0.5) FROM f WHERE f MATCH ?", (match,)):
            if case.base <= rowid < case.base + len(case.docs):
                case.bm25[rowid - case.base] = max(-rank, 0.0) + 1e-12  # a match, even a worthless one
    case.cos = np.array([float(vectors[d["text"]] @ query) for d in case.docs])
    case.ts = np.array([d["ts"].timestamp() for d in case.docs])
    cue = time_cue(case.question, case.now)
    case.cue = np.array([bool(cue and cue[0] <= d["ts"] <= cue[1]) for d in case.docs])


def ordered(case: Case, score: np.ndarray, mask: np.ndarray) -> list[int]:
    """Indices where `mask`, by score, then newest, then id (descending), as SQL orders."""
    idx = [int(i) for i in np.nonzero(mask)[0]]
    idx.sort(key=lambda i: case.docs[i]["id"], reverse=True)
    idx.sort(key=lambda i: case.ts[i], reverse=True)
    idx.sort(key=lambda i: score[i], reverse=True)
    return idx


def keyword(case: Case) -> list[int]:
    return ordered(case, case.bm25, case.bm25 > 0)[:10]


def semantic(case: Case) -> list[int]:
    keep = case.cos >= FLOOR_SIMILARITY
    return ordered(case, case.cos, keep)[:10]


def hybrid(fusion: str, cues: bool = True, weight: float = KEYWORD_WEIGHT):
    def rank(case: Case) -> list[int]:
        kw = ordered(case, case.bm25, case.bm25 > 0)[:DEPTH]
        se = ordered(case, case.cos, np.ones(len(case.docs), bool))[:DEPTH]
        cand = np.zeros(len(case.docs), bool)
        cand[se] = True
        # What the keyword list holds has words evidence; a vector candidate
        # outside it has none (goldfish knows only the lists' memories' BM25).
        words = np.zeros(len(case.docs))
        words[kw] = case.bm25[kw]
        cand[kw] = True
        floor = (case.cos >= FLOOR_SIMILARITY) | ((words > 0) & (case.cos >= FLOOR_WITH_WORDS))
        best = words.max() if cand.any() else 0.0
        relative = words / best if best > 0 else np.zeros(len(case.docs))
        if fusion == "mix":
            score = weight * relative + (1 - weight) * np.maximum(case.cos, 0)
        elif fusion in ("scaled", "scaled-equal"):
            low, high = case.cos[cand].min(), case.cos[cand].max()
            scaled = (case.cos - low) / (high - low) if high > low else np.ones(len(case.docs))
            w = 0.5 if fusion == "scaled-equal" else 0.7
            score = w * relative + (1 - w) * scaled
        elif fusion == "no-vectors":
            # The default without a model: the words alone (and time cues).
            cand = np.zeros(len(case.docs), bool)
            cand[kw] = True
            floor = cand
            score = weight * relative
        elif fusion == "rrf":
            score = np.zeros(len(case.docs))
            for lst in (kw, se):
                for r, i in enumerate(lst):
                    score[i] += 1 / (60 + r + 1)
        else:
            raise ValueError(fusion)
        if cues:
            boost = TIME_CUE_BOOST if fusion != "rrf" else 1 / 61
            score = score + boost * case.cue
        return ordered(case, score, cand & floor)[:10]

    return rank


RANKINGS = {
    "keyword": keyword,
    "semantic": semantic,
    "mix": hybrid("mix"),
    "mix-0.7": hybrid("mix", weight=0.7),
    "rrf": hybrid("rrf"),
    "scaled": hybrid("scaled"),
    "mix-no-cue": hybrid("mix", cues=False),
    "scaled-equal": hybrid("scaled-equal"),
    "no-vectors": hybrid("no-vectors"),
}
METRICS = ["turn_r5", "turn_r10", "session_r5", "session_r10", "mrr10"]


def metrics(case: Case, top: list[int]) -> dict[str, float]:
    labels = [case.docs[i]["label"] for i in top]
    sessions = [case.docs[i]["session"] for i in top]
    first = next((r for r, label in enumerate(labels) if label in case.evidence), None)
    return {
        "turn_r5": len(case.evidence & set(labels[:5])) / len(case.evidence),
        "turn_r10": len(case.evidence & set(labels[:10])) / len(case.evidence),
        "session_r5": len(case.sessions & set(sessions[:5])) / len(case.sessions),
        "session_r10": len(case.sessions & set(sessions[:10])) / len(case.sessions),
        "mrr10": 0.0 if first is None else 1 / (first + 1),
    }


def report(cases: list[Case], rankings: list[str], metric_names: list[str]) -> str:
    rows: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for case in cases:
        for name in rankings:
            m = metrics(case, RANKINGS[name](case))
            rows[(case.set, case.type, name)].append(m)
            rows[(case.set, "overall", name)].append(m)
    out = []
    for set_ in dict.fromkeys(c.set for c in cases):
        types = sorted({c.type for c in cases if c.set == set_}) + ["overall"]
        out += [f"**{set_}** ({sum(c.set == set_ for c in cases)} questions)", ""]
        for metric in metric_names:
            out += [f"| {metric} | n | " + " | ".join(rankings) + " |", "|---|---:|" + "---:|" * len(rankings)]
            for kind in types:
                cells = [float(np.mean([m[metric] for m in rows[(set_, kind, name)]])) for name in rankings]
                label = f"**{kind}**" if kind == "overall" else kind
                out.append(f"| {label} | {len(rows[(set_, kind, rankings[0])])} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")
            out.append("")
    return "\n".join(out)


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options that say which questions, model and cache (shared with
    `fusion_ceiling.py`)."""
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "longmemeval-s-dev")
    parser.add_argument("--model", type=Path, default=ROOT / "target" / "model-home" / "models" / "all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "goldfish" / "fusion-offline")
    parser.add_argument("--sample", type=int, help="only the first N LongMemEval questions (round robin over the types)")
    parser.add_argument("--available", action="store_true", help="embed nothing: rank the questions whose texts are cached")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (1 is faster on a shared machine)")
    parser.add_argument("--sample-set", type=Path, action="append", default=[ROOT / "fixtures" / "longmemeval-sample"], help="a folder written by longmemeval.py --write-fixture")
    parser.add_argument("--per-question-stats", action="store_true", help="BM25 statistics of each question's haystack alone (default: of its set's, as one goldfish home holding every workspace)")


def load(args: argparse.Namespace) -> list[Case]:
    """Every case of the three sets, embedded and scored (`prepare`)."""
    model = Model(args.model, args.threads)
    lme_cases = longmemeval_cases(args.data, args.sample)
    fixtures = fixture_cases()
    groups = [sorted({d["text"] for c in fixtures for d in c.docs})]
    for start in range(0, len(lme_cases), GROUP):
        groups.append(sorted({d["text"] for c in lme_cases[start : start + GROUP] for d in c.docs}))
    vectors = embed_all(groups, args.cache, model, sys.stderr.isatty(), args.available)
    samples = [c for folder in args.sample_set for c in sample_cases(folder.resolve())]
    groups.append(sorted({d["text"] for c in samples for d in c.docs}))
    vectors = vectors | embed_all(groups[-1:], args.cache, model, False, False)
    cases = [c for c in lme_cases if all(d["text"] in vectors for d in c.docs)] + fixtures + samples
    queries = model.embed([c.question for c in cases])
    tables = {}
    if not args.per_question_stats:
        for set_ in dict.fromkeys(c.set for c in cases):
            if set_ != "fixtures/eval":  # its questions filter one workspace's memories
                tables[set_] = full_text([c for c in cases if c.set == set_])
    for case, query in zip(cases, queries):
        prepare(case, vectors, query, tables.get(case.set))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments(parser)
    parser.add_argument("--rankings", default=",".join(RANKINGS))
    parser.add_argument("--metrics", default="turn_r10,turn_r5,mrr10")
    parser.add_argument("--dump-top", type=Path, metavar="FILE", help="also write each question's top 10 of the default ranking (the digest harness's input: cargo run --example digest_eval)")
    args = parser.parse_args()
    cases = load(args)
    print(report(cases, args.rankings.split(","), args.metrics.split(",")))
    if args.dump_top:
        dump_top(cases, args.dump_top)


def dump_top(cases: list[Case], path: Path) -> None:
    """One JSON line per question: what `recall --json --limit 10` would
    return by default (the top 10 of "mix", as `Source`s of the digest), the
    question, and its gold: LongMemEval's answer and evidence turns (memory
    ids), fixtures/eval's facts."""
    with path.open("w") as out:
        for case in cases:
            top = RANKINGS["mix"](case)
            label_ids = {d["label"]: d["id"] for d in case.docs}
            line = dict(
                set=case.set,
                id=case.id,
                type=case.type,
                question=case.question,
                answer=case.answer,
                facts=case.facts,
                evidence=sorted(label_ids[e] for e in case.evidence if e in label_ids),
                sources=[
                    dict(id=d["id"], date=d["ts"].strftime("%Y-%m-%d"), kind=d["kind"], content=d["text"])
                    for d in (case.docs[i] for i in top)
                ],
            )
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
