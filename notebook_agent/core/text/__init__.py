"""Text from outside (pages, models, files) made safe to keep: one place that removes what would break later.

A lone UTF-16 surrogate (half an emoji, as JavaScript string slicing produces) is a valid Python ``str`` but
cannot be encoded as UTF-8, so hashing it, saving it to JSON or sending it to a provider raises far from
where it came in. Text is cleaned once where it enters, and everything after can rely on it. Escaping text for
what a person reads is ``shown``'s (one function for each output). Finding a hidden
value in any spelling that reads the same is ``lookalike``'s.

May import nothing of the package (this is the base layer).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` safe to encode anywhere: a surrogate pair held as two code points becomes the character it
    stands for, and a lone surrogate becomes U+FFFD (JSON encoders, hashes and widgets reject them)."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def has_lone_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def map_strings(node: object, change: Callable[[str], str]) -> Any:
    """``node`` (JSON-like: dicts, lists, tuples, scalars) with ``change`` applied to every string in it, keys
    included; other values are kept as they are. For rules that must hold for every string a record holds."""
    if isinstance(node, str):
        return change(node)
    if isinstance(node, dict):
        return {map_strings(k, change): map_strings(v, change) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [map_strings(v, change) for v in node]
    return node
