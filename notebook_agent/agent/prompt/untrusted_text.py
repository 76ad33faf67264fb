"""Defusing page- and model-written text before it goes into the state message.

One job: text from outside cannot close the state message's own sections and open forged ones
(``</browser_state>``, ``<user_request>``, a ``<sys>`` note), nor speak in a chat template's control tokens
(``<|im_start|>``, ``[INST]``, ``<<SYS>>``, ``<start_of_turn>``...), however it is spelled: with invisible
characters inside (U+200B, a soft hyphen, Unicode tag characters), with look-alike characters that normalise
to the ASCII ones (fullwidth ``＜／ｓｙｓ＞``, small forms, mathematical letters, ligatures), or behind a
right-to-left override. Invisible format characters (Unicode category Cf: zero-width spaces, bidi controls,
tag characters) are removed, except the zero-width (non-)joiners that emoji and some scripts need, and each
tag or token found in the NFKC-folded text has its brackets replaced by ``‹ ›`` in the original text, so
the rest of the text is kept as written. Confusables that do not fold under NFKC (a Cyrillic ``а`` in a tag
name) are not tags to the model's tokenizer either, and are left alone.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache

#: The state message's own tags (``<secret>`` is the model's placeholder syntax and is kept as written).
_OWN = r"browser_state|user_request|agent_state|agent_history|step_info|last_result|sys|step_\d+|secret"
#: Chat-template control tokens of the common families (ChatML, Llama 2 and 3, Mistral, Gemma, DeepSeek...).
_TEMPLATE = (
    r"<\|[^<>|\n]{1,60}\|>"  # <|im_start|>, <|eot_id|>, <|begin_of_text|>, DeepSeek's <｜...｜> once folded
    r"|<<\s*/?\s*SYS\s*>>"
    r"|\[\s*/?\s*(?:INST|SYS|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\s*\]"
    r"|<\s*/?\s*(?:s|start_of_turn|end_of_turn|bos|eos|think|tool_call|tool_response|im_start|im_end)\s*>"
)
_DANGEROUS = re.compile(rf"<\s*(/?)\s*({_OWN})\s*>|{_TEMPLATE}", re.IGNORECASE)

#: Format characters kept: the zero-width non-joiner and joiner (emoji sequences, Persian, Indic scripts).
_KEPT_FORMAT = {"\u200c", "\u200d"}
_OPENERS, _CLOSERS = "<[", ">]"
#: Where to look: characters that read as ASCII under NFKC and format characters all live below U+20000 or
#: among the tag characters (U+E0000...); checked against the whole range in tests.
_RANGES = (range(0x80, 0x20000), range(0xE0000, 0xE1000))
_ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_<>/|[] \t")


@cache
def _tables() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, str]]:
    """What to delete (format characters), which characters fold, and to what: built once (~50 ms)."""
    delete: list[str] = []
    fold: dict[str, str] = {c: "" for c in _KEPT_FORMAT}
    for cp in (cp for r in _RANGES for cp in r):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if unicodedata.category(c) == "Cf":
            if c not in _KEPT_FORMAT:
                delete.append(c)
            continue
        folded = unicodedata.normalize("NFKC", c)
        if folded != c and folded and all(ch in _ALPHABET for ch in folded):
            fold[c] = folded
    return _char_class(delete), _char_class(fold), fold


def _char_class(chars: Iterable[str]) -> re.Pattern[str]:
    """A character class of ``chars`` written as ranges (a class of single characters is slow to match)."""
    points = sorted(ord(c) for c in chars)
    parts: list[str] = []
    i = 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and points[j + 1] == points[j] + 1:
            j += 1
        first, last = re.escape(chr(points[i])), re.escape(chr(points[j]))
        parts.append(first if i == j else f"{first}-{last}")
        i = j + 1
    return re.compile("[" + "".join(parts) + "]")


def _folded(text: str) -> tuple[str, list[int]] | None:
    """``text`` with look-alikes folded to ASCII and, for each folded position, the index it came from; None
    when nothing folds."""
    _, pattern, fold = _tables()
    if not pattern.search(text):
        return None
    pieces: list[str] = []
    origin: list[int] = []
    last = 0
    for m in pattern.finditer(text):
        start = m.start()
        pieces.append(text[last:start])
        origin.extend(range(last, start))
        replacement = fold[m.group()]
        pieces.append(replacement)
        origin.extend([start] * len(replacement))
        last = start + 1
    pieces.append(text[last:])
    origin.extend(range(last, len(text)))
    return "".join(pieces), origin


def _defused(span: str) -> str:
    """A tag or token with every bracket (or its look-alike) made a harmless angle quote."""
    fold = _tables()[2]
    out = []
    for c in span:
        f = fold.get(c, c)
        out.append("‹" if f in _OPENERS and f else "›" if f in _CLOSERS and f else c)
    return "".join(out)


def neutralise(text: str) -> str:
    """Page- and model-written text with invisible format characters removed and every look-alike of the
    state message's own tags and of chat-template tokens defused (``</browser_state>`` → ``‹/browser_state›``,
    ``<|im_start|>`` → ``‹|im_start|›``), so a page cannot close the browser state and forge a
    ``<user_request>``, a ``<sys>`` note or a turn of the conversation. Secret placeholders the model typed
    (``<secret>name</secret>``) are kept as written."""
    if not text.isascii():
        text = _tables()[0].sub("", text)
    mapped = None if text.isascii() else _folded(text)
    haystack, origin = mapped if mapped is not None else (text, None)
    spans: list[tuple[int, int]] = []
    for m in _DANGEROUS.finditer(haystack):
        if m.group(2) is not None and m.group(2).lower() == "secret":
            continue
        a, b = m.span()
        spans.append((a, b) if origin is None else (origin[a], origin[b - 1] + 1))
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for a, b in spans:
        if a < last:  # two matches in the text one character folds into: the first one defused it
            continue
        out.append(text[last:a])
        out.append(_defused(text[a:b]))
        last = b
    out.append(text[last:])
    return "".join(out)
