"""Enforces :class:`~notebook_agent.core.model.Deadlines` on a model call and counts its real HTTP requests.

The SDKs' only guard is a read timeout per socket read (600 s by default), which a server that stalls after
the headers, or drips keepalives or tiny deltas forever, never trips. :class:`CallClock` runs each SDK await
of one call (opening the stream, reading the next chunk) as a task bounded by whichever deadline ends first:
``first_token`` until content arrives, then ``idle`` (time spent waiting since the last content, so a slow
consumer is not blamed on the server), and ``total`` throughout. When one fires the SDK await is cancelled
and :class:`DeadlineExceeded` raised; the stream driver closes the HTTP response and ends the message.

The same tasks carry a context variable naming the call, so an httpx event hook installed on the SDK's HTTP
client (:func:`watch_requests`) counts the requests each call really made, retries included; error messages
say "after N retries" from that count instead of from the configured maximum. The hook also starts the
first-token clock when the request really goes out (building it, or the SDK's first import, is not the
server's time); ``total`` counts from the start of the call.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar

from ..core.abort import AbortedError, AbortSignal
from ..core.model import Deadlines, StreamEvent
from .endpoints import is_local_url
from .errors import ErrorContext, LLMError, ProviderTimeoutError

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


class DeadlineExceeded(LLMError):
    """A deadline of one model call fired; the driver turns it into a ``timeout`` error message."""

    def __init__(self, name: DeadlineName, seconds: float) -> None:
        super().__init__(f"{name} deadline of {seconds:g} s")
        self.name = name
        self.seconds = seconds


class CallClock:
    """The deadlines and the request count of one model call. Not reusable across calls."""

    def __init__(
        self, deadlines: Deadlines, *, watched: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.deadlines = deadlines
        self.watched = watched
        """Whether the SDK's requests are seen (:func:`watch_requests`); if not, first_token counts from the
        start of the call and retries are unknown."""
        self._now = clock
        self.started = clock()
        self.sent_at: float | None = None
        """When the first HTTP request went out (None until then, or when requests cannot be watched)."""
        self.first_content_at: float | None = None
        self.waited_since_content = 0.0
        self.requests = 0
        """HTTP requests sent for this call (0 when the SDK's HTTP client could not be watched)."""
        self.headers_received = False
        """Whether a response's headers arrived (seen only when the requests are watched)."""
        self._request_sent = asyncio.Event()
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
            if d.first_token is not None and (self.sent_at is not None or not self.watched):
                since_sent = self._now() - self.sent_at if self.sent_at is not None else elapsed
                options.append((d.first_token - since_sent, "first_token", d.first_token))
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
        helpers: list[asyncio.Future[Any]] = []
        if signal is not None:
            helpers.append(asyncio.ensure_future(signal.wait()))
        sent: asyncio.Future[Any] | None = None
        if self.sent_at is None and self.watched:
            # The first-token clock starts when the request goes out: wake up then to start it.
            sent = asyncio.ensure_future(self._request_sent.wait())
            helpers.append(sent)
        done: set[asyncio.Future[Any]] = set()
        try:
            while True:
                began = self._now()
                try:
                    done, _ = await asyncio.wait(
                        {task, *helpers},
                        timeout=None if budget is None else budget[0],
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    self.waited_since_content += self._now() - began
                if sent is not None and sent in done:
                    helpers.remove(sent)
                    done.discard(sent)
                    sent = None
                if done:
                    break
                budget = self._budget()
                if budget is not None and budget[0] <= 0:
                    break
        except BaseException:
            task.cancel()
            for helper in helpers:
                helper.cancel()
            raise
        for helper in helpers:
            helper.cancel()
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.wait({task}, timeout=2.0)  # let the SDK unwind its request before the stream is closed
        if task.done() and not task.cancelled():
            task.exception()  # it failed as it was cancelled: mark the error seen, the deadline is the news
        if signal is not None and signal.aborted:
            raise AbortedError(signal.reason or "Operation aborted")
        assert budget is not None
        raise DeadlineExceeded(budget[1], budget[2])


def _close_unstarted(awaitable: Awaitable[Any]) -> None:
    close = getattr(awaitable, "close", None)
    if asyncio.iscoroutine(awaitable) and close is not None:
        close()  # never started: close it so Python does not warn about an un-awaited coroutine


# -- counting requests -------------------------------------------------------------------------------------


async def _count_request(request: object) -> None:
    call = _CURRENT_CALL.get()
    if call is not None:
        call.requests += 1
        if call.sent_at is None:
            call.sent_at = call._now()
            call._request_sent.set()


async def _see_response(response: object) -> None:
    call = _CURRENT_CALL.get()
    if call is not None:
        call.headers_received = True


def request_event_hooks() -> dict[str, list[Any]]:
    """``event_hooks`` for an httpx client built for an SDK: google-genai copies its construction arguments
    into one inner client per event loop, so there a hook added later would never run."""
    return {"request": [_count_request], "response": [_see_response]}


def watch_requests(sdk_client: object, path: tuple[str, ...] = ("_client",)) -> bool:
    """Install the request counter on the SDK client's HTTP client (once); False if it cannot be watched.

    ``path``: where the client keeps its httpx client, as its provider's record says (openai and anthropic in
    ``_client``; google-genai in ``_api_client._async_httpx_client``, watched only if it was built with
    :func:`request_event_hooks`).
    """
    http = sdk_client
    for attr in path:
        http = getattr(http, attr, None)
    hooks = getattr(http, "event_hooks", None)
    if not isinstance(hooks, dict) or not all(isinstance(hooks.get(k), list) for k in ("request", "response")):
        return False
    if _count_request in hooks["request"]:
        return True
    if hasattr(http, "_inner_client_cls"):
        return False  # a per-event-loop wrapper: hooks added now do not reach its inner clients
    hooks["request"].append(_count_request)
    hooks["response"].append(_see_response)
    return True


# -- the message ------------------------------------------------------------------------------------------


def _seconds(value: float) -> str:
    return f"{value:g} s"


def deadline_message(exc: DeadlineExceeded, ctx: ErrorContext, clock: CallClock, *, partial: str) -> str:
    """What fired, after how long, what was kept, and what to do: one or two sentences.

    ``partial`` describes what had arrived (``"12 characters of text"``), or is empty.
    """
    who = f"{ctx.label}{ctx.where}"
    retries = clock.retries
    after = f", after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
    raise_it = (
        f"raise it with get_model(..., deadlines={{{exc.name!r}: {exc.seconds * 2:g}}}) or StreamOptions(deadlines=...)"
    )
    kept = f"; the partial response ({partial}) was kept" if partial else ""
    if exc.name == "first_token":
        if not clock.watched:
            what = f"{who} sent no content within {_seconds(exc.seconds)}"
        elif clock.headers_received:
            what = f"{who} accepted the request but sent no content within {_seconds(exc.seconds)}"
        else:
            what = f"{who} did not answer within {_seconds(exc.seconds)}"
        return (
            f"{what} (first_token deadline{after}), so the request was cancelled. Check that the server is working "
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
