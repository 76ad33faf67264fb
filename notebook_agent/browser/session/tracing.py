"""A Playwright trace of a run: :func:`start_trace`, :func:`begin_group` / :func:`end_group` per step,
:func:`stop_trace` writing ``trace.zip`` (open it with ``playwright show-trace PATH``).

Tracing belongs to a browser *context*, and tab sessions share their root's context. The rule is simple: a run
traces the context it acts in, and a context already being traced (by another run) is refused with
:class:`TraceBusyError`; a trace of a shared context shows every tab of that context during the run. Every
Playwright call goes through ``browser.call`` so it works in threaded mode too.

A trace belongs to the context's secrets, not to one run's flags: its DOM snapshots, screenshots, titles and
network bodies are not masked, and a secret typed once stays in the context's pages, history and cache. So a
context that holds or has held a value to hide (a run's ``secrets=``, text typed into a sensitive field; see
``mask.has_held_secrets``) is never traced: :func:`start_trace` refuses it with
:class:`TraceRefusedError`, and a trace during which the context came to hold one (another tab's run with
secrets, a password typed mid-run) is discarded by :func:`stop_trace`, not written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import weakref
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError

from ...core.aio import wait_for
from ...core.errors import BusyError
from ..page.mask import has_held_secrets
from .browser_session import BrowserSession

__all__ = ["Trace", "TraceBusyError", "TraceRefusedError", "begin_group", "end_group", "start_trace", "stop_trace"]

_tracing: weakref.WeakSet[Any] = weakref.WeakSet()
"""The contexts being traced now (one trace per context)."""


class TraceBusyError(BusyError):
    """The run's browser context is already being traced (by another run sharing it)."""


class TraceRefusedError(TraceBusyError):
    """The run's browser context holds or has held a secret, which a trace would record unmasked."""


REFUSED = (
    "No trace is recorded: this browser session holds or has held a secret (a run's secrets=, or text typed into "
    "a sensitive field), and a trace's DOM snapshots, screenshots and network log are not masked, so they could "
    "keep its value. Trace in a browser session that never had one (a new BrowserSession, a run without secrets)."
)


@dataclass
class Trace:
    """One trace in progress: the context it records (kept even if the browser is relaunched) and its open
    step group, if any."""

    context: Any
    group: str | None = None


GROUP_TIMEOUT = 10.0
STOP_TIMEOUT = 120.0
"""Seconds writing a trace may take before the run gives up on it (a run never hangs over its trace)."""


async def start_trace(browser: BrowserSession, title: str) -> Trace:
    """Start tracing the context ``browser`` acts in (screenshots and DOM snapshots)."""

    async def start() -> Trace:
        await browser.ensure_page()
        context = browser.context
        if has_held_secrets(browser):
            raise TraceRefusedError(REFUSED)
        if context in _tracing:
            raise TraceBusyError(
                "This browser is already recording a trace for another run (tabs of one browser share it): "
                "run with a browser of its own to trace it."
            )
        try:
            await wait_for(context.tracing.start(screenshots=True, snapshots=True, title=title), 30)
        except PlaywrightError as exc:
            raise TraceBusyError(f"The trace could not be started: {exc.message}") from None
        except TimeoutError:
            raise TraceBusyError(
                "The trace did not start within 30 s (the browser did not answer); run without --trace."
            ) from None
        _tracing.add(context)
        return Trace(context)

    return await browser.call(start)


async def begin_group(browser: BrowserSession, trace: Trace, name: str) -> None:
    """Open a named group (one agent step); the previous group is closed first."""

    async def begin() -> None:
        await _end(trace)
        with contextlib.suppress(TimeoutError):  # a group is a label: never worth hanging a step over
            await wait_for(trace.context.tracing.group(name), GROUP_TIMEOUT)
            trace.group = name

    await browser.call(begin)


async def end_group(browser: BrowserSession, trace: Trace) -> None:
    """Close the open group, if any."""
    await browser.call(_end, trace)


async def _end(trace: Trace) -> None:
    if trace.group is not None:
        trace.group = None
        with contextlib.suppress(TimeoutError):
            await wait_for(trace.context.tracing.group_end(), GROUP_TIMEOUT)


async def stop_trace(browser: BrowserSession, trace: Trace | None, runs_dir: str | None, name: str) -> str | None:
    """Stop the trace and write it to ``<runs_dir>/<name>/trace.zip`` (a temporary folder without ``runs_dir``);
    returns the path, or None when there was no trace or it could not be written (teardown never raises)."""
    if trace is None:
        return None

    async def stop() -> str | None:
        if has_held_secrets(browser):  # a secret reached the context during the trace: nothing is written
            try:
                with contextlib.suppress(PlaywrightError):
                    await _end(trace)
                await wait_for(trace.context.tracing.stop(), STOP_TIMEOUT)
            finally:
                _tracing.discard(trace.context)
            return None
        folder = os.path.join(runs_dir, name) if runs_dir else tempfile.mkdtemp(prefix="agent-trace-")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "trace.zip")
        try:
            with contextlib.suppress(PlaywrightError):
                await _end(trace)
            await wait_for(trace.context.tracing.stop(path=path), STOP_TIMEOUT)
        finally:
            _tracing.discard(trace.context)
        return path

    try:
        return await browser.call(stop)
    except Exception:
        return None
