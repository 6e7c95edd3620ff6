#!/usr/bin/env python3
"""Offline check: does embedding each memory as sentence-window chunks help recall?

Reads what `scripts/eval/longmemeval.py` built (its GOLDFISH_HOME's index.db:
the workspaces' memories and their one-vector-per-memory embeddings; an FTS5
table of the memories is written in memory) and re-ranks each question in Python, without changing goldfish:

- keyword: FTS5 BM25 as `goldfish recall --mode keyword` (same query, weights);
- semantic and hybrid under three similarity variants:
  (a) `turn`: the memory's one vector (the text truncated at 256 tokens),
  (b) `chunks`: the max over the memory's sentence-window chunks (windows of
      up to 3 sentences and 64 tokens, overlapping by one sentence; a memory
      that fits one window is its own chunk, i.e. (a)),
  (c) `max`: the max of (a) and (b);
- hybrid fused as `Fusion::Mix` (0.7 × BM25 / best BM25 + 0.3 × cosine over
  the keyword and vector top 50, the time-cue boost, the relevance floor) and
  by reciprocal rank fusion (k = 60, a time cue worth one first rank).

Run on the same index, its keyword, semantic/turn and mix/turn rankings
reproduce `goldfish recall`'s keyword, semantic and hybrid rankings
(fixtures/eval/: turn R@10 0.812, 0.885, 0.845 as in the harness; the first
24 LongMemEval questions: keyword and hybrid 0.819 both ways), so the other
columns differ from those only by the similarity they use.

Reports turn-level R@5, R@10 and MRR@10 per question type and overall, for
the first `--sample` LongMemEval_S dev questions (the harness's order: round
robin over the types) and for fixtures/eval/. Chunk vectors are computed with
onnxruntime and the installed model (`--model`, mean pooling, normalised, as
goldfish embeds) and cached by text in `--cache`.

Needs numpy, onnxruntime and tokenizers, e.g. the model-build venv:
    ~/.cache/goldfish/model-build/venv/bin/python scripts/eval/chunks_offline.py \
        --index COPY_OF_THE_EVAL_HOME/index.db --sample 24
(work on a copy of index.db: the script only reads it, but a copy cannot
race with a harness run.)
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import longmemeval as lme  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEPTH = 50  # each list's candidates, as recall with --limit 10
KEYWORD_WEIGHT = 0.7  # the default fusion when docs/BENCHMARKS.md's chunk table was measured (now 0.6)
TIME_CUE_BOOST = 0.1
FLOOR_SIMILARITY, FLOOR_WITH_WORDS = 0.1, 0.05
RRF_K = 60.0
MAX_TOKENS, MAX_SENTENCES = 64, 3

# src/adapters/index/search.rs STOPWORDS
STOPWORDS = set(
    """a about after all an and any are as at be been before but by can could did do does for
    from get got had has have how i if in into is it its last made make me more my no not now
    of on or our out over should so some than that the their them then there these they this
    to up us use used was we were what when where which while who why will with would you
    your""".split()
)


# --- the model ---------------------------------------------------------------


class Model:
    def __init__(self, folder: Path, threads: int):
        manifest = json.loads((folder / "manifest.json").read_text())
        self.max_length = manifest["max_length"]
        # tokenizer.json pads and truncates to 128: pad per batch here and
        # truncate where the manifest says, as goldfish does; count untruncated.
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        self.counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.counter.no_padding()
        self.counter.no_truncation()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(folder / "model.onnx"), options)
        self.inputs = {i.name for i in self.session.get_inputs()}

    def tokens(self, text: str) -> int:
        return len(self.counter.encode(text, add_special_tokens=False).ids)

    def embed(self, texts: list[str], batch: int = 32) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            encs = self.tokenizer.encode_batch([texts[i] for i in idx])
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, e in enumerate(encs):
                ids[row, : len(e.ids)] = e.ids
                mask[row, : len(e.ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feed)[0]
            summed = (hidden * mask[:, :, None]).sum(1)
            mean = summed / np.maximum(mask.sum(1, keepdims=True), 1)
            mean /= np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)
            out[idx] = mean
        return out


# --- chunks --------------------------------------------------------------------

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if s and s.strip()]


def chunks(text: str, model: Model) -> list[str]:
    """Windows of up to MAX_SENTENCES sentences and MAX_TOKENS tokens (a longer
    sentence is a window of its own), each starting at the previous one's last
    sentence. A text that fits one window: [] (its own vector is the chunk)."""
    parts = sentences(text)
    sizes = [model.tokens(s) for s in parts]
    if len(parts) <= 1 or sum(sizes) <= MAX_TOKENS:
        return []
    windows, i = [], 0
    while i < len(parts):
        j, size = i + 1, sizes[i]
        while j < len(parts) and j - i < MAX_SENTENCES and size + sizes[j] <= MAX_TOKENS:
            size += sizes[j]
            j += 1
        windows.append(" ".join(parts[i:j]))
        if j >= len(parts):
            break
        i = j - 1 if j - 1 > i else j
    return windows


class ChunkCache:
    """Vectors of chunk texts by their hash, in a SQLite file."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS v (hash TEXT PRIMARY KEY, vector BLOB)")

    def fill(self, texts: set[str], model: Model) -> tuple[int, float]:
        key = {t: hashlib.blake2b(t.encode(), digest_size=16).hexdigest() for t in texts}
        have = {h for (h,) in self.db.execute("SELECT hash FROM v")}
        todo = sorted(t for t in texts if key[t] not in have)
        started = time.monotonic()
        for start in range(0, len(todo), 1024):
            part = todo[start : start + 1024]
            vectors = model.embed(part)
            self.db.executemany(
                "INSERT OR REPLACE INTO v VALUES (?, ?)",
                [(key[t], v.tobytes()) for t, v in zip(part, vectors)],
            )
            self.db.commit()
            print(f"\rchunks embedded {start + len(part)}/{len(todo)}", end="", file=sys.stderr, flush=True)
        if todo:
            print(file=sys.stderr)
        return len(todo), time.monotonic() - started

    def get(self, text: str) -> np.ndarray:
        h = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
        (blob,) = self.db.execute("SELECT vector FROM v WHERE hash = ?", (h,)).fetchone()
        return np.frombuffer(blob, dtype=np.float32)


# --- ranking -----------------------------------------------------------------


def content_words(text: str) -> list[str]:
    words: list[str] = []
    for w in re.split(r"[^\w]|_", text):
        w = w.lower()
        if w and w not in words:
            words.append(w)
    if all(w in STOPWORDS for w in words):
        return words
    return [w for w in words if w not in STOPWORDS]


def time_cue(text: str, now: dt.datetime) -> tuple[dt.datetime, dt.datetime] | None:
    """crates/goldfish-core/src/recall.rs TimeCue::find."""
    words = [w.lower() for w in re.split(r"[^\w]|_", text) if w]
    numbers = "one two three four five six seven eight nine ten eleven twelve".split()
    months = "january february march april may june july august september october november december".split()

    def back(unit: str, n: int) -> dt.datetime:
        if unit == "day":
            return now - dt.timedelta(days=n)
        if unit == "week":
            return now - dt.timedelta(weeks=n)
        months_back = n * (12 if unit == "year" else 1)
        y, m = divmod(now.year * 12 + now.month - 1 - months_back, 12)
        return now.replace(year=y, month=m + 1, day=min(now.day, 28))

    def unit(w: str) -> str | None:
        w = w[:-1] if w.endswith("s") else w
        return w if w in ("day", "week", "month", "year") else None

    def count(w: str) -> int | None:
        if w.isdigit():
            return int(w) if int(w) < 1000 else None
        if w in ("a", "an"):
            return 1
        if w in ("few", "several"):
            return 3
        return numbers.index(w) + 1 if w in numbers else None

    for i, w in enumerate(words):
        before = lambda n: words[i - n] if i - n >= 0 else None  # noqa: E731
        if w == "ago":
            u = before(1) and unit(before(1))
            if not u:
                continue
            if before(2) == "of" and before(3) == "couple":
                n = 2
            elif before(2) and count(before(2)) is not None:
                n = count(before(2))
            else:
                continue
            return back(u, n + 1), back(u, max(n - 1, 0))
        if w in ("last", "past", "previous") and i + 1 < len(words) and unit(words[i + 1]):
            return back(unit(words[i + 1]), 2), now
        if w == "yesterday":
            return back("day", 2), now
        if w in ("in", "during") and i + 1 < len(words) and words[i + 1] in months:
            month = months.index(words[i + 1]) + 1
            year = now.year if month <= now.month else now.year - 1
            start = dt.datetime(year, month, 1, tzinfo=dt.UTC)
            end = dt.datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=dt.UTC)
            return start, end
    return None


def parse_ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def rank_all(case: dict, index: sqlite3.Connection, model: Model, cache: ChunkCache, vectors: dict) -> dict[str, list[str]]:
    """Every ranking's top 10 memory ids for one question."""
    mems = case["memories"]  # id -> (content, content_hash, timestamp)
    ids = list(mems)
    query = model.embed([case["question"]])[0]
    turn = {i: float(vectors[mems[i][1]] @ query) for i in ids}
    chunk = {}
    for i in ids:
        parts = case["chunks"][i]
        chunk[i] = max((float(cache.get(p) @ query) for p in parts), default=turn[i])
    sims = {"turn": turn, "chunks": chunk, "max": {i: max(turn[i], chunk[i]) for i in ids}}

    # BM25, as Index::keyword: the whole table's statistics, this workspace's rows.
    words = content_words(case["question"])
    bm25: dict[str, float] = {}
    if words:
        fts = " OR ".join(f'"{w}"' for w in words)
        rows = index.execute(
            "SELECT m.id, bm25(memories_fts, 1.0, 2.0, 0.5) FROM memories_fts JOIN memories m "
            "ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND m.workspace_id = ?",
            (fts, case["workspace"]),
        ).fetchall()
        bm25 = {i: max(-r, 0.0) for i, r in rows if i in mems}
    newest = lambda i: (mems[i][2], i)  # noqa: E731  ties: newer first
    keyword = sorted(bm25, key=lambda i: (-bm25[i], *map(_neg, newest(i))))
    cue = time_cue(case["question"], case["now"])
    in_cue = {i: bool(cue and cue[0] <= parse_ts(mems[i][2]) <= cue[1]) for i in ids}

    out = {"keyword": keyword[:10]}
    for name, sim in sims.items():
        floor = lambda i: sim[i] >= (FLOOR_WITH_WORDS if i in kw_top else FLOOR_SIMILARITY)  # noqa: E731
        semantic = sorted(ids, key=lambda i: (-sim[i], *map(_neg, newest(i))))
        kw_top, sem_top = keyword[:DEPTH], semantic[:DEPTH]
        out[f"semantic/{name}"] = [i for i in semantic if sim[i] >= FLOOR_SIMILARITY][:10]
        candidates = list(dict.fromkeys(sem_top + kw_top))
        best = max((bm25.get(i, 0.0) for i in candidates), default=0.0)
        mix = {
            i: KEYWORD_WEIGHT * (bm25.get(i, 0.0) if i in kw_top else 0.0) / (best or 1.0)
            + (1 - KEYWORD_WEIGHT) * max(sim[i], 0.0)
            + (TIME_CUE_BOOST if in_cue[i] else 0.0)
            for i in candidates
        }
        ranked = sorted(candidates, key=lambda i: (-mix[i], *map(_neg, newest(i))))
        out[f"mix/{name}"] = [i for i in ranked if floor(i)][:10]
        rrf = defaultdict(float)
        for lst in (kw_top, sem_top):
            for r, i in enumerate(lst):
                rrf[i] += 1.0 / (RRF_K + r + 1)
        for i in candidates:
            if in_cue[i]:
                rrf[i] += 1.0 / (RRF_K + 1)
        ranked = sorted(candidates, key=lambda i: (-rrf[i], *map(_neg, newest(i))))
        out[f"rrf/{name}"] = [i for i in ranked if floor(i)][:10]
    return out


def _neg(x: str) -> tuple:
    # Descending order of strings inside an ascending sort key.
    return tuple(-ord(c) for c in x)


def metrics(case: dict, top: list[str]) -> dict[str, float]:
    labels = [case["label"].get(i) for i in top]
    evidence = case["evidence"]
    first = next((r for r, label in enumerate(labels) if label in evidence), None)
    return {
        "r5": len(evidence & set(labels[:5])) / len(evidence),
        "r10": len(evidence & set(labels[:10])) / len(evidence),
        "mrr": 0.0 if first is None else 1.0 / (first + 1),
        # Share of the top 10 that are memories longer than one chunk.
        "long": sum(bool(case["chunks"][i]) for i in top[:10]) / max(len(top[:10]), 1),
    }


# --- the sets ------------------------------------------------------------------


def workspace_memories(index: sqlite3.Connection, root: Path) -> tuple[int, dict]:
    row = index.execute("SELECT id FROM workspaces WHERE root = ?", (str(root),)).fetchone()
    if not row:
        sys.exit(f"{root} is not in the index: run scripts/eval/longmemeval.py --prepare-only first")
    mems = {
        i: (c, h, t)
        for i, c, h, t in index.execute(
            "SELECT id, content, content_hash, timestamp FROM memories WHERE workspace_id = ?", (row[0],)
        )
    }
    return row[0], mems


def cases(args, index: sqlite3.Connection, home: Path) -> list[dict]:
    out = []
    if "longmemeval" in args.sets:
        questions = lme.longmemeval_questions(args.data, args.sample)
        sessions = lme.load_sessions(args.data, {s for q in questions for s in q["haystack_session_ids"]})
        for q in questions:
            _, where = lme.haystack_files(q, sessions)
            ws, mems = workspace_memories(index, home / "workspaces" / "longmemeval" / q["question_id"])
            out.append(
                {
                    "set": "longmemeval",
                    "type": q["question_type"],
                    "question": q["question"],
                    "now": lme.parse_date(q["question_date"]),
                    "workspace": ws,
                    "memories": mems,
                    "label": {i: f"{s}:{t}" for i, (s, t) in where.items()},
                    "evidence": set(q["evidence_turns"]),
                }
            )
    if "fixtures" in args.sets:
        ws, mems = workspace_memories(index, home / "workspaces" / "fixtures-eval")
        last = parse_ts(max(t for _, _, t in mems.values()))
        for q in json.loads((ROOT / "fixtures" / "eval" / "questions.json").read_text()):
            since = parse_ts(q["since"] + "T00:00:00Z") if q.get("since") else None
            until = parse_ts(q["until"] + "T23:59:59Z") if q.get("until") else None
            kept = {
                i: m
                for i, m in mems.items()
                if (not since or parse_ts(m[2]) >= since) and (not until or parse_ts(m[2]) <= until)
            }
            out.append(
                {
                    "set": "fixtures",
                    "type": q["kind"],
                    "question": q["question"],
                    "now": last,
                    "workspace": ws,
                    "memories": kept,
                    "label": {i: i for i in mems},
                    "evidence": set(q["answers"]),
                }
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="a copy of the eval home's index.db")
    parser.add_argument("--home", type=Path, default=Path.home() / ".cache" / "goldfish" / "longmemeval",
                        help="the eval home the workspaces were built in (their paths are keys in the index)")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval" / "longmemeval-s-dev")
    parser.add_argument("--model", type=Path, default=ROOT / "target" / "model-home" / "models" / "all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=ROOT / "target" / "chunk-eval" / "chunks.sqlite")
    parser.add_argument("--sample", type=int, default=24)
    parser.add_argument("--sets", default="longmemeval,fixtures")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write the tables here")
    args = parser.parse_args()
    args.sets = args.sets.split(",")
    home = args.home.expanduser().resolve()
    index = sqlite3.connect(f"file:{args.index}?mode=ro", uri=True)
    # The index has no FTS5 table since its schema 10 (its keyword index
    # scores with FTS5's bm25 formula): the same table, in memory.
    index.executescript(
        "CREATE VIRTUAL TABLE temp.memories_fts USING fts5(content, tags, files, "
        "tokenize = 'porter unicode61 remove_diacritics 2');"
        "INSERT INTO temp.memories_fts (rowid, content, tags, files) "
        "SELECT rowid, content, tags, files FROM memories;"
    )
    model = Model(args.model, args.threads)
    all_cases = cases(args, index, home)

    # Each memory's chunks, and every chunk text embedded once.
    texts: set[str] = set()
    chunked: dict[tuple[int, str], bool] = {}
    for case in all_cases:
        case["chunks"] = {}
        for i, (content, _, _) in case["memories"].items():
            parts = chunks(content, model)
            case["chunks"][i] = parts
            texts.update(parts)
            chunked[case["workspace"], i] = bool(parts)
    cache = ChunkCache(args.cache)
    embedded, seconds = cache.fill(texts, model)
    print(
        f"{len(chunked)} memories, {sum(chunked.values())} longer than one chunk, {len(texts)} distinct chunks "
        f"({embedded} embedded now in {seconds:.0f} s)",
        file=sys.stderr,
    )
    hashes = {m[1] for case in all_cases for m in case["memories"].values()}
    vectors = {}
    for h, blob in index.execute("SELECT content_hash, vector FROM embeddings"):
        if h in hashes:
            vectors[h] = np.frombuffer(blob, dtype=np.float32)
    missing = hashes - vectors.keys()
    if missing:
        sys.exit(f"{len(missing)} memories have no vector in the index: sync the workspaces first")

    results: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for case in all_cases:
        for ranking, top in rank_all(case, index, model, cache, vectors).items():
            m = metrics(case, top)
            for kind in (case["type"], "overall"):
                for name, value in m.items():
                    results[case["set"]][kind][ranking].append((name, value))
    tables = {}
    for name, by_type in results.items():
        rankings = list(next(iter(by_type.values())))
        print(f"\n**{name}** — turn R@10 (R@5, MRR@10 overall below)\n")
        print("| type | n | " + " | ".join(rankings) + " |")
        print("|---|---:|" + "---:|" * len(rankings))
        tables[name] = {}
        for kind in sorted(by_type, key=lambda k: (k == "overall", k)):
            row = {}
            for ranking in rankings:
                values = defaultdict(list)
                for metric, v in by_type[kind][ranking]:
                    values[metric].append(v)
                row[ranking] = {k: sum(v) / len(v) for k, v in values.items()}
            n = len(by_type[kind]["keyword"]) // len(row[rankings[0]])
            tables[name][kind] = row
            print(f"| {kind} | {n} | " + " | ".join(f"{row[r]['r10']:.3f}" for r in rankings) + " |")
        overall = tables[name]["overall"]
        print("| overall R@5 | | " + " | ".join(f"{overall[r]['r5']:.3f}" for r in rankings) + " |")
        print("| overall MRR@10 | | " + " | ".join(f"{overall[r]['mrr']:.3f}" for r in rankings) + " |")
        print("| long memories in the top 10 | | " + " | ".join(f"{overall[r]['long']:.2f}" for r in rankings) + " |")
    if args.json:
        args.json.write_text(json.dumps(tables, indent=1) + "\n")


if __name__ == "__main__":
    main()
