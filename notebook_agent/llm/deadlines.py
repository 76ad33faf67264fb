"""Enforces :class:`~notebook_agent.core.model.Deadlines` on a model call and counts its real HTTP requests.

The SDKs' only guard is a read timeout per socket read (600 s by default), which a server that stalls after
the headers, or drips keepalives or tiny deltas forever, never trips. :class:`CallClock` runs each SDK await
of one call (opening the stream, reading the next chunk) as a task bounded by whichever deadline ends first:
``first_token`` until content arrives, then ``idle`` (time spent waiting since the last content, so a slow
consumer is not blamed on the server), and ``total`` throughout. When one fires the SDK await is cancelled
and :class:`DeadlineExceeded` raised; the stream driver closes the HTTP response and ends the message.

The same tasks carry a context variable naming the call, so an httpx event hook installed on the SDK's HTTP
client (:func:`watch_requests`) counts the requests each call really made, retries included; error messages
say "after N retries" from that count instead of from the configured maximum.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar

from ..core.abort import AbortedError, AbortSignal
from ..core.model import Deadlines, StreamEvent
from .errors import ErrorContext, ProviderTimeoutError
from .registry import is_local_url

T = TypeVar("T")
DeadlineName = Literal["first_token", "idle", "total"]

_CURRENT_CALL: contextvars.ContextVar[CallClock | None] = contextvars.ContextVar("notebook_agent_call", default=None)


def default_deadlines(base_url: str | None) -> Deadlines:
    """Hosted APIs get ``Deadlines()``; a local server (loopback, private network) the slower local ones."""
    return Deadlines.for_local_server() if base_url and is_local_url(base_url) else Deadlines()


def resolve_deadlines(value: Deadlines | Mapping[str, float | None] | None, base_url: str | None) -> Deadlines:
    """A model's deadlines from ``get_model(..., deadlines=...)``: a mapping overrides the defaults by name."""
    return default_deadlines(base_url).updated(value)


def is_progress(event: StreamEvent) -> bool:
    """Whether an event carries content: opening an empty text or thinking block is not progress (a
    Responses reasoning item opens long before any text), a delta, a tool call or a closed block is."""
    if event.type in ("start", "text_start", "thinking_start"):
        return False
    if event.type in ("text_delta", "thinking_delta"):
        return bool(event.delta)
    return True


class DeadlineExceeded(Exception):
    """A deadline of one model call fired; the driver turns it into a ``timeout`` error message."""

    def __init__(self, name: DeadlineName, seconds: float) -> None:
        super().__init__(f"{name} deadline of {seconds:g} s")
        self.name = name
        self.seconds = seconds


class CallClock:
    """The deadlines and the request count of one model call. Not reusable across calls."""

    def __init__(self, deadlines: Deadlines, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.deadlines = deadlines
        self._now = clock
        self.started = clock()
        self.first_content_at: float | None = None
        self.waited_since_content = 0.0
        self.requests = 0
        """HTTP requests sent for this call (0 when the SDK's HTTP client could not be watched)."""
        self.headers_received = False
        self._context = contextvars.copy_context()
        self._context.run(_CURRENT_CALL.set, self)

    @property
    def elapsed(self) -> float:
        return self._now() - self.started

    @property
    def retries(self) -> int | None:
        """Requests after the first, or None when the requests could not be counted."""
        return self.requests - 1 if self.requests else None

    def progress(self) -> None:
        """Content arrived: the first-token deadline is met and the idle clock starts again."""
        if self.first_content_at is None:
            self.first_content_at = self._now()
        self.waited_since_content = 0.0

    def _budget(self) -> tuple[float, DeadlineName, float] | None:
        """(seconds left, which deadline, its value) for the deadline that ends first, or None if none."""
        d = self.deadlines
        elapsed = self.elapsed
        options: list[tuple[float, DeadlineName, float]] = []
        if d.total is not None:
            options.append((d.total - elapsed, "total", d.total))
        if self.first_content_at is None:
            if d.first_token is not None:
                options.append((d.first_token - elapsed, "first_token", d.first_token))
        elif d.idle is not None:
            options.append((d.idle - self.waited_since_content, "idle", d.idle))
        return min(options, key=lambda o: o[0]) if options else None

    async def run(self, awaitable: Awaitable[T], signal: AbortSignal | None = None) -> T:
        """Await ``awaitable`` as this call's task, until it ends, a deadline fires (DeadlineExceeded) or
        ``signal`` aborts (AbortedError). The awaitable is cancelled in the last two cases."""
        if signal is not None and signal.aborted:
            _close_unstarted(awaitable)
            raise AbortedError(signal.reason or "Operation aborted")
        budget = self._budget()
        if budget is not None and budget[0] <= 0:
            _close_unstarted(awaitable)
            raise DeadlineExceeded(budget[1], budget[2])

        async def inner() -> T:
            return await awaitable

        task = asyncio.create_task(inner(), context=self._context.copy())
        stop = asyncio.ensure_future(signal.wait()) if signal is not None else None
        waiting = {task} if stop is None else {task, stop}
        began = self._now()
        try:
            done, _ = await asyncio.wait(
                waiting, timeout=None if budget is None else budget[0], return_when=asyncio.FIRST_COMPLETED
            )
        except BaseException:
            task.cancel()
            if stop is not None:
                stop.cancel()
            raise
        finally:
            self.waited_since_content += self._now() - began
        if stop is not None:
            stop.cancel()
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.wait({task}, timeout=2.0)  # let the SDK unwind its request before the stream is closed
        if signal is not None and signal.aborted:
            raise AbortedError(signal.reason or "Operation aborted")
        assert budget is not None
        raise DeadlineExceeded(budget[1], budget[2])


def _close_unstarted(awaitable: Awaitable[Any]) -> None:
    close = getattr(awaitable, "close", None)
    if asyncio.iscoroutine(awaitable) and close is not None:
        close()  # never started: close it so Python does not warn about an un-awaited coroutine


# -- counting requests -------------------------------------------------------------------------------------


async def _count_request(request: Any) -> None:
    call = _CURRENT_CALL.get()
    if call is not None:
        call.requests += 1


def _http_clients(sdk_client: Any) -> list[Any]:
    """The httpx clients an SDK client sends through: openai/anthropic keep one in ``_client``,
    google-genai in ``_api_client._async_httpx_client``. Unknown shapes give an empty list."""
    found = []
    for path in (("_client",), ("_api_client", "_async_httpx_client")):
        obj = sdk_client
        for attr in path:
            obj = getattr(obj, attr, None)
        if obj is not None and isinstance(getattr(obj, "event_hooks", None), dict):
            found.append(obj)
    return found


def request_event_hooks() -> dict[str, list[Any]]:
    """``event_hooks`` for an httpx client built for an SDK (google-genai copies its construction arguments
    into one inner client per event loop, so a hook added later never runs)."""
    return {"request": [_count_request]}


def watch_requests(sdk_client: Any) -> bool:
    """Install the request counter on the SDK client's HTTP client (once). False if there is none to watch."""
    watched = False
    for http in _http_clients(sdk_client):
        hooks = http.event_hooks.get("request")
        if isinstance(hooks, list):
            if _count_request not in hooks:
                hooks.append(_count_request)
            watched = True
    return watched


# -- the message ------------------------------------------------------------------------------------------


def _seconds(value: float) -> str:
    return f"{value:g} s"


def deadline_message(exc: DeadlineExceeded, ctx: ErrorContext, clock: CallClock, *, partial: str) -> str:
    """What fired, after how long, what was kept, and what to do: one or two sentences.

    ``partial`` describes what had arrived (``"12 characters of text"``), or is empty.
    """
    who = f"{ctx.label}{ctx.where}"
    retries = clock.retries
    after = f" (after {retries} retr{'y' if retries == 1 else 'ies'})" if retries else ""
    raise_it = (
        f"raise it with get_model(..., deadlines={{{exc.name!r}: {exc.seconds * 2:g}}}) or StreamOptions(deadlines=...)"
    )
    kept = f"; the partial response ({partial}) was kept" if partial else ""
    if exc.name == "first_token":
        if clock.headers_received:
            what = f"{who} accepted the request but sent no content within {_seconds(exc.seconds)}{after}"
        else:
            what = f"{who} did not answer within {_seconds(exc.seconds)}{after}"
        return (
            f"{what} (first_token deadline), so the request was cancelled. Check that the server is working "
            f"and not overloaded, or for a slow or local model {raise_it}."
        )
    if exc.name == "idle":
        inside = " in the middle of a tool call" if ctx.in_tool_call else ""
        return (
            f"{who} went silent for {_seconds(exc.seconds)}{inside} (idle deadline), so the call was stopped"
            f"{kept}. Run the step again and check the server if it keeps happening, or {raise_it}."
        )
    return (
        f"The call to {who} was still running after {_seconds(exc.seconds)} (total deadline), so it was "
        f"stopped{kept}. For long answers {raise_it}; a server that drips output forever needs checking."
    )


def describe_partial(text_chars: int, thinking_chars: int) -> str:
    parts = []
    if text_chars:
        parts.append(f"{text_chars} characters of text")
    if thinking_chars:
        parts.append(f"{thinking_chars} characters of thinking")
    return " and ".join(parts)


def timeout_error(exc: DeadlineExceeded, ctx: ErrorContext, clock: CallClock, *, partial: str) -> ProviderTimeoutError:
    return ProviderTimeoutError(deadline_message(exc, ctx, clock, partial=partial))
