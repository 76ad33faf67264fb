"""Finding a hidden value in text the way a reader would see it, not the way the bytes spell it.

A secret split by a zero-width space (``hun\\u200bter2``), wrapped in bidi controls, written in full-width
letters (``ｈｕｎｔｅｒ2``), in capitals (``HUNTER2``: CSS ``text-transform``, or a page that shouts) or spaced
out (``h u n t e r 2``; halves in two elements read as ``hunter 2``) reads as the secret, and a plain ``in``
test does not find it. Every redaction matches through :func:`replace_values`, which compares both sides after
the same normalisation, one character at a time:

* compatibility decomposition (NFKD: the same equivalence as NFKC, without recomposing, so an index in the
  normalised text still points at one character of the original);
* case folded (``str.casefold``, then NFKD again): another case of a value tells a reader the value, so every
  value is found in every case (:class:`CaseInsensitive` says so of a value explicitly; it is no longer needed);
* removed: white space (``str.isspace``), format characters (Unicode category ``Cf``: zero-width space,
  joiners, bidi embeddings, overrides and isolates, the word joiner, the byte-order mark, the soft hyphen, tag
  characters) and the other invisible characters that render as nothing (variation selectors, the combining
  grapheme joiner, Hangul fillers).

The replacement covers the whole span of the original text the match came from, invisible characters and
spaces inside it included, so what is left never holds the value in any spelling. Folding and dropping spaces
can only find more: a text that merely looks like a spaced or upper-case copy of a value is redacted too.

The page matches the same way (the screenshot mask, ``browser/page/snapshot.js``): :func:`page_rule` is this
definition as the page script takes it, so the page follows this module rather than a copy of it. The page
normalises one character at a time, as :func:`normalise` does: drop it if it is in ``strip`` (``\\p{Cf}``,
:data:`INVISIBLE` and the white space :func:`ignored` drops), else NFKD (``String.prototype.normalize``), then the
case fold (``fold``: the characters whose ``str.casefold`` differs from their lower case, ``toLowerCase`` for the
rest) and NFKD again, dropping ``strip`` characters from the result. The needles it looks for are :func:`key` of
each value, computed here. The painted text of a page (``browser/page/painted.py``) is matched by :func:`key`
too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache


class CaseInsensitive(str):
    """A value that is the same in any case (``secrets={"email": CaseInsensitive("Ada@Example.org")}``). Every
    value is now found in any case (another case of a secret tells a reader the secret); this marker is kept so
    code that names it keeps working, and means nothing more."""

    __slots__ = ()


#: Characters that render as nothing but are not of category Cf.
INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0"
    + "".join(chr(c) for c in range(0xFE00, 0xFE10))
    + "".join(chr(c) for c in range(0xE0100, 0xE01F0))
)

#: White space (``str.isspace``): a spaced-out value reads as the value.
SPACES = frozenset(chr(c) for c in range(0x3001) if chr(c).isspace())


def ignored(ch: str) -> bool:
    """Whether ``ch`` is dropped before matching (it is invisible, or white space)."""
    return ch in INVISIBLE or ch in SPACES or unicodedata.category(ch) == "Cf"


@lru_cache(maxsize=4096)
def _char(ch: str) -> str:
    if ignored(ch):
        return ""
    out = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())
    return "".join(c for c in out if not ignored(c))


_SPACE = re.compile("[" + "".join(sorted(SPACES)) + "]+")
_ASCII_SPACES = "[" + "".join(f"\\x{ord(c):02x}" for c in sorted(SPACES) if c.isascii()) + "]*"


def normalise(text: str) -> tuple[str, list[int] | None]:
    """``text`` as it is matched, and for each of its characters the index in ``text`` it came from (None when
    they are the same: ASCII text without white space, the common case of a short text)."""
    if text.isascii() and not _SPACE.search(text):
        return text.lower(), None
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        part = _char(ch)
        out.append(part)
        where.extend([i] * len(part))
    return "".join(out), where


def key(value: str) -> str:
    """The normal form of a value to find."""
    return normalise(value)[0]


def loose(text: str) -> str:
    """The normal form of ``text`` alone, without where each character came from (:func:`key` of any text)."""
    if text.isascii():
        return _SPACE.sub("", text.lower())
    return "".join(map(_char, text))


@lru_cache(maxsize=256)
def _ascii_pattern(needle: str) -> re.Pattern[str]:
    """``needle`` (ASCII) as a pattern over ASCII text: any case, white space allowed between its characters."""
    return re.compile(_ASCII_SPACES.join(map(re.escape, needle)), re.IGNORECASE | re.ASCII)


def spans(text: str, value: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text`` that read as ``value``, left to right, not overlapping."""
    needle = key(value)
    if not needle:
        return []
    if text.isascii():  # the common case, searched by one regular expression instead of a character map
        if not needle.isascii():
            return []  # a needle's normal form outside ASCII (an accent, a Greek letter) is not in ASCII text
        return [m.span() for m in _ascii_pattern(needle).finditer(text)]
    hay, where = normalise(text)
    found: list[tuple[int, int]] = []
    i = hay.find(needle)
    while i >= 0:
        last = i + len(needle) - 1
        found.append((i, last + 1) if where is None else (where[i], where[last] + 1))
        i = hay.find(needle, i + len(needle))
    return found


def contains(text: str, value: str) -> bool:
    """Whether ``text`` holds ``value`` in any spelling that reads the same."""
    needle = key(value)
    return bool(needle) and needle in loose(text)


def replace_values(text: str, values: Iterable[tuple[str, str]]) -> str:
    """``text`` with every span that reads as a value replaced. ``values``: ``(value, replacement)``; longer
    values are replaced first, so a value holding another is replaced whole."""
    ordered = sorted(values, key=lambda v: -len(key(v[0])))
    for value, replacement in ordered:
        found = spans(text, value)
        if not found:
            continue
        parts: list[str] = []
        at = 0
        for start, end in found:
            parts.append(text[at:start])
            parts.append(replacement)
            at = end
        parts.append(text[at:])
        text = "".join(parts)
    return text


#: Case exists below U+20000 only (planes 0 and 1): the fold table is searched there.
_CASED_UP_TO = 0x20000


@lru_cache(maxsize=1)
def _fold_table() -> dict[str, str]:
    """Each character whose ``casefold`` differs from its ``lower`` (ß -> ss, ς -> σ, ﬀ -> ff), and what it folds
    to: the page lowers the others itself. Searched a block at a time (~300 of 130,000 characters differ)."""
    table: dict[str, str] = {}
    for start in range(0, _CASED_UP_TO, 4096):
        block = "".join(map(chr, range(start, start + 4096)))
        if block.casefold() == block.lower():
            continue
        for ch in block:
            if 0xD800 <= ord(ch) < 0xE000:
                continue
            folded = ch.casefold()
            if folded != ch.lower():
                table[ch] = folded
    return table


def _strip_class() -> str:
    """:func:`ignored` as a JavaScript regular expression character class (``u`` flag)."""
    return "[\\p{Cf}" + "".join(f"\\u{{{ord(c):x}}}" for c in sorted(INVISIBLE | SPACES)) + "]"


def page_rule(values: Iterable[str]) -> dict[str, object]:
    """What the page script needs to find ``values`` as :func:`spans` would: ``needles``, ``[key, true]`` for
    each value (folded: the page script can also match a needle in its exact case, which this rule no longer
    asks), ``strip``, the characters dropped (a character class), and ``fold``, the case folds the page's
    ``toLowerCase`` does not make."""
    needles = sorted({key(v) for v in values} - {""}, key=len, reverse=True)
    return {"needles": [[n, True] for n in needles], "strip": _strip_class(), "fold": _fold_table()}
