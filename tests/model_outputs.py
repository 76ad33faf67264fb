"""Hypothesis strategies for what a misbehaving model streams, each with the outcome an adapter must give.

:func:`tool_arguments` draws an arguments string (well-formed, double-encoded, not an object, truncated,
absurdly deep, or random text, with lone and split UTF-16 surrogates mixed in) together with the intended
dict, or ``MALFORMED`` when no dict can honestly be read from it; :func:`fragments` splits a string at
random points the way a provider's deltas would, surrogate pairs included.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from notebook_agent.core.tool_arguments import MAX_ARGUMENT_DEPTH

MALFORMED = "malformed"
UNKNOWN = "unknown"
"""Random text: any outcome is fine as long as it is a dict or a malformed error."""

SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"])
CHARS = st.one_of(st.characters(), SURROGATES)
TEXT = st.text(CHARS, max_size=12)


def expected_text(text: str) -> str:
    """What the adapter must make of a string: surrogate pairs joined, lone surrogates as U+FFFD."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if "\ud800" <= c <= "\udbff" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff":
            out.append(chr(0x10000 + ((ord(c) - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00)))
            i += 2
            continue
        out.append("\ufffd" if "\ud800" <= c <= "\udfff" else c)
        i += 1
    return "".join(out)


def expected_value(value: Any) -> Any:
    if isinstance(value, str):
        return expected_text(value)
    if isinstance(value, list):
        return [expected_value(v) for v in value]
    if isinstance(value, dict):
        return {expected_text(k): expected_value(v) for k, v in value.items()}
    return value


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
OBJECTS = st.dictionaries(TEXT, JSON_VALUES, max_size=4)


def in_code_units(text: str) -> str:
    """Astral characters as two surrogate code points, so a split can fall between the halves."""
    out = []
    for c in text:
        if ord(c) > 0xFFFF:
            v = ord(c) - 0x10000
            out += [chr(0xD800 + (v >> 10)), chr(0xDC00 + (v & 0x3FF))]
        else:
            out.append(c)
    return "".join(out)


@dataclass
class Arguments:
    mode: str
    text: str
    expected: Any
    """The intended dict, MALFORMED, or UNKNOWN."""


def _is_object_text(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return isinstance(json.loads(value), dict)
    except ValueError:
        return False


def _nested(depth: int) -> Any:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@st.composite
def tool_arguments(draw: st.DrawFn) -> Arguments:
    mode = draw(st.sampled_from(["plain", "double", "non_object", "truncated", "deep", "garbage"]))
    ascii_only = draw(st.booleans())
    if mode == "plain":
        intended = draw(OBJECTS)
        text = json.dumps(intended, ensure_ascii=ascii_only)
        expected: Any = expected_value(intended)
    elif mode == "double":
        intended = draw(OBJECTS)
        text = json.dumps(json.dumps(intended, ensure_ascii=ascii_only), ensure_ascii=ascii_only)
        expected = expected_value(intended)
    elif mode == "non_object":
        value = draw(JSON_VALUES.filter(lambda v: not isinstance(v, dict) and not _is_object_text(v)))
        text, expected = json.dumps(value, ensure_ascii=ascii_only), MALFORMED
    elif mode == "truncated":
        full = json.dumps(draw(OBJECTS), ensure_ascii=ascii_only)
        text, expected = full[: draw(st.integers(1, len(full) - 1))], MALFORMED
    elif mode == "deep":
        depth = draw(st.integers(1, 3 * MAX_ARGUMENT_DEPTH) | st.just(100_000))
        text = '{"a": ' + "[" * depth + "]" * depth + "}"
        expected = {"a": _nested(depth)} if depth + 1 <= MAX_ARGUMENT_DEPTH else MALFORMED
    else:
        text, expected = draw(st.text(CHARS, max_size=40)), UNKNOWN
    if draw(st.booleans()):
        text = in_code_units(text)
    return Arguments(mode, text, expected)


@st.composite
def fragments(draw: st.DrawFn, text: str, max_cuts: int = 8) -> list[str]:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=max_cuts))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a] or [text]
