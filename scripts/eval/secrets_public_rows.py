#!/usr/bin/env python3
"""Check the format of fixtures/secrets-public/*.txt and print counts.

Each row: `name<TAB>text`, name `vendor/short-id`, names unique per file,
texts unique per file once the ⁞ splits are removed, every row of a
*.secrets.txt file carrying a ⁞ (U+205E), decoded text at most 400 bytes
(decoded as tests/it/secrets.rs does: `\\n` -> line break, ⁞ removed,
`\\u{..}` -> the character). Exits 1 on any error.

    python3 scripts/eval/secrets_public_rows.py [--vendors] [DIR]
"""
import collections
import os
import re
import sys

SPLIT = "\u205e"
ESCAPE = re.compile(r"\\u\{([0-9a-fA-F]{1,6})\}")


def decode(text):
    text = text.replace("\\n", "\n").replace(SPLIT, "")
    return ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def check(path):
    errors, names, texts = [], set(), set()
    vendors = collections.Counter()
    positive = path.endswith(".secrets.txt")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            where = f"{os.path.basename(path)}:{n}"
            if "\t" not in line:
                errors.append(f"{where}: no tab")
                continue
            name, text = line.split("\t", 1)
            if "\t" in text or "\r" in text:
                errors.append(f"{where}: raw tab or CR in the text")
            if not re.fullmatch(r"[A-Za-z0-9._-]+/[^\s/][^\s]*", name):
                errors.append(f"{where}: name {name!r} is not vendor/short-id")
            if name in names:
                errors.append(f"{where}: duplicate name {name!r}")
            names.add(name)
            if not text.strip():
                errors.append(f"{where}: empty text")
            if positive and SPLIT not in text:
                errors.append(f"{where}: positive row without {SPLIT}")
            plain = decode(text)
            if plain in texts:
                errors.append(f"{where}: duplicate text")
            texts.add(plain)
            if len(plain.encode("utf-8")) > 400:
                errors.append(f"{where}: {len(plain.encode('utf-8'))} bytes (over 400)")
            vendors[name.split("/", 1)[0]] += 1
    return len(names), vendors, errors


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show_vendors = "--vendors" in sys.argv
    here = os.path.dirname(os.path.abspath(__file__))
    folder = args[0] if args else os.path.join(here, "..", "..", "fixtures", "secrets-public")
    files = sorted(f for f in os.listdir(folder) if f.endswith((".secrets.txt", ".innocent.txt")))
    all_errors = []
    all_vendors = collections.Counter()
    print(f"{'file':34} {'rows':>5} {'vendors':>8}")
    for f in files:
        rows, vendors, errors = check(os.path.join(folder, f))
        all_errors += errors
        if f.endswith(".secrets.txt"):
            all_vendors.update(vendors)
        print(f"{f:34} {rows:5} {len(vendors):8}")
        if show_vendors:
            for v, c in sorted(vendors.items()):
                print(f"    {v:48} {c:4}")
    print(f"vendor/rule prefixes over all secrets files: {len(all_vendors)}")
    for e in all_errors:
        print("ERROR " + e)
    print("ok" if not all_errors else f"{len(all_errors)} errors")
    return 1 if all_errors else 0


if __name__ == "__main__":
    sys.exit(main())
