"""Finding a hidden value in text the way a reader would see it, not the way the bytes spell it.

A secret split by a zero-width space (``hun\\u200bter2``), wrapped in bidi controls, or written in full-width
letters (``ｈｕｎｔｅｒ2``) reads as the secret, and a plain ``in`` test does not find it. Every redaction matches
through :func:`replace_values`, which compares both sides after the same normalisation:

* compatibility decomposition (NFKD: the same equivalence as NFKC, without recomposing, so an index in the
  normalised text still points at one character of the original);
* format characters removed: Unicode category ``Cf`` (zero-width space, joiners, bidi embeddings, overrides
  and isolates, the word joiner, the byte-order mark, the soft hyphen, tag characters) and the other invisible
  characters that render as nothing (variation selectors, the combining grapheme joiner, Hangul fillers);
* case folded (``str.casefold``) when the value is not case-sensitive.

The replacement covers the whole span of the original text the match came from, invisible characters inside
it included, so what is left never holds the value in any spelling.

The page matches the same way (the screenshot mask, ``browser/page/snapshot.js``): :func:`page_rule` is this
definition as the page script takes it, so the page follows this module rather than a copy of it. The page
normalises one character at a time, as :func:`normalise` does: drop it if it is in ``strip`` (``\\p{Cf}`` and
:data:`INVISIBLE`, the same classes as :func:`ignored`), else NFKD (``String.prototype.normalize``), then for a
case-insensitive value the case fold (``fold``: the characters whose ``str.casefold`` differs from their
lower case, ``toLowerCase`` for the rest) and NFKD again, dropping ``strip`` characters from the result. The
needles it looks for are :func:`key` of each value, computed here.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache


class CaseInsensitive(str):
    """A value that is the same in any case (``secrets={"email": CaseInsensitive("Ada@Example.org")}``): it is
    found wherever it appears, whatever the case it is written in (redaction, the screenshot mask)."""

    __slots__ = ()


#: Characters that render as nothing but are not of category Cf.
INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0"
    + "".join(chr(c) for c in range(0xFE00, 0xFE10))
    + "".join(chr(c) for c in range(0xE0100, 0xE01F0))
)


def ignored(ch: str) -> bool:
    """Whether ``ch`` is dropped before matching (it is invisible)."""
    return ch in INVISIBLE or unicodedata.category(ch) == "Cf"


@lru_cache(maxsize=4096)
def _char(ch: str, fold: bool) -> str:
    if ignored(ch):
        return ""
    out = unicodedata.normalize("NFKD", ch)
    if fold:
        out = unicodedata.normalize("NFKD", out.casefold())
    return "".join(c for c in out if not ignored(c))


def normalise(text: str, *, fold: bool = False) -> tuple[str, list[int] | None]:
    """``text`` as it is matched, and for each of its characters the index in ``text`` it came from (None when
    they are the same: ASCII text, the common case, is its own normal form but for case)."""
    if text.isascii():
        return (text.lower() if fold else text), None
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        part = _char(ch, fold)
        out.append(part)
        where.extend([i] * len(part))
    return "".join(out), where


@lru_cache(maxsize=4096)
def _loose_char(ch: str) -> str:
    return "" if ch.isspace() else _char(ch, True)


_SPACE = re.compile(r"\s+")


def loose(text: str) -> str:
    """``text`` as a picture reads it: :func:`normalise` folded, and with white space dropped too, so an upper-case
    copy (CSS ``text-transform``), a spaced one (``s e c r e t``) and halves drawn side by side all read as the
    value. What a reader recovers from pixels needs no more than that: the screenshot mask matches painted text
    this way (``browser/page/painted.py``), whatever the value's case sensitivity."""
    if text.isascii():
        return _SPACE.sub("", text.lower())
    return "".join(map(_loose_char, text))


def key(value: str, *, fold: bool = False) -> str:
    """The normal form of a value to find."""
    return normalise(value, fold=fold)[0]


def spans(text: str, value: str, *, fold: bool = False) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text`` that read as ``value``, left to right, not overlapping."""
    needle = key(value, fold=fold)
    if not needle:
        return []
    hay, where = normalise(text, fold=fold)
    found: list[tuple[int, int]] = []
    i = hay.find(needle)
    while i >= 0:
        last = i + len(needle) - 1
        found.append((i, last + 1) if where is None else (where[i], where[last] + 1))
        i = hay.find(needle, i + len(needle))
    return found


def contains(text: str, value: str, *, fold: bool = False) -> bool:
    """Whether ``text`` holds ``value`` in any spelling that reads the same."""
    needle = key(value, fold=fold)
    return bool(needle) and needle in normalise(text, fold=fold)[0]


def replace_values(text: str, values: Iterable[tuple[str, str, bool]]) -> str:
    """``text`` with every span that reads as a value replaced. ``values``: ``(value, replacement, fold)``;
    longer values are replaced first, so a value holding another is replaced whole."""
    ordered = sorted(values, key=lambda v: -len(key(v[0], fold=v[2])))
    for value, replacement, fold in ordered:
        found = spans(text, value, fold=fold)
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
    return "[\\p{Cf}" + "".join(f"\\u{{{ord(c):x}}}" for c in sorted(INVISIBLE)) + "]"


def page_rule(values: Iterable[str]) -> dict[str, object]:
    """What the page script needs to find ``values`` as :func:`spans` would: ``needles``, ``[key, fold]`` for
    each value (``fold`` when it is :class:`CaseInsensitive`; a value given both ways is looked for folded, which
    finds both), ``strip``, the characters dropped (a character class), and ``fold``, the case folds the page's
    ``toLowerCase`` does not make (sent only when a needle is folded)."""
    found: dict[tuple[str, bool], None] = {}
    for value in values:
        fold = isinstance(value, CaseInsensitive)
        needle = key(value, fold=fold)
        if needle:
            found[(needle, fold)] = None
    folded = {n for n, f in found if f}
    needles = sorted(((n, f) for n, f in found if f or n.casefold() not in folded), key=lambda nf: -len(nf[0]))
    rule: dict[str, object] = {"needles": [[n, f] for n, f in needles], "strip": _strip_class()}
    if folded:
        rule["fold"] = _fold_table()
    return rule
