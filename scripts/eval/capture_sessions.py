#!/usr/bin/env python3
"""Replays real agent sessions through goldfish capture and scores what it stores.

Each session of fixtures/capture-sessions/<name>/ (transcript.jsonl,
events.jsonl, labels.json; see that folder's README.md) is replayed into a
fresh git repository with a private GOLDFISH_HOME: `goldfish init --agent
claude --capture`, then every hook in order, run as Claude Code runs it (the
command `init` wrote into .claude/settings.json, payload on stdin), with the
transcript grown to what existed when the hook fired and the tool's effect on
files applied first (Write, Edit, `rm`); after each Stop the queue is drained
(`goldfish capture work --wait`: the user reads before the next turn), and
once more at the end, after the SessionEnd hook (when `init` wrote one: the
session ended).

Scoring: a stored capture memory is a true positive when it matches a label
not yet matched (same type, every `all` term and one term of each `any` group
in its content or files, case-insensitive; labels marked optional are
worth keeping but not required: they count as true positives, not in
recall). A memory quoting Claude Code's wrappers (`<local-command-caveat>`,
`<command-name>`, the interrupt marker, …) matches no label. precision = TP / stored, recall =
labels found / labels. A memory another stored memory supersedes is not
counted (teammates see the newer one); `lines` counts every line written
(superseded checkpoints too) and their precision.

The sessions are split by repository into a tuning half and a test half
(labels.json `half`; the first 19 are tuning sessions): rules change only
from what `--half tune` shows, `--half test` is read only to score.

    python3 scripts/eval/capture_sessions.py --goldfish target/debug/goldfish [--half tune|test] [--json] [--only NAME] [--keep]

Stdlib only (Python 3.11).
"""
import argparse, json, os, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = ROOT / "fixtures" / "capture-sessions"
SHAPES = ["multi-turn", "slash-command", "revert", "interrupt", "compile-error", "test-fail-pass", "no-code"]
HOOK_NAMES = {"post-tool-use": "PostToolUse", "post-tool-use-failure": "PostToolUseFailure", "stop": "Stop",
              "session-end": "SessionEnd"}


def rewrite(value, old, new):
    if isinstance(value, str):
        if old and WINDOWS.match(old):
            return windows_paths(value, old, new)
        return value.replace(old, new) if old else value
    if isinstance(value, list):
        return [rewrite(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: rewrite(v, old, new) for k, v in value.items()}
    return value


WINDOWS = re.compile(r"^[A-Za-z]:\\")


def windows_paths(text, old, new):
    """A session recorded on Windows (`D:\\repo`, Git Bash's `/d/repo`):
    its paths under the session's folder become the replay's, with `/`
    (the replay runs on Linux, where `\\` is no separator)."""
    tail = r"((?:[\\/][^\\/\s\"'<>|:*?`]+)*)"
    drive, rest = old[0], old[3:].replace("\\", "/")
    for root in (re.escape(old), re.escape(f"/{drive.lower()}/{rest}"), re.escape(f"{drive}:/{rest}")):
        text = re.sub(root + tail, lambda m: new + m.group(1).replace("\\", "/"), text, flags=re.IGNORECASE)
    return text


class Replay:
    def __init__(self, goldfish, work):
        self.work = work
        self.repo = work / "repo"
        self.home = work / "home"
        self.bin = work / "bin"
        for d in (self.repo, self.home, self.bin):
            d.mkdir(parents=True)
        (self.bin / "goldfish").symlink_to(Path(goldfish).resolve())
        self.env = {
            "PATH": f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home),
            "GOLDFISH_HOME": str(self.home / ".goldfish"),
            "GOLDFISH_WARM": "0",
            "LANG": "C.UTF-8",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Eval", "GIT_AUTHOR_EMAIL": "eval@example.com",
            "GIT_COMMITTER_NAME": "Eval", "GIT_COMMITTER_EMAIL": "eval@example.com",
        }
        self.log = []

    def run(self, args, stdin=None, check=True):
        p = subprocess.run(args, cwd=self.repo, env=self.env, input=stdin, capture_output=True, text=True,
                           timeout=300)
        self.log.append({"args": args, "code": p.returncode, "stderr": p.stderr[-2000:]})
        if check and p.returncode != 0:
            raise RuntimeError(f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p

    def setup(self):
        self.run(["git", "init", "-q", "-b", "main"])
        (self.repo / "README.md").write_text("# replayed session\n")
        self.run(["git", "add", "README.md"])
        self.run(["git", "commit", "-q", "-m", "initial commit"])
        if self.run(["goldfish", "init", "--agent", "claude", "--capture"], check=False).returncode != 0:
            self.run(["goldfish", "init"])

    def hook_command(self, hook):
        try:
            settings = json.loads((self.repo / ".claude" / "settings.json").read_text())
            return settings["hooks"][HOOK_NAMES[hook]][0]["hooks"][0]["command"]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return f"goldfish agent-hook {hook}"

    def has_hook(self, hook):
        try:
            settings = json.loads((self.repo / ".claude" / "settings.json").read_text())
            return bool(settings["hooks"][HOOK_NAMES[hook]])
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def inside(self, path):
        try:
            p = Path(path).resolve()
            return p if p.is_relative_to(self.repo.resolve()) and ".git" not in p.parts else None
        except (TypeError, ValueError):
            return None

    def apply(self, payload):
        """The tool's effect on the files, as it happened before PostToolUse."""
        name, inp = payload.get("tool_name"), payload.get("tool_input") or {}
        if name == "Write":
            p = self.inside(inp.get("file_path"))
            if p:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(inp.get("content") or "")
        elif name in ("Edit", "MultiEdit"):
            p = self.inside(inp.get("file_path"))
            if not p:
                return
            edits = inp.get("edits") or [inp]
            text = p.read_text() if p.exists() else ""
            for e in edits:
                old, new = e.get("old_string") or "", e.get("new_string") or ""
                if old and old in text:
                    text = text.replace(old, new) if e.get("replace_all") else text.replace(old, new, 1)
                else:
                    text = text + ("" if not text or text.endswith("\n") else "\n") + new + "\n"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        elif name == "Bash":
            m = re.fullmatch(r"\s*rm (?:-f |-rf )?([\w./ -]+)\s*", inp.get("command") or "")
            if m:
                for part in m.group(1).split():
                    p = self.inside(self.repo / part) or self.inside(part)
                    if p and p.is_file():
                        p.unlink()


def load_memories(repo):
    out = []
    for f in sorted((repo / ".goldfish" / "memories").rglob("*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def text_of(memory):
    parts = [str(memory.get("content") or "")]
    parts += [str(f) for f in memory.get("files") or []]
    return "\n".join(parts).lower()


# Claude Code's own wrappers: a memory that quotes them took markup for the
# request or the answer (issue 38, finding 2) and is no true positive.
WRAPPERS = ("<local-command-caveat>", "caveat: the messages below were generated", "<command-name>",
            "<command-message>", "<local-command-stdout>", "[request interrupted by user")


def matches(memory, label):
    if any(w in text_of(memory) for w in WRAPPERS):
        return False
    types = label["type"] if isinstance(label["type"], list) else [label["type"]]
    if memory.get("type") not in types:
        return False
    text = text_of(memory)
    if not all(t.lower() in text for t in label.get("all", [])):
        return False
    return all(any(t.lower() in text for t in group) for group in label.get("any", []))


def score(memories, labels):
    """Each memory takes the first unmatched label it matches, required
    labels before optional ones (an optional label is worth keeping but not
    required: it makes a memory a true positive and is not counted in recall)."""
    order = sorted(range(len(labels)), key=lambda i: bool(labels[i].get("optional")))
    used = [False] * len(labels)
    verdicts = []
    for m in memories:
        hit = None
        for i in order:
            if not used[i] and matches(m, labels[i]):
                used[i], hit = True, i
                break
        verdicts.append(hit)
    return verdicts, used


def replay_session(goldfish, folder, keep):
    events = [json.loads(l) for l in (folder / "events.jsonl").read_text().splitlines() if l.strip()]
    transcript = (folder / "transcript.jsonl").read_text().splitlines()
    labels = json.loads((folder / "labels.json").read_text())
    work = Path(tempfile.mkdtemp(prefix=f"gf-eval-{folder.name}-"))
    r = Replay(goldfish, work)
    try:
        r.setup()
        orig = next((e["payload"].get("cwd") for e in events if e["payload"].get("cwd")), None)
        repo = str(r.repo)
        tpath = work / "transcript.jsonl"
        failures = 0
        hook_seconds, drain_seconds = [], []
        for e in events:
            lines = transcript[: e.get("transcript_lines", len(transcript))]
            tpath.write_text("".join(rewrite(l, orig, repo) + "\n" for l in lines))
            payload = rewrite(e["payload"], orig, repo)
            payload["transcript_path"] = str(tpath)
            if e["hook"] == "post-tool-use":
                r.apply(payload)
            started = time.perf_counter()
            p = r.run(["sh", "-c", r.hook_command(e["hook"])], stdin=json.dumps(payload), check=False)
            hook_seconds.append(time.perf_counter() - started)
            failures += p.returncode != 0
            if e["hook"] == "stop":
                # A turn ended: the user reads and types before the next
                # one, so the queue drains before the transcript grows (and
                # the replay does not depend on the worker's speed).
                started = time.perf_counter()
                r.run(["goldfish", "capture", "work", "--wait"], check=False)
                drain_seconds.append(time.perf_counter() - started)
        # The session ends (Claude Code's SessionEnd), when init hooked it.
        if r.has_hook("session-end") and events:
            tpath.write_text("".join(rewrite(l, orig, repo) + "\n" for l in transcript))
            end = {k: events[-1]["payload"].get(k) for k in ("session_id", "cwd", "permission_mode")}
            end = rewrite(end, orig, repo)
            end.update({"transcript_path": str(tpath), "hook_event_name": "SessionEnd", "reason": "other"})
            p = r.run(["sh", "-c", r.hook_command("session-end")], stdin=json.dumps(end), check=False)
            failures += p.returncode != 0
        started = time.perf_counter()
        r.run(["goldfish", "capture", "work", "--wait"], check=False)
        drain_seconds.append(time.perf_counter() - started)
        status = r.run(["goldfish", "capture", "status", "--json"], check=False)
        try:
            status = json.loads(status.stdout)
        except ValueError:
            status = {"raw": status.stdout[-2000:]}
        memories = [m for m in load_memories(r.repo) if str(m.get("source", "")).startswith("capture")]
        superseded = {s for m in memories for s in (m.get("supersedes") or [])
                      if isinstance(s, str)} | {m.get("supersedes") for m in memories if isinstance(m.get("supersedes"), str)}
        shown = [m for m in memories if m.get("id") not in superseded]
        verdicts, used = score(shown, labels["expected"])
        # Every line written, superseded checkpoints too: what the log holds.
        all_verdicts, all_used = score(memories, labels["expected"])
        return {
            "session": folder.name,
            "shapes": labels.get("shapes", []),
            "events": len(events),
            "hook_failures": failures,
            "hook_seconds": hook_seconds,
            "drain_seconds": sum(drain_seconds),
            "stops": sum(e["hook"] == "stop" for e in events),
            "labels": sum(not l.get("optional") for l in labels["expected"]),
            "stored": len(shown),
            "stored_total": len(memories),
            "tp_total": sum(v is not None for v in all_verdicts),
            "half": labels.get("half", "tune"),
            "source_repo": labels.get("source_repo"),
            "tp": sum(v is not None for v in verdicts),
            "found": sum(u and not l.get("optional") for u, l in zip(used, labels["expected"])),
            "memories": [{"type": m.get("type"), "content": m.get("content"), "files": m.get("files"),
                          "label": v} for m, v in zip(shown, verdicts)],
            "missed": [l for l, u in zip(labels["expected"], used) if not u and not l.get("optional")],
            "status": status,
            "workdir": str(work) if keep else None,
        }
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def ratio(a, b):
    return None if b == 0 else a / b


def fmt(x):
    return "-" if x is None else f"{x:.2f}"


def aggregate(rows):
    stored = sum(r["stored"] for r in rows)
    tp = sum(r["tp"] for r in rows)
    labels = sum(r["labels"] for r in rows)
    found = sum(r["found"] for r in rows)
    stored_total = sum(r["stored_total"] for r in rows)
    tp_total = sum(r["tp_total"] for r in rows)
    return {"sessions": len(rows), "labels": labels, "stored": stored, "tp": tp, "found": found,
            "precision": ratio(tp, stored), "recall": ratio(found, labels),
            "lines_written": stored_total, "lines_tp": tp_total, "lines_precision": ratio(tp_total, stored_total),
            "repositories": len({r["source_repo"] or r["session"].split("-")[1] for r in rows})}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--goldfish", required=True, help="the goldfish binary to measure")
    ap.add_argument("--sessions", default=str(SESSIONS))
    ap.add_argument("--only", action="append", help="replay only this session (repeatable)")
    ap.add_argument("--half", choices=["tune", "test"],
                    help="replay only the sessions of this half (labels.json `half`, by repository; "
                         "sessions without one are tuning sessions)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep each replay's folder")
    ap.add_argument("-v", "--verbose", action="store_true", help="print what was stored and what was missed")
    args = ap.parse_args()
    folders = sorted(p for p in Path(args.sessions).iterdir() if (p / "events.jsonl").exists())
    if args.only:
        folders = [f for f in folders if f.name in args.only]
    if args.half:
        half = lambda f: json.loads((f / "labels.json").read_text()).get("half", "tune")
        folders = [f for f in folders if half(f) == args.half]
    rows = [replay_session(args.goldfish, f, args.keep) for f in folders]
    shapes = {s: aggregate([r for r in rows if s in r["shapes"]]) for s in SHAPES}
    total = aggregate(rows)
    hooks = sorted(t for r in rows for t in r["hook_seconds"])
    events = sum(r["events"] for r in rows)
    total["hook_ms_p50"] = 1000 * hooks[len(hooks) // 2] if hooks else None
    total["drain_ms_per_event"] = 1000 * sum(r["drain_seconds"] for r in rows) / events if events else None
    if args.json:
        for r in rows:
            r.pop("hook_seconds")
        json.dump({"goldfish": args.goldfish, "sessions": rows, "shapes": shapes, "total": total}, sys.stdout,
                  indent=1)
        print()
        return
    print(f"{'session':34} {'events':>6} {'labels':>6} {'stored':>6} {'TP':>4} {'found':>5} {'prec':>5} {'recall':>6}  shapes")
    for r in rows:
        print(f"{r['session']:34} {r['events']:6} {r['labels']:6} {r['stored']:6} {r['tp']:4} {r['found']:5} "
              f"{fmt(ratio(r['tp'], r['stored'])):>5} {fmt(ratio(r['found'], r['labels'])):>6}  {','.join(r['shapes'])}"
              + (f"  ({r['hook_failures']} hook exits != 0)" if r["hook_failures"] else ""))
        if args.verbose:
            for m in r["memories"]:
                mark = "TP" if m["label"] is not None else "FP"
                print(f"    {mark} {m['type']}: {str(m['content'])[:160]!r}")
            for l in r["missed"]:
                print(f"    MISSED {l['type']}: {l.get('what', l.get('all'))}")
    print()
    print(f"{'shape':34} {'sessions':>8} {'labels':>6} {'stored':>6} {'TP':>4} {'found':>5} {'prec':>5} {'recall':>6}"
          f" {'lines':>6} {'linesTP':>7} {'lprec':>5}")
    print(f"hook p50 {fmt(total['hook_ms_p50'])} ms a call; worker {fmt(total['drain_ms_per_event'])} ms an event "
          f"(its drains' time over {events} hook events, stops included)")
    for s, a in list(shapes.items()) + [("TOTAL", total)]:
        print(f"{s:34} {a['sessions']:8} {a['labels']:6} {a['stored']:6} {a['tp']:4} {a['found']:5} "
              f"{fmt(a['precision']):>5} {fmt(a['recall']):>6} {a['lines_written']:6} {a['lines_tp']:7} "
              f"{fmt(a['lines_precision']):>5}")


if __name__ == "__main__":
    main()
