#!/usr/bin/env python3
"""The secret rules measured on text nobody here wrote (issue 39, MEDIUM 6).

    python3 scripts/eval/secrets_public.py --goldfish target/release/goldfish [--json] [--misses]

Positives: fixtures/secrets-public/*.secrets.txt (other projects' labelled
test cases: which vendor, which shape; sources and licences in its
SOURCE.md). Negatives: their *.innocent.txt, and real text that holds no
secret: 300 commit messages and 300 CHANGELOG entries of public Rust
projects (fixtures/injection-public/benign-*.tsv), and every line of
agents' tool output in the public sessions of fixtures/capture-sessions/
(code, test and build output). Our own labelled sets (fixtures/secrets/)
are reported too, as a regression, never as the measure.

Every row becomes a hand-written memory line in a temp git repository,
committed; `goldfish recall --include-untrusted --json` tells which carry
the `secret` flag (the same scan `store` refuses with). Rows are grouped
by source and by the vendor part of their name (`slack/valid-1` ->
`slack`). A `⁞` in a row is removed first (it keeps secret scanners off
this repository: fixtures/secrets/README.md).

Stdlib only.
"""

import argparse
import json
import re
import sys
from collections import OrderedDict
from pathlib import Path

# The temp repository, hermetic environment and recall of the injection measure.
from injection_public import recalled_flags

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "fixtures" / "secrets-public"
OURS = ROOT / "fixtures" / "secrets"
MAX_ROW = 4000


def load_cases(path):
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        name, text = line.split("\t", 1)
        text = text.replace("\\n", "\n").replace("\u205e", "")
        text = re.sub(r"\\u\{([0-9a-fA-F]{1,6})\}", lambda m: chr(int(m.group(1), 16)), text)
        rows.append((name, text))
    return rows


def load_tsv(path, group):
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        _, text = line.split("\t", 1)
        rows.append((group, text.replace("\\n", "\n")))
    return rows


def session_lines():
    """Each non-empty line of tool output in the public sessions."""
    rows = []
    for transcript in sorted((ROOT / "fixtures" / "capture-sessions").glob("*/transcript.jsonl")):
        session = transcript.parent.name
        for raw in transcript.read_text().splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            content = (entry.get("message") or {}).get("content")
            if not isinstance(content, list):
                continue
            for part in content:
                if not isinstance(part, dict) or part.get("type") != "tool_result":
                    continue
                body = part.get("content")
                if isinstance(body, list):
                    body = "\n".join(p.get("text", "") for p in body if isinstance(p, dict))
                if not isinstance(body, str):
                    continue
                for line in body.splitlines():
                    line = line.strip()
                    if len(line) >= 8:
                        rows.append((f"session/{session}", line[:MAX_ROW]))
    # One row per distinct line.
    seen, unique = set(), []
    for group, text in rows:
        if text not in seen:
            seen.add(text)
            unique.append((group, text))
    return unique


def flagged(goldfish, rows):
    """For each row, whether recall flags it `secret` (None: not indexed)."""
    return [
        None if f is None else "secret" in f
        for f in recalled_flags(goldfish, rows, "gf-sec-")
    ]


def tally(rows, hits, key):
    per = OrderedDict()
    for (name, _), hit in zip(rows, hits):
        k = key(name)
        n, h, missing = per.get(k, (0, 0, 0))
        per[k] = (n + 1, h + int(bool(hit)), missing + int(hit is None))
    return per


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goldfish", required=True)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", action="store_true", help="print missed positives and false alarms")
    args = ap.parse_args()
    goldfish = str(Path(args.goldfish).resolve())

    sets = OrderedDict()
    for path in sorted(PUBLIC.glob("*.secrets.txt")):
        sets[(path.name.split(".")[0], "secrets")] = load_cases(path)
    for path in sorted(PUBLIC.glob("*.innocent.txt")):
        sets[(path.name.split(".")[0], "innocent")] = load_cases(path)
    sets[("commits", "innocent")] = load_tsv(ROOT / "fixtures/injection-public/benign-commits.tsv", "commit")
    sets[("changelog", "innocent")] = load_tsv(ROOT / "fixtures/injection-public/benign-changelog.tsv", "changelog")
    sets[("sessions", "innocent")] = session_lines()
    sets[("ours", "secrets")] = load_cases(OURS / "secrets.txt") + load_cases(OURS / "stated.txt")
    sets[("ours", "innocent")] = load_cases(OURS / "innocent.txt") + load_cases(OURS / "stated-innocent.txt")

    report = OrderedDict()
    for (source, label), rows in sets.items():
        hits = flagged(goldfish, rows)
        n = len(rows)
        caught = sum(1 for h in hits if h)
        unindexed = sum(1 for h in hits if h is None)
        entry = {"rows": n, "flagged": caught, "share": round(caught / n, 3) if n else None, "not_indexed": unindexed}
        if label == "secrets":
            per = tally(rows, hits, lambda name: name.split("/", 1)[0])
            entry["vendors"] = len(per)
            entry["vendors_all_caught"] = sum(1 for (t, h, _) in per.values() if h == t)
            entry["vendors_none_caught"] = sum(1 for (t, h, _) in per.values() if h == 0)
            entry["per_vendor"] = {k: f"{h}/{t}" for k, (t, h, _) in per.items()}
        report[f"{source}.{label}"] = entry
        if args.misses:
            want = label == "secrets"
            for (name, text), hit in zip(rows, hits):
                if bool(hit) != want:
                    print(f"{'MISS' if want else 'FALSE'} {source} {name}: {text[:160]!r}", file=sys.stderr)

    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{'set':<28}{'rows':>7}{'flagged':>9}{'share':>8}{'vendors (all/none caught)':>30}")
    for key, e in report.items():
        vendors = (
            f"{e['vendors']} ({e['vendors_all_caught']}/{e['vendors_none_caught']})" if "vendors" in e else ""
        )
        print(f"{key:<28}{e['rows']:>7}{e['flagged']:>9}{e['share']:>8}{vendors:>30}")


if __name__ == "__main__":
    main()
