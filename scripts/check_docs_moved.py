"""Check that a README rewrite kept every figure and claim: each number, and each sentence, of an earlier README
must appear somewhere in the new README or in docs/.

    python scripts/check_docs_moved.py [REV]      # REV: the commit whose README.md is the old one (default HEAD)

Prints the numbers that are missing (the exit code is 1 when one is) and the sentences not found word for word,
to be read by a person: a sentence may have been reworded on purpose (a heading instead of a bold lead-in, a
link instead of "see ..."), a number may not.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rev", nargs="?", default="HEAD", help="the commit whose README.md is the old one")
    rev = parser.parse_args().rev
    old = subprocess.run(
        ["git", "show", f"{rev}:README.md"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    new = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    corpus = "\n".join(p.read_text(encoding="utf-8") for p in new)
    numbers_new = set(NUMBER.findall(corpus))
    missing = sorted(set(NUMBER.findall(old)) - numbers_new, key=lambda n: (len(n), n))
    flat = _norm(corpus)
    sentences = [_norm(s) for s in re.split(r"(?<=[.!?:;])\s+|\n\s*\n|\n[-|]", old)]
    unmatched = [s for s in sentences if len(s) > 20 and s not in flat]
    print(f"numbers in the old README: {len(set(NUMBER.findall(old)))}; missing now: {len(missing)}")
    for n in missing:
        print(f"  missing number: {n}")
    print(f"sentences not found word for word: {len(unmatched)} of {len(sentences)}")
    for s in unmatched:
        print(f"  - {s[:160]}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
