"""Fixture sites whose pages get their data from the site's own JSON API, served on 127.0.0.1 by the tests and the
benchmark (``with api_sites() as site:``; ``site.url("/catalogue/")``).

- ``/catalogue/``: a search box; its script asks ``GET /api/search?q=`` and lists ``name: $price``.
- ``/product/``: a name box; the script looks the id up first (``/api/lookup?name=``), then fetches
  ``/api/items/ID`` and shows the price and SKU.
- ``/order/``: a form whose script POSTs JSON ``{name, plan}`` to ``/api/signup`` and shows the message answered.
- ``/guarded/``: a search guarded by a per-visit CSRF token (a ``<meta>`` of the page, new on every visit, checked
  against the visit's cookie); the script sends it as ``X-CSRF-Token``.
- ``/ssr/``: a search rendered on the server (a form GET): no API at all.
- ``/cursor/``: a list of a category, paged by an opaque cursor (``/api/list?category=&cursor=``); "More" asks the
  next page with the cursor the previous answer gave.
- ``/busy/``: like the catalogue, but its API answers ``429`` once a visitor (by cookie) asked ``STATE.busy_limit``
  times.

The pages' scripts ask with synchronous XHR, so a click returns once the answer is on the page (a recording and a
page recipe read it without racing the request). ``STATE`` holds what tests change (``fail_once``: queries answered
500 the first time; ``html_once``: queries answered with an HTML page the first time; ``page_fail``: queries
answered 500 to the page's own script (a ``Referer``) but not to a direct request; ``mutate``: a function
applied to every search answer asked directly, without a page: no ``Referer``) and what they count (``hits``:
requests per path, ``paths``: every request's path). ``reset()`` between tests.
"""

from __future__ import annotations

import base64
import html
import json
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PRODUCTS: dict[str, tuple[int, float, str]] = {
    "Ridgeline Rain Jacket": (11, 129.0, "RJ-11"),
    "Cascade Hiking Boots": (12, 149.5, "HB-12"),
    "Merino Trail Socks (2-pack)": (13, 24.99, "TS-13"),
    "Basecamp 28L Daypack": (14, 89.0, "DP-14"),
    "Lumen 400 Headlamp": (15, 34.5, "HL-15"),
    "Insulated Steel Bottle 750 ml": (16, 29.95, "SB-16"),
    "Pebble Wireless Earbuds": (17, 59.0, "WE-17"),
    "Summit 2-Person Tent": (18, 1249.0, "ST-18"),
}
CATEGORIES = {
    "tools": [f"Tool {i}" for i in range(1, 13)],
    "lamps": [f"Lamp {i}" for i in range(1, 9)],
    "packs": [f"Pack {i}" for i in range(1, 11)],
}
PAGE = 5


def price_of(name: str) -> float:
    return round(3.25 * (sum(map(ord, name)) % 97) + 1, 2)


@dataclass
class State:
    busy_limit: int = 1_000_000
    fail_once: set[str] = field(default_factory=set)
    html_once: set[str] = field(default_factory=set)
    page_fail: set[str] = field(default_factory=set)
    mutate: Callable[[Any], Any] | None = None
    hits: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    asked: dict[str, int] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)


STATE = State()


def reset() -> None:
    STATE.__init__()  # type: ignore[misc]


HEAD = '<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>{meta}</head><body><h1>{title}</h1>'
SYNC = """<script>
function ask(method, url, body, headers) {
  const x = new XMLHttpRequest();
  x.open(method, url, false);
  for (const [k, v] of Object.entries(headers || {})) x.setRequestHeader(k, v);
  x.send(body || null);
  if (x.status < 200 || x.status >= 300) throw new Error('status ' + x.status);
  return JSON.parse(x.responseText);
}
function show(lines) {
  const out = document.getElementById('out');
  out.innerHTML = '';
  for (const line of lines) { const li = document.createElement('li'); li.textContent = line; out.append(li); }
}
function money(v) { return '$' + v.toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2}); }
</script>"""

PAGES = {
    "/catalogue/": """<input id="q" aria-label="Search" placeholder="Search"><button id="go">Search</button>
<ul id="out"></ul><script>document.getElementById('go').onclick = () => {
  try { const d = ask('GET', '/api/search?q=' + encodeURIComponent(q.value), null, {'Accept': 'application/json'});
        show(d.results.length ? d.results.map(r => r.name + ': ' + money(r.price)) : ['No results']); }
  catch (e) { show(['Search failed']); }
};</script>""",
    "/busy/": """<input id="q" aria-label="Search" placeholder="Search"><button id="go">Search</button>
<ul id="out"></ul><script>document.getElementById('go').onclick = () => {
  try { const d = ask('GET', '/api/busy?q=' + encodeURIComponent(q.value), null, {'Accept': 'application/json'});
        show(d.results.map(r => r.name + ': ' + money(r.price))); }
  catch (e) { show(['Search failed']); }
};</script>""",
    "/product/": """<input id="name" aria-label="Product name" placeholder="Product name">
<button id="go">Look up</button>
<ul id="out"></ul>
<script>document.getElementById('go').onclick = () => {
  try { const found = ask('GET', '/api/lookup?name=' + encodeURIComponent(document.getElementById('name').value));
        const d = ask('GET', '/api/items/' + found.id);
        show(['Price: ' + money(d.item.price), 'SKU: ' + d.item.sku]); }
  catch (e) { show(['Not found']); }
};</script>""",
    "/order/": """<label>Name <input id="name" name="name"></label>
<label>Plan <select id="plan" name="plan"><option>Free</option><option>Pro</option><option>Team</option>
</select></label>
<button id="go">Create account</button><ul id="out"></ul>
<script>document.getElementById('go').onclick = () => {
  const body = JSON.stringify({name: document.getElementById('name').value,
                               plan: document.getElementById('plan').value});
  try { const d = ask('POST', '/api/signup', body, {'Content-Type': 'application/json'}); show([d.message]); }
  catch (e) { show(['Sign-up failed']); }
};</script>""",
    "/guarded/": """<input id="q" aria-label="Search" placeholder="Search"><button id="go">Search</button>
<ul id="out"></ul><script>document.getElementById('go').onclick = () => {
  const token = document.querySelector('meta[name=csrf-token]').content;
  try { const d = ask('GET', '/api/guarded?q=' + encodeURIComponent(q.value), null, {'X-CSRF-Token': token});
        show(d.results.map(r => r.name + ': ' + money(r.price))); }
  catch (e) { show(['Search failed']); }
};</script>""",
    "/cursor/": """<label>Category <select id="cat"><option>tools</option><option>lamps</option><option>packs</option>
</select></label><button id="go">Show</button><button id="more">More</button><ul id="out"></ul>
<script>let next = null;
function list(d) { next = d.next; show(d.items.map(i => i.name)); }
document.getElementById('go').onclick = () => list(ask('GET', '/api/list?category=' + encodeURIComponent(cat.value)));
document.getElementById('more').onclick = () => list(ask('GET', '/api/list?category=' +
  encodeURIComponent(cat.value) + '&cursor=' + encodeURIComponent(next)));
</script>""",
}


def _search(query: str, direct: bool = False) -> dict[str, Any]:
    results = [
        {"name": name, "price": price, "stock": 3} for name, (_, price, _) in PRODUCTS.items()
        if query and query.lower() in name.lower()
    ]  # fmt: skip
    data: dict[str, Any] = {"query": query, "results": results}
    return STATE.mutate(data) if STATE.mutate is not None and direct else data


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once, as a real server's do (no 40 ms stall)

    def log_message(self, *_: Any) -> None:
        return None

    def _send(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), "application/json", headers)

    def _visitor(self) -> tuple[str, dict[str, str]]:
        cookie = self.headers.get("Cookie") or ""
        for part in cookie.split(";"):
            k, _, v = part.strip().partition("=")
            if k == "sid" and v:
                return v, {}
        sid = secrets.token_hex(8)
        return sid, {"Set-Cookie": f"sid={sid}; Path=/; HttpOnly"}

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        path = parts.path
        STATE.hits[path] = STATE.hits.get(path, 0) + 1
        STATE.paths.append(self.path)
        if path in PAGES:
            sid, cookie = self._visitor()
            meta = ""
            if path == "/guarded/":
                token = STATE.tokens[sid] = secrets.token_urlsafe(16)
                meta = f'<meta name="csrf-token" content="{token}">'
            page = HEAD.format(title=path.strip("/").title(), meta=meta) + SYNC + PAGES[path] + "</body></html>"
            self._send(200, page.encode(), "text/html; charset=utf-8", cookie)
        elif path == "/ssr/":
            q = query.get("q", "")
            found = "".join(
                f"<li>{name}: ${price:,.2f}</li>"
                for name, (_, price, _) in PRODUCTS.items()
                if q and q.lower() in name.lower()
            )
            page = HEAD.format(title="Ssr", meta="") + (
                f'<form action="/ssr/"><input name="q" aria-label="Search" value="{html.escape(q)}">'
                "<button>Search</button></form>"
                f"<ul>{found}</ul></body></html>"
            )
            self._send(200, page.encode(), "text/html; charset=utf-8")
        elif path in ("/api/search", "/api/busy"):
            q = query.get("q", "")
            if q in STATE.page_fail and self.headers.get("Referer"):
                self._json({"error": "internal"}, 500)
            elif q in STATE.fail_once:
                STATE.fail_once.discard(q)
                self._json({"error": "internal"}, 500)
            elif q in STATE.html_once:
                STATE.html_once.discard(q)
                self._send(200, b"<html><body>Please sign in</body></html>", "text/html")
            elif path == "/api/busy":
                sid, _ = self._visitor()
                STATE.asked[sid] = STATE.asked.get(sid, 0) + 1
                if STATE.asked[sid] > STATE.busy_limit:
                    self._json({"error": "slow down"}, 429, {"Retry-After": "0"})
                else:
                    self._json(_search(q, direct=not self.headers.get("Referer")))
            else:
                self._json(_search(q, direct=not self.headers.get("Referer")))
        elif path == "/api/guarded":
            sid, _ = self._visitor()
            if not sid or STATE.tokens.get(sid) != self.headers.get("X-CSRF-Token"):
                self._json({"error": "bad token"}, 403)
            else:
                self._json(_search(query.get("q", "")))
        elif path == "/api/lookup":
            item = PRODUCTS.get(query.get("name", ""))
            self._json({"id": item[0]} if item else {"error": "no such product"}, 200 if item else 404)
        elif path.startswith("/api/items/"):
            ident = path.rsplit("/", 1)[-1]
            named = [(n, p) for n, p in PRODUCTS.items() if str(p[0]) == ident]
            if not named:
                self._json({"error": "no such item"}, 404)
            else:
                name, (_, price, sku) = named[0]
                self._json({"item": {"id": int(ident), "name": name, "price": price, "sku": sku}})
        elif path == "/api/list":
            self._list(query)
        else:
            self._send(404, b"not found", "text/plain")

    def _list(self, query: dict[str, str]) -> None:
        category = query.get("category", "")
        names = CATEGORIES.get(category)
        if names is None:
            self._json({"error": "no such category"}, 404)
            return
        start = 0
        if query.get("cursor"):
            try:
                said, _, at = base64.urlsafe_b64decode(query["cursor"].encode()).decode().partition(":")
                start = int(at)
            except (ValueError, UnicodeDecodeError):
                said = ""
            if said != category:
                self._json({"error": "this cursor is not of this category"}, 400)
                return
        items = [{"name": n, "price": price_of(n), "category": category} for n in names[start : start + PAGE]]
        more = start + PAGE < len(names)
        cursor = base64.urlsafe_b64encode(f"{category}:{start + PAGE}".encode()).decode() if more else None
        self._json({"items": items, "next": cursor})

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size)
        path = urlsplit(self.path).path
        STATE.hits[path] = STATE.hits.get(path, 0) + 1
        STATE.paths.append(self.path)
        if path != "/api/signup":
            self._send(404, b"not found", "text/plain")
            return
        try:
            data = json.loads(raw)
            message = f"Thanks {data['name']}, plan {data['plan']}"
        except (ValueError, KeyError, TypeError):
            self._json({"error": "bad request"}, 400)
            return
        self._json({"message": message, "account": 1000 + len(message)})


@dataclass
class Sites:
    base: str

    def url(self, path: str) -> str:
        return self.base + path


@contextmanager
def api_sites() -> Iterator[Sites]:
    """The sites, served on 127.0.0.1 for the block's length."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Sites(f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
