#!/usr/bin/env python3
"""Builds the background table of word rarity the keyword index blends with
a workspace's own statistics (src/adapters/index/keyword/rarity/).

A table is document frequencies of Porter stems, analysed as the keyword
index analyses text (words of letters and digits, lowercased, accents
folded, Porter's stemming on words of 3 to 64 bytes): a header, then one
`stem<TAB>documents` line per stem, sorted by stem (bytes), so the binary
looks a stem up by bisection without parsing the table.

Corpora, each from a package registry, pinned by version and sha256:

  python-docs  the Python 3.11 documentation (Debian's python3.11-doc
               3.11.2-6+deb12u9): each changelog entry of
               whatsnew/changelog (about 10,000 bug fixes and changes) and
               each paragraph of the reST sources is a document.
               Licence: PSF License Version 2 (the documentation).
  wordfreq     wordfreq 3.1.1's English word frequencies (PyPI), turned
               into the share of 32-word documents holding a word:
               1 - exp(-32 f). Licence of the data: CC-BY-SA 4.0.

Usage: scripts/rarity/build_table.py CORPUS OUT [--max-bytes N]
Needs snowballstemmer==3.1.1 (and msgpack==1.2.4 for wordfreq) in the
Python it runs with; downloads with `apt-get download` and `pip download`
into a temporary folder and checks their sha256 first.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import math
import re
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
from collections import Counter
from pathlib import Path

import snowballstemmer  # 3.1.1: Snowball's `porter`, the algorithm the index stems with

PYTHON_DOC = ("python3.11-doc", "3.11.2-6+deb12u9", "5b3594189d6ef9a6963ce0347fd307a1cc67620ad697e144db366070e2e146be")
WORDFREQ = ("wordfreq", "3.1.1", "4b1c6ecffc6198be3396d5cf871c4423ca71c907c231348d352dd54d62b97473")
# wordfreq's frequencies become the share of documents of this many words
# holding the word.
WORDFREQ_LENGTH = 32
# wordfreq's table counts documents out of this many.
WORDFREQ_DOCUMENTS = 10_000_000

STEMMER = snowballstemmer.stemmer("porter")
WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def stems(text: str) -> set[str]:
    out = set()
    for word in WORD.findall(fold(text.lower())):
        if 3 <= len(word.encode()) <= 64:
            word = STEMMER.stemWord(word)
        out.add(word)
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def checked(path: Path, want: str) -> Path:
    got = sha256(path)
    if got != want:
        sys.exit(f"{path.name}: sha256 {got}, want {want}")
    return path


def python_docs(work: Path) -> tuple[Counter, int, str]:
    name, version, digest = PYTHON_DOC
    subprocess.run(["apt-get", "download", f"{name}={version}"], cwd=work, check=True)
    deb = checked(next(work.glob(f"{name}_*.deb")), digest)
    root = work / "deb"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    html_root = root / "usr/share/doc/python3.11/html"
    documents: list[str] = []
    changelog = gzip.decompress((html_root / "whatsnew/changelog.html.gz").read_bytes()).decode()
    for item in re.findall(r"<li><p>(.*?)</p>", changelog, flags=re.S):
        documents.append(html.unescape(re.sub(r"<[^>]+>", " ", item)))
    for source in sorted((html_root / "_sources").rglob("*.rst.txt")):
        if source.name == "changelog.rst.txt":
            continue
        for paragraph in re.split(r"\n\s*\n", source.read_text(errors="replace")):
            if len(paragraph.split()) >= 5:
                documents.append(paragraph)
    df: Counter = Counter()
    for document in documents:
        df.update(stems(document))
    return df, len(documents), f"{name} {version} (Debian), PSF License Version 2"


def wordfreq(work: Path) -> tuple[Counter, int, str]:
    import msgpack  # 1.2.4

    name, version, digest = WORDFREQ
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", f"{name}=={version}", "-d", str(work)],
        check=True,
    )
    wheel = checked(next(work.glob(f"{name}-{version}-*.whl")), digest)
    with zipfile.ZipFile(wheel) as z:
        packed = msgpack.unpackb(gzip.decompress(z.read("wordfreq/data/large_en.msgpack.gz")), raw=False)
    # cBpack: a header, then buckets of words, bucket i at 10^(-i/100).
    frequency: Counter = Counter()
    for bucket, words in enumerate(packed[1:]):
        f = 10 ** (-bucket / 100)
        for word in words:
            for stem in stems(word):
                frequency[stem] += f
    df = Counter()
    for stem, f in frequency.items():
        count = round(WORDFREQ_DOCUMENTS * (1 - math.exp(-WORDFREQ_LENGTH * f)))
        if count > 0:
            df[stem] = count
    return df, WORDFREQ_DOCUMENTS, f"{name} {version} (PyPI) English, data CC-BY-SA 4.0 (wordfreq by Robyn Speer et al.)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", choices=["python-docs", "wordfreq"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--max-bytes", type=int, default=300_000, help="the commonest stems that fit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        df, n, source = (python_docs if args.corpus == "python-docs" else wordfreq)(Path(tmp))
    header = f"# goldfish word rarity: {args.corpus}\n# source: {source}\n# documents: {n}\n"
    size = len(header.encode())
    kept = []
    # Commonest first until the table is full; a stem left out reads as in
    # fewer documents than any kept.
    for stem, count in sorted(df.items(), key=lambda kv: (-kv[1], kv[0])):
        if "\t" in stem or "\n" in stem or stem.startswith("#"):
            continue
        line = f"{stem}\t{count}\n"
        if size + len(line.encode()) > args.max_bytes:
            break
        size += len(line.encode())
        kept.append((stem, count))
    kept.sort(key=lambda kv: kv[0].encode())
    least = min((c for _, c in kept), default=1)
    # What a stem not in the table reads as: half the fewest documents kept.
    header += f"# floor: {least / 2}\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", newline="\n") as out:
        out.write(header)
        for stem, count in kept:
            out.write(f"{stem}\t{count}\n")
    print(f"{args.out}: {len(kept)} stems of {len(df)}, {size} bytes, {n} documents, least kept {least}", file=sys.stderr)


if __name__ == "__main__":
    main()
