#!/usr/bin/env python3
"""The one benchmark table, from the rows the benchmarks emit.

Usage:
  bench_table.py ROWS.jsonl [--meta KEY=VALUE]... [--json FILE] [--markdown FILE] [--doc FILE]
  bench_table.py --from RESULTS.json [--markdown FILE] [--doc FILE]
  bench_table.py --compare OLD.json NEW.json

ROWS.jsonl holds one JSON object per number (see benches/common/report.rs):
area, measure, size (null when the number does not depend on one), unit,
value, and p95 for latencies. The table has one line per (area, measure) and
one column per size; numbers that do not depend on a size go to the last
column.

--json FILE      the whole run as one JSON document: {"meta": {...}, "rows": [...]}
--markdown FILE  the markdown (also printed on stdout)
--doc FILE       replaces what lies between `<!-- bench-table:begin -->` and
                 `<!-- bench-table:end -->` in FILE with the markdown
--from FILE      renders a saved --json document again
--compare A B    new ÷ old for every number both runs have
"""

import argparse
import json
import os
import platform
import signal
import subprocess
import sys

AREAS = [
    "store",
    "merge",
    "sync",
    "clone",
    "embed",
    "recall, warm",
    "recall, cold",
    "mcp",
    "vector stage",
    "index",
    "memory",
]
BEGIN = "<!-- bench-table:begin -->"
END = "<!-- bench-table:end -->"


def short(size):
    if size is None:
        return "any size"
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    if size >= 1000 and size % 1000 == 0:
        return f"{size // 1000}k"
    return str(size)


def number(value):
    """Three significant digits, thousands separated."""
    if value is None:
        return "n/a"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def cell(row):
    unit, value, p95 = row["unit"], row["value"], row.get("p95")
    if unit == "ms" and max(value, p95 or 0) >= 1000:
        unit, value = "s", value / 1000
        p95 = p95 / 1000 if p95 is not None else None
    text = number(value) if p95 is None else f"{number(value)} / {number(p95)}"
    if unit == "×":
        return f"{text}×"
    if unit == "B/memory":
        return f"{text} B"
    return f"{text} {unit}".strip()


def machine():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            names = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
        info["cpu"] = names[0] if names else platform.processor()
    except OSError:
        info["cpu"] = platform.processor() or "unknown"
    info["cores"] = os.cpu_count()
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(l for l in f if l.startswith("MemTotal")).split()[1])
        info["ram_gb"] = round(kb / 1024 / 1024, 1)
    except (OSError, StopIteration):
        pass
    info["os"] = f"{platform.system()} {platform.release()}"

    def output(*command):
        try:
            return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    info["rustc"] = output("rustc", "--version")
    info["git"] = output("git", "--version")
    commit = output("git", "rev-parse", "--short", "HEAD")
    if commit and output("git", "status", "--porcelain", "--untracked-files=no"):
        commit += " (uncommitted changes)"
    info["commit"] = commit
    return info


def render(document):
    meta, rows = document["meta"], document["rows"]
    sizes = sorted({r["size"] for r in rows if r["size"] is not None})
    any_size = any(r["size"] is None for r in rows)
    lines = {}  # (area, measure, unit) -> {size: row}, in first-seen order per area
    for row in rows:
        lines.setdefault((row["area"], row["measure"], row["unit"]), {})[row["size"]] = row
    order = {area: i for i, area in enumerate(AREAS)}
    keys = sorted(lines, key=lambda key: order.get(key[0], len(AREAS)))

    out = []
    title = f"goldfish {meta.get('commit') or ''}".strip()
    when = meta.get("date", "")
    mode = meta.get("mode", "")
    seconds = meta.get("seconds")
    took = f", took {int(seconds) // 60} min {int(seconds) % 60} s" if seconds else ""
    out.append(f"**{title}**, {mode} run{took}, {when}".rstrip(", "))
    out.append("")
    ram = f", {meta['ram_gb']} GB RAM" if meta.get("ram_gb") else ""
    out.append(f"machine: {meta.get('cores')} cores, {meta.get('cpu')}{ram}, {meta.get('os')}")
    load = meta.get("load_start")
    if load:
        out.append("")
        out.append(f"load average (1 min): {load} at the start, {meta.get('load_end', '?')} at the end")
    tools = ", ".join(v for v in (meta.get("rustc"), meta.get("git")) if v)
    if tools:
        out.append("")
        out.append(tools)
    if meta.get("note"):
        out.append("")
        out.append(f"**{meta['note']}**")
    out.append("")
    columns = [short(s) for s in sizes] + (["any size"] if any_size else [])
    out.append("| area | measure | " + " | ".join(columns) + " |")
    out.append("|---|---|" + "---:|" * len(columns))
    for key in keys:
        area, measure, _ = key
        by_size = lines[key]
        cells = [cell(by_size[s]) if s in by_size else "" for s in sizes]
        if any_size:
            cells.append(cell(by_size[None]) if None in by_size else "")
        out.append(f"| {area} | {measure} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Latencies: p50 / p95 where two numbers; otherwise the median. Sizes: memories (merge: lines per file; vector stage: vectors).")
    return "\n".join(out) + "\n"


def replace_in_doc(path, markdown):
    with open(path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{path}: no {BEGIN} … {END} markers to put the table between")
    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END)
    with open(path, "w") as f:
        f.write(text[:start] + "\n" + markdown + text[end:])


def compare(old_path, new_path):
    with open(old_path) as f:
        old = json.load(f)
    with open(new_path) as f:
        new = json.load(f)
    key = lambda r: (r["area"], r["measure"], r["size"], r["unit"])
    before = {key(r): r for r in old["rows"]}
    print(f"old: {old['meta'].get('commit')} ({old['meta'].get('date')}), new: {new['meta'].get('commit')} ({new['meta'].get('date')})")
    print()
    print("| area | measure | size | old | new | new ÷ old |")
    print("|---|---|---:|---:|---:|---:|")
    for row in new["rows"]:
        was = before.get(key(row))
        if was is None or not was["value"]:
            continue
        print(
            f"| {row['area']} | {row['measure']} | {short(row['size'])} | {cell(was)} | {cell(row)} | {row['value'] / was['value']:.2f} |"
        )


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", nargs="?")
    parser.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--doc")
    parser.add_argument("--from", dest="saved")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args()

    if args.compare:
        compare(*args.compare)
        return
    if args.saved:
        with open(args.saved) as f:
            document = json.load(f)
    elif args.rows:
        with open(args.rows) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        meta = machine()
        for item in args.meta:
            k, _, v = item.partition("=")
            meta[k] = v
        document = {"meta": meta, "rows": rows}
    else:
        parser.error("give ROWS.jsonl, --from FILE or --compare OLD NEW")

    markdown = render(document)
    sys.stdout.write(markdown)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(document, f, indent=1, ensure_ascii=False)
            f.write("\n")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown)
    if args.doc:
        replace_in_doc(args.doc, markdown)


if __name__ == "__main__":
    main()
