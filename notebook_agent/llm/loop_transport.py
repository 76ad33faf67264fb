"""An HTTP transport with one connection pool per event loop, for an SDK that must stay off aiohttp.

google-genai sends async requests through aiohttp whenever aiohttp is installed (it is, beside many data tools),
unless its client is given a transport of the HTTP library it uses (httpx2 since google-genai 3, httpx before;
it tells them apart by the transport's class). On aiohttp the request hooks that llm/deadlines.py watches never
run, so a stalled stream is not cut at its deadline, and a stream cut mid-answer surfaces as another kind of
error. Handing the SDK a plain ``AsyncHTTPTransport`` would tie its pool to the first event loop that used it
(pooled connections belong to the loop that opened them); this transport keeps one per running loop instead, as
the SDK does for its own clients, and routes through the proxy the environment names (``HTTPS_PROXY``,
``NO_PROXY``…), which the client skips once a transport is given. Nothing is imported until a transport is made.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import urllib.request
import weakref
from typing import Any


def loop_transport() -> object:
    """A new transport of :func:`transport_class` (one per model: its pools are the model's)."""
    return transport_class()()


@functools.cache
def transport_class() -> type:
    """The transport class, built on the library google-genai takes by default: httpx2 when it is installed,
    else httpx (the two share their API)."""
    try:
        import httpx2 as http
    except ImportError:
        import httpx as http  # type: ignore[no-redef]

    class LoopTransport(http.AsyncBaseTransport):
        """One ``AsyncHTTPTransport`` per (event loop, proxy); closed with the loop's client."""

        def __init__(self) -> None:
            self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str | None, Any]]
            self._pools = weakref.WeakKeyDictionary()
            self._lock = threading.Lock()

        async def handle_async_request(self, request: http.Request) -> http.Response:
            proxy = proxy_for(request.url.scheme, request.url.host)
            loop = asyncio.get_running_loop()
            with self._lock:
                pools = self._pools.setdefault(loop, {})
                pool = pools.get(proxy)
                if pool is None:
                    pool = pools[proxy] = http.AsyncHTTPTransport(proxy=proxy)
            response: http.Response = await pool.handle_async_request(request)
            return response

        async def aclose(self) -> None:
            """Close this loop's pools (another loop's connections can only be closed from that loop)."""
            with self._lock:
                pools = self._pools.pop(asyncio.get_running_loop(), {})
            for pool in pools.values():
                await pool.aclose()

    return LoopTransport


def proxy_for(scheme: str, host: str) -> str | None:
    """The proxy the environment names for a request (``HTTPS_PROXY``/``HTTP_PROXY``, ``ALL_PROXY``), or None when
    there is none or ``NO_PROXY`` exempts ``host``."""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy
