"""Test support: the few inner states a test must read or set, each behind one named function.

Some behaviours can only be checked from inside: that an element looked up ahead of its action is dropped by the
next snapshot, that a child frame its parent forgot is registered again, that the URL a replay moves to keeps
the recorded path. A test that reached into ``browser._prefetch._pending`` for that would break on every
rename and say nothing about what it needs. The reaches live here instead, one function per need, so the
package's private names are read in one place of the package itself and ``tests/test_private_reaches.py`` can
keep the tests free of them.

Nothing here is for a program using the package: these functions change with the internals they read, and
none of them is needed to drive a browser or a run. Everything is imported when first called, so importing this
module costs nothing and pulls no layer in. Playwright's objects are typed ``Any`` here: above the browser layer
nothing names Playwright, not even for types.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from .agent.step.replay_pilot import ReplayPilot
    from .browser.door.redirects import Hop
    from .browser.session.browser_session import BrowserSession
    from .browser.session.browser_thread import BrowserThread
    from .core.model import Context, StreamOptions
    from .llm.convert import StreamingAdapter
    from .llm.local.llama_server import LocalServer

__all__ = [
    "assume_loop_can_spawn",
    "browser_thread",
    "build_request",
    "chromium_revision",
    "close_tab",
    "fold_tables",
    "frame_tokens",
    "launched",
    "locator_index",
    "mark_element",
    "moved_target",
    "page_script_data",
    "parser_options",
    "pending_prefetch",
    "redirect_hop",
    "reset_snapshot",
    "reset_tools",
    "sdk_client",
    "set_snapshot_time",
    "started_server",
    "without_tokenizer",
]


# -- a browser session --------------------------------------------------------------------------------------
def pending_prefetch(browser: BrowserSession) -> tuple[Any, asyncio.Task[Any]] | None:
    """The element lookup started ahead of its action, as ``(key, task)`` (key: snapshot id, index, tab), or
    None when none is pending (taken, dropped by a snapshot, or never started)."""
    return browser._prefetch._pending


def reset_snapshot(browser: BrowserSession) -> None:
    """Forget the session's last snapshot and where its indices lived, as a fresh session has none."""
    browser._reader.last_snapshot = None
    browser._reader.forget()


def forget_secrets(browser: BrowserSession) -> None:
    """A shared test session as if new: no secret of an earlier test stays live in it (browser/door/live.py)."""
    browser._door.live.clear()


def reset_tools(browser: BrowserSession) -> None:
    """Make the session's built-in actions again on next use, as a fresh session would (their state, such as the
    names given to extracted tables, starts over)."""
    browser._tools = None


def set_snapshot_time(browser: BrowserSession, when: float | None) -> None:
    """Set when (``time.monotonic()``) the last snapshot was taken, which the ``wait`` action counts from:
    an earlier time stands for a model that took that long to answer; None for no snapshot yet."""
    browser._reader.last_time = when


def frame_tokens(browser: BrowserSession) -> dict[Any, int]:
    """The live map from each child frame to the token its ``<iframe>`` is registered under in its parent's
    page script; a test may change an entry to stand for a parent that forgot the frame."""
    return browser._reader._frame_tokens


async def close_tab(browser: BrowserSession, page: Any, timeout: float) -> None:
    """Close ``page`` as the session closes its tabs, giving Chromium ``timeout`` seconds to confirm before the
    tab is closed through DevTools (0: the forced path only)."""
    await browser._tabs.close_page(page, timeout=timeout)


def launched(browser: BrowserSession) -> tuple[Any, Any]:
    """The session's Playwright and browser, each None when not started or stopped again (unlike
    ``browser.playwright`` and ``browser.browser``, which raise then)."""
    return browser._life.pw, browser._life.browser


def browser_thread(browser: BrowserSession) -> BrowserThread | None:
    """The thread the session's browser runs on in threaded mode, or None."""
    return browser._thread


def assume_loop_can_spawn(loop: asyncio.AbstractEventLoop, can: bool = True) -> None:
    """Record for ``loop`` what the probe of whether it can start subprocesses would have concluded."""
    from .browser.session import browser_thread as threads

    threads._can_spawn[loop] = can


def chromium_revision() -> str | None:
    """The Chromium revision this Playwright release expects (where its own Chromium is looked for)."""
    from .browser.session import launch

    return launch._chromium_revision()


def redirect_hop(page: Any, main_frame: str, event: dict[str, Any]) -> Hop | None:
    """The redirect a paused DevTools response ``event`` is, or None (see ``browser.door.redirects``)."""
    from .browser.door import redirects

    return redirects._hop(page, main_frame, event)


async def mark_element(handle: Any) -> str:
    """Remember ``handle``'s element in its frame's page script under a new token, for :func:`page_script_data`."""
    from .browser.fingerprint import finder

    return await finder._mark(handle)


async def page_script_data(frame: Any, arg: dict[str, Any]) -> Any:
    """One data op of the fingerprint page script in ``frame`` (e.g. ``{"op": "fp:describe", "k": token}``)."""
    from .browser.fingerprint import finder

    return await finder._data(frame, arg)


async def locator_index(browser: BrowserSession, locator: Any) -> int | None:
    """The index in ``browser``'s latest snapshot of the one element ``locator`` (of the tab's main frame)
    matches, as a replay's sure-locator path reads it (browser/session/targets.py), or None."""
    from .browser.page.reader import index_by_locator

    return await index_by_locator(browser._reader, locator, browser.page.main_frame)


# -- the agent ----------------------------------------------------------------------------------------------
def fold_tables() -> tuple[tuple[range, ...], frozenset[str]]:
    """What untrusted page text is scanned for look-alikes: the code point ranges, and the alphabet a folded
    character must fall in to be replaced."""
    from .agent.prompt import untrusted_text

    return untrusted_text._RANGES, untrusted_text._ALPHABET


def moved_target(pilot: ReplayPilot, target: dict[str, Any]) -> dict[str, Any]:
    """A recorded step's target as the replay uses it on the site it was moved to (``url=``)."""
    return pilot._moved(target)


# -- the terminal's and the magics' parsers -----------------------------------------------------------------
def parser_options(parser: argparse.ArgumentParser) -> tuple[list[argparse.Action], dict[str, Any]]:
    """``(options, sub-commands)`` of an argparse parser: every action but ``-h``, and ``{name: parser}`` of its
    sub-commands, so a test can render each one's help and check each option's text in it."""
    import argparse

    options = [a for a in parser._actions if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]
    subs: dict[str, Any] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            subs.update(action.choices)
    return options, subs


# -- models -------------------------------------------------------------------------------------------------
def build_request(model: StreamingAdapter[Any], context: Context, options: StreamOptions) -> dict[str, Any]:
    """The request body a provider adapter would send for ``context`` and ``options``, without sending it."""
    body: dict[str, Any] = model._build_request(context, options)
    return body


def sdk_client(model: Any) -> Any:
    """The provider SDK's client an adapter streams through (``model``: an adapter, each keeping its own)."""
    return model._client


def started_server(model_file: str | Path) -> LocalServer | None:
    """The llama-server this process started for ``model_file``, or None (never starts one)."""
    from .llm.local import llama_server

    return llama_server._SERVERS.get(Path(model_file).resolve())


@contextlib.contextmanager
def without_tokenizer() -> Iterator[None]:
    """Count tokens as if no tokenizer were installed (the estimate), inside the ``with`` block."""
    from .llm import tokens

    exact = tokens._encoding
    tokens._encoding = lambda name: None  # type: ignore[assignment]
    try:
        yield
    finally:
        tokens._encoding = exact
