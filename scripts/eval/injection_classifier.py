#!/usr/bin/env python3
"""The rules beside a maintained classifier (the `jailguard` crate's embedded
MLP over all-MiniLM-L6-v2) on the same rows: the public corpora of
injection_public.py (fixtures/injection-public/) and real engineering text
written by others. Issue 54, "The detector".

    python3 scripts/eval/injection_classifier.py --goldfish target/release/goldfish \
        --jailguard /tmp/jg-target/release/jailguard-eval \
        --repo ripgrep=RG.git --repo serde=SERDE.git --repo clap=CLAP.git [--json]

Environment for the scorer: LD_LIBRARY_PATH with PyPI onnxruntime 1.20.x's
libonnxruntime.so.1 and JAILGUARD_MODEL_DIR holding all-MiniLM-L6-v2.onnx
(scripts/eval/jailguard/README.md says how both are made offline).

Rows
- Attacks and benign sets: fixtures/injection-public/ as injection_public.py
  loads them, all rows.
- Engineering text (false alarms that matter): commit messages of bat and fd
  (fixtures benign-commits), of every --repo (non-merge `git log HEAD`,
  subject and body, every k-th to 200 a repository); CHANGELOG bullets of
  bat and fd (fixtures benign-changelog); README.md and CHANGELOG.md
  paragraphs and bullets of every crates.io package in this repository's
  Cargo.lock found under ~/.cargo/registry/src (every k-th to 800).
- Split by source, never by row: commit messages of bat, ripgrep tune, the
  rest (fd, serde, clap) are held out; CHANGELOG bullets of bat tune, fd held
  out; crate docs by a hash of the crate's name. The classifier's threshold
  for "no more than 2% false alarms" is chosen on the tuning rows alone (the
  lowest cut that flags at most 2% of them); every figure for engineering
  text is on the held-out rows. Attack and benign corpora never set a
  threshold, so they are reported whole.

Rules: goldfish's `instruction-like` flag, through the real binary
(injection_public.detector). Classifier: the crate's `detect(text).score`;
columns at the crate's own cut (score > 0.5) and at the tuned cut; "either"
is rules or classifier at the tuned cut.

Stdlib only.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import injection_public as ip  # noqa: E402

ROOT = ip.ROOT
COMMITS_PER_REPO = 200
DOCS_CAP = 800
FA_BAR = 0.02
TUNE_COMMIT_SOURCES = {"bat", "ripgrep"}
TUNE_CHANGELOG_SOURCES = {"bat"}


def every_kth(rows, cap):
    return ip.every_kth(rows, cap)


# ------------------------------------------------------- engineering rows


def commit_rows(name, gitdir):
    out = subprocess.run(
        ["git", "--git-dir", gitdir, "log", "--no-merges", "--format=%H%x00%B%x1e", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout
    rows = []
    for rec in out.split("\x1e"):
        rec = rec.strip("\n")
        if "\x00" not in rec:
            continue
        _, msg = rec.split("\x00", 1)
        msg = msg.strip()
        if len(msg) >= 20:
            rows.append(msg)
    seen, uniq = set(), []
    for m in rows:
        if m not in seen:
            seen.add(m)
            uniq.append(m)
    return every_kth(uniq, COMMITS_PER_REPO)


def head(gitdir):
    return subprocess.run(["git", "--git-dir", gitdir, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def fixture_sources(name):
    """benign-commits / benign-changelog rows carry their repository as the
    category (bat or fd)."""
    return [(c.split(":", 1)[-1], t) for c, t in ip.load(name)]


BADGE = re.compile(r"^\s*(\[!\[|!\[|<|\[\w[^\]]*\]:\s)")


def doc_paragraphs(text):
    """Paragraphs of a Markdown file, prose only: fenced code, tables,
    headings, link definitions, badges and HTML left out; a bullet list
    splits into its items."""
    out, para, fence = [], [], False

    def flush():
        if not para:
            return
        if all(re.match(r"^\s*([-*+]|\d+\.)\s", l) or l.startswith("  ") for l in para) and re.match(r"^\s*([-*+]|\d+\.)\s", para[0]):
            items, cur = [], []
            for l in para:
                if re.match(r"^\s*([-*+]|\d+\.)\s", l) and not l.startswith("    ") and cur:
                    items.append(cur)
                    cur = []
                cur.append(l)
            if cur:
                items.append(cur)
            for it in items:
                out.append(" ".join(x.strip() for x in it))
        else:
            out.append(" ".join(x.strip() for x in para))
        para.clear()

    for line in text.splitlines():
        s = line.rstrip()
        if s.lstrip().startswith(("```", "~~~")):
            fence = not fence
            flush()
            continue
        if fence:
            continue
        if not s.strip() or s.lstrip().startswith(("#", "|", "---", "===")) or BADGE.match(s) or s.startswith("    "):
            flush()
            continue
        para.append(s)
    flush()
    keep = []
    for p in out:
        p = re.sub(r"^\s*([-*+]|\d+\.)\s+", "", p).strip()
        if 40 <= len(p) <= 2000 and len(p.split()) >= 8:
            keep.append(p)
    return keep


def crate_doc_rows(registry):
    lock = (ROOT / "Cargo.lock").read_text()
    pkgs = re.findall(r'\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"\nsource = "registry', lock)
    rows, crates = [], 0
    for name, ver in sorted(pkgs):
        d = Path(registry) / f"{name}-{ver}"
        if not d.is_dir():
            continue
        got = False
        for f in ("README.md", "CHANGELOG.md"):
            p = d / f
            if p.is_file():
                for para in doc_paragraphs(p.read_text(errors="replace")):
                    rows.append((name, para))
                    got = True
        crates += got
    seen, uniq = set(), []
    for c, t in rows:
        if t not in seen:
            seen.add(t)
            uniq.append((c, t))
    return every_kth(uniq, DOCS_CAP), crates


def tune_crate(name):
    return hashlib.sha256(name.encode()).digest()[0] % 2 == 0


def engineering(repos, registry):
    """Rows (set, source, split, text)."""
    rows, meta = [], {}
    for cat, t in fixture_sources("benign-commits"):
        rows.append(("commits", cat, "tune" if cat in TUNE_COMMIT_SOURCES else "held", t))
    for name, gitdir in repos:
        for t in commit_rows(name, gitdir):
            rows.append(("commits", name, "tune" if name in TUNE_COMMIT_SOURCES else "held", t))
        meta[name] = head(gitdir)
    for cat, t in fixture_sources("benign-changelog"):
        rows.append(("changelogs", cat, "tune" if cat in TUNE_CHANGELOG_SOURCES else "held", t))
    docs, crates = crate_doc_rows(registry)
    for c, t in docs:
        rows.append(("crate-docs", c, "tune" if tune_crate(c) else "held", t))
    meta["crate_docs_crates"] = crates
    return rows, meta


# --------------------------------------------------------------- scoring


def jailguard_scores(binary, texts):
    uniq = list(OrderedDict.fromkeys(texts))
    stdin = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in uniq)
    p = subprocess.run([binary], input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{binary}: exit {p.returncode}\n{p.stderr[-2000:]}")
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if len(lines) != len(uniq):
        raise SystemExit(f"{binary}: {len(uniq)} texts in, {len(lines)} scores out\n{p.stderr[-2000:]}")
    by = {t: json.loads(l)["score"] for t, l in zip(uniq, lines)}
    return [by[t] for t in texts]


def tuned_cut(scores):
    """The lowest cut c with at most FA_BAR of `scores` above it (flag =
    score > c)."""
    s = sorted(scores, reverse=True)
    allowed = int(FA_BAR * len(s))
    return s[allowed] if allowed < len(s) else 0.0


def counts(hits_by_col, idx):
    return {c: sum(1 for i in idx if h[i]) for c, h in hits_by_col.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goldfish", required=True)
    ap.add_argument("--jailguard", required=True, help="the scorer built from scripts/eval/jailguard/")
    ap.add_argument("--repo", action="append", default=[], help="NAME=GITDIR: commit messages of another repository (engineering text)")
    ap.add_argument("--registry", default=(glob.glob(os.path.expanduser("~/.cargo/registry/src/index.crates.io-*")) or [""])[0])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    gf = str(Path(a.goldfish).resolve())
    repos = [tuple(r.split("=", 1)) for r in a.repo]

    # Every row once: (group, corpus, category, split, text).
    rows = []
    for name in ip.ATTACKS:
        rows += [("attack", name, ip.coarse(c), "all", t) for c, t in ip.load(name)]
    for name in ip.BENIGN:
        if name in ("benign-commits", "benign-changelog"):
            continue  # counted below, with the engineering text, by source
        rows += [("benign", name, "-", "all", t) for c, t in ip.load(name)]
    eng, meta = engineering(repos, a.registry)
    rows += [("engineering", s, src, split, t) for s, src, split, t in eng]
    texts = [r[4] for r in rows]

    print(f"{len(rows)} rows; rules ...", file=sys.stderr)
    # One temp repository a corpus, as injection_public.py does.
    rule_hits = [False] * len(rows)
    for name in OrderedDict.fromkeys(r[1] for r in rows):
        idx = [i for i, r in enumerate(rows) if r[1] == name]
        hits, seen = ip.detector(gf, [("-", texts[i]) for i in idx])
        if seen != len(idx):
            print(f"warning: {name}: recall returned {seen} of {len(idx)} rows", file=sys.stderr)
        for i, h in zip(idx, hits):
            rule_hits[i] = h
    print("jailguard ...", file=sys.stderr)
    scores = jailguard_scores(a.jailguard, texts)

    tune = [i for i, r in enumerate(rows) if r[0] == "engineering" and r[3] == "tune"]
    cut = tuned_cut([scores[i] for i in tune])
    cols = OrderedDict(
        rules=rule_hits,
        jailguard_05=[s > 0.5 for s in scores],
        jailguard_tuned=[s > cut for s in scores],
    )
    cols["either"] = [r or j for r, j in zip(rule_hits, cols["jailguard_tuned"])]
    cols["either_05"] = [r or j for r, j in zip(rule_hits, cols["jailguard_05"])]

    def block(idx):
        return {"n": len(idx), **counts(cols, idx)}

    res = {"goldfish": gf, "jailguard": str(Path(a.jailguard).resolve()), "tuned_cut": cut,
           "tuning_rows": len(tune), "tuning": block(tune), "repos": meta,
           "attacks": OrderedDict(), "benign": OrderedDict(), "engineering_held": OrderedDict()}
    for name in ip.ATTACKS:
        idx = [i for i, r in enumerate(rows) if r[0] == "attack" and r[1] == name]
        e = block(idx)
        cats = OrderedDict()
        for i in idx:
            cats.setdefault(rows[i][2], []).append(i)
        e["categories"] = {c: block(ix) for c, ix in cats.items()}
        res["attacks"][name] = e
    for name in ip.BENIGN:
        idx = [i for i, r in enumerate(rows) if r[0] == "benign" and r[1] == name]
        if idx:
            res["benign"][name] = block(idx)
    held = [i for i, r in enumerate(rows) if r[0] == "engineering" and r[3] == "held"]
    for s in ("commits", "changelogs", "crate-docs"):
        res["engineering_held"][s] = block([i for i in held if rows[i][1] == s])
    res["engineering_held"]["all"] = block(held)
    res["held_false_alarms"] = {
        c: [texts[i][:200] for i in held if cols[c][i]][:15] for c in ("rules", "jailguard_05", "jailguard_tuned")
    }
    res["missed_by_both"] = {
        name: [texts[i][:160] for i in range(len(rows)) if rows[i][0] == "attack" and rows[i][1] == name and not cols["either"][i]][:3]
        for name in ip.ATTACKS
    }

    if a.json:
        print(json.dumps(res, indent=2, ensure_ascii=False))
        return
    pct = lambda h, n: f"{100.0 * h / n:.1f}%" if n else "-"
    hdr = f"{'':<34} {'n':>5} {'rules':>12} {'jg>0.5':>12} {'jg>cut':>12} {'either':>12}"
    cell = lambda e, c: f"{e[c]:>4} {pct(e[c], e['n']):>7}"
    line = lambda label, e: print(f"{label:<34} {e['n']:>5} " + " ".join(cell(e, c) for c in ("rules", "jailguard_05", "jailguard_tuned", "either")))
    print(f"tuned cut: score > {cut:.4f} (at most {FA_BAR:.0%} of {len(tune)} tuning rows of engineering text)\n")
    print("attacks flagged\n" + hdr)
    for name, e in res["attacks"].items():
        line(name, e)
        for c, v in e["categories"].items():
            line("  " + c[:32], v)
    print("\nfalse alarms, benign sets\n" + hdr)
    for name, e in res["benign"].items():
        line(name, e)
    print("\nfalse alarms, engineering text (held out)\n" + hdr)
    for s, e in res["engineering_held"].items():
        line(s, e)
    print("\nfalse alarms, engineering text (tuning)\n" + hdr)
    line("all", res["tuning"])
    for c, ex in res["held_false_alarms"].items():
        if ex:
            print(f"\nheld-out false alarms, {c}:")
            for t in ex[:8]:
                print(f"    {t[:110]!r}")


if __name__ == "__main__":
    main()
