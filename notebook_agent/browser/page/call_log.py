"""The page's own fetch and XHR calls, kept with their JSON answers: what a recipe learns the call behind a page from.

On most sites people pull data from, what a run reads off the page came from one JSON response to one request of
the page's own script (a search box calling ``/api/search?q=...``). A run keeps those calls, so a recipe made from
it can ask the same request directly (agent/recipes/calls/). :class:`CallLog` watches a context's responses; each
response to a ``fetch`` or ``XMLHttpRequest`` of one of the run's own tabs (``mine(page)``) is kept as plain data:

``{"method", "url", "headers", "body", "status", "type", "json", "page", "order"}``: the request's method, URL,
headers and body (text, at most :data:`MAX_REQUEST_BODY` characters), the response's status and content type, its body
parsed when it is JSON of at most :data:`MAX_JSON_BYTES` bytes (else ``json`` is None and ``note`` says why), and the
URL of the document that asked (where a per-visit token is read from), and the order the answers came in.

A cookie header is never kept, nor the value of an authorisation header or of one whose name says it holds a
credential or a token (``X-CSRF-Token: [not kept]``): only its name, which is what a recipe needs to know that one
is sent.
The run takes what came since its last step when a step ends (:meth:`CallLog.take`), redacts it like everything
else it keeps, and puts it on the step, so a saved run keeps its network log. At most :data:`MAX_CALLS` calls are
kept per run; later ones are counted, not kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

from playwright.async_api import BrowserContext, Page, Response

#: Calls kept per run (a page polling every second would otherwise grow the run without end).
MAX_CALLS = 200
#: A JSON answer larger than this is noted, not kept.
MAX_JSON_BYTES = 256 * 1024
#: Characters of a request's body kept.
MAX_REQUEST_BODY = 16 * 1024
#: Headers never kept at all: the browser adds them itself (a direct request gets the context's own).
NEVER_KEPT = frozenset({"cookie", "set-cookie"})
#: A header whose name says it carries a credential or a token: its name is kept, its value never.
CREDENTIAL = re.compile(r"auth|token|key|secret|session|csrf|xsrf|passw|signature|bearer|cookie", re.I)
NOT_KEPT = "[not kept]"
#: Seconds :meth:`CallLog.take` waits for answers still being read.
TAKE_WAIT = 2.0


def kept_headers(headers: dict[str, str]) -> dict[str, str]:
    """The headers as a call log keeps them: cookies dropped, authorisation and other credential values hidden."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        low = name.lower()
        if low in NEVER_KEPT or low.startswith("sec-") or low == "user-agent":
            continue  # the browser's own, the same on every request
        out[low] = NOT_KEPT if CREDENTIAL.search(low) else value
    return out


class CallLog:
    """The fetch and XHR calls of the tabs ``mine`` names, in one context (see the module docstring)."""

    def __init__(self, mine: Callable[[Page], bool]) -> None:
        self.mine = mine
        self.calls: list[dict[str, Any]] = []
        self.kept = 0
        self.dropped = 0
        """Calls seen after :data:`MAX_CALLS` were kept."""
        self._pending: set[asyncio.Task[None]] = set()
        self._context: BrowserContext | None = None

    async def attach(self, context: BrowserContext) -> None:
        """Watch ``context``'s responses (a coroutine, so it runs where the browser's objects live)."""
        self._context = context
        context.on("response", self._on_response)

    async def detach(self) -> None:
        context, self._context = self._context, None
        if context is not None:
            with contextlib.suppress(Exception):
                context.remove_listener("response", self._on_response)
        for task in list(self._pending):
            task.cancel()

    def _on_response(self, response: Response) -> None:
        request = response.request
        if request.resource_type not in ("fetch", "xhr"):
            return
        try:
            page = response.frame.page
        except Exception:  # a worker's request has no frame
            return
        if not self.mine(page):
            return
        if self.kept >= MAX_CALLS:
            self.dropped += 1
            return
        self.kept += 1
        task = asyncio.ensure_future(self._keep(response, self.kept))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _keep(self, response: Response, order: int) -> None:
        request = response.request
        body = request.post_data_buffer or b""
        call: dict[str, Any] = {
            "method": request.method,
            "url": request.url,
            "headers": kept_headers(dict(request.headers)),
            "body": body[:MAX_REQUEST_BODY].decode("utf-8", "replace") if body else "",
            "status": response.status,
            "type": (response.headers.get("content-type") or "").split(";")[0].strip().lower(),
            "json": None,
            "page": "",
            "order": order,
        }
        with contextlib.suppress(Exception):
            call["page"] = response.frame.url
        if "json" in call["type"]:
            try:
                raw = await response.body()
            except Exception as exc:  # the page went away, or the answer was a redirect
                call["note"] = f"the answer could not be read ({type(exc).__name__})"
            else:
                if len(raw) > MAX_JSON_BYTES:
                    call["note"] = f"the answer ({len(raw):,} bytes) is larger than {MAX_JSON_BYTES:,} and was not kept"
                else:
                    try:
                        call["json"] = json.loads(raw)
                    except (ValueError, RecursionError):
                        call["note"] = "the answer says it is JSON but is not"
        self.calls.append(call)

    async def take(self) -> list[dict[str, Any]]:
        """The calls answered since the last take, oldest first (answers still being read get a moment)."""
        if self._pending:
            await asyncio.wait(set(self._pending), timeout=TAKE_WAIT)
        taken, self.calls = self.calls, []
        return sorted(taken, key=lambda call: int(call["order"]))
