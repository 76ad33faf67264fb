"""An httpx transport with one connection pool per event loop, for an SDK that must stay on httpx.

google-genai sends async requests through aiohttp whenever aiohttp is installed (it is, beside many data tools),
unless its client is given an httpx transport. On aiohttp the request hooks that llm/deadlines.py watches never
run, so a stalled stream is not cut at its deadline, and a stream cut mid-answer surfaces as another kind of
error. Handing the SDK a plain ``httpx.AsyncHTTPTransport`` would keep it on httpx but tie its pool to the first
event loop that used it (pooled connections belong to the loop that opened them); this transport keeps one per
running loop instead, as the SDK does for its own clients, and routes through the proxy the environment names
(``HTTPS_PROXY``, ``NO_PROXY``…), which httpx skips once a transport is given.
"""

from __future__ import annotations

import asyncio
import threading
import urllib.request
import weakref

import httpx


class LoopTransport(httpx.AsyncBaseTransport):
    """One ``httpx.AsyncHTTPTransport`` per (event loop, proxy); closed with the loop's client."""

    def __init__(self) -> None:
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str | None, httpx.AsyncHTTPTransport]]
        self._pools = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def _pool(self, url: httpx.URL) -> httpx.AsyncHTTPTransport:
        proxy = proxy_for(url)
        loop = asyncio.get_running_loop()
        with self._lock:
            pools = self._pools.setdefault(loop, {})
            pool = pools.get(proxy)
            if pool is None:
                pool = pools[proxy] = httpx.AsyncHTTPTransport(proxy=proxy)
            return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._pool(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        """Close this loop's pools (another loop's connections can only be closed from that loop)."""
        with self._lock:
            pools = self._pools.pop(asyncio.get_running_loop(), {})
        for pool in pools.values():
            await pool.aclose()


def proxy_for(url: httpx.URL) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``/``HTTP_PROXY``, ``ALL_PROXY``), or None when
    there is none or ``NO_PROXY`` exempts its host."""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(url.host):
        return None
    return proxy
