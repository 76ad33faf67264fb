"""Waiting in tests for a state rather than for a time: poll the condition itself, with a deadline that is a hang
guard (generous, since the machine may be busy), not a timing threshold."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

T = TypeVar("T")

#: How often the condition is checked (the first check is at once).
POLL_SECONDS = 0.02


async def wait_until(predicate: Callable[[], T | Awaitable[T]], timeout: float = 10.0, message: str = "") -> T:
    """Return the first truthy value of ``predicate()`` (awaited when it returns an awaitable), checked at once
    and then every :data:`POLL_SECONDS` while the event loop runs; fail the test with ``message`` if it is still
    falsy after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{message or 'the condition'} (still not true after {timeout:g} s)")
        await asyncio.sleep(POLL_SECONDS)


async def freeze(page: Any, busy_ms: int | None = None, timeout: float = 30.0) -> None:
    """Make ``page``'s main thread busy (for ``busy_ms``, or for good) and return once it is.

    A busy page cannot say so (its script never yields), so the script tells a local server first, with a
    synchronous request: the main thread is blocked from the moment the server sees the request (by the request,
    then by the loop), so when this returns the page answers nothing more until the loop ends. The page must be
    allowed to reach 127.0.0.1 (an http page or about:blank; Chromium keeps a ``data:`` page from it)."""
    seen = threading.Event()

    class Beacon(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.set()
            self.send_response(204)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Beacon)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/busy"
        await page.evaluate(
            """([url, ms]) => { setTimeout(() => {
                try { const x = new XMLHttpRequest(); x.open('GET', url, false); x.send(); } catch (e) {}
                const end = ms === null ? Infinity : Date.now() + ms;
                while (Date.now() < end) {}
            }, 0) }""",
            [url, busy_ms],
        )
        await wait_until(seen.is_set, timeout, "the page to start its busy loop")
    finally:
        server.shutdown()
        server.server_close()
