"""Fixtures for the browser tests: two local HTTP servers (two sites, for cross-origin iframes) and one shared
Chromium.

Pages live in ``pages/``. ``__OTHER__`` in a page is replaced by the other server's origin
(``http://localhost:<port>`` vs ``http://127.0.0.1:<port>``: different sites, so Chromium puts the frame in
its own process) and ``__SELF__`` by the page's own origin. ``/slow?ms=N`` answers after N ms and
``/status?code=N`` with that status (a form may post there too), ``/redirect?to=URL`` with a 302 to URL,
``/attachment`` with a CSV file to download (``Content-Disposition: attachment``), ``/made/NAME`` with
``MADE[NAME]``, a page a test made as it runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlparse

import pytest
import pytest_asyncio

from notebook_agent.browser import BrowserSession
from notebook_agent.testing import forget_secrets, reset_snapshot, reset_tools

PAGES = Path(__file__).parent / "pages"


#: What ``POST /login`` (pages/login.html) accepts; tests set it. Every form it received is kept in ``LOGINS``.
LOGIN: dict[str, str] = {"username": "ada", "password": "", "apitoken": ""}
LOGINS: list[dict[str, str]] = []

#: Pages tests make as they run, by name (served at ``/made/NAME``).
MADE: dict[str, str] = {}


class Load(Protocol):
    """The ``load`` fixture: opens a fixture page in the current tab and gives back the browser."""

    async def __call__(self, name: str, *, other: bool = False) -> BrowserSession: ...


@dataclass
class Servers:
    main: str  # http://127.0.0.1:PORT
    other: str  # http://localhost:PORT2

    def url(self, name: str) -> str:
        return f"{self.main}/{name}"

    def other_url(self, name: str) -> str:
        return f"{self.other}/{name}"


def _handler(self_origin: str, other_origin: str) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:  # the server's arguments, passed along
            super().__init__(*args, directory=str(PAGES), **kwargs)

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            parsed = urlparse(self.path)
            query = parse_qs(parsed.query)
            if parsed.path == "/slow":
                time.sleep(int(query.get("ms", ["200"])[0]) / 1000)
                return self._send(200, b"<!doctype html><title>Slow</title><p>slow page</p>")
            if parsed.path == "/redirect":
                self.send_response(302)
                self.send_header("Location", query.get("to", ["/"])[0])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if parsed.path == "/attachment":  # a file to download, not a page
                body = b"id,total\n1,9.50\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Content-Disposition", 'attachment; filename="report.csv"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return None
            if parsed.path.startswith("/made/"):
                name = parsed.path.removeprefix("/made/")
                if name not in MADE:
                    return self._send(404, b"<!doctype html><title>Not made</title>")
                return self._send(200, MADE[name].encode())
            if parsed.path == "/status":
                code = int(query.get("code", ["404"])[0])
                return self._send(code, f"<!doctype html><title>Status {code}</title><p>status {code}</p>".encode())
            path = PAGES / parsed.path.lstrip("/")
            if path.suffix == ".html" and path.is_file():
                page = path.read_text(encoding="utf-8")
                page = page.replace("__OTHER__", other_origin).replace("__SELF__", self_origin)
                return self._send(200, page.encode())
            super().do_GET()

        def do_POST(self) -> None:
            parsed = urlparse(self.path)
            if parsed.path == "/status":  # a form answered with that status
                code = int(parse_qs(parsed.query).get("code", ["404"])[0])
                return self._send(code, f"<!doctype html><title>Status {code}</title><p>status {code}</p>".encode())
            if parsed.path != "/login":
                return self._send(404, b"<!doctype html><title>Not found</title>")
            length = int(self.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode("utf-8")).items()}
            LOGINS.append(form)
            if all(form.get(k) == v for k, v in LOGIN.items()):
                welcome = f"<!doctype html><title>Welcome</title><h1>Welcome {form['username']}</h1>"
                return self._send(200, welcome.encode())
            return self._send(401, b"<!doctype html><title>Sign-in failed</title><h1>Wrong password or token</h1>")

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    # bind both first so each knows the other's port
    a = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    b = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    main = f"http://127.0.0.1:{a.server_address[1]}"
    other = f"http://localhost:{b.server_address[1]}"
    a.RequestHandlerClass = _handler(main, other)
    b.RequestHandlerClass = _handler(other, main)
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (a, b)]
    for t in threads:
        t.start()
    yield Servers(main, other)
    for s in (a, b):
        s.shutdown()
        s.server_close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def shared_browser() -> AsyncIterator[BrowserSession]:
    session = BrowserSession(viewport=(1280, 800), action_timeout=2.0)
    await session.start()
    yield session
    await session.close()


@pytest_asyncio.fixture(loop_scope="session")
async def browser(shared_browser: BrowserSession) -> AsyncIterator[BrowserSession]:
    """The shared session with a fresh current tab, default policies and no leftover notices or snapshot."""
    b = shared_browser
    await b.ensure_page()
    await b.new_tab()
    await b.close_popups(frozenset())  # every other tab; one that never confirms it closed is closed by force
    b.dialog_policy = "accept"
    b.on_ask_user = None
    reset_snapshot(b)
    reset_tools(b)
    forget_secrets(b)
    b.take_notices()
    yield b
    b.take_notices()


@pytest_asyncio.fixture(loop_scope="session")
async def load(browser: BrowserSession, servers: Servers) -> Load:
    """``await load("form.html")`` opens a fixture page in the current tab (``other=True``: the other site)."""

    async def _load(name: str, *, other: bool = False) -> BrowserSession:
        url = servers.other_url(name) if other else servers.url(name)
        await browser.page.goto(url, wait_until="load")
        return browser

    return _load
