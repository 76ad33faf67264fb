"""A tiny local web server for the demo shop (Northwind Outfitters), bound to 127.0.0.1.

``serve_demo()`` starts a server on a free port in a daemon thread and returns a :class:`DemoServer`
(``.url``, ``.stop()``, usable as a context manager). ``demo_url()`` starts one shared server per process on
first use and returns its base URL; the notebook uses it. Pages are read from the package data
(``notebook_agent/demo/site``) through :mod:`importlib.resources`, so the demo works from a wheel too.

The terminal's shop has one address, ``http://127.0.0.1:8765/`` (:func:`stable_demo`; the port from
``NOTEBOOK_AGENT_DEMO_PORT`` when set): a run file keeps absolute addresses, so a terminal demo run recorded on a
port that died with its command could be neither replayed nor exported. At a stable address the recorded pages
mean the same shop later: ``notebook-agent replay``, ``map --recipe`` and ``run`` serve it there again for
their own life when nothing answers (:func:`serve_again`), and ``notebook-agent demo --serve`` keeps it up for an
exported script. A shop already answering there (another command's) is reused; a port another program holds
leaves the demo on a free port, said as it starts.
"""

from __future__ import annotations

import http.client
import mimetypes
import os
import posixpath
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from importlib.resources.abc import Traversable
from types import TracebackType
from urllib.parse import unquote, urlsplit

HOST = "127.0.0.1"
DEMO_PORT = 8765
"""The terminal demo shop's port, unless ``NOTEBOOK_AGENT_DEMO_PORT`` says another."""
PORT_VARIABLE = "NOTEBOOK_AGENT_DEMO_PORT"
SERVER_NAME = "NorthwindDemo"

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}


def site_root() -> Traversable:
    """The packaged site directory."""
    return resources.files(__package__).joinpath("site")


def _content_type(name: str) -> str:
    ext = posixpath.splitext(name)[1].lower()
    return _TYPES.get(ext) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def _resolve(root: Traversable, path: str) -> Traversable | None:
    """The file for a URL path, or None. Rejects anything that tries to leave the site directory."""
    parts = [p for p in unquote(urlsplit(path).path).split("/") if p]
    if any(p in (".", "..") or "\\" in p or p.startswith(".") for p in parts):
        return None
    node = root
    for part in parts:
        node = node.joinpath(part)
    if node.is_dir():
        node = node.joinpath("index.html")
    return node if node.is_file() else None


class _Handler(BaseHTTPRequestHandler):
    server_version = f"{SERVER_NAME}/1.0"
    protocol_version = "HTTP/1.1"
    root: Traversable

    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def _serve(self, *, head: bool) -> None:
        node = _resolve(self.root, self.path)
        status = HTTPStatus.OK
        if node is None:
            status = HTTPStatus.NOT_FOUND
            node = self.root.joinpath("404.html")
        body = node.read_bytes()
        self.send_response(status)
        self.send_header("Content-Type", _content_type(node.name))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet: no request log on stderr
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a browser dropping a connection is not worth a traceback in the notebook


class DemoServer:
    """A running demo server. ``url`` is its base URL (ending in ``/``)."""

    def __init__(self, port: int = 0) -> None:
        handler = type("DemoHandler", (_Handler,), {"root": site_root()})
        self._httpd = _Server((HOST, port), handler)
        self.port: int = self._httpd.server_address[1]
        self.url = f"http://{HOST}:{self.port}/"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name="notebook-agent-demo", daemon=True
        )
        self._thread.start()
        self._stopped = False

    def page(self, path: str) -> str:
        """The absolute URL of a page: ``server.page("search.html?q=boots")``."""
        return self.url + path.lstrip("/")

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    @property
    def running(self) -> bool:
        return not self._stopped and self._thread.is_alive()

    def __enter__(self) -> DemoServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"DemoServer(url={self.url!r}, running={self.running})"


def serve_demo(port: int = 0) -> DemoServer:
    """Start the demo shop on ``127.0.0.1`` (``port=0``: any free port) in a daemon thread."""
    return DemoServer(port)


_shared: DemoServer | None = None
_shared_lock = threading.Lock()


def demo_url(path: str = "") -> str:
    """The base URL of this process's shared demo server (started on first use), plus an optional page path."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running:
            _shared = serve_demo()
        return _shared.page(path) if path else _shared.url


# -- the terminal's shop, at one address --------------------------------------------------------------------------
def demo_port() -> int:
    """The terminal demo shop's port: ``NOTEBOOK_AGENT_DEMO_PORT`` when set, else :data:`DEMO_PORT`."""
    given = os.environ.get(PORT_VARIABLE, "").strip()
    if not given:
        return DEMO_PORT
    if not given.isdigit() or not 0 < int(given) < 65536:
        raise ValueError(f"{PORT_VARIABLE}={given!r}: give a port number, 1 to 65535.")
    return int(given)


def stable_url(port: int | None = None) -> str:
    """The terminal demo shop's base URL (ending in ``/``)."""
    return f"http://{HOST}:{port or demo_port()}/"


def answers_as_demo(port: int, timeout: float = 2.0) -> bool | None:
    """Whether the demo shop answers on ``port`` of 127.0.0.1: True, False (another program does), or None
    (nothing answers)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("HEAD", "/")
        return conn.getresponse().getheader("Server", "").startswith(SERVER_NAME)
    except ConnectionRefusedError:
        return None
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def stable_demo(port: int | None = None) -> tuple[str, DemoServer | None, str]:
    """The terminal demo shop at its stable address: ``(url, server, note)``. ``server`` is the one started here
    (None when a demo shop already answers there, reused); when another program holds the port, a shop on a
    free port and a ``note`` saying so ("" otherwise)."""
    port = port or demo_port()
    found = answers_as_demo(port)
    if found:
        return stable_url(port), None, ""
    if found is None:
        try:
            server = DemoServer(port)
            return server.url, server, ""
        except OSError:
            pass  # taken between the look and the bind
    server = DemoServer(0)
    note = (
        f"port {port} is taken by another program, so the demo shop is on {server.url} for this command only "
        f"(set {PORT_VARIABLE} to another port to keep its runs replayable)"
    )
    return server.url, server, note


def on_stable_address(url: str | None) -> bool:
    """Whether ``url`` is a page of the terminal demo shop's stable address."""
    try:
        parts = urlsplit(url or "")
        return parts.scheme == "http" and parts.hostname == HOST and parts.port == demo_port()
    except ValueError:  # a port that is no number
        return False


def serve_again(url: str | None) -> DemoServer | None:
    """The demo shop served again at the stable address when ``url`` is on it and nothing answers there (a run
    recorded by ``notebook-agent demo``, replayed later): the server, to stop when the command ends; else None."""
    if not on_stable_address(url):
        return None
    port = demo_port()
    if answers_as_demo(port) is not None:
        return None  # the shop (or whatever holds the port) answers already
    try:
        return DemoServer(port)
    except OSError:
        return None
