"""Text from outside (pages, models, files) made safe to keep: one place that removes what would break later.

A lone UTF-16 surrogate (half an emoji, as JavaScript string slicing produces) is a valid Python ``str`` but
cannot be encoded as UTF-8, so hashing it, saving it to JSON or sending it to a provider raises far from
where it came in. Text is cleaned once where it enters, and everything after can rely on it.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the replacement character)."""
    return _SURROGATE.sub("\ufffd", text)


def has_lone_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None
