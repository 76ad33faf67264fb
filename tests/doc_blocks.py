"""The code a page of the docs shows, as blocks a test can run: what tests/test_docs_blocks.py executes and
tests/test_docs_names.py reads.

A block is a fenced ```` ```python ```` block, or a fenced block without a language whose first line is a magic
(``%%agent ...``, ``%agent ...``): what a reader pastes into a notebook cell. A fence may be indented (a block
inside a list item); its lines lose that indent. A block that cannot run on a test machine says so in a line of
its own, visible to every reader: ``# not run by the docs test: <why>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The marker line of a block the docs test does not run, with the reason after the colon.
SKIP = re.compile(r"^\s*# not run by the docs test:(?P<why>.*)$", re.M)

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
_MAGIC = re.compile(r"^%%?agent\b")


@dataclass(frozen=True)
class Block:
    """One runnable block of a page: where it starts (1-based line of its fence), its kind and source."""

    line: int
    kind: str
    """``python``, or ``cell`` for a magic block."""
    source: str
    skip: str | None
    """Why the block is not run (its marker's reason), or None."""


def fences(markdown: str) -> list[tuple[int, str, str]]:
    """``(line, language, body)`` of every fenced block, the body without the fence's indent."""
    found = []
    for m in _FENCE.finditer(markdown):
        indent = m.group("indent")
        lines = m.group("body").splitlines()
        body = "\n".join(line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines)
        found.append((markdown.count("\n", 0, m.start()) + 1, m.group("lang"), body + "\n"))
    return found


def blocks(markdown: str) -> list[Block]:
    """The page's runnable blocks, in order."""
    out = []
    for line, lang, body in fences(markdown):
        if lang == "python":
            kind = "python"
        elif lang == "" and _MAGIC.match(body.lstrip()):
            kind = "cell"
        else:
            continue
        marker = SKIP.search(body)
        out.append(Block(line, kind, body, marker.group("why").strip() if marker else None))
    return out


def without_fences(markdown: str) -> str:
    """The page's prose: every fenced block taken out."""
    return _FENCE.sub("", markdown)
