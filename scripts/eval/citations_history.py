#!/usr/bin/env python3
"""Citations against real history (issue 55): are goldfish's verdicts on a
cited span at a later commit what git itself says happened to those lines?

Data: bug-fix commits of four public repositories, two per half, the split
chosen before any result was seen (tune: ripgrep, Rust; requests, Python.
test: cobra, Go; express, JavaScript). A commit qualifies when it is not a
merge, its message says fix/fixes/fixed/bug, it is at least 90 days older
than the repository's newest commit, and it modifies a source file of the
repository's language (not a test) in a hunk (`git show -U0`: one block of
deleted lines replaced by one block of 1-40 added lines, at least ten
letters or digits among them, the file under 4 MiB). The cited span is that
block of added lines in the fix's post-image (first to last non-blank
line): the fix's new code, exactly what git attributes to the fix. The
qualifying commits are sampled evenly by date, at most `--per-repo` a
repository; `--select` writes them, with the later points each is judged
at, to `scripts/eval/data/citations_history.tsv`, and a run reads that file
(so a rerun judges the same spans at the same commits).

A run, per repository, in a scratch clone of the mirror: `goldfish init`;
for each fix C: check out C, `goldfish store --type insight --files
PATH:A-B` (the anchor reads C's version), keep the line it wrote. Later
points T for each memory: the first first-parent commit of the mirror's
HEAD containing C and dated (committer) at least 28 days after C, the same
for 90 days, and the HEAD the data names. For each distinct T: a fresh
GOLDFISH_HOME, a branch at T, the lines of the memories judged at T
appended and committed, `goldfish sync`, each memory's verdict read from
`goldfish show ID --json` (`cites[0]`: verdict, now).

Truth from git: `git blame -w -M --porcelain C..T -- PATH`. With C as the
boundary, every line of T's file that git traces back unchanged to C is
blamed on C with its line number in C's version (`-M`: across moves in the
file; `-w`: whitespace ignored, as goldfish ignores runs of it). The span
is intact at T when every non-blank line of it is traced to C, in order,
with no other non-blank line between them, and its whitespace-normalised
text is C's; its lines at T are then the first and last traced lines
(`holds` when those are the cited lines, else `moved`). Otherwise it is
`gone` when the path is not in T's tree or `git diff -b C T` deletes
every non-blank line of it in hunks that add no non-blank line, else
`changed`. One more case is kept
apart: git says the lines were rewritten, yet the span's normalised text
is in T's file (a revert, a move `-M` did not see). The issue defines
`changed` by text, so that case counts as intact for `changed`'s
precision and recall, and is left out of `moved` (git names no lines).

Scores per half: `lost` = the text is not at T (truth `changed` or `gone`);
goldfish's `changed` and `gone` verdicts as the prediction. Precision and
recall of that, of `changed` alone, moved correct (of goldfish's `moved`
verdicts, those whose lines are git's), moved found (of git's moves, those
goldfish calls `moved` at git's lines), and the share of memories whose
code changed within 28 and 90 days.

    python3 scripts/eval/citations_history.py --goldfish target/release/goldfish --half tune
    python3 scripts/eval/citations_history.py --select   # rewrites the data file

Repositories are read from `/work/.mirror/OWNER+NAME/repo` (the
`fetch` tool's snapshots) or `--mirrors DIR`; the data file names the HEAD
each was read at. Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "citations_history.tsv"
DAY = 86_400
MAX_ADDED = 40
MIN_ALNUM = 10
MAX_FILE_BYTES = 4 << 20


@dataclass(frozen=True)
class Repo:
    name: str
    language: str
    licence: str
    half: str
    ext: tuple[str, ...]
    # A path that is a test, not the code a memory would cite.
    test: str


REPOS = [
    Repo("BurntSushi/ripgrep", "Rust", "MIT OR Unlicense", "tune", (".rs",),
         r"(^|/)tests?/|(^|/)benches/"),
    Repo("psf/requests", "Python", "Apache-2.0", "tune", (".py",),
         r"(^|/)tests?/|(^|/)test_[^/]*$|_test\.py$"),
    Repo("spf13/cobra", "Go", "Apache-2.0", "test", (".go",),
         r"_test\.go$|(^|/)testdata/"),
    Repo("expressjs/express", "JavaScript", "MIT", "test", (".js",),
         r"(^|/)tests?/|(^|/)examples?/|(^|/)benchmarks?/"),
]

FIX = re.compile(r"\b(fix|fixes|fixed|bug)\b", re.IGNORECASE)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Eval",
    "GIT_AUTHOR_EMAIL": "eval@example.com",
    "GIT_COMMITTER_NAME": "Eval",
    "GIT_COMMITTER_EMAIL": "eval@example.com",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


def env_with(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GOLDFISH"))}
    env.update(GIT_ENV)
    env.update(extra)
    return env


def git(repo: Path, *args: str, check: bool = True, env: dict | None = None) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        env=env or env_with(),
    )
    if check and out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {out.stderr.decode(errors='replace')}")
    return out.stdout.decode("utf-8", errors="replace")


def git_bytes(repo: Path, *args: str) -> bytes | None:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, env=env_with())
    return out.stdout if out.returncode == 0 else None


def normalise(text: str) -> list[str]:
    """Goldfish's normalisation: non-blank lines, runs of whitespace as one
    space."""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


# ---------------------------------------------------------------- selection


@dataclass
class Selected:
    repo: str
    commit: str
    date: int
    path: str
    start: int
    end: int
    t28: str
    t90: str
    final: str


def mirror_of(mirrors: Path, repo: str) -> Path:
    return mirrors / repo.replace("/", "+") / "repo"


def first_parents(mirror: Path, head: str) -> tuple[list[str], list[int]]:
    shas, dates = [], []
    for line in git(mirror, "rev-list", "--first-parent", "--reverse", "--format=%ct", head).splitlines():
        if line.startswith("commit "):
            shas.append(line.split()[1])
        else:
            dates.append(int(line))
    return shas, dates


def contains(mirror: Path, ancestor: str, commit: str) -> bool:
    return subprocess.run(
        ["git", "-C", str(mirror), "merge-base", "--is-ancestor", ancestor, commit],
        env=env_with(),
    ).returncode == 0


def point(mirror: Path, shas: list[str], dates: list[int], commit: str, after: int) -> str:
    """The first first-parent commit dated at least `after` that contains
    `commit`."""
    # Containment is monotonic along the first-parent line.
    lo, hi = 0, len(shas) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if contains(mirror, commit, shas[mid]):
            hi = mid
        else:
            lo = mid + 1
    at = lo
    while at < len(shas) and dates[at] < after:
        at += 1
    return shas[min(at, len(shas) - 1)]


def the_hunk(mirror: Path, repo: Repo, commit: str) -> tuple[str, int, int] | None:
    """The first modified hunk of a source file in `commit` that qualifies:
    (path, first, last) of its added block in the post-image."""
    diff = git(mirror, "show", "--format=", "-U0", "--no-renames", "--no-color", "--no-ext-diff", commit)
    test = re.compile(repo.test)
    path = None
    hunk: list[str] | None = None
    header = None

    def judge() -> tuple[str, int, int] | None:
        if path is None or hunk is None or header is None:
            return None
        old_n, new_start, new_n = header
        if old_n == 0 or not (1 <= new_n <= MAX_ADDED):
            return None
        added = [line[1:] for line in hunk if line.startswith("+")]
        if len(added) != new_n:
            return None
        if sum(ch.isalnum() for line in added for ch in line) < MIN_ALNUM:
            return None
        nonblank = [i for i, line in enumerate(added) if line.strip()]
        if not nonblank:
            return None
        return path, new_start + nonblank[0], new_start + nonblank[-1]

    in_header = False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            found = judge()
            if found:
                return found
            path, hunk, header, in_header = None, None, None, True
        elif in_header and line.startswith("--- "):
            # A new file has no hunk that modifies lines.
            path = "/dev/null" if line[4:] == "/dev/null" else None
        elif in_header and line.startswith("+++ "):
            new = line[4:]
            in_header = False
            if new == "/dev/null" or path == "/dev/null" or not new.startswith("b/"):
                path = None
                continue
            name = new[2:]
            path = name if name.endswith(repo.ext) and not test.search(name) else None
        elif line.startswith("@@") and not in_header:
            found = judge()
            if found:
                return found
            m = HUNK.match(line)
            if m and path:
                old_n = 1 if m.group(2) is None else int(m.group(2))
                new_n = 1 if m.group(4) is None else int(m.group(4))
                header = (old_n, int(m.group(3)), new_n)
                hunk = []
            else:
                header, hunk = None, None
        elif hunk is not None and line[:1] in "+- \\":
            hunk.append(line)
    return judge()


def select(mirrors: Path, per_repo: int) -> list[Selected]:
    rows: list[Selected] = []
    for repo in REPOS:
        mirror = mirror_of(mirrors, repo.name)
        head = git(mirror, "rev-parse", "HEAD").strip()
        shas, dates = first_parents(mirror, head)
        newest = dates[-1]
        candidates = []
        log = git(mirror, "log", "--no-merges", "--format=%H%x00%ct%x00%s", head)
        for line in log.splitlines():
            commit, date, subject = line.split("\0", 2)
            if not FIX.search(subject) or int(date) + 90 * DAY > newest:
                continue
            candidates.append((int(date), commit))
        candidates.sort()
        qualified = []
        for date, commit in candidates:
            found = the_hunk(mirror, repo, commit)
            if not found:
                continue
            size = git(mirror, "cat-file", "-s", f"{commit}:{found[0]}", check=False).strip()
            if not size.isdigit() or int(size) > MAX_FILE_BYTES:
                continue
            qualified.append((date, commit, found))
        n = min(per_repo, len(qualified))
        picked = [qualified[i * len(qualified) // n] for i in range(n)]
        print(f"{repo.name}: {len(candidates)} fix commits, {len(qualified)} qualify, {n} taken",
              file=sys.stderr)
        for date, commit, (path, start, end) in picked:
            rows.append(Selected(
                repo.name, commit, date, path, start, end,
                point(mirror, shas, dates, commit, date + 28 * DAY),
                point(mirror, shas, dates, commit, date + 90 * DAY),
                head,
            ))
    return rows


def write_data(rows: list[Selected]) -> None:
    DATA.parent.mkdir(parents=True, exist_ok=True)
    with DATA.open("w", newline="") as f:
        out = csv.writer(f, delimiter="\t", lineterminator="\n")
        out.writerow(["repo", "commit", "date", "path", "start", "end", "t28", "t90", "final"])
        for r in rows:
            out.writerow([r.repo, r.commit, r.date, r.path, r.start, r.end, r.t28, r.t90, r.final])


def read_data() -> list[Selected]:
    with DATA.open() as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [Selected(r["repo"], r["commit"], int(r["date"]), r["path"], int(r["start"]),
                     int(r["end"]), r["t28"], r["t90"], r["final"]) for r in rows]


# ---------------------------------------------------------------- truth


@dataclass
class Truth:
    verdict: str  # holds, moved, changed, gone
    lines: tuple[int, int] | None = None
    # git says rewritten, but the normalised text is in T's file.
    text_elsewhere: bool = False
    # The path is not in T's tree, nor one git's `-M` renamed it to.
    file_gone: bool = False
    # The path T has the file at, when git's `-M` renamed it.
    path: str | None = None


def renamed_at(clone: Path, sel: Selected, at: str) -> str | None:
    """The path `git diff -M FIX T` renamed the cited file to, if any."""
    out = git(clone, "diff", "-M", "--name-status", "--diff-filter=R", "--no-ext-diff",
              sel.commit, at)
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] == sel.path:
            return parts[2]
    return None


def blame_truth(clone: Path, sel: Selected, at: str) -> Truth:
    cited_text = git_bytes(clone, "show", f"{sel.commit}:{sel.path}")
    assert cited_text is not None
    cited_lines = cited_text.decode("utf-8", errors="replace").splitlines()
    span = [n for n in range(sel.start, sel.end + 1) if cited_lines[n - 1].strip()]
    want = [" ".join(cited_lines[n - 1].split()) for n in span]
    path = sel.path
    if git_bytes(clone, "cat-file", "-e", f"{at}:{path}") is None:
        path = renamed_at(clone, sel, at)
        if path is None:
            return Truth("gone", file_gone=True)
    # `git blame` follows the file through renames by itself.
    porcelain = git(clone, "blame", "-w", "-M", "--porcelain", f"{sel.commit}..{at}", "--", path)
    # (origin commit, origin line, final line, text) per line of T's file.
    lines: list[tuple[str, int, int, str]] = []
    current = None
    for line in porcelain.splitlines():
        if line.startswith("\t"):
            assert current is not None
            lines.append((*current, line[1:]))
            current = None
        else:
            parts = line.split(" ")
            if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit() and parts[2].isdigit():
                current = (parts[0], int(parts[1]), int(parts[2]))
    nonblank = [l for l in lines if l[3].strip()]
    wanted = set(span)
    traced = [i for i, l in enumerate(nonblank) if l[0] == sel.commit and l[1] in wanted]
    now_text = [" ".join(l[3].split()) for l in nonblank]
    intact = (
        len(traced) == len(span)
        and [nonblank[i][1] for i in traced] == span
        and traced == list(range(traced[0], traced[0] + len(span)))
        and [now_text[i] for i in traced] == want
    ) if traced else False
    if intact:
        start, end = nonblank[traced[0]][2], nonblank[traced[-1]][2]
        same = (start, end) == (sel.start, sel.end) and path == sel.path
        return Truth("holds" if same else "moved", (start, end), path=path)
    width = len(want)
    elsewhere = any(now_text[i:i + width] == want for i in range(len(now_text) - width + 1))
    return Truth(deleted_or_changed(clone, sel, at, span, path), None, elsewhere, path=path)


def deleted_or_changed(clone: Path, sel: Selected, at: str, span: list[int], path: str) -> str:
    """`gone` when git's diff from C to T (`-b`, as goldfish reads runs of
    whitespace; the file at `path` in T, renamed or not) deletes every
    non-blank line of the span in hunks that put no non-blank line in
    their place; else `changed`."""
    if path == sel.path:
        diff = git(clone, "diff", "-b", "-U0", "--no-renames", "--no-ext-diff", "--no-color",
                   sel.commit, at, "--", sel.path)
    else:
        diff = git(clone, "diff", "-b", "-U0", "--no-ext-diff", "--no-color",
                   f"{sel.commit}:{sel.path}", f"{at}:{path}")
    hunks: list[tuple[int, int, bool]] = []  # old start, old end (exclusive), adds text
    for line in diff.splitlines():
        m = HUNK.match(line)
        if m:
            old_start = int(m.group(1))
            old_n = 1 if m.group(2) is None else int(m.group(2))
            hunks.append((old_start, old_start + old_n, False))
        elif hunks and line.startswith("+") and line[1:].strip():
            hunks[-1] = (hunks[-1][0], hunks[-1][1], True)
    for n in span:
        hunk = next((h for h in hunks if h[0] <= n < h[1]), None)
        if hunk is None or hunk[2]:
            return "changed"
    return "gone"


# ---------------------------------------------------------------- goldfish


def goldfish(binary: Path, cwd: Path, home: Path, *args: str, now: str | None = None) -> str:
    extra = {"GOLDFISH_HOME": str(home), "GOLDFISH_WARM": "0", "GOLDFISH_CAPTURE": "off"}
    if now:
        extra["GOLDFISH_NOW"] = now
    out = subprocess.run([str(binary), *args], cwd=cwd, capture_output=True, env=env_with(**extra))
    if out.returncode != 0:
        raise RuntimeError(f"goldfish {' '.join(args)} (in {cwd}): {out.stderr.decode(errors='replace')}")
    return out.stdout.decode()


def rfc3339(ts: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def memory_lines(clone: Path) -> list[tuple[str, str]]:
    """Every (id, line) of the untracked memory folder."""
    out = []
    for path in sorted((clone / ".goldfish" / "memories").rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                out.append((json.loads(line)["id"], line))
    return out


@dataclass
class Judged:
    sel: Selected
    point: str  # t28, t90, final
    at: str
    days: float
    truth: Truth
    verdict: str = ""
    lines: tuple[int, int] | None = None
    # The path goldfish has it at (its `now_path`, else the cited one).
    path: str = ""


def run_repo(binary: Path, mirrors: Path, scratch: Path, repo: str, rows: list[Selected],
             timing: dict) -> list[Judged]:
    clone = scratch / repo.replace("/", "+")
    t0 = time.monotonic()
    git(Path("."), "clone", "-q", "--no-checkout", str(mirror_of(mirrors, repo)), str(clone))
    git(clone, "checkout", "-q", "--detach", rows[0].commit)
    home = scratch / "home-store"
    goldfish(binary, clone, home, "init")
    # Whatever init wrote beside the memories stays untracked, out of the
    # way of checkouts.
    lines: dict[str, tuple[str, str]] = {}  # commit → (memory id, its line)
    seen: set[str] = set()
    for sel in rows:
        git(clone, "checkout", "-q", "--detach", "--force", sel.commit)
        subject = git(clone, "log", "-1", "--format=%s", sel.commit).strip()
        text = f"The fix {sel.commit[:12]} in {repo}: {subject}"
        goldfish(binary, clone, home, "store", "--type", "insight", "--files",
                 f"{sel.path}:{sel.start}-{sel.end}", text, now=rfc3339(sel.date))
        fresh = [(i, l) for i, l in memory_lines(clone) if i not in seen]
        assert len(fresh) == 1, fresh
        seen.add(fresh[0][0])
        lines[sel.commit] = fresh[0]
    timing["store"] = timing.get("store", 0.0) + time.monotonic() - t0

    judged: list[Judged] = []
    by_point: dict[str, list[Judged]] = {}
    dates = {}
    for sel in rows:
        for name in ("t28", "t90", "final"):
            at = getattr(sel, name)
            if at not in dates:
                dates[at] = int(git(clone, "log", "-1", "--format=%ct", at).strip())
            j = Judged(sel, name, at, (dates[at] - sel.date) / DAY, Truth(""))
            judged.append(j)
            by_point.setdefault(at, []).append(j)

    t0 = time.monotonic()
    for n, (at, group) in enumerate(by_point.items()):
        home = scratch / f"home-{n}"
        git(clone, "checkout", "-q", "--force", "-B", "eval", at)
        folder = clone / ".goldfish" / "memories"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        seen = set()
        with (folder / "eval.jsonl").open("w") as f:
            for j in group:
                if j.sel.commit not in seen:
                    seen.add(j.sel.commit)
                    f.write(lines[j.sel.commit][1] + "\n")
        git(clone, "add", "-f", ".goldfish/memories/eval.jsonl")
        git(clone, "commit", "-q", "--no-verify", "-m", "eval: memories", env=env_with(GOLDFISH="0"))
        goldfish(binary, clone, home, "sync")
        for j in group:
            shown = json.loads(goldfish(binary, clone, home, "show", lines[j.sel.commit][0], "--json"))
            data = shown.get("data", shown)
            cite = data["cites"][0]
            j.verdict = cite["verdict"]
            j.lines = tuple(cite["now"]) if cite.get("now") else None
            j.path = cite.get("now_path") or cite["path"]
        shutil.rmtree(home, ignore_errors=True)
    timing["judge"] = timing.get("judge", 0.0) + time.monotonic() - t0

    t0 = time.monotonic()
    for j in judged:
        j.truth = blame_truth(clone, j.sel, j.at)
    timing["truth"] = timing.get("truth", 0.0) + time.monotonic() - t0
    return judged


# ---------------------------------------------------------------- scores


def ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def score(judged: list[Judged]) -> dict:
    lost = {"changed", "gone"}
    said_lost = [j for j in judged if j.verdict in lost]
    truly_lost = [j for j in judged if j.truth.verdict in lost and not j.truth.text_elsewhere]
    tp = [j for j in said_lost if j.truth.verdict in lost and not j.truth.text_elsewhere]
    present = [j for j in judged if not j.truth.file_gone]
    said_lost_present = [j for j in present if j.verdict in lost]
    truly_lost_present = [j for j in truly_lost if not j.truth.file_gone]
    tp_present = [j for j in tp if not j.truth.file_gone]
    said_changed = [j for j in judged if j.verdict == "changed"]
    truly_changed = [j for j in judged if j.truth.verdict == "changed" and not j.truth.text_elsewhere]
    tp_changed = [j for j in said_changed if j in truly_changed]
    # git names no lines for a text it says was rewritten: left out.
    said_moved = [j for j in judged if j.verdict == "moved" and not j.truth.text_elsewhere]
    at_git = lambda j: j.truth.lines == j.lines and j.truth.path == j.path  # noqa: E731
    moved_right = [j for j in said_moved if j.truth.verdict == "moved" and at_git(j)]
    truly_moved = [j for j in judged if j.truth.verdict == "moved"]
    found_moved = [j for j in truly_moved if j.verdict == "moved" and at_git(j)]
    holds_right = [j for j in judged if j.verdict == "holds" and j.truth.verdict == "holds"]
    confusion: dict[str, dict[str, int]] = {}
    for j in judged:
        truth = "changed (text elsewhere)" if j.truth.text_elsewhere else j.truth.verdict
        confusion.setdefault(truth, {}).setdefault(j.verdict, 0)
        confusion[truth][j.verdict] += 1
    memories = {j.sel.commit for j in judged}
    within = {}
    for name in ("t28", "t90"):
        at = [j for j in judged if j.point == name]
        within[name] = ratio(sum(j.truth.verdict in lost and not j.truth.text_elsewhere for j in at), len(at))
    return {
        "memories": len(memories),
        "judgements": len(judged),
        "lost_precision": ratio(len(tp), len(said_lost)),
        "lost_recall": ratio(len(tp), len(truly_lost)),
        "lost_present_precision": ratio(len(tp_present), len(said_lost_present)),
        "lost_present_recall": ratio(len(tp_present), len(truly_lost_present)),
        "changed_precision": ratio(len(tp_changed), len(said_changed)),
        "changed_recall": ratio(len(tp_changed), len(truly_changed)),
        "moved_correct": ratio(len(moved_right), len(said_moved)),
        "moved_found": ratio(len(found_moved), len(truly_moved)),
        "counts": {
            "said_lost": len(said_lost), "truly_lost": len(truly_lost), "lost_tp": len(tp),
            "present": len(present), "said_lost_present": len(said_lost_present),
            "truly_lost_present": len(truly_lost_present), "lost_tp_present": len(tp_present),
            "changed_tp": len(tp_changed),
            "said_changed": len(said_changed), "truly_changed": len(truly_changed),
            "said_moved": len(said_moved), "moved_right": len(moved_right),
            "truly_moved": len(truly_moved), "holds_right": len(holds_right),
            "truth_gone": sum(j.truth.verdict == "gone" for j in judged),
            "truth_file_gone": sum(j.truth.file_gone for j in judged),
            "said_gone": sum(j.verdict == "gone" for j in judged),
            "text_elsewhere": sum(j.truth.text_elsewhere for j in judged),
        },
        "changed_within_28_days": within["t28"],
        "changed_within_90_days": within["t90"],
        "confusion": confusion,
    }


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--goldfish", type=Path, help="the binary")
    parser.add_argument("--half", choices=["tune", "test", "both"], default="tune")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--select", action="store_true", help="choose the commits, write the data file")
    parser.add_argument("--per-repo", type=int, default=100)
    parser.add_argument("--repo", action="append", help="only this repository (owner/name)")
    parser.add_argument("--limit", type=int, help="only the first N commits of each repository (a trial)")
    parser.add_argument("--json", action="store_true", help="every judgement and the scores, as JSON")
    parser.add_argument("--keep", type=Path, help="scratch folder to keep (default: a temporary one)")
    args = parser.parse_args()

    if args.select:
        rows = select(args.mirrors, args.per_repo)
        write_data(rows)
        print(f"{len(rows)} rows → {DATA}", file=sys.stderr)
        return 0
    if not args.goldfish:
        parser.error("--goldfish is needed to run")
    binary = args.goldfish.resolve()
    rows = read_data()
    halves = ["tune", "test"] if args.half == "both" else [args.half]
    repos = [r for r in REPOS if r.half in halves and (not args.repo or r.name in args.repo)]
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="goldfish-cites-"))
    scratch.mkdir(parents=True, exist_ok=True)
    report = {"halves": {}, "judged": []}
    try:
        for half in halves:
            judged: list[Judged] = []
            timing: dict = {}
            start = time.monotonic()
            per_repo = {}
            for repo in [r for r in repos if r.half == half]:
                mine = [r for r in rows if r.repo == repo.name][: args.limit]
                got = run_repo(binary, args.mirrors, scratch, repo.name, mine, timing)
                per_repo[repo.name] = score(got)
                judged += got
            if not judged:
                continue
            scores = score(judged)
            scores["seconds"] = round(time.monotonic() - start, 1)
            scores["timing"] = {k: round(v, 1) for k, v in timing.items()}
            scores["repos"] = per_repo
            report["halves"][half] = scores
            for j in judged:
                report["judged"].append({
                    "half": half, "repo": j.sel.repo, "commit": j.sel.commit, "path": j.sel.path,
                    "cited": [j.sel.start, j.sel.end], "point": j.point, "at": j.at,
                    "days": round(j.days, 1), "verdict": j.verdict, "lines": j.lines,
                    "truth": j.truth.verdict, "truth_lines": j.truth.lines,
                    "text_elsewhere": j.truth.text_elsewhere,
                })
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    for half, s in report["halves"].items():
        c = s["counts"]
        print(f"## {half}: {s['memories']} memories, {s['judgements']} judgements, {s['seconds']} s "
              f"{s['timing']}")
        print(f"lost (changed or gone): precision {pct(s['lost_precision'])} "
              f"({c['lost_tp']}/{c['said_lost']}), recall {pct(s['lost_recall'])} "
              f"({c['lost_tp']}/{c['truly_lost']})")
        print(f"  the file still there ({c['present']}): precision {pct(s['lost_present_precision'])} "
              f"({c['lost_tp_present']}/{c['said_lost_present']}), recall {pct(s['lost_present_recall'])} "
              f"({c['lost_tp_present']}/{c['truly_lost_present']})")
        print(f"changed alone: precision {pct(s['changed_precision'])} ({c['changed_tp']}/{c['said_changed']}), "
              f"recall {pct(s['changed_recall'])} ({c['changed_tp']}/{c['truly_changed']})")
        print(f"moved: correct {pct(s['moved_correct'])} ({c['moved_right']}/{c['said_moved']}), "
              f"found {pct(s['moved_found'])} ({c['truly_moved']} moves)")
        print(f"gone: truth {c['truth_gone']} ({c['truth_file_gone']} files gone), said {c['said_gone']}; "
              f"text elsewhere {c['text_elsewhere']}")
        print(f"changed within 28 days {pct(s['changed_within_28_days'])}, "
              f"within 90 days {pct(s['changed_within_90_days'])}")
        print("confusion (truth → verdict):", json.dumps(s["confusion"]))
        for name, r in s["repos"].items():
            print(f"  {name}: {r['memories']} memories, lost P {pct(r['lost_precision'])} "
                  f"R {pct(r['lost_recall'])}, moved {pct(r['moved_correct'])}, "
                  f"28d {pct(r['changed_within_28_days'])}, 90d {pct(r['changed_within_90_days'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
