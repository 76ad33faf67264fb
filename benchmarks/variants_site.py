"""Changed versions of the demo shop and the fixture site, for benchmarks/replay_variants.py.

:class:`VariantServer` serves each variant of each site on its own port of 127.0.0.1 (at the root, or under a path
prefix), where the site is ``demo`` (the demo shop, notebook_agent/demo/site) or ``site`` (benchmarks/local_site),
rewriting each HTML, JS and CSS file on the way out:

- ``original``: unchanged (the baseline, on another origin than the recording);
- ``ids``: every id renamed to a generated-looking one, consistently in the HTML (``id``, ``for``, ``aria-*``), the
  CSS selectors and the scripts' ``$("id")`` / ``getElementById("id")`` lookups, so the pages still work;
- ``shuffle``: repeated items in another order (seeded): nav and category links, the options of a select (the
  first, the default or a placeholder, stays first), a run of checkbox labels, and the shop's catalogue and sort
  options in shop.js;
- ``banner``: a cookie banner with its own buttons ("Accept all", ...) at the top of ``<body>``;
- ``caps``: the text of every button and link in capitals, in the HTML and in the links/buttons shop.js makes;
- ``iframe``: the page's content (all after the site header/nav) served in a same-origin ``<iframe>``; links
  and forms inside it open in the top page (``<base target="_top">``), so navigation works as before;
- ``gone``: the button the task needs removed: the shop's Search buttons (Enter still submits), and the fixture
  pages' Sign in / Send message / Save settings buttons, replaced by a control with another name.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources.abc import Traversable
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from notebook_agent.demo.server import site_root

VARIANTS = ("original", "ids", "shuffle", "banner", "caps", "iframe", "gone")
SITES: dict[str, Traversable] = {
    "demo": site_root(),
    "site": Path(__file__).resolve().parent / "local_site",
}
SEED = 7
FRAME_PARAM = "_framed"
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css"}

# site -> (old, new) replacements for the "gone" variant: the button the task needs, removed
GONE = {
    "demo": [('\n    <button type="submit">Search</button>', ""), ('\n  <button type="submit">Search</button>', "")],
    "site": [
        ("<button>Sign in</button>", "<button>Continue</button>"),
        ("<button>Send message</button>", "<button>Submit</button>"),
        ('<button id="save">Save settings</button>', '<button id="save">Apply</button>'),
    ],
}
BANNER = (
    '<div class="cookie-banner" role="region" aria-label="Cookie consent" style="background:#222;color:#fff;'
    'padding:10px 16px">We use cookies to make this site work and to measure how it is used. '
    '<button type="button" onclick="this.parentNode.remove()">Accept all</button> '
    '<button type="button" onclick="this.parentNode.remove()">Reject all</button> '
    '<a href="#cookies">Cookie settings</a></div>'
)


def _files(site: str) -> list[Traversable]:
    return [f for f in SITES[site].iterdir() if f.is_file()]


def _id_map(site: str) -> dict[str, str]:
    ids: set[str] = set()
    for f in _files(site):
        if f.name.endswith(".html"):
            ids.update(re.findall(r'\bid="([^"]+)"', f.read_text(encoding="utf-8")))
    return {i: "c" + hashlib.sha1(f"{site}:{i}".encode()).hexdigest()[:7] for i in sorted(ids)}


def _rng(*key: str) -> random.Random:
    return random.Random(f"{SEED}:{':'.join(key)}")


def _permute(items: list[str], rng: random.Random) -> list[str]:
    """``items`` in another order (never the same one, when there are two or more different items)."""
    out = items[:]
    rng.shuffle(out)
    if out == items and len(set(items)) > 1:
        out = out[1:] + out[:1]
    return out


def _shuffle_items(block: str, item: str, rng: random.Random, skip_first: bool = False) -> str:
    """``block`` with the matches of ``item`` permuted among their places (the first stays with ``skip_first``)."""
    found = list(re.finditer(item, block, re.S))[1 if skip_first else 0 :]
    if len(found) < 2:
        return block
    new = _permute([m.group(0) for m in found], rng)
    out, last = [], 0
    for m, text in zip(found, new, strict=True):
        out += [block[last : m.start()], text]
        last = m.end()
    return "".join(out) + block[last:]


# -- the rewrites, per kind of file --------------------------------------------------------------------------


def rewrite_css(variant: str, site: str, css: str) -> str:
    if variant != "ids":
        return css
    ids = _id_map(site)

    def selectors(m: re.Match[str]) -> str:
        sel = re.sub(r"#([\w-]+)", lambda n: "#" + ids.get(n.group(1), n.group(1)), m.group(1))
        return sel + m.group(2)

    return re.sub(r"([^{}]+)(\{[^{}]*\})", selectors, css)


def rewrite_js(variant: str, site: str, js: str) -> str:
    if variant == "ids":
        ids = _id_map(site)
        pattern = r"((?<![\w$.])\$\(|getElementById\(|(?<![\w$.])v\()\s*([\"'])([\w-]+)\2"
        return re.sub(pattern, lambda m: f"{m.group(1)}{m.group(2)}{ids.get(m.group(3), m.group(3))}{m.group(2)}", js)
    if variant == "shuffle" and "const CATALOG" in js:  # the shop: catalogue order (relevance) and sort options
        m = re.search(r"JSON\.parse\(`(.*?)`\)", js, re.S)
        assert m, "shop.js has no catalogue"
        catalog = _permute(json.loads(m.group(1)), _rng(site, "catalog"))
        js = js[: m.start(1)] + json.dumps(catalog, indent=1) + js[m.end(1) :]
        m = re.search(r"const SORTS = \[(.*?)\n\];", js, re.S)
        assert m, "shop.js has no sort options"
        return js[: m.start(1)] + _shuffle_items(m.group(1), r"\[\"[^\]]*\],", _rng(site, "sorts")) + js[m.end(1) :]
    if variant == "caps":  # the links and buttons the shop builds
        return re.sub(r'(el\("(?:a|button)", \{[^}]*?text: )([^,}]+?)(\s*[,}])', r"\1String(\2).toUpperCase()\3", js)
    return js


def rewrite_html(variant: str, site: str, name: str, html: str, query: str) -> str:
    if variant == "ids":
        ids = _id_map(site)
        attrs = r'\b(id|for|form|list|aria-labelledby|aria-describedby|aria-controls)="([^"]*)"'
        html = re.sub(attrs, lambda m: f'{m.group(1)}="{" ".join(ids.get(t, t) for t in m.group(2).split())}"', html)
        html = re.sub(r'href="#([\w-]+)"', lambda m: f'href="#{ids.get(m.group(1), m.group(1))}"', html)
    elif variant == "shuffle":
        rng = _rng(site, name)

        def links(m: re.Match[str]) -> str:
            return _shuffle_items(m.group(0), r"<a\b[^>]*>.*?</a>", rng)

        html = re.sub(r"<nav\b.*?</nav>|<section class=\"categories\">.*?</section>", links, html, flags=re.S)
        html = re.sub(
            r"<select\b.*?</select>",
            lambda m: _shuffle_items(m.group(0), r"<option\b[^>]*>.*?</option>", rng, skip_first=True),
            html,
            flags=re.S,
        )
        checks = r"(?:<label><input type=\"checkbox\"[^>]*>[^<]*</label>\n)+"
        html = re.sub(checks, lambda m: _shuffle_items(m.group(0), r"<label>.*?</label>\n", rng), html)
    elif variant == "banner":
        html = re.sub(r"(<body\b[^>]*>)", lambda m: m.group(1) + "\n" + BANNER, html, count=1)
    elif variant == "caps":
        html = re.sub(r"(<(a|button)\b[^>]*>)(.*?)(</\2>)", _upper, html, flags=re.S)
    elif variant == "gone":
        for old, new in GONE[site]:
            html = html.replace(old, new)
    elif variant == "iframe":
        html = _framed(html, name, query)
    for m in reversed(list(re.finditer(r"(<script>)(.*?)(</script>)", html, re.S))):  # inline scripts
        html = html[: m.start(2)] + rewrite_js(variant, site, m.group(2)) + html[m.end(2) :]
    return html


def _upper(m: re.Match[str]) -> str:
    """A link or button with its text (not its tags or entities) in capitals."""
    open_tag, _, inner, close = m.groups()
    text = re.sub(r"(^|>)([^<]+)", lambda t: t.group(1) + re.sub(r"&\w+;|[^&]+", _up, t.group(2)), inner)
    return open_tag + text + close


def _up(m: re.Match[str]) -> str:
    return m.group(0) if m.group(0).startswith("&") else m.group(0).upper()


def _framed(html: str, name: str, query: str) -> str:
    """The outer page (the header, then an iframe of the same URL) or, with ``FRAME_PARAM``, the framed content."""
    params = parse_qsl(query, keep_blank_values=True)
    header = re.search(r"</header>", html) or re.search(r"</nav>", html)
    body = re.search(r"<body\b[^>]*>", html)
    assert header and body, f"{name}: no header to keep outside the frame"
    if any(k == FRAME_PARAM for k, _ in params):  # the content: no header, links and forms open in the top page
        inner = html[: body.end()] + html[header.end() :]
        return inner.replace("<head>", '<head><base target="_top">', 1)
    src = f"{name}?{urlencode([*params, (FRAME_PARAM, '1')])}"
    frame = (
        f'\n<iframe src="{src}" title="Content" style="display:block;width:100%;height:calc(100vh - 90px);'
        'border:0"></iframe>\n'
    )
    return re.sub(r"<script\b.*?</script>", "", html[: header.end()], flags=re.S) + frame + "</body></html>\n"


def _handler(variant: str, site: str, prefix: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            path = parts.path
            if not path.startswith(prefix + "/"):
                return self._send(404, b"not found", "text/plain")
            name = path[len(prefix) + 1 :] or "index.html"
            node = SITES[site].joinpath(name)
            if "/" in name or name.startswith(".") or not node.is_file():
                return self._send(404, b"not found", "text/plain")
            ext = Path(name).suffix
            body = node.read_bytes()
            if ext == ".html":
                body = rewrite_html(variant, site, name, body.decode("utf-8"), parts.query).encode("utf-8")
            elif ext == ".js":
                body = rewrite_js(variant, site, body.decode("utf-8")).encode("utf-8")
            elif ext == ".css":
                body = rewrite_css(variant, site, body.decode("utf-8")).encode("utf-8")
            self._send(200, body, TYPES.get(ext, "application/octet-stream"))

        def _send(self, code: int, body: bytes, kind: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


class VariantServer:
    """Each variant of each site on its own origin (a port of 127.0.0.1), at the root or under ``prefix`` (a path
    such as ``/v2``), started on first use: ``with VariantServer() as s: s.base("ids", "demo")``."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self._servers: dict[tuple[str, str], tuple[ThreadingHTTPServer, threading.Thread]] = {}

    def base(self, variant: str, site: str) -> str:
        """The base URL of ``variant`` of ``site`` (no trailing slash)."""
        if variant not in VARIANTS or site not in SITES:
            raise ValueError(f"no variant {variant!r} of site {site!r}")
        if (variant, site) not in self._servers:
            httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(variant, site, self.prefix))
            httpd.daemon_threads = True
            thread = threading.Thread(target=httpd.serve_forever, daemon=True)
            thread.start()
            self._servers[variant, site] = (httpd, thread)
        return f"http://127.0.0.1:{self._servers[variant, site][0].server_address[1]}{self.prefix}"

    def stop(self) -> None:
        for httpd, thread in self._servers.values():
            httpd.shutdown()
            httpd.server_close()
            thread.join(timeout=5)
        self._servers.clear()

    def __enter__(self) -> VariantServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
