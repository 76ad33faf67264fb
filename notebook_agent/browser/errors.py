"""How the browser layer talks back to the model: model-facing errors, Playwright errors cut to their one
informative line, and notices (dialogs, closed tabs, relaunches) that ride along with the next result.

Everything a model reads from the browser layer is a sentence, never a stack trace or a call log; this module
is where raw Playwright text is turned into such sentences.
"""

from __future__ import annotations

import logging
import re

from ..core.errors import NotebookAgentError
from ..core.text import clean_text

log = logging.getLogger("notebook_agent.browser")


class BrowserError(NotebookAgentError):
    """The browser could not do what was asked: none was found or it did not answer in time, a page could not
    be read, pictured or acted on."""


class ActionError(BrowserError):
    """A model-facing failure; the message (without the "Error: " prefix) is what the model reads."""


class BrowserTimeoutError(BrowserError, TimeoutError):
    """Something the browser was asked to do took too long. The message says what timed out, after how long,
    and what to try (still a ``TimeoutError``, so existing handlers match)."""


def short(text: str, limit: int = 80) -> str:
    """Whitespace collapsed and cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_REASONS = (
    "intercepts pointer events",
    "not visible",
    "not stable",
    "not enabled",
    "outside of the viewport",
    "not attached",
    "not editable",
    "detached",
)


def first_line(exc: BaseException) -> str:
    """The informative line of a Playwright error: its first line, or for timeouts the line saying why the
    element was not actionable (e.g. "<div id=overlay> intercepts pointer events")."""
    msg = str(exc).strip().splitlines()
    first = msg[0] if msg else type(exc).__name__
    if "Timeout" in first:
        for line in reversed(msg):
            text = line.strip(" -")
            if any(r in text for r in _REASONS) and not text.startswith(("waiting for", "retrying")):
                first = text
                break
    for prefix in ("Error: ", "TimeoutError: "):
        if first.startswith(prefix):
            first = first[len(prefix) :]
    first = re.sub(r"^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*: ", "", first)  # "Page.goto: " names our call, not the cause
    return short(first, 200)


class Notices:
    """Things that happened in the browser outside any action's control (a dialog, a crashed or closed tab, a
    relaunch, a tab the site opened). Pending notices are appended to the next action result or snapshot so
    the model hears of each once (at most ``PENDING_MAX``, the rest counted); ``log`` keeps the latest
    ``LOG_MAX`` for UIs. Silent while the session is closing."""

    #: At most this many notices ride along with one result; the rest are counted.
    PENDING_MAX = 10
    LOG_MAX = 500

    def __init__(self) -> None:
        self.pending: list[str] = []
        self.log: list[str] = []
        self.closing = False
        self.dropped = 0

    def add(self, text: str) -> None:
        if self.closing:
            return
        text = clean_text(text)
        self.log.append(text)
        del self.log[: -self.LOG_MAX]
        log.info("browser: %s", text)
        if len(self.pending) < self.PENDING_MAX:
            self.pending.append(text)
        else:  # a page looping on alert() must not flood the next result
            self.dropped += 1

    def take(self) -> list[str]:
        out, self.pending = self.pending, []
        if self.dropped:
            out.append(f"({self.dropped} more such notices were left out.)")
            self.dropped = 0
        return out
