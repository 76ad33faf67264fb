"""A request a recipe asks directly, judged at the door like the page's own: :func:`send_direct`.

A recipe that learned the call behind a page (agent/recipes/calls/) asks it through the browser context's own request
client (``context.request``): it shares the context's cookies, so the person's session and profile apply, but the
context's routes never see it, so the door (route.py, tab_door.py) cannot judge it there. It is judged here instead,
by the same rules, before anything leaves:

- it goes only to the origin the recording called (``origin``: scheme, host and port, exactly), over http or https;
- the domain rule of the run (allowed and blocked domains) refuses it as it would refuse a navigation there;
- a secret's value never goes to a site not its own (egress.py's rule, every encoding), whatever the policy.

A refusal is a :class:`DirectRefused` saying why; nothing was sent. Redirects are never followed (the answer is the
``3xx`` itself), so nothing reaches another origin by a hop. The answer's body is read whole up to ``max_bytes``,
then the response is disposed of, so a map of 10,000 rows leaves nothing behind in the browser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

from ..errors import BrowserError, first_line
from .egress import Outgoing, SecretSites, describe_leak, leak

#: The largest answer read (a bigger one is cut, and so is not JSON).
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class DirectRefused(BrowserError):
    """The door refused a direct request before it left (the message says why)."""


class DirectFailed(BrowserError):
    """A direct request left but got no answer (the connection failed or timed out)."""


@dataclass(frozen=True)
class DirectRequest:
    """One request as it will be sent: method, absolute URL, headers (no cookies: the context adds its own)."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass(frozen=True)
class DirectAnswer:
    """The answer: status, content type (lower case, no parameters), body, and ``Retry-After`` in seconds."""

    status: int
    content_type: str
    body: bytes
    retry_after: float | None = None


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url`` (the port always written), or "" for a URL that has none."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return ""
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return f"{parts.scheme}://{host}:{port}"


def refusal(
    request: DirectRequest,
    origin: str,
    *,
    rule: Callable[[str], str | None] | None = None,
    secrets: SecretSites | None = None,
) -> str | None:
    """Why the door refuses ``request`` (see the module docstring), or None."""
    there = origin_of(request.url)
    if not there or there != origin_of(origin):
        shown = there or request.url[:80]
        return f"it would go to {shown}, and a recipe's request goes only to the origin the recording called ({origin})"
    why = rule(request.url) if rule is not None else None
    if why:
        return why
    outgoing = Outgoing("request", request.url, request.method, dict(request.headers), request.body or b"")
    name = leak(outgoing, secrets)
    return describe_leak(name, outgoing) if name is not None else None


async def send_direct(
    context: BrowserContext,
    request: DirectRequest,
    origin: str,
    *,
    rule: Callable[[str], str | None] | None = None,
    secrets: SecretSites | None = None,
    timeout: float = 15.0,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> DirectAnswer:
    """Send ``request`` through ``context``'s request client once the door lets it by (run it where the browser's
    objects live: ``await browser.call(send_direct, browser.context, ...)``)."""
    why = refusal(request, origin, rule=rule, secrets=secrets)
    if why is not None:
        raise DirectRefused(f"The recipe's request was not sent: {why}.")
    try:
        response = await context.request.fetch(
            request.url,
            method=request.method,
            headers=dict(request.headers),
            data=request.body,
            max_redirects=0,
            timeout=timeout * 1000,
            fail_on_status_code=False,
        )
    except PlaywrightError as exc:
        raise DirectFailed(f"{request.method} {request.url[:120]} got no answer: {first_line(exc)}") from None
    try:
        body = await response.body()
        kind = (response.headers.get("content-type") or "").split(";")[0].strip().lower()
        return DirectAnswer(response.status, kind, body[:max_bytes], _seconds(response.headers.get("retry-after")))
    except PlaywrightError as exc:
        raise DirectFailed(
            f"{request.method} {request.url[:120]}: the answer could not be read: {first_line(exc)}"
        ) from None
    finally:
        try:
            await response.dispose()
        except PlaywrightError:
            pass


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: the caller backs off on its own
