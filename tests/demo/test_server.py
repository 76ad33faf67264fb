"""The demo server: serves every page of the packaged site from 127.0.0.1, quietly, and stops cleanly."""

from __future__ import annotations

import http.client
import socket
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from notebook_agent.demo import DemoServer, demo_url, serve_demo
from notebook_agent.demo.server import site_root

PAGES = [
    "index.html",
    "search.html",
    "product.html",
    "cart.html",
    "checkout.html",
    "confirmation.html",
    "account.html",
    "account-deleted.html",
]


def fetch(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def raw_get(server: DemoServer, path: str, method: str = "GET") -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request(method, path)
    return conn.getresponse()


def test_package_data_has_the_whole_site() -> None:
    root = site_root()
    names = {p.name for p in root.iterdir()}
    assert {*PAGES, "404.html", "shop.js", "style.css"} <= names
    total = sum(len(p.read_bytes()) for p in root.iterdir() if p.is_file())
    assert total < 60_000, "the demo site should stay small"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_is_served_as_html(demo_server: DemoServer, page: str) -> None:
    status, ctype, body = fetch(demo_server.page(page))
    assert status == 200
    assert ctype == "text/html; charset=utf-8"
    text = body.decode("utf-8")
    assert "Northwind Outfitters" in text
    assert '<script src="shop.js"></script>' in text
    for link in ('href="index.html"', 'href="search.html"', 'href="cart.html"', 'href="account.html"'):
        assert link in text, f"{page} lacks the nav link {link}"


@pytest.mark.parametrize(
    ("path", "ctype"),
    [("style.css", "text/css; charset=utf-8"), ("shop.js", "text/javascript; charset=utf-8")],
)
def test_assets_have_their_content_types(demo_server: DemoServer, path: str, ctype: str) -> None:
    status, got, body = fetch(demo_server.page(path))
    assert (status, got) == (200, ctype)
    assert body


def test_root_and_query_strings(demo_server: DemoServer) -> None:
    root = fetch(demo_server.url)
    assert root[0] == 200 and root[2] == fetch(demo_server.page("index.html"))[2]
    status, _, body = fetch(demo_server.page("search.html?q=wireless+headphones&sort=price-asc"))
    assert status == 200 and b'data-page="search"' in body


def test_missing_page_is_a_404_html_page(demo_server: DemoServer) -> None:
    status, ctype, body = fetch(demo_server.page("nope.html"))
    assert status == 404
    assert ctype == "text/html; charset=utf-8"
    assert b"Page not found" in body


@pytest.mark.parametrize("path", ["/../server.py", "/%2e%2e/server.py", "/..%2fserver.py", "/.hidden", "/site/x"])
def test_nothing_outside_the_site_is_served(demo_server: DemoServer, path: str) -> None:
    response = raw_get(demo_server, path)
    assert response.status == 404
    assert b"def serve_demo" not in response.read()


def test_head_sends_headers_only(demo_server: DemoServer) -> None:
    response = raw_get(demo_server, "/index.html", "HEAD")
    assert response.status == 200
    assert int(response.headers["Content-Length"]) > 100
    assert response.headers["Cache-Control"] == "no-store"
    assert response.read() == b""


def test_binds_loopback_only_and_stops(capsys: pytest.CaptureFixture[str]) -> None:
    with serve_demo() as server:
        parts = urlsplit(server.url)
        assert parts.hostname == "127.0.0.1" and parts.port == server.port and server.url.endswith("/")
        assert server.running
        assert fetch(server.page("index.html"))[0] == 200
    assert not server.running
    server.stop()  # idempotent
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=1):
        pass
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == "", "the server must not log requests"


def test_demo_url_is_one_shared_server() -> None:
    first = demo_url()
    assert first == demo_url()
    assert demo_url("account.html") == first + "account.html"
    assert fetch(first)[0] == 200
